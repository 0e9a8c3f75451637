import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { connectDatabase } from '../../../db/client';
import { extractLoads } from '../../../db/schema/extracts';
import { buildApp } from '../../../server/app/app';
import { loadConfig } from '../../../server/app/config';
import type { AppDeps } from '../../../server/app/deps';
import { createAppDeps } from '../../../server/app/start';
import { loadSigningKey } from '../../../server/auth/signing-key';
import { extractKeyOf, extractLoadGrace } from '../../../server/etl/loads';
import { MSG } from '../../../server/etl/messages';
import { extractLoadChanged } from '../../../server/etl/open-load';
import { sweepLostRuns } from '../../../server/etl/run-job';
import { createSecretBox } from '../../../server/secrets/secret-box';
import { loadSystemGroupIds } from '../../../server/users/system-groups';
import { useTestApp, type TestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { s3StorageUrl } from '../../support/object-store';
import { failure, ok, rest, type Rest } from '../../support/rest';
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
import { materialise, runExtract } from './world';

/*
 * Extracts on an S3-compatible store (s3rver on loopback, STORAGE_URL s3://…): a run uploads its load under a key of
 * its own and makes it current with its success; widget data reads it through the node's local copy. A second run's
 * data is answered at once on the node that ran it and within READ_DECISION_TTL_MS on another node of the same
 * database; the superseded object is deleted by the sweep once past the grace; a failed run keeps the previous load.
 */

const storageUrl = s3StorageUrl('extracts');
const { t, api } = useTestApp({ STORAGE_URL: storageUrl });
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;
let fieldOf: (name: string) => number;
let widgetId: number;
const owner = () => cast.tokens.wsAdmin!;

/**
 * A second node of the same installation: its own app, DATA_DIR and local copies, on the first app's database and
 * store, serving HTTP only (NODE_ROLE api: it runs no job). (test/support/app.ts has no peer-app helper yet.)
 */
async function peerApp(of: TestApp): Promise<{ deps: AppDeps; api: Rest; close(): Promise<void> }> {
  const database = connectDatabase(of.databaseUrl, { max: 3 });
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-test-peer-'));
  const config = loadConfig({ DATA_DIR: dataDir, STORAGE_URL: storageUrl, NODE_ROLE: 'api' });
  const deps = createAppDeps({
    db: database.db,
    config,
    systemGroups: await loadSystemGroupIds(database.db),
    signingKey: await loadSigningKey(database.db),
    secretBox: createSecretBox(crypto.randomBytes(32)),
  });
  const app = await buildApp(deps);
  await app.ready();
  return {
    deps,
    api: rest(() => app),
    async close() {
      await app.close();
      await database.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

const count = async (client: Rest) =>
  ok<FlatData>(await client.post(`/api/widget/${widgetId}/data`, {}, owner())).rows[0]?.n;
const objects = async () => {
  const keys: string[] = [];
  for await (const o of t.deps.storage.list(`extracts/dataset-${datasetId}/`)) keys.push(o.key);
  return keys.sort();
};
const currentLoad = async () =>
  (
    await t.deps.db
      .select()
      .from(extractLoads)
      .where(and(eq(extractLoads.datasetId, datasetId), isNull(extractLoads.supersededAt)))
  )[0];
let sales = 40;
const addSales = async (n: number) => {
  for (let i = 0; i < n; i++)
    await db.query(`INSERT INTO ${tables.sales} VALUES ($1, 1, 'чай', 1, 1, '2024-01-01')`, [++sales]);
};

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(sales));
  const sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const created = await createSalesDataset(api, owner(), { workspaceId: cast.workspaceId, sourceId, tables });
  datasetId = created.id;
  fieldOf = created.fieldId;
  await materialise(api, owner(), datasetId);
  widgetId = ok<WidgetView>(
    await api.post(
      '/api/widget',
      { name: 'w', type: 'table', dataset_id: datasetId, rows: [], columns: [{ id: 'n', sql: 'COUNT([sales.id])' }] },
      owner(),
    ),
  ).id;
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('extracts on an s3:// store', () => {
  it('a run uploads its load under a key of its own; widget data reads it from the local copy', async () => {
    expect(t.deps.storage.kind).toBe('s3');
    await runExtract(api, owner(), datasetId);
    const load = await currentLoad();
    expect(await objects()).toEqual([extractKeyOf(datasetId, load.id)]);
    expect(await count(api)).toBe(sales);
    // Read from this node's bounded cache of copies, not from a file of its own run.
    expect(t.deps.localCopies.size).toBeGreaterThan(0);
    expect(await fs.readdir(path.join(t.deps.config.dataDir, 'extracts'))).toEqual([]);
  });

  it('a second run is answered at once; the old object stays for the grace, then the sweep deletes it', async () => {
    const first = await currentLoad();
    await addSales(5);
    const run = await runExtract(api, owner(), datasetId);
    const second = await currentLoad();
    expect(second).toMatchObject({ runId: run.job_id, supersededAt: null });
    expect(second.id).not.toBe(first.id);
    expect(await count(api)).toBe(sales);
    expect(await objects()).toEqual([extractKeyOf(datasetId, first.id), extractKeyOf(datasetId, second.id)].sort());

    // Within the grace (10 minutes by default) the sweep keeps it: another node may still be opening it.
    await sweepLostRuns(t.deps);
    expect(await objects()).toHaveLength(2);
    t.deps.caches.replace(extractLoadGrace, { ms: 0 });
    try {
      await sweepLostRuns(t.deps);
    } finally {
      t.deps.caches.replace(extractLoadGrace, { ms: 10 * 60_000 });
    }
    expect(await objects()).toEqual([extractKeyOf(datasetId, second.id)]);
    expect(await t.deps.db.select().from(extractLoads).where(eq(extractLoads.id, first.id))).toEqual([]);
    expect(await count(api)).toBe(sales);
  });

  it('a failed run keeps the previous load current and leaves no object behind', async () => {
    const before = await currentLoad();
    const keys = await objects();
    await addSales(3);
    await db.query(`ALTER TABLE ${tables.sales} RENAME TO ${tables.sales}_away`);
    try {
      const failed = await runExtract(api, owner(), datasetId, {}, 'failed');
      expect(failed.error).toMatch(/^Структура данных в источнике изменилась/);
    } finally {
      await db.query(`ALTER TABLE ${tables.sales}_away RENAME TO ${tables.sales}`);
    }
    expect(await currentLoad()).toEqual(before);
    expect(await objects()).toEqual(keys);
    expect(await count(api)).toBe(sales - 3);
    // The next run starts over and loads what the source has now.
    await runExtract(api, owner(), datasetId);
    expect(await count(api)).toBe(sales);
  });

  it('an incremental run adds to a copy of the current load downloaded from the store', async () => {
    ok(
      await api.put(
        `/api/dataset/${datasetId}/extraction`,
        { mode: 'incremental', incremental_field_id: fieldOf('id') },
        owner(),
      ),
    );
    try {
      const before = await currentLoad();
      await addSales(4);
      const run = await runExtract(api, owner(), datasetId);
      // 4 new sales rows, the 3 regions reloaded in full.
      expect(run).toMatchObject({ mode: 'incremental', rows_loaded: 4 + 3 });
      expect((await currentLoad()).id).not.toBe(before.id);
      expect(await count(api)).toBe(sales);
    } finally {
      ok(await api.put(`/api/dataset/${datasetId}/extraction`, { mode: 'full', incremental_field_id: null }, owner()));
    }
  });

  it('two apps on one database: a run on the first is read through the second', async () => {
    const peer = await peerApp(t);
    try {
      expect(await count(peer.api)).toBe(sales);
      await addSales(2);
      await runExtract(api, owner(), datasetId);
      expect(await count(api)).toBe(sales);
      // The other node learns the new load when its cached id expires (READ_DECISION_TTL_MS) ...
      const until = Date.now() + 5_000;
      while ((await count(peer.api)) !== sales && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(await count(peer.api)).toBe(sales);
      // ... or at once when told (the cross-node eviction calls extractLoadChanged on every node).
      await addSales(1);
      await runExtract(api, owner(), datasetId);
      extractLoadChanged(peer.deps, datasetId);
      expect(await count(peer.api)).toBe(sales);
    } finally {
      await peer.close();
    }
  });

  it('a load whose object is missing is a 400 saying to synchronise again, never a 500', async () => {
    const load = await currentLoad();
    const peer = await peerApp(t);
    try {
      await t.deps.storage.delete(extractKeyOf(datasetId, load.id));
      const res = await peer.api.post(`/api/widget/${widgetId}/data`, {}, owner());
      expect(res.status).toBe(400);
      expect(failure(res).message).toBe(MSG.loadMissing(datasetId).message);
    } finally {
      await peer.close();
    }
  });
});
