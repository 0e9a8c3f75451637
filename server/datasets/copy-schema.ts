import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client';
import { COPY_MAP } from '../objects/copy-map';

/*
 * The schema part of copyDatasets (store.ts), batched: a fixed number of statements whatever the number of datasets,
 * objects and fields. A created copy gets the whole schema under new ids; an updated copy keeps the ids of the objects
 * and fields that match the original's by name (so that what refers to them keeps working) and is otherwise brought
 * to the original's schema: new elements inserted, omitted ones deleted, relations, hierarchies, filters and
 * parameters written anew on the copied fields.
 */

/** The datasets an earlier run copied, updated in place by this one. */
const UPDATED_COPIES = sql`(select new_id from ${COPY_MAP} where kind = 'dataset' and not created)`;

/**
 * Maps the schema elements others refer to by id (objects and fields: relations, filters, hierarchies, security
 * rules, dashboard selectors). An updated copy's element matching the original's by name keeps its id: an object by
 * its name, a physical field by its object's name and its own, a calculated field by its name (names are unique
 * there, case aside, as the schema validation keeps them). Anything else gets an id drawn from the table's sequence.
 */
export async function mapDatasetChildren(tx: Tx): Promise<void> {
  await tx.execute(sql`
    insert into ${COPY_MAP} (kind, old_id, new_id, created)
    select 'dataset_object', o.id, coalesce(c.id, nextval(pg_get_serial_sequence('dataset_objects', 'id'))::int),
      c.id is null
    from dataset_objects o join ${COPY_MAP} m on m.kind = 'dataset' and m.old_id = o.dataset_id
    left join lateral (
      select c.id from dataset_objects c
      where not m.created and c.dataset_id = m.new_id and lower(c.name) = lower(o.name)
      order by c.id limit 1
    ) c on true`);
  await tx.execute(sql`
    insert into ${COPY_MAP} (kind, old_id, new_id, created)
    select 'dataset_field', f.id, coalesce(c.id, nextval(pg_get_serial_sequence('dataset_fields', 'id'))::int),
      c.id is null
    from dataset_fields f join ${COPY_MAP} m on m.kind = 'dataset' and m.old_id = f.dataset_id
    left join dataset_objects fo on fo.id = f.object_id
    left join lateral (
      select c.id from dataset_fields c left join dataset_objects co on co.id = c.object_id
      where not m.created and c.dataset_id = m.new_id and c.kind = f.kind and lower(c.name) = lower(f.name)
        and lower(coalesce(co.name, '')) = lower(coalesce(fo.name, ''))
      order by c.id limit 1
    ) c on true`);
}

/** Relations, hierarchies, filters and parameters of updated copies go; they are written anew. */
export async function clearCopyDependents(tx: Tx): Promise<void> {
  await tx.execute(sql`
    with r as (delete from dataset_relations where dataset_id in ${UPDATED_COPIES}),
      h as (delete from dataset_hierarchies where dataset_id in ${UPDATED_COPIES}),
      f as (delete from dataset_filters where dataset_id in ${UPDATED_COPIES})
    delete from dataset_parameters where dataset_id in ${UPDATED_COPIES}`);
}

/** Sources, objects and fields of every copy, in foreign-key order (a field's object exists before the field). */
export async function upsertSchema(tx: Tx): Promise<void> {
  await tx.execute(sql`
    insert into dataset_sources (dataset_id, data_source_id, position)
    select m.new_id, coalesce(sm.new_id, s.data_source_id), s.position
    from dataset_sources s join ${COPY_MAP} m on m.kind = 'dataset' and m.old_id = s.dataset_id
    left join ${COPY_MAP} sm on sm.kind = 'data_source' and sm.old_id = s.data_source_id
    on conflict (dataset_id, data_source_id) do update set position = excluded.position`);
  await tx.execute(sql`
    insert into dataset_objects (id, dataset_id, data_source_id, name, kind, "schema", "table", "sql", position)
    select om.new_id, m.new_id, coalesce(sm.new_id, o.data_source_id), o.name, o.kind, o."schema", o."table", o."sql",
      o.position
    from dataset_objects o join ${COPY_MAP} m on m.kind = 'dataset' and m.old_id = o.dataset_id
    join ${COPY_MAP} om on om.kind = 'dataset_object' and om.old_id = o.id
    left join ${COPY_MAP} sm on sm.kind = 'data_source' and sm.old_id = o.data_source_id
    on conflict (id) do update set data_source_id = excluded.data_source_id, name = excluded.name,
      kind = excluded.kind, "schema" = excluded."schema", "table" = excluded."table", "sql" = excluded."sql",
      position = excluded.position`);
  await tx.execute(sql`
    insert into dataset_fields (id, dataset_id, object_id, name, title, kind, "column", formula, derivation,
      primitive_type, aggregation, hidden, description, sort_by_field_id, position)
    select fm.new_id, m.new_id, om.new_id, f.name, f.title, f.kind, f."column", f.formula,
      case when jsonb_typeof(f.derivation) = 'object' and f.derivation ? 'fieldId'
        then jsonb_set(f.derivation, '{fieldId}', to_jsonb(coalesce(dm.new_id, (f.derivation->>'fieldId')::int)))
        else f.derivation end,
      f.primitive_type, f.aggregation, f.hidden, f.description, coalesce(sm.new_id, f.sort_by_field_id), f.position
    from dataset_fields f join ${COPY_MAP} m on m.kind = 'dataset' and m.old_id = f.dataset_id
    join ${COPY_MAP} fm on fm.kind = 'dataset_field' and fm.old_id = f.id
    left join ${COPY_MAP} om on om.kind = 'dataset_object' and om.old_id = f.object_id
    left join ${COPY_MAP} dm on dm.kind = 'dataset_field' and jsonb_typeof(f.derivation) = 'object'
      and dm.old_id = (f.derivation->>'fieldId')::int
    left join ${COPY_MAP} sm on sm.kind = 'dataset_field' and sm.old_id = f.sort_by_field_id
    on conflict (id) do update set object_id = excluded.object_id, name = excluded.name, title = excluded.title,
      kind = excluded.kind, "column" = excluded."column", formula = excluded.formula,
      derivation = excluded.derivation, primitive_type = excluded.primitive_type,
      aggregation = excluded.aggregation, hidden = excluded.hidden, description = excluded.description,
      sort_by_field_id = excluded.sort_by_field_id, position = excluded.position`);
}

/** What an updated copy has and its original no longer does: fields, then objects, then sources. */
export async function deleteOmitted(tx: Tx): Promise<void> {
  await tx.execute(sql`delete from dataset_fields c where c.dataset_id in ${UPDATED_COPIES}
    and not exists (select 1 from ${COPY_MAP} fm where fm.kind = 'dataset_field' and fm.new_id = c.id)`);
  await tx.execute(sql`delete from dataset_objects c where c.dataset_id in ${UPDATED_COPIES}
    and not exists (select 1 from ${COPY_MAP} om where om.kind = 'dataset_object' and om.new_id = c.id)`);
  await tx.execute(sql`delete from dataset_sources c where c.dataset_id in ${UPDATED_COPIES}
    and not exists (
      select 1 from dataset_sources s join ${COPY_MAP} m on m.kind = 'dataset' and m.old_id = s.dataset_id
      left join ${COPY_MAP} sm on sm.kind = 'data_source' and sm.old_id = s.data_source_id
      where m.new_id = c.dataset_id and coalesce(sm.new_id, s.data_source_id) = c.data_source_id)`);
}

/**
 * SQL: `id -> remapped` rows of a table's int[] column of field ids (rows of the originals, joined as `ds`), each id
 * the map knows replaced by its copy's, in order. One set-based join (hashed once), not a subquery per row: the
 * planner cannot estimate a correlated one.
 */
const remappedFieldIds = (table: string, column: string) => sql`
  select x.id, array_agg(coalesce(fm.new_id, u.f) order by u.n) as ids
  from ${sql.raw(table)} x join ds on ds.old_id = x.dataset_id
  cross join lateral unnest(x.${sql.raw(column)}) with ordinality u(f, n)
  left join ${COPY_MAP} fm on fm.kind = 'dataset_field' and fm.old_id = u.f
  group by x.id`;

/** The originals and their copies, as `ds` (old_id, new_id). */
const COPIED_DATASETS = sql`ds as (select old_id, new_id from ${COPY_MAP} where kind = 'dataset')`;

/**
 * Relations, hierarchies (a level on a calculated field too: it is a field like any other here), filters and
 * parameters of every copy, on the copied objects and fields, one statement per table.
 */
export async function copyDatasetDependents(tx: Tx): Promise<void> {
  await tx.execute(sql`with ${COPIED_DATASETS},
    cond as (
      select r.id, jsonb_agg(e.c || jsonb_build_object(
          'leftFieldId', coalesce(lf.new_id, (e.c->>'leftFieldId')::int),
          'rightFieldId', coalesce(rf.new_id, (e.c->>'rightFieldId')::int)) order by e.n) as conditions
      from dataset_relations r join ds on ds.old_id = r.dataset_id
      cross join lateral jsonb_array_elements(r.conditions) with ordinality e(c, n)
      left join ${COPY_MAP} lf on lf.kind = 'dataset_field' and lf.old_id = (e.c->>'leftFieldId')::int
      left join ${COPY_MAP} rf on rf.kind = 'dataset_field' and rf.old_id = (e.c->>'rightFieldId')::int
      group by r.id)
    insert into dataset_relations (dataset_id, left_object_id, right_object_id, join_type, conditions, position)
    select ds.new_id, lo.new_id, ro.new_id, r.join_type, coalesce(cond.conditions, '[]'::jsonb), r.position
    from dataset_relations r join ds on ds.old_id = r.dataset_id
    join ${COPY_MAP} lo on lo.kind = 'dataset_object' and lo.old_id = r.left_object_id
    join ${COPY_MAP} ro on ro.kind = 'dataset_object' and ro.old_id = r.right_object_id
    left join cond on cond.id = r.id`);
  await tx.execute(sql`with ${COPIED_DATASETS},
    levels as (${remappedFieldIds('dataset_hierarchies', 'field_ids')})
    insert into dataset_hierarchies (dataset_id, name, field_ids, position)
    select ds.new_id, h.name, coalesce(levels.ids, '{}'::int[]), h.position
    from dataset_hierarchies h join ds on ds.old_id = h.dataset_id left join levels on levels.id = h.id`);
  await tx.execute(sql`with ${COPIED_DATASETS}
      insert into dataset_filters (dataset_id, field_id, op, "values", value_type, position)
      select ds.new_id, coalesce(fm.new_id, f.field_id), f.op, f."values", f.value_type, f.position
      from dataset_filters f join ds on ds.old_id = f.dataset_id
      left join ${COPY_MAP} fm on fm.kind = 'dataset_field' and fm.old_id = f.field_id`);
  await tx.execute(sql`with ${COPIED_DATASETS}
      insert into dataset_parameters (dataset_id, name, primitive_type, default_value, domain, "order")
      select ds.new_id, p.name, p.primitive_type, p.default_value, p.domain, p."order"
      from dataset_parameters p join ds on ds.old_id = p.dataset_id`);
}
