import { and, asc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasetClsRules } from '../../db/schema/dataset-cls-rules';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject } from '../access/object-access';
import { badRequest, invalid, notFound, type FieldErrors } from '../kernel/errors';
import { loadDatasetModel } from './load-model';
import { checkRuleSubjects, ruleChanged } from './security-rules';

/*
 * Column-level security rules of a dataset (GET/POST /api/dataset/{id}/cls-rules, PUT/DELETE
 * /api/dataset/{id}/cls-rules/{ruleId}): only its owner manages them. Reads apply them in
 * server/access/column-rules.ts; every change takes effect at once (the read epoch moves).
 */

export interface ClsRuleInput {
  field_ids: number[];
  action: 'hide' | 'mask';
  user_ids: number[];
  group_ids: number[];
}

export interface ClsRuleView {
  id: number;
  dataset_id: number;
  field_ids: number[];
  action: 'hide' | 'mask';
  user_ids: number[];
  group_ids: number[];
  created_at: string;
  updated_at: string;
}

type ClsRuleRow = typeof datasetClsRules.$inferSelect;
type ClsRuleValues = Pick<ClsRuleRow, 'fieldIds' | 'action' | 'userIds' | 'groupIds'>;

function view(r: ClsRuleRow): ClsRuleView {
  return {
    id: r.id,
    dataset_id: r.datasetId,
    field_ids: r.fieldIds,
    action: r.action as ClsRuleView['action'],
    user_ids: r.userIds,
    group_ids: r.groupIds,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

const ruleNotFound = (ruleId: number) => notFound(`Правило CLS не найдено (id ${ruleId})`);

function rulesOfDataset(db: DbOrTx, datasetId: number): Promise<ClsRuleRow[]> {
  return db
    .select()
    .from(datasetClsRules)
    .where(eq(datasetClsRules.datasetId, datasetId))
    .orderBy(asc(datasetClsRules.id));
}

export async function listClsRules(deps: AppDeps, actor: Actor, datasetId: number): Promise<{ rules: ClsRuleView[] }> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  return { rules: (await rulesOfDataset(deps.db, datasetId)).map(view) };
}

/** 422 with every problem of the body at once (camelCase paths), nothing saved. */
async function checkedValues(deps: AppDeps, datasetId: number, input: ClsRuleInput): Promise<ClsRuleValues> {
  const errors: FieldErrors = {};
  const model = await loadDatasetModel(deps.db, datasetId);
  if (input.field_ids.length === 0) errors.fieldIds = 'Укажите хотя бы одно поле';
  input.field_ids.forEach((id, i) => {
    if (!model.fields.some((f) => f.id === id)) errors[`fieldIds[${i}]`] = `Поле датасета не найдено (id ${id})`;
  });
  await checkRuleSubjects(deps.db, input, errors);
  if (Object.keys(errors).length) throw invalid(errors);
  return {
    fieldIds: [...new Set(input.field_ids)],
    action: input.action,
    userIds: [...new Set(input.user_ids)],
    groupIds: [...new Set(input.group_ids)],
  };
}

export async function createClsRule(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  input: ClsRuleInput,
): Promise<ClsRuleView> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  const values = await checkedValues(deps, datasetId, input);
  const row = await ruleChanged(deps, datasetId, async (tx) => {
    const [inserted] = await tx
      .insert(datasetClsRules)
      .values({ datasetId, ...values })
      .returning();
    return inserted;
  });
  return view(row);
}

export async function updateClsRule(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  ruleId: number,
  input: ClsRuleInput,
): Promise<ClsRuleView> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  const values = await checkedValues(deps, datasetId, input);
  const row = await ruleChanged(deps, datasetId, async (tx) => {
    const [updated] = await tx
      .update(datasetClsRules)
      .set({ ...values, updatedAt: sql`now()` })
      .where(and(eq(datasetClsRules.id, ruleId), eq(datasetClsRules.datasetId, datasetId)))
      .returning();
    if (!updated) throw ruleNotFound(ruleId);
    return updated;
  });
  return view(row);
}

export async function deleteClsRule(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  ruleId: number,
): Promise<{ id: number; deleted: true }> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  await ruleChanged(deps, datasetId, async (tx) => {
    const gone = await tx
      .delete(datasetClsRules)
      .where(and(eq(datasetClsRules.id, ruleId), eq(datasetClsRules.datasetId, datasetId)))
      .returning({ id: datasetClsRules.id });
    if (gone.length === 0) throw ruleNotFound(ruleId);
  });
  return { id: ruleId, deleted: true };
}

/**
 * Inside a schema save (PUT /api/dataset/{id}/schema): a field a CLS rule names may not be deleted, since dropping
 * the rule with it would silently show what it hides. 400 naming the rule; the owner changes or removes it first.
 */
export async function assertClsFieldsKept(tx: DbOrTx, datasetId: number, keptFieldIds: number[]): Promise<void> {
  const kept = new Set(keptFieldIds);
  const orphaned = (await rulesOfDataset(tx, datasetId)).filter((r) => r.fieldIds.some((id) => !kept.has(id)));
  if (orphaned.length === 0) return;
  const names = orphaned.map(
    (r) => `правило CLS id ${r.id} (поля id ${r.fieldIds.filter((id) => !kept.has(id)).join(', ')})`,
  );
  throw badRequest(`Поле нельзя удалить: его использует ${names.join(', ')}. Сначала удалите или измените правило`);
}
