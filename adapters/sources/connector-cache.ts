import { createHash } from 'node:crypto';
import { createConnector } from './create-connector';
import type { Connector, ConnectorOptions, SourceKind, SourceSettings } from './types';

interface Entry {
  hash: string;
  connector: Connector;
}

// One connector (and so one connection pool, one SSH tunnel) per saved source in this process.
const entries = new Map<string | number, Entry>();

/**
 * The source's connector, reused while its kind and settings stay the same; a changed settings hash (for
 * example after an edit or a pipeline substitution) closes the old pool and starts a new one.
 */
export function getConnector(
  sourceId: string | number,
  kind: SourceKind,
  settings: SourceSettings,
  options?: ConnectorOptions,
): Connector {
  const hash = settingsHash(kind, settings, options);
  const cached = entries.get(sourceId);
  if (cached?.hash === hash) return cached.connector;
  if (cached) void cached.connector.close().catch(() => {});
  const connector = createConnector(kind, settings, options);
  entries.set(sourceId, { hash, connector });
  return connector;
}

/** Closes the source's pool (source deleted, or its file replaced). */
export async function releaseConnector(sourceId: string | number): Promise<void> {
  const cached = entries.get(sourceId);
  entries.delete(sourceId);
  await cached?.connector.close();
}

/** Closes every pool: for shutdown and test teardown. */
export async function closeAllConnectors(): Promise<void> {
  const all = [...entries.values()];
  entries.clear();
  await Promise.allSettled(all.map((e) => e.connector.close()));
}

export function settingsHash(kind: SourceKind, settings: SourceSettings, options?: ConnectorOptions): string {
  return createHash('sha256').update(stableJson({ kind, settings, options: options ?? {} })).digest('hex');
}

/** JSON with sorted keys, so that equal settings hash equally whatever their key order; hooks do not count. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    return `{${Object.keys(obj).filter((k) => obj[k] !== undefined && typeof obj[k] !== 'function').sort().map((k) => `${JSON.stringify(k)}:${stableJson(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
