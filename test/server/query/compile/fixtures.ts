import type { DatasetField, DatasetModel, DatasetObject } from '../../../../server/query/compile/dataset-model';
import type { Dialect } from '../../../../server/query/expr';
import type { ShelfField, WidgetQueryInput } from '../../../../server/query/compile/types';

/** Hand-built dataset models for the compiler's unit tests: sales joined to regions, on data source 1. */

let nextId = 1000;

export function physical(
  objectId: number,
  name: string,
  primitiveType: DatasetField['primitiveType'],
  extra: Partial<DatasetField> = {},
): DatasetField {
  return {
    id: nextId++,
    objectId,
    name,
    title: name,
    kind: 'physical',
    column: name,
    formula: null,
    derivation: null,
    primitiveType,
    aggregation: 'none',
    hidden: false,
    description: '',
    sortByFieldId: null,
    ...extra,
  };
}

function calculated(
  name: string,
  formula: string,
  primitiveType: DatasetField['primitiveType'] = 'unknown',
): DatasetField {
  return { ...physical(0, name, primitiveType), objectId: null, kind: 'calculated', column: null, formula };
}

export function object(id: number, name: string, extra: Partial<DatasetObject> = {}): DatasetObject {
  return { id, dataSourceId: 1, name, kind: 'table', schema: 'public', table: name, sql: null, ...extra };
}

/** sales(id, region_id, product, amount, qty, sold_on) -> regions(id, name); and a derived table of big sales. */
export function salesModel(over: Partial<DatasetModel> = {}): DatasetModel {
  // The same ids on every call, so a test can take a field from one model and use it in another.
  const saved = nextId;
  nextId = 1000;
  const sales = object(1, 'sales', { table: 'sales_table' });
  const regions = object(2, 'regions', { schema: null });
  const fields = [
    physical(1, 'id', 'integer'),
    physical(1, 'region_id', 'integer'),
    physical(1, 'product', 'string'),
    physical(1, 'amount', 'float', { column: 'amount_rub' }),
    physical(1, 'qty', 'integer', { aggregation: 'sum' }),
    physical(1, 'sold_on', 'date'),
    physical(2, 'id', 'integer'),
    physical(2, 'name', 'string'),
    calculated('Выручка', 'SUM([sales.amount])', 'float'),
  ];
  nextId = Math.max(saved, nextId);
  const [, regionId, , , , , regionsId] = fields;
  return {
    id: 7,
    name: 'Продажи',
    workspaceId: 1,
    live: true,
    dataSourceIds: [1],
    version: 1,
    updatedAt: new Date('2026-01-01T00:00:00Z'),
    objects: [sales, regions],
    fields,
    relations: [
      {
        id: 1,
        leftObjectId: 1,
        rightObjectId: 2,
        joinType: 'left',
        conditions: [{ leftFieldId: regionId.id, rightFieldId: regionsId.id }],
      },
    ],
    hierarchies: [],
    filters: [],
    parameters: [],
    ...over,
  };
}

export const shelf = (id: string, sql: string, extra: Partial<ShelfField> = {}): ShelfField => ({ id, sql, ...extra });

export function request(over: Partial<WidgetQueryInput> = {}): WidgetQueryInput {
  return {
    type: 'bar',
    rows: [],
    series: [],
    columns: [],
    filters: [],
    sorts: [],
    calculatedFields: [],
    parameters: {},
    page: 1,
    pageSize: 100,
    ...over,
  };
}

const DIALECTS: Dialect[] = ['postgresql', 'mysql', 'clickhouse', 'duckdb'];
export const dialectIs = (d: Dialect) => () => d;

import { AppError } from '../../../../server/kernel/errors';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';

/** The compiled SQL of one request in every dialect (values shown where the dialect binds them). */
export function allDialects(model: DatasetModel, req: WidgetQueryInput) {
  const out: Record<string, unknown> = {};
  for (const d of DIALECTS) {
    const q = compileWidgetQuery(model, req, dialectIs(d));
    out[d] = d === 'clickhouse' ? q.sql : { sql: q.sql, params: q.params };
  }
  return out;
}

/** The AppError a call throws: status, message and field errors. */
export function failure(f: () => unknown): { status: number; message: string; errors?: Record<string, string> } {
  try {
    f();
  } catch (e) {
    if (e instanceof AppError)
      return { status: e.status, message: e.message, ...(e.fieldErrors ? { errors: e.fieldErrors } : {}) };
    throw e;
  }
  throw new Error('expected an AppError');
}

export const filter = (path: string, sql: string, op: string, values?: unknown[], value_type?: string) => ({
  path,
  filter: { sql, op, values, ...(value_type ? { value_type } : {}) },
});
