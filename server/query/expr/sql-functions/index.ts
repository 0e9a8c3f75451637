import { DATE_ARITHMETIC_FUNCTIONS } from './date-arithmetic';
import { DATE_FUNCTIONS } from './date';
import { CAST_FUNCTIONS, LOGIC_FUNCTIONS } from './logic';
import { AGGREGATE_FUNCTIONS, MATH_FUNCTIONS } from './math';
import { STRING_FUNCTIONS } from './string';
import type { SqlFunction } from './call-args';

export { divide, modulo } from './math';
export type { SqlFunction } from './call-args';

/** SQL for every whitelisted function (a test checks the two lists match). */
export const SQL_FUNCTIONS: Readonly<Record<string, SqlFunction>> = {
  ...AGGREGATE_FUNCTIONS,
  ...MATH_FUNCTIONS,
  ...STRING_FUNCTIONS,
  ...DATE_FUNCTIONS,
  ...DATE_ARITHMETIC_FUNCTIONS,
  ...CAST_FUNCTIONS,
  ...LOGIC_FUNCTIONS,
};
