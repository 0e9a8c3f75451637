import { afterAll, beforeAll, expect, it } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import { createObjectDataset } from '../etl/world';
import { createPgSource, createSourceTables, dropSourceTables, makeSales, sourceDb } from '../widgets/world';
import {
  buildRollup,
  rollupRows,
  servable,
  waitForBuild,
  waitForBuildState,
  type BuildHistory,
  type BuildView,
  type RollupView,
} from './world';

/*
 * Cancelling a RUNNING build over REST: a live dataset on a PostgreSQL view whose query first sleeps as long as a gate
 * row says (one InitPlan, so the sleep is the source query's own). A build is caught while its query runs at the
 * source, cancelled: the build ends cancelled within seconds, its query is gone from pg_stat_activity (stopped at the
 * source, not only abandoned by the client), the previous build still serves its rows, and the next build succeeds.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
const gate = uniq('r_gate');
const sleeper = uniq('r_sleeper');
const view = uniq('r_slow_sales');
let datasetId: number;
let rollup: RollupView;
const owner = () => cast.tokens.wsAdmin!;
const rollupPath = () => `/api/dataset/${datasetId}/rollups/${rollup.id}`;

/** Seconds the view's query sleeps before its first row. */
const setDelay = (seconds: number) => db.query(`UPDATE ${gate} SET delay = $1`, [seconds]);

/**
 * Backends (other than ours) whose transaction reads the view. The build reads through a cursor, so the active
 * statement is a FETCH that does not name the view: its lock on the view says whose query it is.
 */
async function sourceBackends(): Promise<{ pid: number; state: string; query: string }[]> {
  const r = await db.query(
    `SELECT DISTINCT a.pid, a.state, a.query FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
      WHERE a.pid <> pg_backend_pid() AND l.relation = $1::regclass`,
    [view],
  );
  return r.rows;
}

async function waitForSourceQuery(timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const active = (await sourceBackends()).filter((b) => b.state === 'active');
    if (active.length > 0) return active;
    if (Date.now() > deadline) throw new Error(`no query of ${view} became active at the source`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(120));
  await db.query(`CREATE TABLE ${gate} (delay float8 NOT NULL)`);
  await db.query(`INSERT INTO ${gate} VALUES (0)`);
  await db.query(
    `CREATE FUNCTION ${sleeper}() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
       BEGIN PERFORM pg_sleep((SELECT delay FROM ${gate})); RETURN true; END $$`,
  );
  // The scalar subquery is an InitPlan: the sleep runs once, before the first row, whatever the query around it.
  await db.query(`CREATE VIEW ${view} AS SELECT s.* FROM ${tables.sales} s WHERE (SELECT ${sleeper}())`);
  const sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = await createObjectDataset(api, owner(), {
    name: uniq('slow'),
    workspaceId: cast.workspaceId,
    sourceId,
    object: { name: 'sales', schema: 'public', table: view },
    columns: [
      ['id', 'integer'],
      ['product', 'string'],
      ['amount', 'float'],
      ['qty', 'integer'],
      ['sold_on', 'date'],
    ],
  });
  const details = ok<{ fields: { id: number; name: string }[] }>(await api.get(`/api/dataset/${datasetId}`, owner()));
  const f = (name: string) => details.fields.find((x) => x.name === name)!.id;
  rollup = ok<RollupView>(
    await api.post(
      `/api/dataset/${datasetId}/rollups`,
      {
        name: 'по продуктам и месяцам',
        dimensions: [{ field_id: f('product') }, { field_id: f('sold_on'), granularity: 'month' }],
        measures: [
          { field_id: f('amount'), aggregation: 'SUM' },
          { field_id: f('qty'), aggregation: 'AVG' },
        ],
        refresh: { mode: 'schedule', cron: '0 5 * * *', timezone: 'UTC' },
      },
      owner(),
    ),
  );
});
afterAll(async () => {
  // A query the test failed to cancel would hold its lock on the view and keep DROP VIEW waiting.
  await db.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE pid <> pg_backend_pid() AND relation = $1::regclass`,
    [view],
  );
  await db.query(`DROP VIEW IF EXISTS ${view}`);
  await db.query(`DROP FUNCTION IF EXISTS ${sleeper}()`);
  await db.query(`DROP TABLE IF EXISTS ${gate}`);
  await dropSourceTables(db, tables);
  await db.end();
});

it('cancels a running build: cancelled within seconds, its query stopped at the source, the previous build kept', async () => {
  const first = await buildRollup(api, owner(), datasetId, rollup.id);
  const before = (await servable(t.deps, datasetId)).find((s) => s.definition.id === rollup.id)!;
  const rows = await rollupRows(t.deps, datasetId, rollup.id);
  expect(rows.length).toBe(first.rows);

  await setDelay(60);
  const started = ok<BuildView>(await api.post(`${rollupPath()}/build`, {}, owner()));
  await waitForBuildState(api, owner(), datasetId, rollup.id, started.build_id, 'running');
  // Running at the source, not only in the build's state: the cancel must reach PostgreSQL.
  await waitForSourceQuery();

  const asked = Date.now();
  const cancel = await api.post(`${rollupPath()}/builds/${started.build_id}/cancel`, {}, owner());
  expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
  const ended = await waitForBuild(api, owner(), datasetId, rollup.id, started.build_id, 10_000);
  const took = Date.now() - asked;
  expect(ended).toMatchObject({ state: 'cancelled', rows: null });
  expect(ended.finished_at).not.toBeNull();
  expect(took).toBeLessThan(5_000);
  expect(ok<BuildView>(cancel).state).toBe('cancelled'); // the operation waits for the build to end
  // Not even an idle transaction of it is left: the cursor's transaction ended with the cancel.
  expect(await sourceBackends()).toEqual([]);

  const history = ok<BuildHistory>(await api.get(`${rollupPath()}/builds/${started.build_id}/history`, owner()));
  expect(history.content.map((s) => s.state).at(-1)).toBe('cancelled');

  // The previous build stays in service, the same load with the same rows.
  const after = (await servable(t.deps, datasetId)).find((s) => s.definition.id === rollup.id)!;
  expect(after.load.id).toBe(before.load.id);
  expect(await rollupRows(t.deps, datasetId, rollup.id)).toEqual(rows);
  const shown = ok<RollupView>(await api.get(rollupPath(), owner()));
  expect(shown).toMatchObject({ fresh: true, rows: first.rows, last_build: { state: 'cancelled' } });

  // And the next build runs and replaces it.
  await setDelay(0);
  const next = await buildRollup(api, owner(), datasetId, rollup.id);
  expect(next.rows).toBe(first.rows);
  const replaced = (await servable(t.deps, datasetId)).find((s) => s.definition.id === rollup.id)!;
  expect(replaced.load.id).not.toBe(before.load.id);
  expect(await rollupRows(t.deps, datasetId, rollup.id)).toEqual(rows);
});
