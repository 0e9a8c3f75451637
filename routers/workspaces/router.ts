import { AppError } from '../../server/kernel/errors';
import { authedProcedure, router } from '../trpc';
import { addMember, listMembers, removeMember, updateMember } from '../../server/workspaces/members';
import {
  createWorkspace,
  deleteWorkspace,
  getWorkspace,
  listWorkspaces,
  updateWorkspace,
} from '../../server/workspaces/workspaces';
import { deletedOutput, idInput } from '../common';
import { transferProcedures } from './transfer-procedure';
import {
  addMemberInput,
  createWorkspaceInput,
  listMembersInput,
  listMembersOutput,
  listWorkspacesInput,
  listWorkspacesOutput,
  memberIdInput,
  memberView,
  removeMemberOutput,
  updateMemberInput,
  updateWorkspaceInput,
  workspaceDetails,
  workspaceView,
} from './schemas';

const tags = ['Workspaces and transfer'];

/**
 * Membership of «Менеджеры рабочих пространств» as the token carries it (a session: as at login). Checked before the
 * body is parsed, like the system administrator check.
 */
const workspaceManagerProcedure = authedProcedure.use(({ ctx, next }) => {
  if (!ctx.actor.isWorkspaceManager) throw new AppError('forbidden');
  return next();
});

export const workspaceRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/workspaces', summary: 'Workspaces of the caller', tags } })
    .input(listWorkspacesInput)
    .output(listWorkspacesOutput)
    .query(({ ctx, input }) => listWorkspaces(ctx.deps.db, ctx.actor, input)),

  create: workspaceManagerProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/workspaces',
        summary: 'Create a shared workspace (creator becomes Администратор)',
        tags,
      },
    })
    .input(createWorkspaceInput)
    .output(workspaceView)
    .mutation(({ ctx, input }) => createWorkspace(ctx.deps, ctx.actor, input)),

  get: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/workspaces/{id}', summary: 'Workspace details (members only)', tags },
    })
    .input(idInput)
    .output(workspaceDetails)
    .query(({ ctx, input }) => getWorkspace(ctx.deps, ctx.actor, input.id)),

  update: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/workspaces/{id}', summary: 'Rename or describe a workspace', tags } })
    .input(updateWorkspaceInput)
    .output(workspaceView)
    .mutation(({ ctx, input: { id, ...change } }) => updateWorkspace(ctx.deps, ctx.actor, id, change)),

  delete: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/workspaces/{id}', summary: 'Delete a shared workspace', tags } })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteWorkspace(ctx.deps, ctx.actor, input.id)),

  listMembers: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/workspaces/{id}/members', summary: 'Members and their roles', tags },
    })
    .input(listMembersInput)
    .output(listMembersOutput)
    .query(({ ctx, input: { id, ...page } }) => listMembers(ctx.deps.db, ctx.actor, id, page)),

  addMember: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/workspaces/{id}/members',
        summary: 'Add a user or group with a role',
        tags,
      },
    })
    .input(addMemberInput)
    .output(memberView)
    .mutation(({ ctx, input: { id, user_id, group_id, role } }) =>
      addMember(ctx.deps, ctx.actor, id, user_id !== undefined ? { user_id, role } : { group_id: group_id!, role }),
    ),

  updateMember: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/workspaces/{id}/members/{memberId}',
        summary: "Change a member's role",
        tags,
      },
    })
    .input(updateMemberInput)
    .output(memberView)
    .mutation(({ ctx, input }) => updateMember(ctx.deps, ctx.actor, input.id, input.memberId, input.role)),

  removeMember: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/workspaces/{id}/members/{memberId}', summary: 'Remove a member', tags },
    })
    .input(memberIdInput)
    .output(removeMemberOutput)
    .mutation(({ ctx, input }) => removeMember(ctx.deps, ctx.actor, input.id, input.memberId)),
  ...transferProcedures,
});
