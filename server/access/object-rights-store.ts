import { and, asc, eq, inArray, isNotNull, or, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { groups } from '../../db/schema/groups';
import { objectRights } from '../../db/schema/object-rights';
import { users } from '../../db/schema/users';
import { OBJECT_KINDS, type ObjectKindName } from '../objects/kinds';

/*
 * The rows of object_rights (db/schema/object-rights.ts): tx-first and actor-free; who may call is
 * server/access/object-access.ts's business, what to check server/access/object-rights.ts's.
 */

export type RightSubject = { type: 'user'; id: number } | { type: 'group'; id: number };

export interface ObjectRightRow {
  subjectType: 'user' | 'group';
  subjectId: number;
  name: string;
  right: string;
}

const subjectColumn = (subject: RightSubject) => (subject.type === 'user' ? objectRights.userId : objectRights.groupId);

/** Every right on the object: users first, then groups, each by name. */
export async function rightsOfObject(tx: DbOrTx, kind: ObjectKindName, id: number): Promise<ObjectRightRow[]> {
  const ofObject = and(eq(objectRights.objectType, kind), eq(objectRights.objectId, id));
  const userRows = await tx
    .select({ subjectId: users.id, name: users.username, right: objectRights.right })
    .from(objectRights)
    .innerJoin(users, eq(users.id, objectRights.userId))
    .where(and(ofObject, isNotNull(objectRights.userId)))
    .orderBy(asc(sql`lower(${users.username})`), asc(users.id));
  const groupRows = await tx
    .select({ subjectId: groups.id, name: groups.name, right: objectRights.right })
    .from(objectRights)
    .innerJoin(groups, eq(groups.id, objectRights.groupId))
    .where(and(ofObject, isNotNull(objectRights.groupId)))
    .orderBy(asc(sql`lower(${groups.name})`), asc(groups.id));
  return [
    ...userRows.map((r) => ({ subjectType: 'user' as const, ...r })),
    ...groupRows.map((r) => ({ subjectType: 'group' as const, ...r })),
  ];
}

/** Grants the right, or changes the one the subject already holds on the object. */
export async function upsertObjectRight(
  tx: DbOrTx,
  kind: ObjectKindName,
  id: number,
  subject: RightSubject,
  right: string,
): Promise<void> {
  const column = subjectColumn(subject);
  await tx
    .insert(objectRights)
    .values({
      objectType: kind,
      objectId: id,
      ...(subject.type === 'user' ? { userId: subject.id } : { groupId: subject.id }),
      right,
    })
    .onConflictDoUpdate({
      target: [objectRights.objectType, objectRights.objectId, column],
      set: { right, updatedAt: sql`now()` },
    });
}

/** Removes the subject's right on the object; false when they held none. */
export async function deleteObjectRight(
  tx: DbOrTx,
  kind: ObjectKindName,
  id: number,
  subject: RightSubject,
): Promise<boolean> {
  const removed = await tx
    .delete(objectRights)
    .where(
      and(eq(objectRights.objectType, kind), eq(objectRights.objectId, id), eq(subjectColumn(subject), subject.id)),
    )
    .returning({ id: objectRights.id });
  return removed.length > 0;
}

/** Every right on the object: part of deleting it, in the same transaction. */
export async function deleteRightsOfObject(tx: DbOrTx, kind: ObjectKindName, id: number): Promise<void> {
  await tx.delete(objectRights).where(and(eq(objectRights.objectType, kind), eq(objectRights.objectId, id)));
}

/** Every right on the objects of one kind, batched: part of deleting them (a pipeline rollback), same transaction. */
export async function deleteRightsOfObjects(tx: DbOrTx, kind: ObjectKindName, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.delete(objectRights).where(and(eq(objectRights.objectType, kind), inArray(objectRights.objectId, ids)));
}

/**
 * The rights on every object of a workspace: part of deleting the workspace (which cascades to its objects), in the
 * same transaction. Every kind of OBJECT_KINDS is covered.
 */
export async function deleteRightsInWorkspace(tx: DbOrTx, workspaceId: number): Promise<void> {
  const ofKinds = (Object.keys(OBJECT_KINDS) as ObjectKindName[]).map((kind) => {
    const { table, columns } = OBJECT_KINDS[kind];
    return and(
      eq(objectRights.objectType, kind),
      inArray(
        objectRights.objectId,
        tx
          .select({ id: columns.id })
          .from(table as PgTable)
          .where(eq(columns.workspaceId, workspaceId)),
      ),
    );
  });
  await tx.delete(objectRights).where(or(...ofKinds));
}
