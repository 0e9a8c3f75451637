import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { listObjectsOutput } from '../../../routers/data-sources/schemas';
import type { dependenciesOutput } from '../../../routers/datasets/schemas';
import type { widgetView } from '../../../routers/widgets/schemas';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createWorkspaceObjects, widgetOver, type WorkspaceObjects } from '../../support/workspace-objects';
import {
  postDashboard,
  type DashboardDetails,
  type DashboardPage,
  type DashboardSchema,
  type DashboardView,
} from './world';

const { t, api } = useTestApp();
let cast: RoleCast;
/** W: a dataset (with a field) and two widgets on it; elsewhere: a widget of another workspace. */
let w: WorkspaceObjects;
let elsewhere: WorkspaceObjects;
let second: number;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  w = await createWorkspaceObjects(api, cast.tokens.editor!, cast.workspaceId);
  elsewhere = await createWorkspaceObjects(api, cast.tokens.editor!, await cast.newWorkspace());
  second = ok<z.output<typeof widgetView>>(
    await api.post('/api/widget', widgetOver(w.datasetId), cast.tokens.editor),
  ).id;
});
afterAll(async () => {
  await w?.dispose();
  await elsewhere?.dispose();
});

const layout = () => ({
  tabs: [
    { id: 'main', name: 'Главная' },
    { id: 'more', name: 'Ещё' },
  ],
  items: [
    { widget_id: w.widgetId, tab_id: 'main', x: 0, y: 0, w: 6, h: 4 },
    { widget_id: second, tab_id: 'more', x: 6, y: 0, w: 6, h: 4 },
  ],
  selectors: [
    {
      id: 'city',
      name: 'Город',
      field_id: w.fieldId,
      op: 'in',
      values: ['Москва'],
      widget_ids: [w.widgetId, second],
    },
  ],
  parameters: [{ name: 'year', value: 2026, widget_ids: [second] }],
});

describe('PUT and GET /api/dashboard/{id}/schema', () => {
  it('saves the whole layout, reads it back, shows its widgets in the details and moves updated_at', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    const saved = ok<DashboardSchema>(await api.put(`/api/dashboard/${d.id}/schema`, layout(), cast.tokens.editor));
    expect(saved).toMatchObject({ id: d.id, ...layout() });
    expect(Date.parse(saved.updated_at)).toBeGreaterThan(Date.parse(d.updated_at));
    expect(ok<DashboardSchema>(await api.get(`/api/dashboard/${d.id}/schema`, cast.tokens.viewer))).toEqual(saved);
    const details = ok<DashboardDetails>(await api.get(`/api/dashboard/${d.id}`, cast.tokens.viewer));
    expect(details.widget_ids).toEqual([w.widgetId, second]);
    expect(details.updated_at).toBe(saved.updated_at);

    // Saved whole: what is left out is deleted; defaults fill what a control leaves out.
    const smaller = ok<DashboardSchema>(
      await api.put(
        `/api/dashboard/${d.id}/schema`,
        { items: [{ widget_id: second, x: 0, y: 0, w: 1, h: 1 }] },
        cast.tokens.editor,
      ),
    );
    expect(smaller).toMatchObject({
      tabs: [],
      items: [{ widget_id: second, tab_id: null, x: 0, y: 0, w: 1, h: 1 }],
      selectors: [],
      parameters: [],
    });
    expect(Date.parse(smaller.updated_at)).toBeGreaterThan(Date.parse(saved.updated_at));
  });

  it("is the owner's: 403 for a Наблюдатель and a non-owner editor, 404 for a non-member", async () => {
    const d = await postDashboard(api, cast.tokens.wsAdmin, cast.workspaceId);
    expect((await api.put(`/api/dashboard/${d.id}/schema`, {}, cast.tokens.viewer)).status).toBe(403);
    expect((await api.put(`/api/dashboard/${d.id}/schema`, {}, cast.tokens.editor)).status).toBe(403);
    expect((await api.put(`/api/dashboard/${d.id}/schema`, {}, cast.tokens.plain)).status).toBe(404);
    expect((await api.get(`/api/dashboard/${d.id}/schema`, cast.tokens.plain)).status).toBe(404);
  });

  it('answers 422 with every bad path at once, and saves nothing', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    const before = ok<DashboardSchema>(await api.put(`/api/dashboard/${d.id}/schema`, layout(), cast.tokens.editor));
    const bad = {
      tabs: [
        { id: 'main', name: 'Главная' },
        { id: 'main', name: 'Дубль' },
      ],
      items: [
        { widget_id: w.widgetId, tab_id: 'main', x: 0, y: 0, w: 6, h: 4 },
        { widget_id: 2147483000, tab_id: 'main', x: 0, y: 0, w: 6, h: 4 },
        { widget_id: elsewhere.widgetId, tab_id: 'nowhere', x: 0, y: 0, w: 6, h: 4 },
        { widget_id: second, x: 0, y: 0, w: 6, h: 4 },
      ],
      selectors: [
        { id: 's', name: 'Поле чужого датасета', field_id: elsewhere.fieldId, widget_ids: [w.widgetId] },
        { id: 's', name: 'Не на дашборде', field_id: w.fieldId, widget_ids: [w.widgetId, elsewhere.widgetId] },
      ],
      parameters: [
        { name: 'p', value: 1, widget_ids: [] },
        { name: 'p', value: 2, widget_ids: [2147483001] },
      ],
    };
    const res = await api.put(`/api/dashboard/${d.id}/schema`, bad, cast.tokens.editor);
    expect(res.status).toBe(422);
    const error = failure(res);
    expect(error.message).toBe('Ошибка валидации');
    expect(error.errors).toEqual({
      'tabs[1].id': 'Повторяющийся id main',
      'items[1].widgetId': 'Виджет не найден (id 2147483000)',
      'items[2].widgetId': `Виджет не найден (id ${elsewhere.widgetId})`,
      'items[2].tabId': 'Вкладка дашборда не найдена (id nowhere)',
      'items[3].tabId': 'Укажите вкладку: у дашборда есть вкладки',
      'selectors[0].fieldId': `Поле датасета не найдено (id ${elsewhere.fieldId})`,
      'selectors[1].id': 'Повторяющийся id s',
      'selectors[1].widgetIds[1]': `Виджет не найден (id ${elsewhere.widgetId})`,
      'parameters[1].name': 'Повторяющееся имя p',
      'parameters[1].widgetIds[0]': 'Виджет не найден (id 2147483001)',
    });
    expect(ok<DashboardSchema>(await api.get(`/api/dashboard/${d.id}/schema`, cast.tokens.editor))).toEqual(before);
  });

  it('refuses a driven widget that is not a tile, and wire errors are 422 with their paths', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    const notPlaced = await api.put(
      `/api/dashboard/${d.id}/schema`,
      { items: [], parameters: [{ name: 'p', value: null, widget_ids: [second] }] },
      cast.tokens.editor,
    );
    expect(failure(notPlaced).errors).toEqual({
      'parameters[0].widgetIds[0]': `Виджет не размещён на дашборде (id ${second})`,
    });
    const wire = await api.put(
      `/api/dashboard/${d.id}/schema`,
      { items: [{ widget_id: 0, x: -1, y: 0, w: 0, h: 1, z: 1 }], tabs: [{ id: ' ', name: 'x' }] },
      cast.tokens.editor,
    );
    expect(wire.status).toBe(422);
    expect(failure(wire).errors).toMatchObject({
      'items[0].widgetId': expect.any(String),
      'items[0].x': expect.any(String),
      'items[0].w': expect.any(String),
      'items[0].z': 'unknown field',
      'tabs[0].id': 'must not be blank',
    });
  });
  it('refuses a selector driving a widget built on another dataset', async () => {
    const other = await createWorkspaceObjects(api, cast.tokens.editor!, cast.workspaceId);
    try {
      const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
      const res = await api.put(
        `/api/dashboard/${d.id}/schema`,
        {
          items: [w.widgetId, other.widgetId].map((id, i) => ({ widget_id: id, x: i, y: 0, w: 1, h: 1 })),
          selectors: [{ id: 's', name: 'Город', field_id: w.fieldId, widget_ids: [w.widgetId, other.widgetId] }],
        },
        cast.tokens.editor,
      );
      expect(failure(res).errors).toEqual({
        'selectors[0].widgetIds[1]': `Виджет построен на другом датасете (id ${other.widgetId})`,
      });
    } finally {
      await other.dispose();
    }
  });
});

describe('POST /api/dashboard/{id}/copy', () => {
  it('copies the layout as it is without copy_widgets, and with clones with it', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId, { name: 'Оригинал', description: 'о' });
    ok(await api.put(`/api/dashboard/${d.id}/schema`, layout(), cast.tokens.editor));

    const plain = ok<DashboardView>(await api.post(`/api/dashboard/${d.id}/copy`, {}, cast.tokens.editor));
    expect(plain).toMatchObject({
      name: 'Оригинал (копия)',
      description: 'о',
      workspace_id: cast.workspaceId,
      author_id: cast.users.editor.id,
    });
    expect(plain.id).not.toBe(d.id);
    const plainLayout = ok<DashboardSchema>(await api.get(`/api/dashboard/${plain.id}/schema`, cast.tokens.editor));
    expect(plainLayout).toMatchObject(layout());

    const deep = ok<DashboardView>(
      await api.post(`/api/dashboard/${d.id}/copy`, { name: 'С виджетами', copy_widgets: true }, cast.tokens.editor),
    );
    expect(deep.name).toBe('С виджетами');
    const deepLayout = ok<DashboardSchema>(await api.get(`/api/dashboard/${deep.id}/schema`, cast.tokens.editor));
    const [c1, c2] = deepLayout.items.map((i) => i.widget_id);
    expect(c1).not.toBe(w.widgetId);
    expect(c2).not.toBe(second);
    expect(deepLayout.selectors[0].widget_ids).toEqual([c1, c2]);
    expect(deepLayout.parameters[0].widget_ids).toEqual([c2]);
    const clone = ok<z.output<typeof widgetView>>(await api.get(`/api/widget/${c1}`, cast.tokens.editor));
    expect(clone).toMatchObject({
      dataset_id: w.datasetId,
      workspace_id: cast.workspaceId,
      author_id: cast.users.editor.id,
    });
    // The original is untouched.
    expect(ok<DashboardSchema>(await api.get(`/api/dashboard/${d.id}/schema`, cast.tokens.editor))).toMatchObject(
      layout(),
    );
  });

  it("is the owner's, and goes only where the caller may create", async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    expect((await api.post(`/api/dashboard/${d.id}/copy`, {}, cast.tokens.viewer)).status).toBe(403);
    expect((await api.post(`/api/dashboard/${d.id}/copy`, {}, cast.tokens.plain)).status).toBe(404);
    const intoForeign = await api.post(
      `/api/dashboard/${d.id}/copy`,
      { workspace_id: cast.users.plain.personalWorkspaceId },
      cast.tokens.editor,
    );
    expect(intoForeign.status).toBe(404);
    // An empty dashboard may move to another workspace of the caller's.
    const moved = ok<DashboardView>(
      await api.post(
        `/api/dashboard/${d.id}/copy`,
        { workspace_id: cast.users.editor.personalWorkspaceId },
        cast.tokens.editor,
      ),
    );
    expect(moved.workspace_id).toBe(cast.users.editor.personalWorkspaceId);
    // One with widgets does not: widgets live beside their datasets.
    ok(await api.put(`/api/dashboard/${d.id}/schema`, layout(), cast.tokens.editor));
    const withWidgets = await api.post(
      `/api/dashboard/${d.id}/copy`,
      { workspace_id: cast.users.editor.personalWorkspaceId, copy_widgets: true },
      cast.tokens.editor,
    );
    expect(withWidgets.status).toBe(400);
  });
});

describe('DELETE /api/widget/{id} and the layouts', () => {
  it('takes the widget out of every layout, moves their edit time, and dependencies list the dashboards', async () => {
    const doomed = ok<z.output<typeof widgetView>>(
      await api.post('/api/widget', widgetOver(w.datasetId), cast.tokens.editor),
    ).id;
    const withDoomed = () => ({
      items: [
        { widget_id: doomed, x: 0, y: 0, w: 1, h: 1 },
        { widget_id: w.widgetId, x: 1, y: 0, w: 1, h: 1 },
      ],
      selectors: [{ id: 's', name: 'Город', field_id: w.fieldId, widget_ids: [doomed, w.widgetId] }],
      parameters: [{ name: 'p', value: 'x', widget_ids: [doomed] }],
    });
    const a = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    const b = await postDashboard(api, cast.tokens.wsAdmin, cast.workspaceId);
    const aSaved = ok<DashboardSchema>(
      await api.put(`/api/dashboard/${a.id}/schema`, withDoomed(), cast.tokens.editor),
    );
    ok(await api.put(`/api/dashboard/${b.id}/schema`, withDoomed(), cast.tokens.wsAdmin));

    const deps = ok<z.output<typeof dependenciesOutput>>(
      await api.get(`/api/dataset/${w.datasetId}/dependencies`, cast.tokens.viewer),
    );
    expect(deps.dashboards.map((d) => d.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    const onSource = ok<z.output<typeof listObjectsOutput>>(
      await api.get(`/api/data-source/${w.sourceId}/objects`, cast.tokens.viewer),
    );
    expect(onSource.content).toEqual(
      expect.arrayContaining([
        { type: 'dashboard', id: a.id, name: a.name, workspace_id: cast.workspaceId },
        { type: 'dashboard', id: b.id, name: b.name, workspace_id: cast.workspaceId },
      ]),
    );

    ok(await api.delete(`/api/widget/${doomed}`, cast.tokens.editor));
    for (const id of [a.id, b.id]) {
      const after = ok<DashboardSchema>(await api.get(`/api/dashboard/${id}/schema`, cast.tokens.viewer));
      expect(after).toMatchObject({
        items: [{ widget_id: w.widgetId }],
        selectors: [{ id: 's', widget_ids: [w.widgetId] }],
        parameters: [{ name: 'p', widget_ids: [] }],
      });
      expect(after.items).toHaveLength(1);
    }
    const aAfter = ok<DashboardDetails>(await api.get(`/api/dashboard/${a.id}`, cast.tokens.viewer));
    expect(aAfter.widget_ids).toEqual([w.widgetId]);
    expect(Date.parse(aAfter.updated_at)).toBeGreaterThan(Date.parse(aSaved.updated_at));
    const listed = ok<DashboardPage>(
      await api.get('/api/dashboard', cast.tokens.viewer, { workspaceId: String(cast.workspaceId) }),
    );
    expect(listed.content.map((d) => d.id)).toEqual(expect.arrayContaining([a.id, b.id]));
  });
});

describe('PUT /api/widget/{id} onto a dataset of another workspace', () => {
  it('a layout saved while its widget is deleted never keeps the deleted widget', async () => {
    // Both requests at once, many times: either the save sees the widget gone (422) or the delete cleans the saved
    // layout; never both 200 with the widget left in the layout.
    const dashboard = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    for (let round = 0; round < 15; round++) {
      const doomed = ok<z.output<typeof widgetView>>(
        await api.post('/api/widget', widgetOver(w.datasetId), cast.tokens.editor),
      ).id;
      const body = { items: [{ widget_id: doomed, x: 0, y: 0, w: 1, h: 1 }] };
      const [saved, deleted] = await Promise.all([
        api.put(`/api/dashboard/${dashboard.id}/schema`, body, cast.tokens.editor),
        api.delete(`/api/widget/${doomed}`, cast.tokens.editor),
      ]);
      expect(deleted.status).toBe(200);
      expect([200, 422]).toContain(saved.status);
      const now = ok<DashboardSchema>(await api.get(`/api/dashboard/${dashboard.id}/schema`, cast.tokens.editor));
      expect(now.items.map((i) => i.widget_id)).not.toContain(doomed);
    }
  });

  it('moves the widget there, and the layouts it leaves behind stop showing it', async () => {
    const moving = ok<z.output<typeof widgetView>>(
      await api.post('/api/widget', widgetOver(w.datasetId), cast.tokens.editor),
    ).id;
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    ok(
      await api.put(
        `/api/dashboard/${d.id}/schema`,
        {
          items: [
            { widget_id: moving, x: 0, y: 0, w: 1, h: 1 },
            { widget_id: w.widgetId, x: 1, y: 0, w: 1, h: 1 },
          ],
        },
        cast.tokens.editor,
      ),
    );
    const moved = await api.put(`/api/widget/${moving}`, widgetOver(elsewhere.datasetId), cast.tokens.editor);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const after = ok<DashboardSchema>(await api.get(`/api/dashboard/${d.id}/schema`, cast.tokens.viewer));
    expect(after.items.map((i) => i.widget_id)).toEqual([w.widgetId]);
  });
});
