import { describe, expect, it } from 'vitest';

describe('runtime', () => {
  it('runs on the pinned Node 24 (node_modules/.bin/node), not the system Node', () => {
    expect(Number(process.versions.node.split('.')[0])).toBe(24);
  });
});
