import { describe, expect, it } from 'vitest';
import { ExpressionError, parseExpression } from '../../../../server/query/expr';

/* Parsed trees are kept by their text and shared between requests: they must be the same answer, and unchangeable. */

describe('parseExpression cache', () => {
  it('answers the same frozen tree for the same text, which no stage can change', () => {
    const text = 'SUM([sales.amount]) / COUNT() + 1';
    const first = parseExpression(text);
    expect(parseExpression(text)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { kind: string }).kind = 'literal';
    }).toThrow(TypeError);
    // A nested node too.
    const right = (first as unknown as { right: { value: number } }).right;
    expect(() => {
      right.value = 2;
    }).toThrow(TypeError);
    expect(parseExpression(text)).toEqual(first);
  });

  it('refuses a text that does not parse every time, with the same error', () => {
    const bad = 'SUM(SUM([sales.amount]))';
    const message = (() => {
      try {
        parseExpression(bad);
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(message).toBeTruthy();
    expect(() => parseExpression(bad)).toThrow(ExpressionError);
    expect(() => parseExpression(bad)).toThrow(message!);
  });
});
