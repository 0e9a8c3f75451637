import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app';
import { enableApiTokens, issueApiToken } from '../support/factories';
import { s3StorageUrl } from '../support/object-store';
import { ok, type Rest } from '../support/rest';
import { upload, type Preview, type SourceView } from '../routers/data-sources/helpers';
import { materialise, runExtract } from '../routers/etl/world';
import { runExport } from '../routers/file-export/jobs';
import { createShareWorld, issueLink, type ShareWorld, type WidgetData } from '../routers/public-link/world';
import { MSG as EXTRACT_MSG } from '../../server/etl/messages';
import { MSG as MAILING_MSG } from '../../server/mailings/messages';
import { createObjectDataset, waitForRun, type RunView } from '../routers/etl/world';
import { toOf, useOrdersInbox, waitRun, type LetterPage, createOrdersMailing } from '../routers/mailings/world';
import { createPgSource, sourceDb } from '../routers/widgets/world';
import { uniq } from '../support/factories';
import { Cluster, newSecretsKey } from './harness';

/*
 * Issue 26's cluster, for real: two API nodes and a worker, each its own process and DATA_DIR, on one PostgreSQL
 * database, the S3-compatible server, Redis and haproxy (docs/cluster.md's configuration). What one node does, the
 * others see; what one node revokes, the others refuse at once; public calls meet one shared limit; a node that is
 * stopped under load loses no request.
 */

// First, so that its afterAll (closing the inbox) runs after this file's, which kills the nodes still talking to it.
const orders = useOrdersInbox();
let t: TestApp;
let cluster: Cluster;
let w: ShareWorld;
let lb: Rest;

const sha256 = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  const storageUrl = s3StorageUrl('cluster');
  const secretsKey = newSecretsKey();
  t = await createTestApp({ STORAGE_URL: storageUrl, SECRETS_KEY: secretsKey });
  await Cluster.build();
  cluster = new Cluster({
    databaseUrl: t.databaseUrl,
    storageUrl,
    secretsKey,
    redisUrl: `${process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379'}`,
    // A key prefix of its own in the shared Redis: other test files use it too.
    env: { REDIS_KEY_PREFIX: `cluster-${crypto.randomUUID()}:` },
  });
  await Promise.all([
    cluster.startNode('api1', 'api'),
    cluster.startNode('api2', 'api'),
    cluster.startNode('worker1', 'worker'),
  ]);
  await cluster.startBalancer();
  lb = cluster.api;
  w = await createShareWorld(t, lb);
}, 600_000);

afterAll(async () => {
  await w?.dispose();
  await cluster?.close();
  await t?.close();
});

const api1 = () => cluster.node('api1').api;
const api2 = () => cluster.node('api2').api;

/** Polls until `refused()` holds; answers how long it took after `since`. */
async function msUntil(since: number, refused: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  for (;;) {
    if (await refused()) return Date.now() - since;
    if (Date.now() - since > timeoutMs) throw new Error(`still allowed after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// Each step waits on real processes (jobs, a worker's death, a drain) on a shared 2-core machine.
describe('a cluster of 2 api nodes and a worker', { timeout: 180_000 }, () => {
  it('a login on one node works on the others; a worker serves only its health and render pages', async () => {
    const viewer = w.cast.users.viewer;
    const session = ok<{ token: string; refresh_token: string }>(
      await api1().post('/api/auth/login', { username: viewer.username, password: viewer.password }),
    );
    for (const api of [api1(), api2(), lb]) expect((await api.get('/api/users/me', session.token)).status).toBe(200);
    // The refresh token issued by api1 renews the session on api2.
    const renewed = ok<{ token: string }>(
      await api2().post('/api/auth/refresh', { refresh_token: session.refresh_token }),
    );
    expect((await api1().get('/api/users/me', renewed.token)).status).toBe(200);
    const token = session.token;
    const worker = cluster.node('worker1').api;
    expect((await worker.get('/healthz')).status).toBe(200);
    expect((await worker.get('/readyz')).status).toBe(200);
    expect((await worker.get('/api/users/me', token)).status).toBe(404);
  });

  it('an upload on one node is previewed through another', async () => {
    const csv = 'id,city,amount\n1,Москва,10.5\n2,Казань,20\n';
    const src = ok<SourceView>(
      await upload(api1(), 'POST', '/api/files', w.cast.tokens.editor, { name: 'Города.csv', content: csv }),
    );
    const preview = ok<Preview>(
      await api2().post(`/api/data-source/${src.id}/preview`, { table: 'Города' }, w.cast.tokens.editor),
    );
    expect(preview.rows).toEqual([
      [1, 'Москва', 10.5],
      [2, 'Казань', 20],
    ]);
  });

  it('an extract run on the worker is read through both api nodes', async () => {
    const token = w.cast.tokens.wsAdmin!;
    const live = ok<WidgetData>(await api1().post(`/api/widget/${w.widgets.bar}/data`, {}, token));
    await materialise(api1(), token, w.datasetId);
    const run = await runExtract(api2(), token, w.datasetId, {}, 'succeeded', 120_000);
    expect(run.state).toBe('succeeded');
    for (const api of [api1(), api2()]) {
      const res = await api.post(`/api/widget/${w.widgets.bar}/data`, {}, token);
      expect(ok<WidgetData>(res)).toEqual(live);
    }
  });

  it('an export made through one node downloads through the other, byte for byte', async () => {
    const token = w.cast.tokens.viewer!;
    const job = await runExport(api1(), token, { object_type: 'widget', object_id: w.widgets.table, format: 'csv' });
    expect(job.state, job.error ?? '').toBe('succeeded');
    const one = await fetch(`${cluster.node('api1').url}/api/exports/${job.job_id}/file`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const two = await fetch(`${cluster.node('api2').url}/api/exports/${job.job_id}/file`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect([one.status, two.status]).toEqual([200, 200]);
    const [a, b] = [Buffer.from(await one.arrayBuffer()), Buffer.from(await two.arrayBuffer())];
    expect(a.length).toBeGreaterThan(0);
    expect(sha256(b)).toBe(sha256(a));
  });

  it('a membership removal, a deactivation, a token revoke and a link suspension are refused on the other node at once', async () => {
    const latencies: Record<string, number> = {};
    const sysadmin = w.cast.tokens.sysadmin!;

    // Membership: the viewer reads the dashboard through api2, is removed through api1.
    const viewer = w.cast.tokens.viewer!;
    const dashboard = `/api/dashboard/${w.dashboardId}`;
    expect((await api2().get(dashboard, viewer)).status).toBe(200);
    const members = ok<{ content: { member_id: number; user_id: number | null }[] }>(
      await api1().get(`/api/workspaces/${w.cast.workspaceId}/members`, w.cast.tokens.wsAdmin),
    );
    const member = members.content.find((m) => m.user_id === w.cast.users.viewer.id)!;
    let since = Date.now();
    ok(await api1().delete(`/api/workspaces/${w.cast.workspaceId}/members/${member.member_id}`, w.cast.tokens.wsAdmin));
    latencies.membership = await msUntil(since, async () => (await api2().get(dashboard, viewer)).status !== 200);

    // Deactivation: a session is refused on api2 once api1 deactivates the account.
    const plain = w.cast.tokens.plain!;
    expect((await api2().get('/api/users/me', plain)).status).toBe(200);
    since = Date.now();
    ok(await api1().put(`/api/users/${w.cast.users.plain.id}`, { active: false }, sysadmin));
    latencies.deactivation = await msUntil(
      since,
      async () => (await api2().get('/api/users/me', plain)).status !== 200,
    );

    // API token: issued and used on api2, revoked on api1.
    await enableApiTokens(api1(), sysadmin);
    const apiToken = await issueApiToken(api1(), w.cast.tokens.manager!);
    expect((await api2().get('/api/users/me', apiToken)).status).toBe(200);
    const tokens = ok<{ content: { id: number }[] }>(await api1().get('/api/mcp-tokens', w.cast.tokens.manager));
    since = Date.now();
    ok(await api1().delete(`/api/mcp-tokens/${tokens.content[0].id}`, w.cast.tokens.manager));
    latencies.apiToken = await msUntil(since, async () => (await api2().get('/api/users/me', apiToken)).status !== 200);

    // Share link: viewed through api2, suspended through api1.
    const link = await issueLink(lb, w);
    const view = `/api/public/link/${link.token}/dashboard`;
    expect((await api2().get(view)).status).toBe(200);
    since = Date.now();
    ok(await api1().post(`${w.linksPath}/${link.link_id}/suspend`, undefined, w.owner));
    latencies.shareLink = await msUntil(since, async () => (await api2().get(view)).status !== 200);

    console.log(`cluster: revocation honoured on the other node after (ms) ${JSON.stringify(latencies)}`);
    for (const [what, ms] of Object.entries(latencies)) expect(ms, what).toBeLessThan(1_000);
  });

  it('1,500 public calls from one address, alternating nodes, meet one shared limit', async () => {
    const link = await issueLink(lb, w);
    const client = `198.51.100.${1 + crypto.randomInt(250)}`;
    const statuses = new Map<number, number>();
    const perNode = new Map<string, number>();
    for (let batch = 0; batch < 1_500 / 50; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          // Alternating nodes directly as well as through haproxy: the limit must not care which node counts.
          const node = (batch * 50 + i) % 2 === 0 ? cluster.node('api1') : cluster.node('api2');
          const res = await fetch(`${node.url}/api/public/link/${link.token}`, {
            headers: { 'x-forwarded-for': client },
          });
          await res.arrayBuffer();
          perNode.set(node.name, (perNode.get(node.name) ?? 0) + 1);
          return res.status;
        }),
      );
      for (const s of answers) statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
    console.log(`cluster: 1,500 public calls: ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(statuses.get(200)).toBe(1_200);
    expect(statuses.get(429)).toBe(300);
    expect(perNode.get('api1')).toBe(750);
  });

  it('the worker killed mid-extract and mid-mailing: a new worker fails the run, resumes the mailing, no letter twice', async () => {
    const token = w.cast.tokens.wsAdmin!;
    const sourceId = await createPgSource(t.deps, w.cast.workspaceId, w.cast.users.wsAdmin.id);
    // An extract whose source read waits on a lock while the worker dies.
    const table = uniq('x_cluster');
    const source = await sourceDb();
    const lock = await sourceDb();
    await source.query(`CREATE TABLE ${table} AS SELECT g AS id FROM generate_series(1, 50) g`);
    const datasetId = await createObjectDataset(lb, token, {
      name: uniq('kill'),
      workspaceId: w.cast.workspaceId,
      sourceId,
      object: { name: 'k', schema: 'public', table },
      columns: [['id', 'integer']],
    });
    await materialise(lb, token, datasetId);
    // A mailing to five addresses whose third letter the mail server takes but never answers.
    const emails = ['k1@example.test', 'k2@example.test', 'k3@example.test', 'k4@example.test', 'k5@example.test'];
    const mailing = await createOrdersMailing(t.deps, lb, {
      cast: w.cast,
      inboxPort: orders.inbox.port,
      table: orders.table,
      name: 'kill',
      emails,
    });
    try {
      await lock.query('BEGIN');
      await lock.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const extract = ok<RunView>(await api1().post(`/api/datasets/${datasetId}/extracts`, {}, token));
      await waitForRun(lb, token, extract.job_id, (r) => r.state === 'running', 120_000);
      orders.inbox.hold.add('k3@example.test');
      const { run_id } = ok<{ run_id: number }>(await api2().post(`/api/mailings/${mailing.id}/run`, {}, token));
      await orders.inbox.held('k3@example.test');

      expect(await cluster.stopNode('worker1', 'SIGKILL')).toBeNull();
      const diedAt = Date.now();
      await lock.query('ROLLBACK');
      await cluster.startNode('worker2', 'worker');

      const failed = await waitForRun(lb, token, extract.job_id, undefined, 90_000);
      expect(failed).toMatchObject({ state: 'failed', error: EXTRACT_MSG.lost });
      const run = await waitRun(lb, token, mailing.id, run_id, 90_000);
      console.log(
        `cluster: after the worker's death the extract run ended in ${Date.parse(failed.finished_at!) - diedAt} ms, ` +
          `the mailing run in ${Date.parse(run.finished_at!) - diedAt} ms`,
      );
      expect(Date.parse(failed.finished_at!) - diedAt).toBeLessThan(60_000);
      expect(Date.parse(run.finished_at!) - diedAt).toBeLessThan(60_000);
      expect(run).toMatchObject({
        state: 'failed',
        letters_sent: 4,
        letters_failed: 1,
        error: MAILING_MSG.unconfirmed(1, ['k3@example.test']),
      });
      const letters = ok<LetterPage>(
        await lb.get(`/api/mailings/${mailing.id}/runs/${run_id}/letters?size=100`, token),
      ).content;
      expect(letters.map((l) => [l.recipient, l.status])).toEqual([
        ['k1@example.test', 'sent'],
        ['k2@example.test', 'sent'],
        ['k3@example.test', 'unconfirmed'],
        ['k4@example.test', 'sent'],
        ['k5@example.test', 'sent'],
      ]);
      // Every address got exactly one letter: the one in flight was not sent again.
      expect(
        orders.inbox.letters
          .flatMap(toOf)
          .filter((to) => to?.startsWith('k'))
          .sort(),
      ).toEqual(emails);
      // The extract starts again on the new worker and succeeds.
      const again = await runExtract(lb, token, datasetId, {}, 'succeeded', 60_000);
      expect(again.rows_loaded).toBe(50);
    } finally {
      await lock.query('ROLLBACK').catch(() => undefined);
      await lock.end();
      await source.query(`DROP TABLE IF EXISTS ${table}`);
      await source.end();
    }
  }, 240_000);

  it('an api node stopped with SIGTERM under load loses no request through haproxy', async () => {
    const token = w.cast.tokens.wsAdmin!;
    let stop = false;
    const failures: string[] = [];
    let done = 0;
    const loop = async () => {
      while (!stop) {
        try {
          const res = await fetch(`${cluster.url}/api/widget/${w.widgets.kpi}/data`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: '{}',
          });
          await res.arrayBuffer();
          if (res.status !== 200) failures.push(String(res.status));
        } catch (e) {
          const err = e as Error & { cause?: { code?: string; message?: string } };
          failures.push(`${err.message}: ${err.cause?.code ?? err.cause?.message ?? ''}`);
        }
        done++;
      }
    };
    const loops = Array.from({ length: 8 }, loop);
    await new Promise((r) => setTimeout(r, 1_000));
    const output = cluster.node('api2').server.output;
    const code = await cluster.stopNode('api2', 'SIGTERM');
    await new Promise((r) => setTimeout(r, 1_500));
    stop = true;
    await Promise.all(loops);
    console.log(`cluster: ${done} requests through haproxy while api2 drained; failed: ${failures.length}`);
    expect(code, output()).toBe(0);
    expect(failures).toEqual([]);
  });
});
