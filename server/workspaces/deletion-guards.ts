import type { Tx } from '../../db/client';

/**
 * Other areas may forbid deleting a workspace (pipelines: a workspace bound to a stage). A guard answers true to
 * block. It runs inside the deleting transaction with the workspace row locked (`select ... for update`), so an area
 * that takes the same lock when it binds cannot race the deletion. The caller is told only that the request cannot
 * be carried out: the specification omits the reason on purpose.
 */
export type WorkspaceDeletionGuard = (tx: Tx, workspaceId: number) => Promise<boolean>;

const guards = new Set<WorkspaceDeletionGuard>();

/** Registers a guard at module load of its area; returns a function that removes it again (for tests). */
export function registerWorkspaceDeletionGuard(guard: WorkspaceDeletionGuard): () => void {
  guards.add(guard);
  return () => guards.delete(guard);
}

export async function workspaceDeletionBlocked(tx: Tx, workspaceId: number): Promise<boolean> {
  for (const guard of guards) {
    if (await guard(tx, workspaceId)) return true;
  }
  return false;
}
