import type { Dialect, PrimitiveType } from '../../../adapters/sources';

/**
 * The dataset as the query engine sees it: what `loadDatasetModel` returns and what the compiler takes.
 * The wire shapes (routers/datasets/schemas.ts) are snake_case views of the same things.
 *
 * Vocabulary:
 * - object: a table (or a saved SQL query) of one data source, named so that expressions can say [object.field];
 * - field: physical (a column of an object), calculated (a formula over other fields, object_id empty) or derived
 *   (a calculated field whose formula the platform builds from `derivation`, e.g. the year of a date field);
 * - relation: a join between two objects on field pairs;
 * - hierarchy: an ordered list of fields for drill-down;
 * - filter: a condition applied to every query of the dataset;
 * - parameter: a named value that formulas can read; requests may substitute it once (API only).
 */
export type FieldKind = 'physical' | 'calculated';

export interface DatasetObject {
  id: number;
  dataSourceId: number;
  /** The name used in references: [name.field]. Unique in the dataset. */
  name: string;
  kind: 'table' | 'sql';
  schema: string | null;
  table: string | null;
  /** For kind 'sql': a read-only SELECT written by the dataset's owner (run as a derived table). */
  sql: string | null;
}

export interface Derivation {
  /** The field the derived one is computed from. */
  fieldId: number;
  /** A whitelisted function of the expression language applied to it, e.g. YEAR, MONTH, DATETRUNC. */
  function: string;
  /** Extra literal arguments, e.g. the DATETRUNC unit 'month'. */
  args?: (string | number)[];
}

export interface DatasetField {
  id: number;
  /** Null for calculated (and derived) fields. */
  objectId: number | null;
  /** The name used in references: [object.name] for physical fields, [name] for calculated ones. */
  name: string;
  title: string;
  kind: FieldKind;
  /** Physical fields: the column of the object. */
  column: string | null;
  /** Calculated fields: the expression; derived fields: built from `derivation`. */
  formula: string | null;
  derivation: Derivation | null;
  primitiveType: PrimitiveType;
  /** Default aggregation when the field is put on a measure shelf without one. */
  aggregation: 'none' | 'sum' | 'avg' | 'min' | 'max' | 'count' | 'countd';
  hidden: boolean;
  description: string;
  sortByFieldId: number | null;
}

export interface RelationCondition {
  leftFieldId: number;
  rightFieldId: number;
}

export interface DatasetRelation {
  id: number;
  leftObjectId: number;
  rightObjectId: number;
  joinType: 'inner' | 'left' | 'right' | 'full';
  conditions: RelationCondition[];
}

export interface DatasetHierarchy {
  id: number;
  name: string;
  fieldIds: number[];
}

export interface DatasetFilter {
  id: number;
  fieldId: number;
  op: string;
  values: unknown[];
  valueType: string;
}

export interface ParameterDomain {
  kind: 'any' | 'list' | 'range';
  values?: string[];
  min?: string;
  max?: string;
  step?: string;
}

export interface DatasetParameter {
  id: number;
  name: string;
  /** The type the engine and formulas use; a declared `number` is 'float'. */
  primitiveType: PrimitiveType;
  /** The type as the schema declares it on the wire (the specification's example is `number`). */
  declaredType?: string;
  /** Always a string on the wire, even for numbers (the specification's rule). */
  defaultValue: string;
  domain: ParameterDomain;
  order: number;
}

export interface DatasetModel {
  id: number;
  name: string;
  workspaceId: number;
  live: boolean;
  dataSourceIds: number[];
  /** Increases on every save of the schema or settings: part of the result cache key. */
  version: number;
  updatedAt: Date;
  objects: DatasetObject[];
  fields: DatasetField[];
  relations: DatasetRelation[];
  hierarchies: DatasetHierarchy[];
  filters: DatasetFilter[];
  parameters: DatasetParameter[];
}

/** Where a dataset's queries run: a live source's connector, or the DuckDB extract of a materialised dataset. */
export interface QueryTarget {
  dialect: Dialect;
  /** Identifies the data for the result cache (source id + settings hash, or extract file + load id). */
  dataKey: string;
}
