import net from 'node:net';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector, openSshTunnel } from '../../../adapters/sources';
import { pgSettings } from './servers';

const { Server, utils } = ssh2;

/** A real SSH server (ssh2's own) on loopback that allows direct-tcpip forwarding for one user. */
async function startSshServer(user: string, password: string) {
  // ECDSA, not ed25519: about 1 in 200 of ssh2's generated ed25519 keys fails its own parser ("Malformed OpenSSH
  // private key"), which failed CI once.
  const hostKey = utils.generateKeyPairSync('ecdsa', { bits: 256 }).private;
  const forwarded: string[] = [];
  const server = new Server({ hostKeys: [hostKey] }, (client) => {
    client.on('error', () => {});
    client.on('authentication', (ctx) => {
      if (ctx.method === 'password' && ctx.username === user && ctx.password === password) ctx.accept();
      else ctx.reject(['password']);
    });
    client.on('ready', () => {
      client.on('tcpip', (accept, _reject, info) => {
        forwarded.push(`${info.destIP}:${info.destPort}`);
        const channel = accept();
        const upstream = net.connect(info.destPort, info.destIP);
        upstream.on('error', () => channel.destroy());
        channel.on('error', () => upstream.destroy());
        channel.pipe(upstream).pipe(channel);
      });
      client.on('session', (_accept, reject) => reject());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, forwarded, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('ssh tunnel', () => {
  let sshd: Awaited<ReturnType<typeof startSshServer>>;

  beforeAll(async () => {
    sshd = await startSshServer('tunnel', 's3cret');
  });

  afterAll(async () => {
    await sshd.close();
  });

  it('forwards a loopback port to the target through the SSH server', async () => {
    const pg = pgSettings();
    const tunnel = await openSshTunnel(
      { host: '127.0.0.1', port: sshd.port, username: 'tunnel', password: 's3cret' },
      { host: pg.host!, port: pg.port! },
      { readyTimeoutMs: 5000 },
    );
    try {
      expect(tunnel.localPort).toBeGreaterThan(0);
      const c = createConnector('postgresql', { ...pg, host: '127.0.0.1', port: tunnel.localPort });
      expect((await c.query('SELECT 1 AS one', [])).rows).toEqual([[1]]);
      await c.close();
    } finally {
      await tunnel.close();
    }
  });

  it('lets a connector reach its server only through SSH (use_ssh)', async () => {
    const before = sshd.forwarded.length;
    const c = createConnector(
      'postgresql',
      pgSettings({
        use_ssh: true,
        ssh_tunnel: { host: '127.0.0.1', port: sshd.port, username: 'tunnel', password: 's3cret' },
      }),
    );
    try {
      await c.check();
      expect((await c.query('SELECT 2 AS two', [])).rows).toEqual([[2]]);
      expect(sshd.forwarded.length).toBeGreaterThan(before);
      expect(sshd.forwarded.at(-1)).toBe(`${pgSettings().host}:${pgSettings().port}`);
    } finally {
      await c.close();
    }
  });

  it('reports wrong SSH credentials as an auth error', async () => {
    const c = createConnector(
      'postgresql',
      pgSettings({
        use_ssh: true,
        ssh_tunnel: { host: '127.0.0.1', port: sshd.port, username: 'tunnel', password: 'wrong' },
      }),
    );
    await expect(c.check()).rejects.toMatchObject({ kind: 'auth', message: expect.stringContaining('SSH') });
    await c.close();
  });

  it('asks for the SSH server when use_ssh is on without one', async () => {
    const c = createConnector('postgresql', pgSettings({ use_ssh: true }));
    await expect(c.check()).rejects.toMatchObject({ kind: 'settings' });
    await c.close();
  });
});
