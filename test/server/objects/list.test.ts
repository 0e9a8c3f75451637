import { describe, expect, it } from 'vitest';
import { dateFromParam, dateToParam } from '../../../server/objects/list';

describe('date range parameters', () => {
  it('takes a date as its whole day (UTC) and a date-time as given; no zone means UTC', () => {
    expect(dateFromParam.parse('2026-03-01').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(dateToParam.parse('2026-03-01').toISOString()).toBe('2026-03-02T00:00:00.000Z');
    expect(dateFromParam.parse('2026-03-01T10:20:30').toISOString()).toBe('2026-03-01T10:20:30.000Z');
    expect(dateFromParam.parse('2026-03-01T10:20:30+03:00').toISOString()).toBe('2026-03-01T07:20:30.000Z');
    expect(dateToParam.parse('2026-03-01T10:20:30.5Z').toISOString()).toBe('2026-03-01T10:20:30.501Z');
  });

  it('refuses anything else', () => {
    for (const bad of ['yesterday', '2026-13-01', '01.03.2026', '2026-03-01T25:00', '']) {
      expect(dateFromParam.safeParse(bad).success, bad).toBe(false);
    }
  });
});
