import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../../db/schema/dataset-rls-rules';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { queryEngineFor } from '../../../server/query/run/engine';
import { useTestApp } from '../../support/app';
import type { RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import { createSalesWorld, makeSales, type FlatData, type WidgetView } from '../../routers/widgets/world';

/*
 * Repeated widget requests are answered from the plan and result of the last identical one (server/query/read.ts,
 * looked up before compiling): never across viewers whose row or column rules differ, and never after the result
 * cache dropped the result.
 */

const SALES = makeSales(60);
const { t, api } = useTestApp();
let cast: RoleCast;
let world: Awaited<ReturnType<typeof createSalesWorld>>;
let datasetId: number;
let fieldId: (name: string) => number;
let widgetId: number;

/** The body a dashboard sends: the widget's configuration with a selector's filter. */
const BODY = {
  type: 'table',
  rows: [{ id: 'p', sql: '[sales.product]' }],
  columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
  series: [],
  sorts: [],
  calculated_fields: [],
  filters: [{ sql: '[sales.id]', op: 'gte', values: [0], value_type: 'float' }],
  page: 1,
  page_size: 100,
};

const read = async (token: string | undefined) =>
  ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, BODY, token)).rows as { p: string; q: unknown }[];
const products = (rows: { p: string }[]) => rows.map((r) => r.p).sort();
const expected = (keep: string[]) =>
  [...new Set(SALES.filter((s) => keep.includes(s.product)).map((s) => s.product))].sort();
const executions = () => queryEngineFor(t.deps).executions;

/**
 * One row rule for everyone on the product, by the user's `product` attribute: the viewer may see чай and кофе, the
 * editor сок (the two differ only in their attribute values).
 */
async function productRuleForBoth() {
  await clearRules();
  const admin = cast.tokens.sysadmin;
  ok(
    await api.put(`/api/users/${cast.users.viewer.id}/attributes`, { attributes: { product: ['чай', 'кофе'] } }, admin),
  );
  ok(await api.put(`/api/users/${cast.users.editor.id}/attributes`, { attributes: { product: ['сок'] } }, admin));
  ok(
    await api.post(
      `/api/dataset/${datasetId}/rls-rules`,
      { field_id: fieldId('product'), attribute: 'product', operator: 'in' },
      cast.tokens.wsAdmin,
    ),
  );
}

async function clearRules() {
  await t.deps.db.delete(datasetRlsRules);
  await t.deps.db.delete(datasetClsRules);
  readCachesChanged(t.deps);
}

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, SALES);
  ({ cast, datasetId, fieldId } = world);
  const created = await api.post(
    '/api/widget',
    { name: 'w', type: 'table', dataset_id: datasetId, rows: BODY.rows, columns: BODY.columns },
    cast.tokens.editor,
  );
  widgetId = ok<WidgetView>(created).id;
});
afterAll(async () => {
  await clearRules();
  await world.dispose();
});

describe('repeated widget requests', () => {
  it('two viewers with different row rule values, the same body repeated: each gets their own rows, each run once', async () => {
    await productRuleForBoth();
    const before = executions();
    for (let round = 0; round < 3; round++) {
      expect(products(await read(cast.tokens.viewer))).toEqual(expected(['чай', 'кофе']));
      expect(products(await read(cast.tokens.editor))).toEqual(expected(['сок']));
    }
    // One source query per viewer: the repeats were answered from the cache, each from the viewer's own entry.
    expect(executions() - before).toBe(2);
  });

  it('a field masked for one viewer only: the same body repeated is masked for them and for no one else', async () => {
    await clearRules();
    ok(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [fieldId('qty')], action: 'mask', user_ids: [cast.users.viewer.id] },
        cast.tokens.wsAdmin,
      ),
    );
    for (let round = 0; round < 3; round++) {
      const masked = await read(cast.tokens.viewer);
      const plain = await read(cast.tokens.editor);
      expect(products(masked)).toEqual(products(plain));
      expect(plain.every((r) => typeof r.q === 'number' || typeof r.q === 'string')).toBe(true);
      expect(masked.map((r) => r.q)).not.toEqual(plain.map((r) => r.q));
    }
  });

  it('an answer dies with the result cache entry it reads: after a clear the source is asked again', async () => {
    await clearRules();
    const first = await read(cast.tokens.viewer);
    const before = executions();
    expect(await read(cast.tokens.viewer)).toEqual(first);
    expect(executions()).toBe(before);
    queryEngineFor(t.deps).cache.clear();
    expect(await read(cast.tokens.viewer)).toEqual(first);
    expect(executions()).toBe(before + 1);
  });

  it('the widget saved with a filter between identical requests: the repeats read the saved filter at once', async () => {
    await clearRules();
    // Three times, so the body is remembered (second time) and its query reused (third time).
    for (let round = 0; round < 3; round++)
      expect(products(await read(cast.tokens.viewer))).toEqual(expected([...new Set(SALES.map((s) => s.product))]));
    const saved = ok<WidgetView>(await api.get(`/api/widget/${widgetId}`, cast.tokens.editor));
    const { id: _id, workspace_id: _w, author_id: _a, created_at: _c, updated_at: _u, ...config } = saved;
    const onlyTea = { sql: '[sales.product]', op: 'eq', values: ['чай'], value_type: 'string' };
    ok(await api.put(`/api/widget/${widgetId}`, { ...config, filters: [onlyTea] }, cast.tokens.editor));
    try {
      for (let round = 0; round < 2; round++) expect(products(await read(cast.tokens.viewer))).toEqual(['чай']);
    } finally {
      ok(await api.put(`/api/widget/${widgetId}`, { ...config, filters: [] }, cast.tokens.editor));
    }
    expect(products(await read(cast.tokens.viewer))).toEqual(expected([...new Set(SALES.map((s) => s.product))]));
  });

  it('a row rule added between two identical requests applies to the second', async () => {
    await clearRules();
    expect(products(await read(cast.tokens.viewer))).toEqual(expected([...new Set(SALES.map((s) => s.product))]));
    ok(
      await api.post(
        `/api/dataset/${datasetId}/rls-rules`,
        { field_id: fieldId('product'), attribute: 'product', operator: 'in', user_ids: [cast.users.viewer.id] },
        cast.tokens.wsAdmin,
      ),
    );
    expect(products(await read(cast.tokens.viewer))).toEqual(expected(['чай', 'кофе']));
  });
});

describe('a selector changed on every request (one compile per request shape)', () => {
  /** The body with the selectors' values: sales from `fromId` on, of the given products. */
  const bodyWith = (fromId: number, picked: string[]) => ({
    ...BODY,
    filters: [
      { sql: '[sales.id]', op: 'gte', values: [fromId], value_type: 'float' },
      { sql: '[sales.product]', op: 'in', values: picked, value_type: 'string' },
    ],
  });
  const sums = (fromId: number, picked: string[], allowed: string[]) => {
    const out = new Map<string, number>();
    for (const s of SALES)
      if (s.id >= fromId && picked.includes(s.product) && allowed.includes(s.product))
        out.set(s.product, (out.get(s.product) ?? 0) + s.qty);
    return Object.fromEntries([...out].sort(([a], [b]) => a.localeCompare(b)));
  };
  const readSums = async (token: string | undefined, fromId: number, picked: string[]) => {
    const rows = ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, bodyWith(fromId, picked), token)).rows as {
      p: string;
      q: unknown;
    }[];
    return Object.fromEntries(
      rows.map((r) => [r.p, Number(r.q)]).sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
  };

  it('each request answers its own values, for viewers whose row rules differ, in any order', async () => {
    await productRuleForBoth();
    const allProducts = [...new Set(SALES.map((s) => s.product))];
    const before = executions();
    const asked = [
      [1, ['чай', 'сок']],
      [20, ['кофе', 'сок']],
      [7, ["it's", 'чай']],
      [45, ['чай', 'кофе']],
      [1, ['сок', 'какао']],
    ] as const;
    for (const [fromId, picked] of asked) {
      expect(await readSums(cast.tokens.viewer, fromId, [...picked])).toEqual(
        sums(fromId, [...picked], ['чай', 'кофе']),
      );
      expect(await readSums(cast.tokens.editor, fromId, [...picked])).toEqual(sums(fromId, [...picked], ['сок']));
    }
    // Every one a new request, read from the source (a cached answer would hide a value left in from another).
    expect(executions() - before).toBe(asked.length * 2);
    await clearRules();
    expect(await readSums(cast.tokens.viewer, 30, allProducts)).toEqual(sums(30, allProducts, allProducts));
  });
});
