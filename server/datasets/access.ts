import { and, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { dataSources } from '../../db/schema';
import { inVisibleWorkspaces, workspaceRoleOf } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import { AppError } from '../errors';
import { roleAllowsEdit, roleIsAdmin, type WorkspaceRole } from '../workspaces/roles';
import { loadDatasetRow, type DatasetRow } from './load-model';
import { datasetNotFound } from './messages';

export interface DatasetAccess {
  row: DatasetRow;
  /** The caller's role in the dataset's workspace; null for a system administrator who is not a member. */
  role: WorkspaceRole | null;
}

/** A dataset in a workspace the caller cannot read does not exist for them: 404 with the dataset's message. */
export async function readableDataset(db: DbOrTx, actor: Actor, id: number, opts: { lock?: boolean } = {}): Promise<DatasetAccess> {
  const row = await loadDatasetRow(db, id, opts);
  const role = await workspaceRoleOf(db, actor, row.workspaceId);
  if (!role && !actor.isSysadmin) throw datasetNotFound(id);
  return { row, role };
}

/**
 * The dataset's owner: its author or Администратор of its workspace, in either case with a role that still allows
 * editing there (an author demoted to Наблюдатель only reads). 404 when not readable, 403 otherwise.
 */
export async function ownedDataset(db: DbOrTx, actor: Actor, id: number, opts: { lock?: boolean } = {}): Promise<DatasetAccess> {
  const access = await readableDataset(db, actor, id, opts);
  const { row, role } = access;
  if (!roleAllowsEdit(role) || (row.authorId !== actor.userId && !roleIsAdmin(role))) throw new AppError('forbidden');
  return access;
}

/** Of the given source ids, those that exist in a workspace the caller can read. */
export async function readableSourceIds(db: DbOrTx, actor: Actor, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: dataSources.id })
    .from(dataSources)
    .where(and(inArray(dataSources.id, [...ids]), inVisibleWorkspaces(actor, dataSources.workspaceId)));
  return new Set(rows.map((r) => r.id));
}
