import type { DatasetRow } from './load-model';
import type { DatasetModel } from '../query/compile/dataset-model';
import type { SchemaView } from './schema-types';

export type DatasetMode = 'live' | 'materialized';
const modeOf = (live: boolean): DatasetMode => (live ? 'live' : 'materialized');

/** The dataset record of lists and of create/update answers. */
export function datasetView(row: DatasetRow, dataSourceIds: number[]) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    workspace_id: row.workspaceId,
    author_id: row.authorId,
    live: row.live,
    /** `live` queries the sources directly; `materialized` queries the extract (the list's `type` filter). */
    type: modeOf(row.live),
    data_source_ids: dataSourceIds,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The six schema blocks on the wire. A calculated field has formula filled in and object_id null. */
function schemaView(
  m: Pick<DatasetModel, 'objects' | 'fields' | 'relations' | 'hierarchies' | 'filters' | 'parameters'>,
): SchemaView {
  return {
    objects: m.objects.map((o) => ({
      id: o.id,
      data_source_id: o.dataSourceId,
      name: o.name,
      kind: o.kind,
      schema: o.schema,
      table: o.table,
      sql: o.sql,
    })),
    fields: m.fields.map((f) => ({
      id: f.id,
      object_id: f.objectId,
      name: f.name,
      title: f.title,
      kind: f.kind,
      column: f.column,
      formula: f.formula,
      derivation: f.derivation
        ? { field_id: f.derivation.fieldId, function: f.derivation.function, args: f.derivation.args ?? [] }
        : null,
      primitive_type: f.primitiveType,
      aggregation: f.aggregation,
      hidden: f.hidden,
      description: f.description,
      sort_by_field_id: f.sortByFieldId,
    })),
    relations: m.relations.map((r) => ({
      id: r.id,
      left_object_id: r.leftObjectId,
      right_object_id: r.rightObjectId,
      join_type: r.joinType,
      conditions: r.conditions.map((c) => ({ left_field_id: c.leftFieldId, right_field_id: c.rightFieldId })),
    })),
    hierarchies: m.hierarchies.map((h) => ({ id: h.id, name: h.name, field_ids: h.fieldIds })),
    filters: m.filters.map((f) => ({
      id: f.id,
      field_id: f.fieldId,
      op: f.op,
      values: f.values,
      value_type: f.valueType,
    })),
    parameters: m.parameters.map((p) => ({
      id: p.id,
      name: p.name,
      primitive_type: p.declaredType ?? p.primitiveType,
      default_value: p.defaultValue,
      domain: p.domain,
      order: p.order,
    })),
  };
}

export function datasetDetails(row: DatasetRow, model: DatasetModel) {
  return { ...datasetView(row, model.dataSourceIds), ...schemaView(model) };
}

/**
 * The schema as a reader who does not manage the dataset's rules sees it: the fields their column rules hide (and the
 * calculated fields reading them) are left out, like everything else that would name them or show their values:
 * hierarchy levels, the dataset's own filters on them (their values are the field's values), sort_by_field_id.
 * Relations keep their conditions: they join objects, and show no value.
 */
export function withoutHiddenFields(model: DatasetModel, hidden: Set<number>): DatasetModel {
  if (hidden.size === 0) return model;
  const shown = (id: number) => !hidden.has(id);
  return {
    ...model,
    fields: model.fields
      .filter((f) => shown(f.id))
      .map((f) => (f.sortByFieldId !== null && !shown(f.sortByFieldId) ? { ...f, sortByFieldId: null } : f)),
    hierarchies: model.hierarchies
      .map((h) => ({ ...h, fieldIds: h.fieldIds.filter(shown) }))
      .filter((h) => h.fieldIds.length > 0),
    filters: model.filters.filter((f) => shown(f.fieldId)),
  };
}
