import { isSourceKind, sourceKindInfo, type TableInfo } from '../../adapters/sources';
import type { ChatMessage } from '../../adapters/ai/chat-client';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { rawReadableObject } from '../access/object-access';
import { badRequest } from '../kernel/errors';
import { listColumns, listTables } from '../data-sources/metadata';
import { readOnlyQueryProblem, validationPlan } from '../data-sources/sql-validation';
import { askUntilAccepted } from './ai';
import { GUARD } from './grounding';
import { AI_MSG } from './messages';

/*
 * POST /api/ai/sql: a read-only query for one source, grounded in its tables and columns from the metadata cache.
 * That schema is raw data about the source, sent to an outside provider: the caller needs the level that lists it
 * (rawReadableObject, as GET /api/data-source/{id}/tables and /columns; a reader of the source gets 403 before the
 * provider is asked). The query is for the SQL console or a dataset's SQL object, both beyond a mere reader.
 * The answer must be one query statement (the SQL console's validation plan "wrap": SELECT, WITH, VALUES) and, token
 * by token, a read-only query naming only tables of that source (no data-changing word anywhere, no file-reading or
 * side-effect function, every FROM/JOIN item checked); a DDL/DML answer or another schema's table is refused, after
 * one repair round. Nothing is run.
 */

const MAX_TABLES = 40;

/** A query the source's tables answer, read-only through and through (see readOnlyQueryProblem). */
function problemOf(dialect: Parameters<typeof validationPlan>[0], sql: string, tables: TableInfo[]): string | null {
  const plan = validationPlan(dialect, sql);
  if (plan.kind === 'invalid') return plan.message;
  if (plan.kind !== 'wrap') return AI_MSG.sqlNotReadOnly;
  return readOnlyQueryProblem(dialect, plan.statement, tables);
}

export async function generateSql(
  deps: AppDeps,
  actor: Actor,
  input: { data_source_id: number; schema?: string; prompt: string },
): Promise<{ sql: string }> {
  const { row } = await rawReadableObject(deps.db, actor, 'data_source', input.data_source_id);
  if (!isSourceKind(row.type)) throw badRequest(AI_MSG.sqlFailed('неизвестный тип источника'));
  const dialect = sourceKindInfo(row.type).dialect;
  const tables = (await listTables(deps, actor, row.id, { schema: input.schema })).content;
  // A large schema is cut to MAX_TABLES for the prompt: tables the request names come first.
  const prompt = input.prompt.toLowerCase();
  const named = tables.filter((t) => prompt.includes(t.name.toLowerCase()));
  const shown = [...named, ...tables.filter((t) => !named.includes(t))].slice(0, MAX_TABLES);
  const described: string[] = [];
  for (const t of shown) {
    const columns = (await listColumns(deps, actor, row.id, { schema: t.schema, table: t.name })).content;
    described.push(`- ${t.schema}.${t.name} (${columns.map((c) => `${c.name} ${c.db_type}`).join(', ')})`);
  }
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: [
        GUARD,
        `Напиши один запрос SQL на чтение (SELECT) для диалекта ${dialect}. Никаких INSERT, UPDATE, DELETE, DDL и ` +
          'других команд; только таблицы из списка ниже. Если задачу нельзя решить так, ответь SELECT 1 WHERE false. ' +
          'Ответь только текстом запроса.',
        'Таблицы источника:',
        ...described,
      ].join('\n'),
    },
    { role: 'user', content: input.prompt },
  ];
  return askUntilAccepted<{ sql: string }>(
    deps,
    actor,
    messages,
    (answer) => {
      const sql = answer.replace(/;\s*$/, '');
      const problem = problemOf(dialect, sql, tables);
      return problem === null ? { accepted: { sql } } : { problem };
    },
    (problem) => `Запрос отклонён: ${problem}. Исправь его и ответь только текстом запроса.`,
    AI_MSG.sqlFailed,
  );
}
