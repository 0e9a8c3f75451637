import type { PrimitiveType } from '../../adapters/sources';
import type { DatasetField, DatasetRelation, ParameterDomain } from '../query/compile/dataset-model';

/*
 * The dataset schema as it travels (snake_case, the wire contract): the body of PUT /api/dataset/{id}/schema and of
 * /schema/validate after zod has checked its shape, and the blocks of GET /api/dataset/{id}. Ids are positive for
 * saved elements and negative temporaries for new ones; references to a new element use its temporary id.
 *
 * server/ does not import the routers' zod schemas, so these interfaces repeat them; routers/datasets/schemas.ts
 * checks at compile time that each one says exactly what its schema says (a filter's op and value_type excepted:
 * they stay text here, see there), so a change to one side that is not made to the other fails `tsc`.
 */

export const FIELD_KINDS = ['physical', 'calculated'] as const;
export const OBJECT_KINDS = ['table', 'sql'] as const;
export const JOIN_TYPES = ['inner', 'left', 'right', 'full'] as const satisfies readonly DatasetRelation['joinType'][];
export const AGGREGATIONS = [
  'none',
  'sum',
  'avg',
  'min',
  'max',
  'count',
  'countd',
] as const satisfies readonly DatasetField['aggregation'][];
export const FIELD_TYPES = [
  'string',
  'integer',
  'float',
  'boolean',
  'date',
  'datetime',
  'unknown',
] as const satisfies readonly PrimitiveType[];
/** Parameters also take `number` (the specification's example value): a number the engine reads as float. */
export const PARAMETER_TYPES = ['number', 'string', 'integer', 'float', 'boolean', 'date', 'datetime'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];
export const DOMAIN_KINDS = ['any', 'list', 'range'] as const;

interface ObjectInput {
  id: number;
  data_source_id: number;
  name?: string | null;
  kind?: 'table' | 'sql';
  schema?: string | null;
  table?: string | null;
  sql?: string | null;
}

interface DerivationInput {
  field_id: number;
  function: string;
  args?: (string | number)[];
}

export interface FieldInput {
  id: number;
  object_id?: number | null;
  name?: string | null;
  title?: string | null;
  kind?: 'physical' | 'calculated';
  column?: string | null;
  formula?: string | null;
  derivation?: DerivationInput | null;
  primitive_type?: PrimitiveType | null;
  aggregation?: DatasetField['aggregation'];
  hidden?: boolean;
  description?: string | null;
  sort_by_field_id?: number | null;
}

interface RelationInput {
  id: number;
  left_object_id: number;
  right_object_id: number;
  join_type?: DatasetRelation['joinType'];
  conditions: { left_field_id: number; right_field_id: number }[];
}

interface HierarchyInput {
  id: number;
  name: string;
  field_ids: number[];
}

interface FilterInput {
  id: number;
  field_id: number;
  op: string;
  values?: unknown[] | null;
  value_type?: string | null;
}

interface ParameterInput {
  id: number;
  name: string;
  primitive_type: ParameterType;
  default_value?: string | null;
  domain?: ParameterDomain | null;
  order?: number | null;
}

export interface SchemaInput {
  objects: ObjectInput[];
  fields: FieldInput[];
  relations: RelationInput[];
  hierarchies: HierarchyInput[];
  filters: FilterInput[];
  parameters: ParameterInput[];
}

/** The six blocks as GET and the schema save return them: real ids, every key present. */
export interface SchemaView {
  objects: {
    id: number;
    data_source_id: number;
    name: string;
    kind: 'table' | 'sql';
    schema: string | null;
    table: string | null;
    sql: string | null;
  }[];
  fields: {
    id: number;
    object_id: number | null;
    name: string;
    title: string;
    kind: 'physical' | 'calculated';
    column: string | null;
    formula: string | null;
    derivation: { field_id: number; function: string; args: (string | number)[] } | null;
    primitive_type: PrimitiveType;
    aggregation: DatasetField['aggregation'];
    hidden: boolean;
    description: string;
    sort_by_field_id: number | null;
  }[];
  relations: {
    id: number;
    left_object_id: number;
    right_object_id: number;
    join_type: DatasetRelation['joinType'];
    conditions: { left_field_id: number; right_field_id: number }[];
  }[];
  hierarchies: { id: number; name: string; field_ids: number[] }[];
  filters: { id: number; field_id: number; op: string; values: unknown[]; value_type: string }[];
  parameters: {
    id: number;
    name: string;
    primitive_type: string;
    default_value: string;
    domain: ParameterDomain;
    order: number;
  }[];
}
