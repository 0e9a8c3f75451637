import type pg from 'pg';
import type { AppDeps } from '../../../server/app/deps';
import type { Rest } from '../../support/rest';
import { ok } from '../../support/rest';
import { createRoleCast, type RoleCast } from '../../support/factories';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type Sale,
  type WidgetView,
} from '../widgets/world';

/** One export test world: a role cast, a small sales table on the test PostgreSQL, a dataset and a table widget. */
export interface ExportWorld {
  cast: RoleCast;
  sales: Sale[];
  datasetId: number;
  widgetId: number;
  widget: (over?: Record<string, unknown>) => Promise<number>;
  /** The source database and its tables (to add rows, or lock the sales table so a read waits). */
  source: { db: pg.Client; sales: string };
  /** Adds `n` rows to the sales table at the source (ids after the existing ones), in one statement. */
  grow: (n: number) => Promise<void>;
  close: () => Promise<void>;
}

export async function exportWorld(deps: AppDeps, api: Rest, rows = 30): Promise<ExportWorld> {
  const cast = await createRoleCast(deps, api);
  const db: pg.Client = await sourceDb();
  const sales = makeSales(rows);
  const tables = await createSourceTables(db, sales);
  const source = await createPgSource(deps, cast.workspaceId, cast.users.wsAdmin.id);
  const { id: datasetId } = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
  });
  const widget = async (over: Record<string, unknown> = {}) => {
    const res = await api.post(
      '/api/widget',
      {
        name: 'Продажи по дням',
        type: 'table',
        dataset_id: datasetId,
        rows: [
          { id: 'id', sql: '[sales.id]' },
          { id: 'product', sql: '[sales.product]', alias: 'Товар' },
          { id: 'sold_on', sql: '[sales.sold_on]', alias: 'Дата продажи' },
        ],
        columns: [{ id: 'amount', sql: 'SUM([sales.amount])', alias: 'Сумма' }],
        sorts: [{ field_id: 'id', direction: 'asc' }],
        ...over,
      },
      cast.tokens.editor,
    );
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return ok<WidgetView>(res).id;
  };
  const widgetId = await widget();
  let total = sales.length;
  return {
    cast,
    sales,
    datasetId,
    widgetId,
    widget,
    source: { db, sales: tables.sales },
    grow: async (n) => {
      const from = total + 1;
      total += n;
      await db.query(
        `INSERT INTO ${tables.sales} (id, region_id, product, amount, qty, sold_on)
         SELECT i, 1 + i % 3, 'товар ' || i, (i % 1000) * 1.25, 1 + i % 5, DATE '2024-01-01' + i % 365
         FROM generate_series($1::int, $2::int) AS i`,
        [from, total],
      );
    },
    close: async () => {
      await dropSourceTables(db, tables);
      await db.end();
    },
  };
}
