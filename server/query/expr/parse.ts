import { EOF, type IToken } from 'chevrotain';
import { mapChildren, type Expr } from './ast';
import { checkCall, isAggregate, normalizeUnit } from './analysis';
import { ExpressionError, type Position } from './errors';
import { LParen, RParen, tokenize } from './lexer';
import { expressionParser, tokenPosition } from './parser';
import { deepFreeze } from '../../kernel/deep-freeze';

/** Long enough for any real formula, short enough that one request cannot make the parser work for long. */
export const MAX_EXPRESSION_LENGTH = 20_000;
/** Later stages recurse over the tree; this keeps them far from the stack limit (a chain a + b + ... is this deep). */
export const MAX_DEPTH = 1000;
/** Parentheses nest the recursive descent deepest; they are stopped before the stack is. */
const MAX_PARENS = 100;
export const TOO_DEEP = 'выражение слишком сложное: слишком глубокая вложенность';

function checkParens(tokens: IToken[]): void {
  let depth = 0;
  for (const t of tokens) {
    if (t.tokenType === LParen && ++depth > MAX_PARENS) throw new ExpressionError(TOO_DEEP, tokenPosition(t));
    if (t.tokenType === RParen) depth--;
  }
}

function endPosition(text: string): Position {
  const lines = text.split(/\r\n|\r|\n/);
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

function parseSyntax(text: string): Expr {
  const tokens = tokenize(text);
  checkParens(tokens);
  const parser = expressionParser();
  parser.input = tokens;
  let ast: Expr;
  try {
    ast = parser.expression();
  } catch (e) {
    // Long chains of prefix operators (NOT NOT ... or - - ...) can still exhaust the stack.
    if (e instanceof RangeError) throw new ExpressionError(TOO_DEEP);
    throw e;
  }
  const error = parser.errors[0];
  if (error) {
    const atEnd = error.token.tokenType === EOF || Number.isNaN(error.token.startOffset);
    throw new ExpressionError(error.message, atEnd ? endPosition(text) : tokenPosition(error.token));
  }
  return ast;
}

/** Checks what the grammar cannot (function names and arity, units, depth) and returns the normalized tree. */
function checkTree(e: Expr, depth: number): Expr {
  if (depth > MAX_DEPTH) throw new ExpressionError(TOO_DEEP, e.pos ?? null);
  if (e.kind === 'call') checkCall(e);
  const node = e.kind === 'call' ? normalizeUnit(e) : e;
  return mapChildren(node, (child) => checkTree(child, depth + 1));
}

/*
 * Checked trees by their text. One request parses each of its shelves, filters and formulas several times (column
 * rules, the compiler's scope, the shelves), and every request of a dashboard sends the same texts again, while the
 * parse is a pure function of the text. Trees are frozen, so no later stage can change one another request shares;
 * only texts that parse are kept, and only short ones (real shelf and filter texts), within a bounded count.
 */
const PARSED_MAX_ENTRIES = 5_000;
const PARSED_MAX_TEXT = 1_000;
const parsed = new Map<string, Expr>();

/**
 * Text -> checked AST. Anything that is not a well-formed expression of the language is an ExpressionError, so no
 * user text can reach SQL except as a parsed, whitelisted structure. The tree is frozen and may be shared.
 */
export function parseExpression(text: string): Expr {
  if (typeof text !== 'string') throw new ExpressionError('выражение должно быть строкой');
  const known = parsed.get(text);
  if (known) return known;
  if (text.length > MAX_EXPRESSION_LENGTH)
    throw new ExpressionError(`выражение длиннее ${MAX_EXPRESSION_LENGTH} символов`);
  if (text.trim() === '') throw new ExpressionError('пустое выражение');
  const ast = checkTree(parseSyntax(text), 0);
  isAggregate(ast); // throws on an aggregate inside an aggregate
  if (text.length <= PARSED_MAX_TEXT) {
    // Oldest first out: a Map iterates in insertion order.
    if (parsed.size >= PARSED_MAX_ENTRIES) parsed.delete(parsed.keys().next().value!);
    parsed.set(text, deepFreeze(ast));
  }
  return ast;
}
