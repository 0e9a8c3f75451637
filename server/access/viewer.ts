import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema';
import type { Actor } from '../auth/actor';
import { AppError, invalid } from '../kernel/errors';

/*
 * Whose eyes a data read sees through. The caller (`actor`) is who asked and whose rights found the object; `readsAs`
 * is the user whose row filters and column rules apply to the rows: the caller, a user a system administrator views
 * the data as (`view_as_user_id`, API only), or later a share link's owner. Every read of data takes a Viewer
 * (server/query/read.ts), so row- and column-level security have one place to apply.
 */
export interface Viewer {
  actor: Actor;
  readsAs: { userId: number; reason: 'self' | 'view-as' };
}

/** The caller reading as themself. */
function selfViewer(actor: Actor): Viewer {
  return { actor, readsAs: { userId: actor.userId, reason: 'self' } };
}

/**
 * The viewer of a request that may carry `view_as_user_id`: only a system administrator may send it (anyone else:
 * 403), and the user must exist (422 naming `viewAsUserId`).
 */
export async function viewerOf(db: DbOrTx, actor: Actor, viewAsUserId: number | undefined): Promise<Viewer> {
  if (viewAsUserId === undefined) return selfViewer(actor);
  if (!actor.isSysadmin) throw new AppError('forbidden');
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, viewAsUserId));
  if (!user) throw invalid({ viewAsUserId: `Пользователь не найден (id ${viewAsUserId})` });
  return { actor, readsAs: { userId: viewAsUserId, reason: 'view-as' } };
}
