import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { MAP } from './map';

/*
 * The map of a dataset's schema elements that others refer to by id (objects and fields: relations, filters,
 * hierarchies, RLS/CLS rules, dashboard selectors). An updated copy's element matching the original's by name keeps
 * its id: an object by its name, a physical field by its object's name and its own, a calculated field by its name
 * (names are unique there, case aside, as the schema validation keeps them). Anything else gets an id drawn from the
 * table's sequence.
 */
export async function mapDatasetChildren(tx: Tx): Promise<void> {
  await tx.execute(sql`
    insert into ${MAP} (kind, old_id, new_id, created)
    select 'dataset_object', o.id, coalesce(c.id, nextval(pg_get_serial_sequence('dataset_objects', 'id'))::int),
      c.id is null
    from dataset_objects o join ${MAP} m on m.kind = 'dataset' and m.old_id = o.dataset_id
    left join lateral (
      select c.id from dataset_objects c
      where not m.created and c.dataset_id = m.new_id and lower(c.name) = lower(o.name)
      order by c.id limit 1
    ) c on true`);
  await tx.execute(sql`
    insert into ${MAP} (kind, old_id, new_id, created)
    select 'dataset_field', f.id, coalesce(c.id, nextval(pg_get_serial_sequence('dataset_fields', 'id'))::int),
      c.id is null
    from dataset_fields f join ${MAP} m on m.kind = 'dataset' and m.old_id = f.dataset_id
    left join dataset_objects fo on fo.id = f.object_id
    left join lateral (
      select c.id from dataset_fields c left join dataset_objects co on co.id = c.object_id
      where not m.created and c.dataset_id = m.new_id and c.kind = f.kind and lower(c.name) = lower(f.name)
        and lower(coalesce(co.name, '')) = lower(coalesce(fo.name, ''))
      order by c.id limit 1
    ) c on true`);
}

/**
 * SQL: `id -> remapped` rows of a table's int[] column of field ids, each id the map knows replaced by its copy's, in
 * order. One set-based join (hashed once), not a subquery per row: the planner cannot estimate a correlated one.
 */
const remappedFieldIds = (table: string, column: string) => sql`
  select x.id, array_agg(coalesce(fm.new_id, u.f) order by u.n) as ids
  from ${sql.raw(table)} x join ds on ds.old_id = x.dataset_id
  cross join lateral unnest(x.${sql.raw(column)}) with ordinality u(f, n)
  left join ${MAP} fm on fm.kind = 'dataset_field' and fm.old_id = u.f
  group by x.id`;

/**
 * Relations, hierarchies (a level on a calculated field too: it is a field like any other here), filters,
 * parameters and row- and column-level security rules of every copy, on the copied objects and fields, one
 * statement per table. The security rules travel so that a copy never shows what the original hides (fail closed).
 */
export async function copyDatasetDependents(tx: Tx): Promise<void> {
  await tx.execute(sql`with ds as (select old_id, new_id from ${MAP} where kind = 'dataset'),
    cond as (
      select r.id, jsonb_agg(e.c || jsonb_build_object(
          'leftFieldId', coalesce(lf.new_id, (e.c->>'leftFieldId')::int),
          'rightFieldId', coalesce(rf.new_id, (e.c->>'rightFieldId')::int)) order by e.n) as conditions
      from dataset_relations r join ds on ds.old_id = r.dataset_id
      cross join lateral jsonb_array_elements(r.conditions) with ordinality e(c, n)
      left join ${MAP} lf on lf.kind = 'dataset_field' and lf.old_id = (e.c->>'leftFieldId')::int
      left join ${MAP} rf on rf.kind = 'dataset_field' and rf.old_id = (e.c->>'rightFieldId')::int
      group by r.id)
    insert into dataset_relations (dataset_id, left_object_id, right_object_id, join_type, conditions, position)
    select ds.new_id, lo.new_id, ro.new_id, r.join_type, coalesce(cond.conditions, '[]'::jsonb), r.position
    from dataset_relations r join ds on ds.old_id = r.dataset_id
    join ${MAP} lo on lo.kind = 'dataset_object' and lo.old_id = r.left_object_id
    join ${MAP} ro on ro.kind = 'dataset_object' and ro.old_id = r.right_object_id
    left join cond on cond.id = r.id`);
  await tx.execute(sql`with ds as (select old_id, new_id from ${MAP} where kind = 'dataset'),
    levels as (${remappedFieldIds('dataset_hierarchies', 'field_ids')})
    insert into dataset_hierarchies (dataset_id, name, field_ids, position)
    select ds.new_id, h.name, coalesce(levels.ids, '{}'::int[]), h.position
    from dataset_hierarchies h join ds on ds.old_id = h.dataset_id left join levels on levels.id = h.id`);
  await tx.execute(sql`with ds as (select old_id, new_id from ${MAP} where kind = 'dataset')
      insert into dataset_filters (dataset_id, field_id, op, "values", value_type, position)
      select ds.new_id, coalesce(fm.new_id, f.field_id), f.op, f."values", f.value_type, f.position
      from dataset_filters f join ds on ds.old_id = f.dataset_id
      left join ${MAP} fm on fm.kind = 'dataset_field' and fm.old_id = f.field_id`);
  await tx.execute(sql`with ds as (select old_id, new_id from ${MAP} where kind = 'dataset')
      insert into dataset_parameters (dataset_id, name, primitive_type, default_value, domain, "order")
      select ds.new_id, p.name, p.primitive_type, p.default_value, p.domain, p."order"
      from dataset_parameters p join ds on ds.old_id = p.dataset_id`);
  await tx.execute(sql`with ds as (select old_id, new_id from ${MAP} where kind = 'dataset')
      insert into dataset_rls_rules (dataset_id, field_id, attribute, operator, user_ids, group_ids)
      select ds.new_id, coalesce(fm.new_id, r.field_id), r.attribute, r.operator, r.user_ids, r.group_ids
      from dataset_rls_rules r join ds on ds.old_id = r.dataset_id
      left join ${MAP} fm on fm.kind = 'dataset_field' and fm.old_id = r.field_id`);
  await tx.execute(sql`with ds as (select old_id, new_id from ${MAP} where kind = 'dataset'),
    named as (${remappedFieldIds('dataset_cls_rules', 'field_ids')})
    insert into dataset_cls_rules (dataset_id, field_ids, action, user_ids, group_ids)
    select ds.new_id, coalesce(named.ids, '{}'::int[]), c.action, c.user_ids, c.group_ids
    from dataset_cls_rules c join ds on ds.old_id = c.dataset_id left join named on named.id = c.id`);
}
