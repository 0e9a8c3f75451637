import pg from 'pg';
import { dataSources } from '../../../db/schema/data-sources';
import type { AppDeps } from '../../../server/app/deps';
import type { z } from 'zod';
import type { listWidgetsOutput, widgetDataOutput, widgetView } from '../../../routers/widgets/schemas';
import { ok, type Rest } from '../../support/rest';
import { createRoleCast, uniq } from '../../support/factories';
import type { DatasetDetails } from '../datasets/helpers';

// Answers of the widget operations, as the router's zod outputs describe them.
export type WidgetView = z.output<typeof widgetView>;
export type WidgetPage = z.output<typeof listWidgetsOutput>;
export type WidgetData = z.output<typeof widgetDataOutput>;
export type FlatData = Extract<WidgetData, { kind: 'flat' }>;
export type KpiData = Extract<WidgetData, { kind: 'kpi' }>;

/*
 * A small world for widget tests: a table of known rows in the real PostgreSQL at 127.0.0.1:5432 (database test),
 * a saved data source pointing at it, and a dataset over it built through the REST API.
 */

const SOURCE_SETTINGS = { host: '127.0.0.1', port: 5432, username: 'postgres', db: 'test' };

export async function sourceDb(): Promise<pg.Client> {
  const c = new pg.Client({
    host: SOURCE_SETTINGS.host,
    port: SOURCE_SETTINGS.port,
    user: SOURCE_SETTINGS.username,
    database: SOURCE_SETTINGS.db,
  });
  await c.connect();
  return c;
}

/** A PostgreSQL data source saved straight into the metadata store (trust authentication: no secrets). */
export async function createPgSource(
  deps: AppDeps,
  workspaceId: number,
  authorId: number | null = null,
): Promise<number> {
  const [row] = await deps.db
    .insert(dataSources)
    .values({ name: uniq('src'), type: 'postgresql', workspaceId, authorId, settings: SOURCE_SETTINGS })
    .returning({ id: dataSources.id });
  return row.id;
}

export interface Sale {
  id: number;
  region_id: number;
  product: string;
  amount: number | null;
  qty: number;
  sold_on: string;
}

export const REGIONS: [number, string][] = [
  [1, 'Север'],
  [2, 'Юг'],
  [3, 'Восток'],
];

export function makeSales(n: number): Sale[] {
  const products = ['чай', 'кофе', 'какао', 'сок', "it's"];
  return Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    region_id: (i % 3) + 1,
    product: products[(i * 7) % products.length],
    amount: i % 11 === 0 ? null : Math.round(((i * 37) % 1000) * 1.25) / 100,
    qty: (i % 5) + 1,
    sold_on: `2024-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`,
  }));
}

/** Creates `<prefix>_sales` and `<prefix>_regions` with the rows; returns their names. */
export async function createSourceTables(c: pg.Client, sales: Sale[]): Promise<{ sales: string; regions: string }> {
  const names = { sales: uniq('w_sales'), regions: uniq('w_regions') };
  await c.query(
    `CREATE TABLE ${names.sales} (id int, region_id int, product text, amount numeric(10,2), qty int, sold_on date)`,
  );
  await c.query(`CREATE TABLE ${names.regions} (id int, name text)`);
  for (const s of sales) {
    await c.query(`INSERT INTO ${names.sales} VALUES ($1, $2, $3, $4, $5, $6)`, [
      s.id,
      s.region_id,
      s.product,
      s.amount,
      s.qty,
      s.sold_on,
    ]);
  }
  for (const [id, name] of REGIONS) await c.query(`INSERT INTO ${names.regions} VALUES ($1, $2)`, [id, name]);
  return names;
}

export async function dropSourceTables(c: pg.Client, names: { sales: string; regions: string }): Promise<void> {
  await c.query(`DROP TABLE IF EXISTS ${names.sales}`);
  await c.query(`DROP TABLE IF EXISTS ${names.regions}`);
}

export async function tableExists(c: pg.Client, name: string): Promise<boolean> {
  const r = await c.query('SELECT to_regclass($1) IS NOT NULL AS ok', [`public.${name}`]);
  return r.rows[0].ok as boolean;
}

/** A dataset over the two tables (sales LEFT JOIN regions), saved through the REST API. */
export async function createSalesDataset(
  api: Rest,
  token: string,
  opts: {
    workspaceId: number;
    sourceId: number;
    tables: { sales: string; regions: string };
    parameters?: unknown[];
    filters?: unknown[];
    extraFields?: unknown[];
  },
) {
  const created = await api.post(
    '/api/dataset',
    { name: uniq('ds'), workspace_id: opts.workspaceId, live: true, data_source_ids: [opts.sourceId] },
    token,
  );
  if (created.status !== 200) throw new Error(`dataset create: ${created.status} ${JSON.stringify(created.body)}`);
  const id = ok<DatasetDetails>(created).id;
  const f = (fid: number, object_id: number, name: string, primitive_type: string, extra = {}) => ({
    id: fid,
    object_id,
    name,
    column: name,
    primitive_type,
    ...extra,
  });
  const schema = {
    objects: [
      { id: -1, data_source_id: opts.sourceId, name: 'sales', schema: 'public', table: opts.tables.sales },
      { id: -2, data_source_id: opts.sourceId, name: 'regions', schema: 'public', table: opts.tables.regions },
    ],
    fields: [
      f(-11, -1, 'id', 'integer'),
      f(-12, -1, 'region_id', 'integer'),
      f(-13, -1, 'product', 'string'),
      f(-14, -1, 'amount', 'float'),
      f(-15, -1, 'qty', 'integer'),
      f(-16, -1, 'sold_on', 'date'),
      f(-21, -2, 'id', 'integer'),
      f(-22, -2, 'name', 'string'),
      { id: -31, name: 'Выручка', formula: 'SUM([sales.amount])' },
      ...(opts.extraFields ?? []),
    ],
    relations: [
      {
        id: -41,
        left_object_id: -1,
        right_object_id: -2,
        join_type: 'left',
        conditions: [{ left_field_id: -12, right_field_id: -21 }],
      },
    ],
    hierarchies: [],
    filters: opts.filters ?? [],
    parameters: opts.parameters ?? [],
  };
  const saved = await api.put(`/api/dataset/${id}/schema`, schema, token);
  if (saved.status !== 200) throw new Error(`dataset schema: ${saved.status} ${JSON.stringify(saved.body)}`);
  const details = ok<DatasetDetails>(await api.get(`/api/dataset/${id}`, token));
  const fieldId = (name: string) => details.fields.find((x) => x.name === name)!.id;
  return { id, fieldId, details };
}

/**
 * The usual world of a test about widget reads under row and column rules: a role cast, the sales tables of `sales` at
 * the source, a source row of the cast's workspace and the sales dataset over it, saved by the workspace's
 * Администратор. dispose() drops the tables.
 */
export async function createSalesWorld(deps: AppDeps, api: Rest, sales: Sale[]) {
  const cast = await createRoleCast(deps, api);
  const db = await sourceDb();
  const tables = await createSourceTables(db, sales);
  const source = await createPgSource(deps, cast.workspaceId, cast.users.wsAdmin.id);
  const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
  });
  return {
    cast,
    datasetId: ds.id,
    fieldId: ds.fieldId,
    async dispose() {
      await dropSourceTables(db, tables);
      await db.end();
    },
  };
}
