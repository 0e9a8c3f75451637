/**
 * The cluster's cost and its coherence, measured from outside (issue 26):
 *
 *  1. 200 viewers of one share link through haproxy (docs/cluster.md's configuration) in front of 1 API node, then
 *     of 2 API nodes: requests per second and latencies. On a 2-core machine two nodes share the same two cores, so
 *     this shows what the cluster machinery costs, not how it scales.
 *  2. Revocation latency: a share link suspended through one node, polled through the other until it is refused
 *     (and activated again until it is served), REVOCATIONS times: p50 and p99.
 *  3. Source queries per dashboard load, the dashboard opened once through each node (cold caches), without and with
 *     Redis: without it each node reads the source itself; with it the second node answers from Redis.
 *
 *   npm run bench:cluster     (VIEWERS, SECONDS, ROWS, REVOCATIONS, SOURCE_PG_URL to change the defaults)
 *
 * The nodes are real processes started as `npm start` runs them, on a throwaway metadata database, an in-process
 * S3-compatible server (s3rver) and the machine's Redis (REDIS_URL, default redis://127.0.0.1:6379).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { Cluster, newSecretsKey } from '../../test/cluster/harness';
import { dashboardSalesDataset, dashboardSalesTable, ensureDashboardSales, viewerDashboard } from './dashboard-sales';
import { benchPlatform, call } from './support';
import { pct, runLoad, type LoadResult } from './viewer-load';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 100_000);
const VIEWERS = Number(process.env.VIEWERS ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 20);
const REVOCATIONS = Number(process.env.REVOCATIONS ?? 50);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const BUCKET = 'bench-cluster';

const ms = (n: number) => `${n.toFixed(1)} ms`;

function describeLoad(label: string, r: LoadResult): string {
  return (
    `  ${label}: ${(r.requests.length / r.elapsed).toFixed(0)} req/s, p50 ${ms(pct(r.requests, 0.5))}, ` +
    `p95 ${ms(pct(r.requests, 0.95))}, p99 ${ms(pct(r.requests, 0.99))}; page p95 ${ms(pct(r.pages, 0.95))}; ` +
    `errors ${r.errors}${r.errorSamples.length ? ` (${r.errorSamples.join('; ')})` : ''}`
  );
}

/** The nodes' count of queries sent to sources (GET /metrics), summed over the given nodes. */
async function sourceQueries(cluster: Cluster, names: string[]): Promise<number> {
  let total = 0;
  for (const name of names) {
    const text = await (await fetch(`${cluster.node(name).url}/metrics`)).text();
    for (const line of text.split('\n'))
      if (line.startsWith('analytics_source_query_duration_seconds_count')) total += Number(line.split(' ').pop());
  }
  return total;
}

async function statusOf(url: string): Promise<number> {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.status;
}

async function main() {
  await ensureDashboardSales(SOURCE_URL, ROWS);
  const s3dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-cluster-s3-'));
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3dir,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const { port: s3port } = (await s3.run()) as { port: number };
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
  const storageUrl = `s3://${BUCKET}/bench?endpoint=${encodeURIComponent(`http://127.0.0.1:${s3port}`)}&region=us-east-1&force_path_style=true`;
  const secretsKey = newSecretsKey();
  // The set-up process: migrations, the admin, the dataset, the widgets and the dashboard; it runs no jobs.
  const bench = await benchPlatform({
    name: 'cluster',
    server: SOURCE_URL,
    config: { STORAGE_URL: storageUrl, SECRETS_KEY: secretsKey, NODE_ROLE: 'api' },
  });
  let cluster: Cluster | undefined;
  try {
    const datasetId = await dashboardSalesDataset(bench, SOURCE_URL, ROWS);
    const { widgetIds, dashboardId } = await viewerDashboard(bench, datasetId);
    const link = await call(
      bench.base,
      'POST',
      `/api/dashboard/${dashboardId}/share-links`,
      { name: 'b' },
      bench.token,
    );

    await Cluster.build();
    const startNodes = async (redis: boolean) => {
      await cluster?.close();
      cluster = new Cluster({
        databaseUrl: bench.deps.config.databaseUrl!,
        storageUrl,
        secretsKey,
        redisUrl: redis ? REDIS_URL : undefined,
        env: { PUBLIC_RATE_LIMIT_PER_MINUTE: '0', REDIS_KEY_PREFIX: `bench-${crypto.randomUUID()}:` },
      });
      await Promise.all([cluster.startNode('api1', 'api'), cluster.startNode('api2', 'api')]);
      return cluster;
    };

    // 3. Source queries per dashboard load (cold caches), without Redis and with it.
    const perLoad: Record<string, number> = {};
    for (const redis of [false, true]) {
      const c = await startNodes(redis);
      const before = await sourceQueries(c, ['api1', 'api2']);
      for (const name of ['api1', 'api2'])
        await Promise.all(
          widgetIds.map((id) =>
            fetch(`${c.node(name).url}/api/public/link/${link.token}/widget/${id}/data`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: '{}',
            }).then((r) => r.arrayBuffer()),
          ),
        );
      perLoad[redis ? 'with Redis' : 'without Redis'] = ((await sourceQueries(c, ['api1', 'api2'])) - before) / 2;
    }

    // 1. Viewers through haproxy: 1 node, then 2 (Redis on, as a cluster would run).
    const c = cluster!;
    const loads: Record<string, LoadResult> = {};
    const readiness: Record<string, string> = {};
    for (const names of [['api1'], ['api1', 'api2']]) {
      await c.startBalancer(names);
      const data = { base: c.url, token: link.token as string, widgetIds, viewers: VIEWERS, seconds: SECONDS };
      await runLoad({ ...data, viewers: 1, seconds: 2 });
      // A load balancer's probe of api1's readiness during the load, as haproxy asks it (twice a second).
      let probing = true;
      const probes: { ms: number; status: number; body: string }[] = [];
      const probe = (async () => {
        while (probing) {
          const t0 = performance.now();
          const res = await fetch(`${c.node('api1').url}/readyz`).catch(() => null);
          const body = res ? await res.text() : 'no answer';
          probes.push({ ms: performance.now() - t0, status: res?.status ?? 0, body });
          await new Promise((r) => setTimeout(r, 500));
        }
      })();
      const label = `${names.length} api node${names.length > 1 ? 's' : ''}`;
      loads[label] = await runLoad(data);
      probing = false;
      await probe;
      // What haproxy said of its servers (state changes, with the reason), so a node taken out under load shows.
      const states = c
        .balancerLog()
        .split('\n')
        .filter((l) => /is (DOWN|UP)/.test(l));
      if (states.length)
        console.log(`haproxy during the ${names.length}-node run:\n  ${states.slice(0, 6).join('\n  ')}`);
      const bad = probes.filter((p) => p.status !== 200);
      readiness[label] =
        `${probes.length} probes of api1's /readyz, slowest ${ms(Math.max(...probes.map((p) => p.ms)))}, not 200: ${bad.length}` +
        (bad.length ? ` (${bad[0].status} ${bad[0].body.slice(0, 160)})` : '');
    }

    // 2. Revocation latency: suspended through api1, refused through api2; activated, served again.
    const view = `${c.node('api2').url}/api/public/link/${link.token}/dashboard`;
    const linkPath = `/api/dashboard/${dashboardId}/share-links/${link.link_id}`;
    const node1 = new URL(c.node('api1').url);
    const latencies: number[] = [];
    for (let i = 0; i < REVOCATIONS; i++) {
      for (const [action, wanted] of [
        ['suspend', false],
        ['activate', true],
      ] as const) {
        const since = performance.now();
        await call(node1, 'POST', `${linkPath}/${action}`, undefined, bench.token);
        while (((await statusOf(view)) === 200) !== wanted) {
          if (performance.now() - since > 10_000) throw new Error(`${action} not seen on api2 after 10 s`);
        }
        latencies.push(performance.now() - since);
      }
    }

    console.log(`\nnode ${process.version}, ${os.cpus().length} cores; source ${dashboardSalesTable(ROWS)}`);
    console.log(`${VIEWERS} viewers of one share link through haproxy, ${SECONDS} s each, dashboard + 8 widget data:`);
    for (const [label, r] of Object.entries(loads)) console.log(`${describeLoad(label, r)}\n    ${readiness[label]}`);
    console.log(
      `revocation seen on the other node (${latencies.length} suspend/activate): p50 ${ms(pct(latencies, 0.5))}, p99 ${ms(pct(latencies, 0.99))} (goal p99 <= 200 ms: ${pct(latencies, 0.99) <= 200 ? 'met' : 'NOT met'})`,
    );
    console.log(
      `source queries per dashboard load (8 widgets, opened once on each of 2 nodes, cold): ${Object.entries(perLoad)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  } finally {
    await cluster?.close();
    await bench.close();
    await s3.close();
    await fs.rm(s3dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
