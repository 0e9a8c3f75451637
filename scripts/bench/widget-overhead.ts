/**
 * Widget data against what a user would run instead, side by side in one run: POST /api/widget/{id}/data over
 * keep-alive HTTP to the listening app, against the same compiled SQL sent raw through a plain `pg` client
 * (`new pg.Client()`, `client.query(sql, params)`: no project code on that side). Six figures:
 *   - large aggregation: GROUP BY over a generated 10M-row PostgreSQL table (1 000 groups), REST p50 / raw p50,
 *   - tiny query: one row by primary key, REST p50 - raw p50 in ms,
 *   - cached widget read: the tiny widget again with the result cache on (a hit), REST p50 in ms,
 *   - RLS widget read: the tiny widget on a dataset with one row-level security rule that applies to the reader
 *     (field `grp` in the reader's attribute values, POST /api/dataset/{id}/rls-rules), against the same widget on an
 *     identical dataset without a rule, REST p50 / REST p50. The tiny query, because there the per-request cost of
 *     RLS (loading the rules and the reader's attributes, compiling the predicate) is not hidden behind a long scan:
 *     RLS should add a predicate, not a query.
 *   - (a) widget miss: the whole configuration in the body, as a dashboard sends it, with a new selector filter value
 *     on every call (nothing cached answers it), REST p50 - raw p50 in ms,
 *   - (b) widget hit: the same whole body repeated (the result cache answers), REST p50 in ms.
 * (a) and (b) read a widget saved without filters (the tiny widget's shelves), so the selector's filter is the only
 * one. For them the result cache is on, as in production; for the others but the cached read it is off, so every
 * request compiles and runs its query. Requests
 * alternate REST / raw (or RLS / no RLS) one by one, so load on the machine hurts both alike.
 *
 *   npm run bench:widget     (SOURCE_PG_URL, ROWS, LARGE_RUNS, TINY_RUNS, MISS_RUNS, HIT_RUNS,
 *                             CACHED_RUNS, RLS_RUNS to change the defaults)
 *
 * The source table lives in the local PostgreSQL (127.0.0.1:5432, database test) and is created once and reused. The
 * metadata store is a throwaway database on the same server (or DATABASE_URL).
 */
import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { loadDatasetModel } from '../../server/datasets/load-model';
import { compileWidgetQuery } from '../../server/query/compile/compile-widget';
import { configureQueryEngine } from '../../server/query/run/engine';
import { DatasetSources } from '../../server/query/run/targets';
import { benchPlatform, ensureTable, pgSourceRow, tableDataset, SALES_FIELDS } from './support';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 10_000_000);
const TABLE = `bench_widget_${ROWS}`;
/** A mode's run count from the environment: a whole number >= 1 (every mode's p50 feeds a figure below). */
function runs(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${text}: a whole number of runs, at least 1`);
  return n;
}
const LARGE_RUNS = runs('LARGE_RUNS', 9);
const TINY_RUNS = runs('TINY_RUNS', 600);
const CACHED_RUNS = runs('CACHED_RUNS', 1000);
const RLS_RUNS = runs('RLS_RUNS', 600);
const MISS_RUNS = runs('MISS_RUNS', 600);
const HIT_RUNS = runs('HIT_RUNS', 1000);

// The measured REST calls go over one kept-alive socket, as the raw side's one kept pg connection.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(base: URL, pathname: string, body: unknown, token?: string): Promise<{ status: number; json: any }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        path: pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function put(base: URL, pathname: string, body: unknown, token: string) {
  return fetch(new URL(pathname, base), {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
}

const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
const ms = (n: number) => `${n.toFixed(n < 10 ? 3 : 1)} ms`;

async function main() {
  await ensureTable(
    SOURCE_URL,
    TABLE,
    ROWS,
    `SELECT g AS id, (g % 1000) AS grp, ((g::bigint * 7919) % 100000) / 100.0 AS amount, (g % 5) + 1 AS qty,
             DATE '2024-01-01' + (g % 366) AS sold_on
      FROM generate_series(1, ${ROWS}) AS g`,
    { primaryKey: true, sayTime: true },
  );
  const bench = await benchPlatform({
    name: 'widget',
    server: SOURCE_URL,
    engine: { ttlMs: 0 }, // no result cache: every request runs its query
  });
  const { deps, base, token, userId: adminId } = bench;
  try {
    const source = await pgSourceRow(bench, SOURCE_URL);
    // Two identical datasets over the same table: the second gets the RLS rule, the first stays without one.
    const createDataset = (name: string) =>
      tableDataset(bench, {
        name,
        sourceId: source.id,
        object: 'sales',
        table: TABLE,
        fields: SALES_FIELDS,
      });
    const { id: datasetId } = await createDataset('bench');
    const rlsDataset = await createDataset('bench rls');

    const cases = {
      large: {
        type: 'table',
        rows: [{ id: 'grp', sql: '[sales.grp]' }],
        columns: [
          { id: 'total', sql: 'SUM([sales.amount])' },
          { id: 'n', sql: 'COUNT()' },
          { id: 'q', sql: 'AVG([sales.qty])' },
        ],
        sorts: [{ field_id: 'grp', direction: 'asc' as const }],
        page_size: 10_000,
      },
      tiny: {
        type: 'table',
        rows: [
          { id: 'id', sql: '[sales.id]' },
          { id: 'amount', sql: '[sales.amount]' },
        ],
        filters: [{ sql: '[sales.id]', op: 'eq', values: [4242], value_type: 'integer' }],
        page_size: 100,
      },
    };
    const widgets: Record<string, number> = {};
    for (const [name, cfg] of Object.entries(cases)) {
      const { page_size: _ps, ...config } = cfg;
      const w = await post(base, '/api/widget', { name, dataset_id: datasetId, ...config }, token);
      if (w.status !== 200) throw new Error(`widget ${name}: ${JSON.stringify(w.json)}`);
      widgets[name] = w.json.data.id;
    }

    // The same SQL the engine runs, compiled here once; the user's side is a plain pg client on a kept connection.
    const model = await loadDatasetModel(deps.db, datasetId);
    const sources = await DatasetSources.load(deps.db, model);
    const client = new pg.Client({ connectionString: SOURCE_URL });
    await client.connect();
    const compiled = Object.fromEntries(
      Object.entries(cases).map(([name, cfg]) => [
        name,
        compileWidgetQuery(
          model,
          {
            type: cfg.type,
            rows: cfg.rows,
            series: [],
            columns: 'columns' in cfg ? cfg.columns : [],
            filters: ('filters' in cfg ? cfg.filters : []).map((filter, i) => ({ path: `filters[${i}]`, filter })),
            sorts: 'sorts' in cfg ? cfg.sorts : [],
            calculatedFields: [],
            parameters: {},
            page: 1,
            pageSize: cfg.page_size,
          },
          sources.dialectOf,
        ),
      ]),
    );

    const rest = async (name: keyof typeof cases) => {
      const started = performance.now();
      const r = await post(base, `/api/widget/${widgets[name]}/data`, { page_size: cases[name].page_size }, token);
      const took = performance.now() - started;
      if (r.status !== 200) throw new Error(`data ${name}: ${JSON.stringify(r.json)}`);
      return { took, rows: r.json.data.rows.length as number };
    };
    const raw = async (name: keyof typeof cases) => {
      const q = compiled[name];
      const started = performance.now();
      const r = await client.query(q.sql, q.params);
      return { took: performance.now() - started, rows: Math.min(r.rows.length, cases[name].page_size) };
    };

    console.log(`\nnode ${process.version}, ${os.cpus().length} cores; source ${TABLE}; result cache off\n`);
    const report: Record<string, { rest: number; raw: number }> = {};
    for (const [name, runs, warmup] of [
      ['tiny', TINY_RUNS, 50],
      ['large', LARGE_RUNS, 2],
    ] as const) {
      for (let i = 0; i < warmup; i++) {
        await rest(name);
        await raw(name);
      }
      const times = { rest: [] as number[], raw: [] as number[] };
      for (let i = 0; i < runs; i++) {
        // Alternate which goes first, so neither always meets a warmer buffer cache.
        const order = i % 2 === 0 ? (['rest', 'raw'] as const) : (['raw', 'rest'] as const);
        for (const kind of order) {
          const r = kind === 'rest' ? await rest(name) : await raw(name);
          if (r.rows === 0) throw new Error(`${name}: no rows`);
          times[kind].push(r.took);
        }
      }
      report[name] = { rest: p50(times.rest), raw: p50(times.raw) };
      console.log(
        `${name.padEnd(6)} (${runs} runs each)   REST p50 ${ms(report[name].rest).padStart(10)}   raw p50 ${ms(report[name].raw).padStart(10)}`,
      );
    }
    console.log('\ncompiled SQL of the large query:\n  ' + compiled.large.sql);
    const plan = await client.query(`EXPLAIN ${compiled.large.sql}`, compiled.large.params);
    const parallel = plan.rows.some((r: Record<string, string>) => /Gather/.test(Object.values(r)[0]));
    console.log(`plan of the large query ${parallel ? 'is' : 'is NOT'} parallel (Gather)`);

    // What a dashboard sends: the widget's whole configuration with the viewer's selector filter in the body. The
    // result cache is on, as in production. (a) A new filter value on every call (a selector change: nothing cached
    // can answer it) against the same SQL sent raw, interleaved; (b) one body repeated (a hit), absolute.
    configureQueryEngine(deps, {});
    const { page_size: _tps, filters: _tf, ...tinySaved } = cases.tiny;
    const selector = await post(base, '/api/widget', { name: 'selector', dataset_id: datasetId, ...tinySaved }, token);
    if (selector.status !== 200) throw new Error(`widget selector: ${JSON.stringify(selector.json)}`);
    const fullBody = (value: number) => ({
      ...tinySaved,
      series: [],
      columns: [],
      sorts: [],
      calculated_fields: [],
      filters: [{ sql: '[sales.id]', op: 'eq', values: [value], value_type: 'integer' }],
      page: 1,
      page_size: cases.tiny.page_size,
    });
    const rawFull = (value: number) => {
      const body = fullBody(value);
      return compileWidgetQuery(
        model,
        {
          type: body.type,
          rows: body.rows,
          series: [],
          columns: [],
          filters: body.filters.map((filter, i) => ({ path: `filters[${i}]`, filter })),
          sorts: [],
          calculatedFields: [],
          parameters: {},
          page: 1,
          pageSize: body.page_size,
        },
        sources.dialectOf,
      );
    };
    const restFull = async (value: number) => {
      const started = performance.now();
      const r = await post(base, `/api/widget/${selector.json.data.id}/data`, fullBody(value), token);
      const took = performance.now() - started;
      if (r.status !== 200) throw new Error(`data full: ${JSON.stringify(r.json)}`);
      if (r.json.data.rows.length !== 1) throw new Error(`data full: ${r.json.data.rows.length} rows, expected 1`);
      return took;
    };
    // Ids not read before in this run (one row each); both sides get the same values.
    let nextValue = 1 + Math.floor(Math.random() * (ROWS / 2));
    const missTimes = { rest: [] as number[], raw: [] as number[] };
    for (let i = 0; i < 50 + MISS_RUNS; i++) {
      const value = nextValue++;
      const q = rawFull(value);
      const order = i % 2 === 0 ? (['rest', 'raw'] as const) : (['raw', 'rest'] as const);
      for (const kind of order) {
        let took: number;
        if (kind === 'rest') took = await restFull(value);
        else {
          const started = performance.now();
          await client.query(q.sql, q.params);
          took = performance.now() - started;
        }
        if (i >= 50) missTimes[kind].push(took);
      }
    }
    const miss = { rest: p50(missTimes.rest), raw: p50(missTimes.raw) };
    console.log(
      `miss   (${MISS_RUNS} runs each)   REST p50 ${ms(miss.rest).padStart(10)}   raw p50 ${ms(miss.raw).padStart(10)}   (full body, new filter value each call)`,
    );
    const hitValue = nextValue++;
    for (let i = 0; i < 100; i++) await restFull(hitValue);
    const hitTimes: number[] = [];
    for (let i = 0; i < HIT_RUNS; i++) hitTimes.push(await restFull(hitValue));
    const hit = p50(hitTimes);
    console.log(`hit    (${HIT_RUNS} runs)   REST p50 ${ms(hit).padStart(10)}   (full body repeated)`);

    // A cached widget read: the result cache on, the tiny widget's answer already cached.
    configureQueryEngine(deps, {});
    for (let i = 0; i < 100; i++) await rest('tiny');
    const cachedTimes: number[] = [];
    for (let i = 0; i < CACHED_RUNS; i++) cachedTimes.push((await rest('tiny')).took);
    const cached = p50(cachedTimes);
    console.log(`cached (${CACHED_RUNS} runs)   REST p50 ${ms(cached).padStart(10)}`);

    // The tiny widget under one RLS rule that applies to the reader (grp in the reader's attribute values; 4242 is in
    // group 242, so the row still passes), against the same widget on the dataset without a rule. Result cache off.
    configureQueryEngine(deps, { ttlMs: 0 });
    const attributes = await put(base, `/api/users/${adminId}/attributes`, { attributes: { grp: ['242'] } }, token);
    if (attributes.status !== 200) throw new Error(`attributes: ${JSON.stringify(attributes.json)}`);
    const grpField = rlsDataset.fields.find((f) => f.name === 'grp')!.id;
    const rule = await post(
      base,
      `/api/dataset/${rlsDataset.id}/rls-rules`,
      { field_id: grpField, attribute: 'grp', operator: 'in', user_ids: [adminId] },
      token,
    );
    if (rule.status !== 200) throw new Error(`rls rule: ${JSON.stringify(rule.json)}`);
    const { page_size: _ps, ...tinyConfig } = cases.tiny;
    const rlsWidget = await post(
      base,
      '/api/widget',
      { name: 'tiny rls', dataset_id: rlsDataset.id, ...tinyConfig },
      token,
    );
    if (rlsWidget.status !== 200) throw new Error(`widget tiny rls: ${JSON.stringify(rlsWidget.json)}`);
    const read = async (widgetId: number) => {
      const started = performance.now();
      const r = await post(base, `/api/widget/${widgetId}/data`, { page_size: cases.tiny.page_size }, token);
      const took = performance.now() - started;
      if (r.status !== 200) throw new Error(`data rls: ${JSON.stringify(r.json)}`);
      if (r.json.data.rows.length !== 1) throw new Error(`rls: ${r.json.data.rows.length} rows, expected 1`);
      return took;
    };
    // The rule must bite: with another attribute value the row is gone.
    await put(base, `/api/users/${adminId}/attributes`, { attributes: { grp: ['1'] } }, token);
    const denied = await post(base, `/api/widget/${rlsWidget.json.data.id}/data`, {}, token);
    if (denied.status !== 200 || denied.json.data.rows.length !== 0) throw new Error('rls: the rule does not filter');
    await put(base, `/api/users/${adminId}/attributes`, { attributes: { grp: ['242'] } }, token);
    for (let i = 0; i < 50; i++) {
      await read(rlsWidget.json.data.id);
      await read(widgets.tiny);
    }
    const rlsTimes = { rls: [] as number[], plain: [] as number[] };
    for (let i = 0; i < RLS_RUNS; i++) {
      const order = i % 2 === 0 ? (['rls', 'plain'] as const) : (['plain', 'rls'] as const);
      for (const kind of order) rlsTimes[kind].push(await read(kind === 'rls' ? rlsWidget.json.data.id : widgets.tiny));
    }
    const rlsP50 = { rls: p50(rlsTimes.rls), plain: p50(rlsTimes.plain) };
    console.log(
      `rls    (${RLS_RUNS} runs each)   RLS p50 ${ms(rlsP50.rls).padStart(10)}   no RLS p50 ${ms(rlsP50.plain).padStart(10)}`,
    );

    const ratio = report.large.rest / report.large.raw;
    const added = report.tiny.rest - report.tiny.raw;
    console.log('\nfigures (goals in brackets):');
    console.log(
      `  large aggregation:  REST / raw SQL = ${ratio.toFixed(3)}x   (<= 1.10x: ${ratio <= 1.1 ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  tiny query:         REST - raw SQL = ${added >= 0 ? '+' : ''}${ms(added)} p50   (<= +2 ms: ${added <= 2 ? 'met' : 'NOT met'})`,
    );
    console.log(`  cached widget read: ${ms(cached)} p50   (<= 2 ms: ${cached <= 2 ? 'met' : 'NOT met'})`);
    const missAdded = miss.rest - miss.raw;
    console.log(
      `  (a) miss, full body: REST - raw SQL = ${missAdded >= 0 ? '+' : ''}${ms(missAdded)} p50   (<= +1.0 ms: ${missAdded <= 1 ? 'met' : 'NOT met'})`,
    );
    console.log(`  (b) hit, full body:  ${ms(hit)} p50   (<= 0.5 ms: ${hit <= 0.5 ? 'met' : 'NOT met'})`);
    const rlsRatio = rlsP50.rls / rlsP50.plain;
    console.log(
      `  RLS widget read:    RLS / no RLS = ${rlsRatio.toFixed(3)}x   (<= 1.05x: ${rlsRatio <= 1.05 ? 'met' : 'NOT met'})`,
    );
    await client.end();
  } finally {
    agent.destroy();
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
