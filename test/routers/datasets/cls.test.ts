import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import type { datasetPreviewOutput, fieldValuesOutput } from '../../../routers/datasets/data-procedures';
import type { dashboardDataOutput } from '../../../routers/dashboards/schemas';
import type {
  clsRuleOutput,
  clsRulesOutput,
  effectiveSecurityOutput,
} from '../../../routers/datasets/security-procedures';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { useTestApp } from '../../support/app';
import { createGroup, addToGroup, createRoleCast, login, type RoleCast } from '../../support/factories';
import { failure, ok, type RestResponse } from '../../support/rest';
import { postDashboard } from '../dashboards/world';
import type { DatasetDetails, SchemaBody } from './helpers';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
  type KpiData,
  type WidgetView,
} from '../widgets/world';

/*
 * Column-level security over a real PostgreSQL source: a hidden field must not leak through any data path (shelves,
 * filters, sorts, formulas, calculated fields, previews, field values, dashboards) nor through error messages, which
 * must equal those for a field that does not exist; masked fields answer the mask.
 */

type DatasetPreview = z.output<typeof datasetPreviewOutput>;
type FieldValues = z.output<typeof fieldValuesOutput>;
type DashboardData = z.output<typeof dashboardDataOutput>;
type EffectiveSecurity = z.output<typeof effectiveSecurityOutput>;

const SALES = makeSales(40);
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;
let fieldId: (name: string) => number;

/** A rule saved straight into the store (the REST operations are tested on their own below). */
async function addRule(action: 'hide' | 'mask', names: string[], who: { userIds?: number[]; groupIds?: number[] }) {
  const [row] = await t.deps.db
    .insert(datasetClsRules)
    .values({
      datasetId,
      fieldIds: names.map((n) => fieldId(n)),
      action,
      userIds: who.userIds ?? [],
      groupIds: who.groupIds ?? [],
    })
    .returning({ id: datasetClsRules.id });
  readCachesChanged(t.deps);
  return row.id;
}
async function clearRules() {
  await t.deps.db.delete(datasetClsRules);
  readCachesChanged(t.deps);
}

const preview = (body: Record<string, unknown>, token = cast.tokens.viewer) =>
  api.post(`/api/dataset/${datasetId}/preview`, { limit: 100, ...body }, token);
const widgetPreview = (body: Record<string, unknown>, token = cast.tokens.viewer) =>
  api.post(
    '/api/widget/preview',
    { dataset_id: datasetId, type: 'table', rows: [], series: [], columns: [], ...body },
    token,
  );
const fieldValues = (id: number, token = cast.tokens.viewer) =>
  api.get(`/api/dataset/${datasetId}/field-values`, token, { fieldId: String(id) });

/** The error of a refused call with the name of a field that does not exist put back to the hidden one's. */
function sameErrorAs(res: RestResponse, unknown: RestResponse, from: string, to: string) {
  expect(res.status).toBe(unknown.status);
  const swap = (text: string) => text.split(from).join(to);
  const { timestamp: _a, ...got } = failure(res);
  const { timestamp: _b, ...expected } = failure(unknown);
  expect(got).toEqual(JSON.parse(swap(JSON.stringify(expected))));
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
    extraFields: [
      { id: -32, name: 'Удвоенная', formula: '[sales.amount] * 2' },
      { id: -33, name: 'Через', formula: '[Удвоенная] + 1' },
      { id: -34, name: 'Штуки', formula: '[sales.qty] * 10' },
    ],
  });
  datasetId = ds.id;
  fieldId = ds.fieldId;
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('hidden fields', () => {
  beforeAll(async () => {
    await clearRules();
    await addRule('hide', ['amount'], { userIds: [cast.users.viewer.id] });
  });

  it('are refused on a shelf, in a filter, in a sort and in a request calculated field, like an unknown field', async () => {
    const cases: Record<string, unknown>[] = [
      { columns: [{ id: 'a', sql: 'SUM([sales.amount])' }] },
      { rows: [{ id: 'a', table: 'sales', field: 'amount' }] },
      {
        rows: [{ id: 'p', sql: '[sales.product]' }],
        filters: [{ sql: '[sales.amount]', op: 'gt', values: [1], value_type: 'number' }],
      },
      {
        rows: [{ id: 'a', sql: '[sales.amount]' }],
        sorts: [{ field_id: 'a', direction: 'desc' }],
      },
      {
        rows: [{ id: 'c', sql: '[calc]' }],
        calculated_fields: [{ name: 'calc', sql: '[sales.amount] + 1' }],
      },
    ];
    for (const body of cases) {
      const unknownBody = JSON.parse(JSON.stringify(body).split('amount').join('amountx')) as Record<string, unknown>;
      const res = await widgetPreview(body);
      sameErrorAs(res, await widgetPreview(unknownBody), 'amountx', 'amount');
      expect(res.status).toBe(422);
      // The owner still reads it.
      expect(ok<FlatData>(await widgetPreview(body, cast.tokens.wsAdmin)).rows.length).toBeGreaterThan(0);
    }
  });

  it('are refused in widget data of a saved widget, and dashboard data gives that widget an error entry', async () => {
    const created = await api.post(
      '/api/widget',
      {
        name: 'w',
        type: 'table',
        dataset_id: datasetId,
        rows: [{ id: 'p', sql: '[sales.product]' }],
        columns: [{ id: 'a', sql: 'SUM([sales.amount])' }],
      },
      cast.tokens.editor,
    );
    const widgetId = ok<WidgetView>(created).id;
    const res = await api.post(`/api/widget/${widgetId}/data`, {}, cast.tokens.viewer);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'columns[0].sql': 'Ошибка в выражении: поле [sales.amount] не найдено в датасете',
    });
    expect(ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, {}, cast.tokens.editor)).rows.length).toBe(5);

    const dashboardId = (await postDashboard(api, cast.tokens.editor, cast.workspaceId)).id;
    ok(
      await api.put(
        `/api/dashboard/${dashboardId}/schema`,
        { items: [{ widget_id: widgetId, x: 0, y: 0, w: 1, h: 1 }] },
        cast.tokens.editor,
      ),
    );
    const board = ok<DashboardData>(await api.post(`/api/dashboard/${dashboardId}/data`, {}, cast.tokens.viewer));
    expect(board.widgets[0]).not.toHaveProperty('data');
    const mine = ok<DashboardData>(await api.post(`/api/dashboard/${dashboardId}/data`, {}, cast.tokens.editor));
    expect(mine.widgets[0]).toHaveProperty('data');
  });

  it("take the dataset's calculated fields reading them along (transitively)", async () => {
    // Previews use the dataset's own formulas: [Удвоенная] and [Через] read the hidden field.
    for (const name of ['Удвоенная', 'Через']) {
      const res = await preview({ filters: [{ sql: `[${name}]`, op: 'gt', values: [0], value_type: 'number' }] });
      sameErrorAs(
        res,
        await preview({ filters: [{ sql: `[${name}x]`, op: 'gt', values: [0], value_type: 'number' }] }),
        `${name}x`,
        name,
      );
    }
    const ids = ['Удвоенная', 'Через', 'Выручка'].map((n) => fieldId(n));
    const res = await preview({ field_ids: ids });
    const unknown = await preview({ field_ids: [9_000_001, 9_000_002, 9_000_003] });
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'fieldIds[0]': `Поле датасета не найдено (id ${ids[0]})`,
      'fieldIds[1]': `Поле датасета не найдено (id ${ids[1]})`,
      'fieldIds[2]': `Поле датасета не найдено (id ${ids[2]})`,
    });
    expect(failure(unknown).errors!['fieldIds[0]']).toBe('Поле датасета не найдено (id 9000001)');
  });

  it("are left out of dataset preview's default columns and refused by id", async () => {
    const cols = ok<DatasetPreview>(await preview({})).columns.map((c) => c.field_id);
    const hidden = ['amount', 'Удвоенная', 'Через', 'Выручка'].map((n) => fieldId(n));
    expect(cols.length).toBeGreaterThan(0);
    expect(cols.filter((id) => hidden.includes(id))).toEqual([]);
    expect(cols).toContain(fieldId('qty'));
    const owner = ok<DatasetPreview>(await preview({}, cast.tokens.wsAdmin)).columns.map((c) => c.field_id);
    expect(owner).toContain(fieldId('amount'));
    const res = await preview({ field_ids: [fieldId('product'), fieldId('amount')] });
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ 'fieldIds[1]': `Поле датасета не найдено (id ${fieldId('amount')})` });
  });

  it('answer field values like an unknown field id', async () => {
    const res = await fieldValues(fieldId('amount'));
    sameErrorAs(res, await fieldValues(9_000_001), '9000001', String(fieldId('amount')));
    expect(ok<FieldValues>(await fieldValues(fieldId('amount'), cast.tokens.wsAdmin)).values.length).toBeGreaterThan(0);
  });

  it('effective security lists the fields hidden from one user, calculated ones reading them included', async () => {
    const security = (userId: number) =>
      api.get(`/api/dataset/${datasetId}/effective-security`, cast.tokens.wsAdmin, { userId: String(userId) });
    const hidden = ok<EffectiveSecurity>(await security(cast.users.viewer.id)).hidden_field_ids;
    expect([...hidden].sort()).toEqual(['amount', 'Выручка', 'Удвоенная', 'Через'].map((n) => fieldId(n)).sort());
    expect(ok<EffectiveSecurity>(await security(cast.users.editor.id)).hidden_field_ids).toEqual([]);
  });

  it("view_as_user_id applies the viewed user's rules", async () => {
    const body = { columns: [{ id: 'a', sql: 'SUM([sales.amount])' }] };
    const asViewer = await widgetPreview({ ...body, view_as_user_id: cast.users.viewer.id }, cast.tokens.sysadmin);
    expect(asViewer.status).toBe(422);
    ok(await widgetPreview({ ...body, view_as_user_id: cast.users.editor.id }, cast.tokens.sysadmin));
    const cols = ok<DatasetPreview>(
      await preview({ view_as_user_id: cast.users.viewer.id }, cast.tokens.sysadmin),
    ).columns.map((c) => c.field_id);
    expect(cols).not.toContain(fieldId('amount'));
  });
});

describe('rules for groups and everyone, and removal', () => {
  it('a group rule hides for its members only; an everyone rule for all; removal takes effect at once', async () => {
    await clearRules();
    const group = await createGroup(t.deps);
    await addToGroup(t.deps, cast.users.editor.id, group.id);
    // A session carries the groups it was opened with.
    const editor = await login(api, cast.users.editor.username, cast.users.editor.password);
    const body = { columns: [{ id: 'q', sql: 'SUM([sales.qty])' }] };
    const ruleId = await addRule('hide', ['qty'], { groupIds: [group.id] });
    expect((await widgetPreview(body, editor)).status).toBe(422);
    ok(await widgetPreview(body, cast.tokens.viewer));
    await clearRules();
    expect(ruleId).toBeGreaterThan(0);
    ok(await widgetPreview(body, editor));
    await addRule('hide', ['qty'], {});
    expect((await widgetPreview(body, cast.tokens.viewer)).status).toBe(422);
    expect((await widgetPreview(body, cast.tokens.wsAdmin)).status).toBe(422);
    await clearRules();
    ok(await widgetPreview(body, cast.tokens.viewer));
  });
});

describe('masked fields', () => {
  beforeAll(async () => {
    await clearRules();
    await addRule('mask', ['product'], { userIds: [cast.users.viewer.id] });
  });

  it('come back masked in every output column reading them; other columns are untouched', async () => {
    const res = ok<FlatData>(
      await widgetPreview({
        rows: [
          { id: 'p', sql: '[sales.product]' },
          { id: 'u', sql: 'UPPER([calc])' },
        ],
        columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
        calculated_fields: [{ name: 'calc', sql: '[sales.product]' }],
      }),
    );
    const rows = res.rows as { p: string; u: string; q: number }[];
    expect(rows.length).toBe(5);
    for (const r of rows) {
      expect(r.p).toBe('***');
      expect(r.u).toBe('***');
    }
    expect(rows.reduce((a, r) => a + Number(r.q), 0)).toBe(SALES.reduce((a, s) => a + s.qty, 0));
    const owner = ok<FlatData>(
      await widgetPreview({ rows: [{ id: 'p', sql: '[sales.product]' }] }, cast.tokens.wsAdmin),
    ).rows as { p: string }[];
    expect(owner.map((r) => r.p)).toContain('чай');
    const cols = ok<DatasetPreview>(await preview({ field_ids: [fieldId('product'), fieldId('qty')] }));
    for (const r of cols.rows) {
      expect(r[0]).toBe('***');
      expect(r[1]).not.toBe('***');
    }
  });

  it('are refused in filters, sorts and field values, like unknown fields', async () => {
    const filtered = await widgetPreview({
      columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
      filters: [{ sql: '[sales.product]', op: 'eq', values: ['чай'], value_type: 'string' }],
    });
    sameErrorAs(
      filtered,
      await widgetPreview({
        columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
        filters: [{ sql: '[sales.productx]', op: 'eq', values: ['чай'], value_type: 'string' }],
      }),
      'productx',
      'product',
    );
    const sorted = await widgetPreview({
      rows: [{ id: 'p', sql: '[sales.product]' }],
      sorts: [{ field_id: 'p', direction: 'asc' }],
    });
    expect(sorted.status).toBe(422);
    expect(failure(sorted).errors).toEqual({ 'sorts[0].fieldId': 'Поле с id p не найдено на полках виджета' });
    const values = await fieldValues(fieldId('product'));
    sameErrorAs(values, await fieldValues(9_000_001), '9000001', String(fieldId('product')));
    const previewFiltered = await preview({
      filters: [{ sql: '[sales.product]', op: 'eq', values: ['чай'], value_type: 'string' }],
    });
    expect(previewFiltered.status).toBe(422);
    expect(Object.keys(failure(previewFiltered).errors ?? {})).toEqual(['filters[0].sql']);
  });
});

type ClsRule = z.output<typeof clsRuleOutput>;
type ClsRules = z.output<typeof clsRulesOutput>;

describe('/api/dataset/{id}/cls-rules', () => {
  const path = () => `/api/dataset/${datasetId}/cls-rules`;
  beforeAll(clearRules);

  it('the owner lists, creates, changes and deletes rules; each change takes effect at once', async () => {
    expect(ok<ClsRules>(await api.get(path(), cast.tokens.wsAdmin))).toEqual({ rules: [] });
    const before = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, cast.tokens.wsAdmin)).updated_at;
    const body = { columns: [{ id: 'q', sql: 'SUM([sales.qty])' }] };
    ok(await widgetPreview(body));
    const created = ok<ClsRule>(
      await api.post(
        path(),
        { field_ids: [fieldId('qty')], action: 'hide', user_ids: [cast.users.viewer.id] },
        cast.tokens.wsAdmin,
      ),
    );
    expect(created).toMatchObject({
      dataset_id: datasetId,
      field_ids: [fieldId('qty')],
      action: 'hide',
      user_ids: [cast.users.viewer.id],
      group_ids: [],
    });
    expect((await widgetPreview(body)).status).toBe(422);
    const after = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, cast.tokens.wsAdmin)).updated_at;
    expect(after > before).toBe(true);
    expect(ok<ClsRules>(await api.get(path(), cast.tokens.wsAdmin)).rules).toEqual([created]);

    const changed = ok<ClsRule>(
      await api.put(
        `${path()}/${created.id}`,
        { field_ids: [fieldId('qty')], action: 'mask', user_ids: [cast.users.viewer.id], group_ids: [] },
        cast.tokens.wsAdmin,
      ),
    );
    expect(changed.action).toBe('mask');
    const masked = ok<FlatData>(await widgetPreview({ rows: [{ id: 'q', sql: '[sales.qty]' }] }));
    expect((masked.rows as { q: unknown }[]).every((r) => r.q === '***')).toBe(true);

    expect(ok(await api.delete(`${path()}/${created.id}`, cast.tokens.wsAdmin))).toEqual({
      id: created.id,
      deleted: true,
    });
    ok(await widgetPreview(body));
    expect(ok<ClsRules>(await api.get(path(), cast.tokens.wsAdmin)).rules).toEqual([]);
    expect((await api.delete(`${path()}/${created.id}`, cast.tokens.wsAdmin)).status).toBe(404);
  });

  it('only the owner manages rules', async () => {
    const body = { field_ids: [fieldId('qty')], action: 'hide' };
    for (const token of [cast.tokens.viewer, cast.tokens.editor]) {
      expect([403, 404]).toContain((await api.get(path(), token)).status);
      expect([403, 404]).toContain((await api.post(path(), body, token)).status);
    }
    expect((await api.get(path(), undefined)).status).toBe(401);
    expect(ok<ClsRules>(await api.get(path(), cast.tokens.wsAdmin)).rules).toEqual([]);
  });

  it('bad input: 422 naming every problem, nothing saved', async () => {
    const res = await api.post(
      path(),
      { field_ids: [fieldId('qty'), 9_000_001], action: 'hide', user_ids: [9_000_002], group_ids: [9_000_003] },
      cast.tokens.wsAdmin,
    );
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'fieldIds[1]': 'Поле датасета не найдено (id 9000001)',
      'userIds[0]': 'Пользователь не найден (id 9000002)',
      'groupIds[0]': 'Группа не найдена (id 9000003)',
    });
    const empty = await api.post(path(), { field_ids: [], action: 'hide' }, cast.tokens.wsAdmin);
    expect(empty.status).toBe(422);
    expect(failure(empty).errors).toEqual({ fieldIds: 'Укажите хотя бы одно поле' });
    const action = await api.post(path(), { field_ids: [fieldId('qty')], action: 'drop' }, cast.tokens.wsAdmin);
    expect(action.status).toBe(422);
    expect(Object.keys(failure(action).errors ?? {})).toEqual(['action']);
    expect(ok<ClsRules>(await api.get(path(), cast.tokens.wsAdmin)).rules).toEqual([]);
    const missing = await api.put(
      `${path()}/9000004`,
      { field_ids: [fieldId('qty')], action: 'hide' },
      cast.tokens.wsAdmin,
    );
    expect(missing.status).toBe(404);
  });

  it('a schema save deleting a field a rule names is refused, the rule kept', async () => {
    const rule = ok<ClsRule>(
      await api.post(path(), { field_ids: [fieldId('Штуки')], action: 'mask' }, cast.tokens.wsAdmin),
    );
    const saved = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, cast.tokens.wsAdmin));
    const { objects, fields, relations, hierarchies, filters, parameters } = structuredClone(saved);
    const without: SchemaBody = {
      objects,
      fields: fields.filter((f) => f.id !== fieldId('Штуки')),
      relations,
      hierarchies,
      filters: filters as SchemaBody['filters'],
      parameters,
    };
    const res = await api.put(`/api/dataset/${datasetId}/schema`, without, cast.tokens.wsAdmin);
    expect(res.status).toBe(400);
    expect(failure(res).message).toContain(`правило CLS id ${rule.id}`);
    expect(ok<ClsRules>(await api.get(path(), cast.tokens.wsAdmin)).rules).toEqual([rule]);
    ok(await api.delete(`${path()}/${rule.id}`, cast.tokens.wsAdmin));
  });
});

describe("the dataset's own filters over hidden fields", () => {
  it('still apply for a user the fields are hidden from, through calculated fields too', async () => {
    const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
    const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
      workspaceId: cast.workspaceId,
      sourceId: source,
      tables,
      extraFields: [
        { id: -32, name: 'Удвоенная', formula: '[sales.amount] * 2' },
        { id: -33, name: 'Через', formula: '[Удвоенная] + 1' },
      ],
      filters: [{ id: -61, field_id: -33, op: 'gt', values: [11], value_type: 'number' }],
    });
    await t.deps.db.insert(datasetClsRules).values({
      datasetId: ds.id,
      fieldIds: [ds.fieldId('amount')],
      action: 'hide',
      userIds: [cast.users.viewer.id],
    });
    readCachesChanged(t.deps);
    const expected = SALES.filter((s) => s.amount !== null && s.amount * 2 + 1 > 11).length;
    const body = { dataset_id: ds.id, type: 'kpi', rows: [], series: [], columns: [{ id: 'n', sql: 'COUNT()' }] };
    for (const token of [cast.tokens.viewer, cast.tokens.wsAdmin]) {
      const res = ok<KpiData>(await api.post('/api/widget/preview', body, token));
      expect(Number(res.row.n)).toBe(expected);
    }
    const cols = ok<DatasetPreview>(
      await api.post(`/api/dataset/${ds.id}/preview`, { limit: 1000 }, cast.tokens.viewer),
    );
    expect(cols.rows.length).toBe(expected);
  });
});

describe('the dataset read (GET /api/dataset/{id})', () => {
  it('leaves out, for a reader, the fields hidden from them and all that names them; the owner sees all', async () => {
    const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
    const owner = cast.tokens.wsAdmin!;
    const id = ok<DatasetDetails>(
      await api.post(
        '/api/dataset',
        { name: 'read', workspace_id: cast.workspaceId, live: true, data_source_ids: [source] },
        owner,
      ),
    ).id;
    const f = (fid: number, name: string, primitive_type: 'integer' | 'string' | 'float', extra = {}) => ({
      id: fid,
      object_id: -1,
      name,
      column: name,
      primitive_type,
      ...extra,
    });
    const schema: SchemaBody = {
      objects: [{ id: -1, data_source_id: source, name: 'sales', schema: 'public', table: tables.sales }],
      fields: [
        f(-11, 'id', 'integer'),
        f(-13, 'product', 'string', { sort_by_field_id: -14 }),
        f(-14, 'amount', 'float'),
        { id: -32, name: 'Удвоенная', formula: '[sales.amount] * 2' },
      ],
      relations: [],
      hierarchies: [
        { id: -71, name: 'Товар и сумма', field_ids: [-13, -14] },
        { id: -72, name: 'Сумма', field_ids: [-14] },
      ],
      filters: [{ id: -61, field_id: -14, op: 'gt', values: [0], value_type: 'number' }],
      parameters: [],
    };
    const saved = ok<DatasetDetails>(await api.put(`/api/dataset/${id}/schema`, schema, owner));
    const fid = (name: string) => saved.fields.find((x) => x.name === name)!.id;
    await t.deps.db
      .insert(datasetClsRules)
      .values({ datasetId: id, fieldIds: [fid('amount')], action: 'hide', userIds: [cast.users.viewer.id] });
    readCachesChanged(t.deps);

    const seen = ok<DatasetDetails>(await api.get(`/api/dataset/${id}`, cast.tokens.viewer));
    expect(seen.fields.map((x) => x.name)).toEqual(['id', 'product']);
    expect(seen.fields.find((x) => x.name === 'product')!.sort_by_field_id).toBeNull();
    expect(seen.hierarchies.map((h) => [h.name, h.field_ids])).toEqual([['Товар и сумма', [fid('product')]]]);
    expect(seen.filters).toEqual([]);

    // The owner manages the rules, so sees what they hide.
    const all = ok<DatasetDetails>(await api.get(`/api/dataset/${id}`, owner));
    expect(all).toEqual(saved);
  });
});
