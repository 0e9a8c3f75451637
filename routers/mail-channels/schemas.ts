import { z } from 'zod';
import {
  CHANNEL_SORT_FIELDS,
  type MailChannelInput,
  type MailChannelView,
} from '../../server/mail-channels/mail-channels';
import { entityId, nonBlank, pagedQueryOver, pageSchema, wireString, type Mirrors } from '../common';

/* Wire shapes of SMTP mail channels (/api/mail-channels). */

export const email = () =>
  wireString()
    .trim()
    .max(320)
    .pipe(z.email({ error: 'must be an e-mail address' }));
const security = z.enum(['none', 'starttls', 'ssl']);

const channelBody = {
  name: nonBlank(255),
  host: nonBlank(255).describe('SMTP server host name or address'),
  port: z.number().int().min(1).max(65535),
  security: security.default('starttls').describe('none, starttls (upgrade on 587/25) or ssl (implicit TLS, 465)'),
  username: wireString().max(255).default('').describe('Empty: no authentication'),
  password: wireString().max(1000).nullable().optional().describe('Omitted on update: unchanged; null: none'),
  from_address: email(),
  from_name: wireString().max(255).default(''),
};

export const channelInput = z.strictObject(channelBody);
export const channelUpdate = z.strictObject({ id: entityId(), ...channelBody });
export const testInput = z.strictObject({ id: entityId(), to: email().describe('Where the test letter goes') });
export const testOutput = z.object({
  ok: z.boolean(),
  message: z
    .string()
    .describe(
      "«Письмо отправлено», or what failed in Russian (refused, address not found, no answer, authentication, TLS, recipient refused, other) followed by ': ' and the server's reply or the transport's text",
    ),
});

export const channelOutput = z.object({
  id: z.number().int(),
  name: z.string(),
  host: z.string(),
  port: z.number().int(),
  security,
  username: z.string(),
  password: z.string().nullable().describe('Masked: ******** when set'),
  from_address: z.string(),
  from_name: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const channelListInput = z.strictObject({
  ...pagedQueryOver(CHANNEL_SORT_FIELDS),
  query: wireString().max(200).optional().describe('Search in the name'),
});
export const channelListOutput = pageSchema(
  z.union([channelOutput, z.object({ id: z.number().int(), name: z.string() })]),
).describe('A system administrator gets every field; anyone else id and name, to pick a channel in a mailing');

const _in: Mirrors<MailChannelInput, z.output<typeof channelInput>> = true;
const _out: Mirrors<MailChannelView, z.output<typeof channelOutput>> = true;
void [_in, _out];
