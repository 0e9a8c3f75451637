import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../../support/app';
import { failure, type RestResponse } from '../../support/rest';
import { createPeerApp, redisEnv, type PeerApp } from './peer-app';

/*
 * With REDIS_URL the public rate limit (PUBLIC_RATE_LIMIT_PER_MINUTE per client address) is one window for all
 * nodes: two apps on one database and one Redis count the same address's calls together, with the same rules as
 * one node (a /trpc batch pays per public procedure and is refused whole, 429 with Retry-After in the envelope).
 * When Redis does not answer, each node falls back to its own window: limited still, never an error.
 */

const env = { ...redisEnv(), PUBLIC_RATE_LIMIT_PER_MINUTE: '5' };
const { t } = useTestApp(env);
let peer: PeerApp;

beforeAll(async () => {
  peer = await createPeerApp(t, env);
});
afterAll(async () => {
  await peer?.close();
});

const DEAD = 'E'.repeat(43);

/** A GET from one client address, without Authorization, through a node (0: the test app, 1: its peer, or an app). */
async function from(node: 0 | 1 | FastifyInstance, remoteAddress: string, url: string): Promise<RestResponse> {
  const app = node === 0 ? t.app : node === 1 ? peer.app : node;
  const res = await app.inject({ method: 'GET', url, remoteAddress });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

const batchOf = (n: number) =>
  `/trpc/${Array(n).fill('publicLink.get').join(',')}?batch=1&input=${encodeURIComponent(
    JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, { json: { token: 'x' } }]))),
  )}`;

describe('the public rate limit shared through Redis', () => {
  it('calls alternating two nodes meet one limit; the 429 carries Retry-After in the envelope', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await from(i % 2 === 0 ? 0 : 1, '10.1.0.1', `/api/public/link/${DEAD}`)).status);
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429, 429]);
    const limited = await from(1, '10.1.0.1', `/s/${DEAD}`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(failure(limited)).toMatchObject({ code: 429, message: 'Слишком много запросов, повторите позже' });
    // The window is kept in Redis under the app's prefix, counting the calls let through only.
    const used = await t.deps.redis!.command(1_000, (c) => c.get('public-rate:10.1.0.1'));
    expect(used).toBe('5');
    // Another address has a budget of its own.
    expect((await from(1, '10.1.0.2', `/api/public/link/${DEAD}`)).status).toBe(404);
  });

  it('a /trpc batch pays per public procedure on whichever node, and one that would pass the limit is refused whole', async () => {
    expect((await from(0, '10.1.1.1', batchOf(3))).status).toBe(404);
    // 3 spent on the first node; 3 more on the second would pass 5: refused, and nothing is counted for it.
    expect((await from(1, '10.1.1.1', batchOf(3))).status).toBe(429);
    expect((await from(1, '10.1.1.1', batchOf(2))).status).toBe(404);
    expect((await from(0, '10.1.1.1', batchOf(1))).status).toBe(429);
  });

  it('1,500 calls from one address alternating two nodes at the default limit: 1,200 pass, 300 are refused', async () => {
    const shared = redisEnv(); // a window of their own, at the default PUBLIC_RATE_LIMIT_PER_MINUTE
    const pair = [await createPeerApp(t, shared), await createPeerApp(t, shared)];
    try {
      const counts = new Map<number, number>();
      for (let batch = 0; batch < 30; batch++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            pair[i % 2].app.inject({ method: 'GET', url: `/api/public/link/${DEAD}`, remoteAddress: '10.1.2.1' }),
          ),
        );
        for (const a of answers) counts.set(a.statusCode, (counts.get(a.statusCode) ?? 0) + 1);
      }
      expect(Object.fromEntries(counts)).toEqual({ 404: 1_200, 429: 300 });
    } finally {
      for (const p of pair) await p.close();
    }
  }, 60_000);

  it('without an answer from Redis each node limits alone, with one notice, and never answers an error', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    // Nothing listens on port 1: the connection is refused at once, and again at every reconnection.
    const alone = await createPeerApp(t, {
      ...env,
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await from(alone.app, '10.1.3.1', `/api/public/link/${DEAD}`)).status);
      expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429]);
      await new Promise((r) => setTimeout(r, 500)); // a few reconnection attempts
      const notices = warn.mock.calls.filter(([m]) => String(m).startsWith('[redis]'));
      expect(notices.length).toBe(1);
      expect(String(notices[0][0])).toMatch(/unreachable/);
    } finally {
      await alone.close();
      warn.mockRestore();
    }
  });
});
