import type { DbOrTx } from '../../db/client';

/** The pipeline stage a workspace is bound to, shown in the workspace details. */
export interface WorkspaceStageBinding {
  pipeline_id: number;
  pipeline_name: string;
  /** Stage position: 0 Разработка, 1 Тест, 2 Прод. */
  order: number;
  name: string;
}

export type WorkspaceStageLookup = (db: DbOrTx, workspaceId: number) => Promise<WorkspaceStageBinding | null>;

// Pipelines own the binding; they plug their lookup in here so that this area does not depend on theirs.
let lookup: WorkspaceStageLookup | null = null;

export function registerWorkspaceStageLookup(fn: WorkspaceStageLookup): () => void {
  lookup = fn;
  return () => {
    if (lookup === fn) lookup = null;
  };
}

export async function stageBindingOf(db: DbOrTx, workspaceId: number): Promise<WorkspaceStageBinding | null> {
  return lookup ? lookup(db, workspaceId) : null;
}
