import { isSourceKind, sourceKindInfo } from '../../adapters/sources';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject } from '../access/object-access';
import { badRequest } from '../kernel/errors';
import { logSourceAccess } from '../data-sources/access-log';
import { connectorForSource } from '../data-sources/connection';
import { viaConnector } from '../data-sources/connector-errors';
import { readOnlyQueryProblem, validationPlan } from '../data-sources/sql-validation';

const SQL_TIMEOUT_MS = 30_000;
export const MAX_SQL_ROWS = 1000;

/**
 * The MCP tool run_sql: source owners only (as POST /api/data-source/{id}/queries), and only one query statement
 * (the console's read-only plan) run in a read-only transaction, so a token handed to an assistant cannot change
 * the source. Logged in the source's access log as a query.
 */
export async function runReadOnlySql(
  deps: AppDeps,
  actor: Actor,
  input: { data_source_id: number; sql: string; limit?: number },
) {
  const { row } = await ownedObject(deps.db, actor, 'data_source', input.data_source_id);
  if (!isSourceKind(row.type)) throw badRequest('Неизвестный тип источника');
  const plan = validationPlan(sourceKindInfo(row.type).dialect, input.sql);
  if (plan.kind === 'invalid') throw badRequest(plan.message);
  if (plan.kind !== 'wrap') throw badRequest('Через MCP разрешены только запросы на чтение (SELECT)');
  // The read-only transaction stops writes, not reads of server files, other servers or sleeps: refused here.
  const problem = readOnlyQueryProblem(sourceKindInfo(row.type).dialect, plan.statement, null);
  if (problem) throw badRequest(problem);
  await logSourceAccess(deps.db, row.id, actor, 'query', `MCP: ${plan.statement.slice(0, 990)}`);
  const limit = Math.min(input.limit ?? 100, MAX_SQL_ROWS);
  const result = await viaConnector(() =>
    connectorForSource(deps, row).query(plan.statement, [], { limit, timeoutMs: SQL_TIMEOUT_MS, readOnly: true }),
  );
  return { columns: result.columns, rows: result.rows, truncated: result.truncated };
}
