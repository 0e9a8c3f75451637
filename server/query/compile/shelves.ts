import type { DatasetField } from './dataset-model';
import { invalid, type FieldErrors } from '../../kernel/errors';
import { call, calcRef, columnRef } from './ast-tools';
import { at } from './errors';
import { children, ExpressionError, isAggregate, parseExpression, type Expr } from '../expr';
import { isAggregateCall } from '../expr/analysis';
import type { QueryScope } from './scope';
import type { ShelfField, WidgetShelves } from './types';

/*
 * Stage 1 of a widget query: the shelves become the SELECT list. Categories (rows, series) are per-row values;
 * measures (columns) may aggregate. When any measure aggregates, the query groups by every non-aggregated item.
 */

export interface SelectItem {
  /** The caller's key for the value (a shelf field id). */
  key: string;
  /** Where the item came from in the body, for errors (`columns[1]`). */
  path: string;
  ast: Expr;
  aggregate: boolean;
}

const DEFAULT_AGGREGATES: Record<Exclude<DatasetField['aggregation'], 'none'>, string> = {
  sum: 'SUM',
  avg: 'AVG',
  min: 'MIN',
  max: 'MAX',
  count: 'COUNT',
  countd: 'COUNTD',
};

/** The expression of a shelf field: its `sql`, or else a reference built from `table` and `field` (never as text). */
function shelfAst(f: ShelfField, path: string): Expr {
  if (f.sql !== undefined && f.sql.trim() !== '') return at(`${path}.sql`, () => parseExpression(f.sql!));
  if (f.field && f.field.trim() !== '') return f.table ? columnRef(f.table, f.field) : calcRef(f.field);
  throw invalid({ [`${path}.sql`]: 'must not be blank' });
}

/**
 * In an aggregating expression every column must sit inside an aggregate: `SUM([a]) + [b]` has no single value per
 * group. Parameters are constants and may stand anywhere.
 */
function checkColumnsAggregated(e: Expr, scope: QueryScope, seen: string[] = []): void {
  if (isAggregateCall(e) || e.kind === 'literal') return;
  if (e.kind === 'column_ref') {
    throw new ExpressionError(
      `поле [${e.table}.${e.field}] должно стоять внутри агрегатной функции, как и остальные поля этого выражения`,
      e.pos ?? null,
    );
  }
  if (e.kind === 'calc_ref') {
    if (scope.isParameter(e.name) || seen.includes(e.name)) return;
    checkColumnsAggregated(scope.calculatedAst(e.name), scope, [...seen, e.name]);
    return;
  }
  for (const c of children(e)) checkColumnsAggregated(c, scope, seen);
}

/**
 * An aggregate over no column at all (COUNT(), SUM(1)) counts rows of the dataset, not of whichever object the rest
 * of the query happens to name: such a query always reads the dataset's first object.
 */
export function countsDatasetRows(e: Expr, scope: QueryScope, seen: string[] = []): boolean {
  if (isAggregateCall(e)) return !namesColumn(e, scope, seen);
  if (e.kind === 'calc_ref') {
    if (scope.isParameter(e.name) || seen.includes(e.name)) return false;
    return countsDatasetRows(scope.calculatedAst(e.name), scope, [...seen, e.name]);
  }
  return children(e).some((c) => countsDatasetRows(c, scope, seen));
}

function namesColumn(e: Expr, scope: QueryScope, seen: string[]): boolean {
  if (e.kind === 'column_ref') return true;
  if (e.kind === 'calc_ref') {
    if (scope.isParameter(e.name) || seen.includes(e.name)) return false;
    return namesColumn(scope.calculatedAst(e.name), scope, [...seen, e.name]);
  }
  return children(e).some((c) => namesColumn(c, scope, seen));
}

/** The dataset field's default aggregation for a bare field put on the measure shelf, if it has one. */
function withDefaultAggregation(ast: Expr, scope: QueryScope): Expr {
  if (ast.kind !== 'column_ref') return ast;
  let field: DatasetField;
  try {
    field = scope.resolveColumn(ast.table, ast.field).field;
  } catch {
    return ast; // reported by the type check
  }
  if (field.aggregation === 'none' || !DEFAULT_AGGREGATES[field.aggregation]) return ast;
  return call(DEFAULT_AGGREGATES[field.aggregation], ast);
}

export interface ShelfAnalysis {
  items: SelectItem[];
  /** Some measure aggregates: the query groups by the other items. */
  aggregates: boolean;
}

export function analyzeShelves(shelves: WidgetShelves, scope: QueryScope): ShelfAnalysis {
  const items: SelectItem[] = [];
  const ids = new Map<string, string>();
  const errors: FieldErrors = {};
  const shelfNames = ['rows', 'series', 'columns'] as const;
  for (const shelf of shelfNames) {
    shelves[shelf].forEach((f, i) => {
      const path = `${shelf}[${i}]`;
      if (ids.has(f.id)) errors[`${path}.id`] = `id ${f.id} уже занят полем ${ids.get(f.id)}`;
      ids.set(f.id, path);
      let ast = shelfAst(f, path);
      if (shelf === 'columns') ast = withDefaultAggregation(ast, scope);
      const aggregate = at(`${path}.sql`, () => {
        scope.typeOf(ast);
        const agg = isAggregate(ast, (name) => scope.calculatedAst(name));
        if (agg) checkColumnsAggregated(ast, scope);
        return agg;
      });
      if (aggregate && shelf !== 'columns') {
        errors[`${path}.sql`] =
          'Ошибка в выражении: агрегатная функция на полке категорий недопустима; поставьте показатель в columns';
      }
      items.push({ key: f.id, path, ast, aggregate });
    });
  }
  if (Object.keys(errors).length) throw invalid(errors);
  if (items.length === 0) throw invalid({ columns: 'на полках нет ни одного поля' });
  return { items, aggregates: items.some((x) => x.aggregate) };
}
