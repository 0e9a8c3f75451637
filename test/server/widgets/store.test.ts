import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataSources } from '../../../db/schema/data-sources';
import { datasets } from '../../../db/schema/datasets';
import { widgets } from '../../../db/schema/widgets';
import { copySources, insertSource, loadFullSource, sourceFileCopies } from '../../../server/data-sources/store';
import { copyDatasets, loadFullDataset } from '../../../server/datasets/store';
import { createCopyMap, mapCopyOf, mapObjects, readCopyMap, type CopyTarget } from '../../../server/objects/copy-map';
import { copyWidgets, insertWidget, loadFullWidget, updateWidget } from '../../../server/widgets/store';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, login, uniq, type TestUser } from '../../support/factories';
import { ok } from '../../support/rest';
import { createDataset, shopSchema, type DatasetDetails } from '../../routers/datasets/helpers';

/*
 * The widgets' store, and the three stores composed as a deploy composes them: a source, a dataset on it and a widget
 * on that, copied into another workspace in ONE transaction through one copy map (server/objects/copy-map.ts).
 */

const { t, api } = useTestApp();
let user: TestUser;
let token: string;

beforeAll(async () => {
  user = await createUser(t.deps);
  token = await login(api, user.username, user.password);
});

const config = {
  rows: [{ id: 'city', field: 'city', table: 'customers' }],
  series: [{ id: 'revenue', sql: '[Выручка]' }],
  columns: [],
  filters: [{ sql: '[customers.city]', op: 'in', values: ['Казань'] }],
  sorts: [{ field_id: 'revenue', direction: 'desc' }],
  calculated_fields: [],
};

/** A source, the shop dataset on it (built through REST) and a table widget on the dataset, in the user's own workspace. */
async function world() {
  const src = await t.deps.db.transaction((tx) =>
    insertSource(tx, {
      name: uniq('src'),
      type: 'postgresql',
      workspaceId: user.personalWorkspaceId,
      authorId: user.id,
      settings: { host: '127.0.0.1', port: 5432, db: 'shop', username: 'reader' },
      secrets: t.deps.secretBox.seal({ password: 'secret' }),
    }),
  );
  const created = await createDataset(api, token, {
    workspace_id: user.personalWorkspaceId,
    data_source_ids: [src.id],
  });
  const dataset = ok<DatasetDetails>(await api.put(`/api/dataset/${created.id}/schema`, shopSchema(src.id), token));
  const widget = await insertWidget(t.deps.db, {
    name: uniq('w'),
    type: 'table',
    datasetId: dataset.id,
    workspaceId: user.personalWorkspaceId,
    authorId: user.id,
    config,
  });
  return { src, dataset, widget };
}

const inWorkspace = async (workspaceId: number) => ({
  sources: await t.deps.db.select().from(dataSources).where(eq(dataSources.workspaceId, workspaceId)),
  datasets: await t.deps.db.select().from(datasets).where(eq(datasets.workspaceId, workspaceId)),
  widgets: await t.deps.db.select().from(widgets).where(eq(widgets.workspaceId, workspaceId)),
});

describe('widget store', () => {
  it('updates (moving updated_at) and loads the full row; 404 for a missing widget', async () => {
    const { widget } = await world();
    const updated = await t.deps.db.transaction((tx) =>
      updateWidget(tx, widget.id, { name: 'renamed', config: { ...config, sorts: [] } }),
    );
    expect(updated).toMatchObject({
      id: widget.id,
      name: 'renamed',
      type: 'table',
      datasetId: widget.datasetId,
      config: { ...config, sorts: [] },
    });
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(widget.updatedAt.getTime());
    expect(await loadFullWidget(t.deps.db, widget.id)).toEqual(updated);
    await expect(loadFullWidget(t.deps.db, 2_000_000_000)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(t.deps.db.transaction((tx) => updateWidget(tx, 2_000_000_000, { name: 'x' }))).rejects.toMatchObject({
      kind: 'not_found',
    });
  });

  it('keeps a widget on its dataset when the dataset was not copied in the run', async () => {
    const { widget } = await world();
    const { copyId, recorded } = await t.deps.db.transaction(async (tx) => {
      const copyId = await mapCopyOf(tx, 'widget', widget.id, 'c');
      await copyWidgets(tx, { workspaceId: user.personalWorkspaceId, authorId: user.id });
      return { copyId, recorded: (await readCopyMap(tx, { widget: [widget.id] })).widget };
    });
    expect(recorded).toEqual(new Map([[widget.id, copyId]]));
    expect(await loadFullWidget(t.deps.db, copyId)).toMatchObject({ name: 'c', datasetId: widget.datasetId, config });
  });
});

describe('a deploy: source, dataset and widget copied into another workspace in one transaction', () => {
  it('remaps every reference through the one copy map and leaves the originals alone', async () => {
    const { src, dataset, widget } = await world();
    const targetWs = await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Администратор' }]);
    const target: CopyTarget = { workspaceId: targetWs, authorId: user.id };
    const copies = await t.deps.db.transaction(async (tx) => {
      await createCopyMap(tx);
      await mapObjects(tx, 'data_source', [src.id]);
      await mapObjects(tx, 'dataset', [dataset.id]);
      await mapObjects(tx, 'widget', [widget.id]);
      await copySources(tx, target, { files: sourceFileCopies(t.deps) });
      await copyDatasets(tx, target);
      await copyWidgets(tx, target);
      return readCopyMap(tx, {
        data_source: [src.id],
        dataset: [dataset.id],
        widget: [widget.id],
        dataset_field: dataset.fields.map((f) => f.id),
      });
    });

    const sourceCopy = copies.data_source.get(src.id)!;
    const datasetCopy = copies.dataset.get(dataset.id)!;
    const widgetCopy = copies.widget.get(widget.id)!;
    for (const copy of [sourceCopy, datasetCopy, widgetCopy]) expect(copy).toEqual(expect.any(Number));
    expect(await loadFullSource(t.deps.db, sourceCopy)).toMatchObject({
      workspaceId: targetWs,
      settings: src.settings,
      secrets: src.secrets,
    });
    const { row, model } = await loadFullDataset(t.deps.db, datasetCopy);
    expect(row.workspaceId).toBe(targetWs);
    expect(model.dataSourceIds).toEqual([sourceCopy]);
    expect(model.objects.every((o) => o.dataSourceId === sourceCopy)).toBe(true);
    const byId = (a: number, b: number) => a - b;
    expect(model.fields.map((f) => f.id).sort(byId)).toEqual([...copies.dataset_field.values()].sort(byId));
    expect(await loadFullWidget(t.deps.db, widgetCopy)).toMatchObject({
      workspaceId: targetWs,
      authorId: user.id,
      datasetId: datasetCopy,
      config,
    });

    const inTarget = await inWorkspace(targetWs);
    expect([inTarget.sources.length, inTarget.datasets.length, inTarget.widgets.length]).toEqual([1, 1, 1]);
    // The originals still point at each other.
    expect((await loadFullWidget(t.deps.db, widget.id)).datasetId).toBe(dataset.id);
    expect((await loadFullDataset(t.deps.db, dataset.id)).model.dataSourceIds).toEqual([src.id]);
  });

  it('rolls everything back when one copy fails', async () => {
    const { src, dataset, widget } = await world();
    const targetWs = await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Администратор' }]);
    const target: CopyTarget = { workspaceId: targetWs, authorId: user.id };
    const files = sourceFileCopies(t.deps);
    let widgetCopy: number | undefined;
    const run = t.deps.db.transaction(async (tx) => {
      await createCopyMap(tx);
      await mapObjects(tx, 'data_source', [src.id]);
      await copySources(tx, target, { files });
      await mapObjects(tx, 'dataset', [dataset.id]);
      await copyDatasets(tx, target);
      widgetCopy = (await mapObjects(tx, 'widget', [widget.id])).get(widget.id);
      await copyWidgets(tx, target);
      expect((await inWorkspace(targetWs)).widgets).toEqual([]); // outside the transaction nothing shows yet
      expect((await loadFullWidget(tx, widgetCopy!)).datasetId).not.toBe(dataset.id); // inside it is written
      await mapObjects(tx, 'widget', [2_000_000_000]); // deleted meanwhile: the whole deploy fails
    });
    await expect(run).rejects.toMatchObject({ kind: 'not_found' });
    await files.discard();
    expect(widgetCopy).toEqual(expect.any(Number)); // it got that far
    await expect(loadFullWidget(t.deps.db, widgetCopy!)).rejects.toMatchObject({ kind: 'not_found' });
    expect(await inWorkspace(targetWs)).toEqual({ sources: [], datasets: [], widgets: [] });
  });
});
