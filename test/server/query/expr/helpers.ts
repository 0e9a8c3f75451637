import {
  compileExpression,
  createParamSink,
  parseExpression,
  quoteIdentifier,
  type CompileContext,
  type Dialect,
  type Expr,
} from '../../../../server/query/expr';

/** The AST without positions, for structural comparisons. */
function shape(e: Expr): unknown {
  return JSON.parse(JSON.stringify(e, (key, value) => (key === 'pos' ? undefined : value)));
}

export const ast = (text: string) => shape(parseExpression(text));

/** A context with table alias = table name and calculated fields given as text. */
export function context(dialect: Dialect, calculated: Record<string, string> = {}) {
  const params = createParamSink(dialect);
  const ctx: CompileContext = {
    dialect,
    column: (table, field) => `${quoteIdentifier(dialect, table)}.${quoteIdentifier(dialect, field)}`,
    calculated: (name) => {
      if (!(name in calculated)) throw new Error(`no calculated field ${name}`);
      return parseExpression(calculated[name]);
    },
    params,
  };
  return { ctx, params };
}

/** Compiles text in one dialect: the SQL and the bound values. */
export function sql(dialect: Dialect, text: string, calculated: Record<string, string> = {}) {
  const { ctx, params } = context(dialect, calculated);
  const out = compileExpression(parseExpression(text), ctx);
  return { sql: out, values: params.values };
}

/** The SQL of one expression in all four dialects, for snapshots that show the differences side by side. */
export function allDialects(text: string, calculated: Record<string, string> = {}) {
  return {
    postgresql: sql('postgresql', text, calculated),
    mysql: sql('mysql', text, calculated),
    clickhouse: sql('clickhouse', text, calculated).sql,
    duckdb: sql('duckdb', text, calculated),
  };
}

/** The ExpressionError a call throws, for asserting message and position. */
export function errorOf(f: () => unknown): { message: string; position: unknown } {
  try {
    f();
  } catch (e) {
    const err = e as { name?: string; message: string; position?: unknown };
    if (err.name !== 'ExpressionError') throw e;
    return { message: err.message, position: err.position };
  }
  throw new Error('expected an ExpressionError');
}
