import type { Db } from '../db/client';
import type { AppConfig } from './config';
import type { SystemGroupIds } from './users/system-groups';
import { TtlCache } from './ttl-cache';
import type { SecretBox } from './secrets/secret-box';

export interface UserStatus {
  username: string;
  accountType: string;
  active: boolean;
}

export interface ApiTokenIdentity {
  tokenId: number;
  userId: number;
  status: string;
}

/** Everything a request needs from the process: built once at start (or per test app). */
export interface AppDeps {
  db: Db;
  config: AppConfig;
  systemGroups: SystemGroupIds;
  signingKey: Uint8Array;
  /** Encrypts source and channel secrets at rest. */
  secretBox: SecretBox;
  caches: {
    userStatus: TtlCache<number, UserStatus | null>;
    apiTokens: TtlCache<string, ApiTokenIdentity | null>;
    settings: TtlCache<string, unknown>;
  };
}

export function createCaches(): AppDeps['caches'] {
  return {
    userStatus: new TtlCache(5_000),
    apiTokens: new TtlCache(5_000),
    settings: new TtlCache(2_000),
  };
}
