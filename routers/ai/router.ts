import { z } from 'zod';
import { aiAccess } from '../../server/ai/ai';
import { generateFormula } from '../../server/ai/formula';
import { generateSql } from '../../server/ai/sql';
import { generateWidgetCode, type WidgetBodyParser } from '../../server/ai/widget-code';
import { authedProcedure, router } from '../trpc';
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

/** What every generation's description ends with. */
const FAILURES =
  '403 when the assistant is not available to the caller; 502 when the provider fails, 504 when it does not answer ' +
  'in time.';

/** The dataset a formula or widget generation is grounded in and checked against. */
const DATASET_AS_SEEN =
  'The provider is told the fields of the dataset as GET /api/dataset/{id} shows them to the caller, and the answer ' +
  "is checked against those: a field the caller's CLS rules hide (and a calculated field reading it) is neither " +
  'named to the provider nor accepted, exactly as a field the dataset lacks. Masked fields are named and accepted ' +
  '(their values read masked).';

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
      openapi: {
        method: 'POST',
        path: '/api/ai/formula',
        summary: 'Generate a calculated field formula',
        description:
          'A calculated field formula for a dataset the caller can read, grounded in its fields and the expression ' +
          "language's functions and checked by the formula validator (one repair round, then 400). Nothing is saved. " +
          `${DATASET_AS_SEEN} ${FAILURES}`,
        tags,
      },
    })
    .input(formulaInput)
    .output(formulaOutput)
    .mutation(({ ctx, input }) => generateFormula(ctx.deps, ctx.actor, input)),

  generateSql: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/ai/sql',
        summary: 'Generate an SQL query',
        description:
          'One read-only query (SELECT / WITH) grounded in the tables and columns of the source from the metadata ' +
          'cache; DDL, DML and tables the source does not have are refused (one repair round, then 400). Nothing is ' +
          'run. The source schema goes to the provider, so the caller needs the level that lists it (GET ' +
          '/api/data-source/{id}/columns): Редактор or Администратор of its workspace, the edit right on it, or a ' +
          `system administrator (else 403 «Доступ запрещён», the provider is not asked). ${FAILURES}`,
        tags,
      },
    })
    .input(sqlInput)
    .output(sqlOutput)
    .mutation(({ ctx, input }) => generateSql(ctx.deps, ctx.actor, input)),

  generateWidgetCode: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/ai/widget-code',
        summary: 'Generate widget code',
        description:
          'A widget body for POST /api/widget on a dataset the caller can read, of the given kind; it parses as that ' +
          'body and its expressions pass the formula validator (one repair round, then 400). Nothing is saved or run. ' +
          `${DATASET_AS_SEEN} ${FAILURES}`,
        tags,
      },
    })
    .input(widgetCodeInput)
    .output(widgetCodeOutput)
    .mutation(({ ctx, input }) => generateWidgetCode(ctx.deps, ctx.actor, input, parseWidgetBody)),
});
