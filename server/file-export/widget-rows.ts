import { readableObject } from '../access/object-access';
import type { Viewer } from '../access/viewer';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { scopeFor } from '../query/compile/compile-widget';
import type { DatasetModel } from '../query/compile/dataset-model';
import { analyzeShelves } from '../query/compile/shelves';
import type { ParameterValues, ShelfField, WidgetQueryInput } from '../query/compile/types';
import type { PrimitiveType } from '../query/expr';
import { fieldRefsOfDataset } from '../datasets/views';
import { configOf } from '../widgets/views';
import { streamData } from '../query/read';
import { widgetReadOf } from '../widgets/data';
import { filtersForDataset, type ExportFilter } from './filters';

/*
 * The rows of one widget for a file export (POST /api/exports, mailings' attachments), streamed: one read of all the
 * widget's rows (server/query/read.ts streamData, a cursor at the source) under the job user's viewer, so rights,
 * row- and column-level security apply exactly as on the widget's own data; memory holds one batch at a time.
 */

export interface ExportColumn {
  key: string;
  /** The header: the shelf's alias, else the dataset field's title, else its name. */
  title: string;
}

export interface WidgetRowsSource {
  name: string;
  columns: ExportColumn[];
  /**
   * Batches of rows as arrays in `columns` order; stops after `maxRows + 1` rows (cancelling the query) so the caller
   * can tell the limit. Leaving the loop early cancels the query as well.
   */
  batches(opts: RowsReadOptions): AsyncGenerator<RowsBatch>;
}

export interface RowsBatch {
  rows: unknown[][];
  /**
   * The type of each column (in `columns` order) as the query compiler infers it from the dataset fields' primitive
   * types and the shelf expressions: a file writes a column by its type, never by guessing from each value.
   */
  types: PrimitiveType[];
}

export interface RowsReadOptions {
  maxRows: number;
  signal?: AbortSignal;
  /** The export's own time limit, for the query at the source. */
  timeoutMs?: number;
}

export interface ExportInputs {
  filters?: ExportFilter[];
  parameters?: ParameterValues;
}

/** A widget as the chart module (web/charts) draws it: its kind and its shelves with their titles. */
export interface WidgetDrawing {
  id: number;
  name: string;
  type: string;
  dataset_id: number;
  rows: { id: string; title: string }[];
  series: { id: string; title: string }[];
  columns: { id: string; title: string }[];
}

const bare = (name: string) => name.replace(/^\[|\]$/g, '');

async function fieldTitles(deps: AppDeps, datasetId: number): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  for (const f of await fieldRefsOfDataset(deps.db, datasetId)) {
    const name = bare(f.name);
    titles.set(f.objectName ? `${f.objectName}.${name}` : name, f.title);
    if (!titles.has(name)) titles.set(name, f.title);
  }
  return titles;
}

/** A shelf naming one dataset field (by field and table, or as the bare reference `[table.field]`): its title. */
function titleOf(s: ShelfField, titles: Map<string, string>): string | undefined {
  if (s.field) return titles.get(s.table ? `${s.table}.${s.field}` : s.field) ?? titles.get(s.field);
  const ref = /^\s*\[([^\]]+)\]\s*$/.exec(s.sql ?? '');
  return ref ? titles.get(ref[1]) : undefined;
}

const titled = (s: ShelfField, titles: Map<string, string>) => s.alias || titleOf(s, titles) || s.field || s.id;

export async function widgetDrawing(deps: AppDeps, actor: Actor, widgetId: number): Promise<WidgetDrawing> {
  const { row } = await readableObject(deps.db, actor, 'widget', widgetId);
  const config = configOf(row);
  const titles = await fieldTitles(deps, row.datasetId);
  const shelf = (list: ShelfField[]) => list.map((s) => ({ id: s.id, title: titled(s, titles) }));
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    dataset_id: row.datasetId,
    rows: shelf(config.rows),
    series: shelf(config.series),
    columns: shelf(config.columns),
  };
}

/**
 * The type of each shelf's value, from the same shelf analysis the query was compiled with (a bare measure field
 * gets its default aggregation, calculated fields resolve); 'unknown' where the compiler cannot tell.
 */
function columnTypes(model: DatasetModel, query: WidgetQueryInput, columns: ExportColumn[]): PrimitiveType[] {
  try {
    const scope = scopeFor(model, query.parameters).defineFromRequest(query.calculatedFields);
    const byKey = new Map(analyzeShelves(query, scope).items.map((i) => [i.key, scope.typeOf(i.ast)]));
    return columns.map((c) => byKey.get(c.key) ?? 'unknown');
  } catch {
    // The query compiled already: an analysis that fails here only loses the types, never the rows.
    return columns.map(() => 'unknown');
  }
}

export async function widgetRows(
  deps: AppDeps,
  viewer: Viewer,
  widgetId: number,
  inputs: ExportInputs,
): Promise<WidgetRowsSource> {
  const drawing = await widgetDrawing(deps, viewer.actor, widgetId);
  const columns = [...drawing.rows, ...drawing.series, ...drawing.columns].map((s) => ({ key: s.id, title: s.title }));
  return {
    name: drawing.name,
    columns,
    async *batches({ maxRows, signal, timeoutMs }) {
      signal?.throwIfAborted();
      const { dataset, sources, query } = await widgetReadOf(deps, viewer, widgetId, {
        filters: filtersForDataset(inputs.filters ?? [], drawing.dataset_id),
        parameters: inputs.parameters,
        page: 1,
        page_size: 1, // not used: the stream reads every row
      });
      const stream = await streamData(deps, viewer, dataset, { kind: 'widget', query }, sources, {
        signal,
        timeoutMs,
        maxRows,
      });
      // The shelves' order of the file; a KPI and a flat widget alike answer their output columns by shelf id.
      const at = columns.map((c) => stream.query.columns.findIndex((q) => q.key === c.key));
      const types = columnTypes(stream.model, query, columns);
      for await (const batch of stream)
        yield { rows: batch.map((r) => at.map((i) => (i < 0 ? null : (r[i] ?? null)))), types };
    },
  };
}
