import type { LookupFunction } from 'node:net';
import { openSshTunnel, type SshTunnel } from './ssh-tunnel';
import { ConnectorError, type SourceSettings } from './types';

export interface ResolvedEndpoint {
  /** Where the driver connects: the server itself, or the loopback end of the SSH tunnel. */
  host: string;
  port: number;
  /** The server's own name, for TLS verification when connecting through a tunnel. */
  serverName: string;
}

/**
 * The address a driver should connect to. With use_ssh the SSH tunnel is opened once, on first use, and shared
 * by all pooled connections of the source.
 */
export class Endpoint {
  private tunnel: Promise<SshTunnel> | undefined;

  constructor(
    private readonly settings: SourceSettings,
    private readonly port: number,
    private readonly connectTimeoutMs: number,
    /** How the SSH server's name is resolved: the connector's policy-pinned lookup. */
    private readonly lookup?: LookupFunction,
  ) {}

  get host(): string {
    const host = this.settings.host?.trim();
    if (!host) throw new ConnectorError('Не указан адрес сервера (host)', 'settings');
    return host;
  }

  async resolve(): Promise<ResolvedEndpoint> {
    const host = this.host;
    if (!this.settings.use_ssh) return { host, port: this.port, serverName: host };
    const ssh = this.settings.ssh_tunnel;
    if (!ssh?.host || !ssh.username) {
      throw new ConnectorError('Для SSH-туннеля нужны адрес SSH-сервера и имя пользователя', 'settings');
    }
    if (!this.tunnel) {
      const opening = openSshTunnel(
        ssh,
        { host, port: this.port },
        { readyTimeoutMs: this.connectTimeoutMs, lookup: this.lookup },
      );
      this.tunnel = opening;
      opening.catch(() => {
        if (this.tunnel === opening) this.tunnel = undefined;
      });
    }
    const tunnel = await this.tunnel;
    return { host: '127.0.0.1', port: tunnel.localPort, serverName: host };
  }

  async close(): Promise<void> {
    const t = this.tunnel;
    this.tunnel = undefined;
    if (t) await (await t.catch(() => undefined))?.close();
  }
}

/** "host:port" as the user typed it, for error messages. */
export function describeServer(settings: SourceSettings, port: number): string {
  return `${settings.host ?? ''}:${port}`;
}
