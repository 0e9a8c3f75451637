import { z } from 'zod';
import { ACCOUNT_TYPES, usernameText } from '../../server/users/accounts';
import { USER_GROUP_SORT_FIELDS, USER_SORT_FIELDS } from '../../server/users/user-queries';
import type { CreateUserInput, UpdateUserInput } from '../../server/users/user-admin';
import type { ChangeOwnPasswordInput, ResetPasswordInput } from '../../server/users/password-changes';
import {
  entityId,
  INVALID_TEXT_MESSAGE,
  isWireText,
  pagedQueryOver,
  pageSchema,
  wireString,
  type Mirrors,
} from '../common';

const id = entityId();

const username = usernameText();
const password = wireString().min(1).max(1024);
const email = z.email().max(320).refine(isWireText, { error: INVALID_TEXT_MESSAGE });

const groupRef = z.object({ id: z.number().int(), name: z.string(), system: z.boolean() });

const userSummary = z.object({ id: z.number().int(), username: z.string(), full_name: z.string() });
export const userRecord = userSummary.extend({
  email: z.string().nullable(),
  account_type: z.enum(ACCOUNT_TYPES),
  active: z.boolean(),
  must_change_password: z.boolean(),
  groups: z.array(groupRef),
  personal_workspace_id: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
// The whole record first: a union keeps the first branch that fits, and the summary would fit (and strip) a record.
export const userOutput = z.union([userRecord, userSummary]);

export const listUsersInput = z.strictObject({
  ...pagedQueryOver(USER_SORT_FIELDS),
  query: wireString().max(200).optional(),
  groupId: id.optional(),
  active: z.boolean().optional(),
});
export const listUsersOutput = pageSchema(userOutput);

export const createUserInput = z.strictObject({
  username,
  password: password.optional(),
  full_name: wireString().trim().max(200).optional(),
  email: email.nullable().optional(),
  account_type: z.enum(ACCOUNT_TYPES).optional(),
  group_ids: z.array(id).max(1000).optional(),
});

export const meOutput = userRecord.extend({
  is_system_administrator: z.boolean(),
  is_workspace_manager: z.boolean(),
  token_kind: z.enum(['session', 'api']),
});

export const changeOwnPasswordInput = z.strictObject({ old_password: password, new_password: password });
export const passwordChangedOutput = z.object({ changed: z.literal(true) });

export const updateUserInput = z.strictObject({
  id,
  full_name: wireString().trim().max(200).optional(),
  email: email.nullable().optional(),
  account_type: z.enum(ACCOUNT_TYPES).optional(),
  active: z.boolean().optional(),
});

export const resetPasswordInput = z.strictObject({ id, new_password: password, must_change: z.boolean().optional() });
export const resetPasswordOutput = z.object({ id: z.number().int(), must_change_password: z.boolean() });

// POST /api/users, PUT /api/users/{id}, PUT /api/users/me/password and PUT /api/users/{id}/password hand their body
// (without the path id) to the server, which declares what it takes in server/users/user-admin.ts and
// password-changes.ts.
const _createUser: Mirrors<CreateUserInput, z.output<typeof createUserInput>> = true;
const _updateUser: Mirrors<UpdateUserInput, Omit<z.output<typeof updateUserInput>, 'id'>> = true;
const _changeOwnPassword: Mirrors<ChangeOwnPasswordInput, z.output<typeof changeOwnPasswordInput>> = true;
const _resetPassword: Mirrors<ResetPasswordInput, Omit<z.output<typeof resetPasswordInput>, 'id'>> = true;
void [_createUser, _updateUser, _changeOwnPassword, _resetPassword];

// Attribute keys are referenced by name from RLS rules, so they are identifier-like.
const ATTRIBUTE_KEY = /^[\p{L}_][\p{L}\p{N}_.-]{0,99}$/u;
const attributeMap = z
  .record(wireString(), z.array(wireString().min(1).max(1000)).max(1000))
  .superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > 200) ctx.addIssue({ code: 'custom', path: [], message: 'size must be at most 200' });
    for (const key of keys) {
      if (!ATTRIBUTE_KEY.test(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'key must start with a letter or _ and contain only letters, digits and _ . - (at most 100)',
        });
      }
    }
  });
export const attributesOutput = z.object({ attributes: z.record(z.string(), z.array(z.string())) });
export const setAttributesInput = z.strictObject({ id, attributes: attributeMap });
export const attributeKeysOutput = z.object({
  keys: z.array(z.object({ key: z.string(), user_count: z.number().int() })),
});

export const listUserGroupsInput = z.strictObject({ id, ...pagedQueryOver(USER_GROUP_SORT_FIELDS) });
export const listUserGroupsOutput = pageSchema(groupRef.extend({ description: z.string(), added_at: z.string() }));
