import type { Expr } from './ast';
import type { ArgKind, PrimitiveType } from './types';

export const TRUNC_UNITS = ['year', 'quarter', 'month', 'week', 'day', 'hour'] as const;
export const SHIFT_UNITS = ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute'] as const;
export type TruncUnit = (typeof TRUNC_UNITS)[number];
export type ShiftUnit = (typeof SHIFT_UNITS)[number];

/** The result type from the argument types; throws ExpressionError (via unify) when they cannot be combined. */
type ResultRule = (
  types: PrimitiveType[],
  args: Expr[],
  unify: (types: PrimitiveType[], args: Expr[]) => PrimitiveType,
) => PrimitiveType;

export interface FunctionSpec {
  name: string;
  minArgs: number;
  maxArgs: number;
  aggregate: boolean;
  /** When set, argument 0 is a string literal naming one of these units (compiled to a fixed SQL token). */
  units?: readonly string[];
  /** Kind of each argument after the unit; the last kind repeats for variadic functions. */
  argKinds: ArgKind[];
  result: ResultRule;
}

const fixed =
  (t: PrimitiveType): ResultRule =>
  () =>
    t;
/** Keeps integer as integer, makes everything else float. */
const numericLike: ResultRule = ([t]) => (t === 'integer' ? 'integer' : 'float');
const sameAsFirst: ResultRule = ([t]) => t;
const unifyAll: ResultRule = (types, args, unify) => unify(types, args);
/** A unit below a day turns a date into a datetime. */
const shifted: ResultRule = (types, args) => {
  const unit = (args[0] as { value?: unknown }).value;
  const t = types[types.length - 1];
  return unit === 'hour' || unit === 'minute' || !isDateLike(t) ? 'datetime' : t;
};
const isDateLike = (t: PrimitiveType | undefined): t is 'date' | 'datetime' => t === 'date' || t === 'datetime';

type Def = Omit<FunctionSpec, 'name' | 'aggregate' | 'maxArgs'> & { maxArgs?: number; aggregate?: boolean };

const DEFS: Record<string, Def> = {
  // aggregates
  SUM: { minArgs: 1, argKinds: ['numeric'], aggregate: true, result: numericLike },
  AVG: { minArgs: 1, argKinds: ['numeric'], aggregate: true, result: fixed('float') },
  MIN: { minArgs: 1, argKinds: ['any'], aggregate: true, result: sameAsFirst },
  MAX: { minArgs: 1, argKinds: ['any'], aggregate: true, result: sameAsFirst },
  COUNT: { minArgs: 0, maxArgs: 1, argKinds: ['any'], aggregate: true, result: fixed('integer') },
  COUNTD: { minArgs: 1, argKinds: ['any'], aggregate: true, result: fixed('integer') },
  // math
  ABS: { minArgs: 1, argKinds: ['numeric'], result: numericLike },
  ROUND: {
    minArgs: 1,
    maxArgs: 2,
    argKinds: ['numeric', 'integer'],
    result: (t) => (t.length === 2 ? 'float' : 'integer'),
  },
  FLOOR: { minArgs: 1, argKinds: ['numeric'], result: fixed('integer') },
  CEILING: { minArgs: 1, argKinds: ['numeric'], result: fixed('integer') },
  SQRT: { minArgs: 1, argKinds: ['numeric'], result: fixed('float') },
  POWER: { minArgs: 2, argKinds: ['numeric', 'numeric'], result: fixed('float') },
  LN: { minArgs: 1, argKinds: ['numeric'], result: fixed('float') },
  LOG10: { minArgs: 1, argKinds: ['numeric'], result: fixed('float') },
  EXP: { minArgs: 1, argKinds: ['numeric'], result: fixed('float') },
  SIGN: { minArgs: 1, argKinds: ['numeric'], result: fixed('integer') },
  DIV: { minArgs: 2, argKinds: ['numeric', 'numeric'], result: fixed('float') },
  // strings
  CONCAT: { minArgs: 1, maxArgs: Infinity, argKinds: ['any'], result: fixed('string') },
  UPPER: { minArgs: 1, argKinds: ['string'], result: fixed('string') },
  LOWER: { minArgs: 1, argKinds: ['string'], result: fixed('string') },
  TRIM: { minArgs: 1, argKinds: ['string'], result: fixed('string') },
  LTRIM: { minArgs: 1, argKinds: ['string'], result: fixed('string') },
  RTRIM: { minArgs: 1, argKinds: ['string'], result: fixed('string') },
  LEN: { minArgs: 1, argKinds: ['string'], result: fixed('integer') },
  LEFT: { minArgs: 2, argKinds: ['string', 'integer'], result: fixed('string') },
  RIGHT: { minArgs: 2, argKinds: ['string', 'integer'], result: fixed('string') },
  SUBSTR: { minArgs: 2, maxArgs: 3, argKinds: ['string', 'integer', 'integer'], result: fixed('string') },
  REPLACE: { minArgs: 3, argKinds: ['string', 'string', 'string'], result: fixed('string') },
  CONTAINS: { minArgs: 2, argKinds: ['string', 'string'], result: fixed('boolean') },
  STARTSWITH: { minArgs: 2, argKinds: ['string', 'string'], result: fixed('boolean') },
  ENDSWITH: { minArgs: 2, argKinds: ['string', 'string'], result: fixed('boolean') },
  // dates
  YEAR: { minArgs: 1, argKinds: ['temporal'], result: fixed('integer') },
  QUARTER: { minArgs: 1, argKinds: ['temporal'], result: fixed('integer') },
  MONTH: { minArgs: 1, argKinds: ['temporal'], result: fixed('integer') },
  WEEK: { minArgs: 1, argKinds: ['temporal'], result: fixed('integer') },
  DAY: { minArgs: 1, argKinds: ['temporal'], result: fixed('integer') },
  HOUR: { minArgs: 1, argKinds: ['temporal'], result: fixed('integer') },
  MINUTE: { minArgs: 1, argKinds: ['temporal'], result: fixed('integer') },
  DATETRUNC: { minArgs: 2, units: TRUNC_UNITS, argKinds: ['temporal'], result: shifted },
  DATEADD: { minArgs: 3, units: SHIFT_UNITS, argKinds: ['integer', 'temporal'], result: shifted },
  DATEDIFF: { minArgs: 3, units: SHIFT_UNITS, argKinds: ['temporal', 'temporal'], result: fixed('integer') },
  TODAY: { minArgs: 0, argKinds: [], result: fixed('date') },
  NOW: { minArgs: 0, argKinds: [], result: fixed('datetime') },
  // conversions
  FLOAT: { minArgs: 1, argKinds: ['any'], result: fixed('float') },
  INT: { minArgs: 1, argKinds: ['any'], result: fixed('integer') },
  STR: { minArgs: 1, argKinds: ['any'], result: fixed('string') },
  DATE: { minArgs: 1, argKinds: ['any'], result: fixed('date') },
  // logic
  IF: { minArgs: 3, argKinds: ['boolean', 'any', 'any'], result: (t, a, unify) => unify(t.slice(1), a.slice(1)) },
  IFNULL: { minArgs: 2, argKinds: ['any', 'any'], result: unifyAll },
  COALESCE: { minArgs: 1, maxArgs: Infinity, argKinds: ['any'], result: unifyAll },
  ZN: { minArgs: 1, argKinds: ['numeric'], result: numericLike },
};

/** The whitelist: a name not in it is an error, never passed through to SQL. */
export const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map(
  Object.entries(DEFS).map(([name, d]) => [
    name,
    { ...d, name, aggregate: d.aggregate ?? false, maxArgs: d.maxArgs ?? d.minArgs } satisfies FunctionSpec,
  ]),
);

export function lookupFunction(name: string): FunctionSpec | undefined {
  return FUNCTIONS.get(name.toUpperCase());
}
