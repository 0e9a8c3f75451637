import type { DbOrTx } from '../../db/client';
import type { AppDeps } from '../app/deps';
import { readSetting, writeSetting } from '../service/store';
import type { AccountType } from '../users/accounts';
import { settingChangedEverywhere } from '../kernel/cache-changes';

export interface ApiTokenSettings {
  enabled: boolean;
  allowed_account_types: AccountType[];
  access_group_id: number | null;
}

const KEY = 'mcp_tokens';
// Off until a system administrator turns it on: long-lived tokens are a deliberate decision of the installation.
const DEFAULT_API_TOKEN_SETTINGS: ApiTokenSettings = {
  enabled: false,
  allowed_account_types: ['local', 'sso', 'service'],
  access_group_id: null,
};

export async function getApiTokenSettings(deps: AppDeps): Promise<ApiTokenSettings> {
  return (await deps.caches.settings.getOrLoad(KEY, async () => ({
    ...DEFAULT_API_TOKEN_SETTINGS,
    ...(await readSetting<Partial<ApiTokenSettings>>(deps.db, KEY)),
  }))) as ApiTokenSettings;
}

export async function saveApiTokenSettings(
  deps: AppDeps,
  db: DbOrTx,
  value: ApiTokenSettings,
): Promise<ApiTokenSettings> {
  await writeSetting(db, KEY, value);
  settingChangedEverywhere(deps, KEY);
  return value;
}
