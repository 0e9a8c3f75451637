import type { AppDeps } from '../app/deps';
import { readSetting, writeSetting } from '../service/store';
import { settingChangedEverywhere } from '../kernel/cache-changes';

/*
 * The AI provider of the installation (GET/PUT /api/admin/ai-provider): one entry of the settings table, key
 * `ai_provider`. The api_key is sealed by the secret box and never read back: reads answer api_key_set.
 */

const KEY = 'ai_provider';
const DEFAULT_AI_TIMEOUT_MS = 30_000;

export interface StoredAiProvider {
  enabled: boolean;
  provider: string;
  base_url: string | null;
  model: string | null;
  api_key_sealed: string | null;
  allowed_group_ids: number[];
  timeout_ms: number;
}

const DEFAULTS: StoredAiProvider = {
  enabled: false,
  provider: 'openai',
  base_url: null,
  model: null,
  api_key_sealed: null,
  allowed_group_ids: [],
  timeout_ms: DEFAULT_AI_TIMEOUT_MS,
};

export async function storedAiProvider(deps: AppDeps): Promise<StoredAiProvider> {
  return (await deps.caches.settings.getOrLoad(KEY, async () => ({
    ...DEFAULTS,
    ...(await readSetting<Partial<StoredAiProvider>>(deps.db, KEY)),
  }))) as StoredAiProvider;
}

export async function saveAiProvider(deps: AppDeps, value: StoredAiProvider): Promise<void> {
  await writeSetting(deps.db, KEY, value);
  settingChangedEverywhere(deps, KEY);
}
