import { randomUUID } from 'node:crypto';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataSourceMetadata, dataSources } from '../../../db/schema/data-sources';
import {
  copySources,
  insertSource,
  loadFullSource,
  sourceFileCopies,
  updateSource,
  type SourceFileCopies,
} from '../../../server/data-sources/store';
import { createCopyMap, mapObjects, readCopyMap, type CopyTarget } from '../../../server/objects/copy-map';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, uniq, type TestUser } from '../../support/factories';

/*
 * The data sources' store: tx-first, actor-free writes that a deploy composes in one transaction. Every call here
 * runs in a transaction of the test's own, as a deploy's would; copies go through the copy map
 * (server/objects/copy-map.ts) as POST /api/data-source/{id}/copy and a deploy do.
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

/** The folder of a file source uploaded before storage: DATA_DIR/files/<uuid>, paths relative to DATA_DIR. */
const legacyDir = (uuid: string) => path.join(t.deps.config.dataDir, 'files', uuid);
const toRelative = (absolute: string) => path.relative(t.deps.config.dataDir, absolute);
/** The objects of the sources in storage: one prefix files/<uuid>/ per source. */
const storedSources = async () => {
  const uuids = new Set<string>();
  for await (const o of t.deps.storage.list('files/')) uuids.add(o.key.split('/')[1]);
  return [...uuids].sort();
};
const readObject = async (key: string) => {
  const chunks: Buffer[] = [];
  for await (const c of await t.deps.storage.get(key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * A file source uploaded before storage: a folder in DATA_DIR named by its uuid with the stored file and the DuckDB
 * file (a copy of it moves its files into storage).
 */
async function fileSource() {
  const uuid = randomUUID();
  const dir = legacyDir(uuid);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'source-1.csv'), 'id,city\n1,Казань\n');
  await writeFile(path.join(dir, 'data-1.duckdb'), 'not really a database');
  const settings = {
    file: { duckdb_path: toRelative(path.join(dir, 'data-1.duckdb')), tables: ['cities'] },
    upload: {
      original_name: 'cities.csv',
      format: 'csv',
      stored_file: toRelative(path.join(dir, 'source-1.csv')),
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

/** A copy of one source through the copy map (in a transaction of its own): answers the copy's id. */
const copyOne = (id: number, target: CopyTarget, files: SourceFileCopies, name?: string) =>
  t.deps.db.transaction(async (tx) => {
    await createCopyMap(tx);
    const copyId = (await mapObjects(tx, 'data_source', [id], { name })).get(id)!;
    await copySources(tx, target, { files });
    return copyId;
  });

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

  it('copies a source into another workspace with its settings and sealed secrets, under the id the map drew', async () => {
    const original = await pgSource();
    const files = sourceFileCopies(t.deps);
    const { copyId, recorded } = await t.deps.db.transaction(async (tx) => {
      await createCopyMap(tx);
      const copyId = (await mapObjects(tx, 'data_source', [original.id])).get(original.id)!;
      await copySources(tx, { workspaceId: target, authorId: null }, { files });
      return { copyId, recorded: (await readCopyMap(tx, { data_source: [original.id] })).data_source };
    });
    expect(copyId).not.toBe(original.id);
    expect(recorded).toEqual(new Map([[original.id, copyId]]));
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
    const named = await copyOne(original.id, { workspaceId: target, authorId: user.id }, files, 'n');
    expect((await loadFullSource(t.deps.db, named)).name).toBe('n');
  });

  it('copies a file source into storage under a prefix of its own, the paths rewritten to its keys', async () => {
    const original = await fileSource();
    const copyId = await copyOne(original.id, { workspaceId: target, authorId: user.id }, sourceFileCopies(t.deps));
    const copy = await loadFullSource(t.deps.db, copyId);
    const settings = copy.settings as {
      file: { duckdb_path: string; tables: string[] };
      upload: { stored_file: string };
    };
    expect(settings.file.duckdb_path).toBe(`storage:files/${copy.uuid}/data-1.duckdb`);
    expect(settings.file.tables).toEqual(['cities']);
    expect(settings.upload.stored_file).toBe(`storage:files/${copy.uuid}/source-1.csv`);
    expect(await readObject(`files/${copy.uuid}/source-1.csv`)).toBe('id,city\n1,Казань\n');
    expect(await exists(legacyDir(original.uuid))).toBe(true);
  });

  it('leaves nothing behind when the transaction fails: no row, and discard() removes the copied folder', async () => {
    const original = await fileSource();
    const folders = storedSources;
    const before = await folders();
    const files = sourceFileCopies(t.deps);
    let copyId = 0;
    const failed = t.deps.db.transaction(async (tx) => {
      await createCopyMap(tx);
      copyId = (await mapObjects(tx, 'data_source', [original.id])).get(original.id)!;
      await copySources(tx, { workspaceId: target, authorId: user.id }, { files });
      throw new Error('a later step of the deploy failed');
    });
    await expect(failed).rejects.toThrow('a later step');
    expect(copyId).toBeGreaterThan(0);
    expect(await t.deps.db.select().from(dataSources).where(eq(dataSources.id, copyId))).toEqual([]);
    // The files are outside the transaction: the copied objects are there until the caller discards them.
    expect((await folders()).length).toBe(before.length + 1);
    await files.discard();
    expect(await folders()).toEqual(before);
  });

  it('updates a kept copy in place: an override replaces settings and secrets, the metadata of the old ones goes', async () => {
    const [original, other] = [await pgSource(), await pgSource()];
    const copyId = await copyOne(original.id, { workspaceId: target, authorId: user.id }, sourceFileCopies(t.deps));
    const before = await loadFullSource(t.deps.db, copyId);
    await t.deps.db.insert(dataSourceMetadata).values({ dataSourceId: copyId, cacheKey: 'schemas', value: ['public'] });
    const sealed = t.deps.secretBox.seal({ password: 'replaced' });
    const overrides = sql`select ${original.uuid}::uuid as source_uuid, 'postgresql' as type,
      ${JSON.stringify({ host: 'prod', port: 5432, db: 'shop', username: 'prod' })}::jsonb as settings,
      ${sealed} as secrets`;
    const { result, copies } = await t.deps.db.transaction(async (tx) => {
      await createCopyMap(tx);
      const keep = {
        copies: sql`select ${original.id}::int as original_id, ${copyId}::int as copy_id`,
        workspaceId: target,
      };
      const kept = await mapObjects(tx, 'data_source', [original.id], { keep });
      const created = await mapObjects(tx, 'data_source', [other.id], { keep });
      const result = await copySources(
        tx,
        { workspaceId: target, authorId: user.id },
        { files: sourceFileCopies(t.deps), overrides },
      );
      return { result, copies: { kept: kept.get(original.id)!, created: created.get(other.id)! } };
    });
    expect(copies.kept).toBe(copyId);
    expect(copies.created).not.toBe(copyId);
    // The other source had no override: it keeps the original's connection, and the result names it.
    expect(result).toEqual({ withoutOverride: [other.name], replacedFolders: [] });
    const updated = await loadFullSource(t.deps.db, copyId);
    expect(updated).toMatchObject({ id: copyId, uuid: before.uuid, settings: { host: 'prod', username: 'prod' } });
    expect(t.deps.secretBox.open(updated.secrets!)).toEqual({ password: 'replaced' });
    expect(updated.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    expect(
      await t.deps.db.select().from(dataSourceMetadata).where(eq(dataSourceMetadata.dataSourceId, copyId)),
    ).toEqual([]);
    expect(await loadFullSource(t.deps.db, copies.created)).toMatchObject({
      settings: other.settings,
      secrets: other.secrets,
      workspaceId: target,
    });
  });
});
