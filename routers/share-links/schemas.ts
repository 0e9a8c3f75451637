import { z } from 'zod';
import type { ShareLinkInput, ShareLinkUpdate } from '../../server/share-links/share-links';
import type { ShareLinkView } from '../../server/share-links/views';
import { entityId, nonBlank, type Accepts, type Mirrors } from '../common';

const id = entityId().describe('Dashboard id');
const linkId = entityId().describe('Share link id');

const password = nonBlank(256).describe('A viewer must /unlock the link with it');
const expiresAt = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .nullable()
  .describe('ISO 8601; null: never expires. An expired link behaves as suspended');

export const dashboardLinksInput = z.strictObject({ id });
export const linkInput = z.strictObject({ id, linkId });

export const createShareLinkInput = z.strictObject({
  id,
  name: nonBlank(200),
  password: password.optional(),
  expires_at: expiresAt.optional(),
});

export const updateShareLinkInput = z.strictObject({
  id,
  linkId,
  name: nonBlank(200),
  password: password.nullable().optional().describe('Left out: unchanged; null: the password is removed'),
  expires_at: expiresAt.optional().describe('Left out: unchanged; null: never expires'),
});

export const shareLinkView = z.object({
  link_id: z.number().int(),
  dashboard_id: z.number().int(),
  name: z.string(),
  url: z.string().nullable().describe('The viewer page of the link (null once revoked)'),
  token: z.string().optional().describe('The link token, only in the answer that issued it (create, rotate)'),
  status: z.enum(['active', 'suspended', 'expired', 'revoked']),
  password_protected: z.boolean(),
  expires_at: z.string().nullable(),
  owner_id: z.number().int().describe('The user whose rights the link reads the dashboard with'),
  created_at: z.string(),
  updated_at: z.string(),
});
export const shareLinkList = z.object({ content: z.array(shareLinkView) });

const _create: Mirrors<ShareLinkInput, Omit<z.output<typeof createShareLinkInput>, 'id'>> = true;
const _update: Mirrors<ShareLinkUpdate, Omit<z.output<typeof updateShareLinkInput>, 'id' | 'linkId'>> = true;
const _view: Accepts<z.output<typeof shareLinkView>, ShareLinkView> = true;
void [_create, _update, _view];
