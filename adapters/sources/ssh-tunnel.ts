import net from 'node:net';
import type { Client, ConnectConfig } from 'ssh2';
import { connectionOutcome, outcomeMessage } from './driver-errors';
import { ConnectorError, type SshTunnelSettings } from './types';

export interface SshTunnel {
  /** Loopback port that forwards to the target through the SSH server. */
  readonly localPort: number;
  close(): Promise<void>;
}

export interface SshTunnelTarget {
  host: string;
  port: number;
}

/**
 * Forwards 127.0.0.1:<localPort> to target host:port through an SSH server, so a driver that knows nothing of SSH
 * connects to the loopback port. The SSH session is opened eagerly (to report bad credentials at check time) and
 * re-opened on demand if the server drops it.
 */
export async function openSshTunnel(
  ssh: SshTunnelSettings,
  target: SshTunnelTarget,
  opts: { readyTimeoutMs: number; lookup?: net.LookupFunction },
): Promise<SshTunnel> {
  const config: ConnectConfig = {
    host: ssh.host,
    port: ssh.port ?? 22,
    username: ssh.username,
    password: ssh.password || undefined,
    privateKey: ssh.private_key || undefined,
    passphrase: ssh.passphrase || undefined,
    readyTimeout: opts.readyTimeoutMs,
    keepaliveInterval: 15_000,
  };
  let closed = false;
  let client: Promise<Client> | undefined;
  const sockets = new Set<net.Socket>();

  const ready = (): Promise<Client> => {
    if (!client) {
      const opening = connectSsh(config, opts.lookup);
      client = opening;
      // Forget a dropped session so the next connection opens a new one.
      opening.then(
        (c) =>
          c.on('close', () => {
            if (client === opening) client = undefined;
          }),
        () => {
          if (client === opening) client = undefined;
        },
      );
    }
    return client;
  };
  await ready();

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    ready()
      .then((c) => {
        c.forwardOut('127.0.0.1', socket.remotePort ?? 0, target.host, target.port, (err, channel) => {
          if (err) {
            socket.destroy(err);
            return;
          }
          channel.on('error', () => socket.destroy());
          socket.on('close', () => channel.destroy());
          channel.on('close', () => socket.destroy());
          socket.pipe(channel).pipe(socket);
        });
      })
      .catch((err: unknown) => socket.destroy(err instanceof Error ? err : undefined));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A failing accept must not take the process down; the connection that hit it fails on its own.
  server.on('error', () => undefined);
  const localPort = (server.address() as net.AddressInfo).port;

  return {
    localPort,
    async close() {
      if (closed) return;
      closed = true;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const c = await client?.catch(() => undefined);
      c?.end();
    },
  };
}

async function connectSsh(config: ConnectConfig, lookup: net.LookupFunction | undefined): Promise<Client> {
  // Loaded with the first tunnel, not at start (~20 MB of memory for a feature most installations never use).
  const { Client: SshClient } = await import('ssh2');
  return new Promise((resolve, reject) => {
    const c = new SshClient();
    let ready = false;
    // Stays for the session's life (ssh2 may emit more than one error): before 'ready' the first one fails the
    // opening, after it a failure closes the session and the tunnel re-opens it on demand.
    c.on('error', (err: Error & { level?: string }) => {
      c.end();
      if (!ready) reject(sshError(err, config));
    });
    c.once('close', () => {
      if (!ready) reject(sshError(Object.assign(new Error('closed'), { code: 'ECONNRESET' }), config));
    });
    c.once('ready', () => {
      ready = true;
      resolve(c);
    });
    // With a lookup the socket is ours, so the SSH server's name resolves to what the policy approved. The
    // target behind the server is resolved by the SSH server itself.
    const sock = lookup ? net.connect({ host: config.host!, port: config.port!, lookup }) : undefined;
    try {
      c.connect(sock ? { ...config, sock } : config);
    } catch (err) {
      // ssh2 refuses bad settings (an unreadable key) before it listens on the socket.
      sock?.destroy();
      throw err;
    }
  });
}

function sshError(err: Error & { level?: string }, config: ConnectConfig): ConnectorError {
  const where = `${config.host}:${config.port}`;
  if (err.level === 'client-authentication') {
    return new ConnectorError(`SSH-туннель: ошибка аутентификации на сервере ${where}`, 'auth', { cause: err });
  }
  const outcome = err.level === 'client-timeout' ? 'timeout' : (connectionOutcome(err) ?? 'not-server');
  const message = outcomeMessage(outcome, where, { product: 'SSH', timeoutMs: config.readyTimeout ?? 0 });
  return new ConnectorError(`SSH-туннель: ${message}`, 'connection', { cause: err });
}
