import { eq, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import type { Actor } from '../auth/actor';
import { AppError } from '../kernel/errors';
import { OBJECT_KINDS, type ObjectKindName, type ObjectRow, type ObjectRowBase } from '../objects/kinds';
import { roleAllowsEdit, roleIsAdmin, roleOfRank, type WorkspaceRole } from './roles';
import { actorRoleRankSql, inVisibleWorkspaces, workspaceRoleOf, type CallerRef } from './workspace-access';

/*
 * Who may do what with a workspace object of any kind (server/objects/kinds.ts), until object rights arrive:
 * - read (details, data, metadata, preview, check): any role in the object's workspace, or a system administrator;
 *   anyone else gets 404 with the kind's message, as if the object did not exist;
 * - edit in its workspace (build a widget on a dataset): Редактор or Администратор there; a reader gets 403;
 * - own (change, delete, copy; for a source also the SQL console and the access log): Администратор of the
 *   workspace, or the author while they still hold an editing role there (an author demoted to Наблюдатель no
 *   longer edits); anyone else who can read gets 403.
 * Lists and hot paths ask the same in SQL: readableInSql, roleRankInSql (+ accessOfRank on the row they loaded).
 */

export interface ObjectAccess<K extends ObjectKindName> {
  row: ObjectRow<K>;
  /** The caller's role in the object's workspace; null for a system administrator who is not a member. */
  role: WorkspaceRole | null;
  /** Whether the caller owns the object (may change it); views show it (e.g. a source's `is_owner`). */
  isOwner: boolean;
}

export interface ObjectAccessOptions {
  /** Lock the object's row (`select ... for update`) for the rest of the caller's transaction. */
  forUpdate?: boolean;
}

export function ownsObject(actor: Actor, row: Pick<ObjectRowBase, 'authorId'>, role: WorkspaceRole | null): boolean {
  return roleIsAdmin(role) || (row.authorId === actor.userId && roleAllowsEdit(role));
}

/**
 * The caller's standing on a row already loaded with their role (a list, or a hot path that reads both in one
 * query): 404 with the kind's message when they may not read it.
 */
export function accessOf<K extends ObjectKindName>(
  actor: Actor,
  kind: K,
  row: ObjectRow<K>,
  role: WorkspaceRole | null,
): ObjectAccess<K> {
  if (!role && !actor.isSysadmin) throw OBJECT_KINDS[kind].notFound(row.id);
  return { row, role, isOwner: ownsObject(actor, row, role) };
}

/** accessOf for a row selected beside roleRankInSql (the rank of the caller's role, null when not a member). */
export function accessOfRank<K extends ObjectKindName>(
  actor: Actor,
  kind: K,
  row: ObjectRow<K>,
  rank: number | null,
): ObjectAccess<K> {
  return accessOf(actor, kind, row, roleOfRank(rank));
}

/** The object and the caller's standing; 404 when it does not exist or its workspace is hidden from the caller. */
export async function readableObject<K extends ObjectKindName>(
  db: DbOrTx,
  actor: Actor,
  kind: K,
  id: number,
  opts: ObjectAccessOptions = {},
): Promise<ObjectAccess<K>> {
  const { table, columns, notFound } = OBJECT_KINDS[kind];
  const query = db
    .select()
    .from(table as PgTable)
    .where(eq(columns.id, id));
  const [row] = (opts.forUpdate ? await query.for('update') : await query) as ObjectRow<K>[];
  if (!row) throw notFound(id);
  return accessOf(actor, kind, row, await workspaceRoleOf(db, actor, row.workspaceId));
}

/**
 * As readable, and the caller holds an editing role (Редактор or Администратор) in the object's workspace: else 403.
 * What building on an object needs (a widget on a dataset), not changing it (that is ownedObject).
 */
export async function editableObject<K extends ObjectKindName>(
  db: DbOrTx,
  actor: Actor,
  kind: K,
  id: number,
  opts: ObjectAccessOptions = {},
): Promise<ObjectAccess<K>> {
  const access = await readableObject(db, actor, kind, id, opts);
  if (!roleAllowsEdit(access.role)) throw new AppError('forbidden');
  return access;
}

/** As readable, and the caller owns the object: else 403. */
export async function ownedObject<K extends ObjectKindName>(
  db: DbOrTx,
  actor: Actor,
  kind: K,
  id: number,
  opts: ObjectAccessOptions = {},
): Promise<ObjectAccess<K>> {
  const access = await readableObject(db, actor, kind, id, opts);
  if (!access.isOwner) throw new AppError('forbidden');
  return access;
}

/** SQL condition "the caller can read this row of the kind": the WHERE of lists. Always true for a system administrator. */
export function readableInSql(actor: Actor, kind: ObjectKindName): SQL {
  return inVisibleWorkspaces(actor, OBJECT_KINDS[kind].columns.workspaceId);
}

/**
 * SQL: the rank of the caller's role in the workspace of this row of the kind (null: not a member), to select beside
 * the row and hand to accessOfRank. PREPARED_CALLER for a prepared statement.
 */
export function roleRankInSql(caller: CallerRef, kind: ObjectKindName): SQL<number | null> {
  return actorRoleRankSql(caller, OBJECT_KINDS[kind].columns.workspaceId);
}
