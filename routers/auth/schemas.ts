import { z } from 'zod';
import { nonBlank, wireString } from '../common';

export const loginInput = z.strictObject({ username: nonBlank(), password: wireString().min(1).max(1024) });
export const refreshInput = z.strictObject({ refresh_token: nonBlank(1024) });
export const loginOutput = z.object({
  token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
});
export const logoutOutput = z.object({ revoked: z.boolean() });
