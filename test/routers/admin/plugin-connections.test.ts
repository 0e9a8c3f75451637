import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { driverView, sourceTypeDetails } from '../../../routers/admin/schemas';
import type { widgetDataOutput } from '../../../routers/widgets/schemas';
import { buildApp } from '../../../server/app/app';
import { createAppDeps } from '../../../server/app/start';
import { useTestApp } from '../../support/app';
import { createSysadmin, login, uniq } from '../../support/factories';
import { failure, ok, rest } from '../../support/rest';
import { datasetSchemaOver, widgetOver } from '../../support/workspace-objects';
import { pgSettings } from '../../adapters/sources/servers';
import {
  createCitiesTable,
  createSource,
  dropTable,
  randomName,
  upload,
  type CheckResult,
  type Preview,
  type SourceView,
} from '../data-sources/helpers';

/*
 * An uploaded connector plugin picked for a source kind (PUT /api/source-types/{type}) is what every new connection
 * of the kind's sources is built with: the connection check, the table preview and widget data go through its
 * createConnector, with the same options as the bundled connector, behind the same network policy. Switching the
 * kind back to the bundled driver stops using it at once; a new app on the same DATA_DIR and database loads it.
 */

type Driver = z.output<typeof driverView>;
type SourceType = z.output<typeof sourceTypeDetails>;
type WidgetData = z.output<typeof widgetDataOutput>;

const { t, api } = useTestApp();
let admin: string;

const LOG = uniq('plugin_calls');
const calls = (): string[] => ((globalThis as Record<string, unknown>)[LOG] as string[] | undefined) ?? [];
const clearCalls = () => calls().splice(0);

/**
 * A real plugin: the bundled PostgreSQL connector (imported by the absolute file URL of its module) behind a
 * subclass that records every call, and the options createConnector is given, in a global list.
 */
const connectorUrl = pathToFileURL(path.resolve('adapters/sources/postgresql/connector.ts')).href;
const recordingPlugin = (kind = 'postgresql', dialect = 'postgresql') => `
import { PostgresConnector } from ${JSON.stringify(connectorUrl)};
const log = (globalThis[${JSON.stringify(LOG)}] ??= []);
class RecordingConnector extends PostgresConnector {
  kind = ${JSON.stringify(kind)};
  dialect = ${JSON.stringify(dialect)};
  check() { log.push('check'); return super.check(); }
  listColumns(schema, table) { log.push('listColumns ' + table); return super.listColumns(schema, table); }
  query(sql, params, opts) { log.push('query ' + sql); return super.query(sql, params, opts); }
  openStream(sql, params, opts) { log.push('openStream ' + sql); return super.openStream(sql, params, opts); }
}
export function createConnector(settings, options = {}) {
  log.push(['create', settings.host ?? '-', typeof options.checkHost, options.idleTimeoutMs ?? options.connectTimeoutMs ?? '-', options.budgetOwner ? 'budget' : 'no-budget'].join(' '));
  return new RecordingConnector(settings, options);
}
`;

const uploadPlugin = (content: string, sourceType = 'postgresql') =>
  upload(
    api,
    'POST',
    '/api/admin/drivers',
    admin,
    { name: 'recording.mjs', content },
    { source_type: sourceType, version: '1.0.0' },
  );
const pick = async (driverId: string | null) =>
  ok<SourceType>(await api.put('/api/source-types/postgresql', { driver_id: driverId }, admin));

let plugin: Driver;
let table: string;
let source: SourceView;

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  table = randomName('plugin');
  await createCitiesTable('postgresql', table);
  const res = await uploadPlugin(recordingPlugin() + `\n// ${uniq('v')}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  plugin = ok<Driver>(res);
});

afterAll(async () => {
  await dropTable('postgresql', table);
});

beforeEach(() => {
  clearCalls();
});

const preview = (sourceId: number) =>
  api.post(`/api/data-source/${sourceId}/preview`, { schema: 'public', table, limit: 2 }, admin);
// The preview reads one row more than it shows (to say `truncated`); the bundled query() reads through openStream.
const previewCalls = () => [
  `query SELECT * FROM "public"."${table}" LIMIT 3`,
  `openStream SELECT * FROM "public"."${table}" LIMIT 3`,
];

describe('a source kind that picks an uploaded plugin', () => {
  it('connects through the plugin: check, preview and widget data; bundled again after a switch back', async () => {
    expect((await pick(plugin.id)).driver_id).toBe(plugin.id);
    const pgTimeout = t.deps.config.sourceConnections.idleTimeoutMs;

    // The unsaved-settings check: a connector of its own, built by the plugin with the check's options.
    const unsaved = ok<CheckResult>(
      await api.post('/api/data-source/check', { type: 'postgresql', settings: pgSettings() }, admin),
    );
    expect(unsaved).toEqual({ ok: true, message: 'Подключение успешно' });
    expect(calls()).toEqual([`create ${pgSettings().host} function 5000 no-budget`, 'check']);

    clearCalls();
    source = await createSource(api, admin, 'postgresql');
    const saved = ok<CheckResult>(await api.post(`/api/data-source/${source.id}/check`, undefined, admin));
    expect(saved).toEqual({ ok: true, message: 'Подключение успешно' });
    expect(calls().slice(-2)).toEqual([`create ${pgSettings().host} function 5000 no-budget`, 'check']);

    // The pooled connector of the saved source: built once by the plugin with the pool's options and budget owner.
    clearCalls();
    const rows = ok<Preview>(await preview(source.id));
    expect(rows.rows).toEqual([
      [1, 'Москва', 10.5],
      [2, 'Казань', 20],
    ]);
    expect(calls()).toEqual([`create ${pgSettings().host} function ${pgTimeout} budget`, ...previewCalls()]);

    clearCalls();
    const dataset = ok<{ id: number }>(
      await api.post(
        '/api/dataset',
        { name: uniq('ds'), workspace_id: source.workspace_id, data_source_ids: [source.id] },
        admin,
      ),
    );
    ok(await api.put(`/api/dataset/${dataset.id}/schema`, datasetSchemaOver(source.id, table), admin));
    const widget = ok<{ id: number }>(await api.post('/api/widget', widgetOver(dataset.id), admin));
    const data = ok<WidgetData>(await api.post(`/api/widget/${widget.id}/data`, {}, admin));
    expect(data.kind === 'flat' && data.rows.map((r) => Object.values(r)).sort()).toEqual([
      ['Казань'],
      ['Москва'],
      ['Самара'],
    ]);
    // The pool is reused (no new create); the widget's query is the plugin's.
    const widgetSql = `SELECT "t0"."city" AS "__c0" FROM "public"."${table}" AS "t0" LIMIT 101`;
    expect(calls()).toEqual([`query ${widgetSql}`, `openStream ${widgetSql}`]);

    // Back to the bundled driver: the plugin's pool is dropped and nothing reaches the plugin any more.
    expect((await pick(null)).driver_id).toBe('pg');
    clearCalls();
    expect(ok<Preview>(await preview(source.id)).rows).toEqual(rows.rows);
    expect(ok<CheckResult>(await api.post(`/api/data-source/${source.id}/check`, undefined, admin)).ok).toBe(true);
    expect(calls()).toEqual([]);

    // Picked again: the next call goes to the plugin again, without a restart.
    await pick(plugin.id);
    expect(ok<Preview>(await preview(source.id)).rows).toEqual(rows.rows);
    expect(calls()).toEqual([`create ${pgSettings().host} function ${pgTimeout} budget`, ...previewCalls()]);
  });

  it('applies the network policy before the plugin is called', async () => {
    await pick(plugin.id);
    const policy = '/api/settings/source-network';
    const before = ok<{ allow: string[]; deny: string[] }>(await api.get(policy, admin));
    ok(await api.put(policy, { allow: [], deny: [...before.deny, '127.0.0.0/8', '::1/128'] }, admin));
    try {
      clearCalls();
      const refused = await preview(source.id);
      expect(refused.status).toBe(400);
      expect(failure(refused).message).toMatch(/^Подключение к адресу .* запрещено настройками платформы$/);
      const check = await api.post(`/api/data-source/${source.id}/check`, undefined, admin);
      expect(check.status).toBe(400);
      expect(failure(check).message).toBe(failure(refused).message);
      expect(calls()).toEqual([]);
    } finally {
      ok(await api.put(policy, before, admin));
    }
  });

  it('a new app on the same DATA_DIR and database connects through the picked plugin', async () => {
    await pick(plugin.id);
    const deps = createAppDeps({
      db: t.deps.db,
      config: t.deps.config,
      systemGroups: t.deps.systemGroups,
      signingKey: t.deps.signingKey,
      secretBox: t.deps.secretBox,
    });
    const app = await buildApp(deps);
    await app.ready();
    try {
      clearCalls();
      const res = await rest(() => app).post(
        `/api/data-source/${source.id}/preview`,
        { schema: 'public', table, limit: 2 },
        admin,
      );
      expect(ok<Preview>(res).rows).toHaveLength(2);
      expect(calls()).toEqual([
        `create ${pgSettings().host} function ${t.deps.config.sourceConnections.idleTimeoutMs} budget`,
        ...previewCalls(),
      ]);
    } finally {
      await app.close();
    }
  });

  it('a plugin in use cannot be deleted; after the switch back it can', async () => {
    await pick(plugin.id);
    const refused = await api.delete(`/api/admin/drivers/${plugin.id}`, admin);
    expect(refused.status).toBe(400);
    expect(failure(refused).message).toBe(
      'Драйвер используется типом источника: PostgreSQL. Сначала выберите для него другой драйвер',
    );
    await pick(null);
    expect(ok(await api.delete(`/api/admin/drivers/${plugin.id}`, admin))).toEqual({
      id: Number(plugin.id),
      deleted: true,
    });
    clearCalls();
    expect(ok<Preview>(await preview(source.id)).rows).toHaveLength(2);
    expect(calls()).toEqual([]);
  });
});

describe('POST /api/admin/drivers: the plugin serves the kind it is uploaded for', () => {
  it('refuses a plugin whose connector is of another kind or dialect', async () => {
    const otherKind = await uploadPlugin(recordingPlugin('mysql', 'mysql'));
    expect(otherKind.status).toBe(400);
    expect(failure(otherKind).message).toBe(
      'Файл не реализует интерфейс коннектора: коннектор плагина — для типа «mysql», а загружается для «postgresql»',
    );
    const otherDialect = await uploadPlugin(recordingPlugin('postgresql', 'duckdb'));
    expect(otherDialect.status).toBe(400);
    expect(failure(otherDialect).message).toBe(
      'Файл не реализует интерфейс коннектора: диалект коннектора «duckdb», а у типа «postgresql» — «postgresql»',
    );
    const asMysql = await uploadPlugin(recordingPlugin(), 'mysql');
    expect(asMysql.status).toBe(400);
    expect(failure(asMysql).message).toBe(
      'Файл не реализует интерфейс коннектора: коннектор плагина — для типа «postgresql», а загружается для «mysql»',
    );
  });
});
