import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../../server/kernel/map-bounded';

describe('mapBounded', () => {
  it('runs at most `limit` at once and answers in the order of the items', async () => {
    let running = 0;
    let most = 0;
    const out = await mapBounded([30, 5, 20, 1, 10, 2, 15], 3, async (ms) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return ms * 2;
    });
    expect(out).toEqual([60, 10, 40, 2, 20, 4, 30]);
    expect(most).toBe(3);
  });

  it('answers an empty list at once', async () => {
    expect(await mapBounded([], 4, async () => 1)).toEqual([]);
  });
});
