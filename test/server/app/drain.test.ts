import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { cloneTemplateDatabase } from '../../support/test-database';
import { exited, repoRoot, startServer, stopLeftovers } from './server-process';

/**
 * SIGTERM drains the node (server/app/main.ts), started as `npm start` starts it: /readyz answers 503 at once while
 * the node keeps serving for DRAIN_DELAY_MS; a client that stops sending once /readyz says 503 (as haproxy does) sees
 * no request fail; a request still in flight when the port closes is answered; the process exits 0.
 */

const DRAIN_MS = 1_500;

let dataDir = '';
const children: ChildProcess[] = [];
let dropClone: (() => Promise<void>) | undefined;

afterAll(async () => {
  await stopLeftovers(children, dataDir);
  await dropClone?.();
});

/** A login whose body arrives in two parts, `gapMs` apart: in flight across the moment the port closes. */
function slowLogin(port: number, gapMs: number): Promise<number> {
  const body = JSON.stringify({ username: 'nobody-here', password: 'not-the-password' });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/auth/login',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    setTimeout(() => req.end(body.slice(10)), gapMs);
  });
}

describe('SIGTERM under load', () => {
  it('drains: /readyz 503 at once, no request fails, the one in flight is answered, exit 0', async () => {
    const clone = await cloneTemplateDatabase(inject('databaseUrl'));
    dropClone = clone.drop;
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-drain-'));
    const server = await startServer(repoRoot, {
      DATA_DIR: dataDir,
      DATABASE_URL: clone.url,
      DRAIN_DELAY_MS: String(DRAIN_MS),
    });
    children.push(server.child);
    const base = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    // The built server's lazily loaded exporter answers (a chunk of its own in dist/).
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('analytics_http_request_duration_seconds_bucket{route="/readyz"');
    // Once pg-boss has started (after listen), the job queues' depth per kind.
    const until = Date.now() + 30_000;
    let queues = '';
    while (!queues && Date.now() < until) {
      const text = await (await fetch(`${base}/metrics`)).text();
      queues = text.split('\n').find((l) => l.startsWith('analytics_job_queue_jobs{kind=')) ?? '';
      if (!queues) await new Promise((r) => setTimeout(r, 200));
    }
    expect(queues).toMatch(/^analytics_job_queue_jobs\{kind="[a-z-]+",state="(queued|active)"\} \d+$/);

    // The balancer: asks /readyz every 100 ms and takes the node out at the first 503.
    let out = false;
    let outAt = 0;
    let sigtermAt = 0;
    const probe = (async () => {
      while (!out) {
        try {
          const res = await fetch(`${base}/readyz`);
          await res.arrayBuffer();
          if (res.status === 503) {
            out = true;
            outAt = Date.now();
          }
        } catch {
          /* the node closed its port: the balancer would have taken it out by now */
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    // The users: a steady stream over kept-alive connections while the node is in.
    const failures: string[] = [];
    let served = 0;
    let servedWhileDraining = 0;
    const loop = async () => {
      while (!out) {
        try {
          const res = await fetch(`${base}/api/auth/sso/providers`);
          await res.arrayBuffer();
          if (res.status !== 200) failures.push(String(res.status));
          served++;
          if (sigtermAt) servedWhileDraining++;
        } catch (e) {
          failures.push((e as Error).message);
        }
      }
    };
    const loops = Array.from({ length: 6 }, loop);
    await new Promise((r) => setTimeout(r, 1_000));

    const inFlight = slowLogin(server.port, DRAIN_MS + 700);
    await new Promise((r) => setTimeout(r, 100));
    sigtermAt = Date.now();
    server.child.kill('SIGTERM');
    await Promise.all([probe, ...loops]);
    const code = await exited(server.child);

    console.log(
      `drain: ${served} requests served (${servedWhileDraining} after SIGTERM), node out after ${outAt - sigtermAt} ms, failed: ${failures.length}`,
    );
    expect(failures).toEqual([]);
    expect(outAt - sigtermAt).toBeLessThan(DRAIN_MS);
    expect(served).toBeGreaterThan(0);
    // Wrong credentials: answered (401 in the envelope), not cut, though its body ended after the port closed.
    expect(await inFlight).toBe(401);
    expect(code, server.output()).toBe(0);
  }, 180_000);
});
