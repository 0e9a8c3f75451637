import { addGroupMembers, listGroupMembers, removeGroupMember } from '../../server/groups/group-members';
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup } from '../../server/groups/groups';
import { authedProcedure, router, sysadminProcedure } from '../trpc';
import { deletedOutput, idInput } from '../common';
import {
  addMembersInput,
  addMembersOutput,
  createGroupInput,
  groupView,
  listGroupsInput,
  listGroupsOutput,
  listMembersInput,
  listMembersOutput,
  removeMemberInput,
  removeMemberOutput,
  updateGroupInput,
} from './schemas';

const tags = ['Users and groups'];

export const groupRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/groups', summary: 'List groups (system groups flagged)', tags } })
    .input(listGroupsInput)
    .output(listGroupsOutput)
    .query(({ ctx, input }) => listGroups(ctx.deps.db, input)),

  create: sysadminProcedure
    .meta({ openapi: { method: 'POST', path: '/api/groups', summary: 'Create a group', tags } })
    .input(createGroupInput)
    .output(groupView)
    .mutation(({ ctx, input }) => createGroup(ctx.deps, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/groups/{id}', summary: 'Group details', tags } })
    .input(idInput)
    .output(groupView)
    .query(({ ctx, input }) => getGroup(ctx.deps.db, input.id)),

  update: sysadminProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/groups/{id}', summary: 'Rename or describe a group', tags } })
    .input(updateGroupInput)
    .output(groupView)
    .mutation(({ ctx, input: { id, ...change } }) => updateGroup(ctx.deps, id, change)),

  delete: sysadminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/groups/{id}',
        summary: 'Delete a group (system groups cannot be deleted)',
        tags,
      },
    })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteGroup(ctx.deps, input.id)),

  listMembers: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/groups/{id}/members', summary: 'Members of a group', tags } })
    .input(listMembersInput)
    .output(listMembersOutput)
    .query(({ ctx, input: { id, ...page } }) => listGroupMembers(ctx.deps.db, id, page)),

  addMembers: sysadminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/groups/{id}/members',
        summary: 'Add users to a group (effective at their next login)',
        tags,
      },
    })
    .input(addMembersInput)
    .output(addMembersOutput)
    .mutation(({ ctx, input }) => addGroupMembers(ctx.deps, input.id, input.user_ids)),

  removeMember: sysadminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/groups/{id}/members/{userId}',
        summary: 'Remove a user from a group (effective at their next login)',
        tags,
      },
    })
    .input(removeMemberInput)
    .output(removeMemberOutput)
    .mutation(({ ctx, input }) => removeGroupMember(ctx.deps, input.id, input.userId)),
});
