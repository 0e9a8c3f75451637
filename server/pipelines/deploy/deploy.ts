import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import type { Actor } from '../../auth/actor';
import type { AppDeps } from '../../app/deps';
import { AppError, badRequest, invalid } from '../../kernel/errors';
import { readCachesChanged } from '../../kernel/read-epoch';
import { copySources, removeSourceFolder, sourceFileCopies } from '../../data-sources/store';
import { copyDatasets } from '../../datasets/store';
import { copyWidgets } from '../../widgets/store';
import { copyDashboards } from '../../dashboards/store';
import { endRunsOf, stopRunsAfter } from '../../etl/etl';
import { createCopyMap, mappedObjects, type CopyTarget } from '../../objects/copy-map';
import { pipelineForCaller, requireStageAdmin, requireStageRole, type PipelineContext } from '../access';
import { MSG, nothingDeployedBecause } from '../messages';
import { recordDeployment, type DeploymentObject } from '../history';
import { DEPLOY_KINDS, mapSelection, type StagePair } from './map';
import { WARN } from './messages';
import { selectObjects, type ObjectRef, type Selection } from './selection';
import { substitutionRules } from './sources';
import { saveLinks } from './links';
import { recordRevisions } from '../../revisions/store';

/*
 * POST /api/pipeline/{id}/deploy: the chosen objects of stage `from_stage` (all of them for `objects: []`) with their
 * dependencies, copied one step forward in ONE transaction, in the order sources, datasets, widgets, dashboards.
 * The originals are mapped to their copies in a copy map (server/objects/copy-map.ts, the engine of every copy) and
 * each kind is written by its owner's batched copy (copySources, copyDatasets, copyWidgets, copyDashboards) in a fixed
 * number of statements, so the statement count does not grow with the number of objects. Deploys of one pipeline run one after another (the pipeline and the receiving
 * stage are locked first). Anything failing after the access checks rolls everything back and answers 400
 * «Ничего не развёрнуто: <reason>»; the copied files of file sources are removed then too.
 */

export interface DeployInput {
  from_stage: number;
  objects: ObjectRef[];
}

/** The steps after which a test may inject a failure (never reachable over the API). */
export type DeployStep = 'sources' | 'datasets' | 'widgets' | 'dashboards' | 'links';

export interface DeployOptions {
  /** Test only: throw after this step, inside the transaction. */
  faultAfter?: DeployStep;
}

export interface DeployResult {
  deployment_id: number;
  pipeline_id: number;
  from_stage: number;
  to_stage: number;
  objects: DeploymentObject[];
  warnings: string[];
}

export async function deployToNextStage(
  deps: AppDeps,
  actor: Actor,
  pipelineId: number,
  input: DeployInput,
  opts: DeployOptions = {},
): Promise<DeployResult> {
  checkRequest(input);
  const from = input.from_stage;
  const files = sourceFileCopies(deps);
  let committed: Awaited<ReturnType<typeof copyObjects>>;
  try {
    committed = await deps.db.transaction(async (tx) => {
      const ctx = await pipelineForCaller(tx, actor, pipelineId, { lock: true });
      const source = ctx.stages[from];
      const target = ctx.stages[from + 1];
      if (source.workspaceId === null || target.workspaceId === null) throw badRequest(MSG.bothStagesBound);
      requireDeployRights(ctx, from);
      // Deploys into one stage never interleave: the second waits here until the first commits.
      await tx.execute(sql`select id from pipeline_stages where id = ${target.id} for update`);
      const pair: StagePair = {
        pipelineId,
        fromOrder: from,
        sourceWorkspaceId: source.workspaceId,
        targetWorkspaceId: target.workspaceId,
      };
      const selection = await selectObjects(tx, pair.sourceWorkspaceId, input.objects).catch((e: unknown) => {
        throw nothingDeployed(e);
      });
      // `objects: []` on an empty source stage: nothing to deploy, the UI's hint (the copy has not begun, so it is
      // answered as is, like «Обе стадии должны быть привязаны к пространствам», not as «Ничего не развёрнуто: ...»).
      if (Object.values(selection).every((ids) => ids.length === 0)) throw badRequest(MSG.selectObjects);
      try {
        return await copyObjects(tx, pair, actor, selection, files, opts);
      } catch (e) {
        throw nothingDeployed(e);
      }
    });
  } catch (e) {
    await files.discard();
    throw e;
  }
  readCachesChanged(deps);
  await Promise.all([
    ...committed.updatedSources.map((id) => deps.connectors.release(id).catch(() => undefined)),
    ...committed.replacedFolders.map((uuid) => removeSourceFolder(deps, uuid)),
    stopRunsAfter(deps, committed.endedRuns),
  ]);
  return committed.result;
}

/**
 * Deploy rights (spec, Authentication point 6: Администратор in the receiving stage and any role in the source stage).
 * Lacking either is the error table's "Deploy or compare without rights": 403 «Доступ запрещён» (a caller who sees no
 * stage of the pipeline got 404 already). The UI still shows a caller with a role in the source stage Развернуть
 * disabled with its hint «Нужны права администратора в целевом пространстве» (server/service/dictionary.ts); the
 * API answers the specification's status and message.
 */
function requireDeployRights(ctx: PipelineContext, from: number): void {
  requireStageRole(ctx, from);
  requireStageAdmin(ctx, from + 1);
}

/** Stage 0 or 1 and each object once: anything else is refused before the transaction. */
function checkRequest(input: DeployInput): void {
  if (input.from_stage !== 0 && input.from_stage !== 1)
    throw badRequest(
      nothingDeployedBecause('развернуть можно только на соседнюю следующую стадию (from_stage 0 или 1)'),
    );
  const seen = new Set<string>();
  const errors: Record<string, string> = {};
  input.objects.forEach((o, i) => {
    const key = `${o.type}:${o.id}`;
    if (seen.has(key)) errors[`objects[${i}]`] = `Объект указан дважды: ${o.type} ${o.id}`;
    seen.add(key);
  });
  if (Object.keys(errors).length) throw invalid(errors);
}

async function copyObjects(
  tx: Tx,
  pair: StagePair,
  actor: Actor,
  selection: Selection,
  files: ReturnType<typeof sourceFileCopies>,
  opts: DeployOptions,
) {
  const fault = (step: DeployStep) => {
    if (opts.faultAfter === step) throw new Error(`injected fault after ${step}`);
  };
  await createCopyMap(tx);
  await mapSelection(tx, pair, selection);
  const mapped = await mappedObjects(tx, pair.targetWorkspaceId);
  // Every copy is a save of its own in the target stage, by the deploying user.
  const target: CopyTarget = { workspaceId: pair.targetWorkspaceId, authorId: actor.userId };
  const sources = await copySources(tx, target, { files, overrides: substitutionRules(pair) });
  fault('sources');
  const datasets = await copyDatasets(tx, target);
  const endedRuns = await endRunsOf(tx, { datasetIds: datasets.nowLive }, 'live');
  fault('datasets');
  await copyWidgets(tx, target);
  fault('widgets');
  await copyDashboards(tx, target);
  fault('dashboards');
  await saveLinks(tx, pair);
  fault('links');
  const warnings = [
    ...mapped.filter((o) => o.created && o.nameTaken).map((o) => WARN.sameName(o.kind, o.name)),
    ...sources.withoutOverride.map(WARN.noRule),
    ...datasets.materialised.map(WARN.materialised),
  ];
  const result: DeploymentObject[] = mapped.map((o) => ({
    type: o.kind,
    source_id: o.originalId,
    target_id: o.copyId,
    action: o.created ? 'created' : 'updated',
    name: o.name,
  }));
  const deployment = await recordDeployment(tx, pair, actor.userId, result, warnings);
  // Every copy written is a revision of its own in the receiving stage, tagged with the deployment (a rollback reads
  // the one before it): one batched call per kind.
  for (const kind of DEPLOY_KINDS) {
    const ids = mapped.filter((o) => o.kind === kind).map((o) => o.copyId);
    await recordRevisions(tx, kind, ids, 'deployed', actor.userId, { deploymentId: deployment.id });
  }
  return {
    result: {
      deployment_id: deployment.id,
      pipeline_id: pair.pipelineId,
      from_stage: pair.fromOrder,
      to_stage: pair.fromOrder + 1,
      objects: result,
      warnings,
    },
    updatedSources: mapped.filter((o) => o.kind === 'data_source' && !o.created).map((o) => o.copyId),
    replacedFolders: sources.replacedFolders,
    endedRuns,
  };
}

/** Any failure inside the copy: 400 «Ничего не развёрнуто: <reason>» (a platform failure keeps its cause for the log). */
function nothingDeployed(e: unknown): AppError {
  if (e instanceof AppError) return badRequest(nothingDeployedBecause(e.message));
  return new AppError('bad_request', nothingDeployedBecause('Внутренняя ошибка сервера'), { cause: e });
}
