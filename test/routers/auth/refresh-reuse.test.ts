import { describe, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import type { loginOutput } from '../../../routers/auth/schemas';
import { refresh } from '../../../server/auth/login';
import { useTestApp } from '../../support/app';
import { failure, ok } from '../../support/rest';
import { createUser, type TestUser } from '../../support/factories';

type Session = z.output<typeof loginOutput>;

const { t, api } = useTestApp();

const login = async (u: TestUser): Promise<Session> => {
  const res = await api.post('/api/auth/login', { username: u.username, password: u.password });
  expect(res.status).toBe(200);
  return ok<Session>(res);
};
const refreshOver = (token: string) => api.post('/api/auth/refresh', { refresh_token: token });

describe('POST /api/auth/refresh: reuse of a rotated token', () => {
  it('revokes the whole family (the successor too) and leaves another login of the same user alive', async () => {
    const u = await createUser(t.deps);
    const a = (await login(u)).refresh_token;
    const other = (await login(u)).refresh_token;
    const rotated = await refreshOver(a);
    expect(rotated.status).toBe(200);
    const b = ok<Session>(rotated).refresh_token;

    const replay = await refreshOver(a);
    expect(replay.status).toBe(401);
    expect(failure(replay).message).toBe('Недействительный или просроченный токен обновления');
    expect((await refreshOver(b)).status).toBe(401);

    const fromOther = await refreshOver(other);
    expect(fromOther.status).toBe(200);
    expect((await refreshOver(ok<Session>(fromOther).refresh_token)).status).toBe(200);
  });

  it('reaches every later generation: a replay of the first token revokes the third', async () => {
    const u = await createUser(t.deps);
    const a = (await login(u)).refresh_token;
    const b = ok<Session>(await refreshOver(a)).refresh_token;
    const c = ok<Session>(await refreshOver(b)).refresh_token;
    expect((await refreshOver(a)).status).toBe(401);
    expect((await refreshOver(c)).status).toBe(401);
  });

  it('logs the reuse as a security warning with the user and the family', async () => {
    const u = await createUser(t.deps);
    const a = (await login(u)).refresh_token;
    await refresh(t.deps, a);
    const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
    const log = { warn: (obj: Record<string, unknown>, msg: string) => void warnings.push({ obj, msg }) };
    await expect(refresh(t.deps, a, log)).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0].obj).toMatchObject({ event: 'refresh_token_reuse', userId: u.id });
    expect(warnings[0].obj.familyId).toEqual(expect.any(String));
  });

  it('reaches the request logger on the REST path', async () => {
    const u = await createUser(t.deps);
    const a = (await login(u)).refresh_token;
    expect((await refreshOver(a)).status).toBe(200);
    // Without a configured logger fastify hands every request the same silent logger as the app's.
    const warn = vi.spyOn(t.app.log, 'warn');
    try {
      expect((await refreshOver(a)).status).toBe(401);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ event: 'refresh_token_reuse', userId: u.id }),
        expect.any(String),
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('does not treat a token revoked by logout, or an unknown one, as a reuse', async () => {
    const u = await createUser(t.deps);
    const s = await login(u);
    expect((await api.post('/api/auth/logout', undefined, s.token)).status).toBe(200);
    const warnings: unknown[] = [];
    const log = { warn: (obj: unknown) => void warnings.push(obj) };
    await expect(refresh(t.deps, s.refresh_token, log)).rejects.toMatchObject({ kind: 'unauthorized' });
    await expect(refresh(t.deps, 'rt_unknown', log)).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(warnings).toEqual([]);
  });
});
