import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import type { SourceFileCopies } from '../../data-sources/store';
import { MAP, type StagePair } from './map';

/*
 * Data sources of a deploy, batched: one upsert writes every copy (created under its drawn id, or the linked copy
 * updated in place). The connection is the original's unless the receiving stage has a substitution rule for the
 * original's uuid (spec rule 7: settings and sealed secrets of the rule; without one the copy keeps the source stage's
 * connection, which the caller reports as a warning). A file source takes its file along instead: the copy gets a
 * fresh folder (and, when updated, a fresh uuid, so its old folder can go after commit and nothing is lost if the
 * deploy fails).
 */

export interface SourceStepResult {
  /** Names of the copied non-file sources that had no rule. */
  withoutRule: string[];
  /** Folders of updated file copies that their rows no longer name: removed after commit. */
  replacedFolders: string[];
}

type FileSourceRow = {
  id: number;
  uuid: string;
  settings: Record<string, unknown>;
  copy_uuid: string | null;
};

export async function deploySources(
  tx: Tx,
  pair: StagePair,
  authorId: number,
  files: SourceFileCopies,
): Promise<SourceStepResult> {
  const fileRows = await tx.execute<FileSourceRow>(sql`
    select o.id, o.uuid, o.settings, c.uuid as copy_uuid
    from ${MAP} m join data_sources o on o.id = m.old_id
    left join data_sources c on c.id = m.new_id and not m.created
    where m.kind = 'data_source' and o.type = 'file'`);
  const fileCopies: { old_id: number; uuid: string; settings: Record<string, unknown> }[] = [];
  for (const f of fileRows.rows) {
    const uuid = randomUUID();
    fileCopies.push({ old_id: f.id, uuid, settings: await files.copy(f.uuid, uuid, f.settings) });
  }
  const receiving = pair.fromOrder + 1;
  const rules = sql`left join pipeline_source_rules r on r.pipeline_id = ${pair.pipelineId}
      and r.stage_order = ${receiving} and r.source_uuid = o.uuid and r.type = o.type`;
  await tx.execute(sql`
    insert into data_sources (id, uuid, name, type, workspace_id, author_id, settings, secrets)
    select m.new_id, coalesce(f.uuid, gen_random_uuid()), o.name, o.type, ${pair.targetWorkspaceId}, ${authorId},
      coalesce(f.settings, case when r.id is not null then r.settings else o.settings end),
      case when r.id is not null and f.old_id is null then r.secrets else o.secrets end
    from ${MAP} m join data_sources o on o.id = m.old_id
    ${rules}
    left join jsonb_to_recordset(${JSON.stringify(fileCopies)}::jsonb) f(old_id int, uuid uuid, settings jsonb)
      on f.old_id = o.id
    where m.kind = 'data_source'
    on conflict (id) do update set name = excluded.name, type = excluded.type, settings = excluded.settings,
      secrets = excluded.secrets, updated_at = now(),
      uuid = case when excluded.type = 'file' then excluded.uuid else data_sources.uuid end`);
  // Updated copies may point at another database now: what was read from the old one no longer holds.
  await tx.execute(sql`delete from data_source_metadata
    where data_source_id in (select new_id from ${MAP} where kind = 'data_source' and not created)`);
  const missing = await tx.execute<{ name: string }>(sql`
    select o.name from ${MAP} m join data_sources o on o.id = m.old_id ${rules}
    where m.kind = 'data_source' and o.type <> 'file' and r.id is null order by o.id`);
  return {
    withoutRule: missing.rows.map((r) => r.name),
    replacedFolders: fileRows.rows.flatMap((f) => (f.copy_uuid ? [f.copy_uuid] : [])),
  };
}
