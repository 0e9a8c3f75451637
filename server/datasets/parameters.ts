import type { PrimitiveType } from '../../adapters/sources';
import { normalizeDate, normalizeDateTime } from '../query/expr/literals';
import { MSG } from './messages';
import type { DatasetField, DatasetParameter } from '../query/compile/dataset-model';
import { checkName, lower, type Fail, type Path } from './schema-paths';
import type { ParameterType, SchemaInput } from './schema-types';

/* Parameters of the schema: names, the declared type, and values that must read as that type. */

/** `number` parameters are floats to the engine and to formulas. */
export const parameterPrimitiveType = (t: ParameterType): PrimitiveType => (t === 'number' ? 'float' : t);

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The problem with a parameter value written as a string, or null when it reads as the parameter's type. */
export function parameterValueProblem(type: ParameterType, value: string): string | null {
  const v = value.trim();
  switch (type) {
    case 'number':
    case 'float':
      return NUMBER.test(v) && Number.isFinite(Number(v)) ? null : 'must be a number';
    case 'integer':
      return /^[+-]?\d+$/.test(v) && Number.isSafeInteger(Number(v)) ? null : 'must be an integer';
    case 'boolean':
      return v === 'true' || v === 'false' ? null : 'must be true or false';
    case 'date':
      return normalizeDate(v) ? null : 'must be a date (YYYY-MM-DD)';
    case 'datetime':
      return normalizeDate(v) || normalizeDateTime(v) ? null : 'must be a date and time (YYYY-MM-DD HH:MM:SS)';
    case 'string':
      return null;
  }
}

/** A saved parameter with the type its author declared (`number` is kept as declared; the engine reads float). */
export type ResolvedParameter = DatasetParameter & { declaredType: ParameterType };

export function resolveParameters(input: SchemaInput, fields: DatasetField[], fail: Fail): ResolvedParameter[] {
  const calculated = new Set(fields.filter((f) => f.kind === 'calculated').map((f) => lower(f.name)));
  const names = new Set<string>();
  return input.parameters.map((p, i) => {
    const at = (...rest: Path): Path => ['parameters', i, ...rest];
    const name = p.name.trim();
    checkName(name, at('name'), fail);
    if (names.has(lower(name))) fail(at('name'), MSG.duplicateName);
    else if (calculated.has(lower(name))) fail(at('name'), MSG.parameterNameTaken);
    names.add(lower(name));

    const type = p.primitive_type;
    const defaultValue = p.default_value ?? '';
    if (defaultValue !== '') {
      const problem = parameterValueProblem(type, defaultValue);
      if (problem) fail(at('default_value'), problem);
    }
    const domain = p.domain ?? { kind: 'any' as const };
    if (domain.kind === 'list') {
      if (!domain.values || domain.values.length === 0) fail(at('domain', 'values'), 'must not be empty');
      domain.values?.forEach((v, k) => {
        const problem = parameterValueProblem(type, v);
        if (problem) fail(at('domain', 'values', k), problem);
      });
    } else if (domain.kind === 'range') {
      if (type === 'string' || type === 'boolean') fail(at('domain', 'kind'), MSG.rangeType(type));
      else {
        for (const key of ['min', 'max', 'step'] as const) {
          const v = domain[key];
          if (v === undefined || v === '') continue;
          // The step of a date range is a number of days.
          const problem = parameterValueProblem(
            key === 'step' && (type === 'date' || type === 'datetime') ? 'number' : type,
            v,
          );
          if (problem) fail(at('domain', key), problem);
        }
      }
    }
    return {
      id: p.id,
      name,
      primitiveType: parameterPrimitiveType(type),
      declaredType: type,
      defaultValue,
      domain: normalizeDomain(domain),
      order: p.order ?? i,
    };
  });
}

function normalizeDomain(d: DatasetParameter['domain']): DatasetParameter['domain'] {
  if (d.kind === 'list') return { kind: 'list', values: d.values ?? [] };
  if (d.kind === 'range') {
    return {
      kind: 'range',
      ...(d.min !== undefined && { min: d.min }),
      ...(d.max !== undefined && { max: d.max }),
      ...(d.step !== undefined && { step: d.step }),
    };
  }
  return { kind: 'any' };
}
