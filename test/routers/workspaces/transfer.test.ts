import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { dashboards } from '../../../db/schema/dashboards';
import { dataSources } from '../../../db/schema/data-sources';
import { datasets } from '../../../db/schema/datasets';
import { widgets } from '../../../db/schema/widgets';
import type { widgetView } from '../../../routers/widgets/schemas';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, login, type TestUser } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createStageObjects, type StageObjects } from '../pipelines/deploy-world';

/* POST /api/workspaces/{id}/transfer: objects move from the caller's personal workspace to a shared one. */

type Widget = z.output<typeof widgetView>;
interface TransferResult {
  workspace_id: number;
  target_workspace_id: number;
  objects: { type: string; id: number; name: string }[];
}

const { t, api } = useTestApp();
let owner: TestUser;
let token: string;
let shared: number;
let readOnly: number;
const disposals: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of disposals) await d();
});

beforeAll(async () => {
  owner = await createUser(t.deps);
  token = await login(api, owner.username, owner.password);
  shared = await createSharedWorkspace(t.deps, [{ userId: owner.id, role: 'Редактор' }]);
  readOnly = await createSharedWorkspace(t.deps, [{ userId: owner.id, role: 'Наблюдатель' }]);
});

async function personalObjects(): Promise<StageObjects> {
  const o = await createStageObjects(api, token, owner.personalWorkspaceId);
  disposals.push(o.dispose);
  return o;
}

const transfer = (body: Record<string, unknown>, as = token, from = owner.personalWorkspaceId) =>
  api.post(`/api/workspaces/${from}/transfer`, body, as);

/** Workspace of each object, as stored. */
async function whereAre(o: StageObjects) {
  const one = async (table: typeof dataSources | typeof datasets | typeof widgets | typeof dashboards, id: number) =>
    (await t.deps.db.select({ ws: table.workspaceId }).from(table).where(eq(table.id, id)))[0]?.ws;
  return [
    await one(dataSources, o.sourceId),
    await one(datasets, o.datasetId),
    await one(widgets, o.widgetId),
    await one(dashboards, o.dashboardId),
  ];
}

describe('POST /api/workspaces/{id}/transfer', () => {
  it('moves a dashboard with its dependencies on request, keeping ids; the widget still answers its data', async () => {
    const o = await personalObjects();
    const before = ok(await api.post(`/api/widget/${o.widgetId}/data`, {}, token));
    const res = ok<TransferResult>(
      await transfer({
        target_workspace_id: shared,
        objects: [{ type: 'dashboard', id: o.dashboardId }],
        include_dependencies: true,
      }),
    );
    expect(res.objects.map((x) => [x.type, x.id])).toEqual([
      ['data_source', o.sourceId],
      ['dataset', o.datasetId],
      ['widget', o.widgetId],
      ['dashboard', o.dashboardId],
    ]);
    expect(await whereAre(o)).toEqual([shared, shared, shared, shared]);
    expect(ok<Widget>(await api.get(`/api/widget/${o.widgetId}`, token)).workspace_id).toBe(shared);
    expect(ok(await api.post(`/api/widget/${o.widgetId}/data`, {}, token))).toEqual(before);
  });

  it('without include_dependencies, a dependency that would stay behind is refused and nothing moves', async () => {
    const o = await personalObjects();
    const res = await transfer({ target_workspace_id: shared, objects: [{ type: 'widget', id: o.widgetId }] });
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(
      new RegExp(
        `^Виджет «.+» \\(id ${o.widgetId}\\) зависит от датасета «.+» \\(id ${o.datasetId}\\), который остаётся в личном пространстве`,
      ),
    );
    expect(await whereAre(o)).toEqual(Array(4).fill(owner.personalWorkspaceId));
    // Named together, they go together.
    ok(
      await transfer({
        target_workspace_id: shared,
        objects: [
          { type: 'data_source', id: o.sourceId },
          { type: 'dataset', id: o.datasetId },
          { type: 'widget', id: o.widgetId },
          { type: 'dashboard', id: o.dashboardId },
        ],
      }),
    );
    expect(await whereAre(o)).toEqual(Array(4).fill(shared));
  });

  it('an object staying behind that needs a moved one is refused (a widget lives beside its dataset)', async () => {
    const o = await personalObjects();
    const res = await transfer({
      target_workspace_id: shared,
      objects: [{ type: 'dataset', id: o.datasetId }],
      include_dependencies: true,
    });
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(
      /остаётся в личном пространстве и зависит от датасета .+: перенесите их вместе$/,
    );
    expect(await whereAre(o)).toEqual(Array(4).fill(owner.personalWorkspaceId));
  });

  it('a source may move alone: the personal dataset keeps reading it', async () => {
    const o = await personalObjects();
    const before = ok(await api.post(`/api/widget/${o.widgetId}/data`, {}, token));
    ok(await transfer({ target_workspace_id: shared, objects: [{ type: 'data_source', id: o.sourceId }] }));
    expect(await whereAre(o)).toEqual([shared, ...Array(3).fill(owner.personalWorkspaceId)]);
    expect(ok(await api.post(`/api/widget/${o.widgetId}/data`, {}, token))).toEqual(before);
  });

  it("refusals: a personal or read-only target, another user's workspace, a shared source workspace, bad objects", async () => {
    const o = await personalObjects();
    const one = [{ type: 'widget', id: o.widgetId }];
    const other = await createUser(t.deps);
    const cases: [Record<string, unknown>, number, string | undefined, number | undefined, string?][] = [
      [{ target_workspace_id: other.personalWorkspaceId, objects: one }, 404, undefined, undefined],
      [{ target_workspace_id: readOnly, objects: one }, 403, undefined, undefined, 'Доступ запрещён'],
      [{ target_workspace_id: shared, objects: one }, 404, await login(api, other.username, other.password), undefined],
      // From a shared workspace: a Редактор there is refused for rights, its Администратор is told why.
      [{ target_workspace_id: shared, objects: one }, 403, undefined, shared, 'Доступ запрещён'],
      [
        { target_workspace_id: shared, objects: one },
        400,
        undefined,
        await createSharedWorkspace(t.deps, [{ userId: owner.id, role: 'Администратор' }]),
        'Переносить можно только из личного пространства',
      ],
      [
        { target_workspace_id: shared, objects: [{ type: 'widget', id: 2_000_000_000 }] },
        400,
        undefined,
        undefined,
        'Виджет не найден в личном пространстве (id 2000000000)',
      ],
      [{ target_workspace_id: shared, objects: [] }, 422, undefined, undefined],
      [{ target_workspace_id: shared, objects: [{ type: 'report', id: 1 }] }, 422, undefined, undefined],
      [{ target_workspace_id: shared, objects: [...one, ...one] }, 422, undefined, undefined],
    ];
    for (const [body, status, as, from, message] of cases) {
      const res = await transfer(body, as ?? token, from ?? owner.personalWorkspaceId);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), status]);
      if (message) expect(failure(res).message).toBe(message);
    }
    // A personal target workspace of the caller's own is not shared: 400.
    const mine = await transfer({ target_workspace_id: owner.personalWorkspaceId, objects: one });
    expect(mine.status).toBe(400);
    expect(failure(mine).message).toBe('Переносить можно только в командное пространство');
    const rows = await t.deps.db
      .select()
      .from(widgets)
      .where(inArray(widgets.id, [o.widgetId]));
    expect(rows[0].workspaceId).toBe(owner.personalWorkspaceId);
  });
});
