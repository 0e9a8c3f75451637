import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { configureQueryEngine, queryEngineFor } from '../../../server/query/run/engine';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  REGIONS,
  sourceDb,
  type FlatData,
  type KpiData,
  type Sale,
  type WidgetView,
} from './world';
import { failure, ok } from '../../support/rest';

/*
 * Widget data against a real PostgreSQL source: every number is checked against the same figure computed here in JS
 * from the inserted rows.
 */

const SALES = makeSales(150);
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;

const round = (n: number) => Math.round(n * 100) / 100;
const total = (rows: Sale[]) => round(rows.reduce((a, s) => a + (s.amount ?? 0), 0));
const regionName = (id: number) => REGIONS.find((r) => r[0] === id)![1];

async function widget(over: Record<string, unknown> = {}) {
  const res = await api.post(
    '/api/widget',
    {
      name: 'w',
      type: 'bar',
      dataset_id: datasetId,
      rows: [{ id: 'region', sql: '[regions.name]' }],
      columns: [{ id: 'total', sql: 'SUM([sales.amount])' }],
      ...over,
    },
    cast.tokens.editor,
  );
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return ok<WidgetView>(res).id;
}
const data = (id: number, body: Record<string, unknown> = {}, token = cast.tokens.viewer) =>
  api.post(`/api/widget/${id}/data`, body, token);

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = (
    await createSalesDataset(api, cast.tokens.wsAdmin!, {
      workspaceId: cast.workspaceId,
      sourceId: source,
      tables,
      parameters: [
        { id: -51, name: 'rate', primitive_type: 'number', default_value: '2' },
        {
          id: -52,
          name: 'top_product',
          primitive_type: 'string',
          default_value: 'чай',
          domain: { kind: 'list', values: ['чай', 'кофе'] },
        },
      ],
    })
  ).id;
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('POST /api/widget/{id}/data', () => {
  it('flat kinds: rows keyed by shelf field ids, grouped, sorted, paged from 1 with hasMore', async () => {
    const id = await widget({
      rows: [{ id: 'region', sql: '[regions.name]' }],
      series: [{ id: 'product', sql: '[sales.product]' }],
      columns: [
        { id: 'total', sql: 'SUM([sales.amount])' },
        { id: 'n', sql: 'COUNT()' },
      ],
      sorts: [{ field_id: 'total', direction: 'desc' }],
    });
    const groups = new Map<string, Sale[]>();
    for (const s of SALES) {
      const key = JSON.stringify([regionName(s.region_id), s.product]);
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    const expected = [...groups.entries()]
      .map(([key, rows]) => {
        const [region, product] = JSON.parse(key) as [string, string];
        return { region, product, total: total(rows), n: rows.length };
      })
      .sort((a, b) => b.total - a.total || (a.region < b.region ? -1 : 1));
    const first = await data(id, { page_size: 4 });
    expect(first.status).toBe(200);
    expect(ok<FlatData>(first).kind).toBe('flat');
    expect(ok<FlatData>(first).page).toEqual({ page: 1, pageSize: 4, hasMore: true });
    const all: Record<string, unknown>[] = [];
    for (let page = 1; ; page++) {
      const res = await data(id, { page, page_size: 4 });
      all.push(...ok<FlatData>(res).rows);
      if (!ok<FlatData>(res).page.hasMore) break;
    }
    expect(all.map((r) => ({ ...r, total: round(r.total as number) }))).toEqual(expected);
    // the default page size is 100, pages from 1
    expect(ok<FlatData>(await data(id)).page).toEqual({ page: 1, pageSize: 100, hasMore: false });
  });

  it('the KPI kind answers one row', async () => {
    const id = await widget({
      type: 'kpi',
      rows: [],
      columns: [
        { id: 't', sql: 'SUM([sales.amount])' },
        { id: 'q', sql: 'AVG([sales.qty])' },
        { id: 'p', sql: 'COUNTD([sales.product])' },
      ],
    });
    const res = await data(id);
    expect(ok<KpiData>(res).kind).toBe('kpi');
    expect(ok<KpiData>(res).row.t).toBeCloseTo(total(SALES), 2);
    expect(ok<KpiData>(res).row.q).toBeCloseTo(SALES.reduce((a, s) => a + s.qty, 0) / SALES.length, 9);
    expect(ok<KpiData>(res).row.p).toBe(new Set(SALES.map((s) => s.product)).size);
    expect(ok<KpiData>(res)).not.toHaveProperty('rows');
  });

  it('request filters are AND-ed with the saved ones; exclusive ones give an empty result', async () => {
    const id = await widget({ filters: [{ sql: '[sales.product]', op: 'in', values: ['чай', 'кофе'] }] });
    const narrowed = await data(id, {
      filters: [{ sql: '[sales.sold_on]', op: 'gte', values: ['2024-07-01'], value_type: 'date' }],
      sorts: [{ field_id: 'region', direction: 'asc' }],
    });
    const kept = SALES.filter((s) => ['чай', 'кофе'].includes(s.product) && s.sold_on >= '2024-07-01');
    const expected = [1, 2, 3]
      .map((r) => ({ region: regionName(r), total: total(kept.filter((s) => s.region_id === r)) }))
      .sort((a, b) => a.region.localeCompare(b.region, 'ru'));
    expect(
      (ok<FlatData>(narrowed).rows as { region: string; total: number }[]).map((r) => ({
        ...r,
        total: round(r.total),
      })),
    ).toEqual(expected);
    const none = await data(id, { filters: [{ sql: '[sales.product]', op: 'in', values: ['сок'] }] });
    expect(ok<FlatData>(none).rows).toEqual([]);
    expect(ok<FlatData>(none).page.hasMore).toBe(false);
  });

  it('overrides type, shelves and sorts; substitutes parameters once; takes calculated fields from the request', async () => {
    const id = await widget();
    const res = await data(id, {
      type: 'table',
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [
        { id: 'scaled', sql: 'SUM([sales.qty] * [rate])' },
        { id: 'avg', sql: '[Средний чек]' },
        { id: 'is_top', sql: 'MAX(IF([sales.product] = [top_product], 1, 0))' },
      ],
      calculated_fields: [
        {
          id: 'c1',
          name: 'Средний чек',
          alias: 'Средний чек',
          primitive_type: 'float',
          sql: 'SUM([sales.amount]) / COUNT([sales.amount])',
        },
      ],
      sorts: [{ field_id: 'scaled', direction: 'asc' }],
      parameters: { rate: '0.5', top_product: 'кофе' },
    });
    expect(res.status).toBe(200);
    const products = [...new Set(SALES.map((s) => s.product))];
    const expected = products
      .map((p) => {
        const rows = SALES.filter((s) => s.product === p);
        const amounts = rows.filter((s) => s.amount !== null);
        return {
          p,
          scaled: rows.reduce((a, s) => a + s.qty * 0.5, 0),
          avg: total(amounts) / amounts.length,
          is_top: p === 'кофе' ? 1 : 0,
        };
      })
      .sort((a, b) => a.scaled - b.scaled || (a.p < b.p ? -1 : 1));
    expect((ok<FlatData>(res).rows as { p: string }[]).map((r) => r.p)).toEqual(expected.map((e) => e.p));
    (ok<FlatData>(res).rows as { scaled: number; avg: number; is_top: number }[]).forEach((r, i) => {
      expect(r.scaled).toBeCloseTo(expected[i].scaled, 9);
      expect(r.avg).toBeCloseTo(expected[i].avg, 9);
      expect(r.is_top).toBe(expected[i].is_top);
    });
    const bad = await data(id, { parameters: { top_product: 'сок', nope: 1 } });
    expect([bad.status, failure(bad).errors]).toEqual([
      422,
      {
        'parameters.nope': 'Параметр не найден в датасете: nope',
        'parameters.top_product': 'Значение параметра top_product должно быть одним из значений: чай, кофе',
      },
    ]);
    const missing = await data(id, { columns: [{ id: 'v', sql: '[Выручка]' }] });
    expect([missing.status, failure(missing).message]).toEqual([
      400,
      'Определение вычисляемого поля не найдено: Выручка',
    ]);
  });

  it('view_as_user_id is for system administrators and names an existing user', async () => {
    const id = await widget();
    expect((await data(id, { view_as_user_id: cast.users.viewer.id }, cast.tokens.viewer)).status).toBe(403);
    const unknown = await data(id, { view_as_user_id: 987654 }, cast.tokens.sysadmin);
    expect([unknown.status, failure(unknown).errors]).toEqual([
      422,
      { viewAsUserId: 'Пользователь не найден (id 987654)' },
    ]);
    const viewed = await data(id, { view_as_user_id: cast.users.viewer.id }, cast.tokens.sysadmin);
    expect(viewed.status).toBe(200);
    expect(ok<FlatData>(viewed).rows).toHaveLength(3);
  });

  it('view_as_user_id reads with the viewed user rights: a widget they cannot read is a 404 for the administrator too', async () => {
    const id = await widget();
    const asOutsider = await data(id, { view_as_user_id: cast.users.plain.id }, cast.tokens.sysadmin);
    expect([asOutsider.status, failure(asOutsider).message]).toEqual([404, `Виджет не найден (id ${id})`]);
    const preview = await api.post(
      '/api/widget/preview',
      { dataset_id: datasetId, rows: [], columns: [{ id: 'n', sql: 'COUNT()' }], view_as_user_id: cast.users.plain.id },
      cast.tokens.sysadmin,
    );
    expect(preview.status).toBe(404);
    // Without view-as the administrator reads every workspace.
    expect((await data(id, {}, cast.tokens.sysadmin)).status).toBe(200);
  });

  it('validates paging: page from 1, page_size up to 10 000', async () => {
    const id = await widget();
    const res = await data(id, { page: 0, page_size: 10_001 });
    expect([res.status, failure(res).errors]).toEqual([
      422,
      { page: 'must be greater than or equal to 1', pageSize: 'must be less than or equal to 10000' },
    ]);
    expect((await data(id, { page_size: 10_000 })).status).toBe(200);
    expect(ok<FlatData>(await data(id, { page: 1000 }))).toEqual({
      kind: 'flat',
      rows: [],
      page: { page: 1000, pageSize: 100, hasMore: false },
    });
  });

  it('repeats come from the cache; a source error is a 400 with the driver message', async () => {
    const id = await widget({ columns: [{ id: 'total', sql: 'SUM([sales.amount]) + 0' }] });
    const engine = queryEngineFor(t.deps);
    const before = engine.executions;
    await data(id);
    await Promise.all([data(id), data(id), data(id)]);
    expect(engine.executions - before).toBe(1);

    // With the cache off, a query on a table that is gone reports the database's words.
    configureQueryEngine(t.deps, { ttlMs: 0 });
    const scratch = await sourceDb();
    await scratch.query(`ALTER TABLE ${tables.regions} RENAME TO ${tables.regions}_gone`);
    try {
      const res = await data(id);
      expect(res.status).toBe(400);
      expect(failure(res).message).toMatch(/^Ошибка выполнения запроса в источнике данных: .*does not exist/);
    } finally {
      await scratch.query(`ALTER TABLE ${tables.regions}_gone RENAME TO ${tables.regions}`);
      await scratch.end();
      configureQueryEngine(t.deps, {});
    }
    expect((await data(id)).status).toBe(200);
  });

  it('a query over its time budget is stopped with a clear message', async () => {
    configureQueryEngine(t.deps, { ttlMs: 0, timeoutMs: 300 });
    try {
      // a cross join big enough to outlast 300 ms
      const id = await widget({ rows: [], type: 'kpi', columns: [{ id: 'n', sql: 'COUNT()' }] });
      const scratch = await sourceDb();
      const big = `${tables.sales}_big`;
      await scratch.query(`CREATE TABLE ${big} AS SELECT g AS id FROM generate_series(1, 3000000) g`);
      await scratch.query(`ALTER TABLE ${tables.sales} RENAME TO ${tables.sales}_orig`);
      await scratch.query(
        `CREATE VIEW ${tables.sales} AS SELECT a.id, 1 AS region_id, 'x'::text AS product, 1.0::numeric AS amount, 1 AS qty, DATE '2024-01-01' AS sold_on FROM ${big} a CROSS JOIN ${big} b`,
      );
      try {
        const started = Date.now();
        const res = await data(id);
        expect([res.status, failure(res).message]).toEqual([400, 'Превышено время выполнения запроса (0.3 с)']);
        expect(Date.now() - started).toBeLessThan(5000);
      } finally {
        await scratch.query(`DROP VIEW ${tables.sales}`);
        await scratch.query(`ALTER TABLE ${tables.sales}_orig RENAME TO ${tables.sales}`);
        await scratch.query(`DROP TABLE ${big}`);
        await scratch.end();
      }
    } finally {
      configureQueryEngine(t.deps, {});
    }
  });
});

describe('POST /api/widget/preview', () => {
  it('answers data for an unsaved configuration, like widget data', async () => {
    const res = await api.post(
      '/api/widget/preview',
      {
        dataset_id: datasetId,
        type: 'kpi',
        columns: [{ id: 'n', sql: 'COUNT()' }],
        filters: [{ sql: '[regions.name]', op: 'eq', values: ['Юг'] }],
      },
      cast.tokens.viewer,
    );
    expect(res.body).toEqual({
      success: true,
      data: { kind: 'kpi', row: { n: SALES.filter((s) => s.region_id === 2).length } },
    });
    const flat = await api.post(
      '/api/widget/preview',
      {
        dataset_id: datasetId,
        rows: [{ id: 'r', sql: '[sales.region_id]' }],
        sorts: [{ field_id: 'r', direction: 'desc' }],
        page_size: 2,
      },
      cast.tokens.viewer,
    );
    expect(ok<FlatData>(flat)).toEqual({
      kind: 'flat',
      rows: [{ r: 3 }, { r: 3 }],
      page: { page: 1, pageSize: 2, hasMore: true },
    });
    expect(
      (
        await api.post(
          '/api/widget/preview',
          { dataset_id: datasetId, columns: [{ id: 'n', sql: 'COUNT()' }] },
          cast.tokens.plain,
        )
      ).status,
    ).toBe(404);
  });
});
