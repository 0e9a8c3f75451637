import { ConnectorError, createConnector, type SourceKind, type SourceSettings } from '../../adapters/sources';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { AppError, badRequest, invalid } from '../kernel/errors';
import { assertKindEnabled } from '../admin/source-types';
import { readableObject } from '../access/object-access';
import { logSourceAccess } from './access-log';
import { sourceDriver } from '../admin/drivers';
import { connectionSettings, guardPluginHosts, openSecrets } from './connection';
import { assertSourceAddressAllowed, sourceHostCheck } from './network-policy';
import { mergeSecrets } from './secrets';
import {
  nextSecrets,
  normalizeSettings,
  overrideSettings,
  secretChanges,
  withheldSecrets,
  type SettingsInput,
} from './settings';

const CHECK_OK_MESSAGE = 'Подключение успешно';
/** Budget for reaching the server (TCP, TLS, SSH, login): an unreachable host fails within it. */
const CHECK_CONNECT_TIMEOUT_MS = 5_000;
/** Budget for the whole check (connect, initial SQL, a trivial query). */
const CHECK_TOTAL_TIMEOUT_MS = 12_000;

export interface CheckResult {
  ok: boolean;
  message: string;
}

/**
 * Connects with the settings on a connector of its own (never the pooled one, so that a changed password or a
 * restarted server is really seen) and runs the kind's trivial query. A failure of the source is a result
 * (`ok: false` with the driver's words), not an error of the call: the call itself succeeded.
 */
export async function checkConnection(deps: AppDeps, kind: SourceKind, settings: SourceSettings): Promise<CheckResult> {
  let connector;
  try {
    // The kind's driver now: an uploaded plugin the administrator picked is what the check must exercise.
    const driver = await sourceDriver(deps, kind);
    const options = { connectTimeoutMs: CHECK_CONNECT_TIMEOUT_MS, poolSize: 1, checkHost: sourceHostCheck(deps) };
    await guardPluginHosts(driver, settings, options.checkHost);
    connector = driver.create ? driver.create(settings, options) : createConnector(kind, settings, options);
  } catch (err) {
    if (err instanceof ConnectorError) return { ok: false, message: err.message };
    throw err;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ConnectorError(
            `Сервер ${[settings.host, settings.http_port ?? settings.port].filter(Boolean).join(':')} не ответил за ${CHECK_TOTAL_TIMEOUT_MS / 1000} с`,
            'timeout',
          ),
        ),
      CHECK_TOTAL_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([connector.check(), timeout]);
    return { ok: true, message: CHECK_OK_MESSAGE };
  } catch (err) {
    if (err instanceof ConnectorError) return { ok: false, message: err.message || 'Не удалось подключиться' };
    throw err;
  } finally {
    clearTimeout(timer);
    // Not awaited: a hung server must not hold the answer (the connector closes its sockets in the background).
    void connector.close().catch(() => undefined);
  }
}

/** POST /api/data-source/check: settings that are not saved yet. Nothing is written. */
export async function checkSettings(
  deps: AppDeps,
  input: { type: string; settings: SettingsInput },
): Promise<CheckResult> {
  const kind = await assertKindEnabled(deps, input.type);
  const plain = normalizeSettings(kind, input.settings);
  await assertSourceAddressAllowed(deps, plain);
  return checkConnection(deps, kind, mergeSecrets(plain, secretChanges(input.settings).set));
}

/**
 * POST /api/data-source/{id}/check: the saved connection, optionally with some settings replaced. Overrides are
 * for owners only: with them a reader could send the saved password to a server of their choice.
 */
export async function checkSavedSource(
  deps: AppDeps,
  actor: Actor,
  id: number,
  overrides?: SettingsInput,
): Promise<CheckResult> {
  const { row, isOwner } = await readableObject(deps.db, actor, 'data_source', id);
  const hasOverrides = !!overrides && Object.values(overrides).some((v) => v !== undefined);
  if (hasOverrides && !isOwner) throw new AppError('forbidden');
  await logSourceAccess(
    deps.db,
    id,
    actor,
    'read',
    hasOverrides ? 'проверка подключения с изменёнными настройками' : 'проверка подключения',
  );
  const kind = row.type as SourceKind;
  if (hasOverrides && kind === 'file')
    throw invalid({ settings: 'file sources have no connection settings to override' });
  if (!hasOverrides) {
    const settings = await connectionSettings(deps, row);
    await assertSourceAddressAllowed(deps, settings);
    return checkConnection(deps, kind, settings);
  }
  const saved = row.settings as SourceSettings;
  const plain = normalizeSettings(kind, overrideSettings(saved, overrides));
  await assertSourceAddressAllowed(deps, plain);
  const stored = openSecrets(deps, row);
  const withheld = withheldSecrets(stored, overrides, plain, saved);
  if (withheld.includes('password')) throw badRequest('Адрес или защита подключения изменены: укажите пароль заново');
  if (withheld.length) throw badRequest('Адрес SSH-сервера изменён: укажите пароль или ключ SSH заново');
  return checkConnection(deps, kind, mergeSecrets(plain, nextSecrets(stored, overrides, plain, saved)));
}
