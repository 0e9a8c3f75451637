import path from 'node:path';
import { eq } from 'drizzle-orm';
import { type Connector, type SourceKind, type SourceSettings } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import { dataSources } from '../../db/schema';
import type { AppDeps } from '../app/deps';
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

/** The pooled connector of a saved source (one pool per source and settings version in this app). */
export function connectorForSource(deps: AppDeps, row: DataSourceRow): Connector {
  return deps.connectors.get(row.id, row.type as SourceKind, connectionSettings(deps, row), {
    checkHost: sourceHostCheck(deps),
    idleTimeoutMs: deps.config.sourceConnections.idleTimeoutMs,
  });
}

export async function loadDataSourceRow(db: DbOrTx, id: number): Promise<DataSourceRow> {
  const [row] = await db.select().from(dataSources).where(eq(dataSources.id, id));
  if (!row) throw notFound(`Источник данных не найден (id ${id})`);
  return row;
}
