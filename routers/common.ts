import { z } from 'zod';
import { entityId, int4, INVALID_TEXT_MESSAGE, isWireText, nonBlank, wireJson, wireString } from '../server/validation';

/**
 * Wire pieces every router schema shares. Input schemas take text only as `wireString`/`nonBlank` (no NUL, no lone
 * surrogates) and ids only as `entityId` (1..2^31-1, the range of the id columns), so that bad input is a 422 with
 * the field path and never reaches the database.
 */
export { entityId, int4, INVALID_TEXT_MESSAGE, isWireText, nonBlank, wireJson, wireString };

/** `{ id }` of the object a path addresses. */
export const idInput = z.strictObject({ id: entityId() });

/** The answer of a DELETE of one object. */
export const deletedOutput = z.object({ id: z.number().int(), deleted: z.literal(true) });

/** A path or multipart field that carries an id as text (raw routes parse their own parameters). */
export const entityIdText = () =>
  z.string().regex(/^\d{1,10}$/, { error: 'must be an integer' }).transform(Number).pipe(entityId());
