import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { smtpSender, type SmtpSender } from '../../adapters/mail/smtp';
import type { Viewer } from '../access/viewer';
import { actorOfUser } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { AppError } from '../kernel/errors';
import { isPendingJobState, jobKind, type JobContext, type JobKind } from '../jobs/jobs';
import { channelById } from '../mail-channels/store';
import { smtpSettingsOf } from '../mail-channels/mail-channels';
import { insertNotification } from '../notifications/store';
import { buildLetter, dropFiles, type LetterContent } from './letters';
import { MSG } from './messages';
import { planSlices, type Slice } from './slices';
import {
  addressesOf,
  claimLetter,
  letterCounts,
  mailingById,
  moveRun,
  pendingLetters,
  planLetters,
  runById,
  markUnconfirmed,
  settleLetter,
  unconfirmedRecipients,
  unfinishedRuns,
  type LetterCounts,
  type LetterRow,
  type MailingRow,
} from './store';

/*
 * A mailing run as a pg-boss job (server/jobs). The run first plans its letters (one row per recipient and slice
 * value, the unique key keeps a re-plan from adding any twice), then sends them: each letter is claimed
 * (pending -> sending, one winner) before the SMTP call, sent, and settled after it (sent, or back to pending until
 * MAX_ATTEMPTS, then failed). A failing letter waits for the next pass and never holds the others.
 *
 * A run survives its node. Only one job works on a run at a time (JobRunner.exclusive: a session lock that dies with
 * the node's connection). When the node dies, pg-boss on a live worker finds the job's heartbeat stale and runs it
 * again (JOB_RETRIES, bounded); when the node stops (SIGTERM) the job fails on purpose for the same retry. The job
 * that resumes a run found `running` knows it was left by a node that stopped: letters left `sending` may or may not
 * have left, so they become `unconfirmed`, are never sent again, and the run's report names their recipients; letters
 * `sent` are skipped; pending ones are sent. Every worker sweeps each SWEEP_MS: a run nobody holds whose job pg-boss
 * will no longer run gets a new job (SWEEP_SENDS times at most), then is failed with its report; a queued run whose
 * job was never sent gets one.
 * The mailing's owner is notified when a run ends with letters not sent or unconfirmed, or fails.
 */

export const MAILING_RUN = jobKind('mailing-run', z.object({ runId: z.number().int().positive() }));
export const MAILING_SCHEDULE = jobKind('mailing-schedule', z.object({ mailingId: z.number().int().positive() }));

const MAX_ATTEMPTS = 3;
const RETRY_DELAY_MS = 1_000;
/** Times pg-boss runs a run's job again after its node died or stopped. */
const JOB_RETRIES = 2;
/**
 * Jobs the sweep may give a run whose job ended while the run was left unfinished (its node stopped while a letter
 * hung, so the retry found the run still held): with JOB_RETRIES, a run that kills every node it runs on ends after
 * (1 + SWEEP_SENDS) × (1 + JOB_RETRIES) attempts at most.
 */
const SWEEP_SENDS = 2;
/** How often every worker looks for runs lost with their node (lost work ends or resumes within a minute). */
const SWEEP_MS = 15_000;
/** A queued run with no job at all this long after its insert: the node died between the insert and the send. */
const QUEUED_GRACE_MS = 60_000;
/** Recipients of unconfirmed letters the run's report names (the letters list has them all). */
const REPORT_RECIPIENTS = 20;
/** A handler that finds its run's lock taken waits this long: a sweep holds it for a few queries only. */
const LOCK_WAIT_MS = 5_000;

const runLockKey = (runId: number) => `mailing-run:${runId}`;

/** The job kinds of this area (registered in server/app/start.ts). */
export function mailingJobKinds(
  deps: AppDeps,
  startScheduled: (deps: AppDeps, mailingId: number) => Promise<void>,
): JobKind<never>[] {
  const run: JobKind<{ runId: number }> = {
    ...MAILING_RUN,
    concurrency: 2,
    retryLimit: JOB_RETRIES,
    // A run may have two jobs (a sweep's and pg-boss's retry): one works on it, the other finds it taken or ended.
    handler: async (p, ctx) => {
      let unfinished = false;
      await deps.jobs.exclusive(
        runLockKey(p.runId),
        async () => {
          unfinished = await runMailing(deps, p.runId, ctx);
        },
        { waitMs: LOCK_WAIT_MS },
      );
      // This node stops with letters left: the job fails so that pg-boss gives it to another worker, which resumes.
      if (unfinished && ctx.nodeStopping()) throw new Error(`mailing run ${p.runId} left for another node`);
    },
  };
  const scheduled: JobKind<{ mailingId: number }> = {
    ...MAILING_SCHEDULE,
    concurrency: 1,
    handler: (p) => startScheduled(deps, p.mailingId),
  };
  return [run, scheduled] as unknown as JobKind<never>[];
}

/** Once the jobs run on a node: the sweep of lost runs now and every SWEEP_MS (only on nodes that run jobs). */
export async function startMailingJobs(deps: AppDeps): Promise<void> {
  deps.jobs.every('mailing-sweep', SWEEP_MS, () => sweepLostMailingRuns(deps));
}

/**
 * Runs queued or running that no node holds and pg-boss will not run again (its job ended, retries spent) are
 * failed, with their report; a queued run that never got a job (its node died right after the insert) gets one.
 * Safe on several nodes at once: each run is checked under its own lock, and the moves are conditional.
 */
export async function sweepLostMailingRuns(deps: AppDeps): Promise<void> {
  for (const { id } of await unfinishedRuns(deps.db)) {
    await deps.jobs.exclusive(runLockKey(id), async () => {
      const states = await deps.jobs.jobStatesOf(MAILING_RUN, { runId: id });
      if (states.some(isPendingJobState)) return;
      const run = await runById(deps.db, id);
      if (!run || (run.state !== 'queued' && run.state !== 'running')) return;
      if (run.state === 'queued' && !states.length) {
        if (Date.now() - run.createdAt.getTime() >= QUEUED_GRACE_MS) await deps.jobs.send(MAILING_RUN, { runId: id });
        return;
      }
      // Nobody holds it and no job will come: resumed by a job of its own, a bounded number of times.
      if (run.state === 'running' && states.length <= SWEEP_SENDS) {
        await deps.jobs.send(MAILING_RUN, { runId: id });
        return;
      }
      await failLostRun(deps, id, run.state === 'running' ? MSG.lost : MSG.neverStarted);
    });
  }
}

/** Ends a run no node will resume: letters left `sending` become unconfirmed, and the report says what happened. */
async function failLostRun(deps: AppDeps, runId: number, reason: string): Promise<void> {
  await markUnconfirmed(deps.db, runId, MSG.interrupted);
  const counts = await letterCounts(deps.db, runId);
  const report = await reportOf(deps, runId, counts);
  const error = [reason, report].filter(Boolean).join('. ');
  const done = await moveRun(deps.db, runId, ['queued', 'running'], {
    state: 'failed',
    lettersSent: counts.sent,
    lettersFailed: counts.failed + counts.unconfirmed,
    error,
    finishedAt: new Date(),
  });
  const mailing = done ? await mailingById(deps.db, done.mailingId) : null;
  if (mailing) await notifyFailed(deps, mailing, runId, error);
}

/** What went wrong with a run's letters, for its error and its owner's notice; null when every letter was sent. */
async function reportOf(deps: AppDeps, runId: number, counts: LetterCounts): Promise<string | null> {
  const parts: string[] = [];
  const total = counts.sent + counts.failed + counts.unconfirmed + counts.pending;
  if (counts.failed) parts.push(MSG.lettersFailed(counts.failed, total));
  if (counts.unconfirmed)
    parts.push(MSG.unconfirmed(counts.unconfirmed, await unconfirmedRecipients(deps.db, runId, REPORT_RECIPIENTS)));
  return parts.length ? parts.join('. ') : null;
}

/** Runs (or resumes) the run; answers true when it stopped with letters left (this node stops). */
async function runMailing(deps: AppDeps, runId: number, ctx: JobContext): Promise<boolean> {
  const before = await runById(deps.db, runId);
  if (!before || (before.state !== 'queued' && before.state !== 'running')) return false;
  const run = await moveRun(deps.db, runId, ['queued', 'running'], {
    state: 'running',
    startedAt: before.startedAt ?? new Date(),
  });
  if (!run) return false;
  // Found running under its lock: the node that ran it died or stopped. What it left in flight is not sent again.
  if (before.state === 'running') await markUnconfirmed(deps.db, runId, MSG.interrupted);
  const mailing = await mailingById(deps.db, run.mailingId);
  if (!mailing) return false;
  try {
    const outcome = await sendRun(deps, mailing, runId, ctx.signal);
    if (outcome === 'stopped') return true;
    const counts = await letterCounts(deps.db, runId);
    const report = await reportOf(deps, runId, counts);
    const done = await moveRun(deps.db, runId, ['running'], {
      state: report ? 'failed' : 'succeeded',
      lettersSent: counts.sent,
      lettersFailed: counts.failed + counts.unconfirmed,
      error: report,
      finishedAt: new Date(),
    });
    if (done && report) await notifyFailed(deps, mailing, runId, report);
  } catch (e) {
    if (ctx.signal.aborted) return true;
    const reason = (e instanceof Error ? e.message : String(e)).slice(0, 2000);
    const counts = await letterCounts(deps.db, runId);
    const error = [reason, counts.unconfirmed ? await reportOf(deps, runId, counts) : null].filter(Boolean).join('. ');
    const done = await moveRun(deps.db, runId, ['running'], {
      state: 'failed',
      lettersSent: counts.sent,
      lettersFailed: counts.failed + counts.unconfirmed,
      error,
      finishedAt: new Date(),
    });
    if (done) await notifyFailed(deps, mailing, runId, error);
  }
  return false;
}

/** The owner's viewer: letters are built with the owner's rights, row and column rules (docs/mailings.md). */
async function ownerViewer(deps: AppDeps, mailing: MailingRow): Promise<Viewer> {
  const owner = mailing.authorId === null ? null : await actorOfUser(deps, mailing.authorId);
  if (!owner) throw new Error('Владелец рассылки удалён: рассылка не может читать данные');
  return { actor: owner, requestedBy: owner, reason: 'self' };
}

/** Who gets letters of a mailing without a slice: its addresses, users and members of its groups. */
async function plainRecipients(deps: AppDeps, mailing: MailingRow): Promise<string[]> {
  const r = mailing.recipients;
  const all = [...r.emails, ...(await addressesOf(deps.db, r.user_ids, r.group_ids))];
  return [...new Set(all.map((a) => a.trim().toLowerCase()))];
}

async function sendRun(
  deps: AppDeps,
  mailing: MailingRow,
  runId: number,
  signal: AbortSignal,
): Promise<'done' | 'stopped'> {
  const viewer = await ownerViewer(deps, mailing);
  const slices = new Map<string, Slice>();
  let fieldRef = '';
  if (mailing.slice) {
    const plan = await planSlices(deps, viewer, mailing.slice);
    fieldRef = plan.fieldRef;
    for (const s of plan.slices) slices.set(s.key, s);
    await planLetters(
      deps.db,
      runId,
      plan.slices.flatMap((s) => s.recipients.map((recipient) => ({ recipient, sliceValue: s.key }))),
    );
  } else {
    const to = await plainRecipients(deps, mailing);
    await planLetters(
      deps.db,
      runId,
      to.map((recipient) => ({ recipient, sliceValue: '' })),
    );
  }
  const channel = await channelById(deps.db, mailing.channelId);
  if (!channel) throw new Error(`Почтовый канал не найден (id ${mailing.channelId})`);
  const sender = smtpSender(smtpSettingsOf(deps, channel));
  const sliceFilter = (key: string) => {
    if (!mailing.slice) return null;
    return { key, value: slices.get(key)?.value ?? key, datasetId: mailing.slice.dataset_id, fieldRef };
  };
  try {
    for (;;) {
      const pending = await pendingLetters(deps.db, runId);
      if (!pending.length) return 'done';
      const groups = new Map<string, LetterRow[]>();
      for (const l of pending) groups.set(l.sliceValue, [...(groups.get(l.sliceValue) ?? []), l]);
      for (const [key, letters] of groups) {
        if (signal.aborted) return 'stopped';
        let content: LetterContent;
        try {
          content = await buildLetter(deps, viewer, mailing, sliceFilter(key), signal);
        } catch (e) {
          if (signal.aborted) return 'stopped';
          const reason = MSG.notBuilt(reasonOf(e)).slice(0, 2000);
          for (const l of letters) await settleLetter(deps.db, l.id, { status: 'failed', error: reason });
          continue;
        }
        try {
          for (const l of letters) {
            if (signal.aborted) return 'stopped';
            await sendOne(deps, sender, l, content);
          }
        } finally {
          await dropFiles(content.files);
        }
      }
      if ((await pendingLetters(deps.db, runId)).length) {
        await sleep(RETRY_DELAY_MS, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return 'stopped';
      }
    }
  } finally {
    sender.close();
  }
}

async function sendOne(deps: AppDeps, sender: SmtpSender, letter: LetterRow, content: LetterContent): Promise<void> {
  const claimed = await claimLetter(deps.db, letter.id);
  if (!claimed) return;
  try {
    await sender.send({
      to: [claimed.recipient],
      subject: content.subject,
      text: content.text,
      html: content.html,
      attachments: content.attachments,
    });
    await settleLetter(deps.db, claimed.id, { status: 'sent', error: null, sentAt: new Date() });
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).slice(0, 2000);
    const final = claimed.attempts >= MAX_ATTEMPTS;
    await settleLetter(deps.db, claimed.id, { status: final ? 'failed' : 'pending', error: reason });
  }
}

/** An error as a letter's reason: a refusal's field messages too (which field the owner's rules refuse, and why). */
function reasonOf(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const fields = e instanceof AppError && e.fieldErrors ? Object.values(e.fieldErrors) : [];
  return fields.length ? `${text}: ${fields.join('; ')}` : text;
}

async function notifyFailed(deps: AppDeps, mailing: MailingRow, runId: number, reason: string): Promise<void> {
  if (mailing.authorId === null) return;
  await insertNotification(deps.db, {
    userId: mailing.authorId,
    kind: 'mailing_failed',
    title: MSG.runFailed(mailing.name),
    message: reason,
    objectType: 'mailing_run',
    objectId: runId,
  });
}
