import { describe, expect, it } from 'vitest';
import { ResolvingConnector } from '../../../adapters/sources/resolving-connector';
import type { Connector, QueryResult } from '../../../adapters/sources/types';

/** A connector that answers every read with its own name and fails everything else (not called here). */
function named(name: string): Connector {
  const result: QueryResult = { columns: [], rows: [[name]], truncated: false };
  const unused = () => Promise.reject(new Error('not used'));
  return {
    kind: 'postgresql',
    dialect: 'postgresql',
    query: async () => result,
    openStream: unused,
    stream: () => {
      throw new Error('not used');
    },
    check: unused,
    listSchemas: unused,
    listTables: unused,
    listColumns: unused,
    close: async () => {},
  };
}

describe('resolving connector', () => {
  it('reads from the connector known now without resolving, and resolves when none is known or telling fails', async () => {
    let resolved = 0;
    let now: () => Connector | undefined = () => named('now');
    const c = new ResolvingConnector(
      'postgresql',
      'postgresql',
      async () => (resolved++, named('resolved')),
      () => now(),
    );
    expect((await c.query('SELECT 1', [])).rows).toEqual([['now']]);
    expect(resolved).toBe(0);

    now = () => undefined;
    expect((await c.query('SELECT 1', [])).rows).toEqual([['resolved']]);
    expect(resolved).toBe(1);

    now = () => {
      throw new Error('settings cache unreadable');
    };
    expect((await c.query('SELECT 1', [])).rows).toEqual([['resolved']]);
    expect(resolved).toBe(2);
  });

  it('reports a failure to resolve as the read failing, not as a throw', async () => {
    const c = new ResolvingConnector('postgresql', 'postgresql', () => Promise.reject(new Error('driver gone')));
    const read = c.query('SELECT 1', []);
    expect(read).toBeInstanceOf(Promise);
    await expect(read).rejects.toThrow('driver gone');
  });
});
