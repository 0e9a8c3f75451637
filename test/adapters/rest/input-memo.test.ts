import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../../support/app';
import { failure, ok } from '../../support/rest';
import { createSalesWorld, makeSales, type FlatData, type WidgetView } from '../../routers/widgets/world';

/*
 * Widget data remembers the input parsed for an identical request (adapters/rest/input-memo.ts): the same URL and
 * body text are not parsed again (neither JSON.parse nor the input schema), while the procedure's chain still runs
 * for every request: a caller without a token, or without a right on the widget, sending a remembered body gets
 * their own 401 or 403, and a different body is its own request.
 */

const { t, api } = useTestApp();
let world: Awaited<ReturnType<typeof createSalesWorld>>;
let widgetId: number;

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, makeSales(20));
  const created = await api.post(
    '/api/widget',
    {
      name: 'memo',
      type: 'table',
      dataset_id: world.datasetId,
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 'n', sql: 'COUNT()' }],
    },
    world.cast.tokens.editor,
  );
  widgetId = ok<WidgetView>(created).id;
});
afterAll(() => world.dispose());

/** A dashboard's request: the shelves again, and a selector's value as a filter. */
const body = (min: number) => ({
  type: 'table',
  rows: [{ id: 'p', sql: '[sales.product]' }],
  columns: [{ id: 'n', sql: 'COUNT()' }],
  filters: [{ sql: '[sales.qty]', op: 'gte', values: [min], value_type: 'integer' }],
  page: 1,
  page_size: 50,
});

describe('widget data input memo', () => {
  it('parses an identical request twice, then answers it from the memo the same; a new filter value is parsed and answered anew', async () => {
    const read = (min: number) => api.post(`/api/widget/${widgetId}/data`, body(min), world.cast.tokens.viewer);
    const first = ok<FlatData>(await read(1));
    const text = JSON.stringify(body(1));
    const parse = vi.spyOn(JSON, 'parse');
    const parsed = () => parse.mock.calls.filter(([s]) => s === text).length;
    try {
      // Remembered the second time it comes (a body seen once, a selector's passing value, is never stored).
      expect(ok<FlatData>(await read(1))).toEqual(first);
      expect(parsed()).toBe(1);
      const again = ok<FlatData>(await read(1));
      expect(again).toEqual(first);
      expect(parsed()).toBe(1);
      const other = ok<FlatData>(await read(1_000));
      expect(parse.mock.calls.filter(([s]) => s === JSON.stringify(body(1_000)))).toHaveLength(1);
      expect(other.rows).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it('still authenticates and checks access on every request with a remembered body', async () => {
    const send = (token: string | undefined) => api.post(`/api/widget/${widgetId}/data`, body(2), token);
    ok<FlatData>(await send(world.cast.tokens.viewer));
    ok<FlatData>(await send(world.cast.tokens.viewer));
    const anonymous = await send(undefined);
    expect(anonymous.status).toBe(401);
    failure(anonymous);
    // Not a member of the widget's workspace: the widget is not found for them, as without the memo.
    const outsider = await send(world.cast.tokens.plain);
    expect(outsider.status).toBe(404);
    failure(outsider);
  });

  it('refuses a remembered body on another widget by that widget’s own rules', async () => {
    const missing = await api.post(`/api/widget/${widgetId + 1_000_000}/data`, body(2), world.cast.tokens.viewer);
    expect(missing.status).toBe(404);
    failure(missing);
  });
});
