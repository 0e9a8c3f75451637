/**
 * Mailing throughput: a mailing sliced into 1,000 letters (one slice value and one address per row of a 1,000-row
 * PostgreSQL table), each with a CSV attachment of a widget filtered to its slice, sent through REST
 * (POST /api/mailings/{id}/run, polled at GET /api/mailings/{id}/runs/{runId}) to a loopback SMTP server
 * (smtp-server, STARTTLS with the test certificate, AUTH on). Figures: letters/s of the run
 * ((finished_at - started_at) / letters_sent) and the process's peak RSS during the run (sampled every 50 ms; the run,
 * the exports and the SMTP server all live in this process) against the RSS before it.
 *
 *   npm run bench:mailing     (SOURCE_PG_URL, LETTERS to change the defaults)
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { dataSources } from '../../db/schema';
import { buildApp } from '../../server/app/app';
import { loadConfig } from '../../server/app/config';
import { startRuntime } from '../../server/app/start';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const LETTERS = Number(process.env.LETTERS ?? 1000);
const TABLE = `bench_mailing_${LETTERS}`;
const FIXTURES = path.join(import.meta.dirname, '../../test/fixtures/mail');
// The loopback server's certificate is the self-signed test one.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

async function ensureSourceTable(): Promise<void> {
  const c = new pg.Client({ connectionString: SOURCE_URL });
  await c.connect();
  try {
    await c.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await c.query(`CREATE TABLE ${TABLE} AS
      SELECT 'r' || lpad(g::text, 5, '0') AS region, 'u' || g || '@bench.test' AS email, (g * 7) % 1000 AS amount
      FROM generate_series(1, ${LETTERS}) AS g`);
  } finally {
    await c.end();
  }
}

async function metadataDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_mailing_meta_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SOURCE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(SOURCE_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: SOURCE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

async function startSmtp(): Promise<{ port: number; received: () => number; close(): Promise<void> }> {
  let received = 0;
  const server = new SMTPServer({
    key: readFileSync(path.join(FIXTURES, 'key.pem')),
    cert: readFileSync(path.join(FIXTURES, 'cert.pem')),
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth: (auth, _s, cb) => cb(null, { user: auth.username }),
    onData(stream, _s, cb) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received++;
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function call(base: URL, method: string, pathname: string, token?: string, body?: unknown): Promise<any> {
  const res = await fetch(new URL(pathname, base), {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

async function main() {
  await ensureSourceTable();
  const smtp = await startSmtp();
  const meta = await metadataDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-mailing-'));
  const password = 'Bench-admin-2026';
  const runtime = await startRuntime(
    loadConfig({ DATA_DIR: dataDir, ADMIN_PASSWORD: password, DATABASE_URL: meta.url, LOG_LEVEL: 'silent' }),
  );
  const { deps } = runtime;
  const app = await buildApp(deps);
  const base = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  try {
    const token = (await call(base, 'POST', '/api/auth/login', undefined, { username: 'admin', password }))
      .token as string;
    const me = await call(base, 'GET', '/api/users/me', token);
    const ws = me.personal_workspace_id as number;
    const u = new URL(SOURCE_URL);
    const [source] = await deps.db
      .insert(dataSources)
      .values({
        name: 'bench source',
        type: 'postgresql',
        workspaceId: ws,
        settings: {
          host: u.hostname,
          port: Number(u.port || 5432),
          username: decodeURIComponent(u.username),
          db: u.pathname.slice(1),
        },
      })
      .returning();
    const { id: datasetId } = await call(base, 'POST', '/api/dataset', token, {
      name: 'bench',
      workspace_id: ws,
      live: true,
      data_source_ids: [source.id],
    });
    const field = (id: number, name: string, primitive_type: string) => ({
      id,
      object_id: -1,
      name,
      column: name,
      primitive_type,
    });
    await call(base, 'PUT', `/api/dataset/${datasetId}/schema`, token, {
      objects: [{ id: -1, data_source_id: source.id, name: 'orders', schema: 'public', table: TABLE }],
      fields: [field(-2, 'region', 'string'), field(-3, 'email', 'string'), field(-4, 'amount', 'integer')],
      relations: [],
      hierarchies: [],
      filters: [],
      parameters: [],
    });
    const ds = await call(base, 'GET', `/api/dataset/${datasetId}`, token);
    const fieldId = (name: string) => (ds.fields as { id: number; name: string }[]).find((f) => f.name === name)!.id;
    const widget = await call(base, 'POST', '/api/widget', token, {
      name: 'bench widget',
      dataset_id: datasetId,
      type: 'table',
      rows: [{ id: 'r', sql: '[orders.region]' }],
      columns: [{ id: 's', sql: 'SUM([orders.amount])' }],
    });
    const channel = await call(base, 'POST', '/api/mail-channels', token, {
      name: 'bench smtp',
      host: '127.0.0.1',
      port: smtp.port,
      security: 'starttls',
      username: 'bench',
      password: 'bench',
      from_address: 'bench@bench.test',
    });
    const mailing = await call(base, 'POST', '/api/mailings', token, {
      name: 'bench mailing',
      workspace_id: ws,
      widget_ids: [widget.id],
      format: 'csv',
      channel_id: channel.id,
      subject: 'Отчёт {{slice}}',
      slice: { dataset_id: datasetId, field_id: fieldId('region'), recipient_field_id: fieldId('email') },
    });

    await deps.jobs.start();
    if (global.gc) global.gc();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const { run_id } = await call(base, 'POST', `/api/mailings/${mailing.id}/run`, token, {});
    let run = await call(base, 'GET', `/api/mailings/${mailing.id}/runs/${run_id}`, token);
    while (run.state === 'queued' || run.state === 'running') {
      await new Promise((r) => setTimeout(r, 250));
      run = await call(base, 'GET', `/api/mailings/${mailing.id}/runs/${run_id}`, token);
    }
    clearInterval(sampler);
    const seconds = (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
    console.log(
      `run ${run.state}: ${run.letters_sent} sent, ${run.letters_failed} failed, ${smtp.received()} received`,
    );
    console.log(`time ${seconds.toFixed(1)} s, ${(run.letters_sent / seconds).toFixed(1)} letters/s`);
    console.log(`RSS before ${mb(rssBefore)}, peak ${mb(peak)} (+${mb(peak - rssBefore)})`);
  } finally {
    await app.close();
    await runtime.close();
    await smtp.close();
    await meta.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
