import { z } from 'zod';
import type { CompareResult } from '../../server/pipelines/compare';
import type { DeployInput, DeployResult } from '../../server/pipelines/deploy/deploy';
import type { DeploymentView } from '../../server/pipelines/history';
import type { RollbackResult } from '../../server/pipelines/deploy/rollback';
import { entityId, pageSchema, pagedQuery, wireString, type Accepts, type Mirrors } from '../common';

const id = entityId();
const objectType = z.enum(['data_source', 'dataset', 'widget', 'dashboard']);

// ---- compare ----

export const compareInput = z.strictObject({
  id,
  from: wireString()
    .max(20)
    .describe(
      'The stage compared with the next one: 0 or 1 (anything else: 400 «Сравнить можно только с соседней стадией»)',
    )
    .optional(),
  details: z
    .boolean()
    .optional()
    .describe('true: each changed object also lists its changed paths since its last deploy (`changes`)'),
});

/** One changed path (server/revisions/diff.ts). */
const diffEntry = z.object({
  path: z
    .string()
    .describe(
      'A readable path: row.name, row.config.shelves.x[id="s1"].agg, children.dataset_fields[id=12].formula, row.layout.items[widget_id=7].w',
    ),
  change: z.enum(['added', 'removed', 'changed']),
  old: z.unknown().optional().describe('The value before (absent for added)'),
  new: z.unknown().optional().describe('The value after (absent for removed)'),
});

const comparedObject = z.object({
  type: objectType,
  id: z.number().int().describe("The original's id; for target_only the next stage's object's own"),
  name: z.string(),
  status: z
    .enum(['new', 'changed', 'same', 'target_only'])
    .describe('new Новый, changed Изменён, same Без изменений, target_only Только здесь'),
  target_id: z.number().int().nullable().describe('The copy in the next stage; null for new'),
  changes: z
    .array(diffEntry)
    .nullable()
    .optional()
    .describe(
      'Only with details=true and only for changed objects: the changed paths from what the last deploy carried to the original now; null when no revision of either is kept (an object saved only before revisions were kept)',
    ),
});

export const compareOutput = z.object({
  pipeline_id: z.number().int(),
  from_stage: z.number().int(),
  to_stage: z.number().int(),
  objects: z.array(comparedObject),
});

// ---- deploy ----

const deployBody = {
  from_stage: z.number().int().describe('0 or 1: the objects go to stage from_stage + 1'),
  objects: z
    .array(z.strictObject({ type: objectType, id }))
    .max(100_000)
    .describe(
      'The objects of the source stage; an empty array means every object of it (dependencies always come along)',
    ),
};
export const deployInput = z.strictObject({ id, ...deployBody });

const deploymentObject = z.object({
  type: objectType,
  source_id: z.number().int(),
  target_id: z.number().int(),
  action: z.enum(['created', 'updated']),
  name: z.string(),
});

export const deployOutput = z.object({
  deployment_id: z.number().int(),
  pipeline_id: z.number().int(),
  from_stage: z.number().int(),
  to_stage: z.number().int(),
  objects: z.array(deploymentObject),
  warnings: z
    .array(z.string())
    .describe('Warning lines: same-named objects, sources without a substitution rule, materialised datasets'),
});

// ---- history ----

export const listDeploymentsInput = z.strictObject({ id, page: pagedQuery.page, size: pagedQuery.size });

/** A deployment's object in the history: a deploy's created/updated, a rollback's restored/deleted. */
const historyObject = deploymentObject.extend({
  action: z
    .enum(['created', 'updated', 'restored', 'deleted'])
    .describe(
      'A deploy: created, updated. A rollback: restored (put back as it was before the deploy), deleted (the deploy had created it)',
    ),
});

const deploymentView = z.object({
  id: z.number().int(),
  from_stage: z.number().int(),
  from_stage_name: z.string(),
  to_stage: z.number().int(),
  to_stage_name: z.string(),
  user_id: z.number().int().nullable().describe('Who deployed; null when that account is gone'),
  username: z.string().nullable(),
  created_at: z.string(),
  kind: z.enum(['deploy', 'rollback']).describe('deploy, or rollback (the undoing of the deploy rolled_back_id)'),
  rolled_back_id: z.number().int().nullable().describe('A rollback: the deploy it undid; null for a deploy'),
  rolled_back_by: z
    .number()
    .int()
    .nullable()
    .describe('A deploy that was rolled back: the rollback that undid it; null otherwise'),
  objects: z.array(historyObject),
  warnings: z.array(z.string()),
});
export const listDeploymentsOutput = pageSchema(deploymentView);

// ---- rollback ----

export const rollbackInput = z.strictObject({ id, deploymentId: id });

export const rollbackOutput = z.object({
  deployment_id: z.number().int().describe("The rollback's own deployment (kind rollback in the history)"),
  rolled_back_id: z.number().int().describe('The deploy it undid'),
  pipeline_id: z.number().int(),
  from_stage: z.number().int(),
  to_stage: z.number().int().describe('The stage that was put back'),
  objects: z.array(
    deploymentObject.extend({
      action: z
        .enum(['restored', 'deleted'])
        .describe('restored: put back as it was before the deploy; deleted: the deploy had created it'),
    }),
  ),
  warnings: z
    .array(z.string())
    .describe('Objects deleted since the deploy (skipped), references a restored object names that no longer exist'),
});

const _deployIn: Mirrors<DeployInput, Omit<z.output<typeof deployInput>, 'id'>> = true;
const _deployOut: Accepts<z.output<typeof deployOutput>, DeployResult> = true;
const _compareOut: Accepts<z.output<typeof compareOutput>, CompareResult> = true;
const _historyOut: Accepts<z.output<typeof deploymentView>, DeploymentView> = true;
const _rollbackOut: Accepts<z.output<typeof rollbackOutput>, RollbackResult> = true;
void [_deployIn, _deployOut, _compareOut, _historyOut, _rollbackOut];
