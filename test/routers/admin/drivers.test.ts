import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { driverView, listDriversOutput, sourceTypeDetails } from '../../../routers/admin/schemas';
import { useTestApp } from '../../support/app';
import { createSysadmin, createUser, login, uniq } from '../../support/factories';
import { failure, ok, type Deleted, type RestResponse } from '../../support/rest';
import { upload } from '../data-sources/helpers';

/*
 * Database drivers (GET, POST, DELETE /api/admin/drivers) and picking a plugin for a source kind
 * (PUT /api/source-types/{type}): bundled connectors with their installed versions, connector plugins uploaded
 * as ES modules, checked against the connector interface, stored under DATA_DIR and loaded without a restart.
 */

type Driver = z.output<typeof driverView>;
type Drivers = z.output<typeof listDriversOutput>;
type SourceType = z.output<typeof sourceTypeDetails>;

const { t, api } = useTestApp();
let admin: string;
let user: string;

/** A plugin module implementing the connector interface; importing it bumps a counter under `marker`. */
const pluginSource = (marker: string, kind = 'postgresql') => `
globalThis[${JSON.stringify(marker)}] = (globalThis[${JSON.stringify(marker)}] ?? 0) + 1;
class EchoConnector {
  kind = '${kind}';
  dialect = '${kind}';
  constructor(settings) { this.settings = settings; }
  async check() {}
  async listSchemas() { return ['public']; }
  async listTables() { return []; }
  async listColumns() { return []; }
  async query() { return { columns: [], rows: [], truncated: false }; }
  async *stream() {}
  async openStream() { return { columns: [], close: async () => {}, async *[Symbol.asyncIterator]() {} }; }
  async close() {}
}
export function createConnector(settings, options) { return new EchoConnector(settings); }
`;

const send = (content: string, fields: Record<string, string> = {}, token = admin, name = 'plugin.mjs') =>
  upload(
    api,
    'POST',
    '/api/admin/drivers',
    token,
    { name, content },
    {
      source_type: 'postgresql',
      version: '1.0.0',
      ...fields,
    },
  );
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
// Plugins are stored as drivers/<sha256>.mjs in the default store (file://DATA_DIR/storage).
const driversDir = () => path.join(t.deps.config.dataDir, 'storage', 'drivers');
const installed = (pkg: string) =>
  (JSON.parse(readFileSync(path.join('node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  const u = await createUser(t.deps);
  user = await login(api, u.username, u.password);
});

describe('GET /api/admin/drivers', () => {
  it('lists the bundled connectors with the versions installed in node_modules', async () => {
    const list = ok<Drivers>(await api.get('/api/admin/drivers', admin)).content;
    const bundled = list.filter((d) => d.bundled).map((d) => [d.id, d.package, d.version, d.source_types, d.used_by]);
    expect(bundled).toEqual([
      ['pg', 'pg', installed('pg'), ['postgresql'], ['postgresql']],
      ['mysql2', 'mysql2', installed('mysql2'), ['mysql'], ['mysql']],
      ['clickhouse-client', '@clickhouse/client', installed('@clickhouse/client'), ['clickhouse'], ['clickhouse']],
      ['duckdb', '@duckdb/node-api', installed('@duckdb/node-api'), ['file'], ['file']],
    ]);
  });

  it('is for system administrators only', async () => {
    expect((await api.get('/api/admin/drivers', user)).status).toBe(403);
    expect((await api.get('/api/admin/drivers')).status).toBe(401);
    expect((await send(pluginSource(uniq('m')), {}, user)).status).toBe(403);
    expect((await api.delete('/api/admin/drivers/1', user)).status).toBe(403);
  });
});

describe('POST /api/admin/drivers', () => {
  it('stores a valid plugin in storage, shows its sha256 and loads it without a restart', async () => {
    const marker = uniq('plugin_loaded');
    const source = pluginSource(marker);
    const res = await send(source, { name: 'Echo PG' });
    expect(res.status).toBe(200);
    const driver = ok<Driver>(res);
    expect(driver).toMatchObject({
      name: 'Echo PG',
      bundled: false,
      version: '1.0.0',
      source_types: ['postgresql'],
      sha256: sha(source),
      used_by: [],
    });
    expect(driver.id).toMatch(/^\d+$/);
    expect(readFileSync(path.join(driversDir(), `${sha(source)}.mjs`), 'utf8')).toBe(source);
    expect((globalThis as Record<string, unknown>)[marker]).toBe(1);
    const list = ok<Drivers>(await api.get('/api/admin/drivers', admin)).content;
    expect(list.find((d) => d.id === driver.id)?.sha256).toBe(sha(source));
  });

  it('refuses a file that is not an ES module, a CommonJS file and modules missing the interface; nothing kept', async () => {
    const cases: [string, RegExp][] = [
      ['this is {{ not javascript', /^Файл не загружается как ES-модуль: /],
      // Node: ReferenceError (module is not defined); under the test runner's transform: no connector returned.
      [
        'module.exports = { createConnector() {} };',
        /^Файл не (загружается как ES-модуль|реализует интерфейс коннектора): /,
      ],
      [
        'export const x = 1;',
        /^Файл не реализует интерфейс коннектора: модуль не экспортирует функцию createConnector/,
      ],
      [
        "export function createConnector() { return { kind: 'postgresql', dialect: 'postgresql', check() {} }; }",
        /нет методов интерфейса: listSchemas, listTables, listColumns, query, stream, openStream, close$/,
      ],
      ["export function createConnector() { throw new Error('boom'); }", /createConnector завершилась ошибкой: boom/],
    ];
    for (const [content, message] of cases) {
      const res = await send(content);
      expect(res.status, content).toBe(400);
      expect(failure(res).message).toMatch(message);
      expect(existsSync(path.join(driversDir(), `${sha(content)}.mjs`))).toBe(false);
    }
  });

  it('bad fields: 422', async () => {
    expect((await send(pluginSource(uniq('m')), { source_type: 'oracle' })).status).toBe(422);
    expect((await send(pluginSource(uniq('m')), { version: '' })).status).toBe(422);
    const noFile = await upload(api, 'POST', '/api/admin/drivers', admin, undefined, {
      source_type: 'postgresql',
      version: '1',
    });
    expect(noFile.status).toBe(422);
  });

  it('a file name with NUL, or one that breaks the rules of `name` when it stands for it: 422 on file', async () => {
    const nul = await send(pluginSource(uniq('m')), {}, admin, 'a\u0000b.mjs');
    expect(nul.status).toBe(422);
    expect(failure(nul)).toMatchObject({
      message: 'Имя файла содержит недопустимые символы',
      errors: { file: 'file name must not contain NUL or invalid characters' },
    });
    expect((await send(pluginSource(uniq('m')), { name: 'Named' }, admin, 'a\u0000b.mjs')).status).toBe(422);

    const long = await send(pluginSource(uniq('m')), {}, admin, `${'x'.repeat(5000)}.mjs`);
    expect(long.status).toBe(422);
    expect(failure(long)).toMatchObject({
      message: 'Имя файла не подходит как название драйвера: задайте название в поле name',
      errors: { file: 'file name as the driver name: size must be at most 200' },
    });
    // With `name` the file name names nothing, and a file name within the rules is the name as before.
    const named = ok<Driver>(await send(pluginSource(uniq('m')), { name: 'Named' }, admin, `${'x'.repeat(5000)}.mjs`));
    expect(named.name).toBe('Named');
    const fromFile = ok<Driver>(await send(pluginSource(uniq('m')), {}, admin, `${'y'.repeat(196)}.mjs`));
    expect(fromFile.name).toBe(`${'y'.repeat(196)}.mjs`);
    for (const d of [named, fromFile]) ok(await api.delete(`/api/admin/drivers/${d.id}`, admin));
  });
});

describe('PUT /api/source-types/{type} with a plugin, DELETE /api/admin/drivers/{id}', () => {
  it('a kind picks a plugin of its kind; the plugin cannot be deleted while used', async () => {
    const source = pluginSource(uniq('m'));
    const driver = ok<Driver>(await send(source));
    const mysqlPlugin = ok<Driver>(await send(pluginSource(uniq('m'), 'mysql'), { source_type: 'mysql' }));

    const wrongKind = await api.put('/api/source-types/postgresql', { driver_id: mysqlPlugin.id }, admin);
    expect(wrongKind.status).toBe(422);
    expect(failure(wrongKind).errors?.driverId).toMatch(
      new RegExp(`^must be a driver installed for postgresql: pg, (\\d+, )*${driver.id}$`),
    );
    expect((await api.put('/api/source-types/postgresql', { driver_id: '2000000000' }, admin)).status).toBe(422);
    const picked = ok<SourceType>(await api.put('/api/source-types/postgresql', { driver_id: driver.id }, admin));
    expect(picked.driver_id).toBe(driver.id);
    const listed = ok<Drivers>(await api.get('/api/admin/drivers', admin)).content;
    expect(listed.find((d) => d.id === driver.id)?.used_by).toEqual(['postgresql']);
    expect(listed.find((d) => d.id === 'pg')?.used_by).toEqual([]);

    const refused = await api.delete(`/api/admin/drivers/${driver.id}`, admin);
    expect(refused.status).toBe(400);
    expect(failure(refused).message).toBe(
      'Драйвер используется типом источника: PostgreSQL. Сначала выберите для него другой драйвер',
    );

    ok(await api.put('/api/source-types/postgresql', { driver_id: null }, admin));
    expect(ok<Deleted>(await api.delete(`/api/admin/drivers/${driver.id}`, admin))).toEqual({
      id: Number(driver.id),
      deleted: true,
    });
    expect(existsSync(path.join(driversDir(), `${sha(source)}.mjs`))).toBe(false);
    const gone = await api.delete(`/api/admin/drivers/${driver.id}`, admin);
    expect(gone.status).toBe(404);
    expect(failure(gone).message).toBe(`Драйвер не найден (id ${driver.id})`);
    ok(await api.delete(`/api/admin/drivers/${mysqlPlugin.id}`, admin));
  });
});

describe('picking a plugin and deleting it at the same moment', () => {
  it('forced to overlap, one of the two is refused: the kind never points at a deleted driver', async () => {
    const driver = ok<Driver>(await send(pluginSource(uniq('m'))));
    let pending: Promise<RestResponse>[] = [];
    await t.deps.db.transaction(async (tx) => {
      // Both calls start while this transaction holds the plugin's row and blocks writes to settings. Without one
      // lock between them the delete finds no kind using the plugin and the switch finds it installed before either
      // has written, and both go through once this commits. Each test file has its own database: the waiters are
      // these two.
      await tx.execute(sql`select id from driver_plugins where id = ${Number(driver.id)} for update`);
      await tx.execute(sql`lock table settings in share mode`);
      pending = [
        api.put('/api/source-types/postgresql', { driver_id: driver.id }, admin),
        api.delete(`/api/admin/drivers/${driver.id}`, admin),
      ];
      // Counted on another connection: inside this transaction pg_stat_activity would stay as first read.
      const waiting = async () =>
        (
          await t.deps.db.execute<{ n: number }>(sql`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`)
        ).rows[0].n;
      const deadline = Date.now() + 10_000;
      while ((await waiting()) < 2) {
        if (Date.now() > deadline) throw new Error('the switch and the delete never both waited');
        await new Promise((r) => setTimeout(r, 25));
      }
    });
    const [picked, deleted] = await Promise.all(pending);
    const now = ok<SourceType>(await api.get('/api/source-types/postgresql', admin)).driver_id;
    const drivers = ok<Drivers>(await api.get('/api/admin/drivers', admin)).content.map((d) => d.id);
    expect(drivers).toContain(now);
    if (deleted.status === 200) {
      expect(picked.status).toBe(422);
      expect(failure(picked).errors?.driverId).toMatch(/^must be a driver installed for postgresql: pg/);
      expect(now).toBe('pg');
    } else {
      expect(picked.status).toBe(200);
      expect(deleted.status).toBe(400);
      expect(failure(deleted).message).toBe(
        'Драйвер используется типом источника: PostgreSQL. Сначала выберите для него другой драйвер',
      );
      expect(now).toBe(driver.id);
      ok(await api.put('/api/source-types/postgresql', { driver_id: null }, admin));
      ok(await api.delete(`/api/admin/drivers/${driver.id}`, admin));
    }
  });
});
