import { ConnectorError } from './types';

export interface ConnectionLimits {
  /** Physical connections to all source servers together. */
  total: number;
  /** Physical connections to one server (host:port, or the SSH hop and the server behind it). */
  perServer: number;
  /** How long a new connection waits for a free slot before the call fails. */
  waitMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { total: 50, perServer: 10, waitMs: 3_000 };

/**
 * Asked to close the idle connections of the least recently used pool that holds slots (on `server`, or on any
 * server when the total is what is full). Resolves true when it closed something.
 */
export type IdleEvictor = (server: string | undefined, holders: ReadonlySet<object>) => Promise<boolean>;

interface Waiter {
  server: string;
  grant(): void;
}

const EVICT_RETRY_MS = 200;

/**
 * Slots for physical connections to source servers, so that the platform never holds more than a server's share
 * of its max_connections, whatever the number of sources pointing at it. A connector takes a slot before it opens
 * a connection and gives it back when the connection closes. When no slot is free, idle pools are closed (least
 * recently used first), then the connection waits a bounded time and fails with kind 'busy'.
 */
export class ConnectionBudget {
  private used = 0;
  private readonly byServer = new Map<string, number>();
  /** Slots held per owner (a pooled connector), so that only pools that hold slots are asked to close. */
  private readonly byOwner = new Map<object, Map<string, number>>();
  private readonly waiters: Waiter[] = [];
  private evictor: IdleEvictor | undefined;

  constructor(private limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS) {}

  configure(limits: Partial<ConnectionLimits>): void {
    this.limits = { ...this.limits, ...limits };
    this.pump();
  }

  get current(): Readonly<ConnectionLimits> {
    return this.limits;
  }

  setEvictor(evictor: IdleEvictor | undefined): void {
    this.evictor = evictor;
  }

  /** Slots in use: on one server, or in all. */
  inUse(server?: string): number {
    return server === undefined ? this.used : (this.byServer.get(server) ?? 0);
  }

  /** A slot on `server`; the returned function gives it back (safe to call twice). */
  async acquire(server: string, opts: { owner?: object; maxWaitMs?: number } = {}): Promise<() => void> {
    if (this.fits(server)) return this.take(server, opts.owner);
    const waitMs = Math.max(0, Math.min(this.limits.waitMs, opts.maxWaitMs ?? Infinity));
    return new Promise<() => void>((resolve, reject) => {
      let settled = false;
      const finish = () => {
        settled = true;
        clearTimeout(timer);
        clearInterval(retry);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      const waiter: Waiter = {
        server,
        grant: () => {
          finish();
          resolve(this.take(server, opts.owner));
        },
      };
      const timer = setTimeout(() => {
        finish();
        reject(new ConnectorError(`Слишком много подключений к серверу ${server}: повторите позже`, 'busy'));
      }, waitMs);
      // A pool that was busy a moment ago may be idle now: keep asking while waiting.
      const retry = setInterval(() => {
        if (!settled) void this.evict(server);
      }, EVICT_RETRY_MS);
      this.waiters.push(waiter);
      void this.evict(server);
    });
  }

  private fits(server: string): boolean {
    return this.used < this.limits.total && (this.byServer.get(server) ?? 0) < this.limits.perServer;
  }

  private take(server: string, owner: object | undefined): () => void {
    this.used++;
    this.byServer.set(server, (this.byServer.get(server) ?? 0) + 1);
    if (owner) {
      const held = this.byOwner.get(owner) ?? new Map<string, number>();
      held.set(server, (held.get(server) ?? 0) + 1);
      this.byOwner.set(owner, held);
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used--;
      const left = (this.byServer.get(server) ?? 1) - 1;
      if (left > 0) this.byServer.set(server, left);
      else this.byServer.delete(server);
      if (owner) {
        const held = this.byOwner.get(owner);
        const n = (held?.get(server) ?? 1) - 1;
        if (held && n > 0) held.set(server, n);
        else held?.delete(server);
        if (held && held.size === 0) this.byOwner.delete(owner);
      }
      this.pump();
    };
  }

  /** Hands freed slots to waiters in arrival order. */
  private pump(): void {
    for (const w of [...this.waiters]) {
      if (this.used >= this.limits.total) return;
      if (this.fits(w.server)) w.grant();
    }
  }

  private async evict(server: string): Promise<void> {
    if (!this.evictor) return;
    const serverFull = (this.byServer.get(server) ?? 0) >= this.limits.perServer;
    const holders = new Set<object>();
    for (const [owner, held] of this.byOwner) if (!serverFull || held.has(server)) holders.add(owner);
    if (holders.size) await this.evictor(serverFull ? server : undefined, holders).catch(() => false);
  }
}

/** The process's budget: configured at start from SOURCE_CONNECTIONS_* (server/app/config.ts). */
export const sourceConnectionBudget = new ConnectionBudget();

/** The budget's name for the server a connection reaches: what its max_connections belongs to. */
export function budgetServerKey(
  settings: { host?: string; use_ssh?: boolean; ssh_tunnel?: { host: string; port?: number } },
  port: number,
): string {
  const host = (settings.host ?? '').trim().toLowerCase();
  const ssh = settings.use_ssh ? settings.ssh_tunnel : undefined;
  const direct = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return ssh ? `${direct} через ${ssh.host.trim().toLowerCase()}:${ssh.port ?? 22}` : direct;
}
