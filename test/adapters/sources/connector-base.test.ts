import { describe, expect, it } from 'vitest';
import { batchRowStream, ConnectorBase, wholeRowStream } from '../../../adapters/sources/connector-base';
import type { QueryOptions, RowStream } from '../../../adapters/sources/types';

/** Batches of 3 rows, 10 rows in all; counts its closes. */
function batched(limit?: number) {
  const rows = Array.from({ length: 10 }, (_, i) => [i]);
  let at = 0;
  const closes = { n: 0 };
  const stream = batchRowStream(
    [],
    async () => (at < rows.length ? rows.slice(at, (at += 3)) : null),
    async () => void closes.n++,
    limit,
  );
  return { stream, closes };
}

/** query() is ConnectorBase's own: a connector whose openStream is the batches above (the rest is never called). */
class BatchConnector extends ConnectorBase {
  readonly kind = 'postgresql' as const;
  readonly dialect = 'postgresql' as const;
  closes = { n: 0 };
  async openStream(_sql: string, _params: unknown[], opts: QueryOptions = {}): Promise<RowStream> {
    const { stream, closes } = batched(opts.limit);
    this.closes = closes;
    return stream;
  }
  check = () => Promise.reject(new Error('not used'));
  listSchemas = () => Promise.reject(new Error('not used'));
  listTables = () => Promise.reject(new Error('not used'));
  listColumns = () => Promise.reject(new Error('not used'));
  close = () => Promise.resolve();
}

/** A connector whose reads come back whole (as PostgreSQL's bounded reads do): 10 rows, cut at the limit asked. */
class WholeConnector extends BatchConnector {
  last: RowStream | undefined;
  override async openStream(_sql: string, _params: unknown[], opts: QueryOptions = {}): Promise<RowStream> {
    return (this.last = wholeRowStream(
      [],
      Array.from({ length: 10 }, (_, i) => [i]),
      opts.limit,
    ));
  }
}

describe('batch row streams', () => {
  it('give the same rows by row and by batch, cut at the limit, and close once', async () => {
    const byRow = batched(7);
    const rows: unknown[][] = [];
    for await (const row of byRow.stream) rows.push(row);
    expect(rows).toEqual([[0], [1], [2], [3], [4], [5], [6]]);
    expect(byRow.closes.n).toBe(1);

    const byBatch = batched(7);
    const batches: unknown[][][] = [];
    for await (const batch of byBatch.stream.batches!()) batches.push(batch);
    expect(batches).toEqual([[[0], [1], [2]], [[3], [4], [5]], [[6]]]);
    expect(byBatch.closes.n).toBe(1);
  });

  it('close when the reader stops early', async () => {
    const { stream, closes } = batched();
    for await (const row of stream) if (row[0] === 4) break;
    expect(closes.n).toBe(1);
  });

  it('let query() read whole batches and still say truncated at the limit', async () => {
    const c = new BatchConnector({});
    const cut = await c.query('', [], { limit: 4 });
    expect(cut.rows).toEqual([[0], [1], [2], [3]]);
    expect(cut.truncated).toBe(true);
    expect(c.closes.n).toBe(1);
    const exact = await c.query('', [], { limit: 10 });
    expect(exact.rows).toHaveLength(10);
    expect(exact.truncated).toBe(false);
    const all = await c.query('', []);
    expect(all.rows).toHaveLength(10);
    expect(all.truncated).toBe(false);
  });

  it('let query() take rows read whole as they are, saying truncated as a stream read would', async () => {
    const c = new WholeConnector({});
    const cut = await c.query('', [], { limit: 4 });
    expect(cut).toEqual({ columns: [], rows: [[0], [1], [2], [3]], truncated: true });
    const exact = await c.query('', [], { limit: 10 });
    expect(exact.rows).toHaveLength(10);
    expect(exact.truncated).toBe(false);
    // Taken as they are: not read through the stream into a new array.
    expect(exact.rows).toBe(c.last!.whole);
    expect((await c.query('', [])).truncated).toBe(false);
    // The same stream read row by row gives the same rows, up to its limit.
    const rows: unknown[][] = [];
    for await (const row of await c.openStream('', [], { limit: 3 })) rows.push(row);
    expect(rows).toEqual([[0], [1], [2]]);
  });
});
