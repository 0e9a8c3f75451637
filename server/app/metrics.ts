import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorEnvelope } from '../../adapters/rest/envelope';
import { ERROR_TABLE } from '../kernel/errors';
import {
  dataPathReads,
  httpDurations,
  jobRunDurations,
  resultCacheHits,
  resultCacheMisses,
  sourceQueryDurations,
} from '../ops/ops';
import { sourceConnectionBudget } from '../../adapters/sources';
import { queryEngineFor } from '../query/run/engine';
import type { AppDeps } from './deps';
import { metadataPool } from './health';
import type { GaugeReading } from './prometheus';

/*
 * GET /metrics: Prometheus text (docs/cluster.md), outside /api and not in the OpenAPI document. Every request's
 * duration is recorded in server/ops's own buckets (a map lookup per request); prom-client is imported on the first
 * scrape only (./prometheus), so a node nobody scrapes, the single-node default, never loads it.
 *
 * Who may scrape: with METRICS_TOKEN, a caller with `Authorization: Bearer <token>` (401 without it, whoever asks).
 * Without it, only a caller on this machine that came through no proxy: the socket's peer is a loopback address and
 * the request has no X-Forwarded-For / Forwarded header (a load balancer on the same host adds one: a user reaching
 * /metrics through it is refused); 403 otherwise, saying to set the token. Route names, job kinds and counts are no
 * secret of a user's data, but they are nobody's business outside the installation.
 */

/** Label of a request that matched no route (not-found answers, refusals before routing): not its raw URL. */
const UNMATCHED = 'unmatched';
const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Null when the caller may scrape, else the refusal's status and message. */
function refusal(req: FastifyRequest, token: string | undefined): { status: number; message: string } | null {
  if (token) {
    const auth = req.headers.authorization ?? '';
    const given = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
    return given && sameToken(given, token) ? null : { status: 401, message: ERROR_TABLE.unauthorized.message };
  }
  const proxied = req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined;
  if (isLoopback(req.socket.remoteAddress) && !proxied) return null;
  return {
    status: 403,
    message: 'Метрики отдаются только с этого же сервера; для сбора по сети задайте METRICS_TOKEN',
  };
}

/** The app's gauges, read at scrape time: the metadata pool, the source connection budget, the result cache, the jobs. */
async function readGauges(deps: AppDeps): Promise<GaugeReading[]> {
  const pool = metadataPool(deps);
  const cache = queryEngineFor(deps).cache;
  const readings: GaugeReading[] = [
    {
      name: 'analytics_db_pool_connections',
      help: 'Connections of the metadata database pool, by state, and its size (max)',
      values: [
        { labels: { state: 'total' }, value: pool.totalCount },
        { labels: { state: 'idle' }, value: pool.idleCount },
        { labels: { state: 'waiting' }, value: pool.waitingCount },
        { labels: { state: 'max' }, value: pool.options.max ?? 10 },
      ],
    },
    {
      name: 'analytics_source_connections',
      help: 'Connections this node holds to source servers, and its limit (SOURCE_CONNECTIONS_TOTAL)',
      values: [
        { labels: { state: 'in_use' }, value: sourceConnectionBudget.inUse() },
        { labels: { state: 'limit' }, value: sourceConnectionBudget.current.total },
      ],
    },
    {
      name: 'analytics_result_cache_entries',
      help: "Results in this node's result cache",
      values: [{ value: cache.size }],
    },
    {
      name: 'analytics_result_cache_bytes',
      help: "Estimated memory of this node's result cache",
      values: [{ value: cache.totalBytes }],
    },
  ];
  try {
    const queues = await deps.jobs.queueCounts();
    readings.push({
      name: 'analytics_job_queue_jobs',
      help: 'Jobs waiting (queued) and running (active), per job kind',
      values: queues.flatMap((q) => [
        { labels: { kind: q.name, state: 'queued' }, value: q.queued },
        { labels: { kind: q.name, state: 'active' }, value: q.active },
      ]),
    });
  } catch {
    // The database not answering shows in /readyz and in the pool gauges; the scrape still answers.
  }
  return readings;
}

export function registerMetrics(app: FastifyInstance, deps: AppDeps): void {
  app.addHook('onResponse', async (req, reply) => {
    const status = reply.statusCode;
    httpDurations.observe(
      [req.routeOptions.url ?? UNMATCHED, req.method, STATUS_CLASSES[Math.trunc(status / 100)] ?? '5xx'],
      reply.elapsedTime / 1000,
    );
  });

  let exporter: Promise<typeof import('./prometheus')> | undefined;
  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (req, reply) => {
    const refused = refusal(req, deps.config.metricsToken);
    if (refused) return reply.code(refused.status).send(errorEnvelope(refused.status, refused.message));
    exporter ??= import('./prometheus');
    const { scrape } = await exporter;
    const { contentType, text } = await scrape({
      histograms: [httpDurations, sourceQueryDurations, jobRunDurations],
      counters: [resultCacheHits, resultCacheMisses, dataPathReads],
      gauges: await readGauges(deps),
    });
    return reply.header('cache-control', 'no-store').type(contentType).send(text);
  });
}
