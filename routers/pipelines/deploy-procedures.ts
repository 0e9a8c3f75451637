import { pipelineProcedure } from '../trpc';
import { compareStages } from '../../server/pipelines/compare';
import { deployToNextStage } from '../../server/pipelines/deploy/deploy';
import { listDeployments } from '../../server/pipelines/history';
import { rollbackDeployment } from '../../server/pipelines/deploy/rollback';
import {
  compareInput,
  compareOutput,
  deployInput,
  deployOutput,
  listDeploymentsInput,
  listDeploymentsOutput,
  rollbackInput,
  rollbackOutput,
} from './deploy-schemas';

const tags = ['Pipelines'];

/** Compare, deploy, the deployment history and rollback: spread into the pipeline router (routers/pipelines/router.ts). */
export const deployProcedures = {
  compare: pipelineProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/pipeline/{id}/compare',
        summary: 'Compare a stage with the next one',
        description:
          'Every object of stage `from` and of the next stage with its status by edit time (not content): new, changed (even after a save without real change; a data source at once after its first deploy), same, target_only. With `details=true` each changed object also carries `changes`: the changed paths (old and new values) from the revision its last deploy carried to its latest revision, null when no revision of either is kept (beyond the reference platform); without it the answer is as the reference platform gives it. Only adjacent stages, forward: `from` is 0 or 1, anything else 400 «Сравнить можно только с соседней стадией»; both stages must be bound (400 «Обе стадии должны быть привязаны к пространствам»). Access: any role in both stages (else 403 «Доступ запрещён»; 404 when the pipeline is not visible).',
        tags,
      },
    })
    .input(compareInput)
    .output(compareOutput)
    .query(({ ctx, input }) => compareStages(ctx.deps, ctx.actor, input.id, input.from, { details: input.details })),

  deploy: pipelineProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/pipeline/{id}/deploy',
        summary: 'Deploy objects one stage forward',
        description:
          "Copies the objects (`objects: []` = every object of the source stage) with their dependencies (dashboard -> widgets -> datasets -> sources) from stage `from_stage` to the next one, in ONE transaction, in the order sources, datasets, widgets, dashboards; a repeated deploy updates the copy. Sources take the receiving stage's substitution rule, or keep the source stage's connection with a warning line; a same-named unrelated object in the target gives a warning line and a second object. Extract data, permissions and refresh schedules are not carried. Any failure deploys nothing: 400 «Ничего не развёрнуто: <reason>». An object named twice: 422. Refused before copying, with the UI's hints: an unbound stage 400 «Обе стадии должны быть привязаны к пространствам», nothing to deploy (`objects: []` on an empty stage) 400 «Выберите объекты в левой колонке». Access: Администратор in the receiving stage and any role in the source stage, else 403 «Доступ запрещён»; 404 when the pipeline is not visible. Two deploys of one pipeline run one after the other.",
        tags,
      },
    })
    .input(deployInput)
    .output(deployOutput)
    .mutation(({ ctx, input: { id, ...body } }) => deployToNextStage(ctx.deps, ctx.actor, id, body)),

  listDeployments: pipelineProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/pipeline/{id}/deployments',
        summary: 'Deployment history of a pipeline (beyond the reference)',
        description:
          "A page (`data.content`, `data.page`), newest first, of the successful deploys: who, when, from which stage to which, the per-object actions and the warning lines. Not part of the reference platform's 202 operations. Access: anyone who can see the pipeline (else 404).",
        tags,
      },
    })
    .input(listDeploymentsInput)
    .output(listDeploymentsOutput)
    .query(({ ctx, input }) => listDeployments(ctx.deps, ctx.actor, input.id, input)),

  rollback: pipelineProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/pipeline/{id}/deployments/{deploymentId}/rollback',
        summary: 'Roll a deploy back (beyond the reference)',
        description:
          "Puts the receiving stage back as it was before that deploy, in ONE transaction, recorded as a deployment of its own (kind rollback): every object the deploy updated gets its revision from before the deploy (ids kept; a data source keeps its current secrets), every object it created is deleted (dashboards, widgets, datasets, then sources); compare then says changed again for what the original has since. Refused with 400 «Откат невозможен: …» naming each object (type, name, id) when an object was changed by a later deploy or edited after the deploy, an updated one has no revision from before it, or something outside the deploy came to depend on an object it would delete (a widget made later on a created dataset); nothing is changed then. A deploy is rolled back once (400 «Развёртывание уже откачено (откат id N)»), a rollback not at all (400). Not part of the reference platform's 202 operations. Access: as for a deploy into that stage, Администратор in the receiving stage and any role in the source stage (else 403 «Доступ запрещён»); 404 when the pipeline is not visible or has no such deployment. Rollbacks and deploys of one pipeline run one after the other.",
        tags,
      },
    })
    .input(rollbackInput)
    .output(rollbackOutput)
    .mutation(({ ctx, input }) => rollbackDeployment(ctx.deps, ctx.actor, input.id, input.deploymentId)),
};
