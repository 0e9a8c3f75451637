import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import type { createTokenOutput } from '../../../routers/mcp-tokens/schemas';
import { useTestApp } from '../../support/app';
import {
  createDashboardRow,
  createRoleCast,
  enableApiTokens,
  issueApiToken,
  type RoleCast,
} from '../../support/factories';
import { ok } from '../../support/rest';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  tableExists,
  type WidgetView,
} from '../widgets/world';

/*
 * The MCP endpoint (/mcp, Streamable HTTP) driven by the SDK's own client over real HTTP: the tools, data read with an
 * API token under its owner's rights and RLS, and the refusals (session token, suspended or revoked token, tokens
 * switched off, non-owner SQL, writing SQL).
 */

type NewToken = z.output<typeof createTokenOutput>;
interface ToolResult {
  content: { type: string; text: string }[];
  isError?: boolean;
}

const SALES = makeSales(60);
const { t, api } = useTestApp();
let base: URL;
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;
let sourceId: number;
let widgetId: number;
let dashboardId: number;
let viewerApi: string;
let ownerApi: string;

const qtyOf = (product: string) => SALES.filter((s) => s.product === product).reduce((a, s) => a + s.qty, 0);

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function call(token: string, name: string, args: Record<string, unknown> = {}) {
  const client = await connect(token);
  try {
    const result = (await client.callTool({ name, arguments: args })) as ToolResult;
    return { isError: result.isError ?? false, text: result.content[0].text };
  } finally {
    await client.close();
  }
}
const json = <T>(r: { isError: boolean; text: string }): T => {
  if (r.isError) throw new Error(r.text);
  return JSON.parse(r.text) as T;
};

beforeAll(async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = new URL(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`);
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const dataset = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId,
    tables,
  });
  datasetId = dataset.id;
  widgetId = ok<WidgetView>(
    await api.post(
      '/api/widget',
      {
        name: 'qty by product',
        type: 'table',
        dataset_id: datasetId,
        rows: [{ id: 'p', sql: '[sales.product]' }],
        columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
        sorts: [{ field_id: 'p', direction: 'asc' }],
      },
      cast.tokens.editor,
    ),
  ).id;
  dashboardId = (
    await createDashboardRow(t.deps, {
      workspaceId: cast.workspaceId,
      authorId: cast.users.wsAdmin.id,
      layout: {
        tabs: [],
        items: [{ widget_id: widgetId, tab_id: null, x: 0, y: 0, w: 6, h: 4 }],
        selectors: [],
        parameters: [],
      },
    })
  ).id;
  // RLS: the viewer sees the coffee rows only.
  ok(
    await api.post(
      `/api/dataset/${datasetId}/rls-rules`,
      { field_id: dataset.fieldId('product'), attribute: 'product', operator: 'in', user_ids: [cast.users.viewer.id] },
      cast.tokens.wsAdmin,
    ),
  );
  ok(
    await api.put(
      `/api/users/${cast.users.viewer.id}/attributes`,
      { attributes: { product: ['кофе'] } },
      cast.tokens.sysadmin,
    ),
  );
  await enableApiTokens(api, cast.tokens.sysadmin!);
  viewerApi = await issueApiToken(api, cast.tokens.viewer!);
  ownerApi = await issueApiToken(api, cast.tokens.wsAdmin!);
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('POST /mcp with an API token', () => {
  it('lists the tools', async () => {
    const client = await connect(viewerApi);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual(
        [
          'get_dataset',
          'list_dashboards',
          'list_data_sources',
          'list_datasets',
          'list_widgets',
          'list_workspaces',
          'preview_dataset',
          'read_dashboard_data',
          'read_widget_data',
          'run_sql',
        ].sort(),
      );
      expect(tools.find((x) => x.name === 'read_widget_data')?.inputSchema.properties).toHaveProperty('widget_id');
    } finally {
      await client.close();
    }
  });

  it('reads widget and dashboard data and previews the dataset with the owner’s RLS', async () => {
    const viewer = json<{ kind: string; rows: Record<string, unknown>[] }>(
      await call(viewerApi, 'read_widget_data', { widget_id: widgetId }),
    );
    expect(viewer.rows).toEqual([{ p: 'кофе', q: qtyOf('кофе') }]);
    const owner = json<{ rows: Record<string, unknown>[] }>(
      await call(ownerApi, 'read_widget_data', { widget_id: widgetId }),
    );
    expect(owner.rows.length).toBe(new Set(SALES.map((s) => s.product)).size);

    const dash = json<{ widgets: { widget_id: number; data: { rows: unknown[] } }[] }>(
      await call(viewerApi, 'read_dashboard_data', { dashboard_id: dashboardId }),
    );
    expect(dash.widgets).toEqual([{ widget_id: widgetId, data: expect.objectContaining({ rows: viewer.rows }) }]);

    const preview = json<{ columns: { name: string }[]; rows: unknown[][] }>(
      await call(viewerApi, 'preview_dataset', { dataset_id: datasetId, limit: 1000 }),
    );
    const product = preview.columns.findIndex((c) => c.name === 'product');
    expect(preview.rows.length).toBe(SALES.filter((s) => s.product === 'кофе').length);
    expect(new Set(preview.rows.map((r) => r[product]))).toEqual(new Set(['кофе']));
  });

  it('lists what the owner may read', async () => {
    const ws = json<{ content: { id: number }[] }>(await call(viewerApi, 'list_workspaces'));
    expect(ws.content.map((w) => w.id)).toContain(cast.workspaceId);
    const ds = json<{ content: { id: number }[] }>(
      await call(viewerApi, 'list_datasets', { workspace_id: cast.workspaceId }),
    );
    expect(ds.content.map((d) => d.id)).toEqual([datasetId]);
    const details = json<{ fields: { name: string }[] }>(
      await call(viewerApi, 'get_dataset', { dataset_id: datasetId }),
    );
    expect(details.fields.map((f) => f.name)).toContain('amount');
    const widgets = json<{ content: { id: number }[] }>(
      await call(viewerApi, 'list_widgets', { dataset_id: datasetId }),
    );
    expect(widgets.content.map((w) => w.id)).toEqual([widgetId]);
    const dashboards = json<{ content: { id: number }[] }>(
      await call(viewerApi, 'list_dashboards', { workspace_id: cast.workspaceId }),
    );
    expect(dashboards.content.map((d) => d.id)).toEqual([dashboardId]);
    const sources = json<{ content: { id: number }[] }>(await call(viewerApi, 'list_data_sources'));
    expect(sources.content.map((s) => s.id)).toContain(sourceId);
    // Another user's token sees none of it.
    const plainApi = await issueApiToken(api, cast.tokens.plain!);
    const hidden = await call(plainApi, 'read_widget_data', { widget_id: widgetId });
    expect(hidden).toEqual({ isError: true, text: `404: Виджет не найден (id ${widgetId})` });
  });

  it('run_sql: source owners only, one read-only query', async () => {
    const denied = await call(viewerApi, 'run_sql', { data_source_id: sourceId, sql: 'SELECT 1' });
    expect(denied.isError).toBe(true);
    expect(denied.text).toMatch(/^403: /);
    const rows = json<{ rows: unknown[][] }>(
      await call(ownerApi, 'run_sql', {
        data_source_id: sourceId,
        sql: `SELECT count(*)::int AS n FROM ${tables.sales}`,
      }),
    );
    expect(rows.rows).toEqual([[SALES.length]]);
    const cases: [string, string][] = [
      [`DROP TABLE ${tables.sales}`, 'Через MCP разрешены только запросы на чтение (SELECT)'],
      [`DELETE FROM ${tables.sales}`, 'Через MCP разрешены только запросы на чтение (SELECT)'],
      [`SELECT 1; DROP TABLE ${tables.sales}`, 'Проверяется одна команда за раз, а в тексте их 2'],
      // A read-only transaction would let these through: server files, sleeps, writing CTEs are refused before.
      ["SELECT pg_read_file('/etc/passwd')", 'Функция pg_read_file не разрешена в запросе на чтение'],
      ['SELECT pg_sleep(5)', 'Функция pg_sleep не разрешена в запросе на чтение'],
      [
        `WITH d AS (DELETE FROM ${tables.sales} RETURNING *) SELECT count(*) FROM d`,
        'Разрешены только запросы на чтение: слово DELETE не допускается',
      ],
    ];
    for (const [sql, message] of cases) {
      const refused = await call(ownerApi, 'run_sql', { data_source_id: sourceId, sql });
      expect(refused, sql).toEqual({ isError: true, text: `400: ${message}` });
    }
    expect(await tableExists(db, tables.sales)).toBe(true);
  });
});

describe('POST /mcp refusals', () => {
  it('refuses a session token, an unknown token and no token', async () => {
    await expect(connect(cast.tokens.viewer!)).rejects.toThrow(/401|MCP принимает только API-токены/);
    await expect(connect('apt_unknown')).rejects.toThrow(/401/);
    const res = await fetch(new URL('/mcp', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
  });

  it('a suspended token stops at once and works again when activated; a revoked one never again', async () => {
    const { token, id } = ok<NewToken>(await api.post('/api/mcp-tokens', { name: 'mcp' }, cast.tokens.viewer));
    const client = await connect(token);
    await client.listTools();
    ok(await api.post(`/api/mcp-tokens/${id}/suspend`, undefined, cast.tokens.viewer));
    // The open client's next call is refused: each request authenticates.
    await expect(client.listTools()).rejects.toThrow(/401|приостановлен/);
    await expect(connect(token)).rejects.toThrow(/401/);
    ok(await api.post(`/api/mcp-tokens/${id}/activate`, undefined, cast.tokens.viewer));
    await (await connect(token)).close();
    ok(await api.delete(`/api/mcp-tokens/${id}`, cast.tokens.viewer));
    await expect(connect(token)).rejects.toThrow(/401/);
  });

  it('API tokens switched off by the administrator: refused with the spec message', async () => {
    ok(
      await api.put(
        '/api/mcp-tokens/settings',
        { enabled: false, allowed_account_types: ['local', 'sso', 'service'], access_group_id: null },
        cast.tokens.sysadmin,
      ),
    );
    try {
      await expect(connect(viewerApi)).rejects.toThrow(/403|Выпуск и работа MCP-токенов отключены/);
    } finally {
      await enableApiTokens(api, cast.tokens.sysadmin!);
    }
    await (await connect(viewerApi)).close();
  });
});

describe('POST /mcp bad input', () => {
  const post = (body: string, token = viewerApi, contentType = 'application/json') =>
    fetch(new URL('/mcp', base), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': contentType,
        accept: 'application/json, text/event-stream',
      },
      body,
    });

  it('malformed JSON-RPC, wrong content types, unknown tools and hostile arguments: exact 4xx or a tool error', async () => {
    const jsonError = { success: false, error: { code: 400, message: 'Тело запроса не является корректным JSON' } };
    const cases: [string, number, unknown][] = [
      ['{', 400, jsonError],
      ['"\u0000"', 400, jsonError],
      [
        '{"jsonrpc":"2.0"}',
        400,
        { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' }, id: null },
      ],
      // A known envelope with an unknown method: the JSON-RPC error, in a 200.
      [
        '{"jsonrpc":"2.0","id":1,"method":"nope"}',
        200,
        { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } },
      ],
    ];
    for (const [body, status, answer] of cases) {
      const res = await post(body);
      expect(res.status, body).toBe(status);
      expect(await res.json(), body).toMatchObject(answer as object);
    }
    // An empty batch holds no request: accepted with nothing to answer (the SDK's reading), nothing run.
    const empty = await post('[]');
    expect(empty.status).toBe(202);
    expect(await empty.text()).toBe('');
    const text = await post('x', viewerApi, 'text/plain');
    expect(text.status).toBe(415);
    expect((await text.json()) as unknown).toMatchObject({
      error: { code: 415, message: 'Неподдерживаемый формат тела запроса' },
    });
    const get = await fetch(new URL('/mcp', base), { headers: { authorization: `Bearer ${viewerApi}` } });
    expect(get.status).toBe(405);
    expect(
      (await fetch(new URL('/mcp', base), { method: 'DELETE', headers: { authorization: `Bearer ${viewerApi}` } }))
        .status,
    ).toBe(405);

    const client = await connect(viewerApi);
    try {
      expect(await client.callTool({ name: 'no_such_tool', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'MCP error -32602: Tool no_such_tool not found' }],
        isError: true,
      });
      const invalid = 'MCP error -32602: Input validation error: Invalid arguments for tool read_widget_data:';
      const argCases: [Record<string, unknown>, string][] = [
        [{ widget_id: 2_147_483_648 }, 'must be less than or equal to 2147483647 at widget_id'],
        [{ widget_id: -1 }, 'must be greater than 0 at widget_id'],
        [{ widget_id: 'x' }, 'must be a number at widget_id'],
        [{}, 'must not be null at widget_id'],
      ];
      for (const [args, message] of argCases) {
        const r = (await client.callTool({ name: 'read_widget_data', arguments: args })) as ToolResult;
        expect(r, JSON.stringify(args)).toEqual({
          content: [{ type: 'text', text: `${invalid} ${message}` }],
          isError: true,
        });
      }
      // Text and page arguments follow the REST rules for the same fields: a NUL or a page past the REST cap is a
      // tool error naming the argument, never a 500 from the database.
      const inputCases: [string, Record<string, unknown>, string][] = [
        ['list_datasets', { query: 'a\u0000b' }, 'must not contain NUL or invalid characters at query'],
        ['list_workspaces', { query: 'a\u0000b' }, 'must not contain NUL or invalid characters at query'],
        ['list_widgets', { query: '\uD800' }, 'must not contain NUL or invalid characters at query'],
        ['list_datasets', { query: 'x'.repeat(201) }, 'size must be at most 200 at query'],
        [
          'read_widget_data',
          { widget_id: widgetId, page: 1_000_000_001 },
          'must be less than or equal to 1000000000 at page',
        ],
        [
          'run_sql',
          { data_source_id: sourceId, sql: 'SELECT 1 -- \u0000' },
          'must not contain NUL or invalid characters at sql',
        ],
      ];
      for (const [name, args, message] of inputCases) {
        const r = (await client.callTool({ name, arguments: args })) as ToolResult;
        expect(r, `${name} ${JSON.stringify(args)}`).toEqual({
          content: [
            {
              type: 'text',
              text: `MCP error -32602: Input validation error: Invalid arguments for tool ${name}: ${message}`,
            },
          ],
          isError: true,
        });
      }
      const missing = (await client.callTool({
        name: 'read_widget_data',
        arguments: { widget_id: 2_000_000_000 },
      })) as ToolResult;
      expect(missing.content[0].text).toBe('404: Виджет не найден (id 2000000000)');
    } finally {
      await client.close();
    }
  });
});

describe('MCP data under column-level security', () => {
  it('a field hidden from the owner of the token is absent from what MCP reads', async () => {
    const dataset = ok<{ fields: { id: number; name: string }[] }>(
      await api.get(`/api/dataset/${datasetId}`, cast.tokens.wsAdmin),
    );
    const amountId = dataset.fields.find((f) => f.name === 'amount')!.id;
    const amountWidget = ok<WidgetView>(
      await api.post(
        '/api/widget',
        {
          name: 'amount by product',
          type: 'table',
          dataset_id: datasetId,
          rows: [{ id: 'p', sql: '[sales.product]' }],
          columns: [{ id: 'a', sql: 'SUM([sales.amount])' }],
        },
        cast.tokens.editor,
      ),
    ).id;
    const rule = ok<{ id: number }>(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [amountId], action: 'hide', user_ids: [cast.users.viewer.id], group_ids: [] },
        cast.tokens.wsAdmin,
      ),
    );
    try {
      // The widget reading the hidden field is refused as if the field did not exist.
      expect(await call(viewerApi, 'read_widget_data', { widget_id: amountWidget })).toEqual({
        isError: true,
        text: '422: Ошибка валидации (columns[0].sql: Ошибка в выражении: поле [sales.amount] не найдено в датасете)',
      });
      const owner = json<{ rows: Record<string, unknown>[] }>(
        await call(ownerApi, 'read_widget_data', { widget_id: amountWidget }),
      );
      expect(owner.rows.every((r) => typeof r.a === 'number')).toBe(true);
      // A widget without it still reads, and the preview leaves the column out.
      const viewer = json<{ rows: Record<string, unknown>[] }>(
        await call(viewerApi, 'read_widget_data', { widget_id: widgetId }),
      );
      expect(viewer.rows).toEqual([{ p: 'кофе', q: qtyOf('кофе') }]);
      const preview = json<{ columns: { name: string }[]; rows: unknown[][] }>(
        await call(viewerApi, 'preview_dataset', { dataset_id: datasetId }),
      );
      expect(preview.columns.map((c) => c.name)).not.toContain('amount');
      expect(preview.columns.map((c) => c.name)).toContain('qty');
      const ownerPreview = json<{ columns: { name: string }[] }>(
        await call(ownerApi, 'preview_dataset', { dataset_id: datasetId }),
      );
      expect(ownerPreview.columns.map((c) => c.name)).toContain('amount');
    } finally {
      ok(await api.delete(`/api/dataset/${datasetId}/cls-rules/${rule.id}`, cast.tokens.wsAdmin));
    }
  });
});
