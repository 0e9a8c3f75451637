import { and, asc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../../db/schema/dataset-rls-rules';
import type { AppDeps } from '../../app/deps';
import { cacheSlot } from '../../kernel/app-caches';
import { READ_DECISION_TTL_MS } from '../../kernel/read-epoch';
import { TtlCache } from '../../kernel/ttl-cache';

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
  const key = `${dataset.id}:${dataset.version}:${deps.caches.readEpoch.value}`;
  if (kind === 'rls') return deps.caches.of(caches.rls).getOrLoad(key, () => rlsRules.list(deps.db, dataset.id));
  return deps.caches.of(caches.cls).getOrLoad(key, () => clsRules.list(deps.db, dataset.id));
}

/** Whether a rule of either kind applies to the actor: it names them or one of their groups, or names nobody. */
export function ruleAppliesTo(rule: RuleSubjects, actor: { userId: number; groupIds: number[] }): boolean {
  if (rule.userIds.length === 0 && rule.groupIds.length === 0) return true;
  return rule.userIds.includes(actor.userId) || rule.groupIds.some((g) => actor.groupIds.includes(g));
}
