import { pathToFileURL } from 'node:url';
import {
  ConnectorError,
  sourceKindInfo,
  type Connector,
  type ConnectorOptions,
  type SourceKind,
  type SourceSettings,
} from '../../adapters/sources';
import type { HeldCopy } from '../storage/local-copies';

/*
 * A connector plugin is an ES module exporting `createConnector(settings, options)` (named, or as a member of the
 * default export) that returns an object of the connector interface (adapters/sources/types.ts). It is loaded with
 * a dynamic import of the stored file: the file name carries its sha256, so a new upload is a new module and no
 * restart is needed. Loading runs the module's code: only system administrators may upload one.
 */

export type ConnectorFactory = (settings: SourceSettings, options?: ConnectorOptions) => Connector;

const CONNECTOR_METHODS = [
  'check',
  'listSchemas',
  'listTables',
  'listColumns',
  'query',
  'stream',
  'openStream',
  'close',
] as const;

/** Why a loaded module is not a connector plugin of `kind`, or null when it is one. */
function interfaceProblem(mod: Record<string, unknown>, kind: SourceKind): string | null {
  const factory = pickFactory(mod);
  if (!factory) return 'модуль не экспортирует функцию createConnector(settings, options)';
  let connector: unknown;
  try {
    connector = factory({}, {});
  } catch (err) {
    return `createConnector завершилась ошибкой: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (!connector || typeof connector !== 'object') return 'createConnector вернула не объект коннектора';
  const c = connector as Record<string, unknown>;
  const missing = CONNECTOR_METHODS.filter((m) => typeof c[m] !== 'function');
  if (missing.length) return `у коннектора нет методов интерфейса: ${missing.join(', ')}`;
  void (c.close as () => Promise<void>)().catch(() => undefined);
  if (typeof c.kind !== 'string' || typeof c.dialect !== 'string') return 'у коннектора нет свойств kind и dialect';
  return kindProblem(c.kind, c.dialect, kind);
}

/**
 * A plugin serves one kind, with that kind's SQL dialect: the platform compiles queries for the dialect of the
 * source's kind, so a plugin of another kind or dialect would be handed SQL it does not speak.
 */
function kindProblem(pluginKind: string, dialect: string, kind: SourceKind): string | null {
  if (pluginKind !== kind) return `коннектор плагина — для типа «${pluginKind}», а загружается для «${kind}»`;
  const expected = sourceKindInfo(kind).dialect;
  if (dialect !== expected) return `диалект коннектора «${dialect}», а у типа «${kind}» — «${expected}»`;
  return null;
}

function pickFactory(mod: Record<string, unknown>): ConnectorFactory | null {
  if (typeof mod.createConnector === 'function') return mod.createConnector as ConnectorFactory;
  const def = mod.default as Record<string, unknown> | undefined;
  if (def && typeof def === 'object' && typeof def.createConnector === 'function') {
    return def.createConnector as ConnectorFactory;
  }
  return null;
}

export type LoadOutcome = { ok: true; factory: ConnectorFactory } | { ok: false; message: string };

async function importModule(file: string): Promise<Record<string, unknown> | string> {
  try {
    return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return `Файл не загружается как ES-модуль: ${reason.slice(0, 300)}`;
  }
}

/**
 * Imports the uploaded file and checks that it implements the connector interface for `kind`: its factory is run
 * once with empty settings (nothing connects before the first call) to see the connector it builds.
 */
export async function loadConnectorPlugin(file: string, kind: SourceKind): Promise<LoadOutcome> {
  const mod = await importModule(file);
  if (typeof mod === 'string') return { ok: false, message: mod };
  const problem = interfaceProblem(mod, kind);
  if (problem) return { ok: false, message: `Файл не реализует интерфейс коннектора: ${problem}` };
  return { ok: true, factory: pickFactory(mod)! };
}

/**
 * The factories of the plugins the connection path has loaded, by the file's sha256 (the file name): a module is
 * imported once per process, on its first use after an upload or a restart, from this node's local copy of the
 * stored drivers/<sha256>.mjs (held only while importing: the module stays in memory). It was checked at upload;
 * what it builds is checked on every build (buildPluginConnector). A failed load is not kept, so a file restored in
 * storage is picked up by the next call.
 */
const loaded = new Map<string, Promise<LoadOutcome>>();

async function importFactory(localFile: () => Promise<HeldCopy>): Promise<LoadOutcome> {
  let held: HeldCopy;
  try {
    held = await localFile();
  } catch (err) {
    return { ok: false, message: `Файл драйвера не найден в хранилище: ${err instanceof Error ? err.message : err}` };
  }
  let mod: Record<string, unknown> | string;
  try {
    mod = await importModule(held.file);
  } finally {
    held.release();
  }
  if (typeof mod === 'string') return { ok: false, message: mod };
  const factory = pickFactory(mod);
  if (!factory) return { ok: false, message: 'Файл не реализует интерфейс коннектора: нет функции createConnector' };
  return { ok: true, factory };
}

export async function pluginFactory(sha256: string, localFile: () => Promise<HeldCopy>): Promise<LoadOutcome> {
  let outcome = loaded.get(sha256);
  if (!outcome) {
    outcome = importFactory(localFile);
    loaded.set(sha256, outcome);
  }
  const result = await outcome;
  if (!result.ok && loaded.get(sha256) === outcome) loaded.delete(sha256);
  return result;
}

/** The connector a plugin builds, refused when it is not of the kind it was picked for (checked on every build). */
export function buildPluginConnector(
  factory: ConnectorFactory,
  kind: SourceKind,
  settings: SourceSettings,
  options: ConnectorOptions,
): Connector {
  let connector: Connector;
  try {
    connector = factory(settings, options);
  } catch (err) {
    if (err instanceof ConnectorError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConnectorError(`Плагин драйвера не создал подключение: ${reason}`, 'settings', { cause: err });
  }
  const problem =
    connector && typeof connector === 'object'
      ? kindProblem(String(connector.kind), String(connector.dialect), kind)
      : 'createConnector вернула не объект коннектора';
  if (problem) throw new ConnectorError(`Плагин драйвера не подходит: ${problem}`, 'settings');
  return guarded(connector);
}

/** A plugin's own failure (any error, not only ConnectorError) reaches the caller as a source error, never a 500. */
function asConnectorError(err: unknown): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new ConnectorError(`Ошибка плагина драйвера: ${reason}`, 'query', { cause: err });
}

async function* guardedRows(rows: AsyncIterable<unknown[]>): AsyncIterable<unknown[]> {
  try {
    yield* rows;
  } catch (err) {
    throw asConnectorError(err);
  }
}

function guarded(c: Connector): Connector {
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw asConnectorError(err);
    }
  };
  const copyCsv = c.copyCsv;
  return {
    kind: c.kind,
    dialect: c.dialect,
    check: () => call(() => c.check()),
    listSchemas: () => call(() => c.listSchemas()),
    listTables: (schema) => call(() => c.listTables(schema)),
    listColumns: (schema, table) => call(() => c.listColumns(schema, table)),
    query: (sql, params, opts) => call(() => c.query(sql, params, opts)),
    stream: (sql, params, opts) => guardedRows(c.stream(sql, params, opts)),
    openStream: (sql, params, opts) =>
      call(async () => {
        const inner = await c.openStream(sql, params, opts);
        return {
          columns: inner.columns,
          close: () => call(() => inner.close()),
          [Symbol.asyncIterator]: () => guardedRows(inner)[Symbol.asyncIterator](),
        };
      }),
    copyCsv: copyCsv && ((select, out, opts) => call(() => copyCsv.call(c, select, out, opts))),
    close: () => call(() => c.close()),
  };
}
