import { describe, expect, it } from 'vitest';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { dashboards } from '../../../db/schema/dashboards';
import { dataSources } from '../../../db/schema/data-sources';
import { datasets } from '../../../db/schema/datasets';
import { widgets } from '../../../db/schema/widgets';
import { objectRights } from '../../../db/schema/object-rights';
import { workspaceMembers } from '../../../db/schema/workspaces';
import {
  accessOf,
  accessOfRank,
  editableObject,
  ownedObject,
  readableIds,
  readableInSql,
  readableObject,
  roleRankInSql,
  type ObjectAccess,
} from '../../../server/access/object-access';
import type { Actor } from '../../../server/auth/actor';
import { AppError } from '../../../server/kernel/errors';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { OBJECT_KINDS, type ObjectKindName } from '../../../server/objects/kinds';
import { loadWidgetForData } from '../../../server/widgets/widget-load';
import { useTestApp } from '../../support/app';
import { createGroup, createSharedWorkspace, createUser, uniq, type TestUser } from '../../support/factories';

const { t } = useTestApp();

/** An actor as authentication builds it. */
const actorOf = (u: TestUser, opts: { groupIds?: number[]; sysadmin?: boolean } = {}): Actor => ({
  userId: u.id,
  username: u.username,
  accountType: 'local',
  groupIds: opts.groupIds ?? [],
  isSysadmin: opts.sysadmin ?? false,
  isWorkspaceManager: false,
  tokenKind: 'session',
});

/** 200, or the status and message of the AppError the call failed with. */
const outcome = async (p: Promise<unknown>): Promise<{ status: number; message?: string }> => {
  try {
    await p;
    return { status: 200 };
  } catch (e) {
    if (e instanceof AppError) return { status: e.status, message: e.message };
    throw e;
  }
};

const KINDS = Object.keys(OBJECT_KINDS) as ObjectKindName[];
const NOT_FOUND: Record<ObjectKindName, (id: number) => string> = {
  data_source: (id) => `Источник данных не найден (id ${id})`,
  dataset: (id) => `Датасет не найден (id ${id})`,
  widget: (id) => `Виджет не найден (id ${id})`,
  dashboard: (id) => `Дашборд не найден (id ${id})`,
};

/**
 * A shared workspace with an administrator, an editor who authors one object of every kind, another editor and a
 * viewer; a stranger and a system administrator who are members of nothing here.
 */
async function world() {
  const [admin, author, editor, viewer, stranger, sysadmin] = await Promise.all(
    [1, 2, 3, 4, 5, 6].map(() => createUser(t.deps)),
  );
  const ws = await createSharedWorkspace(t.deps, [
    { userId: admin.id, role: 'Администратор' },
    { userId: author.id, role: 'Редактор' },
    { userId: editor.id, role: 'Редактор' },
    { userId: viewer.id, role: 'Наблюдатель' },
  ]);
  const db = t.deps.db;
  const [source] = await db
    .insert(dataSources)
    .values({ name: uniq('src'), type: 'postgresql', workspaceId: ws, authorId: author.id, settings: {} })
    .returning();
  const [dataset] = await db
    .insert(datasets)
    .values({ name: uniq('ds'), workspaceId: ws, authorId: author.id })
    .returning();
  const [widget] = await db
    .insert(widgets)
    .values({ name: uniq('w'), type: 'table', datasetId: dataset.id, workspaceId: ws, authorId: author.id })
    .returning();
  const [dashboard] = await db
    .insert(dashboards)
    .values({ name: uniq('d'), workspaceId: ws, authorId: author.id })
    .returning();
  const ids: Record<ObjectKindName, number> = {
    data_source: source.id,
    dataset: dataset.id,
    widget: widget.id,
    dashboard: dashboard.id,
  };
  return { ws, ids, users: { admin, author, editor, viewer, stranger, sysadmin } };
}

describe('readableObject / ownedObject', () => {
  it('read: any role or a system administrator; edit: an editing role; own: Администратор or the author with an editing role', async () => {
    const { ids, users } = await world();
    const db = t.deps.db;
    const callers: [string, Actor][] = [
      ['admin', actorOf(users.admin)],
      ['author', actorOf(users.author)],
      ['editor', actorOf(users.editor)],
      ['viewer', actorOf(users.viewer)],
      ['stranger', actorOf(users.stranger)],
      ['sysadmin', actorOf(users.sysadmin, { sysadmin: true })],
    ];
    for (const kind of KINDS) {
      const id = ids[kind];
      const table: Record<string, number[]> = {};
      for (const [name, actor] of callers) {
        table[name] = [
          (await outcome(readableObject(db, actor, kind, id))).status,
          (await outcome(editableObject(db, actor, kind, id))).status,
          (await outcome(ownedObject(db, actor, kind, id))).status,
        ];
      }
      expect(table, kind).toEqual({
        admin: [200, 200, 200],
        author: [200, 200, 200],
        editor: [200, 200, 403],
        viewer: [200, 403, 403],
        stranger: [404, 404, 404],
        sysadmin: [200, 403, 403],
      });
    }
  });

  it('answers the kind’s own 404 message, the same for a hidden object and for one that does not exist', async () => {
    const { ids, users } = await world();
    const db = t.deps.db;
    for (const kind of KINDS) {
      expect(await outcome(readableObject(db, actorOf(users.stranger), kind, ids[kind]))).toEqual({
        status: 404,
        message: NOT_FOUND[kind](ids[kind]),
      });
      expect(await outcome(ownedObject(db, actorOf(users.stranger), kind, ids[kind]))).toEqual({
        status: 404,
        message: NOT_FOUND[kind](ids[kind]),
      });
      expect(await outcome(readableObject(db, actorOf(users.admin), kind, 987654321))).toEqual({
        status: 404,
        message: NOT_FOUND[kind](987654321),
      });
      // Readable but not owned is the generic 403.
      expect(await outcome(ownedObject(db, actorOf(users.viewer), kind, ids[kind]))).toEqual({
        status: 403,
        message: 'Доступ запрещён',
      });
    }
  });

  it('returns the row, the role and the owner flag (the role is null for a system administrator who is no member)', async () => {
    const { ws, ids, users } = await world();
    const db = t.deps.db;
    for (const kind of KINDS) {
      const own = await ownedObject(db, actorOf(users.author), kind, ids[kind]);
      expect(own).toMatchObject({
        role: 'Редактор',
        isOwner: true,
        row: { id: ids[kind], workspaceId: ws, authorId: users.author.id },
      });
      expect(await readableObject(db, actorOf(users.editor), kind, ids[kind])).toMatchObject({
        role: 'Редактор',
        isOwner: false,
      });
      expect(await readableObject(db, actorOf(users.admin), kind, ids[kind])).toMatchObject({
        role: 'Администратор',
        isOwner: true,
      });
      expect(await readableObject(db, actorOf(users.sysadmin, { sysadmin: true }), kind, ids[kind])).toMatchObject({
        role: null,
        isOwner: false,
      });
    }
  });

  it('an author demoted to Наблюдатель still reads but no longer owns; the role may come from a group of the actor', async () => {
    const { ws, ids, users } = await world();
    const db = t.deps.db;
    await db
      .update(workspaceMembers)
      .set({ role: 'Наблюдатель' })
      .where(and(eq(workspaceMembers.workspaceId, ws), eq(workspaceMembers.userId, users.author.id)));
    const editors = await createGroup(t.deps);
    await db.insert(workspaceMembers).values({ workspaceId: ws, groupId: editors.id, role: 'Редактор' });
    for (const kind of KINDS) {
      expect(await readableObject(db, actorOf(users.author), kind, ids[kind])).toMatchObject({
        role: 'Наблюдатель',
        isOwner: false,
      });
      expect((await outcome(ownedObject(db, actorOf(users.author), kind, ids[kind]))).status).toBe(403);
      expect((await outcome(editableObject(db, actorOf(users.author), kind, ids[kind]))).status).toBe(403);
      // An editing role through a group of theirs makes them the owner again.
      expect(await ownedObject(db, actorOf(users.author, { groupIds: [editors.id] }), kind, ids[kind])).toMatchObject({
        role: 'Редактор',
        isOwner: true,
      });
    }
  });

  it('forUpdate locks the row for the rest of the transaction', async () => {
    const { ids, users } = await world();
    /** Whether a second connection can lock the row while the first holds what ownedObject took. */
    const secondCanLock = (kind: ObjectKindName, forUpdate: boolean) => {
      const { table, columns } = OBJECT_KINDS[kind];
      return t.deps.db
        .transaction(async (tx) => {
          const access = await ownedObject(tx, actorOf(users.author), kind, ids[kind], { forUpdate });
          expect(access.row.id).toBe(ids[kind]);
          await t.deps.db.transaction(async (tx2) => {
            await tx2.execute(sql`set local lock_timeout = '100ms'`);
            await tx2.select({ id: columns.id }).from(table).where(eq(columns.id, ids[kind])).for('update');
          });
          return true;
        })
        .catch((e: unknown) => {
          if (e instanceof AppError) throw e;
          return false;
        });
    };
    for (const kind of KINDS) {
      expect(await secondCanLock(kind, true), kind).toBe(false);
      expect(await secondCanLock(kind, false), kind).toBe(true);
    }
  });
});

describe('the policy in SQL', () => {
  it('readableInSql filters what the caller can read; roleRankInSql gives accessOfRank the same answer as readableObject', async () => {
    const { ids, users } = await world();
    const db = t.deps.db;
    for (const kind of KINDS) {
      const { table, columns } = OBJECT_KINDS[kind];
      for (const [actor, visible] of [
        [actorOf(users.viewer), true],
        [actorOf(users.stranger), false],
        [actorOf(users.sysadmin, { sysadmin: true }), true],
      ] as const) {
        const rows = await db
          .select({ id: columns.id, rank: roleRankInSql(actor, kind) })
          .from(table)
          .where(and(inArray(columns.id, [ids[kind]]), readableInSql(actor, kind)));
        expect(rows.length, `${kind} ${actor.username}`).toBe(visible ? 1 : 0);
      }
      const [row] = await db
        .select({ row: table, rank: roleRankInSql(actorOf(users.author), kind) })
        .from(table)
        .where(eq(columns.id, ids[kind]));
      const fromSql = accessOfRank(actorOf(users.author), kind, row.row as ObjectAccess<typeof kind>['row'], row.rank);
      const fromQuery = await readableObject(db, actorOf(users.author), kind, ids[kind]);
      expect({ role: fromSql.role, isOwner: fromSql.isOwner }).toEqual({
        role: fromQuery.role,
        isOwner: fromQuery.isOwner,
      });
      expect(() => accessOf(actorOf(users.stranger), kind, row.row as ObjectAccess<typeof kind>['row'], null)).toThrow(
        NOT_FOUND[kind](ids[kind]),
      );
    }
  });

  it('the widget data hot path (one prepared query) reads the role and hides a widget outside the caller’s workspaces', async () => {
    const { ids, users } = await world();
    const read = await loadWidgetForData(t.deps, actorOf(users.viewer), ids.widget);
    expect(read).toMatchObject({
      role: 'Наблюдатель',
      isOwner: false,
      row: { id: ids.widget },
      dataset: { id: ids.dataset },
    });
    expect(await loadWidgetForData(t.deps, actorOf(users.sysadmin, { sysadmin: true }), ids.widget)).toMatchObject({
      role: null,
    });
    expect(await outcome(Promise.resolve(loadWidgetForData(t.deps, actorOf(users.stranger), ids.widget)))).toEqual({
      status: 404,
      message: NOT_FOUND.widget(ids.widget),
    });
    // The statement is prepared once per app and kept in its caches (made with the first read).
    expect(t.deps.caches.made()).toContain('widgets.forDataStatement');
  });

  it('the hot path decides the dataset’s readability as readableIds does: a role, a right of one’s own or a group’s, a system administrator; a right on the widget alone does not', async () => {
    const { ids, users } = await world();
    const db = t.deps.db;
    const [onWidget, onDataset, throughGroup] = await Promise.all([1, 2, 3].map(() => createUser(t.deps)));
    const group = await createGroup(t.deps);
    await db.insert(objectRights).values([
      { objectType: 'widget', objectId: ids.widget, userId: onWidget.id, right: 'view' },
      { objectType: 'widget', objectId: ids.widget, userId: onDataset.id, right: 'view' },
      { objectType: 'dataset', objectId: ids.dataset, userId: onDataset.id, right: 'view' },
      { objectType: 'widget', objectId: ids.widget, groupId: group.id, right: 'view' },
      { objectType: 'dataset', objectId: ids.dataset, groupId: group.id, right: 'edit' },
    ]);
    readCachesChanged(t.deps);
    const callers: [string, Actor, boolean][] = [
      ['viewer (role)', actorOf(users.viewer), true],
      ['sysadmin', actorOf(users.sysadmin, { sysadmin: true }), true],
      ['right on the widget only', actorOf(onWidget), false],
      ['rights on the widget and the dataset', actorOf(onDataset), true],
      ['a group’s rights', actorOf(throughGroup, { groupIds: [group.id] }), true],
    ];
    for (const [who, actor, expected] of callers) {
      const read = await loadWidgetForData(t.deps, actor, ids.widget);
      const policy = (await readableIds(db, actor, 'dataset', [ids.dataset])).has(ids.dataset);
      expect({ who, readable: read.datasetReadable }).toEqual({ who, readable: expected });
      expect({ who, policy }).toEqual({ who, policy: expected });
    }
    // Taking the dataset right away (a write that bumps the read epoch) takes the readability with it.
    await db
      .delete(objectRights)
      .where(and(eq(objectRights.objectType, 'dataset'), eq(objectRights.userId, onDataset.id)));
    readCachesChanged(t.deps);
    expect((await loadWidgetForData(t.deps, actorOf(onDataset), ids.widget)).datasetReadable).toBe(false);
  });
});
