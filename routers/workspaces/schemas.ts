import { z } from 'zod';
import { entityId, nonBlank, pagedQueryOver, pageSchema, wireString } from '../common';
import { MEMBER_SORT_FIELDS } from '../../server/workspaces/members';
import { WORKSPACE_ROLES } from '../../server/access/roles';
import { WORKSPACE_SORT_FIELDS } from '../../server/workspaces/workspaces';

const id = entityId();
const role = z.enum(WORKSPACE_ROLES);

export const workspaceView = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  type: z.enum(['personal', 'shared']),
  type_label: z.string().describe('Личное or Общее'),
  owner_user_id: z.number().int().nullable().describe('Owner of a personal workspace; null for shared'),
  created_by: z.number().int().nullable(),
  role: role.nullable().describe("The caller's role; null for a system administrator who is not a member"),
  created_at: z.string(),
  updated_at: z.string(),
});

export const workspaceDetails = workspaceView.extend({
  member_count: z.number().int(),
  pipeline_stage: z
    .object({ pipeline_id: z.number().int(), pipeline_name: z.string(), order: z.number().int(), name: z.string() })
    .nullable()
    .describe('The deployment pipeline stage the workspace is bound to, if any'),
});

export const listWorkspacesInput = z.strictObject({
  ...pagedQueryOver(WORKSPACE_SORT_FIELDS),
  query: wireString().max(200).optional(),
  type: z.enum(['personal', 'shared']).optional(),
  memberOnly: z.boolean().optional(),
});
export const listWorkspacesOutput = pageSchema(workspaceView);

const description = wireString().trim().max(2000);
export const createWorkspaceInput = z.strictObject({ name: nonBlank(200), description: description.optional() });
export const updateWorkspaceInput = z.strictObject({
  id,
  name: nonBlank(200).optional(),
  description: description.optional(),
});

export const memberView = z.object({
  member_id: z.number().int(),
  user_id: z.number().int().nullable(),
  group_id: z.number().int().nullable(),
  subject_type: z.enum(['user', 'group']),
  name: z.string().describe('Username or group name'),
  full_name: z.string().nullable(),
  role,
  created_at: z.string(),
});

export const listMembersInput = z.strictObject({ id, ...pagedQueryOver(MEMBER_SORT_FIELDS) });
export const listMembersOutput = pageSchema(memberView);

export const addMemberInput = z
  .strictObject({ id, user_id: id.optional(), group_id: id.optional(), role })
  .superRefine((m, ctx) => {
    if ((m.user_id === undefined) === (m.group_id === undefined)) {
      const message =
        m.user_id === undefined
          ? 'one of user_id or group_id is required'
          : 'give either user_id or group_id, not both';
      ctx.addIssue({ code: 'custom', path: [m.user_id === undefined ? 'user_id' : 'group_id'], message });
    }
  });

export const memberIdInput = z.strictObject({ id, memberId: id });
export const updateMemberInput = z.strictObject({ id, memberId: id, role });
export const removeMemberOutput = z.object({ member_id: z.number().int(), removed: z.literal(true) });
