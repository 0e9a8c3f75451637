import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { invalid } from '../kernel/errors';
import { ownedObject } from '../access/object-access';
import { checkFormula, envOfModel } from './formulas';
import { inSnapshot, modelOfRow } from './load-model';
import { MSG } from './messages';

/**
 * POST /api/dataset/{id}/formula/validate: one formula against the saved schema, as the field editor checks it
 * while typing. With field_id (a saved calculated field) the formula is checked as that field's new formula, so a
 * reference back to it is reported as a cycle.
 */
export async function validateFormula(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: { formula: string; field_id?: number },
) {
  return inSnapshot(deps.db, async (tx) => {
    const { row } = await ownedObject(tx, actor, 'dataset', id);
    const model = await modelOfRow(tx, row);
    let self: string | null = null;
    if (input.field_id !== undefined) {
      const field = model.fields.find((f) => f.id === input.field_id && f.kind === 'calculated');
      if (!field) throw invalid({ fieldId: MSG.fieldNotFound(input.field_id) });
      self = field.name;
    }
    const result = checkFormula(input.formula, envOfModel(model), self);
    return result.ok
      ? { valid: true, primitive_type: result.type, aggregate: result.aggregate, message: null }
      : { valid: false, primitive_type: null, aggregate: null, message: result.error.message };
  });
}
