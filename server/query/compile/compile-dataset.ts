import type { DatasetField, DatasetModel } from './dataset-model';
import { invalid, type FieldErrors } from '../../kernel/errors';
import { assembleQuery } from './assemble';
import { datasetCondition, widgetCondition, type Condition } from './conditions';
import { at } from './errors';
import { compileFilter, isAggregate, type Dialect } from '../expr';
import { scopeFor } from './compile-widget';
import type { SelectItem } from './shelves';
import type { CompiledQuery, FilterSpec, ParameterValues } from './types';

/*
 * Queries over the dataset itself rather than a widget: the distinct values of one field (for filter pickers) and
 * a preview of rows. Fields are named by id and calculated ones use the dataset's own formulas (there is no widget
 * request to carry definitions). The dataset's filters apply as always.
 */

export const MAX_FIELD_VALUES = 1000;
export const MAX_PREVIEW_ROWS = 1000;

function fieldItem(scope: ReturnType<typeof scopeFor>, f: DatasetField, path: string): SelectItem {
  const ast = at(path, () => {
    const e = scope.datasetFieldAst(f);
    scope.typeOf(e);
    return e;
  });
  return { key: String(f.id), path, ast, aggregate: at(path, () => isAggregate(ast)) };
}

function fieldsById(model: DatasetModel, ids: number[], pathOf: (i: number) => string): DatasetField[] {
  const errors: FieldErrors = {};
  const out: DatasetField[] = [];
  ids.forEach((id, i) => {
    const f = model.fields.find((x) => x.id === id);
    if (!f) errors[pathOf(i)] = `Поле датасета не найдено (id ${id})`;
    else out.push(f);
  });
  if (Object.keys(errors).length) throw invalid(errors);
  return out;
}

export interface FieldValuesRequest {
  fieldId: number;
  /** Case-insensitive "contains" over the value's text. */
  query?: string;
  limit: number;
  parameters?: ParameterValues;
}

/** SELECT DISTINCT-like: the field grouped, ordered ascending, optionally searched; one row more than the limit. */
export function compileFieldValuesQuery(
  model: DatasetModel,
  req: FieldValuesRequest,
  dialectOf: (id: number) => Dialect,
): CompiledQuery {
  if (req.limit < 1 || req.limit > MAX_FIELD_VALUES)
    throw invalid({ limit: `must be between 1 and ${MAX_FIELD_VALUES}` });
  const scope = scopeFor(model, req.parameters).defineFromDataset();
  const [field] = fieldsById(model, [req.fieldId], () => 'fieldId');
  const item = fieldItem(scope, field, 'fieldId');
  if (item.aggregate) throw invalid({ fieldId: 'Значения агрегированного поля не перечисляются' });
  const conditions: Condition[] = model.filters.map((f) => datasetCondition(f, scope));
  if (req.query) {
    // The search is an ordinary "contains" filter over LOWER(STR(field)), with the text lowered here.
    conditions.push(searchCondition(item, req.query.toLowerCase()));
  }
  return assembleQuery(
    {
      scope,
      items: [item],
      grouped: true,
      conditions,
      sorts: [{ field_id: item.key, direction: 'asc' }],
      limit: req.limit + 1,
    },
    dialectOf,
  );
}

const SEARCH_SUBJECT = '\u0000field values search';

function searchCondition(item: SelectItem, text: string): Condition {
  const subject = item.ast;
  const spec: FilterSpec = {
    sql: `LOWER(STR([${SEARCH_SUBJECT}]))`,
    op: 'contains',
    values: [text],
    value_type: 'string',
  };
  return {
    path: 'query',
    aggregate: false,
    compile: (ctx) => {
      const withSubject = {
        ...ctx,
        calculated: (name: string) => (name === SEARCH_SUBJECT ? subject : ctx.calculated(name)),
      };
      return at('query', () => compileFilter(spec, withSubject));
    },
  };
}

export interface PreviewRequest {
  fieldIds?: number[];
  filters?: FilterSpec[];
  parameters?: ParameterValues;
  limit: number;
}

/** Rows of the dataset: the given fields (all visible ones by default), no grouping unless a field aggregates. */
export function compilePreviewQuery(
  model: DatasetModel,
  req: PreviewRequest,
  dialectOf: (id: number) => Dialect,
): CompiledQuery {
  if (req.limit < 1 || req.limit > MAX_PREVIEW_ROWS)
    throw invalid({ limit: `must be between 1 and ${MAX_PREVIEW_ROWS}` });
  const scope = scopeFor(model, req.parameters).defineFromDataset();
  const fields = req.fieldIds?.length
    ? fieldsById(model, req.fieldIds, (i) => `fieldIds[${i}]`)
    : model.fields.filter((f) => !f.hidden);
  if (fields.length === 0) throw invalid({ fieldIds: 'в датасете нет полей для просмотра' });
  const items = fields.map((f, i) =>
    fieldItem(scope, f, req.fieldIds?.length ? `fieldIds[${i}]` : `fields[id=${f.id}]`),
  );
  const conditions: Condition[] = [
    ...model.filters.map((f) => datasetCondition(f, scope)),
    ...(req.filters ?? []).map((f, i) => widgetCondition(`filters[${i}]`, f, scope)),
  ];
  return assembleQuery(
    { scope, items, grouped: items.some((x) => x.aggregate), conditions, sorts: [], limit: req.limit + 1 },
    dialectOf,
  );
}
