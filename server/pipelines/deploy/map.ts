import { getTableName, sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { mapObjects } from '../../objects/copy-map';
import { OBJECT_KINDS } from '../../objects/kinds';

/*
 * The originals of a deploy mapped to their copies in the receiving stage, in the run's copy map
 * (server/objects/copy-map.ts): an original whose link (pipeline_object_links of the stage pair) names a copy still in
 * the target workspace keeps that copy (a repeated deploy updates it); any other gets a new one (its stale link, if
 * any, is replaced at the end).
 */

export const DEPLOY_KINDS = ['data_source', 'dataset', 'widget', 'dashboard'] as const;
export type DeployKind = (typeof DEPLOY_KINDS)[number];

/** The object tables by kind, as the kinds' table names them (compare reads them: server/pipelines/compare.ts). */
export const KIND_TABLE = Object.fromEntries(
  DEPLOY_KINDS.map((kind) => [kind, getTableName(OBJECT_KINDS[kind].table)]),
) as Record<DeployKind, string>;

export interface StagePair {
  pipelineId: number;
  fromOrder: number;
  sourceWorkspaceId: number;
  targetWorkspaceId: number;
}

/** One statement per kind that has objects. */
export async function mapSelection(tx: Tx, pair: StagePair, selection: Record<DeployKind, number[]>): Promise<void> {
  for (const kind of DEPLOY_KINDS) {
    const copies = sql`select original_id, copy_id from pipeline_object_links
      where pipeline_id = ${pair.pipelineId} and from_order = ${pair.fromOrder} and object_type = ${kind}`;
    await mapObjects(tx, kind, selection[kind], { keep: { copies, workspaceId: pair.targetWorkspaceId } });
  }
}
