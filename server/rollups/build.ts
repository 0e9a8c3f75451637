import path from 'node:path';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { DbOrTx } from '../../db/client';
import type { AppDeps } from '../app/deps';
import { ConnectorError } from '../../adapters/sources';
import { loadDatasetRow, lockDatasetForShare } from '../datasets/load-model';
import { datasetNotFound } from '../datasets/messages';
import { currentLoadOf } from '../etl/open-load';
import { jobKind, type JobContext, type JobKind } from '../jobs/jobs';
import { isUniqueViolation } from '../kernel/db-errors';
import { insertNotification } from '../notifications/store';
import { compileWidgetQuery } from '../query/compile/compile-widget';
import type { DatasetModel } from '../query/compile/dataset-model';
import type { CompiledQuery, ShelfField, WidgetQueryInput } from '../query/compile/types';
import { quoteIdentifier } from '../query/expr';
import { datasetQueryContext } from '../query/run/dataset-context';
import { queryEngineFor, streamQuery } from '../query/run/engine';
import { definitionOf, shapeOf } from './definitions';
import { datasetDefinitions, fieldRef } from './fields';
import { rankedDimensions, rollupColumns, writeRollupFile } from './file';
import { rollupKeyOf } from './keys';
import { MSG } from './messages';
import { rollupsChanged } from './serving';
import {
  activeBuildOf,
  addBuildStep,
  insertBuild,
  addRunningBuildStep,
  buildById,
  commitRollupLoad,
  moveBuild,
  queuedBuildsOlderThan,
  rollupById,
  rollupForUpdate,
  staleBuilds,
  type BuildRow,
  type BuildState,
} from './store';
import { ROWS_COLUMN, rankColumn, type RollupDefinition } from './types';

/*
 * A rollup build as a pg-boss job, a run like an extract run: queued -> running -> succeeded | failed | cancelled,
 * each move one conditional UPDATE logged as a step, a heartbeat every second that reads cancel_requested (a cancel
 * on any node stops the query at the source), the user (or the dataset's author) notified of the end.
 *
 * The data: ONE grouped query compiled by the query compiler from the dataset's model (a widget query whose
 * categories are the dimensions, DATETRUNC'd like a widget truncates them, and whose measures are SUM/COUNT/MIN/MAX
 * of the measure fields), run where the dataset's reads run: pushed down to the live source, or on DuckDB over the
 * extract's current load for a materialised dataset. The dataset's own right to its sources is checked
 * (datasetQueryContext) and its saved filters apply; no viewer's row rules (the rollup is the whole dataset, the
 * viewer's rules apply when it is read). The rows go into a DuckDB file stored as a new load
 * (rollups/dataset-<id>/rollup-<id>/<load>.duckdb), made current in the transaction that marks the build succeeded:
 * a failed build leaves the previous load in service.
 */

export const ROLLUP_BUILD = jobKind('rollup-build', z.object({ buildId: z.number().int().positive() }));
export const ROLLUP_SCHEDULE = jobKind('rollup-schedule', z.object({ rollupId: z.number().int().positive() }));

const HEARTBEAT_MS = 1_000;
const STALE_MS = 30_000;
const QUEUED_GRACE_MS = 60_000;
/** The build's grouped query may scan a large table: its own time budget, not a widget's. */
const BUILD_TIMEOUT_MS = 60 * 60_000;

export type BuildTrigger = 'manual' | 'schedule' | 'extract';

/**
 * Queues a build of the rollup: 400 while one is queued or running (one per rollup, whichever node asks).
 */
export async function queueBuild(
  deps: AppDeps,
  rollupId: number,
  datasetId: number,
  userId: number | null,
  trigger: BuildTrigger,
): Promise<BuildRow> {
  let build: BuildRow;
  try {
    build = await deps.db.transaction(async (tx) => {
      if (!(await lockDatasetForShare(tx, datasetId))) throw datasetNotFound(datasetId);
      const row = await insertBuild(tx, { rollupId, datasetId, userId, trigger });
      const message =
        trigger === 'schedule' ? MSG.queuedSchedule : trigger === 'extract' ? MSG.queuedExtract : MSG.queued;
      await addBuildStep(tx, row.id, 'queued', message);
      return row;
    });
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    const active = await activeBuildOf(deps.db, rollupId);
    throw MSG.alreadyBuilding(active?.id ?? 0);
  }
  let bossJobId: string;
  try {
    bossJobId = await deps.jobs.send(ROLLUP_BUILD, { buildId: build.id }, { singletonKey: `rollup-${rollupId}` });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const failed = await moveBuild(deps.db, build.id, ['queued'], {
      state: 'failed',
      error: reason,
      finishedAt: new Date(),
    });
    if (failed) await addBuildStep(deps.db, build.id, 'failed', MSG.failed(reason));
    throw e;
  }
  const sent = await moveBuild(deps.db, build.id, ['queued', 'running'], { bossJobId });
  if (sent) return sent;
  await deps.jobs.cancel(ROLLUP_BUILD, bossJobId).catch(() => undefined);
  return (await buildById(deps.db, build.id)) ?? build;
}

/** The grouped widget query a rollup is built with (the categories d0.., the measures' columns). */
export function buildQueryOf(model: DatasetModel, def: RollupDefinition): WidgetQueryInput {
  const field = (id: number) => {
    const f = model.fields.find((x) => x.id === id);
    if (!f) throw new Error(`поле id ${id} удалено из датасета: измените агрегат`);
    return f;
  };
  const rows: ShelfField[] = def.dimensions.map((d) => {
    const ref = fieldRef(model, field(d.fieldId));
    return { id: d.column, sql: d.granularity ? `DATETRUNC('${d.granularity}', ${ref})` : ref };
  });
  const columns: ShelfField[] = [];
  for (const m of def.measures) {
    const ref = fieldRef(model, field(m.fieldId));
    if (m.columns.sum) columns.push({ id: m.columns.sum, sql: `SUM(${ref})` });
    if (m.columns.count) columns.push({ id: m.columns.count, sql: `COUNT(${ref})` });
    if (m.columns.min) columns.push({ id: m.columns.min, sql: `MIN(${ref})` });
    if (m.columns.max) columns.push({ id: m.columns.max, sql: `MAX(${ref})` });
  }
  columns.push({ id: ROWS_COLUMN, sql: 'COUNT()' });
  return {
    type: 'table',
    rows,
    series: [],
    columns,
    filters: [],
    sorts: [],
    calculatedFields: datasetDefinitions(model),
    parameters: {},
    page: 1,
    pageSize: 1,
  };
}

/**
 * The build query with the rank of each text dimension's value in the source's own order (its collation), computed
 * where the query runs: `SELECT g.*, DENSE_RANK() OVER (ORDER BY g.d) FROM (grouped) g` (PostgreSQL, MySQL 8 and
 * MariaDB 10.2, ClickHouse and DuckDB all have it). The outer query keeps the inner one's placeholders in order.
 */
export function rankedBuildQuery(model: DatasetModel, def: RollupDefinition, query: CompiledQuery): CompiledQuery {
  const text = rankedDimensions(model, def, query.dialect);
  if (text.length === 0) return query;
  const q = (s: string) => quoteIdentifier(query.dialect, s);
  const aliasOf = new Map(query.columns.map((c) => [c.key, c.alias]));
  const ranks = text.map((d) => {
    const v = `g.${q(aliasOf.get(d.column)!)}`;
    return {
      key: rankColumn(d),
      alias: `__rank${d.column}`,
      sql: `CASE WHEN ${v} IS NULL THEN NULL ELSE DENSE_RANK() OVER (ORDER BY ${v}) END`,
    };
  });
  return {
    ...query,
    sql: `SELECT g.*, ${ranks.map((r) => `${r.sql} AS ${q(r.alias)}`).join(', ')} FROM (${query.sql}) g`,
    columns: [...query.columns, ...ranks.map(({ key, alias }) => ({ key, alias }))],
    shape: undefined,
  };
}

/** The job kinds of rollups with their handlers bound to the app (registered where the app registers its jobs). */
export function rollupBuildJobKinds(deps: AppDeps, startScheduled: (rollupId: number) => Promise<void>) {
  const run: JobKind<{ buildId: number }> = {
    ...ROLLUP_BUILD,
    concurrency: 2,
    handler: (p, ctx) => runBuild(deps, p.buildId, ctx),
  };
  const scheduled: JobKind<{ rollupId: number }> = {
    ...ROLLUP_SCHEDULE,
    concurrency: 1,
    handler: (p) => startScheduled(p.rollupId),
  };
  return [run, scheduled] as unknown as JobKind<never>[];
}

async function runBuild(deps: AppDeps, buildId: number, ctx: JobContext): Promise<void> {
  const db = deps.db;
  const build = await moveBuild(db, buildId, ['queued'], {
    state: 'running',
    startedAt: new Date(),
    heartbeatAt: new Date(),
  });
  if (!build) return;
  if (!(await addRunningBuildStep(db, buildId, MSG.started))) return;

  const controller = new AbortController();
  const onJobAbort = () => controller.abort(new Error('stopped'));
  ctx.signal.addEventListener('abort', onJobAbort, { once: true });
  let cancelled = false;
  let endedElsewhere = false;
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    const row = await moveBuild(db, buildId, ['running'], { heartbeatAt: new Date() });
    if (!row) {
      endedElsewhere = true;
      if (!controller.signal.aborted) controller.abort(new Error('ended'));
    } else if (row.cancelRequested && !controller.signal.aborted) {
      cancelled = true;
      controller.abort(new Error('cancelled'));
    }
  };
  const timer = setInterval(() => {
    beating = beating.then(beat).catch(() => undefined);
  }, HEARTBEAT_MS);

  let stored: string | null = null;
  try {
    const made = await makeRollup(deps, build, controller.signal);
    stored = made.key;
    controller.signal.throwIfAborted();
    clearInterval(timer);
    await beating;
    const done = await settle(
      deps,
      buildId,
      { state: 'succeeded', rows: made.rows, finishedAt: new Date(), heartbeatAt: new Date() },
      MSG.succeeded(made.rows),
      'rollup_succeeded',
      'running',
      made.load,
    );
    if (done) {
      stored = null;
      rollupsChanged(deps, build.datasetId);
    }
  } catch (e) {
    clearInterval(timer);
    await beating;
    const current = endedElsewhere ? null : await buildById(db, buildId);
    if (current?.state !== 'running') return;
    cancelled ||= current.cancelRequested;
    if (cancelled) await settle(deps, buildId, { state: 'cancelled', finishedAt: new Date() }, MSG.cancelled);
    else {
      const reason = failureReason(e);
      await settle(
        deps,
        buildId,
        { state: 'failed', error: reason, finishedAt: new Date() },
        MSG.failed(reason),
        'rollup_failed',
      );
    }
  } finally {
    clearInterval(timer);
    ctx.signal.removeEventListener('abort', onJobAbort);
    if (stored) await deps.storage.delete(stored).catch(() => undefined);
  }
}

interface MadeRollup {
  key: string;
  rows: number;
  load: {
    id: string;
    rollupId: number;
    datasetId: number;
    buildId: number;
    datasetVersion: number;
    extractLoadId: string | null;
    rows: number;
    bytes: number;
    /** The definition's shape the file was built for (definitions.ts shapeOf). */
    shape: string;
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function makeRollup(deps: AppDeps, build: BuildRow, signal: AbortSignal): Promise<MadeRollup> {
  const rollup = await rollupById(deps.db, build.rollupId);
  if (!rollup) throw new Error('агрегат удалён');
  const def = definitionOf(rollup);
  const dataset = await loadDatasetRow(deps.db, build.datasetId);
  // What the data is built from, read before the query: a newer load landing meanwhile makes the rollup look older
  // than its data (rebuilt later), never newer.
  let extractLoadId: string | null = null;
  if (!dataset.live) {
    const load = await currentLoadOf(deps, dataset.id);
    if (!load) throw new Error(MSG.notSynchronised(dataset.id).message);
    extractLoadId = UUID.test(load) ? load : null;
  }
  const qctx = await datasetQueryContext(deps, dataset);
  if (qctx.model.version !== dataset.version) throw new Error('схема датасета изменилась во время сборки');
  const query = rankedBuildQuery(
    qctx.model,
    def,
    compileWidgetQuery(qctx.model, buildQueryOf(qctx.model, def), qctx.sources.dialectOf, { allRows: true }),
  );
  const target = qctx.sources.target(deps, query.dataSourceId);
  await addRunningBuildStep(deps.db, build.id, MSG.grouping(dataset.live ? 'в источнике' : 'в извлечении'));
  const byKey = new Map(query.columns.map((c, i) => [c.key, i]));
  const stream = await streamQuery(queryEngineFor(deps), target, query, { signal, timeoutMs: BUILD_TIMEOUT_MS });
  const kept = rollupColumns(qctx.model, def, query.dialect);
  const order = kept.map((c) => byKey.get(c.name)!);
  const columns = kept.map((c, i) => ({ ...c, source: stream.columns[order[i]] }));
  const loadId = randomUUID();
  const file = path.join(deps.config.dataDir, 'rollups', `${loadId}.duckdb`);
  let written: { rows: number; bytes: number };
  try {
    written = await writeRollupFile(file, columns, reorder(stream, order), signal);
  } finally {
    await stream.close();
  }
  const key = rollupKeyOf(dataset.id, def.id, loadId);
  await storeFile(deps, key, file, loadId);
  return {
    key,
    rows: written.rows,
    load: {
      id: loadId,
      rollupId: def.id,
      datasetId: dataset.id,
      buildId: build.id,
      datasetVersion: dataset.version,
      extractLoadId,
      rows: written.rows,
      bytes: written.bytes,
      shape: shapeOf(def),
    },
  };
}

async function* reorder(rows: AsyncIterable<unknown[]>, order: number[]): AsyncIterable<unknown[]> {
  for await (const row of rows) yield order.map((i) => row[i]);
}

/** The file as the load's object: moved into place on this node's disk (file://), else uploaded. */
async function storeFile(deps: AppDeps, key: string, file: string, loadId: string): Promise<void> {
  const own = deps.storage.localPath(key);
  try {
    if (own !== undefined) {
      await mkdir(path.dirname(own), { recursive: true });
      await rename(file, own).catch(async (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EXDEV') throw e;
        const tmp = `${own}.${loadId}.tmp`;
        await copyFile(file, tmp);
        await rename(tmp, own);
      });
    } else await deps.storage.putFile(key, file);
  } finally {
    await rm(file, { force: true });
  }
}

function failureReason(e: unknown): string {
  if (e instanceof ConnectorError) return e.message;
  if (e instanceof Error && e.message) return e.message.slice(0, 2000);
  return String(e).slice(0, 2000);
}

/**
 * Ends a build still in `from`, logs the step and notifies, in one transaction; a success makes its load current in
 * the same transaction.
 */
async function settle(
  deps: AppDeps,
  buildId: number,
  change: Partial<BuildRow> & { state: 'succeeded' | 'failed' | 'cancelled' },
  message: string,
  notice?: 'rollup_succeeded' | 'rollup_failed',
  from: BuildState = 'running',
  load?: MadeRollup['load'],
): Promise<BuildRow | null> {
  return deps.db.transaction(async (tx) => {
    if (load && !(await lockDatasetForShare(tx, load.datasetId))) return null;
    const moved = await moveBuild(tx, buildId, [from], change);
    if (!moved) return null;
    if (load) {
      // The definition changed shape while this build ran: its file holds the old shape and must not be served.
      const now = await rollupForUpdate(tx, load.rollupId);
      if (!now || shapeOf(definitionOf(now)) !== load.shape) throw new Error(MSG.definitionChanged);
      const { shape: _shape, ...row } = load;
      await commitRollupLoad(tx, row);
    }
    await addBuildStep(tx, buildId, change.state, message);
    if (notice) await notify(tx, moved, notice, message);
    return moved;
  });
}

async function notify(db: DbOrTx, build: BuildRow, kind: string, message: string): Promise<void> {
  let userId = build.userId;
  let name = `id ${build.rollupId}`;
  try {
    const rollup = await rollupById(db, build.rollupId);
    if (rollup) name = `«${rollup.name}»`;
    userId ??= (await loadDatasetRow(db, build.datasetId)).authorId;
  } catch {
    // the dataset was deleted meanwhile
  }
  if (userId === null) return;
  const title = kind === 'rollup_succeeded' ? `Агрегат ${name} собран` : `Сборка агрегата ${name} не удалась`;
  await insertNotification(db, { userId, kind, title, message, objectType: 'rollup_build', objectId: build.id });
}

/** Builds whose process died are failed, builds whose job never started are failed (their previous load stays). */
export async function sweepLostBuilds(deps: AppDeps): Promise<void> {
  for (const b of await staleBuilds(deps.db, STALE_MS))
    await settle(deps, b.id, { state: 'failed', error: MSG.lost, finishedAt: new Date() }, MSG.lost, 'rollup_failed');
  for (const b of await queuedBuildsOlderThan(deps.db, QUEUED_GRACE_MS)) {
    const state = b.bossJobId ? await deps.jobs.stateOf(ROLLUP_BUILD, b.bossJobId) : null;
    if (state !== null && !['completed', 'cancelled', 'failed'].includes(state)) continue;
    await settle(
      deps,
      b.id,
      { state: 'failed', error: MSG.queuedLost, finishedAt: new Date() },
      MSG.queuedLost,
      'rollup_failed',
      'queued',
    );
  }
}
