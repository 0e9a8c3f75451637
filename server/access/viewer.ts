import type { AppDeps } from '../app/deps';
import { actorOfUser, type Actor } from '../auth/actor';
import { AppError, invalid } from '../kernel/errors';

/*
 * Whose eyes a data read sees through. `actor` is the user whose rights find the objects and whose row filters and
 * column rules apply to the rows: the caller, or the user a system administrator views the data as
 * (`view_as_user_id`, API only), or a share link's owner. `requestedBy` is who asked. Every read of data takes
 * a Viewer (server/query/read.ts), so row- and column-level security have one place to apply.
 */
export interface Viewer {
  actor: Actor;
  requestedBy: Actor;
  reason: 'self' | 'view-as' | 'share-link';
}

/** The caller reading as themselves (no view_as_user_id): known without waiting. */
export const selfViewer = (actor: Actor): Viewer => ({ actor, requestedBy: actor, reason: 'self' });

/**
 * The viewer of a request that may carry `view_as_user_id`: only a system administrator may send it (anyone else:
 * 403 «Доступ запрещён»), and the user must exist (422 naming `viewAsUserId`). Viewing as a user means their rights:
 * an object they cannot read is a 404 for the administrator too.
 */
export async function viewerOf(
  deps: Pick<AppDeps, 'db' | 'systemGroups'>,
  actor: Actor,
  viewAsUserId: number | undefined,
): Promise<Viewer> {
  if (viewAsUserId === undefined) return selfViewer(actor);
  if (!actor.isSysadmin) throw new AppError('forbidden');
  const viewed = await actorOfUser(deps, viewAsUserId);
  if (!viewed) throw invalid({ viewAsUserId: `Пользователь не найден (id ${viewAsUserId})` });
  return { actor: viewed, requestedBy: actor, reason: 'view-as' };
}
