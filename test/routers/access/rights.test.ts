import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { and, eq } from 'drizzle-orm';
import type { z } from 'zod';
import { objectRights } from '../../../db/schema/object-rights';
import type { listRightsOutput, removedRightOutput, rightItem } from '../../../routers/access/schemas';
import type { dataSourceView, listDataSourcesOutput } from '../../../routers/data-sources/schemas';
import type { datasetPreviewOutput, fieldValuesOutput } from '../../../routers/datasets/data-procedures';
import { useTestApp } from '../../support/app';
import {
  addToGroup,
  createDashboardRow,
  createGroup,
  createRoleCast,
  createUser,
  login,
  type RoleCast,
  type TestUser,
} from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { DashboardDetails, DashboardPage } from '../dashboards/world';
import type { DatasetDetails, DatasetPage } from '../datasets/helpers';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
  type WidgetPage,
  type WidgetView,
} from '../widgets/world';

/*
 * Rights on one object (GET, PUT and DELETE /api/access/{objectType}/{objectId}/...): the owner grants, changes and
 * removes them; a `view` right lets a non-member read that object (details, lists, widget data), an `edit` right
 * makes them an owner (the specification's access legend): they change it, delete it and manage its rights.
 */

type Rights = z.output<typeof listRightsOutput>;
type RightItem = z.output<typeof rightItem>;
type Removed = z.output<typeof removedRightOutput>;

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let sourceId: number;
let datasetId: number;
let productField: number;
/** A user of no workspace of the cast, and their session. */
let outsider: TestUser;
let outsiderToken: string;

async function createWidget(name = 'w'): Promise<number> {
  const res = await api.post('/api/widget', widgetBody(name), cast.tokens.wsAdmin);
  return ok<WidgetView>(res).id;
}
const widgetBody = (name: string) => ({
  name,
  type: 'bar',
  dataset_id: datasetId,
  rows: [{ id: 'region', sql: '[regions.name]' }],
  columns: [{ id: 'total', sql: 'SUM([sales.amount])' }],
});

const userPath = (type: string, id: number, userId: number) => `/api/access/${type}/${id}/users/${userId}`;
const groupPath = (type: string, id: number, groupId: number) => `/api/access/${type}/${id}/groups/${groupId}`;
const grantUser = (type: string, id: number, userId: number, right: string, token = cast.tokens.wsAdmin) =>
  api.put(userPath(type, id, userId), { right }, token);
const rightsOf = async (type: string, id: number) =>
  ok<Rights>(await api.get(`/api/access/${type}/${id}`, cast.tokens.wsAdmin)).items;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(30));
  sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const dataset = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId,
    tables,
  });
  datasetId = dataset.id;
  productField = dataset.fieldId('product');
  outsider = await createUser(t.deps);
  outsiderToken = await login(api, outsider.username, outsider.password);
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('granting, changing and removing rights', () => {
  it('a user right: granted, changed, listed and removed by the owner', async () => {
    const widgetId = await createWidget();
    const granted = ok<RightItem>(await grantUser('widget', widgetId, outsider.id, 'view'));
    expect(granted).toEqual({ subject_type: 'user', subject_id: outsider.id, name: outsider.username, right: 'view' });
    expect(await rightsOf('widget', widgetId)).toEqual([granted]);

    ok<RightItem>(await grantUser('widget', widgetId, outsider.id, 'edit'));
    expect(await rightsOf('widget', widgetId)).toEqual([{ ...granted, right: 'edit' }]);

    const removed = ok<Removed>(await api.delete(userPath('widget', widgetId, outsider.id), cast.tokens.wsAdmin));
    expect(removed).toEqual({ subject_type: 'user', subject_id: outsider.id, removed: true });
    expect(await rightsOf('widget', widgetId)).toEqual([]);

    const again = failure(await api.delete(userPath('widget', widgetId, outsider.id), cast.tokens.wsAdmin));
    expect(again.code).toBe(404);
    expect(again.message).toBe(`У пользователя нет прав на этот объект (id ${outsider.id})`);
  });

  it('a group right: granted, changed, listed and removed; users come before groups in the list', async () => {
    const group = await createGroup(t.deps);
    const path = groupPath('dataset', datasetId, group.id);
    const granted = ok<RightItem>(await api.put(path, { right: 'edit' }, cast.tokens.wsAdmin));
    expect(granted).toEqual({ subject_type: 'group', subject_id: group.id, name: group.name, right: 'edit' });
    ok(await grantUser('dataset', datasetId, outsider.id, 'view'));
    expect(await rightsOf('dataset', datasetId)).toEqual([
      { subject_type: 'user', subject_id: outsider.id, name: outsider.username, right: 'view' },
      granted,
    ]);

    ok(await api.put(path, { right: 'view' }, cast.tokens.wsAdmin));
    expect((await rightsOf('dataset', datasetId)).find((r) => r.subject_type === 'group')?.right).toBe('view');

    expect(ok<Removed>(await api.delete(path, cast.tokens.wsAdmin))).toEqual({
      subject_type: 'group',
      subject_id: group.id,
      removed: true,
    });
    ok(await api.delete(userPath('dataset', datasetId, outsider.id), cast.tokens.wsAdmin));
    expect(await rightsOf('dataset', datasetId)).toEqual([]);
  });

  it('the specification spelling data-source and the kind name data_source name the same type', async () => {
    const user = await createUser(t.deps);
    ok(await grantUser('data-source', sourceId, user.id, 'view'));
    expect((await rightsOf('data_source', sourceId)).map((r) => r.subject_id)).toContain(user.id);
    ok(await api.delete(userPath('data_source', sourceId, user.id), cast.tokens.wsAdmin));
    expect((await rightsOf('data-source', sourceId)).map((r) => r.subject_id)).not.toContain(user.id);
  });
});

describe('what a right gives', () => {
  it('view: a non-member reads the widget, sees it in the list and reads its data, but cannot change it', async () => {
    const widgetId = await createWidget('viewed');
    const user = await createUser(t.deps);
    const token = await login(api, user.username, user.password);
    expect(failure(await api.get(`/api/widget/${widgetId}`, token)).code).toBe(404);
    expect(failure(await api.post(`/api/widget/${widgetId}/data`, {}, token)).code).toBe(404);

    ok(await grantUser('widget', widgetId, user.id, 'view'));
    expect(ok<WidgetView>(await api.get(`/api/widget/${widgetId}`, token)).name).toBe('viewed');
    const page = ok<WidgetPage>(await api.get('/api/widget', token));
    expect(page.content.map((w) => w.id)).toEqual([widgetId]);
    const data = ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, {}, token));
    expect(data.rows.length).toBe(3);

    const update = failure(await api.put(`/api/widget/${widgetId}`, widgetBody('renamed'), token));
    expect(update.code).toBe(403);
    expect(update.message).toBe('Доступ запрещён');
    // Per object: the widget's dataset stays hidden.
    expect(failure(await api.get(`/api/dataset/${datasetId}`, token)).code).toBe(404);
  });

  it('view on a dataset and a source: details and lists', async () => {
    const user = await createUser(t.deps);
    const token = await login(api, user.username, user.password);
    ok(await grantUser('dataset', datasetId, user.id, 'view'));
    ok(await grantUser('data-source', sourceId, user.id, 'view'));
    expect(ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, token)).id).toBe(datasetId);
    expect(ok<DatasetPage>(await api.get('/api/dataset', token)).content.map((d) => d.id)).toEqual([datasetId]);
    const source = ok<z.output<typeof dataSourceView>>(await api.get(`/api/data-source/${sourceId}`, token));
    expect(source.can_edit).toBe(false);
    const sources = ok<z.output<typeof listDataSourcesOutput>>(await api.get('/api/data-source', token));
    expect(sources.content.map((s) => s.id)).toContain(sourceId);
    expect(failure(await api.put(`/api/dataset/${datasetId}`, { name: 'x' }, token)).code).toBe(403);

    // Its data: field values and preview (the dataset's author still reads its source: the source rule holds).
    const values = ok<z.output<typeof fieldValuesOutput>>(
      await api.get(`/api/dataset/${datasetId}/field-values`, token, { fieldId: String(productField) }),
    );
    expect(values.values.length).toBeGreaterThan(0);
    const preview = ok<z.output<typeof datasetPreviewOutput>>(
      await api.post(`/api/dataset/${datasetId}/preview`, { limit: 3 }, token),
    );
    expect(preview.rows.length).toBe(3);

    ok(await grantUser('data-source', sourceId, user.id, 'edit'));
    const editable = ok<z.output<typeof dataSourceView>>(await api.get(`/api/data-source/${sourceId}`, token));
    expect(editable.can_edit).toBe(true);
    // An owner now: the delete is allowed, and refused only because the dataset still reads the source.
    expect(failure(await api.delete(`/api/data-source/${sourceId}`, token)).code).toBe(400);
  });

  it('edit: a non-member owns the object: changes it, manages its rights, deletes it; builds nothing new', async () => {
    const user = await createUser(t.deps);
    const token = await login(api, user.username, user.password);
    const widgetId = await createWidget('edited');
    ok(await grantUser('widget', widgetId, user.id, 'edit'));
    // Saving a widget reads its dataset: a right on the dataset too (rights are per object).
    ok(await grantUser('dataset', datasetId, user.id, 'view'));
    expect(ok<WidgetView>(await api.put(`/api/widget/${widgetId}`, widgetBody('renamed'), token)).name).toBe('renamed');
    ok(await grantUser('widget', widgetId, outsider.id, 'view', token));
    expect(ok<Rights>(await api.get(`/api/access/widget/${widgetId}`, token)).items.map((i) => i.subject_id)).toEqual(
      expect.arrayContaining([user.id, outsider.id]),
    );
    // Building on it needs a role in its workspace, which a right never gives.
    expect(failure(await api.post('/api/widget', widgetBody('new'), token)).code).toBe(403);
    ok(await api.delete(`/api/widget/${widgetId}`, token));
    expect(
      await t.deps.db
        .select()
        .from(objectRights)
        .where(and(eq(objectRights.objectType, 'widget'), eq(objectRights.objectId, widgetId))),
    ).toEqual([]);

    ok(await grantUser('dataset', datasetId, user.id, 'edit'));
    const renamed = `ds-${user.id}`;
    expect(ok<DatasetDetails>(await api.put(`/api/dataset/${datasetId}`, { name: renamed }, token)).name).toBe(renamed);
    ok(await api.delete(userPath('dataset', datasetId, user.id), cast.tokens.wsAdmin));
  });

  it('a dashboard takes rights like every other kind: read with view, own with edit', async () => {
    const dashboard = await createDashboardRow(t.deps, {
      workspaceId: cast.workspaceId,
      authorId: cast.users.wsAdmin.id,
    });
    const user = await createUser(t.deps);
    const token = await login(api, user.username, user.password);
    expect(failure(await api.get(`/api/dashboard/${dashboard.id}`, token)).code).toBe(404);
    ok(await grantUser('dashboard', dashboard.id, user.id, 'view'));
    expect(ok<DashboardDetails>(await api.get(`/api/dashboard/${dashboard.id}`, token)).name).toBe(dashboard.name);
    expect(ok<DashboardPage>(await api.get('/api/dashboard', token)).content.map((d) => d.id)).toEqual([dashboard.id]);
    expect(failure(await api.put(`/api/dashboard/${dashboard.id}`, { name: 'x' }, token)).code).toBe(403);
    ok(await grantUser('dashboard', dashboard.id, user.id, 'edit'));
    expect(ok<DashboardDetails>(await api.put(`/api/dashboard/${dashboard.id}`, { name: 'x' }, token)).name).toBe('x');
    ok(await api.delete(`/api/dashboard/${dashboard.id}`, token));
    expect(
      await t.deps.db
        .select()
        .from(objectRights)
        .where(and(eq(objectRights.objectType, 'dashboard'), eq(objectRights.objectId, dashboard.id))),
    ).toEqual([]);
  });

  it("a group's right reaches its members", async () => {
    const widgetId = await createWidget();
    const group = await createGroup(t.deps);
    const user = await createUser(t.deps);
    await addToGroup(t.deps, user.id, group.id);
    const token = await login(api, user.username, user.password);
    expect(failure(await api.post(`/api/widget/${widgetId}/data`, {}, token)).code).toBe(404);
    ok(await api.put(groupPath('widget', widgetId, group.id), { right: 'view' }, cast.tokens.wsAdmin));
    expect(ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, {}, token)).rows.length).toBe(3);
    expect(ok<WidgetPage>(await api.get('/api/widget', token)).content.map((w) => w.id)).toEqual([widgetId]);
  });

  it('removing a right takes effect at once, cached widget reads included', async () => {
    const widgetId = await createWidget();
    const user = await createUser(t.deps);
    const token = await login(api, user.username, user.password);
    ok(await grantUser('widget', widgetId, user.id, 'view'));
    ok(await api.post(`/api/widget/${widgetId}/data`, {}, token));
    ok(await api.post(`/api/widget/${widgetId}/data`, {}, token));
    ok(await api.delete(userPath('widget', widgetId, user.id), cast.tokens.wsAdmin));
    const gone = failure(await api.post(`/api/widget/${widgetId}/data`, {}, token));
    expect(gone.code).toBe(404);
    expect(gone.message).toBe(`Виджет не найден (id ${widgetId})`);
    expect(failure(await api.get(`/api/widget/${widgetId}`, token)).code).toBe(404);
    expect(ok<WidgetPage>(await api.get('/api/widget', token)).content).toEqual([]);
  });
});

describe('who manages rights, and bad input', () => {
  it('the workspace Администратор and the author with an editing role manage; other members get 403', async () => {
    const res = await api.post('/api/widget', widgetBody('by editor'), cast.tokens.editor);
    const widgetId = ok<WidgetView>(res).id;
    ok(await grantUser('widget', widgetId, outsider.id, 'view', cast.tokens.editor));
    ok(await grantUser('widget', widgetId, outsider.id, 'view', cast.tokens.wsAdmin));
    const adminWidget = await createWidget();
    for (const token of [cast.tokens.editor, cast.tokens.viewer]) {
      const denied = failure(await grantUser('widget', adminWidget, outsider.id, 'view', token));
      expect(denied.code).toBe(403);
      expect(denied.message).toBe('Доступ запрещён');
    }
    // A system administrator reads every workspace but owns nothing there.
    expect(failure(await api.get(`/api/access/widget/${adminWidget}`, cast.tokens.sysadmin)).code).toBe(403);
  });

  it('another workspace without rights: 404 with the kind message, nothing saved', async () => {
    const widgetId = await createWidget();
    const listed = failure(await api.get(`/api/access/widget/${widgetId}`, outsiderToken));
    expect(listed.code).toBe(404);
    expect(listed.message).toBe(`Виджет не найден (id ${widgetId})`);
    expect(failure(await grantUser('widget', widgetId, outsider.id, 'edit', outsiderToken)).code).toBe(404);
    expect(failure(await grantUser('widget', widgetId, outsider.id, 'edit', cast.tokens.plain)).code).toBe(404);
    expect(await rightsOf('widget', widgetId)).toEqual([]);
  });

  it('an unknown object type, right, user, group or object: clear errors, nothing saved', async () => {
    const widgetId = await createWidget();
    const badType = failure(await grantUser('report', widgetId, outsider.id, 'view'));
    expect(badType.code).toBe(422);
    expect(badType.errors?.objectType).toBe(
      'Неизвестный тип объекта: допустимы data-source, dataset, widget, dashboard',
    );
    expect(failure(await api.get(`/api/access/report/${widgetId}`, cast.tokens.wsAdmin)).code).toBe(422);

    const badRight = failure(await grantUser('widget', widgetId, outsider.id, 'own'));
    expect(badRight.code).toBe(422);
    expect(badRight.errors?.right).toBe('Право должно быть view или edit');

    const noUser = failure(await grantUser('widget', widgetId, 2_000_000_000, 'view'));
    expect(noUser.code).toBe(404);
    expect(noUser.message).toBe('Пользователь не найден (id 2000000000)');
    const noGroup = failure(
      await api.put(groupPath('widget', widgetId, 2_000_000_000), { right: 'view' }, cast.tokens.wsAdmin),
    );
    expect(noGroup.code).toBe(404);
    expect(noGroup.message).toBe('Группа не найдена (id 2000000000)');
    expect(await rightsOf('widget', widgetId)).toEqual([]);

    const noObject = failure(await grantUser('dataset', 2_000_000_000, outsider.id, 'view'));
    expect(noObject.code).toBe(404);
    expect(noObject.message).toMatch(/не найден/);
  });
});

describe('no right outlives its object', () => {
  const rowsOf = (type: string, id: number) =>
    t.deps.db
      .select()
      .from(objectRights)
      .where(and(eq(objectRights.objectType, type), eq(objectRights.objectId, id)));

  it('deleting a widget deletes its rights', async () => {
    const widgetId = await createWidget();
    ok(await grantUser('widget', widgetId, outsider.id, 'view'));
    expect(await rowsOf('widget', widgetId)).toHaveLength(1);
    ok(await api.delete(`/api/widget/${widgetId}`, cast.tokens.wsAdmin));
    expect(await rowsOf('widget', widgetId)).toEqual([]);
  });

  it('deleting a workspace deletes the rights on its objects', async () => {
    const workspaceId = await cast.newWorkspace();
    const source = await createPgSource(t.deps, workspaceId, cast.users.wsAdmin.id);
    ok(await grantUser('data-source', source, outsider.id, 'view'));
    ok(await api.delete(`/api/workspaces/${workspaceId}`, cast.tokens.wsAdmin));
    expect(await rowsOf('data_source', source)).toEqual([]);
  });
});
