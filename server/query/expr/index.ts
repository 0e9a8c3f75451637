/**
 * The expression language of shelves, calculated fields and filters (see LANGUAGE.md): text is parsed into an AST,
 * checked against a whitelist and compiled per SQL dialect with bound or escaped values. This is the security
 * boundary between user-written formulas and the databases.
 */
export type { Call, Expr, Literal } from './ast';
export { children, mapChildren } from './ast';
export { ExpressionError, type Position } from './errors';
export { parseExpression, MAX_EXPRESSION_LENGTH } from './parse';
export { collectReferences, isAggregate } from './analysis';
export { inferType } from './infer-type';
export type { PrimitiveType, TypeResolver } from './types';
export { FUNCTIONS, lookupFunction } from './functions';
export { compileExpression, type CompileContext } from './compile';
export { createParamSink, DIALECTS, escapeLiteral, quoteIdentifier, type Dialect, type ParamSink } from './dialect';
export { compileFilter, FILTER_OPS, type WidgetFilter } from './filters';
export { FILTER_VALUE_TYPES, filterValueLiteral, type FilterValueType } from './filter-values';
