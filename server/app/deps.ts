import { ConnectorCache } from '../../adapters/sources';
import type { Db } from '../../db/client';
import type { AppConfig } from './config';
import type { SystemGroupIds } from '../users/system-groups';
import { TtlCache } from '../kernel/ttl-cache';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import type { SecretBox } from '../secrets/secret-box';
import type { DatasetModel } from '../query/compile/dataset-model';
import type { RowRule } from '../access/row-rules';
import type { ClsRule } from '../access/column-rules';
import { QueryEngine } from '../query/run/engine';
import type { CompiledQuery } from '../query/compile/types';
import type { WidgetForData, WidgetForDataStatement } from '../widgets/widget-load';
import type { WorkspaceDeletionGuard } from '../workspaces/deletion-guards';
import type { WorkspaceStageLookup } from '../workspaces/stage-binding';
import { SessionTokenCache } from '../auth/session-tokens';
import { LocalQueries } from '../data-sources/query-runner';
import { emptyHooks, registerHooks, registerJobKinds } from './hooks';
import { JobRunner } from '../jobs/jobs';
import type { Pool } from 'pg';

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

/** What areas plug into other areas: filled by registerHooks (server/app/hooks.ts) when the deps are built. */
interface AppHooks {
  /** Asked inside DELETE /api/workspaces/{id}; any one answering true blocks the deletion. */
  workspaceDeletionGuards: WorkspaceDeletionGuard[];
  /** Answers pipeline_stage of GET /api/workspaces/{id}; none means no workspace is bound. */
  workspaceStageLookup: WorkspaceStageLookup | null;
}

/** Everything a request needs from the process: built once at start (or per test app). */
export interface AppDeps {
  db: Db;
  config: AppConfig;
  systemGroups: SystemGroupIds;
  signingKey: Uint8Array;
  /** Encrypts source and channel secrets at rest. */
  secretBox: SecretBox;
  hooks: AppHooks;
  /** The app's pooled source connectors, one per saved source; closed when the app closes. */
  connectors: ConnectorCache;
  /** The SQL console queries this app runs; aborted when the app closes. */
  localQueries: LocalQueries;
  /** The app's pg-boss jobs (server/jobs): started with the app or on the first send, stopped when it closes. */
  jobs: JobRunner;
  caches: {
    userStatus: TtlCache<number, UserStatus | null>;
    apiTokens: TtlCache<string, ApiTokenIdentity | null>;
    /** When this app last wrote an API token's last_used_at (at most once a minute per token). */
    apiTokenTouches: Map<number, number>;
    /** The signing key imported once and the session tokens verified recently. */
    sessionTokens: SessionTokenCache;
    settings: TtlCache<string, unknown>;
    /** Runs compiled queries: the result cache and single flight (replace it through configureQueryEngine). */
    queryEngine: QueryEngine;
    /** Dataset models by dataset id; an entry serves only while the dataset's version is unchanged. */
    models: Map<number, DatasetModel>;
    /** Compiled widget queries by dataset version and request (compiling is pure: nothing to invalidate but age). */
    plans: TtlCache<string, CompiledQuery>;
    /** Whether a dataset's author may use a source of another workspace, keyed with the read epoch. */
    sourceRights: TtlCache<string, boolean>;
    /** A dataset's column-level security rules by dataset id, version and read epoch (server/access/column-rules.ts). */
    columnRules: TtlCache<string, ClsRule[]>;
    /** A dataset's row-level security rules by dataset id, version and read epoch (server/access/row-rules.ts). */
    rowRules: TtlCache<string, RowRule[]>;
    /** A user's attributes (the values RLS rules compare with) by user id and read epoch. */
    userAttributes: TtlCache<string, Map<string, string[]>>;
    /** What a widget data request needs (widget, caller's role, dataset version, sources), keyed with the read epoch. */
    widgetReads: TtlCache<string, WidgetForData>;
    /** The prepared query behind widget reads (server/widgets/widget-load.ts), made on first use for this db. */
    widgetForDataStatement: { statement?: WidgetForDataStatement };
    /**
     * Bumped (after commit) by every write that can change who reads what or what a read needs: memberships,
     * roles, group members, workspaces, sources, dataset and widget saves. Keys of the two caches above carry it, so
     * this process never serves a decision older than its last such write; other nodes by the caches' TTL.
     */
    readEpoch: { value: number };
  };
}

function createCaches(): AppDeps['caches'] {
  return {
    userStatus: new TtlCache(5_000),
    apiTokens: new TtlCache(5_000),
    apiTokenTouches: new Map(),
    sessionTokens: new SessionTokenCache(),
    settings: new TtlCache(2_000),
    queryEngine: new QueryEngine(),
    models: new Map(),
    plans: new TtlCache(10 * 60_000, 5_000),
    sourceRights: new TtlCache(READ_DECISION_TTL_MS),
    columnRules: new TtlCache(READ_DECISION_TTL_MS),
    rowRules: new TtlCache(READ_DECISION_TTL_MS),
    userAttributes: new TtlCache(READ_DECISION_TTL_MS),
    widgetReads: new TtlCache(READ_DECISION_TTL_MS),
    widgetForDataStatement: {},
    readEpoch: { value: 0 },
  };
}

/** What the composition knows before the deps are built: the database, the configuration and what start-up loaded. */
export type BaseDeps = Pick<AppDeps, 'db' | 'config' | 'systemGroups' | 'signingKey' | 'secretBox'>;

/**
 * The app's deps: fresh caches, connector pools and SQL console runs, and the hooks the areas register
 * (server/app/hooks.ts).
 */
export function createAppDeps(base: BaseDeps): AppDeps {
  const deps: AppDeps = {
    ...base,
    hooks: emptyHooks(),
    connectors: new ConnectorCache(),
    localQueries: new LocalQueries(base.db),
    jobs: new JobRunner((base.db as unknown as { $client: Pool }).$client),
    caches: createCaches(),
  };
  registerHooks(deps);
  registerJobKinds(deps);
  return deps;
}
