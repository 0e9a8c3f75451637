import type { Literal } from './ast';
import { compileExpression, type CompileContext } from './compile';
import { compileLiteral } from './compile-literal';
import { ExpressionError, quoted } from './errors';
import { escapeLikeText, FILTER_VALUE_TYPES, filterValueLiteral, type FilterValueType } from './filter-values';
import { parseExpression } from './parse';

export const FILTER_OPS = [
  'in',
  'not_in',
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'contains',
  'starts_with',
  'is_null',
  'is_not_null',
] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** A widget filter as it comes over the wire. */
export interface WidgetFilter {
  sql: string;
  op: string;
  values?: unknown[] | null;
  value_type?: string | null;
}

const COMPARE: Partial<Record<FilterOp, string>> = { eq: '=', ne: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** Conditions with no values to test: an empty IN matches nothing, an empty NOT IN everything. */
const NOTHING = '(1 = 0)';
const EVERYTHING = '(1 = 1)';

function checkOp(op: string): FilterOp {
  if (!(FILTER_OPS as readonly string[]).includes(op)) {
    throw new ExpressionError(
      `неизвестная операция фильтра ${quoted(String(op))}; допустимо: ${FILTER_OPS.join(', ')}`,
    );
  }
  return op as FilterOp;
}

function checkValueType(type: string | null | undefined): FilterValueType {
  const t = type ?? 'string';
  if (!(FILTER_VALUE_TYPES as readonly string[]).includes(t)) {
    throw new ExpressionError(
      `неизвестный тип значений фильтра ${quoted(String(t))}; допустимо: ${FILTER_VALUE_TYPES.join(', ')}`,
    );
  }
  return t as FilterValueType;
}

function expectCount(op: FilterOp, values: unknown[], count: number): void {
  if (values.length !== count) {
    throw new ExpressionError(`фильтр ${op} ожидает значений: ${count}, передано ${values.length}`);
  }
}

/**
 * A widget filter as an SQL condition. The filter's `sql` is an expression of the language; each value is read
 * by value_type and bound through ctx.params. A filter on an aggregate belongs in HAVING: the caller can tell by
 * isAggregate(parseExpression(filter.sql)).
 */
export function compileFilter(filter: WidgetFilter, ctx: CompileContext): string {
  const op = checkOp(filter.op);
  const valueType = checkValueType(filter.value_type);
  const raw = filter.values ?? [];
  if (!Array.isArray(raw)) throw new ExpressionError('значения фильтра должны быть списком');
  const ast = parseExpression(filter.sql);
  const subject = () => compileExpression(ast, ctx);
  const literals = raw.map((v, i) => filterValueLiteral(v, valueType, i));
  ctx.filterLiterals?.(filter, literals);
  const bind = (lit: Literal) => compileLiteral(lit, ctx.dialect, ctx.params, true);

  switch (op) {
    case 'is_null':
    case 'is_not_null':
      return `(${subject()} ${op === 'is_null' ? 'IS NULL' : 'IS NOT NULL'})`;
    case 'in':
    case 'not_in': {
      const present = literals.filter((l): l is Literal => l !== null);
      const withNull = present.length < literals.length;
      const negated = op === 'not_in';
      const nullTest = () => `(${subject()} ${negated ? 'IS NOT NULL' : 'IS NULL'})`;
      if (present.length === 0) return withNull ? nullTest() : negated ? EVERYTHING : NOTHING;
      const list = () => `(${subject()} ${negated ? 'NOT IN' : 'IN'} (${present.map(bind).join(', ')}))`;
      if (!withNull) return list();
      return `(${list()} ${negated ? 'AND' : 'OR'} ${nullTest()})`;
    }
    case 'between': {
      expectCount(op, raw, 2);
      const [low, high] = literals;
      if (!low && !high) throw new ExpressionError('фильтр between: обе границы пустые');
      if (!high) return `(${subject()} >= ${bind(low!)})`;
      if (!low) return `(${subject()} <= ${bind(high)})`;
      const x = subject();
      return `(${x} BETWEEN ${bind(low)} AND ${bind(high)})`;
    }
    case 'contains':
    case 'starts_with': {
      expectCount(op, raw, 1);
      const [value] = literals;
      if (valueType !== 'string' || !value || value.type !== 'string') {
        throw new ExpressionError(`фильтр ${op} применяется к строковому значению`);
      }
      const text = escapeLikeText(value.value);
      const pattern: Literal = { kind: 'literal', type: 'string', value: op === 'contains' ? `%${text}%` : `${text}%` };
      const x = subject();
      const escape = ctx.dialect === 'duckdb' ? ` ESCAPE '\\'` : '';
      return `(${x} LIKE ${bind(pattern)}${escape})`;
    }
    default: {
      expectCount(op, raw, 1);
      const [value] = literals;
      if (!value) {
        if (op === 'eq' || op === 'ne') return `(${subject()} ${op === 'eq' ? 'IS NULL' : 'IS NOT NULL'})`;
        throw new ExpressionError(`фильтр ${op} не сравнивает с пустым значением`);
      }
      const x = subject();
      return `(${x} ${COMPARE[op]} ${bind(value)})`;
    }
  }
}
