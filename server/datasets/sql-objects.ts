import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasetObjects } from '../../db/schema/datasets';
import { workspaceRoleOf } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import { sourcesByIds } from '../data-sources/views';
import { ownsObject } from '../access/object-access';
import type { FieldErrors } from '../kernel/errors';
import { formatFieldPath } from '../kernel/validation';
import { MSG } from './messages';
import { normalizeObjectSql } from './schema-validation';
import type { SchemaInput } from './schema-types';

/*
 * Who may put SQL into a dataset. An object of kind `sql` runs its text on the source, with the source's
 * credentials, for everyone who reads a widget of the dataset; so only an owner of that source (ownsObject: its
 * author while they hold an editing role, or Администратор of its workspace — whoever may use its SQL console) may
 * add one, change its text, move it to another source or turn a table object into one. Any other owner of the
 * dataset may save a schema that keeps a saved sql object as it is (same id, text and source). A refusal is a 422 on
 * `objects[i].sql`, reported with the schema's other problems (and by /schema/validate too). A copy of a dataset
 * keeps its objects' texts and sources, so it runs nothing new and is not checked here.
 */
export async function sqlObjectErrors(
  db: DbOrTx,
  actor: Actor,
  datasetId: number,
  input: SchemaInput,
): Promise<FieldErrors> {
  if (!input.objects.some((o) => o.kind === 'sql')) return {};
  const saved = new Map(
    (
      await db
        .select({
          id: datasetObjects.id,
          kind: datasetObjects.kind,
          dataSourceId: datasetObjects.dataSourceId,
          sql: datasetObjects.sql,
        })
        .from(datasetObjects)
        .where(eq(datasetObjects.datasetId, datasetId))
    ).map((o) => [o.id, o]),
  );
  const needed: { index: number; sourceId: number }[] = [];
  input.objects.forEach((o, index) => {
    if ((o.kind ?? 'table') !== 'sql' || typeof o.sql !== 'string') return;
    const sql = normalizeObjectSql(o.sql);
    if (sql === null) return; // not a valid query: reported as such
    const before = o.id > 0 ? saved.get(o.id) : undefined;
    if (before && before.kind === 'sql' && before.sql === sql && before.dataSourceId === o.data_source_id) return;
    needed.push({ index, sourceId: o.data_source_id });
  });
  if (needed.length === 0) return {};

  const ids = [...new Set(needed.map((n) => n.sourceId))];
  const rows = await sourcesByIds(db, ids);
  const owned = new Set<number>();
  for (const row of rows) {
    if (ownsObject(actor, row, await workspaceRoleOf(db, actor, row.workspaceId))) owned.add(row.id);
  }
  const errors: FieldErrors = {};
  for (const n of needed) {
    if (!owned.has(n.sourceId)) errors[formatFieldPath(['objects', n.index, 'sql'])] = MSG.sqlObjectOwner;
  }
  return errors;
}
