import { and, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { exportJobs } from '../../db/schema/exports';

/* Export jobs (tx-first, actor-free): POST /api/exports inserts, the job moves them, GET /api/exports/{jobId} reads. */

export type ExportJobRow = typeof exportJobs.$inferSelect;
export type NewExportJob = typeof exportJobs.$inferInsert;
type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export async function insertExportJob(db: DbOrTx, job: NewExportJob): Promise<ExportJobRow> {
  const [row] = await db.insert(exportJobs).values(job).returning();
  return row;
}

export async function exportJobById(db: DbOrTx, id: number): Promise<ExportJobRow | undefined> {
  const [row] = await db.select().from(exportJobs).where(eq(exportJobs.id, id));
  return row;
}

/** Moves a job that is in one of `from` (a conditional UPDATE: two nodes never both move it); null when it was not. */
export async function moveExportJob(
  db: DbOrTx,
  id: number,
  from: JobState[],
  set: Partial<NewExportJob>,
): Promise<ExportJobRow | null> {
  const [row] = await db
    .update(exportJobs)
    .set(set)
    .where(and(eq(exportJobs.id, id), inArray(exportJobs.state, from)))
    .returning();
  return row ?? null;
}

/**
 * Takes one of the installation's export slots (max_concurrent_jobs): the job goes running only while fewer jobs
 * run, counted under a transaction-scoped advisory lock so that two nodes never both take the last slot.
 */
export async function claimExportSlot(db: DbOrTx, id: number, maxConcurrent: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('export_jobs_slots'))`);
    const [{ n }] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(exportJobs)
      .where(eq(exportJobs.state, 'running'));
    if (n >= maxConcurrent) return false;
    const moved = await moveExportJob(tx, id, ['queued'], { state: 'running', progress: 0 });
    return !!moved;
  });
}

/** Jobs in state running (the sweep of jobs lost with their node checks each one's lock). */
export async function runningExportJobIds(db: DbOrTx): Promise<number[]> {
  const rows = await db.select({ id: exportJobs.id }).from(exportJobs).where(eq(exportJobs.state, 'running'));
  return rows.map((r) => r.id);
}

/** Finished jobs whose file expired: the cleanup removes the files and forgets the paths. */
export async function expiredExportFiles(db: DbOrTx, now: Date): Promise<{ id: number; filePath: string }[]> {
  const rows = await db
    .select({ id: exportJobs.id, filePath: exportJobs.filePath })
    .from(exportJobs)
    .where(and(isNotNull(exportJobs.filePath), lt(exportJobs.expiresAt, now)));
  return rows.map((r) => ({ id: r.id, filePath: r.filePath! }));
}

export async function forgetExportFile(db: DbOrTx, id: number): Promise<void> {
  await db.update(exportJobs).set({ filePath: null }).where(eq(exportJobs.id, id));
}
