import { afterAll, describe, expect, it } from 'vitest';
import { ConnectorCache, settingsHash, SOURCE_KINDS, createConnector, ConnectorError } from '../../../adapters/sources';
import { pgSettings } from './servers';

describe('connector cache', () => {
  const cache = new ConnectorCache();
  afterAll(async () => {
    await cache.closeAll();
  });

  it('keeps one connector per source while its settings stay the same', async () => {
    const a = cache.get(101, 'postgresql', pgSettings());
    const b = cache.get(101, 'postgresql', { ...pgSettings() });
    expect(b).toBe(a);
    expect((await a.query('SELECT 1', [])).rows).toEqual([[1]]);
    expect(cache.get(102, 'postgresql', pgSettings())).not.toBe(a);
  });

  it('replaces the connector when the settings change, closing the old pool', async () => {
    const a = cache.get(201, 'postgresql', pgSettings());
    await a.check();
    const b = cache.get(201, 'postgresql', pgSettings({ initial_sql: 'SET search_path = public' }));
    expect(b).not.toBe(a);
    await b.check();
    await new Promise((r) => setTimeout(r, 50));
    await expect(a.query('SELECT 1', [])).rejects.toMatchObject({ kind: 'connection' });
  });

  it('releases one source, or all', async () => {
    const a = cache.get(301, 'postgresql', pgSettings());
    await cache.release(301);
    expect(cache.get(301, 'postgresql', pgSettings())).not.toBe(a);
    await cache.closeAll();
    await cache.release(999); // unknown id: nothing to do
  });

  it('hashes settings independently of key order', () => {
    expect(settingsHash('mysql', { host: 'h', port: 1 })).toBe(settingsHash('mysql', { port: 1, host: 'h' }));
    expect(settingsHash('mysql', { host: 'h' })).not.toBe(settingsHash('postgresql', { host: 'h' }));
    expect(settingsHash('mysql', { host: 'h', password: 'a' })).not.toBe(
      settingsHash('mysql', { host: 'h', password: 'b' }),
    );
  });
});

describe('source kinds', () => {
  it('describes every kind with its Russian name, default ports and supported settings', () => {
    expect(SOURCE_KINDS.map((k) => [k.type, k.name, k.default_port, k.default_http_port])).toEqual([
      ['postgresql', 'PostgreSQL', 5432, null],
      ['mysql', 'MySQL / MariaDB', 3306, null],
      ['clickhouse', 'ClickHouse', 9000, 8123],
      ['file', 'Файл', null, null],
    ]);
    expect(SOURCE_KINDS.find((k) => k.type === 'file')?.supports).toEqual({
      ssl: false,
      ssh: false,
      initial_sql: false,
    });
  });

  it('refuses an unknown kind', () => {
    expect(() => createConnector('oracle' as never, {})).toThrow(ConnectorError);
  });
});
