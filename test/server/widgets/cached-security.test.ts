import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../../db/schema/dataset-rls-rules';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { queryEngineFor } from '../../../server/query/run/engine';
import { useTestApp } from '../../support/app';
import type { RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import { makeSales, type FlatData, type WidgetView, createSalesWorld } from '../../routers/widgets/world';

/*
 * Cached plans and results are shared between callers only when their rules agree: the same request body, sent by
 * two viewers whose row rules (attribute values) or column rules (hidden, masked fields) differ, is answered for each
 * under their own rules, whichever of them asked first and however often; only a repeat by the same viewer is
 * served from the cache.
 */

const SALES = makeSales(40);
const { t, api } = useTestApp();
let cast: RoleCast;
let world: Awaited<ReturnType<typeof createSalesWorld>>;
let datasetId: number;
let fieldId: (name: string) => number;
let widgetId: number;

/** The body a dashboard sends: the widget's shelves and a selector filter. */
const body = {
  type: 'table',
  rows: [{ id: 'p', sql: '[sales.product]' }],
  columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
  filters: [{ sql: '[sales.id]', op: 'gte', values: [1], value_type: 'integer' }],
  sorts: [{ field_id: 'p', direction: 'asc' }],
};
const read = (token: string | undefined) => api.post(`/api/widget/${widgetId}/data`, body, token);
const rowsOf = async (token: string | undefined) => ok<FlatData>(await read(token)).rows as { p: string; q: unknown }[];
const productsOf = (rows: { p: string }[]) => rows.map((r) => r.p);
const sums = (keep: (p: string) => boolean) => {
  const out = new Map<string, number>();
  for (const s of SALES) if (keep(s.product)) out.set(s.product, (out.get(s.product) ?? 0) + s.qty);
  return [...out].sort(([a], [b]) => (a < b ? -1 : 1));
};

async function clearRules() {
  await t.deps.db.delete(datasetRlsRules);
  await t.deps.db.delete(datasetClsRules);
  readCachesChanged(t.deps);
}

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, SALES);
  ({ cast, datasetId, fieldId } = world);
  const { filters: _f, ...saved } = body;
  widgetId = ok<WidgetView>(
    await api.post('/api/widget', { name: 'w', dataset_id: datasetId, ...saved }, cast.tokens.editor),
  ).id;
});
afterAll(async () => {
  await clearRules();
  await world?.dispose();
});

describe('a cached widget read and the viewer’s rules', () => {
  it('row rules: the same body is answered for each viewer under their own attribute values, in either order', async () => {
    await clearRules();
    const setAttributes = async (userId: number, product: string[]) =>
      ok(await api.put(`/api/users/${userId}/attributes`, { attributes: { product } }, cast.tokens.sysadmin));
    await setAttributes(cast.users.viewer.id, ['чай']);
    await setAttributes(cast.users.editor.id, ['кофе', 'сок']);
    ok(
      await api.post(
        `/api/dataset/${datasetId}/rls-rules`,
        {
          field_id: fieldId('product'),
          attribute: 'product',
          operator: 'in',
          user_ids: [cast.users.viewer.id, cast.users.editor.id],
        },
        cast.tokens.wsAdmin,
      ),
    );
    const engine = queryEngineFor(t.deps);
    for (let round = 0; round < 2; round++) {
      const before = engine.executions;
      expect(productsOf(await rowsOf(cast.tokens.viewer))).toEqual(['чай']);
      expect(productsOf(await rowsOf(cast.tokens.editor))).toEqual(['кофе', 'сок']);
      // No rule applies to the workspace administrator: all products.
      expect(productsOf(await rowsOf(cast.tokens.wsAdmin))).toEqual(sums(() => true).map(([p]) => p));
      // The first round ran three queries, one per viewer; the second was served from the cache, each its own.
      expect(engine.executions - before).toBe(round === 0 ? 3 : 0);
    }
    await clearRules();
  });

  it('column rules: a hidden field is refused and a masked one masked for its viewer, though another cached it', async () => {
    await clearRules();
    const wide = await rowsOf(cast.tokens.editor); // cached for the editor, who has no rule
    expect(wide.map((r) => [r.p, Number(r.q)])).toEqual(sums(() => true));
    ok(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [fieldId('qty')], action: 'mask', user_ids: [cast.users.viewer.id] },
        cast.tokens.wsAdmin,
      ),
    );
    // The masked column answers the mask for the viewer, never the editor's cached sums, and the editor keeps them.
    expect((await rowsOf(cast.tokens.viewer)).map((r) => [r.p, r.q])).toEqual(
      sums(() => true).map(([p]) => [p, '***']),
    );
    expect((await rowsOf(cast.tokens.editor)).map((r) => [r.p, Number(r.q)])).toEqual(sums(() => true));
    await t.deps.db.delete(datasetClsRules);
    ok(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [fieldId('qty')], action: 'hide', user_ids: [cast.users.viewer.id] },
        cast.tokens.wsAdmin,
      ),
    );
    // The column reads the hidden field: refused like an unknown field.
    const hidden = await read(cast.tokens.viewer);
    expect(hidden.status).toBe(422);
    expect((await rowsOf(cast.tokens.editor)).map((r) => [r.p, Number(r.q)])).toEqual(sums(() => true));
    await clearRules();
    // Without the rule the viewer reads what the editor does.
    expect((await rowsOf(cast.tokens.viewer)).map((r) => [r.p, Number(r.q)])).toEqual(sums(() => true));
  });
});
