import { AppError, badRequest, invalid } from '../../kernel/errors';
import { ExpressionError } from '../expr';

/*
 * How the engine reports problems. A request that does not make sense (bad expression, unknown field or sort id,
 * type mismatch, parameter out of its domain) is a 422 whose `errors` names the element of the body, in the
 * specification's path form (`rows[0].sql`); a request that is well formed but cannot be carried out (a calculated
 * field without definition, objects that cannot be joined, the database refusing the query) is a 400 with a
 * Russian message.
 */

/** Runs one step on behalf of one element of the body: an ExpressionError becomes a 422 naming that element. */
export function at<T>(path: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (e instanceof ExpressionError) throw invalid({ [path]: e.message });
    throw e;
  }
}

/** The specification's message: the request must carry the definition of every calculated field it uses (rule 2). */
export const calculatedFieldMissing = (name: string): AppError =>
  badRequest(`Определение вычисляемого поля не найдено: ${name}`);

/** A problem of the dataset itself (its filters, relations, objects), not of the request. */
export const datasetProblem = (message: string): AppError => badRequest(message);
