import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import type { ChatMessage } from '../../adapters/ai/chat-client';
import { checkFormula, envOfModel } from '../datasets/formulas';
import { datasetSeenBy } from '../datasets/datasets';
import { askUntilAccepted } from './ai';
import { datasetFieldLines, functionLines, GUARD } from './grounding';
import { AI_MSG } from './messages';

/**
 * POST /api/ai/formula: a calculated field formula for a dataset the caller can read. The prompt names the fields of
 * the schema as the caller sees it (datasetSeenBy: without those their column rules hide), and the answer must pass
 * the formula validator against that same schema; a failing answer gets one repair round with the validator's
 * message, then a 400. Masked fields are listed and accepted: a read shows them, masked. Nothing is saved or run.
 */
export async function generateFormula(
  deps: AppDeps,
  actor: Actor,
  input: { dataset_id: number; prompt: string },
): Promise<{ formula: string; primitive_type: string }> {
  // The dataset as GET /api/dataset/{id} shows it to the caller: a field their column rules hide (and the calculated
  // fields reading it) is neither told to the provider nor accepted in an answer, as if the dataset lacked it.
  const { model } = await datasetSeenBy(deps.db, actor, input.dataset_id);
  const env = envOfModel(model);
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: [
        GUARD,
        'Напиши одну формулу вычисляемого поля на языке выражений платформы. Ссылки на поля — в квадратных скобках, ' +
          'как в списке ниже. Ответь только формулой, без пояснений.',
        `Поля датасета «${model.name}»:`,
        ...datasetFieldLines(model),
        'Функции языка (другие не поддерживаются):',
        ...functionLines(),
      ].join('\n'),
    },
    { role: 'user', content: input.prompt },
  ];
  return askUntilAccepted<{ formula: string; primitive_type: string }>(
    deps,
    actor,
    messages,
    (formula) => {
      const result = checkFormula(formula, env);
      return result.ok ? { accepted: { formula, primitive_type: result.type } } : { problem: result.error.message };
    },
    (problem) => `Валидатор отклонил формулу: ${problem}. Исправь её и ответь только формулой.`,
    AI_MSG.formulaFailed,
  );
}
