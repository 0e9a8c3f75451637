import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { eq } from 'drizzle-orm';
import {
  ConnectorError,
  isSourceKind,
  SOURCE_KINDS,
  type ConnectorDriver,
  type SourceKind,
} from '../../adapters/sources';
import { driverPlugins } from '../../db/schema/driver-plugins';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { badRequest, invalid, notFound } from '../kernel/errors';
import type { HeldCopy } from '../storage/local-copies';
import { StorageNotFoundError } from '../storage/object-storage';
import { BUNDLED_DRIVERS, kindsUsingDriver, kindsUsingDriverNow, selectedDriverId } from './source-types';
import { buildPluginConnector, loadConnectorPlugin, pluginFactory } from './plugin-loader';

/*
 * Database drivers of the installation (/api/admin/drivers, system administrators only): the bundled
 * connectors with the versions of their npm packages, and uploaded connector plugins stored in storage (STORAGE_URL)
 * under drivers/<sha256>.mjs, so every node of a cluster loads the plugin another node took. A source kind picks a plugin with PUT /api/source-types/{type} (driver_id = the
 * plugin's id); from then on every new connection of the kind's sources is built by the plugin's createConnector
 * (sourceDriver below, used by data-sources/connection.ts and the connection check). A plugin in use cannot be
 * deleted.
 */

/** driver_id -> npm package of the bundled connectors (the ids source-types.ts answers as driver_id). */
const BUNDLED_PACKAGES: Record<string, string> = {
  pg: 'pg',
  mysql2: 'mysql2',
  'clickhouse-client': '@clickhouse/client',
  duckdb: '@duckdb/node-api',
};

const require = createRequire(import.meta.url);

/** The installed version from node_modules/<pkg>/package.json (found from the package's entry point upwards). */
async function packageVersion(pkg: string): Promise<string | null> {
  try {
    let dir = path.dirname(require.resolve(pkg));
    for (;;) {
      const meta = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => '{}')) as {
        name?: string;
        version?: string;
      };
      if (meta.name === pkg) return meta.version ?? null;
      const up = path.dirname(dir);
      if (up === dir) return null;
      dir = up;
    }
  } catch {
    return null;
  }
}

export interface DriverView {
  id: string;
  name: string;
  bundled: boolean;
  package: string | null;
  version: string | null;
  source_types: string[];
  sha256: string | null;
  uploaded_by: number | null;
  uploaded_at: string | null;
  used_by: string[];
}

type PluginRow = typeof driverPlugins.$inferSelect;

async function pluginView(deps: AppDeps, row: PluginRow): Promise<DriverView> {
  return {
    id: String(row.id),
    name: row.name,
    bundled: false,
    package: null,
    version: row.version,
    source_types: [row.sourceType],
    sha256: row.sha256,
    uploaded_by: row.uploadedBy,
    uploaded_at: row.uploadedAt.toISOString(),
    used_by: await kindsUsingDriver(deps, String(row.id)),
  };
}

/** GET /api/admin/drivers */
export async function listDrivers(deps: AppDeps): Promise<{ content: DriverView[] }> {
  const bundled: DriverView[] = [];
  for (const [id, pkg] of Object.entries(BUNDLED_PACKAGES)) {
    bundled.push({
      id,
      name: pkg,
      bundled: true,
      package: pkg,
      version: await packageVersion(pkg),
      source_types: Object.entries(BUNDLED_DRIVERS)
        .filter(([, driver]) => driver === id)
        .map(([kind]) => kind),
      sha256: null,
      uploaded_by: null,
      uploaded_at: null,
      used_by: await kindsUsingDriver(deps, id),
    });
  }
  const rows = await deps.db.select().from(driverPlugins).orderBy(driverPlugins.id);
  const plugins = await Promise.all(rows.map((row) => pluginView(deps, row)));
  return { content: [...bundled, ...plugins] };
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/*
 * A plugin's key in storage; the row's file_path holds it. Rows written before storage hold the same string as a path
 * relative to DATA_DIR (drivers/<sha256>.mjs): such a file is moved into storage on its first use (pluginCopy).
 */
const pluginKey = (sha: string) => `drivers/${sha}.mjs`;

/** A local file of the plugin's module for import(): this node's copy of the stored object. */
async function pluginCopy(deps: AppDeps, key: string): Promise<HeldCopy> {
  try {
    return await deps.localCopies.hold(key);
  } catch (e) {
    if (!(e instanceof StorageNotFoundError)) throw e;
    const legacy = path.resolve(deps.config.dataDir, key);
    if (!(await stat(legacy).catch(() => null))?.isFile()) throw e;
    await deps.storage.putFile(key, legacy);
    await rm(legacy, { force: true });
    return deps.localCopies.hold(key);
  }
}

async function removeFileIfUnused(deps: AppDeps, sha: string, key: string): Promise<void> {
  const users = await deps.db.select({ id: driverPlugins.id }).from(driverPlugins).where(eq(driverPlugins.sha256, sha));
  if (users.length) return;
  await deps.storage.delete(key);
  await deps.localCopies.forget(key);
  await rm(path.resolve(deps.config.dataDir, key), { force: true }); // a file left from before storage
}

/**
 * POST /api/admin/drivers (multipart): the staged upload is hashed, put in storage, imported from this node's copy
 * and checked against the connector interface; a file that is not a module or misses the interface is removed and
 * refused.
 */
export async function uploadDriver(
  deps: AppDeps,
  actor: Actor,
  upload: { path: string; filename: string },
  fields: { source_type: string; version: string; name?: string },
): Promise<DriverView> {
  if (!isSourceKind(fields.source_type)) {
    throw invalid({ sourceType: `must be one of: ${SOURCE_KINDS.map((k) => k.type).join(', ')}` });
  }
  const sha = await sha256Of(upload.path);
  const key = pluginKey(sha);
  await deps.storage.putFile(key, upload.path);
  const held = await deps.localCopies.hold(key);
  const outcome = await loadConnectorPlugin(held.file, fields.source_type).finally(() => held.release());
  if (!outcome.ok) {
    await removeFileIfUnused(deps, sha, key);
    throw badRequest(outcome.message);
  }
  const [row] = await deps.db
    .insert(driverPlugins)
    .values({
      name: fields.name ?? upload.filename,
      sourceType: fields.source_type,
      version: fields.version,
      sha256: sha,
      filePath: key,
      uploadedBy: actor.userId,
    })
    .returning();
  return pluginView(deps, row);
}

const driverNotFound = (id: number) => notFound(`Драйвер не найден (id ${id})`);

/**
 * DELETE /api/admin/drivers/{id}: 400 while a source kind uses it. The row is locked before the kinds are read:
 * PUT /api/source-types/{type} holds the rows of the kind's plugins FOR SHARE while it switches, so a switch to this
 * plugin either commits first (and is seen here) or waits and finds the plugin gone.
 */
export async function deleteDriver(deps: AppDeps, id: number): Promise<{ id: number; deleted: true }> {
  const row = await deps.db.transaction(async (tx) => {
    const [row] = await tx.select().from(driverPlugins).where(eq(driverPlugins.id, id)).for('update');
    if (!row) throw driverNotFound(id);
    const kinds = await kindsUsingDriverNow(tx, String(id));
    if (kinds.length) {
      const names = kinds.map((k) => SOURCE_KINDS.find((i) => i.type === k)?.name ?? k);
      throw badRequest(
        `Драйвер используется типом источника: ${names.join(', ')}. Сначала выберите для него другой драйвер`,
      );
    }
    await tx.delete(driverPlugins).where(eq(driverPlugins.id, id));
    return row;
  });
  await removeFileIfUnused(deps, row.sha256, row.filePath);
  return { id, deleted: true };
}

/** A plugin row by id, cached briefly: the connection path asks on every call (rows never change, only go). */
async function pluginRow(deps: AppDeps, id: number): Promise<PluginRow | undefined> {
  if (!Number.isSafeInteger(id)) return undefined;
  return (await deps.caches.settings.getOrLoad(`driver_plugin:${id}`, async () => {
    const [row] = await deps.db.select().from(driverPlugins).where(eq(driverPlugins.id, id));
    return row;
  })) as PluginRow | undefined;
}

/**
 * The driver the kind's saved sources connect with now: the bundled one (no `create`), or the uploaded plugin the
 * kind picked, its module imported from storage on first use in this process. A plugin that is gone or no longer
 * loads fails the call with a ConnectorError (a 400 saying which driver), never silently falls back to bundled.
 */
export async function sourceDriver(deps: AppDeps, kind: SourceKind): Promise<ConnectorDriver> {
  const driverId = await selectedDriverId(deps, kind);
  if (driverId === BUNDLED_DRIVERS[kind]) return { id: driverId };
  const row = await pluginRow(deps, Number(driverId));
  if (!row)
    throw new ConnectorError(`Драйвер ${driverId}, выбранный для типа источника ${kind}, не найден`, 'settings');
  const outcome = await pluginFactory(row.sha256, () => pluginCopy(deps, row.filePath));
  if (!outcome.ok) throw new ConnectorError(`Драйвер «${row.name}» не загружается. ${outcome.message}`, 'settings');
  return {
    id: `plugin:${row.id}:${row.sha256}`,
    create: (settings, options) => buildPluginConnector(outcome.factory, kind, settings, options),
  };
}
