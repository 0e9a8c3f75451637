import { dataSources } from '../../../db/schema/data-sources';
import type { AppDeps } from '../../../server/app/deps';
import type { z } from 'zod';
import type { datasetDetails, listDatasetsOutput, schemaInput } from '../../../routers/datasets/schemas';
import { ok, type Rest } from '../../support/rest';
import { uniq } from '../../support/factories';

/** GET /api/dataset/{id}, and the answer of a create or schema save. */
export type DatasetDetails = z.output<typeof datasetDetails>;
/** A page of GET /api/dataset. */
export type DatasetPage = z.output<typeof listDatasetsOutput>;

/** The body of PUT /api/dataset/{id}/schema (and /schema/validate) without the path id, as the router takes it. */
export type SchemaBody = Omit<z.input<typeof schemaInput>, 'id'>;

/** A source row written directly (the data-source area's own create call is not needed to build datasets). */
export async function insertSource(
  deps: AppDeps,
  workspaceId: number,
  opts: { name?: string; type?: string; settings?: Record<string, unknown>; authorId?: number } = {},
): Promise<number> {
  const [row] = await deps.db
    .insert(dataSources)
    .values({
      name: opts.name ?? uniq('source'),
      type: opts.type ?? 'postgresql',
      workspaceId,
      authorId: opts.authorId ?? null,
      settings: opts.settings ?? { host: '127.0.0.1', port: 5432, db: 'shop', username: 'reader' },
    })
    .returning({ id: dataSources.id });
  return row.id;
}

/** Creates a dataset through the API and returns its record (fails the test on anything but 200). */
export async function createDataset(
  api: Rest,
  token: string,
  body: { name?: string; workspace_id?: number; live?: boolean; data_source_ids?: number[]; description?: string },
) {
  const res = await api.post('/api/dataset', { name: uniq('Продажи'), live: true, ...body }, token);
  if (res.status !== 200) throw new Error(`dataset create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return ok<DatasetDetails>(res);
}

export const emptySchema = { objects: [], fields: [], relations: [], hierarchies: [], filters: [], parameters: [] };

/**
 * A shop schema with temporary ids only: orders and customers of one source, physical fields, a calculated measure,
 * a derived year, a relation between the two new objects, a hierarchy, a filter and a parameter.
 */
export function shopSchema(sourceId: number): SchemaBody {
  return {
    objects: [
      { id: -1, data_source_id: sourceId, name: 'orders', schema: 'public', table: 'orders' },
      { id: -2, data_source_id: sourceId, name: 'customers', schema: 'public', table: 'customers' },
    ],
    fields: [
      { id: -10, object_id: -1, column: 'id', primitive_type: 'integer' },
      { id: -11, object_id: -1, column: 'customer_id', primitive_type: 'integer' },
      { id: -12, object_id: -1, column: 'amount', title: 'Сумма', primitive_type: 'float', aggregation: 'sum' },
      { id: -13, object_id: -1, column: 'created_at', primitive_type: 'datetime' },
      { id: -20, object_id: -2, column: 'id', primitive_type: 'integer' },
      { id: -21, object_id: -2, column: 'city', title: 'Город', primitive_type: 'string' },
      { id: -30, name: 'Выручка', formula: 'SUM([orders.amount])' },
      { id: -31, name: 'Год', derivation: { field_id: -13, function: 'YEAR' } },
      { id: -32, name: 'Средний чек', formula: '[Выручка] / COUNTD([orders.id])' },
    ],
    relations: [
      {
        id: -1,
        left_object_id: -1,
        right_object_id: -2,
        join_type: 'left',
        conditions: [{ left_field_id: -11, right_field_id: -20 }],
      },
    ],
    hierarchies: [{ id: -1, name: 'География', field_ids: [-21, -31] }],
    filters: [{ id: -1, field_id: -21, op: 'in', values: ['Москва', 'Казань'], value_type: 'string' }],
    parameters: [
      {
        id: -1,
        name: 'Порог',
        primitive_type: 'number',
        default_value: '10',
        domain: { kind: 'range', min: '0', max: '100', step: '5' },
        order: 0,
      },
    ],
  };
}

/** The element of a schema block (saved or about to be sent) with that name. */
export const byName = <A extends readonly { name?: string | null }[]>(items: A, name: string): A[number] => {
  const found = items.find((i) => i.name === name);
  if (!found) throw new Error(`no element named ${name}`);
  return found;
};
