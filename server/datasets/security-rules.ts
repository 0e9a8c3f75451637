import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasets } from '../../db/schema/datasets';
import type { Actor } from '../auth/actor';
import { actorOfUser } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject } from '../access/object-access';
import { effectiveSecurity as effectiveSecurityOf } from '../access/dataset-security/secured';
import {
  clsRules,
  rlsRules,
  type ClsRuleRow,
  type ClsRuleValues,
  type RlsRuleRow,
  type RlsRuleValues,
  type RuleStore,
} from '../access/dataset-security/rule-stores';
import { existingGroupIds } from '../groups/store';
import { existingUserIds } from '../users/store';
import { badRequest, invalid, notFound, type FieldErrors } from '../kernel/errors';
import { readCachesChanged } from '../kernel/read-epoch';
import type { DatasetModel } from '../query/compile/dataset-model';
import { scopeFor } from '../query/compile/compile-widget';
import { isAggregate } from '../query/expr/analysis';
import { datasetQueryContext } from '../query/run/dataset-context';
import { loadDatasetModel } from './load-model';
import { recordRevisions } from '../revisions/store';

/*
 * The security rules of a dataset, managed by its owner only: row-level (GET/POST /api/dataset/{id}/rls-rules,
 * PUT/DELETE /api/dataset/{id}/rls-rules/{ruleId}) and column-level (the same under /cls-rules). Both kinds live the
 * same way (one service shape below, one store per kind in server/access/dataset-security/rule-stores.ts); they differ
 * in what a rule says and how it is checked. Reads apply them in server/access/dataset-security; every change takes
 * effect at once (the read epoch moves).
 */

export interface RlsRuleInput {
  field_id: number;
  attribute: string;
  operator: 'in' | 'eq';
  user_ids: number[];
  group_ids: number[];
}

export interface ClsRuleInput {
  field_ids: number[];
  action: 'hide' | 'mask';
  user_ids: number[];
  group_ids: number[];
}

interface RuleTimes {
  id: number;
  dataset_id: number;
  user_ids: number[];
  group_ids: number[];
  created_at: string;
  updated_at: string;
}

export type RlsRuleView = RuleTimes & { field_id: number; attribute: string; operator: 'in' | 'eq' };
export type ClsRuleView = RuleTimes & { field_ids: number[]; action: 'hide' | 'mask' };

/** What makes one rule kind: its store, how its body is checked and shown, and which fields a rule holds on to. */
interface RuleKind<Input extends { user_ids: number[]; group_ids: number[] }, Row, Values, View> {
  label: 'RLS' | 'CLS';
  store: RuleStore<Row, Values>;
  /** The kind's own checks of the body (subjects are checked for both), adding 422 entries. */
  values(model: DatasetModel, input: Input, errors: FieldErrors): Values;
  view(row: Row): View;
  /** The fields the rule names: none of them may be deleted while it exists. */
  fieldIds(row: Row): number[];
  /** How a 400 names the rule that holds on to `gone` fields. */
  describe(row: Row & { id: number }, gone: number[]): string;
}

const times = (r: {
  id: number;
  datasetId: number;
  userIds: number[];
  groupIds: number[];
  createdAt: Date;
  updatedAt: Date;
}) => ({
  id: r.id,
  dataset_id: r.datasetId,
  user_ids: r.userIds,
  group_ids: r.groupIds,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
});

const distinct = (ids: number[]) => [...new Set(ids)];

const RLS: RuleKind<RlsRuleInput, RlsRuleRow, RlsRuleValues, RlsRuleView> = {
  label: 'RLS',
  store: rlsRules,
  values(model, input, errors) {
    const field = model.fields.find((f) => f.id === input.field_id);
    if (!field) errors.fieldId = `Поле датасета не найдено (id ${input.field_id})`;
    else if (field.kind === 'calculated') {
      let aggregate = false;
      try {
        aggregate = isAggregate(scopeFor(model, undefined).defineFromDataset().datasetFieldAst(field));
      } catch {
        errors.fieldId = `Поле «${field.title || field.name}» не вычисляется: правило по нему не применить`;
      }
      if (aggregate)
        errors.fieldId = `Поле «${field.title || field.name}» агрегированное: правило RLS фильтрует строки`;
    }
    const attribute = input.attribute.trim();
    if (!attribute) errors.attribute = 'Укажите атрибут пользователя';
    return {
      fieldId: input.field_id,
      attribute,
      operator: input.operator,
      userIds: distinct(input.user_ids),
      groupIds: distinct(input.group_ids),
    };
  },
  view: (r) => ({
    ...times(r),
    field_id: r.fieldId,
    attribute: r.attribute,
    operator: r.operator as 'in' | 'eq',
  }),
  fieldIds: (r) => [r.fieldId],
  describe: (r) => `правило RLS id ${r.id} (поле id ${r.fieldId}, атрибут «${r.attribute}»)`,
};

const CLS: RuleKind<ClsRuleInput, ClsRuleRow, ClsRuleValues, ClsRuleView> = {
  label: 'CLS',
  store: clsRules,
  values(model, input, errors) {
    if (input.field_ids.length === 0) errors.fieldIds = 'Укажите хотя бы одно поле';
    input.field_ids.forEach((id, i) => {
      if (!model.fields.some((f) => f.id === id)) errors[`fieldIds[${i}]`] = `Поле датасета не найдено (id ${id})`;
    });
    return {
      fieldIds: distinct(input.field_ids),
      action: input.action,
      userIds: distinct(input.user_ids),
      groupIds: distinct(input.group_ids),
    };
  },
  view: (r) => ({ ...times(r), field_ids: r.fieldIds, action: r.action as 'hide' | 'mask' }),
  fieldIds: (r) => r.fieldIds,
  describe: (r, gone) => `правило CLS id ${r.id} (поля id ${gone.join(', ')})`,
};

/** Adds a 422 entry (`userIds[i]`, `groupIds[i]`) for every user or group the rule names that does not exist. */
async function checkSubjects(db: DbOrTx, input: { user_ids: number[]; group_ids: number[] }, errors: FieldErrors) {
  const [knownUsers, knownGroups] = await Promise.all([
    existingUserIds(db, input.user_ids),
    existingGroupIds(db, input.group_ids),
  ]);
  input.user_ids.forEach((id, i) => {
    if (!knownUsers.has(id)) errors[`userIds[${i}]`] = `Пользователь не найден (id ${id})`;
  });
  input.group_ids.forEach((id, i) => {
    if (!knownGroups.has(id)) errors[`groupIds[${i}]`] = `Группа не найдена (id ${id})`;
  });
}

/**
 * A rule change is a change of the dataset: in one transaction with the write its edit time moves (pipelines compare
 * by it), and after the commit cached read decisions (the rules) go at once.
 */
async function ruleChanged<T>(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  write: (tx: DbOrTx) => Promise<T>,
): Promise<T> {
  const out = await deps.db.transaction(async (tx) => {
    const result = await write(tx);
    await tx
      .update(datasets)
      .set({ updatedAt: sql`now()` })
      .where(eq(datasets.id, datasetId));
    // The rules are part of the dataset's definition (a deploy carries them): a revision of the dataset.
    await recordRevisions(tx, 'dataset', [datasetId], 'saved', actor.userId);
    return result;
  });
  readCachesChanged(deps);
  return out;
}

/** The four operations of one rule kind, each checked for the dataset's owner first. */
function ruleService<Input extends { user_ids: number[]; group_ids: number[] }, Row, Values, View>(
  kind: RuleKind<Input, Row, Values, View>,
) {
  const ruleNotFound = (ruleId: number) => notFound(`Правило ${kind.label} не найдено (id ${ruleId})`);
  /** 422 with every problem of the body at once (camelCase paths), nothing saved. */
  const checked = async (deps: AppDeps, datasetId: number, input: Input): Promise<Values> => {
    const errors: FieldErrors = {};
    const values = kind.values(await loadDatasetModel(deps.db, datasetId), input, errors);
    await checkSubjects(deps.db, input, errors);
    if (Object.keys(errors).length) throw invalid(errors);
    return values;
  };
  return {
    async list(deps: AppDeps, actor: Actor, datasetId: number): Promise<{ rules: View[] }> {
      await ownedObject(deps.db, actor, 'dataset', datasetId);
      return { rules: (await kind.store.list(deps.db, datasetId)).map(kind.view) };
    },
    async create(deps: AppDeps, actor: Actor, datasetId: number, input: Input): Promise<View> {
      await ownedObject(deps.db, actor, 'dataset', datasetId);
      const values = await checked(deps, datasetId, input);
      return kind.view(await ruleChanged(deps, actor, datasetId, (tx) => kind.store.insert(tx, datasetId, values)));
    },
    async update(deps: AppDeps, actor: Actor, datasetId: number, ruleId: number, input: Input): Promise<View> {
      await ownedObject(deps.db, actor, 'dataset', datasetId);
      const values = await checked(deps, datasetId, input);
      const row = await ruleChanged(deps, actor, datasetId, async (tx) => {
        const updated = await kind.store.update(tx, datasetId, ruleId, values);
        if (!updated) throw ruleNotFound(ruleId);
        return updated;
      });
      return kind.view(row);
    },
    async delete(
      deps: AppDeps,
      actor: Actor,
      datasetId: number,
      ruleId: number,
    ): Promise<{ id: number; deleted: true }> {
      await ownedObject(deps.db, actor, 'dataset', datasetId);
      await ruleChanged(deps, actor, datasetId, async (tx) => {
        if (!(await kind.store.delete(tx, datasetId, ruleId))) throw ruleNotFound(ruleId);
      });
      return { id: ruleId, deleted: true };
    },
  };
}

const rls = ruleService(RLS);
const cls = ruleService(CLS);
export const listRlsRules = rls.list;
export const createRlsRule = rls.create;
export const updateRlsRule = rls.update;
export const deleteRlsRule = rls.delete;
export const listClsRules = cls.list;
export const createClsRule = cls.create;
export const updateClsRule = cls.update;
export const deleteClsRule = cls.delete;

/** The fields of one kind's rules that are not in `kept`, with the rules naming them. */
async function rulesLosing<Row extends { id: number }>(
  tx: DbOrTx,
  kind: RuleKind<never, Row, unknown, unknown>,
  datasetId: number,
  kept: Set<number>,
): Promise<string[]> {
  const out: string[] = [];
  for (const r of await kind.store.list(tx, datasetId)) {
    const gone = kind.fieldIds(r).filter((id) => !kept.has(id));
    if (gone.length) out.push(kind.describe(r, gone));
  }
  return out;
}

/**
 * Inside a schema save (PUT /api/dataset/{id}/schema): a field a rule names may not be deleted, since dropping the
 * rule with it would silently open the rows or show the field it hides. 400 naming the rules; the owner changes or
 * removes them first.
 */
export async function assertRuleFieldsKept(tx: DbOrTx, datasetId: number, keptFieldIds: number[]): Promise<void> {
  const kept = new Set(keptFieldIds);
  const names = [
    ...(await rulesLosing(tx, RLS as RuleKind<never, RlsRuleRow, unknown, unknown>, datasetId, kept)),
    ...(await rulesLosing(tx, CLS as RuleKind<never, ClsRuleRow, unknown, unknown>, datasetId, kept)),
  ];
  if (names.length === 0) return;
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
  const [first] = ctx.model.objects;
  return effectiveSecurityOf(deps, user, ctx.model, first ? ctx.sources.dialectOf(first.dataSourceId) : undefined);
}
