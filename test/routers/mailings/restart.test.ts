import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { connectDatabase } from '../../../db/client';
import { freePort } from '../../../db/embedded';
import { buildApp } from '../../../server/app/app';
import { loadConfig } from '../../../server/app/config';
import { createAppDeps } from '../../../server/app/start';
import { loadSigningKey } from '../../../server/auth/signing-key';
import { MSG } from '../../../server/mailings/messages';
import { createSecretBox } from '../../../server/secrets/secret-box';
import { loadSystemGroupIds } from '../../../server/users/system-groups';
import { createRoleCast } from '../../support/factories';
import { ok, rest } from '../../support/rest';
import { cloneTemplateDatabase } from '../../support/test-database';
import { toOf, useOrdersInbox, waitRun, type LetterPage, createOrdersMailing, type RunView } from './world';

/*
 * A mailing run survives the death of the node sending it without sending any letter twice. The run is started on a
 * real server process (server/app/main.ts) on a database of its own; the SMTP server takes the third letter in full
 * but never answers it, and the process is killed (SIGKILL) while it waits for that answer. A second node on the same
 * database (same secrets key), whose jobs already run, picks the run up within a minute: pg-boss on it finds the dead
 * node's job without a heartbeat and runs it again. The letter the dead node left `sending' may or may not have left,
 * so it becomes `unconfirmed`, is never sent again and is named in the run's report; the letters still pending are
 * sent, the ones sent are not. The same when the node is stopped with SIGTERM (an upgrade) while a letter hangs: it
 * hands its job over on the way out, and the peer ends the run the same way.
 */

const repoRoot = path.resolve(import.meta.dirname, '../../..');
// First, so that its afterAll (closing the inbox) runs after this file's, which kills the node still talking to it.
const orders = useOrdersInbox();
let clone: { url: string; drop(): Promise<void> };
let node: ChildProcess | undefined;
const key = crypto.randomBytes(32);
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mailing-restart-'));

async function startApp() {
  const database = connectDatabase(clone.url, { max: 5 });
  const deps = createAppDeps({
    db: database.db,
    config: loadConfig({ DATA_DIR: path.join(dataDir, 'in-process') }),
    systemGroups: await loadSystemGroupIds(database.db),
    signingKey: await loadSigningKey(database.db),
    secretBox: createSecretBox(key),
  });
  const app = await buildApp(deps);
  await app.ready();
  return {
    deps,
    api: rest(app),
    async close() {
      await app.close();
      await database.close();
    },
  };
}

/** The server as a process of its own (jobs started, as in production), answering on a loopback port. */
async function startNode(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/app/main.ts'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: clone.url,
      SECRETS_KEY: key.toString('base64'),
      DATA_DIR: path.join(dataDir, 'node'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${output}`);
    if (Date.now() > until) throw new Error(`server not ready: ${output}`);
    const res = await fetch(`${url}/api/v3/api-docs`).catch(() => null);
    await res?.arrayBuffer();
    if (res?.status === 200) return { child, url };
    await new Promise((r) => setTimeout(r, 200));
  }
}

const killed = (c: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    c.once('exit', () => resolve());
    c.kill('SIGKILL');
  });

beforeAll(async () => {
  clone = await cloneTemplateDatabase(inject('databaseUrl'));
});
afterAll(async () => {
  if (node) await killed(node);
  await clone?.drop();
  await fs.rm(dataDir, { recursive: true, force: true });
});

it(
  'a node killed with a letter in flight: a live peer resumes the run within a minute, that letter unconfirmed and named, none sent twice',
  { timeout: 240_000 },
  async () => {
    // The node that prepares the data and later resumes the run; its jobs are not started until then.
    const second = await startApp();
    try {
      const cast = await createRoleCast(second.deps, second.api);
      const token = cast.tokens.wsAdmin!;
      const emails = ['r1@example.test', 'r2@example.test', 'r3@example.test', 'r4@example.test', 'r5@example.test'];
      const m = await createOrdersMailing(second.deps, second.api, {
        cast,
        inboxPort: orders.inbox.port,
        table: orders.table,
        name: 'restart',
        emails,
      });

      orders.inbox.hold.add('r3@example.test');
      const first = await startNode();
      node = first.child;
      const started = await fetch(`${first.url}/api/mailings/${m.id}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(started.status).toBe(200);
      const { run_id } = ((await started.json()) as { data: { run_id: number } }).data;
      await orders.inbox.held('r3@example.test');
      // The peer is a live worker before the first node dies: it takes the run over on its own, no start needed.
      await second.deps.jobs.start();
      await killed(first.child);
      const diedAt = Date.now();

      // What the dead node left: two letters sent, the third in flight (`sending`), two pending, the run running.
      const lettersNow = async () =>
        ok<LetterPage>(await second.api.get(`/api/mailings/${m.id}/runs/${run_id}/letters?size=100`, token)).content;
      expect((await lettersNow()).map((l) => [l.recipient, l.status, l.attempts])).toEqual([
        ['r1@example.test', 'sent', 1],
        ['r2@example.test', 'sent', 1],
        ['r3@example.test', 'sending', 1],
        ['r4@example.test', 'pending', 0],
        ['r5@example.test', 'pending', 0],
      ]);
      expect(ok<RunView>(await second.api.get(`/api/mailings/${m.id}/runs/${run_id}`, token)).state).toBe('running');
      expect(orders.inbox.letters.flatMap(toOf)).toEqual(['r1@example.test', 'r2@example.test', 'r3@example.test']);

      const run = await waitRun(second.api, token, m.id, run_id, 60_000);
      const report = MSG.unconfirmed(1, ['r3@example.test']);
      expect(run).toMatchObject({ state: 'failed', letters_sent: 4, letters_failed: 1, error: report });
      expect(Date.parse(run.finished_at!) - diedAt).toBeLessThan(60_000);
      expect((await lettersNow()).map((l) => [l.recipient, l.status, l.attempts, l.error])).toEqual([
        ['r1@example.test', 'sent', 1, null],
        ['r2@example.test', 'sent', 1, null],
        ['r3@example.test', 'unconfirmed', 1, MSG.interrupted],
        ['r4@example.test', 'sent', 1, null],
        ['r5@example.test', 'sent', 1, null],
      ]);
      // Every address got exactly one letter: the one in flight was not sent again.
      expect(orders.inbox.letters.flatMap(toOf).sort()).toEqual(emails);
      const notes = ok<{ content: { kind: string; object_id: number; message: string }[] }>(
        await second.api.get('/api/notifications', token),
      );
      expect(notes.content.filter((n) => n.kind === 'mailing_failed' && n.object_id === run_id)).toMatchObject([
        { message: report },
      ]);
    } finally {
      await second.close();
    }
  },
);

it(
  'a node stopped with SIGTERM with a letter in flight: it hands the run over, a live peer ends it, none sent twice',
  { timeout: 240_000 },
  async () => {
    const peer = await startApp();
    try {
      const cast = await createRoleCast(peer.deps, peer.api);
      const token = cast.tokens.wsAdmin!;
      const emails = ['t1@example.test', 't2@example.test', 't3@example.test'];
      const m = await createOrdersMailing(peer.deps, peer.api, {
        cast,
        inboxPort: orders.inbox.port,
        table: orders.table,
        name: 'stop',
        emails,
      });
      const before = orders.inbox.letters.length;
      orders.inbox.hold.add('t2@example.test');
      const stopping = await startNode();
      node = stopping.child;
      const started = await fetch(`${stopping.url}/api/mailings/${m.id}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(started.status).toBe(200);
      const { run_id } = ((await started.json()) as { data: { run_id: number } }).data;
      await orders.inbox.held('t2@example.test');
      await peer.deps.jobs.start();
      const exited = new Promise<number | null>((r) => stopping.child.once('exit', (code) => r(code)));
      stopping.child.kill('SIGTERM');
      const stoppedAt = Date.now();
      await exited;

      const run = await waitRun(peer.api, token, m.id, run_id, 60_000);
      expect(run).toMatchObject({
        state: 'failed',
        letters_sent: 2,
        letters_failed: 1,
        error: MSG.unconfirmed(1, ['t2@example.test']),
      });
      expect(Date.parse(run.finished_at!) - stoppedAt).toBeLessThan(60_000);
      const letters = ok<LetterPage>(
        await peer.api.get(`/api/mailings/${m.id}/runs/${run_id}/letters?size=100`, token),
      );
      expect(letters.content.map((l) => [l.recipient, l.status])).toEqual([
        ['t1@example.test', 'sent'],
        ['t2@example.test', 'unconfirmed'],
        ['t3@example.test', 'sent'],
      ]);
      expect(orders.inbox.letters.slice(before).flatMap(toOf).sort()).toEqual(emails);
    } finally {
      await peer.close();
    }
  },
);
