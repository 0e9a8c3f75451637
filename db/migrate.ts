import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { sql } from 'drizzle-orm';
import type { Db } from './client';

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any constant works; it only has to be the same on every node so that concurrent starts migrate one at a time.
const MIGRATION_LOCK = 724_513_901;

export async function runMigrations(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await migrate(tx as unknown as Db, { migrationsFolder });
  });
}

/** The `when` of the newest migration this build carries (its journal's last entry), read once. */
let newestMigration: number | undefined;

function newestMigrationMillis(): number {
  if (newestMigration === undefined) {
    const journal = JSON.parse(readFileSync(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
      entries: { when: number }[];
    };
    newestMigration = Math.max(0, ...journal.entries.map((e) => e.when));
  }
  return newestMigration;
}

/**
 * Whether every migration this build carries is applied (GET /readyz): drizzle records each applied one with its
 * journal time and applies those newer than the newest recorded, so that comparison is what it would do. A database
 * migrated further by a newer release answers true: expand-then-contract migrations keep the older nodes working
 * while a rolling upgrade replaces them.
 */
export async function migrationsCurrent(db: Db): Promise<boolean> {
  const result = await db.execute<{ newest: string | null }>(
    sql`select max(created_at)::text as newest from drizzle.__drizzle_migrations`,
  );
  return Number(result.rows[0]?.newest ?? 0) >= newestMigrationMillis();
}
