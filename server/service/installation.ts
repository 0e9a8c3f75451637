import type { AppDeps } from '../app/deps';
import { SESSION_TOKEN_TTL_SECONDS } from '../auth/session-tokens';
import { AppError } from '../kernel/errors';
import { readSetting, writeSetting } from './store';
import { settingChangedEverywhere } from '../kernel/cache-changes';

export interface InstallationSettings {
  instance_name: string;
  base_url: string | null;
  default_locale: string;
  session_token_ttl: number;
  features: Record<string, boolean>;
  /** The most revisions kept per object (server/revisions prunes the oldest beyond it); 0: all. */
  revisions_max_per_object: number;
}

export type InstallationSettingsUpdate = Partial<Omit<InstallationSettings, 'session_token_ttl'>>;

const KEY = 'installation';
const DEFAULTS: Omit<InstallationSettings, 'session_token_ttl'> = {
  instance_name: 'Аналитическая платформа',
  base_url: null,
  default_locale: 'ru',
  features: { pipelines: true, public_links: true, mailings: true, ai_assistant: false, file_export: true },
  revisions_max_per_object: 0,
};

export async function getInstallationSettings(deps: AppDeps): Promise<InstallationSettings> {
  const stored = (await deps.caches.settings.getOrLoad(KEY, async () => (await readSetting(deps.db, KEY)) ?? {})) as
    Partial<InstallationSettings> | undefined;
  const merged = { ...DEFAULTS, ...stored, features: { ...DEFAULTS.features, ...stored?.features } };
  return {
    ...merged,
    base_url: merged.base_url ?? deps.config.publicBaseUrl ?? null,
    // The session lifetime is part of the contract (900 s): shown, never changed.
    session_token_ttl: SESSION_TOKEN_TTL_SECONDS,
  };
}

/** A partial update: fields not sent keep their value; features are merged key by key. */
export async function updateInstallationSettings(
  deps: AppDeps,
  input: InstallationSettingsUpdate,
): Promise<InstallationSettings> {
  const current = await getInstallationSettings(deps);
  const next = {
    instance_name: input.instance_name ?? current.instance_name,
    base_url: input.base_url === undefined ? current.base_url : input.base_url,
    default_locale: input.default_locale ?? current.default_locale,
    features: { ...current.features, ...input.features },
    revisions_max_per_object: input.revisions_max_per_object ?? current.revisions_max_per_object,
  };
  await writeSetting(deps.db, KEY, next);
  settingChangedEverywhere(deps, KEY);
  return getInstallationSettings(deps);
}

/** The switches of `features` that turn a whole area off, with the name a refusal gives. */
const FEATURE_LABELS = {
  pipelines: 'Пайплайны',
  public_links: 'Публичные ссылки',
  mailings: 'Рассылки',
  file_export: 'Экспорт в файлы',
  ai_assistant: 'ИИ-ассистент',
} as const;

export type Feature = keyof typeof FEATURE_LABELS;

/**
 * 403 «Функция «…» отключена администратором платформы» when a system administrator switched the feature off
 * (PUT /api/settings, features). Read from the settings cache: no metadata query on the hot path.
 */
export async function assertFeatureEnabled(deps: AppDeps, feature: Feature): Promise<void> {
  const { features } = await getInstallationSettings(deps);
  if (features[feature] === false)
    throw new AppError('forbidden', `Функция «${FEATURE_LABELS[feature]}» отключена администратором платформы`);
}
