import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type pg from 'pg';
import { freePort } from '../../../db/embedded';
import { MSG } from '../../../server/etl/messages';
import { runById } from '../../../server/etl/store';
import type { NotificationView } from '../../../server/notifications/notifications';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok, type Rest, type RestResponse } from '../../support/rest';
import { exited, repoRoot } from '../../server/app/server-process';
import { createPgSource, sourceDb, type FlatData, type WidgetView } from '../widgets/world';
import { createObjectDataset, materialise, runExtract, waitForRun, type HistoryPage, type RunView } from './world';

/*
 * Runs interrupted in the middle of a real pull of a large PostgreSQL table: the server process killed with SIGKILL
 * while its pull waits at the source, then started again on the same database and DATA_DIR, and the source
 * connection terminated at the source while rows arrive. Each time the run ends failed with a clear message, its user is
 * notified, the previous extract answers the same widget data and no partial file is left.
 */

const ROWS = 4_000_000;
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
const table = uniq('x_big');
let datasetId: number;
let datasetName: string;
let widgetId: number;
const owner = () => cast.tokens.wsAdmin!;
const children: ChildProcess[] = [];

const partFiles = async () =>
  (await readdir(path.join(t.deps.config.dataDir, 'extracts')).catch(() => [] as string[])).filter((f) =>
    f.includes('.part'),
  );

/** REST over HTTP to a server process, in the shape of the in-process client (so world.ts helpers work on it). */
function httpRest(port: number): Rest {
  const call: Rest['call'] = async (method, url, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method: method as string,
      headers,
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* raw answers stay text */
    }
    return { status: res.status, body, headers: Object.fromEntries(res.headers) } as RestResponse;
  };
  return {
    get: (url, token) => call('GET', url, { token }),
    post: (url, body, token) => call('POST', url, { body, token }),
    put: (url, body, token) => call('PUT', url, { body, token }),
    delete: (url, token) => call('DELETE', url, { token }),
    call,
  };
}

/**
 * The server as `npm run dev` runs it (node with tsx, no build), on this file's database clone and DATA_DIR: the
 * same metadata, signing key and extracts the in-process app sees. Jobs start on it right after it listens.
 */
async function startProcess(): Promise<{ child: ChildProcess; api: Rest; output: () => string }> {
  const port = await freePort();
  const [{ name }] = (await t.deps.db.execute(sql`select current_database() as name`)).rows as { name: string }[];
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${name}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: url.toString(),
    DATA_DIR: t.deps.config.dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  delete env.ADMIN_PASSWORD;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/app/main.ts'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const until = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${out}`);
    const res = await fetch(`http://127.0.0.1:${port}/api/v3/api-docs`).catch(() => null);
    await res?.arrayBuffer();
    if (res?.status === 200) break;
    if (Date.now() > until) throw new Error(`server not ready: ${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, api: httpRest(port), output: () => out };
}

async function widgetRows(client: Rest) {
  return ok<FlatData>(await client.post(`/api/widget/${widgetId}/data`, {}, owner())).rows;
}

async function failedNotice(runId: number): Promise<NotificationView | undefined> {
  const page = ok<{ content: NotificationView[] }>(await api.get('/api/notifications?size=100', owner()));
  return page.content.find((n) => n.kind === 'extract_failed' && n.object_id === runId);
}

/** Waits until the run is loading rows and not done with them yet (rows arrive, the percentage is below 100). */
const midPull = (r: RunView) =>
  r.state !== 'queued' && (r.state !== 'running' || (r.rows_loaded > 0 && (r.progress ?? 100) < 100));

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  await db.query(`CREATE TABLE ${table} AS SELECT g AS id, (g % 1000) / 8.0 AS x FROM generate_series(1, ${ROWS}) g`);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetName = uniq('big');
  datasetId = await createObjectDataset(api, owner(), {
    name: datasetName,
    workspaceId: cast.workspaceId,
    sourceId: source,
    object: { name: 'big', schema: 'public', table },
    columns: [
      ['id', 'integer'],
      ['x', 'float'],
    ],
  });
  await materialise(api, owner(), datasetId);
  widgetId = ok<WidgetView>(
    await api.post(
      '/api/widget',
      {
        name: 'w',
        type: 'table',
        dataset_id: datasetId,
        rows: [],
        columns: [
          { id: 'n', sql: 'COUNT([big.id])' },
          { id: 's', sql: 'SUM([big.id])' },
        ],
      },
      owner(),
    ),
  ).id;
}, 120_000);
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const c of children) await exited(c);
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.end();
});

describe('a run interrupted mid-pull', () => {
  it('a server process killed with SIGKILL: after a restart the run is failed, the old extract answers', async () => {
    // The in-process app never starts its jobs in this test: only the server processes run extracts.
    const first = await startProcess();
    const done = await runExtract(first.api, owner(), datasetId, {}, 'succeeded', 90_000);
    expect(done.rows_loaded).toBe(ROWS);
    const before = await widgetRows(first.api);
    expect(before).toEqual([{ n: ROWS, s: (ROWS * (ROWS + 1)) / 2 }]);

    // Grow the source, so a completed second run would be seen in the widget.
    await db.query(`INSERT INTO ${table} VALUES (${ROWS + 1}, 1)`);
    // The table is locked while the second run starts, so its pull waits at the source with its partial file open:
    // on a quiet machine the whole table loads within one heartbeat, too fast to be caught between two of them.
    const lock = await sourceDb();
    let started: RunView;
    try {
      await lock.query('BEGIN');
      await lock.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      started = ok<RunView>(await first.api.post(`/api/datasets/${datasetId}/extracts`, {}, owner()));
      const running = await waitForRun(first.api, owner(), started.job_id, (r) => r.state !== 'queued', 60_000);
      expect(running.state).toBe('running');
      for (let i = 0; i < 300 && !(await partFiles()).length; i++) await new Promise((r) => setTimeout(r, 100));
      first.child.kill('SIGKILL');
      await exited(first.child);
    } finally {
      await lock.query('ROLLBACK');
      await lock.end();
    }
    expect(first.child.signalCode).toBe('SIGKILL');
    // Nobody moved the run: it is still running, with its partial files on disk.
    expect((await runById(t.deps.db, started.job_id))?.state).toBe('running');
    expect((await partFiles()).length).toBeGreaterThan(0);
    expect(await widgetRows(api)).toEqual(before);

    // Restarted once the heartbeat is old enough to tell a dead process from a slow one (30 s): the start sweeps.
    for (;;) {
      const run = (await runById(t.deps.db, started.job_id))!;
      if (Date.now() - run.heartbeatAt!.getTime() > 31_000) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const second = await startProcess();
    const failed = await waitForRun(second.api, owner(), started.job_id, undefined, 30_000);
    expect(failed.state).toBe('failed');
    expect(failed.error).toBe(MSG.lost);
    expect(failed.finished_at).toBeTruthy();
    const history = ok<HistoryPage>(await second.api.get(`/api/etl-jobs/${started.job_id}/history`, owner()));
    expect(history.content.at(-1)).toMatchObject({ state: 'failed', message: MSG.lost });
    expect(await failedNotice(started.job_id)).toMatchObject({
      title: `Синхронизация датасета «${datasetName}» не удалась`,
      message: MSG.lost,
      object_type: 'etl_job',
      read: false,
    });
    expect(await widgetRows(second.api)).toEqual(before);
    expect(await partFiles()).toEqual([]);

    // The dataset is free again: a new run on the restarted process loads the grown source.
    const again = await runExtract(second.api, owner(), datasetId, {}, 'succeeded', 90_000);
    expect(again.rows_loaded).toBe(ROWS + 1);
    second.child.kill('SIGTERM');
    expect(await exited(second.child), second.output()).toBe(0);
  }, 240_000);

  it('the source connection terminated at the source: failed with the reason, the old extract answers', async () => {
    // After the first test the extract holds ROWS + 1 rows; run alone, this test loads them first.
    if ((await api.post(`/api/widget/${widgetId}/data`, {}, owner())).status === 400) {
      await db.query(`INSERT INTO ${table} VALUES (${ROWS + 1}, 1)`);
      await runExtract(api, owner(), datasetId, {}, 'succeeded', 90_000);
    }
    const before = await widgetRows(api);
    expect(before).toEqual([{ n: ROWS + 1, s: ((ROWS + 1) * (ROWS + 2)) / 2 }]);
    await db.query(`INSERT INTO ${table} VALUES (${ROWS + 2}, 1)`);
    // A fast machine pulls the whole table between two progress reports. So the source stalls the pull partway: the
    // object becomes a view over the table that sleeps once the pull's COPY (not its count) has read a quarter of the
    // rows, whatever row a synchronised scan starts at. The rows read are counted in a session setting (the pull reads
    // in a read-only transaction, where a sequence cannot move).
    const read = `coalesce(nullif(current_setting('analytics_test.rows_read', true), ''), '0')::int + 1`;
    await db.query(`ALTER TABLE ${table} RENAME TO ${table}_rows`);
    await db.query(
      `CREATE VIEW ${table} AS SELECT id, x FROM ${table}_rows
       WHERE current_query() NOT LIKE 'COPY%'
          OR set_config('analytics_test.rows_read', (${read})::text, false)::int <> ${ROWS / 4}
          OR pg_sleep(120) IS NOT NULL`,
    );
    const terminateCopy = () =>
      db.query(
        `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
         WHERE query LIKE 'COPY%' AND query LIKE $1 AND pid <> pg_backend_pid()`,
        [`%${table}%`],
      );
    let started: RunView;
    try {
      started = ok<RunView>(await api.post(`/api/datasets/${datasetId}/extracts`, {}, owner()));
      // Progress while it pulls: rows loaded so far out of the source's count.
      const running = await waitForRun(api, owner(), started.job_id, midPull, 60_000);
      expect(running.state).toBe('running');
      expect(running.rows_total).toBe(ROWS + 2);
      expect(running.rows_loaded).toBeGreaterThan(0);
      expect(running.rows_loaded).toBeLessThan(ROWS + 2);
      expect(running.progress).toBeGreaterThanOrEqual(0);
      expect(running.progress).toBeLessThan(100);
      expect(running.progress).toBe(Math.floor((running.rows_loaded / (ROWS + 2)) * 100));
      expect((await terminateCopy()).rows).toEqual([{ killed: true }]);
    } finally {
      await terminateCopy();
      await db.query(`DROP VIEW ${table}`);
      await db.query(`ALTER TABLE ${table}_rows RENAME TO ${table}`);
    }
    const failed = await waitForRun(api, owner(), started.job_id);
    expect(failed.state).toBe('failed');
    expect(failed.error).toBe('Подключение к источнику прервано');
    const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${started.job_id}/history`, owner()));
    expect(history.content.at(-1)).toMatchObject({ state: 'failed', message: MSG.failed(failed.error!) });
    expect(await failedNotice(started.job_id)).toMatchObject({
      title: `Синхронизация датасета «${datasetName}» не удалась`,
      message: MSG.failed(failed.error!),
    });
    expect(await widgetRows(api)).toEqual(before);
    expect(await partFiles()).toEqual([]);
    const res = await api.post(`/api/etl-jobs/${started.job_id}/cancel`, undefined, owner());
    expect(failure(res).message).toBe('Запуск уже завершён (состояние failed): отменять нечего');
  }, 120_000);
});
