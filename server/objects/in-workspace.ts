import { getTableName, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { ints } from './copy-map';
import { OBJECT_KINDS, type ObjectKindName } from './kinds';

export type IdsByKind = Record<ObjectKindName, number[]>;

const KINDS = Object.keys(OBJECT_KINDS) as ObjectKindName[];

/**
 * The objects of a workspace by kind, in one statement: all of them, or only those of `among` that are in it (an id
 * of another workspace or of no object is left out).
 */
export async function objectsInWorkspace(
  tx: DbOrTx,
  workspaceId: number,
  among?: Partial<IdsByKind>,
): Promise<IdsByKind> {
  const out: IdsByKind = { data_source: [], dataset: [], widget: [], dashboard: [] };
  const kinds = among ? KINDS.filter((k) => among[k]?.length) : KINDS;
  if (!kinds.length) return out;
  const parts = kinds.map(
    (kind) => sql`select ${kind} as kind, id from ${sql.identifier(getTableName(OBJECT_KINDS[kind].table))}
      where workspace_id = ${workspaceId} ${among ? sql`and id = any(${ints(among[kind]!)})` : sql``}`,
  );
  const found = await tx.execute<{ kind: ObjectKindName; id: number }>(sql.join(parts, sql` union all `));
  for (const r of found.rows) out[r.kind].push(r.id);
  return out;
}
