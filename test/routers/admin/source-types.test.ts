import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { failure } from '../../support/rest';
import { createSysadmin, createUser, login } from '../../support/factories';
import type { z } from 'zod';
import type { listSourceTypesOutput, sourceTypeDetails } from '../../../routers/admin/schemas';
import { SERVERS, ok, upload } from '../data-sources/helpers';

type SourceTypes = z.output<typeof listSourceTypesOutput>;
type SourceTypeDetails = z.output<typeof sourceTypeDetails>;

const { t, api } = useTestApp();
let admin: string;
let user: string;

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  const u = await createUser(t.deps);
  user = await login(api, u.username, u.password);
});

describe('GET /api/source-types', () => {
  it('lists the kinds with names, switches, default ports and drivers', async () => {
    const list = ok<SourceTypes>(await api.get('/api/source-types', user));
    expect(list.content.map((k) => k.type)).toEqual(['postgresql', 'mysql', 'clickhouse', 'file']);
    expect(list.content[2]).toEqual({
      type: 'clickhouse',
      name: 'ClickHouse',
      enabled: true,
      default_port: 9000,
      http_port: 8123,
      driver_id: 'clickhouse-client',
      supports: { ssl: true, ssh: true, initial_sql: true },
    });
    expect(list.content[0]).toMatchObject({ default_port: 5432, http_port: null });
    expect(list.content[3]).toMatchObject({
      name: 'Файл',
      default_port: null,
      supports: { ssl: false, ssh: false, initial_sql: false },
    });
    expect((await api.get('/api/source-types')).status).toBe(401);
  });
});

describe('GET /api/source-types/{type}', () => {
  it('describes the settings form of a kind, ports pre-filled, secrets marked', async () => {
    const form = ok<SourceTypeDetails>(await api.get('/api/source-types/mysql', user));
    const byName = Object.fromEntries(form.fields.map((f) => [f.name, f]));
    expect(Object.keys(byName)).toEqual([
      'host',
      'port',
      'username',
      'password',
      'db',
      'ssl',
      'use_ssh',
      'ssh_tunnel',
      'initial_sql',
    ]);
    expect(byName.host).toMatchObject({ type: 'string', required: true });
    expect(byName.port).toMatchObject({ type: 'integer', default: 3306 });
    expect(byName.password).toMatchObject({ type: 'password', secret: true });
    expect(byName.ssh_tunnel.fields!.map((f) => f.name)).toEqual([
      'host',
      'port',
      'username',
      'password',
      'private_key',
      'passphrase',
    ]);
    expect(byName.ssl.fields!.find((f) => f.name === 'key')).toMatchObject({ secret: true });
    const ch = ok<SourceTypeDetails>(await api.get('/api/source-types/clickhouse', user));
    expect(ch.fields.find((f) => f.name === 'http_port')).toMatchObject({ type: 'integer', default: 8123 });
    const file = ok<SourceTypeDetails>(await api.get('/api/source-types/file', user));
    expect(file.fields.map((f) => f.name)).toEqual(['file', 'sheet', 'has_header', 'delimiter']);
    const unknown = await api.get('/api/source-types/oracle', user);
    expect(unknown.status).toBe(404);
    expect(failure(unknown).message).toBe('Тип источника не найден: oracle');
  });
});

describe('PUT /api/source-types/{type}', () => {
  it('lets a system administrator switch a kind off: creating, checking and uploading it is then refused', async () => {
    expect((await api.put('/api/source-types/mysql', { enabled: false }, user)).status).toBe(403);
    expect((await api.put('/api/source-types/mysql', { enabled: false })).status).toBe(401);
    expect((await api.put('/api/source-types/oracle', { enabled: false }, admin)).status).toBe(404);
    expect((await api.put('/api/source-types/mysql', { enabled: 'no' }, admin)).status).toBe(422);
    expect(failure(await api.put('/api/source-types/mysql', { driver_id: 'odbc' }, admin)).errors).toEqual({
      driverId: 'must be a driver installed for mysql: mysql2',
    });

    const off = ok<SourceTypeDetails>(await api.put('/api/source-types/mysql', { enabled: false }, admin));
    expect(off).toMatchObject({ type: 'mysql', enabled: false, driver_id: 'mysql2' });
    expect(
      ok<SourceTypes>(await api.get('/api/source-types', user)).content.find((k) => k.type === 'mysql')!.enabled,
    ).toBe(false);
    const create = await api.post('/api/data-source', { name: 'm', type: 'mysql', settings: SERVERS.mysql() }, user);
    expect(create.status).toBe(400);
    expect(failure(create).message).toBe('Тип источника «MySQL / MariaDB» отключён администратором платформы');
    expect((await api.post('/api/data-source/check', { type: 'mysql', settings: SERVERS.mysql() }, user)).status).toBe(
      400,
    );
    // other kinds are untouched, and a switch keeps the other setting
    expect(
      (await api.post('/api/data-source', { name: 'p', type: 'postgresql', settings: SERVERS.postgresql() }, user))
        .status,
    ).toBe(200);

    ok<SourceTypeDetails>(await api.put('/api/source-types/file', { enabled: false }, admin));
    const uploaded = await upload(api, 'POST', '/api/files', user, { name: 'a.csv', content: 'a\n1\n' });
    expect(uploaded.status).toBe(400);

    const on = ok<SourceTypeDetails>(
      await api.put('/api/source-types/mysql', { enabled: true, driver_id: null }, admin),
    );
    expect(on).toMatchObject({ enabled: true, driver_id: 'mysql2' });
    expect(ok<SourceTypeDetails>(await api.get('/api/source-types/file', user)).enabled).toBe(false);
    expect(
      (await api.post('/api/data-source', { name: 'm', type: 'mysql', settings: SERVERS.mysql() }, user)).status,
    ).toBe(200);
  });
});
