import {
  collectDefaultMetrics,
  Gauge,
  Registry,
  type Metric,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import { sourceConnectionBudget } from '../../adapters/sources';
import { queryEngineFor } from '../query/run/engine';
import {
  Counter,
  Histogram,
  httpDurations,
  jobRunDurations,
  resultCacheHits,
  resultCacheMisses,
  sourceQueryDurations,
} from '../ops/ops';
import type { AppDeps } from './deps';
import { metadataPool } from './health';

/*
 * The /metrics exporter (server/app/metrics.ts imports it on the first scrape): prom-client's registry with the
 * process's own metrics (memory, CPU, event-loop delay, GC), the counters server/ops recorded, exported as they are at
 * scrape time, and gauges read from the app then: the metadata pool, the source connection budget, the result cache,
 * the job queues.
 */

type Values = MetricValue<string>[];

/** A metric prom-client's registry formats, its values built at scrape time from server/ops's own record. */
function recorded(
  source: { name: string; help: string },
  type: 'histogram' | 'counter',
  values: () => Values,
): Metric<string> {
  const get = async () =>
    ({
      name: source.name,
      help: source.help,
      type,
      aggregator: 'sum',
      values: values(),
    }) as unknown as MetricObjectWithValues<MetricValue<string>>;
  return { name: source.name, help: source.help, get } as unknown as Metric<string>;
}

function histogramValues(h: Histogram): Values {
  const out: Values = [];
  for (const s of h.series.values()) {
    let cumulative = 0;
    h.bounds.forEach((le, i) => {
      cumulative += s.counts[i];
      out.push({ metricName: `${h.name}_bucket`, labels: { ...s.labels, le }, value: cumulative } as never);
    });
    out.push({ metricName: `${h.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count } as never);
    out.push({ metricName: `${h.name}_sum`, labels: s.labels, value: s.sum } as never);
    out.push({ metricName: `${h.name}_count`, labels: s.labels, value: s.count } as never);
  }
  return out;
}

function counterValues(c: Counter): Values {
  return [...c.values].map(([value, n]) => ({ labels: c.labelName ? { [c.labelName]: value } : {}, value: n }));
}

/** The process's registry: made on the first scrape, kept (the default metrics keep their own state). */
let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (processRegistry) return processRegistry;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const h of [httpDurations, sourceQueryDurations, jobRunDurations])
    registry.registerMetric(recorded(h, 'histogram', () => histogramValues(h)));
  for (const c of [resultCacheHits, resultCacheMisses])
    registry.registerMetric(recorded(c, 'counter', () => counterValues(c)));
  return (processRegistry = registry);
}

/** The app's gauges, read now. */
async function appMetrics(deps: AppDeps): Promise<Registry> {
  const registry = new Registry();
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });

  const pool = metadataPool(deps);
  const poolGauge = gauge('analytics_db_pool_connections', 'Connections of the metadata database pool', ['state']);
  poolGauge.set({ state: 'total' }, pool.totalCount);
  poolGauge.set({ state: 'idle' }, pool.idleCount);
  poolGauge.set({ state: 'waiting' }, pool.waitingCount);
  poolGauge.set({ state: 'max' }, pool.options.max ?? 10);

  const budget = gauge(
    'analytics_source_connections',
    'Connections this node holds to source servers, and its limit (SOURCE_CONNECTIONS_TOTAL)',
    ['state'],
  );
  budget.set({ state: 'in_use' }, sourceConnectionBudget.inUse());
  budget.set({ state: 'limit' }, sourceConnectionBudget.current.total);

  const cache = queryEngineFor(deps).cache;
  gauge('analytics_result_cache_entries', "Results in this node's result cache").set(cache.size);
  gauge('analytics_result_cache_bytes', "Estimated memory of this node's result cache").set(cache.totalBytes);

  const queues = gauge('analytics_job_queue_jobs', 'Jobs waiting (queued) and running (active), per job kind', [
    'kind',
    'state',
  ]);
  try {
    for (const q of await deps.jobs.queueCounts()) {
      queues.set({ kind: q.name, state: 'queued' }, q.queued);
      queues.set({ kind: q.name, state: 'active' }, q.active);
    }
  } catch {
    // The database not answering shows in /readyz and in the pool gauges; the scrape still answers.
  }
  return registry;
}

export async function scrape(deps: AppDeps): Promise<{ contentType: string; text: string }> {
  const own = processMetrics();
  const app = await appMetrics(deps);
  return { contentType: own.contentType, text: `${await own.metrics()}\n${await app.metrics()}` };
}
