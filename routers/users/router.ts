import { z } from 'zod';
import { authedProcedure, router, sysadminProcedure } from '../trpc';
import { getUserAttributes, listAttributeKeys, setUserAttributes } from '../../server/users/attributes';
import { changeOwnPassword, resetPassword } from '../../server/users/password-changes';
import { createUser, deleteUser, updateUser } from '../../server/users/user-admin';
import { currentUser, getUser, listUserGroups, listUsers } from '../../server/users/user-queries';
import { deletedOutput, idInput } from '../common';
import {
  attributeKeysOutput,
  attributesOutput,
  changeOwnPasswordInput,
  createUserInput,
  listUserGroupsInput,
  listUserGroupsOutput,
  listUsersInput,
  listUsersOutput,
  meOutput,
  passwordChangedOutput,
  resetPasswordInput,
  resetPasswordOutput,
  setAttributesInput,
  updateUserInput,
  userOutput,
  userRecord,
} from './schemas';

const tags = ['Users and groups'];

export const userRouter = router({
  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/users',
        summary: 'List user accounts (non-admins get id, username, full_name)',
        tags,
      },
    })
    .input(listUsersInput)
    .output(listUsersOutput)
    .query(({ ctx, input }) => listUsers(ctx.deps.db, ctx.actor, input)),

  create: sysadminProcedure
    .meta({ openapi: { method: 'POST', path: '/api/users', summary: 'Create a local account', tags } })
    .input(createUserInput)
    .output(userRecord)
    .mutation(({ ctx, input }) => createUser(ctx.deps, input)),

  me: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/users/me', summary: 'Current user profile', tags } })
    .input(z.void())
    .output(meOutput)
    .query(({ ctx }) => currentUser(ctx.deps.db, ctx.actor)),

  changeOwnPassword: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/users/me/password',
        summary: 'Change own password (revokes refresh tokens)',
        tags,
      },
    })
    .input(changeOwnPasswordInput)
    .output(passwordChangedOutput)
    .mutation(({ ctx, input }) => changeOwnPassword(ctx.deps, ctx.actor, input, ctx.ip)),

  get: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/users/{id}',
        summary: 'Account details (full record for system administrators)',
        tags,
      },
    })
    .input(idInput)
    .output(userOutput)
    .query(({ ctx, input }) => getUser(ctx.deps.db, ctx.actor, input.id)),

  update: sysadminProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/users/{id}', summary: 'Change an account', tags } })
    .input(updateUserInput)
    .output(userRecord)
    .mutation(({ ctx, input: { id, ...change } }) => updateUser(ctx.deps, ctx.actor, id, change)),

  delete: sysadminProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/users/{id}', summary: 'Delete an account (revokes its tokens)', tags },
    })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteUser(ctx.deps, ctx.actor, input.id)),

  resetPassword: sysadminProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/users/{id}/password', summary: 'Set a new password for a user', tags },
    })
    .input(resetPasswordInput)
    .output(resetPasswordOutput)
    .mutation(({ ctx, input: { id, ...change } }) => resetPassword(ctx.deps, id, change)),

  getAttributes: sysadminProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/users/{id}/attributes', summary: 'User attributes used by RLS', tags },
    })
    .input(idInput)
    .output(attributesOutput)
    .query(({ ctx, input }) => getUserAttributes(ctx.deps.db, input.id)),

  setAttributes: sysadminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/users/{id}/attributes',
        summary: 'Replace user attributes (whole map)',
        tags,
      },
    })
    .input(setAttributesInput)
    .output(attributesOutput)
    .mutation(({ ctx, input }) => setUserAttributes(ctx.deps, input.id, input.attributes)),

  listGroups: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/users/{id}/groups', summary: 'Groups of a user', tags } })
    .input(listUserGroupsInput)
    .output(listUserGroupsOutput)
    .query(({ ctx, input: { id, ...page } }) => listUserGroups(ctx.deps.db, id, page)),

  listAttributeKeys: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/user-attributes',
        summary: 'Attribute keys known on the installation',
        tags,
      },
    })
    .input(z.void())
    .output(attributeKeysOutput)
    .query(({ ctx }) => listAttributeKeys(ctx.deps.db)),
});
