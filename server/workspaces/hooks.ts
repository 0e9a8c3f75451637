import type { DbOrTx, Tx } from '../../db/client';
import type { AppDeps } from '../app/deps';
import { cacheSlot } from '../kernel/app-caches';

/*
 * What other areas plug into workspaces, so that this area does not depend on theirs. Pipelines own the stage binding:
 * a workspace bound to a stage cannot be deleted, and its details name the stage. The app composition
 * (server/app/start.ts) plugs them in explicitly when it builds an app's deps, never at module load, so which hooks
 * run is visible in one place and each app (and test app) has its own.
 */

/**
 * Asked inside DELETE /api/workspaces/{id}; a guard answering true blocks the deletion. It runs inside the deleting
 * transaction with the workspace row locked (`select ... for update`), so an area that takes the same lock when it
 * binds cannot race the deletion. The caller is told only that the request cannot be carried out: the specification
 * omits the reason on purpose.
 */
export type WorkspaceDeletionGuard = (tx: Tx, workspaceId: number) => Promise<boolean>;

/** The pipeline stage a workspace is bound to, shown in the workspace details. */
export interface WorkspaceStageBinding {
  pipeline_id: number;
  pipeline_name: string;
  /** Stage position: 0 Разработка, 1 Тест, 2 Прод. */
  order: number;
  name: string;
}

/** Answers pipeline_stage of GET /api/workspaces/{id}; none plugged in means no workspace is bound. */
export type WorkspaceStageLookup = (db: DbOrTx, workspaceId: number) => Promise<WorkspaceStageBinding | null>;

interface WorkspaceHooks {
  deletionGuards: WorkspaceDeletionGuard[];
  stageLookup: WorkspaceStageLookup | null;
}

const hooks = cacheSlot('workspaces.hooks', (): WorkspaceHooks => ({ deletionGuards: [], stageLookup: null }));

/** Adds a deletion guard to this app; answers its removal. */
export function addWorkspaceDeletionGuard(deps: Pick<AppDeps, 'caches'>, guard: WorkspaceDeletionGuard): () => void {
  const guards = deps.caches.of(hooks).deletionGuards;
  guards.push(guard);
  return () => {
    const i = guards.indexOf(guard);
    if (i >= 0) guards.splice(i, 1);
  };
}

/** Plugs the stage lookup into this app; answers its removal. */
export function setWorkspaceStageLookup(deps: Pick<AppDeps, 'caches'>, lookup: WorkspaceStageLookup): () => void {
  const h = deps.caches.of(hooks);
  h.stageLookup = lookup;
  return () => {
    if (h.stageLookup === lookup) h.stageLookup = null;
  };
}

export async function workspaceDeletionBlocked(
  deps: Pick<AppDeps, 'caches'>,
  tx: Tx,
  workspaceId: number,
): Promise<boolean> {
  for (const guard of deps.caches.of(hooks).deletionGuards) {
    if (await guard(tx, workspaceId)) return true;
  }
  return false;
}

export async function stageBindingOf(
  deps: Pick<AppDeps, 'caches'>,
  db: DbOrTx,
  workspaceId: number,
): Promise<WorkspaceStageBinding | null> {
  const lookup = deps.caches.of(hooks).stageLookup;
  return lookup ? lookup(db, workspaceId) : null;
}
