import type { Position } from './errors';

/**
 * The expression AST. Nodes carry the position of their first token when they come from the parser, so later
 * stages (types, compilation) can point at the place of an error; hand-built nodes may leave it out.
 */
interface Node {
  pos?: Position;
}

export type Literal = Node & { kind: 'literal' } & (
    | { type: 'string'; value: string }
    | { type: 'integer' | 'float'; value: number }
    | { type: 'boolean'; value: boolean }
    | { type: 'null'; value: null }
    /** value is 'YYYY-MM-DD' */
    | { type: 'date'; value: string }
    /** value is 'YYYY-MM-DD HH:MM:SS' (wall-clock time, no time zone) */
    | { type: 'datetime'; value: string }
  );

export type ArithmeticOp = '+' | '-' | '*' | '/' | '%';
export type ComparisonOp = '=' | '!=' | '<' | '<=' | '>' | '>=';
export type LogicalOp = 'and' | 'or';
export type BinaryOp = ArithmeticOp | ComparisonOp | LogicalOp;

export interface ColumnRef extends Node {
  kind: 'column_ref';
  table: string;
  field: string;
}

export interface CalcRef extends Node {
  kind: 'calc_ref';
  name: string;
}

export interface Unary extends Node {
  kind: 'unary';
  op: '-' | 'not';
  operand: Expr;
}

export interface Binary extends Node {
  kind: 'binary';
  op: BinaryOp;
  left: Expr;
  right: Expr;
}

export interface InList extends Node {
  kind: 'in';
  expr: Expr;
  list: Expr[];
  negated: boolean;
}

export interface Between extends Node {
  kind: 'between';
  expr: Expr;
  low: Expr;
  high: Expr;
  negated: boolean;
}

export interface IsNull extends Node {
  kind: 'is_null';
  expr: Expr;
  negated: boolean;
}

export interface Like extends Node {
  kind: 'like';
  expr: Expr;
  pattern: Expr;
  negated: boolean;
}

/** Searched CASE; the simple form `CASE x WHEN v THEN ...` is rewritten to `x = v` conditions by the parser. */
export interface Case extends Node {
  kind: 'case';
  branches: { when: Expr; then: Expr }[];
  else: Expr | null;
}

/** A whitelisted function; name is upper case. */
export interface Call extends Node {
  kind: 'call';
  name: string;
  args: Expr[];
}

export type Expr = Literal | ColumnRef | CalcRef | Unary | Binary | InList | Between | IsNull | Like | Case | Call;

/** The direct children of a node, in source order. */
export function children(e: Expr): Expr[] {
  switch (e.kind) {
    case 'literal':
    case 'column_ref':
    case 'calc_ref':
      return [];
    case 'unary':
      return [e.operand];
    case 'binary':
      return [e.left, e.right];
    case 'in':
      return [e.expr, ...e.list];
    case 'between':
      return [e.expr, e.low, e.high];
    case 'is_null':
      return [e.expr];
    case 'like':
      return [e.expr, e.pattern];
    case 'case':
      return [...e.branches.flatMap((b) => [b.when, b.then]), ...(e.else ? [e.else] : [])];
    case 'call':
      return e.args;
  }
}

/** The same node with each direct child replaced by f(child). */
export function mapChildren(e: Expr, f: (child: Expr) => Expr): Expr {
  switch (e.kind) {
    case 'literal':
    case 'column_ref':
    case 'calc_ref':
      return e;
    case 'unary':
      return { ...e, operand: f(e.operand) };
    case 'binary':
      return { ...e, left: f(e.left), right: f(e.right) };
    case 'in':
      return { ...e, expr: f(e.expr), list: e.list.map(f) };
    case 'between':
      return { ...e, expr: f(e.expr), low: f(e.low), high: f(e.high) };
    case 'is_null':
      return { ...e, expr: f(e.expr) };
    case 'like':
      return { ...e, expr: f(e.expr), pattern: f(e.pattern) };
    case 'case':
      return {
        ...e,
        branches: e.branches.map((b) => ({ when: f(b.when), then: f(b.then) })),
        else: e.else ? f(e.else) : null,
      };
    case 'call':
      return { ...e, args: e.args.map(f) };
  }
}
