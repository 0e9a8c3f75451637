import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { driverView } from '../../../routers/admin/schemas';
import { useTestApp } from '../../support/app';
import { createSysadmin, login, uniq } from '../../support/factories';
import { s3StorageUrl } from '../../support/object-store';
import { ok } from '../../support/rest';
import { createPeerApp, type PeerApp } from '../../server/app/peer-app';
import {
  createCitiesTable,
  createSource,
  dropTable,
  randomName,
  upload,
  type Preview,
  type SourceView,
} from '../data-sources/helpers';

/*
 * Driver plugins on a cluster's store (STORAGE_URL=s3://…): a plugin uploaded through node A (POST
 * /api/admin/drivers) is stored as drivers/<sha256>.mjs, and node B (a data directory of its own) loads it from its
 * own copy of that object when a source of the kind it was picked for is read through B. DELETE deletes the object.
 */

type Driver = z.output<typeof driverView>;

const STORAGE_URL = s3StorageUrl('drivers');
const { t, api } = useTestApp({ STORAGE_URL });
let peer: PeerApp;
let admin: string;
let table: string;

const LOG = uniq('plugin_calls');
const calls = (): string[] => ((globalThis as Record<string, unknown>)[LOG] as string[] | undefined) ?? [];
const connectorUrl = pathToFileURL(path.resolve('adapters/sources/postgresql/connector.ts')).href;
const plugin = `
import { PostgresConnector } from ${JSON.stringify(connectorUrl)};
const log = (globalThis[${JSON.stringify(LOG)}] ??= []);
export function createConnector(settings, options = {}) {
  log.push('create ' + import.meta.url);
  return new PostgresConnector(settings, options);
}
// ${uniq('v')}
`;

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  table = randomName('plugin');
  await createCitiesTable('postgresql', table);
  peer = await createPeerApp(t, { STORAGE_URL });
});
afterAll(async () => {
  await peer?.close();
  await dropTable('postgresql', table);
});

describe('driver plugins in S3 storage', () => {
  it('a plugin uploaded through node A is used through node B, from B’s own copy of the object', async () => {
    const res = await upload(
      api,
      'POST',
      '/api/admin/drivers',
      admin,
      { name: 'logging.mjs', content: plugin },
      { source_type: 'postgresql', version: '1.0.0' },
    );
    const driver = ok<Driver>(res);
    const key = `drivers/${driver.sha256}.mjs`;
    expect((await t.deps.storage.head(key))?.size).toBe(Buffer.byteLength(plugin));
    ok(await api.put('/api/source-types/postgresql', { driver_id: driver.id }, admin));
    const source: SourceView = await createSource(api, admin, 'postgresql');

    const rows = ok<Preview>(
      await peer.api.post(`/api/data-source/${source.id}/preview`, { schema: 'public', table, limit: 2 }, admin),
    );
    expect(rows.rows).toEqual([
      [1, 'Москва', 10.5],
      [2, 'Казань', 20],
    ]);
    const peerCopy = path.join(peer.deps.config.dataDir, 'cache', 'storage', 'drivers', `${driver.sha256}.mjs`);
    expect(calls()).toContain(`create ${pathToFileURL(peerCopy).href}`);
    expect(await fs.readFile(peerCopy, 'utf8')).toBe(plugin);

    // Deleted (once no kind uses it): the object goes.
    ok(await api.put('/api/source-types/postgresql', { driver_id: null }, admin));
    ok(await api.delete(`/api/admin/drivers/${driver.id}`, admin));
    expect(await t.deps.storage.head(key)).toBeNull();
  }, 60_000);

  it('a plugin stored under DATA_DIR by an older version is moved into storage on its first use', async () => {
    const content = `${plugin}// ${uniq('legacy')}\n`;
    const driver = ok<Driver>(
      await upload(
        api,
        'POST',
        '/api/admin/drivers',
        admin,
        { name: 'old.mjs', content },
        { source_type: 'postgresql', version: '1.0.0' },
      ),
    );
    // As an older version left it: the file in DATA_DIR/drivers, the row's path relative to DATA_DIR (the same string).
    const key = `drivers/${driver.sha256}.mjs`;
    const legacy = path.join(t.deps.config.dataDir, key);
    await t.deps.storage.getToFile(key, legacy);
    await t.deps.storage.delete(key);
    await t.deps.localCopies.forget(key); // the upload's copy: an installation from before storage has none
    ok(await api.put('/api/source-types/postgresql', { driver_id: driver.id }, admin));
    const source: SourceView = await createSource(api, admin, 'postgresql');
    const rows = ok<Preview>(
      await api.post(`/api/data-source/${source.id}/preview`, { schema: 'public', table, limit: 1 }, admin),
    );
    expect(rows.rows).toHaveLength(1);
    expect((await t.deps.storage.head(key))?.size).toBe(Buffer.byteLength(content));
    await expect(fs.stat(legacy)).rejects.toMatchObject({ code: 'ENOENT' });
    ok(await api.put('/api/source-types/postgresql', { driver_id: null }, admin));
  }, 60_000);
});
