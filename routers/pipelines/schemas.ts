import { z } from 'zod';
import { WORKSPACE_ROLES } from '../../server/access/roles';
import { PIPELINE_SORT_FIELDS, type PipelineInput } from '../../server/pipelines/pipelines';
import type { AvailableWorkspaces } from '../../server/pipelines/binding';
import type { SourceRuleInput, StageSourceRules } from '../../server/pipelines/source-rules';
import { checkInput, dataSourceView } from '../data-sources/schemas';
import type { PipelineView, StageView } from '../../server/pipelines/views';
import {
  entityId,
  int4,
  nonBlank,
  pageSchema,
  pagedQueryOver,
  wireString,
  type Accepts,
  type Mirrors,
} from '../common';

const id = entityId();
const description = wireString().max(4_000);

/** `{order}` of a path: the stage position 0 Разработка, 1 Тест, 2 Прод (another whole number: 404). */
const order = int4().describe('Stage position: 0 Разработка, 1 Тест, 2 Прод');
export const stageInput = z.strictObject({ id, order });

// ---- pipeline ----

export const createPipelineInput = z.strictObject({ name: nonBlank(200), description: description.optional() });
export const updatePipelineInput = z.strictObject({
  id,
  name: nonBlank(200),
  description: description.optional().describe('Kept when left out'),
});

export const stageView = z.object({
  order: z.number().int(),
  name: z.string().describe('Разработка, Тест or Прод (fixed)'),
  workspace_id: z.number().int().nullable().describe('The bound shared workspace; null while unbound'),
  workspace_name: z.string().nullable(),
  bound_at: z.string().nullable(),
  role: z.enum(WORKSPACE_ROLES).nullable().describe("The caller's role in the bound workspace; null when none"),
});

export const pipelineView = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  author_id: z.number().int().nullable(),
  bound_count: z.number().int().describe('Bound stages, 0..3'),
  binding_label: z.string().describe('«Не настроен» while no stage is bound, else «Привязано N из 3»'),
  stages: z.array(stageView).describe('Always three, by order'),
  can_manage: z
    .boolean()
    .describe('The caller may rename, delete, bind and unbind: Администратор in all bound stages (author while none)'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const listPipelinesInput = z.strictObject({
  ...pagedQueryOver(PIPELINE_SORT_FIELDS),
  query: wireString().max(200).optional().describe('Search in the name'),
});
export const listPipelinesOutput = pageSchema(pipelineView);

// ---- binding ----

export const bindStageInput = z.strictObject({ id, order, workspace_id: id.describe('A shared workspace') });

export const availableWorkspacesOutput = z.object({
  content: z.array(z.object({ id: z.number().int(), name: z.string(), description: z.string() })),
  message: z
    .string()
    .nullable()
    .describe('«Нет свободного командного пространства, где вы администратор» when content is empty, else null'),
});

const _create: Mirrors<PipelineInput, z.output<typeof createPipelineInput>> = true;
const _update: Mirrors<PipelineInput, Omit<z.output<typeof updatePipelineInput>, 'id'>> = true;
const _view: Accepts<z.output<typeof pipelineView>, PipelineView> = true;
const _stage: Accepts<z.output<typeof stageView>, StageView> = true;
const _available: Accepts<z.output<typeof availableWorkspacesOutput>, AvailableWorkspaces> = true;
void [_create, _update, _view, _stage, _available];

// ---- data-source substitution rules ----

const sourceUuid = z.uuid().describe('The uuid of a source of the previous stage (GET of the rules lists them)');
const sourceSettingsInput = checkInput.shape.settings;
const sourceSettingsView = dataSourceView.shape.settings;

export const upsertSourceRuleInput = z.strictObject({
  id,
  order,
  source_uuid: sourceUuid,
  settings: sourceSettingsInput.describe(
    'Settings of the same make-up as the source of that type; secrets are write-only (omitted or "" keeps the stored one, null removes it)',
  ),
});
export const deleteSourceRuleInput = z.strictObject({ id, order, sourceUuid });

export const sourceRuleView = z.object({
  source_uuid: z.string(),
  type: z.string(),
  settings: sourceSettingsView.describe('As a source read shows them: secrets never, only whether each is stored'),
  author_id: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const stageSourceRulesOutput = z.object({
  stage_order: z.number().int(),
  source_stage_order: z.number().int().describe('The previous stage, whose sources the rules replace'),
  sources: z.array(
    z.object({
      uuid: z.string(),
      id: z.number().int(),
      name: z.string(),
      type: z.string(),
      type_name: z.string(),
      rule: sourceRuleView.nullable().describe("null: the copy keeps the source stage's connection"),
    }),
  ),
  orphan_rules: z
    .array(sourceRuleView)
    .describe('Rules whose source is no longer in the previous stage (deleted, or the stage bound elsewhere)'),
});
export const deletedSourceRuleOutput = z.object({ source_uuid: z.string(), deleted: z.literal(true) });

const _rule: Mirrors<SourceRuleInput, Omit<z.output<typeof upsertSourceRuleInput>, 'id' | 'order'>> = true;
const _rules: Accepts<z.output<typeof stageSourceRulesOutput>, StageSourceRules> = true;
void [_rule, _rules];
