import { count, eq, ilike, sql } from 'drizzle-orm';
import { mailChannels } from '../../db/schema/mail-channels';
import type { DbOrTx } from '../../db/client';
import { containsPattern, orderByOf, type PageRequest } from '../kernel/paging';

/* Mail channels (tx-first, actor-free). */

export type MailChannelRow = typeof mailChannels.$inferSelect;
export type NewMailChannel = typeof mailChannels.$inferInsert;

export async function channelById(db: DbOrTx, id: number): Promise<MailChannelRow | null> {
  const [row] = await db.select().from(mailChannels).where(eq(mailChannels.id, id));
  return row ?? null;
}

/** One page of channels whose name contains `query`; by id unless sorted by one of CHANNEL_SORT_FIELDS. */
export async function channelsPage(
  db: DbOrTx,
  input: PageRequest & { query?: string },
): Promise<{ rows: MailChannelRow[]; total: number }> {
  const where = input.query ? ilike(mailChannels.name, containsPattern(input.query)) : undefined;
  const [{ total }] = await db.select({ total: count() }).from(mailChannels).where(where);
  const order = orderByOf(
    input.sort,
    {
      id: mailChannels.id,
      name: sql`lower(${mailChannels.name})`,
      created_at: mailChannels.createdAt,
      updated_at: mailChannels.updatedAt,
    },
    [],
    mailChannels.id,
  );
  const rows = await db
    .select()
    .from(mailChannels)
    .where(where)
    .orderBy(...order)
    .limit(input.size)
    .offset(input.page * input.size);
  return { rows, total };
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
