import { z } from 'zod';
import { dateFromParam, dateToParam, type StdListFilter } from '../server/objects/list';
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  type pageOf,
  type PageRequest,
  type SortRequest,
} from '../server/kernel/paging';
import { FILTER_OPS } from '../server/query/expr/filters';
import { FILTER_VALUE_TYPES } from '../server/query/expr/filter-values';
import { MAX_EXPRESSION_LENGTH } from '../server/query/expr';
import type {
  CalculatedFieldDef,
  FilterSpec,
  ParameterValues,
  ShelfField,
  SortSpec,
} from '../server/query/compile/types';
import {
  entityId,
  int4,
  INVALID_TEXT_MESSAGE,
  isWireText,
  nonBlank,
  wireJson,
  wireString,
} from '../server/kernel/validation';

/*
 * Wire pieces several routers share: ids, the DELETE answer, paging (query and page envelope), the std list query,
 * and the widget configuration pieces (shelf field, filter, sort, calculated field, parameter values) that datasets,
 * widgets and dashboards all take.
 *
 * Input schemas take text only as `wireString`/`nonBlank` (no NUL, no lone surrogates) and ids only as `entityId`
 * (1..2^31-1, the range of the id columns), so that bad input is a 422 with the field path and never reaches the
 * database.
 *
 * server/ never imports routers/ (not even types), so the server keeps its own interfaces for what it takes
 * (server/query/compile/types.ts, server/kernel/paging.ts). Where such an interface is the wire shape, a compile-time assertion
 * below (`Accepts<Domain, z.output<typeof schema>>`) checks that everything the schema lets through is what the
 * server function takes, and the saved read shapes are checked the other way round: a schema that drifts from the
 * server's type fails `tsc`, not a request. Where the server's interface is the whole body (create, update and data
 * bodies), `Mirrors` checks it both ways and by its keys: handing the parsed input to the server function only
 * checks one way, and lets a field the server takes but the schema never sends go unnoticed.
 */
export { dateFromParam, dateToParam, entityId, int4, INVALID_TEXT_MESSAGE, isWireText, nonBlank, wireJson, wireString };

/** `{ id }` of the object a path addresses. */
export const idInput = z.strictObject({ id: entityId() });

/** The answer of a DELETE of one object. */
export const deletedOutput = z.object({ id: z.number().int(), deleted: z.literal(true) });

/** A path or multipart field that carries an id as text (raw routes parse their own parameters). */
export const entityIdText = () =>
  z
    .string()
    .regex(/^\d{1,10}$/, { error: 'must be an integer' })
    .transform(Number)
    .pipe(entityId());

/**
 * True when every `Wire` value is a `Domain` value. Used as `const _x: Accepts<...> = true`: the line fails to
 * compile when a schema lets through something the server's type does not take.
 */
export type Accepts<Domain, Wire> = [Wire] extends [Domain] ? true : never;

/**
 * True when a server interface says exactly what a wire schema says: `Accepts` both ways, and the same keys (both
 * ways alone let an optional key that only one side has slip through). Used as `const _x: Mirrors<...> = true` where
 * a hand-written server type mirrors a body: a field added to either side and not the other fails `tsc`. Keys are
 * compared at the top level only, so nested objects that are mirrors too get a check of their own.
 */
export type Mirrors<Domain, Wire> = true extends Accepts<Domain, Wire> &
  Accepts<Wire, Domain> &
  Accepts<keyof Domain, keyof Wire> &
  Accepts<keyof Wire, keyof Domain>
  ? true
  : never;

// ---- paging (lists page from 0; widget data is the one exception and pages from 1) ----

/** `sort` is `<field>,<asc|desc>`; the direction defaults to asc. */
const sortParam = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*(,(asc|desc|ASC|DESC))?$/, { error: 'must have the form <field>,<asc or desc>' })
  .transform((s): SortRequest => {
    const [field, dir] = s.split(',');
    return { field, direction: dir?.toLowerCase() === 'desc' ? 'desc' : 'asc' };
  });

/** Query parameters shared by every paged list. */
export const pagedQuery = {
  page: z.number().int().min(0).default(0),
  size: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  sort: sortParam.optional(),
};

const pageInfoSchema = z.object({
  size: z.number().int(),
  number: z.number().int(),
  total_elements: z.number().int(),
  total_pages: z.number().int(),
});

export const pageSchema = <T extends z.ZodType>(item: T) => z.object({ content: z.array(item), page: pageInfoSchema });

/**
 * `sort` restricted to the fields a list can order by: an unknown field is a 422 on `sort` at parse time, so a list
 * never silently falls back to another order (and the whitelist is the only way a name reaches ORDER BY).
 */
const sortParamOver = (fields: readonly [string, ...string[]]) =>
  sortParam
    .refine((s) => fields.includes(s.field), { error: `must name one of the fields: ${fields.join(', ')}` })
    .describe(`<field>,<asc or desc>; field is one of: ${fields.join(', ')}`);

/** `pagedQuery` whose `sort` accepts only the given fields. */
export const pagedQueryOver = (fields: readonly [string, ...string[]]) => ({
  ...pagedQuery,
  sort: sortParamOver(fields).optional(),
});

// ---- std list params ----

/** The query parameters of a std list; `type` is the area's own (source kind, widget kind, dataset mode). */
export const stdListQuery = <T extends z.ZodType>(sortFields: readonly [string, ...string[]], type: T) => ({
  ...pagedQueryOver(sortFields),
  query: wireString().max(200).optional().describe('Search in the name'),
  type: type.optional(),
  author: entityId().optional().describe('Author id'),
  workspaceId: entityId().optional().describe('Workspace to search in'),
  createdAtFrom: dateFromParam.optional(),
  createdAtTo: dateToParam.optional().describe('Inclusive: a date means the whole day'),
  updatedAtFrom: dateFromParam.optional(),
  updatedAtTo: dateToParam.optional().describe('Inclusive: a date means the whole day'),
});

// Lists take what the query lets through, and answer what the page envelope describes.
const _pagedQuery: Accepts<PageRequest, z.output<z.ZodObject<typeof pagedQuery>>> = true;
const _stdList: Accepts<PageRequest & StdListFilter, z.output<z.ZodObject<ReturnType<typeof stdListQuery>>>> = true;
const _page: Accepts<z.output<typeof pageInfoSchema>, ReturnType<typeof pageOf>['page']> = true;
void [_pagedQuery, _stdList, _page];

// ---- widget configuration: shelves, filters, sorts, calculated fields, parameters ----

const text = (max: number) => wireString().max(max);
const ownId = wireString()
  .min(1)
  .max(200)
  .refine((s) => s.trim() !== '', { error: 'must not be blank' });
const expression = text(MAX_EXPRESSION_LENGTH);

export const shelfField = z
  .strictObject({
    id: ownId.describe('Own id: sorts refer to it, data rows use it as key'),
    alias: text(500).optional(),
    field: text(500).optional().describe('Dataset field name (used when sql is empty)'),
    table: text(500).optional().describe('Object (table) of the field'),
    sql: expression.optional().describe('Expression: [table.field], [calculated name], aggregates over them'),
    settings: z.record(wireString(), wireJson()).optional(),
  })
  .describe('Shelf field');

const filterValue = z.union([text(10_000), z.number(), z.boolean(), z.null()]);
export const widgetFilter = z.strictObject({
  sql: expression.min(1),
  op: z.enum(FILTER_OPS),
  values: z.array(filterValue).max(10_000).nullable().optional(),
  value_type: z.enum(FILTER_VALUE_TYPES).nullable().optional(),
});

export const widgetSort = z.strictObject({
  field_id: ownId.describe('A shelf field id'),
  direction: z.enum(['asc', 'desc']).default('asc'),
});

export const calculatedField = z.strictObject({
  id: z.union([text(200), int4()]).optional(),
  name: wireString().min(1).max(500),
  alias: text(500).optional(),
  primitive_type: text(50).optional(),
  sql: expression.min(1),
});

export const parameterValues = z
  .record(wireString().max(500), z.union([text(10_000), z.number(), z.boolean(), z.null()]))
  .describe('Map of dataset parameter name to value (substituted once)');

// Everything a request may carry is what the query engine takes (server/query/compile/types.ts).
const _shelfField: Accepts<ShelfField, z.output<typeof shelfField>> = true;
const _filter: Accepts<FilterSpec, z.output<typeof widgetFilter>> = true;
const _sort: Accepts<SortSpec, z.output<typeof widgetSort>> = true;
const _calculatedField: Accepts<CalculatedFieldDef, z.output<typeof calculatedField>> = true;
const _parameters: Accepts<ParameterValues, z.output<typeof parameterValues>> = true;
void [_shelfField, _filter, _sort, _calculatedField, _parameters];

// Reads describe what was saved (checked when it was saved), without re-validating it strictly.
export const savedShelfField = z.object({
  id: z.string(),
  alias: z.string().optional(),
  field: z.string().optional(),
  table: z.string().optional(),
  sql: z.string().optional(),
  settings: z.record(z.string(), z.unknown()).optional(),
});
export const savedFilter = z.object({
  sql: z.string(),
  op: z.string(),
  values: z.array(z.unknown()).nullable().optional(),
  value_type: z.string().nullable().optional(),
});
export const savedSort = z.object({ field_id: z.string(), direction: z.string() });
export const savedCalculatedField = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  name: z.string(),
  alias: z.string().optional(),
  primitive_type: z.string().optional(),
  sql: z.string(),
});

/** A value as reads answer it: selector values, parameter values, field values. */
export const scalarOut = z.union([z.string(), z.number(), z.boolean(), z.null()]);
/** A dashboard selector as saved. */
export const savedSelector = z.object({
  id: z.string(),
  name: z.string(),
  field_id: z.number().int(),
  op: z.string(),
  values: z.array(scalarOut),
  widget_ids: z.array(z.number().int()),
});
/** A dashboard layout as saved: GET /api/dashboard/{id}/schema, and the public viewer's dashboard. */
export const savedDashboardLayout = {
  tabs: z.array(z.object({ id: z.string(), name: z.string() })),
  items: z.array(
    z.object({
      widget_id: z.number().int(),
      tab_id: z.string().nullable(),
      x: z.number().int(),
      y: z.number().int(),
      w: z.number().int(),
      h: z.number().int(),
    }),
  ),
  selectors: z.array(savedSelector),
  parameters: z.array(z.object({ name: z.string(), value: scalarOut, widget_ids: z.array(z.number().int()) })),
};

// What the engine's types hold (a saved configuration) is what the read shapes describe.
const _savedShelfField: Accepts<z.output<typeof savedShelfField>, ShelfField> = true;
const _savedFilter: Accepts<z.output<typeof savedFilter>, FilterSpec> = true;
const _savedSort: Accepts<z.output<typeof savedSort>, SortSpec> = true;
const _savedCalculatedField: Accepts<z.output<typeof savedCalculatedField>, CalculatedFieldDef> = true;
void [_savedShelfField, _savedFilter, _savedSort, _savedCalculatedField];

/**
 * The response headers of widget data answers (POST /api/widget/{id}/data, /api/widget/preview, /api/dashboard/{id}/
 * data): which path answered, noted by the one data entry point (server/query/read.ts) for the REST adapter to send.
 */
export const dataPathHeaders = z.object({
  'X-Data-Path': z
    .string()
    .describe(
      'Which path answered the data: `rollup` (a pre-aggregation of the dataset), `extract` (the DuckDB extract of a ' +
        'materialised dataset) or `live` (the data source). A dashboard answer lists the distinct paths of its ' +
        'widgets, comma-separated (`rollup,live`). Absent when no widget was read (every widget failed).',
    ),
});
