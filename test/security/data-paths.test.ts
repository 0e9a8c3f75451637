import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import type { datasetPreviewOutput, fieldValuesOutput } from '../../routers/datasets/data-procedures';
import type { dashboardDataOutput } from '../../routers/dashboards/schemas';
import { useTestApp } from '../support/app';
import { createRoleCast, createUser, login, type RoleCast, type TestUser } from '../support/factories';
import { failure, ok, type RestResponse } from '../support/rest';
import { postDashboard } from '../routers/dashboards/world';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
  type WidgetView,
} from '../routers/widgets/world';

/*
 * The security matrix: every kind of caller x every data path (POST /api/widget/{id}/data, POST
 * /api/widget/preview, POST /api/dataset/{id}/preview with default and explicit columns, GET
 * /api/dataset/{id}/field-values, POST /api/dashboard/{id}/data) over one dataset on a real PostgreSQL source. The
 * Наблюдатель is the restricted user: an RLS rule keeps them to two products, a CLS rule hides `amount` from them and
 * another masks `qty`. No cell may show a row, a field or an object the caller may not read, and naming the hidden
 * field anywhere must fail exactly as naming a field that does not exist.
 */

type DatasetPreview = z.output<typeof datasetPreviewOutput>;
type FieldValues = z.output<typeof fieldValuesOutput>;
type DashboardData = z.output<typeof dashboardDataOutput>;

const SALES = makeSales(30);
const ALLOWED_PRODUCTS = ['чай', 'кофе'];
const ALL_IDS = SALES.map((s) => s.id);
const ALLOWED_IDS = SALES.filter((s) => ALLOWED_PRODUCTS.includes(s.product)).map((s) => s.id);
const MASK = '***';

const { t, api } = useTestApp();
let cast: RoleCast;
let rightHolder: TestUser & { token: string };
let db: pg.Client;
let tables: { sales: string; regions: string };
let sourceId: number;
/** Non-members holding a `view` and an `edit` right on the data source (and nothing else). */
let sourceViewer: TestUser & { token: string };
let sourceEditor: TestUser & { token: string };
let datasetId: number;
let fieldId: (name: string) => number;
let widgetId: number;
let dashboardId: number;
/** A non-member with a `view` right on the widget and on a dashboard showing it, none on the dataset. */
let widgetReader: TestUser & { token: string };
/** That dashboard: a selector on `product` drives the widget. */
let selectorBoardId: number;
/** A non-member with the `edit` right on the dataset, whom a CLS rule of their own hides `amount` from. */
let datasetEditor: TestUser & { token: string };

/** What a caller may read: nothing (401 or 404), the restricted user's share, or everything. */
type Sight = 401 | 404 | 'restricted' | 'all';
interface Viewer {
  name: string;
  token: () => string | undefined;
  /** view_as_user_id sent with the request (system administrator reading as the restricted user). */
  viewAs?: () => number;
  sight: Sight;
}

const VIEWERS: Viewer[] = [
  { name: 'anonymous', token: () => undefined, sight: 401 },
  { name: 'a user of another workspace', token: () => cast.tokens.plain, sight: 404 },
  { name: 'Наблюдатель (restricted by RLS and CLS)', token: () => cast.tokens.viewer, sight: 'restricted' },
  { name: 'Редактор', token: () => cast.tokens.editor, sight: 'all' },
  { name: 'Администратор', token: () => cast.tokens.wsAdmin, sight: 'all' },
  { name: 'a non-member with view rights (no rule names them)', token: () => rightHolder.token, sight: 'all' },
  { name: 'system administrator', token: () => cast.tokens.sysadmin, sight: 'all' },
  {
    name: 'system administrator viewing as the Наблюдатель',
    token: () => cast.tokens.sysadmin,
    viewAs: () => cast.users.viewer.id,
    sight: 'restricted',
  },
];

/** The body with the viewer's view_as_user_id, when it has one. */
const as = (v: Viewer, body: Record<string, unknown> = {}) =>
  v.viewAs ? { ...body, view_as_user_id: v.viewAs() } : body;

const SHELVES = {
  rows: [
    { id: 'i', sql: '[sales.id]' },
    { id: 'p', sql: '[sales.product]' },
    { id: 'q', sql: '[sales.qty]' },
  ],
};

const widgetData = (v: Viewer, body: Record<string, unknown> = {}) =>
  api.post(`/api/widget/${widgetId}/data`, as(v, { page_size: 100, ...body }), v.token());
const widgetPreview = (v: Viewer, body: Record<string, unknown> = {}) =>
  api.post(
    '/api/widget/preview',
    as(v, { dataset_id: datasetId, type: 'table', series: [], columns: [], ...SHELVES, ...body }),
    v.token(),
  );
const datasetPreview = (v: Viewer, body: Record<string, unknown> = {}) =>
  api.post(`/api/dataset/${datasetId}/preview`, as(v, { limit: 100, ...body }), v.token());
const fieldValues = (v: Viewer, id: number) =>
  api.get(`/api/dataset/${datasetId}/field-values`, v.token(), {
    fieldId: String(id),
    limit: '1000',
    ...(v.viewAs ? { viewAsUserId: String(v.viewAs()) } : {}),
  });
const dashboardData = (v: Viewer) => api.post(`/api/dashboard/${dashboardId}/data`, as(v), v.token());

/** Rows of a flat answer, as [id, product, qty] triples sorted by id. */
const flatRows = (data: FlatData) =>
  (data.rows as { i: unknown; p: unknown; q: unknown }[])
    .map((r) => [Number(r.i), r.p, r.q] as const)
    .sort((a, b) => a[0] - b[0]);

/** What a reader with `sight` must get as [id, product, qty] rows. */
function expectedRows(sight: 'restricted' | 'all') {
  const keep = sight === 'restricted' ? SALES.filter((s) => ALLOWED_IDS.includes(s.id)) : SALES;
  return keep.map((s) => [s.id, s.product, sight === 'restricted' ? MASK : s.qty] as const);
}

function expectFlat(res: RestResponse, sight: 'restricted' | 'all') {
  const rows = flatRows(ok<FlatData>(res)).map(([i, p, q]) => [i, p, q === MASK ? q : Number(q)]);
  expect(rows).toEqual(expectedRows(sight));
}

/** A dataset preview's [id, product, qty] rows, whichever columns it answered. */
function previewRows(data: DatasetPreview) {
  const at = (name: string) => data.columns.findIndex((c) => c.field_id === fieldId(name));
  const [i, p, q] = [at('id'), at('product'), at('qty')];
  expect([i, p, q].every((x) => x >= 0)).toBe(true);
  return data.rows
    .map((r) => [Number(r[i]), r[p], r[q] === MASK ? MASK : Number(r[q])] as const)
    .sort((a, b) => a[0] - b[0]);
}

/** Denied cells answer the status and no data at all. */
function expectDenied(res: RestResponse, status: 401 | 404) {
  expect(res.status).toBe(status);
  expect(failure(res).code).toBe(status);
  expect(res.body).not.toHaveProperty('data');
}

/** A refusal equal, status and error, to the one for an unknown name (`unknown`) with that name swapped back. */
function sameErrorAs(res: RestResponse, unknown: RestResponse, unknownName: string, hiddenName: string) {
  expect([400, 422]).toContain(unknown.status);
  expect(res.status).toBe(unknown.status);
  const { timestamp: _a, ...got } = failure(res);
  const { timestamp: _b, ...expected } = failure(unknown);
  expect(got).toEqual(JSON.parse(JSON.stringify(expected).split(unknownName).join(hiddenName)));
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  const outsider = await createUser(t.deps);
  rightHolder = { ...outsider, token: await login(api, outsider.username, outsider.password) };
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const owner = cast.tokens.wsAdmin!;
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  sourceId = source;
  const ds = await createSalesDataset(api, owner, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
    extraFields: [{ id: -32, name: 'Удвоенная', formula: '[sales.amount] * 2' }],
  });
  datasetId = ds.id;
  fieldId = ds.fieldId;

  // The restricted user: two products (RLS), `amount` hidden, `qty` masked (CLS).
  ok(
    await api.put(
      `/api/users/${cast.users.viewer.id}/attributes`,
      { attributes: { product: ALLOWED_PRODUCTS } },
      cast.tokens.sysadmin,
    ),
  );
  ok(
    await api.post(
      `/api/dataset/${datasetId}/rls-rules`,
      {
        field_id: fieldId('product'),
        attribute: 'product',
        operator: 'in',
        user_ids: [cast.users.viewer.id],
        group_ids: [],
      },
      owner,
    ),
  );
  for (const [action, name] of [
    ['hide', 'amount'],
    ['mask', 'qty'],
  ])
    ok(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [fieldId(name)], action, user_ids: [cast.users.viewer.id], group_ids: [] },
        owner,
      ),
    );

  widgetId = ok<WidgetView>(
    await api.post('/api/widget', { name: 'w', type: 'table', dataset_id: datasetId, ...SHELVES }, owner),
  ).id;
  dashboardId = (await postDashboard(api, owner, cast.workspaceId)).id;
  ok(
    await api.put(
      `/api/dashboard/${dashboardId}/schema`,
      { items: [{ widget_id: widgetId, x: 0, y: 0, w: 1, h: 1 }] },
      owner,
    ),
  );
  for (const [type, id] of [
    ['dataset', datasetId],
    ['widget', widgetId],
    ['dashboard', dashboardId],
  ] as const)
    ok(await api.put(`/api/access/${type}/${id}/users/${rightHolder.id}`, { right: 'view' }, owner));
  const withSourceRight = async (right: 'view' | 'edit') => {
    const user = await createUser(t.deps);
    ok(await api.put(`/api/access/data-source/${sourceId}/users/${user.id}`, { right }, owner));
    return { ...user, token: await login(api, user.username, user.password) };
  };
  sourceViewer = await withSourceRight('view');
  sourceEditor = await withSourceRight('edit');

  selectorBoardId = (await postDashboard(api, owner, cast.workspaceId)).id;
  ok(
    await api.put(
      `/api/dashboard/${selectorBoardId}/schema`,
      {
        items: [{ widget_id: widgetId, x: 0, y: 0, w: 1, h: 1 }],
        selectors: [{ id: 'p', name: 'Продукт', field_id: fieldId('product'), values: [], widget_ids: [widgetId] }],
      },
      owner,
    ),
  );
  const reader = await createUser(t.deps);
  for (const [type, id] of [
    ['widget', widgetId],
    ['dashboard', selectorBoardId],
  ] as const)
    ok(await api.put(`/api/access/${type}/${id}/users/${reader.id}`, { right: 'view' }, owner));
  widgetReader = { ...reader, token: await login(api, reader.username, reader.password) };

  const editor = await createUser(t.deps);
  ok(await api.put(`/api/access/dataset/${datasetId}/users/${editor.id}`, { right: 'edit' }, owner));
  ok(
    await api.post(
      `/api/dataset/${datasetId}/cls-rules`,
      { field_ids: [fieldId('amount')], action: 'hide', user_ids: [editor.id], group_ids: [] },
      owner,
    ),
  );
  datasetEditor = { ...editor, token: await login(api, editor.username, editor.password) };
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

/** Each data path: reading it as a viewer and checking what came back for that viewer's sight. */
const PATHS: { name: string; check: (v: Viewer) => Promise<void> }[] = [
  {
    name: 'POST /api/widget/{id}/data',
    async check(v) {
      const res = await widgetData(v);
      if (typeof v.sight === 'number') return expectDenied(res, v.sight);
      expectFlat(res, v.sight);
    },
  },
  {
    name: 'POST /api/widget/preview',
    async check(v) {
      const res = await widgetPreview(v);
      if (typeof v.sight === 'number') return expectDenied(res, v.sight);
      expectFlat(res, v.sight);
    },
  },
  {
    name: 'POST /api/dataset/{id}/preview (default columns)',
    async check(v) {
      const res = await datasetPreview(v);
      if (typeof v.sight === 'number') return expectDenied(res, v.sight);
      const data = ok<DatasetPreview>(res);
      const columns = data.columns.map((c) => c.field_id);
      if (v.sight === 'restricted') {
        expect(columns).not.toContain(fieldId('amount'));
        expect(columns).not.toContain(fieldId('Удвоенная'));
        expect(columns).not.toContain(fieldId('Выручка'));
      } else expect(columns).toContain(fieldId('amount'));
      expect(previewRows(data)).toEqual(expectedRows(v.sight));
    },
  },
  {
    name: 'POST /api/dataset/{id}/preview (explicit field_ids)',
    async check(v) {
      const res = await datasetPreview(v, { field_ids: ['id', 'product', 'qty'].map((n) => fieldId(n)) });
      if (typeof v.sight === 'number') return expectDenied(res, v.sight);
      const data = ok<DatasetPreview>(res);
      expect(data.columns.map((c) => c.field_id)).toEqual(['id', 'product', 'qty'].map((n) => fieldId(n)));
      expect(previewRows(data)).toEqual(expectedRows(v.sight));
    },
  },
  {
    name: 'GET /api/dataset/{id}/field-values',
    async check(v) {
      // A system administrator viewing as the restricted user must get that user's values (viewAsUserId in the query).
      const res = await fieldValues(v, fieldId('id'));
      if (typeof v.sight === 'number') return expectDenied(res, v.sight);
      const values = ok<FieldValues>(res)
        .values.map(Number)
        .sort((a, b) => a - b);
      expect(values).toEqual(v.sight === 'restricted' ? ALLOWED_IDS : ALL_IDS);
    },
  },
  {
    name: 'POST /api/dashboard/{id}/data',
    async check(v) {
      const res = await dashboardData(v);
      if (typeof v.sight === 'number') return expectDenied(res, v.sight);
      const [entry] = ok<DashboardData>(res).widgets;
      expect(entry.widget_id).toBe(widgetId);
      if (!('data' in entry)) throw new Error(`widget error: ${JSON.stringify(entry.error)}`);
      expect(entry.data.kind).toBe('flat');
      expectFlat({ status: 200, body: { success: true, data: entry.data }, headers: {} }, v.sight);
    },
  },
];

describe('rows, fields and objects per viewer and data path', () => {
  for (const v of VIEWERS)
    describe(v.name, () => {
      for (const p of PATHS) it(`${p.name}: ${v.sight}`, () => p.check(v));
    });
});

/*
 * Naming the hidden field (`amount`, or `Удвоенная`, the dataset's calculated field over it) anywhere a request can
 * name a field. For the restricted user (and an administrator viewing as them) each probe must fail exactly as the
 * same request naming `amountx`, which does not exist; every unrestricted reader gets an answer.
 */
const filterOn = (sql: string) => ({ filters: [{ sql, op: 'gt', values: [0], value_type: 'number' }] });
const sortOn = (sql: string) => ({ rows: [{ id: 'a', sql }], sorts: [{ field_id: 'a', direction: 'desc' }] });
const calcOver = (sql: string) => ({
  rows: [{ id: 'c', sql: '[calc]' }],
  calculated_fields: [{ name: 'calc', sql: `${sql} + 1` }],
});

interface Probe {
  name: string;
  /** The call naming the hidden field (`hidden`) or, in its place, one that does not exist. */
  call: (v: Viewer, hidden: boolean) => Promise<RestResponse>;
  /** How the unknown name appears in the error, and the hidden one it stands for. */
  names: () => [string, string];
}
const ref = (hidden: boolean) => (hidden ? '[sales.amount]' : '[sales.amountx]');
const UNKNOWN_ID = 9_000_001;
const PROBES: Probe[] = [
  ...(
    [
      ['a shelf', (r: string) => ({ rows: [{ id: 'a', sql: r }] })],
      ['a filter', (r: string) => filterOn(r)],
      ['a sort', (r: string) => sortOn(r)],
      ['a request calculated field', (r: string) => calcOver(r)],
    ] as const
  ).flatMap(([where, body]) => [
    {
      name: `POST /api/widget/preview, ${where}`,
      call: (v: Viewer, hidden: boolean) => widgetPreview(v, body(ref(hidden))),
      names: (): [string, string] => ['amountx', 'amount'],
    },
    {
      name: `POST /api/widget/{id}/data, ${where}`,
      call: (v: Viewer, hidden: boolean) => widgetData(v, body(ref(hidden))),
      names: (): [string, string] => ['amountx', 'amount'],
    },
  ]),
  {
    name: "POST /api/dataset/{id}/preview, a filter on the dataset's calculated field over it",
    call: (v, hidden) => datasetPreview(v, filterOn(hidden ? '[Удвоенная]' : '[Удвоеннаяx]')),
    names: () => ['Удвоеннаяx', 'Удвоенная'],
  },
  {
    name: 'POST /api/dataset/{id}/preview, a filter',
    call: (v, hidden) => datasetPreview(v, filterOn(ref(hidden))),
    names: () => ['amountx', 'amount'],
  },
  {
    name: 'POST /api/dataset/{id}/preview, field_ids',
    call: (v, hidden) => datasetPreview(v, { field_ids: [fieldId('id'), hidden ? fieldId('amount') : UNKNOWN_ID] }),
    names: () => [String(UNKNOWN_ID), String(fieldId('amount'))],
  },
  {
    name: 'POST /api/dataset/{id}/preview, field_ids of the calculated field over it',
    call: (v, hidden) => datasetPreview(v, { field_ids: [fieldId('id'), hidden ? fieldId('Удвоенная') : UNKNOWN_ID] }),
    names: () => [String(UNKNOWN_ID), String(fieldId('Удвоенная'))],
  },
  {
    name: 'GET /api/dataset/{id}/field-values',
    call: (v, hidden) => fieldValues(v, hidden ? fieldId('amount') : UNKNOWN_ID),
    names: () => [String(UNKNOWN_ID), String(fieldId('amount'))],
  },
];

describe('the hidden field, named in a request', () => {
  const readers = VIEWERS.filter((v) => v.sight === 'restricted' || v.sight === 'all');
  for (const v of readers)
    describe(v.name, () => {
      for (const probe of PROBES)
        it(probe.name, async () => {
          const res = await probe.call(v, true);
          if (v.sight === 'all') {
            expect(res.status).toBe(200);
            return;
          }
          const [unknown, hidden] = probe.names();
          sameErrorAs(res, await probe.call(v, false), unknown, hidden);
        });
    });
});

/*
 * A source's own rows (POST /api/data-source/{id}/preview, GET /api/data-source/{id}/column-values) are read outside
 * any dataset, so no RLS or CLS rule narrows them: they are for those who may edit the source (an editing role in its
 * workspace, the `edit` right on it, a system administrator). The restricted Наблюдатель must not get round the
 * dataset's rules there, nor may a reader who holds only a `view` right. The same holds for the source's schema
 * (GET .../schemas, /tables, /columns): it lists `amount`, which the CLS rule hides from the Наблюдатель.
 */
describe("the source's own rows, outside any dataset", () => {
  const RAW_READERS: { name: string; token: () => string | undefined; status: 200 | 401 | 403 | 404 }[] = [
    { name: 'anonymous', token: () => undefined, status: 401 },
    { name: 'a user of another workspace', token: () => cast.tokens.plain, status: 404 },
    { name: 'Наблюдатель (restricted by RLS and CLS)', token: () => cast.tokens.viewer, status: 403 },
    { name: 'Редактор', token: () => cast.tokens.editor, status: 200 },
    { name: 'Администратор', token: () => cast.tokens.wsAdmin, status: 200 },
    {
      name: 'a non-member with view rights on the dataset, widget and dashboard',
      token: () => rightHolder.token,
      status: 404,
    },
    { name: 'a non-member with the view right on the source', token: () => sourceViewer.token, status: 403 },
    { name: 'a non-member with the edit right on the source', token: () => sourceEditor.token, status: 200 },
    { name: 'system administrator', token: () => cast.tokens.sysadmin, status: 200 },
  ];
  const base = () => `/api/data-source/${sourceId}`;
  const expectRefused = (res: RestResponse, status: number) => {
    expect(res.status).toBe(status);
    expect(failure(res).code).toBe(status);
    if (status === 403) expect(failure(res).message).toBe('Доступ запрещён');
    expect(res.body).not.toHaveProperty('data');
  };

  for (const r of RAW_READERS)
    describe(r.name, () => {
      it(`POST /api/data-source/{id}/preview: ${r.status}`, async () => {
        const res = await api.post(
          `${base()}/preview`,
          { schema: 'public', table: tables.sales, limit: 100 },
          r.token(),
        );
        if (r.status !== 200) return expectRefused(res, r.status);
        const data = ok<{ columns: { name: string }[]; rows: unknown[][] }>(res);
        expect(data.columns.map((c) => c.name)).toContain('amount');
        expect(data.rows).toHaveLength(SALES.length);
      });
      it(`GET /api/data-source/{id}/column-values: ${r.status}`, async () => {
        const res = await api.get(`${base()}/column-values`, r.token(), {
          schema: 'public',
          table: tables.sales,
          column: 'product',
        });
        if (r.status !== 200) return expectRefused(res, r.status);
        const products = new Set(SALES.map((s) => s.product));
        expect(ok<{ values: unknown[] }>(res).values).toHaveLength(products.size);
      });
      it(`GET /api/data-source/{id}/schemas, /tables, /columns: ${r.status}`, async () => {
        const schemas = await api.get(`${base()}/schemas`, r.token());
        const listed = await api.get(`${base()}/tables`, r.token(), { schema: 'public', query: tables.sales });
        const columns = await api.get(`${base()}/columns`, r.token(), { schema: 'public', table: tables.sales });
        if (r.status !== 200) {
          for (const res of [schemas, listed, columns]) expectRefused(res, r.status);
          return;
        }
        expect(ok<{ content: string[] }>(schemas).content).toContain('public');
        expect(ok<{ content: { name: string }[] }>(listed).content.map((x) => x.name)).toEqual([tables.sales]);
        expect(ok<{ content: { name: string }[] }>(columns).content.map((c) => c.name)).toContain('amount');
      });
    });
});

/*
 * A right covers that one object: a `view` right on the widget alone (none on its dataset) reads what the widget
 * saves, page by page, and through a dashboard its selectors, but a widget data request of the caller's own shape
 * (shelves, a kind, calculated fields, filters, sorts beyond the saved shelves) would read the dataset beyond the
 * widget: 403 «Доступ запрещён», for the holder and for a system administrator viewing as them. A reader of the
 * dataset (the right holder above) shapes requests freely (see the probes).
 */
describe('a view right on the widget alone', () => {
  const asReader = { name: 'widget reader', token: () => widgetReader.token, sight: 'all' as const };
  const viewingAsReader = {
    name: 'system administrator viewing as the widget reader',
    token: () => cast.tokens.sysadmin,
    viewAs: () => widgetReader.id,
    sight: 'all' as const,
  };
  const expectForbidden = (res: RestResponse) => {
    expect(res.status).toBe(403);
    expect(failure(res).message).toBe('Доступ запрещён');
    expect(res.body).not.toHaveProperty('data');
  };

  it('does not open the dataset', async () => {
    expectDenied(await api.get(`/api/dataset/${datasetId}`, widgetReader.token), 404);
    expectDenied(await datasetPreview(asReader), 404);
    expectDenied(await widgetPreview(asReader), 404);
  });

  it('reads the saved widget, sent back as saved, page by page', async () => {
    expectFlat(await widgetData(asReader), 'all');
    expectFlat(await widgetData(asReader, { type: 'table', ...SHELVES, series: [], columns: [] }), 'all');
    const sorted = ok<FlatData>(
      await widgetData(asReader, { sorts: [{ field_id: 'i', direction: 'desc' }], page: 2, page_size: 10 }),
    );
    expect(sorted.rows.map((r) => Number(r.i))).toEqual(ALL_IDS.slice().reverse().slice(10, 20));
    expect(sorted.page).toEqual({ page: 2, pageSize: 10, hasMore: true });
  });

  const OWN_SHAPES: [string, Record<string, unknown>][] = [
    [
      'shelves of its own',
      {
        rows: [
          { id: 'a', sql: '[sales.amount]' },
          { id: 'p', sql: '[sales.product]' },
        ],
      },
    ],
    ['a shelf of the saved ones left out', { rows: SHELVES.rows.slice(0, 2) }],
    ['another kind', { type: 'kpi' }],
    ['a filter', filterOn('[sales.amount]')],
    ['a filter on a field the widget shows', { filters: [{ sql: '[sales.product]', op: 'in', values: ['чай'] }] }],
    ['a calculated field redefining nothing saved', { calculated_fields: [{ name: 'calc', sql: '[sales.amount]' }] }],
    ['a calculated field on its own shelf', calcOver('[sales.amount]')],
    ['a sort by a field not on the saved shelves', sortOn('[sales.amount]')],
  ];
  for (const [name, body] of OWN_SHAPES) {
    it(`refuses ${name} with 403`, async () => {
      expectForbidden(await widgetData(asReader, body));
      expectForbidden(await widgetData(viewingAsReader, body));
    });
  }

  it('reads the widget through the dashboard, with its selectors', async () => {
    const res = await api.post(
      `/api/dashboard/${selectorBoardId}/data`,
      { filters: [{ selector_id: 'p', values: ['чай'] }] },
      widgetReader.token,
    );
    const [entry] = ok<DashboardData>(res).widgets;
    if (!('data' in entry)) throw new Error(`widget error: ${JSON.stringify(entry.error)}`);
    const rows = flatRows(entry.data as FlatData);
    expect(rows.map(([i]) => i)).toEqual(SALES.filter((s) => s.product === 'чай').map((s) => s.id));
  });
});

describe('a view right on the widget alone, through file exports', () => {
  it('exports the saved widget, but not filters of its own (POST /api/exports)', async () => {
    const body = { object_type: 'widget', object_id: widgetId, format: 'csv' };
    expect((await api.post('/api/exports', body, widgetReader.token)).status).toBe(200);
    const probe = await api.post(
      '/api/exports',
      { ...body, filters: [{ sql: '[sales.product]', op: 'in', values: ['чай'] }] },
      widgetReader.token,
    );
    expect(probe.status).toBe(403);
    expect(failure(probe).message).toBe('Доступ запрещён');
  });
});

/*
 * The dataset read (GET /api/dataset/{id}) names no field the caller's column rules hide: not `amount`, not the
 * dataset's calculated fields over it (`Удвоенная`, `Выручка`), since naming them anywhere else is answered as "not
 * found". Masked fields stay listed. Whoever may edit the dataset sees every field: they manage the rules.
 */
describe('GET /api/dataset/{id}: the fields the caller may name', () => {
  const HIDDEN = ['amount', 'Удвоенная', 'Выручка'];
  const namesOf = (res: RestResponse) => ok<{ fields: { id: number; name: string }[] }>(res).fields.map((f) => f.name);

  for (const v of VIEWERS.filter((x) => !x.viewAs))
    it(`${v.name}: ${v.sight}`, async () => {
      const res = await api.get(`/api/dataset/${datasetId}`, v.token());
      if (typeof v.sight === 'number') return expectDenied(res, v.sight);
      const names = namesOf(res);
      expect(names).toContain('qty');
      for (const name of HIDDEN)
        if (v.sight === 'restricted') expect(names).not.toContain(name);
        else expect(names).toContain(name);
    });

  it('a caller who may edit the dataset sees the fields a rule hides from them', async () => {
    const names = namesOf(await api.get(`/api/dataset/${datasetId}`, datasetEditor.token));
    for (const name of HIDDEN) expect(names).toContain(name);
  });
});
