import type { Expr } from '../ast';
import type { Dialect } from '../dialect';

/**
 * Compiles one argument. Call it once for every place the argument appears in the output, in the order those
 * places appear: MySQL placeholders are positional, so an argument written twice must be bound twice.
 */
export type Arg = () => string;

export interface CallArgs {
  dialect: Dialect;
  /** The arguments after the unit, if the function has one. */
  args: Arg[];
  /** The same arguments as AST, for the few compilers that look at their shape. */
  raw: Expr[];
  /** Lower-case unit ('month', ...) already checked against the function's list. */
  unit: string;
}

export type SqlFunction = (c: CallArgs) => string;

/** One variant per dialect, built only for the dialect asked (building it compiles, and so binds, arguments). */
export function pick(dialect: Dialect, variants: Record<Dialect, () => string>): string {
  return variants[dialect]();
}

/** The same SQL function name in every dialect except ClickHouse, whose own (case-sensitive) name is given. */
export function plain(name: string, clickhouse = name.toLowerCase()): SqlFunction {
  return ({ dialect, args }) => `${dialect === 'clickhouse' ? clickhouse : name}(${args.map((a) => a()).join(', ')})`;
}
