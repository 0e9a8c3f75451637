import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { ConnectorError, type ResultColumn } from '../../adapters/sources';
import { dataSourceQueries } from '../../db/schema/data-sources';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { badRequest, notFound } from '../kernel/errors';
import { timeRange } from '../objects/list';
import { orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { ownedObject } from '../access/object-access';
import { logSourceAccess } from './access-log';
import { dialectOf } from './browse';
import { connectorForSource } from './connection';
import { asSourceError } from './connector-errors';
import { HEARTBEAT_MS, MAX_STORED_ROWS, STALE_AFTER_MS, type QueryState } from './query-runner';
import { validationPlan } from './sql-validation';
import { userRef } from '../users/views';

/** How long POST /queries waits before answering 'running' (the client then polls GET /queries/{queryId}). */
const RUN_WAIT_MS = 1_000;
const RESULT_PAGE_SIZE = 100;
const VALIDATE_TIMEOUT_MS = 30_000;
export const QUERY_SORT_FIELDS = ['started_at', 'finished_at', 'state'] as const;

/** Who ran it, by name: joined from the users area (one query per page). */
const users = userRef();

export type QueryParameter = string | number | boolean | null;

export interface RunQueryInput {
  sql: string;
  parameters?: QueryParameter[];
  /** Rows kept for paging, at most MAX_STORED_ROWS. */
  limit?: number;
}

type QueryRow = typeof dataSourceQueries.$inferSelect;

const queryNotFound = (queryId: string) => notFound(`Запрос не найден (id ${queryId})`);

function durationMs(row: Pick<QueryRow, 'startedAt' | 'finishedAt'>): number | null {
  return row.finishedAt ? row.finishedAt.getTime() - row.startedAt.getTime() : null;
}

function historyItem(row: Omit<QueryRow, 'rows' | 'columns'>, username: string | null) {
  return {
    query_id: row.id,
    data_source_id: row.dataSourceId,
    user_id: row.userId,
    username,
    sql: row.sql,
    parameters: row.parameters as QueryParameter[],
    state: row.state as QueryState,
    error: row.error,
    row_count: row.rowCount,
    truncated: row.truncated,
    cancel_requested: row.cancelRequested,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    duration_ms: durationMs(row),
  };
}

/** A query's history line without its stored result (which can be megabytes). */
const historyColumns = {
  id: dataSourceQueries.id,
  dataSourceId: dataSourceQueries.dataSourceId,
  userId: dataSourceQueries.userId,
  sql: dataSourceQueries.sql,
  parameters: dataSourceQueries.parameters,
  state: dataSourceQueries.state,
  error: dataSourceQueries.error,
  rowCount: dataSourceQueries.rowCount,
  truncated: dataSourceQueries.truncated,
  cancelRequested: dataSourceQueries.cancelRequested,
  heartbeatAt: dataSourceQueries.heartbeatAt,
  startedAt: dataSourceQueries.startedAt,
  finishedAt: dataSourceQueries.finishedAt,
};

/** A query's line with one page of its stored result, the page cut out inside PostgreSQL. */
async function queryView(deps: AppDeps, sourceId: number, queryId: string, page: { page: number; size: number }) {
  const offset = page.page * page.size;
  const [found] = await deps.db
    .select({
      row: historyColumns,
      columns: dataSourceQueries.columns,
      hasRows: sql<boolean>`${dataSourceQueries.rows} is not null`,
      pageRows: sql<
        unknown[][] | null
      >`(select jsonb_agg(e order by i) from jsonb_array_elements(${dataSourceQueries.rows}) with ordinality as r(e, i)
        where i > ${offset} and i <= ${offset + page.size})`,
      username: users.username,
    })
    .from(dataSourceQueries)
    .leftJoin(users, eq(users.id, dataSourceQueries.userId))
    .where(and(eq(dataSourceQueries.id, queryId), eq(dataSourceQueries.dataSourceId, sourceId)));
  if (!found) throw queryNotFound(queryId);
  const total = found.hasRows ? (found.row.rowCount ?? 0) : 0;
  return {
    ...historyItem(found.row, found.username),
    columns: (found.columns as ResultColumn[] | null) ?? null,
    rows: found.pageRows ?? [],
    result_available: found.row.state !== 'finished' || found.hasRows,
    page: { size: page.size, number: page.page, total_elements: total, total_pages: Math.ceil(total / page.size) },
  };
}

/** A running query whose node stopped beating is reported failed (its node died or was restarted). */
async function settleIfStale(deps: AppDeps, queryId: string): Promise<void> {
  await deps.db
    .update(dataSourceQueries)
    .set({
      state: 'failed',
      error: 'Выполнение прервано: узел, выполнявший запрос, остановился',
      finishedAt: sql`now()`,
    })
    .where(
      and(
        eq(dataSourceQueries.id, queryId),
        eq(dataSourceQueries.state, 'running'),
        sql`${dataSourceQueries.heartbeatAt} < now() - make_interval(secs => ${STALE_AFTER_MS / 1000})`,
      ),
    );
}

/**
 * POST /api/data-source/{id}/queries. The query runs in the background; within RUN_WAIT_MS the answer carries its
 * outcome (first page inline), else state 'running' and the query id to poll. An SQL error reported within that
 * time is a 400 with the driver's message (the failed line stays in the history).
 */
export async function runQuery(deps: AppDeps, actor: Actor, id: number, input: RunQueryInput) {
  const { row } = await ownedObject(deps.db, actor, 'data_source', id);
  await logSourceAccess(deps.db, id, actor, 'query', input.sql.slice(0, 1000));
  const connector = connectorForSource(deps, row);
  const parameters = input.parameters ?? [];
  const [created] = await deps.db
    .insert(dataSourceQueries)
    .values({ dataSourceId: id, userId: actor.userId, sql: input.sql, parameters, state: 'running' })
    .returning({ id: dataSourceQueries.id });
  void deps.localQueries.start({
    queryId: created.id,
    sourceId: id,
    connector,
    sql: input.sql,
    params: parameters,
    limit: Math.min(input.limit ?? MAX_STORED_ROWS, MAX_STORED_ROWS),
  });
  await deps.localQueries.waitFor(created.id, RUN_WAIT_MS);
  const view = await queryView(deps, id, created.id, { page: 0, size: RESULT_PAGE_SIZE });
  if (view.state === 'failed') throw badRequest(view.error ?? 'Ошибка выполнения запроса');
  return view;
}

export async function getQuery(
  deps: AppDeps,
  actor: Actor,
  id: number,
  queryId: string,
  page: { page: number; size: number },
) {
  await ownedObject(deps.db, actor, 'data_source', id);
  await settleIfStale(deps, queryId);
  return queryView(deps, id, queryId, page);
}

/** Cancels on whichever node runs the query (see query-runner.ts); answers the state once it settles or ~2 s pass. */
export async function cancelQuery(deps: AppDeps, actor: Actor, id: number, queryId: string) {
  await ownedObject(deps.db, actor, 'data_source', id);
  await settleIfStale(deps, queryId);
  const [current] = await deps.db
    .select({ state: dataSourceQueries.state })
    .from(dataSourceQueries)
    .where(and(eq(dataSourceQueries.id, queryId), eq(dataSourceQueries.dataSourceId, id)));
  if (!current) throw queryNotFound(queryId);
  if (current.state === 'finished' || current.state === 'failed')
    throw badRequest('Запрос уже завершён: отменять нечего');
  if (current.state === 'running') {
    await deps.db
      .update(dataSourceQueries)
      .set({ cancelRequested: true })
      .where(and(eq(dataSourceQueries.id, queryId), eq(dataSourceQueries.state, 'running')));
    await logSourceAccess(deps.db, id, actor, 'query', `отмена запроса ${queryId}`);
    if (deps.localQueries.abort(queryId)) {
      await deps.localQueries.waitFor(queryId, 5_000);
    } else {
      // Another node runs it: it sees the flag at its next beat.
      for (let waited = 0; waited < 2_000; waited += HEARTBEAT_MS) {
        await new Promise((r) => setTimeout(r, HEARTBEAT_MS));
        const [now] = await deps.db
          .select({ state: dataSourceQueries.state })
          .from(dataSourceQueries)
          .where(eq(dataSourceQueries.id, queryId));
        if (now?.state !== 'running') break;
      }
    }
  }
  return queryView(deps, id, queryId, { page: 0, size: RESULT_PAGE_SIZE });
}

export async function listQueries(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: PageRequest & { createdAtFrom?: Date; createdAtTo?: Date },
) {
  await ownedObject(deps.db, actor, 'data_source', id);
  const conditions: SQL[] = [eq(dataSourceQueries.dataSourceId, id)];
  conditions.push(...timeRange(dataSourceQueries.startedAt, input.createdAtFrom, input.createdAtTo));
  const where = and(...conditions);
  const [{ total }] = await deps.db.select({ total: count() }).from(dataSourceQueries).where(where);
  const rows = await deps.db
    .select({
      row: historyColumns,
      username: users.username,
    })
    .from(dataSourceQueries)
    .leftJoin(users, eq(users.id, dataSourceQueries.userId))
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        {
          started_at: dataSourceQueries.startedAt,
          finished_at: dataSourceQueries.finishedAt,
          state: dataSourceQueries.state,
        },
        [desc(dataSourceQueries.startedAt)],
        dataSourceQueries.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  return pageOf(
    rows.map((r) => historyItem(r.row, r.username)),
    input,
    total,
  );
}

export interface ValidationResult {
  valid: boolean;
  /** false when the statement cannot be checked without running it (DDL and the like): `valid` is then true. */
  checked: boolean;
  columns: ResultColumn[] | null;
  message: string | null;
}

/** POST /api/data-source/{id}/sql/validate: nothing is executed (see sql-validation.ts). */
export async function validateSql(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: { sql: string; parameters?: QueryParameter[] },
): Promise<ValidationResult> {
  const { row } = await ownedObject(deps.db, actor, 'data_source', id);
  await logSourceAccess(deps.db, id, actor, 'query', `проверка SQL: ${input.sql.slice(0, 1000)}`);
  const plan = validationPlan(dialectOf(row.type), input.sql);
  if (plan.kind === 'invalid') return { valid: false, checked: true, columns: null, message: plan.message };
  if (plan.kind === 'unchecked') return { valid: true, checked: false, columns: null, message: plan.message };
  const connector = connectorForSource(deps, row);
  try {
    const result = await connector.query(plan.sql, input.parameters ?? [], {
      limit: plan.kind === 'wrap' ? 0 : 1000,
      timeoutMs: VALIDATE_TIMEOUT_MS,
    });
    return {
      valid: true,
      checked: true,
      columns: plan.kind === 'wrap' ? result.columns : null,
      message: 'Запрос корректен',
    };
  } catch (err) {
    if (!(err instanceof ConnectorError)) throw asSourceError(err);
    if (err.kind === 'connection' || err.kind === 'auth' || err.kind === 'settings' || err.kind === 'busy')
      throw asSourceError(err);
    // MySQL refuses repeated column names in a derived table, which the statement itself may have.
    if (plan.kind === 'wrap' && err.code === '1060') {
      return {
        valid: true,
        checked: true,
        columns: null,
        message: 'Запрос корректен (в результате повторяются имена столбцов)',
      };
    }
    return { valid: false, checked: true, columns: null, message: err.message };
  }
}
