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

/**
 * Merges `patch` into the object under `entry` of the setting `key` (a JSON object of objects), in one statement:
 * two administrators changing different entries at once do not undo each other.
 */
export async function mergeSettingEntry(db: DbOrTx, key: string, entry: string, patch: object): Promise<void> {
  await db.execute(sql`
    insert into ${settings} (key, value) values (${key}, ${JSON.stringify({ [entry]: patch })}::jsonb)
    on conflict (key) do update set
      value = ${settings.value} || jsonb_build_object(${entry}::text, coalesce(${settings.value} -> ${entry}::text, '{}'::jsonb) || ${JSON.stringify(patch)}::jsonb),
      updated_at = now()`);
}
