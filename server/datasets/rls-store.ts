import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasetRlsRules, datasets, groups, users } from '../../db/schema';

export type RlsRuleRow = typeof datasetRlsRules.$inferSelect;

export interface RlsRuleValues {
  fieldId: number;
  attribute: string;
  operator: 'in' | 'eq';
  userIds: number[];
  groupIds: number[];
}

export function rulesOfDataset(db: DbOrTx, datasetId: number): Promise<RlsRuleRow[]> {
  return db
    .select()
    .from(datasetRlsRules)
    .where(eq(datasetRlsRules.datasetId, datasetId))
    .orderBy(asc(datasetRlsRules.id));
}

export async function insertRule(db: DbOrTx, datasetId: number, values: RlsRuleValues): Promise<RlsRuleRow> {
  const [row] = await db
    .insert(datasetRlsRules)
    .values({ datasetId, ...values })
    .returning();
  return row!;
}

export async function updateRule(
  db: DbOrTx,
  datasetId: number,
  ruleId: number,
  values: RlsRuleValues,
): Promise<RlsRuleRow | undefined> {
  const [row] = await db
    .update(datasetRlsRules)
    .set({ ...values, updatedAt: sql`now()` })
    .where(and(eq(datasetRlsRules.id, ruleId), eq(datasetRlsRules.datasetId, datasetId)))
    .returning();
  return row;
}

export async function deleteRule(db: DbOrTx, datasetId: number, ruleId: number): Promise<boolean> {
  const rows = await db
    .delete(datasetRlsRules)
    .where(and(eq(datasetRlsRules.id, ruleId), eq(datasetRlsRules.datasetId, datasetId)))
    .returning({ id: datasetRlsRules.id });
  return rows.length > 0;
}

/** A rule change is a change of the dataset: its edit time moves (pipelines compare by it). */
export async function touchDatasetOfRules(db: DbOrTx, datasetId: number): Promise<void> {
  await db
    .update(datasets)
    .set({ updatedAt: sql`now()` })
    .where(eq(datasets.id, datasetId));
}

/** Which of `ids` exist, for users or groups. */
export async function existingIds(db: DbOrTx, kind: 'users' | 'groups', ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const table = kind === 'users' ? users : groups;
  const rows = await db.select({ id: table.id }).from(table).where(inArray(table.id, ids));
  return new Set(rows.map((r) => r.id));
}
