import { describe, expect, it } from 'vitest';
import { passwordChecks } from '../../../server/auth/passwords';
import { useTestApp } from '../../support/app';
import type { ErrorEnvelope } from '../../support/rest';
import { createUser } from '../../support/factories';

type ErrorBody = ErrorEnvelope;

const { t, api } = useTestApp();

const FIRED = 100;

describe('POST /api/auth/login under concurrency', () => {
  it(`lets at most 5 of ${FIRED} concurrent wrong passwords reach the password hash; the rest are 429 with Retry-After`, async () => {
    const u = await createUser(t.deps);
    const before = passwordChecks.count;
    const answers = await Promise.all(
      Array.from({ length: FIRED }, (_, i) =>
        api.post('/api/auth/login', { username: u.username, password: `wrong-${i}-pass` }),
      ),
    );
    const evaluated = passwordChecks.count - before;
    const statuses = answers.map((a) => a.status);
    // The figure the hardening report asks for.
    console.info(`concurrent wrong logins: ${FIRED} fired, ${evaluated} evaluated`);
    expect(evaluated).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 401)).toHaveLength(evaluated);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(FIRED - evaluated);
    for (const r of refused) {
      expect(r.headers['retry-after']).toBe('60');
      expect((r.body as ErrorBody).error.message).toBe('Слишком много неудачных попыток входа, повторите через минуту');
    }
  });

  it('counts concurrent attempts with unknown usernames the same way', async () => {
    const before = passwordChecks.count;
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        api.post('/api/auth/login', { username: 'nobody-by-this-name', password: 'wrong-pass-1' }),
      ),
    );
    expect(passwordChecks.count - before).toBeLessThanOrEqual(5);
    expect(answers.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(25);
  });

  it('a successful login clears the failures of its username and address', async () => {
    const u = await createUser(t.deps);
    for (let i = 0; i < 4; i++) {
      expect((await api.post('/api/auth/login', { username: u.username, password: `bad-${i}-pass` })).status).toBe(401);
    }
    expect((await api.post('/api/auth/login', { username: u.username, password: u.password })).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      expect((await api.post('/api/auth/login', { username: u.username, password: `bad-${i}-again` })).status).toBe(
        401,
      );
    }
    expect((await api.post('/api/auth/login', { username: u.username, password: u.password })).status).toBe(429);
  });

  it('guards PUT /api/users/me/password the same way: concurrent guesses of the old password reach the hash at most 5 times', async () => {
    const u = await createUser(t.deps);
    const session = await api.post('/api/auth/login', { username: u.username, password: u.password });
    const token = (session.body as { data: { token: string } }).data.token;
    const before = passwordChecks.count;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        api.put('/api/users/me/password', { old_password: `Guess-${i}-pass`, new_password: 'Another-pass-2' }, token),
      ),
    );
    const evaluated = passwordChecks.count - before;
    expect(evaluated).toBeLessThanOrEqual(5);
    expect(answers.filter((a) => a.status === 400)).toHaveLength(evaluated);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(30 - evaluated);
  });
});
