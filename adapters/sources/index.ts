// The source connector layer: the only way the platform talks to data sources.
import type { ImportFileInput, ImportFileResult } from './file-import/import-file';

export * from './types';
export { SOURCE_KINDS, isSourceKind, sourceKindInfo, type SourceKindInfo } from './kinds';
export { createConnector } from './create-connector';
export { checkSourceHosts, type CheckHost } from './host-guard';
export { ConnectorCache, settingsHash, type ConnectorDriver } from './connector-cache';
export { ResolvingConnector } from './resolving-connector';
export { sourceConnectionBudget, DEFAULT_CONNECTION_LIMITS } from './connection-budget';
export { openSshTunnel } from './ssh-tunnel';
export type { ImportFileResult, ImportFormat } from './file-import/import-file';

/** Imports an uploaded file (see file-import/import-file.ts); DuckDB and the XLSX reader load on the first upload. */
export async function importFile(input: ImportFileInput): Promise<ImportFileResult> {
  return (await import('./file-import/import-file')).importFile(input);
}
