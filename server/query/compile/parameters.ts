import type { DatasetParameter } from './dataset-model';
import { invalid, type FieldErrors } from '../../kernel/errors';
import type { Literal, PrimitiveType } from '../expr';
import { normalizeDate, normalizeDateTime } from '../expr/literals';
import type { ParameterValues } from './types';

/*
 * Dataset parameters: named values that formulas read as [name]. A request may substitute a value once
 * (`parameters`: name -> value); anything not given keeps the dataset's default. A value must read as the
 * parameter's primitive type and lie in its domain; the result is a typed literal, so it reaches SQL only through
 * the parameter sink, like any other literal.
 */

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const NULL_LITERAL: Literal = { kind: 'literal', type: 'null', value: null };

/** 'number' is the wire's word for a numeric parameter (the specification's example). */
function typeOf(p: DatasetParameter): PrimitiveType {
  const t = p.primitiveType as string;
  return t === 'number' ? 'float' : (p.primitiveType as PrimitiveType);
}

class ValueError extends Error {}

function toNumber(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && NUMBER.test(v.trim()) ? Number(v.trim()) : NaN;
  if (!Number.isFinite(n)) throw new ValueError('должно быть числом');
  return n;
}

/** A value (from the request or a default string) as a literal of the type; throws ValueError with the reason. */
function parameterLiteral(type: PrimitiveType, v: unknown): Literal {
  if (v === null || v === undefined) return NULL_LITERAL;
  switch (type) {
    case 'integer': {
      const n = toNumber(v);
      if (!Number.isSafeInteger(n)) throw new ValueError('должно быть целым числом');
      return { kind: 'literal', type: 'integer', value: n };
    }
    case 'float':
      return { kind: 'literal', type: 'float', value: toNumber(v) };
    case 'boolean': {
      const text = String(v).trim().toLowerCase();
      if (v === true || text === 'true') return { kind: 'literal', type: 'boolean', value: true };
      if (v === false || text === 'false') return { kind: 'literal', type: 'boolean', value: false };
      throw new ValueError('должно быть логическим значением (true или false)');
    }
    case 'date': {
      const date = typeof v === 'string' ? normalizeDate(v.trim()) : null;
      if (!date) throw new ValueError('должно быть датой (ГГГГ-ММ-ДД)');
      return { kind: 'literal', type: 'date', value: date };
    }
    case 'datetime': {
      const text = typeof v === 'string' ? v.trim().replace(/(\.\d+)?Z?$/, '') : '';
      const date = normalizeDate(text);
      const datetime = date ? `${date} 00:00:00` : normalizeDateTime(text);
      if (!datetime) throw new ValueError('должно быть датой и временем (ГГГГ-ММ-ДД ЧЧ:ММ:СС)');
      return { kind: 'literal', type: 'datetime', value: datetime };
    }
    default:
      if (typeof v === 'object') throw new ValueError('должно быть строкой');
      return { kind: 'literal', type: 'string', value: String(v) };
  }
}

/** Orders two non-null literals of one type: numbers by value, dates and strings by their canonical text. */
function compare(a: Literal, b: Literal): number {
  if (typeof a.value === 'number' && typeof b.value === 'number') return a.value - b.value;
  return String(a.value) < String(b.value) ? -1 : String(a.value) > String(b.value) ? 1 : 0;
}

function checkDomain(p: DatasetParameter, type: PrimitiveType, lit: Literal): void {
  if (lit.type === 'null') return;
  const domain = p.domain ?? { kind: 'any' };
  const read = (s: string | undefined) => (s === undefined || s === '' ? null : parameterLiteral(type, s));
  if (domain.kind === 'list') {
    const allowed = (domain.values ?? []).map((s) => {
      try {
        return parameterLiteral(type, s);
      } catch {
        return null;
      }
    });
    if (!allowed.some((a) => a !== null && a.type !== 'null' && compare(a, lit) === 0)) {
      throw new ValueError(`должно быть одним из значений: ${(domain.values ?? []).join(', ')}`);
    }
  } else if (domain.kind === 'range') {
    let min: Literal | null = null;
    let max: Literal | null = null;
    try {
      min = read(domain.min);
      max = read(domain.max);
    } catch {
      return; // a range the dataset wrote wrong does not block the request; the dataset editor reports it
    }
    if (min && min.type !== 'null' && compare(lit, min) < 0)
      throw new ValueError(`должно быть не меньше ${domain.min}`);
    if (max && max.type !== 'null' && compare(lit, max) > 0)
      throw new ValueError(`должно быть не больше ${domain.max}`);
    const step = domain.step && NUMBER.test(domain.step.trim()) ? Number(domain.step) : 0;
    if (step > 0 && typeof lit.value === 'number') {
      const base = min && typeof min.value === 'number' ? min.value : 0;
      const steps = (lit.value - base) / step;
      if (Math.abs(steps - Math.round(steps)) > 1e-9)
        throw new ValueError(`должно отстоять от ${base} на целое число шагов ${domain.step}`);
    }
  }
}

/**
 * Every parameter's value for one query: the request's substitution where given (checked), else the default.
 * Unknown names and bad values are reported together, each under `parameters.<name>`.
 */
export function resolveParameters(parameters: DatasetParameter[], values: ParameterValues = {}): Map<string, Literal> {
  const byName = new Map(parameters.map((p) => [p.name, p]));
  const errors: FieldErrors = {};
  for (const name of Object.keys(values)) {
    if (!byName.has(name)) errors[`parameters.${name}`] = `Параметр не найден в датасете: ${name}`;
  }
  const out = new Map<string, Literal>();
  for (const p of parameters) {
    const type = typeOf(p);
    if (Object.prototype.hasOwnProperty.call(values, p.name)) {
      try {
        const lit = parameterLiteral(type, values[p.name]);
        checkDomain(p, type, lit);
        out.set(p.name, lit);
      } catch (e) {
        if (!(e instanceof ValueError)) throw e;
        errors[`parameters.${p.name}`] = `Значение параметра ${p.name} ${e.message}`;
      }
      continue;
    }
    let lit: Literal = NULL_LITERAL;
    try {
      // An empty default of a non-string parameter means "no value".
      if (!(p.defaultValue === '' && type !== 'string')) lit = parameterLiteral(type, p.defaultValue);
    } catch {
      lit = NULL_LITERAL;
    }
    out.set(p.name, lit);
  }
  if (Object.keys(errors).length) throw invalid(errors);
  return out;
}

/** The declared type a parameter reads as in expressions. */
export function parameterType(p: DatasetParameter): PrimitiveType {
  return typeOf(p);
}
