/**
 * The expression language of shelves, calculated fields and filters (see LANGUAGE.md): text is parsed into an AST,
 * checked against a whitelist and compiled per SQL dialect with bound or escaped values. This is the security
 * boundary between user-written formulas and the databases.
 */
export type {
  Between,
  Binary,
  BinaryOp,
  CalcRef,
  Call,
  Case,
  ColumnRef,
  Expr,
  InList,
  IsNull,
  Like,
  Literal,
  LiteralType,
  Unary,
} from './ast';
export { children, mapChildren } from './ast';
export { ExpressionError, type Position } from './errors';
export { parseExpression, MAX_EXPRESSION_LENGTH } from './parse';
export { collectReferences, isAggregate, type References } from './analysis';
export { inferType } from './infer-type';
export type { PrimitiveType, TypeResolver } from './types';
export { FUNCTIONS, lookupFunction, type FunctionSpec } from './functions';
export { compileExpression, type CompileContext } from './compile';
export {
  createParamSink,
  DIALECTS,
  escapeLiteral,
  quoteIdentifier,
  type Dialect,
  type LiteralValue,
  type ParamSink,
} from './dialect';
export { compileFilter, FILTER_OPS, type FilterOp, type WidgetFilter } from './filters';
export { FILTER_VALUE_TYPES, type FilterValueType } from './filter-values';
