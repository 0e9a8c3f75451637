import fs from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataSources } from '../../../db/schema/data-sources';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { s3StorageUrl } from '../../support/object-store';
import { createPeerApp, type PeerApp } from '../../server/app/peer-app';
import { ok, upload, type Preview, type QueryView, type SourceView } from './helpers';

/*
 * File sources on a cluster's store (STORAGE_URL=s3://…): an upload through node A is previewed and queried through
 * node B, which has a data directory of its own (it reads its own local copy of the DuckDB object); a replace and a
 * delete made through A remove the objects, and B reads the new file.
 */

const STORAGE_URL = s3StorageUrl('files');
const { t, api } = useTestApp({ STORAGE_URL });
let peer: PeerApp;
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  peer = await createPeerApp(t, { STORAGE_URL });
});
afterAll(async () => {
  await peer?.close();
});

const SALES = 'id,city,amount\n1,Москва,10.5\n2,Казань,20\n';
const MORE = 'id,city,amount\n1,Москва,10.5\n2,Казань,20\n3,Самара,7\n';

const keysOf = async (uuid: string) => {
  const keys: string[] = [];
  for await (const o of t.deps.storage.list(`files/${uuid}/`)) keys.push(o.key);
  return keys.sort();
};
const settingsOf = async (id: number) => {
  const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, id));
  return row.settings as { file: { duckdb_path: string }; upload: { stored_file: string } };
};
const previewOn = (node: typeof api, id: number) =>
  node.post(`/api/data-source/${id}/preview`, { table: 'sales' }, cast.tokens.editor);

/** Polls until the answer holds `n` rows: B may serve its cached source row for a moment after a replace on A. */
async function rowsOn(node: typeof api, id: number, n: number): Promise<unknown[][]> {
  const until = Date.now() + 10_000;
  for (;;) {
    const rows = ok<Preview>(await previewOn(node, id)).rows;
    if (rows.length === n || Date.now() > until) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('file sources in S3 storage', () => {
  it('an upload on node A is previewed and queried on node B; a replace and a delete on A remove the objects', async () => {
    const src = ok<SourceView>(
      await upload(api, 'POST', '/api/files', cast.tokens.editor, { name: 'sales.csv', content: SALES }),
    );
    const settings = await settingsOf(src.id);
    const duckdbKey = settings.file.duckdb_path.replace(/^storage:/, '');
    expect(settings.file.duckdb_path).toMatch(new RegExp(`^storage:files/${src.uuid}/[\\w-]+\\.duckdb$`));
    expect(await keysOf(src.uuid)).toEqual([duckdbKey, settings.upload.stored_file.replace(/^storage:/, '')].sort());
    // Nothing of the source is on A's disk but the staging folder (emptied): the objects are in S3.
    expect(await fs.readdir(path.join(t.deps.config.dataDir, 'files'))).toEqual(['.incoming']);
    expect(await fs.readdir(path.join(t.deps.config.dataDir, 'files', '.incoming'))).toEqual([]);

    // Node B: its own DATA_DIR, so it reads its own copy of the DuckDB object.
    const rows = ok<Preview>(await previewOn(peer.api, src.id));
    expect(rows.rows).toEqual([
      [1, 'Москва', 10.5],
      [2, 'Казань', 20],
    ]);
    const copy = path.join(peer.deps.config.dataDir, 'cache', 'storage', ...duckdbKey.split('/'));
    expect((await fs.stat(copy)).isFile()).toBe(true);
    const query = ok<QueryView>(
      await peer.api.post(
        `/api/data-source/${src.id}/queries`,
        { sql: 'SELECT city FROM sales WHERE amount > $1', parameters: [15] },
        cast.tokens.editor,
      ),
    );
    expect(query.rows).toEqual([['Казань']]);

    // A replace on A: new keys, the old ones deleted; B reads the new file.
    ok<SourceView>(
      await upload(api, 'PUT', `/api/files/${src.id}`, cast.tokens.editor, { name: 'sales.csv', content: MORE }),
    );
    const replaced = await settingsOf(src.id);
    expect(replaced.file.duckdb_path).not.toBe(settings.file.duckdb_path);
    expect(await t.deps.storage.head(duckdbKey)).toBeNull();
    expect(await keysOf(src.uuid)).toHaveLength(2);
    expect(await rowsOn(peer.api, src.id, 3)).toHaveLength(3);

    // A delete on A removes every object of the source.
    ok(await api.delete(`/api/files/${src.id}`, cast.tokens.editor));
    expect(await keysOf(src.uuid)).toEqual([]);
  }, 60_000);

  it('a source uploaded before storage (a DATA_DIR path in its settings) is still read', async () => {
    const src = ok<SourceView>(
      await upload(api, 'POST', '/api/files', cast.tokens.editor, { name: 'sales.csv', content: SALES }),
    );
    const settings = await settingsOf(src.id);
    // Rewrite it as an older version left it: the DuckDB file in DATA_DIR/files/<uuid>, the path relative to DATA_DIR.
    const legacy = path.join('files', src.uuid, 'data-old.duckdb');
    await fs.mkdir(path.join(t.deps.config.dataDir, 'files', src.uuid), { recursive: true });
    await t.deps.storage.getToFile(
      settings.file.duckdb_path.replace(/^storage:/, ''),
      path.join(t.deps.config.dataDir, legacy),
    );
    await t.deps.db
      .update(dataSources)
      .set({ settings: { ...settings, file: { ...settings.file, duckdb_path: legacy } } })
      .where(eq(dataSources.id, src.id));
    await t.deps.storage.deletePrefix(`files/${src.uuid}/`);
    await t.deps.connectors.release(src.id);
    readCachesChanged(t.deps);
    expect(ok<Preview>(await previewOn(api, src.id)).rows).toHaveLength(2);
    ok(await api.delete(`/api/files/${src.id}`, cast.tokens.editor));
    await expect(fs.stat(path.join(t.deps.config.dataDir, 'files', src.uuid))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  }, 60_000);
});
