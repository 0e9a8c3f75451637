import { z } from 'zod';
import {
  createClsRule,
  createRlsRule,
  deleteClsRule,
  deleteRlsRule,
  effectiveSecurity,
  listClsRules,
  listRlsRules,
  updateClsRule,
  updateRlsRule,
  type ClsRuleInput,
  type ClsRuleView,
  type RlsRuleInput,
  type RlsRuleView,
} from '../../server/datasets/security-rules';
import { authedProcedure } from '../trpc';
import { deletedOutput, entityId, wireString, type Mirrors } from '../common';

/*
 * Row- and column-level security of a dataset: /api/dataset/{id}/rls-rules (and effective security). router.ts
 * spreads these into the `dataset` router.
 */

const id = entityId();
const tags = ['Datasets'];

const ruleBody = {
  field_id: id.describe('The field whose value is tested'),
  attribute: wireString().max(200).describe('The user attribute key whose values the field must match'),
  operator: z.enum(['in', 'eq']).describe('in: the value is one of the attribute values; eq: equals the first'),
  user_ids: z.array(id).max(1000).default([]).describe('Users the rule applies to'),
  group_ids: z.array(id).max(1000).default([]).describe('Groups the rule applies to (both lists empty: everyone)'),
};
const ruleInput = z.strictObject({ id, ...ruleBody });
const ruleUpdateInput = z.strictObject({ id, ruleId: id.describe('RLS rule id'), ...ruleBody });
const ruleRef = z.strictObject({ id, ruleId: id.describe('RLS rule id') });

export const rlsRuleOutput = z.object({
  id: z.number().int(),
  dataset_id: z.number().int(),
  field_id: z.number().int(),
  attribute: z.string(),
  operator: z.enum(['in', 'eq']),
  user_ids: z.array(z.number().int()),
  group_ids: z.array(z.number().int()),
  created_at: z.string(),
  updated_at: z.string(),
});
export const rlsRulesOutput = z.object({ rules: z.array(rlsRuleOutput) });

const _input: Mirrors<RlsRuleInput, Omit<z.output<typeof ruleInput>, 'id'>> = true;
const _view: Mirrors<RlsRuleView, z.output<typeof rlsRuleOutput>> = true;
void [_input, _view];

export const effectiveSecurityOutput = z.object({
  row_filter_sql: z.string().nullable().describe('The row predicate in the dataset dialect, literals inlined'),
  hidden_field_ids: z.array(z.number().int()),
});

const clsRuleBody = {
  field_ids: z.array(id).min(1, 'Укажите хотя бы одно поле').max(1000).describe('The fields the rule hides or masks'),
  action: z.enum(['hide', 'mask']).describe('hide: the fields do not exist for them; mask: values read ***'),
  user_ids: z.array(id).max(1000).default([]).describe('Users the rule applies to'),
  group_ids: z.array(id).max(1000).default([]).describe('Groups the rule applies to (both lists empty: everyone)'),
};
const clsRuleInput = z.strictObject({ id, ...clsRuleBody });
const clsRuleUpdateInput = z.strictObject({ id, ruleId: id.describe('CLS rule id'), ...clsRuleBody });
const clsRuleRef = z.strictObject({ id, ruleId: id.describe('CLS rule id') });

export const clsRuleOutput = z.object({
  id: z.number().int(),
  dataset_id: z.number().int(),
  field_ids: z.array(z.number().int()),
  action: z.enum(['hide', 'mask']),
  user_ids: z.array(z.number().int()),
  group_ids: z.array(z.number().int()),
  created_at: z.string(),
  updated_at: z.string(),
});
export const clsRulesOutput = z.object({ rules: z.array(clsRuleOutput) });

const _clsInput: Mirrors<ClsRuleInput, Omit<z.output<typeof clsRuleInput>, 'id'>> = true;
const _clsView: Mirrors<ClsRuleView, z.output<typeof clsRuleOutput>> = true;
void [_clsInput, _clsView];

export const datasetSecurityProcedures = {
  listClsRules: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}/cls-rules',
        summary: 'List column-level security rules',
        tags,
      },
    })
    .input(z.strictObject({ id }))
    .output(clsRulesOutput)
    .query(({ ctx, input }) => listClsRules(ctx.deps, ctx.actor, input.id)),

  createClsRule: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/dataset/{id}/cls-rules', summary: 'Add a CLS rule', tags } })
    .input(clsRuleInput)
    .output(clsRuleOutput)
    .mutation(({ ctx, input: { id: datasetId, ...body } }) => createClsRule(ctx.deps, ctx.actor, datasetId, body)),

  updateClsRule: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/dataset/{id}/cls-rules/{ruleId}', summary: 'Change a CLS rule', tags },
    })
    .input(clsRuleUpdateInput)
    .output(clsRuleOutput)
    .mutation(({ ctx, input: { id: datasetId, ruleId, ...body } }) =>
      updateClsRule(ctx.deps, ctx.actor, datasetId, ruleId, body),
    ),

  deleteClsRule: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/dataset/{id}/cls-rules/{ruleId}', summary: 'Delete a CLS rule', tags },
    })
    .input(clsRuleRef)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteClsRule(ctx.deps, ctx.actor, input.id, input.ruleId)),

  effectiveSecurity: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}/effective-security',
        summary: 'Row filter and hidden fields for one user',
        tags,
      },
    })
    .input(z.strictObject({ id, userId: id.describe('The user whose security is shown') }))
    .output(effectiveSecurityOutput)
    .query(({ ctx, input }) => effectiveSecurity(ctx.deps, ctx.actor, input.id, input.userId)),

  listRlsRules: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/dataset/{id}/rls-rules', summary: 'List row-level security rules', tags },
    })
    .input(z.strictObject({ id }))
    .output(rlsRulesOutput)
    .query(({ ctx, input }) => listRlsRules(ctx.deps, ctx.actor, input.id)),

  createRlsRule: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/dataset/{id}/rls-rules', summary: 'Add an RLS rule', tags } })
    .input(ruleInput)
    .output(rlsRuleOutput)
    .mutation(({ ctx, input: { id: datasetId, ...body } }) => createRlsRule(ctx.deps, ctx.actor, datasetId, body)),

  updateRlsRule: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/dataset/{id}/rls-rules/{ruleId}', summary: 'Change an RLS rule', tags },
    })
    .input(ruleUpdateInput)
    .output(rlsRuleOutput)
    .mutation(({ ctx, input: { id: datasetId, ruleId, ...body } }) =>
      updateRlsRule(ctx.deps, ctx.actor, datasetId, ruleId, body),
    ),

  deleteRlsRule: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/dataset/{id}/rls-rules/{ruleId}', summary: 'Delete an RLS rule', tags },
    })
    .input(ruleRef)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteRlsRule(ctx.deps, ctx.actor, input.id, input.ruleId)),
};
