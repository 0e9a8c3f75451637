import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { dashboards } from '../../db/schema/dashboards';
import { dataSources } from '../../db/schema/data-sources';
import { datasets } from '../../db/schema/datasets';
import { widgets } from '../../db/schema/widgets';
import { notFound, type AppError } from '../kernel/errors';
import { datasetNotFound } from '../datasets/messages';
import { dashboardNotFound } from '../dashboards/messages';

/*
 * The kinds of workspace object: everything that lives in a workspace, has an author and is read, edited and listed
 * under the same policy (server/access/object-access.ts) and through the same std list (server/objects/list.ts).
 * A new kind is one more row of OBJECT_KINDS.
 */

/** The columns every object table has, under these property names (so that its rows can be read generically). */
interface ObjectColumns {
  id: PgColumn;
  workspaceId: PgColumn;
  authorId: PgColumn;
  name: PgColumn;
  createdAt: PgColumn;
  updatedAt: PgColumn;
}

/** What the policy reads from a row of any kind. */
export interface ObjectRowBase {
  id: number;
  workspaceId: number;
  authorId: number | null;
}

type ObjectTable = PgTable & { $inferSelect: ObjectRowBase };

export interface ObjectKind<T extends ObjectTable = ObjectTable> {
  table: T;
  columns: ObjectColumns;
  /** 404 for an object that does not exist or that the caller may not read (the two look the same). */
  notFound: (id: number) => AppError;
  /** The std list's sort fields every kind shares (the area adds its own, such as `type`, whose meaning differs). */
  sortColumns: Record<'id' | 'name' | 'created_at' | 'updated_at', PgColumn | SQL>;
}

function kind<T extends ObjectTable & ObjectColumns>(table: T, notFoundOf: (id: number) => AppError): ObjectKind<T> {
  const columns: ObjectColumns = {
    id: table.id,
    workspaceId: table.workspaceId,
    authorId: table.authorId,
    name: table.name,
    createdAt: table.createdAt,
    updatedAt: table.updatedAt,
  };
  return {
    table,
    columns,
    notFound: notFoundOf,
    // Names sort as a reader expects, case aside.
    sortColumns: {
      id: table.id,
      name: sql`lower(${table.name})`,
      created_at: table.createdAt,
      updated_at: table.updatedAt,
    },
  };
}

const sourceNotFound = (id: number) => notFound(`Источник данных не найден (id ${id})`);
export const widgetNotFound = (id: number) => notFound(`Виджет не найден (id ${id})`);

export const OBJECT_KINDS = {
  data_source: kind(dataSources, sourceNotFound),
  dataset: kind(datasets, datasetNotFound),
  widget: kind(widgets, widgetNotFound),
  dashboard: kind(dashboards, dashboardNotFound),
};

export type ObjectKindName = keyof typeof OBJECT_KINDS;
export type ObjectRow<K extends ObjectKindName> = (typeof OBJECT_KINDS)[K]['table']['$inferSelect'];
