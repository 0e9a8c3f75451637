import type { DatasetModel } from './dataset-model';
import { invalid } from '../../kernel/errors';
import { assembleQuery, type ParamTrack } from './assemble';
import { datasetCondition, widgetCondition } from './conditions';
import type { Dialect, PrimitiveType } from '../expr';
import { parameterType, resolveParameters } from './parameters';
import { QueryScope } from './scope';
import { analyzeShelves } from './shelves';
import { KPI_KIND, MAX_PAGE_SIZE, type CompiledQuery, type ParameterValues, type WidgetQueryInput } from './types';

/**
 * A widget request + the dataset model -> ONE query { sql, params } in the dialect of the data source the
 * referenced objects belong to. Pure: it reads nothing and runs nothing, so creating a widget can validate its
 * configuration by compiling it.
 */
export function compileWidgetQuery(
  model: DatasetModel,
  input: WidgetQueryInput,
  dialectOf: (dataSourceId: number) => Dialect,
  opts: { allRows?: boolean; shape?: boolean; track?: ParamTrack } = {},
): CompiledQuery {
  const scope = scopeFor(model, input.parameters).defineFromRequest(input.calculatedFields);
  const shelves = analyzeShelves(input, scope);
  const conditions = [
    ...model.filters.map((f) => datasetCondition(f, scope)),
    ...input.filters.map(({ path, filter }) => widgetCondition(path, filter, scope)),
  ];
  const kpi = input.type === KPI_KIND;
  // allRows: a streamed read (file exports) takes every row in the widget's order; page and page size play no part.
  const paged = !kpi && !opts.allRows;
  if (paged) checkPage(input.page, input.pageSize);
  return assembleQuery(
    {
      scope,
      items: shelves.items,
      grouped: shelves.aggregates,
      conditions,
      sorts: input.sorts,
      // A KPI shows one row; a page asks for one row more than it shows, to know whether another page follows.
      limit: kpi ? 1 : paged ? input.pageSize + 1 : undefined,
      offset: paged ? (input.page - 1) * input.pageSize : 0,
      shape: opts.shape,
      track: opts.track,
    },
    dialectOf,
  );
}

/** A scope with the dataset's parameters at the request's values (or their defaults). */
export function scopeFor(model: DatasetModel, values: ParameterValues | undefined): QueryScope {
  const params = resolveParameters(model.parameters, values ?? {});
  const types = new Map<string, PrimitiveType>(model.parameters.map((p) => [p.name, parameterType(p)]));
  return new QueryScope(model, params, types);
}

function checkPage(page: number, pageSize: number): void {
  if (!Number.isSafeInteger(page) || page < 1) throw invalid({ page: 'must be greater than or equal to 1' });
  if (!Number.isSafeInteger(pageSize) || pageSize < 1)
    throw invalid({ pageSize: 'must be greater than or equal to 1' });
  if (pageSize > MAX_PAGE_SIZE) throw invalid({ pageSize: `must be less than or equal to ${MAX_PAGE_SIZE}` });
  if (!Number.isSafeInteger((page - 1) * pageSize)) throw invalid({ page: 'слишком большой номер страницы' });
}
