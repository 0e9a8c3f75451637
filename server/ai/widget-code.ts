import type { ChatMessage } from '../../adapters/ai/chat-client';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { checkFormula, envOfModel } from '../datasets/formulas';
import { datasetSeenBy } from '../datasets/datasets';
import { askUntilAccepted } from './ai';
import { datasetFieldLines, functionLines, GUARD } from './grounding';
import { AI_MSG } from './messages';

/*
 * POST /api/ai/widget-code: a widget body for POST /api/widget on a dataset the caller can read. The answer must
 * parse as the widget create body (the router passes that schema's check in, server/ never sees the wire schemas),
 * name the requested dataset and kind, and every expression on its shelves must pass the formula validator against
 * the dataset as the caller sees it (datasetSeenBy: without the fields their column rules hide; the prompt names no
 * other). Masked fields are listed and accepted, as POST /api/widget accepts them (its data read masks their values
 * and refuses a filter over one). One repair round, then a 400. Nothing is saved or run.
 */

/** The router's check of a widget create body: the parsed body or the first problem. */
export type WidgetBodyParser = (value: unknown) => { ok: true; body: WidgetBodyShape } | { ok: false; message: string };

export interface WidgetBodyShape {
  dataset_id: number;
  type: string;
  rows: { sql?: string }[];
  series: { sql?: string }[];
  columns: { sql?: string }[];
  filters: { sql: string }[];
  calculated_fields: { name: string; sql: string }[];
}

const EXAMPLE = (datasetId: number, type: string) =>
  JSON.stringify({
    name: 'Выручка по регионам',
    type,
    dataset_id: datasetId,
    rows: [{ id: 'r1', sql: '[orders.region]' }],
    series: [],
    columns: [{ id: 'c1', sql: 'SUM([orders.amount])', alias: 'Выручка' }],
    filters: [{ sql: '[orders.amount]', op: 'gt', values: [0] }],
    sorts: [{ field_id: 'c1', direction: 'desc' }],
  });

function bodyProblem(
  parse: WidgetBodyParser,
  text: string,
  input: { dataset_id: number; type: string },
  env: ReturnType<typeof envOfModel>,
): { code: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: 'ответ не является JSON-объектом' };
  }
  const parsed = parse(value);
  if (!parsed.ok) return { problem: parsed.message };
  const body = parsed.body;
  if (body.dataset_id !== input.dataset_id) return { problem: `dataset_id должен быть ${input.dataset_id}` };
  if (body.type !== input.type) return { problem: `type должен быть ${input.type}` };
  const calculated = new Map(env.calculated);
  for (const c of body.calculated_fields) calculated.set(c.name, { name: c.name, formula: c.sql });
  const widgetEnv = { ...env, calculated };
  const expressions = [...body.rows, ...body.series, ...body.columns, ...body.filters]
    .map((f) => f.sql)
    .filter((s): s is string => !!s);
  for (const sql of expressions) {
    const result = checkFormula(sql, widgetEnv);
    if (!result.ok) return { problem: `${sql}: ${result.error.message}` };
  }
  return { code: value as Record<string, unknown> };
}

export async function generateWidgetCode(
  deps: AppDeps,
  actor: Actor,
  input: { dataset_id: number; prompt: string; type: string },
  parse: WidgetBodyParser,
): Promise<{ code: Record<string, unknown> }> {
  // The dataset as GET /api/dataset/{id} shows it to the caller: a field their column rules hide (and the calculated
  // fields reading it) is neither told to the provider nor accepted in an answer, as if the dataset lacked it.
  const { model } = await datasetSeenBy(deps.db, actor, input.dataset_id);
  const env = envOfModel(model);
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: [
        GUARD,
        `Построй виджет типа ${input.type} на датасете id ${input.dataset_id}: ответь одним JSON-объектом — телом ` +
          'POST /api/widget, без пояснений. Выражения полей (sql) пишутся на языке выражений платформы.',
        `Пример: ${EXAMPLE(input.dataset_id, input.type)}`,
        `Поля датасета «${model.name}»:`,
        ...datasetFieldLines(model),
        'Функции языка:',
        ...functionLines(),
      ].join('\n'),
    },
    { role: 'user', content: input.prompt },
  ];
  return askUntilAccepted<{ code: Record<string, unknown> }>(
    deps,
    actor,
    messages,
    (answer) => {
      const outcome = bodyProblem(parse, answer, input, env);
      return 'code' in outcome ? { accepted: outcome } : outcome;
    },
    (problem) => `Тело виджета отклонено: ${problem}. Исправь и ответь только JSON-объектом.`,
    AI_MSG.widgetFailed,
  );
}
