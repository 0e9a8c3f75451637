import { eq } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { workspaces } from '../../db/schema/workspaces';
import { workspaceNotFound, type WorkspaceRow } from '../access/workspace-access';
import type { WorkspaceRole } from '../access/roles';

export type WorkspaceType = 'personal' | 'shared';

/** Labels as the workspace list shows them: shared is «Общее» (the specification's word). */
const WORKSPACE_TYPE_LABELS: Record<WorkspaceType, string> = { personal: 'Личное', shared: 'Общее' };

export function workspaceView(w: WorkspaceRow, role: WorkspaceRole | null) {
  const type = w.type as WorkspaceType;
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    type,
    type_label: WORKSPACE_TYPE_LABELS[type],
    owner_user_id: w.ownerUserId,
    created_by: w.createdBy,
    /** The caller's role; null when a system administrator looks at a workspace they are not a member of. */
    role,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}
export type WorkspaceView = ReturnType<typeof workspaceView>;

/**
 * Locks the workspace row for the rest of the transaction. Every change of members or of the workspace itself takes
 * this lock first, so two concurrent demotions cannot both pass the "last Администратор" check. 404 when missing.
 */
export async function lockWorkspace(tx: DbOrTx, id: number): Promise<WorkspaceRow> {
  const [row] = await tx.select().from(workspaces).where(eq(workspaces.id, id)).for('update');
  if (!row) throw workspaceNotFound(id);
  return row;
}

/** What other areas may join of a workspace (a pipeline's stages show their workspaces' names), one query for them. */
export const workspaceRef = (alias = 'workspace_ref') =>
  new QueryBuilder().select({ id: workspaces.id, name: workspaces.name }).from(workspaces).as(alias);
