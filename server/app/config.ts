import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

/** The ranges fastify's proxy-addr knows by name. */
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** An address, a CIDR network (prefix 1..32 or 1..128, as proxy-addr takes it) or a named range. */
function isProxyEntry(entry: string): boolean {
  if (NAMED_RANGES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (version === 4 ? 32 : 128);
}

/*
 * TRUST_PROXY: whose X-Forwarded-For names the client (fastify's trustProxy): true (any peer, for when nothing but
 * the proxy reaches this port) or the proxies' addresses and networks. A hop count is refused rather than passed on:
 * fastify ignores it (it cannot tell the proxy from a direct client spoofing the header), so it would silently do
 * nothing. Bad entries fail at start here, not as a TypeError of proxy-addr inside fastify.
 */
const trustProxy = z.string().transform((value, ctx): boolean | string[] => {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) {
    ctx.addIssue({ code: 'custom', message: 'a hop count cannot be trusted: name the proxy addresses or networks' });
    return z.NEVER;
  }
  const entries = value.split(',').map((e) => e.trim());
  const bad = entries.filter((e) => !isProxyEntry(e));
  if (bad.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `true, false, or proxy addresses, CIDR networks, loopback, linklocal, uniquelocal separated by commas; not: ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
    });
    return z.NEVER;
  }
  return entries;
});

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().url().optional(),
  ADMIN_USERNAME: z.string().trim().min(1).default('admin'),
  ADMIN_PASSWORD: z.string().min(1).optional(),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PUBLIC_BASE_URL: z.string().optional(),
  SECRETS_KEY: z.string().optional(),
  UPLOAD_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024 * 1024),
  SOURCE_CONNECTIONS_TOTAL: z.coerce.number().int().positive().default(50),
  SOURCE_CONNECTIONS_PER_SERVER: z.coerce.number().int().positive().default(10),
  SOURCE_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  SOURCE_CONNECTION_WAIT_MS: z.coerce.number().int().min(0).default(3_000),
  PUBLIC_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(1_200),
  TRUST_PROXY: trustProxy.default(false),
  STORAGE_URL: z
    .string()
    .regex(/^(file:\/\/\/|s3:\/\/[^/?#]+)/, 'file:///<folder> or s3://<bucket>/<prefix>?endpoint=…&region=…')
    .optional(),
  STORAGE_CACHE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024 * 1024),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'redis://host:port[/db] or rediss://…')
    .optional(),
  REDIS_KEY_PREFIX: z.string().max(200).default('analytics:'),
  NODE_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  DRAIN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(3_000),
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
});

/** What a node does (docs/cluster.md): all (one node), api (HTTP, no jobs) or worker (jobs, its render pages). */
export type NodeRole = 'all' | 'api' | 'worker';

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  adminUsername: string;
  adminPassword?: string;
  bodyLimitBytes: number;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  publicBaseUrl?: string;
  secretsKey?: string;
  uploadLimitBytes: number;
  /** Connections to source servers: all together, per server, idle lifetime, wait for a free one (connection-budget.ts). */
  sourceConnections: { total: number; perServer: number; idleTimeoutMs: number; waitMs: number };
  /** Requests a minute per client address on the unauthenticated share-link viewer paths (0: no limit). */
  publicRateLimitPerMinute: number;
  /** Proxies whose X-Forwarded-For gives the client address (fastify's trustProxy): none, all, or these. */
  trustProxy: boolean | string[];
  /** Where files, extracts, exports and plugins live (server/storage): undefined = file://DATA_DIR/storage. */
  storageUrl?: string;
  /** Bytes of local copies of stored objects a node keeps (server/storage/local-copies.ts). */
  storageCacheBytes: number;
  /** Shared rate-limit windows and the second-level result cache (optional). */
  redisUrl?: string;
  /** Put before every Redis key: installations (or test runs) sharing one Redis keep apart. */
  redisKeyPrefix: string;
  nodeRole: NodeRole;
  /**
   * After SIGTERM, how long the node keeps serving with GET /readyz answering 503 before it closes its port, so the
   * load balancer's health check takes it out first (server/app/main.ts).
   */
  drainDelayMs: number;
  /** Bearer token GET /metrics asks for; without it /metrics answers only callers on this machine (server/app/metrics.ts). */
  metricsToken?: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // An empty variable (ADMIN_PASSWORD= in a unit file) means "not set", not "set to nothing".
  const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(defined);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    adminUsername: e.ADMIN_USERNAME,
    adminPassword: e.ADMIN_PASSWORD,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    logLevel: e.LOG_LEVEL,
    publicBaseUrl: e.PUBLIC_BASE_URL,
    secretsKey: e.SECRETS_KEY,
    uploadLimitBytes: e.UPLOAD_LIMIT_BYTES,
    sourceConnections: {
      total: e.SOURCE_CONNECTIONS_TOTAL,
      perServer: e.SOURCE_CONNECTIONS_PER_SERVER,
      idleTimeoutMs: e.SOURCE_IDLE_TIMEOUT_MS,
      waitMs: e.SOURCE_CONNECTION_WAIT_MS,
    },
    publicRateLimitPerMinute: e.PUBLIC_RATE_LIMIT_PER_MINUTE,
    trustProxy: e.TRUST_PROXY,
    storageUrl: e.STORAGE_URL,
    storageCacheBytes: e.STORAGE_CACHE_BYTES,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    nodeRole: e.NODE_ROLE,
    drainDelayMs: e.DRAIN_DELAY_MS,
    metricsToken: e.METRICS_TOKEN,
  };
}
