import { z } from 'zod';
import { MAX_EXPRESSION_LENGTH } from '../../server/query/expr';
import { FILTER_OPS, FILTER_VALUE_TYPES } from '../../server/query/expr';
import { DATASET_SORT_FIELDS, type CreateDatasetInput, type UpdateDatasetInput } from '../../server/datasets/datasets';
import type { SuggestInput } from '../../server/datasets/relation-suggest';
import { MSG } from '../../server/datasets/messages';
import {
  AGGREGATIONS,
  DOMAIN_KINDS,
  FIELD_KINDS,
  FIELD_TYPES,
  JOIN_TYPES,
  OBJECT_KINDS,
  PARAMETER_TYPES,
  type FieldInput,
  type SchemaInput,
  type SchemaView,
} from '../../server/datasets/schema-types';
import {
  entityId,
  int4,
  nonBlank,
  pageSchema,
  stdListQuery,
  wireJson,
  wireString,
  type Accepts,
  type Mirrors,
} from '../common';

const id = entityId();

// ---- dataset record ----

const datasetView = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  workspace_id: z.number().int(),
  author_id: z.number().int().nullable(),
  live: z.boolean(),
  type: z.enum(['live', 'materialized']).describe('live: queries go to the sources; materialized: to the extract'),
  data_source_ids: z.array(z.number().int()),
  version: z.number().int().describe('Increases with every save of the dataset'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const listDatasetsInput = z.strictObject(
  stdListQuery(DATASET_SORT_FIELDS, z.enum(['live', 'materialized']).describe('live or materialized (extract)')),
);
export const listDatasetsOutput = pageSchema(datasetView);

const description = wireString().trim().max(2000);
const sourceIds = z.array(id).max(100);

export const createDatasetInput = z.strictObject({
  name: nonBlank(200),
  description: description.optional(),
  workspace_id: id.optional().describe("Default: the caller's personal workspace"),
  live: z.boolean().optional().describe('Default true'),
  data_source_ids: sourceIds.optional(),
});

export const updateDatasetInput = z.strictObject({
  id,
  name: nonBlank(200).optional(),
  description: description.optional(),
  live: z.boolean().optional(),
  data_source_ids: sourceIds.optional(),
});

export const copyDatasetInput = z.strictObject({ id, name: nonBlank(200).optional(), workspace_id: id.optional() });

// ---- schema ----

/** Saved elements carry their id; new ones a negative temporary id that other elements use to refer to them. */
const elementId = z
  .number({ error: (iss) => (iss.input === undefined || iss.input === null ? MSG.idRequired : undefined) })
  .int()
  .min(-2_147_483_648)
  .max(2_147_483_647)
  .refine((v) => v !== 0, { error: MSG.idRequired })
  .describe('Saved id, or a negative temporary id for a new element');
const ref = int4().describe('Id of a saved element or the temporary id of a new one');
const text = (max = 255) => wireString().max(max).nullish();

const objectElement = z.strictObject({
  id: elementId,
  data_source_id: id,
  name: text().describe('Used in references [name.field]; default: the table name'),
  kind: z.enum(OBJECT_KINDS).optional().describe('table (default) or sql'),
  schema: text(),
  table: text(),
  sql: text(100_000).describe('kind sql: one read-only SELECT'),
});

/** A field's type as sent: `number` too (parameters take it, so a client sends it for fields alike), kept as float. */
const fieldTypeInput = z.enum([...FIELD_TYPES, 'number']).transform((t) => (t === 'number' ? 'float' : t));

const fieldElement = z.strictObject({
  id: elementId,
  object_id: ref.nullish().describe('Physical fields: the object; empty for calculated fields'),
  name: text().describe('Physical: default the column; calculated: referenced as [name]'),
  title: text(),
  kind: z.enum(FIELD_KINDS).optional().describe('Default: calculated when formula or derivation is given'),
  column: text(),
  formula: wireString()
    .max(MAX_EXPRESSION_LENGTH)
    .nullish()
    .describe('Calculated fields; not accepted with derivation'),
  derivation: z
    .strictObject({
      field_id: ref,
      function: nonBlank(50),
      args: z
        .array(z.union([wireString().max(100), z.number()]))
        .max(5)
        .optional(),
    })
    .nullish()
    .describe('Derived fields: formula is built from it, e.g. YEAR([orders.created_at])'),
  primitive_type: fieldTypeInput
    .nullish()
    .describe(
      "Physical: the column type; calculated: inferred from the formula. Also number, the specification's word for a parameter's numbers: a field saved with number is stored and answered as float",
    ),
  aggregation: z.enum(AGGREGATIONS).optional(),
  hidden: z.boolean().optional(),
  description: wireString().max(2000).nullish(),
  sort_by_field_id: ref.nullish(),
});

const relationElement = z.strictObject({
  id: elementId,
  left_object_id: ref,
  right_object_id: ref,
  join_type: z.enum(JOIN_TYPES).optional().describe('Default left'),
  conditions: z
    .array(z.strictObject({ left_field_id: ref, right_field_id: ref }))
    .min(1)
    .max(20),
});

const hierarchyElement = z.strictObject({ id: elementId, name: nonBlank(200), field_ids: z.array(ref).min(1).max(20) });

const filterElement = z.strictObject({
  id: elementId,
  field_id: ref,
  op: z.enum(FILTER_OPS),
  values: z.array(wireJson()).max(1000).nullish(),
  value_type: z.enum(FILTER_VALUE_TYPES).nullish().describe('Default string'),
});

const paramValue = wireString().max(1000);
const parameterElement = z.strictObject({
  id: elementId,
  name: nonBlank(200),
  primitive_type: nonBlank(20).pipe(z.enum(PARAMETER_TYPES)).describe('Required; e.g. number'),
  default_value: paramValue.nullish().describe('Always a string, even for numbers'),
  domain: z
    .strictObject({
      kind: z.enum(DOMAIN_KINDS),
      values: z.array(paramValue).max(1000).optional(),
      min: paramValue.optional(),
      max: paramValue.optional(),
      step: paramValue.optional(),
    })
    .nullish(),
  order: int4().nullish(),
});

const schemaBlocks = {
  objects: z.array(objectElement).max(200),
  fields: z.array(fieldElement).max(5000),
  relations: z.array(relationElement).max(500),
  hierarchies: z.array(hierarchyElement).max(200),
  filters: z.array(filterElement).max(500),
  parameters: z.array(parameterElement).max(200),
};
export const schemaInput = z.strictObject({ id, ...schemaBlocks });

const objectView = z.object({
  id: z.number().int(),
  data_source_id: z.number().int(),
  name: z.string(),
  kind: z.enum(OBJECT_KINDS),
  schema: z.string().nullable(),
  table: z.string().nullable(),
  sql: z.string().nullable(),
});
const fieldView = z.object({
  id: z.number().int(),
  object_id: z.number().int().nullable().describe('Empty for calculated fields'),
  name: z.string(),
  title: z.string(),
  kind: z.enum(FIELD_KINDS),
  column: z.string().nullable(),
  formula: z.string().nullable().describe('Filled for calculated fields (built from derivation for derived ones)'),
  derivation: z
    .object({ field_id: z.number().int(), function: z.string(), args: z.array(z.union([z.string(), z.number()])) })
    .nullable(),
  primitive_type: z.enum(FIELD_TYPES),
  aggregation: z.enum(AGGREGATIONS),
  hidden: z.boolean(),
  description: z.string(),
  sort_by_field_id: z.number().int().nullable(),
});
const relationView = z.object({
  id: z.number().int(),
  left_object_id: z.number().int(),
  right_object_id: z.number().int(),
  join_type: z.enum(JOIN_TYPES),
  conditions: z.array(z.object({ left_field_id: z.number().int(), right_field_id: z.number().int() })),
});
const parameterView = z.object({
  id: z.number().int(),
  name: z.string(),
  primitive_type: z.string(),
  default_value: z.string(),
  domain: z.object({
    kind: z.enum(DOMAIN_KINDS),
    values: z.array(z.string()).optional(),
    min: z.string().optional(),
    max: z.string().optional(),
    step: z.string().optional(),
  }),
  order: z.number().int(),
});

export const datasetDetails = datasetView.extend({
  objects: z.array(objectView),
  fields: z.array(fieldView),
  relations: z.array(relationView),
  hierarchies: z.array(z.object({ id: z.number().int(), name: z.string(), field_ids: z.array(z.number().int()) })),
  filters: z.array(
    z.object({
      id: z.number().int(),
      field_id: z.number().int(),
      op: z.string(),
      values: z.array(z.unknown()),
      value_type: z.string(),
    }),
  ),
  parameters: z.array(parameterView),
});

/*
 * The server keeps its own interfaces for the schema it takes and answers (server/datasets/schema-types.ts: server/
 * never imports routers/). They must say exactly what these schemas say, so each pair is checked with `Mirrors`.
 */
type SchemaBody = Omit<z.output<typeof schemaInput>, 'id'>;
type ObjectInput = SchemaInput['objects'][number];
type RelationInput = SchemaInput['relations'][number];
type HierarchyInput = SchemaInput['hierarchies'][number];
type FilterInput = SchemaInput['filters'][number];
type ParameterInput = SchemaInput['parameters'][number];
type SavedBlocks = Pick<z.output<typeof datasetDetails>, keyof SchemaView>;

// PUT /api/dataset/{id}/schema and /schema/validate: the server takes exactly the body (filters below).
const _schemaBody: Accepts<SchemaInput, SchemaBody> = true;
const _schemaKeys: Mirrors<keyof SchemaInput, keyof SchemaBody> = true;
const _object: Mirrors<ObjectInput, z.output<typeof objectElement>> = true;
const _field: Mirrors<FieldInput, z.output<typeof fieldElement>> = true;
const _derivation: Mirrors<
  NonNullable<FieldInput['derivation']>,
  NonNullable<z.output<typeof fieldElement>['derivation']>
> = true;
const _relation: Mirrors<RelationInput, z.output<typeof relationElement>> = true;
const _condition: Mirrors<RelationInput['conditions'][number], z.output<typeof relationElement>['conditions'][number]> =
  true;
const _hierarchy: Mirrors<HierarchyInput, z.output<typeof hierarchyElement>> = true;
const _parameter: Mirrors<ParameterInput, z.output<typeof parameterElement>> = true;
const _domain: Mirrors<
  NonNullable<ParameterInput['domain']>,
  NonNullable<z.output<typeof parameterElement>['domain']>
> = true;
// A filter's op and value_type are text on the server (a dataset copy feeds it the saved filters, read back from the
// database); the server checks them itself. Everything the body lets through is taken; the rest is the same.
const _filter: Accepts<FilterInput, z.output<typeof filterElement>> = true;
const _filterRest: Mirrors<
  Omit<FilterInput, 'op' | 'value_type'>,
  Omit<z.output<typeof filterElement>, 'op' | 'value_type'>
> = true;
const _filterKeys: Mirrors<keyof FilterInput, keyof z.output<typeof filterElement>> = true;

// GET /api/dataset/{id} and the schema save answer the six blocks as the server builds them.
const _savedBlocks: Mirrors<SchemaView, SavedBlocks> = true;
const _savedObject: Mirrors<SchemaView['objects'][number], z.output<typeof objectView>> = true;
const _savedField: Mirrors<SchemaView['fields'][number], z.output<typeof fieldView>> = true;
const _savedRelation: Mirrors<SchemaView['relations'][number], z.output<typeof relationView>> = true;
const _savedHierarchy: Mirrors<SchemaView['hierarchies'][number], SavedBlocks['hierarchies'][number]> = true;
const _savedFilter: Mirrors<SchemaView['filters'][number], SavedBlocks['filters'][number]> = true;
const _savedParameter: Mirrors<SchemaView['parameters'][number], z.output<typeof parameterView>> = true;
const _savedDomain: Mirrors<SchemaView['parameters'][number]['domain'], z.output<typeof parameterView>['domain']> =
  true;
void [
  _schemaBody,
  _schemaKeys,
  _object,
  _field,
  _derivation,
  _relation,
  _condition,
  _hierarchy,
  _parameter,
  _domain,
  _filter,
  _filterRest,
  _filterKeys,
];
void [
  _savedBlocks,
  _savedObject,
  _savedField,
  _savedRelation,
  _savedHierarchy,
  _savedFilter,
  _savedParameter,
  _savedDomain,
];

export const validateSchemaOutput = z.object({
  valid: z.literal(true),
  fields: z
    .array(
      z.object({
        id: z.number().int(),
        name: z.string(),
        kind: z.enum(FIELD_KINDS),
        formula: z.string().nullable(),
        primitive_type: z.enum(FIELD_TYPES),
      }),
    )
    .describe('Fields as they would be saved (ids as sent): built formulas, inferred types'),
});

// ---- tools ----

export const validateFormulaInput = z.strictObject({
  id,
  formula: wireString().max(MAX_EXPRESSION_LENGTH),
  field_id: id.optional().describe('The saved calculated field being edited (its own formula is replaced by this one)'),
});
export const validateFormulaOutput = z.object({
  valid: z.boolean(),
  primitive_type: z.enum(FIELD_TYPES).nullable(),
  aggregate: z.boolean().nullable().describe('true for a measure (the formula aggregates)'),
  message: z.string().nullable(),
});

export const suggestRelationsInput = z.strictObject({
  id,
  objects: z
    .array(
      z.strictObject({
        id: int4().refine((v) => v !== 0, { error: MSG.idRequired }),
        data_source_id: id.optional(),
        name: wireString().max(255).optional(),
        schema: wireString().max(255).nullish(),
        table: wireString().max(255).nullish(),
        columns: z
          .array(wireString().max(255))
          .max(2000)
          .optional()
          .describe('Known columns; else fields or source metadata'),
      }),
    )
    .max(200)
    .optional()
    .describe('Saved ids, or new objects with temporary ids; default: every saved object'),
  fields: z
    .array(z.strictObject({ id: int4(), object_id: int4(), column: wireString().max(255) }))
    .max(5000)
    .optional()
    .describe('New physical fields (temporary ids), so that proposals can name them'),
});
export const suggestRelationsOutput = z.object({
  relations: z.array(
    z.object({
      left_object_id: z.number().int(),
      right_object_id: z.number().int(),
      join_type: z.enum(JOIN_TYPES),
      conditions: z.array(
        z.object({
          left_field_id: z.number().int().nullable(),
          right_field_id: z.number().int().nullable(),
          left_column: z.string(),
          right_column: z.string(),
        }),
      ),
      reason: z.enum(['key_name', 'shared_key']),
    }),
  ),
});

const dependent = z.object({ id: z.number().int(), name: z.string(), workspace_id: z.number().int() });
export const dependenciesOutput = z.object({
  data_sources: z.array(dependent.extend({ type: z.string() })),
  widgets: z.array(dependent),
  dashboards: z.array(dependent),
  hidden_count: z.number().int().describe('Dependencies the caller cannot read: counted, not named'),
});

// POST /api/dataset, PUT /api/dataset/{id} and POST /api/dataset/{id}/relations/suggest hand their body (without the
// path id) to the server, which declares what it takes in server/datasets/datasets.ts and relation-suggest.ts.
type SuggestBody = Omit<z.output<typeof suggestRelationsInput>, 'id'>;
const _create: Mirrors<CreateDatasetInput, z.output<typeof createDatasetInput>> = true;
const _update: Mirrors<UpdateDatasetInput, Omit<z.output<typeof updateDatasetInput>, 'id'>> = true;
const _suggest: Mirrors<SuggestInput, SuggestBody> = true;
const _suggestObject: Mirrors<
  NonNullable<SuggestInput['objects']>[number],
  NonNullable<SuggestBody['objects']>[number]
> = true;
const _suggestField: Mirrors<NonNullable<SuggestInput['fields']>[number], NonNullable<SuggestBody['fields']>[number]> =
  true;
void [_create, _update, _suggest, _suggestObject, _suggestField];
