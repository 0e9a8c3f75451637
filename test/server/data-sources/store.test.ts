import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataSourceMetadata, dataSources } from '../../../db/schema/data-sources';
import { filesRoot, sourceDir, toAbsolute, toRelative } from '../../../server/data-sources/file-storage';
import {
  cloneSource,
  insertSource,
  loadFullSource,
  sourceFileCopies,
  updateSource,
} from '../../../server/data-sources/store';
import { emptyIdMap } from '../../../server/objects/id-map';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, uniq, type TestUser } from '../../support/factories';

/*
 * The data sources' store: tx-first, actor-free writes that a deploy composes in one transaction. Every call here
 * runs in a transaction of the test's own, as a deploy's would.
 */

const { t } = useTestApp();
let user: TestUser;
let target: number;

beforeAll(async () => {
  user = await createUser(t.deps);
  target = await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Администратор' }]);
});

const pgSource = () =>
  t.deps.db.transaction((tx) =>
    insertSource(tx, {
      name: uniq('src'),
      type: 'postgresql',
      workspaceId: user.personalWorkspaceId,
      authorId: user.id,
      settings: { host: '127.0.0.1', port: 5432, db: 'shop', username: 'reader' },
      secrets: t.deps.secretBox.seal({ password: 'secret' }),
    }),
  );

/** A file source as an upload leaves it: a folder named by its uuid with the stored file and the DuckDB file. */
async function fileSource() {
  const uuid = randomUUID();
  const dir = sourceDir(t.deps, uuid);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'source-1.csv'), 'id,city\n1,Казань\n');
  await writeFile(path.join(dir, 'data-1.duckdb'), 'not really a database');
  const settings = {
    file: { duckdb_path: toRelative(t.deps, path.join(dir, 'data-1.duckdb')), tables: ['cities'] },
    upload: {
      original_name: 'cities.csv',
      format: 'csv',
      stored_file: toRelative(t.deps, path.join(dir, 'source-1.csv')),
    },
  };
  return t.deps.db.transaction((tx) =>
    insertSource(tx, {
      uuid,
      name: uniq('file'),
      type: 'file',
      workspaceId: user.personalWorkspaceId,
      authorId: user.id,
      settings,
    }),
  );
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('data source store', () => {
  it('inserts, updates (moving updated_at, dropping the metadata of old settings) and loads the full row', async () => {
    const created = await pgSource();
    await t.deps.db
      .insert(dataSourceMetadata)
      .values({ dataSourceId: created.id, cacheKey: 'schemas', value: ['public'] });
    const metadata = () =>
      t.deps.db.select().from(dataSourceMetadata).where(eq(dataSourceMetadata.dataSourceId, created.id));
    const renamed = await t.deps.db.transaction((tx) => updateSource(tx, created.id, { name: 'renamed' }));
    expect(renamed).toMatchObject({
      id: created.id,
      name: 'renamed',
      settings: created.settings,
      secrets: created.secrets,
    });
    expect(renamed.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());
    expect(await metadata()).toHaveLength(1); // the same settings: what was read from them still holds

    const moved = await t.deps.db.transaction((tx) =>
      updateSource(tx, created.id, { settings: { host: 'elsewhere', port: 5432, db: 'shop', username: 'r' } }),
    );
    expect(moved.settings).toMatchObject({ host: 'elsewhere' });
    expect(await metadata()).toEqual([]);

    const full = await loadFullSource(t.deps.db, created.id);
    expect(full).toEqual(moved);
    expect(t.deps.secretBox.open(full.secrets!)).toEqual({ password: 'secret' });
    await expect(loadFullSource(t.deps.db, 2_000_000_000)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(t.deps.db.transaction((tx) => updateSource(tx, 2_000_000_000, { name: 'x' }))).rejects.toMatchObject({
      kind: 'not_found',
    });
  });

  it('clones a source into another workspace with its settings and sealed secrets, recording old -> new', async () => {
    const original = await pgSource();
    const idMap = emptyIdMap();
    const files = sourceFileCopies(t.deps);
    const copyId = await t.deps.db.transaction((tx) =>
      cloneSource(tx, original.id, { workspaceId: target, authorId: null }, idMap, files),
    );
    expect(copyId).not.toBe(original.id);
    expect(idMap.dataSources).toEqual(new Map([[original.id, copyId]]));
    const copy = await loadFullSource(t.deps.db, copyId);
    expect(copy).toMatchObject({
      name: original.name,
      type: 'postgresql',
      workspaceId: target,
      authorId: null,
      settings: original.settings,
      secrets: original.secrets,
    });
    expect(copy.uuid).not.toBe(original.uuid);
    // Named when asked.
    const named = await t.deps.db.transaction((tx) =>
      cloneSource(tx, original.id, { workspaceId: target, authorId: user.id, name: 'n' }, idMap, files),
    );
    expect((await loadFullSource(t.deps.db, named)).name).toBe('n');
  });

  it('clones a file source with a folder of its own and the paths rewritten', async () => {
    const original = await fileSource();
    const copyId = await t.deps.db.transaction((tx) =>
      cloneSource(tx, original.id, { workspaceId: target, authorId: user.id }, emptyIdMap(), sourceFileCopies(t.deps)),
    );
    const copy = await loadFullSource(t.deps.db, copyId);
    const settings = copy.settings as {
      file: { duckdb_path: string; tables: string[] };
      upload: { stored_file: string };
    };
    expect(settings.file.duckdb_path).toBe(
      toRelative(t.deps, path.join(sourceDir(t.deps, copy.uuid), 'data-1.duckdb')),
    );
    expect(settings.file.tables).toEqual(['cities']);
    expect(await readFile(toAbsolute(t.deps, settings.upload.stored_file), 'utf8')).toBe('id,city\n1,Казань\n');
    expect(await exists(sourceDir(t.deps, original.uuid))).toBe(true);
  });

  it('leaves nothing behind when the transaction fails: no row, and discard() removes the copied folder', async () => {
    const original = await fileSource();
    const folders = () => readdir(filesRoot(t.deps)).then((names) => names.sort());
    const before = await folders();
    const files = sourceFileCopies(t.deps);
    const idMap = emptyIdMap();
    const failed = t.deps.db.transaction(async (tx) => {
      await cloneSource(tx, original.id, { workspaceId: target, authorId: user.id }, idMap, files);
      throw new Error('a later step of the deploy failed');
    });
    await expect(failed).rejects.toThrow('a later step');
    const copyId = idMap.dataSources.get(original.id)!;
    expect(await t.deps.db.select().from(dataSources).where(eq(dataSources.id, copyId))).toEqual([]);
    // The files are outside the transaction: the copied folder is there until the caller discards it.
    expect((await folders()).length).toBe(before.length + 1);
    await files.discard();
    expect(await folders()).toEqual(before);
  });
});
