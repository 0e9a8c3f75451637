import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { notFound } from '../kernel/errors';
import { pageOf, type PageRequest } from '../kernel/paging';
import { markAllRead, markRead, notificationsOf, unreadCountOf, type NotificationRow } from './store';

/*
 * The caller's own notifications: GET /api/notifications, GET /api/notifications/unread-count,
 * POST /api/notifications/{id}/read, POST /api/notifications/read-all. Nobody sees or marks another user's.
 */

export interface NotificationView {
  id: number;
  kind: string;
  title: string;
  message: string;
  object_type: string | null;
  object_id: number | null;
  read: boolean;
  created_at: string;
}

function view(r: NotificationRow): NotificationView {
  return {
    id: r.id,
    kind: r.kind,
    title: r.title,
    message: r.message,
    object_type: r.objectType,
    object_id: r.objectId,
    read: r.read,
    created_at: r.createdAt.toISOString(),
  };
}

/** What GET /api/notifications sorts by (names of its answer); newest first (unread first if asked) otherwise. */
export const NOTIFICATION_SORT_FIELDS = ['id', 'kind', 'title', 'read', 'created_at'] as const;

export interface NotificationListInput extends PageRequest {
  unreadOnly: boolean;
  unreadFirst: boolean;
}

export async function listNotifications(deps: AppDeps, actor: Actor, input: NotificationListInput) {
  const { rows, total } = await notificationsOf(deps.db, actor.userId, input);
  return pageOf(rows.map(view), input, total);
}

export async function unreadNotifications(deps: AppDeps, actor: Actor): Promise<{ count: number }> {
  return { count: await unreadCountOf(deps.db, actor.userId) };
}

export async function readNotification(deps: AppDeps, actor: Actor, id: number): Promise<NotificationView> {
  const row = await markRead(deps.db, actor.userId, id);
  if (!row) throw notFound(`Уведомление не найдено (id ${id})`);
  return view(row);
}

export async function readAllNotifications(deps: AppDeps, actor: Actor): Promise<{ marked: number }> {
  return { marked: await markAllRead(deps.db, actor.userId) };
}
