import type { DbOrTx } from '../../db/client';

/** The pipeline stage a workspace is bound to, shown in the workspace details. */
export interface WorkspaceStageBinding {
  pipeline_id: number;
  pipeline_name: string;
  /** Stage position: 0 Разработка, 1 Тест, 2 Прод. */
  order: number;
  name: string;
}

/**
 * Pipelines own the binding; the app composition (server/app/hooks.ts) plugs their lookup into `deps.hooks`, so that
 * this area does not depend on theirs.
 */
export type WorkspaceStageLookup = (db: DbOrTx, workspaceId: number) => Promise<WorkspaceStageBinding | null>;

export async function stageBindingOf(
  lookup: WorkspaceStageLookup | null,
  db: DbOrTx,
  workspaceId: number,
): Promise<WorkspaceStageBinding | null> {
  return lookup ? lookup(db, workspaceId) : null;
}
