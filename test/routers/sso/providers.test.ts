import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoProviders } from '../../../db/schema/sso';
import type { Deleted } from '../../support/rest';
import type { groupMappingsOutput, providerView, testOutput } from '../../../routers/sso/schemas';
import { SSO_MESSAGES } from '../../../server/sso/messages';
import { useTestApp } from '../../support/app';
import { createGroup, createUser, login, loginAdmin, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { idpMetadataXml } from './saml-idp';

/* Provider setup over REST: CRUD, secrets encrypted and masked, validation, group mappings, the provider test. */

type Provider = z.output<typeof providerView>;
type TestResult = z.output<typeof testOutput>;
type Mappings = z.output<typeof groupMappingsOutput>;

const { t, api } = useTestApp();
let admin: string;
let userToken: string;
let metadataServer: http.Server;
let metadataBase: string;
const SECRET = 'very-secret-client-secret-42';

const oidcBody = (extra: Record<string, unknown> = {}) => ({
  name: uniq('oidc'),
  kind: 'oidc',
  settings: { issuer_url: 'https://idp.example.test/realms/main', client_id: 'platform', client_secret: SECRET },
  ...extra,
});

beforeAll(async () => {
  admin = await loginAdmin(api);
  const user = await createUser(t.deps);
  userToken = await login(api, user.username, user.password);
  ok(await api.put('/api/settings', { base_url: 'https://bi.example.test/' }, admin));
  metadataServer = http.createServer((req, res) => {
    if (req.url === '/metadata') res.writeHead(200, { 'content-type': 'application/xml' }).end(idpMetadataXml());
    else if (req.url === '/garbage') res.writeHead(200).end('<html>not metadata</html>');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => metadataServer.listen(0, '127.0.0.1', resolve));
  metadataBase = `http://127.0.0.1:${(metadataServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => metadataServer?.close(() => resolve()));
});

describe('provider CRUD', () => {
  it('creates, reads, lists, updates and deletes an OIDC provider; the secret is encrypted and never shown', async () => {
    const group = await createGroup(t.deps);
    const created = ok<Provider>(
      await api.post('/api/sso-providers', oidcBody({ default_group_ids: [group.id] }), admin),
    );
    expect(created).toMatchObject({
      kind: 'oidc',
      enabled: true,
      username_claim: 'preferred_username',
      auto_create_users: false,
      default_group_ids: [group.id],
      callback_url: `https://bi.example.test/api/auth/sso/${created.id}/callback`,
      settings: {
        issuer_url: 'https://idp.example.test/realms/main',
        client_id: 'platform',
        scopes: ['openid', 'profile', 'email'],
        groups_claim: 'groups',
        client_secret_set: true,
      },
    });
    const [row] = await t.deps.db.select().from(ssoProviders).where(eq(ssoProviders.id, created.id));
    expect(row.secrets).not.toContain(SECRET);
    expect(JSON.stringify(row.settings)).not.toContain(SECRET);

    for (const res of [
      await api.get(`/api/sso-providers/${created.id}`, admin),
      await api.get('/api/sso-providers', admin),
    ]) {
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
    }
    expect(ok<Provider[]>(await api.get('/api/sso-providers', admin)).map((p) => p.id)).toContain(created.id);

    // Omitted secret: unchanged; other settings replaced.
    const renamed = ok<Provider>(
      await api.put(
        `/api/sso-providers/${created.id}`,
        { name: uniq('renamed'), settings: { issuer_url: 'https://idp2.example.test', client_id: 'other' } },
        admin,
      ),
    );
    expect(renamed.settings).toMatchObject({
      issuer_url: 'https://idp2.example.test',
      client_id: 'other',
      client_secret_set: true,
    });
    expect(renamed.default_group_ids).toEqual([group.id]);
    const cleared = ok<Provider>(
      await api.put(
        `/api/sso-providers/${created.id}`,
        { settings: { issuer_url: 'https://idp2.example.test', client_id: 'other', client_secret: null } },
        admin,
      ),
    );
    expect(cleared.settings.client_secret_set).toBe(false);

    expect(ok<Deleted>(await api.delete(`/api/sso-providers/${created.id}`, admin))).toEqual({
      id: created.id,
      deleted: true,
    });
    expect((await api.get(`/api/sso-providers/${created.id}`, admin)).status).toBe(404);
    expect((await api.delete(`/api/sso-providers/${created.id}`, admin)).status).toBe(404);
  });

  it('a SAML provider gets an SP certificate, not shown in its settings', async () => {
    const created = ok<Provider>(
      await api.post(
        '/api/sso-providers',
        { name: uniq('saml'), kind: 'saml', settings: { idp_metadata_xml: idpMetadataXml() } },
        admin,
      ),
    );
    expect(created.username_claim).toBe('nameID');
    expect(created.settings).not.toHaveProperty('sp_certificate');
    expect(JSON.stringify(created)).not.toMatch(/PRIVATE KEY/);
    const [row] = await t.deps.db.select().from(ssoProviders).where(eq(ssoProviders.id, created.id));
    expect((row.settings as { sp_certificate: string }).sp_certificate).toMatch(/BEGIN CERTIFICATE/);
    expect(row.secrets).not.toMatch(/PRIVATE KEY/);

    // Updating the IdP settings keeps the SP certificate (the IdP pins it).
    ok(
      await api.put(
        `/api/sso-providers/${created.id}`,
        { settings: { idp_metadata_url: `${metadataBase}/metadata` } },
        admin,
      ),
    );
    const [after] = await t.deps.db.select().from(ssoProviders).where(eq(ssoProviders.id, created.id));
    expect((after.settings as { sp_certificate: string }).sp_certificate).toBe(
      (row.settings as { sp_certificate: string }).sp_certificate,
    );
  });

  it('only system administrators; no token is 401', async () => {
    expect((await api.get('/api/sso-providers', userToken)).status).toBe(403);
    expect((await api.post('/api/sso-providers', oidcBody(), userToken)).status).toBe(403);
    expect((await api.get('/api/sso-providers')).status).toBe(401);
    expect((await api.post('/api/sso-providers', oidcBody())).status).toBe(401);
  });
});

describe('provider validation', () => {
  it('names what an OIDC provider lacks', async () => {
    const res = await api.post('/api/sso-providers', { name: uniq('x'), kind: 'oidc', settings: {} }, admin);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'settings.issuerUrl': 'must not be blank',
      'settings.clientId': 'must not be blank',
    });
  });

  it('names what a SAML provider lacks or gets wrong', async () => {
    const none = await api.post('/api/sso-providers', { name: uniq('x'), kind: 'saml', settings: {} }, admin);
    expect(failure(none).errors).toHaveProperty('settings.idpMetadataUrl');
    const broken = await api.post(
      '/api/sso-providers',
      { name: uniq('x'), kind: 'saml', settings: { idp_metadata_xml: '<EntityDescriptor entityID="x"/>' } },
      admin,
    );
    expect(broken.status).toBe(422);
    expect(failure(broken).errors).toHaveProperty('settings.idpMetadataXml');
  });

  it('SAML metadata over plain http only from the loopback interface, as OIDC issuers', async () => {
    const insecure = { 'settings.idpMetadataUrl': SSO_MESSAGES.insecureIdpUrl };
    const create = (url: string) =>
      api.post('/api/sso-providers', { name: uniq('x'), kind: 'saml', settings: { idp_metadata_url: url } }, admin);
    for (const url of ['http://idp.example.com/metadata', 'http://10.0.0.5/metadata', 'HTTP://IDP.EXAMPLE.COM/m']) {
      const res = await create(url);
      expect(res.status, url).toBe(422);
      expect(failure(res).errors).toEqual(insecure);
    }
    for (const url of ['https://idp.example.com/metadata', `${metadataBase}/metadata`, 'http://localhost:1/m']) {
      expect((await create(url)).status, url).toBe(200);
    }
    const p = ok<Provider>(await create(`${metadataBase}/metadata`));
    const update = await api.put(
      `/api/sso-providers/${p.id}`,
      { settings: { idp_metadata_url: 'http://idp.example.com/metadata' } },
      admin,
    );
    expect(update.status).toBe(422);
    expect(failure(update).errors).toEqual(insecure);

    // A stored address from before the rule is refused when fetched, not fetched.
    const [row] = await t.deps.db.select().from(ssoProviders).where(eq(ssoProviders.id, p.id));
    await t.deps.db
      .update(ssoProviders)
      .set({ settings: { ...(row.settings as object), idp_metadata_url: 'http://idp.example.com/metadata' } })
      .where(eq(ssoProviders.id, p.id));
    const answer = ok<TestResult>(await api.post(`/api/sso-providers/${p.id}/test`, undefined, admin));
    expect(answer).toEqual({ ok: false, message: SSO_MESSAGES.insecureIdpUrl });
  });

  it('unknown kind, unknown group, unknown settings key, duplicate name, kind change', async () => {
    expect((await api.post('/api/sso-providers', { ...oidcBody(), kind: 'ldap' }, admin)).status).toBe(422);
    const unknownGroup = await api.post('/api/sso-providers', oidcBody({ default_group_ids: [2147483000] }), admin);
    expect(failure(unknownGroup).errors).toEqual({ 'defaultGroupIds[0]': SSO_MESSAGES.groupNotFound(2147483000) });
    const extra = oidcBody();
    (extra.settings as Record<string, unknown>).password = 'x';
    expect((await api.post('/api/sso-providers', extra, admin)).status).toBe(422);

    const first = ok<Provider>(await api.post('/api/sso-providers', oidcBody(), admin));
    const dup = await api.post('/api/sso-providers', oidcBody({ name: first.name.toUpperCase() }), admin);
    expect(dup.status).toBe(400);
    expect(failure(dup).message).toBe(SSO_MESSAGES.duplicateName(first.name.toUpperCase()));
    const kind = await api.put(`/api/sso-providers/${first.id}`, { kind: 'saml' }, admin);
    expect(failure(kind).message).toBe(SSO_MESSAGES.kindChange);
    expect((await api.put('/api/sso-providers/2147483000', { enabled: false }, admin)).status).toBe(404);
  });
});

describe('group mappings', () => {
  it('replaces the whole list and reads it back', async () => {
    const p = ok<Provider>(await api.post('/api/sso-providers', oidcBody(), admin));
    const [a, b] = [await createGroup(t.deps), await createGroup(t.deps)];
    expect(ok<Mappings>(await api.get(`/api/sso-providers/${p.id}/group-mappings`, admin))).toEqual({ mappings: [] });
    const set = ok<Mappings>(
      await api.put(
        `/api/sso-providers/${p.id}/group-mappings`,
        {
          mappings: [
            { idp_group: 'b-team', group_id: b.id },
            { idp_group: 'a-team', group_id: a.id },
            { idp_group: 'a-team', group_id: b.id },
          ],
        },
        admin,
      ),
    );
    expect(set.mappings).toEqual([
      { idp_group: 'a-team', group_id: Math.min(a.id, b.id) },
      { idp_group: 'a-team', group_id: Math.max(a.id, b.id) },
      { idp_group: 'b-team', group_id: b.id },
    ]);
    const replaced = ok<Mappings>(
      await api.put(
        `/api/sso-providers/${p.id}/group-mappings`,
        { mappings: [{ idp_group: 'c', group_id: a.id }] },
        admin,
      ),
    );
    expect(replaced.mappings).toEqual([{ idp_group: 'c', group_id: a.id }]);

    const bad = await api.put(
      `/api/sso-providers/${p.id}/group-mappings`,
      {
        mappings: [
          { idp_group: 'x', group_id: a.id },
          { idp_group: 'y', group_id: 2147483000 },
        ],
      },
      admin,
    );
    expect(failure(bad).errors).toEqual({ 'mappings[1].groupId': SSO_MESSAGES.groupNotFound(2147483000) });
    expect(ok<Mappings>(await api.get(`/api/sso-providers/${p.id}/group-mappings`, admin)).mappings).toHaveLength(1);
    expect((await api.get('/api/sso-providers/2147483000/group-mappings', admin)).status).toBe(404);
    expect((await api.get(`/api/sso-providers/${p.id}/group-mappings`, userToken)).status).toBe(403);
  });
});

describe('provider test', () => {
  it('SAML: the IdP metadata is fetched and checked', async () => {
    const good = ok<Provider>(
      await api.post(
        '/api/sso-providers',
        { name: uniq('saml'), kind: 'saml', settings: { idp_metadata_url: `${metadataBase}/metadata` } },
        admin,
      ),
    );
    const res = ok<TestResult>(await api.post(`/api/sso-providers/${good.id}/test`, undefined, admin));
    expect(res.ok).toBe(true);
    expect(res.message).toContain('https://idp.test/saml');

    for (const path of ['/garbage', '/missing']) {
      const bad = ok<Provider>(
        await api.post(
          '/api/sso-providers',
          { name: uniq('saml'), kind: 'saml', settings: { idp_metadata_url: `${metadataBase}${path}` } },
          admin,
        ),
      );
      const answer = ok<TestResult>(await api.post(`/api/sso-providers/${bad.id}/test`, undefined, admin));
      expect(answer.ok, path).toBe(false);
      expect(answer.message.length).toBeGreaterThan(0);
    }
  });

  it('OIDC: an issuer without a discovery document answers ok false with the reason', async () => {
    const p = ok<Provider>(
      await api.post(
        '/api/sso-providers',
        oidcBody({ settings: { issuer_url: `${metadataBase}/no-such-issuer`, client_id: 'platform' } }),
        admin,
      ),
    );
    const answer = ok<TestResult>(await api.post(`/api/sso-providers/${p.id}/test`, undefined, admin));
    expect(answer.ok).toBe(false);
    expect(answer.message).toMatch(/^Провайдер удостоверений недоступен: /);
    expect((await api.post('/api/sso-providers/2147483000/test', undefined, admin)).status).toBe(404);
  });
});
