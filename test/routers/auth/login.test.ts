import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { TEST_ADMIN } from '../../support/constants';
import { createUser, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type { loginOutput } from '../../../routers/auth/schemas';

type Login = z.output<typeof loginOutput>;

const { t, api } = useTestApp();

describe('POST /api/auth/login', () => {
  it('logs the seeded administrator in with a 900 s bearer session', async () => {
    const res = await api.post('/api/auth/login', { username: TEST_ADMIN.username, password: TEST_ADMIN.password });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(ok<Login>(res)).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(ok<Login>(res).token.split('.')).toHaveLength(3);
    expect(ok<Login>(res).refresh_token).toMatch(/^rt_/);
    const me = await api.get('/api/settings', ok<Login>(res).token);
    expect(me.status).toBe(200);
  });

  it('treats the username case-insensitively and refuses wrong passwords and unknown users alike', async () => {
    const u = await createUser(t.deps);
    const ok = await api.post('/api/auth/login', { username: u.username.toUpperCase(), password: u.password });
    expect(ok.status).toBe(200);
    const wrong = await api.post('/api/auth/login', { username: u.username, password: 'nope-12345' });
    const unknown = await api.post('/api/auth/login', { username: uniq('ghost'), password: 'nope-12345' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(failure(wrong).message).toBe(failure(unknown).message);
  });

  it('throttles repeated failures for one username and address with 429, without locking other addresses', async () => {
    const u = await createUser(t.deps);
    for (let i = 0; i < 5; i++) {
      expect((await api.post('/api/auth/login', { username: u.username, password: `bad-${i}-pass` })).status).toBe(401);
    }
    const blocked = await api.post('/api/auth/login', { username: u.username, password: u.password });
    expect(blocked.status).toBe(429);
    expect(failure(blocked).code).toBe(429);
    expect(blocked.headers['retry-after']).toBe('60');
    const otherAddress = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      remoteAddress: '127.0.0.77',
      payload: { username: u.username, password: u.password },
    });
    expect(otherAddress.statusCode).toBe(200);
  });
});

describe('tokens', () => {
  it('rotates refresh tokens: a used refresh token is refused afterwards', async () => {
    const u = await createUser(t.deps);
    const first = await api.post('/api/auth/login', { username: u.username, password: u.password });
    const r1 = ok<Login>(first).refresh_token;
    const second = await api.post('/api/auth/refresh', { refresh_token: r1 });
    expect(second.status).toBe(200);
    expect(ok<Login>(second)).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(ok<Login>(second).refresh_token).not.toBe(r1);
    const again = await api.post('/api/auth/refresh', { refresh_token: r1 });
    expect(again.status).toBe(401);
    expect((await api.post('/api/auth/refresh', { refresh_token: 'rt_garbage' })).status).toBe(401);
  });

  it('logout revokes every refresh token of the user', async () => {
    const u = await createUser(t.deps);
    const a = ok<Login>(await api.post('/api/auth/login', { username: u.username, password: u.password }));
    const b = ok<Login>(await api.post('/api/auth/login', { username: u.username, password: u.password }));
    const out = await api.post('/api/auth/logout', undefined, a.token);
    expect(out.status).toBe(200);
    expect((await api.post('/api/auth/refresh', { refresh_token: a.refresh_token })).status).toBe(401);
    expect((await api.post('/api/auth/refresh', { refresh_token: b.refresh_token })).status).toBe(401);
    expect((await api.post('/api/auth/logout')).status).toBe(401);
  });

  it('answers 401 for missing, garbage, badly signed and expired tokens', async () => {
    const u = await createUser(t.deps);
    expect((await api.get('/api/settings')).status).toBe(401);
    expect((await api.get('/api/settings', 'garbage')).status).toBe(401);
    expect((await api.call('GET', '/api/settings', { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    const forged = await new SignJWT({ grp: [t.deps.systemGroups.platformAdmins] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(u.id))
      .setIssuer('analytics-platform')
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode('not-the-installation-key-not-the-installation-key'));
    expect((await api.get('/api/settings', forged)).status).toBe(401);
    const expired = await new SignJWT({ grp: [] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(u.id))
      .setIssuer('analytics-platform')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 2000)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 1000)
      .sign(t.deps.signingKey);
    const res = await api.get('/api/settings', expired);
    expect(res.status).toBe(401);
    expect(failure(res).message).toBe('Срок действия токена истёк');
  });
});
