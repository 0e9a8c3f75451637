import type { FilterSpec } from '../query/compile/types';

/**
 * A filter of an export; `dataset_id` (set by mailings, never by POST /api/exports) limits it to the widgets of that
 * dataset: a sliced mailing's dashboard page filters the slice dataset's widgets and leaves the others whole.
 */
export type ExportFilter = FilterSpec & { dataset_id?: number };

/** The filters that apply to a widget of `datasetId`, as the widget read takes them. */
export const filtersForDataset = (filters: readonly ExportFilter[], datasetId: number): FilterSpec[] =>
  filters
    .filter((f) => f.dataset_id === undefined || f.dataset_id === datasetId)
    .map(({ dataset_id: _scope, ...f }) => f);
