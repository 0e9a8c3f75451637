/**
 * REST adapter overhead, measured in one run on one server: the same authenticated procedure (GET /api/settings)
 * over REST and over /trpc, against a bare fastify route with no auth, no validation and no envelope. The bare route
 * gets the same request (Authorization header included) and answers the same settings object, so that the ratio is
 * what the adapter, auth and the procedure add, not a difference in bytes on the wire.
 * The load generator runs in a worker thread so that it does not share the server's event loop.
 *
 *   npm run bench:rest            (DURATION=8 CONNECTIONS=16 to change the load)
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../../server/app/config';
import { startRuntime } from '../../server/app/start';
import { buildApp } from '../../server/app/app';
import { getInstallationSettings } from '../../server/service/installation';

const duration = Number(process.env.DURATION ?? 6);
const connections = Number(process.env.CONNECTIONS ?? 16);

interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function measure(name: string, url: string, headers: Record<string, string>): Promise<Measured> {
  // Warm-up: JIT, caches, connection pool.
  await autocannon({ url, headers, connections, duration: 2, workers: 1 });
  const r = await autocannon({ url, headers, connections, duration, workers: 1 });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-rest-'));
  const password = 'Bench-admin-2026';
  const runtime = await startRuntime(
    loadConfig({ DATA_DIR: dataDir, ADMIN_PASSWORD: password, DATABASE_URL: process.env.DATABASE_URL ?? '' }),
  );
  const app = await buildApp(runtime.deps);
  const sameAnswer = await getInstallationSettings(runtime.deps);
  app.get('/bench/bare', async () => sameAnswer);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const auth = { authorization: `Bearer ${token}` };

    const targets: [string, string, Record<string, string>][] = [
      ['bare fastify route', `${base}/bench/bare`, auth],
      ['REST GET /api/settings', `${base}/api/settings`, auth],
      ['tRPC service.getSettings', `${base}/trpc/service.getSettings`, auth],
    ];
    // Two interleaved rounds, best of each: other load on the machine then hurts every target alike.
    const rounds: Measured[][] = [[], []];
    for (const round of rounds)
      for (const [name, url, headers] of targets) round.push(await measure(name, url, headers));
    const results = targets.map((_, i) => (rounds[0][i].rps >= rounds[1][i].rps ? rounds[0][i] : rounds[1][i]));

    const [bare, restR, trpcR] = results;
    console.log(
      `\nnode ${process.version}, ${os.cpus().length} cores, ${connections} connections, best of 2 x ${duration} s each\n`,
    );
    console.log('target                          req/s     p50 ms  p99 ms  errors');
    for (const r of results) {
      console.log(
        `${r.name.padEnd(30)} ${r.rps.toFixed(0).padStart(7)}  ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}  ${r.errors}`,
      );
    }
    const ratio = restR.rps / bare.rps;
    console.log(`\nREST / bare   = ${ratio.toFixed(2)}x   (goal >= 0.60x: ${ratio >= 0.6 ? 'met' : 'NOT met'})`);
    console.log(`tRPC / bare   = ${(trpcR.rps / bare.rps).toFixed(2)}x`);
    console.log(`REST / tRPC   = ${(restR.rps / trpcR.rps).toFixed(2)}x`);
    if (results.some((r) => r.errors > 0)) process.exitCode = 1;
  } finally {
    await app.close();
    await runtime.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
