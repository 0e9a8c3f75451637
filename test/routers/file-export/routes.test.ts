import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJobs } from '../../../db/schema/exports';
import { issueRenderToken } from '../../../server/file-export/render-token';
import { insertExportJob, type ExportJobRow } from '../../../server/file-export/store';
import { useTestApp } from '../../support/app';
import { createDashboardRow } from '../../support/factories';
import { failure, ok, type RestResponse } from '../../support/rest';
import { runExport } from './jobs';
import { exportWorld, type ExportWorld } from './world';

/* File export jobs through the API: CSV download by the owner only, refusals, limits, render token rules. */

const { t, api } = useTestApp();
let w: ExportWorld;

beforeAll(async () => {
  w = await exportWorld(t.deps, api, 20);
});
afterAll(() => w.close());

const csvBody = () => ({ object_type: 'widget', object_id: w.widgetId, format: 'csv' });

describe('POST /api/exports, GET /api/exports/{jobId}, GET /api/exports/{jobId}/file', () => {
  it('csv: the owner downloads it with Content-Disposition (RFC 5987), others get 404', async () => {
    const job = await runExport(api, w.cast.tokens.viewer!, csvBody());
    expect(job.state, job.error ?? '').toBe('succeeded');
    expect(job.progress).toBe(100);
    expect(job.file_name).toBe('Продажи по дням.csv');
    const file = await api.get(`/api/exports/${job.job_id}/file`, w.cast.tokens.viewer);
    expect(file.status).toBe(200);
    expect(String(file.headers['content-type'])).toContain('text/csv');
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="_______ __ ____.csv"; filename*=UTF-8''${encodeURIComponent('Продажи по дням.csv')}`,
    );
    const text = String(file.body);
    expect(text.charCodeAt(0)).toBe(0xfeff);
    expect(text.slice(1).split('\n')[0]).toBe('id,Товар,Дата продажи,Сумма');

    expect((await api.get(`/api/exports/${job.job_id}/file`, w.cast.tokens.editor)).status).toBe(404);
    expect((await api.get(`/api/exports/${job.job_id}`, w.cast.tokens.editor)).status).toBe(404);
    expect((await api.get(`/api/exports/${job.job_id}/file`)).status).toBe(401);
  });

  it('refusals: unknown format 422, view_as_user_id by a non-administrator 403, an unreadable object 404', async () => {
    const bad = await api.post('/api/exports', { ...csvBody(), format: 'docx' }, w.cast.tokens.viewer);
    expect(bad.status).toBe(422);
    const viewAs = await api.post(
      '/api/exports',
      { ...csvBody(), view_as_user_id: w.cast.users.editor.id },
      w.cast.tokens.viewer,
    );
    expect(viewAs.status).toBe(403);
    expect(failure(viewAs).message).toBe('Доступ запрещён');
    expect((await api.post('/api/exports', csvBody(), w.cast.tokens.plain)).status).toBe(404);
    // A system administrator exports as the viewer: allowed.
    const asViewer = await runExport(api, w.cast.tokens.sysadmin!, {
      ...csvBody(),
      view_as_user_id: w.cast.users.viewer.id,
    });
    expect(asViewer.state).toBe('succeeded');
  });

  it('refused before a job is queued: a dashboard as csv or xlsx, a filter or parameter the read would refuse', async () => {
    const token = w.cast.tokens.editor!;
    const dashboard = ok<{ id: number }>(
      await api.post('/api/dashboard', { name: 'Экспорт', workspace_id: w.cast.workspaceId }, token),
    ).id;
    const jobsBefore = (await t.deps.db.select({ id: exportJobs.id }).from(exportJobs)).length;
    for (const format of ['csv', 'xlsx']) {
      const res = await api.post('/api/exports', { object_type: 'dashboard', object_id: dashboard, format }, token);
      expect(res.status).toBe(422);
      expect(failure(res).errors).toEqual({
        format: 'Дашборд выгружается в PDF или PNG; для CSV и XLSX выберите виджет',
      });
    }
    const badFilter = await api.post(
      '/api/exports',
      { ...csvBody(), filters: [{ sql: '[sales.nope]', op: 'eq', values: [1] }] },
      token,
    );
    expect(badFilter.status).toBe(422);
    expect(Object.keys(failure(badFilter).errors ?? {})).toEqual([expect.stringMatching(/^filters\[0\]/)]);
    expect(JSON.stringify(failure(badFilter).errors)).toContain('nope');
    // Nothing was queued for any of them.
    expect((await t.deps.db.select({ id: exportJobs.id }).from(exportJobs)).length).toBe(jobsBefore);
  });

  it('limits: anyone reads them, only a system administrator changes them; max_rows fails the job naming it', async () => {
    expect(ok(await api.get('/api/exports/limits', w.cast.tokens.plain))).toMatchObject({ max_rows: 1_000_000 });
    expect((await api.put('/api/exports/limits', { max_rows: 5 }, w.cast.tokens.wsAdmin)).status).toBe(403);
    const put = await api.put('/api/exports/limits', { max_rows: 5 }, w.cast.tokens.sysadmin);
    expect(ok(put)).toMatchObject({ max_rows: 5 });
    try {
      const job = await runExport(api, w.cast.tokens.viewer!, csvBody());
      expect(job.state).toBe('failed');
      expect(job.error).toContain('max_rows');
      expect((await api.get(`/api/exports/${job.job_id}/file`, w.cast.tokens.viewer)).status).toBe(404);
    } finally {
      await api.put('/api/exports/limits', { max_rows: 1_000_000 }, w.cast.tokens.sysadmin);
    }
  });
});

describe('csv: text a spreadsheet would read as a formula is written inert, numbers stay numbers', () => {
  let f: ExportWorld;
  // Text cells of the text field `product` (an apostrophe before each but the plain one) beside the numeric amount.
  const PRODUCTS = ['=1+2', '@SUM(A1)', '+7', '-5', '\tx', '\rx', 'чай'];
  beforeAll(async () => {
    f = await exportWorld(t.deps, api, PRODUCTS.length);
    await f.source.db.query(
      `UPDATE ${f.source.sales} SET product = ($1::text[])[id], amount = CASE id WHEN 4 THEN -5 ELSE id END`,
      [PRODUCTS],
    );
  });
  afterAll(() => f.close());

  it('POST /api/exports and its download: =, +, -, @, tab and CR-led text get an apostrophe, -5 of amount does not', async () => {
    // The header is a shelf's alias, text as well.
    const widgetId = await f.widget({ columns: [{ id: 'amount', sql: 'SUM([sales.amount])', alias: '=Сумма' }] });
    const job = await runExport(api, f.cast.tokens.viewer!, {
      object_type: 'widget',
      object_id: widgetId,
      format: 'csv',
    });
    expect(job.state, job.error ?? '').toBe('succeeded');
    const file = await api.get(`/api/exports/${job.job_id}/file`, f.cast.tokens.viewer);
    expect(file.status).toBe(200);
    const day = (i: number) => f.sales[i].sold_on;
    expect(String(file.body)).toBe(
      [
        "\ufeffid,Товар,Дата продажи,'=Сумма",
        `1,'=1+2,${day(0)},1`,
        `2,'@SUM(A1),${day(1)},2`,
        `3,'+7,${day(2)},3`,
        `4,'-5,${day(3)},-5`,
        `5,'\tx,${day(4)},5`,
        `6,"'\rx",${day(5)},6`,
        `7,чай,${day(6)},7`,
        '',
      ].join('\n'),
    );
  });
});

describe('render routes: only a render token of a running job, for its object', () => {
  let widgetJob: ExportJobRow;
  let widgetToken: string;
  let dashboardId: number;
  let dashboardJob: ExportJobRow;
  let dashboardToken: string;
  let apiToken: string;

  const runningJob = (objectType: 'widget' | 'dashboard', objectId: number) =>
    insertExportJob(t.deps.db, {
      ownerId: w.cast.users.viewer.id,
      objectType,
      objectId,
      format: 'pdf',
      state: 'running',
    });

  beforeAll(async () => {
    widgetJob = await runningJob('widget', w.widgetId);
    widgetToken = await issueRenderToken(t.deps.db, widgetJob);
    dashboardId = (
      await createDashboardRow(t.deps, {
        workspaceId: w.cast.workspaceId,
        authorId: w.cast.users.editor.id,
        name: 'Панель для печати',
        layout: {
          tabs: [],
          items: [{ widget_id: w.widgetId, tab_id: null, x: 0, y: 0, w: 12, h: 6 }],
          selectors: [],
          parameters: [],
        },
      })
    ).id;
    dashboardJob = await runningJob('dashboard', dashboardId);
    dashboardToken = await issueRenderToken(t.deps.db, dashboardJob);
    ok(
      await api.put(
        '/api/mcp-tokens/settings',
        { enabled: true, allowed_account_types: ['local'], access_group_id: null },
        w.cast.tokens.sysadmin,
      ),
    );
    const issued = await api.post('/api/mcp-tokens', { name: 'скрипт' }, w.cast.tokens.viewer);
    apiToken = ok<{ token: string }>(issued).token;
    expect(apiToken).toMatch(/^apt_/);
  });

  /** The four render routes, each for the widget job's object. */
  const routes = () =>
    [
      { method: 'GET', url: `/api/render/widget/${w.widgetId}`, query: { jobId: String(widgetJob.id) } },
      { method: 'GET', url: `/api/render/dashboard/${dashboardId}`, query: { jobId: String(dashboardJob.id) } },
      { method: 'POST', url: `/api/render/widget/${w.widgetId}/data`, body: {} },
      { method: 'GET', url: '/api/render/context' },
    ] as const;

  it('no token, a session token or an API token (as bearer or as X-Render-Token) is refused on every render route', async () => {
    const viewerSession = w.cast.tokens.viewer!;
    for (const r of routes()) {
      const name = `${r.method} ${r.url}`;
      const call = (opts: { token?: string; headers?: Record<string, string> }) =>
        api.call(r.method, r.url, {
          ...opts,
          query: 'query' in r ? r.query : undefined,
          body: 'body' in r ? r.body : undefined,
        });
      expect((await call({})).status, name).toBe(401);
      for (const token of [viewerSession, apiToken, w.cast.tokens.sysadmin!]) {
        expect((await call({ token })).status, name).toBe(401);
        const asRender = await call({ headers: { 'x-render-token': token } });
        expect(asRender.status, name).toBe(401);
        expect(failure(asRender).message).toBe('Недействительный токен рендеринга');
      }
    }
  });

  it('the render token of the running job serves its own object on each route', async () => {
    const widgetHeaders = { 'x-render-token': widgetToken };
    const page = await api.call('GET', `/api/render/widget/${w.widgetId}`, {
      headers: widgetHeaders,
      query: { jobId: String(widgetJob.id) },
    });
    expect(page.status).toBe(200);
    expect(String(page.headers['content-type'])).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    const data = await api.call('POST', `/api/render/widget/${w.widgetId}/data`, { headers: widgetHeaders, body: {} });
    expect(ok<{ rows: unknown[][] }>(data).rows).toHaveLength(20);
    const ctx = await api.call('GET', '/api/render/context', { headers: widgetHeaders });
    expect(ok<{ object: { type: string; id: number; name: string } }>(ctx).object).toMatchObject({
      type: 'widget',
      id: w.widgetId,
      name: 'Продажи по дням',
    });

    const dashboardHeaders = { 'x-render-token': dashboardToken };
    const dashboardPage = await api.call('GET', `/api/render/dashboard/${dashboardId}`, {
      headers: dashboardHeaders,
      query: { jobId: String(dashboardJob.id) },
    });
    expect(dashboardPage.status).toBe(200);
    expect(String(dashboardPage.headers['content-type'])).toBe('text/html; charset=utf-8');
    // The dashboard's tile: its data through the dashboard job's token.
    const tile = await api.call('POST', `/api/render/widget/${w.widgetId}/data`, {
      headers: dashboardHeaders,
      body: {},
    });
    expect(tile.status).toBe(200);
    const dashCtx = ok<{ object: { type: string; name: string; widgets: { id: number }[] } }>(
      await api.call('GET', '/api/render/context', { headers: dashboardHeaders }),
    );
    expect(dashCtx.object).toMatchObject({
      type: 'dashboard',
      name: 'Панель для печати',
      widgets: [{ id: w.widgetId }],
    });
  });

  it('a wrong, missing or malformed jobId, another object or another kind of object: 404', async () => {
    const headers = { 'x-render-token': widgetToken };
    const widgetPage = (id: number, query?: Record<string, string>) =>
      api.call('GET', `/api/render/widget/${id}`, { headers, query });
    const refusedAs404 = async (res: Promise<RestResponse>) => {
      const r = await res;
      expect(r.status).toBe(404);
      return r;
    };
    await refusedAs404(widgetPage(w.widgetId));
    await refusedAs404(widgetPage(w.widgetId, { jobId: String(dashboardJob.id) }));
    await refusedAs404(widgetPage(w.widgetId, { jobId: String(widgetJob.id + 1000) }));
    await refusedAs404(widgetPage(w.widgetId, { jobId: 'abc' }));
    const other = await w.widget({ name: 'Другой' });
    const wrongObject = await refusedAs404(widgetPage(other, { jobId: String(widgetJob.id) }));
    expect(failure(wrongObject).message).toBe('Объект рендеринга не найден');
    await refusedAs404(api.call('POST', `/api/render/widget/${other}/data`, { headers, body: {} }));
    // The widget job's token on the dashboard page, and the dashboard job's token for another dashboard.
    await refusedAs404(
      api.call('GET', `/api/render/dashboard/${dashboardId}`, { headers, query: { jobId: String(dashboardJob.id) } }),
    );
    await refusedAs404(
      api.call('GET', `/api/render/dashboard/${dashboardId}`, { headers, query: { jobId: String(widgetJob.id) } }),
    );
    await refusedAs404(
      api.call('GET', `/api/render/dashboard/${dashboardId + 1000}`, {
        headers: { 'x-render-token': dashboardToken },
        query: { jobId: String(dashboardJob.id) },
      }),
    );
    // A widget the dashboard does not show: not through the dashboard's token.
    await refusedAs404(
      api.call('POST', `/api/render/widget/${other}/data`, { headers: { 'x-render-token': dashboardToken }, body: {} }),
    );
  });

  it('a render token works on no other route, as bearer or as its own header', async () => {
    // The routes of the very job the token stands for (its owner's), and the widget and dashboard it may draw.
    for (const [method, url] of [
      ['GET', '/api/exports/limits'],
      ['GET', `/api/exports/${widgetJob.id}`],
      ['GET', `/api/exports/${widgetJob.id}/file`],
      ['POST', `/api/widget/${w.widgetId}/data`],
      ['GET', `/api/dashboard/${dashboardId}`],
    ] as const) {
      expect(
        (await api.call(method, url, { token: widgetToken, body: method === 'POST' ? {} : undefined })).status,
        url,
      ).toBe(401);
      const header = await api.call(method, url, {
        headers: { 'x-render-token': widgetToken },
        body: method === 'POST' ? {} : undefined,
      });
      expect(header.status, url).toBe(401);
    }
  });

  it('a token replayed after its job ended is refused', async () => {
    const ended = await insertExportJob(t.deps.db, {
      ownerId: w.cast.users.viewer.id,
      objectType: 'widget',
      objectId: w.widgetId,
      format: 'pdf',
      state: 'running',
    });
    const replay = await issueRenderToken(t.deps.db, ended);
    const headers = { 'x-render-token': replay };
    expect((await api.call('GET', '/api/render/context', { headers })).status).toBe(200);
    await t.deps.db.update(exportJobs).set({ state: 'succeeded' }).where(eq(exportJobs.id, ended.id));
    for (const r of [
      api.call('GET', '/api/render/context', { headers }),
      api.call('GET', `/api/render/widget/${w.widgetId}`, { headers, query: { jobId: String(ended.id) } }),
      api.call('POST', `/api/render/widget/${w.widgetId}/data`, { headers, body: {} }),
    ]) {
      const res = await r;
      expect(res.status).toBe(401);
      expect(failure(res).message).toBe('Недействительный токен рендеринга');
    }
  });
});
