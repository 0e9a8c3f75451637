import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../../support/app';
import { ok, type RestResponse } from '../../support/rest';
import { createSalesWorld, makeSales, type FlatData, type WidgetView } from '../../routers/widgets/world';

/*
 * Widget data remembers the response text made of an answer that comes back the same (the same frozen page:
 * adapters/rest/envelope-memo.ts). The text must be byte for byte what the first answer was, with the same
 * content type, and must never outlive the answer: the widget saved with a filter, or another viewer whose rows
 * differ, is answered with their own data at once.
 */

const { t, api } = useTestApp();
let world: Awaited<ReturnType<typeof createSalesWorld>>;
let widgetId: number;

const shelves = {
  type: 'table',
  rows: [{ id: 'p', sql: '[sales.product]' }],
  columns: [{ id: 'n', sql: 'COUNT()' }],
};

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, makeSales(30));
  const created = await api.post(
    '/api/widget',
    { name: 'output memo', dataset_id: world.datasetId, ...shelves },
    world.cast.tokens.editor,
  );
  widgetId = ok<WidgetView>(created).id;
});
afterAll(() => world.dispose());

const body = { ...shelves, filters: [], page: 1, page_size: 50 };

/** The raw answer of one request: status, content type and the body's text as sent. */
async function raw(token: string | undefined): Promise<{ status: number; type: unknown; text: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/widget/${widgetId}/data`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, type: res.headers['content-type'], text: res.body };
}

const products = (res: RestResponse) => ok<FlatData>(res).rows.map((r) => r.p);

describe('widget data envelope memo', () => {
  it('answers a repeated request with the same text and content type, made once', async () => {
    const first = await raw(world.cast.tokens.viewer);
    expect(first.status).toBe(200);
    expect(first.type).toBe('application/json; charset=utf-8');
    // The answer is remembered the second time it comes back; from then on its text is not made again.
    await raw(world.cast.tokens.viewer);
    await raw(world.cast.tokens.viewer);
    const stringify = vi.spyOn(JSON, 'stringify');
    const envelopes = () =>
      stringify.mock.calls.filter(([v]) => (v as { success?: unknown } | null)?.success === true).length;
    try {
      for (let round = 0; round < 3; round++) {
        const again = await raw(world.cast.tokens.viewer);
        expect(again).toEqual(first);
      }
      expect(envelopes()).toBe(0);
    } finally {
      stringify.mockRestore();
    }
    expect(JSON.parse(first.text)).toMatchObject({ success: true, data: { kind: 'flat' } });
  });

  it('the widget saved with a filter between repeats: the next answer is the new data, not the remembered text', async () => {
    const read = () => api.post(`/api/widget/${widgetId}/data`, body, world.cast.tokens.viewer);
    const all = products(await read());
    for (let round = 0; round < 3; round++) expect(products(await read())).toEqual(all);
    const saved = ok<WidgetView>(await api.get(`/api/widget/${widgetId}`, world.cast.tokens.editor));
    const { id: _id, workspace_id: _w, author_id: _a, created_at: _c, updated_at: _u, ...config } = saved;
    const only = all[0];
    const filter = { sql: '[sales.product]', op: 'eq', values: [only], value_type: 'string' };
    ok(await api.put(`/api/widget/${widgetId}`, { ...config, filters: [filter] }, world.cast.tokens.editor));
    try {
      for (let round = 0; round < 3; round++) expect(products(await read())).toEqual([only]);
    } finally {
      ok(await api.put(`/api/widget/${widgetId}`, { ...config, filters: [] }, world.cast.tokens.editor));
    }
    expect(products(await read())).toEqual(all);
  });

  it('keeps the text of a frozen answer from its second sighting, and none for an answer that is not frozen', async () => {
    const { rememberedEnvelopeText } = await import('../../../adapters/rest/envelope-memo');
    const answer = Object.freeze({ kind: 'flat', rows: Object.freeze([Object.freeze({ p: 'чай' })]) });
    expect(rememberedEnvelopeText(answer)).toBeUndefined();
    const text = rememberedEnvelopeText(answer);
    expect(text).toBe(JSON.stringify({ success: true, data: answer }));
    expect(rememberedEnvelopeText(answer)).toBe(text);
    const open = { kind: 'flat', rows: [] };
    for (let i = 0; i < 3; i++) expect(rememberedEnvelopeText(open)).toBeUndefined();
  });
});
