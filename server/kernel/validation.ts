import { z } from 'zod';
import type { $ZodIssue } from 'zod/v4/core';
import type { FieldErrors } from './errors';

/**
 * Field messages follow the reference platform (Bean Validation wording), so that clients written against it keep
 * working: «must not be blank», «must not be null», ...
 */
z.config({
  customError: (iss) => {
    switch (iss.code) {
      case 'invalid_type':
        if (iss.input === undefined || iss.input === null)
          return iss.expected === 'string' ? 'must not be blank' : 'must not be null';
        return `must be ${article(iss.expected)}`;
      case 'too_small':
        if (iss.origin === 'string' && Number(iss.minimum) === 1) return 'must not be blank';
        if (iss.origin === 'string' || iss.origin === 'array' || iss.origin === 'set')
          return `size must be at least ${String(iss.minimum)}`;
        return `must be greater than ${iss.inclusive ? 'or equal to ' : ''}${String(iss.minimum)}`;
      case 'too_big':
        if (iss.origin === 'string' || iss.origin === 'array' || iss.origin === 'set')
          return `size must be at most ${String(iss.maximum)}`;
        return `must be less than ${iss.inclusive ? 'or equal to ' : ''}${String(iss.maximum)}`;
      case 'invalid_value':
        return `must be one of: ${iss.values.map(String).join(', ')}`;
      case 'invalid_format':
        return iss.format === 'email' ? 'must be a well-formed email address' : `must match format ${iss.format}`;
      case 'not_multiple_of':
        return `must be a multiple of ${String(iss.divisor)}`;
      case 'unrecognized_keys':
        return 'unknown field';
      default:
        return undefined;
    }
  },
});

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

const camel = (segment: string) => segment.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** `['parameters', 0, 'primitive_type']` -> `parameters[0].primitiveType`, the specification's form. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += (out ? '.' : '') + camel(String(seg));
  }
  return out;
}

export function fieldErrorsFromIssues(issues: readonly $ZodIssue[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) errors[formatFieldPath([...issue.path, key])] ??= 'unknown field';
      continue;
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // Report the branch that got furthest rather than a bare «invalid input».
      const best = [...issue.errors].sort((a, b) => maxDepth(b) - maxDepth(a))[0];
      Object.assign(errors, fieldErrorsFromIssues(best.map((i) => ({ ...i, path: [...issue.path, ...i.path] }))));
      continue;
    }
    errors[formatFieldPath(issue.path)] ??= issue.message;
  }
  return errors;
}

const maxDepth = (issues: readonly $ZodIssue[]) => Math.max(0, ...issues.map((i) => i.path.length));

/*
 * The wire primitives every input schema is built from (routers/common.ts hands them to the routers). They live here,
 * beside the message table, because server-side list and paging schemas use them too.
 */

/** NUL, or half of a UTF-16 surrogate pair: PostgreSQL cannot store either, so they are refused at the edge. */
const INVALID_TEXT = /[\u0000]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const INVALID_TEXT_MESSAGE = 'must not contain NUL or invalid characters';
export const isWireText = (s: string) => !INVALID_TEXT.test(s);

/** Any text the API accepts: a string without NUL or lone surrogates (422 with the field path otherwise). */
export const wireString = () => z.string().refine(isWireText, { error: INVALID_TEXT_MESSAGE });

/** A required string that must contain something other than white space. */
export const nonBlank = (max = 255) => wireString().trim().min(1).max(max);

/**
 * An id of a stored row (PostgreSQL `serial`, int4). The cap matters: a larger number would reach the database and
 * fail there as a 500 instead of a 422 here.
 */
export const entityId = () => z.number().int().positive().max(2_147_483_647);

/** A signed whole number that fits an int4 column (temporary negative ids, orders). */
export const int4 = () => z.number().int().min(-2_147_483_648).max(2_147_483_647);

/** Where in a free-form value (JSON settings, filter values) a string or key with invalid text sits, if anywhere. */
function invalidTextPath(value: unknown, path: (string | number)[] = []): (string | number)[] | undefined {
  if (typeof value === 'string') return isWireText(value) ? undefined : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = invalidTextPath(value[i], [...path, i]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (!isWireText(k)) return [...path, k];
      const found = invalidTextPath(v, [...path, k]);
      if (found) return found;
    }
  }
  return undefined;
}

/** A free-form JSON value whose strings and keys are all wire text (stored as jsonb, which refuses the others). */
export const wireJson = () =>
  z.unknown().superRefine((value, ctx) => {
    const at = invalidTextPath(value);
    if (at) ctx.addIssue({ code: 'custom', path: at, message: INVALID_TEXT_MESSAGE });
  });
