// One-trip reads waiting for a connection go out together on the next free one (adapters/sources/postgresql/
// pipelined-reads.ts). Each read still gets its own answer and its own error; a failure, a timeout or a dropped
// connection in the middle of a batch touches no other read of it; a cancel reaches only the read it is for.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createConnector, type Connector, type QueryOptions } from '../../../adapters/sources';
import { connectorFailure } from './connector-failure';
import { pgSettings } from './servers';

const ONE_TRIP: QueryOptions = { readOnly: true, limit: 100, compiledText: true };
const PLUS_ONE = 'SELECT CAST($1 AS integer) + 1 AS "n"';
const SLEEP = 'SELECT pg_sleep(CAST($1 AS float8)) AS "s"';

describe('pipelined one-trip reads on PostgreSQL', () => {
  let c: Connector;

  beforeAll(() => {
    // One connection: every read behind the first waits for it, and those waiting leave together.
    c = createConnector('postgresql', pgSettings(), { poolSize: 1 });
  });

  afterAll(async () => {
    await c.close();
  });

  const plusOne = (n: number, opts: QueryOptions = {}) =>
    c.query(PLUS_ONE, [n], { ...ONE_TRIP, ...opts }).then((r) => r.rows[0][0]);

  it('sends the reads that waited in one write, and answers each with its own rows', async () => {
    const port = pgSettings().port ?? 5432;
    // Spies call through: each records the socket it wrote on.
    const proto = net.Socket.prototype as unknown as Record<'_write' | '_writev', (...a: unknown[]) => void>;
    const spies = [vi.spyOn(proto, '_write'), vi.spyOn(proto, '_writev')];
    const writes = () =>
      spies.flatMap((s) => s.mock.contexts as net.Socket[]).filter((socket) => socket.remotePort === port).length;
    try {
      await plusOne(0); // the connection is made before the count starts
      for (const s of spies) s.mockClear();
      const values = Array.from({ length: 20 }, (_, i) => i * 10);
      expect(await Promise.all(values.map((v) => plusOne(v)))).toEqual(values.map((v) => v + 1));
      // Twenty reads asked for at once leave as 16 and 4 (at most 16 texts in one write).
      expect(writes()).toBeGreaterThan(0);
      expect(writes()).toBeLessThanOrEqual(3);
    } finally {
      for (const s of spies) s.mockRestore();
    }
  });

  it('a read that fails in the middle of a batch fails alone, and the connection is left clean', async () => {
    const reads = [1, 2, 0, 4, 5, 6].map((n) =>
      c.query('SELECT 12 / CAST($1 AS integer) AS "x"', [n], ONE_TRIP).then(
        (r) => r.rows[0][0],
        (e: unknown) => e,
      ),
    );
    const answers = await Promise.all(reads);
    expect(answers[2]).toMatchObject({ kind: 'query', message: expect.stringContaining('division by zero') });
    expect(answers.filter((_, i) => i !== 2)).toEqual([12, 6, 3, 2, 2]);
    expect((await c.query('SHOW transaction_read_only', [])).rows).toEqual([['off']]);
    expect(await plusOne(41)).toBe(42);
  });

  it('a timeout cancels only its own read, even when it fires while another read of its batch runs', async () => {
    const pid = 'SELECT pg_backend_pid() AS "p", pg_sleep(CAST($1 AS float8)) AS "s"';
    // Statements known to be quick share a connection: these two are, once each has run quickly.
    await c.query(pid, [0], ONE_TRIP);
    await c.query(SLEEP, [0], ONE_TRIP);
    const first = c.query(pid, [0], ONE_TRIP);
    const running = c.query(pid, [0.6], ONE_TRIP);
    const timed = connectorFailure(() => c.query(SLEEP, [10], { ...ONE_TRIP, timeoutMs: 200 }));
    const alsoTimed = connectorFailure(() => c.query(SLEEP, [10], { ...ONE_TRIP, timeoutMs: 300 }));
    const behind = [plusOne(1), plusOne(2), plusOne(3)];
    const started = Date.now();
    // The budgets ran out during the 0.6 s sleep before them: each cancel waits for its own read's turn, so the
    // sleep ran once, to its end, on the connection the batch left on (not again after a stray cancel).
    expect((await running).rows[0][0]).toBe((await first).rows[0][0]);
    expect(await timed).toMatchObject({ kind: 'timeout' });
    expect(await alsoTimed).toMatchObject({ kind: 'timeout' });
    expect(await Promise.all(behind)).toEqual([2, 3, 4]);
    // Both stopped by their own cancel, not by the server's backstop a second past the budget.
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await plusOne(5)).toBe(6);
  });

  it('a statement known to be slow, or not known yet, goes alone and holds up no other read', async () => {
    const two = createConnector('postgresql', pgSettings(), { poolSize: 2 });
    try {
      await two.query(SLEEP, [0.3], ONE_TRIP);
      await two.query(PLUS_ONE, [0], ONE_TRIP);
      const started = Date.now();
      let slept = false;
      const slow = two.query(SLEEP, [1], ONE_TRIP).then(() => (slept = true));
      const quick = await Promise.all(
        Array.from({ length: 10 }, (_, i) => two.query(PLUS_ONE, [i], ONE_TRIP).then((r) => r.rows[0][0])),
      );
      expect(quick).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      expect(slept).toBe(false);
      expect(Date.now() - started).toBeLessThan(800);
      await slow;
      // A statement never run before goes alone too: here it is first in line, and the quick ones do not wait.
      const again = Date.now();
      const unknown = two.query('SELECT pg_sleep(CAST($1 AS float8)) AS "t"', [1], ONE_TRIP);
      const behind = await Promise.all([two.query(PLUS_ONE, [1], ONE_TRIP), two.query(PLUS_ONE, [2], ONE_TRIP)]);
      expect(behind.map((r) => r.rows[0][0])).toEqual([2, 3]);
      expect(Date.now() - again).toBeLessThan(800);
      await unknown;
    } finally {
      await two.close();
    }
  });

  it('a read cancelled while waiting for a connection is answered at once and never sent', async () => {
    const running = c.query(SLEEP, [0.5], ONE_TRIP);
    await new Promise((r) => setTimeout(r, 20)); // the sleep has left: what is asked for now waits
    const abort = new AbortController();
    const started = Date.now();
    const waiting = connectorFailure(() =>
      c.query('SELECT CAST($1 AS integer) / 0 AS "n"', [1], { ...ONE_TRIP, signal: abort.signal }),
    );
    setTimeout(() => abort.abort(), 50);
    expect(await waiting).toMatchObject({ kind: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(400);
    await running;
    expect(await plusOne(6)).toBe(7);
  });

  it('a connection dropped under a batch fails the reads on it, and the next read gets a new one', async () => {
    const pid = (await c.query('SELECT pg_backend_pid()', [])).rows[0][0];
    // The connection is busy with a read of another kind, so the three below wait for it and leave together.
    const busy = c.query('SELECT pg_sleep(0.2)', [], { readOnly: true, limit: 1 });
    const reads = [c.query(SLEEP, [5], ONE_TRIP), plusOne(1), plusOne(2)].map((p) => connectorFailure(() => p));
    await busy;
    await new Promise((r) => setTimeout(r, 300));
    const admin = createConnector('postgresql', pgSettings());
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.close();
    }
    for (const failure of await Promise.all(reads)) expect(failure.kind).toBe('connection');
    expect(await plusOne(7)).toBe(8);
  });
});
