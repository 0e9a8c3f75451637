import { at } from './errors';
import { compileExpression, createParamSink, quoteIdentifier, type Dialect, type Expr, type Literal } from '../expr';
import type { Condition } from './conditions';
import { buildFrom, defaultObjects } from './joins';
import { limitClause, orderByClause, resolveSorts } from './ordering';
import type { QueryScope } from './scope';
import { countsDatasetRows, type SelectItem } from './shelves';
import type { CompiledQuery, SortSpec } from './types';

/*
 * The last stage: one SELECT from the analysed parts. Analysis (types, aggregates, which objects are needed) is
 * done before this, without a dialect; here the dialect of the objects' data source is known and every part is
 * compiled with one parameter sink, in the order the text reads (SELECT, WHERE, HAVING), because MySQL numbers its
 * `?` by position.
 */

export interface SelectPlan {
  scope: QueryScope;
  items: SelectItem[];
  /** Group by the non-aggregated items (some item or condition aggregates, or distinct values are wanted). */
  grouped: boolean;
  conditions: Condition[];
  sorts: SortSpec[];
  sortPath?: (index: number) => string;
  /** Rows to read (a page plus one); undefined reads all. */
  limit?: number;
  offset?: number;
  /** Also describe the query's shape (CompiledQuery.shape), for fusing widget queries. */
  shape?: boolean;
  /**
   * What to order an item by instead of its value (by its index among the items): a rollup orders a text dimension
   * by its rank in the source's collation (server/query/rollups/match.ts). Compiled in the query's context.
   */
  orderBy?: ReadonlyMap<number, Expr>;
  /** Filled in with where the query's values came from, for a plan template (plan-templates.ts). */
  track?: ParamTrack;
}

/** Each filter's values as compiled (in the order compiled), and which literal each bound value is. */
export interface ParamTrack {
  filters: { filter: object; literals: readonly (Literal | null)[] }[];
  sources: readonly (Literal | undefined)[];
}

/** `__c<n>`: aliases the engine chooses, so no caller's id is ever part of the SQL. */
const aliasOf = (index: number) => `__c${index}`;

export function assembleQuery(plan: SelectPlan, dialectOf: (dataSourceId: number) => Dialect): CompiledQuery {
  const { scope, items } = plan;
  const asts = [...items.map((it) => it.ast), ...plan.conditions.flatMap((c) => (c.ast ? [c.ast] : []))];
  const countsRows = asts.some((e) => countsDatasetRows(e, scope));
  const used = scope.usedObjects.size ? [...scope.usedObjects] : [];
  const [root] = defaultObjects(scope);
  // COUNT() counts rows of the dataset, i.e. of its first object, when that object can join the others at all.
  const sameSource = used.every((id) => scope.object(id).dataSourceId === scope.object(root).dataSourceId);
  if (used.length === 0 || (countsRows && sameSource && !used.includes(root))) used.push(root);
  const ordered = scope.model.objects.filter((o) => used.includes(o.id));
  const dialect = dialectOf(ordered[0].dataSourceId);
  const from = buildFrom(scope, dialect, used);

  const sink = createParamSink(dialect);
  const ctx = scope.compileContext(dialect, sink);
  const track = plan.track;
  if (track) {
    ctx.filterLiterals = (filter, literals) => track.filters.push({ filter, literals });
    track.sources = sink.sources;
  }
  const q = (name: string) => quoteIdentifier(dialect, name);
  const select = items.map(
    (it, i) => `${at(`${it.path}.sql`, () => compileExpression(it.ast, ctx))} AS ${q(aliasOf(i))}`,
  );
  const where = plan.conditions.filter((c) => !c.aggregate).map((c) => c.compile(ctx));
  const having = plan.conditions.filter((c) => c.aggregate).map((c) => c.compile(ctx));

  const grouped = plan.grouped || having.length > 0;
  const groupKeys = grouped ? items.map((it, i) => ({ it, i })).filter(({ it }) => !it.aggregate) : [];
  const aliasOfKey = new Map(items.map((it, i) => [it.key, aliasOf(i)]));
  const sorts = resolveSorts(plan.sorts, aliasOfKey, plan.sortPath);

  const parts = [`SELECT ${select.join(', ')}`, `FROM ${from.sql}`];
  if (where.length) parts.push(`WHERE ${where.join(' AND ')}`);
  if (groupKeys.length) {
    // Positions, because PostgreSQL would resolve an alias to a same-named input column first and would not match
    // a repeated expression whose literals became other parameters; ClickHouse 18.16 knows no positions: aliases.
    const keys = groupKeys.map(({ i }) => (dialect === 'clickhouse' ? q(aliasOf(i)) : String(i + 1)));
    parts.push(`GROUP BY ${keys.join(', ')}`);
  }
  if (having.length) parts.push(`HAVING ${having.join(' AND ')}`);
  const orderTerms = new Map(
    [...(plan.orderBy ?? [])].map(([i, e]) => [aliasOf(i), compileExpression(e, ctx)] as const),
  );
  const order = orderByClause(
    dialect,
    sorts,
    groupKeys.map(({ i }) => aliasOf(i)),
    orderTerms,
  );
  if (order) parts.push(order);
  const limit = limitClause(plan.limit, plan.offset);
  if (limit) parts.push(limit);
  // Outer joins give NULL for missing rows as the other dialects do, instead of the type's default value.
  if (dialect === 'clickhouse' && from.outer) parts.push('SETTINGS join_use_nulls = 1');

  return {
    dialect,
    sql: parts.join(' '),
    params: sink.values,
    columns: items.map((it, i) => ({ key: it.key, alias: aliasOf(i) })),
    dataSourceId: from.dataSourceId,
    fetchLimit: plan.limit,
    compiledText: scope.model.objects.every((o) => o.kind === 'table'),
    ...(plan.shape && grouped
      ? { shape: shapeOf(plan, dialect, from.sql, groupKeys, parts.slice(where.length ? 3 : 2)) }
      : {}),
  };
}

/**
 * Everything of a grouped query but its aggregates: the rows it reads (FROM, WHERE), the groups (their expressions
 * and positions), HAVING, order and page, with parameters numbered on their own. Two queries of one shape read the
 * same groups in the same order, whatever aggregates each computes, so their aggregates may be computed by one
 * query (server/query/read.ts readWidgetQueries).
 */
function shapeOf(
  plan: SelectPlan,
  dialect: Dialect,
  from: string,
  groupKeys: { it: SelectItem; i: number }[],
  tail: string[],
): string {
  const sink = createParamSink(dialect);
  const ctx = plan.scope.compileContext(dialect, sink);
  const keys = groupKeys.map(({ it, i }) => [i, compileExpression(it.ast, ctx)]);
  const conditions = plan.conditions.map((c) => [c.aggregate, c.compile(ctx)]);
  // The tail after WHERE: GROUP BY (positions), HAVING (placeholders of the main numbering), ORDER BY, LIMIT.
  const rest = tail.filter((part) => !part.startsWith('HAVING '));
  return JSON.stringify([from, keys, conditions, rest, sink.values.map((v) => [typeof v, String(v)])]);
}
