import { z } from 'zod';
import { GROUP_MEMBER_SORT_FIELDS } from '../../server/groups/group-members';
import { GROUP_SORT_FIELDS } from '../../server/groups/groups';
import { entityId, nonBlank, pagedQueryOver, pageSchema, wireString } from '../common';

const id = entityId();

export const groupView = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  system: z.boolean().describe('System groups grant platform rights and cannot be deleted'),
  system_key: z.string().nullable(),
  member_count: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const listGroupsInput = z.strictObject({
  ...pagedQueryOver(GROUP_SORT_FIELDS),
  query: wireString().max(200).optional(),
});
export const listGroupsOutput = pageSchema(groupView);

const description = wireString().trim().max(2000);
export const createGroupInput = z.strictObject({ name: nonBlank(200), description: description.optional() });
export const updateGroupInput = z.strictObject({
  id,
  name: nonBlank(200).optional(),
  description: description.optional(),
});

export const listMembersInput = z.strictObject({ id, ...pagedQueryOver(GROUP_MEMBER_SORT_FIELDS) });
export const listMembersOutput = pageSchema(
  z.object({
    id: z.number().int(),
    username: z.string(),
    full_name: z.string(),
    active: z.boolean(),
    added_at: z.string(),
  }),
);

export const addMembersInput = z.strictObject({ id, user_ids: z.array(id).min(1).max(1000) });
export const addMembersOutput = z.object({
  group_id: z.number().int(),
  added_user_ids: z.array(z.number().int()),
  already_member_user_ids: z.array(z.number().int()),
});

export const removeMemberInput = z.strictObject({ id, userId: id });
export const removeMemberOutput = z.object({
  group_id: z.number().int(),
  user_id: z.number().int(),
  removed: z.literal(true),
});
