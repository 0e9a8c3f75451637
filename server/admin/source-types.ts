import { SOURCE_KINDS, isSourceKind, type SourceKind, type SourceKindInfo } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import type { AppDeps } from '../app/deps';
import { badRequest, invalid, notFound } from '../kernel/errors';
import { lockPluginIdsForKind } from './store';
import { mergeSettingEntry, readSetting } from '../service/store';
import { settingsFormOf, type SettingsField } from './settings-form';
import { settingChangedEverywhere } from '../kernel/cache-changes';

/*
 * Source kinds of the installation: the bundled ones from the connector layer, each switchable by a system
 * administrator. The switches live in the settings table under one key; a kind never switched is enabled.
 */

const KEY = 'source_types';

/**
 * The bundled driver of each kind. An uploaded connector plugin (/api/admin/drivers, drivers.ts) serving the
 * kind can be picked instead: its driver_id is the plugin's id.
 */
export const BUNDLED_DRIVERS: Record<SourceKind, string> = {
  postgresql: 'pg',
  mysql: 'mysql2',
  clickhouse: 'clickhouse-client',
  file: 'duckdb',
};

interface StoredKindSettings {
  enabled?: boolean;
  driver_id?: string | null;
}
type StoredSettings = Partial<Record<SourceKind, StoredKindSettings>>;

export interface SourceTypeView {
  type: SourceKind;
  name: string;
  enabled: boolean;
  default_port: number | null;
  http_port: number | null;
  driver_id: string;
  supports: SourceKindInfo['supports'];
}

export interface SourceTypeDetails extends SourceTypeView {
  fields: SettingsField[];
}

const sourceTypeNotFound = (type: string) => notFound(`Тип источника не найден: ${type}`);

async function stored(deps: AppDeps): Promise<StoredSettings> {
  return (await deps.caches.settings.getOrLoad(
    KEY,
    async () => (await readSetting<StoredSettings>(deps.db, KEY)) ?? {},
  )) as StoredSettings;
}

function viewOf(info: SourceKindInfo, s: StoredKindSettings | undefined): SourceTypeView {
  return {
    type: info.type,
    name: info.name,
    enabled: s?.enabled ?? true,
    default_port: info.default_port,
    http_port: info.default_http_port,
    driver_id: s?.driver_id ?? BUNDLED_DRIVERS[info.type],
    supports: info.supports,
  };
}

function kindInfo(type: string): SourceKindInfo {
  const info = SOURCE_KINDS.find((k) => k.type === type);
  if (!info) throw sourceTypeNotFound(type);
  return info;
}

export async function listSourceTypes(deps: AppDeps): Promise<{ content: SourceTypeView[] }> {
  const s = await stored(deps);
  return { content: SOURCE_KINDS.map((k) => viewOf(k, s[k.type])) };
}

export async function getSourceType(deps: AppDeps, type: string): Promise<SourceTypeDetails> {
  const info = kindInfo(type);
  return { ...viewOf(info, (await stored(deps))[info.type]), fields: settingsFormOf(info) };
}

/** The driver_id the kind's saved sources connect with now: the bundled driver's or an uploaded plugin's. */
export async function selectedDriverId(deps: AppDeps, kind: SourceKind): Promise<string> {
  return driverIdIn(await stored(deps), kind);
}

// viewOf's rule for driver_id alone: every live read asks, and needs no view built for it.
const driverIdIn = (s: StoredSettings, kind: SourceKind) => s[kindInfo(kind).type]?.driver_id ?? BUNDLED_DRIVERS[kind];

/**
 * The bundled driver's id when the kind uses it, by the settings cache alone: undefined when the cache holds no
 * answer now (the caller then asks selectedDriverId) or the kind uses a plugin.
 */
export function bundledDriverIdNow(deps: AppDeps, kind: SourceKind): string | undefined {
  const s = deps.caches.settings.get(KEY) as StoredSettings | undefined;
  if (s === undefined) return undefined;
  const id = driverIdIn(s, kind);
  return id === BUNDLED_DRIVERS[kind] ? id : undefined;
}

const kindsUsing = (s: StoredSettings, driverId: string): SourceKind[] =>
  SOURCE_KINDS.filter((k) => viewOf(k, s[k.type]).driver_id === driverId).map((k) => k.type);

/** The kinds whose driver is `driverId`, as the settings cache has them (the drivers list). */
export async function kindsUsingDriver(deps: AppDeps, driverId: string): Promise<SourceKind[]> {
  return kindsUsing(await stored(deps), driverId);
}

/**
 * The kinds whose driver is `driverId`, read past the cache in `db`: DELETE /api/admin/drivers/{id} asks inside its
 * transaction, after it has locked the plugin's row, so that a switch to the plugin committed meanwhile is seen.
 */
export async function kindsUsingDriverNow(db: DbOrTx, driverId: string): Promise<SourceKind[]> {
  return kindsUsing((await readSetting<StoredSettings>(db, KEY)) ?? {}, driverId);
}

export async function updateSourceType(
  deps: AppDeps,
  type: string,
  input: { enabled?: boolean; driver_id?: string | null },
): Promise<SourceTypeDetails> {
  const info = kindInfo(type);
  const driverBefore = input.driver_id !== undefined ? await selectedDriverId(deps, info.type) : undefined;
  const patch: StoredKindSettings = {};
  if (input.enabled !== undefined) patch.enabled = input.enabled;
  if (input.driver_id !== undefined) patch.driver_id = input.driver_id;
  await deps.db.transaction(async (tx) => {
    if (input.driver_id !== undefined && input.driver_id !== null && input.driver_id !== BUNDLED_DRIVERS[info.type]) {
      // Held FOR SHARE: a plugin's delete waits for this switch to commit (store.ts says why).
      const plugins = (await lockPluginIdsForKind(tx, info.type)).map(String);
      if (!plugins.includes(input.driver_id)) {
        const installed = [BUNDLED_DRIVERS[info.type], ...plugins].join(', ');
        throw invalid({ driverId: `must be a driver installed for ${info.type}: ${installed}` });
      }
    }
    // One statement: two administrators switching different kinds at once must not undo each other.
    await mergeSettingEntry(tx, KEY, info.type, patch);
  });
  settingChangedEverywhere(deps, KEY);
  // The pools of the old driver close as their running calls end; the next call connects with the new driver.
  // Other app nodes see the switch when their settings cache expires: their pools are keyed by driver too.
  if (driverBefore !== undefined && driverBefore !== (await selectedDriverId(deps, info.type))) {
    await deps.connectors.releaseKind(info.type);
  }
  return getSourceType(deps, type);
}

/** Creating a source (or a check, or an upload) of a kind the administrator switched off is refused with 400. */
export async function assertKindEnabled(deps: AppDeps, type: string): Promise<SourceKind> {
  if (!isSourceKind(type)) throw invalid({ type: `must be one of: ${SOURCE_KINDS.map((k) => k.type).join(', ')}` });
  const s = await stored(deps);
  if (s[type]?.enabled === false) {
    throw badRequest(`Тип источника «${kindInfo(type).name}» отключён администратором платформы`);
  }
  return type;
}
