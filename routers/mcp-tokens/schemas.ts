import { z } from 'zod';
import { entityId, nonBlank, pagedQuery, pageSchema, wireString } from '../common';
import { ACCOUNT_TYPES } from '../../server/users/accounts';

export const tokenView = z.object({
  id: z.number().int(),
  user_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  token_hint: z.string(),
  status: z.enum(['active', 'suspended', 'revoked']),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});

export const listTokensInput = z.strictObject({ ...pagedQuery, userId: entityId().optional() });
export const listTokensOutput = pageSchema(tokenView);
export const createTokenInput = z.strictObject({ name: nonBlank(200), description: wireString().max(2000).optional() });
export const createTokenOutput = tokenView.extend({ token: z.string() });

export const tokenSettings = z.strictObject({
  enabled: z.boolean(),
  allowed_account_types: z.array(z.enum(ACCOUNT_TYPES)),
  access_group_id: entityId().nullable(),
});
