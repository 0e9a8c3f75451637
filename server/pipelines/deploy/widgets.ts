import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { MAP, type StagePair } from './map';

/*
 * Widgets of a deploy, one upsert: each copy on its dataset's copy (a widget always brings its dataset). The shelves
 * name dataset fields by object and field name, not by id, so the configuration travels as it is.
 */
export async function deployWidgets(tx: Tx, pair: StagePair, authorId: number): Promise<void> {
  await tx.execute(sql`
    insert into widgets (id, name, type, dataset_id, workspace_id, author_id, config)
    select m.new_id, o.name, o.type, coalesce(dm.new_id, o.dataset_id), ${pair.targetWorkspaceId}, ${authorId}, o.config
    from ${MAP} m join widgets o on o.id = m.old_id
    left join ${MAP} dm on dm.kind = 'dataset' and dm.old_id = o.dataset_id
    where m.kind = 'widget'
    on conflict (id) do update set name = excluded.name, type = excluded.type, dataset_id = excluded.dataset_id,
      config = excluded.config, updated_at = now()`);
}
