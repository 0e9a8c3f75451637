import type { Call, Expr, Literal } from './ast';
import { checkCall, cycleError, isAggregateCall, withinCalculated } from './analysis';
import { compileLiteral } from './compile-literal';
import type { Dialect, ParamSink } from './dialect';
import { ExpressionError } from './errors';
import { lookupFunction } from './functions';
import { MAX_DEPTH, TOO_DEEP } from './parse';
import { divide, modulo, SQL_FUNCTIONS } from './sql-functions';

export interface CompileContext {
  dialect: Dialect;
  /** Resolves a reference to already-quoted SQL (the caller decides table aliases); throws if unknown. */
  column(table: string, field: string): string;
  /** The calculated field's own AST, compiled inline. */
  calculated(name: string): Expr;
  /** Collects literal values. */
  params: ParamSink;
  /**
   * Told each filter's values as compileFilter reads them (the filter object as given), before they are bound: a
   * plan template finds them among the sink's values (server/query/compile/plan-templates.ts).
   */
  filterLiterals?(filter: object, literals: readonly (Literal | null)[]): void;
}

interface State {
  ctx: CompileContext;
  /** Calculated fields being expanded, outermost first: a name met again is a cycle. */
  expanding: string[];
  /** The aggregate call we are inside, if any. */
  aggregate: Call | null;
  depth: number;
}

const COMPARISON_SQL: Partial<Record<string, string>> = {
  '=': '=',
  '!=': '<>',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};

const isLiteral = (e: Expr) => e.kind === 'literal';

/**
 * Compiles a checked AST to SQL for one dialect. Only fixed text chosen here, identifiers from ctx.column and
 * placeholders from ctx.params ever reach the output. Every compound is parenthesized, so the result can be
 * placed anywhere in a query and no dialect's operator precedence matters.
 */
export function compileExpression(e: Expr, ctx: CompileContext): string {
  return compile(e, { ctx, expanding: [], aggregate: null, depth: 0 });
}

/**
 * `bare` lets a string literal stay an untyped parameter: only where it is compared with a non-literal, whose type
 * it then takes (see compileLiteral).
 */
function compile(e: Expr, s: State, bare = false): string {
  if (s.depth > MAX_DEPTH * 4) throw new ExpressionError(TOO_DEEP, e.pos ?? null);
  const sub = (x: Expr, bareChild = false) => compile(x, { ...s, depth: s.depth + 1 }, bareChild);
  const d = s.ctx.dialect;
  switch (e.kind) {
    case 'literal':
      return compileLiteral(e, d, s.ctx.params, bare);
    case 'column_ref':
      return s.ctx.column(e.table, e.field);
    case 'calc_ref': {
      if (s.expanding.includes(e.name)) throw cycleError([...s.expanding, e.name], e.pos);
      const inner = { ...s, expanding: [...s.expanding, e.name], depth: s.depth + 1 };
      return withinCalculated(e, () => `(${compile(s.ctx.calculated(e.name), inner)})`);
    }
    case 'unary':
      return e.op === 'not' ? `(NOT ${sub(e.operand)})` : `(-${sub(e.operand)})`;
    case 'binary': {
      if (e.op === '/')
        return divide(
          d,
          () => sub(e.left),
          () => sub(e.right),
        );
      if (e.op === '%')
        return modulo(
          d,
          () => sub(e.left),
          () => sub(e.right),
        );
      if (e.op === 'and' || e.op === 'or') return `(${sub(e.left)} ${e.op.toUpperCase()} ${sub(e.right)})`;
      if (e.op === '+' || e.op === '-' || e.op === '*') return `(${sub(e.left)} ${e.op} ${sub(e.right)})`;
      const op = COMPARISON_SQL[e.op];
      // The AST may be built by hand; an operator outside the language must not become SQL text.
      if (!op) throw new ExpressionError(`неизвестный оператор ${String(e.op)}`, e.pos ?? null);
      const left = sub(e.left, !isLiteral(e.right));
      return `(${left} ${op} ${sub(e.right, !isLiteral(e.left))})`;
    }
    case 'in': {
      const subject = sub(e.expr);
      const items = e.list.map((x) => sub(x, !isLiteral(e.expr)));
      return `(${subject} ${e.negated ? 'NOT IN' : 'IN'} (${items.join(', ')}))`;
    }
    case 'between': {
      const subject = sub(e.expr);
      const bareBounds = !isLiteral(e.expr);
      const low = sub(e.low, bareBounds);
      const high = sub(e.high, bareBounds);
      if (!e.negated) return `(${subject} BETWEEN ${low} AND ${high})`;
      // ClickHouse 18.16 does not parse NOT BETWEEN.
      if (d === 'clickhouse') return `(NOT (${subject} BETWEEN ${low} AND ${high}))`;
      return `(${subject} NOT BETWEEN ${low} AND ${high})`;
    }
    case 'is_null':
      return `(${sub(e.expr)} ${e.negated ? 'IS NOT NULL' : 'IS NULL'})`;
    case 'like': {
      const subject = sub(e.expr);
      const pattern = sub(e.pattern, !isLiteral(e.expr));
      // Backslash escapes % and _ in every dialect; DuckDB has no escape character unless it is named.
      const escape = d === 'duckdb' ? ` ESCAPE '\\'` : '';
      return `(${subject} ${e.negated ? 'NOT LIKE' : 'LIKE'} ${pattern}${escape})`;
    }
    case 'case': {
      const bareResults = typedAmong([...e.branches.map((b) => b.then), ...(e.else ? [e.else] : [])]);
      const branches = e.branches.map((b) => `WHEN ${sub(b.when)} THEN ${sub(b.then, bareResults)}`).join(' ');
      // Old ClickHouse wants an explicit ELSE; NULL is what the other dialects assume.
      const otherwise = e.else ? sub(e.else, bareResults) : 'NULL';
      return `CASE ${branches} ELSE ${otherwise} END`;
    }
    case 'call':
      return compileCall(e, s);
  }
}

function compileCall(e: Call, s: State): string {
  checkCall(e); // the AST may come from a stored calculated field or be built by hand
  const spec = lookupFunction(e.name)!;
  if (isAggregateCall(e) && s.aggregate) {
    throw new ExpressionError(`агрегатная функция ${e.name} не может стоять внутри ${s.aggregate.name}`, e.pos ?? null);
  }
  const inner: State = { ...s, aggregate: isAggregateCall(e) ? e : s.aggregate, depth: s.depth + 1 };
  const raw = spec.units ? e.args.slice(1) : e.args;
  const unitArg = spec.units ? e.args[0] : undefined;
  const unit = unitArg?.kind === 'literal' && unitArg.type === 'string' ? unitArg.value.toLowerCase() : '';
  // Like CASE branches, the values IF/IFNULL/COALESCE choose between share one type.
  const firstValue = spec.name === 'IF' ? 1 : 0;
  const bareValues = UNIFYING.has(spec.name) && typedAmong(raw.slice(firstValue));
  const args = raw.map((a, i) => () => compile(a, inner, bareValues && i >= firstValue));
  return SQL_FUNCTIONS[spec.name]({ dialect: s.ctx.dialect, unit, raw, args });
}

const UNIFYING = new Set(['IF', 'IFNULL', 'COALESCE']);

/**
 * Whether some of the values that must share a type is not a literal: then string literals among them may stay
 * untyped and take that value's type (a uuid column in COALESCE([t.id], '...')).
 */
function typedAmong(values: Expr[]): boolean {
  return values.some((v) => !isLiteral(v));
}
