import type { Tx } from '../../db/client';

/**
 * Other areas may forbid deleting a workspace (pipelines: a workspace bound to a stage). A guard answers true to
 * block. It runs inside the deleting transaction with the workspace row locked (`select ... for update`), so an area
 * that takes the same lock when it binds cannot race the deletion. The caller is told only that the request cannot
 * be carried out: the specification omits the reason on purpose.
 *
 * Guards are registered explicitly by the app composition (server/app/hooks.ts) into `deps.hooks`, never at module
 * load, so that which guards run is visible in one place and each app (and test app) has its own list.
 */
export type WorkspaceDeletionGuard = (tx: Tx, workspaceId: number) => Promise<boolean>;

export async function workspaceDeletionBlocked(
  guards: readonly WorkspaceDeletionGuard[],
  tx: Tx,
  workspaceId: number,
): Promise<boolean> {
  for (const guard of guards) {
    if (await guard(tx, workspaceId)) return true;
  }
  return false;
}
