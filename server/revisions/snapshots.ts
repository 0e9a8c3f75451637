import { sql, type SQL } from 'drizzle-orm';

/*
 * What a revision keeps of each kind: the object's own row and, for a dataset, the rows of the tables a schema save,
 * a security rule save and a deploy copy write, as they are stored (DB column names), children sorted by id. Edit
 * times, the version and the author of the row are left out (a revision has its own author and time), and so are a
 * source's sealed secrets: a revision never holds one, so neither a read nor a restore can give one back.
 */

export const REVISION_KINDS = ['data_source', 'dataset', 'widget', 'dashboard'] as const;
export type RevisionKind = (typeof REVISION_KINDS)[number];

export const REVISION_CHANGES = ['created', 'saved', 'schema_saved', 'deployed', 'restored', 'rolled_back'] as const;
export type RevisionChange = (typeof REVISION_CHANGES)[number];

export type SnapshotRow = Record<string, unknown>;

/** An object as a revision keeps it. */
export interface Snapshot {
  row: SnapshotRow;
  children?: Record<string, SnapshotRow[]>;
}

export const KIND_TABLES: Record<RevisionKind, string> = {
  data_source: 'data_sources',
  dataset: 'datasets',
  widget: 'widgets',
  dashboard: 'dashboards',
};

/** Columns of the own rows never kept. */
const VOLATILE = ['created_at', 'updated_at', 'version', 'author_id'];
const NEVER_KEPT: Record<RevisionKind, string[]> = {
  data_source: [...VOLATILE, 'secrets'],
  dataset: VOLATILE,
  widget: VOLATILE,
  dashboard: VOLATILE,
};

/** The child tables of a dataset, in the order a restore writes them, with their sort and the columns not kept. */
export const DATASET_CHILDREN = [
  { table: 'dataset_sources', order: 'c.position, c.data_source_id', drop: [] },
  { table: 'dataset_objects', order: 'c.id', drop: [] },
  { table: 'dataset_fields', order: 'c.id', drop: [] },
  { table: 'dataset_relations', order: 'c.id', drop: [] },
  { table: 'dataset_hierarchies', order: 'c.id', drop: [] },
  { table: 'dataset_filters', order: 'c.id', drop: [] },
  { table: 'dataset_parameters', order: 'c.id', drop: [] },
  { table: 'dataset_rls_rules', order: 'c.id', drop: ['created_at', 'updated_at'] },
  { table: 'dataset_cls_rules', order: 'c.id', drop: ['created_at', 'updated_at'] },
] as const;

const without = (expr: SQL, columns: readonly string[]): SQL =>
  columns.reduce((acc, c) => sql`${acc} - ${c}::text`, expr);

/**
 * SQL: `(id, snapshot)` of the objects among `ids` (an int[] SQL value). A dataset's child rows are aggregated per
 * table in one set-based pass each (hashed once), not a subquery per dataset: a 1,000-object deploy snapshots its
 * datasets in one statement whose cost grows with the rows, not with rows times datasets.
 */
export function snapshotsOf(kind: RevisionKind, ids: SQL): SQL {
  const row = without(sql`to_jsonb(o)`, NEVER_KEPT[kind]);
  const table = sql.raw(KIND_TABLES[kind]);
  if (kind !== 'dataset')
    return sql`select o.id, jsonb_build_object('row', ${row}) as snapshot from ${table} o where o.id = any(${ids})`;
  const aggregates = DATASET_CHILDREN.map(
    (c, i) => sql`left join (
      select c.dataset_id, jsonb_agg(${without(sql`to_jsonb(c)`, c.drop)} order by ${sql.raw(c.order)}) as rows
      from ${sql.raw(c.table)} c where c.dataset_id = any(${ids}) group by c.dataset_id
    ) ${sql.raw(`c${i}`)} on ${sql.raw(`c${i}`)}.dataset_id = o.id`,
  );
  const children = DATASET_CHILDREN.map(
    (c, i) => sql`${c.table}::text, coalesce(${sql.raw(`c${i}`)}.rows, '[]'::jsonb)`,
  );
  return sql`select o.id, jsonb_build_object('row', ${row},
      'children', jsonb_build_object(${sql.join(children, sql`, `)})) as snapshot
    from ${table} o ${sql.join(aggregates, sql` `)} where o.id = any(${ids})`;
}
