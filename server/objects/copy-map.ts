import { getTableName, sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client';
import { OBJECT_KINDS, type ObjectKindName } from './kinds';

/*
 * The copy map of one run of copies: a deploy (POST /api/pipeline/{id}/deploy) or the copy of one object
 * (POST /api/data-source/{id}/copy, /api/dataset/{id}/copy, /api/dashboard/{id}/copy). A temporary table of the run's
 * transaction (dropped at commit or rollback) holds, per kind, the original's id, the copy's id (an existing copy to
 * update in place, or an id drawn from the kind's sequence in advance), whether the run creates the copy, the copy's
 * name and the original's edit time as copied. Each owner's batched copy (copySources, copyDatasets, copyWidgets,
 * copyDashboards in the areas' store.ts) writes every mapped object of its kind in a fixed number of statements by
 * joining the map, and points what it writes at the copies mapped beside it: ids drawn in advance let INSERT ... SELECT
 * write rows that already point at each other. An id the map does not know stays as it is (the copy keeps using the
 * original: a dataset copied alone stays on its sources). Owners add the parts others refer to by id (a dataset's
 * objects and fields) under kinds of their own.
 */

export const COPY_MAP = sql.raw('copy_map');

/** The object kinds, and the dataset schema elements that others refer to by id (mapped by copyDatasets). */
export type CopyMapKind = ObjectKindName | 'dataset_object' | 'dataset_field';

/** Where the copies go: the target workspace and the author they are recorded under. */
export interface CopyTarget {
  workspaceId: number;
  authorId: number | null;
}

/** A list of ids as ONE parameter (an int[] literal): drizzle would spread an array into a parameter each. */
export const ints = (ids: Iterable<number>): SQL =>
  sql`${`{${[...ids].map((id) => Math.trunc(id)).join(',')}}`}::int[]`;

/** An empty map for a new run (one an earlier run left in the same transaction goes first). */
export async function createCopyMap(tx: Tx): Promise<void> {
  await tx.execute(sql`drop table if exists pg_temp.copy_map`);
  await tx.execute(sql`create temporary table ${COPY_MAP} (
    kind text not null,
    old_id integer not null,
    new_id integer not null,
    created boolean not null,
    name text,
    edited_at timestamptz,
    primary key (kind, old_id)
  ) on commit drop`);
}

export interface MapOptions {
  /**
   * Copies an earlier run made, updated in place instead of created anew: SQL of (original_id, copy_id) rows. A copy
   * counts only while it still exists in `workspaceId`; any other original gets a new id.
   */
  keep?: { copies: SQL; workspaceId: number };
  /** The copies' name; by default each is named as its original. */
  name?: string;
}

/**
 * Maps originals of one kind, in one statement, and answers original id -> copy id. An original that does not exist
 * is the kind's 404 (deleted since the caller looked).
 */
export async function mapObjects(
  tx: Tx,
  kind: ObjectKindName,
  ids: number[],
  opts: MapOptions = {},
): Promise<Map<number, number>> {
  const wanted = new Set(ids);
  const out = new Map<number, number>();
  if (!wanted.size) return out;
  const tableName = getTableName(OBJECT_KINDS[kind].table);
  const table = sql.identifier(tableName);
  const keep = opts.keep;
  const copyId = keep ? sql`c.id` : sql`null::int`;
  const res = await tx.execute<{ old_id: number; new_id: number }>(sql`
    insert into ${COPY_MAP} (kind, old_id, new_id, created, name, edited_at)
    select ${kind}, o.id, coalesce(${copyId}, nextval(pg_get_serial_sequence(${tableName}, 'id'))::int),
      ${copyId} is null, coalesce(${opts.name ?? null}::text, o.name), o.updated_at
    from ${table} o
    ${
      keep
        ? sql`left join (${keep.copies}) l on l.original_id = o.id
      left join ${table} c on c.id = l.copy_id and c.workspace_id = ${keep.workspaceId}`
        : sql``
    }
    where o.id = any(${ints(wanted)})
    returning old_id, new_id`);
  for (const r of res.rows) out.set(r.old_id, r.new_id);
  const missing = [...wanted].find((id) => !out.has(id));
  if (missing !== undefined) throw OBJECT_KINDS[kind].notFound(missing);
  return out;
}

/**
 * A new map for the copy of one object (POST /api/<kind>/{id}/copy), under `name`: answers the copy's id. Its
 * dependencies stay as they are unless the caller maps them too.
 */
export async function mapCopyOf(tx: Tx, kind: ObjectKindName, id: number, name?: string): Promise<number> {
  await createCopyMap(tx);
  const copies = await mapObjects(tx, kind, [id], { name });
  return copies.get(id)!;
}

/** The copies of the given originals that the map knows, per kind, in one statement. */
export async function readCopyMap<K extends CopyMapKind>(
  tx: Tx,
  wanted: Record<K, number[]>,
): Promise<Record<K, Map<number, number>>> {
  const entries = Object.entries(wanted) as [K, number[]][];
  const out = Object.fromEntries(entries.map(([kind]) => [kind, new Map<number, number>()])) as Record<
    K,
    Map<number, number>
  >;
  const parts = entries
    .filter(([, ids]) => ids.length)
    .map(([kind, ids]) => sql`(kind = ${kind} and old_id = any(${ints(ids)}))`);
  if (!parts.length) return out;
  const res = await tx.execute<{ kind: K; old_id: number; new_id: number }>(sql`
    select kind, old_id, new_id from ${COPY_MAP} where ${sql.join(parts, sql` or `)}`);
  for (const r of res.rows) out[r.kind].set(r.old_id, r.new_id);
  return out;
}

/** The map is complete and joined by every statement after: give the planner its real size. */
export async function analyzeCopyMap(tx: Tx): Promise<void> {
  await tx.execute(sql`analyze ${COPY_MAP}`);
}

export interface MappedObject {
  kind: ObjectKindName;
  originalId: number;
  copyId: number;
  created: boolean;
  name: string;
  /** Created, and another object of the same kind and name is already in the target workspace. */
  nameTaken: boolean;
}

const KIND_ORDER = Object.keys(OBJECT_KINDS) as ObjectKindName[];

/** Every mapped object, in dependency order (sources, datasets, widgets, dashboards), then by original id. */
export async function mappedObjects(tx: Tx, targetWorkspaceId: number): Promise<MappedObject[]> {
  const parts = KIND_ORDER.map((kind) => {
    const table = sql.identifier(getTableName(OBJECT_KINDS[kind].table));
    // Only a created copy can meet an unrelated namesake (an updated one is already there): one hash join over the
    // target's names instead of a lookup per object.
    return sql`select m.kind, m.old_id, m.new_id, m.created, m.name, m.created and n.name is not null as name_taken
      from ${COPY_MAP} m
      left join (select distinct t.name from ${table} t where t.workspace_id = ${targetWorkspaceId}) n
        on n.name = m.name
      where m.kind = ${kind}`;
  });
  const res = await tx.execute<{
    kind: ObjectKindName;
    old_id: number;
    new_id: number;
    created: boolean;
    name: string;
    name_taken: boolean;
  }>(sql.join(parts, sql` union all `));
  const order = (k: ObjectKindName) => KIND_ORDER.indexOf(k);
  return res.rows
    .map((r) => ({
      kind: r.kind,
      originalId: r.old_id,
      copyId: r.new_id,
      created: r.created,
      name: r.name,
      nameTaken: r.name_taken,
    }))
    .sort((a, b) => order(a.kind) - order(b.kind) || a.originalId - b.originalId);
}
