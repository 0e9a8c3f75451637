import { count, eq } from 'drizzle-orm';
import { mailChannels, mailings } from '../../db/schema';
import type { DbOrTx } from '../../db/client';

/* Mail channels (tx-first, actor-free). */

export type MailChannelRow = typeof mailChannels.$inferSelect;
export type NewMailChannel = typeof mailChannels.$inferInsert;

export async function channelById(db: DbOrTx, id: number): Promise<MailChannelRow | null> {
  const [row] = await db.select().from(mailChannels).where(eq(mailChannels.id, id));
  return row ?? null;
}

export async function allChannels(db: DbOrTx): Promise<MailChannelRow[]> {
  return db.select().from(mailChannels).orderBy(mailChannels.id);
}

export async function insertChannel(db: DbOrTx, values: NewMailChannel): Promise<MailChannelRow> {
  const [row] = await db.insert(mailChannels).values(values).returning();
  return row;
}

export async function updateChannel(
  db: DbOrTx,
  id: number,
  values: Partial<NewMailChannel>,
): Promise<MailChannelRow | null> {
  const [row] = await db
    .update(mailChannels)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(mailChannels.id, id))
    .returning();
  return row ?? null;
}

export async function deleteChannel(db: DbOrTx, id: number): Promise<void> {
  await db.delete(mailChannels).where(eq(mailChannels.id, id));
}

export async function mailingsOfChannel(db: DbOrTx, id: number): Promise<number> {
  const [row] = await db.select({ n: count() }).from(mailings).where(eq(mailings.channelId, id));
  return Number(row?.n ?? 0);
}
