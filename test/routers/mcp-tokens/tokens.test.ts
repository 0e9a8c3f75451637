import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { addToGroup, createSysadmin, createUser, login, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type {
  createTokenOutput,
  listTokensOutput,
  tokenSettings,
  tokenView,
} from '../../../routers/mcp-tokens/schemas';
import { groups } from '../../../db/schema/groups';

type TokenPage = z.output<typeof listTokensOutput>;
type TokenView = z.output<typeof tokenView>;
type NewToken = z.output<typeof createTokenOutput>;
type TokenSettings = z.output<typeof tokenSettings>;

const DISABLED = 'Выпуск и работа MCP-токенов отключены администратором платформы';
const { t, api } = useTestApp();
let admin: string;

const enable = (over: Record<string, unknown> = {}) =>
  api.put(
    '/api/mcp-tokens/settings',
    { enabled: true, allowed_account_types: ['local', 'sso', 'service'], access_group_id: null, ...over },
    admin,
  );

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
});

describe('API tokens', () => {
  it('refuses to issue while the administrator switch is off (the default)', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const settings = await api.get('/api/mcp-tokens/settings', token);
    expect(ok<TokenSettings>(settings).enabled).toBe(false);
    const res = await api.post('/api/mcp-tokens', { name: 'ci' }, token);
    expect(res.status).toBe(403);
    expect(failure(res).message).toBe(DISABLED);
  });

  it('only a system administrator turns the switch', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    expect(
      (
        await api.put(
          '/api/mcp-tokens/settings',
          { enabled: true, allowed_account_types: ['local'], access_group_id: null },
          token,
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await api.put(
          '/api/mcp-tokens/settings',
          { enabled: true, allowed_account_types: ['local'], access_group_id: 999999 },
          admin,
        )
      ).status,
    ).toBe(422);
    expect((await enable()).status).toBe(200);
  });

  it('issues a prefixed token shown once, usable on every REST method as its owner', async () => {
    await enable();
    const u = await createUser(t.deps);
    const session = await login(api, u.username, u.password);
    const issued = await api.post('/api/mcp-tokens', { name: 'ноутбук', description: 'для скриптов' }, session);
    expect(issued.status).toBe(200);
    const secret: string = ok<NewToken>(issued).token;
    expect(secret).toMatch(/^apt_[A-Za-z0-9_-]{40,}$/);
    expect(ok<NewToken>(issued).status).toBe('active');
    const list = await api.get('/api/mcp-tokens', session);
    expect(ok<TokenPage>(list).page).toMatchObject({ number: 0, total_elements: 1, total_pages: 1 });
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const viaToken = await api.get('/api/mcp-tokens', secret);
    expect(viaToken.status).toBe(200);
    expect(ok<TokenPage>(viaToken).content[0].id).toBe(ok<NewToken>(issued).id);
    // acts with the owner's rights: not an administrator
    expect((await api.put('/api/settings', { instance_name: 'x' }, secret)).status).toBe(403);
  });

  it('suspends, activates and revokes', async () => {
    await enable();
    const u = await createUser(t.deps);
    const session = await login(api, u.username, u.password);
    const issued = ok<NewToken>(await api.post('/api/mcp-tokens', { name: 'x' }, session));
    const suspended = await api.post(`/api/mcp-tokens/${issued.id}/suspend`, undefined, session);
    expect(ok<TokenView>(suspended).status).toBe('suspended');
    expect((await api.get('/api/dictionary', issued.token)).status).toBe(401);
    expect(ok<TokenView>(await api.post(`/api/mcp-tokens/${issued.id}/activate`, undefined, session)).status).toBe(
      'active',
    );
    expect((await api.get('/api/dictionary', issued.token)).status).toBe(200);
    const revoked = await api.delete(`/api/mcp-tokens/${issued.id}`, session);
    expect(ok<TokenView>(revoked).status).toBe('revoked');
    expect((await api.get('/api/dictionary', issued.token)).status).toBe(401);
    expect((await api.post(`/api/mcp-tokens/${issued.id}/activate`, undefined, session)).status).toBe(400);
  });

  it("hides other users' tokens (404) but lets a system administrator list and revoke them", async () => {
    await enable();
    const owner = await createUser(t.deps);
    const other = await createUser(t.deps);
    const ownerSession = await login(api, owner.username, owner.password);
    const otherSession = await login(api, other.username, other.password);
    const issued = ok<NewToken>(await api.post('/api/mcp-tokens', { name: 'x' }, ownerSession));
    expect((await api.post(`/api/mcp-tokens/${issued.id}/suspend`, undefined, otherSession)).status).toBe(404);
    expect((await api.delete(`/api/mcp-tokens/${issued.id}`, otherSession)).status).toBe(404);
    expect((await api.get(`/api/mcp-tokens?userId=${owner.id}`, otherSession)).status).toBe(403);
    const adminList = await api.get(`/api/mcp-tokens?userId=${owner.id}`, admin);
    expect(ok<TokenPage>(adminList).content.map((x) => x.id)).toEqual([issued.id]);
    expect(ok<TokenView>(await api.delete(`/api/mcp-tokens/${issued.id}`, admin)).status).toBe('revoked');
  });

  it('requires the allowed account type and the access group, for issue and for use', async () => {
    const [g] = await t.deps.db
      .insert(groups)
      .values({ name: uniq('mcp') })
      .returning();
    await enable({ access_group_id: g.id });
    const u = await createUser(t.deps);
    const outside = await login(api, u.username, u.password);
    expect(failure(await api.post('/api/mcp-tokens', { name: 'x' }, outside)).message).toBe(DISABLED);
    await addToGroup(t.deps, u.id, g.id);
    const inside = await login(api, u.username, u.password);
    const issued = ok<NewToken>(await api.post('/api/mcp-tokens', { name: 'x' }, inside));
    expect((await api.get('/api/dictionary', issued.token)).status).toBe(200);
    await enable({ allowed_account_types: ['service'], access_group_id: g.id });
    const refused = await api.get('/api/dictionary', issued.token);
    expect(refused.status).toBe(403);
    expect(failure(refused).message).toBe(DISABLED);
    await enable({ enabled: false });
    expect((await api.get('/api/dictionary', issued.token)).status).toBe(403);
    await enable();
    expect((await api.get('/api/dictionary', issued.token)).status).toBe(200);
  });

  it('validates the issue body', async () => {
    await enable();
    const u = await createUser(t.deps);
    const session = await login(api, u.username, u.password);
    const res = await api.post('/api/mcp-tokens', { name: '', description: 5 }, session);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ name: 'must not be blank', description: 'must be a string' });
    expect((await api.post('/api/mcp-tokens', { name: 'x' })).status).toBe(401);
  });
});
