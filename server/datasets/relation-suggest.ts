import type { SourceSettings } from '../../adapters/sources';
import type { Actor } from '../auth/actor';
import { connectorForSource, type DataSourceRow } from '../data-sources/connection';
import { sourcesByIds } from '../data-sources/views';
import type { AppDeps } from '../app/deps';
import { invalid, type FieldErrors } from '../kernel/errors';
import { formatFieldPath } from '../kernel/validation';
import { ownedObject } from '../access/object-access';
import { modelOfRow } from './load-model';
import { MSG } from './messages';

/*
 * Join proposals between dataset objects by naming conventions, as BI tools offer them when a second table is
 * dragged in: `orders.customer_id` -> `customers.id` (a key named after the other table), or a key column both
 * objects share (`payments.order_id` = `refunds.order_id`). Pure matching below; the columns come from the request,
 * from the dataset's physical fields, or from the source's metadata.
 */

export interface SuggestObject {
  id: number;
  name: string;
  table: string | null;
  columns: string[];
}

export interface SuggestedJoin {
  leftObjectId: number;
  rightObjectId: number;
  conditions: { leftColumn: string; rightColumn: string }[];
  reason: 'key_name' | 'shared_key';
}

/** customers -> customer, categories -> category, boxes -> box; dim_/fact_/tbl_ prefixes dropped. */
export function singular(word: string): string {
  const w = word.toLowerCase().replace(/^(dim|fact|tbl|t)_/, '');
  if (/ies$/.test(w)) return `${w.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(w)) return w;
  if (/(s|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (/s$/.test(w)) return w.slice(0, -1);
  return w;
}

const stems = (o: SuggestObject) => {
  const out = new Set<string>();
  for (const n of [o.name, o.table]) {
    if (!n) continue;
    const base = n.toLowerCase().split('.').pop()!;
    out.add(base);
    out.add(singular(base));
  }
  return out;
};

const isKeyLike = (column: string) => {
  const c = column.toLowerCase();
  return c !== 'id' && /(_id|id|_code|_key|_uuid|_guid)$/.test(c);
};

export function suggestJoins(objects: SuggestObject[]): SuggestedJoin[] {
  const out: SuggestedJoin[] = [];
  const related = new Set<string>();
  const pairKey = (a: number, b: number) => (a < b ? `${a}:${b}` : `${b}:${a}`);
  for (const left of objects) {
    for (const right of objects) {
      if (left.id === right.id) continue;
      const rightId = right.columns.find((c) => c.toLowerCase() === 'id');
      if (!rightId) continue;
      const names = stems(right);
      const key = left.columns.find((c) => {
        const l = c.toLowerCase();
        return [...names].some((s) => l === `${s}_id` || l === `${s}id`);
      });
      if (!key) continue;
      out.push({
        leftObjectId: left.id,
        rightObjectId: right.id,
        conditions: [{ leftColumn: key, rightColumn: rightId }],
        reason: 'key_name',
      });
      related.add(pairKey(left.id, right.id));
    }
  }
  objects.forEach((left, i) => {
    for (const right of objects.slice(i + 1)) {
      if (related.has(pairKey(left.id, right.id))) continue;
      const rightByLower = new Map(right.columns.map((c) => [c.toLowerCase(), c]));
      const shared = left.columns.filter((c) => isKeyLike(c) && rightByLower.has(c.toLowerCase()));
      if (shared.length === 0) continue;
      out.push({
        leftObjectId: left.id,
        rightObjectId: right.id,
        conditions: shared.map((c) => ({ leftColumn: c, rightColumn: rightByLower.get(c.toLowerCase())! })),
        reason: 'shared_key',
      });
    }
  });
  return out;
}

export interface SuggestInput {
  objects?: {
    id: number;
    data_source_id?: number;
    name?: string;
    schema?: string | null;
    table?: string | null;
    columns?: string[];
  }[];
  fields?: { id: number; object_id: number; column: string }[];
}

function defaultSchema(row: DataSourceRow): string {
  if (row.type === 'postgresql') return 'public';
  if (row.type === 'file') return 'main';
  return (row.settings as SourceSettings).db ?? '';
}

/** POST /api/dataset/{id}/relations/suggest */
export async function suggestRelations(deps: AppDeps, actor: Actor, id: number, input: SuggestInput) {
  const db = deps.db;
  const { row } = await ownedObject(db, actor, 'dataset', id);
  const model = await modelOfRow(db, row);
  const savedObjects = new Map(model.objects.map((o) => [o.id, o]));
  const requested: NonNullable<SuggestInput['objects']> = input.objects ?? model.objects.map((o) => ({ id: o.id }));

  const errors: FieldErrors = {};
  requested.forEach((o, i) => {
    if (o.id > 0 && !savedObjects.has(o.id)) errors[formatFieldPath(['objects', i, 'id'])] = MSG.objectNotFound(o.id);
    else if (o.id < 0 && !o.columns && (!o.table || o.data_source_id === undefined)) {
      errors[formatFieldPath(['objects', i, o.table ? 'data_source_id' : 'table'])] = o.table
        ? 'must not be null'
        : 'must not be blank';
    } else if (o.data_source_id !== undefined && !model.dataSourceIds.includes(o.data_source_id)) {
      errors[formatFieldPath(['objects', i, 'data_source_id'])] = MSG.sourceNotInDataset(o.data_source_id);
    }
  });
  if (Object.keys(errors).length) throw invalid(errors);

  // (object id, lower-case column) -> field id: saved physical fields first, then the request's new ones.
  const fieldOf = new Map<string, number>();
  const columnsOf = new Map<number, string[]>();
  const fieldKey = (objectId: number, column: string) => `${objectId}\u0000${column.toLowerCase()}`;
  const known = [
    ...model.fields.flatMap((f) =>
      f.kind === 'physical' && f.objectId !== null && f.column
        ? [{ id: f.id, objectId: f.objectId, column: f.column }]
        : [],
    ),
    ...(input.fields ?? []).map((f) => ({ id: f.id, objectId: f.object_id, column: f.column })),
  ];
  for (const f of known) {
    fieldOf.set(fieldKey(f.objectId, f.column), f.id);
    columnsOf.set(f.objectId, [...(columnsOf.get(f.objectId) ?? []), f.column]);
  }

  const objects: SuggestObject[] = [];
  for (const o of requested) {
    const saved = savedObjects.get(o.id);
    const sourceId = o.data_source_id ?? saved?.dataSourceId;
    const table = o.table ?? saved?.table ?? null;
    const schema = o.schema ?? saved?.schema ?? null;
    let columns = o.columns ?? [];
    if (columns.length === 0) columns = columnsOf.get(o.id) ?? [];
    if (columns.length === 0 && table && sourceId !== undefined)
      columns = await sourceColumns(deps, sourceId, schema, table);
    objects.push({ id: o.id, name: o.name ?? saved?.name ?? table ?? '', table, columns });
  }

  const existing = new Set(
    model.relations.map((r) => [r.leftObjectId, r.rightObjectId].sort((a, b) => a - b).join(':')),
  );
  const relations = suggestJoins(objects)
    .filter((j) => !existing.has([j.leftObjectId, j.rightObjectId].sort((a, b) => a - b).join(':')))
    .map((j) => ({
      left_object_id: j.leftObjectId,
      right_object_id: j.rightObjectId,
      join_type: 'left' as const,
      conditions: j.conditions.map((c) => ({
        left_field_id: fieldOf.get(fieldKey(j.leftObjectId, c.leftColumn)) ?? null,
        right_field_id: fieldOf.get(fieldKey(j.rightObjectId, c.rightColumn)) ?? null,
        left_column: c.leftColumn,
        right_column: c.rightColumn,
      })),
      reason: j.reason,
    }));
  return { relations };
}

/** Columns of a table read from its source; a source that cannot answer just gives no proposal for that object. */
async function sourceColumns(deps: AppDeps, sourceId: number, schema: string | null, table: string): Promise<string[]> {
  const [row] = await sourcesByIds(deps.db, [sourceId]);
  if (!row) return [];
  try {
    const columns = await connectorForSource(deps, row).listColumns(schema ?? defaultSchema(row), table);
    return columns.map((c) => c.name);
  } catch {
    return [];
  }
}
