import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { widgets } from '../../db/schema/widgets';
import type { Actor } from '../auth/actor';
import { deletableObject, editableObject, ownedObject, readableObject } from '../access/object-access';
import type { DatasetRow } from '../datasets/load-model';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { listObjects, type StdListFilter } from '../objects/list';
import type { PageRequest } from '../kernel/paging';
import { compileWidgetQuery } from '../query/compile/compile-widget';
import { datasetQueryContext } from '../query/run/dataset-context';
import { DEFAULT_PAGE_SIZE, type ParameterValues } from '../query/compile/types';
import { widgetView, type WidgetConfig, type WidgetView } from './views';
import { insertWidget, updateWidget as updateWidgetRow } from './store';
import { dropWidgetFromLayouts, lockWorkspaceLayouts } from '../dashboards/store';
import { recordRevisions } from '../revisions/store';

export const WIDGET_SORT_FIELDS = ['id', 'name', 'type', 'created_at', 'updated_at'] as const;

export interface WidgetInput extends WidgetConfig {
  name: string;
  type: string;
  dataset_id: number;
  /** Only to check the configuration with; not saved. */
  parameters?: ParameterValues;
}

export interface WidgetListFilter extends StdListFilter {
  type?: string;
  datasetId?: number;
}

const configOfInput = (input: WidgetInput): WidgetConfig => ({
  rows: input.rows,
  series: input.series,
  columns: input.columns,
  filters: input.filters,
  sorts: input.sorts,
  calculated_fields: input.calculated_fields,
});

/** The dataset a widget is built on, readable by the caller (404) and editable there (403). */
async function editableDataset(db: DbOrTx, actor: Actor, datasetId: number): Promise<DatasetRow> {
  return (await editableObject(db, actor, 'dataset', datasetId)).row;
}

/** A configuration is valid when it compiles (nothing is run): the same 422/400 answers as a data request. */
async function validateWidgetConfig(deps: AppDeps, dataset: DatasetRow, input: WidgetInput): Promise<void> {
  const ctx = await datasetQueryContext(deps, dataset);
  compileWidgetQuery(
    ctx.model,
    {
      type: input.type,
      rows: input.rows,
      series: input.series,
      columns: input.columns,
      filters: input.filters.map((filter, i) => ({ path: `filters[${i}]`, filter })),
      sorts: input.sorts,
      calculatedFields: input.calculated_fields.map((def, i) => ({ path: `calculatedFields[${i}]`, def })),
      parameters: input.parameters ?? {},
      page: 1,
      pageSize: DEFAULT_PAGE_SIZE,
    },
    ctx.sources.dialectOf,
  );
}

export async function createWidget(deps: AppDeps, actor: Actor, input: WidgetInput): Promise<WidgetView> {
  const dataset = await editableDataset(deps.db, actor, input.dataset_id);
  await validateWidgetConfig(deps, dataset, input);
  const row = await deps.db.transaction(async (tx) => {
    const created = await insertWidget(tx, {
      name: input.name,
      type: input.type,
      datasetId: dataset.id,
      workspaceId: dataset.workspaceId,
      authorId: actor.userId,
      config: configOfInput(input),
    });
    await recordRevisions(tx, 'widget', [created.id], 'created', actor.userId);
    return created;
  });
  return widgetView(row);
}

export async function getWidget(db: DbOrTx, actor: Actor, id: number): Promise<WidgetView> {
  return widgetView((await readableObject(db, actor, 'widget', id)).row);
}

/** Replaces the whole configuration (the same body as create). Any save updates updated_at. */
export async function updateWidget(deps: AppDeps, actor: Actor, id: number, input: WidgetInput): Promise<WidgetView> {
  // The configuration is checked before the transaction: checking loads the dataset's model and sources on pool
  // connections of their own, and doing that while holding the widget's row lock let more concurrent saves of one
  // widget than the pool has connections wait for each other forever. The same checks run again under the lock.
  const targetDataset = async (db: DbOrTx, current: { datasetId: number }) =>
    // Moving to another dataset needs the right to build widgets where that dataset lives.
    input.dataset_id === current.datasetId
      ? (await readableObject(db, actor, 'dataset', input.dataset_id)).row
      : await editableDataset(db, actor, input.dataset_id);
  const before = (await ownedObject(deps.db, actor, 'widget', id)).row;
  await validateWidgetConfig(deps, await targetDataset(deps.db, before), input);
  return deps.db
    .transaction(async (tx) => {
      const { row: current } = await ownedObject(tx, actor, 'widget', id, { forUpdate: true });
      const dataset = await targetDataset(tx, current);
      // On a dataset of another workspace the widget moves there: layouts it leaves behind stop showing it.
      if (dataset.workspaceId !== current.workspaceId) {
        await lockWorkspaceLayouts(tx, current.workspaceId);
        await dropWidgetFromLayouts(tx, id, { keepInWorkspace: dataset.workspaceId, authorId: actor.userId });
      }
      const row = await updateWidgetRow(tx, id, {
        name: input.name,
        type: input.type,
        datasetId: dataset.id,
        workspaceId: dataset.workspaceId,
        config: configOfInput(input),
      });
      await recordRevisions(tx, 'widget', [id], 'saved', actor.userId);
      return widgetView(row);
    })
    .finally(() => readCachesChanged(deps)); // data reads cache the widget row
}

export async function deleteWidget(deps: AppDeps, actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
  await deps.db
    .transaction(async (tx) => {
      const { row } = await deletableObject(tx, actor, 'widget', id);
      // A layout never names a widget that is gone: its tiles go, selectors and parameters stop driving it.
      await lockWorkspaceLayouts(tx, row.workspaceId);
      await dropWidgetFromLayouts(tx, id, { authorId: actor.userId });
      await tx.delete(widgets).where(eq(widgets.id, id));
    })
    .finally(() => readCachesChanged(deps));
  return { id, deleted: true };
}

export async function listWidgets(db: DbOrTx, actor: Actor, input: PageRequest & WidgetListFilter) {
  return listObjects(
    db,
    actor,
    'widget',
    input,
    {
      where: [
        input.type ? eq(widgets.type, input.type) : undefined,
        input.datasetId !== undefined ? eq(widgets.datasetId, input.datasetId) : undefined,
      ],
      sort: { fields: WIDGET_SORT_FIELDS, columns: { type: widgets.type } },
    },
    (items) => items.map(({ row }) => widgetView(row)),
  );
}
