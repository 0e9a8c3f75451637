// GET/PUT /api/settings/source-network and its enforcement on every way a source reaches a server. Only loopback
// addresses are ever connected to: the refused ones are refused before a socket opens.
import dns from 'node:dns';
import net from 'node:net';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { closedPort } from '../../adapters/sources/servers';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import type { z } from 'zod';
import type { sourceNetworkPolicy } from '../../../routers/service/source-network';
import { failure, type RestResponse } from '../../support/rest';
import {
  DB_KINDS,
  SERVERS,
  createCitiesTable,
  createSource,
  dropTable,
  ok,
  randomName,
  type CheckResult,
  type Preview,
} from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

type Policy = z.output<typeof sourceNetworkPolicy>;

const URL_ = '/api/settings/source-network';
const DEFAULT: Policy = { allow: [], deny: ['169.254.0.0/16', 'fe80::/10'] };
const setPolicy = async (p: Policy) => ok<Policy>(await api.put(URL_, p, cast.tokens.sysadmin));
afterEach(async () => {
  await setPolicy(DEFAULT);
});

const refused = (what: string) => `Подключение к адресу ${what} запрещено настройками платформы`;
function expectRefused(res: RestResponse, what: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(failure(res).message).toBe(refused(what));
}
const check = (settings: object) =>
  api.post('/api/data-source/check', { type: 'postgresql', settings }, cast.tokens.editor);

describe('GET/PUT /api/settings/source-network', () => {
  it('is for the system administrator; link-local networks are denied by default, loopback is not', async () => {
    expect(ok<Policy>(await api.get(URL_, cast.tokens.sysadmin))).toEqual(DEFAULT);
    expect((await api.get(URL_)).status).toBe(401);
    expect((await api.get(URL_, cast.tokens.wsAdmin)).status).toBe(403);
    expect((await api.put(URL_, DEFAULT, cast.tokens.wsAdmin)).status).toBe(403);

    expectRefused(await check({ ...SERVERS.postgresql(), host: '169.254.169.254' }), '169.254.169.254');
    expectRefused(await check({ ...SERVERS.postgresql(), host: '[fe80::1]' }), 'fe80::1');
    expectRefused(await check({ ...SERVERS.postgresql(), host: '::ffff:169.254.1.1' }), '::ffff:169.254.1.1');
    expect(ok<CheckResult>(await check(SERVERS.postgresql()))).toEqual({ ok: true, message: 'Подключение успешно' });
  });

  it('validates every entry with its path', async () => {
    const res = await api.put(
      URL_,
      { allow: ['10.0.0.0/8', 'db.example', 'bad host!'], deny: ['1.2.3.4/33', '*.corp.example', 'fd00::/8', '*'] },
      cast.tokens.sysadmin,
    );
    expect(res.status).toBe(422);
    expect(Object.keys(failure(res).errors!).sort()).toEqual(['allow[2]', 'deny[0]', 'deny[3]']);
    expect((await api.put(URL_, { allow: [] }, cast.tokens.sysadmin)).status).toBe(422);
    const saved = await setPolicy({ allow: [' 127.0.0.1 ', '*.corp.example'], deny: ['10.1.0.0/16', '2001:db8::1'] });
    expect(saved).toEqual({ allow: ['127.0.0.1', '*.corp.example'], deny: ['10.1.0.0/16', '2001:db8::1'] });
    expect(ok<Policy>(await api.get(URL_, cast.tokens.sysadmin))).toEqual(saved);
  });
});

describe('enforcement', () => {
  it('refuses a denied address on check, create, update, copy and on every connection of a saved source', async () => {
    const table = randomName('policy');
    await createCitiesTable('postgresql', table);
    const src = await createSource(api, cast.tokens.editor, 'postgresql', { workspace_id: cast.workspaceId });
    const base = `/api/data-source/${src.id}`;
    const preview = () => api.post(`${base}/preview`, { schema: 'public', table }, cast.tokens.editor);
    expect(ok<Preview>(await preview()).rows).toHaveLength(3); // its pool is open now

    await setPolicy({ allow: [], deny: ['127.0.0.0/8', '::1'] });
    expectRefused(await check(SERVERS.postgresql()), '127.0.0.1');
    // a name is judged by what it resolves to
    const byName = await check({ ...SERVERS.postgresql(), host: 'localhost' });
    expect(byName.status).toBe(400);
    expect(failure(byName).message).toMatch(
      /^Подключение к адресу localhost \((127\.0\.0\.1|::1)\) запрещено настройками платформы$/,
    );
    expectRefused(await api.post(`${base}/check`, undefined, cast.tokens.editor), '127.0.0.1');
    expectRefused(
      await api.post(
        '/api/data-source',
        { name: 'x', type: 'postgresql', settings: SERVERS.postgresql() },
        cast.tokens.editor,
      ),
      '127.0.0.1',
    );
    expectRefused(
      await api.put(base, { settings: { ...SERVERS.postgresql(), db: 'postgres' } }, cast.tokens.editor),
      '127.0.0.1',
    );
    expectRefused(await api.post(`${base}/copy`, {}, cast.tokens.editor), '127.0.0.1');
    // the saved source stops working: reads connect through the policy too
    expectRefused(await api.post(`${base}/metadata/refresh`, undefined, cast.tokens.editor), '127.0.0.1');
    expectRefused(await preview(), '127.0.0.1');

    await setPolicy(DEFAULT);
    expect(ok<Preview>(await preview()).rows).toHaveLength(3);
    await dropTable('postgresql', table);
  });

  it('judges names by pattern before resolving them, and an allow list admits only what it names', async () => {
    await setPolicy({ allow: [], deny: ['*.corp.example'] });
    expectRefused(await check({ ...SERVERS.postgresql(), host: 'db.corp.example' }), 'db.corp.example');
    expectRefused(await check({ ...SERVERS.postgresql(), host: 'A.B.Corp.Example.' }), 'A.B.Corp.Example.');

    await setPolicy({ allow: ['10.0.0.0/8'], deny: [] });
    expectRefused(await check(SERVERS.postgresql()), '127.0.0.1');
    await setPolicy({ allow: ['127.0.0.1/32'], deny: [] });
    expect(ok<CheckResult>(await check(SERVERS.postgresql())).ok).toBe(true);
    // deny wins over allow
    await setPolicy({ allow: ['127.0.0.0/8'], deny: ['127.0.0.1'] });
    expectRefused(await check(SERVERS.postgresql()), '127.0.0.1');
  });

  it('judges the SSH server by address and the database host behind it by name', async () => {
    const sshPort = await closedPort();
    const viaSsh = (sshHost: string, dbHost: string) =>
      check({
        ...SERVERS.postgresql(),
        host: dbHost,
        use_ssh: true,
        ssh_tunnel: { host: sshHost, port: sshPort, username: 'tunnel', password: 'x' },
      });
    await setPolicy({ allow: [], deny: ['127.0.0.2', '*.corp.example'] });
    expectRefused(await viaSsh('127.0.0.2', 'db.internal'), '127.0.0.2');
    expectRefused(await viaSsh('127.0.0.1', 'db.corp.example'), 'db.corp.example');
    // allowed through: the tunnel is tried (nobody listens on that port), the database name is never resolved here
    const tried = ok<CheckResult>(await viaSsh('127.0.0.1', 'db.internal'));
    expect(tried.ok).toBe(false);
    expect(tried.message).toMatch(/SSH/);
    // a strict allow list: a name behind SSH can only be allowed by name
    await setPolicy({ allow: ['127.0.0.1'], deny: [] });
    expectRefused(await viaSsh('127.0.0.1', 'db.internal'), 'db.internal');
  });
});

/** A loopback TCP listener; `onSocket` gets every connection. */
async function listen(host: string, port: number, onSocket: (s: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    onSocket(s);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
const closeServer = (s: net.Server) => new Promise<void>((resolve) => s.close(() => resolve()));

describe('DNS rebinding', () => {
  const NAME = 'rebind.test';
  afterEach(() => {
    vi.restoreAllMocks();
  });

  // The name answers the policy's lookup (the one made with verbatim: true) with an allowed address and any other
  // lookup of it, e.g. the driver's own when it connects, with a denied one: a DNS answer that changed between the
  // check and the connect. 127.0.0.1:P forwards to the real server; 127.0.0.2:P records whoever reaches it.
  it.each(DB_KINDS)(
    '%s: the connection goes to the address the policy approved, never to a second DNS answer',
    async (kind) => {
      const real = SERVERS[kind]();
      const realPort = kind === 'clickhouse' ? real.http_port! : real.port!;
      const piped = new Set<net.Socket>();
      const proxy = await listen('127.0.0.1', 0, (s) => {
        const up = net.connect(realPort, '127.0.0.1');
        up.on('error', () => s.destroy());
        s.on('close', () => up.destroy());
        piped.add(s).add(up);
        s.pipe(up).pipe(s);
      });
      const port = (proxy.address() as net.AddressInfo).port;
      const reachedDenied: string[] = [];
      const trap = await listen('127.0.0.2', port, (s) => {
        reachedDenied.push(`${s.localAddress}:${s.localPort}`);
        s.destroy();
      });

      const system = dns.lookup.bind(dns) as (...args: unknown[]) => void;
      vi.spyOn(dns, 'lookup').mockImplementation(((host: string, options: unknown, callback?: unknown) => {
        const cb = (typeof options === 'function' ? options : callback) as (e: null, a: unknown, f?: number) => void;
        const opts: dns.LookupOptions = typeof options === 'object' && options ? options : {};
        if (host !== NAME) return system(host, options, callback);
        const address = opts.verbatim === true ? '127.0.0.1' : '127.0.0.2';
        if (opts.all) cb(null, [{ address, family: 4 }]);
        else cb(null, address, 4);
      }) as typeof dns.lookup);

      try {
        await setPolicy({ allow: [], deny: [...DEFAULT.deny, '127.0.0.2/32'] });
        const settings =
          kind === 'clickhouse' ? { ...real, host: NAME, http_port: port } : { ...real, host: NAME, port };
        const res = ok<CheckResult>(
          await api.post('/api/data-source/check', { type: kind, settings }, cast.tokens.editor),
        );
        expect(reachedDenied).toEqual([]);
        expect(res).toEqual({ ok: true, message: 'Подключение успешно' });
      } finally {
        for (const s of piped) s.destroy();
        await Promise.all([closeServer(proxy), closeServer(trap)]);
      }
    },
  );
});
