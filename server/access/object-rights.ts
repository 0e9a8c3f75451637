import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { groups } from '../../db/schema/groups';
import { users } from '../../db/schema/users';
import type { AppDeps } from '../app/deps';
import type { Actor } from '../auth/actor';
import { notFound } from '../kernel/errors';
import { readCachesChanged } from '../kernel/read-epoch';
import { OBJECT_KINDS, type ObjectKindName } from '../objects/kinds';
import { ownedObject, type ObjectRight } from './object-access';
import {
  deleteObjectRight,
  rightsOfObject,
  upsertObjectRight,
  type ObjectRightRow,
  type RightSubject,
} from './object-rights-store';

/*
 * Rights on one object for users and groups (GET, PUT and DELETE /api/access/{objectType}/{objectId}/...): only the
 * object's owner by role (Администратор of its workspace, or its author with an editing role) manages them; an
 * `edit` right does not (server/access/object-access.ts). 404 when the caller cannot read the object, 403 when they
 * can but do not own it. Every change empties the cached read decisions of this process after its commit, so the
 * next read already sees it (widget data caches who may read a widget under the read epoch).
 */

/**
 * The object types of the /api/access paths: the kinds of server/objects/kinds.ts, each under the specification's
 * spelling (`data-source`) and under the kind's own (`data_source`).
 */
export const OBJECT_TYPE_NAMES = (Object.keys(OBJECT_KINDS) as ObjectKindName[]).flatMap((kind) =>
  kind.includes('_') ? [kind.replaceAll('_', '-'), kind] : [kind],
) as [string, ...string[]];

/** The kind an object type of the /api/access paths names (one of OBJECT_TYPE_NAMES). */
export function kindOfObjectType(type: string): ObjectKindName {
  const kind = type.replaceAll('-', '_');
  if (!(kind in OBJECT_KINDS)) throw notFound(`Неизвестный тип объекта: ${type}`);
  return kind as ObjectKindName;
}

export interface ObjectRef {
  kind: ObjectKindName;
  id: number;
}

/** Users and groups with a right on the object. */
export async function listObjectRights(db: DbOrTx, actor: Actor, object: ObjectRef): Promise<ObjectRightRow[]> {
  await ownedObject(db, actor, object.kind, object.id);
  return rightsOfObject(db, object.kind, object.id);
}

/** The subject's name; 404 when the user or group does not exist. */
async function subjectName(db: DbOrTx, subject: RightSubject): Promise<string> {
  if (subject.type === 'user') {
    const [row] = await db.select({ name: users.username }).from(users).where(eq(users.id, subject.id));
    if (!row) throw notFound(`Пользователь не найден (id ${subject.id})`);
    return row.name;
  }
  const [row] = await db.select({ name: groups.name }).from(groups).where(eq(groups.id, subject.id));
  if (!row) throw notFound(`Группа не найдена (id ${subject.id})`);
  return row.name;
}

/** Grants the subject the right on the object, or changes the right they hold. */
export async function setObjectRight(
  deps: AppDeps,
  actor: Actor,
  object: ObjectRef,
  subject: RightSubject,
  right: ObjectRight,
): Promise<ObjectRightRow> {
  const name = await deps.db.transaction(async (tx) => {
    await ownedObject(tx, actor, object.kind, object.id, { forUpdate: true });
    const found = await subjectName(tx, subject);
    await upsertObjectRight(tx, object.kind, object.id, subject, right);
    return found;
  });
  readCachesChanged(deps);
  return { subjectType: subject.type, subjectId: subject.id, name, right };
}

/** Takes the subject's right on the object away; 404 when they hold none. */
export async function removeObjectRight(
  deps: AppDeps,
  actor: Actor,
  object: ObjectRef,
  subject: RightSubject,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await ownedObject(tx, actor, object.kind, object.id, { forUpdate: true });
    await subjectName(tx, subject);
    if (!(await deleteObjectRight(tx, object.kind, object.id, subject)))
      throw notFound(
        subject.type === 'user'
          ? `У пользователя нет прав на этот объект (id ${subject.id})`
          : `У группы нет прав на этот объект (id ${subject.id})`,
      );
  });
  readCachesChanged(deps);
}
