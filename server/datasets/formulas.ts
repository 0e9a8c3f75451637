import {
  collectReferences,
  ExpressionError,
  inferType,
  isAggregate,
  lookupFunction,
  parseExpression,
  type Expr,
  type Position,
} from '../query/expr';
import { cycleError, isAggregateCall } from '../query/expr/analysis';
import { children } from '../query/expr/ast';
import type { PrimitiveType } from '../../adapters/sources';
import type { DatasetModel } from '../query/compile/dataset-model';

/*
 * Formulas of calculated fields checked against a dataset: every reference must name a field (or a parameter) of the
 * dataset, calculated fields must not depend on themselves, and types must agree. Shared by the schema save, the
 * schema validation and the single-formula check.
 */

export interface CalculatedDef {
  name: string;
  formula: string;
}

/** What formulas of one dataset can refer to. Names are matched exactly, as the engine matches them. */
export interface FormulaEnv {
  /** object name -> physical field name -> type: the targets of [object.field]. */
  columns: Map<string, Map<string, PrimitiveType>>;
  /** calculated (and derived) field name -> its formula: the targets of [name]. */
  calculated: Map<string, CalculatedDef>;
  /** parameter name -> type: [name] when no calculated field has that name. */
  parameters: Map<string, PrimitiveType>;
}

export type FormulaResult =
  /** `measure`: for an aggregating formula, the aggregate call that makes it one (internal). */
  | { ok: true; type: PrimitiveType; aggregate: boolean; ast: Expr; measure: Expr | null; size: number }
  | { ok: false; error: ExpressionError; cycle?: string[] };

const escapeRef = (name: string) => name.replaceAll(']', ']]');
export const columnRefText = (object: string, field: string) => `[${escapeRef(object)}.${escapeRef(field)}]`;
export const calcRefText = (name: string) => `[${escapeRef(name)}]`;

function literalText(arg: string | number): string {
  return typeof arg === 'number' ? String(arg) : `'${arg.replaceAll("'", "''")}'`;
}

/**
 * The formula of a derived field: the function applied to the base field's reference. A function with a unit
 * (DATETRUNC, DATEADD ...) takes the unit first and the field last; any other takes the field first:
 * `YEAR([orders.created_at])`, `DATETRUNC('month', [orders.created_at])`, `ROUND([Прибыль], 2)`.
 */
export function derivedFormula(baseRef: string, fn: string, args: readonly (string | number)[] = []): string {
  const name = fn.toUpperCase();
  const spec = lookupFunction(name);
  const parts = spec?.units
    ? [...args.slice(0, 1).map(literalText), ...args.slice(1).map(literalText), baseRef]
    : [baseRef, ...args.map(literalText)];
  return `${name}(${parts.join(', ')})`;
}

/** Null when the function may derive a field, else the reason (unknown, or an aggregate). */
export function derivationFunctionProblem(fn: string): 'unknown' | 'aggregate' | null {
  const spec = lookupFunction(fn);
  if (!spec) return 'unknown';
  return spec.aggregate ? 'aggregate' : null;
}

/** The longest chain of calculated fields referring to one another (every link is a nested call, here and in the engine). */
const MAX_CHAIN = 50;

/** The largest formula, counted in syntax nodes with every calculated field substituted. */
const MAX_EXPANDED_NODES = 100_000;

const NULL: Expr = { kind: 'literal', type: 'null', value: null };

/** Where the first reference matching `test` stands in the formula, for the error message. */
function positionOf(ast: Expr, test: (e: Expr) => boolean): Position | null {
  if (test(ast)) return ast.pos ?? null;
  for (const child of children(ast)) {
    const found = positionOf(child, test);
    if (found) return found;
  }
  return null;
}

/** The first aggregate call of the formula, depth first. */
function firstAggregateCall(ast: Expr): Expr | null {
  if (isAggregateCall(ast)) return ast;
  for (const child of children(ast)) {
    const found = firstAggregateCall(child);
    if (found) return found;
  }
  return null;
}

const notFound = (ref: string, pos: Position | null) => new ExpressionError(`поле ${ref} не найдено в датасете`, pos);

/** Carries a cycle error out of the type inference of every field on the cycle. */
class CycleSignal extends Error {
  constructor(
    readonly error: ExpressionError,
    readonly cycle: string[],
  ) {
    super(error.message);
  }
}

/**
 * Fields at the end of a chain of references longer than MAX_CHAIN, with their error. Computed without recursion
 * (a schema may hold thousands of fields); a reference back into the current path (a cycle) is left to the analysis.
 */
function tooLongChains(env: FormulaEnv): Map<string, ExpressionError> {
  const refsOf = new Map<string, string[]>();
  for (const [name, def] of env.calculated) {
    let refs: string[] = [];
    try {
      refs = collectReferences(parseExpression(def.formula)).calculated.filter((r) => env.calculated.has(r));
    } catch {
      // A formula that does not parse refers to nothing; the analysis reports it.
    }
    refsOf.set(name, refs);
  }
  const depth = new Map<string, number>();
  const state = new Map<string, 'open' | 'done'>();
  for (const root of refsOf.keys()) {
    if (state.has(root)) continue;
    const path: { name: string; next: number }[] = [{ name: root, next: 0 }];
    state.set(root, 'open');
    while (path.length > 0) {
      const top = path[path.length - 1];
      const refs = refsOf.get(top.name)!;
      if (top.next < refs.length) {
        const ref = refs[top.next++];
        if (!state.has(ref)) {
          state.set(ref, 'open');
          path.push({ name: ref, next: 0 });
        }
        continue;
      }
      let d = 1;
      for (const ref of refs) if (state.get(ref) === 'done') d = Math.max(d, depth.get(ref)! + 1);
      depth.set(top.name, d);
      state.set(top.name, 'done');
      path.pop();
    }
  }
  const errors = new Map<string, ExpressionError>();
  for (const [name, d] of depth) {
    if (d > MAX_CHAIN)
      errors.set(name, new ExpressionError(`цепочка ссылок между вычисляемыми полями длиннее ${MAX_CHAIN}`));
  }
  return errors;
}

/**
 * Checks every calculated field of the environment. A field that refers to a broken field is not reported again
 * (the broken one is): its reference counts as unknown type. Every field on a cycle gets the cycle error.
 */
export function analyzeCalculated(env: FormulaEnv): Map<string, FormulaResult> {
  const done = new Map<string, FormulaResult>();
  for (const [name, error] of tooLongChains(env)) done.set(name, { ok: false, error });

  const analyze = (name: string, stack: string[]): FormulaResult => {
    const cached = done.get(name);
    if (cached) return cached;
    const at = stack.indexOf(name);
    if (at >= 0) {
      const cycle = [...stack.slice(at), name];
      return { ok: false, error: cycleError(cycle), cycle };
    }
    const def = env.calculated.get(name)!;
    const result = check(def.formula, env, (ref) => analyze(ref, [...stack, name]), name);
    done.set(name, result);
    return result;
  };

  for (const name of env.calculated.keys()) analyze(name, []);
  return done;
}

/**
 * One formula against the environment. `resolveCalculated` gives the result of another calculated field; `self` is
 * the name of the field being checked (a reference into a cycle through it is that cycle's error).
 */
function check(
  formula: string,
  env: FormulaEnv,
  resolveCalculated: (name: string) => FormulaResult,
  self: string | null,
): FormulaResult {
  let ast: Expr;
  try {
    ast = parseExpression(formula);
  } catch (e) {
    if (e instanceof ExpressionError) return { ok: false, error: e };
    throw e;
  }
  const calcPos = (ref: string) => positionOf(ast, (e) => e.kind === 'calc_ref' && e.name === ref);
  const resolved = (ref: string) => (env.calculated.has(ref) ? resolveCalculated(ref) : null);
  try {
    const type = inferType(ast, {
      column(table, field) {
        const type = env.columns.get(table)?.get(field);
        if (type !== undefined) return type;
        const pos = positionOf(ast, (e) => e.kind === 'column_ref' && e.table === table && e.field === field);
        throw notFound(columnRefText(table, field), pos);
      },
      calculated(ref) {
        const r = resolved(ref);
        if (r) {
          if (r.ok) return r.type;
          if (self !== null && r.cycle?.includes(self)) {
            throw new CycleSignal(
              r.cycle[0] === self ? new ExpressionError(r.error.detail, calcPos(ref)) : r.error,
              r.cycle,
            );
          }
          return 'unknown';
        }
        const param = env.parameters.get(ref);
        if (param !== undefined) return param;
        throw notFound(calcRefText(ref), calcPos(ref));
      },
    });
    // A referenced measure stands in by its own aggregate call (so SUM of it is reported as nesting, in the words of
    // the expression language), anything else by NULL: each field's formula is walked once, however deep the chain.
    const aggregate = isAggregate(ast, (ref) => {
      const r = resolved(ref);
      return r?.ok && r.measure ? r.measure : NULL;
    });
    const measure = aggregate ? (firstAggregateCall(ast) ?? firstMeasureOfRefs(ast, resolved)) : null;
    // The engine substitutes calculated fields into the query: refuse what would grow beyond reason (A = [B] + [B],
    // B = [C] + [C] ... doubles at every link).
    const size = expandedSize(ast, resolved);
    if (size > MAX_EXPANDED_NODES)
      throw new ExpressionError('выражение с подставленными вычисляемыми полями слишком велико');
    return { ok: true, type, aggregate, ast, measure, size };
  } catch (e) {
    if (e instanceof CycleSignal) return { ok: false, error: e.error, cycle: e.cycle };
    if (e instanceof ExpressionError) return { ok: false, error: e };
    throw e;
  }
}

/** Nodes of the formula once every calculated field is substituted (saturating just above the limit). */
function expandedSize(ast: Expr, resolved: (ref: string) => FormulaResult | null): number {
  if (ast.kind === 'calc_ref') {
    const r = resolved(ast.name);
    return r?.ok ? r.size : 1;
  }
  let n = 1;
  for (const child of children(ast)) n = Math.min(n + expandedSize(child, resolved), MAX_EXPANDED_NODES + 1);
  return n;
}

/** For a formula that aggregates only through referenced measures: the aggregate call of the first of them. */
function firstMeasureOfRefs(ast: Expr, resolved: (ref: string) => FormulaResult | null): Expr | null {
  if (ast.kind === 'calc_ref') {
    const r = resolved(ast.name);
    return r?.ok ? r.measure : null;
  }
  for (const child of children(ast)) {
    const found = firstMeasureOfRefs(child, resolved);
    if (found) return found;
  }
  return null;
}

/**
 * A formula checked as the editor of one field sees it: `self` names the calculated field being edited (its saved
 * formula is replaced by this one, so cycles through it are found), null for a new field.
 */
export function checkFormula(formula: string, env: FormulaEnv, self: string | null = null): FormulaResult {
  if (self !== null) {
    const calculated = new Map(env.calculated).set(self, { name: self, formula });
    return analyzeCalculated({ ...env, calculated }).get(self)!;
  }
  const results = analyzeCalculated(env);
  return check(formula, env, (ref) => results.get(ref)!, null);
}

/** What the formulas of a saved dataset can refer to. */
export function envOfModel(m: Pick<DatasetModel, 'objects' | 'fields' | 'parameters'>): FormulaEnv {
  const objectName = new Map(m.objects.map((o) => [o.id, o.name]));
  const env: FormulaEnv = { columns: new Map(), calculated: new Map(), parameters: new Map() };
  for (const p of m.parameters) env.parameters.set(p.name, p.primitiveType);
  for (const f of m.fields) {
    if (f.kind === 'calculated') {
      if (f.formula !== null) env.calculated.set(f.name, { name: f.name, formula: f.formula });
      continue;
    }
    const object = f.objectId === null ? undefined : objectName.get(f.objectId);
    if (object === undefined) continue;
    if (!env.columns.has(object)) env.columns.set(object, new Map());
    env.columns.get(object)!.set(f.name, f.primitiveType);
  }
  return env;
}
