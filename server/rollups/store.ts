import { and, asc, count, desc, eq, inArray, isNull, lt, ne, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasetRollups, rollupBuilds, rollupBuildSteps, rollupLoads } from '../../db/schema/rollups';
import { isForeignKeyViolation } from '../kernel/db-errors';
import { orderByOf, type PageRequest } from '../kernel/paging';

/*
 * Rows of rollup definitions, their builds (with the step log) and their built loads, tx-first and actor-free. The
 * build's state machine is in build.ts; each move is one conditional UPDATE here, so two nodes never both move a build.
 */

export type RollupRow = typeof datasetRollups.$inferSelect;
export type RollupInsert = Omit<typeof datasetRollups.$inferInsert, 'id' | 'createdAt' | 'updatedAt'>;
export type BuildRow = typeof rollupBuilds.$inferSelect;
export type LoadRow = typeof rollupLoads.$inferSelect;
export type BuildState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
const ACTIVE: BuildState[] = ['queued', 'running'];

export async function rollupsOfDataset(db: DbOrTx, datasetId: number): Promise<RollupRow[]> {
  return db
    .select()
    .from(datasetRollups)
    .where(eq(datasetRollups.datasetId, datasetId))
    .orderBy(asc(datasetRollups.id));
}

export async function rollupById(db: DbOrTx, id: number): Promise<RollupRow | null> {
  const [row] = await db.select().from(datasetRollups).where(eq(datasetRollups.id, id));
  return row ?? null;
}

/** The rollup's row locked for the caller's transaction (a save, or a build's commit checking its shape). */
export async function rollupForUpdate(tx: DbOrTx, id: number): Promise<RollupRow | null> {
  const [row] = await tx.select().from(datasetRollups).where(eq(datasetRollups.id, id)).for('update');
  return row ?? null;
}

export async function nameTaken(db: DbOrTx, datasetId: number, name: string, exceptId?: number): Promise<boolean> {
  const [row] = await db
    .select({ id: datasetRollups.id })
    .from(datasetRollups)
    .where(
      and(
        eq(datasetRollups.datasetId, datasetId),
        eq(datasetRollups.name, name),
        exceptId === undefined ? undefined : ne(datasetRollups.id, exceptId),
      ),
    );
  return row !== undefined;
}

export async function insertRollup(db: DbOrTx, values: RollupInsert): Promise<RollupRow> {
  const [row] = await db.insert(datasetRollups).values(values).returning();
  return row;
}

export async function updateRollup(db: DbOrTx, id: number, values: Partial<RollupInsert>): Promise<RollupRow | null> {
  const [row] = await db
    .update(datasetRollups)
    .set({ ...values, updatedAt: sql`now()` })
    .where(eq(datasetRollups.id, id))
    .returning();
  return row ?? null;
}

export async function deleteRollup(db: DbOrTx, id: number): Promise<boolean> {
  const rows = await db.delete(datasetRollups).where(eq(datasetRollups.id, id)).returning({ id: datasetRollups.id });
  return rows.length > 0;
}

/** Enabled rollups of the dataset refreshed with its extract runs. */
export async function rollupsWithExtract(db: DbOrTx, datasetId: number): Promise<RollupRow[]> {
  return db
    .select()
    .from(datasetRollups)
    .where(
      and(
        eq(datasetRollups.datasetId, datasetId),
        eq(datasetRollups.refreshMode, 'with_extract'),
        eq(datasetRollups.enabled, true),
      ),
    );
}

// ---- builds ----

export async function insertBuild(
  db: DbOrTx,
  values: { rollupId: number; datasetId: number; userId: number | null; trigger: string },
): Promise<BuildRow> {
  const [row] = await db.insert(rollupBuilds).values(values).returning();
  return row;
}

export async function buildById(db: DbOrTx, id: number): Promise<BuildRow | null> {
  const [row] = await db.select().from(rollupBuilds).where(eq(rollupBuilds.id, id));
  return row ?? null;
}

export async function activeBuildOf(db: DbOrTx, rollupId: number): Promise<BuildRow | null> {
  const [row] = await db
    .select()
    .from(rollupBuilds)
    .where(and(eq(rollupBuilds.rollupId, rollupId), inArray(rollupBuilds.state, ACTIVE)));
  return row ?? null;
}

/** The last build of each rollup (the list shows its state). */
export async function lastBuildsOf(db: DbOrTx, rollupIds: number[]): Promise<Map<number, BuildRow>> {
  if (!rollupIds.length) return new Map();
  const rows = await db
    .selectDistinctOn([rollupBuilds.rollupId])
    .from(rollupBuilds)
    .where(inArray(rollupBuilds.rollupId, rollupIds))
    .orderBy(rollupBuilds.rollupId, desc(rollupBuilds.id));
  return new Map(rows.map((r) => [r.rollupId, r]));
}

/** Moves the build only when it is in one of `from`: null when another node or a cancel moved it first. */
export async function moveBuild(
  db: DbOrTx,
  id: number,
  from: BuildState[],
  change: Partial<Omit<BuildRow, 'id' | 'rollupId' | 'datasetId'>>,
): Promise<BuildRow | null> {
  const [row] = await db
    .update(rollupBuilds)
    .set(change)
    .where(and(eq(rollupBuilds.id, id), inArray(rollupBuilds.state, from)))
    .returning();
  return row ?? null;
}

const BUILD_SORT = {
  build_id: rollupBuilds.id,
  state: rollupBuilds.state,
  trigger: rollupBuilds.trigger,
  created_at: rollupBuilds.createdAt,
  finished_at: rollupBuilds.finishedAt,
};

export async function buildsOfRollup(
  db: DbOrTx,
  rollupId: number,
  page: PageRequest,
): Promise<{ rows: BuildRow[]; total: number }> {
  const rows = await db
    .select()
    .from(rollupBuilds)
    .where(eq(rollupBuilds.rollupId, rollupId))
    .orderBy(...orderByOf(page.sort, BUILD_SORT, [desc(rollupBuilds.id)], rollupBuilds.id))
    .limit(page.size)
    .offset(page.page * page.size);
  const [{ n }] = await db.select({ n: count() }).from(rollupBuilds).where(eq(rollupBuilds.rollupId, rollupId));
  return { rows, total: n };
}

export async function addBuildStep(db: DbOrTx, buildId: number, state: BuildState, message: string): Promise<void> {
  await db.insert(rollupBuildSteps).values({ buildId, state, message });
}

/** A step logged while the build runs, written only while it still runs: false tells the worker to stop. */
export async function addRunningBuildStep(db: DbOrTx, buildId: number, message: string): Promise<boolean> {
  try {
    const { rows } = await db.execute(
      sql`insert into ${rollupBuildSteps} (build_id, state, message)
          select ${rollupBuilds.id}, 'running', ${message} from ${rollupBuilds}
          where ${rollupBuilds.id} = ${buildId} and ${rollupBuilds.state} = 'running'
          returning 1`,
    );
    return rows.length > 0;
  } catch (e) {
    if (isForeignKeyViolation(e)) return false;
    throw e;
  }
}

export async function stepsOfBuild(
  db: DbOrTx,
  buildId: number,
  page: PageRequest,
): Promise<{ rows: (typeof rollupBuildSteps.$inferSelect)[]; total: number }> {
  const rows = await db
    .select()
    .from(rollupBuildSteps)
    .where(eq(rollupBuildSteps.buildId, buildId))
    .orderBy(
      ...orderByOf(page.sort, { at: rollupBuildSteps.at, state: rollupBuildSteps.state }, [], rollupBuildSteps.id),
    )
    .limit(page.size)
    .offset(page.page * page.size);
  const [{ n }] = await db.select({ n: count() }).from(rollupBuildSteps).where(eq(rollupBuildSteps.buildId, buildId));
  return { rows, total: n };
}

export async function staleBuilds(db: DbOrTx, olderThanMs: number): Promise<BuildRow[]> {
  return db
    .select()
    .from(rollupBuilds)
    .where(
      and(
        eq(rollupBuilds.state, 'running'),
        lt(rollupBuilds.heartbeatAt, sql`now() - make_interval(secs => ${olderThanMs / 1000})`),
      ),
    );
}

export async function queuedBuildsOlderThan(db: DbOrTx, olderThanMs: number): Promise<BuildRow[]> {
  return db
    .select()
    .from(rollupBuilds)
    .where(
      and(
        eq(rollupBuilds.state, 'queued'),
        lt(rollupBuilds.createdAt, sql`now() - make_interval(secs => ${olderThanMs / 1000})`),
      ),
    );
}

// ---- loads ----

/** The current load of each of the rollups. */
export async function currentLoadsOf(db: DbOrTx, rollupIds: number[]): Promise<Map<number, LoadRow>> {
  if (!rollupIds.length) return new Map();
  const rows = await db
    .select()
    .from(rollupLoads)
    .where(and(inArray(rollupLoads.rollupId, rollupIds), isNull(rollupLoads.supersededAt)));
  return new Map(rows.map((r) => [r.rollupId, r]));
}

/** Makes the load current in the caller's transaction (the one that marks its build succeeded). */
export async function commitRollupLoad(tx: DbOrTx, load: Omit<LoadRow, 'builtAt' | 'supersededAt'>): Promise<void> {
  await tx
    .update(rollupLoads)
    .set({ supersededAt: sql`now()` })
    .where(and(eq(rollupLoads.rollupId, load.rollupId), isNull(rollupLoads.supersededAt)));
  await tx.insert(rollupLoads).values(load);
}

export async function loadRowsByIds(db: DbOrTx, ids: string[]): Promise<Map<string, LoadRow>> {
  const out = new Map<string, LoadRow>();
  for (let at = 0; at < ids.length; at += 1_000) {
    const rows = await db
      .select()
      .from(rollupLoads)
      .where(inArray(rollupLoads.id, ids.slice(at, at + 1_000)));
    for (const r of rows) out.set(r.id, r);
  }
  return out;
}

export async function existingRollupIds(db: DbOrTx, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db.select({ id: datasetRollups.id }).from(datasetRollups).where(inArray(datasetRollups.id, ids));
  return new Set(rows.map((r) => r.id));
}

export async function deleteExpiredRollupLoads(db: DbOrTx, graceMs: number): Promise<void> {
  await db
    .delete(rollupLoads)
    .where(lt(rollupLoads.supersededAt, sql`now() - make_interval(secs => ${graceMs / 1000})`));
}

/** Forgets the rollup's current load (its definition changed shape): the sweep deletes the object after the grace. */
export async function dropCurrentLoad(tx: DbOrTx, rollupId: number): Promise<void> {
  await tx
    .update(rollupLoads)
    .set({ supersededAt: sql`now()` })
    .where(and(eq(rollupLoads.rollupId, rollupId), isNull(rollupLoads.supersededAt)));
}
