import { createRequire } from 'node:module';
import type * as CronParser from 'cron-parser';
import type { PgBoss, Job } from 'pg-boss';
import type pg from 'pg';
import type { z } from 'zod';
import { ListenConnection } from '../../db/listen';
import { jobRunDurations } from '../ops/ops';

/*
 * THE job module: one pg-boss instance per application on the metadata PostgreSQL (embedded or external, the same
 * pool the app uses, and on a working node a LISTEN connection of its own), so several API nodes share the queues and
 * any node may run a job. Every job type (extract runs and schedules, exports, mailings and their schedules) is a
 * JobKind registered once when the app builds its deps (createAppDeps in server/app/start.ts), never at module load:
 * its name is its queue, its payload is checked with its schema on send and on receipt, its concurrency is per node.
 *
 * Started with the app (main.ts) or on the first send (an app built by a test), stopped with the app: local jobs are
 * aborted first (their AbortSignal fires), then pg-boss stops with a short grace period, so a shutdown never hangs.
 *
 * Work survives its node (docs/cluster.md): an `api` node (work: false) starts pg-boss only to send and schedule; it
 * runs no handler, no start hook, no periodic sweep, no pg-boss supervision or cron pass. A node that works refreshes
 * each running job's pg-boss heartbeat; when a node dies, the monitor of any live worker (every MONITOR_SECONDS)
 * finds the heartbeat stale after the kind's heartbeatSeconds and retries the job (its retryLimit, bounded) or fails
 * it. What pg-boss cannot see (a run's own row left `running`) the areas' sweeps mend: `every` runs them on each
 * working node, often enough that lost work is retried or failed within a minute.
 */

/**
 * Nodes that start together on a new database race to create pg-boss's schema: the loser of two concurrent CREATE
 * SCHEMA IF NOT EXISTS fails on pg_namespace's unique index, which pg-boss does not recognise as its create race,
 * and the node exits. So pg-boss starts (installs or migrates) one node at a time: a session advisory lock held on
 * one pooled connection while it starts.
 */
const BOSS_START_LOCK = 7_212_027;

async function startOneAtATime(pool: pg.Pool, start: () => Promise<unknown>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [BOSS_START_LOCK]);
    try {
      await start();
    } finally {
      await client.query('select pg_advisory_unlock($1)', [BOSS_START_LOCK]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}

/** The first key of the advisory locks `JobRunner.exclusive` takes (the second is the job's own key, hashed). */
const EXCLUSIVE_LOCK_NS = 7_212_026;
/** How often a working node's pg-boss looks for jobs whose heartbeat or expiry ran out (pg-boss's default is 60 s). */
const MONITOR_SECONDS = 10;
/**
 * How often an idle worker looks for jobs while the LISTEN connection stands: what no NOTIFY announces is found by
 * then (a job retried after its node died, one whose start time was ahead).
 */
const NOTIFY_POLL_SECONDS = 10;
/** A job not refreshed this long lost its node (pg-boss refreshes every half of it; its minimum is 10). */
const JOB_HEARTBEAT_SECONDS = 20;
/**
 * The lock session of `exclusive` tells PostgreSQL to probe its client after 10 s of silence, every 5 s, 3 times: a
 * node that vanished without closing its socket (power loss, a network cut) frees its locks within about 25 s instead
 * of the server's default two hours. Session settings, harmless on a local socket (ignored there).
 */
const KEEPALIVE_SQL = 'set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3';
/** pg-boss states of a job that will still run (or runs now, perhaps on a node that died and is not yet found). */
const PENDING_STATES = new Set(['created', 'retry', 'active']);

/** A job in this state will still run, or runs now (an active job of a dead node, until its heartbeat runs out). */
export const isPendingJobState = (state: string): boolean => PENDING_STATES.has(state);

export interface JobContext {
  /** pg-boss's id of the job. */
  jobId: string;
  /** Fires when the job is cancelled on this node or the app stops: the handler must stop its work. */
  signal: AbortSignal;
  /**
   * True once the signal fired because this node stops (SIGTERM, an upgrade), not because the job was cancelled: work
   * that can be resumed or re-run is left as it is, and pg-boss hands the job to another node (its retryLimit).
   */
  nodeStopping(): boolean;
}

/** A job kind's name (its queue, kebab-case, unique) and payload: what a sender needs to know. */
export interface JobKindRef<P> {
  name: string;
  payload: z.ZodType<P>;
}

/** A registered kind: its handler (built with the app's deps) and how it runs. */
export interface JobKind<P> extends JobKindRef<P> {
  handler: (payload: P, ctx: JobContext) => Promise<void>;
  /** Jobs of this kind one node runs at once. */
  concurrency: number;
  /**
   * pg-boss queue policy: 'standard' (default) or 'singleton' (one active job per singleton key, e.g. a dataset id).
   */
  policy?: 'standard' | 'singleton' | 'stately';
  /** Seconds a job may stay active before pg-boss fails it (a handler that never ends). */
  expireInSeconds?: number;
  /**
   * How many times pg-boss runs a job again once its node died (heartbeat stale) or its handler threw: bounded, so a
   * job that kills every node it runs on ends. 0 (default): a lost job is failed, and the area's sweep ends its run.
   */
  retryLimit?: number;
  /** Seconds before such a retry (default 0). */
  retryDelay?: number;
  /** Seconds without a heartbeat after which a running job counts as lost (default JOB_HEARTBEAT_SECONDS, min 10). */
  heartbeatSeconds?: number;
}

/** Declares a job kind's name and payload, its type inferred from the schema. */
export function jobKind<S extends z.ZodType>(name: string, payload: S): JobKindRef<z.output<S>> {
  return { name, payload: payload as z.ZodType<z.output<S>> };
}

export interface JobRunnerOptions {
  /** How often an idle worker asks for new jobs (pg-boss polls; 0.5 s is its minimum). */
  pollingIntervalSeconds?: number;
  /**
   * Set false to send jobs without running any (a node that only serves requests, NODE_ROLE=api): no handler, no
   * start hook, no periodic sweep, and pg-boss neither supervises the queues nor fires cron schedules there.
   */
  work?: boolean;
}

interface Periodic {
  name: string;
  ms: number;
  work: () => Promise<void>;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

export class JobRunner {
  private readonly kinds = new Map<string, JobKind<unknown>>();
  private boss: PgBoss | undefined;
  private starting: Promise<PgBoss> | undefined;
  private stopped = false;
  private readonly startHooks: (() => Promise<void>)[] = [];
  private readonly periodic: Periodic[] = [];
  /** Pooled connections whose session already got KEEPALIVE_SQL. */
  private readonly probed = new WeakSet<pg.PoolClient>();
  /** Jobs this node runs now, by pg-boss id, with their queue (what a stop hands back to the other nodes). */
  private readonly running = new Map<string, { controller: AbortController; queue: string }>();
  /** pg-boss's NOTIFY channel, once this node listens on it. */
  private notifyChannel: string | undefined;

  /** `pool`: the metadata database's pool (the app's own; pg-boss uses its own schema in the same database). */
  constructor(
    private readonly pool: pg.Pool,
    private readonly options: JobRunnerOptions = {},
  ) {}

  /** Registers a kind before start; registering one name twice is a programming error. */
  register<P>(kind: JobKind<P>): void {
    if (this.kinds.has(kind.name)) throw new Error(`job kind ${kind.name} registered twice`);
    if (this.boss || this.starting) throw new Error(`job kind ${kind.name} registered after the job runner started`);
    this.kinds.set(kind.name, kind as JobKind<unknown>);
  }

  /** Work an area does once the jobs run on this node (e.g. its periodic schedules, a sweep of lost jobs). */
  onStart(hook: () => Promise<void>): void {
    this.startHooks.push(hook);
  }

  /** Whether this node runs jobs (NODE_ROLE all or worker). */
  get works(): boolean {
    return this.options.work !== false;
  }

  /**
   * Periodic work of every working node (a sweep of runs lost with another node): once when the jobs start (the start
   * waits for it), then `ms` after each pass ends (never two passes at once), until the runner stops. Local timers
   * rather than a pg-boss schedule: pg-boss fires a cron at most once a minute, and a sweep must find lost work well
   * within one. Every working node sweeps, so the sweep must be safe on several nodes at once (conditional moves,
   * locks).
   */
  every(name: string, ms: number, work: () => Promise<void>): void {
    if (this.periodic.some((p) => p.name === name)) throw new Error(`periodic work ${name} registered twice`);
    const entry: Periodic = { name, ms, work };
    this.periodic.push(entry);
    // Registered by a start hook: its first pass runs now, and the start waits for it (below).
    if (this.boss && this.works && !this.stopped) this.pass(entry);
  }

  /** One pass of periodic work, then the next one `ms` after it ends. */
  private pass(p: Periodic): void {
    p.running = p
      .work()
      .catch((e: unknown) => {
        if (!this.stopped) console.error(`[jobs] ${p.name} failed:`, e instanceof Error ? e.message : e);
      })
      .finally(() => {
        p.running = undefined;
        if (this.stopped) return;
        p.timer = setTimeout(() => this.pass(p), p.ms);
        p.timer.unref();
      });
  }

  /** Starts pg-boss (its schema is created or migrated on the first start), the queues and the workers. Idempotent. */
  start(): Promise<PgBoss> {
    if (this.stopped) return Promise.reject(new Error('job runner stopped'));
    this.starting ??= this.startBoss();
    return this.starting;
  }

  private async startBoss(): Promise<PgBoss> {
    const pool = this.pool;
    const works = this.works;
    // pg-boss (with cron-parser, luxon and rrule-temporal, about 1.7 MB of modules) loads here, after the server
    // listens (main.ts), not while it starts.
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      db: {
        executeSql: (text: string, values?: unknown[]) => pool.query(text, values as unknown[]),
        // pg-boss's LISTEN/NOTIFY (useListenNotify): a job sent on any node wakes the workers of its queue at once (the
        // queues are made with `notify`), so an idle worker polls every NOTIFY_POLL_SECONDS instead of every second.
        // 15 workers polling each second were an idle node's only work: 15 queries and ~370 KB of garbage a second,
        // which refilled the young generation after every memory trim (bench:load's RSS 30 s after: +13 to +34 MB).
        listen: async (channel, onNotification, onReconnect) => {
          this.notifyChannel = channel;
          const listener = new ListenConnection(pool.options, channel, {
            onNotification,
            onListening: () => onReconnect(),
          });
          if (!(await listener.start())) {
            // pg-boss then polls at the base interval and never closes this one: it must not go on retrying.
            await listener.close();
            throw new Error('LISTEN for pg-boss failed');
          }
          return { close: () => listener.close() };
        },
      },
      // Only a node that runs jobs listens; every node's sends notify (the queues' `notify`).
      useListenNotify: works,
      registerInstance: false,
      // Expiry, heartbeats and retention are a worker's business, and so is firing the cron schedules (an api node
      // still writes them: boss.schedule() is a row).
      supervise: works,
      schedule: works,
      monitorIntervalSeconds: MONITOR_SECONDS,
      superviseIntervalSeconds: MONITOR_SECONDS,
    });
    // pg-boss reports failed polls and maintenance here; without a listener an 'error' event would crash the process.
    boss.on('error', (err: unknown) => {
      if (!this.stopped) console.error('[jobs]', err instanceof Error ? err.message : err);
    });
    await startOneAtATime(pool, () => boss.start());
    for (const kind of this.kinds.values()) {
      const policy = {
        retryLimit: kind.retryLimit ?? 0,
        retryDelay: kind.retryDelay ?? 0,
        expireInSeconds: kind.expireInSeconds ?? 6 * 3600,
        heartbeatSeconds: kind.heartbeatSeconds ?? JOB_HEARTBEAT_SECONDS,
        notify: true,
      };
      const existing = await boss.getQueue(kind.name);
      if (!existing) await boss.createQueue(kind.name, { policy: kind.policy ?? 'standard', ...policy });
      else if (Object.entries(policy).some(([k, v]) => existing[k as keyof typeof policy] !== v))
        // A queue made by an older build keeps its options until told: new jobs follow the kind's policy.
        await boss.updateQueue(kind.name, policy);
      if (!works) continue;
      await boss.work<unknown>(
        kind.name,
        {
          localConcurrency: kind.concurrency,
          batchSize: 1,
          // The base interval is pg-boss's when it has no listener (LISTEN failed at start); after a drop the listener
          // reconnects and every worker fetches once (onReconnect), for what was sent meanwhile.
          pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 1,
          notifyPollingIntervalSeconds: NOTIFY_POLL_SECONDS,
        },
        (jobs: Job<unknown>[]) => this.handle(kind, jobs[0]),
      );
    }
    this.boss = boss;
    if (!works) return boss;
    // The boss is set first: a hook may send or schedule (which must not wait for this start to end).
    for (const hook of this.startHooks)
      await hook().catch((e: unknown) =>
        console.error('[jobs] start hook failed:', e instanceof Error ? e.message : e),
      );
    if (!this.stopped) for (const p of this.periodic) if (!p.running && !p.timer) this.pass(p);
    // The first sweeps end before the start does: work lost while every node was down is settled by then.
    await Promise.all(this.periodic.map((p) => p.running));
    return boss;
  }

  private async handle(kind: JobKind<unknown>, job: Job<unknown>): Promise<void> {
    const payload = kind.payload.parse(job.data);
    // pg-boss's own job.signal is not followed: it also fires when pg-boss believes the job lost (a heartbeat late by a
    // stalled event loop) and hands it to another node, and that node's handler finds the run held (its lock, its
    // state) and leaves it to this one, which must then finish it. Cancels and this node's stop abort it here.
    const controller = new AbortController();
    this.running.set(job.id, { controller, queue: kind.name });
    const started = performance.now();
    let outcome = 'failed';
    try {
      await kind.handler(payload, {
        jobId: job.id,
        signal: controller.signal,
        nodeStopping: () => this.stopped,
      });
      outcome = 'completed';
    } finally {
      this.running.delete(job.id);
      jobRunDurations.observe([kind.name, outcome], (performance.now() - started) / 1000);
    }
  }

  /** Jobs waiting and running per kind (GET /metrics), as pg-boss last counted them; none before it started. */
  async queueCounts(): Promise<{ name: string; queued: number; active: number }[]> {
    if (!this.boss) return [];
    const queues = await this.boss.getQueues([...this.kinds.keys()]);
    return queues.map((q) => ({ name: q.name, queued: q.queuedCount, active: q.activeCount }));
  }

  /** Queues a job; the payload is checked against its kind's schema first. Returns pg-boss's job id. */
  async send<P>(kind: JobKindRef<P>, payload: P, opts: { singletonKey?: string } = {}): Promise<string> {
    const data = kind.payload.parse(payload) as object;
    const boss = this.boss ?? (await this.start());
    const id = await boss.send(kind.name, data, opts.singletonKey ? { singletonKey: opts.singletonKey } : {});
    if (!id) throw new Error(`job ${kind.name} not queued (one with the same key is already queued or running)`);
    return id;
  }

  /**
   * A cron schedule (5 fields, in the given IANA time zone) that sends `payload` to the kind; `key` tells schedules of
   * one kind apart (e.g. the dataset id). pg-boss fires it on one node only. Check the expression first with
   * cronProblem (below): pg-boss's own refusal is not a message for the caller.
   */
  async schedule<P>(kind: JobKindRef<P>, key: string, cron: string, timezone: string, payload: P): Promise<void> {
    const boss = this.boss ?? (await this.start());
    await boss.schedule(kind.name, cron, kind.payload.parse(payload) as object, { tz: timezone, key });
  }

  async unschedule(kind: JobKindRef<unknown>, key: string): Promise<void> {
    const boss = this.boss ?? (await this.start());
    await boss.unschedule(kind.name, key);
  }

  /** pg-boss's state of a job (created, retry, active, completed, cancelled, failed); null when it no longer has it. */
  async stateOf(kind: JobKindRef<unknown>, jobId: string): Promise<string | null> {
    const boss = this.boss ?? (await this.start());
    const [job] = await boss.findJobs(kind.name, { id: jobId, limit: 1 });
    return job?.state ?? null;
  }

  /**
   * The pg-boss states of the jobs of a kind whose payload contains `data` (e.g. `{ runId: 7 }`), oldest first; none
   * once pg-boss deleted them (a week after they ended). A sweep ends a lost run only when none of them is pending
   * (`isPendingJobState`), so it never races pg-boss's own retry.
   */
  async jobStatesOf(kind: JobKindRef<unknown>, data: object): Promise<string[]> {
    const boss = this.boss ?? (await this.start());
    return (await boss.findJobs(kind.name, { data, limit: 1000 })).map((j) => j.state);
  }

  /** Cancels a queued job (pg-boss) and aborts it when this node runs it; other nodes learn it from the job's own state. */
  async cancel(kind: JobKindRef<unknown>, jobId: string): Promise<void> {
    this.running.get(jobId)?.controller.abort(new Error('cancelled'));
    const boss = this.boss ?? (await this.start());
    await boss.cancel(kind.name, jobId).catch(() => undefined);
  }

  /**
   * Runs `work` only if no other job on any node runs under the same key now: a session advisory lock held on one
   * pooled connection for the whole run (a crashed node's connection dies and frees it). Answers false without
   * running when the key is taken (after trying again for `waitMs`). For jobs that may be queued twice for one object
   * (a run resumed by a sweep while pg-boss retries its job) and must never work on it twice at once.
   */
  async exclusive(key: string, work: () => Promise<void>, opts: { waitMs?: number } = {}): Promise<boolean> {
    // A sweep holds a run's lock for a few queries while it checks the run: a handler that finds it taken may wait
    // this long for it before it concludes another node works on the run.
    const until = Date.now() + (opts.waitMs ?? 0);
    for (;;) {
      const ran = await this.tryExclusive(key, work);
      if (ran || Date.now() >= until || this.stopped) return ran;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async tryExclusive(key: string, work: () => Promise<void>): Promise<boolean> {
    const client = await this.pool.connect();
    const lock = [EXCLUSIVE_LOCK_NS, key] as const;
    try {
      if (!this.probed.has(client)) {
        await client.query(KEEPALIVE_SQL);
        this.probed.add(client);
      }
      const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [
        ...lock,
      ]);
      if (!rows[0]?.ok) return false;
      try {
        await work();
      } finally {
        await client.query('select pg_advisory_unlock($1, hashtext($2))', [...lock]).catch(() => undefined);
      }
      return true;
    } finally {
      client.release();
    }
  }

  /** Aborts a job if this node runs it (the fast path of a cancel; the job's own polling covers the other nodes). */
  abortLocal(jobId: string): boolean {
    const r = this.running.get(jobId);
    r?.controller.abort(new Error('cancelled'));
    return !!r;
  }

  /** Aborts this node's jobs and stops pg-boss; later sends fail. Safe to call when never started. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const p of this.periodic) clearTimeout(p.timer);
    const handedBack = new Set([...this.running.values()].map((r) => r.queue));
    for (const r of this.running.values()) r.controller.abort(new Error('stopped'));
    await Promise.all(this.periodic.map((p) => p.running));
    const boss = this.boss ?? (await this.starting?.catch(() => undefined));
    if (boss) await boss.stop({ graceful: true, timeout: 5_000, close: false }).catch(() => undefined);
    // The jobs this stop failed back to their queues (retries) come with no NOTIFY of pg-boss's: wake the other nodes'
    // workers now rather than at their next poll (NOTIFY_POLL_SECONDS).
    const channel = this.notifyChannel;
    if (channel)
      await Promise.all(
        [...handedBack].map((queue) =>
          this.pool.query('SELECT pg_notify($1, $2)', [channel, queue]).catch(() => undefined),
        ),
      );
  }
}

/*
 * Cron expressions and time zones of schedules (PUT /api/dataset/{id}/extraction and mailings): checked and computed
 * here with cron-parser, the parser pg-boss's schedule() validates with and its cron pass fires by, so whatever passes
 * the check pg-boss stores (a refusal is the caller's 422, never pg-boss's 500) and the next run shown is the one
 * pg-boss fires.
 */

/** cron-parser (CommonJS, so a synchronous require) loaded on first use, not with the server. */
let cronParser: typeof CronParser | undefined;
const cron = () =>
  (cronParser ??= createRequire(import.meta.url)('cron-parser') as typeof CronParser).CronExpressionParser;

/** Five fields (minute hour day month weekday): what the interface offers (pg-boss would take six, with seconds). */
const FIVE_FIELDS = /^\S+(\s+\S+){4}$/;

/** An IANA zone both Intl and pg-boss take ('Factory' passes Intl, and pg-boss's schedule() refuses it). */
export function isTimeZone(tz: string): boolean {
  if (!tz || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    // pg-boss's own zone check (timezone.js, assertTimezone): a zone is read only once a date is built in it.
    cron().parse('* * * * *', { tz, strict: false, currentDate: new Date() });
    return true;
  } catch {
    return false;
  }
}

/** Null when the expression is valid, else what is wrong with it (Russian, for a 422 field message). */
export function cronProblem(expression: string): string | null {
  const text = expression.trim();
  if (!FIVE_FIELDS.test(text)) return 'Расписание должно состоять из пяти полей: минута час день месяц день_недели';
  try {
    // The call pg-boss's schedule() makes first (timekeeper.js, parseRecurrence), with the same options.
    cron().parse(text, { tz: 'UTC', strict: false });
    return null;
  } catch (e) {
    return `Некорректное выражение cron: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * The next time the schedule fires after `from`, in the given time zone; null when it never fires again, or when the
 * expression no longer parses (a row saved before the check matched pg-boss's), so reading the settings never fails.
 */
export function nextRunAt(expression: string, timezone: string, from: Date = new Date()): Date | null {
  try {
    return cron().parse(expression.trim(), { tz: timezone, strict: false, currentDate: from }).next().toDate();
  } catch {
    return null;
  }
}
