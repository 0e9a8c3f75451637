import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pool } from 'pg';
import { useTestApp } from '../../support/app';
import { enableApiTokens, issueApiToken } from '../../support/factories';
import { ok, type RestResponse } from '../../support/rest';
import { createPeerApp, type PeerApp } from '../app/peer-app';
import { createShareWorld, issueLink, type ShareWorld } from '../../routers/public-link/world';
import type { TtlCache } from '../../../server/kernel/ttl-cache';
import { readCachesChanged } from '../../../server/kernel/read-epoch';

/*
 * Two nodes (the test app A and a peer B) on one database: a revocation made through A is honoured by B as soon as
 * the NOTIFY sent on commit reaches B's LISTEN connection, long before B's cache TTLs (2-5 s) would let it go. B's
 * caches are warmed before every revocation, so without the bus B would still answer from them.
 */

const { t, api } = useTestApp({}, { timeout: 60_000 });
let peer: PeerApp;
let w: ShareWorld;
const latencies: Record<string, number[]> = {};

beforeAll(async () => {
  w = await createShareWorld(t, api);
  peer = await createPeerApp(t);
  await Promise.all([t.deps.cacheBus.ready, peer.deps.cacheBus.ready]);
}, 60_000);

afterAll(async () => {
  await peer?.close();
  await w?.dispose();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls B until `honoured` says the change shows there; the time since A's write returned, or fails after 2 s. */
async function untilHonoured(call: () => Promise<RestResponse>, honoured: (status: number) => boolean) {
  const since = performance.now();
  for (;;) {
    const res = await call();
    if (honoured(res.status)) return performance.now() - since;
    if (performance.now() - since > 2_000) throw new Error(`not honoured on B within 2 s (last ${res.status})`);
    await sleep(1);
  }
}

/** One revocation through A, timed on B, then its undoing, awaited on B. */
async function revocation(
  kind: string,
  onB: () => Promise<RestResponse>,
  revoke: () => Promise<unknown>,
  restore: () => Promise<unknown>,
) {
  expect((await onB()).status).toBe(200); // B's caches hold the allowing answer
  await revoke();
  (latencies[kind] ??= []).push(await untilHonoured(onB, (s) => s !== 200));
  await restore();
  await untilHonoured(onB, (s) => s === 200);
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

describe('cache changes cross nodes through NOTIFY/LISTEN', () => {
  it('a membership removal, a user deactivation, an API token suspension, a share link suspension and a setting change on A are honoured on B within 200 ms', async () => {
    const sysadmin = w.cast.tokens.sysadmin!;
    const wsAdmin = w.cast.tokens.wsAdmin!;
    const viewer = w.cast.users.viewer;
    const plain = w.cast.users.plain;
    await enableApiTokens(api, sysadmin);
    const apiToken = await issueApiToken(api, w.cast.tokens.manager!);
    const [tokenRow] = ok<{ content: { id: number }[] }>(
      await api.get('/api/mcp-tokens', w.cast.tokens.manager),
    ).content;
    const link = await issueLink(api, w);
    const members = `/api/workspaces/${w.cast.workspaceId}/members`;
    const memberIdOf = async () =>
      ok<{ content: { member_id: number; user_id: number | null }[] }>(
        await api.get(members, wsAdmin, { size: '100' }),
      ).content.find((m) => m.user_id === viewer.id)!.member_id;

    for (let i = 0; i < 10; i++) {
      // Workspace member removed (read epoch): the viewer's widget read on B is refused.
      await revocation(
        'membership',
        () => peer.api.post(`/api/widget/${w.widgets.kpi}/data`, {}, w.cast.tokens.viewer),
        async () => expect((await api.delete(`${members}/${await memberIdOf()}`, wsAdmin)).status).toBe(200),
        async () =>
          expect((await api.post(members, { user_id: viewer.id, role: 'Наблюдатель' }, wsAdmin)).status).toBe(200),
      );
      // User deactivated (auth.userStatus evicted by id, a number that stays a number through JSON).
      await revocation(
        'user',
        () => peer.api.get('/api/users/me', w.cast.tokens.plain),
        () => api.put(`/api/users/${plain.id}`, { active: false }, sysadmin),
        () => api.put(`/api/users/${plain.id}`, { active: true }, sysadmin),
      );
      // API token suspended (mcpTokens.identities evicted by hash).
      await revocation(
        'apiToken',
        () => peer.api.get('/api/users/me', apiToken),
        () => api.post(`/api/mcp-tokens/${tokenRow.id}/suspend`, undefined, w.cast.tokens.manager),
        () => api.post(`/api/mcp-tokens/${tokenRow.id}/activate`, undefined, w.cast.tokens.manager),
      );
      // Share link suspended (read epoch): its public dashboard on B is gone.
      await revocation(
        'shareLink',
        () => peer.api.call('GET', `/api/public/link/${link.token!}/dashboard`),
        () => api.post(`${w.linksPath}/${link.link_id}/suspend`, undefined, w.owner),
        () => api.post(`${w.linksPath}/${link.link_id}/activate`, undefined, w.owner),
      );
      // API tokens switched off installation-wide (the settings cache's key): the token is refused on B.
      const settings = (enabled: boolean) => ({
        enabled,
        allowed_account_types: ['local', 'sso', 'service'],
        access_group_id: null,
      });
      await revocation(
        'setting',
        () => peer.api.get('/api/users/me', apiToken),
        () => api.put('/api/mcp-tokens/settings', settings(false), sysadmin),
        () => api.put('/api/mcp-tokens/settings', settings(true), sysadmin),
      );
    }

    const all = Object.values(latencies).flat();
    const line = (name: string, xs: number[]) =>
      `${name}: n=${xs.length} p50=${percentile(xs, 50).toFixed(1)} ms p99=${percentile(xs, 99).toFixed(1)} ms`;
    console.log(
      ['revocation latency on the other node:', ...Object.entries(latencies).map(([k, xs]) => line(k, xs))]
        .concat(line('all', all))
        .join('\n  '),
    );
    expect(all).toHaveLength(50);
    expect(percentile(all, 99)).toBeLessThan(200);
    expect(peer.deps.cacheBus.applied).toBeGreaterThan(0);
  }, 120_000);

  it('many epoch bumps in one tick are one message, which B applies once; A ignores its own', async () => {
    const [appliedA, appliedB, epochB] = [
      t.deps.cacheBus.applied,
      peer.deps.cacheBus.applied,
      peer.deps.caches.readEpoch.value,
    ];
    for (let i = 0; i < 100; i++) readCachesChanged(t.deps);
    const since = performance.now();
    while (peer.deps.cacheBus.applied === appliedB) {
      if (performance.now() - since > 2_000) throw new Error('B heard nothing');
      await sleep(2);
    }
    await sleep(50);
    expect(peer.deps.cacheBus.applied).toBe(appliedB + 1);
    expect(peer.deps.caches.readEpoch.value).toBe(epochB + 1);
    expect(t.deps.cacheBus.applied).toBe(appliedA);
  });

  it('B forgets every read decision when its LISTEN connection drops, reconnects, and hears the next change', async () => {
    const plain = w.cast.users.plain;
    expect((await peer.api.get('/api/users/me', w.cast.tokens.plain)).status).toBe(200);
    const statuses = peer.deps.caches.madeNamed('auth.userStatus') as TtlCache<number, unknown>;
    expect(statuses.get(plain.id)).toBeDefined();
    const epoch = peer.deps.caches.readEpoch.value;
    const pid = peer.deps.cacheBus.listenerPid!;
    const drops = peer.deps.cacheBus.drops;

    const pool = (t.deps.db as unknown as { $client: Pool }).$client;
    await pool.query('SELECT pg_terminate_backend($1)', [pid]);
    const since = performance.now();
    while (peer.deps.cacheBus.drops === drops) {
      if (performance.now() - since > 2_000) throw new Error('B did not notice its LISTEN connection drop');
      await sleep(5);
    }
    // Cleared at the drop: the user's status is gone and the epoch moved (epoch-keyed decisions are unreachable).
    expect(statuses.get(plain.id)).toBeUndefined();
    expect(peer.deps.caches.readEpoch.value).toBeGreaterThan(epoch);

    while (peer.deps.cacheBus.listenerPid === undefined) {
      if (performance.now() - since > 5_000) throw new Error('B did not reconnect its LISTEN connection');
      await sleep(5);
    }
    expect(peer.deps.cacheBus.listenerPid).not.toBe(pid);
    console.log(`LISTEN connection back after ${(performance.now() - since).toFixed(0)} ms`);

    // The next revocation through A reaches B on the new connection.
    const sysadmin = w.cast.tokens.sysadmin!;
    await revocation(
      'afterReconnect',
      () => peer.api.get('/api/users/me', w.cast.tokens.plain),
      () => api.put(`/api/users/${plain.id}`, { active: false }, sysadmin),
      () => api.put(`/api/users/${plain.id}`, { active: true }, sysadmin),
    );
    expect(latencies.afterReconnect[0]).toBeLessThan(200);
  }, 30_000);

  it('without the bus B keeps serving its cached answer (the control: what the NOTIFY saves)', async () => {
    const plain = w.cast.users.plain;
    const sysadmin = w.cast.tokens.sysadmin!;
    await peer.deps.cacheBus.stop();
    expect((await peer.api.get('/api/users/me', w.cast.tokens.plain)).status).toBe(200);
    await api.put(`/api/users/${plain.id}`, { active: false }, sysadmin);
    await sleep(300);
    // Stale on B until the 5 s TTL: the case the bus exists for.
    expect((await peer.api.get('/api/users/me', w.cast.tokens.plain)).status).toBe(200);
    expect((await api.get('/api/users/me', w.cast.tokens.plain)).status).toBe(401);
    await api.put(`/api/users/${plain.id}`, { active: true }, sysadmin);
  }, 30_000);
});
