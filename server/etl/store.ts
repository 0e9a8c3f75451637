import { and, count, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import { isForeignKeyViolation } from '../kernel/db-errors';
import { orderByOf, type PageRequest } from '../kernel/paging';
import type { DbOrTx } from '../../db/client';
import { datasetExtractions, extractRuns, extractRunSteps } from '../../db/schema/extracts';
import { lockDatasets } from '../datasets/load-model';

/*
 * Rows of extraction settings, runs and their step log (tx-first, actor-free). The run's state machine is in
 * server/etl/run-job.ts; each transition is one conditional UPDATE here, so two nodes never both move a run.
 */

export type ExtractionRow = typeof datasetExtractions.$inferSelect;
export type ExtractRunRow = typeof extractRuns.$inferSelect;
export type RunState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
const ACTIVE_STATES: RunState[] = ['queued', 'running'];

export async function extractionOf(db: DbOrTx, datasetId: number): Promise<ExtractionRow | null> {
  const [row] = await db.select().from(datasetExtractions).where(eq(datasetExtractions.datasetId, datasetId));
  return row ?? null;
}

export async function saveExtraction(db: DbOrTx, values: Omit<ExtractionRow, 'updatedAt'>): Promise<ExtractionRow> {
  const { datasetId: _id, ...change } = values;
  const [row] = await db
    .insert(datasetExtractions)
    .values(values)
    .onConflictDoUpdate({ target: datasetExtractions.datasetId, set: { ...change, updatedAt: sql`now()` } })
    .returning();
  return row;
}

export async function insertRun(
  db: DbOrTx,
  values: { datasetId: number; mode: string; userId: number | null; trigger: string },
): Promise<ExtractRunRow> {
  const [row] = await db.insert(extractRuns).values(values).returning();
  return row;
}

export async function runById(db: DbOrTx, id: number): Promise<ExtractRunRow | null> {
  const [row] = await db.select().from(extractRuns).where(eq(extractRuns.id, id));
  return row ?? null;
}

export async function lastRunOf(db: DbOrTx, datasetId: number): Promise<ExtractRunRow | null> {
  const [row] = await db
    .select()
    .from(extractRuns)
    .where(eq(extractRuns.datasetId, datasetId))
    .orderBy(desc(extractRuns.id))
    .limit(1);
  return row ?? null;
}

export async function activeRunOf(db: DbOrTx, datasetId: number): Promise<ExtractRunRow | null> {
  const [row] = await db
    .select()
    .from(extractRuns)
    .where(and(eq(extractRuns.datasetId, datasetId), inArray(extractRuns.state, ACTIVE_STATES)));
  return row ?? null;
}

/** Moves the run only when it is in one of `from`: null when another node or a cancel moved it first. */
export async function moveRun(
  db: DbOrTx,
  id: number,
  from: RunState[],
  change: Partial<Omit<ExtractRunRow, 'id' | 'datasetId'>>,
): Promise<ExtractRunRow | null> {
  const [row] = await db
    .update(extractRuns)
    .set(change)
    .where(and(eq(extractRuns.id, id), inArray(extractRuns.state, from)))
    .returning();
  return row ?? null;
}

/** Runs of a dataset, a page of them: newest first unless `sort` names a field (RUN_SORT_FIELDS of runs.ts). */
export async function runsOfDataset(
  db: DbOrTx,
  datasetId: number,
  page: PageRequest,
): Promise<{ rows: ExtractRunRow[]; total: number }> {
  const rows = await db
    .select()
    .from(extractRuns)
    .where(eq(extractRuns.datasetId, datasetId))
    .orderBy(
      ...orderByOf(
        page.sort,
        {
          job_id: extractRuns.id,
          state: extractRuns.state,
          mode: extractRuns.mode,
          trigger: extractRuns.trigger,
          created_at: extractRuns.createdAt,
          started_at: extractRuns.startedAt,
          finished_at: extractRuns.finishedAt,
        },
        [desc(extractRuns.id)],
        extractRuns.id,
      ),
    )
    .limit(page.size)
    .offset(page.page * page.size);
  const [{ n }] = await db.select({ n: count() }).from(extractRuns).where(eq(extractRuns.datasetId, datasetId));
  return { rows, total: n };
}

export async function addStep(db: DbOrTx, runId: number, state: RunState, message: string): Promise<void> {
  await db.insert(extractRunSteps).values({ runId, state, message });
}

/**
 * A step the worker logs while it pulls, written only while the run is still running: false (nothing written) when
 * the run ended meanwhile or went with its dataset, which tells the worker to stop. A run deleted between the check
 * and the insert is refused by the foreign key, read the same way.
 */
export async function addRunningStep(db: DbOrTx, runId: number, message: string): Promise<boolean> {
  try {
    const { rows } = await db.execute(
      sql`insert into ${extractRunSteps} (run_id, state, message)
          select ${extractRuns.id}, 'running', ${message} from ${extractRuns}
          where ${extractRuns.id} = ${runId} and ${extractRuns.state} = 'running'
          returning 1`,
    );
    return rows.length > 0;
  } catch (e) {
    if (isForeignKeyViolation(e)) return false;
    throw e;
  }
}

/**
 * The datasets about to be deleted or switched to live, locked (a run's start locks its dataset row to insert the
 * run, so none starts until the caller commits), and their queued and running runs, locked too: what the caller's
 * transaction ends. `workspaceId`: every dataset of the workspace.
 */
export async function lockActiveRuns(
  tx: DbOrTx,
  of: { datasetIds: number[] } | { workspaceId: number },
): Promise<{ datasetIds: number[]; runs: ExtractRunRow[] }> {
  const datasetIds = await lockDatasets(tx, of);
  if (!datasetIds.length) return { datasetIds, runs: [] };
  const runs = await tx
    .select()
    .from(extractRuns)
    .where(and(inArray(extractRuns.datasetId, datasetIds), inArray(extractRuns.state, ACTIVE_STATES)))
    .for('update');
  return { datasetIds, runs };
}

/** Moves the given runs still queued or running to cancelled with `reason` (the run's error and its last step). */
export async function cancelRuns(tx: DbOrTx, ids: number[], reason: string): Promise<ExtractRunRow[]> {
  if (!ids.length) return [];
  const moved = await tx
    .update(extractRuns)
    .set({ state: 'cancelled', cancelRequested: true, error: reason, finishedAt: new Date() })
    .where(and(inArray(extractRuns.id, ids), inArray(extractRuns.state, ACTIVE_STATES)))
    .returning();
  if (moved.length)
    await tx.insert(extractRunSteps).values(moved.map((r) => ({ runId: r.id, state: 'cancelled', message: reason })));
  return moved;
}

/** Steps of a run, a page of them: in the order they happened unless `sort` names a field (STEP_SORT_FIELDS). */
export async function stepsOfRun(
  db: DbOrTx,
  runId: number,
  page: PageRequest,
): Promise<{ rows: (typeof extractRunSteps.$inferSelect)[]; total: number }> {
  const rows = await db
    .select()
    .from(extractRunSteps)
    .where(eq(extractRunSteps.runId, runId))
    .orderBy(...orderByOf(page.sort, { at: extractRunSteps.at, state: extractRunSteps.state }, [], extractRunSteps.id))
    .limit(page.size)
    .offset(page.page * page.size);
  const [{ n }] = await db.select({ n: count() }).from(extractRunSteps).where(eq(extractRunSteps.runId, runId));
  return { rows, total: n };
}

/** Running runs whose worker stopped writing its heartbeat (the process died mid-pull). */
export async function staleRuns(db: DbOrTx, olderThanMs: number): Promise<ExtractRunRow[]> {
  return db
    .select()
    .from(extractRuns)
    .where(
      and(
        eq(extractRuns.state, 'running'),
        lt(extractRuns.heartbeatAt, sql`now() - make_interval(secs => ${olderThanMs / 1000})`),
      ),
    );
}

/** Runs queued longer than this: whether their pg-boss job is still coming is for the sweep to ask. */
export async function queuedRunsOlderThan(db: DbOrTx, olderThanMs: number): Promise<ExtractRunRow[]> {
  return db
    .select()
    .from(extractRuns)
    .where(
      and(
        eq(extractRuns.state, 'queued'),
        lt(extractRuns.createdAt, sql`now() - make_interval(secs => ${olderThanMs / 1000})`),
      ),
    );
}
