import { and, eq, ilike, type SQL } from 'drizzle-orm';
import { mailingRuns, mailings } from '../../db/schema/mailings';
import { readableObject } from '../access/object-access';
import { roleIsAdmin } from '../access/roles';
import { viewerOf } from '../access/viewer';
import {
  assertWorkspaceEditable,
  defaultWorkspaceFor,
  inVisibleWorkspaces,
  workspaceRoleOf,
} from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { existingGroupIds } from '../groups/store';
import { cronProblem, isTimeZone } from '../jobs/jobs';
import { channelById } from '../mail-channels/store';
import { smtpSettingsOf } from '../mail-channels/mail-channels';
import { smtpSender } from '../../adapters/mail/smtp';
import { AppError, badRequest, invalid, type FieldErrors } from '../kernel/errors';
import { containsPattern, pageOf } from '../kernel/paging';
import { timeRange } from '../objects/list';
import type { FilterSpec } from '../query/compile/types';
import { emailsOf, existingUserIds } from '../users/store';
import { buildLetter, dropFiles } from './letters';
import { MSG } from './messages';
import { MAILING_RUN, MAILING_SCHEDULE } from './run-job';
import { checkSlice, estimateOf, planSlices, type SliceSpec } from './slices';
import {
  deleteMailing,
  insertMailing,
  insertRun,
  letterCounts,
  lettersOf,
  mailingById,
  mailingsWhere,
  runById,
  runsOf,
  updateMailing,
  type MailingRow,
} from './store';
import { letterView, mailingView, runView, type MailingFormat, type MailingView, type RunView } from './views';

/*
 * Mailings over REST: /api/mailings (list, create), /api/mailings/{id} (get, update, delete), /pause, /resume, /run,
 * /test, /runs, /runs/{runId}, /runs/{runId}/letters, and /api/mailings/slice-estimate. A mailing is read by the
 * members of its workspace and changed by its owner: its author, an Администратор of its workspace or a system
 * administrator. Letters are built with the rights of the author (docs/mailings.md).
 */

export interface MailingInput {
  name: string;
  workspace_id?: number;
  dashboard_id?: number | null;
  widget_ids: number[];
  format: MailingFormat;
  schedule: string | null;
  timezone: string;
  status: 'active' | 'paused';
  channel_id: number;
  recipients: { user_ids: number[]; group_ids: number[]; emails: string[] };
  subject: string;
  body: string;
  slice: SliceSpec | null;
}

export interface MailingListInput {
  page: number;
  size: number;
  query?: string;
  author?: number;
  workspaceId?: number;
  status?: 'active' | 'paused';
  createdAtFrom?: Date;
  createdAtTo?: Date;
  updatedAtFrom?: Date;
  updatedAtTo?: Date;
}

interface Page {
  page: number;
  size: number;
}

/** The mailing as the caller may see it: 404 outside the caller's workspaces; `owner` also needs ownership (403). */
async function mailingFor(deps: AppDeps, actor: Actor, id: number, owner: boolean): Promise<MailingRow> {
  const row = await mailingById(deps.db, id);
  if (!row) throw MSG.notFound(id);
  if (actor.isSysadmin) return row;
  const role = await workspaceRoleOf(deps.db, actor, row.workspaceId);
  if (!role) throw MSG.notFound(id);
  if (owner && row.authorId !== actor.userId && !roleIsAdmin(role)) throw new AppError('forbidden');
  return row;
}

export async function listMailings(deps: AppDeps, actor: Actor, input: MailingListInput) {
  const where: SQL[] = [inVisibleWorkspaces(actor, mailings.workspaceId)];
  if (input.query) where.push(ilike(mailings.name, containsPattern(input.query)));
  if (input.author) where.push(eq(mailings.authorId, input.author));
  if (input.workspaceId) where.push(eq(mailings.workspaceId, input.workspaceId));
  if (input.status) where.push(eq(mailings.status, input.status));
  where.push(...timeRange(mailings.createdAt, input.createdAtFrom, input.createdAtTo));
  where.push(...timeRange(mailings.updatedAt, input.updatedAtFrom, input.updatedAtTo));
  const { rows, total } = await mailingsWhere(deps.db, and(...where), input);
  return pageOf(rows.map(mailingView), input, total);
}

export async function getMailing(deps: AppDeps, actor: Actor, id: number): Promise<MailingView> {
  return mailingView(await mailingFor(deps, actor, id, false));
}

export async function createMailing(deps: AppDeps, actor: Actor, input: MailingInput): Promise<MailingView> {
  const workspaceId = input.workspace_id ?? (await defaultWorkspaceFor(deps.db, actor));
  await assertWorkspaceEditable(deps.db, actor, workspaceId);
  await checkInput(deps, actor, input);
  const row = await insertMailing(deps.db, { ...columnsOf(input), workspaceId, authorId: actor.userId });
  // A new mailing has no schedule to remove: pg-boss is touched only when it gets one.
  if (row.schedule) await syncSchedule(deps, row);
  return mailingView(row);
}

export async function changeMailing(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: MailingInput,
): Promise<MailingView> {
  const before = await mailingFor(deps, actor, id, true);
  if (input.workspace_id !== undefined && input.workspace_id !== before.workspaceId)
    throw invalid({ workspace_id: 'Рассылку нельзя перенести в другое рабочее пространство' });
  // Letters are built with the owner's rights, and whoever says what a mailing sends and to whom becomes its owner: a
  // workspace administrator editing another's mailing must not route the author's objects, rows or unmasked columns
  // to addresses of their choosing. So the body is checked with the editor's rights and the editor becomes the author.
  await checkInput(deps, actor, input);
  const row = await updateMailing(deps.db, id, { ...columnsOf(input), authorId: actor.userId });
  if (!row) throw MSG.notFound(id);
  await syncSchedule(deps, row);
  return mailingView(row);
}

export async function removeMailing(deps: AppDeps, actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
  await mailingFor(deps, actor, id, true);
  await deps.jobs.unschedule(MAILING_SCHEDULE, scheduleKey(id)).catch(() => undefined);
  await deleteMailing(deps.db, id);
  return { id, deleted: true };
}

export async function pauseMailing(deps: AppDeps, actor: Actor, id: number): Promise<MailingView> {
  const row = await mailingFor(deps, actor, id, true);
  if (row.status === 'paused') throw MSG.alreadyPaused;
  const moved = (await updateMailing(deps.db, id, { status: 'paused' }))!;
  await syncSchedule(deps, moved);
  return mailingView(moved);
}

export async function resumeMailing(deps: AppDeps, actor: Actor, id: number): Promise<MailingView> {
  const row = await mailingFor(deps, actor, id, true);
  if (row.status !== 'paused') throw MSG.notPaused;
  const moved = (await updateMailing(deps.db, id, { status: 'active' }))!;
  await syncSchedule(deps, moved);
  return mailingView(moved);
}

/** POST /api/mailings/{id}/run: a run now, whatever the schedule or pause (data: run_id). */
export async function runMailingNow(deps: AppDeps, actor: Actor, id: number): Promise<{ run_id: number }> {
  await mailingFor(deps, actor, id, true);
  return { run_id: await queueRun(deps, id, 'manual') };
}

/** The schedule's job: a run unless the mailing was paused or deleted meanwhile. */
export async function startScheduledMailing(deps: AppDeps, mailingId: number): Promise<void> {
  const row = await mailingById(deps.db, mailingId);
  if (!row) return deps.jobs.unschedule(MAILING_SCHEDULE, scheduleKey(mailingId));
  if (row.status !== 'active' || !row.schedule) return;
  await queueRun(deps, mailingId, 'schedule');
}

async function queueRun(deps: AppDeps, mailingId: number, trigger: 'manual' | 'schedule'): Promise<number> {
  const run = await insertRun(deps.db, mailingId, trigger);
  await deps.jobs.send(MAILING_RUN, { runId: run.id });
  return run.id;
}

/**
 * POST /api/mailings/{id}/test: one letter now (the first slice's, for a sliced mailing), built with the caller's
 * rights and not recorded as a run.
 */
export async function sendTestLetter(
  deps: AppDeps,
  actor: Actor,
  id: number,
  emails: string[] | undefined,
): Promise<{ ok: true; recipients: string[] }> {
  const mailing = await mailingFor(deps, actor, id, true);
  let to = emails ?? [];
  if (!to.length) {
    const [mine] = await emailsOf(deps.db, [actor.userId]);
    if (!mine) throw MSG.noTestAddress;
    to = [mine];
  }
  // Built with the caller's rights (the owner's, when the owner asks): a test letter goes to addresses the caller
  // chooses, so it must not carry what only the owner may read.
  const viewer = await viewerOf(deps, actor, undefined);
  const channel = await channelById(deps.db, mailing.channelId);
  if (!channel) throw badRequest(MSG.channelNotFound(mailing.channelId));
  let slice = null;
  if (mailing.slice) {
    const plan = await planSlices(deps, viewer, mailing.slice);
    const first = plan.slices[0];
    if (first) slice = { key: first.key, value: first.value, datasetId: plan.datasetId, fieldRef: plan.fieldRef };
  }
  const content = await buildLetter(deps, viewer, mailing, slice).catch((e: unknown) => {
    if (e instanceof AppError) throw e;
    throw MSG.testFailed(e instanceof Error ? e.message : String(e));
  });
  const sender = smtpSender(smtpSettingsOf(deps, channel));
  try {
    await sender.send({ ...content, to, subject: MSG.testPrefix + content.subject });
  } catch (e) {
    throw MSG.testFailed(e instanceof Error ? e.message : String(e));
  } finally {
    sender.close();
    await dropFiles(content.files);
  }
  return { ok: true, recipients: to };
}

/** POST /api/mailings/slice-estimate: with the caller's rights (who will own the mailing once it is saved). */
export async function estimateSlices(
  deps: AppDeps,
  actor: Actor,
  input: SliceSpec & { filters: FilterSpec[] },
): Promise<{ slice_count: number; letter_count: number; sample_values: string[] }> {
  const viewer = await viewerOf(deps, actor, undefined);
  const { filters, ...spec } = input;
  return estimateOf(await planSlices(deps, viewer, spec, filters, ''));
}

export async function listRuns(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: Page & { createdAtFrom?: Date; createdAtTo?: Date },
) {
  await mailingFor(deps, actor, id, false);
  const { rows, total } = await runsOf(
    deps.db,
    id,
    timeRange(mailingRuns.createdAt, input.createdAtFrom, input.createdAtTo),
    input,
  );
  return pageOf(
    rows.map((r) => runView(r)),
    input,
    total,
  );
}

async function runOf(deps: AppDeps, actor: Actor, id: number, runId: number, owner: boolean) {
  await mailingFor(deps, actor, id, owner);
  const run = await runById(deps.db, runId);
  if (!run || run.mailingId !== id) throw MSG.runNotFound(runId);
  return run;
}

export async function getRun(deps: AppDeps, actor: Actor, id: number, runId: number): Promise<RunView> {
  const run = await runOf(deps, actor, id, runId, false);
  // While it runs the counts are the letters' own (the run row gets them when it ends).
  const live = run.state === 'running' ? await letterCounts(deps.db, runId) : undefined;
  return runView(run, live);
}

export async function listLetters(deps: AppDeps, actor: Actor, id: number, runId: number, page: Page) {
  await runOf(deps, actor, id, runId, true);
  const { rows, total } = await lettersOf(deps.db, runId, page);
  return pageOf(rows.map(letterView), page, total);
}

const scheduleKey = (id: number) => `mailing-${id}`;

/** The pg-boss schedule follows the mailing: on while active with a cron expression, off otherwise. */
async function syncSchedule(deps: AppDeps, row: MailingRow): Promise<void> {
  if (row.status === 'active' && row.schedule)
    await deps.jobs.schedule(MAILING_SCHEDULE, scheduleKey(row.id), row.schedule, row.timezone, { mailingId: row.id });
  else await deps.jobs.unschedule(MAILING_SCHEDULE, scheduleKey(row.id));
}

function columnsOf(input: MailingInput) {
  return {
    name: input.name,
    dashboardId: input.dashboard_id ?? null,
    widgetIds: input.dashboard_id ? [] : input.widget_ids,
    format: input.format,
    schedule: input.schedule?.trim() || null,
    timezone: input.timezone,
    status: input.status,
    channelId: input.channel_id,
    recipients: input.recipients,
    subject: input.subject,
    body: input.body,
    slice: input.slice,
  };
}

/** Everything wrong with a body, as one 422 with a field map; objects are checked with the owner's rights. */
async function checkInput(deps: AppDeps, owner: Actor, input: MailingInput): Promise<void> {
  const errors: FieldErrors = {};
  const hasDashboard = input.dashboard_id !== undefined && input.dashboard_id !== null;
  if (hasDashboard && input.widget_ids.length) errors.dashboard_id = MSG.objectBoth;
  if (!hasDashboard && !input.widget_ids.length) errors.widget_ids = MSG.objectRequired;
  if (input.schedule !== null) {
    const problem = cronProblem(input.schedule);
    if (problem) errors.schedule = problem;
  }
  if (!isTimeZone(input.timezone)) errors.timezone = MSG.unknownTimezone(input.timezone);
  if (!(await channelById(deps.db, input.channel_id))) errors.channel_id = MSG.channelNotFound(input.channel_id);
  const readable = async (kind: 'dashboard' | 'widget', id: number, key: string) => {
    try {
      await readableObject(deps.db, owner, kind, id);
    } catch {
      errors[key] = MSG.objectUnreadable(kind, id);
    }
  };
  if (hasDashboard) await readable('dashboard', input.dashboard_id!, 'dashboard_id');
  for (const [i, id] of input.widget_ids.entries()) await readable('widget', id, `widget_ids[${i}]`);
  const r = input.recipients;
  const knownUsers = await existingUserIds(deps.db, r.user_ids);
  r.user_ids.forEach((id, i) => {
    if (!knownUsers.has(id)) errors[`recipients.user_ids[${i}]`] = MSG.userNotFound(id);
  });
  const knownGroups = await existingGroupIds(deps.db, r.group_ids);
  r.group_ids.forEach((id, i) => {
    if (!knownGroups.has(id)) errors[`recipients.group_ids[${i}]`] = MSG.groupNotFound(id);
  });
  if (!input.slice && !r.user_ids.length && !r.group_ids.length && !r.emails.length)
    errors.recipients = MSG.noRecipients;
  if (input.slice) {
    try {
      await checkSlice(deps, { actor: owner, requestedBy: owner, reason: 'self' }, input.slice, 'slice.');
    } catch (e) {
      if (e instanceof AppError && e.fieldErrors) Object.assign(errors, e.fieldErrors);
      else errors['slice.dataset_id'] = MSG.objectUnreadable('dataset', input.slice.dataset_id);
    }
  }
  if (Object.keys(errors).length) throw invalid(errors);
}
