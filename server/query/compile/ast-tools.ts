import type { Call, Expr } from '../expr';
import { ExpressionError, mapChildren } from '../expr';

/** Small AST helpers the compiler stages share. */

/**
 * Replaces every [name] by what `lookup` gives for it, recursively, so that the result names columns only. Used for
 * the dataset's own formulas (dataset filters, previews), which must expand with the dataset's definitions whatever
 * the request defines.
 */
export function inlineCalculated(e: Expr, lookup: (name: string) => Expr, expanding: string[] = []): Expr {
  if (e.kind === 'calc_ref') {
    if (expanding.includes(e.name)) {
      throw new ExpressionError(
        `циклическая ссылка между вычисляемыми полями: ${[...expanding, e.name].map((n) => `[${n}]`).join(' → ')}`,
        e.pos ?? null,
      );
    }
    return inlineCalculated(lookup(e.name), lookup, [...expanding, e.name]);
  }
  return mapChildren(e, (child) => inlineCalculated(child, lookup, expanding));
}

export const columnRef = (table: string, field: string): Expr => ({ kind: 'column_ref', table, field });
export const calcRef = (name: string): Expr => ({ kind: 'calc_ref', name });
export const call = (name: string, ...args: Expr[]): Call => ({ kind: 'call', name, args });
