import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { smtpSender, SmtpError, type SmtpSettings } from '../../adapters/mail/smtp';
import { isForeignKeyViolation } from '../kernel/db-errors';
import { pageOf, type PageRequest } from '../kernel/paging';
import { mailingsUsingChannel } from '../mailings/store';
import { MSG, testFailed } from './messages';
import { channelById, channelsPage, deleteChannel, insertChannel, updateChannel, type MailChannelRow } from './store';

/*
 * SMTP mail channels: GET/POST /api/mail-channels, GET/PUT/DELETE /api/mail-channels/{id},
 * POST /api/mail-channels/{id}/test. Administered by system administrators (the router's sysadminProcedure); any user
 * lists their ids and names to pick one in a mailing. The password is sealed with the secret box and answered masked.
 */

export type Security = 'none' | 'starttls' | 'ssl';

export interface MailChannelInput {
  name: string;
  host: string;
  port: number;
  security: Security;
  username: string;
  /** Omitted on update: unchanged; null: no password. */
  password?: string | null;
  from_address: string;
  from_name: string;
}

export interface MailChannelView {
  id: number;
  name: string;
  host: string;
  port: number;
  security: Security;
  username: string;
  /** Masked: '********' when one is stored, else null. */
  password: string | null;
  from_address: string;
  from_name: string;
  created_at: string;
  updated_at: string;
}

const PASSWORD_MASK = '********';

function channelView(row: MailChannelRow): MailChannelView {
  return {
    id: row.id,
    name: row.name,
    host: row.host,
    port: row.port,
    security: row.security as Security,
    username: row.username,
    password: row.passwordBox ? PASSWORD_MASK : null,
    from_address: row.fromAddress,
    from_name: row.fromName,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * The fields GET /api/mail-channels sorts by: those anyone may order the list by, so a user who sees id and name only
 * learns nothing of the hidden fields (host, user) from the order.
 */
export const CHANNEL_SORT_FIELDS = ['id', 'name', 'created_at', 'updated_at'] as const;

/** GET /api/mail-channels: a page of channels, everything for an administrator, id and name for anyone else. */
export async function listChannels(deps: AppDeps, actor: Actor, input: PageRequest & { query?: string }) {
  const { rows, total } = await channelsPage(deps.db, input);
  const content = rows.map((r) => (actor.isSysadmin ? channelView(r) : { id: r.id, name: r.name }));
  return pageOf(content, input, total);
}

export async function getChannel(deps: AppDeps, id: number): Promise<MailChannelView> {
  return channelView(await mustChannel(deps, id));
}

export async function createChannel(deps: AppDeps, input: MailChannelInput): Promise<MailChannelView> {
  const row = await insertChannel(deps.db, { ...columnsOf(input), passwordBox: sealed(deps, input.password) });
  return channelView(row);
}

export async function changeChannel(deps: AppDeps, id: number, input: MailChannelInput): Promise<MailChannelView> {
  await mustChannel(deps, id);
  const password = input.password === undefined ? {} : { passwordBox: sealed(deps, input.password) };
  const row = await updateChannel(deps.db, id, { ...columnsOf(input), ...password });
  if (!row) throw MSG.notFound(id);
  return channelView(row);
}

/** DELETE /api/mail-channels/{id}: 400 while mailings use it (the foreign key refuses a race the count missed). */
export async function removeChannel(deps: AppDeps, id: number): Promise<{ id: number; deleted: true }> {
  await mustChannel(deps, id);
  const used = await mailingsUsingChannel(deps.db, id);
  if (used > 0) throw MSG.inUse(used);
  try {
    await deleteChannel(deps.db, id);
  } catch (e) {
    if (isForeignKeyViolation(e)) throw MSG.inUse(await mailingsUsingChannel(deps.db, id));
    throw e;
  }
  return { id, deleted: true };
}

/**
 * POST /api/mail-channels/{id}/test: a real letter. A refusal is a result, not an error of the call: ok false and what
 * happened in Russian, the server's reply after it.
 */
export async function testChannel(deps: AppDeps, id: number, to: string): Promise<{ ok: boolean; message: string }> {
  const row = await mustChannel(deps, id);
  const sender = smtpSender(smtpSettingsOf(deps, row));
  try {
    await sender.send({ to: [to], subject: MSG.testSubject, text: MSG.testBody });
    return { ok: true, message: MSG.testOk };
  } catch (e) {
    const failure = e instanceof SmtpError ? e.failure : 'other';
    const detail = e instanceof Error ? e.message : String(e);
    return { ok: false, message: testFailed(failure, `${row.host}:${row.port}`, detail) };
  } finally {
    sender.close();
  }
}

/** What the SMTP adapter needs of a channel, its password opened (mailing runs use it too). */
export function smtpSettingsOf(deps: AppDeps, row: MailChannelRow): SmtpSettings {
  return {
    host: row.host,
    port: row.port,
    security: row.security as Security,
    username: row.username,
    password: row.passwordBox ? deps.secretBox.open<string>(row.passwordBox) : null,
    fromAddress: row.fromAddress,
    fromName: row.fromName,
  };
}

async function mustChannel(deps: AppDeps, id: number): Promise<MailChannelRow> {
  const row = await channelById(deps.db, id);
  if (!row) throw MSG.notFound(id);
  return row;
}

function columnsOf(input: MailChannelInput) {
  return {
    name: input.name,
    host: input.host,
    port: input.port,
    security: input.security,
    username: input.username,
    fromAddress: input.from_address,
    fromName: input.from_name,
  };
}

function sealed(deps: AppDeps, password: string | null | undefined): string | null {
  return password ? deps.secretBox.seal(password) : null;
}
