import { beforeAll, describe, expect, it } from 'vitest';
import { copySources, insertSource, loadFullSource, sourceFileCopies } from '../../../server/data-sources/store';
import { copyDatasets, insertDataset, loadFullDataset, updateDataset } from '../../../server/datasets/store';
import { createCopyMap, mapObjects, readCopyMap } from '../../../server/objects/copy-map';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, login, uniq, type TestUser } from '../../support/factories';
import { ok } from '../../support/rest';
import { createDataset, shopSchema, type DatasetDetails } from '../../routers/datasets/helpers';

/*
 * The datasets' store: tx-first, actor-free writes that a deploy composes in one transaction with the other areas'
 * stores. Datasets with a schema are built through the REST API (the way users make them), then copied here through
 * the copy map (server/objects/copy-map.ts).
 */

const { t, api } = useTestApp();
let user: TestUser;
let token: string;
let target: number;

beforeAll(async () => {
  user = await createUser(t.deps);
  token = await login(api, user.username, user.password);
  target = await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Администратор' }]);
});

const source = () =>
  t.deps.db.transaction((tx) =>
    insertSource(tx, {
      name: uniq('src'),
      type: 'postgresql',
      workspaceId: user.personalWorkspaceId,
      authorId: user.id,
      settings: { host: '127.0.0.1', port: 5432, db: 'shop', username: 'reader' },
    }),
  );

/** The shop schema with orders on source `a` and customers on source `b`. */
async function shopOnTwoSources(a: number, b: number): Promise<DatasetDetails> {
  const ds = await createDataset(api, token, { workspace_id: user.personalWorkspaceId, data_source_ids: [a, b] });
  const schema = shopSchema(a);
  schema.objects[1].data_source_id = b;
  return ok<DatasetDetails>(await api.put(`/api/dataset/${ds.id}/schema`, schema, token));
}

describe('dataset store', () => {
  it('inserts with its sources in order (once each), updates settings and the source list, loads row and schema', async () => {
    const [a, b, c] = [await source(), await source(), await source()];
    const row = await t.deps.db.transaction((tx) =>
      insertDataset(tx, { name: 'd', workspaceId: user.personalWorkspaceId, authorId: user.id }, [b.id, a.id, b.id]),
    );
    expect((await loadFullDataset(t.deps.db, row.id)).model.dataSourceIds).toEqual([b.id, a.id]);

    const updated = await t.deps.db.transaction((tx) =>
      updateDataset(tx, row.id, { name: 'e', live: false, dataSourceIds: [c.id, b.id] }),
    );
    expect(updated).toMatchObject({ id: row.id, name: 'e', description: '', live: false, version: row.version + 1 });
    const full = await loadFullDataset(t.deps.db, row.id);
    expect(full.row).toEqual(updated);
    expect(full.model.dataSourceIds).toEqual([c.id, b.id]);
    // Nothing to change still counts as a save: version and edit time move.
    expect((await t.deps.db.transaction((tx) => updateDataset(tx, row.id, {}))).version).toBe(row.version + 2);
    await expect(loadFullDataset(t.deps.db, 2_000_000_000)).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('copies onto the sources copied in the same run, keeps the others, and maps every field', async () => {
    const [a, b] = [await source(), await source()];
    const original = await shopOnTwoSources(a.id, b.id);
    const { copyId, sourceCopy, copies } = await t.deps.db.transaction(async (tx) => {
      await createCopyMap(tx);
      const sourceCopy = (await mapObjects(tx, 'data_source', [a.id])).get(a.id)!;
      const copyId = (await mapObjects(tx, 'dataset', [original.id])).get(original.id)!;
      await copySources(tx, { workspaceId: target, authorId: user.id }, { files: sourceFileCopies(t.deps) });
      await copyDatasets(tx, { workspaceId: target, authorId: null });
      const copies = await readCopyMap(tx, { dataset: [original.id], dataset_field: original.fields.map((f) => f.id) });
      return { copyId, sourceCopy, copies };
    });
    expect(copies.dataset).toEqual(new Map([[original.id, copyId]]));

    const { row, model } = await loadFullDataset(t.deps.db, copyId);
    expect(row).toMatchObject({
      name: original.name,
      description: original.description,
      live: original.live,
      workspaceId: target,
      authorId: null,
      version: 1,
    });
    // a was cloned in this run, b was not: the copy reads a's copy and b itself.
    expect(model.dataSourceIds).toEqual([sourceCopy, b.id]);
    expect(model.objects.map((o) => [o.name, o.dataSourceId])).toEqual([
      ['orders', sourceCopy],
      ['customers', b.id],
    ]);

    // Every field has a new id, recorded in the map; references inside the schema follow it; formulas (by name) stay.
    expect([...copies.dataset_field.keys()].sort((x, y) => x - y)).toEqual(
      original.fields.map((f) => f.id).sort((x, y) => x - y),
    );
    const field = (oldId: number) => model.fields.find((f) => f.id === copies.dataset_field.get(oldId))!;
    for (const f of original.fields) {
      expect(field(f.id)).toMatchObject({ name: f.name, formula: f.formula, kind: f.kind });
      expect(field(f.id).id).not.toBe(f.id);
    }
    const newField = (oldId: number) => copies.dataset_field.get(oldId);
    expect(model.relations[0].conditions).toEqual(
      original.relations[0].conditions.map((c) => ({
        leftFieldId: newField(c.left_field_id),
        rightFieldId: newField(c.right_field_id),
      })),
    );
    expect(model.hierarchies[0].fieldIds).toEqual(original.hierarchies[0].field_ids.map(newField));
    expect(model.filters[0].fieldId).toBe(newField(original.filters[0].field_id));
    const derived = original.fields.find((f) => f.derivation)!;
    expect(field(derived.id).derivation?.fieldId).toBe(newField(derived.derivation!.field_id));
    expect(model.parameters.map((p) => p.name)).toEqual(original.parameters.map((p) => p.name));

    // The original is untouched.
    expect(ok<DatasetDetails>(await api.get(`/api/dataset/${original.id}`, token))).toEqual(original);
  });

  it('rolls the whole run back when a copy fails', async () => {
    const a = await source();
    const original = await shopOnTwoSources(a.id, a.id);
    const target_ = { workspaceId: target, authorId: user.id };
    const drawn = { source: 0, dataset: 0 };
    const run = t.deps.db.transaction(async (tx) => {
      await createCopyMap(tx);
      drawn.source = (await mapObjects(tx, 'data_source', [a.id])).get(a.id)!;
      drawn.dataset = (await mapObjects(tx, 'dataset', [original.id])).get(original.id)!;
      await copySources(tx, target_, { files: sourceFileCopies(t.deps) });
      await copyDatasets(tx, target_);
      expect((await loadFullDataset(tx, drawn.dataset)).row.workspaceId).toBe(target); // written, in the transaction
      await mapObjects(tx, 'dataset', [2_000_000_000]); // deleted meanwhile: the whole run fails
    });
    await expect(run).rejects.toMatchObject({ kind: 'not_found' });
    await expect(loadFullDataset(t.deps.db, drawn.dataset)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(loadFullSource(t.deps.db, drawn.source)).rejects.toMatchObject({ kind: 'not_found' });
  });
});
