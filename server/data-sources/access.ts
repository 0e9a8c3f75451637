import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { dataSources } from '../../db/schema';
import { assertWorkspaceReadable } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import { AppError, notFound } from '../kernel/errors';
import { roleAllowsEdit, roleIsAdmin, type WorkspaceRole } from '../workspaces/roles';
import type { DataSourceRow } from './connection';

/*
 * Who may do what with a source (until object rights arrive):
 * - read (details, metadata, preview, column values, check): any role in the source's workspace, or a system
 *   administrator; anyone else gets 404, as if the source did not exist;
 * - own (change, delete, copy, SQL console, access log): Администратор of the workspace, or the author while they
 *   still hold an editing role there (an author demoted to Наблюдатель no longer edits); anyone else who can read
 *   gets 403.
 */

export interface SourceAccess {
  row: DataSourceRow;
  role: WorkspaceRole | null;
  isOwner: boolean;
}

export const sourceNotFound = (id: number) => notFound(`Источник данных не найден (id ${id})`);

export function ownsSource(actor: Actor, row: DataSourceRow, role: WorkspaceRole | null): boolean {
  return roleIsAdmin(role) || (row.authorId === actor.userId && roleAllowsEdit(role));
}

/** The source and the caller's standing; 404 when it does not exist or its workspace is hidden from the caller. */
export async function readableSource(db: DbOrTx, actor: Actor, id: number, opts: { forUpdate?: boolean } = {}): Promise<SourceAccess> {
  const query = db.select().from(dataSources).where(eq(dataSources.id, id));
  const [row] = opts.forUpdate ? await query.for('update') : await query;
  if (!row) throw sourceNotFound(id);
  let role: WorkspaceRole | null;
  try {
    ({ role } = await assertWorkspaceReadable(db, actor, row.workspaceId));
  } catch (e) {
    if (e instanceof AppError && e.kind === 'not_found') throw sourceNotFound(id);
    throw e;
  }
  return { row, role, isOwner: ownsSource(actor, row, role) };
}

/** As readable, and the caller owns the source: else 403. */
export async function ownedSource(db: DbOrTx, actor: Actor, id: number, opts: { forUpdate?: boolean } = {}): Promise<SourceAccess> {
  const access = await readableSource(db, actor, id, opts);
  if (!access.isOwner) throw new AppError('forbidden');
  return access;
}
