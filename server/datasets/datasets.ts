import { and, asc, eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasetObjects, datasetSources, datasets } from '../../db/schema/datasets';
import { assertWorkspaceEditable, assertWorkspaceReadable, defaultWorkspaceFor } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { endRunsOf, stopRunsAfter, type EndedRuns } from '../etl/etl';
import { badRequest, invalid, type FieldErrors } from '../kernel/errors';
import { mapCopyOf } from '../objects/copy-map';
import { listObjects, type StdListFilter } from '../objects/list';
import type { PageRequest } from '../kernel/paging';
import { formatFieldPath } from '../kernel/validation';
import type { DatasetModel } from '../query/compile/dataset-model';
import { deletableObject, ownedObject, readableIds, readableObject } from '../access/object-access';
import { fieldsHiddenFrom } from '../access/dataset-security/secured';
import { readableSourceIds } from '../access/source-rights';
import { sourceRef } from '../data-sources/views';
import { dashboardsUsingDataset, widgetsUsingDataset } from './dependents';
import { dataSourceIdsOf, modelOfRow, inSnapshot, type DatasetRow } from './load-model';
import { MSG } from './messages';
import { copyDatasets, insertDataset, loadFullDataset, updateDataset as updateDatasetRow } from './store';
import { datasetDetails, datasetView, withoutHiddenFields, type DatasetMode } from './views';
import { recordRevisions } from '../revisions/store';

export const DATASET_SORT_FIELDS = ['id', 'name', 'created_at', 'updated_at', 'type'] as const;

export interface DatasetListFilter extends StdListFilter {
  type?: DatasetMode;
}

export interface CreateDatasetInput {
  name: string;
  description?: string;
  workspace_id?: number;
  live?: boolean;
  data_source_ids?: number[];
}

export interface UpdateDatasetInput {
  name?: string;
  description?: string;
  live?: boolean;
  data_source_ids?: number[];
}

async function sourceIdsByDataset(db: DbOrTx, ids: number[]): Promise<Map<number, number[]>> {
  const map = new Map<number, number[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return map;
  const rows = await db
    .select({ datasetId: datasetSources.datasetId, sourceId: datasetSources.dataSourceId })
    .from(datasetSources)
    .where(inArray(datasetSources.datasetId, ids))
    .orderBy(asc(datasetSources.position), asc(datasetSources.dataSourceId));
  for (const r of rows) map.get(r.datasetId)!.push(r.sourceId);
  return map;
}

/** GET /api/dataset: datasets of every workspace the caller can read. */
export async function listDatasets(db: DbOrTx, actor: Actor, input: PageRequest & DatasetListFilter) {
  if (input.workspaceId !== undefined) await assertWorkspaceReadable(db, actor, input.workspaceId);
  return listObjects(
    db,
    actor,
    'dataset',
    input,
    {
      where: [input.type ? eq(datasets.live, input.type === 'live') : undefined],
      sort: { fields: DATASET_SORT_FIELDS, columns: { type: datasets.live } },
    },
    async (items) => {
      const sources = await sourceIdsByDataset(
        db,
        items.map((i) => i.row.id),
      );
      return items.map(({ row }) => datasetView(row, sources.get(row.id)!));
    },
  );
}

/** 422 at `dataSourceIds[i]` for every id that is not a source the caller can read. */
async function checkSources(db: DbOrTx, actor: Actor, ids: number[], alreadyAttached: number[] = []): Promise<void> {
  const fresh = ids.filter((id) => !alreadyAttached.includes(id));
  const readable = await readableSourceIds(db, actor, fresh);
  const errors: FieldErrors = {};
  ids.forEach((id, i) => {
    if (fresh.includes(id) && !readable.has(id))
      errors[formatFieldPath(['data_source_ids', i])] ??= MSG.sourceNotFound(id);
  });
  if (Object.keys(errors).length) throw invalid(errors);
}

const unique = (ids: number[]) => [...new Set(ids)];

/** POST /api/dataset: an editing role in the target workspace (default: the caller's personal one). */
export async function createDataset(deps: AppDeps, actor: Actor, input: CreateDatasetInput) {
  return deps.db.transaction(async (tx) => {
    const workspaceId = input.workspace_id ?? (await defaultWorkspaceFor(tx, actor));
    await assertWorkspaceEditable(tx, actor, workspaceId);
    const sourceIds = input.data_source_ids ?? [];
    await checkSources(tx, actor, sourceIds);
    const row = await insertDataset(
      tx,
      {
        name: input.name,
        description: input.description ?? '',
        workspaceId,
        authorId: actor.userId,
        live: input.live ?? true,
      },
      sourceIds,
    );
    await recordRevisions(tx, 'dataset', [row.id], 'created', actor.userId);
    return datasetDetails(row, await modelOfRow(tx, row));
  });
}

/**
 * The dataset as the caller sees it: a reader who does not own it (and so does not manage its column rules) does not
 * see the fields those rules hide from them, as a data request answers them "not found". What GET /api/dataset/{id}
 * lists and what the assistant (POST /api/ai/formula, /api/ai/widget-code) is told and checks against. 404 when the
 * caller cannot read it.
 */
export async function datasetSeenBy(
  db: DbOrTx,
  actor: Actor,
  id: number,
): Promise<{ row: DatasetRow; model: DatasetModel }> {
  return inSnapshot(db, async (tx) => {
    const { row, isOwner } = await readableObject(tx, actor, 'dataset', id);
    const model = await modelOfRow(tx, row);
    if (isOwner) return { row, model };
    return { row, model: withoutHiddenFields(model, await fieldsHiddenFrom(tx, actor, model)) };
  });
}

/** GET /api/dataset/{id}: the dataset with its whole schema, as the caller sees it (datasetSeenBy). */
export async function getDataset(db: DbOrTx, actor: Actor, id: number) {
  const { row, model } = await datasetSeenBy(db, actor, id);
  return datasetDetails(row, model);
}

/** PUT /api/dataset/{id}: name, description, mode and sources; the schema stays. */
export async function updateDataset(deps: AppDeps, actor: Actor, id: number, input: UpdateDatasetInput) {
  let ended: EndedRuns | undefined;
  return deps.db
    .transaction(async (tx) => {
      await ownedObject(tx, actor, 'dataset', id, { forUpdate: true });
      if (input.data_source_ids !== undefined) await checkReplacedSources(tx, actor, id, input.data_source_ids);
      // Back on its source: a synchronisation under way is cancelled with it (its pull stopped once this commits).
      if (input.live === true) ended = await endRunsOf(tx, { datasetIds: [id] }, 'live');
      const row = await updateDatasetRow(tx, id, {
        name: input.name,
        description: input.description,
        live: input.live,
        dataSourceIds: input.data_source_ids,
      });
      await recordRevisions(tx, 'dataset', [id], 'saved', actor.userId);
      return datasetDetails(row, await modelOfRow(tx, row));
    })
    .then(async (details) => {
      if (ended) await stopRunsAfter(deps, ended); // and the extract, serving nothing now, goes
      return details;
    })
    .finally(() => readCachesChanged(deps)); // widget reads cache the dataset's version
}

/** New sources must be readable; a source that objects of the dataset still use cannot be taken away (the store writes the list). */
async function checkReplacedSources(tx: DbOrTx, actor: Actor, id: number, requested: number[]): Promise<void> {
  const current = await dataSourceIdsOf(tx, id);
  await checkSources(tx, actor, requested, current);
  const next = unique(requested);
  const removed = current.filter((s) => !next.includes(s));
  if (removed.length) {
    const used = await tx
      .selectDistinct({ id: datasetObjects.dataSourceId })
      .from(datasetObjects)
      .where(and(eq(datasetObjects.datasetId, id), inArray(datasetObjects.dataSourceId, removed)));
    if (used.length) throw invalid({ dataSourceIds: MSG.sourceInUse(Math.min(...used.map((u) => u.id))) });
  }
}

/**
 * DELETE /api/dataset/{id}: refused (400) while widgets are built on it. A synchronisation under way goes with it: its
 * run is deleted in the same transaction, its pull and query at the source stopped once it commits, and the extract
 * files removed.
 */
export async function deleteDataset(deps: AppDeps, actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
  const ended = await deps.db.transaction(async (tx) => {
    await deletableObject(tx, actor, 'dataset', id);
    const widgets = await widgetsUsingDataset(tx, id);
    if (widgets.length) throw badRequest(MSG.usedByWidgets(widgets.length));
    const runs = await endRunsOf(tx, { datasetIds: [id] }, 'deleted');
    await tx.delete(datasets).where(eq(datasets.id, id));
    return runs;
  });
  await stopRunsAfter(deps, ended);
  return { id, deleted: true };
}

/** POST /api/dataset/{id}/copy: a new dataset (new ids, the same schema) in a workspace where the caller edits. */
export async function copyDataset(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: { name?: string; workspace_id?: number },
) {
  return deps.db.transaction(async (tx) => {
    const { row: original } = await ownedObject(tx, actor, 'dataset', id);
    const workspaceId = input.workspace_id ?? original.workspaceId;
    await assertWorkspaceEditable(tx, actor, workspaceId);
    // Only the dataset in the copy map: the copy stays on the original's sources.
    const copyId = await mapCopyOf(tx, 'dataset', id, input.name ?? `${original.name} (копия)`);
    await copyDatasets(tx, { workspaceId, authorId: actor.userId });
    await recordRevisions(tx, 'dataset', [copyId], 'created', actor.userId);
    const { row, model } = await loadFullDataset(tx, copyId);
    return datasetDetails(row, model);
  });
}

/** GET /api/dataset/{id}/dependencies: the sources it uses, the widgets and dashboards that use it. */
export async function datasetDependencies(db: DbOrTx, actor: Actor, id: number) {
  await readableObject(db, actor, 'dataset', id);
  const dataSources = sourceRef();
  const sources = await db
    .select({
      id: dataSources.id,
      name: dataSources.name,
      type: dataSources.type,
      workspace_id: dataSources.workspaceId,
    })
    .from(datasetSources)
    .innerJoin(dataSources, eq(dataSources.id, datasetSources.dataSourceId))
    .where(eq(datasetSources.datasetId, id))
    .orderBy(asc(datasetSources.position), asc(dataSources.id));
  const widgets = await widgetsUsingDataset(db, id);
  const dashboards = await dashboardsUsingDataset(db, id);
  // Only what the caller can read is named; the rest is counted (the owner still learns why a delete is refused).
  const readable = async <T extends { id: number }>(kind: 'data_source' | 'widget' | 'dashboard', rows: T[]) => {
    const ids = await readableIds(
      db,
      actor,
      kind,
      rows.map((r) => r.id),
    );
    return rows.filter((r) => ids.has(r.id));
  };
  const shown = {
    data_sources: await readable('data_source', sources),
    widgets: await readable('widget', widgets),
    dashboards: await readable('dashboard', dashboards),
  };
  const total = sources.length + widgets.length + dashboards.length;
  const visible = shown.data_sources.length + shown.widgets.length + shown.dashboards.length;
  return { ...shown, hidden_count: total - visible };
}
