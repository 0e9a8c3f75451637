import type { AppDeps } from './deps';

/** Hooks before registration: no workspace deletion guard, no stage lookup. */
export function emptyHooks(): AppDeps['hooks'] {
  return { workspaceDeletionGuards: [], workspaceStageLookup: null };
}

/**
 * What areas plug into other areas, registered explicitly when the app builds its deps (never at module load): the
 * one place to read which workspace deletion guards run and who answers a workspace's pipeline stage.
 */
export function registerHooks(deps: Pick<AppDeps, 'hooks'>): void {
  // Empty for now. The pipelines issue registers here its deletion guard (a workspace bound to a stage cannot be
  // deleted, DELETE /api/workspaces/{id}) and its stage lookup (pipeline_stage of GET /api/workspaces/{id}):
  //   deps.hooks.workspaceDeletionGuards.push(pipelineStageGuard);
  //   deps.hooks.workspaceStageLookup = pipelineStageOf;
  void deps;
}
