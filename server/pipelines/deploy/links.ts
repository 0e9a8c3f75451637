import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { MAP, type StagePair } from './map';

/*
 * The copy identity of the stage pair after a deploy, one upsert: each original's link names its copy and the
 * original's edit time as deployed (compare: changed when edited after it). A data source's original is marked
 * changed at once after its first deploy (the specification's comparison table): its link records the epoch.
 */
export async function saveLinks(tx: Tx, pair: StagePair): Promise<void> {
  await tx.execute(sql`
    insert into pipeline_object_links (pipeline_id, from_order, object_type, original_id, copy_id,
      original_updated_at, deployed_at)
    select ${pair.pipelineId}, ${pair.fromOrder}, m.kind, m.old_id, m.new_id,
      case when m.kind = 'data_source' and m.created then to_timestamp(0)
        else coalesce(s.updated_at, d.updated_at, w.updated_at, b.updated_at) end,
      now()
    from ${MAP} m
    left join data_sources s on m.kind = 'data_source' and s.id = m.old_id
    left join datasets d on m.kind = 'dataset' and d.id = m.old_id
    left join widgets w on m.kind = 'widget' and w.id = m.old_id
    left join dashboards b on m.kind = 'dashboard' and b.id = m.old_id
    where m.kind in ('data_source', 'dataset', 'widget', 'dashboard')
    on conflict (pipeline_id, from_order, object_type, original_id) do update set copy_id = excluded.copy_id,
      original_updated_at = excluded.original_updated_at, deployed_at = excluded.deployed_at`);
}
