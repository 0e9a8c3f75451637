import { workspaceBoundToStage, workspaceStageBinding } from '../pipelines/binding';
import type { AppDeps } from './deps';
import { extractJobKinds, startExtractJobs } from '../extracts/run-job';
import { startScheduledExtract } from '../extracts/runs';
import { exportJobKinds, startExportJobs } from '../exports/run-job';
import { mailingJobKinds, startMailingJobs } from '../mailings/run-job';
import { startScheduledMailing } from '../mailings/mailings';

/** Hooks before registration: no workspace deletion guard, no stage lookup. */
export function emptyHooks(): AppDeps['hooks'] {
  return { workspaceDeletionGuards: [], workspaceStageLookup: null };
}

/**
 * What areas plug into other areas, registered explicitly when the app builds its deps (never at module load): the
 * one place to read which workspace deletion guards run and who answers a workspace's pipeline stage.
 */
export function registerHooks(deps: Pick<AppDeps, 'hooks'>): void {
  // Pipelines: a workspace bound to a stage cannot be deleted (DELETE /api/workspaces/{id}, reason omitted), and
  // GET /api/workspaces/{id} shows the stage it is bound to (pipeline_stage).
  deps.hooks.workspaceDeletionGuards.push(workspaceBoundToStage);
  deps.hooks.workspaceStageLookup = workspaceStageBinding;
}

/** The job kinds of every area (server/jobs), registered once per app; exports and mailings add theirs here. */
export function registerJobKinds(deps: AppDeps): void {
  for (const kind of extractJobKinds(deps, startScheduledExtract)) deps.jobs.register(kind);
  deps.jobs.onStart(() => startExtractJobs(deps));
  for (const kind of exportJobKinds(deps)) deps.jobs.register(kind);
  deps.jobs.onStart(() => startExportJobs(deps));
  for (const kind of mailingJobKinds(deps, startScheduledMailing)) deps.jobs.register(kind);
  deps.jobs.onStart(() => startMailingJobs(deps));
}
