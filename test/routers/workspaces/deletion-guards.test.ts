import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { workspaces } from '../../../db/schema/workspaces';
import {
  addWorkspaceDeletionGuard,
  setWorkspaceStageLookup,
  type WorkspaceDeletionGuard,
  type WorkspaceStageLookup,
} from '../../../server/workspaces/hooks';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, login, type TestUser } from '../../support/factories';

const { t, api } = useTestApp();
let admin: TestUser;
let token: string;

beforeAll(async () => {
  admin = await createUser(t.deps);
  token = await login(api, admin.username, admin.password);
});

/** Registers a guard in this test app's deps, as server/app/start.ts does for pipelines; returns its removal. */
const registerWorkspaceDeletionGuard = (guard: WorkspaceDeletionGuard) => addWorkspaceDeletionGuard(t.deps, guard);

/** Plugs a stage lookup into this test app's deps, as server/app/start.ts does for pipelines; returns its removal. */
const registerWorkspaceStageLookup = (lookup: WorkspaceStageLookup) => setWorkspaceStageLookup(t.deps, lookup);

describe('workspace deletion guards (a workspace bound to a pipeline stage)', () => {
  it('refuses the deletion without saying why, deletes nothing, and allows it once the guard lets go', async () => {
    const bound = new Set<number>();
    const lockedDuringGuard: boolean[] = [];
    const unregister = registerWorkspaceDeletionGuard(async (tx, workspaceId) => {
      // The deleting transaction holds the row lock: another connection cannot take it meanwhile.
      const elsewhere = await t.deps.db
        .select({ id: workspaces.id })
        .from(workspaces)
        .where(eq(workspaces.id, workspaceId))
        .for('update', { noWait: true })
        .then(
          () => false,
          () => true,
        );
      const [own] = await tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, workspaceId));
      lockedDuringGuard.push(elsewhere && own !== undefined);
      return bound.has(workspaceId);
    });
    try {
      const ws = await createSharedWorkspace(t.deps, [{ userId: admin.id, role: 'Администратор' }]);
      const free = await createSharedWorkspace(t.deps, [{ userId: admin.id, role: 'Администратор' }]);
      bound.add(ws);
      const res = await api.delete(`/api/workspaces/${ws}`, token);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('Запрос не может быть выполнен');
      expect((await api.get(`/api/workspaces/${ws}`, token)).status).toBe(200);
      expect((await api.delete(`/api/workspaces/${free}`, token)).status).toBe(200);
      bound.delete(ws);
      expect((await api.delete(`/api/workspaces/${ws}`, token)).status).toBe(200);
      expect(lockedDuringGuard).toEqual([true, true, true]);
    } finally {
      unregister();
    }
  });

  it('checks rights before the guard: a Редактор gets 403 and a stranger 404 for a bound workspace', async () => {
    const editor = await createUser(t.deps);
    const stranger = await createUser(t.deps);
    const ws = await createSharedWorkspace(t.deps, [
      { userId: admin.id, role: 'Администратор' },
      { userId: editor.id, role: 'Редактор' },
    ]);
    const unregister = registerWorkspaceDeletionGuard(async (_tx, id) => id === ws);
    try {
      expect(
        (await api.delete(`/api/workspaces/${ws}`, await login(api, editor.username, editor.password))).status,
      ).toBe(403);
      expect(
        (await api.delete(`/api/workspaces/${ws}`, await login(api, stranger.username, stranger.password))).status,
      ).toBe(404);
    } finally {
      unregister();
    }
  });

  it('shows the pipeline stage binding supplied by the pipelines area in the workspace details', async () => {
    const ws = await createSharedWorkspace(t.deps, [{ userId: admin.id, role: 'Администратор' }]);
    const unregister = registerWorkspaceStageLookup(async (_db, id) =>
      id === ws ? { pipeline_id: 7, pipeline_name: 'Отчётность', order: 1, name: 'Тест' } : null,
    );
    try {
      const res = await api.get(`/api/workspaces/${ws}`, token);
      expect(res.body.data.pipeline_stage).toEqual({
        pipeline_id: 7,
        pipeline_name: 'Отчётность',
        order: 1,
        name: 'Тест',
      });
    } finally {
      unregister();
    }
    expect((await api.get(`/api/workspaces/${ws}`, token)).body.data.pipeline_stage).toBeNull();
  });
});
