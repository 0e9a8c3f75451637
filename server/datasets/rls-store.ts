import { and, asc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasetRlsRules } from '../../db/schema/dataset-rls-rules';

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
