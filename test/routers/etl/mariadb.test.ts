import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cron } from 'croner';
import mysql from 'mysql2/promise';
import { dataSources } from '../../../db/schema/data-sources';
import { MSG } from '../../../server/etl/messages';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { mysqlSettings } from '../../adapters/sources/servers';
import type { DatasetDetails } from '../datasets/helpers';
import type { FlatData, WidgetView } from '../widgets/world';
import {
  createObjectDataset,
  materialise,
  runExtract,
  waitForRun,
  type ExtractionView,
  type HistoryPage,
  type RunPage,
  type RunView,
} from './world';

/*
 * A materialised dataset on a real MariaDB source: the extract is pulled through the MySQL connector's stream, and
 * the same widgets answer the same rows live and on the extract (decimals exact, dates, NULLs, quotes, commas and
 * line breaks in text). The other extract operations on the same source: the 400 before the first synchronisation,
 * the run's history, extraction settings with a cron schedule in a time zone, incremental mode, and a cancel that
 * stops the query at the MariaDB server.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let conn: mysql.Connection;
const table = uniq('x_orders');
const ctl = uniq('x_ctl');
let sourceId: number;
let liveId: number;
let matId: number;
const owner = () => cast.tokens.wsAdmin!;

async function datasetOn(sourceId: number): Promise<number> {
  return createObjectDataset(api, owner(), {
    name: uniq('m'),
    workspaceId: cast.workspaceId,
    sourceId,
    object: { name: 'orders', schema: 'test', table },
    columns: [
      ['id', 'integer'],
      ['city', 'string'],
      ['amount', 'float'],
      ['placed', 'date'],
      ['at', 'datetime'],
    ],
  });
}

async function fieldId(datasetId: number, name: string): Promise<number> {
  const details = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner()));
  return details.fields.find((f) => f.name === name)!.id;
}
const setSleep = (seconds: number) => conn.query(`UPDATE ${ctl} SET sleep_s = ?`, [seconds]);
/** Statements of other sessions at the MariaDB server that read the control table (the slow dataset's query). */
async function sourceQueriesRunning(): Promise<number> {
  const [rows] = await conn.query(
    `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID()`,
    [`%${ctl}%`],
  );
  return Number((rows as { n: number }[])[0].n);
}
const partFiles = async () =>
  (await readdir(path.join(t.deps.config.dataDir, 'extracts')).catch(() => [] as string[])).filter((f) =>
    f.includes('.part'),
  );
async function widgetOn(datasetId: number, config: Record<string, unknown>): Promise<number> {
  return ok<WidgetView>(await api.post('/api/widget', { name: 'w', dataset_id: datasetId, ...config }, owner())).id;
}
const rowsOf = async (widgetId: number) =>
  ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, { page_size: 1000 }, owner())).rows;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  const s = mysqlSettings();
  conn = await mysql.createConnection({ host: s.host, port: s.port, user: s.username, database: 'test' });
  await conn.query(
    `CREATE TABLE ${table} (id int, city varchar(100), amount decimal(12,2), placed date, at datetime(3)) DEFAULT CHARSET = utf8mb4`,
  );
  const cities = ['Москва', 'Казань', 'Нью "Йорк"', 'a,b', 'строка\nдва', '', null];
  const rows = Array.from({ length: 200 }, (_, i) => [
    i + 1,
    cities[i % cities.length],
    i % 13 === 0 ? null : ((i * 37) % 1000) / 100 + 0.05,
    `2024-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 27) + 1).padStart(2, '0')}`,
    `2024-03-0${(i % 9) + 1} 1${i % 10}:0${i % 6}:00.${String(i % 1000).padStart(3, '0')}`,
  ]);
  await conn.query(`INSERT INTO ${table} VALUES ?`, [rows]);
  await conn.query(`CREATE TABLE ${ctl} (sleep_s double)`);
  await conn.query(`INSERT INTO ${ctl} VALUES (0)`);
  const [row] = await t.deps.db
    .insert(dataSources)
    .values({
      name: uniq('maria'),
      type: 'mysql',
      workspaceId: cast.workspaceId,
      authorId: cast.users.wsAdmin.id,
      settings: { host: s.host, port: s.port, username: s.username, db: 'test' },
    })
    .returning({ id: dataSources.id });
  sourceId = row.id;
  liveId = await datasetOn(row.id);
  matId = await datasetOn(row.id);
  await materialise(api, owner(), matId);
});
afterAll(async () => {
  await conn.query(`DROP TABLE IF EXISTS ${table}`);
  await conn.query(`DROP TABLE IF EXISTS ${ctl}`);
  await conn.end();
});

const WIDGETS: Record<string, Record<string, unknown>> = {
  byCity: {
    type: 'table',
    rows: [{ id: 'c', sql: '[orders.city]' }],
    columns: [
      { id: 's', sql: 'SUM([orders.amount])' },
      { id: 'n', sql: 'COUNT([orders.id])' },
      { id: 'mx', sql: 'MAX([orders.at])' },
    ],
    sorts: [{ field_id: 'c', direction: 'asc' }],
  },
  rows: {
    type: 'table',
    rows: [
      { id: 'id', sql: '[orders.id]' },
      { id: 'c', sql: '[orders.city]' },
      { id: 'a', sql: '[orders.amount]' },
      { id: 'p', sql: '[orders.placed]' },
      { id: 't', sql: '[orders.at]' },
    ],
    columns: [],
    sorts: [{ field_id: 'id', direction: 'asc' }],
  },
  byMonth: {
    type: 'table',
    rows: [{ id: 'm', sql: 'MONTH([orders.placed])' }],
    columns: [{ id: 's', sql: 'SUM([orders.amount])' }],
    sorts: [{ field_id: 'm', direction: 'asc' }],
  },
};

describe('a materialised dataset on MariaDB', () => {
  it('before the first synchronisation a data request is a 400 saying one is needed', async () => {
    const w = await widgetOn(matId, WIDGETS.byCity);
    for (const res of [
      await api.post(`/api/widget/${w}/data`, {}, owner()),
      await api.post(`/api/dataset/${matId}/preview`, {}, owner()),
    ]) {
      expect(res.status).toBe(400);
      expect(failure(res).message).toBe(
        `Датасет материализован, а его данные ещё не загружены: нужна первая синхронизация (POST /api/datasets/${matId}/extracts)`,
      );
    }
  });

  it('is pulled through the MySQL connector and answers the same widgets as live', async () => {
    const run = await runExtract(api, owner(), matId);
    expect(run.rows_loaded).toBe(200);
    expect(run.rows_total).toBe(200);
    expect(run.progress).toBe(100);
    const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${run.job_id}/history`, owner()));
    expect(history.content.map((s) => [s.state, s.message])).toEqual([
      ['queued', 'Запуск поставлен в очередь'],
      ['running', MSG.started],
      ['running', 'Объект «orders»: загружено строк 200'],
      ['succeeded', MSG.succeeded(200)],
    ]);
    expect(ok<RunPage>(await api.get(`/api/datasets/${matId}/extracts`, owner())).content[0].job_id).toBe(run.job_id);
    for (const [name, config] of Object.entries(WIDGETS)) {
      const ids = [];
      for (const ds of [liveId, matId])
        ids.push(ok<WidgetView>(await api.post('/api/widget', { name: 'w', dataset_id: ds, ...config }, owner())).id);
      const [a, b] = await Promise.all(
        ids.map(async (w) => ok<FlatData>(await api.post(`/api/widget/${w}/data`, { page_size: 1000 }, owner())).rows),
      );
      expect(a.length, name).toBeGreaterThan(0);
      expect(b, name).toEqual(a);
    }
  });
});

describe('extraction settings and incremental mode on MariaDB', () => {
  it('a cron schedule in a time zone and incremental mode are kept; pg-boss holds the schedule', async () => {
    const idField = await fieldId(matId, 'id');
    const body = {
      mode: 'incremental',
      incremental_field_id: idField,
      schedule: '15 2 * * *',
      timezone: 'Asia/Yekaterinburg',
      enabled: true,
    };
    const saved = ok<ExtractionView>(await api.put(`/api/dataset/${matId}/extraction`, body, owner()));
    const read = ok<ExtractionView>(await api.get(`/api/dataset/${matId}/extraction`, cast.tokens.viewer));
    expect(read).toEqual(saved);
    expect(read).toMatchObject({ dataset_id: matId, ...body });
    // 02:15 in Yekaterinburg (UTC+5) is 21:15 UTC.
    const next = new Date(read.next_run_at!);
    expect([next.getUTCHours(), next.getUTCMinutes()]).toEqual([21, 15]);
    expect(next.getTime()).toBe(new Cron('15 2 * * *', { timezone: 'Asia/Yekaterinburg' }).nextRun()!.getTime());
    expect(read.last_run?.state).toBe('succeeded');
    const boss = await t.deps.jobs.start();
    const schedules = await boss.getSchedules('extract-schedule', `dataset-${matId}`);
    expect(schedules.map((x) => [x.cron, x.timezone])).toEqual([['15 2 * * *', 'Asia/Yekaterinburg']]);
    const bad = await api.put(`/api/dataset/${matId}/extraction`, { ...body, schedule: '* * *' }, owner());
    expect(bad.status).toBe(422);
    expect(Object.keys(failure(bad).errors ?? {})).toEqual(['schedule']);
  });

  it('an incremental run adds only the rows above the extract maximum; a full run reloads', async () => {
    await conn.query(
      `INSERT INTO ${table} VALUES (201, 'Тверь', 1.25, '2025-01-01', '2025-01-01 00:00:00'), (202, 'Тверь', 2.50, '2025-01-02', '2025-01-02 00:00:00')`,
    );
    // A change below the maximum: an incremental run does not see it, a full one does.
    await conn.query(`UPDATE ${table} SET city = 'Изменено' WHERE id = 1`);
    const run = await runExtract(api, owner(), matId);
    expect(run).toMatchObject({ mode: 'incremental', rows_loaded: 2 });
    const w = await widgetOn(matId, WIDGETS.rows);
    const rows = (await rowsOf(w)) as { id: number; c: string | null; a: string | number | null }[];
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 202 }, (_, i) => i + 1));
    expect(rows[0].c).toBe('Москва');
    expect(rows.slice(-2).map((r) => r.c)).toEqual(['Тверь', 'Тверь']);

    const full = await runExtract(api, owner(), matId, { mode: 'full' });
    expect(full).toMatchObject({ mode: 'full', rows_loaded: 202 });
    // Another page size than the first test's: the live dataset's cached answer of then is not reused.
    const liveWidget = await widgetOn(liveId, WIDGETS.rows);
    const liveRows = ok<FlatData>(await api.post(`/api/widget/${liveWidget}/data`, { page_size: 500 }, owner())).rows;
    const again = await rowsOf(w);
    expect(again).toEqual(liveRows);
    expect((again[0] as { c: string }).c).toBe('Изменено');
  });
});

describe('a schema change at the MariaDB source', () => {
  it('fails the run saying the structure changed; the previous extract stays', async () => {
    const w = await widgetOn(matId, { type: 'table', rows: [], columns: [{ id: 'n', sql: 'COUNT([orders.id])' }] });
    const before = await rowsOf(w);
    await conn.query(`ALTER TABLE ${table} RENAME COLUMN city TO town`);
    try {
      const run = await runExtract(api, owner(), matId, { mode: 'full' }, 'failed');
      expect(run.error).toBe(
        "Структура данных в источнике изменилась (нет таблицы или столбца, которые читает датасет): Unknown column 'city' in 'SELECT'",
      );
      expect(await rowsOf(w)).toEqual(before);
      expect(await partFiles()).toEqual([]);
    } finally {
      await conn.query(`ALTER TABLE ${table} RENAME COLUMN town TO city`);
    }
  });
});

describe('cancel on MariaDB', () => {
  it('stops the query at the MariaDB server; the previous extract stays in service', async () => {
    const sql = `SELECT o.id FROM ${table} o CROSS JOIN (SELECT SLEEP((SELECT sleep_s FROM ${ctl})) AS z) AS pause`;
    const slowId = await createObjectDataset(api, owner(), {
      name: uniq('slow'),
      workspaceId: cast.workspaceId,
      sourceId,
      object: { name: 'slow', kind: 'sql', sql },
      columns: [['id', 'integer']],
    });
    await materialise(api, owner(), slowId);
    const w = await widgetOn(slowId, { type: 'table', rows: [], columns: [{ id: 'n', sql: 'COUNT([slow.id])' }] });
    const [[{ n: sourceRows }]] = (await conn.query(`SELECT COUNT(*) AS n FROM ${table}`)) as unknown as [
      { n: number }[],
    ];
    await runExtract(api, owner(), slowId);
    expect(await rowsOf(w)).toEqual([{ n: Number(sourceRows) }]);

    await setSleep(60);
    try {
      const started = ok<RunView>(await api.post(`/api/datasets/${slowId}/extracts`, {}, owner()));
      await waitForRun(api, owner(), started.job_id, (r) => r.state !== 'queued');
      const deadline = Date.now() + 10_000;
      while ((await sourceQueriesRunning()) === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(await sourceQueriesRunning()).toBe(1);

      const at = Date.now();
      const cancelled = ok<RunView>(await api.post(`/api/etl-jobs/${started.job_id}/cancel`, undefined, owner()));
      expect(cancelled.state).toBe('cancelled');
      expect(Date.now() - at).toBeLessThan(8_000);
      // KILL QUERY ends the statement at once: nothing of it is left at the server.
      const gone = Date.now() + 5_000;
      while ((await sourceQueriesRunning()) > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
      expect(await sourceQueriesRunning()).toBe(0);
      const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${started.job_id}/history`, owner()));
      expect(history.content.slice(-2).map((x) => [x.state, x.message])).toEqual([
        ['running', MSG.cancelRequested],
        ['cancelled', MSG.cancelled],
      ]);
      expect(await rowsOf(w)).toEqual([{ n: Number(sourceRows) }]);
      expect(await partFiles()).toEqual([]);
    } finally {
      await setSleep(0);
    }
  });
});
