import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { queryEngineFor } from '../../../server/query/run/engine';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  tableExists,
} from './world';

/*
 * Hostile and broken input through every user-written part of a data request. Expressions that try to smuggle SQL
 * must be refused before anything runs (422/400, the engine's execution counter unchanged); values that look like
 * SQL are bound and run as plain values. A canary table in the source must survive all of it, and nothing is a 500.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let canary: string;
let datasetId: number;
let widgetId: number;
const ROWS = 40;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(ROWS));
  canary = uniq('canary');
  await db.query(`CREATE TABLE ${canary} (id int)`);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = (
    await createSalesDataset(api, cast.tokens.wsAdmin!, {
      workspaceId: cast.workspaceId,
      sourceId: source,
      tables,
      parameters: [
        { id: -51, name: 'label', primitive_type: 'string', default_value: 'x' },
        { id: -52, name: 'n', primitive_type: 'number', default_value: '1' },
      ],
    })
  ).id;
  const w = await api.post(
    '/api/widget',
    {
      name: 'w',
      type: 'table',
      dataset_id: datasetId,
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 'n', sql: 'COUNT()' }],
    },
    cast.tokens.editor,
  );
  widgetId = w.body.data.id;
});
afterAll(async () => {
  await db.query(`DROP TABLE IF EXISTS ${canary}`);
  await dropSourceTables(db, tables);
  await db.end();
});

const DROP = () => `DROP TABLE ${canary}`;
const data = (body: Record<string, unknown>) => api.post(`/api/widget/${widgetId}/data`, body, cast.tokens.viewer);

async function expectRefusedWithoutRunning(body: Record<string, unknown>, status: 400 | 422 = 422) {
  const engine = queryEngineFor(t.deps);
  const before = engine.executions;
  const res = await data(body);
  expect({ body, status: res.status, success: res.body.success }).toEqual({ body, status, success: false });
  expect(res.body.error.code).toBe(status);
  expect(engine.executions).toBe(before);
  return res;
}

async function sourceIntact() {
  expect(await tableExists(db, canary)).toBe(true);
  expect(await tableExists(db, tables.sales)).toBe(true);
  expect((await db.query(`SELECT count(*)::int AS n FROM ${tables.sales}`)).rows[0].n).toBe(ROWS);
}

describe('SQL smuggled into expressions is refused before anything runs', () => {
  const attacks = [
    `[sales.amount]; ${DROP()}`,
    `1); ${DROP()}; --`,
    `SUM([sales.amount]) FROM x; ${DROP()}; --`,
    `[sales.amount] -- comment`,
    `[sales.amount] /* comment */`,
    `(SELECT 1)`,
    `[sales.amount] UNION SELECT 1`,
    `[sales.amount] UNION ALL SELECT password FROM users`,
    `pg_sleep(10)`,
    `[sales.amount]]; ${DROP()}; --]`,
    `[sales"; ${DROP()}; --.amount]`,
    `"sales"."amount"`,
    `'a' || (SELECT current_user)`,
  ];

  it('through shelf sql', async () => {
    for (const sql of attacks) await expectRefusedWithoutRunning({ columns: [{ id: 'x', sql }] });
    await expectRefusedWithoutRunning({ rows: [{ id: 'x', table: `sales"; ${DROP()}; --`, field: 'amount' }] });
    await expectRefusedWithoutRunning({ rows: [{ id: 'x', table: 'sales', field: `amount"; ${DROP()}; --` }] });
    await sourceIntact();
  });

  it('through filter sql, op and value_type', async () => {
    for (const sql of attacks) await expectRefusedWithoutRunning({ filters: [{ sql, op: 'in', values: ['a'] }] });
    await expectRefusedWithoutRunning({ filters: [{ sql: '[sales.product]', op: `in; ${DROP()}`, values: ['a'] }] });
    await expectRefusedWithoutRunning({
      filters: [{ sql: '[sales.product]', op: 'in', values: ['a'], value_type: `string'; ${DROP()}` }],
    });
    await sourceIntact();
  });

  it('through calculated field definitions', async () => {
    for (const sql of attacks) {
      const res = await expectRefusedWithoutRunning({
        columns: [{ id: 'x', sql: '[evil]' }],
        calculated_fields: [{ id: '1', name: 'evil', sql }],
      });
      expect(Object.keys(res.body.error.errors)).toEqual(['calculatedFields[0].sql']);
    }
    await sourceIntact();
  });

  it('through sort ids', async () => {
    for (const field_id of [`p; ${DROP()}`, '__c0', '1', "p' --"]) {
      const res = await expectRefusedWithoutRunning({ sorts: [{ field_id, direction: 'asc' }] });
      expect(Object.keys(res.body.error.errors)).toEqual(['sorts[0].fieldId']);
    }
    await expectRefusedWithoutRunning({ sorts: [{ field_id: 'p', direction: `asc; ${DROP()}` }] });
    await sourceIntact();
  });

  it('through parameter names and typed values', async () => {
    await expectRefusedWithoutRunning({ parameters: { [`label; ${DROP()}`]: 'x' } });
    await expectRefusedWithoutRunning({ parameters: { n: `1; ${DROP()}` } });
    await expectRefusedWithoutRunning({ parameters: { n: '1 OR 1=1' } });
    await sourceIntact();
  });
});

describe('values that look like SQL are bound as values', () => {
  const evil = [
    `x'); ${DROP()}; --`,
    `' OR '1'='1`,
    `\\'; ${DROP()}; --`,
    `a" OR "1"="1`,
    `%' UNION SELECT 1 --`,
    `чай'; SELECT pg_sleep(5); --`,
  ];

  it('filter values and string parameters', async () => {
    for (const v of evil) {
      const res = await data({ filters: [{ sql: '[sales.product]', op: 'in', values: [v] }] });
      expect({ v, status: res.status, rows: res.body.data?.rows }).toEqual({ v, status: 200, rows: [] });
      const contains = await data({ filters: [{ sql: '[sales.product]', op: 'contains', values: [v] }] });
      expect({ v, rows: contains.body.data?.rows }).toEqual({ v, rows: [] });
      const param = await data({
        rows: [{ id: 'l', sql: '[label]' }],
        columns: [{ id: 'n', sql: 'COUNT()' }],
        parameters: { label: v },
      });
      expect({ v, rows: param.body.data?.rows }).toEqual({ v, rows: [{ l: v, n: ROWS }] });
    }
    // a quote inside a real value still matches it
    const quoted = await data({ filters: [{ sql: '[sales.product]', op: 'in', values: ["it's"] }] });
    expect(quoted.body.data.rows).toEqual([
      { p: "it's", n: makeSales(ROWS).filter((s) => s.product === "it's").length },
    ]);
    await sourceIntact();
  });
});

describe('other bad input', () => {
  it('unknown fields, type mismatches, huge pages, wrong shapes: 422 and never 500', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ columns: [{ id: 'x', sql: 'SUM([sales.nope])' }] }, 'columns[0].sql'],
      [{ columns: [{ id: 'x', sql: 'SUM([sales.product])' }] }, 'columns[0].sql'],
      [{ columns: [{ id: 'x', sql: '[sales.product] * 2' }] }, 'columns[0].sql'],
      [{ columns: [{ id: 'x', sql: 'NOSUCH([sales.amount])' }] }, 'columns[0].sql'],
      [{ filters: [{ sql: '[sales.amount]', op: 'gt', values: ['ten'], value_type: 'number' }] }, 'filters[0].values'],
      [
        { filters: [{ sql: '[sales.sold_on]', op: 'eq', values: ['2024-02-30'], value_type: 'date' }] },
        'filters[0].values',
      ],
      [{ page_size: 1_000_000 }, 'pageSize'],
      [{ page: -1 }, 'page'],
      [{ rows: 'x' }, 'rows'],
      [{ columns: [{ id: 'x', sql: 'x'.repeat(20_001) }] }, 'columns[0].sql'],
      [{ columns: [{ id: 'x', sql: '('.repeat(500) + '1' + ')'.repeat(500) }] }, 'columns[0].sql'],
      [{ type: 'radar' }, 'type'],
    ];
    for (const [body, path] of cases) {
      const res = await expectRefusedWithoutRunning(body);
      expect({ body, paths: Object.keys(res.body.error.errors ?? {}) }).toEqual({ body, paths: [path] });
    }
    await sourceIntact();
  });
});
