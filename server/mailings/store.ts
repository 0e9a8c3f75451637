import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { mailingLetters, mailingRuns, mailings } from '../../db/schema/mailings';
import type { DbOrTx } from '../../db/client';
import { memberUserIds } from '../groups/store';
import { emailsOf } from '../users/store';

/* Mailings, their runs and letters (tx-first, actor-free). */

export type MailingRow = typeof mailings.$inferSelect;
export type NewMailing = typeof mailings.$inferInsert;
export type MailingRunRow = typeof mailingRuns.$inferSelect;
export type LetterRow = typeof mailingLetters.$inferSelect;

interface Page {
  page: number;
  size: number;
}

export async function mailingById(db: DbOrTx, id: number): Promise<MailingRow | null> {
  const [row] = await db.select().from(mailings).where(eq(mailings.id, id));
  return row ?? null;
}

export async function mailingsWhere(db: DbOrTx, where: SQL | undefined, page: Page) {
  const [rows, [{ n }]] = await Promise.all([
    db
      .select()
      .from(mailings)
      .where(where)
      .orderBy(asc(mailings.id))
      .limit(page.size)
      .offset(page.page * page.size),
    db.select({ n: count() }).from(mailings).where(where),
  ]);
  return { rows, total: Number(n) };
}

export async function insertMailing(db: DbOrTx, values: NewMailing): Promise<MailingRow> {
  const [row] = await db.insert(mailings).values(values).returning();
  return row;
}

export async function updateMailing(db: DbOrTx, id: number, values: Partial<NewMailing>): Promise<MailingRow | null> {
  const [row] = await db
    .update(mailings)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(mailings.id, id))
    .returning();
  return row ?? null;
}

export async function deleteMailing(db: DbOrTx, id: number): Promise<void> {
  await db.delete(mailings).where(eq(mailings.id, id));
}

export async function insertRun(db: DbOrTx, mailingId: number, trigger: string): Promise<MailingRunRow> {
  const [row] = await db.insert(mailingRuns).values({ mailingId, trigger }).returning();
  return row;
}

export async function runById(db: DbOrTx, id: number): Promise<MailingRunRow | null> {
  const [row] = await db.select().from(mailingRuns).where(eq(mailingRuns.id, id));
  return row ?? null;
}

/** One conditional move of a run's state: null when it was not in one of `from` (another node moved it). */
export async function moveRun(
  db: DbOrTx,
  id: number,
  from: string[],
  values: Partial<typeof mailingRuns.$inferInsert>,
): Promise<MailingRunRow | null> {
  const [row] = await db
    .update(mailingRuns)
    .set(values)
    .where(and(eq(mailingRuns.id, id), inArray(mailingRuns.state, from)))
    .returning();
  return row ?? null;
}

/** Runs queued or running: the sweep checks each one is held by a live node or has a job to come. */
export async function unfinishedRuns(db: DbOrTx): Promise<MailingRunRow[]> {
  return db
    .select()
    .from(mailingRuns)
    .where(inArray(mailingRuns.state, ['queued', 'running']));
}

export async function runsOf(db: DbOrTx, mailingId: number, range: SQL[], page: Page) {
  const where = and(eq(mailingRuns.mailingId, mailingId), ...range);
  const [rows, [{ n }]] = await Promise.all([
    db
      .select()
      .from(mailingRuns)
      .where(where)
      .orderBy(desc(mailingRuns.id))
      .limit(page.size)
      .offset(page.page * page.size),
    db.select({ n: count() }).from(mailingRuns).where(where),
  ]);
  return { rows, total: Number(n) };
}

export async function lettersOf(db: DbOrTx, runId: number, page: Page) {
  const where = eq(mailingLetters.runId, runId);
  const [rows, [{ n }]] = await Promise.all([
    db
      .select()
      .from(mailingLetters)
      .where(where)
      .orderBy(asc(mailingLetters.id))
      .limit(page.size)
      .offset(page.page * page.size),
    db.select({ n: count() }).from(mailingLetters).where(where),
  ]);
  return { rows, total: Number(n) };
}

/** Plans letters; one already planned (same run, recipient, slice value) is left as it is. */
export async function planLetters(
  db: DbOrTx,
  runId: number,
  letters: { recipient: string; sliceValue: string }[],
): Promise<void> {
  for (let i = 0; i < letters.length; i += 1000)
    await db
      .insert(mailingLetters)
      .values(letters.slice(i, i + 1000).map((l) => ({ runId, ...l })))
      .onConflictDoNothing();
}

export async function pendingLetters(db: DbOrTx, runId: number): Promise<LetterRow[]> {
  return db
    .select()
    .from(mailingLetters)
    .where(and(eq(mailingLetters.runId, runId), eq(mailingLetters.status, 'pending')))
    .orderBy(asc(mailingLetters.id));
}

/** pending -> sending, one winner: a letter another runner took is not sent again. */
export async function claimLetter(db: DbOrTx, id: number): Promise<LetterRow | null> {
  const [row] = await db
    .update(mailingLetters)
    .set({ status: 'sending', attempts: sql`${mailingLetters.attempts} + 1` })
    .where(and(eq(mailingLetters.id, id), eq(mailingLetters.status, 'pending')))
    .returning();
  return row ?? null;
}

/**
 * Settles a letter. A node that stopped may settle late, after another node resumed the run and made the letter
 * `unconfirmed`: its `sent` is still the truth (the letter left) and is kept, but a refusal or a retry never
 * overwrites what the resumed run decided.
 */
export async function settleLetter(
  db: DbOrTx,
  id: number,
  values: { status: 'sent' | 'failed' | 'pending'; error?: string | null; sentAt?: Date },
): Promise<void> {
  const from = values.status === 'sent' ? ['sending', 'unconfirmed'] : ['pending', 'sending'];
  await db
    .update(mailingLetters)
    .set(values)
    .where(and(eq(mailingLetters.id, id), inArray(mailingLetters.status, from)));
}

/**
 * Letters a node that died left `sending`: the SMTP call may or may not have gone through, so they are never sent
 * again and become `unconfirmed` with that reason (the run's report names their recipients).
 */
export async function markUnconfirmed(db: DbOrTx, runId: number, reason: string): Promise<number> {
  const rows = await db
    .update(mailingLetters)
    .set({ status: 'unconfirmed', error: reason })
    .where(and(eq(mailingLetters.runId, runId), eq(mailingLetters.status, 'sending')))
    .returning({ id: mailingLetters.id });
  return rows.length;
}

export interface LetterCounts {
  sent: number;
  failed: number;
  unconfirmed: number;
  pending: number;
}

export async function letterCounts(db: DbOrTx, runId: number): Promise<LetterCounts> {
  const rows = await db
    .select({ status: mailingLetters.status, n: count() })
    .from(mailingLetters)
    .where(eq(mailingLetters.runId, runId))
    .groupBy(mailingLetters.status);
  const of = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
  return { sent: of('sent'), failed: of('failed'), unconfirmed: of('unconfirmed'), pending: of('pending') };
}

/** The first `limit` recipients of a run's unconfirmed letters (with the slice value, for a sliced mailing). */
export async function unconfirmedRecipients(db: DbOrTx, runId: number, limit: number): Promise<string[]> {
  const rows = await db
    .select({ recipient: mailingLetters.recipient, sliceValue: mailingLetters.sliceValue })
    .from(mailingLetters)
    .where(and(eq(mailingLetters.runId, runId), eq(mailingLetters.status, 'unconfirmed')))
    .orderBy(asc(mailingLetters.id))
    .limit(limit);
  return rows.map((r) => (r.sliceValue ? `${r.recipient} (${r.sliceValue})` : r.recipient));
}

/** E-mail addresses of users and of the members of groups (accounts without one are skipped). */
export async function addressesOf(db: DbOrTx, userIds: number[], groupIds: number[]): Promise<string[]> {
  return [...(await emailsOf(db, userIds)), ...(await emailsOf(db, await memberUserIds(db, groupIds)))];
}

/** How many mailings send through the channel (a channel in use cannot be deleted). */
export async function mailingsUsingChannel(db: DbOrTx, channelId: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(mailings).where(eq(mailings.channelId, channelId));
  return Number(row?.n ?? 0);
}
