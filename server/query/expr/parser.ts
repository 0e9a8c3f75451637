import { EmbeddedActionsParser, type IToken } from 'chevrotain';
import type { BinaryOp, Expr, Literal } from './ast';
import { ExpressionError, quoted, type Position } from './errors';
import * as T from './lexer';
import { parseDateLiteral, parseNumberLiteral, splitReference, unescapeReference, unquoteString } from './literals';
import { russianMessages } from './parser-messages';

const pos = (t: IToken): Position => ({ line: t.startLine ?? 1, column: t.startColumn ?? 1 });

const COMPARISON: Record<string, BinaryOp> = {
  '=': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};

/**
 * Grammar, loosest binding first:
 *   expression := and (OR and)*
 *   and        := not (AND not)*
 *   not        := NOT not | predicate
 *   predicate  := additive [ cmp additive | IS [NOT] NULL | [NOT] IN (list) | [NOT] LIKE additive
 *                            | [NOT] BETWEEN additive AND additive ]
 *   additive   := multiplicative ((+|-) multiplicative)*
 *   multiplicative := unary ((*|/|%) unary)*
 *   unary      := - unary | primary
 *   primary    := literal | [reference] | ( expression ) | CASE ... END | name ( args )
 * Comparisons do not chain: `a < b < c` is an error rather than a surprise.
 */
class ExpressionParser extends EmbeddedActionsParser {
  constructor() {
    super(T.allTokens, { errorMessageProvider: russianMessages, maxLookahead: 3 });
    this.performSelfAnalysis();
  }

  expression = this.RULE('expression', (): Expr => {
    let left = this.SUBRULE(this.andExpr);
    this.MANY(() => {
      const op = this.CONSUME(T.Or);
      const right = this.SUBRULE2(this.andExpr);
      left = { kind: 'binary', op: 'or', left, right, pos: pos(op) };
    });
    return left;
  });

  private andExpr = this.RULE('andExpr', (): Expr => {
    let left = this.SUBRULE(this.notExpr);
    this.MANY(() => {
      const op = this.CONSUME(T.And);
      const right = this.SUBRULE2(this.notExpr);
      left = { kind: 'binary', op: 'and', left, right, pos: pos(op) };
    });
    return left;
  });

  private notExpr = this.RULE('notExpr', (): Expr =>
    this.OR([
      {
        ALT: () => {
          const op = this.CONSUME(T.Not);
          const operand = this.SUBRULE(this.notExpr);
          return { kind: 'unary', op: 'not', operand, pos: pos(op) } as Expr;
        },
      },
      { ALT: () => this.SUBRULE(this.predicate) },
    ]),
  );

  private predicate = this.RULE('predicate', (): Expr => {
    const left = this.SUBRULE(this.additive);
    const tail = this.OPTION(() =>
      this.OR([
        {
          ALT: (): Expr => {
            const op = this.CONSUME(T.ComparisonOp);
            const right = this.SUBRULE2(this.additive);
            return { kind: 'binary', op: COMPARISON[op.image], left, right, pos: pos(op) };
          },
        },
        {
          ALT: (): Expr => {
            const is = this.CONSUME(T.Is);
            const negated = this.OPTION2(() => this.CONSUME(T.Not)) !== undefined;
            this.CONSUME(T.Null);
            return { kind: 'is_null', expr: left, negated, pos: pos(is) };
          },
        },
        { ALT: (): Expr => this.SUBRULE(this.negatablePredicate, { ARGS: [left] }) },
      ]),
    );
    return tail ?? left;
  });

  private negatablePredicate = this.RULE('negatablePredicate', (left?: Expr): Expr => {
    const negated = this.OPTION(() => this.CONSUME(T.Not)) !== undefined;
    const subject = left as Expr;
    return this.OR([
      {
        ALT: (): Expr => {
          const kw = this.CONSUME(T.In);
          this.CONSUME(T.LParen);
          const list: Expr[] = [];
          this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => list.push(this.SUBRULE(this.expression)) });
          this.CONSUME(T.RParen);
          return { kind: 'in', expr: subject, list, negated, pos: pos(kw) };
        },
      },
      {
        ALT: (): Expr => {
          const kw = this.CONSUME(T.LikeKw);
          const pattern = this.SUBRULE(this.additive);
          return { kind: 'like', expr: subject, pattern, negated, pos: pos(kw) };
        },
      },
      {
        ALT: (): Expr => {
          const kw = this.CONSUME(T.BetweenKw);
          const low = this.SUBRULE2(this.additive);
          this.CONSUME(T.And);
          const high = this.SUBRULE3(this.additive);
          return { kind: 'between', expr: subject, low, high, negated, pos: pos(kw) };
        },
      },
    ]);
  });

  private additive = this.RULE('additive', (): Expr => {
    let left = this.SUBRULE(this.multiplicative);
    this.MANY(() => {
      const op = this.CONSUME(T.AdditiveOp);
      const right = this.SUBRULE2(this.multiplicative);
      left = { kind: 'binary', op: op.image as BinaryOp, left, right, pos: pos(op) };
    });
    return left;
  });

  private multiplicative = this.RULE('multiplicative', (): Expr => {
    let left = this.SUBRULE(this.unary);
    this.MANY(() => {
      const op = this.CONSUME(T.MultiplicativeOp);
      const right = this.SUBRULE2(this.unary);
      left = { kind: 'binary', op: op.image as BinaryOp, left, right, pos: pos(op) };
    });
    return left;
  });

  private unary = this.RULE('unary', (): Expr =>
    this.OR([
      {
        ALT: (): Expr => {
          const op = this.CONSUME(T.Minus);
          const operand = this.SUBRULE(this.unary);
          return this.ACTION((): Expr => {
            // A negative number stays one literal, so it is one bound value rather than an operation on one.
            if (operand.kind === 'literal' && (operand.type === 'integer' || operand.type === 'float')) {
              return { ...operand, value: -operand.value, pos: pos(op) };
            }
            return { kind: 'unary', op: '-', operand, pos: pos(op) };
          });
        },
      },
      { ALT: () => this.SUBRULE(this.primary) },
    ]),
  );

  private primary = this.RULE('primary', (): Expr =>
    this.OR([
      { ALT: () => this.SUBRULE(this.literal) },
      { ALT: () => this.SUBRULE(this.reference) },
      {
        ALT: () => {
          this.CONSUME(T.LParen);
          const inner = this.SUBRULE(this.expression);
          this.CONSUME(T.RParen);
          return inner;
        },
      },
      { ALT: () => this.SUBRULE(this.caseExpr) },
      { ALT: () => this.SUBRULE(this.call) },
    ]),
  );

  private literal = this.RULE('literal', (): Literal =>
    this.OR([
      {
        ALT: (): Literal => {
          const t = this.CONSUME(T.NumberLiteral);
          return this.ACTION(() => {
            const n = parseNumberLiteral(t.image);
            if (!n) throw new ExpressionError(`число ${quoted(t.image)} вне допустимого диапазона`, pos(t));
            return { kind: 'literal', ...n, pos: pos(t) };
          });
        },
      },
      {
        ALT: (): Literal => {
          const t = this.CONSUME(T.StringLiteral);
          return { kind: 'literal', type: 'string', value: this.ACTION(() => unquoteString(t.image)), pos: pos(t) };
        },
      },
      {
        ALT: (): Literal => {
          const t = this.CONSUME(T.DateLiteral);
          return this.ACTION(() => {
            const d = parseDateLiteral(t.image);
            if (!d)
              throw new ExpressionError(
                `неверная дата ${quoted(t.image)}: ожидается #ГГГГ-ММ-ДД# или #ГГГГ-ММ-ДД ЧЧ:ММ:СС#`,
                pos(t),
              );
            return { kind: 'literal', ...d, pos: pos(t) };
          });
        },
      },
      { ALT: (): Literal => ({ kind: 'literal', type: 'boolean', value: true, pos: pos(this.CONSUME(T.True)) }) },
      { ALT: (): Literal => ({ kind: 'literal', type: 'boolean', value: false, pos: pos(this.CONSUME(T.False)) }) },
      { ALT: (): Literal => ({ kind: 'literal', type: 'null', value: null, pos: pos(this.CONSUME(T.Null)) }) },
    ]),
  );

  private reference = this.RULE('reference', (): Expr => {
    const t = this.CONSUME(T.Reference);
    return this.ACTION((): Expr => {
      const parts = splitReference(unescapeReference(t.image));
      if ('name' in parts) {
        if (parts.name === '') throw new ExpressionError('пустая ссылка []', pos(t));
        return { kind: 'calc_ref', name: parts.name, pos: pos(t) };
      }
      if (parts.table === '' || parts.field === '') {
        throw new ExpressionError(
          `в ссылке ${quoted(t.image)} нет имени таблицы или поля: пишите [таблица.поле]`,
          pos(t),
        );
      }
      return { kind: 'column_ref', table: parts.table, field: parts.field, pos: pos(t) };
    });
  });

  private caseExpr = this.RULE('caseExpr', (): Expr => {
    const kw = this.CONSUME(T.CaseKw);
    const operand = this.OPTION(() => this.SUBRULE(this.expression));
    const branches: { when: Expr; then: Expr }[] = [];
    this.AT_LEAST_ONE(() => {
      const when = this.CONSUME(T.When);
      const value = this.SUBRULE2(this.expression);
      this.CONSUME(T.Then);
      const then = this.SUBRULE3(this.expression);
      const cond: Expr = operand ? { kind: 'binary', op: '=', left: operand, right: value, pos: pos(when) } : value;
      branches.push({ when: cond, then });
    });
    const otherwise = this.OPTION2(() => {
      this.CONSUME(T.Else);
      return this.SUBRULE4(this.expression);
    });
    this.CONSUME(T.End);
    return { kind: 'case', branches, else: otherwise ?? null, pos: pos(kw) };
  });

  private call = this.RULE('call', (): Expr => {
    const name = this.CONSUME(T.Identifier);
    const args = this.OPTION(() => {
      const list: Expr[] = [];
      this.CONSUME(T.LParen);
      this.MANY_SEP({ SEP: T.Comma, DEF: () => list.push(this.SUBRULE(this.expression)) });
      this.CONSUME(T.RParen);
      return list;
    });
    return this.ACTION((): Expr => {
      if (!args) {
        throw new ExpressionError(
          `неизвестное имя ${quoted(name.image)}: ссылка на поле пишется в квадратных скобках, например [таблица.поле]`,
          pos(name),
        );
      }
      return { kind: 'call', name: name.image.toUpperCase(), args, pos: pos(name) };
    });
  });
}

let instance: ExpressionParser | undefined;

/**
 * One instance for the process, as chevrotain recommends: building a parser runs a grammar analysis, tens of
 * milliseconds, so it is built on the first expression parsed, not at start.
 */
export const expressionParser = (): ExpressionParser => (instance ??= new ExpressionParser());

export const tokenPosition = pos;
