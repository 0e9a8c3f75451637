import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { orderByOf, type PageRequest } from '../kernel/paging';
import { notifications } from '../../db/schema/notifications';

/*
 * A user's notifications (tx-first). Other areas add theirs through insertNotification: extract runs, file exports
 * and mailings, each with a kind of its own.
 */

export type NotificationRow = typeof notifications.$inferSelect;

export interface NewNotification {
  userId: number;
  kind: string;
  title: string;
  message: string;
  objectType?: string | null;
  objectId?: number | null;
}

export async function insertNotification(db: DbOrTx, n: NewNotification): Promise<void> {
  await db.insert(notifications).values(n);
}

export async function notificationsOf(
  db: DbOrTx,
  userId: number,
  opts: PageRequest & { unreadOnly: boolean; unreadFirst: boolean },
): Promise<{ rows: NotificationRow[]; total: number }> {
  const where = opts.unreadOnly
    ? and(eq(notifications.userId, userId), eq(notifications.read, false))
    : eq(notifications.userId, userId);
  // A `sort` of the caller's wins; without one, newest first (unread first when asked).
  const fallback = opts.unreadFirst
    ? [sql`${notifications.read} asc`, desc(notifications.id)]
    : [desc(notifications.id)];
  const order = orderByOf(
    opts.sort,
    {
      id: notifications.id,
      kind: notifications.kind,
      title: notifications.title,
      read: notifications.read,
      created_at: notifications.createdAt,
    },
    fallback,
    notifications.id,
  );
  const rows = await db
    .select()
    .from(notifications)
    .where(where)
    .orderBy(...order)
    .limit(opts.size)
    .offset(opts.page * opts.size);
  const [{ n }] = await db.select({ n: count() }).from(notifications).where(where);
  return { rows, total: n };
}

export async function unreadCountOf(db: DbOrTx, userId: number): Promise<number> {
  const [{ n }] = await db
    .select({ n: count() })
    .from(notifications)
    .where(and(eq(notifications.userId, userId), eq(notifications.read, false)));
  return n;
}

/** Null when the user has no such notification (another user's is not theirs to see). */
export async function markRead(db: DbOrTx, userId: number, id: number): Promise<NotificationRow | null> {
  const [row] = await db
    .update(notifications)
    .set({ read: true })
    .where(and(eq(notifications.id, id), eq(notifications.userId, userId)))
    .returning();
  return row ?? null;
}

export async function markAllRead(db: DbOrTx, userId: number): Promise<number> {
  const rows = await db
    .update(notifications)
    .set({ read: true })
    .where(and(eq(notifications.userId, userId), eq(notifications.read, false)))
    .returning({ id: notifications.id });
  return rows.length;
}
