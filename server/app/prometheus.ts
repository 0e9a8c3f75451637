import {
  collectDefaultMetrics,
  Gauge,
  Registry,
  type Metric,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import type { Counter, Histogram } from '../ops/ops';

/*
 * The /metrics exporter (server/app/metrics.ts imports it on the first scrape): prom-client's registry with the
 * process's own metrics (memory, CPU, event-loop delay, GC), the counters server/ops recorded, exported as they are at
 * scrape time, and the gauges metrics.ts read from the app just then. Only prom-client and types are imported here:
 * whatever this chunk shared with the main bundle would be moved into a chunk of its own by the build, where code
 * that finds files beside itself (db/migrate.ts's migrations) no longer would.
 */

/** A gauge's values as read at scrape time. */
export interface GaugeReading {
  name: string;
  help: string;
  values: { labels?: Record<string, string>; value: number }[];
}

export interface ScrapeInput {
  histograms: Histogram[];
  counters: Counter[];
  gauges: GaugeReading[];
}

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

function processMetrics(input: ScrapeInput): Registry {
  if (processRegistry) return processRegistry;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const h of input.histograms) registry.registerMetric(recorded(h, 'histogram', () => histogramValues(h)));
  for (const c of input.counters) registry.registerMetric(recorded(c, 'counter', () => counterValues(c)));
  return (processRegistry = registry);
}

function gauges(readings: GaugeReading[]): Registry {
  const registry = new Registry();
  for (const r of readings) {
    const labelNames = [...new Set(r.values.flatMap((v) => Object.keys(v.labels ?? {})))];
    const g = new Gauge({ name: r.name, help: r.help, labelNames, registers: [registry] });
    for (const v of r.values) g.set(v.labels ?? {}, v.value);
  }
  return registry;
}

export async function scrape(input: ScrapeInput): Promise<{ contentType: string; text: string }> {
  const own = processMetrics(input);
  return { contentType: own.contentType, text: `${await own.metrics()}\n${await gauges(input.gauges).metrics()}` };
}
