import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exportJobs } from '../../../db/schema/exports';
import { LIMIT_MSG } from '../../../server/file-export/limits';
import { produceExport } from '../../../server/file-export/produce';
import { cleanExpiredExports } from '../../../server/file-export/run-job';
import { exportLockKey, LOST_JOB_MSG, sweepLostExports } from '../../../server/file-export/slots';
import { exportJobById, insertExportJob } from '../../../server/file-export/store';
import { useTestApp } from '../../support/app';
import { failure, ok } from '../../support/rest';
import { DEFAULT_LIMITS, putLimits, runExport, startExport, waitExport, type ExportJob } from './jobs';
import { exportWorld, type ExportWorld } from './world';

/*
 * The life of export jobs: limits enforced (timeout_seconds, max_concurrent_jobs, max_file_size_mb), slots of jobs
 * lost with their node given back, the owner's notifications, expired files removed, and no Chromium.
 */

const { t, api } = useTestApp();
let w: ExportWorld;

beforeAll(async () => {
  w = await exportWorld(t.deps, api, 20);
});
afterAll(() => w.close());
afterEach(() => putLimits(api, w.cast.tokens.sysadmin!, DEFAULT_LIMITS));

const viewer = () => w.cast.tokens.viewer!;
const csvBody = () => ({ object_type: 'widget', object_id: w.widgetId, format: 'csv' });
/** The files of exports: the local work files (DATA_DIR/exports) and the finished ones in storage (exports/<job>/…). */
const exportFiles = async () => {
  const names = await readdir(path.join(t.deps.config.dataDir, 'exports')).catch(() => [] as string[]);
  for await (const o of t.deps.storage.list('exports/')) names.push(o.key);
  return names;
};
const stored = async (key: string) => (await t.deps.storage.head(key)) !== null;

interface Notification {
  kind: string;
  title: string;
  message: string;
  object_type: string | null;
  object_id: number | null;
}
const notificationsOf = async (token: string) =>
  ok<{ content: Notification[] }>(await api.get('/api/notifications', token, { size: '100' })).content;

/** While this runs, every read of the sales table at the source waits (an ACCESS EXCLUSIVE lock in a transaction). */
async function withSalesLocked<T>(work: () => Promise<T>): Promise<T> {
  await w.source.db.query('BEGIN');
  try {
    await w.source.db.query(`LOCK TABLE ${w.source.sales} IN ACCESS EXCLUSIVE MODE`);
    return await work();
  } finally {
    await w.source.db.query('ROLLBACK');
  }
}

describe('limits are enforced', () => {
  it('timeout_seconds: a read that outlasts it fails the job naming the limit, the file is gone', async () => {
    await putLimits(api, w.cast.tokens.sysadmin!, { timeout_seconds: 1 });
    const before = await exportFiles();
    const started = Date.now();
    const job = await withSalesLocked(() => runExport(api, viewer(), csvBody(), 30_000));
    expect(job.state).toBe('failed');
    expect(job.error).toBe('Превышен лимит экспорта timeout_seconds: экспорт дольше 1 с');
    expect(job.file_name).toBeNull();
    // It stopped at the limit, not when the lock went away.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await exportFiles()).toEqual(before);
  }, 60_000);

  it('max_concurrent_jobs=1: of two jobs one runs while the other waits queued, then both finish', async () => {
    await putLimits(api, w.cast.tokens.sysadmin!, { max_concurrent_jobs: 1 });
    const states = await withSalesLocked(async () => {
      const ids = [await startExport(api, viewer(), csvBody()), await startExport(api, viewer(), csvBody())];
      const seen: string[] = [];
      // Sample both jobs' states for two seconds while the running one is held at the source.
      for (const until = Date.now() + 2_000; Date.now() < until;) {
        const jobs = await Promise.all(
          ids.map(async (id) => ok<ExportJob>(await api.get(`/api/exports/${id}`, viewer()))),
        );
        seen.push(
          jobs
            .map((j) => j.state)
            .sort()
            .join('+'),
        );
        await new Promise((r) => setTimeout(r, 50));
      }
      return { ids, seen };
    });
    expect(states.seen).not.toContain('running+running');
    expect(states.seen.at(-1)).toBe('queued+running');
    for (const id of states.ids) expect((await waitExport(api, viewer(), id)).state).toBe('succeeded');
  }, 60_000);
});

describe('a job left running by a node that stopped gives its slot back', () => {
  it('a running job whose worker holds its lock is left alone', async () => {
    const live = await insertExportJob(t.deps.db, {
      ownerId: w.cast.users.editor.id,
      objectType: 'widget',
      objectId: w.widgetId,
      format: 'csv',
      state: 'running',
    });
    try {
      const held = await t.deps.jobs.exclusive(exportLockKey(live.id), async () => {
        expect(await sweepLostExports(t.deps)).toBe(0);
        expect((await exportJobById(t.deps.db, live.id))?.state).toBe('running');
      });
      expect(held).toBe(true);
    } finally {
      await t.deps.db.update(exportJobs).set({ state: 'succeeded' }).where(eq(exportJobs.id, live.id));
    }
  });

  it('a lost running job is failed and its owner told when the next job finds the slots full', async () => {
    // The jobs already run on this node (their start sweeps lost jobs too): the waiting job must find this one.
    expect((await runExport(api, viewer(), csvBody())).state).toBe('succeeded');
    await putLimits(api, w.cast.tokens.sysadmin!, { max_concurrent_jobs: 1 });
    // A job a crashed node left running: no worker holds its lock.
    const lost = await insertExportJob(t.deps.db, {
      ownerId: w.cast.users.editor.id,
      objectType: 'widget',
      objectId: w.widgetId,
      format: 'csv',
      state: 'running',
    });
    const job = await runExport(api, viewer(), csvBody(), 20_000);
    expect(job.state, job.error ?? '').toBe('succeeded');
    expect(await exportJobById(t.deps.db, lost.id)).toMatchObject({ state: 'failed', error: LOST_JOB_MSG });
    const told = (await notificationsOf(w.cast.tokens.editor!)).filter((n) => n.object_id === lost.id);
    expect(told).toEqual([
      expect.objectContaining({
        kind: 'export_failed',
        title: 'Экспорт не удался',
        message: LOST_JOB_MSG,
        object_type: 'export_job',
      }),
    ]);
  }, 60_000);
});

describe('the owner is notified', () => {
  it('ready and failed exports appear in GET /api/notifications of their owner only', async () => {
    const done = await runExport(api, viewer(), csvBody());
    expect(done.state).toBe('succeeded');
    await putLimits(api, w.cast.tokens.sysadmin!, { max_rows: 5 });
    const failed = await runExport(api, viewer(), csvBody());
    expect(failed.state).toBe('failed');
    expect(failed.error).toBe(LIMIT_MSG.rows(5));

    const mine = (await notificationsOf(viewer())).filter((n) => n.object_type === 'export_job');
    expect(mine.find((n) => n.object_id === done.job_id)).toEqual(
      expect.objectContaining({
        kind: 'export_succeeded',
        title: 'Экспорт готов',
        message: 'Файл Продажи по дням.csv готов к скачиванию',
      }),
    );
    expect(mine.find((n) => n.object_id === failed.job_id)).toEqual(
      expect.objectContaining({
        kind: 'export_failed',
        title: 'Экспорт не удался',
        message: 'Превышен лимит экспорта max_rows: больше 5 строк',
      }),
    );
    const others = await notificationsOf(w.cast.tokens.plain!);
    expect(others.filter((n) => n.object_id === done.job_id || n.object_id === failed.job_id)).toEqual([]);
  }, 60_000);
});

describe('files expire', () => {
  it('the cleanup removes an expired file, the download then says so; a file not expired stays', async () => {
    const old = await runExport(api, viewer(), csvBody());
    const fresh = await runExport(api, viewer(), csvBody());
    const oldPath = (await exportJobById(t.deps.db, old.job_id))!.filePath!;
    const freshPath = (await exportJobById(t.deps.db, fresh.job_id))!.filePath!;
    // The row names the file's key in storage: exports/<job id>/<file>.
    expect(oldPath).toMatch(new RegExp(`^exports/${old.job_id}/[\\w-]+\\.csv$`));
    expect(await stored(oldPath)).toBe(true);
    await t.deps.db
      .update(exportJobs)
      .set({ expiresAt: new Date(Date.now() - 60_000) })
      .where(eq(exportJobs.id, old.job_id));

    await cleanExpiredExports(t.deps);
    expect(await stored(oldPath)).toBe(false);
    expect((await exportJobById(t.deps.db, old.job_id))?.filePath).toBeNull();
    const gone = await api.get(`/api/exports/${old.job_id}/file`, viewer());
    expect(gone.status).toBe(404);
    expect(failure(gone).message).toBe(`Файл экспорта удалён по истечении срока хранения (задание ${old.job_id})`);

    expect(await stored(freshPath)).toBe(true);
    expect((await api.get(`/api/exports/${fresh.job_id}/file`, viewer())).status).toBe(200);
  }, 60_000);
});

describe('without Chromium', () => {
  const NO_CHROMIUM = 'Chromium не найден: экспорт в PDF и PNG недоступен (задайте CHROMIUM_PATH)';
  let saved: string | undefined;
  beforeAll(() => {
    saved = process.env.CHROMIUM_PATH;
    process.env.CHROMIUM_PATH = path.join(t.deps.config.dataDir, 'no-such-chromium');
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.CHROMIUM_PATH;
    else process.env.CHROMIUM_PATH = saved;
  });

  it('a pdf job fails with a clear message, a csv job still works', async () => {
    const pdf = await runExport(api, viewer(), { ...csvBody(), format: 'pdf' });
    expect(pdf.state).toBe('failed');
    expect(pdf.error).toBe(NO_CHROMIUM);
    const csv = await runExport(api, viewer(), csvBody());
    expect(csv.state, csv.error ?? '').toBe('succeeded');
    expect((await api.get(`/api/exports/${csv.job_id}/file`, viewer())).status).toBe(200);
  }, 60_000);

  it("a mailing's pdf records its failure on its own job row, and waits for a slot like any job", async () => {
    const produce = (signal?: AbortSignal) =>
      produceExport(t.deps, {
        ownerUserId: w.cast.users.wsAdmin.id,
        objectType: 'widget',
        objectId: w.widgetId,
        format: 'pdf',
        signal,
      }).then(
        () => {
          throw new Error('the export should have failed');
        },
        (e: Error) => e.message,
      );
    const rowsOfOwner = () =>
      t.deps.db.select().from(exportJobs).where(eq(exportJobs.ownerId, w.cast.users.wsAdmin.id)).orderBy(exportJobs.id);

    expect(await produce()).toBe(NO_CHROMIUM);
    expect(await rowsOfOwner()).toEqual([expect.objectContaining({ state: 'failed', error: NO_CHROMIUM })]);

    // Every slot taken by a live job: the attachment waits queued until its caller gives up, and says why.
    await putLimits(api, w.cast.tokens.sysadmin!, { max_concurrent_jobs: 1 });
    const live = await insertExportJob(t.deps.db, {
      ownerId: w.cast.users.editor.id,
      objectType: 'widget',
      objectId: w.widgetId,
      format: 'csv',
      state: 'running',
    });
    await t.deps.jobs.exclusive(exportLockKey(live.id), async () => {
      const stop = new AbortController();
      const message = produce(stop.signal);
      await new Promise((r) => setTimeout(r, 1_500));
      const [, waiting] = await rowsOfOwner();
      expect(waiting.state).toBe('queued');
      stop.abort(new Error('Рассылка остановлена'));
      expect(await message).toBe('Рассылка остановлена');
    });
    await t.deps.db.update(exportJobs).set({ state: 'succeeded' }).where(eq(exportJobs.id, live.id));
    const [, stopped] = await rowsOfOwner();
    expect(stopped).toMatchObject({ state: 'failed', error: 'Рассылка остановлена' });
  }, 60_000);
});

describe('max_file_size_mb', () => {
  it('a csv that would pass it fails naming the limit and leaves no file', async () => {
    // About 1.6 MB of CSV: more than the smallest limit (1 MB).
    await w.grow(40_000);
    await putLimits(api, w.cast.tokens.sysadmin!, { max_file_size_mb: 1 });
    const before = await exportFiles();
    const job = await runExport(api, viewer(), csvBody());
    expect(job.state).toBe('failed');
    expect(job.error).toBe('Превышен лимит экспорта max_file_size_mb: файл больше 1 МБ');
    expect(await exportFiles()).toEqual(before);
    // The same export under the default limit is bigger than 1 MB: the limit, not the data, failed it.
    await putLimits(api, w.cast.tokens.sysadmin!, DEFAULT_LIMITS);
    const whole = await runExport(api, viewer(), csvBody());
    expect(whole.state, whole.error ?? '').toBe('succeeded');
    expect(whole.size).toBeGreaterThan(1024 * 1024);
  }, 120_000);
});
