import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { MAP, type StagePair } from './map';
import { copyDatasetDependents, mapDatasetChildren } from './dataset-schema';

/*
 * Datasets of a deploy, batched: a fixed number of statements whatever the number of datasets, fields and rules.
 * A created copy gets the whole schema under new ids; an updated copy keeps the ids of the objects and fields that
 * match the original's by name (so that what refers to them in the target stage keeps working) and is otherwise
 * brought to the original's schema: new elements inserted, omitted ones deleted, relations, hierarchies, filters,
 * parameters and RLS/CLS rules written anew on the copied fields. Sources are those of the map (copied before).
 * Only the schema and settings travel: extract data and refresh schedules are not carried (spec rule 6).
 */

export interface DatasetStepResult {
  /** Names of materialised datasets: their copies need a first synchronisation. */
  materialised: string[];
  /** Updated copies that were materialised and are live now: their runs must end and their extracts go. */
  nowLive: number[];
}

export async function deployDatasets(tx: Tx, pair: StagePair, authorId: number): Promise<DatasetStepResult> {
  // Read before the upsert below overwrites `live`: a copy put back on its source as PUT /api/dataset/{id} live: true
  // would be, whose synchronisation under way has to stop like that save's does.
  const nowLive = await tx.execute<{ id: number }>(sql`
    select c.id from ${MAP} m join datasets c on c.id = m.new_id join datasets o on o.id = m.old_id
    where m.kind = 'dataset' and not m.created and not c.live and o.live`);
  // Every save moves the version and the edit time; the copy is a save of its own in the target stage.
  const upserted = await tx.execute<{ name: string; live: boolean }>(sql`
    insert into datasets (id, name, description, workspace_id, author_id, live)
    select m.new_id, o.name, o.description, ${pair.targetWorkspaceId}, ${authorId}, o.live
    from ${MAP} m join datasets o on o.id = m.old_id where m.kind = 'dataset'
    on conflict (id) do update set name = excluded.name, description = excluded.description, live = excluded.live,
      version = datasets.version + 1, updated_at = now()
    returning name, live`);
  await mapDatasetChildren(tx);
  // The map is complete now and joined by every statement below: give the planner its real size.
  await tx.execute(sql`analyze ${MAP}`);
  await clearCopyDependents(tx);
  await upsertSchema(tx);
  await deleteOmitted(tx);
  await copyDatasetDependents(tx);
  return {
    materialised: upserted.rows.filter((r) => !r.live).map((r) => r.name),
    nowLive: nowLive.rows.map((r) => Number(r.id)),
  };
}

const UPDATED_COPIES = sql`(select new_id from ${MAP} where kind = 'dataset' and not created)`;

/** Relations, hierarchies, filters, parameters and security rules of updated copies go; they are written anew. */
async function clearCopyDependents(tx: Tx): Promise<void> {
  await tx.execute(sql`
    with r as (delete from dataset_relations where dataset_id in ${UPDATED_COPIES}),
      h as (delete from dataset_hierarchies where dataset_id in ${UPDATED_COPIES}),
      f as (delete from dataset_filters where dataset_id in ${UPDATED_COPIES}),
      p as (delete from dataset_parameters where dataset_id in ${UPDATED_COPIES}),
      rls as (delete from dataset_rls_rules where dataset_id in ${UPDATED_COPIES})
    delete from dataset_cls_rules where dataset_id in ${UPDATED_COPIES}`);
}

/** Sources, objects and fields of every copy, in foreign-key order (a field's object exists before the field). */
async function upsertSchema(tx: Tx): Promise<void> {
  await tx.execute(sql`
    insert into dataset_sources (dataset_id, data_source_id, position)
    select m.new_id, coalesce(sm.new_id, s.data_source_id), s.position
    from dataset_sources s join ${MAP} m on m.kind = 'dataset' and m.old_id = s.dataset_id
    left join ${MAP} sm on sm.kind = 'data_source' and sm.old_id = s.data_source_id
    on conflict (dataset_id, data_source_id) do update set position = excluded.position`);
  await tx.execute(sql`
    insert into dataset_objects (id, dataset_id, data_source_id, name, kind, "schema", "table", "sql", position)
    select om.new_id, m.new_id, coalesce(sm.new_id, o.data_source_id), o.name, o.kind, o."schema", o."table", o."sql",
      o.position
    from dataset_objects o join ${MAP} m on m.kind = 'dataset' and m.old_id = o.dataset_id
    join ${MAP} om on om.kind = 'dataset_object' and om.old_id = o.id
    left join ${MAP} sm on sm.kind = 'data_source' and sm.old_id = o.data_source_id
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
    from dataset_fields f join ${MAP} m on m.kind = 'dataset' and m.old_id = f.dataset_id
    join ${MAP} fm on fm.kind = 'dataset_field' and fm.old_id = f.id
    left join ${MAP} om on om.kind = 'dataset_object' and om.old_id = f.object_id
    left join ${MAP} dm on dm.kind = 'dataset_field' and jsonb_typeof(f.derivation) = 'object'
      and dm.old_id = (f.derivation->>'fieldId')::int
    left join ${MAP} sm on sm.kind = 'dataset_field' and sm.old_id = f.sort_by_field_id
    on conflict (id) do update set object_id = excluded.object_id, name = excluded.name, title = excluded.title,
      kind = excluded.kind, "column" = excluded."column", formula = excluded.formula,
      derivation = excluded.derivation, primitive_type = excluded.primitive_type,
      aggregation = excluded.aggregation, hidden = excluded.hidden, description = excluded.description,
      sort_by_field_id = excluded.sort_by_field_id, position = excluded.position`);
}

/** What an updated copy has and its original no longer does: fields, then objects, then sources. */
async function deleteOmitted(tx: Tx): Promise<void> {
  await tx.execute(sql`delete from dataset_fields c where c.dataset_id in ${UPDATED_COPIES}
    and not exists (select 1 from ${MAP} fm where fm.kind = 'dataset_field' and fm.new_id = c.id)`);
  await tx.execute(sql`delete from dataset_objects c where c.dataset_id in ${UPDATED_COPIES}
    and not exists (select 1 from ${MAP} om where om.kind = 'dataset_object' and om.new_id = c.id)`);
  await tx.execute(sql`delete from dataset_sources c where c.dataset_id in ${UPDATED_COPIES}
    and not exists (
      select 1 from dataset_sources s join ${MAP} m on m.kind = 'dataset' and m.old_id = s.dataset_id
      left join ${MAP} sm on sm.kind = 'data_source' and sm.old_id = s.data_source_id
      where m.new_id = c.dataset_id and coalesce(sm.new_id, s.data_source_id) = c.data_source_id)`);
}
