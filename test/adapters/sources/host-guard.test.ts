import dns from 'node:dns';
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { checkSourceHosts, ConnectorCache, ConnectorError, createConnector } from '../../../adapters/sources';
import { pinnedLookup } from '../../../adapters/sources/host-guard';
import { pgSettings, randomName } from './servers';

const connectors = new ConnectorCache();
afterAll(() => connectors.closeAll());
afterEach(() => {
  vi.restoreAllMocks();
});

const lookupOnce = (lookup: net.LookupFunction, host: string, options: dns.LookupOptions) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
    lookup(host, options, (err, address, family) => resolve({ err, address, family })),
  );

describe('checkHost hook', () => {
  it('is asked about the SSH server (resolved) and the database host behind it (by name only)', async () => {
    const asked: [string, boolean][] = [];
    const hook = async (host: string, opts: { resolve: boolean }) => {
      asked.push([host, opts.resolve]);
    };
    await checkSourceHosts(
      { host: ' db.internal ', use_ssh: true, ssh_tunnel: { host: 'bastion.example', username: 'u' } },
      hook,
    );
    await checkSourceHosts(
      { host: 'db.example', use_ssh: false, ssh_tunnel: { host: 'unused.example', username: 'u' } },
      hook,
    );
    expect(asked).toEqual([
      ['bastion.example', true],
      ['db.internal', false],
      ['db.example', true],
    ]);
  });

  it('returns the addresses the hook approved, per name; a name behind SSH has none (its SSH server resolves it)', async () => {
    const hook = async (host: string, opts: { resolve: boolean }) =>
      opts.resolve ? [`127.0.0.${host.length}`] : undefined;
    const viaSsh = await checkSourceHosts(
      { host: 'db.internal', use_ssh: true, ssh_tunnel: { host: ' Bastion.Example ', username: 'u' } },
      hook,
    );
    expect([...viaSsh]).toEqual([['bastion.example', ['127.0.0.15']]]);
    const direct = await checkSourceHosts({ host: '[DB.example]', use_ssh: false }, hook);
    expect([...direct]).toEqual([['db.example', ['127.0.0.12']]]);
  });

  it('pinnedLookup answers a checked name from the approved addresses only, without asking DNS', async () => {
    const system = vi.spyOn(dns, 'lookup');
    const lookup = pinnedLookup(
      () =>
        new Map([
          ['db.example', ['127.0.0.3', '::1']],
          ['gone.example', []],
        ]),
    );
    expect(await lookupOnce(lookup, 'DB.example', { all: true })).toEqual({
      err: null,
      address: [
        { address: '127.0.0.3', family: 4 },
        { address: '::1', family: 6 },
      ],
      family: undefined,
    });
    expect(await lookupOnce(lookup, 'db.example', {})).toEqual({ err: null, address: '127.0.0.3', family: 4 });
    expect(await lookupOnce(lookup, 'db.example', { family: 6 })).toEqual({ err: null, address: '::1', family: 6 });
    expect((await lookupOnce(lookup, 'gone.example', {})).err).toMatchObject({ code: 'ENOTFOUND' });
    expect(system).not.toHaveBeenCalled();
    // a name the policy did not resolve goes to the system resolver
    expect(await lookupOnce(lookup, 'localhost', { family: 4 })).toMatchObject({ err: null, address: '127.0.0.1' });
    expect(system).toHaveBeenCalledTimes(1);
  });

  it('the SSH server is reached at the address the hook approved, not at a second DNS answer for its name', async () => {
    const reached: string[] = [];
    const record = (s: net.Socket) => {
      reached.push(`${s.localAddress}`);
      s.destroy();
    };
    const approved = net.createServer(record);
    await new Promise<void>((resolve) => approved.listen(0, '127.0.0.1', resolve));
    const port = (approved.address() as net.AddressInfo).port;
    const trap = net.createServer(record);
    await new Promise<void>((resolve) => trap.listen(port, '127.0.0.2', resolve));
    // The DNS answer changed after the check: the name now points at 127.0.0.2.
    const system = dns.lookup.bind(dns) as (...args: unknown[]) => void;
    vi.spyOn(dns, 'lookup').mockImplementation(((host: string, options: unknown, callback?: unknown) => {
      if (host !== 'bastion.test') return system(host, options, callback);
      const cb = (typeof options === 'function' ? options : callback) as (e: null, a: unknown, f?: number) => void;
      if (typeof options === 'object' && options && (options as dns.LookupOptions).all)
        cb(null, [{ address: '127.0.0.2', family: 4 }]);
      else cb(null, '127.0.0.2', 4);
    }) as typeof dns.lookup);
    const c = createConnector(
      'postgresql',
      pgSettings({
        use_ssh: true,
        ssh_tunnel: { host: 'bastion.test', port, username: 'u', password: 'p' },
      }),
      { checkHost: async (host, opts) => (opts.resolve && host === 'bastion.test' ? ['127.0.0.1'] : undefined) },
    );
    try {
      await expect(c.check()).rejects.toMatchObject({ kind: 'connection' }); // not an SSH server: it hangs up
      expect(reached).toEqual(['127.0.0.1']);
    } finally {
      await c.close();
      await Promise.all([approved, trap].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    }
  });

  it('is asked before every new physical connection: a host denied later fails once the pooled one is gone', async () => {
    let deny = false;
    const asked: string[] = [];
    const c = connectors.get(randomName('guard'), 'postgresql', pgSettings(), {
      idleTimeoutMs: 200,
      checkHost: async (host) => {
        asked.push(host);
        if (deny) throw new ConnectorError(`Подключение к адресу ${host} запрещено настройками платформы`, 'settings');
      },
    });
    expect((await c.query('SELECT 1', [])).rows).toEqual([[1]]);
    expect(asked.length).toBeGreaterThan(0);
    deny = true;
    await new Promise((r) => setTimeout(r, 600)); // the idle connection is closed
    await expect(c.query('SELECT 1', [])).rejects.toMatchObject({
      kind: 'settings',
      message: 'Подключение к адресу 127.0.0.1 запрещено настройками платформы',
    });
  });
});
