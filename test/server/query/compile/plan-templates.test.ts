import { describe, expect, it } from 'vitest';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import {
  compileTemplate,
  fillTemplate,
  requestShape,
  type PlanTemplate,
  type RequestShape,
} from '../../../../server/query/compile/plan-templates';
import type { DatasetModel } from '../../../../server/query/compile/dataset-model';
import type { WidgetQueryInput } from '../../../../server/query/compile/types';
import type { Dialect } from '../../../../server/query/expr';
import { dialectIs, filter, request, salesModel, shelf } from './fixtures';

/*
 * A widget request compiled once per shape (server/query/compile/plan-templates.ts): a request that only puts other
 * values into a known shape must give exactly the query a whole compile gives it, in every dialect that binds values.
 */

const base = salesModel();
const productField = base.fields.find((f) => f.name === 'product')!;
const qtyField = base.fields.find((f) => f.name === 'qty')!;
/** A dataset filter and a parameter: values of the model, bound among the request's. */
const model = salesModel({
  filters: [{ id: 1, fieldId: productField.id, op: 'ne', values: ['брак'], valueType: 'string' }],
  parameters: [{ id: 1, name: 'rate', primitiveType: 'float', defaultValue: '1.5', domain: { kind: 'any' }, order: 0 }],
});
const BINDING: Dialect[] = ['postgresql', 'mysql', 'duckdb'];

const shape = (q: WidgetQueryInput): RequestShape => {
  const s = requestShape(q);
  if (!s) throw new Error('no shape');
  return s;
};

const templateOf = (m: DatasetModel, q: WidgetQueryInput, d: Dialect): PlanTemplate | null =>
  compileTemplate(m, q, shape(q), dialectIs(d)).template;

/** The request's query through the template another request of its shape made, and compiled whole. */
function bothWays(m: DatasetModel, first: WidgetQueryInput, next: WidgetQueryInput, d: Dialect) {
  expect(shape(next).key).toBe(shape(first).key);
  const template = templateOf(m, first, d);
  expect(template).not.toBeNull();
  return { filled: fillTemplate(template!, shape(next)), whole: compileWidgetQuery(m, next, dialectIs(d)) };
}

const grouped = (filters: WidgetQueryInput['filters']) =>
  request({
    rows: [shelf('p', '[sales.product]')],
    columns: [shelf('s', 'SUM([sales.amount] * [rate])')],
    filters,
  });

/** A seeded generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type FilterGen = (r: () => number) => { sql: string; op: string; values: unknown[]; type: string };
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const word = (r: () => number) => pick(r, ['чай', "it's", 'a\\b', '%_', '', 'x'.repeat(Math.floor(r() * 40))]);
const maybeNull = <T>(r: () => number, v: T): T | null => (r() < 0.15 ? null : v);

/** Filters of every slotted operation and value type, with values drawn at random (nulls among them). */
const GENERATORS: FilterGen[] = [
  (r) => ({
    sql: '[sales.product]',
    op: pick(r, ['in', 'not_in']),
    values: [word(r), maybeNull(r, word(r)), word(r)],
    type: 'string',
  }),
  (r) => ({
    sql: '[sales.amount]',
    op: pick(r, ['eq', 'ne', 'gt', 'gte', 'lt', 'lte']),
    values: [maybeNull(r, r() * 1e6 - 5e5)],
    type: 'float',
  }),
  (r) => ({
    sql: '[sales.qty]',
    op: pick(r, ['gt', 'lte', 'eq']),
    values: [Math.floor(r() * 2 ** 31)],
    type: 'integer',
  }),
  (r) => ({ sql: '[sales.id]', op: 'eq', values: [String(Math.floor(r() * 1e3))], type: 'number' }),
  (r) => ({
    sql: '[sales.sold_on]',
    op: 'between',
    values: [maybeNull(r, '2024-01-0' + (1 + Math.floor(r() * 9))), '2025-02-03'],
    type: 'date',
  }),
  (r) => ({
    sql: '[sales.sold_on]',
    op: 'gte',
    values: [`2024-05-06T0${Math.floor(r() * 9)}:30:00.000Z`],
    type: 'datetime',
  }),
  (r) => ({
    sql: 'SUM([sales.qty])',
    op: pick(r, ['gt', 'between']),
    values: [1, Math.floor(r() * 100) + 2].slice(0, r() < 0.5 ? 1 : 2),
    type: 'integer',
  }),
];

describe('plan templates', () => {
  it('a request of a known shape gets exactly the query a whole compile gives it (random values, every binding dialect)', () => {
    const r = random(20261127);
    let checked = 0;
    for (let round = 0; round < 150; round++) {
      const gens = [...GENERATORS].sort(() => r() - 0.5).slice(0, 1 + Math.floor(r() * 4));
      const seeds = gens.map(() => Math.floor(r() * 2 ** 31));
      const make = (salt: number) =>
        grouped(
          gens.map((g, i) => {
            const f = g(random(seeds[i] + salt));
            return filter(`filters[${i}]`, f.sql, f.op, f.values, f.type);
          }),
        );
      const first = make(0);
      const firstShape = requestShape(first);
      if (!firstShape) continue; // a value that does not read (e.g. an odd generator's op/arity) compiles whole
      for (let salt = 1; salt < 6; salt++) {
        const next = make(salt);
        const nextShape = requestShape(next);
        if (nextShape?.key !== firstShape.key) continue;
        for (const d of BINDING) {
          let whole;
          try {
            whole = compileWidgetQuery(model, next, dialectIs(d));
          } catch {
            continue; // a request the compiler refuses is never templated: its first compile throws
          }
          const template = templateOf(model, first, d);
          expect(template, JSON.stringify(first.filters)).not.toBeNull();
          expect(fillTemplate(template!, nextShape)).toEqual(whole);
          checked++;
        }
      }
    }
    // The sweep must actually compare many pairs, not pass by skipping them all.
    expect(checked).toBeGreaterThan(300);
  });

  it('puts the values in their own places among the dataset filter, parameter and request values', () => {
    const first = grouped([
      filter('filters[0]', '[sales.product]', 'in', ['a', 'b']),
      filter('filters[1]', '[sales.amount]', 'between', [1.5, 9.5], 'float'),
    ]);
    const next = grouped([
      filter('filters[0]', '[sales.product]', 'in', ['c', "d'); DROP TABLE sales; --"]),
      filter('filters[1]', '[sales.amount]', 'between', [-3.25, 1e-7], 'float'),
    ]);
    const { filled, whole } = bothWays(model, first, next, 'postgresql');
    expect(filled).toEqual(whole);
    expect(filled.params).toEqual([1.5, 'брак', 'c', "d'); DROP TABLE sales; --", -3.25, 1e-7]);
    // The template is not changed by filling it.
    const template = templateOf(model, first, 'postgresql')!;
    fillTemplate(template, shape(next));
    expect(template.query.params).toEqual([1.5, 'брак', 'a', 'b', 1.5, 9.5]);
  });

  it('what changes the SQL text changes the shape: null, a boolean, an integer past 32 bits, a count, a number type', () => {
    const one = (op: string, values: unknown[], type: string) =>
      shape(grouped([filter('filters[0]', '[sales.qty]', op, values, type)])).key;
    expect(one('eq', [5], 'integer')).toBe(one('eq', [7], 'integer'));
    expect(one('eq', [5], 'integer')).not.toBe(one('eq', [null], 'integer'));
    expect(one('eq', [5], 'integer')).not.toBe(one('eq', [2 ** 40], 'integer'));
    expect(one('in', [5, 6], 'integer')).not.toBe(one('in', [5, 6, 7], 'integer'));
    expect(one('in', [5, null], 'integer')).not.toBe(one('in', [null, 5], 'integer'));
    expect(one('eq', ['5'], 'number')).not.toBe(one('eq', ['5.5'], 'number'));
    expect(one('eq', [true], 'boolean')).not.toBe(one('eq', [false], 'boolean'));
    expect(one('eq', ['5'], 'string')).not.toBe(one('eq', ['5'], 'float'));
    // A LIKE pattern is made of its value: such values stay part of the shape.
    expect(one('contains', ['a'], 'string')).not.toBe(one('contains', ['b'], 'string'));
  });

  it('the integer past 32 bits is cast to bigint through the template too', () => {
    const q = (v: number) => grouped([filter('filters[0]', '[sales.qty]', 'gt', [v], 'integer')]);
    const { filled, whole } = bothWays(model, q(2 ** 40), q(2 ** 41), 'postgresql');
    expect(filled).toEqual(whole);
    expect(filled.sql).toContain('AS bigint');
  });

  it('keeps no template where the compile cannot prove one: ClickHouse, a filter object given twice', () => {
    const q = grouped([filter('filters[0]', '[sales.product]', 'eq', ['a'])]);
    expect(templateOf(model, q, 'clickhouse')).toBeNull();
    const twice = { ...q, filters: [q.filters[0], q.filters[0]] };
    expect(templateOf(model, twice, 'postgresql')).toBeNull();
    expect(templateOf(model, q, 'postgresql')?.slots).toEqual([{ param: 2, filter: 0, value: 0 }]);
  });

  it('a value that does not read as its type has no shape: the whole compile names it', () => {
    expect(requestShape(grouped([filter('filters[0]', '[sales.qty]', 'eq', ['abc'], 'integer')]))).toBeUndefined();
    expect(requestShape(grouped([filter('filters[0]', '[sales.qty]', 'eq', [1], 'integer')]))).toBeDefined();
  });

  it('values of other filter kinds (LIKE, IS NULL) and of an unknown operation stay in the key, and still compile', () => {
    const q = grouped([
      filter('filters[0]', '[sales.product]', 'contains', ['ча']),
      filter('filters[1]', '[sales.qty]', 'is_null', []),
      filter('filters[2]', '[sales.qty]', 'gte', [qtyField.id], 'integer'),
    ]);
    const template = templateOf(model, q, 'mysql');
    expect(template?.slots).toEqual([{ param: 3, filter: 2, value: 0 }]);
    expect(fillTemplate(template!, shape(q))).toEqual(compileWidgetQuery(model, q, dialectIs('mysql')));
  });
});
