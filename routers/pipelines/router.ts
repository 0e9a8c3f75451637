import { pipelineProcedure, router } from '../trpc';
import { availableWorkspaces, bindStage, unbindStage } from '../../server/pipelines/binding';
import {
  createPipeline,
  deletePipeline,
  getPipeline,
  listPipelines,
  updatePipeline,
} from '../../server/pipelines/pipelines';
import { deletedOutput, idInput } from '../common';
import { deployProcedures } from './deploy-procedures';
import { sourceRuleProcedures } from './source-rule-procedures';
import {
  availableWorkspacesOutput,
  bindStageInput,
  createPipelineInput,
  listPipelinesInput,
  listPipelinesOutput,
  pipelineView,
  stageInput,
  stageView,
  updatePipelineInput,
} from './schemas';

const tags = ['Pipelines'];

const SEE = 'Access: any role in a bound stage, or the author (else 404).';
const MANAGE =
  'Access: Администратор in every bound stage; while no stage is bound, the author (else 403 «Доступ запрещён»; 404 when the pipeline is not visible).';

/*
 * Pipeline administration. Deploy, compare, history and transfer are separate procedure objects spread into the
 * router below, so that each part of the area keeps its own file.
 */
const adminProcedures = {
  list: pipelineProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/pipeline',
        summary: 'List the pipelines the caller sees',
        description: `A page (\`data.content\`, \`data.page\`) of the pipelines where the caller holds any role in a bound stage or is the author; \`query\` searches the name. Each carries its three stages and the binding label. Access: any authenticated user.`,
        tags,
      },
    })
    .input(listPipelinesInput)
    .output(listPipelinesOutput)
    .query(({ ctx, input }) => listPipelines(ctx.deps, ctx.actor, input)),

  create: pipelineProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/pipeline',
        summary: 'Create a pipeline with three stages',
        description:
          'Stages 0 Разработка, 1 Тест, 2 Прод come with it, unbound (label «Не настроен»); the caller is the author and configures it freely until the first binding. Access: any authenticated user.',
        tags,
      },
    })
    .input(createPipelineInput)
    .output(pipelineView)
    .mutation(({ ctx, input }) => createPipeline(ctx.deps, ctx.actor, input)),

  get: pipelineProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/pipeline/{id}',
        summary: 'Pipeline with its stages and binding state',
        description: `Stages with their bound workspaces; binding_label «Не настроен» or «Привязано N из 3». ${SEE}`,
        tags,
      },
    })
    .input(idInput)
    .output(pipelineView)
    .query(({ ctx, input }) => getPipeline(ctx.deps, ctx.actor, input.id)),

  update: pipelineProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/pipeline/{id}',
        summary: 'Rename or describe a pipeline',
        description: `Name and description (a description left out is kept). ${MANAGE}`,
        tags,
      },
    })
    .input(updatePipelineInput)
    .output(pipelineView)
    .mutation(({ ctx, input: { id, ...body } }) => updatePipeline(ctx.deps, ctx.actor, id, body)),

  delete: pipelineProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/pipeline/{id}',
        summary: 'Delete a pipeline',
        description: `Deletes the pipeline with its stages, copy links, substitution rules and deployment history; the workspaces and their objects stay. (The reference platform answers 500 here and keeps the pipeline; this one deletes it.) ${MANAGE}`,
        tags,
      },
    })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deletePipeline(ctx.deps, ctx.actor, input.id)),

  bindStage: pipelineProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/pipeline/{id}/stage/{order}',
        summary: "Bind a stage to a workspace, or change the stage's workspace",
        description: `The workspace must be shared (else 400 «К стадии можно привязать только командное пространство»), free (else 400 «Пространство уже участвует в другом пайплайне») and the caller its Администратор (else 403). Changing the workspace forgets the copy links of the stage pairs touching the stage. {order} other than 0, 1, 2: 404. ${MANAGE}`,
        tags,
      },
    })
    .input(bindStageInput)
    .output(stageView)
    .mutation(({ ctx, input }) => bindStage(ctx.deps, ctx.actor, input.id, input.order, input.workspace_id)),

  unbindStage: pipelineProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/pipeline/{id}/stage/{order}',
        summary: 'Unbind a stage',
        description: `Forgets which copy matches which original on both stage pairs touching the stage: originals become new, copies target_only; if the same workspace is bound again, the next deploy creates second instances. Objects and substitution rules stay. An unbound stage: 400. ${MANAGE}`,
        tags,
      },
    })
    .input(stageInput)
    .output(stageView)
    .mutation(({ ctx, input }) => unbindStage(ctx.deps, ctx.actor, input.id, input.order)),

  availableWorkspaces: pipelineProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/pipeline/{id}/available-workspaces',
        summary: 'Shared workspaces free for binding',
        description: `Shared workspaces where the caller is Администратор (directly or by group) and that no stage of any pipeline holds. None is not an error: the answer is 200 with an empty \`content\` and \`message\` «Нет свободного командного пространства, где вы администратор» (null otherwise). ${SEE}`,
        tags,
      },
    })
    .input(idInput)
    .output(availableWorkspacesOutput)
    .query(({ ctx, input }) => availableWorkspaces(ctx.deps, ctx.actor, input.id)),
};

export const pipelineRouter = router({
  ...adminProcedures,
  ...deployProcedures,
  ...sourceRuleProcedures,
});
