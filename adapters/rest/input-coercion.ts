import type { z } from 'zod';

/**
 * Query strings and path segments arrive as text. They are converted only where the procedure's input schema asks
 * for a number, a boolean or an array, so that a wrong value still reaches zod and gets its 422 field message.
 */
type FieldKind = 'number' | 'boolean' | 'string' | 'array' | 'other';

export interface InputPlan {
  /** The input is void: the procedure takes nothing. */
  isVoid: boolean;
  /** Top-level fields of an object input with their kinds; empty for non-object inputs. */
  fields: Map<string, { kind: FieldKind; element: FieldKind }>;
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}

const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const d = defOf(s);
    if (
      ['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional'].includes(d.type) &&
      d.innerType
    )
      s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return s;
  }
}

function kindOf(schema: z.ZodType): FieldKind {
  const t = defOf(unwrap(schema)).type;
  if (t === 'number' || t === 'int' || t === 'bigint') return 'number';
  if (t === 'boolean') return 'boolean';
  if (t === 'string' || t === 'enum' || t === 'literal') return 'string';
  if (t === 'array') return 'array';
  return 'other';
}

export function planInput(schema: z.ZodType | undefined): InputPlan {
  const fields: InputPlan['fields'] = new Map();
  if (!schema) return { isVoid: true, fields };
  const base = unwrap(schema);
  const d = defOf(base);
  if (d.type === 'void' || d.type === 'undefined') return { isVoid: true, fields };
  if (d.type === 'object' && d.shape) {
    for (const [key, field] of Object.entries(d.shape)) {
      const kind = kindOf(field);
      const element = kind === 'array' ? kindOf(defOf(unwrap(field)).element!) : 'other';
      fields.set(key, { kind, element });
    }
  }
  return { isVoid: false, fields };
}

/**
 * Decimal notation only: `Number()` would also read `0x10`, `0b1` and `1e3` as ids. Text that is not a plain decimal
 * stays text, and text too large for the field stays a (finite) number: either way zod answers 422, never the
 * database.
 */
const DECIMAL = /^-?\d+(\.\d+)?$/;

function convertScalar(raw: string, kind: FieldKind): unknown {
  if (kind === 'number') {
    const trimmed = raw.trim();
    return DECIMAL.test(trimmed) && Number.isFinite(Number(trimmed)) ? Number(trimmed) : raw;
  }
  if (kind === 'boolean') {
    if (raw === 'true') return true;
    if (raw === 'false') return false;
    return raw;
  }
  return raw;
}

/** Converts one textual parameter (query or path) according to the plan; unknown names are dropped. */
export function convertParam(
  plan: InputPlan,
  name: string,
  raw: string | string[],
): { known: boolean; value: unknown } {
  const field = plan.fields.get(name);
  if (!field) return { known: false, value: undefined };
  if (field.kind === 'array') {
    const items = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => v.split(',')).filter((v) => v !== '');
    return { known: true, value: items.map((v) => convertScalar(v, field.element)) };
  }
  const single = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return { known: true, value: convertScalar(single, field.kind) };
}
