import path from 'node:path';
import { eq } from 'drizzle-orm';
import {
  checkSourceHosts,
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
import { badRequest, notFound } from '../kernel/errors';
import { sourceHostCheck } from './network-policy';
import { mergeSecrets, type SourceSecrets } from './secrets';

export type DataSourceRow = typeof dataSources.$inferSelect;

/** The full connection settings of a saved source: stored settings plus the decrypted secrets. */
export function connectionSettings(deps: AppDeps, row: DataSourceRow): SourceSettings {
  const plain = row.settings as SourceSettings;
  const secrets = openSecrets(deps, row);
  const full = mergeSecrets(plain, secrets);
  // File sources keep their DuckDB path relative to DATA_DIR, so that a moved data directory keeps working.
  if (full.file && !path.isAbsolute(full.file.duckdb_path)) {
    full.file = { ...full.file, duckdb_path: path.join(deps.config.dataDir, full.file.duckdb_path) };
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
  const settings = connectionSettings(deps, row);
  const options = { checkHost: sourceHostCheck(deps), idleTimeoutMs: deps.config.sourceConnections.idleTimeoutMs };
  return new ResolvingConnector(kind, sourceKindInfo(kind).dialect, async () => {
    const driver = await sourceDriver(deps, kind);
    await guardPluginHosts(driver, settings, options.checkHost);
    return deps.connectors.get(row.id, kind, settings, options, driver);
  });
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
