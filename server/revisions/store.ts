import { sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { ints } from '../objects/copy-map';
import { readSetting } from '../service/store';
import { KIND_TABLES, snapshotsOf, type RevisionChange, type RevisionKind, type Snapshot } from './snapshots';

export { REVISION_CHANGES, type RevisionChange, type RevisionKind, type Snapshot } from './snapshots';

/*
 * The revisions' writes and reads: transaction first, no actor, no access checks. Every save of a workspace object
 * calls recordRevisions in its own transaction, after the write, so a failed save leaves no revision and the
 * revision holds exactly what was committed. Batched: a fixed number of statements whatever the number of objects
 * (a 1,000-object deploy records its copies in three). Revisions of one object are numbered 1, 2, ... without gaps:
 * the object rows are locked first, so two writers of one object number one after the other.
 */

/** The installation setting (PUT /api/settings) holding the most revisions kept per object; 0 or absent: all. */
const RETENTION_SETTING = 'installation';
const RETENTION_KEY = 'revisions_max_per_object';

async function maxPerObject(tx: DbOrTx): Promise<number> {
  const stored = await readSetting<Record<string, unknown>>(tx, RETENTION_SETTING);
  const max = Number(stored?.[RETENTION_KEY] ?? 0);
  return Number.isInteger(max) && max > 0 ? max : 0;
}

const distinctIds = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);

/**
 * Appends revision n+1 of each object (its current state, as this transaction sees it), then drops the oldest beyond
 * the installation's maximum per object. Objects that do not exist are skipped.
 */
export async function recordRevisions(
  tx: Tx,
  kind: RevisionKind,
  ids: number[],
  change: RevisionChange,
  authorId: number | null,
  opts: { deploymentId?: number } = {},
): Promise<void> {
  const list = distinctIds(ids);
  if (!list.length) return;
  const table = sql.raw(KIND_TABLES[kind]);
  // A separate statement: the insert below then sees what a writer that held the lock before us committed.
  await tx.execute(sql`select id from ${table} where id = any(${ints(list)}) order by id for update`);
  await tx.execute(sql`
    insert into object_revisions (object_type, object_id, rev, change, author_id, deployment_id, snapshot)
    select ${kind}::text, s.id, coalesce(last.rev, 0) + 1, ${change}::text, ${authorId}::int,
      ${opts.deploymentId ?? null}::int, s.snapshot
    from (${snapshotsOf(kind, ints(list))}) s
    left join lateral (select max(r.rev) as rev from object_revisions r
      where r.object_type = ${kind}::text and r.object_id = s.id) last on true`);
  const max = await maxPerObject(tx);
  if (max > 0)
    await tx.execute(sql`
      delete from object_revisions r using (
        select object_id, max(rev) as last from object_revisions
        where object_type = ${kind}::text and object_id = any(${ints(list)}) group by object_id) m
      where r.object_type = ${kind}::text and r.object_id = m.object_id and r.rev <= m.last - ${max}::int`);
}

export interface RevisionEntry {
  rev: number;
  change: RevisionChange;
  authorId: number | null;
  deploymentId: number | null;
  createdAt: Date;
}

export interface RevisionWithSnapshot extends RevisionEntry {
  snapshot: Snapshot;
}

type RevisionDbRow = {
  object_id: number;
  rev: number;
  change: RevisionChange;
  author_id: number | null;
  deployment_id: number | null;
  created_at: string | Date;
  snapshot?: Snapshot;
};

const entryOf = (r: RevisionDbRow): RevisionEntry => ({
  rev: Number(r.rev),
  change: r.change,
  authorId: r.author_id === null ? null : Number(r.author_id),
  deploymentId: r.deployment_id === null ? null : Number(r.deployment_id),
  createdAt: new Date(r.created_at),
});

/** One page of an object's revisions, newest first, and how many there are. */
export async function listRevisions(
  db: DbOrTx,
  kind: RevisionKind,
  id: number,
  page: { page: number; size: number },
): Promise<{ items: RevisionEntry[]; total: number }> {
  const { rows } = await db.execute<RevisionDbRow & { total: number }>(sql`
    select object_id, rev, change, author_id, deployment_id, created_at, count(*) over () as total
    from object_revisions where object_type = ${kind}::text and object_id = ${id}::int
    order by rev desc limit ${page.size}::int offset ${page.page * page.size}::bigint`);
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && page.page > 0) {
    const count = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from object_revisions where object_type = ${kind}::text and object_id = ${id}::int`);
    total = Number(count.rows[0].n);
  }
  return { items: rows.map(entryOf), total };
}

/** One revision with its snapshot; undefined when the object has no such revision (or it was pruned). */
export async function revisionOf(
  db: DbOrTx,
  kind: RevisionKind,
  id: number,
  rev: number,
): Promise<RevisionWithSnapshot | undefined> {
  const { rows } = await db.execute<RevisionDbRow>(sql`
    select object_id, rev, change, author_id, deployment_id, created_at, snapshot from object_revisions
    where object_type = ${kind}::text and object_id = ${id}::int and rev = ${rev}::int`);
  return rows[0] && { ...entryOf(rows[0]), snapshot: rows[0].snapshot! };
}

/**
 * Per object: the latest revision written before the first one the deployment wrote (null: the deployment wrote
 * none, or there is none before it: the deployment created the object). Objects without any revision of that
 * deployment are absent from the map.
 */
export async function revisionBefore(
  tx: DbOrTx,
  kind: RevisionKind,
  ids: number[],
  deploymentId: number,
): Promise<Map<number, { rev: number; snapshot: Snapshot } | null>> {
  const list = distinctIds(ids);
  const out = new Map<number, { rev: number; snapshot: Snapshot } | null>();
  if (!list.length) return out;
  const { rows } = await tx.execute<{ object_id: number; rev: number | null; snapshot: Snapshot | null }>(sql`
    select d.object_id, b.rev, b.snapshot
    from (select object_id, min(rev) as rev from object_revisions
      where object_type = ${kind}::text and object_id = any(${ints(list)}) and deployment_id = ${deploymentId}::int
      group by object_id) d
    left join lateral (select r.rev, r.snapshot from object_revisions r
      where r.object_type = ${kind}::text and r.object_id = d.object_id and r.rev < d.rev
      order by r.rev desc limit 1) b on true`);
  for (const r of rows)
    out.set(Number(r.object_id), r.rev === null ? null : { rev: Number(r.rev), snapshot: r.snapshot! });
  return out;
}

/** Per object: its latest revision (objects without one are absent). */
export async function latestRevisions(
  tx: DbOrTx,
  kind: RevisionKind,
  ids: number[],
): Promise<Map<number, { rev: number; deploymentId: number | null; change: RevisionChange }>> {
  const list = distinctIds(ids);
  const out = new Map<number, { rev: number; deploymentId: number | null; change: RevisionChange }>();
  if (!list.length) return out;
  const { rows } = await tx.execute<RevisionDbRow>(sql`
    select distinct on (object_id) object_id, rev, change, author_id, deployment_id, created_at
    from object_revisions where object_type = ${kind}::text and object_id = any(${ints(list)})
    order by object_id, rev desc`);
  for (const r of rows) {
    const e = entryOf(r);
    out.set(Number(r.object_id), { rev: e.rev, deploymentId: e.deploymentId, change: e.change });
  }
  return out;
}

/** Per object: the revision current at `at` (the latest written at or before it); objects without one are absent. */
export async function revisionsAt(
  tx: DbOrTx,
  kind: RevisionKind,
  ids: number[],
  at: Date,
): Promise<Map<number, { rev: number; snapshot: Snapshot }>> {
  const list = distinctIds(ids);
  const out = new Map<number, { rev: number; snapshot: Snapshot }>();
  if (!list.length) return out;
  const { rows } = await tx.execute<{ object_id: number; rev: number; snapshot: Snapshot }>(sql`
    select distinct on (object_id) object_id, rev, snapshot
    from object_revisions where object_type = ${kind}::text and object_id = any(${ints(list)})
      and created_at <= ${at.toISOString()}::timestamptz
    order by object_id, rev desc`);
  for (const r of rows) out.set(Number(r.object_id), { rev: Number(r.rev), snapshot: r.snapshot });
  return out;
}
