import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../../db/client';

/*
 * The id map of one deploy, kept in a temporary table of the deploy's transaction (dropped at commit or rollback),
 * so that every batched step joins it in SQL instead of shipping ids back and forth: per kind, the original's id,
 * the copy's id (the linked copy's own, or one drawn from the kind's sequence in advance) and whether the copy is
 * created by this deploy. Drawing ids in advance lets INSERT ... SELECT write rows that already point at each other.
 */

export const DEPLOY_KINDS = ['data_source', 'dataset', 'widget', 'dashboard'] as const;
export type DeployKind = (typeof DEPLOY_KINDS)[number];

/** The object tables, by kind (raw names: the batched steps are plain SQL). */
export const KIND_TABLE: Record<DeployKind, string> = {
  data_source: 'data_sources',
  dataset: 'datasets',
  widget: 'widgets',
  dashboard: 'dashboards',
};

export const MAP = sql.raw('pipeline_deploy_map');

/** A list of ids as ONE parameter (an int[] literal): drizzle would spread an array into a parameter each. */
export const ints = (ids: number[]): SQL => sql`${`{${ids.map((id) => Math.trunc(id)).join(',')}}`}::int[]`;

export async function createDeployMap(tx: Tx): Promise<void> {
  await tx.execute(sql`create temporary table ${MAP} (
    kind text not null,
    old_id integer not null,
    new_id integer not null,
    created boolean not null,
    primary key (kind, old_id)
  ) on commit drop`);
}

export interface StagePair {
  pipelineId: number;
  fromOrder: number;
  sourceWorkspaceId: number;
  targetWorkspaceId: number;
}

/**
 * Maps the chosen originals of one kind: an original whose link names a copy still in the target workspace keeps that
 * copy (a repeated deploy updates it); any other gets a new id (its stale link, if any, is replaced at the end).
 */
export async function mapObjects(tx: Tx, pair: StagePair, kind: DeployKind, ids: number[]): Promise<void> {
  if (!ids.length) return;
  const table = sql.raw(KIND_TABLE[kind]);
  await tx.execute(sql`insert into ${MAP} (kind, old_id, new_id, created)
    select ${kind}, o.id, coalesce(c.id, nextval(pg_get_serial_sequence(${KIND_TABLE[kind]}, 'id'))::int), c.id is null
    from ${table} o
    left join pipeline_object_links l on l.pipeline_id = ${pair.pipelineId} and l.from_order = ${pair.fromOrder}
      and l.object_type = ${kind} and l.original_id = o.id
    left join ${table} c on c.id = l.copy_id and c.workspace_id = ${pair.targetWorkspaceId}
    where o.id = any(${ints(ids)})`);
}

export interface MappedObject {
  type: DeployKind;
  sourceId: number;
  targetId: number;
  created: boolean;
  name: string;
  /** Created, and another object of the same kind and name is already in the target workspace. */
  nameTaken: boolean;
}

/** Every mapped object with its name and whether an unrelated object of the target already has that name. */
export async function mappedObjects(tx: Tx, pair: StagePair): Promise<MappedObject[]> {
  const parts = DEPLOY_KINDS.map((kind) => {
    const table = sql.raw(KIND_TABLE[kind]);
    // Only a created copy can meet an unrelated namesake (an updated one is already there): one hash join over the
    // target's names instead of a lookup per object.
    return sql`select m.kind, m.old_id, m.new_id, m.created, o.name, m.created and n.name is not null as name_taken
      from ${MAP} m join ${table} o on o.id = m.old_id
      left join (select distinct t.name from ${table} t where t.workspace_id = ${pair.targetWorkspaceId}) n
        on n.name = o.name
      where m.kind = ${kind}`;
  });
  const res = await tx.execute<{
    kind: DeployKind;
    old_id: number;
    new_id: number;
    created: boolean;
    name: string;
    name_taken: boolean;
  }>(sql`${sql.join(parts, sql` union all `)}`);
  const order = (k: DeployKind) => DEPLOY_KINDS.indexOf(k);
  return res.rows
    .map((r) => ({
      type: r.kind,
      sourceId: r.old_id,
      targetId: r.new_id,
      created: r.created,
      name: r.name,
      nameTaken: r.name_taken,
    }))
    .sort((a, b) => order(a.type) - order(b.type) || a.sourceId - b.sourceId);
}
