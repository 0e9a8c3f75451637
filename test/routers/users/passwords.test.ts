import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createSysadmin, createUser, enableApiTokens, issueApiToken, login, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type { loginOutput } from '../../../routers/auth/schemas';
import type { meOutput, passwordChangedOutput, resetPasswordOutput } from '../../../routers/users/schemas';

type Login = z.output<typeof loginOutput>;
type Me = z.output<typeof meOutput>;
type PasswordChanged = z.output<typeof passwordChangedOutput>;
type PasswordReset = z.output<typeof resetPasswordOutput>;

const { t, api } = useTestApp();
let adminToken: string;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  adminToken = await login(api, admin.username, admin.password);
  await enableApiTokens(api, adminToken);
});

const loginFull = async (username: string, password: string) =>
  ok<Login>(await api.post('/api/auth/login', { username, password }));

describe('PUT /api/users/me/password', () => {
  it('changes the password, revokes refresh tokens and keeps the current session token', async () => {
    const u = await createUser(t.deps);
    const session = await loginFull(u.username, u.password);
    const other = await loginFull(u.username, u.password);
    const newPassword = `Nw-${uniq('p')}-7`;
    const res = await api.put(
      '/api/users/me/password',
      { old_password: u.password, new_password: newPassword },
      session.token,
    );
    expect(res.status).toBe(200);
    expect(ok<PasswordChanged>(res)).toEqual({ changed: true });
    expect((await api.post('/api/auth/refresh', { refresh_token: other.refresh_token })).status).toBe(401);
    expect((await api.post('/api/auth/refresh', { refresh_token: session.refresh_token })).status).toBe(401);
    expect((await api.post('/api/auth/login', { username: u.username, password: u.password })).status).toBe(401);
    expect((await api.post('/api/auth/login', { username: u.username, password: newPassword })).status).toBe(200);
    expect((await api.get('/api/users/me', session.token)).status).toBe(200);
  });

  it('refuses a wrong old password with 400 and a weak or unchanged new one with 422 on newPassword', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const wrong = await api.put(
      '/api/users/me/password',
      { old_password: 'Wrong-pass-1', new_password: 'Another-pass-2' },
      token,
    );
    expect(wrong.status).toBe(400);
    expect(failure(wrong).message).toBe('Текущий пароль указан неверно');
    const weak = await api.put('/api/users/me/password', { old_password: u.password, new_password: 'short' }, token);
    expect(weak.status).toBe(422);
    expect(failure(weak).errors).toEqual({ newPassword: 'Пароль должен содержать не менее 8 символов' });
    const asName = await api.put(
      '/api/users/me/password',
      { old_password: u.password, new_password: `${u.username}` },
      token,
    );
    expect(asName.status).toBe(422);
    const same = await api.put('/api/users/me/password', { old_password: u.password, new_password: u.password }, token);
    expect(same.status).toBe(422);
    expect(failure(same).errors).toEqual({ newPassword: 'Новый пароль должен отличаться от текущего' });
    const blank = await api.put('/api/users/me/password', { old_password: '', new_password: '' }, token);
    expect(blank.status).toBe(422);
    expect(failure(blank).errors).toEqual({ oldPassword: 'must not be blank', newPassword: 'must not be blank' });
  });

  it('throttles guessing of the old password like the login does', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        (
          await api.put(
            '/api/users/me/password',
            { old_password: `Guess-${i}-pass`, new_password: 'Another-pass-2' },
            token,
          )
        ).status,
      );
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
  });
});

describe('PUT /api/users/{id}/password', () => {
  it('sets a new password, marks it to be changed by default and revokes refresh tokens', async () => {
    const u = await createUser(t.deps);
    const session = await loginFull(u.username, u.password);
    const newPassword = `Rs-${uniq('p')}-3`;
    const res = await api.put(`/api/users/${u.id}/password`, { new_password: newPassword }, adminToken);
    expect(res.status).toBe(200);
    expect(ok<PasswordReset>(res)).toEqual({ id: u.id, must_change_password: true });
    expect((await api.post('/api/auth/refresh', { refresh_token: session.refresh_token })).status).toBe(401);
    const relogin = await login(api, u.username, newPassword);
    expect(ok<Me>(await api.get('/api/users/me', relogin)).must_change_password).toBe(true);
    const kept = await api.put(
      `/api/users/${u.id}/password`,
      { new_password: `Rs-${uniq('p')}-4`, must_change: false },
      adminToken,
    );
    expect(ok<PasswordReset>(kept).must_change_password).toBe(false);
  });

  it('answers weak passwords with 422 and unknown users with 404', async () => {
    const u = await createUser(t.deps);
    const weak = await api.put(`/api/users/${u.id}/password`, { new_password: 'abcdefgh' }, adminToken);
    expect(weak.status).toBe(422);
    expect(failure(weak).errors).toEqual({ newPassword: 'Пароль должен содержать буквы и цифры' });
    expect((await api.put('/api/users/987654/password', { new_password: 'Good-pass-123' }, adminToken)).status).toBe(
      404,
    );
  });
});

describe('credentials of deactivated and deleted accounts', () => {
  it('deactivation revokes API tokens for good; deletion makes them fail at once', async () => {
    const u = await createUser(t.deps);
    const apiToken = await issueApiToken(api, await login(api, u.username, u.password));
    expect((await api.get('/api/users/me', apiToken)).status).toBe(200);
    expect((await api.put(`/api/users/${u.id}`, { active: false }, adminToken)).status).toBe(200);
    expect((await api.get('/api/users/me', apiToken)).status).toBe(401);
    expect((await api.put(`/api/users/${u.id}`, { active: true }, adminToken)).status).toBe(200);
    expect((await api.get('/api/users/me', apiToken)).status).toBe(401);

    const v = await createUser(t.deps);
    const vToken = await issueApiToken(api, await login(api, v.username, v.password));
    expect((await api.get('/api/users/me', vToken)).status).toBe(200);
    expect((await api.delete(`/api/users/${v.id}`, adminToken)).status).toBe(200);
    expect((await api.get('/api/users/me', vToken)).status).toBe(401);
  });
});
