/*
 * THE operational counters of this process (GET /metrics): request and source-query durations, result-cache hits,
 * job run durations. Kept here in plain arrays, not in prom-client: recording is on the hot path (a cached widget read
 * is about half a millisecond) and must cost a map lookup and a few additions, and prom-client itself loads only when
 * /metrics is first asked (server/app/metrics.ts), so a node nobody scrapes never holds it. The exporter reads these
 * at scrape time. Process-wide, as Prometheus counts per process: apps built in one process (tests) add up.
 */

/** One label set's buckets: counts[i] observations <= bounds[i] (not cumulative), the last one past every bound. */
export interface HistogramSeries {
  labels: Record<string, string>;
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram with fixed bounds (seconds) and a bounded number of label sets, each made on its first observation. */
export class Histogram {
  readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly bounds: readonly number[],
    /** Label sets past this many are counted under `other` values: a bug cannot grow the map without end. */
    private readonly maxSeries = 2_000,
  ) {}

  /** `values` in the order of labelNames. */
  observe(values: readonly string[], seconds: number): void {
    const key = values.length === 1 ? values[0] : values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      if (this.series.size >= this.maxSeries)
        return this.observe(
          this.labelNames.map(() => 'other'),
          seconds,
        );
      s = {
        labels: Object.fromEntries(this.labelNames.map((n, i) => [n, values[i]])),
        counts: new Array<number>(this.bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      this.series.set(key, s);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]) i++;
    s.counts[i]++;
    s.sum += seconds;
    s.count++;
  }
}

/** A counter, by the values of one label (few, known ones) or without a label. */
export class Counter {
  readonly values = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelName?: string,
  ) {}

  inc(value = ''): void {
    this.values.set(value, (this.values.get(value) ?? 0) + 1);
  }
}

const REQUEST_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const QUERY_BOUNDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const JOB_BOUNDS = [0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3_600, 21_600];

/** Every HTTP request: the route's pattern (never the raw URL), the method, the status class (2xx…5xx). */
export const httpDurations = new Histogram(
  'analytics_http_request_duration_seconds',
  'Time to answer an HTTP request, by route pattern, method and status class',
  ['route', 'method', 'status_class'],
  REQUEST_BOUNDS,
);

/**
 * Every query sent to a source (server/query/run/engine.ts), by source kind (postgresql, mysql, clickhouse, file) or
 * `extract`; a streamed read (file exports) counts the time until it opened.
 */
export const sourceQueryDurations = new Histogram(
  'analytics_source_query_duration_seconds',
  'Time a source took to answer a query, by source kind',
  ['kind'],
  QUERY_BOUNDS,
);

/** Reads the result cache answered: from this node's memory, from a read already under way, or from Redis. */
export const resultCacheHits = new Counter(
  'analytics_result_cache_hits_total',
  'Widget reads answered without asking the source, by where the answer came from',
  'level',
);

/** Reads neither cache level answered: each one a source query. */
export const resultCacheMisses = new Counter(
  'analytics_result_cache_misses_total',
  'Widget reads the result cache could not answer (each one a source query)',
);

/** Widget data reads (server/query/read.ts), by the path that answered: rollup, extract or live. */
export const dataPathReads = new Counter(
  'analytics_data_path_total',
  'Widget data reads by the path that answered them (rollup, extract, live)',
  'path',
);

/** Jobs this node ran (server/jobs/jobs.ts), by kind and outcome. */
export const jobRunDurations = new Histogram(
  'analytics_job_run_duration_seconds',
  'Time this node took to run a job, by job kind and outcome',
  ['kind', 'outcome'],
  JOB_BOUNDS,
);

/** The source kind label of a query target: the live source's kind (by its dialect) or its extract. */
export function sourceKindLabel(dataKey: string, dialect: string): string {
  if (dataKey.startsWith('extract:')) return 'extract';
  return dialect === 'duckdb' ? 'file' : dialect;
}
