import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { ints, MAP, type StagePair } from './map';

/*
 * Dashboards of a deploy: the layouts are remapped here (tiles, selectors and parameters to the widgets' copies,
 * selector fields to the copied dataset fields) and written by one upsert; the map entries the layouts need are read
 * in one statement.
 */
export async function deployDashboards(tx: Tx, pair: StagePair, authorId: number): Promise<void> {
  const originals = await tx.execute<{ id: number; layout: unknown }>(sql`
    select o.id, o.layout from ${MAP} m join dashboards o on o.id = m.old_id where m.kind = 'dashboard'`);
  if (!originals.rows.length) return;
  const layouts = originals.rows.map((r) => ({ id: r.id, layout: layoutOf(r.layout) }));
  const widgetIds = new Set<number>();
  const fieldIds = new Set<number>();
  for (const { layout } of layouts) {
    for (const i of layout.items) widgetIds.add(i.widget_id);
    for (const s of layout.selectors) {
      fieldIds.add(s.field_id);
      for (const w of s.widget_ids) widgetIds.add(w);
    }
    for (const p of layout.parameters) for (const w of p.widget_ids) widgetIds.add(w);
  }
  const entries = await tx.execute<{ kind: string; old_id: number; new_id: number }>(sql`
    select kind, old_id, new_id from ${MAP}
    where (kind = 'widget' and old_id = any(${ints([...widgetIds])}))
      or (kind = 'dataset_field' and old_id = any(${ints([...fieldIds])}))`);
  const widgets = new Map<number, number>();
  const fields = new Map<number, number>();
  for (const e of entries.rows) (e.kind === 'widget' ? widgets : fields).set(e.old_id, e.new_id);
  const rows = layouts.map(({ id, layout }) => ({ old_id: id, layout: remapLayout(layout, widgets, fields) }));
  await tx.execute(sql`
    insert into dashboards (id, name, description, workspace_id, author_id, layout)
    select m.new_id, o.name, o.description, ${pair.targetWorkspaceId}, ${authorId}, r.layout
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) r(old_id int, layout jsonb)
    join ${MAP} m on m.kind = 'dashboard' and m.old_id = r.old_id
    join dashboards o on o.id = r.old_id
    on conflict (id) do update set name = excluded.name, description = excluded.description,
      layout = excluded.layout, updated_at = now()`);
}

function remapLayout(layout: DashboardLayout, widgets: Map<number, number>, fields: Map<number, number>) {
  const w = (id: number) => widgets.get(id) ?? id;
  return {
    tabs: layout.tabs,
    items: layout.items.map((i) => ({ ...i, widget_id: w(i.widget_id) })),
    selectors: layout.selectors.map((s) => ({
      ...s,
      field_id: fields.get(s.field_id) ?? s.field_id,
      widget_ids: s.widget_ids.map(w),
    })),
    parameters: layout.parameters.map((p) => ({ ...p, widget_ids: p.widget_ids.map(w) })),
  };
}

/** The parts of a saved layout (PUT /api/dashboard/{id}/schema) that name widgets and fields; the rest travels as is. */
interface DashboardLayout {
  tabs: unknown[];
  items: { widget_id: number }[];
  selectors: { field_id: number; widget_ids: number[] }[];
  parameters: { widget_ids: number[] }[];
}

function layoutOf(saved: unknown): DashboardLayout {
  const l = (saved ?? {}) as Partial<DashboardLayout>;
  return { tabs: l.tabs ?? [], items: l.items ?? [], selectors: l.selectors ?? [], parameters: l.parameters ?? [] };
}
