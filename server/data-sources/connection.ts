import { eq } from 'drizzle-orm';
import {
  checkSourceHosts,
  ConnectorError,
  ResolvingConnector,
  sourceKindInfo,
  type CheckHost,
  type Connector,
  type ConnectorDriver,
  type SourceKind,
  type SourceSettings,
} from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import { dataSources } from '../../db/schema/data-sources';
import type { AppDeps } from '../app/deps';
import { sourceDriver } from '../admin/drivers';
import { bundledDriverIdNow } from '../admin/source-types';
import { badRequest, notFound } from '../kernel/errors';
import { StorageNotFoundError } from '../storage/object-storage';
import { localFileOf } from './file-storage';
import { sourceHostCheck } from './network-policy';
import { mergeSecrets, type SourceSecrets } from './secrets';

export type DataSourceRow = typeof dataSources.$inferSelect;

/**
 * The full connection settings of a saved source: stored settings plus the decrypted secrets. A file source's DuckDB
 * database is named by its storage key: the settings name this node's local copy of it (held while the node reads
 * the source, see file-storage.ts), or the old file under DATA_DIR.
 */
export async function connectionSettings(deps: AppDeps, row: DataSourceRow): Promise<SourceSettings> {
  const plain = row.settings as SourceSettings;
  const secrets = openSecrets(deps, row);
  const full = mergeSecrets(plain, secrets);
  if (full.file) {
    const local = await localFileOf(deps, full.file.duckdb_path).catch((e: unknown) => {
      if (e instanceof StorageNotFoundError)
        throw new ConnectorError('Файл источника не найден в хранилище: загрузите файл заново', 'settings');
      throw e;
    });
    full.file = { ...full.file, duckdb_path: local };
  }
  return full;
}

/** The stored secrets. A box that no longer opens (SECRETS_KEY changed) is a 400 with what to do, never a 500. */
export function openSecrets(deps: AppDeps, row: Pick<DataSourceRow, 'secrets'>): SourceSecrets {
  if (!row.secrets) return {};
  try {
    return deps.secretBox.open<SourceSecrets>(row.secrets);
  } catch {
    throw badRequest(
      'Не удалось расшифровать пароли источника: ключ шифрования (SECRETS_KEY) изменился. Задайте пароли заново',
    );
  }
}

/**
 * The pooled connector of a saved source (one pool per source, settings version and driver in this app). Each call
 * on it asks which driver the source's kind uses now (bundled, or the uploaded plugin an administrator picked), so
 * a switch applies to the next call.
 */
export function connectorForSource(deps: AppDeps, row: DataSourceRow): Connector {
  const kind = row.type as SourceKind;
  const options = { checkHost: sourceHostCheck(deps), idleTimeoutMs: deps.config.sourceConnections.idleTimeoutMs };
  // Made on the first call (a file source's copy may have to be fetched), then kept.
  let settings: Promise<SourceSettings> | undefined;
  let made: SourceSettings | undefined;
  const resolve = async () => {
    settings ??= connectionSettings(deps, row);
    settings.then(
      (s) => (made = s),
      () => (settings = undefined),
    );
    const driver = await sourceDriver(deps, kind);
    const full = await settings;
    await guardPluginHosts(driver, full, options.checkHost);
    return deps.connectors.get(row.id, kind, full, options, driver);
  };
  // What resolve would answer, when nothing needs waiting for: the settings made, the kind's driver the bundled one
  // by the settings cache (a plugin's hosts are checked on every call: resolve). The same connector, fewer awaits.
  const now = () => {
    if (!made) return undefined;
    const driverId = bundledDriverIdNow(deps, kind);
    return driverId === undefined ? undefined : deps.connectors.get(row.id, kind, made, options, { id: driverId });
  };
  return new ResolvingConnector(kind, sourceKindInfo(kind).dialect, resolve, now);
}

/**
 * A plugin is handed checkHost like a bundled connector, but nothing makes its code call it before opening a
 * socket; so the network policy is applied to the settings' hosts (SSH server, database server) here, before every
 * call that reaches a plugin. What the plugin's code then connects to is beyond the platform's reach: uploading
 * one is for system administrators only.
 */
export async function guardPluginHosts(
  driver: ConnectorDriver,
  settings: SourceSettings,
  checkHost: CheckHost,
): Promise<void> {
  if (driver.create) await checkSourceHosts(settings, checkHost);
}

export async function loadDataSourceRow(db: DbOrTx, id: number): Promise<DataSourceRow> {
  const [row] = await db.select().from(dataSources).where(eq(dataSources.id, id));
  if (!row) throw notFound(`Источник данных не найден (id ${id})`);
  return row;
}
