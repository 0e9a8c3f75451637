export type PrimitiveType = 'string' | 'integer' | 'float' | 'boolean' | 'date' | 'datetime' | 'unknown';

/** Types of the references an expression uses; the caller knows its dataset. */
export interface TypeResolver {
  column(table: string, field: string): PrimitiveType;
  calculated(name: string): PrimitiveType;
}

export const isNumeric = (t: PrimitiveType) => t === 'integer' || t === 'float';
export const isTemporal = (t: PrimitiveType) => t === 'date' || t === 'datetime';

export const TYPE_NAMES: Record<PrimitiveType, string> = {
  string: 'строка',
  integer: 'целое число',
  float: 'дробное число',
  boolean: 'логическое значение',
  date: 'дата',
  datetime: 'дата и время',
  unknown: 'неизвестный тип',
};

/** Kinds of argument a function accepts; 'unknown' always passes, since a missing type is not the user's error. */
export type ArgKind = 'any' | 'numeric' | 'integer' | 'string' | 'temporal' | 'boolean';

const KIND_NAMES: Record<ArgKind, string> = {
  any: 'любое значение',
  numeric: 'число',
  integer: 'целое число',
  string: 'строка',
  temporal: 'дата',
  boolean: 'логическое значение',
};

export function fitsKind(t: PrimitiveType, kind: ArgKind): boolean {
  if (t === 'unknown' || kind === 'any') return true;
  switch (kind) {
    case 'numeric':
      return isNumeric(t);
    case 'integer':
      return t === 'integer';
    case 'string':
      return t === 'string';
    case 'temporal':
      return isTemporal(t);
    case 'boolean':
      return t === 'boolean';
  }
}

export function kindName(kind: ArgKind): string {
  return KIND_NAMES[kind];
}

/** Numbers mix to float, dates with datetimes to datetime; other mixes are not comparable. */
export function commonType(a: PrimitiveType, b: PrimitiveType): PrimitiveType | null {
  if (a === b) return a;
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  if (isNumeric(a) && isNumeric(b)) return 'float';
  if (isTemporal(a) && isTemporal(b)) return 'datetime';
  return null;
}
