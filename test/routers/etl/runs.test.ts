import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { extractRuns } from '../../../db/schema/extracts';
import { MSG } from '../../../server/etl/messages';
import { sweepLostRuns } from '../../../server/etl/run-job';
import type { NotificationView } from '../../../server/notifications/notifications';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { DatasetDetails } from '../datasets/helpers';
import { createPgSource, sourceDb, type FlatData, type WidgetView } from '../widgets/world';
import { materialise, runExtract, waitForRun, type HistoryPage, type RunView } from './world';

/*
 * The life of a run against a slow source (a saved SQL query that sleeps first, as long as a control table says):
 * readers keep the previous extract while a run pulls, a second run of the dataset is refused, a cancel stops the
 * query at the source, a failure leaves the previous extract in service and no partial file behind, and a run whose
 * process died is failed by the sweep.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
const names = { nums: uniq('x_nums'), ctl: uniq('x_ctl') };
let datasetId: number;
const datasetName = uniq('slow');
let widgetId: number;
const owner = () => cast.tokens.wsAdmin!;

const setSleep = (seconds: number) => db.query(`UPDATE ${names.ctl} SET sleep_s = $1`, [seconds]);
async function countSeen(): Promise<number> {
  const data = ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, {}, owner()));
  return Number((data.rows[0] as { n: number }).n);
}
/**
 * Backends of the source running the dataset's query: a cursor's FETCH does not show the query text, but its
 * transaction holds a lock on the control table the query reads until it ends.
 */
async function sourceQueriesRunning(): Promise<number> {
  const r = await db.query(
    `SELECT count(DISTINCT a.pid)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.relation = $1::regclass AND a.state = 'active' AND a.pid <> pg_backend_pid()`,
    [names.ctl],
  );
  return r.rows[0].n as number;
}
async function failedNotice(runId: number): Promise<NotificationView | undefined> {
  const page = ok<{ content: NotificationView[] }>(await api.get('/api/notifications?size=100', owner()));
  return page.content.find((n) => n.kind === 'extract_failed' && n.object_id === runId);
}
const partFiles = async () =>
  (await readdir(path.join(t.deps.config.dataDir, 'extracts')).catch(() => [] as string[])).filter((f) =>
    f.includes('.part'),
  );

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  await db.query(`CREATE TABLE ${names.nums} (n int)`);
  await db.query(`INSERT INTO ${names.nums} SELECT g FROM generate_series(1, 100) g`);
  await db.query(`CREATE TABLE ${names.ctl} (sleep_s float8)`);
  await db.query(`INSERT INTO ${names.ctl} VALUES (0)`);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const created = ok<DatasetDetails>(
    await api.post(
      '/api/dataset',
      { name: datasetName, workspace_id: cast.workspaceId, live: true, data_source_ids: [source] },
      owner(),
    ),
  );
  datasetId = created.id;
  const sql = `SELECT n FROM ${names.nums} CROSS JOIN (SELECT pg_sleep((SELECT sleep_s FROM ${names.ctl}))) AS pause`;
  ok(
    await api.put(
      `/api/dataset/${datasetId}/schema`,
      {
        objects: [{ id: -1, data_source_id: source, name: 'nums', kind: 'sql', sql }],
        fields: [{ id: -2, object_id: -1, name: 'n', column: 'n', primitive_type: 'integer' }],
        relations: [],
        hierarchies: [],
        filters: [],
        parameters: [],
      },
      owner(),
    ),
  );
  await materialise(api, owner(), datasetId);
  widgetId = ok<WidgetView>(
    await api.post(
      '/api/widget',
      { name: 'w', type: 'table', dataset_id: datasetId, rows: [], columns: [{ id: 'n', sql: 'COUNT([nums.n])' }] },
      owner(),
    ),
  ).id;
  await runExtract(api, owner(), datasetId);
});
afterAll(async () => {
  await db.query(`DROP TABLE IF EXISTS ${names.nums}`);
  await db.query(`DROP TABLE IF EXISTS ${names.ctl}`);
  await db.end();
});

describe('a run against a slow source', () => {
  it('readers see the previous extract while it runs; a second run is refused; cancel stops the source query', async () => {
    expect(await countSeen()).toBe(100);
    await db.query(`INSERT INTO ${names.nums} SELECT g FROM generate_series(101, 150) g`);
    await setSleep(60);
    const started = ok<RunView>(await api.post(`/api/datasets/${datasetId}/extracts`, {}, owner()));
    expect(started.state).toBe('queued');
    await waitForRun(api, owner(), started.job_id, (r) => r.state === 'running');
    // The pull is under way at the source.
    const deadline = Date.now() + 10_000;
    while ((await sourceQueriesRunning()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await sourceQueriesRunning()).toBe(1);

    expect(await countSeen()).toBe(100);
    const second = await api.post(`/api/datasets/${datasetId}/extracts`, {}, owner());
    expect(second.status).toBe(400);
    expect(failure(second).message).toContain(String(started.job_id));

    const at = Date.now();
    const cancelled = ok<RunView>(await api.post(`/api/etl-jobs/${started.job_id}/cancel`, undefined, owner()));
    expect(cancelled.state).toBe('cancelled');
    expect(Date.now() - at).toBeLessThan(8_000);
    expect(await sourceQueriesRunning()).toBe(0);
    expect(await countSeen()).toBe(100);
    expect(await partFiles()).toEqual([]);

    const again = await api.post(`/api/etl-jobs/${started.job_id}/cancel`, undefined, owner());
    expect(again.status).toBe(400);
    expect(failure(again).message).toMatch(/уже завершён/);
    const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${started.job_id}/history`, owner()));
    expect(history.content.map((s) => s.state).at(-1)).toBe('cancelled');
    expect(history.content.map((s) => s.message)).toContain('Запрошена отмена');

    await setSleep(0);
    await runExtract(api, owner(), datasetId);
    expect(await countSeen()).toBe(150);
  });

  it('a queued run can be cancelled before it starts', async () => {
    // Cancelled at once, whether the worker took it already or not.
    const started = ok<RunView>(await api.post(`/api/datasets/${datasetId}/extracts`, {}, owner()));
    const res = ok<RunView>(await api.post(`/api/etl-jobs/${started.job_id}/cancel`, undefined, owner()));
    expect(res.state).toBe('cancelled');
    const done = await waitForRun(api, owner(), started.job_id);
    expect(done.state).toBe('cancelled');
  });

  it('a schema change at the source fails the run with the source message; the previous extract stays', async () => {
    await db.query(`ALTER TABLE ${names.nums} RENAME COLUMN n TO m`);
    try {
      const run = await runExtract(api, owner(), datasetId, {}, 'failed');
      expect(run.error).toBe(
        'Структура данных в источнике изменилась (нет таблицы или столбца, которые читает датасет): column "n" does not exist',
      );
      expect(run.finished_at).toBeTruthy();
      expect(await failedNotice(run.job_id)).toMatchObject({
        title: `Синхронизация датасета «${datasetName}» не удалась`,
        message: MSG.failed(run.error!),
        object_type: 'etl_job',
      });
      expect(await countSeen()).toBe(150);
      expect(await partFiles()).toEqual([]);
    } finally {
      await db.query(`ALTER TABLE ${names.nums} RENAME COLUMN m TO n`);
    }
  });

  it('a run whose process died (no heartbeat) is failed by the sweep and its partial file removed', async () => {
    const [lost] = await t.deps.db
      .insert(extractRuns)
      .values({
        datasetId,
        mode: 'full',
        state: 'running',
        trigger: 'manual',
        startedAt: new Date(Date.now() - 120_000),
        heartbeatAt: new Date(Date.now() - 120_000),
      })
      .returning();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(t.deps.config.dataDir, 'extracts', `dataset-${datasetId}.duckdb.${lost.id}.part`), 'x');
    await sweepLostRuns(t.deps);
    const run = ok<RunView>(await api.get(`/api/etl-jobs/${lost.id}`, owner()));
    expect(run.state).toBe('failed');
    expect(run.error).toBe(MSG.lost);
    expect(await failedNotice(lost.id)).toMatchObject({
      title: `Синхронизация датасета «${datasetName}» не удалась`,
      message: MSG.lost,
    });
    expect(await partFiles()).toEqual([]);
    expect(await countSeen()).toBe(150);
  });
});
