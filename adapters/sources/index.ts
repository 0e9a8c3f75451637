// The source connector layer: the only way the platform talks to data sources.
export * from './types';
export { SOURCE_KINDS, isSourceKind, sourceKindInfo, type SourceKindInfo } from './kinds';
export { createConnector } from './create-connector';
export { checkSourceHosts, type CheckHost } from './host-guard';
export { ConnectorCache, settingsHash, type ConnectorDriver } from './connector-cache';
export { ResolvingConnector } from './resolving-connector';
export { sourceConnectionBudget, DEFAULT_CONNECTION_LIMITS } from './connection-budget';
export { importFile, type ImportFileResult, type ImportFormat } from './file-import/import-file';
export { openSshTunnel } from './ssh-tunnel';
