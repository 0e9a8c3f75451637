import type { Expr } from './ast';
import { ExpressionError, type Position } from './errors';
import { lookupFunction } from './functions';
import {
  commonType,
  fitsKind,
  isNumeric,
  isTemporal,
  kindName,
  TYPE_NAMES,
  type PrimitiveType,
  type TypeResolver,
} from './types';

const name = (t: PrimitiveType) => `«${TYPE_NAMES[t]}»`;
const at = (e: Expr): Position | null => e.pos ?? null;
const isNullLiteral = (e: Expr) => e.kind === 'literal' && e.type === 'null';

/** The type several branches (CASE, IF, COALESCE) or compared values share; NULL fits any of them. */
function unify(types: PrimitiveType[], args: Expr[], what: string): PrimitiveType {
  let result: PrimitiveType | null = null;
  types.forEach((t, i) => {
    if (isNullLiteral(args[i])) return;
    if (result === null) {
      result = t;
      return;
    }
    const common: PrimitiveType | null = commonType(result, t);
    if (!common) throw new ExpressionError(`${what}: несовместимые типы ${name(result)} и ${name(t)}`, at(args[i]));
    result = common;
  });
  return result ?? 'unknown';
}

function expect(e: Expr, t: PrimitiveType, ok: (t: PrimitiveType) => boolean, message: string): void {
  if (t !== 'unknown' && !ok(t)) throw new ExpressionError(`${message}, а получено ${name(t)}`, at(e));
}

function arithmetic(e: Expr & { kind: 'binary' }, l: PrimitiveType, r: PrimitiveType): PrimitiveType {
  for (const [side, t] of [
    [e.left, l],
    [e.right, r],
  ] as const) {
    if (e.op === '+' && t === 'string') {
      throw new ExpressionError('оператор + складывает только числа; строки соединяет функция CONCAT', at(side));
    }
    if (isTemporal(t))
      throw new ExpressionError(`оператор ${e.op} не применяется к датам; используйте DATEADD и DATEDIFF`, at(side));
    expect(side, t, isNumeric, `оператор ${e.op} ожидает число`);
    if (e.op === '%') expect(side, t, (x) => x === 'integer', 'оператор % ожидает целое число');
  }
  if (e.op === '/') return 'float';
  if (l === 'float' || r === 'float') return 'float';
  return l === 'integer' && r === 'integer' ? 'integer' : 'unknown';
}

function comparable(a: Expr, ta: PrimitiveType, b: Expr, tb: PrimitiveType): void {
  if (isNullLiteral(a) || isNullLiteral(b)) return;
  if (!commonType(ta, tb)) throw new ExpressionError(`нельзя сравнивать ${name(ta)} и ${name(tb)}`, at(b));
}

function call(e: Expr & { kind: 'call' }, types: PrimitiveType[]): PrimitiveType {
  const spec = lookupFunction(e.name);
  if (!spec) throw new ExpressionError(`неизвестная функция ${e.name}`, at(e));
  const offset = spec.units ? 1 : 0;
  for (let i = offset; i < e.args.length; i++) {
    const kinds = spec.argKinds;
    const kind = kinds[Math.min(i - offset, kinds.length - 1)];
    if (!fitsKind(types[i], kind) && !isNullLiteral(e.args[i])) {
      throw new ExpressionError(
        `аргумент ${i + 1} функции ${spec.name} должен быть типа «${kindName(kind)}», а получено ${name(types[i])}`,
        at(e.args[i]),
      );
    }
  }
  return spec.result(types, e.args, (ts, as) => unify(ts, as, `функция ${spec.name}`));
}

/**
 * The type of the expression's value, given the types of the references. Type errors (a string multiplied, SUM of
 * a string, a CASE whose branches disagree) are ExpressionErrors; 'unknown' operands are let through, because a
 * reference of unknown type is the dataset's gap, not the user's mistake.
 */
export function inferType(e: Expr, resolve: TypeResolver): PrimitiveType {
  const sub = (x: Expr) => inferType(x, resolve);
  switch (e.kind) {
    case 'literal':
      return e.type === 'null' ? 'unknown' : e.type;
    case 'column_ref':
      return resolve.column(e.table, e.field);
    case 'calc_ref':
      return resolve.calculated(e.name);
    case 'unary': {
      const t = sub(e.operand);
      if (e.op === 'not') {
        expect(e.operand, t, (x) => x === 'boolean', 'NOT ожидает логическое значение');
        return 'boolean';
      }
      expect(e.operand, t, isNumeric, 'унарный минус ожидает число');
      return t;
    }
    case 'binary': {
      const l = sub(e.left);
      const r = sub(e.right);
      if (e.op === 'and' || e.op === 'or') {
        const word = e.op.toUpperCase();
        expect(e.left, l, (x) => x === 'boolean', `${word} ожидает логическое значение`);
        expect(e.right, r, (x) => x === 'boolean', `${word} ожидает логическое значение`);
        return 'boolean';
      }
      if (['+', '-', '*', '/', '%'].includes(e.op)) return arithmetic(e, l, r);
      comparable(e.left, l, e.right, r);
      return 'boolean';
    }
    case 'in': {
      const t = sub(e.expr);
      e.list.forEach((item) => comparable(e.expr, t, item, sub(item)));
      return 'boolean';
    }
    case 'between': {
      const t = sub(e.expr);
      comparable(e.expr, t, e.low, sub(e.low));
      comparable(e.expr, t, e.high, sub(e.high));
      return 'boolean';
    }
    case 'is_null':
      sub(e.expr);
      return 'boolean';
    case 'like':
      expect(e.expr, sub(e.expr), (x) => x === 'string', 'LIKE применяется к строке');
      expect(e.pattern, sub(e.pattern), (x) => x === 'string', 'шаблон LIKE должен быть строкой');
      return 'boolean';
    case 'case': {
      for (const b of e.branches)
        expect(b.when, sub(b.when), (x) => x === 'boolean', 'условие WHEN должно быть логическим');
      const results = [...e.branches.map((b) => b.then), ...(e.else ? [e.else] : [])];
      return unify(results.map(sub), results, 'ветви CASE');
    }
    case 'call':
      return call(e, e.args.map(sub));
  }
}
