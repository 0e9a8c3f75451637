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
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { benchPlatform, call, pgSourceRow, tableDataset } from './support';

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

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

async function main() {
  await ensureSourceTable();
  const smtp = await startSmtp();
  const bench = await benchPlatform({ name: 'mailing', server: SOURCE_URL, alwaysThrowaway: true });
  const { deps, base, token, workspaceId: ws } = bench;
  try {
    const source = await pgSourceRow(bench, SOURCE_URL);
    const { id: datasetId, fields } = await tableDataset(bench, {
      name: 'bench',
      sourceId: source.id,
      object: 'orders',
      table: TABLE,
      fields: [
        ['region', 'string'],
        ['email', 'string'],
        ['amount', 'integer'],
      ],
    });
    const fieldId = (name: string) => fields.find((f) => f.name === name)!.id;
    const widget = await call(
      base,
      'POST',
      '/api/widget',
      {
        name: 'bench widget',
        dataset_id: datasetId,
        type: 'table',
        rows: [{ id: 'r', sql: '[orders.region]' }],
        columns: [{ id: 's', sql: 'SUM([orders.amount])' }],
      },
      token,
    );
    const channel = await call(
      base,
      'POST',
      '/api/mail-channels',
      {
        name: 'bench smtp',
        host: '127.0.0.1',
        port: smtp.port,
        security: 'starttls',
        username: 'bench',
        password: 'bench',
        from_address: 'bench@bench.test',
      },
      token,
    );
    const mailing = await call(
      base,
      'POST',
      '/api/mailings',
      {
        name: 'bench mailing',
        workspace_id: ws,
        widget_ids: [widget.id],
        format: 'csv',
        channel_id: channel.id,
        subject: 'Отчёт {{slice}}',
        slice: { dataset_id: datasetId, field_id: fieldId('region'), recipient_field_id: fieldId('email') },
      },
      token,
    );

    await deps.jobs.start();
    if (global.gc) global.gc();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const { run_id } = await call(base, 'POST', `/api/mailings/${mailing.id}/run`, {}, token);
    let run = await call(base, 'GET', `/api/mailings/${mailing.id}/runs/${run_id}`, undefined, token);
    while (run.state === 'queued' || run.state === 'running') {
      await new Promise((r) => setTimeout(r, 250));
      run = await call(base, 'GET', `/api/mailings/${mailing.id}/runs/${run_id}`, undefined, token);
    }
    clearInterval(sampler);
    const seconds = (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
    console.log(
      `run ${run.state}: ${run.letters_sent} sent, ${run.letters_failed} failed, ${smtp.received()} received`,
    );
    console.log(`time ${seconds.toFixed(1)} s, ${(run.letters_sent / seconds).toFixed(1)} letters/s`);
    console.log(`RSS before ${mb(rssBefore)}, peak ${mb(peak)} (+${mb(peak - rssBefore)})`);
  } finally {
    await bench.close();
    await smtp.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
