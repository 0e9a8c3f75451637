import { invalid, type FieldErrors } from '../../kernel/errors';
import { quoteIdentifier, type Dialect } from '../expr';
import type { SortSpec } from './types';

/*
 * Stage 4: ORDER BY. A sort names a shelf field by its id; the clause uses the SELECT alias standing for that
 * field, so an id never reaches SQL. NULL orders as the smallest value in every dialect (MySQL's own rule, spelled
 * out elsewhere), so the same request pages the same way on every source. Grouped queries get their group keys as tie-breakers: pages
 * of an aggregate never overlap or skip a group.
 */

export interface OrderKey {
  alias: string;
  direction: 'asc' | 'desc';
}

/** The sorts as aliases; an id that is no shelf field is a 422 on `sorts[i].fieldId`. */
export function resolveSorts(
  sorts: SortSpec[],
  aliasOfKey: Map<string, string>,
  pathOf = (i: number) => `sorts[${i}].fieldId`,
): OrderKey[] {
  const errors: FieldErrors = {};
  const keys: OrderKey[] = [];
  sorts.forEach((s, i) => {
    const alias = aliasOfKey.get(s.field_id);
    if (alias === undefined) errors[pathOf(i)] = `Поле с id ${s.field_id} не найдено на полках виджета`;
    else if (!keys.some((k) => k.alias === alias)) keys.push({ alias, direction: s.direction });
  });
  if (Object.keys(errors).length) throw invalid(errors);
  return keys;
}

/** ORDER BY the keys, then the tie-breakers; `terms` orders an alias by another SQL expression (assemble.ts). */
export function orderByClause(
  dialect: Dialect,
  keys: OrderKey[],
  tieBreakers: string[] = [],
  terms: ReadonlyMap<string, string> = new Map(),
): string {
  const all = [...keys];
  for (const alias of tieBreakers) if (!all.some((k) => k.alias === alias)) all.push({ alias, direction: 'asc' });
  if (all.length === 0) return '';
  return `ORDER BY ${all.map((k) => orderTerm(dialect, k, terms.get(k.alias))).join(', ')}`;
}

function orderTerm(dialect: Dialect, k: OrderKey, term?: string): string {
  const name = term ?? quoteIdentifier(dialect, k.alias);
  const dir = k.direction === 'desc' ? 'DESC' : 'ASC';
  // MySQL has no NULLS FIRST/LAST, and `alias IS NULL` may not name an aggregate there: its own rule is the one.
  if (dialect === 'mysql') return `${name} ${dir}`;
  return `${name} ${dir} ${k.direction === 'desc' ? 'NULLS LAST' : 'NULLS FIRST'}`;
}

/** LIMIT/OFFSET: numbers the engine computed (validated integers), never text of the request. */
export function limitClause(limit: number | undefined, offset = 0): string {
  if (limit === undefined) return '';
  return offset > 0 ? `LIMIT ${safeInt(limit)} OFFSET ${safeInt(offset)}` : `LIMIT ${safeInt(limit)}`;
}

function safeInt(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return String(n);
}
