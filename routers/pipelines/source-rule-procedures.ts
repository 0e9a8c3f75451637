import { pipelineProcedure } from '../trpc';
import { deleteSourceRule, listSourceRules, upsertSourceRule } from '../../server/pipelines/source-rules';
import {
  deletedSourceRuleOutput,
  deleteSourceRuleInput,
  sourceRuleView,
  stageInput,
  stageSourceRulesOutput,
  upsertSourceRuleInput,
} from './schemas';

const tags = ['Pipelines'];
const RULE_PATH = '/api/pipeline/{id}/stage/{order}/data-source-rule';
const RULE_STAGE =
  'Stage 0 has no previous stage and so no rules (400); {order} other than 0, 1, 2: 404; a pipeline not visible: 404.';

/**
 * Data-source substitution rules of a receiving stage, spread into the pipeline router. A rule's connection check is
 * POST /api/data-source/check with the rule's type and settings (the check button of the rule form), so it has no
 * path of its own.
 */
export const sourceRuleProcedures = {
  listSourceRules: pipelineProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: RULE_PATH,
        summary: "The previous stage's sources with their substitution rules",
        description: `Each data source of the previous stage's workspace that has a connection (a file source is copied with its file and needs none) with its uuid, name, type and the rule of stage {order} (settings shown as a source read shows them: secrets never). Rules whose source is no longer there (deleted, or the stage bound elsewhere) are listed apart in orphan_rules and can be deleted. ${RULE_STAGE} Access: any role in stage {order} (else 403).`,
        tags,
      },
    })
    .input(stageInput)
    .output(stageSourceRulesOutput)
    .query(({ ctx, input }) => listSourceRules(ctx.deps, ctx.actor, input.id, input.order)),

  upsertSourceRule: pipelineProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: RULE_PATH,
        summary: 'Create or change a substitution rule',
        description: `source_uuid names a source of the previous stage (else 404); settings are validated, stored and masked like that source kind's settings (422 with field paths; secrets encrypted, write-only, an omitted password keeps the stored one unless the address changes). Applies at the next deploy into stage {order}. To check the connection, send the same type and settings to POST /api/data-source/check (answers «Подключение успешно» or the error text). ${RULE_STAGE} Access: Администратор in stage {order} (else 403).`,
        tags,
      },
    })
    .input(upsertSourceRuleInput)
    .output(sourceRuleView)
    .mutation(({ ctx, input: { id, order, ...body } }) => upsertSourceRule(ctx.deps, ctx.actor, id, order, body)),

  deleteSourceRule: pipelineProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: RULE_PATH,
        summary: 'Delete a substitution rule',
        description: `The rule is named by the query parameter sourceUuid (orphan rules too). The copy of the source returns to the source stage's connection at the next deploy. No such rule: 404. ${RULE_STAGE} Access: Администратор in stage {order} (else 403).`,
        tags,
      },
    })
    .input(deleteSourceRuleInput)
    .output(deletedSourceRuleOutput)
    .mutation(({ ctx, input }) => deleteSourceRule(ctx.deps, ctx.actor, input.id, input.order, input.sourceUuid)),
};
