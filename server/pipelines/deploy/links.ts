import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { COPY_MAP } from '../../objects/copy-map';
import type { StagePair } from './map';

/*
 * The copy identity of the stage pair after a deploy, one upsert from the copy map: each original's link names its
 * copy and the original's edit time as deployed (compare: changed when edited after it). A data source's original is
 * marked changed at once after its first deploy (the specification's comparison table): its link records the epoch.
 */
export async function saveLinks(tx: Tx, pair: StagePair): Promise<void> {
  await tx.execute(sql`
    insert into pipeline_object_links (pipeline_id, from_order, object_type, original_id, copy_id,
      original_updated_at, deployed_at)
    select ${pair.pipelineId}, ${pair.fromOrder}, m.kind, m.old_id, m.new_id,
      case when m.kind = 'data_source' and m.created then to_timestamp(0) else m.edited_at end,
      now()
    from ${COPY_MAP} m
    where m.kind in ('data_source', 'dataset', 'widget', 'dashboard')
    on conflict (pipeline_id, from_order, object_type, original_id) do update set copy_id = excluded.copy_id,
      original_updated_at = excluded.original_updated_at, deployed_at = excluded.deployed_at`);
}
