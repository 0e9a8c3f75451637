import { and, asc, eq, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../../db/client';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../../db/schema/dataset-rls-rules';
import type { AppDeps } from '../../app/deps';
import { cacheSlot } from '../../kernel/app-caches';
import { READ_DECISION_TTL_MS } from '../../kernel/read-epoch';
import { TtlCache } from '../../kernel/ttl-cache';
import { COPY_MAP } from '../../objects/copy-map';

/*
 * The stores of a dataset's security rules, one per rule kind: row-level (dataset_rls_rules) and column-level
 * (dataset_cls_rules). Both kinds have the same life (listed, written and deleted per dataset, applied to the users and
 * groups they name), so one store shape serves both; reads take them through `rulesForRead`, cached per dataset
 * version and read epoch (every rule change bumps the epoch, so a change takes effect at once in this process).
 */

export type RlsRuleRow = typeof datasetRlsRules.$inferSelect;
export type ClsRuleRow = typeof datasetClsRules.$inferSelect;

/** Whom a rule of either kind applies to: the users and groups it names, everyone when it names none. */
export interface RuleSubjects {
  userIds: number[];
  groupIds: number[];
}

export type RlsRuleValues = Pick<RlsRuleRow, 'fieldId' | 'attribute' | 'operator' | 'userIds' | 'groupIds'>;
export type ClsRuleValues = Pick<ClsRuleRow, 'fieldIds' | 'action' | 'userIds' | 'groupIds'>;

type RuleTable = typeof datasetRlsRules | typeof datasetClsRules;

/** The writes and reads of one rule kind's table: transaction first, no access checks (the services decide). */
export interface RuleStore<Row, Values> {
  list(db: DbOrTx, datasetId: number): Promise<Row[]>;
  insert(db: DbOrTx, datasetId: number, values: Values): Promise<Row>;
  /** Undefined when the dataset has no such rule. */
  update(db: DbOrTx, datasetId: number, ruleId: number, values: Values): Promise<Row | undefined>;
  /** False when the dataset has no such rule. */
  delete(db: DbOrTx, datasetId: number, ruleId: number): Promise<boolean>;
}

function ruleStore<Row, Values>(table: RuleTable): RuleStore<Row, Values> {
  // drizzle cannot type one statement over either of two tables: the two tables share the columns used here, and
  // each kind's Row and Values are fixed by the exported stores below.
  const t = table as typeof datasetRlsRules;
  return {
    list: (db, datasetId) =>
      db.select().from(t).where(eq(t.datasetId, datasetId)).orderBy(asc(t.id)) as unknown as Promise<Row[]>,
    insert: async (db, datasetId, values) => {
      const [row] = await db
        .insert(t)
        .values({ datasetId, ...(values as object) } as typeof t.$inferInsert)
        .returning();
      return row as unknown as Row;
    },
    update: async (db, datasetId, ruleId, values) => {
      const [row] = await db
        .update(t)
        .set({ ...(values as object), updatedAt: sql`now()` })
        .where(and(eq(t.id, ruleId), eq(t.datasetId, datasetId)))
        .returning();
      return row as unknown as Row | undefined;
    },
    delete: async (db, datasetId, ruleId) => {
      const gone = await db
        .delete(t)
        .where(and(eq(t.id, ruleId), eq(t.datasetId, datasetId)))
        .returning({ id: t.id });
      return gone.length > 0;
    },
  };
}

export const rlsRules = ruleStore<RlsRuleRow, RlsRuleValues>(datasetRlsRules);
export const clsRules = ruleStore<ClsRuleRow, ClsRuleValues>(datasetClsRules);

const caches = {
  rls: cacheSlot('access.rowRules', () => new TtlCache<string, RlsRuleRow[]>(READ_DECISION_TTL_MS)),
  cls: cacheSlot('access.columnRules', () => new TtlCache<string, ClsRuleRow[]>(READ_DECISION_TTL_MS)),
};

/** A dataset's rules of one kind as reads apply them: cached by dataset version and read epoch. */
export function rulesForRead(
  deps: AppDeps,
  kind: 'rls',
  dataset: { id: number; version: number },
): Promise<RlsRuleRow[]>;
export function rulesForRead(
  deps: AppDeps,
  kind: 'cls',
  dataset: { id: number; version: number },
): Promise<ClsRuleRow[]>;
export function rulesForRead(
  deps: AppDeps,
  kind: 'rls' | 'cls',
  dataset: { id: number; version: number },
): Promise<RlsRuleRow[] | ClsRuleRow[]> {
  const key = rulesKey(deps, dataset);
  if (kind === 'rls') return deps.caches.of(caches.rls).getOrLoad(key, () => rlsRules.list(deps.db, dataset.id));
  return deps.caches.of(caches.cls).getOrLoad(key, () => clsRules.list(deps.db, dataset.id));
}

/** rulesForRead's answer when the cache holds it now (undefined otherwise): the same rules, without waiting. */
export function rulesKnownForRead(
  deps: AppDeps,
  kind: 'rls',
  dataset: { id: number; version: number },
): RlsRuleRow[] | undefined;
export function rulesKnownForRead(
  deps: AppDeps,
  kind: 'cls',
  dataset: { id: number; version: number },
): ClsRuleRow[] | undefined;
export function rulesKnownForRead(
  deps: AppDeps,
  kind: 'rls' | 'cls',
  dataset: { id: number; version: number },
): RlsRuleRow[] | ClsRuleRow[] | undefined {
  const key = rulesKey(deps, dataset);
  return kind === 'rls' ? deps.caches.of(caches.rls).get(key) : deps.caches.of(caches.cls).get(key);
}

/** The rules' cache key: the dataset's version and the read epoch (a rule's save bumps one, a grant the other). */
const rulesKey = (deps: AppDeps, dataset: { id: number; version: number }) =>
  `${dataset.id}:${dataset.version}:${deps.caches.readEpoch.value}`;

/** Whether a rule of either kind applies to the actor: it names them or one of their groups, or names nobody. */
export function ruleAppliesTo(rule: RuleSubjects, actor: { userId: number; groupIds: number[] }): boolean {
  if (rule.userIds.length === 0 && rule.groupIds.length === 0) return true;
  return rule.userIds.includes(actor.userId) || rule.groupIds.some((g) => actor.groupIds.includes(g));
}

/*
 * The security rules' part of a dataset copy (copyDatasets in server/datasets/store.ts): the row- and column-level
 * rules of every copied dataset travel with it, on the copied fields, so that a copy never shows what the original hides (fail closed; the users and
 * groups they name are global). An updated copy's rules are replaced by the original's. One statement per rule kind
 * whatever the count; it runs after the copies' fields are written (a row rule refers to its field by a foreign key)
 * and before the fields an updated copy lost are deleted (its old rules, which may name them, are gone by then).
 */

const COPIED = sql`ds as (select old_id, new_id from ${COPY_MAP} where kind = 'dataset'),
  gone_of as (select new_id as id from ${COPY_MAP} where kind = 'dataset' and not created)`;

export async function copyDatasetRules(tx: Tx): Promise<void> {
  await tx.execute(sql`with ${COPIED},
      gone as (delete from dataset_rls_rules where dataset_id in (select id from gone_of))
    insert into dataset_rls_rules (dataset_id, field_id, attribute, operator, user_ids, group_ids)
    select ds.new_id, coalesce(fm.new_id, r.field_id), r.attribute, r.operator, r.user_ids, r.group_ids
    from dataset_rls_rules r join ds on ds.old_id = r.dataset_id
    left join ${COPY_MAP} fm on fm.kind = 'dataset_field' and fm.old_id = r.field_id`);
  // Field ids remapped in one set-based join (hashed once), not a subquery per rule.
  await tx.execute(sql`with ${COPIED},
      gone as (delete from dataset_cls_rules where dataset_id in (select id from gone_of)),
      named as (
        select c.id, array_agg(coalesce(fm.new_id, u.f) order by u.n) as ids
        from dataset_cls_rules c join ds on ds.old_id = c.dataset_id
        cross join lateral unnest(c.field_ids) with ordinality u(f, n)
        left join ${COPY_MAP} fm on fm.kind = 'dataset_field' and fm.old_id = u.f
        group by c.id)
    insert into dataset_cls_rules (dataset_id, field_ids, action, user_ids, group_ids)
    select ds.new_id, coalesce(named.ids, '{}'::int[]), c.action, c.user_ids, c.group_ids
    from dataset_cls_rules c join ds on ds.old_id = c.dataset_id left join named on named.id = c.id`);
}
