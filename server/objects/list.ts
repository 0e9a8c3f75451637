import { and, count, desc, eq, gte, ilike, lt, type AnyColumn, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import type { DbOrTx } from '../../db/client';
import type { Actor } from '../auth/actor';
import { accessOfRank, readableInSql, rightRankInSql, roleRankInSql, type ObjectAccess } from '../access/object-access';
import { containsPattern, orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { OBJECT_KINDS, type ObjectKindName, type ObjectRow } from './kinds';

/*
 * The filters of the specification's list query set ("std list params"; the zod set is `stdListQuery` in
 * routers/common.ts): one WHERE for every list of workspace objects.
 */

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const DAY_MS = 24 * 3600 * 1000;

/** A date (`2026-03-01`, the whole day, UTC) or a date-time (`2026-03-01T10:00:00Z`; no zone means UTC). */
function parseIso(s: string): Date {
  if (ISO_DATE.test(s)) return new Date(`${s}T00:00:00Z`);
  const t = s.replace(' ', 'T');
  return new Date(/(Z|[+-]\d{2}:?\d{2})$/i.test(t) ? t : `${t}Z`);
}

const isoText = z
  .string()
  .max(40)
  .refine((s) => (ISO_DATE.test(s) || ISO_DATE_TIME.test(s)) && !Number.isNaN(parseIso(s).getTime()), {
    error: 'must be an ISO 8601 date (2026-03-01) or date-time (2026-03-01T10:00:00Z)',
  });

/** Lower bound, inclusive. */
export const dateFromParam = isoText.transform(parseIso);
/** Upper bound, inclusive: a date includes its whole day. Turned into an exclusive bound for SQL. */
export const dateToParam = isoText.transform((s) => new Date(parseIso(s).getTime() + (ISO_DATE.test(s) ? DAY_MS : 1)));

export interface StdListFilter {
  query?: string;
  author?: number;
  workspaceId?: number;
  createdAtFrom?: Date;
  createdAtTo?: Date;
  updatedAtFrom?: Date;
  updatedAtTo?: Date;
}

/** Bounds of a time range: from inclusive, to exclusive (dateToParam already made a date's end exclusive). */
export function timeRange(column: AnyColumn, from: Date | undefined, to: Date | undefined): SQL[] {
  const out: SQL[] = [];
  if (from) out.push(gte(column, from));
  if (to) out.push(lt(column, to));
  return out;
}

/**
 * WHERE of a std list: only objects the caller can read (by workspace role or by a right on the object), then the
 * filters. The area adds its own `type` condition (its meaning differs per area).
 */
function stdListWhere(actor: Actor, kind: ObjectKindName, f: StdListFilter, extra: (SQL | undefined)[] = []): SQL {
  const cols = OBJECT_KINDS[kind].columns;
  const conditions: SQL[] = [readableInSql(actor, kind)];
  if (f.query) conditions.push(ilike(cols.name, containsPattern(f.query)));
  if (f.author !== undefined) conditions.push(eq(cols.authorId, f.author));
  if (f.workspaceId !== undefined) conditions.push(eq(cols.workspaceId, f.workspaceId));
  conditions.push(...timeRange(cols.createdAt, f.createdAtFrom, f.createdAtTo));
  conditions.push(...timeRange(cols.updatedAt, f.updatedAtFrom, f.updatedAtTo));
  for (const c of extra) if (c) conditions.push(c);
  return and(...conditions)!;
}

export interface ObjectListOptions {
  /** The area's own conditions (such as its `type`, whose meaning differs per area); undefined ones are skipped. */
  where?: (SQL | undefined)[];
  /**
   * The sort fields the list accepts, in the order its 422 names them (the area's *_SORT_FIELDS), and the columns of
   * those that are not shared by every kind (id, name, created_at and updated_at are: OBJECT_KINDS[kind].sortColumns).
   */
  sort: { fields: readonly string[]; columns?: Record<string, AnyColumn | SQL> };
}

/**
 * The std list of a kind (GET /api/data-sources, /api/dataset, /api/widget): the objects the caller can read that
 * pass the std filters and the area's own, one page of them, recently changed first unless a sort is asked for.
 * `toViews` turns the page's rows (with the caller's standing on each) into the wire shape, all at once so that it
 * can batch what it looks up.
 */
export async function listObjects<K extends ObjectKindName, V>(
  db: DbOrTx,
  actor: Actor,
  kind: K,
  input: PageRequest & StdListFilter,
  opts: ObjectListOptions,
  toViews: (items: ObjectAccess<K>[]) => V[] | Promise<V[]>,
) {
  const { table, columns, sortColumns } = OBJECT_KINDS[kind];
  const where = stdListWhere(actor, kind, input, opts.where);
  const sortable: Record<string, AnyColumn | SQL> = {};
  for (const field of opts.sort.fields) {
    const column = opts.sort.columns?.[field] ?? (sortColumns as Record<string, AnyColumn | SQL>)[field];
    if (!column) throw new Error(`listObjects(${kind}): no column for the sort field ${field}`);
    sortable[field] = column;
  }

  const [{ total }] = await db
    .select({ total: count() })
    .from(table as PgTable)
    .where(where);
  const rows = await db
    .select({ row: table as PgTable, rank: roleRankInSql(actor, kind), right: rightRankInSql(actor, kind) })
    .from(table as PgTable)
    .where(where)
    // Recently changed first: what a user most likely looks for.
    .orderBy(...orderByOf(input.sort, sortable, [desc(columns.updatedAt)], columns.id))
    .limit(input.size)
    .offset(input.page * input.size);
  const items = rows.map((r) => accessOfRank(actor, kind, r.row as ObjectRow<K>, r.rank, r.right));
  return pageOf(await toViews(items), input, total);
}
