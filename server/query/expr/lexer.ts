import { createToken, Lexer, type IToken, type TokenType } from 'chevrotain';
import { ExpressionError, quoted } from './errors';

/** Function names only: a bare word is never a column, so `SELECT`, `FROM`, `DROP` cannot mean anything here. */
export const Identifier = createToken({
  name: 'Identifier',
  pattern: /[A-Za-z_\u0400-\u04FF][A-Za-z0-9_\u0400-\u04FF]*/,
});

function keyword(word: string): TokenType {
  return createToken({ name: word, pattern: new RegExp(word, 'i'), longer_alt: Identifier, label: word });
}

export const And = keyword('AND');
export const Or = keyword('OR');
export const Not = keyword('NOT');
export const Is = keyword('IS');
export const Null = keyword('NULL');
export const In = keyword('IN');
export const LikeKw = keyword('LIKE');
export const BetweenKw = keyword('BETWEEN');
export const CaseKw = keyword('CASE');
export const When = keyword('WHEN');
export const Then = keyword('THEN');
export const Else = keyword('ELSE');
export const End = keyword('END');
export const True = keyword('TRUE');
export const False = keyword('FALSE');

/** `[...]` on one line; `]]` stands for `]` inside. */
export const Reference = createToken({ name: 'Reference', pattern: /\[(?:[^\]\r\n]|\]\])*\]/, label: '[поле]' });
export const DateLiteral = createToken({ name: 'DateLiteral', pattern: /#[^#\r\n]*#/, label: '#дата#' });
export const StringLiteral = createToken({
  name: 'StringLiteral',
  pattern: /'(?:[^']|'')*'|"(?:[^"]|"")*"/,
  line_breaks: true,
  label: "'строка'",
});
export const NumberLiteral = createToken({
  name: 'NumberLiteral',
  pattern: /(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?/,
  label: 'число',
});

/**
 * SQL comment and statement separators get tokens of their own only to be refused with a clear message: `--` is
 * never read as two minus signs, so `'x' -- comment` cannot be mistaken for arithmetic.
 */
const Forbidden = createToken({ name: 'Forbidden', pattern: /--|\/\*|\*\/|;/ });

/** Operator categories let the grammar consume "any comparison" in one step; the image tells which. */
export const ComparisonOp = createToken({ name: 'ComparisonOp', pattern: Lexer.NA, label: 'оператор сравнения' });
export const AdditiveOp = createToken({ name: 'AdditiveOp', pattern: Lexer.NA, label: '+ или -' });
export const MultiplicativeOp = createToken({ name: 'MultiplicativeOp', pattern: Lexer.NA, label: '*, / или %' });

const op = (name: string, pattern: RegExp, label: string, category: TokenType) =>
  createToken({ name, pattern, label, categories: [category] });

const LessEq = op('LessEq', /<=/, '<=', ComparisonOp);
const GreaterEq = op('GreaterEq', />=/, '>=', ComparisonOp);
const NotEqual = op('NotEqual', /<>|!=/, '!=', ComparisonOp);
const Less = op('Less', /</, '<', ComparisonOp);
const Greater = op('Greater', />/, '>', ComparisonOp);
const Equal = op('Equal', /=/, '=', ComparisonOp);
const Plus = op('Plus', /\+/, '+', AdditiveOp);
export const Minus = op('Minus', /-/, '-', AdditiveOp);
const Star = op('Star', /\*/, '*', MultiplicativeOp);
const Slash = op('Slash', /\//, '/', MultiplicativeOp);
const Percent = op('Percent', /%/, '%', MultiplicativeOp);
export const LParen = createToken({ name: 'LParen', pattern: /\(/, label: '(' });
export const RParen = createToken({ name: 'RParen', pattern: /\)/, label: ')' });
export const Comma = createToken({ name: 'Comma', pattern: /,/, label: ',' });
const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /\s+/, group: Lexer.SKIPPED, line_breaks: true });

export const allTokens: TokenType[] = [
  ComparisonOp,
  AdditiveOp,
  MultiplicativeOp,
  WhiteSpace,
  Reference,
  DateLiteral,
  StringLiteral,
  NumberLiteral,
  Forbidden,
  LessEq,
  GreaterEq,
  NotEqual,
  Less,
  Greater,
  Equal,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  LParen,
  RParen,
  Comma,
  And,
  Or,
  Not,
  Is,
  Null,
  In,
  LikeKw,
  BetweenKw,
  CaseKw,
  When,
  Then,
  Else,
  End,
  True,
  False,
  Identifier,
];

/** Built on the first text tokenized, not at start (building it analyses every token pattern). */
let lexer: Lexer | undefined;

function lexerErrorDetail(ch: string): string {
  switch (ch) {
    case '[':
      return 'незакрытая квадратная скобка «[» (ссылка на поле пишется в одну строку: [таблица.поле])';
    case ']':
      return 'лишняя закрывающая скобка «]»';
    case "'":
    case '"':
      return `незакрытая строка: нет парной кавычки ${ch}`;
    case '#':
      return 'незакрытый литерал даты: нет парного «#»';
    default:
      return `недопустимый символ ${quoted(ch)}`;
  }
}

function forbiddenDetail(image: string): string {
  return image === ';' ? 'точка с запятой не допускается' : `комментарии SQL не допускаются: ${quoted(image)}`;
}

export function tokenize(text: string): IToken[] {
  const result = (lexer ??= new Lexer(allTokens, { ensureOptimizations: true })).tokenize(text);
  const error = result.errors[0];
  if (error) {
    throw new ExpressionError(lexerErrorDetail(text[error.offset] ?? ''), {
      line: error.line ?? 1,
      column: error.column ?? 1,
    });
  }
  const forbidden = result.tokens.find((t) => t.tokenType === Forbidden);
  if (forbidden) {
    throw new ExpressionError(forbiddenDetail(forbidden.image), {
      line: forbidden.startLine ?? 1,
      column: forbidden.startColumn ?? 1,
    });
  }
  return result.tokens;
}
