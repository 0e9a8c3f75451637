import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { AccessLogController, batchedStdout } from '../../../server/app/access-log';

/* One access-log line per request, written after the response, with what fastify's two lines said between them. */

function appLoggingTo(lines: Record<string, unknown>[]) {
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = Fastify({ logger: { level: 'info', stream }, logController: new AccessLogController() });
  app.get('/ok', async () => ({ ok: true }));
  app.get('/boom', async () => {
    throw new Error('boom');
  });
  return app;
}

describe('access log', () => {
  it('writes one line per request, after the response: id, method, url, client, status, time', async () => {
    const lines: Record<string, unknown>[] = [];
    const app = appLoggingTo(lines);
    const res = await app.inject({ method: 'GET', url: '/ok?x=1' });
    expect(res.statusCode).toBe(200);
    const mine = lines.filter((l) => l.reqId === lines.at(-1)?.reqId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ msg: 'request', method: 'GET', url: '/ok?x=1', statusCode: 200, level: 30 });
    expect(mine[0].remoteAddress).toBeTypeOf('string');
    expect(mine[0].responseTime).toBeTypeOf('number');
    await app.close();
  });

  it('still logs a failed request (the error handler’s line and the access line, at 500)', async () => {
    const lines: Record<string, unknown>[] = [];
    const app = appLoggingTo(lines);
    const res = await app.inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    const access = lines.filter((l) => l.url === '/boom');
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ method: 'GET', statusCode: 500 });
    expect(lines.some((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toBe(false);
    await app.close();
  });

  it('writes the lines of one event-loop turn to stdout together, in order, on the next turn', async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    try {
      const out = batchedStdout();
      out.write('{"a":1}\n');
      out.write('{"a":2}\n');
      out.write('{"a":3}\n');
      expect(writes).toEqual([]);
      await new Promise((r) => setImmediate(r));
      expect(writes).toEqual(['{"a":1}\n{"a":2}\n{"a":3}\n']);
      out.write('{"a":4}\n');
      await new Promise((r) => setImmediate(r));
      expect(writes).toEqual(['{"a":1}\n{"a":2}\n{"a":3}\n', '{"a":4}\n']);
    } finally {
      spy.mockRestore();
    }
  });
});
