import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { shareLinks } from '../../../db/schema/share-links';
import { createSecretBox } from '../../../server/secrets/secret-box';
import { useTestApp } from '../../support/app';
import { failure, ok } from '../../support/rest';
import { postDashboard } from '../dashboards/world';
import {
  createShareWorld,
  issueLink,
  viewer,
  type ShareLink,
  type ShareLinkList,
  type ShareWorld,
} from '../public-link/world';

/*
 * Share-link management over REST: GET/POST /api/dashboard/{id}/share-links, PUT/DELETE .../{linkId} and
 * POST .../{linkId}/suspend, /activate, /rotate; the transitions of the specification's table and who may make them.
 */

const { t, api } = useTestApp();
let w: ShareWorld;
const v = viewer(api);

beforeAll(async () => {
  w = await createShareWorld(t, api);
});
afterAll(() => w?.dispose());

const linkPath = (link: ShareLink, suffix = '') => `${w.linksPath}/${link.link_id}${suffix}`;
const list = async (token = w.owner) => ok<ShareLinkList>(await api.get(w.linksPath, token)).content;

describe('POST and GET /api/dashboard/{id}/share-links', () => {
  it('issues a link with a 256-bit token shown in url, stored only hashed (and sealed), listed without the token', async () => {
    const link = await issueLink(api, w, { name: 'Партнёры' });
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(link.url).toBe(`/s/${link.token}`);
    expect(link).toMatchObject({ name: 'Партнёры', status: 'active', password_protected: false, expires_at: null });
    const [row] = await t.deps.db.select().from(shareLinks).where(eq(shareLinks.id, link.link_id));
    expect(row.tokenHash).toBe(createHash('sha256').update(link.token!).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(link.token);
    // The viewer finds a link by the hash only. The sealed copy (AES-256-GCM under the installation's secrets key,
    // as source credentials are) is what lets the list show the url: the database alone yields no address, the
    // database together with the secrets key yields the live ones.
    expect(t.deps.secretBox.open(row.tokenSealed)).toBe(link.token);
    expect(() => createSecretBox(randomBytes(32)).open(row.tokenSealed)).toThrow();
    const listed = (await list()).find((l) => l.link_id === link.link_id)!;
    expect(listed.url).toBe(link.url);
    expect(listed.token).toBeUndefined();
    expect(listed.owner_id).toBe(w.cast.users.editor.id);
  });

  it("url: under the installation's base address once one is set (PUT /api/settings)", async () => {
    ok(await api.put('/api/settings', { base_url: 'https://bi.example.org/' }, w.cast.tokens.sysadmin));
    try {
      const link = await issueLink(api, w);
      expect(link.url).toBe(`https://bi.example.org/s/${link.token}`);
      expect((await list()).find((l) => l.link_id === link.link_id)!.url).toBe(link.url);
    } finally {
      ok(await api.put('/api/settings', { base_url: null }, w.cast.tokens.sysadmin));
    }
    expect((await issueLink(api, w)).url).toMatch(/^\/s\//);
  });

  it('password and expiry: password_protected, expires_at; an expiry in the past is a 422 on expiresAt', async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const link = await issueLink(api, w, { password: 'секрет-123', expires_at: expires });
    expect(link).toMatchObject({ password_protected: true, expires_at: expires });
    const [row] = await t.deps.db.select().from(shareLinks).where(eq(shareLinks.id, link.link_id));
    expect(row.passwordHash).toMatch(/^\$argon2/);
    const past = await api.post(w.linksPath, { name: 'x', expires_at: '2020-01-01T00:00:00Z' }, w.owner);
    expect(past.status).toBe(422);
    expect(failure(past).errors).toHaveProperty('expiresAt');
    const blank = await api.post(w.linksPath, { name: ' ' }, w.owner);
    expect(failure(blank).errors).toEqual({ name: 'must not be blank' });
  });

  it('only the dashboard owner manages links: Наблюдатель 403, a non-member 404, no token 401', async () => {
    expect((await api.post(w.linksPath, { name: 'x' }, w.cast.tokens.viewer)).status).toBe(403);
    expect((await api.get(w.linksPath, w.cast.tokens.viewer)).status).toBe(403);
    expect((await api.post(w.linksPath, { name: 'x' }, w.cast.tokens.plain)).status).toBe(404);
    expect((await api.get(w.linksPath, w.cast.tokens.plain)).status).toBe(404);
    expect((await api.get(w.linksPath)).status).toBe(401);
    // The workspace's Администратор is an owner too.
    expect((await api.get(w.linksPath, w.cast.tokens.wsAdmin)).status).toBe(200);
    expect((await api.get('/api/dashboard/2147483647/share-links', w.owner)).status).toBe(404);
  });
});

describe('transitions: suspend, activate, rotate, DELETE', () => {
  it('active -> suspended -> active; suspending twice or activating an active link changes nothing', async () => {
    const link = await issueLink(api, w);
    const token = link.token!;
    const suspended = ok<ShareLink>(await api.post(linkPath(link, '/suspend'), undefined, w.owner));
    expect(suspended.status).toBe('suspended');
    expect(ok<ShareLink>(await api.post(linkPath(link, '/suspend'), undefined, w.owner)).status).toBe('suspended');
    expect(ok(await v.state(token))).toMatchObject({ status: 'suspended', dashboard_name: null });
    expect((await v.dashboard(token)).status).toBe(403);
    const active = ok<ShareLink>(await api.post(linkPath(link, '/activate'), undefined, w.owner));
    expect(active.status).toBe('active');
    expect(ok<ShareLink>(await api.post(linkPath(link, '/activate'), undefined, w.owner)).status).toBe('active');
    expect((await v.dashboard(token)).status).toBe(200);
  });

  it('rotate: a new address, the old one answers as an unknown token at once', async () => {
    const link = await issueLink(api, w);
    const rotated = ok<ShareLink>(await api.post(linkPath(link, '/rotate'), undefined, w.owner));
    expect(rotated.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.token).not.toBe(link.token);
    expect(rotated.url).toBe(`/s/${rotated.token}`);
    expect(rotated.link_id).toBe(link.link_id);
    const old = await v.dashboard(link.token!);
    expect(old.status).toBe(404);
    const sameAs = (res: { status: number; body: { error: { code: number; message: string } } }) => [
      res.status,
      res.body.error.code,
      res.body.error.message,
    ];
    expect(sameAs(await v.state(link.token!))).toEqual(sameAs(await v.state('A'.repeat(43))));
    expect((await v.dashboard(rotated.token!)).status).toBe(200);
    expect((await list()).find((l) => l.link_id === link.link_id)!.url).toBe(rotated.url);
  });

  it('a suspended link can be rotated and stays suspended', async () => {
    const link = await issueLink(api, w);
    await api.post(linkPath(link, '/suspend'), undefined, w.owner);
    const rotated = ok<ShareLink>(await api.post(linkPath(link, '/rotate'), undefined, w.owner));
    expect(rotated.status).toBe('suspended');
    expect(ok(await v.state(rotated.token!))).toMatchObject({ status: 'suspended' });
  });

  it('DELETE revokes for good: the token answers as unknown, the link leaves the list, every action is then 404', async () => {
    const link = await issueLink(api, w);
    const revoked = ok<ShareLink>(await api.delete(linkPath(link), w.owner));
    expect(revoked).toMatchObject({ status: 'revoked', url: null });
    const dead = await v.state(link.token!);
    expect(dead.status).toBe(404);
    expect(dead.body.error.message).toBe(failure(await v.state('B'.repeat(43))).message);
    expect((await list()).some((l) => l.link_id === link.link_id)).toBe(false);
    for (const suffix of ['/suspend', '/activate', '/rotate'])
      expect((await api.post(linkPath(link, suffix), undefined, w.owner)).status).toBe(404);
    expect((await api.put(linkPath(link), { name: 'x' }, w.owner)).status).toBe(404);
    expect((await api.delete(linkPath(link), w.owner)).status).toBe(404);
    const [row] = await t.deps.db.select().from(shareLinks).where(eq(shareLinks.id, link.link_id));
    expect(row).toMatchObject({ status: 'revoked', tokenSealed: '' });
    expect(row.revokedAt).toBeInstanceOf(Date);
  });

  it('expiry: an active link past its expiry is expired and behaves as suspended; PUT moves the expiry back', async () => {
    const link = await issueLink(api, w);
    await t.deps.db
      .update(shareLinks)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(shareLinks.id, link.link_id));
    await api.post(linkPath(link, '/suspend'), undefined, w.owner); // any change bumps this node's caches
    await api.post(linkPath(link, '/activate'), undefined, w.owner);
    expect((await list()).find((l) => l.link_id === link.link_id)!.status).toBe('expired');
    expect(ok(await v.state(link.token!))).toMatchObject({ status: 'expired', dashboard_name: null });
    const blocked = await v.dashboard(link.token!);
    expect(blocked.status).toBe(403);
    expect(failure(blocked).message).toBe('Срок действия ссылки истёк');
    const renewed = ok<ShareLink>(await api.put(linkPath(link), { name: 'n', expires_at: null }, w.owner));
    expect(renewed).toMatchObject({ status: 'active', expires_at: null, name: 'n' });
    expect((await v.dashboard(link.token!)).status).toBe(200);
  });

  it('PUT: name, password set and removed (null), an omitted password is kept', async () => {
    const link = await issueLink(api, w);
    const withPassword = ok<ShareLink>(await api.put(linkPath(link), { name: 'a', password: 'пароль-1' }, w.owner));
    expect(withPassword.password_protected).toBe(true);
    const kept = ok<ShareLink>(await api.put(linkPath(link), { name: 'b' }, w.owner));
    expect(kept).toMatchObject({ name: 'b', password_protected: true });
    const removed = ok<ShareLink>(await api.put(linkPath(link), { name: 'c', password: null }, w.owner));
    expect(removed.password_protected).toBe(false);
    expect((await v.dashboard(link.token!)).status).toBe(200);
  });

  it('a link of another dashboard is not found under this one; a Наблюдатель cannot act on a link (403)', async () => {
    const link = await issueLink(api, w);
    const other = `/api/dashboard/${w.otherDashboardId}/share-links/${link.link_id}/suspend`;
    expect((await api.post(other, undefined, w.owner)).status).toBe(404);
    expect((await api.post(linkPath(link, '/suspend'), undefined, w.cast.tokens.viewer)).status).toBe(403);
    expect((await api.delete(linkPath(link), w.cast.tokens.plain)).status).toBe(404);
    expect((await api.post(`${w.linksPath}/2147483647/rotate`, undefined, w.owner)).status).toBe(404);
    expect((await api.post(`${w.linksPath}/99999999999/rotate`, undefined, w.owner)).status).toBe(422);
  });

  it('deleting the dashboard revokes its links: their tokens answer as unknown ones', async () => {
    const dashboard = await postDashboard(api, w.owner, w.cast.workspaceId);
    const link = ok<ShareLink>(await api.post(`/api/dashboard/${dashboard.id}/share-links`, { name: 'x' }, w.owner));
    expect((await v.state(link.token!)).status).toBe(200);
    ok(await api.delete(`/api/dashboard/${dashboard.id}`, w.owner));
    expect((await v.state(link.token!)).status).toBe(404);
    expect((await v.dashboard(link.token!)).status).toBe(404);
  });
});
