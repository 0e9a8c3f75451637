import { beforeAll, describe, expect, it } from 'vitest';
import { count, eq } from 'drizzle-orm';
import { dataSourceAccessLog, dataSources } from '../../../db/schema/data-sources';
import { closedPort, silentServer } from '../../adapters/sources/servers';
import { useTestApp } from '../../support/app';
import { failure } from '../../support/rest';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { DB_KINDS, SERVERS, createSource, ok, type CheckResult, type SourceView } from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

const check = (type: string, settings: object, token = cast.tokens.plain) =>
  api.post('/api/data-source/check', { type, settings }, token);

describe('POST /api/data-source/check', () => {
  it.each(DB_KINDS)('answers «Подключение успешно» for a reachable %s server, and saves nothing', async (kind) => {
    const [{ before }] = await t.deps.db.select({ before: count() }).from(dataSources);
    expect(ok<CheckResult>(await check(kind, SERVERS[kind]()))).toEqual({ ok: true, message: 'Подключение успешно' });
    const [{ after }] = await t.deps.db.select({ after: count() }).from(dataSources);
    expect(after).toBe(before);
  });

  it('answers ok: false with the driver text for a wrong password, an unknown database, bad initial SQL', async () => {
    const pgUser = ok<CheckResult>(
      await check('postgresql', { ...SERVERS.postgresql(), username: 'no_such_role_here' }),
    );
    expect(pgUser).toMatchObject({ ok: false, message: expect.stringContaining('no_such_role_here') });
    const myPass = ok<CheckResult>(
      await check('mysql', { ...SERVERS.mysql(), username: 'no_such_user', password: 'wrong' }),
    );
    expect(myPass).toMatchObject({ ok: false, message: expect.stringMatching(/Access denied/) });
    const chPass = ok<CheckResult>(await check('clickhouse', { ...SERVERS.clickhouse(), password: 'wrong-password' }));
    expect(chPass.ok).toBe(false);
    expect(chPass.message).toMatch(/password/i);
    expect(JSON.stringify(chPass)).not.toContain('wrong-password');
    const db = ok<CheckResult>(await check('mysql', { ...SERVERS.mysql(), db: 'no_such_db_x' }));
    expect(db).toMatchObject({ ok: false, message: expect.stringContaining('no_such_db_x') });
    const initial = ok<CheckResult>(await check('postgresql', { ...SERVERS.postgresql(), initial_sql: 'SELEC 1' }));
    expect(initial).toMatchObject({ ok: false, message: expect.stringMatching(/^Ошибка в начальном SQL/) });
  });

  it('fails fast for unreachable and silent hosts', async () => {
    const refused = ok<CheckResult>(await check('postgresql', { ...SERVERS.postgresql(), port: await closedPort() }));
    expect(refused.ok).toBe(false);
    expect(refused.message).toMatch(/^Сервер 127\.0\.0\.1:\d+ отклонил подключение$/);
    const unknownHost = ok<CheckResult>(await check('mysql', { ...SERVERS.mysql(), host: 'no-such-host.invalid' }));
    expect(unknownHost.ok).toBe(false);

    const silent = await silentServer();
    try {
      for (const kind of ['postgresql', 'clickhouse'] as const) {
        const started = Date.now();
        const settings =
          kind === 'clickhouse'
            ? { ...SERVERS.clickhouse(), http_port: silent.port }
            : { ...SERVERS.postgresql(), port: silent.port };
        const res = ok<CheckResult>(await check(kind, settings));
        expect(res.ok).toBe(false);
        expect(Date.now() - started).toBeLessThan(14_000);
      }
    } finally {
      await silent.close();
    }
  }, 40_000);

  it('validates the body and needs a token', async () => {
    expect(
      (await api.post('/api/data-source/check', { type: 'postgresql', settings: SERVERS.postgresql() })).status,
    ).toBe(401);
    const kind = await check('oracle', { host: 'x' });
    expect(kind.status).toBe(422);
    expect(failure(kind).errors!.type).toMatch(/must be one of/);
    expect(failure(await check('postgresql', { host: 'x', port: 'five' })).errors).toEqual({
      'settings.port': 'must be a number',
    });
    expect(failure(await check('postgresql', {})).errors).toEqual({ 'settings.host': 'must not be blank' });
    expect((await api.post('/api/data-source/check', {}, cast.tokens.plain)).status).toBe(422);
  });
});

describe('POST /api/data-source/{id}/check', () => {
  it('checks the saved connection for readers; overrides only for owners', async () => {
    const src = await createSource(api, cast.tokens.editor, 'mysql', { workspace_id: cast.workspaceId });
    const url = `/api/data-source/${src.id}/check`;
    expect(ok<CheckResult>(await api.post(url, undefined, cast.tokens.viewer))).toEqual({
      ok: true,
      message: 'Подключение успешно',
    });
    expect(ok<CheckResult>(await api.post(url, {}, cast.tokens.sysadmin)).ok).toBe(true);
    expect((await api.post(url, undefined, cast.tokens.plain)).status).toBe(404);
    expect((await api.post(url, undefined)).status).toBe(401);
    // a reader may not point the saved password at another server
    expect((await api.post(url, { settings: { host: 'elsewhere.example' } }, cast.tokens.viewer)).status).toBe(403);
    const over = ok<CheckResult>(await api.post(url, { settings: { db: 'no_such_db_y' } }, cast.tokens.editor));
    expect(over).toMatchObject({ ok: false, message: expect.stringContaining('no_such_db_y') });
    // the saved settings did not change
    expect(ok<SourceView>(await api.get(`/api/data-source/${src.id}`, cast.tokens.editor)).settings.db).toBe('test');
    const logged = await t.deps.db
      .select()
      .from(dataSourceAccessLog)
      .where(eq(dataSourceAccessLog.dataSourceId, src.id));
    expect(logged.filter((l) => l.action === 'read').length).toBeGreaterThanOrEqual(3);
  });

  it('reports a saved source that no longer connects', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { port: await closedPort() },
    });
    const res = ok<CheckResult>(await api.post(`/api/data-source/${src.id}/check`, undefined, cast.tokens.editor));
    expect(res.ok).toBe(false);
  });
});
