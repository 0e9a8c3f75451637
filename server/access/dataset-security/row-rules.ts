import { eq } from 'drizzle-orm';
import { userAttributes } from '../../../db/schema/users';
import type { AppDeps } from '../../app/deps';
import type { Actor } from '../../auth/actor';
import { cacheSlot } from '../../kernel/app-caches';
import { READ_DECISION_TTL_MS } from '../../kernel/read-epoch';
import { TtlCache } from '../../kernel/ttl-cache';
import { scopeFor } from '../../query/compile/compile-widget';
import { datasetCondition } from '../../query/compile/conditions';
import type { DatasetFilter, DatasetModel } from '../../query/compile/dataset-model';
import { escapeLiteral, type Dialect, type ParamSink } from '../../query/expr';
import type { LiteralValue } from '../../query/expr/dialect';
import { ruleAppliesTo, rulesForRead, rulesKnownForRead, type RlsRuleRow } from './rule-stores';

/*
 * Row-level security: the rules of a dataset (GET /api/dataset/{id}/rls-rules) as dataset filters for one reader.
 * A rule applies to the users and groups it names, or to everyone (administrators too) when it names none; rows pass
 * only where the field's value is in (or equals the first of) the reader's attribute values. A reader a rule applies
 * to without that attribute (or with an empty list) sees no rows. Several rules combine with AND (they are filters).
 */

/** Rule filters get negative ids so they never meet a saved filter's id in error paths or plan keys. */
const RULE_FILTER_ID_BASE = -1_000_000;

/** A user's attributes (the values rules compare with) by user id and read epoch. */
const attributeCache = cacheSlot(
  'access.userAttributes',
  () => new TtlCache<string, Map<string, string[]>>(READ_DECISION_TTL_MS),
);

// PUT /api/users/{id}/attributes bumps the read epoch.
const attributesKey = (deps: AppDeps, userId: number) => `${userId}:${deps.caches.readEpoch.value}`;

async function attributesOf(deps: AppDeps, userId: number): Promise<Map<string, string[]>> {
  return deps.caches.of(attributeCache).getOrLoad(attributesKey(deps, userId), async () => {
    const rows = await deps.db
      .select({ key: userAttributes.key, values: userAttributes.values })
      .from(userAttributes)
      .where(eq(userAttributes.userId, userId));
    return new Map(rows.map((r) => [r.key, r.values]));
  });
}

const NUMERIC = new Set(['integer', 'float']);

function ruleFilter(rule: RlsRuleRow, model: DatasetModel, values: string[] | undefined): DatasetFilter {
  const field = model.fields.find((f) => f.id === rule.fieldId);
  const valueType = field && NUMERIC.has(field.primitiveType) ? 'number' : 'string';
  const id = RULE_FILTER_ID_BASE - rule.id;
  // Deny by default: no attribute (or an empty one) is an IN over nothing, which the compiler makes always false.
  if (!values || values.length === 0) return { id, fieldId: rule.fieldId, op: 'in', values: [], valueType };
  if (rule.operator === 'eq') return { id, fieldId: rule.fieldId, op: 'eq', values: [values[0]], valueType };
  return { id, fieldId: rule.fieldId, op: 'in', values, valueType };
}

/** The row filters of the dataset for a user (no rule applies: none). */
export async function rowFiltersFor(deps: AppDeps, actor: Actor, model: DatasetModel): Promise<DatasetFilter[]> {
  const rules = (await rulesForRead(deps, 'rls', model)).filter((r) => ruleAppliesTo(r, actor));
  if (rules.length === 0) return [];
  return ruleFilters(rules, model, await attributesOf(deps, actor.userId));
}

/**
 * rowFiltersFor's answer when the dataset's rules and the actor's attributes are cached now (undefined otherwise):
 * the same filters, without waiting on either cache.
 */
export function rowFiltersKnown(deps: AppDeps, actor: Actor, model: DatasetModel): DatasetFilter[] | undefined {
  const all = rulesKnownForRead(deps, 'rls', model);
  if (!all) return undefined;
  const rules = all.filter((r) => ruleAppliesTo(r, actor));
  if (rules.length === 0) return [];
  const attributes = deps.caches.of(attributeCache).get(attributesKey(deps, actor.userId));
  return attributes && ruleFilters(rules, model, attributes);
}

/** The rules that apply to a reader as filters, each with the reader's values of its attribute. */
const ruleFilters = (rules: RlsRuleRow[], model: DatasetModel, attributes: Map<string, string[]>) =>
  rules.map((r) => ruleFilter(r, model, attributes.get(r.attribute)));

/** A plan cache key part that tells apart readers with different row filters (empty when none apply). */
export function rowFiltersKey(filters: DatasetFilter[]): string {
  return filters.length ? JSON.stringify(filters.map((f) => [f.fieldId, f.op, f.values, f.valueType])) : '';
}

/**
 * GET /api/dataset/{id}/effective-security: the row filters as one SQL predicate in the dialect, literals inlined
 * (escaped as the dialect quotes them) so the text reads without its parameters; null when no rule applies.
 */
export function rowFilterSql(model: DatasetModel, filters: DatasetFilter[], dialect: Dialect): string | null {
  if (filters.length === 0) return null;
  const scope = scopeFor(model, undefined).defineFromDataset();
  const inline: ParamSink = { add: (value) => escapeLiteral(dialect, value as LiteralValue) };
  const ctx = scope.compileContext(dialect, inline);
  return filters.map((f) => datasetCondition(f, scope).compile(ctx)).join(' AND ');
}
