import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { smtpSender, type SmtpSender } from '../../adapters/mail/smtp';
import type { Viewer } from '../access/viewer';
import { actorOfUser } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { AppError } from '../kernel/errors';
import { jobKind, type JobContext, type JobKind } from '../jobs/jobs';
import { channelById } from '../mail-channels/store';
import { smtpSettingsOf } from '../mail-channels/mail-channels';
import { insertNotification } from '../notifications/store';
import { buildLetter, dropFiles, type LetterContent } from './letters';
import { MSG } from './messages';
import { planSlices, type Slice } from './slices';
import {
  addressesOf,
  claimLetter,
  failInterrupted,
  letterCounts,
  mailingById,
  moveRun,
  pendingLetters,
  planLetters,
  runById,
  settleLetter,
  unfinishedRuns,
  type LetterRow,
  type MailingRow,
} from './store';

/*
 * A mailing run as a pg-boss job (server/jobs). The run first plans its letters (one row per recipient and slice
 * value, the unique key keeps a re-plan from adding any twice), then sends them: each letter is claimed
 * (pending -> sending, one winner), sent, and settled (sent, or back to pending until MAX_ATTEMPTS, then failed).
 * A failing letter waits for the next pass and never holds the others. When the node stops mid-run the run stays
 * `running`; the next start of the jobs resumes it: letters left `sending` may have left and are failed, never sent
 * again, pending ones are sent. Only one job works on a run at a time (JobRunner.exclusive), so a run found
 * `running` by the job holding it was left by a node that stopped. The mailing's owner is notified when a run ends
 * with failed letters or fails.
 */

export const MAILING_RUN = jobKind('mailing-run', z.object({ runId: z.number().int().positive() }));
export const MAILING_SCHEDULE = jobKind('mailing-schedule', z.object({ mailingId: z.number().int().positive() }));

const MAX_ATTEMPTS = 3;
const RETRY_DELAY_MS = 1_000;

/** The job kinds of this area (registered in server/app/start.ts). */
export function mailingJobKinds(
  deps: AppDeps,
  startScheduled: (deps: AppDeps, mailingId: number) => Promise<void>,
): JobKind<never>[] {
  const run: JobKind<{ runId: number }> = {
    ...MAILING_RUN,
    concurrency: 2,
    // A run may be queued twice (resumed when the jobs start while its first job still waits): one works on it, the
    // other finds the run taken or already ended and returns.
    handler: async (p, ctx) => {
      await deps.jobs.exclusive(`mailing-run:${p.runId}`, () => runMailing(deps, p.runId, ctx));
    },
  };
  const scheduled: JobKind<{ mailingId: number }> = {
    ...MAILING_SCHEDULE,
    concurrency: 1,
    handler: (p) => startScheduled(deps, p.mailingId),
  };
  return [run, scheduled] as unknown as JobKind<never>[];
}

/** Once the jobs run on a node: runs a stopped node left queued or running are resumed. */
export async function startMailingJobs(deps: AppDeps): Promise<void> {
  for (const run of await unfinishedRuns(deps.db)) await deps.jobs.send(MAILING_RUN, { runId: run.id });
}

async function runMailing(deps: AppDeps, runId: number, ctx: JobContext): Promise<void> {
  const before = await runById(deps.db, runId);
  if (!before || (before.state !== 'queued' && before.state !== 'running')) return;
  const run = await moveRun(deps.db, runId, ['queued', 'running'], {
    state: 'running',
    startedAt: before.startedAt ?? new Date(),
  });
  if (!run) return;
  if (before.state === 'running') await failInterrupted(deps.db, runId, MSG.interrupted);
  const mailing = await mailingById(deps.db, run.mailingId);
  if (!mailing) return;
  try {
    const outcome = await sendRun(deps, mailing, runId, ctx.signal);
    if (outcome === 'stopped') return;
    const counts = await letterCounts(deps.db, runId);
    const failed = counts.failed > 0;
    const done = await moveRun(deps.db, runId, ['running'], {
      state: failed ? 'failed' : 'succeeded',
      lettersSent: counts.sent,
      lettersFailed: counts.failed,
      error: failed ? MSG.lettersFailed(counts.failed, counts.sent + counts.failed) : null,
      finishedAt: new Date(),
    });
    if (done && failed) await notifyFailed(deps, mailing, runId, done.error ?? '');
  } catch (e) {
    if (ctx.signal.aborted) return;
    const reason = (e instanceof Error ? e.message : String(e)).slice(0, 2000);
    const counts = await letterCounts(deps.db, runId);
    const done = await moveRun(deps.db, runId, ['running'], {
      state: 'failed',
      lettersSent: counts.sent,
      lettersFailed: counts.failed,
      error: reason,
      finishedAt: new Date(),
    });
    if (done) await notifyFailed(deps, mailing, runId, reason);
  }
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
