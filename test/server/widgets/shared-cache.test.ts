import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../../db/schema/dataset-rls-rules';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { queryEngineFor } from '../../../server/query/run/engine';
import { useTestApp } from '../../support/app';
import type { RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import { createPeerApp, redisEnv, type PeerApp } from '../app/peer-app';
import { makeSales, type FlatData, type WidgetView, createSalesWorld } from '../../routers/widgets/world';

/*
 * Two nodes (two apps on one database, each with its own caches) and one Redis (REDIS_URL): a widget result one node
 * read from the source is answered by the other from Redis, without a source query. A new data version is a miss
 * on both levels. A viewer whose row or column rules differ never gets another's entry: the shared key is the
 * node's own key, which carries the reader's rules.
 */

const SALES = makeSales(40);
const env = redisEnv();
const { t, api } = useTestApp(env);
let peer: PeerApp;
let cast: RoleCast;
let world: Awaited<ReturnType<typeof createSalesWorld>>;
let datasetId: number;
let fieldId: (name: string) => number;
let widgetId: number;

const body = {
  type: 'table',
  rows: [{ id: 'p', sql: '[sales.product]' }],
  columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
  sorts: [{ field_id: 'p', direction: 'asc' }],
};

const nodes = () => ({
  a: { api, engine: queryEngineFor(t.deps) },
  b: { api: peer.api, engine: queryEngineFor(peer.deps) },
});
type Node = ReturnType<typeof nodes>['a'];

/** The widget's rows as a node answers them to a viewer; the node's stores to Redis have ended after it. */
async function rowsOn(node: Node, token: string | undefined) {
  const rows = ok<FlatData>(await node.api.post(`/api/widget/${widgetId}/data`, body, token)).rows as {
    p: string;
    q: unknown;
  }[];
  await node.engine.shared!.flushed();
  return rows.map((r) => [r.p, r.q]);
}

/** Source queries and Redis answers of each node while `fn` runs. */
async function counted(fn: () => Promise<void>) {
  const { a, b } = nodes();
  const before = [a.engine.executions, b.engine.executions, a.engine.sharedHits, b.engine.sharedHits];
  await fn();
  const after = [a.engine.executions, b.engine.executions, a.engine.sharedHits, b.engine.sharedHits];
  const [sourceA, sourceB, redisA, redisB] = after.map((n, i) => n - before[i]);
  return { sourceA, sourceB, redisA, redisB };
}

const sums = (keep: (p: string) => boolean) => {
  const out = new Map<string, number>();
  for (const s of SALES) if (keep(s.product)) out.set(s.product, (out.get(s.product) ?? 0) + s.qty);
  return [...out].sort(([x], [y]) => (x < y ? -1 : 1));
};
const numeric = (rows: unknown[][]) => rows.map(([p, q]) => [p, Number(q)]);

/** What a NOTIFY does on a cluster: the other node forgets its read decisions after a write on this one. */
function changed() {
  readCachesChanged(t.deps);
  readCachesChanged(peer.deps);
}

/** A save of the dataset: a new data version, so a test starts with nothing cached at either level. */
async function newVersion(description: string) {
  ok(await api.put(`/api/dataset/${datasetId}`, { description }, cast.tokens.wsAdmin));
  changed();
}

async function clearRules() {
  await t.deps.db.delete(datasetRlsRules);
  await t.deps.db.delete(datasetClsRules);
  changed();
}

beforeAll(async () => {
  peer = await createPeerApp(t, env);
  world = await createSalesWorld(t.deps, api, SALES);
  ({ cast, datasetId, fieldId } = world);
  widgetId = ok<WidgetView>(
    await api.post('/api/widget', { name: 'w', dataset_id: datasetId, ...body }, cast.tokens.editor),
  ).id;
});
afterAll(async () => {
  await clearRules();
  await peer?.close();
  await world?.dispose();
});

describe('widget results shared between nodes through Redis', () => {
  it('what one node read from the source the other answers from Redis; a new data version misses on both', async () => {
    const { a, b } = nodes();
    const all = sums(() => true);
    expect(
      await counted(async () => {
        expect(numeric(await rowsOn(a, cast.tokens.editor))).toEqual(all);
        expect(numeric(await rowsOn(b, cast.tokens.editor))).toEqual(all);
        expect(numeric(await rowsOn(b, cast.tokens.editor))).toEqual(all); // b's own cache now
      }),
    ).toEqual({ sourceA: 1, sourceB: 0, redisA: 0, redisB: 1 });

    // A save of the dataset on node a moves its version: the entries of the old version answer no one.
    await newVersion('новая версия');
    expect(
      await counted(async () => {
        expect(numeric(await rowsOn(b, cast.tokens.editor))).toEqual(all);
        expect(numeric(await rowsOn(a, cast.tokens.editor))).toEqual(all);
      }),
    ).toEqual({ sourceA: 0, sourceB: 1, redisA: 1, redisB: 0 });
  });

  it('row rules: a viewer with other attribute values never gets the entry another stored', async () => {
    await clearRules();
    await newVersion('с правилом строк');
    const { a, b } = nodes();
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
    changed();
    expect(
      await counted(async () => {
        expect((await rowsOn(a, cast.tokens.viewer)).map(([p]) => p)).toEqual(['чай']);
        expect((await rowsOn(b, cast.tokens.editor)).map(([p]) => p)).toEqual(['кофе', 'сок']);
        expect(numeric(await rowsOn(b, cast.tokens.wsAdmin))).toEqual(sums(() => true));
      }),
    ).toEqual({ sourceA: 1, sourceB: 2, redisA: 0, redisB: 0 });
    // Each one's own entry is shared with their reads on the other node.
    expect(
      await counted(async () => {
        expect((await rowsOn(b, cast.tokens.viewer)).map(([p]) => p)).toEqual(['чай']);
        expect((await rowsOn(a, cast.tokens.editor)).map(([p]) => p)).toEqual(['кофе', 'сок']);
      }),
    ).toEqual({ sourceA: 0, sourceB: 0, redisA: 1, redisB: 1 });
    await clearRules();
  });

  it('column rules: a masked viewer on one node never gets the sums another stored', async () => {
    await clearRules();
    const { a, b } = nodes();
    await newVersion('с правилом столбцов');
    expect(numeric(await rowsOn(a, cast.tokens.editor))).toEqual(sums(() => true)); // in Redis now
    ok(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [fieldId('qty')], action: 'mask', user_ids: [cast.users.viewer.id] },
        cast.tokens.wsAdmin,
      ),
    );
    changed();
    expect(await rowsOn(b, cast.tokens.viewer)).toEqual(sums(() => true).map(([p]) => [p, '***']));
    expect(numeric(await rowsOn(b, cast.tokens.editor))).toEqual(sums(() => true));
    await clearRules();
  });
});
