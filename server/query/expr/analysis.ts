import { children, type CalcRef, type Call, type Expr } from './ast';
import { ExpressionError, type Position } from './errors';
import { lookupFunction } from './functions';

export interface References {
  columns: { table: string; field: string }[];
  calculated: string[];
}

/** Every column and calculated field the expression names, each once, in order of first use. */
export function collectReferences(e: Expr): References {
  const columns: References['columns'] = [];
  const calculated: string[] = [];
  const seen = new Set<string>();
  const visit = (node: Expr) => {
    if (node.kind === 'column_ref') {
      const key = JSON.stringify(['c', node.table, node.field]);
      if (!seen.has(key)) columns.push({ table: node.table, field: node.field });
      seen.add(key);
    } else if (node.kind === 'calc_ref') {
      const key = JSON.stringify(['k', node.name]);
      if (!seen.has(key)) calculated.push(node.name);
      seen.add(key);
    }
    children(node).forEach(visit);
  };
  visit(e);
  return { columns, calculated };
}

export const isAggregateCall = (e: Expr): e is Call => e.kind === 'call' && lookupFunction(e.name)?.aggregate === true;

/**
 * Whether the expression aggregates (a measure) rather than computes per row. Calculated fields are looked through
 * when `calculated` is given, since `[Profit ratio]` may itself be `SUM(...) / SUM(...)`. An aggregate inside an
 * aggregate is an error: no dialect we compile to accepts it.
 */
export function isAggregate(e: Expr, calculated?: (name: string) => Expr): boolean {
  const visiting: string[] = [];
  const walk = (node: Expr, outer: Call | null): boolean => {
    if (isAggregateCall(node)) {
      if (outer) {
        throw new ExpressionError(
          `агрегатная функция ${node.name} не может стоять внутри ${outer.name}`,
          node.pos ?? null,
        );
      }
      node.args.forEach((a) => walk(a, node));
      return true;
    }
    if (node.kind === 'calc_ref' && calculated) {
      if (visiting.includes(node.name)) throw cycleError([...visiting, node.name], node.pos);
      visiting.push(node.name);
      const result = withinCalculated(node, () => walk(calculated(node.name), outer));
      visiting.pop();
      return result;
    }
    let found = false;
    for (const child of children(node)) found = walk(child, outer) || found;
    return found;
  };
  return walk(e, null);
}

export function cycleError(path: string[], pos?: Position): ExpressionError {
  const names = path.map((n) => `[${n}]`).join(' → ');
  return new ExpressionError(`циклическая ссылка между вычисляемыми полями: ${names}`, pos ?? null, true);
}

/**
 * Runs f over a calculated field's formula. Positions in errors from there point into that formula, not into the
 * text being checked, so the error is re-pointed at the reference and says which field it came from.
 */
export function withinCalculated<T>(ref: CalcRef, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (!(err instanceof ExpressionError)) throw err;
    const detail = err.cycle ? err.detail : `в вычисляемом поле [${ref.name}]: ${err.detail}`;
    throw new ExpressionError(detail, ref.pos ?? null, err.cycle);
  }
}

/** «1 аргумент», «2 аргумента», «5 аргументов». */
function plural(n: number): string {
  const mod10 = n % 10;
  const mod100 = n % 100;
  if (mod10 === 1 && mod100 !== 11) return 'аргумент';
  if (mod10 >= 2 && mod10 <= 4 && (mod100 < 12 || mod100 > 14)) return 'аргумента';
  return 'аргументов';
}

/** Checks a call against the whitelist: the name, the number of arguments and a unit argument if it has one. */
export function checkCall(e: Call): void {
  const spec = lookupFunction(e.name);
  const where = e.pos ?? null;
  if (!spec) throw new ExpressionError(`неизвестная функция ${e.name}`, where);
  const n = e.args.length;
  if (n < spec.minArgs || n > spec.maxArgs) {
    const expected =
      spec.maxArgs === Infinity
        ? `не меньше ${spec.minArgs}`
        : spec.minArgs === spec.maxArgs
          ? `${spec.minArgs}`
          : `от ${spec.minArgs} до ${spec.maxArgs}`;
    const fixedCount = spec.minArgs === spec.maxArgs;
    const noun = fixedCount
      ? plural(spec.minArgs)
      : spec.maxArgs === Infinity && spec.minArgs === 1
        ? 'аргумента'
        : 'аргументов';
    throw new ExpressionError(`функция ${spec.name} принимает ${expected} ${noun}, передано ${n}`, where);
  }
  if (spec.units) {
    const unit = e.args[0];
    const value = unit.kind === 'literal' && unit.type === 'string' ? unit.value.toLowerCase() : null;
    if (value === null || !spec.units.includes(value)) {
      throw new ExpressionError(
        `первый аргумент ${spec.name} — единица времени в кавычках: ${spec.units.map((u) => `'${u}'`).join(', ')}`,
        unit.pos ?? where,
      );
    }
  }
}

/** Unit arguments are matched case-insensitively; the checked AST carries them in lower case. */
export function normalizeUnit(e: Call): Call {
  const unit = e.args[0];
  if (!lookupFunction(e.name)?.units || unit.kind !== 'literal' || unit.type !== 'string') return e;
  return { ...e, args: [{ ...unit, value: unit.value.toLowerCase() }, ...e.args.slice(1)] };
}
