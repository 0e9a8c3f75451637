import { eq, max } from 'drizzle-orm';
import { beforeAll, expect, it } from 'vitest';
import { mailingRuns } from '../../../db/schema/mailings';
import { MSG } from '../../../server/mailings/messages';
import { MAILING_RUN, sweepLostMailingRuns } from '../../../server/mailings/run-job';
import { claimLetter, insertRun, lettersOf, planLetters, runById, settleLetter } from '../../../server/mailings/store';
import { ok } from '../../support/rest';
import { ordersWidget, toOf, useMailingWorld, waitRun, type MailingView } from '../../routers/mailings/world';

/*
 * The sweep of mailing runs lost with their node (every worker, every 15 s): a run left `running` that no job will
 * resume gets one (a bounded number of times), and only its pending letters are sent; once its jobs are spent it is
 * failed instead, and nothing is sent. Either way the letter its node left `sending` becomes unconfirmed and is named
 * in the run's error (and its owner's notice). A run left `queued` whose job was never sent (its node died right
 * after the insert) gets one and is sent in full.
 */

const w = useMailingWorld();
let mailingId: number;
const emails = ['s1@example.test', 's2@example.test', 's3@example.test'];

beforeAll(async () => {
  const ds = await w.ordersDataset();
  const widgetId = await ordersWidget(w.api, w.cast.tokens.wsAdmin!, ds.id);
  mailingId = ok<MailingView>(
    await w.api.post(
      '/api/mailings',
      {
        name: 'sweep',
        workspace_id: w.cast.workspaceId,
        widget_ids: [widgetId],
        format: 'csv',
        channel_id: w.channelId,
        recipients: { emails },
      },
      w.cast.tokens.wsAdmin!,
    ),
  ).id;
});

const letters = async (runId: number) =>
  (await lettersOf(w.t.deps.db, runId, { page: 0, size: 100 })).rows.map((l) => [l.recipient, l.status, l.error]);

const maxRunId = async () => (await w.t.deps.db.select({ id: max(mailingRuns.id) }).from(mailingRuns))[0]?.id ?? 0;

/** A run a dead node left: running, the first letter sent, the second in flight (`sending`), the third pending. */
async function leftRunning(): Promise<number> {
  const run = await insertRun(w.t.deps.db, mailingId, 'manual');
  await w.t.deps.db
    .update(mailingRuns)
    .set({ state: 'running', startedAt: new Date() })
    .where(eq(mailingRuns.id, run.id));
  await planLetters(
    w.t.deps.db,
    run.id,
    emails.map((recipient) => ({ recipient, sliceValue: '' })),
  );
  const [l1, l2] = (await lettersOf(w.t.deps.db, run.id, { page: 0, size: 10 })).rows;
  await claimLetter(w.t.deps.db, l1.id);
  await settleLetter(w.t.deps.db, l1.id, { status: 'sent', sentAt: new Date() });
  await claimLetter(w.t.deps.db, l2.id);
  return run.id;
}

it('a running run no job will resume gets one from the sweep: only the pending letter is sent', async () => {
  const before = w.inbox.letters.length;
  const runId = await leftRunning();
  await sweepLostMailingRuns(w.t.deps);
  const done = await waitRun(w.api, w.cast.tokens.wsAdmin!, mailingId, runId, 30_000);
  expect(done).toMatchObject({ state: 'failed', letters_sent: 2, letters_failed: 1 });
  expect(done.error).toBe(MSG.unconfirmed(1, ['s2@example.test']));
  expect(await letters(runId)).toEqual([
    ['s1@example.test', 'sent', null],
    ['s2@example.test', 'unconfirmed', MSG.interrupted],
    ['s3@example.test', 'sent', null],
  ]);
  expect(w.inbox.letters.slice(before).flatMap(toOf)).toEqual(['s3@example.test']);
}, 60_000);

it('a running run whose jobs were spent is failed with its report; the letter left sending is named, none sent', async () => {
  const before = w.inbox.letters.length;
  const boss = await w.t.deps.jobs.start();
  let runId = 0;
  // Made under the run's lock (server/mailings/run-job.ts), so that the workers' own sweep leaves it alone meanwhile.
  await w.t.deps.jobs.exclusive(`mailing-run:${(await maxRunId()) + 1}`, async () => {
    runId = await leftRunning();
    // Three jobs of the run, all ended: the first and the two the sweep may give.
    for (let i = 0; i < 3; i++) {
      const job = (await boss.send(MAILING_RUN.name, { runId }, { startAfter: 3600 }))!;
      await boss.cancel(MAILING_RUN.name, job);
    }
  });
  await sweepLostMailingRuns(w.t.deps);
  const report = `${MSG.lost}. ${MSG.unconfirmed(1, ['s2@example.test'])}`;
  expect(await runById(w.t.deps.db, runId)).toMatchObject({
    state: 'failed',
    lettersSent: 1,
    lettersFailed: 1,
    error: report,
  });
  expect(await letters(runId)).toEqual([
    ['s1@example.test', 'sent', null],
    ['s2@example.test', 'unconfirmed', MSG.interrupted],
    ['s3@example.test', 'pending', null],
  ]);
  expect(w.inbox.letters.length).toBe(before);
  const notes = ok<{ content: { kind: string; object_id: number; message: string }[] }>(
    await w.api.get('/api/notifications', w.cast.tokens.wsAdmin!),
  );
  expect(notes.content.filter((n) => n.kind === 'mailing_failed' && n.object_id === runId)).toMatchObject([
    { message: report },
  ]);
  // Swept again: nothing changes.
  await sweepLostMailingRuns(w.t.deps);
  expect((await runById(w.t.deps.db, runId))?.error).toBe(report);
}, 60_000);

it('a queued run whose job was never sent gets one from the sweep and is sent in full', async () => {
  const before = w.inbox.letters.length;
  const run = await insertRun(w.t.deps.db, mailingId, 'manual');
  // Within the grace after its insert the send may still come: left alone.
  await sweepLostMailingRuns(w.t.deps);
  expect((await runById(w.t.deps.db, run.id))?.state).toBe('queued');
  await w.t.deps.db
    .update(mailingRuns)
    .set({ createdAt: new Date(Date.now() - 120_000) })
    .where(eq(mailingRuns.id, run.id));
  await sweepLostMailingRuns(w.t.deps);
  const done = await waitRun(w.api, w.cast.tokens.wsAdmin!, mailingId, run.id, 30_000);
  expect(done).toMatchObject({ state: 'succeeded', letters_sent: 3, letters_failed: 0, error: null });
  expect(w.inbox.letters.slice(before).flatMap(toOf).sort()).toEqual(emails);
}, 60_000);
