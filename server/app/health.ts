import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { errorEnvelope } from '../../adapters/rest/envelope';
import { migrationsCurrent } from '../../db/migrate';
import type { AppDeps } from './deps';

/*
 * The node's health endpoints (docs/cluster.md), outside /api and not in the OpenAPI document:
 * - GET /healthz: the process serves (200 {"status":"ok"}); nothing else is asked, so a slow database never gets a
 *   live node restarted.
 * - GET /readyz: 200 {"status":"ok"} when the metadata database answers, every migration of this build is applied and
 *   the storage is reachable; else 503 in the error envelope, `errors` naming what failed. 503 from the moment the node
 *   drains (SIGTERM, server/app/main.ts): the load balancer takes it out while it finishes what it serves.
 * A worker (NODE_ROLE=worker) serves only these, /metrics and its render pages (workerServes).
 */

/** A check longer than this is a failure: a probe answers within the load balancer's patience. */
const CHECK_TIMEOUT_MS = 2_000;

/**
 * A passed check answers the probes of the next second without asking again. Under load the metadata pool and the
 * event loop are busy with users' requests; a probe (haproxy asks twice a second) that waits behind them took a
 * serving node out of the balancer (bench:cluster saw 503s from haproxy for most of a 200-viewer run). A failure is
 * never reused, and draining answers at once.
 */
const READY_REUSE_MS = 1_000;

const NOT_READY = 'Узел не готов принимать запросы';
const CHECK_FAILED = {
  draining: 'Узел останавливается: новые запросы принимают другие узлы',
  database: 'База метаданных не отвечает',
  migrations: 'Миграции базы метаданных не применены для этой версии',
  storage: 'Хранилище файлов недоступно',
} as const;

type Check = Exclude<keyof typeof CHECK_FAILED, 'draining'>;

/** Whether the node takes new work: false from the moment it drains; `failures` asks its dependencies. */
export class Readiness {
  private drainingSince: number | undefined;
  /** One check at a time, shared by the probes that come while it runs. */
  private running: Promise<Partial<Record<Check, string>>> | undefined;
  /** The failures the last check logged, so an outage is logged when it starts and ends, not on every probe. */
  private lastFailed = '';
  /** When the last check passed. */
  private passedAt = 0;

  constructor(private readonly deps: AppDeps) {}

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  /** From now on /readyz answers 503 and every response closes its connection (Connection: close). */
  drain(): void {
    this.drainingSince ??= Date.now();
  }

  /** What failed (a message per check), empty when ready. */
  async failures(log: (msg: string, err?: unknown) => void = () => undefined): Promise<Record<string, string>> {
    if (this.draining) return { draining: CHECK_FAILED.draining };
    if (Date.now() - this.passedAt < READY_REUSE_MS) return {};
    this.running ??= this.runChecks(log).finally(() => (this.running = undefined));
    return this.running;
  }

  private async runChecks(log: (msg: string, err?: unknown) => void): Promise<Partial<Record<Check, string>>> {
    const failed: Partial<Record<Check, string>> = {};
    let cause: unknown;
    const { db, storage } = this.deps;
    await Promise.all([
      // One query answers both: the database answers (or throws), and has this build's migrations (or not).
      withTimeout(migrationsCurrent(db)).then(
        (current) => {
          if (!current) failed.migrations = CHECK_FAILED.migrations;
        },
        (e: unknown) => {
          failed.database = CHECK_FAILED.database;
          cause ??= e;
        },
      ),
      withTimeout(storage.check()).catch((e: unknown) => {
        failed.storage = CHECK_FAILED.storage;
        cause ??= e;
      }),
    ]);
    const names = Object.keys(failed).sort().join(',');
    this.passedAt = names ? 0 : Date.now();
    if (names !== this.lastFailed) {
      log(names ? `readiness: not ready (${names})` : 'readiness: ready again', cause);
      this.lastFailed = names;
    }
    return failed;
  }
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The metadata database's pool (its client under drizzle). */
export const metadataPool = (deps: AppDeps): Pool => (deps.db as unknown as { $client: Pool }).$client;

/**
 * What a worker serves: its health and metrics, and what its export renderer's browser loads from it (the render
 * pages under /api/render/ and the viewer's assets they import from /s/assets/).
 */
const WORKER_PATHS = /^\/(healthz|readyz|metrics)(\?|$)|^\/api\/render\/|^\/s\/assets\//;

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps, readiness: Readiness): void {
  if (deps.config.nodeRole === 'worker') {
    // Every other path is not on this node: 404 in the envelope, as for a path no node has. Not 503: nothing is
    // temporarily wrong, and a 503 would read as "retry" to a client and to haproxy (retry-on 503), and as an outage
    // to monitoring, when the caller only reached a worker instead of an API node.
    app.addHook('onRequest', async (req, reply) => {
      if (WORKER_PATHS.test(req.url)) return;
      const path = req.url.split('?')[0];
      return reply.code(404).send(errorEnvelope(404, `Путь не найден: ${req.method} ${path}`));
    });
  }
  // Draining: every answer closes its connection, so keep-alive clients (and the load balancer's pooled connections)
  // reconnect elsewhere instead of finding the port closed under them.
  app.addHook('onRequest', async (_req, reply) => {
    if (readiness.draining) reply.header('connection', 'close');
  });

  // Probes come every second or so from each balancer: no access-log line each (warn and above only).
  const quiet = { schema: { hide: true }, logLevel: 'warn' } as const;
  app.get('/healthz', quiet, async (_req, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));
  app.get('/readyz', quiet, async (req, reply) => {
    const failed = await readiness.failures((msg, err) => req.log.warn({ err }, msg));
    reply.header('cache-control', 'no-store');
    if (Object.keys(failed).length === 0) return reply.send({ status: 'ok' });
    return reply.code(503).send(errorEnvelope(503, NOT_READY, failed));
  });
}
