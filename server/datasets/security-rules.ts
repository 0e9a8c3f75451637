import { eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasets } from '../../db/schema/datasets';
import { groups } from '../../db/schema/groups';
import { users } from '../../db/schema/users';
import type { AppDeps } from '../app/deps';
import type { FieldErrors } from '../kernel/errors';
import { readCachesChanged } from '../kernel/read-epoch';

/*
 * What row- and column-level security rules (rls-rules.ts, cls-rules.ts) share: whom a rule names, and what every
 * change of a rule does to its dataset.
 */

/** Which of `ids` exist, for users or groups. */
async function existingIds(db: DbOrTx, kind: 'users' | 'groups', ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const table = kind === 'users' ? users : groups;
  const rows = await db.select({ id: table.id }).from(table).where(inArray(table.id, ids));
  return new Set(rows.map((r) => r.id));
}

/** Adds a 422 entry (`userIds[i]`, `groupIds[i]`) for every user or group the rule names that does not exist. */
export async function checkRuleSubjects(
  db: DbOrTx,
  input: { user_ids: number[]; group_ids: number[] },
  errors: FieldErrors,
): Promise<void> {
  const [knownUsers, knownGroups] = await Promise.all([
    existingIds(db, 'users', input.user_ids),
    existingIds(db, 'groups', input.group_ids),
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
export async function ruleChanged<T>(deps: AppDeps, datasetId: number, write: (tx: DbOrTx) => Promise<T>): Promise<T> {
  const out = await deps.db.transaction(async (tx) => {
    const result = await write(tx);
    await tx
      .update(datasets)
      .set({ updatedAt: sql`now()` })
      .where(eq(datasets.id, datasetId));
    return result;
  });
  readCachesChanged(deps);
  return out;
}
