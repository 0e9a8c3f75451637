import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractRuns } from '../../../db/schema/extracts';
import { MSG } from '../../../server/etl/messages';
import { EXTRACT_RUN, sweepLostRuns } from '../../../server/etl/run-job';
import type { NotificationView } from '../../../server/notifications/notifications';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createPgSource } from '../widgets/world';
import { waitForRun, type HistoryPage, type RunView } from './world';

/*
 * A run stuck in `queued` (its pg-boss job lost before the handler started) would refuse every manual start of its
 * dataset. The sweep fails it, with the reason, when its job was never sent, is gone or ended, or when it has waited
 * a day; a run whose job is still waiting, or one just queued, is left alone. The runs are written straight into the
 * table, as a process that died mid-way would leave them.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let datasetId: number;
const owner = () => cast.tokens.wsAdmin!;
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

async function queued(createdAt: Date, bossJobId: string | null = null): Promise<number> {
  const [run] = await t.deps.db
    .insert(extractRuns)
    .values({
      datasetId,
      mode: 'full',
      trigger: 'manual',
      state: 'queued',
      userId: cast.users.wsAdmin.id,
      createdAt,
      bossJobId,
    })
    .returning();
  return run.id;
}
const runOf = async (id: number) => ok<RunView>(await api.get(`/api/etl-jobs/${id}`, owner()));
/** A job of the run queue that no worker takes for an hour. */
async function waitingJob(runId: number): Promise<string> {
  const boss = await t.deps.jobs.start();
  return (await boss.send(EXTRACT_RUN.name, { runId }, { startAfter: 3600 }))!;
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = ok<{ id: number }>(
    await api.post(
      '/api/dataset',
      { name: uniq('queued'), workspace_id: cast.workspaceId, live: false, data_source_ids: [source] },
      owner(),
    ),
  ).id;
});

describe('the sweep of runs stuck in queued', () => {
  it('fails a run whose job was never sent, with the reason in its history and a notice to its user', async () => {
    const id = await queued(minutesAgo(5));
    const refused = await api.post(`/api/datasets/${datasetId}/extracts`, {}, owner());
    expect(failure(refused).message).toContain(String(id));
    await sweepLostRuns(t.deps);
    expect(await runOf(id)).toMatchObject({ state: 'failed', error: MSG.queuedLost });
    expect((await runOf(id)).finished_at).toBeTruthy();
    const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${id}/history`, owner())).content;
    expect(history.at(-1)).toMatchObject({ state: 'failed', message: MSG.queuedLost });
    const notices = ok<{ content: NotificationView[] }>(await api.get('/api/notifications?size=100', owner())).content;
    expect(notices.filter((n) => n.object_id === id).map((n) => n.kind)).toEqual(['extract_failed']);
  });

  it('fails a run whose job pg-boss no longer has, or has ended', async () => {
    const gone = await queued(minutesAgo(5), randomUUID());
    await sweepLostRuns(t.deps);
    expect(await runOf(gone)).toMatchObject({ state: 'failed', error: MSG.queuedLost });

    const ended = await queued(minutesAgo(5));
    const job = await waitingJob(ended);
    await t.deps.db.update(extractRuns).set({ bossJobId: job }).where(eq(extractRuns.id, ended));
    await (await t.deps.jobs.start()).cancel(EXTRACT_RUN.name, job);
    await sweepLostRuns(t.deps);
    expect(await runOf(ended)).toMatchObject({ state: 'failed', error: MSG.queuedLost });
  });

  it('leaves a run just queued and one whose job still waits; a day in the queue is too long', async () => {
    const fresh = await queued(new Date());
    await sweepLostRuns(t.deps);
    expect((await runOf(fresh)).state).toBe('queued');
    await t.deps.db.delete(extractRuns).where(eq(extractRuns.id, fresh));

    const waiting = await queued(minutesAgo(5));
    const job = await waitingJob(waiting);
    await t.deps.db.update(extractRuns).set({ bossJobId: job }).where(eq(extractRuns.id, waiting));
    await sweepLostRuns(t.deps);
    expect((await runOf(waiting)).state).toBe('queued');

    await t.deps.db
      .update(extractRuns)
      .set({ createdAt: minutesAgo(25 * 60) })
      .where(eq(extractRuns.id, waiting));
    await sweepLostRuns(t.deps);
    expect(await runOf(waiting)).toMatchObject({ state: 'failed', error: MSG.queuedTooLong(24) });
    // Its job goes too: it would hold the dataset's key and refuse the next run's send.
    expect(await t.deps.jobs.stateOf(EXTRACT_RUN, job)).toBe('cancelled');
  });

  it('once the stuck run is failed, a manual start is no longer refused', async () => {
    const started = await api.post(`/api/datasets/${datasetId}/extracts`, {}, owner());
    expect(started.status).toBe(200);
    await waitForRun(api, owner(), ok<RunView>(started).job_id);
  });
});
