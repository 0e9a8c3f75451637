import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../../db/client';
import { freePort } from '../../../db/embedded';
import { buildApp } from '../../../server/app/app';
import { Readiness } from '../../../server/app/health';
import { createAppDeps } from '../../../server/app/start';
import { createTestApp, useTestApp, type TestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { s3StorageUrl } from '../../support/object-store';
import { createWorkspaceObjects, type WorkspaceObjects } from '../../support/workspace-objects';

/** GET /healthz, /readyz and /metrics (server/app/health.ts, metrics.ts), and what a worker node serves. */

interface ErrorBody {
  success: false;
  error: { code: number; message: string; errors?: Record<string, string> };
}

const { t, api } = useTestApp();
let cast: RoleCast;
let w: WorkspaceObjects;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  w = await createWorkspaceObjects(api, cast.tokens.editor!, cast.workspaceId);
});
afterAll(async () => {
  await w?.dispose();
});

const get = (app: TestApp['app'], url: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
  app.inject({ method: 'GET', url, headers, remoteAddress });

/**
 * An app of its own on the test app's database, built as main.ts builds one (no document check on its answers: a
 * worker serves no document). Its own deps, so closing it leaves the test app's jobs and pools alone.
 */
async function ownApp(
  config: Partial<TestApp['deps']['config']> = {},
  readiness?: (deps: TestApp['deps']) => Readiness,
) {
  const { db, systemGroups, signingKey, secretBox } = t.deps;
  const deps = createAppDeps({ db, systemGroups, signingKey, secretBox, config: { ...t.deps.config, ...config } });
  const ready = readiness?.(deps);
  return { app: await buildApp(deps, { readiness: ready }), readiness: ready };
}

/** A counter's or histogram line's value in Prometheus text: the sum over the lines that start with `prefix`. */
function metric(text: string, prefix: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('GET /healthz and /readyz', () => {
  it('answers 200 while the database, its migrations and the storage are there', async () => {
    const live = await get(t.app, '/healthz');
    expect(live.statusCode).toBe(200);
    expect(live.json<{ status: string }>()).toEqual({ status: 'ok' });
    const ready = await get(t.app, '/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json<{ status: string }>()).toEqual({ status: 'ok' });
    expect(ready.headers['cache-control']).toBe('no-store');
  });

  it('answers 503 naming the storage when it cannot be reached', async () => {
    const broken = await createTestApp({ STORAGE_URL: s3StorageUrl().replace(/^s3:\/\/[^/]+/, 's3://no-such-bucket') });
    try {
      const res = await get(broken.app, '/readyz');
      expect(res.statusCode).toBe(503);
      const body = res.json<ErrorBody>();
      expect(body.error.message).toBe('Узел не готов принимать запросы');
      expect(body.error.errors).toEqual({ storage: 'Хранилище файлов недоступно' });
      // Alive all the same: a store outage must not get the node restarted.
      expect((await get(broken.app, '/healthz')).statusCode).toBe(200);
    } finally {
      await broken.close();
    }
  });

  it('answers 503 naming the database when it does not answer', async () => {
    const nowhere = connectDatabase(`postgres://nobody:nothing@127.0.0.1:${await freePort()}/none`, { max: 1 });
    const { systemGroups, signingKey, secretBox, config } = t.deps;
    const deps = createAppDeps({ db: nowhere.db, systemGroups, signingKey, secretBox, config });
    const app = await buildApp(deps);
    try {
      const res = await get(app, '/readyz');
      expect(res.statusCode).toBe(503);
      expect(res.json<ErrorBody>().error.errors).toEqual({ database: 'База метаданных не отвечает' });
      expect((await get(app, '/healthz')).statusCode).toBe(200);
    } finally {
      await app.close();
      await nowhere.close();
    }
  });

  it('answers 503 naming the migrations when the database lacks one of this build', async () => {
    const behind = await createTestApp();
    try {
      expect((await get(behind.app, '/readyz')).statusCode).toBe(200);
      await behind.deps.db.execute(
        sql`delete from drizzle.__drizzle_migrations where created_at = (select max(created_at) from drizzle.__drizzle_migrations)`,
      );
      // A passed check answers the probes of the next second (a busy node is not taken out by a slow probe)...
      expect((await get(behind.app, '/readyz')).statusCode).toBe(200);
      // ...then the node asks again.
      await new Promise((r) => setTimeout(r, 1_100));
      const res = await get(behind.app, '/readyz');
      expect(res.statusCode).toBe(503);
      expect(res.json<ErrorBody>().error.errors).toEqual({
        migrations: 'Миграции базы метаданных не применены для этой версии',
      });
    } finally {
      await behind.close();
    }
  });

  it('answers 503 from the moment the node drains, and every answer then closes its connection', async () => {
    const { app, readiness } = await ownApp({}, (deps) => new Readiness(deps));
    try {
      expect((await get(app, '/readyz')).statusCode).toBe(200);
      expect((await get(app, '/healthz')).headers.connection).not.toBe('close');
      readiness!.drain();
      const res = await get(app, '/readyz');
      expect(res.statusCode).toBe(503);
      expect(res.json<ErrorBody>().error.errors).toEqual({
        draining: 'Узел останавливается: новые запросы принимают другие узлы',
      });
      expect(res.headers.connection).toBe('close');
      // Still serving what comes while the balancer takes it out.
      const me = await app.inject({
        method: 'GET',
        url: '/api/users/me',
        headers: { authorization: `Bearer ${cast.tokens.viewer}` },
      });
      expect(me.statusCode).toBe(200);
      expect(me.headers.connection).toBe('close');
    } finally {
      await app.close();
    }
  });

  it('are not in the OpenAPI document', async () => {
    const doc = (await get(t.app, '/api/v3/api-docs')).json<{ paths: Record<string, unknown> }>();
    for (const p of ['/healthz', '/readyz', '/metrics']) expect(doc.paths[p]).toBeUndefined();
  });
});

describe('GET /metrics', () => {
  it('gives Prometheus text to a caller on this machine: request durations by route pattern, never the raw URL', async () => {
    await get(t.app, `/api/users/${cast.users.viewer.id}`, { authorization: `Bearer ${cast.tokens.sysadmin}` });
    const res = await get(t.app, '/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(text).toContain('# TYPE analytics_http_request_duration_seconds histogram');
    expect(text).toMatch(
      /analytics_http_request_duration_seconds_bucket\{route="\/api\/users\/:id",method="GET",status_class="2xx",le="\+Inf"\} \d+/,
    );
    expect(text).not.toContain(`/api/users/${cast.users.viewer.id}"`);
    // The process's own metrics, the metadata pool and the source connection budget.
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).toMatch(/analytics_db_pool_connections\{state="max"\} 5/);
    expect(text).toMatch(/analytics_source_connections\{state="limit"\} 50/);
  });

  it('counts source queries by kind and result-cache hits and misses', async () => {
    const before = (await get(t.app, '/metrics')).body;
    for (let i = 0; i < 3; i++) {
      const res = await api.post(`/api/widget/${w.widgetId}/data`, {}, cast.tokens.editor);
      expect(res.status).toBe(200);
    }
    const after = (await get(t.app, '/metrics')).body;
    const delta = (prefix: string) => metric(after, prefix) - metric(before, prefix);
    expect(delta('analytics_source_query_duration_seconds_count{kind="postgresql"}')).toBe(1);
    expect(delta('analytics_result_cache_misses_total')).toBe(1);
    expect(delta('analytics_result_cache_hits_total{level="local"}')).toBe(2);
    expect(after).toMatch(/analytics_result_cache_entries [1-9]/);
  });

  it('refuses a caller that came through a proxy or from another machine, saying how to allow it', async () => {
    const proxied = await get(t.app, '/metrics', { 'x-forwarded-for': '203.0.113.9' });
    expect(proxied.statusCode).toBe(403);
    expect(proxied.json<ErrorBody>().error.message).toBe(
      'Метрики отдаются только с этого же сервера; для сбора по сети задайте METRICS_TOKEN',
    );
    expect((await get(t.app, '/metrics', {}, '10.1.2.3')).statusCode).toBe(403);
  });

  it('with METRICS_TOKEN asks every caller for it', async () => {
    const token = 'scrape-token-0123456789';
    const app = await createTestApp({ METRICS_TOKEN: token });
    try {
      expect((await get(app.app, '/metrics')).statusCode).toBe(401);
      expect((await get(app.app, '/metrics', { authorization: 'Bearer wrong-token-0123456789' })).statusCode).toBe(401);
      const res = await get(app.app, '/metrics', { authorization: `Bearer ${token}` }, '10.1.2.3');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('analytics_http_request_duration_seconds');
    } finally {
      await app.close();
    }
  });
});

describe('NODE_ROLE=worker', () => {
  it('serves its health, metrics and render pages; every other path is not found', async () => {
    const worker = await ownApp({ nodeRole: 'worker' });
    try {
      expect((await get(worker.app, '/healthz')).statusCode).toBe(200);
      expect((await get(worker.app, '/readyz')).statusCode).toBe(200);
      expect((await get(worker.app, '/metrics')).statusCode).toBe(200);
      // The render routes are there (no render token: 401, from the route itself).
      expect((await get(worker.app, '/api/render/context')).statusCode).toBe(401);
      const other = await get(worker.app, '/api/users/me', { authorization: `Bearer ${cast.tokens.viewer}` });
      expect(other.statusCode).toBe(404);
      expect(other.json<ErrorBody>().error.message).toBe('Путь не найден: GET /api/users/me');
      expect((await worker.app.inject({ method: 'POST', url: '/api/auth/login', payload: {} })).statusCode).toBe(404);
      expect((await get(worker.app, '/trpc/users.me')).statusCode).toBe(404);
    } finally {
      await worker.app.close();
    }
  });
});
