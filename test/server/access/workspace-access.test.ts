import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { workspaces } from '../../../db/schema/workspaces';
import {
  assertWorkspaceAdmin,
  assertWorkspaceEditable,
  assertWorkspaceReadable,
  defaultWorkspaceFor,
  inVisibleWorkspaces,
  workspaceRoleOf,
} from '../../../server/access/workspace-access';
import type { Actor } from '../../../server/auth/actor';
import { AppError } from '../../../server/kernel/errors';
import { useTestApp } from '../../support/app';
import {
  addToGroup,
  createGroup,
  createSharedWorkspace,
  createUser,
  login,
  type TestUser,
} from '../../support/factories';

const { t, api } = useTestApp();

/** An actor as authentication builds it; `groupIds` is the token's snapshot, whatever the database says now. */
const actorOf = (u: TestUser, opts: { groupIds?: number[]; sysadmin?: boolean } = {}): Actor => ({
  userId: u.id,
  username: u.username,
  accountType: 'local',
  groupIds: opts.groupIds ?? [],
  isSysadmin: opts.sysadmin ?? false,
  isWorkspaceManager: false,
  tokenKind: 'session',
});

const statusOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof AppError) return e.status;
    throw e;
  }
};

describe('workspaceRoleOf', () => {
  it('is the strongest of the direct role and the roles of the actor’s groups, null for non-members', async () => {
    const [u, stranger] = [await createUser(t.deps), await createUser(t.deps)];
    const [g1, g2] = [await createGroup(t.deps), await createGroup(t.deps)];
    const ws = await createSharedWorkspace(t.deps, [
      { userId: u.id, role: 'Наблюдатель' },
      { groupId: g1.id, role: 'Редактор' },
      { groupId: g2.id, role: 'Администратор' },
    ]);
    const db = t.deps.db;
    expect(await workspaceRoleOf(db, actorOf(u), ws)).toBe('Наблюдатель');
    expect(await workspaceRoleOf(db, actorOf(u, { groupIds: [g1.id] }), ws)).toBe('Редактор');
    expect(await workspaceRoleOf(db, actorOf(u, { groupIds: [g1.id, g2.id] }), ws)).toBe('Администратор');
    expect(await workspaceRoleOf(db, actorOf(stranger), ws)).toBeNull();
    expect(await workspaceRoleOf(db, actorOf(stranger, { groupIds: [g1.id] }), ws)).toBe('Редактор');
    expect(await workspaceRoleOf(db, actorOf(stranger, { sysadmin: true }), ws)).toBeNull();
  });

  it('reads the groups from the actor (the token snapshot), not from the current memberships', async () => {
    const u = await createUser(t.deps);
    const g = await createGroup(t.deps);
    const ws = await createSharedWorkspace(t.deps, [{ groupId: g.id, role: 'Редактор' }]);
    await addToGroup(t.deps, u.id, g.id);
    expect(await workspaceRoleOf(t.deps.db, actorOf(u), ws)).toBeNull();
    expect(await workspaceRoleOf(t.deps.db, actorOf(u, { groupIds: [g.id] }), ws)).toBe('Редактор');
  });
});

describe('inVisibleWorkspaces', () => {
  it('keeps the personal workspace and the memberships (direct and by group); everything for a system administrator', async () => {
    const u = await createUser(t.deps);
    const g = await createGroup(t.deps);
    const direct = await createSharedWorkspace(t.deps, [{ userId: u.id, role: 'Наблюдатель' }]);
    const byGroup = await createSharedWorkspace(t.deps, [{ groupId: g.id, role: 'Наблюдатель' }]);
    const other = await createSharedWorkspace(t.deps, []);
    const actor = actorOf(u, { groupIds: [g.id] });
    const visible = async (a: Actor) =>
      (
        await t.deps.db
          .select({ id: workspaces.id })
          .from(workspaces)
          .where(inVisibleWorkspaces(a, workspaces.id))
          .orderBy(workspaces.id)
      ).map((r) => r.id);
    expect(await visible(actor)).toEqual([u.personalWorkspaceId, direct, byGroup].sort((a, b) => a - b));
    expect(await visible(actorOf(u))).toEqual([u.personalWorkspaceId, direct]);
    expect(await visible(actorOf(u, { sysadmin: true }))).toEqual(
      expect.arrayContaining([u.personalWorkspaceId, direct, byGroup, other]),
    );

    // As a filter of another area's query (here on the workspaces table itself).
    const rows = await t.deps.db
      .select({ id: workspaces.id })
      .from(workspaces)
      .where(and(inVisibleWorkspaces(actor, workspaces.id), eq(workspaces.type, 'shared')))
      .orderBy(workspaces.id);
    expect(rows.map((r) => r.id)).toEqual([direct, byGroup]);
  });
});

describe('assertWorkspaceReadable / Editable / Admin', () => {
  it('answer 404 to non-members, 403 to members without the right, and pass the rest', async () => {
    const [viewer, editor, admin, stranger, sysadmin] = await Promise.all(
      [1, 2, 3, 4, 5].map(() => createUser(t.deps)),
    );
    const ws = await createSharedWorkspace(t.deps, [
      { userId: admin.id, role: 'Администратор' },
      { userId: editor.id, role: 'Редактор' },
      { userId: viewer.id, role: 'Наблюдатель' },
    ]);
    const db = t.deps.db;
    const table = async (u: TestUser, sys = false) => {
      const a = actorOf(u, { sysadmin: sys });
      return [
        await statusOf(assertWorkspaceReadable(db, a, ws)),
        await statusOf(assertWorkspaceEditable(db, a, ws)),
        await statusOf(assertWorkspaceAdmin(db, a, ws)),
      ];
    };
    expect(await table(stranger)).toEqual([404, 404, 404]);
    expect(await table(viewer)).toEqual([200, 403, 403]);
    expect(await table(editor)).toEqual([200, 200, 403]);
    expect(await table(admin)).toEqual([200, 200, 200]);
    expect(await table(sysadmin, true)).toEqual([200, 403, 403]);
    expect(await statusOf(assertWorkspaceReadable(db, actorOf(admin), 987654))).toBe(404);

    const access = await assertWorkspaceEditable(db, actorOf(editor), ws);
    expect(access.role).toBe('Редактор');
    expect(access.workspace).toMatchObject({ id: ws, type: 'shared' });
    expect((await assertWorkspaceReadable(db, actorOf(sysadmin, { sysadmin: true }), ws)).role).toBeNull();
  });
});

describe('defaultWorkspaceFor', () => {
  it('is the caller’s personal workspace', async () => {
    const u = await createUser(t.deps);
    expect(await defaultWorkspaceFor(t.deps.db, actorOf(u))).toBe(u.personalWorkspaceId);
  });
});

describe('through REST', () => {
  it('a workspace the caller cannot see answers 404, the same as one that does not exist', async () => {
    const [owner, stranger] = [await createUser(t.deps), await createUser(t.deps)];
    const ws = await createSharedWorkspace(t.deps, [{ userId: owner.id, role: 'Администратор' }]);
    const token = await login(api, stranger.username, stranger.password);
    const hidden = await api.get(`/api/workspaces/${ws}`, token);
    const missing = await api.get('/api/workspaces/987654', token);
    expect([hidden.status, missing.status]).toEqual([404, 404]);
    expect(hidden.body.error.message).toBe(`Рабочее пространство не найдено (id ${ws})`);
    for (const call of [
      api.put(`/api/workspaces/${ws}`, { name: 'x' }, token),
      api.delete(`/api/workspaces/${ws}`, token),
      api.get(`/api/workspaces/${ws}/members`, token),
      api.post(`/api/workspaces/${ws}/members`, { user_id: stranger.id, role: 'Администратор' }, token),
    ]) {
      expect((await call).status).toBe(404);
    }
  });
});
