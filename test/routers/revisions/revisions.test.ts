import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import { eq } from 'drizzle-orm';
import { dataSources } from '../../../db/schema/data-sources';
import { openSecrets } from '../../../server/data-sources/connection';
import type { restoreOutput, revisionDetails, revisionDiff, revisionPage } from '../../../routers/revisions/router';
import type { dashboardSchemaView, dashboardView } from '../../../routers/dashboards/schemas';
import type { dataSourceView } from '../../../routers/data-sources/schemas';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { DatasetDetails } from '../datasets/helpers';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type WidgetView,
} from '../widgets/world';

type RevisionPage = z.output<typeof revisionPage>;
type RevisionDetails = z.output<typeof revisionDetails>;
type RevisionDiff = z.output<typeof revisionDiff>;
type Restored = z.output<typeof restoreOutput>;
type DashboardView = z.output<typeof dashboardView>;
type DashboardSchema = z.output<typeof dashboardSchemaView>;
type SourceView = z.output<typeof dataSourceView>;

/*
 * Revisions over REST: every save of a data source, dataset, widget or dashboard is a revision; a diff says what
 * changed; a restore writes an old revision back (ids kept) as a new one. Built on the widget tests' sales world (a
 * real PostgreSQL table, a source row, a dataset saved through the API).
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let sourceId: number;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(10));
  sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

const owner = () => cast.tokens.wsAdmin!;
const list = async (base: string, id: number, token = owner()) =>
  ok<RevisionPage>(await api.get(`${base}/${id}/revisions`, token, { size: '100' }));
const revs = async (base: string, id: number) => (await list(base, id)).content.map((r) => r.rev);
const revision = async (base: string, id: number, rev: number) =>
  ok<RevisionDetails>(await api.get(`${base}/${id}/revisions/${rev}`, owner()));
const diff = async (base: string, id: number, rev: number, against?: number) =>
  ok<RevisionDiff>(
    await api.get(
      `${base}/${id}/revisions/${rev}/diff`,
      owner(),
      against === undefined ? undefined : { against: String(against) },
    ),
  );
const restore = async (base: string, id: number, rev: number, token = owner()) =>
  ok<Restored>(await api.post(`${base}/${id}/revisions/${rev}/restore`, undefined, token));

const salesDataset = () => createSalesDataset(api, owner(), { workspaceId: cast.workspaceId, sourceId, tables });

const widgetBody = (datasetId: number, over: Record<string, unknown> = {}) => ({
  name: 'Выручка по регионам',
  type: 'bar',
  dataset_id: datasetId,
  rows: [{ id: 'region', alias: 'Регион', sql: '[regions.name]' }],
  columns: [{ id: 'total', alias: 'Выручка', sql: 'SUM([sales.amount])' }],
  filters: [{ sql: '[sales.product]', op: 'in', values: ['чай'], value_type: 'string' }],
  sorts: [{ field_id: 'total', direction: 'desc' }],
  ...over,
});

const createWidget = async (datasetId: number, over: Record<string, unknown> = {}) =>
  ok<WidgetView>(await api.post('/api/widget', widgetBody(datasetId, over), owner()));

/** What a GET answers that a restore moves on purpose (edit time, version). */
const stable = <T extends object>(o: T) => {
  const { updated_at: _u, version: _v, ...rest } = o as T & { updated_at?: unknown; version?: unknown };
  return rest;
};

describe('dataset revisions', () => {
  it('records create and schema save; diff names the changed fields; a restore puts the schema back with its ids', async () => {
    const ds = await salesDataset();
    const at2 = ok<DatasetDetails>(await api.get(`/api/dataset/${ds.id}`, owner()));
    const page = await list('/api/dataset', ds.id);
    expect(page.content.map((r) => [r.rev, r.change])).toEqual([
      [2, 'schema_saved'],
      [1, 'created'],
    ]);
    expect(page.content[0].author).toEqual({ id: cast.users.wsAdmin.id, name: cast.users.wsAdmin.username });
    expect(page.page.total_elements).toBe(2);

    // rev 3: a row rule (part of the definition); rev 4: settings; rev 5: a schema save that drops `qty`, retitles
    // `amount` and adds a calculated field.
    const amount = ds.fieldId('amount');
    const qty = ds.fieldId('qty');
    const rule = await api.post(
      `/api/dataset/${ds.id}/rls-rules`,
      { field_id: ds.fieldId('product'), attribute: 'product', operator: 'in', user_ids: [], group_ids: [] },
      owner(),
    );
    expect(rule.status).toBe(200);
    expect(
      (await api.put(`/api/dataset/${ds.id}`, { name: 'Продажи (новое)', description: 'другое' }, owner())).status,
    ).toBe(200);
    const schema = {
      objects: at2.objects.map((o) => ({ ...o })),
      fields: [
        ...at2.fields.filter((f) => f.id !== qty).map((f) => (f.id === amount ? { ...f, title: 'Сумма продажи' } : f)),
        { id: -1, name: 'Средняя', formula: 'AVG([sales.amount])' },
      ],
      relations: at2.relations,
      hierarchies: at2.hierarchies,
      filters: at2.filters,
      parameters: at2.parameters,
    };
    const saved = await api.put(`/api/dataset/${ds.id}/schema`, schema, owner());
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(await revs('/api/dataset', ds.id)).toEqual([5, 4, 3, 2, 1]);

    const changes = (await diff('/api/dataset', ds.id, 2)).changes;
    const paths = changes.map((c) => c.path);
    expect(paths).toContain('row.name');
    expect(paths).toContain('row.description');
    expect(changes.find((c) => c.path === `children.dataset_fields[id=${amount}].title`)).toMatchObject({
      change: 'changed',
      new: 'Сумма продажи',
    });
    expect(changes.find((c) => c.path === `children.dataset_fields[id=${qty}]`)).toMatchObject({ change: 'removed' });
    expect(changes.some((c) => c.path.startsWith('children.dataset_rls_rules[') && c.change === 'added')).toBe(true);
    expect(
      changes.filter((c) => c.path.startsWith('children.dataset_fields[id=') && c.change === 'added'),
    ).toHaveLength(1);
    // against an earlier revision: only what changed up to it
    expect((await diff('/api/dataset', ds.id, 2, 3)).changes.map((c) => c.path)).toEqual([
      expect.stringMatching(/^children\.dataset_rls_rules\[id=\d+\]$/),
    ]);

    const restored = await restore('/api/dataset', ds.id, 2);
    expect(restored.missing).toEqual([]);
    expect(restored.revision).toMatchObject({ rev: 6, change: 'restored', author: { id: cast.users.wsAdmin.id } });
    const now = ok<DatasetDetails>(await api.get(`/api/dataset/${ds.id}`, owner()));
    expect(stable(now)).toEqual(stable(at2));
    expect(now.fields.find((f) => f.id === qty)).toMatchObject({ name: 'qty' }); // same id as before
    expect(now.version).toBeGreaterThan(at2.version); // a restore is a save: caches keyed by version move on
    const rules = ok<{ rules: unknown[] }>(await api.get(`/api/dataset/${ds.id}/rls-rules`, owner()));
    expect(rules.rules).toEqual([]);
    expect((await diff('/api/dataset', ds.id, 2, 6)).changes).toEqual([]);
    expect((await diff('/api/dataset', ds.id, 2)).against).toBe(6);
  });

  it('reports a source that is gone and the objects on it instead of writing them back', async () => {
    const other = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
    const ds = ok<DatasetDetails>(
      await api.post(
        '/api/dataset',
        { name: 'Две базы', workspace_id: cast.workspaceId, live: true, data_source_ids: [sourceId, other] },
        owner(),
      ),
    );
    const full = {
      objects: [
        { id: -1, data_source_id: sourceId, name: 'sales', schema: 'public', table: tables.sales },
        { id: -2, data_source_id: other, name: 'regions', schema: 'public', table: tables.regions },
      ],
      fields: [
        { id: -11, object_id: -1, name: 'region_id', column: 'region_id', primitive_type: 'integer' },
        { id: -12, object_id: -1, name: 'amount', column: 'amount', primitive_type: 'float' },
        { id: -21, object_id: -2, name: 'id', column: 'id', primitive_type: 'integer' },
        { id: -22, object_id: -2, name: 'name', column: 'name', primitive_type: 'string' },
      ],
      relations: [
        {
          id: -41,
          left_object_id: -1,
          right_object_id: -2,
          join_type: 'left',
          conditions: [{ left_field_id: -11, right_field_id: -21 }],
        },
      ],
      hierarchies: [],
      filters: [],
      parameters: [],
    };
    const at2 = ok<DatasetDetails>(await api.put(`/api/dataset/${ds.id}/schema`, full, owner()));
    const sales = at2.objects.find((o) => o.name === 'sales')!;
    const salesFields = at2.fields.filter((f) => f.object_id === sales.id);
    const onlySales = {
      objects: [sales],
      fields: salesFields,
      relations: [],
      hierarchies: [],
      filters: [],
      parameters: [],
    };
    expect((await api.put(`/api/dataset/${ds.id}/schema`, onlySales, owner())).status).toBe(200);
    expect((await api.put(`/api/dataset/${ds.id}`, { data_source_ids: [sourceId] }, owner())).status).toBe(200);
    expect((await api.delete(`/api/data-source/${other}`, owner())).status).toBe(200);

    const back = await restore('/api/dataset', ds.id, 2);
    expect(back.missing).toEqual([
      `источник данных id ${other} (датасет id ${ds.id}; не восстановлены объекты «regions»)`,
    ]);
    const now = ok<DatasetDetails>(await api.get(`/api/dataset/${ds.id}`, owner()));
    expect(now.objects).toEqual([sales]);
    expect(now.fields).toEqual(salesFields);
    expect(now.relations).toEqual([]);
  });

  it('shows a reader who does not own the dataset its revisions without the security rules', async () => {
    const ds = await salesDataset();
    await api.post(
      `/api/dataset/${ds.id}/cls-rules`,
      { field_ids: [ds.fieldId('qty')], action: 'hide', user_ids: [cast.users.viewer.id], group_ids: [] },
      owner(),
    );
    const mine = await revision('/api/dataset', ds.id, 3);
    expect(mine.snapshot.children!.dataset_cls_rules).toHaveLength(1);
    const theirs = ok<RevisionDetails>(await api.get(`/api/dataset/${ds.id}/revisions/3`, cast.tokens.viewer));
    expect(theirs.snapshot.children!.dataset_cls_rules).toBeUndefined();
    expect(theirs.snapshot.children!.dataset_fields.map((f) => f.id)).not.toContain(ds.fieldId('qty'));
    expect(theirs.snapshot.children!.dataset_fields.length).toBe(mine.snapshot.children!.dataset_fields.length - 1);
  });
});

describe('widget revisions', () => {
  it('save -> diff -> restore round-trips every field', async () => {
    const ds = await salesDataset();
    const first = await createWidget(ds.id);
    const changed = ok<WidgetView>(
      await api.put(
        `/api/widget/${first.id}`,
        widgetBody(ds.id, {
          name: 'Количество',
          type: 'line',
          columns: [{ id: 'q', alias: 'Штук', sql: 'SUM([sales.qty])' }],
          sorts: [],
          filters: [],
        }),
        owner(),
      ),
    );
    expect(changed.name).toBe('Количество');
    const page = await list('/api/widget', first.id);
    expect(page.content.map((r) => [r.rev, r.change, r.deployment_id])).toEqual([
      [2, 'saved', null],
      [1, 'created', null],
    ]);
    const changes = (await diff('/api/widget', first.id, 1)).changes;
    expect(changes).toContainEqual({
      path: 'row.name',
      change: 'changed',
      old: 'Выручка по регионам',
      new: 'Количество',
    });
    expect(changes).toContainEqual({ path: 'row.type', change: 'changed', old: 'bar', new: 'line' });
    expect(changes.some((c) => c.path.startsWith('row.config.filters'))).toBe(true);
    const snap = await revision('/api/widget', first.id, 1);
    expect(snap.snapshot.row).toMatchObject({
      id: first.id,
      name: 'Выручка по регионам',
      type: 'bar',
      dataset_id: ds.id,
    });
    expect(snap.snapshot.row).not.toHaveProperty('updated_at');

    const restored = await restore('/api/widget', first.id, 1);
    expect(restored).toMatchObject({ revision: { rev: 3, change: 'restored' }, missing: [] });
    const now = ok<WidgetView>(await api.get(`/api/widget/${first.id}`, owner()));
    expect(stable(now)).toEqual(stable(first));
    expect((await diff('/api/widget', first.id, 1, 3)).changes).toEqual([]);
  });

  it('a failed save leaves no revision', async () => {
    const ds = await salesDataset();
    const w = await createWidget(ds.id);
    const bad = await api.put(
      `/api/widget/${w.id}`,
      widgetBody(ds.id, { columns: [{ id: 'x', sql: 'SUM([sales.nope])' }] }),
      owner(),
    );
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    expect(await revs('/api/widget', w.id)).toEqual([1]);
    // the same for a dataset schema save refused by its checks
    const refused = await api.put(
      `/api/dataset/${ds.id}/schema`,
      {
        objects: [],
        fields: [{ id: -1, name: 'x', formula: 'SUM(' }],
        relations: [],
        hierarchies: [],
        filters: [],
        parameters: [],
      },
      owner(),
    );
    expect(refused.status).toBe(422);
    expect(await revs('/api/dataset', ds.id)).toEqual([2, 1]);
  });

  it('answers 404 to a user who cannot read the object, 403 to a reader who restores, 401 without a token', async () => {
    const ds = await salesDataset();
    const w = await createWidget(ds.id);
    const hidden = await api.get(`/api/widget/${w.id}/revisions`, cast.tokens.plain);
    expect(hidden.status).toBe(404);
    expect(failure(hidden).message).toBe(`Виджет не найден (id ${w.id})`);
    expect((await api.get(`/api/widget/${w.id}/revisions/1`, cast.tokens.plain)).status).toBe(404);
    expect((await api.get(`/api/widget/${w.id}/revisions/1/diff`, cast.tokens.plain)).status).toBe(404);
    expect((await api.post(`/api/widget/${w.id}/revisions/1/restore`, undefined, cast.tokens.plain)).status).toBe(404);
    expect((await list('/api/widget', w.id, cast.tokens.viewer!)).content).toHaveLength(1);
    const denied = await api.post(`/api/widget/${w.id}/revisions/1/restore`, undefined, cast.tokens.viewer);
    expect(denied.status).toBe(403);
    expect(await revs('/api/widget', w.id)).toEqual([1]);
    expect((await api.get(`/api/widget/${w.id}/revisions`)).status).toBe(401);
  });

  it('refuses bad input: rev 0, ids beyond int4, an unknown revision (404 in Russian)', async () => {
    const ds = await salesDataset();
    const w = await createWidget(ds.id);
    const zero = await api.get(`/api/widget/${w.id}/revisions/0`, owner());
    expect(zero.status).toBe(422);
    expect(Object.keys(failure(zero).errors!)).toEqual(['rev']);
    expect((await api.post(`/api/widget/${w.id}/revisions/0/restore`, undefined, owner())).status).toBe(422);
    const huge = await api.get(`/api/widget/99999999999/revisions`, owner());
    expect(huge.status).toBe(422);
    expect(Object.keys(failure(huge).errors!)).toEqual(['id']);
    expect((await api.get(`/api/widget/${w.id}/revisions/99999999999`, owner())).status).toBe(422);
    const against = await api.get(`/api/widget/${w.id}/revisions/1/diff`, owner(), { against: '0' });
    expect(against.status).toBe(422);
    const unknown = await api.get(`/api/widget/${w.id}/revisions/999`, owner());
    expect(unknown.status).toBe(404);
    expect(failure(unknown).message).toBe('Версия 999 не найдена');
    const unknownRestore = await api.post(`/api/widget/${w.id}/revisions/7/restore`, undefined, owner());
    expect(unknownRestore.status).toBe(404);
    expect(failure(unknownRestore).message).toBe('Версия 7 не найдена');
    expect((await api.get(`/api/widget/${w.id}/revisions/1/diff`, owner(), { against: '5' })).status).toBe(404);
    const paged = await api.get(`/api/widget/${w.id}/revisions`, owner(), { page: '-1' });
    expect(paged.status).toBe(422);
    expect(await revs('/api/widget', w.id)).toEqual([1]);
  });

  it('serialises concurrent restores and saves of one widget: numbers unique and contiguous, the last one wins', async () => {
    const ds = await salesDataset();
    const w = await createWidget(ds.id);
    // Twelve at once, more than the test app's pool holds (five): a save must not hold its row lock while it waits
    // for another pool connection, or saves of one widget would wait for each other forever.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0
          ? api.post(`/api/widget/${w.id}/revisions/1/restore`, undefined, owner())
          : api.put(`/api/widget/${w.id}`, widgetBody(ds.id, { name: `Вариант ${i}` }), owner()),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    const numbers = await revs('/api/widget', w.id);
    expect(numbers).toEqual(Array.from({ length: 13 }, (_, i) => 13 - i));
    const last = await revision('/api/widget', w.id, 13);
    const now = ok<WidgetView>(await api.get(`/api/widget/${w.id}`, owner()));
    expect(now.name).toBe(last.snapshot.row.name);
    expect((await diff('/api/widget', w.id, 13)).changes).toEqual([]);
    // every restore wrote rev 1's state: the revision it recorded equals rev 1
    const restores = (await list('/api/widget', w.id)).content.filter((r) => r.change === 'restored');
    expect(restores).toHaveLength(6);
    for (const r of restores) expect((await diff('/api/widget', w.id, 1, r.rev)).changes).toEqual([]);
  });
});

describe('dashboard revisions', () => {
  it('save -> diff -> restore round-trips name and layout; a deleted widget is reported, not silently dropped', async () => {
    const ds = await salesDataset();
    const [w1, w2] = [await createWidget(ds.id), await createWidget(ds.id, { name: 'Второй' })];
    const d = ok<DashboardView>(
      await api.post('/api/dashboard', { name: 'Продажи', workspace_id: cast.workspaceId }, owner()),
    );
    const layout = (ids: number[]) => ({
      tabs: [{ id: 't1', name: 'Главная' }],
      items: ids.map((id, i) => ({ widget_id: id, tab_id: 't1', x: i * 6, y: 0, w: 6, h: 4 })),
      selectors: [
        {
          id: 's1',
          name: 'Товар',
          field_id: ds.fieldId('product'),
          op: 'in',
          values: ['чай'],
          widget_ids: ids,
        },
      ],
      parameters: [],
    });
    const at2 = ok<DashboardSchema>(await api.put(`/api/dashboard/${d.id}/schema`, layout([w1.id, w2.id]), owner()));
    expect((await api.put(`/api/dashboard/${d.id}`, { name: 'Продажи 2025' }, owner())).status).toBe(200);
    expect((await api.put(`/api/dashboard/${d.id}/schema`, layout([w1.id]), owner())).status).toBe(200);
    expect((await list('/api/dashboard', d.id)).content.map((r) => r.change)).toEqual([
      'saved',
      'saved',
      'saved',
      'created',
    ]);
    const changes = (await diff('/api/dashboard', d.id, 2)).changes;
    expect(changes).toContainEqual({ path: 'row.name', change: 'changed', old: 'Продажи', new: 'Продажи 2025' });
    expect(changes).toContainEqual(
      expect.objectContaining({ path: `row.layout.items[widget_id=${w2.id}]`, change: 'removed' }),
    );

    const back = await restore('/api/dashboard', d.id, 2);
    expect(back).toMatchObject({ revision: { rev: 5, change: 'restored' }, missing: [] });
    expect(stable(ok<DashboardSchema>(await api.get(`/api/dashboard/${d.id}/schema`, owner())))).toEqual(stable(at2));
    expect(ok<DashboardView>(await api.get(`/api/dashboard/${d.id}`, owner())).name).toBe('Продажи');

    // The widget goes: the layout loses it (a revision of its own), and a restore of rev 2 reports it.
    expect((await api.delete(`/api/widget/${w2.id}`, owner())).status).toBe(200);
    const afterDelete = await list('/api/dashboard', d.id);
    expect(afterDelete.content[0]).toMatchObject({ rev: 6, change: 'saved' });
    const again = await restore('/api/dashboard', d.id, 2);
    expect(again.missing).toEqual([`виджет id ${w2.id} (дашборд id ${d.id})`]);
    const schema = ok<DashboardSchema>(await api.get(`/api/dashboard/${d.id}/schema`, owner()));
    expect(schema.items.map((i) => i.widget_id)).toEqual([w1.id]);
    expect(schema.selectors[0].widget_ids).toEqual([w1.id]);
    expect(schema.tabs).toEqual(at2.tabs);
  });
});

describe('data source revisions', () => {
  it('keep settings without secrets; a restore brings the settings back and keeps the current password', async () => {
    const created = ok<SourceView>(
      await api.post(
        '/api/data-source',
        {
          name: 'Склад',
          type: 'postgresql',
          workspace_id: cast.workspaceId,
          settings: { host: '127.0.0.1', port: 5432, username: 'postgres', db: 'test', password: 'first-Secret-1' },
        },
        owner(),
      ),
    );
    const updated = await api.put(
      `/api/data-source/${created.id}`,
      {
        name: 'Склад 2',
        settings: { host: '127.0.0.1', port: 5433, username: 'reader', db: 'shop', password: 'second-Secret-2' },
      },
      owner(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const all = JSON.stringify([
      await revision('/api/data-source', created.id, 1),
      await revision('/api/data-source', created.id, 2),
      await diff('/api/data-source', created.id, 1),
    ]);
    expect(all).not.toContain('Secret');
    expect(all).not.toContain('"secrets"');
    const changes = (await diff('/api/data-source', created.id, 1)).changes;
    expect(changes).toContainEqual({ path: 'row.settings.port', change: 'changed', old: 5432, new: 5433 });
    expect(changes).toContainEqual({ path: 'row.name', change: 'changed', old: 'Склад', new: 'Склад 2' });

    const back = await restore('/api/data-source', created.id, 1);
    expect(back).toMatchObject({ revision: { rev: 3, change: 'restored' }, missing: [] });
    const now = ok<SourceView>(await api.get(`/api/data-source/${created.id}`, owner()));
    expect(stable(now)).toEqual(stable(created));
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, created.id));
    expect(openSecrets(t.deps, row)).toMatchObject({ password: 'second-Secret-2' });
  });
});

describe('retention', () => {
  it('keeps at most revisions_max_per_object per object, pruning the oldest in the save', async () => {
    const sysadmin = cast.tokens.sysadmin!;
    const set = await api.put('/api/settings', { revisions_max_per_object: 2 }, sysadmin);
    expect(set.status).toBe(200);
    try {
      expect(ok<{ revisions_max_per_object: number }>(await api.get('/api/settings', sysadmin))).toMatchObject({
        revisions_max_per_object: 2,
      });
      const ds = await salesDataset(); // created + schema saved: 2
      const w = await createWidget(ds.id);
      for (const name of ['a', 'b', 'c']) await api.put(`/api/widget/${w.id}`, widgetBody(ds.id, { name }), owner());
      const page = await list('/api/widget', w.id);
      expect(page.content.map((r) => r.rev)).toEqual([4, 3]);
      expect(page.page.total_elements).toBe(2);
      expect((await api.get(`/api/widget/${w.id}/revisions/2`, owner())).status).toBe(404);
      expect(await revs('/api/dataset', ds.id)).toEqual([2, 1]);
    } finally {
      await api.put('/api/settings', { revisions_max_per_object: 0 }, sysadmin);
    }
    expect((await api.put('/api/settings', { revisions_max_per_object: -1 }, sysadmin)).status).toBe(422);
  });
});
