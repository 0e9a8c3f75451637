import { sql, type SQL } from 'drizzle-orm';
import type { StagePair } from './map';

/*
 * The substitution rules of the receiving stage (spec rule 7), as the data sources' copy takes them: the copy of a
 * source whose uuid has a rule gets the rule's settings and sealed secrets; without one it keeps the source stage's
 * connection, which the deploy reports as a warning. A file source carries its file instead (copySources).
 */
export const substitutionRules = (pair: StagePair): SQL => sql`
  select source_uuid, type, settings, secrets from pipeline_source_rules
  where pipeline_id = ${pair.pipelineId} and stage_order = ${pair.fromOrder + 1}`;
