import { z } from 'zod';
import { aiAccess } from '../../server/ai/ai';
import { generateFormula } from '../../server/ai/formula';
import { generateSql } from '../../server/ai/sql';
import { generateWidgetCode, type WidgetBodyParser } from '../../server/ai/widget-code';
import { authedProcedure, router } from '../../server/app/trpc';
import { createWidgetInput } from '../widgets/schemas';
import {
  accessOutput,
  formulaInput,
  formulaOutput,
  sqlInput,
  sqlOutput,
  widgetCodeInput,
  widgetCodeOutput,
} from './schemas';

const tags = ['AI assistant'];

/** The generated widget must be what POST /api/widget would accept: the same zod schema decides. */
const parseWidgetBody: WidgetBodyParser = (value) => {
  const parsed = createWidgetInput.safeParse(value);
  if (parsed.success) return { ok: true, body: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, message: `${issue.path.join('.') || 'body'}: ${issue.message}` };
};

export const aiRouter = router({
  access: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/ai/access',
        summary: 'Whether the assistant is available to the caller',
        tags,
      },
    })
    .input(z.void())
    .output(accessOutput)
    .query(({ ctx }) => aiAccess(ctx.deps, ctx.actor)),

  generateFormula: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/ai/formula', summary: 'Generate a calculated field formula', tags },
    })
    .input(formulaInput)
    .output(formulaOutput)
    .mutation(({ ctx, input }) => generateFormula(ctx.deps, ctx.actor, input)),

  generateSql: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/ai/sql', summary: 'Generate an SQL query', tags } })
    .input(sqlInput)
    .output(sqlOutput)
    .mutation(({ ctx, input }) => generateSql(ctx.deps, ctx.actor, input)),

  generateWidgetCode: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/ai/widget-code', summary: 'Generate widget code', tags } })
    .input(widgetCodeInput)
    .output(widgetCodeOutput)
    .mutation(({ ctx, input }) => generateWidgetCode(ctx.deps, ctx.actor, input, parseWidgetBody)),
});
