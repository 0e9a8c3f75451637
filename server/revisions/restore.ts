import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '../../db/client';
import { ints } from '../objects/copy-map';
import { layoutOf, referencedWidgetIds, withoutWidget, type DashboardLayout } from '../dashboards/layout';
import { DATASET_CHILDREN, KIND_TABLES, type RevisionKind, type Snapshot, type SnapshotRow } from './snapshots';

/*
 * Writes snapshots back over the live objects, keeping every id (the object's and, for a dataset, those of its
 * objects, fields, relations, rules ...), batched: a fixed number of statements per kind whatever the number of
 * objects. The object's workspace, author, uuid and a source's sealed secrets are never written (a revision holds no
 * secret; a restore keeps the current one). What a snapshot names that no longer exists is not written and is named
 * in `missing` instead: the object itself, a dataset's source (with the objects on it), a widget's dataset, a
 * dashboard's widgets and selector fields. Edit times move (and a dataset's version): a restore is a save. It records
 * no revision: the caller records 'restored' or 'rolled_back' after it.
 */

export interface RestoreItem {
  id: number;
  snapshot: Snapshot;
}

export interface RestoreResult {
  missing: string[];
}

const KIND_LABEL: Record<RevisionKind, string> = {
  data_source: 'источник данных',
  dataset: 'датасет',
  widget: 'виджет',
  dashboard: 'дашборд',
};

const json = (value: unknown): SQL => sql`${JSON.stringify(value)}::jsonb`;

/** The snapshots as (id int, row jsonb) rows, aliased `s`. */
const itemsSql = (items: RestoreItem[]): SQL =>
  sql`jsonb_to_recordset(${json(items.map((i) => ({ id: i.id, row: i.snapshot.row })))}) s(id int, row jsonb)`;

export async function restoreSnapshots(tx: Tx, kind: RevisionKind, items: RestoreItem[]): Promise<RestoreResult> {
  if (!items.length) return { missing: [] };
  const existing = await tx.execute<{ id: number }>(
    sql`select id from ${sql.raw(KIND_TABLES[kind])} where id = any(${ints(items.map((i) => i.id))})`,
  );
  const present = new Set(existing.rows.map((r) => Number(r.id)));
  const missing = items.filter((i) => !present.has(i.id)).map((i) => `${KIND_LABEL[kind]} id ${i.id}`);
  const live = items.filter((i) => present.has(i.id));
  if (!live.length) return { missing };
  const restore = {
    data_source: restoreSources,
    dataset: restoreDatasets,
    widget: restoreWidgets,
    dashboard: restoreDashboards,
  }[kind];
  return { missing: [...missing, ...(await restore(tx, live))] };
}

/** Name and settings; a file source keeps its settings (they name its stored file: a new one comes by upload). */
async function restoreSources(tx: Tx, items: RestoreItem[]): Promise<string[]> {
  const files = await tx.execute<{ id: number }>(sql`
    select d.id from data_sources d join ${itemsSql(items)} on s.id = d.id
    where d.type = 'file' and d.settings is distinct from s.row->'settings' order by d.id`);
  // New settings may be another database: what was read from the old one goes (as a save drops it).
  await tx.execute(sql`
    delete from data_source_metadata m using data_sources d, ${itemsSql(items)}
    where s.id = d.id and m.data_source_id = d.id and d.type <> 'file'
      and d.settings is distinct from s.row->'settings'`);
  await tx.execute(sql`
    update data_sources d set name = s.row->>'name',
      settings = case when d.type = 'file' then d.settings else coalesce(s.row->'settings', d.settings) end,
      updated_at = now()
    from ${itemsSql(items)} where d.id = s.id`);
  return files.rows.map((r) => `файл источника данных id ${r.id} (загрузите файл заново)`);
}

type ChildTable = (typeof DATASET_CHILDREN)[number]['table'];

/** The child rows of every snapshot for one table, each pinned to its dataset. */
function childRows(items: RestoreItem[], table: ChildTable): SnapshotRow[] {
  return items.flatMap((i) => (i.snapshot.children?.[table] ?? []).map((r) => ({ ...r, dataset_id: i.id })));
}

/** Column names of a child table as a restore writes them (edit times of rules take their defaults). */
const CHILD_COLUMNS: Record<ChildTable, string[]> = {
  dataset_sources: ['dataset_id', 'data_source_id', 'position'],
  dataset_objects: ['id', 'dataset_id', 'data_source_id', 'name', 'kind', 'schema', 'table', 'sql', 'position'],
  dataset_fields: [
    'id',
    'dataset_id',
    'object_id',
    'name',
    'title',
    'kind',
    'column',
    'formula',
    'derivation',
    'primitive_type',
    'aggregation',
    'hidden',
    'description',
    'sort_by_field_id',
    'position',
  ],
  dataset_relations: ['id', 'dataset_id', 'left_object_id', 'right_object_id', 'join_type', 'conditions', 'position'],
  dataset_hierarchies: ['id', 'dataset_id', 'name', 'field_ids', 'position'],
  dataset_filters: ['id', 'dataset_id', 'field_id', 'op', 'values', 'value_type', 'position'],
  dataset_parameters: ['id', 'dataset_id', 'name', 'primitive_type', 'default_value', 'domain', 'order'],
  dataset_rls_rules: ['id', 'dataset_id', 'field_id', 'attribute', 'operator', 'user_ids', 'group_ids'],
  dataset_cls_rules: ['id', 'dataset_id', 'field_ids', 'action', 'user_ids', 'group_ids'],
};

/** INSERT ... SELECT from the rows (as `r`), only those passing `where`, with an optional ON CONFLICT clause. */
async function insertRows(tx: Tx, table: ChildTable, rows: SnapshotRow[], where: SQL, conflict?: SQL): Promise<void> {
  if (!rows.length) return;
  const cols = CHILD_COLUMNS[table];
  const list = sql.raw(cols.map((c) => `"${c}"`).join(', '));
  const selected = sql.raw(cols.map((c) => `r."${c}"`).join(', '));
  await tx.execute(sql`
    insert into ${sql.raw(table)} (${list})
    select ${selected} from jsonb_populate_recordset(null::${sql.raw(table)}, ${json(rows)}) r
    where ${where} ${conflict ?? sql``}`);
}

/** `on conflict (id) do update set` every written column but the id. */
const updateAll = (table: ChildTable): SQL =>
  sql.raw(
    `on conflict (id) do update set ${CHILD_COLUMNS[table]
      .filter((c) => c !== 'id')
      .map((c) => `"${c}" = excluded."${c}"`)
      .join(', ')}`,
  );

/**
 * The row (name, description, mode) and the whole schema with its security rules. Kept elements are updated in
 * place (what refers to them from outside keeps working), the others inserted under their old ids and what the
 * snapshot does not have deleted, in foreign-key order.
 */
async function restoreDatasets(tx: Tx, items: RestoreItem[]): Promise<string[]> {
  const ids = ints(items.map((i) => i.id));
  const rows = Object.fromEntries(DATASET_CHILDREN.map((c) => [c.table, childRows(items, c.table)])) as Record<
    ChildTable,
    SnapshotRow[]
  >;
  await tx.execute(sql`
    update datasets d set name = s.row->>'name', description = coalesce(s.row->>'description', ''),
      live = coalesce((s.row->>'live')::boolean, d.live), version = d.version + 1, updated_at = now()
    from ${itemsSql(items)} where d.id = s.id`);
  const gone = await tx.execute<{ dataset_id: number; data_source_id: number; objects: string[] }>(sql`
    select r.dataset_id, r.data_source_id,
      coalesce((select array_agg(o->>'name' order by (o->>'id')::int) from jsonb_array_elements(${json(rows.dataset_objects)}) o
        where (o->>'dataset_id')::int = r.dataset_id and (o->>'data_source_id')::int = r.data_source_id), '{}') as objects
    from jsonb_populate_recordset(null::dataset_sources, ${json(rows.dataset_sources)}) r
    where not exists (select 1 from data_sources ds where ds.id = r.data_source_id)
    order by r.dataset_id, r.data_source_id`);
  // Everything that refers to fields or objects goes first and is written anew from the snapshot.
  await tx.execute(sql`
    with r as (delete from dataset_relations where dataset_id = any(${ids})),
      h as (delete from dataset_hierarchies where dataset_id = any(${ids})),
      f as (delete from dataset_filters where dataset_id = any(${ids})),
      p as (delete from dataset_parameters where dataset_id = any(${ids})),
      rls as (delete from dataset_rls_rules where dataset_id = any(${ids}))
    delete from dataset_cls_rules where dataset_id = any(${ids})`);
  await insertRows(
    tx,
    'dataset_sources',
    rows.dataset_sources,
    sql`exists (select 1 from data_sources ds where ds.id = r.data_source_id)`,
    sql`on conflict (dataset_id, data_source_id) do update set position = excluded.position`,
  );
  await insertRows(
    tx,
    'dataset_objects',
    rows.dataset_objects,
    sql`exists (select 1 from dataset_sources s where s.dataset_id = r.dataset_id and s.data_source_id = r.data_source_id)`,
    updateAll('dataset_objects'),
  );
  const objectOk = (column: string) =>
    sql`exists (select 1 from dataset_objects o where o.id = r.${sql.raw(column)} and o.dataset_id = r.dataset_id)`;
  const fieldOk = sql`exists (select 1 from dataset_fields f where f.id = r.field_id and f.dataset_id = r.dataset_id)`;
  await insertRows(
    tx,
    'dataset_fields',
    rows.dataset_fields,
    sql`(r.object_id is null or ${objectOk('object_id')})`,
    updateAll('dataset_fields'),
  );
  await insertRows(
    tx,
    'dataset_relations',
    rows.dataset_relations,
    sql`${objectOk('left_object_id')} and ${objectOk('right_object_id')}`,
  );
  await insertRows(tx, 'dataset_hierarchies', rows.dataset_hierarchies, sql`true`);
  await insertRows(tx, 'dataset_filters', rows.dataset_filters, fieldOk);
  await insertRows(tx, 'dataset_parameters', rows.dataset_parameters, sql`true`);
  await insertRows(tx, 'dataset_rls_rules', rows.dataset_rls_rules, fieldOk);
  await insertRows(tx, 'dataset_cls_rules', rows.dataset_cls_rules, sql`true`);
  // What the snapshot does not have: fields, then objects, then sources.
  const keep = (table: ChildTable) => ints(rows[table].map((r) => Number(r.id)));
  await tx.execute(sql`delete from dataset_fields where dataset_id = any(${ids})
    and not (id = any(${keep('dataset_fields')}))`);
  await tx.execute(sql`delete from dataset_objects where dataset_id = any(${ids})
    and not (id = any(${keep('dataset_objects')}))`);
  await tx.execute(sql`delete from dataset_sources c where c.dataset_id = any(${ids}) and not exists (
    select 1 from jsonb_populate_recordset(null::dataset_sources, ${json(rows.dataset_sources)}) r
    where r.dataset_id = c.dataset_id and r.data_source_id = c.data_source_id)`);
  return gone.rows.map(
    (g) =>
      `источник данных id ${g.data_source_id} (датасет id ${g.dataset_id}` +
      (g.objects.length ? `; не восстановлены объекты ${g.objects.map((n) => `«${n}»`).join(', ')})` : ')'),
  );
}

/** Name, type, configuration and dataset: a dataset that is gone (or now in another workspace) is not put back. */
async function restoreWidgets(tx: Tx, items: RestoreItem[]): Promise<string[]> {
  const gone = await tx.execute<{ id: number; dataset_id: number }>(sql`
    select w.id, (s.row->>'dataset_id')::int as dataset_id
    from widgets w join ${itemsSql(items)} on s.id = w.id
    where not exists (select 1 from datasets d where d.id = (s.row->>'dataset_id')::int and d.workspace_id = w.workspace_id)
    order by w.id`);
  await tx.execute(sql`
    update widgets w set name = s.row->>'name', type = s.row->>'type', config = coalesce(s.row->'config', '{}'::jsonb),
      dataset_id = case when exists (select 1 from datasets d
          where d.id = (s.row->>'dataset_id')::int and d.workspace_id = w.workspace_id)
        then (s.row->>'dataset_id')::int else w.dataset_id end,
      updated_at = now()
    from ${itemsSql(items)} where w.id = s.id`);
  return gone.rows.map((g) => `датасет id ${g.dataset_id} (виджет id ${g.id})`);
}

/**
 * Name, description and layout. A layout never names a widget that is gone (or is in another workspace): such tiles
 * go and selectors and parameters stop driving it; a selector on a field that is gone goes. Each is named in `missing`.
 */
async function restoreDashboards(tx: Tx, items: RestoreItem[]): Promise<string[]> {
  const layouts = items.map((i) => ({ id: i.id, layout: layoutOf(i.snapshot.row.layout) }));
  const widgetIds = [...new Set(layouts.flatMap((l) => referencedWidgetIds(l.layout)))];
  const fieldIds = [...new Set(layouts.flatMap((l) => l.layout.selectors.map((s) => s.field_id)))];
  // One after another: a transaction has one connection.
  const dashboards = await tx.execute<{ id: number; workspace_id: number }>(
    sql`select id, workspace_id from dashboards where id = any(${ints(items.map((i) => i.id))})`,
  );
  const widgets = await tx.execute<{ id: number; workspace_id: number }>(
    sql`select id, workspace_id from widgets where id = any(${ints(widgetIds)})`,
  );
  const fields = await tx.execute<{ id: number; workspace_id: number }>(sql`
    select f.id, d.workspace_id from dataset_fields f join datasets d on d.id = f.dataset_id
    where f.id = any(${ints(fieldIds)})`);
  const workspaceOf = (rows: { id: number; workspace_id: number }[]) =>
    new Map(rows.map((r) => [Number(r.id), Number(r.workspace_id)]));
  const dashboardWs = workspaceOf(dashboards.rows);
  const widgetWs = workspaceOf(widgets.rows);
  const fieldWs = workspaceOf(fields.rows);
  const missing: string[] = [];
  const rows = layouts.map(({ id, layout }) => {
    const ws = dashboardWs.get(id);
    const before = missing.length;
    let next: DashboardLayout = layout;
    for (const w of referencedWidgetIds(layout)) {
      if (widgetWs.get(w) === ws) continue;
      missing.push(`виджет id ${w} (дашборд id ${id})`);
      next = withoutWidget(next, w);
    }
    const selectors = next.selectors.filter((s) => {
      if (fieldWs.get(s.field_id) === ws) return true;
      missing.push(`поле id ${s.field_id} селектора «${s.name}» (дашборд id ${id})`);
      return false;
    });
    const row = items.find((i) => i.id === id)!.snapshot.row;
    // Nothing dropped: the layout goes back exactly as it was kept (a never saved one stays `{}`).
    const written = missing.length === before ? (row.layout ?? {}) : { ...next, selectors };
    return { id, name: row.name, description: row.description ?? '', layout: written };
  });
  await tx.execute(sql`
    update dashboards d set name = r.name, description = r.description, layout = r.layout, updated_at = now()
    from jsonb_to_recordset(${json(rows)}) r(id int, name text, description text, layout jsonb) where d.id = r.id`);
  return missing;
}
