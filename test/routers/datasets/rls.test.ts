import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../../db/schema/dataset-rls-rules';
import type { datasetPreviewOutput, fieldValuesOutput } from '../../../routers/datasets/data-procedures';
import type {
  effectiveSecurityOutput,
  rlsRuleOutput,
  rlsRulesOutput,
} from '../../../routers/datasets/security-procedures';
import type { dashboardDataOutput } from '../../../routers/dashboards/schemas';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { useTestApp } from '../../support/app';
import { addToGroup, createGroup, createRoleCast, login, type RoleCast } from '../../support/factories';
import { failure, ok, type Deleted } from '../../support/rest';
import { postDashboard } from '../dashboards/world';
import type { DatasetDetails } from './helpers';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
  type WidgetView,
} from '../widgets/world';

/*
 * Row-level security over a real PostgreSQL source: the rules (GET/POST /api/dataset/{id}/rls-rules, PUT/DELETE
 * /api/dataset/{id}/rls-rules/{ruleId}) and their effect on every data path, checked against the inserted rows.
 */

type Rule = z.output<typeof rlsRuleOutput>;
type Rules = z.output<typeof rlsRulesOutput>;
type EffectiveSecurity = z.output<typeof effectiveSecurityOutput>;
type DatasetPreview = z.output<typeof datasetPreviewOutput>;
type FieldValues = z.output<typeof fieldValuesOutput>;
type DashboardData = z.output<typeof dashboardDataOutput>;

const SALES = makeSales(60);
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;
let fieldId: (name: string) => number;
let widgetId: number;

const rulesPath = () => `/api/dataset/${datasetId}/rls-rules`;
const owner = () => cast.tokens.wsAdmin;
const setAttributes = (userId: number, attributes: Record<string, string[]>) =>
  api.put(`/api/users/${userId}/attributes`, { attributes }, cast.tokens.sysadmin);

async function addRule(body: Record<string, unknown>): Promise<number> {
  return ok<Rule>(await api.post(rulesPath(), { operator: 'in', ...body }, owner())).id;
}
async function clearRules() {
  await t.deps.db.delete(datasetRlsRules);
  readCachesChanged(t.deps);
}

/** Products (sorted, distinct) a reader sees through widget data. */
async function productsSeen(token: string | undefined, body: Record<string, unknown> = {}): Promise<string[]> {
  const data = ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, body, token));
  return (data.rows as { p: string }[]).map((r) => r.p).sort();
}
const expected = (keep: (s: (typeof SALES)[number]) => boolean) =>
  [...new Set(SALES.filter(keep).map((s) => s.product))].sort();
const ALL = expected(() => true);

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
  });
  datasetId = ds.id;
  fieldId = ds.fieldId;
  const created = await api.post(
    '/api/widget',
    {
      name: 'w',
      type: 'table',
      dataset_id: datasetId,
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
    },
    cast.tokens.editor,
  );
  widgetId = ok<WidgetView>(created).id;
});
afterAll(async () => {
  await clearRules();
  await dropSourceTables(db, tables);
  await db.end();
});

describe('GET/POST /api/dataset/{id}/rls-rules, PUT/DELETE /api/dataset/{id}/rls-rules/{ruleId}', () => {
  it('a copy of the dataset (POST /api/dataset/{id}/copy) keeps its security rules, on the copied fields', async () => {
    await clearRules();
    await t.deps.db.delete(datasetClsRules);
    await addRule({ field_id: fieldId('product'), attribute: 'product', user_ids: [cast.users.viewer.id] });
    ok(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [fieldId('qty')], action: 'mask', user_ids: [cast.users.viewer.id] },
        owner(),
      ),
    );
    const copy = ok<DatasetDetails>(await api.post(`/api/dataset/${datasetId}/copy`, {}, owner()));
    const copiedField = (name: string) => copy.fields.find((f) => f.name === name)!.id;
    expect(copiedField('product')).not.toBe(fieldId('product'));
    const rules = ok<Rules>(await api.get(`/api/dataset/${copy.id}/rls-rules`, owner()));
    expect(rules.rules.map((r) => [r.field_id, r.attribute, r.user_ids])).toEqual([
      [copiedField('product'), 'product', [cast.users.viewer.id]],
    ]);
    const masked = await t.deps.db.select().from(datasetClsRules);
    expect(masked.map((r) => [r.datasetId, r.fieldIds]).sort()).toEqual(
      [
        [datasetId, [fieldId('qty')]],
        [copy.id, [copiedField('qty')]],
      ].sort(),
    );
    await t.deps.db.delete(datasetClsRules);
    await clearRules();
    ok(await api.delete(`/api/dataset/${copy.id}`, owner()));
  });

  it('the owner creates, lists, changes and deletes rules; the dataset edit time moves', async () => {
    await clearRules();
    const before = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner())).updated_at;
    const created = ok<Rule>(
      await api.post(
        rulesPath(),
        { field_id: fieldId('product'), attribute: 'product', operator: 'in', user_ids: [cast.users.viewer.id] },
        owner(),
      ),
    );
    expect(created).toMatchObject({
      dataset_id: datasetId,
      field_id: fieldId('product'),
      attribute: 'product',
      operator: 'in',
      user_ids: [cast.users.viewer.id],
      group_ids: [],
    });
    expect(ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner())).updated_at).not.toBe(before);
    expect(ok<Rules>(await api.get(rulesPath(), owner())).rules).toEqual([created]);

    const changed = ok<Rule>(
      await api.put(
        `${rulesPath()}/${created.id}`,
        { field_id: fieldId('region_id'), attribute: 'region', operator: 'eq', user_ids: [], group_ids: [] },
        owner(),
      ),
    );
    expect(changed).toMatchObject({ id: created.id, field_id: fieldId('region_id'), operator: 'eq', user_ids: [] });
    expect(ok<Deleted>(await api.delete(`${rulesPath()}/${created.id}`, owner()))).toEqual({
      id: created.id,
      deleted: true,
    });
    expect(ok<Rules>(await api.get(rulesPath(), owner())).rules).toEqual([]);
    expect((await api.delete(`${rulesPath()}/${created.id}`, owner())).status).toBe(404);
  });

  it('a dataset with rules can still be deleted (its rules go with it)', async () => {
    const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
    const other = await createSalesDataset(api, owner()!, { workspaceId: cast.workspaceId, sourceId: source, tables });
    ok(
      await api.post(
        `/api/dataset/${other.id}/rls-rules`,
        { field_id: other.fieldId('product'), attribute: 'product', operator: 'in' },
        owner(),
      ),
    );
    ok(await api.delete(`/api/dataset/${other.id}`, owner()));
    expect((await api.get(`/api/dataset/${other.id}/rls-rules`, owner())).status).toBe(404);
  });

  it('refuses non-owners: a viewer gets 403, an outsider 404', async () => {
    expect((await api.get(rulesPath(), cast.tokens.viewer)).status).toBe(403);
    expect((await api.get(rulesPath(), cast.tokens.plain)).status).toBe(404);
    const body = { field_id: fieldId('product'), attribute: 'product', operator: 'in' };
    expect((await api.post(rulesPath(), body, cast.tokens.viewer)).status).toBe(403);
  });

  it('bad input: 422 naming every field path in Russian, nothing saved', async () => {
    await clearRules();
    const res = await api.post(
      rulesPath(),
      { field_id: 2147483000, attribute: '  ', operator: 'in', user_ids: [2147483000], group_ids: [2147483001] },
      owner(),
    );
    expect(res.status).toBe(422);
    const error = failure(res);
    expect(Object.keys(error.errors ?? {}).sort()).toEqual(['attribute', 'fieldId', 'groupIds[0]', 'userIds[0]']);
    expect(error.errors!.fieldId).toMatch(/Поле датасета не найдено/);
    expect(error.errors!['userIds[0]']).toMatch(/Пользователь не найден/);
    expect(error.errors!['groupIds[0]']).toMatch(/Группа не найдена/);

    const aggregate = await api.post(
      rulesPath(),
      { field_id: fieldId('Выручка'), attribute: 'x', operator: 'in' },
      owner(),
    );
    expect(aggregate.status).toBe(422);
    expect(failure(aggregate).errors!.fieldId).toMatch(/агрегированное/);
    expect(
      (await api.post(rulesPath(), { field_id: fieldId('product'), attribute: 'x', operator: 'gt' }, owner())).status,
    ).toBe(422);
    expect(ok<Rules>(await api.get(rulesPath(), owner())).rules).toEqual([]);
  });

  it('a schema save that deletes a field a rule uses is refused, naming the rule', async () => {
    await clearRules();
    const ruleId = await addRule({ field_id: fieldId('product'), attribute: 'product' });
    const d = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner()));
    const schema = {
      objects: d.objects.map(({ id, data_source_id, name, schema, table }) => ({
        id,
        data_source_id,
        name,
        schema,
        table,
      })),
      fields: d.fields
        .filter((f) => f.name !== 'product')
        .map((f) =>
          f.object_id === null
            ? { id: f.id, name: f.name, formula: f.formula }
            : { id: f.id, object_id: f.object_id, name: f.name, column: f.column, primitive_type: f.primitive_type },
        ),
      relations: d.relations,
      hierarchies: [],
      filters: [],
      parameters: [],
    };
    // The validate endpoint says so before the save, with the same answer.
    const checked = await api.post(`/api/dataset/${datasetId}/schema/validate`, schema, owner());
    expect(checked.status).toBe(400);
    expect(failure(checked).message).toContain(`правило RLS id ${ruleId}`);
    const res = await api.put(`/api/dataset/${datasetId}/schema`, schema, owner());
    expect(res.status).toBe(400);
    expect(failure(res).message).toContain(`правило RLS id ${ruleId}`);
    expect(ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner())).fields.map((f) => f.name)).toContain(
      'product',
    );
    await clearRules();
  });
});

describe('enforcement on every data path', () => {
  it('filters widget data, widget preview, dataset preview, field values and dashboard data for a user a rule names', async () => {
    await clearRules();
    ok(await setAttributes(cast.users.viewer.id, { product: ['чай', 'кофе'] }));
    await addRule({ field_id: fieldId('product'), attribute: 'product', user_ids: [cast.users.viewer.id] });
    expect(await productsSeen(cast.tokens.viewer)).toEqual(['кофе', 'чай']);
    expect(await productsSeen(cast.tokens.editor)).toEqual(ALL);

    const wp = ok<FlatData>(
      await api.post(
        '/api/widget/preview',
        { dataset_id: datasetId, type: 'table', rows: [{ id: 'p', sql: '[sales.product]' }], columns: [] },
        cast.tokens.viewer,
      ),
    );
    expect([...new Set((wp.rows as { p: string }[]).map((r) => r.p))].sort()).toEqual(['кофе', 'чай']);

    const dp = ok<DatasetPreview>(
      await api.post(
        `/api/dataset/${datasetId}/preview`,
        { field_ids: [fieldId('product')], limit: 1000 },
        cast.tokens.viewer,
      ),
    );
    expect(dp.rows.length).toBe(SALES.filter((s) => ['чай', 'кофе'].includes(s.product)).length);
    expect(new Set(dp.rows.map((r) => r[0]))).toEqual(new Set(['чай', 'кофе']));

    const fv = ok<FieldValues>(
      await api.get(`/api/dataset/${datasetId}/field-values`, cast.tokens.viewer, {
        fieldId: String(fieldId('product')),
      }),
    );
    expect(fv.values.slice().sort()).toEqual(['кофе', 'чай']);

    const dashboardId = (await postDashboard(api, cast.tokens.editor, cast.workspaceId)).id;
    ok(
      await api.put(
        `/api/dashboard/${dashboardId}/schema`,
        { items: [{ widget_id: widgetId, x: 0, y: 0, w: 1, h: 1 }] },
        cast.tokens.editor,
      ),
    );
    const board = ok<DashboardData>(await api.post(`/api/dashboard/${dashboardId}/data`, {}, cast.tokens.viewer));
    const boardRows = (board.widgets[0] as unknown as { data: FlatData }).data.rows as { p: string }[];
    expect(boardRows.map((r) => r.p).sort()).toEqual(['кофе', 'чай']);
  });

  it('view_as_user_id applies the viewed user rules; the administrator as themself is not named', async () => {
    expect(await productsSeen(cast.tokens.sysadmin, { view_as_user_id: cast.users.viewer.id })).toEqual([
      'кофе',
      'чай',
    ]);
    expect(await productsSeen(cast.tokens.wsAdmin)).toEqual(ALL);
  });

  it('removing a rule or changing an attribute takes effect at once', async () => {
    ok(await setAttributes(cast.users.viewer.id, { product: ['сок'] }));
    expect(await productsSeen(cast.tokens.viewer)).toEqual(['сок']);
    const [rule] = ok<Rules>(await api.get(rulesPath(), owner())).rules;
    ok(await api.delete(`${rulesPath()}/${rule.id}`, owner()));
    expect(await productsSeen(cast.tokens.viewer)).toEqual(ALL);
  });

  it('deny by default: a user a rule applies to without the attribute (or with an empty list) sees no rows', async () => {
    await clearRules();
    await addRule({ field_id: fieldId('product'), attribute: 'no_such_key', user_ids: [cast.users.viewer.id] });
    expect(await productsSeen(cast.tokens.viewer)).toEqual([]);
    ok(await setAttributes(cast.users.viewer.id, { no_such_key: [] }));
    expect(await productsSeen(cast.tokens.viewer)).toEqual([]);
    expect(await productsSeen(cast.tokens.editor)).toEqual(ALL);
  });

  it('a group rule applies to its members; an everyone rule to all, administrators included', async () => {
    await clearRules();
    const group = await createGroup(t.deps);
    await addToGroup(t.deps, cast.users.editor.id, group.id);
    const editorToken = await login(api, cast.users.editor.username, cast.users.editor.password);
    ok(await setAttributes(cast.users.editor.id, { product: ['какао'] }));
    await addRule({ field_id: fieldId('product'), attribute: 'product', group_ids: [group.id] });
    expect(await productsSeen(editorToken)).toEqual(['какао']);
    expect(await productsSeen(cast.tokens.viewer)).toEqual(ALL);

    await clearRules();
    ok(await setAttributes(cast.users.wsAdmin.id, { product: ['чай'] }));
    await addRule({ field_id: fieldId('product'), attribute: 'product' });
    expect(await productsSeen(cast.tokens.wsAdmin)).toEqual(['чай']);
    expect(await productsSeen(editorToken)).toEqual(['какао']);
    expect(await productsSeen(cast.tokens.viewer)).toEqual([]); // no attribute now: deny by default
    expect(await productsSeen(cast.tokens.sysadmin)).toEqual([]);
  });

  it('a rule on a field hidden from the user by column-level security still filters the rows', async () => {
    await clearRules();
    ok(await setAttributes(cast.users.viewer.id, { product: ['чай'] }));
    await addRule({ field_id: fieldId('product'), attribute: 'product', user_ids: [cast.users.viewer.id] });
    await t.deps.db.insert(datasetClsRules).values({
      datasetId,
      fieldIds: [fieldId('product')],
      action: 'hide',
      userIds: [cast.users.viewer.id],
      groupIds: [],
    });
    readCachesChanged(t.deps);
    try {
      const body = { dataset_id: datasetId, type: 'table', rows: [], columns: [{ id: 'q', sql: 'SUM([sales.qty])' }] };
      const res = ok<FlatData>(await api.post('/api/widget/preview', body, cast.tokens.viewer));
      const qty = SALES.filter((s) => s.product === 'чай').reduce((a, s) => a + s.qty, 0);
      expect((res.rows as { q: number }[]).map((r) => Number(r.q))).toEqual([qty]);
    } finally {
      await t.deps.db.delete(datasetClsRules);
      await clearRules();
    }
  });

  it('two rules combine with AND; eq compares with the first value', async () => {
    await clearRules();
    ok(await setAttributes(cast.users.viewer.id, { product: ['чай', 'кофе'], region: ['2', '3'] }));
    const who = { user_ids: [cast.users.viewer.id] };
    await addRule({ field_id: fieldId('product'), attribute: 'product', ...who });
    await addRule({ field_id: fieldId('region_id'), attribute: 'region', operator: 'eq', ...who });
    expect(await productsSeen(cast.tokens.viewer)).toEqual(
      expected((s) => ['чай', 'кофе'].includes(s.product) && s.region_id === 2),
    );
    const dp = ok<DatasetPreview>(
      await api.post(
        `/api/dataset/${datasetId}/preview`,
        { field_ids: [fieldId('product'), fieldId('region_id')], limit: 1000 },
        cast.tokens.viewer,
      ),
    );
    expect(dp.rows.length).toBe(SALES.filter((s) => ['чай', 'кофе'].includes(s.product) && s.region_id === 2).length);

    const security = (userId: number) =>
      api.get(`/api/dataset/${datasetId}/effective-security`, owner(), { userId: String(userId) });
    const mine = ok<EffectiveSecurity>(await security(cast.users.viewer.id));
    expect(mine.hidden_field_ids).toEqual([]);
    expect(mine.row_filter_sql).toMatch(
      /^\(\("t0"\."product"\) IN \(E'чай', E'кофе'\)\) AND \(.*"region_id".* = .*2.*\)$/,
    );
    expect(ok<EffectiveSecurity>(await security(cast.users.editor.id)).row_filter_sql).toBeNull();
    expect(
      (await api.get(`/api/dataset/${datasetId}/effective-security`, cast.tokens.viewer, { userId: '1' })).status,
    ).toBe(403);
    const unknown = await security(2147483000);
    expect(unknown.status).toBe(422);
    expect(Object.keys(failure(unknown).errors ?? {})).toEqual(['userId']);
    await clearRules();
  });
});
