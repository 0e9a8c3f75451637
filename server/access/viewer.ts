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

/**
 * The viewer of a request that may carry `view_as_user_id`: only a system administrator may send it (anyone else:
 * 403 «Доступ запрещён»), and the user must exist (422 naming `viewAsUserId`). Viewing as a user means their rights:
 * an object they cannot read is a 404 for the administrator too. The caller reading as themselves is answered as it
 * is, not in a promise (every widget's data request comes here).
 */
export function viewerOf(
  deps: Pick<AppDeps, 'db' | 'systemGroups'>,
  actor: Actor,
  viewAsUserId: number | undefined,
): Viewer | Promise<Viewer> {
  if (viewAsUserId === undefined) return { actor, requestedBy: actor, reason: 'self' };
  return viewerAs(deps, actor, viewAsUserId);
}

async function viewerAs(
  deps: Pick<AppDeps, 'db' | 'systemGroups'>,
  actor: Actor,
  viewAsUserId: number,
): Promise<Viewer> {
  if (!actor.isSysadmin) throw new AppError('forbidden');
  const viewed = await actorOfUser(deps, viewAsUserId);
  if (!viewed) throw invalid({ viewAsUserId: `Пользователь не найден (id ${viewAsUserId})` });
  return { actor: viewed, requestedBy: actor, reason: 'view-as' };
}
