import { and, eq, getTableName, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { objectRights } from '../../db/schema/object-rights';
import type { Actor } from '../auth/actor';
import { AppError } from '../kernel/errors';
import { OBJECT_KINDS, type ObjectKindName, type ObjectRow, type ObjectRowBase } from '../objects/kinds';
import { deleteRightsOfObject } from './object-rights-store';
import { roleAllowsEdit, roleIsAdmin, roleOfRank, type WorkspaceRole } from './roles';
import {
  PREPARED_CALLER,
  actorRoleRankSql,
  inVisibleWorkspaces,
  workspaceRoleOf,
  type CallerRef,
} from './workspace-access';

/*
 * Who may do what with a workspace object of any kind (server/objects/kinds.ts): the one policy.
 * - read (details, data through datasets, check): any role in the object's workspace, a system administrator, or
 *   a `view` or `edit` right on that one object (the caller's own or one of their groups', actor.groupIds; table
 *   object_rights); anyone else gets 404 with the kind's message, as if the object did not exist;
 * - edit in its workspace (build a widget on a dataset): Редактор or Администратор there; a reader gets 403 (a right
 *   on one object never lets anyone create objects in its workspace);
 * - read raw (rawReadableObject: a source's rows and its schema of tables and columns outside any dataset, beyond
 *   RLS and CLS): an editing role there, the `edit` right on the object, or a system administrator;
 * - own (ownedObject): Администратор of the workspace, the author while they still hold an editing role there (an
 *   author demoted to Наблюдатель no longer edits), or whoever holds the `edit` right on the object, their own or a
 *   group's (the specification's "owner"). The owner changes, deletes and copies the object (for a source also the
 *   SQL console and the access log) and manages its rights (/api/access/...);
 * Anyone who can read but may not do the rest gets 403.
 * Lists and hot paths ask the same in SQL: readableInSql, roleRankInSql and rightRankInSql (+ accessOfRank on the
 * row they loaded).
 */

/** Rights on one object, weakest first: `edit` includes `view`. */
export const OBJECT_RIGHTS = ['view', 'edit'] as const;
export type ObjectRight = (typeof OBJECT_RIGHTS)[number];

const rightRank = (right: ObjectRight): number => OBJECT_RIGHTS.indexOf(right) + 1;
const rightOfRank = (rank: number | null | undefined): ObjectRight | null =>
  OBJECT_RIGHTS.find((r) => rightRank(r) === Number(rank)) ?? null;

export interface ObjectAccess<K extends ObjectKindName> {
  row: ObjectRow<K>;
  /** The caller's role in the object's workspace; null for a system administrator who is not a member. */
  role: WorkspaceRole | null;
  /** The caller's strongest right on this one object (directly or through a group); null when they hold none. */
  right: ObjectRight | null;
  /** Whether the caller owns the object (by role or by the `edit` right); views show it (e.g. a source's `is_owner`). */
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
 * The caller's standing on a row already loaded with their role and right (a list, or a hot path that reads both in
 * one query): 404 with the kind's message when they may not read it.
 */
export function accessOf<K extends ObjectKindName>(
  actor: Actor,
  kind: K,
  row: ObjectRow<K>,
  role: WorkspaceRole | null,
  right: ObjectRight | null = null,
): ObjectAccess<K> {
  if (!role && !right && !actor.isSysadmin) throw OBJECT_KINDS[kind].notFound(row.id);
  return { row, role, right, isOwner: ownsObject(actor, row, role) || right === 'edit' };
}

/**
 * accessOf for a row selected beside roleRankInSql and rightRankInSql (the ranks of the caller's role and right,
 * null when not a member or holding no right).
 */
export function accessOfRank<K extends ObjectKindName>(
  actor: Actor,
  kind: K,
  row: ObjectRow<K>,
  rank: number | null,
  right: number | null = null,
): ObjectAccess<K> {
  return accessOf(actor, kind, row, roleOfRank(rank), rightOfRank(right));
}

/** Rows of object_rights that are the caller's, directly or through one of their groups. */
function actorRightRows(actor: Actor): SQL {
  const direct = eq(objectRights.userId, actor.userId);
  return actor.groupIds.length > 0 ? or(direct, inArray(objectRights.groupId, actor.groupIds))! : direct;
}

/** The caller's strongest right on the object (their own or a group's), or null. */
async function objectRightOf(db: DbOrTx, actor: Actor, kind: ObjectKindName, id: number): Promise<ObjectRight | null> {
  const rows = await db
    .select({ right: objectRights.right })
    .from(objectRights)
    .where(and(eq(objectRights.objectType, kind), eq(objectRights.objectId, id), actorRightRows(actor)));
  return rightOfRank(Math.max(0, ...rows.map((r) => rightRank(r.right as ObjectRight))));
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
  const [role, right] = await Promise.all([
    workspaceRoleOf(db, actor, row.workspaceId),
    objectRightOf(db, actor, kind, id),
  ]);
  return accessOf(actor, kind, row, role, right);
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

/**
 * As readable, and the caller may edit the object: an editing role (Редактор or Администратор) in its workspace, the
 * `edit` right on it, or a system administrator; else 403. What reading a data source's rows outside any dataset
 * needs (its preview and column values), and listing its schemas, tables and columns (and POST /api/ai/sql, which
 * sends them to the provider): such a read knows no dataset, so no RLS or CLS rule can narrow it, which makes it a
 * dataset author's tool, not a reader's.
 */
export async function rawReadableObject<K extends ObjectKindName>(
  db: DbOrTx,
  actor: Actor,
  kind: K,
  id: number,
): Promise<ObjectAccess<K>> {
  const access = await readableObject(db, actor, kind, id);
  if (!roleAllowsEdit(access.role) && access.right !== 'edit' && !actor.isSysadmin) throw new AppError('forbidden');
  return access;
}

/** As readable, and the caller owns the object (by role or by the `edit` right): else 403. */
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

/**
 * The first step of deleting an object, inside the delete's transaction: locks its row, checks the caller owns it
 * (ownedObject) and removes the object's rights, so none outlives
 * it. The caller then deletes the row in the same transaction (a refusal rolls the rights back with it).
 */
export async function deletableObject<K extends ObjectKindName>(
  tx: DbOrTx,
  actor: Actor,
  kind: K,
  id: number,
): Promise<ObjectAccess<K>> {
  const access = await ownedObject(tx, actor, kind, id, { forUpdate: true });
  await deleteRightsOfObject(tx, kind, id);
  return access;
}

/** SQL condition "the caller can read this row of the kind": the WHERE of lists. Always true for a system administrator. */
export function readableInSql(actor: Actor, kind: ObjectKindName): SQL {
  if (actor.isSysadmin) return sql`true`;
  const { workspaceId, id } = OBJECT_KINDS[kind].columns;
  // Uncorrelated (ids the caller holds a right on), so the planner hashes it once rather than probing per row.
  const withRight = sql`${qualifiedColumn(id)} in (select ${rightCol('object_id')}
    from ${objectRights} as ${sql.identifier(RIGHTS_ALIAS)}
    where ${rightCol('object_type')} = ${kind} and ${callerRightRows(actor)})`;
  return sql`(${inVisibleWorkspaces(actor, workspaceId)} or ${withRight})`;
}

/**
 * Which of `ids` (existing objects of one kind) the caller can read: lists of related objects (a dataset's dependencies, a
 * source's objects) show only those, so that names the caller may not read never leak through them.
 */
export async function readableIds(db: DbOrTx, actor: Actor, kind: ObjectKindName, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  // Always a query, a system administrator's too: only ids that exist come back.
  const { table, columns } = OBJECT_KINDS[kind];
  const rows = await db
    .select({ id: columns.id })
    .from(table as PgTable)
    .where(and(inArray(columns.id, ids), readableInSql(actor, kind)));
  return new Set(rows.map((r) => r.id as number));
}

/**
 * Whether the caller reads an object of the kind whose workspace role and right ranks were selected beside another
 * row (roleRankInSql / actorRoleRankSql and rightRankInSql): the same decision as readableIds and readableObject.
 */
export function readableByRank(actor: Actor, roleRank: number | null, right: number | null): boolean {
  return actor.isSysadmin || roleOfRank(roleRank) !== null || rightOfRank(right) !== null;
}

/**
 * SQL: the rank of the caller's role in the workspace of this row of the kind (null: not a member), to select beside
 * the row and hand to accessOfRank. PREPARED_CALLER for a prepared statement.
 */
export function roleRankInSql(caller: CallerRef, kind: ObjectKindName): SQL<number | null> {
  return actorRoleRankSql(caller, OBJECT_KINDS[kind].columns.workspaceId);
}

/*
 * Like the fragments of workspace-access, the right subquery has an alias of its own and qualifies every name, the
 * outer row's id included: drizzle leaves column names unqualified in some positions.
 */
const RIGHTS_ALIAS = 'or_access';
const rightCol = (name: string) => sql`${sql.identifier(RIGHTS_ALIAS)}.${sql.identifier(name)}`;

/** A column as `"table"."column"`. */
const qualifiedColumn = (c: PgColumn): SQL => sql`${sql.identifier(getTableName(c.table))}.${sql.identifier(c.name)}`;

function callerRightRows(caller: CallerRef): SQL {
  if (caller === PREPARED_CALLER) {
    return sql`(${rightCol('user_id')} = ${sql.placeholder('userId')}
        or ${rightCol('group_id')} = any(cast(${sql.placeholder('groupIds')} as integer[])))`;
  }
  const direct = sql`${rightCol('user_id')} = ${caller.userId}`;
  if (caller.groupIds.length === 0) return direct;
  return sql`(${direct} or ${rightCol('group_id')} in (${sql.join(
    caller.groupIds.map((g) => sql`${g}`),
    sql`, `,
  )}))`;
}

/**
 * SQL: the rank of the caller's strongest right on this row of the kind (1 view, 2 edit; null: none), to select
 * beside the row and hand to accessOfRank. PREPARED_CALLER for a prepared statement. `objectId`: the column of the
 * outer query holding the object's id, when the query selects from another table (a widget's dataset_id).
 */
export function rightRankInSql(caller: CallerRef, kind: ObjectKindName, objectId?: PgColumn): SQL<number | null> {
  const outerId = qualifiedColumn(objectId ?? OBJECT_KINDS[kind].columns.id);
  const rank = sql.join(
    OBJECT_RIGHTS.map((r) => sql`when ${r} then ${sql.raw(String(rightRank(r)))}`),
    sql` `,
  );
  return sql<number | null>`(select max(case ${rightCol('right')} ${rank} end)
    from ${objectRights} as ${sql.identifier(RIGHTS_ALIAS)}
    where ${rightCol('object_type')} = ${kind} and ${rightCol('object_id')} = ${outerId} and ${callerRightRows(caller)})`;
}
