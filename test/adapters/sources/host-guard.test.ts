import { afterAll, describe, expect, it } from 'vitest';
import { checkSourceHosts, closeAllConnectors, ConnectorError, getConnector } from '../../../adapters/sources';
import { pgSettings, randomName } from './servers';

afterAll(() => closeAllConnectors());

describe('checkHost hook', () => {
  it('is asked about the SSH server (resolved) and the database host behind it (by name only)', async () => {
    const asked: [string, boolean][] = [];
    const hook = async (host: string, opts: { resolve: boolean }) => { asked.push([host, opts.resolve]); };
    await checkSourceHosts({ host: ' db.internal ', use_ssh: true, ssh_tunnel: { host: 'bastion.example', username: 'u' } }, hook);
    await checkSourceHosts({ host: 'db.example', use_ssh: false, ssh_tunnel: { host: 'unused.example', username: 'u' } }, hook);
    expect(asked).toEqual([['bastion.example', true], ['db.internal', false], ['db.example', true]]);
  });

  it('is asked before every new physical connection: a host denied later fails once the pooled one is gone', async () => {
    let deny = false;
    const asked: string[] = [];
    const c = getConnector(randomName('guard'), 'postgresql', pgSettings(), {
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
