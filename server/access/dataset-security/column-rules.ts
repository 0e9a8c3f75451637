import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../app/deps';
import type { Actor } from '../../auth/actor';
import { invalid } from '../../kernel/errors';
import { compileWidgetQuery, scopeFor } from '../../query/compile/compile-widget';
import { compilePreviewQuery, type FieldValuesRequest, type PreviewRequest } from '../../query/compile/compile-dataset';
import { at } from '../../query/compile/errors';
import type { DatasetField, DatasetModel } from '../../query/compile/dataset-model';
import type { CompiledQuery, ParameterValues, WidgetQueryInput } from '../../query/compile/types';
import { collectReferences, parseExpression, type Dialect, type Expr } from '../../query/expr';
import { ruleAppliesTo, rulesForRead, rulesKnownForRead, type ClsRuleRow } from './rule-stores';

/*
 * Column-level security. A rule of a dataset hides or masks some of its fields for the users and groups it names
 * (both lists empty = everyone). For one viewer (its actor: the caller, or the user a system administrator views as):
 * - hidden fields do not exist: a request is first compiled against the model with them renamed out of reach (and
 *   without the dataset's own filters), so a shelf, filter, sort, formula or request calculated field naming one
 *   fails with the very error an unknown field gets; the dataset's own calculated fields reading a hidden field
 *   (transitively) are hidden too. The query itself compiles against the whole model, since the dataset's own
 *   relations and filters still use hidden fields (they are the owner's, not the reader's);
 * - masked fields may be shown: every output column whose expression reads a masked field (directly or through
 *   calculated fields) answers the mask for each non-null value. Filtering, sorting or listing the values of such a
 *   column is refused like an unknown field, since each would reveal the values.
 */

const MASK = '***';

const MASKED_FILTER = 'Ошибка в выражении: поле не найдено в датасете';

export interface ColumnRules {
  hidden: Set<number>;
  masked: Set<number>;
}

/** The fields of the dataset its own calculated field reads (by formula or derivation); none when it does not parse. */
function readsOf(model: DatasetModel, f: DatasetField): number[] {
  if (f.kind !== 'calculated') return [];
  if (f.derivation) return [f.derivation.fieldId];
  if (!f.formula) return [];
  let refs: ReturnType<typeof collectReferences>;
  try {
    refs = collectReferences(parseExpression(f.formula));
  } catch {
    return [];
  }
  const params = new Set(model.parameters.map((p) => p.name));
  const out: number[] = [];
  for (const c of refs.columns) {
    const object = model.objects.find((o) => o.name === c.table);
    const g = object && model.fields.find((x) => x.objectId === object.id && x.name === c.field);
    if (g) out.push(g.id);
  }
  for (const name of refs.calculated) {
    if (params.has(name)) continue;
    const g = model.fields.find((x) => x.kind === 'calculated' && x.name === name);
    if (g) out.push(g.id);
  }
  return out;
}

/** `ids` and every calculated field of the dataset that reads one of them, transitively. */
function withDependents(model: DatasetModel, ids: Set<number>): Set<number> {
  const out = new Set([...ids].filter((id) => model.fields.some((f) => f.id === id)));
  for (let grew = true; grew;) {
    grew = false;
    for (const f of model.fields) {
      if (out.has(f.id)) continue;
      if (readsOf(model, f).some((id) => out.has(id))) {
        out.add(f.id);
        grew = true;
      }
    }
  }
  return out;
}

function rulesForActor(model: DatasetModel, rules: ClsRuleRow[], actor: Actor): ColumnRules {
  const direct = { hide: new Set<number>(), mask: new Set<number>() };
  for (const rule of rules)
    if (ruleAppliesTo(rule, actor)) for (const id of rule.fieldIds) direct[rule.action as 'hide' | 'mask'].add(id);
  const hidden = withDependents(model, direct.hide);
  const masked = withDependents(model, direct.mask);
  for (const id of hidden) masked.delete(id);
  return { hidden, masked };
}

/** What columnRulesFor answers when no rule applies to the actor (most reads): shared, never changed. */
const NO_COLUMN_RULES: ColumnRules = Object.freeze({ hidden: new Set<number>(), masked: new Set<number>() });

/** The fields hidden and masked for the actor (calculated fields reading them included), rules as reads cache them. */
export async function columnRulesFor(deps: AppDeps, actor: Actor, model: DatasetModel): Promise<ColumnRules> {
  return columnRulesOf(model, await rulesForRead(deps, 'cls', model), actor);
}

/** columnRulesFor's answer when the dataset's rules are cached now (undefined otherwise), without waiting. */
export function columnRulesKnown(deps: AppDeps, actor: Actor, model: DatasetModel): ColumnRules | undefined {
  const rules = rulesKnownForRead(deps, 'cls', model);
  return rules && columnRulesOf(model, rules, actor);
}

function columnRulesOf(model: DatasetModel, rules: ClsRuleRow[], actor: Actor): ColumnRules {
  // Every widget read comes here: without a rule for the actor there is nothing to walk the model for.
  if (!rules.some((rule) => ruleAppliesTo(rule, actor))) return NO_COLUMN_RULES;
  return rulesForActor(model, rules, actor);
}

/** The fields hidden from the actor by these rules (calculated fields reading them included). */
export function hiddenFieldsOf(model: DatasetModel, rules: ClsRuleRow[], actor: Actor): Set<number> {
  return rulesForActor(model, rules, actor).hidden;
}

/** A cache key part that tells apart viewers with different rules (empty when none apply). */
function columnRulesKey(rules: ColumnRules): string {
  if (rules.hidden.size === 0 && rules.masked.size === 0) return '';
  const ids = (s: Set<number>) => [...s].sort((a, b) => a - b).join(',');
  return `h${ids(rules.hidden)}m${ids(rules.masked)}`;
}

/**
 * A name no request can write (it changes with every process): hidden fields keep their id and column for the
 * dataset's own relations and filters, but no expression of a request can reach them by name.
 */
const UNREACHABLE = `\u0000hidden ${randomUUID()} `;

/** The model compiled for the viewer: hidden fields left out of default columns (they keep their names for the
 * dataset's own relations, filters and formulas; no request reaches them, see validationModel). */
function compiledModel(model: DatasetModel, rules: ColumnRules): DatasetModel {
  if (rules.hidden.size === 0) return model;
  return { ...model, fields: model.fields.map((f) => (rules.hidden.has(f.id) ? { ...f, hidden: true } : f)) };
}

/**
 * The model a request is first compiled against, to be refused exactly as for fields the dataset lacks: hidden fields
 * renamed out of reach, and without the dataset's own filters (which may read hidden fields and are not the
 * request's to check).
 */
function validationModel(model: DatasetModel, hidden: Set<number>): DatasetModel {
  return {
    ...model,
    filters: [],
    fields: model.fields.map((f) => (hidden.has(f.id) ? { ...f, name: `${UNREACHABLE}${f.id}`, hidden: true } : f)),
  };
}

/** Preview and field values name fields by id: a hidden id is refused exactly like an id the dataset lacks. */
function assertFieldIdsVisible(
  model: DatasetModel,
  rules: ColumnRules,
  ids: number[],
  pathOf: (i: number) => string,
): void {
  const errors: Record<string, string> = {};
  ids.forEach((id, i) => {
    if (rules.hidden.has(id) || !model.fields.some((f) => f.id === id))
      errors[pathOf(i)] = `Поле датасета не найдено (id ${id})`;
  });
  if (Object.keys(errors).length) throw invalid(errors);
}

/** Field values list a field's values: a masked one is refused like a field the dataset lacks. */
function assertNotMasked(rules: ColumnRules, id: number, path: string): void {
  if (rules.masked.has(id)) throw invalid({ [path]: `Поле датасета не найдено (id ${id})` });
}

/** Which physical field of the model a [table.field] names, if any. */
function physicalField(model: DatasetModel, table: string, field: string): DatasetField | undefined {
  const object = model.objects.find((o) => o.name === table);
  return object && model.fields.find((f) => f.kind === 'physical' && f.objectId === object.id && f.name === field);
}

/**
 * The first masked [table.field] an expression of a widget request reads, through the request's calculated fields
 * (the first definition of a name wins, as in the compiler); undefined when it reads none.
 */
function maskedColumnOf(
  model: DatasetModel,
  rules: ColumnRules,
  e: Expr,
  defs: Map<string, string>,
  seen: string[] = [],
): string | undefined {
  const refs = collectReferences(e);
  for (const c of refs.columns) {
    const f = physicalField(model, c.table, c.field);
    if (f && rules.masked.has(f.id)) return `[${c.table}.${c.field}]`;
  }
  for (const name of refs.calculated) {
    if (seen.includes(name)) continue;
    const text = defs.get(name);
    if (text === undefined) {
      const own = model.fields.find((f) => f.kind === 'calculated' && f.name === name);
      if (own && rules.masked.has(own.id)) return `[${name}]`;
      continue;
    }
    let ast: Expr;
    try {
      ast = parseExpression(text);
    } catch {
      continue;
    }
    const found = maskedColumnOf(model, rules, ast, defs, [...seen, name]);
    if (found) return found;
  }
  return undefined;
}

function shelfExpr(f: { sql?: string; field?: string; table?: string }): Expr | undefined {
  try {
    if (f.sql !== undefined && f.sql.trim() !== '') return parseExpression(f.sql);
  } catch {
    return undefined; // the compiler reports it
  }
  if (f.field && f.field.trim() !== '')
    return f.table ? { kind: 'column_ref', table: f.table, field: f.field } : { kind: 'calc_ref', name: f.field };
  return undefined;
}

/**
 * The output keys of a widget request that read a masked field. Filters and sorts over masked fields are refused
 * with the errors an unknown field or sort id gets (a filter or an order would reveal the values).
 */
function maskedWidgetKeys(model: DatasetModel, rules: ColumnRules, input: WidgetQueryInput): Set<string> {
  const keys = new Set<string>();
  if (rules.masked.size === 0) return keys;
  const defs = new Map<string, string>();
  for (const { def } of input.calculatedFields) if (!defs.has(def.name)) defs.set(def.name, def.sql);
  for (const f of [...input.rows, ...input.series, ...input.columns]) {
    const e = shelfExpr(f);
    if (e && maskedColumnOf(model, rules, e, defs)) keys.add(f.id);
  }
  const filters = input.filters.filter(({ filter }) => readsMasked(model, rules, filter.sql, defs));
  if (filters.length) {
    const scope = scopeFor(strictModel(model, rules), input.parameters).defineFromRequest(input.calculatedFields);
    for (const { path, filter } of filters) {
      at(`${path}.sql`, () => scope.typeOf(parseExpression(filter.sql)));
      throw invalid({ [`${path}.sql`]: MASKED_FILTER });
    }
  }
  const errors: Record<string, string> = {};
  input.sorts.forEach((s, i) => {
    if (keys.has(s.field_id)) errors[`sorts[${i}].fieldId`] = `Поле с id ${s.field_id} не найдено на полках виджета`;
  });
  if (Object.keys(errors).length) throw invalid(errors);
  return keys;
}

/** Preview filters (expressions over the dataset): one reading a masked field is refused like an unknown field. */
function assertFiltersUnmasked(
  model: DatasetModel,
  rules: ColumnRules,
  filters: { sql: string }[],
  parameters: ParameterValues | undefined,
): void {
  if (rules.masked.size === 0) return;
  const scope = scopeFor(strictModel(model, rules), parameters).defineFromDataset();
  filters.forEach((f, i) => {
    if (!readsMasked(model, rules, f.sql, new Map())) return;
    at(`filters[${i}].sql`, () => scope.typeOf(parseExpression(f.sql)));
    throw invalid({ [`filters[${i}].sql`]: MASKED_FILTER });
  });
}

function readsMasked(model: DatasetModel, rules: ColumnRules, text: string, defs: Map<string, string>): boolean {
  try {
    return maskedColumnOf(model, rules, parseExpression(text), defs) !== undefined;
  } catch {
    return false; // the compiler reports it
  }
}

/**
 * The model with masked fields hidden as well: a filter over a masked field type-checks against it, so that its
 * refusal is exactly the compiler's error for an unknown field. Should it pass (it cannot), the filter is still
 * refused.
 */
function strictModel(model: DatasetModel, rules: ColumnRules): DatasetModel {
  return validationModel(model, new Set([...rules.hidden, ...rules.masked]));
}

/** Rows with the mask in place of every non-null value of the given output columns (new arrays: results are cached). */
function maskRows(columns: { key: string }[], rows: unknown[][], masked: Set<string>): unknown[][] {
  const at = columns.map((c, i) => (masked.has(c.key) ? i : -1)).filter((i) => i >= 0);
  if (at.length === 0) return rows;
  return rows.map((r) => {
    const out = [...r];
    for (const i of at) if (out[i] !== null && out[i] !== undefined) out[i] = MASK;
    return out;
  });
}

/** What the one data entry point reads (server/query/read.ts), as far as column rules look at it. */
export type GuardedRequest =
  | { kind: 'widget'; query: WidgetQueryInput }
  | ({ kind: 'preview' } & PreviewRequest)
  | ({ kind: 'field-values' } & FieldValuesRequest);

export interface ColumnGuard {
  /** The model the compiler is handed: hidden fields out of reach. */
  model: DatasetModel;
  /** Tells apart plans compiled for viewers with different rules. */
  key: string;
  /** Refuses a request naming a hidden field exactly as one naming a field the dataset lacks (before compiling). */
  validate(dialectOf: (dataSourceId: number) => Dialect): void;
  /** The result rows with masked output columns masked. */
  mask(query: CompiledQuery, rows: unknown[][]): unknown[][];
}

/** The actor's column rules applied to one read: refusals first, then the model to compile and the mask. */
export function columnGuard(model: DatasetModel, rules: ColumnRules, request: GuardedRequest): ColumnGuard {
  const visible = compiledModel(model, rules);
  let maskedKeys = new Set<string>();
  switch (request.kind) {
    case 'widget':
      maskedKeys = maskedWidgetKeys(model, rules, request.query);
      break;
    case 'preview': {
      if (request.fieldIds?.length) assertFieldIdsVisible(model, rules, request.fieldIds, (i) => `fieldIds[${i}]`);
      assertFiltersUnmasked(model, rules, request.filters ?? [], request.parameters);
      maskedKeys = new Set([...rules.masked].map(String));
      break;
    }
    case 'field-values':
      assertFieldIdsVisible(model, rules, [request.fieldId], () => 'fieldId');
      assertNotMasked(rules, request.fieldId, 'fieldId');
      break;
  }
  return {
    model: visible,
    key: columnRulesKey(rules),
    validate: (dialectOf) => {
      if (rules.hidden.size === 0) return;
      const checked = validationModel(model, rules.hidden);
      if (request.kind === 'widget') compileWidgetQuery(checked, request.query, dialectOf);
      else if (request.kind === 'preview') compilePreviewQuery(checked, request, dialectOf);
    },
    mask: (query, rows) => maskRows(query.columns, rows, maskedKeys),
  };
}
