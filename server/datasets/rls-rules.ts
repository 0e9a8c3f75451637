import type { DbOrTx } from '../../db/client';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject } from '../access/object-access';
import { rowFiltersForActor, rowFilterSql } from '../access/row-rules';
import { hiddenFieldIdsFor } from '../access/column-rules';
import { actorOfUser } from '../auth/actor';
import { datasetQueryContext } from '../query/run/dataset-context';
import { badRequest, invalid, notFound, type FieldErrors } from '../kernel/errors';
import { scopeFor } from '../query/compile/compile-widget';
import { isAggregate } from '../query/expr/analysis';
import { loadDatasetModel } from './load-model';
import { checkRuleSubjects, ruleChanged } from './security-rules';
import { deleteRule, insertRule, rulesOfDataset, updateRule, type RlsRuleRow, type RlsRuleValues } from './rls-store';

/*
 * Row-level security rules of a dataset (GET/POST /api/dataset/{id}/rls-rules, PUT/DELETE
 * /api/dataset/{id}/rls-rules/{ruleId}): only its owner manages them. Reads apply them in server/access/row-rules.ts.
 */

export interface RlsRuleInput {
  field_id: number;
  attribute: string;
  operator: 'in' | 'eq';
  user_ids: number[];
  group_ids: number[];
}

export interface RlsRuleView {
  id: number;
  dataset_id: number;
  field_id: number;
  attribute: string;
  operator: 'in' | 'eq';
  user_ids: number[];
  group_ids: number[];
  created_at: string;
  updated_at: string;
}

function view(r: RlsRuleRow): RlsRuleView {
  return {
    id: r.id,
    dataset_id: r.datasetId,
    field_id: r.fieldId,
    attribute: r.attribute,
    operator: r.operator as 'in' | 'eq',
    user_ids: r.userIds,
    group_ids: r.groupIds,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

const ruleNotFound = (ruleId: number) => notFound(`Правило RLS не найдено (id ${ruleId})`);

export async function listRlsRules(deps: AppDeps, actor: Actor, datasetId: number): Promise<{ rules: RlsRuleView[] }> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  return { rules: (await rulesOfDataset(deps.db, datasetId)).map(view) };
}

/** 422 with every problem of the body at once (camelCase paths), nothing saved. */
async function checkedValues(deps: AppDeps, datasetId: number, input: RlsRuleInput): Promise<RlsRuleValues> {
  const errors: FieldErrors = {};
  const model = await loadDatasetModel(deps.db, datasetId);
  const field = model.fields.find((f) => f.id === input.field_id);
  if (!field) errors.fieldId = `Поле датасета не найдено (id ${input.field_id})`;
  else if (field.kind === 'calculated') {
    let aggregate = false;
    try {
      aggregate = isAggregate(scopeFor(model, undefined).defineFromDataset().datasetFieldAst(field));
    } catch {
      errors.fieldId = `Поле «${field.title || field.name}» не вычисляется: правило по нему не применить`;
    }
    if (aggregate) errors.fieldId = `Поле «${field.title || field.name}» агрегированное: правило RLS фильтрует строки`;
  }
  const attribute = input.attribute.trim();
  if (!attribute) errors.attribute = 'Укажите атрибут пользователя';
  await checkRuleSubjects(deps.db, input, errors);
  if (Object.keys(errors).length) throw invalid(errors);
  return {
    fieldId: input.field_id,
    attribute,
    operator: input.operator,
    userIds: [...new Set(input.user_ids)],
    groupIds: [...new Set(input.group_ids)],
  };
}

export async function createRlsRule(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  input: RlsRuleInput,
): Promise<RlsRuleView> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  const values = await checkedValues(deps, datasetId, input);
  return view(await ruleChanged(deps, datasetId, (tx) => insertRule(tx, datasetId, values)));
}

export async function updateRlsRule(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  ruleId: number,
  input: RlsRuleInput,
): Promise<RlsRuleView> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  const values = await checkedValues(deps, datasetId, input);
  const row = await ruleChanged(deps, datasetId, async (tx) => {
    const updated = await updateRule(tx, datasetId, ruleId, values);
    if (!updated) throw ruleNotFound(ruleId);
    return updated;
  });
  return view(row);
}

export async function deleteRlsRule(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  ruleId: number,
): Promise<{ id: number; deleted: true }> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  await ruleChanged(deps, datasetId, async (tx) => {
    if (!(await deleteRule(tx, datasetId, ruleId))) throw ruleNotFound(ruleId);
  });
  return { id: ruleId, deleted: true };
}

/**
 * Inside a schema save (PUT /api/dataset/{id}/schema): a field an RLS rule tests may not be deleted, since dropping
 * the rule with it would silently open the rows it hides. 400 naming the rule; the owner removes the rule first.
 */
export async function assertRuleFieldsKept(tx: DbOrTx, datasetId: number, keptFieldIds: number[]): Promise<void> {
  const kept = new Set(keptFieldIds);
  const orphaned = (await rulesOfDataset(tx, datasetId)).filter((r) => !kept.has(r.fieldId));
  if (orphaned.length === 0) return;
  const names = orphaned.map((r) => `правило RLS id ${r.id} (поле id ${r.fieldId}, атрибут «${r.attribute}»)`);
  throw badRequest(`Поле нельзя удалить: его использует ${names.join(', ')}. Сначала удалите или измените правило`);
}

/**
 * GET /api/dataset/{id}/effective-security?userId=: what one user's reads of the dataset get: the row predicate
 * (SQL of the dataset's dialect, literals inlined; null when no rule applies) and the fields hidden from them.
 */
export async function effectiveSecurity(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  userId: number,
): Promise<{ row_filter_sql: string | null; hidden_field_ids: number[] }> {
  const { row } = await ownedObject(deps.db, actor, 'dataset', datasetId);
  const user = await actorOfUser(deps, userId);
  if (!user) throw invalid({ userId: `Пользователь не найден (id ${userId})` });
  const ctx = await datasetQueryContext(deps, row);
  const filters = await rowFiltersForActor(deps, user, ctx.model);
  const [first] = ctx.model.objects;
  const sql = first ? rowFilterSql(ctx.model, filters, ctx.sources.dialectOf(first.dataSourceId)) : null;
  return { row_filter_sql: sql, hidden_field_ids: await hiddenFieldIdsFor(deps, user, ctx.model) };
}
