// Where the real test servers are: PostgreSQL from TEST_PG_URL or the machine's 127.0.0.1:5432; MariaDB and
// ClickHouse as test/setup/source-servers.ts found or started them.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { inject } from 'vitest';
import type { SourceSettings } from '../../../adapters/sources';

export function pgSettings(extra: SourceSettings = {}): SourceSettings {
  const url = process.env.TEST_PG_URL;
  if (url) {
    const u = new URL(url);
    return {
      host: u.hostname,
      port: Number(u.port || 5432),
      username: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      db: u.pathname.slice(1) || 'test',
      ...extra,
    };
  }
  return { host: '127.0.0.1', port: 5432, username: 'postgres', password: '', db: 'test', ...extra };
}

export function mysqlSettings(extra: SourceSettings = {}): SourceSettings {
  const s = provided()?.mariadb;
  const host = s?.host ?? process.env.MARIADB_HOST ?? '127.0.0.1';
  const port = s?.port ?? Number(process.env.MARIADB_PORT ?? 3306);
  return { host, port, username: 'root', password: '', db: 'test', ...extra };
}

export function clickhouseSettings(extra: SourceSettings = {}): SourceSettings {
  const s = provided()?.clickhouse;
  const host = s?.host ?? process.env.CLICKHOUSE_HOST ?? '127.0.0.1';
  const httpPort = s?.http_port ?? Number(process.env.CLICKHOUSE_HTTP_PORT ?? 8123);
  return { host, port: 9000, http_port: httpPort, username: 'default', password: '', db: 'default', ...extra };
}

function provided() {
  try {
    return inject('sourceServers');
  } catch {
    return undefined;
  }
}

export function randomName(prefix = 't'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** A loopback port nobody listens on (connection refused at once). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that accepts connections and never says a word: what a firewalled or hung host looks like. */
export async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
