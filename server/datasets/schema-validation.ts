import type { FieldErrors } from '../kernel/errors';
import { ExpressionError, FILTER_VALUE_TYPES, type FilterValueType } from '../query/expr';
import { filterValueLiteral } from '../query/expr/filter-values';
import { formatFieldPath } from '../kernel/validation';
import {
  analyzeCalculated,
  calcRefText,
  columnRefText,
  derivationFunctionProblem,
  derivedFormula,
  type FormulaEnv,
} from './formulas';
import { MSG } from './messages';
import { resolveParameters, type ResolvedParameter } from './parameters';
import { blank, checkName, lower, type Fail, type Path } from './schema-paths';
import type {
  DatasetField,
  DatasetFilter,
  DatasetHierarchy,
  DatasetObject,
  DatasetRelation,
  FieldKind,
} from '../query/compile/dataset-model';
import type { FieldInput, SchemaInput } from './schema-types';

/*
 * The whole-schema rules of PUT /api/dataset/{id}/schema (and of /schema/validate): ids, references, kinds, names,
 * formulas. Pure: it reads the saved ids it is given and returns either every problem at once, keyed by the
 * element's path (`fields[2].formula`), or the schema resolved for writing (ids still as sent: negative for new).
 */

/** Ids the dataset has now, per block; fields with their kind (a field cannot change kind). */
export interface SavedIds {
  objects: Set<number>;
  fields: Map<number, FieldKind>;
  relations: Set<number>;
  hierarchies: Set<number>;
  filters: Set<number>;
  parameters: Set<number>;
}

export const emptySavedIds = (): SavedIds => ({
  objects: new Set(),
  fields: new Map(),
  relations: new Set(),
  hierarchies: new Set(),
  filters: new Set(),
  parameters: new Set(),
});

/** The model's shapes, with ids as sent; parameters keep the type as sent (`number`). */
export interface ResolvedSchema {
  objects: DatasetObject[];
  fields: DatasetField[];
  relations: DatasetRelation[];
  hierarchies: DatasetHierarchy[];
  filters: DatasetFilter[];
  parameters: ResolvedParameter[];
}

export type Resolution = { ok: true; schema: ResolvedSchema } | { ok: false; errors: FieldErrors };

export function resolveSchema(input: SchemaInput, saved: SavedIds, dataSourceIds: readonly number[]): Resolution {
  const errors: FieldErrors = {};
  const fail = (path: Path, message: string) => {
    errors[formatFieldPath(path)] ??= message;
  };

  /** Ids of one block: saved ones must exist, none may repeat. Returns the ids that are usable. */
  const checkIds = (block: keyof SavedIds, items: { id: number }[], missing: (id: number) => string): Set<number> => {
    const known = saved[block];
    const seen = new Set<number>();
    items.forEach((item, i) => {
      if (seen.has(item.id)) fail([block, i, 'id'], MSG.duplicateId(item.id));
      else if (item.id > 0 && !known.has(item.id)) fail([block, i, 'id'], missing(item.id));
      seen.add(item.id);
    });
    return seen;
  };

  const objectIds = checkIds('objects', input.objects, MSG.objectNotFound);
  const fieldIds = checkIds('fields', input.fields, MSG.fieldNotFound);
  checkIds('relations', input.relations, MSG.relationNotFound);
  checkIds('hierarchies', input.hierarchies, MSG.hierarchyNotFound);
  checkIds('filters', input.filters, MSG.filterNotFound);
  checkIds('parameters', input.parameters, MSG.parameterNotFound);

  const objects = resolveObjects(input, dataSourceIds, fail);
  const fields = resolveFields(input, saved, objectIds, fieldIds, fail);
  const relations = resolveRelations(input, objectIds, fieldIds, fields, fail);
  const hierarchies = resolveHierarchies(input, fieldIds, fail);
  const filters = resolveFilters(input, fieldIds, fail);
  const parameters = resolveParameters(input, fields, fail);
  checkFormulas(input, objects, fields, parameters, fail);

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, schema: { objects, fields, relations, hierarchies, filters, parameters } };
}

// A read-only query: one statement that starts with SELECT or WITH (a trailing semicolon is dropped).
export function normalizeObjectSql(sql: string): string | null {
  const text = sql.trim().replace(/;\s*$/, '').trim();
  if (!/^(select|with)\b/i.test(text) || text.includes(';')) return null;
  return text;
}

function resolveObjects(input: SchemaInput, dataSourceIds: readonly number[], fail: Fail): DatasetObject[] {
  const names = new Set<string>();
  return input.objects.map((o, i) => {
    const kind = o.kind ?? 'table';
    if (!dataSourceIds.includes(o.data_source_id))
      fail(['objects', i, 'data_source_id'], MSG.sourceNotInDataset(o.data_source_id));
    let sql: string | null = null;
    if (kind === 'table') {
      if (blank(o.table)) fail(['objects', i, 'table'], 'must not be blank');
    } else if (blank(o.sql)) {
      fail(['objects', i, 'sql'], 'must not be blank');
    } else {
      sql = normalizeObjectSql(o.sql);
      if (sql === null) fail(['objects', i, 'sql'], MSG.sqlObject);
    }
    const name = (blank(o.name) ? (kind === 'table' ? o.table : null) : o.name)?.trim() ?? '';
    if (name === '') fail(['objects', i, 'name'], 'must not be blank');
    else {
      checkName(name, ['objects', i, 'name'], fail);
      if (names.has(lower(name))) fail(['objects', i, 'name'], MSG.duplicateName);
      names.add(lower(name));
    }
    return {
      id: o.id,
      dataSourceId: o.data_source_id,
      name,
      kind,
      schema: kind === 'table' && !blank(o.schema) ? o.schema.trim() : null,
      table: kind === 'table' ? (o.table?.trim() ?? null) : null,
      sql,
    };
  });
}

const kindOf = (f: FieldInput): FieldKind =>
  f.kind ??
  ((f.formula !== undefined && f.formula !== null) || (f.derivation !== undefined && f.derivation !== null)
    ? 'calculated'
    : 'physical');

function resolveFields(
  input: SchemaInput,
  saved: SavedIds,
  objectIds: Set<number>,
  fieldIds: Set<number>,
  fail: Fail,
): DatasetField[] {
  const physicalNames = new Set<string>();
  const calculatedNames = new Set<string>();
  return input.fields.map((f, i) => {
    const at = (key: string): Path => ['fields', i, key];
    const kind = kindOf(f);
    const savedKind = f.id > 0 ? saved.fields.get(f.id) : undefined;
    if (savedKind && savedKind !== kind) fail(at('kind'), MSG.kindChange);

    let objectId: number | null = null;
    let column: string | null = null;
    let formula: string | null = null;
    let derivation: DatasetField['derivation'] = null;
    if (kind === 'physical') {
      if (f.object_id === undefined || f.object_id === null) fail(at('object_id'), 'must not be null');
      else if (!objectIds.has(f.object_id)) fail(at('object_id'), MSG.objectNotFound(f.object_id));
      else objectId = f.object_id;
      if (blank(f.column)) fail(at('column'), 'must not be blank');
      else column = f.column.trim();
      if (f.formula !== undefined && f.formula !== null) fail(at('formula'), MSG.notForPhysical('formula'));
      if (f.derivation !== undefined && f.derivation !== null) fail(at('derivation'), MSG.notForPhysical('derivation'));
    } else {
      if (f.object_id !== undefined && f.object_id !== null) fail(at('object_id'), MSG.notForCalculated('object_id'));
      if (f.column !== undefined && f.column !== null) fail(at('column'), MSG.notForCalculated('column'));
      if (f.derivation) {
        if (f.formula !== undefined && f.formula !== null) fail(at('formula'), MSG.derivedFormula);
        const d = f.derivation;
        if (!fieldIds.has(d.field_id)) fail(['fields', i, 'derivation', 'field_id'], MSG.fieldNotFound(d.field_id));
        const problem = derivationFunctionProblem(d.function);
        if (problem)
          fail(
            ['fields', i, 'derivation', 'function'],
            problem === 'unknown' ? MSG.unknownFunction(d.function) : MSG.aggregateDerivation(d.function.toUpperCase()),
          );
        derivation = {
          fieldId: d.field_id,
          function: d.function.toUpperCase(),
          ...(d.args?.length ? { args: d.args } : {}),
        };
      } else if (blank(f.formula)) {
        fail(at('formula'), 'must not be blank');
      } else {
        formula = f.formula.trim();
      }
    }

    const name = (blank(f.name) ? (kind === 'physical' ? column : null) : f.name.trim()) ?? '';
    if (name === '') fail(at('name'), 'must not be blank');
    else if (kind === 'physical') {
      if (/[\r\n]/.test(name)) fail(at('name'), MSG.nameWithLineBreak);
      const key = `${objectId}\u0000${lower(name)}`;
      if (objectId !== null && physicalNames.has(key)) fail(at('name'), MSG.duplicateName);
      physicalNames.add(key);
    } else {
      checkName(name, at('name'), fail);
      if (calculatedNames.has(lower(name))) fail(at('name'), MSG.duplicateName);
      calculatedNames.add(lower(name));
    }
    if (f.sort_by_field_id !== undefined && f.sort_by_field_id !== null && !fieldIds.has(f.sort_by_field_id)) {
      fail(at('sort_by_field_id'), MSG.fieldNotFound(f.sort_by_field_id));
    }
    return {
      id: f.id,
      objectId,
      name,
      title: blank(f.title) ? name : f.title.trim(),
      kind,
      column,
      formula,
      derivation,
      primitiveType: f.primitive_type ?? 'unknown',
      aggregation: f.aggregation ?? 'none',
      hidden: f.hidden ?? false,
      description: f.description ?? '',
      sortByFieldId: f.sort_by_field_id ?? null,
    };
  });
}

/**
 * Builds derived formulas and checks every calculated formula; fills in the inferred types. A field whose
 * structure is already wrong is still offered to the others by name, so they are not reported as unknown.
 */
function checkFormulas(
  input: SchemaInput,
  objects: DatasetObject[],
  fields: DatasetField[],
  parameters: ResolvedSchema['parameters'],
  fail: Fail,
): void {
  const objectName = new Map(objects.map((o) => [o.id, o.name]));
  const byId = new Map(fields.map((f) => [f.id, f]));
  const env: FormulaEnv = { columns: new Map(), calculated: new Map(), parameters: new Map() };
  for (const p of parameters) env.parameters.set(p.name, p.primitiveType);
  for (const f of fields) {
    if (f.kind !== 'physical' || f.objectId === null || f.name === '') continue;
    const object = objectName.get(f.objectId);
    if (object === undefined || object === '') continue;
    if (!env.columns.has(object)) env.columns.set(object, new Map());
    // A repeated name is reported on its field; the first one stays the target of references.
    const columns = env.columns.get(object)!;
    if (!columns.has(f.name)) columns.set(f.name, f.primitiveType);
  }
  const refOf = (f: DatasetField) =>
    f.kind === 'physical' ? columnRefText(objectName.get(f.objectId!) ?? '', f.name) : calcRefText(f.name);
  for (const f of fields) {
    if (f.kind !== 'calculated' || f.name === '') continue;
    if (f.derivation) {
      const base = byId.get(f.derivation.fieldId);
      if (!base || base.name === '' || derivationFunctionProblem(f.derivation.function)) continue;
      f.formula = derivedFormula(refOf(base), f.derivation.function, f.derivation.args);
    }
    if (f.formula !== null) env.calculated.set(f.name, { name: f.name, formula: f.formula });
  }
  const results = analyzeCalculated(env);
  fields.forEach((f, i) => {
    if (f.kind !== 'calculated' || f.name === '') return;
    const r = results.get(f.name);
    if (!r) return;
    if (r.ok) {
      if (r.type !== 'unknown' || f.primitiveType === 'unknown') f.primitiveType = r.type;
      return;
    }
    // A derived field's formula is ours, not the user's: a position in it would point at nothing they wrote.
    if (input.fields[i].derivation) fail(['fields', i, 'derivation'], new ExpressionError(r.error.detail).message);
    else fail(['fields', i, 'formula'], r.error.message);
  });
}

function resolveRelations(
  input: SchemaInput,
  objectIds: Set<number>,
  fieldIds: Set<number>,
  fields: DatasetField[],
  fail: Fail,
): DatasetRelation[] {
  const objectOfField = new Map(fields.map((f) => [f.id, f.kind === 'physical' ? f.objectId : null]));
  return input.relations.map((r, i) => {
    const at = (...rest: Path): Path => ['relations', i, ...rest];
    if (!objectIds.has(r.left_object_id)) fail(at('left_object_id'), MSG.objectNotFound(r.left_object_id));
    if (!objectIds.has(r.right_object_id)) fail(at('right_object_id'), MSG.objectNotFound(r.right_object_id));
    else if (r.left_object_id === r.right_object_id) fail(at('right_object_id'), MSG.sameObjects);
    r.conditions.forEach((c, j) => {
      for (const [key, fieldId, objectId] of [
        ['left_field_id', c.left_field_id, r.left_object_id],
        ['right_field_id', c.right_field_id, r.right_object_id],
      ] as const) {
        if (!fieldIds.has(fieldId)) fail(at('conditions', j, key), MSG.fieldNotFound(fieldId));
        else if (objectOfField.get(fieldId) !== objectId) fail(at('conditions', j, key), MSG.fieldNotOfObject(fieldId));
      }
    });
    return {
      id: r.id,
      leftObjectId: r.left_object_id,
      rightObjectId: r.right_object_id,
      joinType: r.join_type ?? 'left',
      conditions: r.conditions.map((c) => ({ leftFieldId: c.left_field_id, rightFieldId: c.right_field_id })),
    };
  });
}

function resolveHierarchies(input: SchemaInput, fieldIds: Set<number>, fail: Fail): DatasetHierarchy[] {
  return input.hierarchies.map((h, i) => {
    const seen = new Set<number>();
    h.field_ids.forEach((id, j) => {
      if (!fieldIds.has(id)) fail(['hierarchies', i, 'field_ids', j], MSG.fieldNotFound(id));
      else if (seen.has(id)) fail(['hierarchies', i, 'field_ids', j], MSG.duplicateLevel(id));
      seen.add(id);
    });
    return { id: h.id, name: h.name.trim(), fieldIds: [...h.field_ids] };
  });
}

const VALUE_COUNT: Record<string, number | undefined> = {
  between: 2,
  eq: 1,
  ne: 1,
  gt: 1,
  gte: 1,
  lt: 1,
  lte: 1,
  contains: 1,
  starts_with: 1,
  is_null: 0,
  is_not_null: 0,
};

function resolveFilters(input: SchemaInput, fieldIds: Set<number>, fail: Fail): DatasetFilter[] {
  return input.filters.map((f, i) => {
    if (!fieldIds.has(f.field_id)) fail(['filters', i, 'field_id'], MSG.fieldNotFound(f.field_id));
    const values = f.values ?? [];
    const valueType = (f.value_type ?? 'string') as FilterValueType;
    const expected = VALUE_COUNT[f.op];
    if (expected !== undefined && values.length !== expected) {
      fail(['filters', i, 'values'], `size must be ${expected}`);
    }
    if ((FILTER_VALUE_TYPES as readonly string[]).includes(valueType)) {
      values.forEach((v, k) => {
        try {
          filterValueLiteral(v, valueType, k);
        } catch (e) {
          if (!(e instanceof ExpressionError)) throw e;
          fail(['filters', i, 'values', k], e.message);
        }
      });
    }
    return { id: f.id, fieldId: f.field_id, op: f.op, values, valueType };
  });
}
