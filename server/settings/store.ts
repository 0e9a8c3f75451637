import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { settings } from '../../db/schema/settings';

export async function readSetting<T>(db: DbOrTx, key: string): Promise<T | undefined> {
  const rows = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, key));
  return rows[0]?.value as T | undefined;
}

export async function writeSetting(db: DbOrTx, key: string, value: unknown): Promise<void> {
  await db
    .insert(settings)
    .values({ key, value })
    .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: sql`now()` } });
}

/** Inserts only when absent and returns what is stored: safe when several nodes start at once. */
export async function ensureSetting<T>(db: DbOrTx, key: string, initial: T): Promise<T> {
  await db.insert(settings).values({ key, value: initial }).onConflictDoNothing();
  return (await readSetting<T>(db, key)) as T;
}
