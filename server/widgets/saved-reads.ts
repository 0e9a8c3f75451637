import { AppError } from '../kernel/errors';
import { configOf, type WidgetConfig, type WidgetRow } from './views';

/** What a data request may send besides paging: the saved configuration's parts, and a kind. */
type RequestShape = Partial<WidgetConfig> & { type?: string };

/*
 * A right on a widget opens that one widget, not its dataset (docs/roles.md). A caller who may read the widget but
 * not its dataset may page through what the widget saves, and nothing else: shelves, a kind, calculated fields,
 * filters or sorts of their own would read the dataset beyond the widget (any column of it, any filter as a probe of
 * values), so such a request is refused with 403 «Доступ запрещён» before anything is read. Dashboard selectors and
 * parameters are the dashboard's saved configuration, not the caller's: dashboard data does not come through here.
 */

/** JSON with object keys in order: saved configurations come back from jsonb with their keys reordered. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Whether the request reads more than, or other than, the saved widget (false when it only pages). */
function readsBeyondSaved(row: WidgetRow, req: RequestShape): boolean {
  const saved = configOf(row);
  if (req.type !== undefined && req.type !== row.type) return true;
  for (const shelf of ['rows', 'series', 'columns'] as const) {
    const sent = req[shelf];
    if (sent !== undefined && canonical(sent) !== canonical(saved[shelf])) return true;
  }
  // The request's definitions win over the saved ones of the same name, so only copies of saved ones are harmless.
  const savedDefs = new Set(saved.calculated_fields.map(canonical));
  if ((req.calculated_fields ?? []).some((def) => !savedDefs.has(canonical(def)))) return true;
  if ((req.filters ?? []).length > 0) return true;
  // Ordering by a saved shelf only reorders the rows the widget shows.
  const shelfIds = new Set([...saved.rows, ...saved.series, ...saved.columns].map((f) => f.id));
  return (req.sorts ?? []).some((s) => !shelfIds.has(s.field_id));
}

/**
 * 403 when the request reads beyond the saved widget and the caller (the viewer's actor) cannot read the widget's
 * dataset through the access policy (`datasetReadable`, decided with the widget's own access in widget-load.ts); a
 * reader of the dataset may shape the request freely, as in a widget preview.
 */
export function assertWithinSavedWidget(row: WidgetRow, req: RequestShape, datasetReadable: boolean): void {
  if (datasetReadable) return;
  if (readsBeyondSaved(row, req)) throw new AppError('forbidden');
}
