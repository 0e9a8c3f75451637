import {
  kindOfObjectType,
  listObjectRights,
  removeObjectRight,
  setObjectRight,
} from '../../server/access/object-rights';
import type { ObjectRightRow, RightSubject } from '../../server/access/object-rights-store';
import { authedProcedure, router } from '../trpc';
import {
  groupInput,
  groupRightInput,
  listRightsOutput,
  objectInput,
  removedRightOutput,
  rightItem,
  userInput,
  userRightInput,
} from './schemas';

const tags = ['Access'];

const WHO =
  'Access: the object owner by role (Администратор of its workspace, or its author with an editing role); an edit ' +
  'right does not manage rights. 404 when the caller cannot read the object, 403 when they can but do not own it. ' +
  '{objectType}: data-source, dataset, widget or dashboard (else 422).';

const objectOf = (input: { objectType: string; objectId: number }) => ({
  kind: kindOfObjectType(input.objectType),
  id: input.objectId,
});

const itemView = (r: ObjectRightRow) => ({
  subject_type: r.subjectType,
  subject_id: r.subjectId,
  name: r.name,
  right: r.right as 'view' | 'edit',
});

const removedView = (subject: RightSubject) => ({
  subject_type: subject.type,
  subject_id: subject.id,
  removed: true as const,
});

/** Rights on one object (data source, dataset, widget, dashboard) for users and groups: its owner manages them. */
export const accessRouter = router({
  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/access/{objectType}/{objectId}',
        summary: 'Users and groups with rights on an object',
        description: `Users first, then groups, each with its name and right (view or edit). ${WHO}`,
        tags,
      },
    })
    .input(objectInput)
    .output(listRightsOutput)
    .query(async ({ ctx, input }) => ({
      items: (await listObjectRights(ctx.deps.db, ctx.actor, objectOf(input))).map(itemView),
    })),

  setUserRight: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/access/{objectType}/{objectId}/users/{userId}',
        summary: "Grant or change a user's right",
        description: `Body: right (view lets the user read this one object, edit also change it). An unknown user is a 404, nothing saved. Takes effect at the user's next request. ${WHO}`,
        tags,
      },
    })
    .input(userRightInput)
    .output(rightItem)
    .mutation(async ({ ctx, input }) =>
      itemView(
        await setObjectRight(ctx.deps, ctx.actor, objectOf(input), { type: 'user', id: input.userId }, input.right),
      ),
    ),

  removeUserRight: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/access/{objectType}/{objectId}/users/{userId}',
        summary: "Remove a user's right",
        description: `404 when the user holds no right on the object. Takes effect at the user's next request. ${WHO}`,
        tags,
      },
    })
    .input(userInput)
    .output(removedRightOutput)
    .mutation(async ({ ctx, input }) => {
      const subject: RightSubject = { type: 'user', id: input.userId };
      await removeObjectRight(ctx.deps, ctx.actor, objectOf(input), subject);
      return removedView(subject);
    }),

  setGroupRight: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/access/{objectType}/{objectId}/groups/{groupId}',
        summary: "Grant or change a group's right (rights are not carried by pipeline deploy)",
        description: `Body: right (view or edit), for every member of the group. An unknown group is a 404, nothing saved. Rights are not carried by pipeline deploy. ${WHO}`,
        tags,
      },
    })
    .input(groupRightInput)
    .output(rightItem)
    .mutation(async ({ ctx, input }) =>
      itemView(
        await setObjectRight(ctx.deps, ctx.actor, objectOf(input), { type: 'group', id: input.groupId }, input.right),
      ),
    ),

  removeGroupRight: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/access/{objectType}/{objectId}/groups/{groupId}',
        summary: "Remove a group's right",
        description: `404 when the group holds no right on the object. ${WHO}`,
        tags,
      },
    })
    .input(groupInput)
    .output(removedRightOutput)
    .mutation(async ({ ctx, input }) => {
      const subject: RightSubject = { type: 'group', id: input.groupId };
      await removeObjectRight(ctx.deps, ctx.actor, objectOf(input), subject);
      return removedView(subject);
    }),
});
