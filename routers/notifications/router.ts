import { z } from 'zod';
import { authedProcedure, router } from '../trpc';
import {
  listNotifications,
  NOTIFICATION_SORT_FIELDS,
  readAllNotifications,
  readNotification,
  unreadNotifications,
  type NotificationView,
} from '../../server/notifications/notifications';
import { entityId, pagedQueryOver, pageSchema, type Mirrors } from '../common';

/* The caller's own notifications: /api/notifications, /unread-count, /{id}/read, /read-all. */

const tags = ['Notifications'];

const notificationOutput = z.object({
  id: z.number().int(),
  kind: z.string().describe('What it tells about: extract_succeeded, extract_failed (exports and mailings add theirs)'),
  title: z.string(),
  message: z.string(),
  object_type: z.string().nullable().describe('The object it is about, e.g. etl_job'),
  object_id: z.number().int().nullable(),
  read: z.boolean(),
  created_at: z.string(),
});
const _view: Mirrors<NotificationView, z.output<typeof notificationOutput>> = true;
void _view;

export const notificationRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/notifications', summary: 'Own notifications, newest first', tags } })
    .input(
      z.strictObject({
        ...pagedQueryOver(NOTIFICATION_SORT_FIELDS),
        unreadOnly: z.boolean().default(false).describe('Only unread notifications'),
        unreadFirst: z.boolean().default(false).describe('Unread notifications first, then newest first'),
      }),
    )
    .output(pageSchema(notificationOutput))
    .query(({ ctx, input }) => listNotifications(ctx.deps, ctx.actor, input)),

  unreadCount: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/notifications/unread-count',
        summary: 'Number of unread notifications',
        tags,
      },
    })
    .input(z.void())
    .output(z.object({ count: z.number().int() }))
    .query(({ ctx }) => unreadNotifications(ctx.deps, ctx.actor)),

  markRead: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/notifications/{id}/read', summary: 'Mark one notification read', tags },
    })
    .input(z.strictObject({ id: entityId() }))
    .output(notificationOutput)
    .mutation(({ ctx, input }) => readNotification(ctx.deps, ctx.actor, input.id)),

  markAllRead: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/notifications/read-all', summary: 'Mark all notifications read', tags },
    })
    .input(z.void())
    .output(z.object({ marked: z.number().int() }))
    .mutation(({ ctx }) => readAllNotifications(ctx.deps, ctx.actor)),
});
