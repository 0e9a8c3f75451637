import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type pg from 'pg';
import { Cron } from 'croner';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { cronProblem, nextRunAt } from '../../../server/jobs/jobs';
import { EXTRACT_SCHEDULE } from '../../../server/etl/run-job';
import type { NotificationView } from '../../../server/notifications/notifications';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
} from '../widgets/world';
import { materialise, runExtract, waitForRun, type ExtractionView, type HistoryPage, type RunPage } from './world';

/*
 * Extraction settings (GET/PUT /api/dataset/{id}/extraction) and the bad input of every extract operation: clear
 * 4xx answers with the field named, never a 500.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let live: { id: number; fieldId: (name: string) => number };
let mat: { id: number; fieldId: (name: string) => number };
const owner = () => cast.tokens.wsAdmin!;
const path = () => `/api/dataset/${mat.id}/extraction`;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(10));
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const opts = { workspaceId: cast.workspaceId, sourceId: source, tables };
  live = await createSalesDataset(api, owner(), opts);
  mat = await createSalesDataset(api, owner(), opts);
  await materialise(api, owner(), mat.id);
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('GET/PUT /api/dataset/{id}/extraction', () => {
  it('answers the defaults before anything is set', async () => {
    expect(ok<ExtractionView>(await api.get(path(), cast.tokens.viewer))).toEqual({
      dataset_id: mat.id,
      mode: 'full',
      incremental_field_id: null,
      schedule: null,
      timezone: 'UTC',
      enabled: false,
      next_run_at: null,
      last_run: null,
    });
  });

  it('a schedule in a time zone: the next run is computed in that zone and pg-boss holds the schedule', async () => {
    const saved = ok<ExtractionView>(
      await api.put(path(), { schedule: '30 3 * * 1-5', timezone: 'Asia/Vladivostok', enabled: true }, owner()),
    );
    expect(saved).toMatchObject({ schedule: '30 3 * * 1-5', timezone: 'Asia/Vladivostok', enabled: true });
    const next = new Date(saved.next_run_at!);
    // 03:30 in Vladivostok (UTC+10) is 17:30 UTC the day before, on a weekday there.
    expect(next.getUTCHours()).toBe(17);
    expect(next.getUTCMinutes()).toBe(30);
    const local = new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Vladivostok', weekday: 'short' }).format(next);
    expect(['Mon', 'Tue', 'Wed', 'Thu', 'Fri']).toContain(local);
    expect(next.getTime()).toBe(new Cron('30 3 * * 1-5', { timezone: 'Asia/Vladivostok' }).nextRun()!.getTime());
    expect(nextRunAt('0 0 1 1 *', 'Europe/Moscow', new Date('2026-06-01T00:00:00Z'))!.toISOString()).toBe(
      '2026-12-31T21:00:00.000Z',
    );
    const boss = await t.deps.jobs.start();
    const schedules = await boss.getSchedules('extract-schedule', `dataset-${mat.id}`);
    expect(schedules.map((s) => [s.cron, s.timezone])).toEqual([['30 3 * * 1-5', 'Asia/Vladivostok']]);

    // Disabled: no next run, no pg-boss schedule.
    const off = ok<ExtractionView>(
      await api.put(path(), { schedule: '30 3 * * 1-5', timezone: 'Asia/Vladivostok', enabled: false }, owner()),
    );
    expect(off.next_run_at).toBeNull();
    expect(await boss.getSchedules('extract-schedule', `dataset-${mat.id}`)).toEqual([]);
  });

  it('incremental mode keeps its field; a viewer may read but not change the settings', async () => {
    const saved = ok<ExtractionView>(
      await api.put(path(), { mode: 'incremental', incremental_field_id: mat.fieldId('id') }, owner()),
    );
    expect(saved).toMatchObject({ mode: 'incremental', incremental_field_id: mat.fieldId('id') });
    expect(ok<ExtractionView>(await api.get(path(), cast.tokens.viewer)).mode).toBe('incremental');
    expect((await api.put(path(), { mode: 'full' }, cast.tokens.viewer)).status).toBe(403);
    ok(await api.put(path(), { mode: 'full' }, owner()));
  });
});

describe('bad input: clear 4xx, never 500', () => {
  const errorsOf = async (body: unknown) => {
    const res = await api.put(path(), body, owner());
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    return failure(res).errors ?? {};
  };

  it('an invalid cron expression or an unknown time zone names the field', async () => {
    expect(Object.keys(await errorsOf({ schedule: '61 * * * *', enabled: true }))).toEqual(['schedule']);
    expect(Object.keys(await errorsOf({ schedule: 'every day', enabled: true }))).toEqual(['schedule']);
    expect(Object.keys(await errorsOf({ schedule: '0 3 * * *', timezone: 'Mars/Olympus' }))).toEqual(['timezone']);
    expect(Object.keys(await errorsOf({ schedule: '0\u0000 3 * * *' }))).toEqual(['schedule']);
    expect(Object.keys(await errorsOf({ timezone: 'Europe/\u0000Moscow' }))).toEqual(['timezone']);
  });

  it('a field of another dataset, a calculated field or incremental mode without a field', async () => {
    expect(await errorsOf({ mode: 'incremental', incremental_field_id: live.fieldId('id') })).toHaveProperty(
      'incrementalFieldId',
    );
    expect(await errorsOf({ mode: 'incremental', incremental_field_id: mat.fieldId('Выручка') })).toHaveProperty(
      'incrementalFieldId',
    );
    expect(await errorsOf({ mode: 'incremental' })).toHaveProperty('incrementalFieldId');
    expect(await errorsOf({ mode: 'sometimes' })).toHaveProperty('mode');
    expect(await errorsOf({ incremental_field_id: 99_999_999_999 })).toHaveProperty('incrementalFieldId');
  });

  it('unknown datasets and runs are 404; a live dataset is a 400; huge ids are a 422', async () => {
    expect((await api.get('/api/dataset/2147483000/extraction', owner())).status).toBe(404);
    expect((await api.post('/api/datasets/2147483000/extracts', {}, owner())).status).toBe(404);
    expect((await api.get('/api/datasets/2147483000/extracts', owner())).status).toBe(404);
    expect((await api.get('/api/etl-jobs/2147483000', owner())).status).toBe(404);
    expect((await api.get('/api/etl-jobs/2147483000/history', owner())).status).toBe(404);
    expect((await api.post('/api/etl-jobs/2147483000/cancel', undefined, owner())).status).toBe(404);
    for (const res of [
      await api.post(`/api/datasets/${live.id}/extracts`, {}, owner()),
      await api.get(`/api/dataset/${live.id}/extraction`, owner()),
      await api.put(`/api/dataset/${live.id}/extraction`, { mode: 'full' }, owner()),
    ]) {
      expect(res.status).toBe(400);
      expect(failure(res).message).toMatch(/live = true/);
    }
    for (const url of [
      '/api/etl-jobs/99999999999999999999',
      '/api/etl-jobs/-1',
      '/api/etl-jobs/abc/history',
      '/api/datasets/99999999999/extracts',
      '/api/dataset/1e3/extraction',
    ]) {
      const res = await api.get(url, owner());
      expect(res.status, url).toBe(422);
    }
    expect((await api.post(`/api/datasets/${mat.id}/extracts`, { mode: 'bulk' }, owner())).status).toBe(422);
    expect((await api.post(`/api/datasets/${mat.id}/extracts`, { extra: 1 }, owner())).status).toBe(422);
    expect((await api.get(`/api/datasets/${mat.id}/extracts?size=100000`, owner())).status).toBe(422);
  });

  it('incremental run without a field is a 422 naming mode; a started run is listed', async () => {
    const res = await api.post(`/api/datasets/${mat.id}/extracts`, { mode: 'incremental' }, owner());
    expect(res.status).toBe(422);
    expect(failure(res).errors).toHaveProperty('mode');
    const run = await runExtract(api, owner(), mat.id);
    expect(ok<ExtractionView>(await api.get(path(), owner())).last_run?.job_id).toBe(run.job_id);
  });
});

describe('a schedule firing', () => {
  // What pg-boss does when the cron fires: it sends the schedule's job (payload { datasetId }) to its queue.
  const fire = () => t.deps.jobs.send(EXTRACT_SCHEDULE, { datasetId: mat.id });
  const runs = async () => ok<RunPage>(await api.get(`/api/datasets/${mat.id}/extracts`, owner())).content;
  const waitForNewRun = async (after: number) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const [last] = await runs();
      if (last && last.job_id > after) return last;
      if (Date.now() > deadline) throw new Error('no scheduled run');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('starts a run with trigger schedule, on behalf of the dataset author, who is notified', async () => {
    ok(
      await api.put(path(), { mode: 'full', schedule: '0 3 * * *', timezone: 'Europe/Moscow', enabled: true }, owner()),
    );
    const [previous] = await runs();
    await fire();
    const queued = await waitForNewRun(previous?.job_id ?? 0);
    expect(queued).toMatchObject({ dataset_id: mat.id, trigger: 'schedule', mode: 'full', user_id: null });
    const done = await waitForRun(api, owner(), queued.job_id);
    expect(done.state).toBe('succeeded');
    expect(done.rows_loaded).toBe(10 + 3);
    const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${done.job_id}/history`, owner()));
    expect(history.content[0]).toMatchObject({ state: 'queued', message: 'Запуск по расписанию' });
    const notices = ok<{ content: NotificationView[] }>(await api.get('/api/notifications?size=100', owner())).content;
    expect(notices.filter((n) => n.object_id === done.job_id).map((n) => n.kind)).toEqual(['extract_succeeded']);
  });

  it('a disabled schedule starts nothing', async () => {
    ok(await api.put(path(), { schedule: '0 3 * * *', timezone: 'Europe/Moscow', enabled: false }, owner()));
    const before = await runs();
    const jobId = await fire();
    // The job was handled (completed by its handler), and it queued no run.
    const boss = await t.deps.jobs.start();
    const deadline = Date.now() + 15_000;
    while ((await boss.getJobById(EXTRACT_SCHEDULE.name, jobId))?.state !== 'completed' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect((await boss.getJobById(EXTRACT_SCHEDULE.name, jobId))?.state).toBe('completed');
    expect(await runs()).toEqual(before);
  });
});

describe('the schedule check is the one pg-boss applies', () => {
  const scheduleOf = async () => {
    const boss = await t.deps.jobs.start();
    return (await boss.getSchedules('extract-schedule', `dataset-${mat.id}`)).map((s) => [s.cron, s.timezone]);
  };
  const saved = async () => ok<ExtractionView>(await api.get(path(), owner()));
  const before = { mode: 'full', schedule: '0 4 * * *', timezone: 'Europe/Moscow', enabled: true };

  it('expressions croner takes and pg-boss refuses are a 422 on schedule; settings and schedule stay', async () => {
    ok(await api.put(path(), before, owner()));
    for (const schedule of ['0 0 15W * *', '0 0 LW * *', '0 0 31 2 *', '0 0 31 4 *']) {
      const res = await api.put(path(), { ...before, schedule }, owner());
      expect(res.status, schedule).toBe(422);
      expect(Object.keys(failure(res).errors ?? {}), schedule).toEqual(['schedule']);
      expect(failure(res).errors?.schedule, schedule).toMatch(/^Некорректное выражение cron/);
    }
    // A zone Intl knows and pg-boss refuses.
    expect(
      Object.keys(failure(await api.put(path(), { ...before, timezone: 'Factory' }, owner())).errors ?? {}),
    ).toEqual(['timezone']);
    expect(await saved()).toMatchObject({ schedule: '0 4 * * *', timezone: 'Europe/Moscow' });
    expect(await scheduleOf()).toEqual([['0 4 * * *', 'Europe/Moscow']]);
  });

  it('accepts exactly the five-field expressions pg-boss accepts, and shows the next run pg-boss fires', async () => {
    const boss = await t.deps.jobs.start();
    const from = new Date('2026-03-01T00:00:00Z');
    for (const e of [
      '0 0 L * *',
      '0 0 * * 5L',
      '0 0 * * MON#2',
      '0 0 ? * *',
      '0 0 */40 * *',
      '0 0 * 1/13 *',
      '0 0 29 2 *',
      '0 0 * * 7',
      '0 0 W * *',
      '0 0 15W * *',
      '0 0 LW * *',
      '0 0 31 2 *',
      '0 0 L-2 * *',
      '0 0 * * 1#6',
      '0 0 * * MON-FRI#2',
      '1-60/5 * * * *',
      '*/0 * * * *',
      '60 * * * *',
    ]) {
      let preview: Date | null = null;
      try {
        [preview] = boss.previewSchedule(e, { tz: 'Asia/Vladivostok', from, count: 1 });
      } catch {
        preview = null;
      }
      expect(cronProblem(e) === null, e).toBe(preview !== null);
      if (preview) expect(nextRunAt(e, 'Asia/Vladivostok', from)?.toISOString(), e).toBe(preview.toISOString());
    }
  });

  it('a schedule pg-boss fails to store leaves the previous settings saved', async () => {
    ok(await api.put(path(), before, owner()));
    const spy = vi.spyOn(t.deps.jobs, 'schedule').mockRejectedValueOnce(new Error('pg-boss is down'));
    try {
      const res = await api.put(path(), { ...before, schedule: '0 5 * * *' }, owner());
      expect(res.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    expect(await saved()).toMatchObject({ schedule: '0 4 * * *', timezone: 'Europe/Moscow', enabled: true });
    expect(await scheduleOf()).toEqual([['0 4 * * *', 'Europe/Moscow']]);
  });

  it('settings that fail to save put pg-boss back on the previous schedule', async () => {
    ok(await api.put(path(), before, owner()));
    const spy = vi.spyOn(t.deps.db, 'insert').mockImplementationOnce(() => {
      throw new Error('metadata database is down');
    });
    try {
      const res = await api.put(path(), { ...before, schedule: '0 6 * * *' }, owner());
      expect(res.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    expect(await saved()).toMatchObject({ schedule: '0 4 * * *', enabled: true });
    expect(await scheduleOf()).toEqual([['0 4 * * *', 'Europe/Moscow']]);
    ok(await api.put(path(), { schedule: null, enabled: false }, owner()));
    expect(await scheduleOf()).toEqual([]);
  });
});
