import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldErrorsFromIssues, formatFieldPath, nonBlank } from '../../../server/kernel/validation';

describe('field paths and messages', () => {
  it('formats paths as the specification does', () => {
    expect(formatFieldPath(['parameters', 0, 'primitive_type'])).toBe('parameters[0].primitiveType');
    expect(formatFieldPath(['objects', 2, 'fields', 10, 'sort_by_field_id'])).toBe(
      'objects[2].fields[10].sortByFieldId',
    );
    expect(formatFieldPath(['name'])).toBe('name');
  });

  it('says «must not be blank» for blank or missing required strings', () => {
    const schema = z.object({ parameters: z.array(z.object({ name: nonBlank(), primitive_type: nonBlank() })) });
    const r = schema.safeParse({ parameters: [{ name: 'p', primitive_type: '  ' }, { name: 'q' }] });
    expect(r.success).toBe(false);
    expect(fieldErrorsFromIssues(r.error!.issues)).toEqual({
      'parameters[0].primitiveType': 'must not be blank',
      'parameters[1].primitiveType': 'must not be blank',
    });
  });

  it('says «must not be null» for missing non-string fields', () => {
    const r = z.object({ workspace_id: z.number() }).safeParse({});
    expect(fieldErrorsFromIssues(r.error!.issues)).toEqual({ workspaceId: 'must not be null' });
  });
});
