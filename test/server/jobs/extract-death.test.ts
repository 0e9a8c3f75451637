import crypto from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type pg from 'pg';
import { MSG } from '../../../server/etl/messages';
import { runById } from '../../../server/etl/store';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import { createObjectDataset, materialise, runExtract, waitForRun, type RunView } from '../../routers/etl/world';
import { createPgSource, sourceDb } from '../../routers/widgets/world';
import { nodeCall, startNodeProcess, type NodeProcess } from './node-process';

/*
 * An extract run whose node dies is failed by a live worker within a minute and can be started again: a node
 * process starts the run and reads the source (the table is locked, so the read waits), and is killed with SIGKILL.
 * The test's own app, a worker on the same database whose jobs already run, sweeps the run once its heartbeat is
 * stale and fails it with the "lost" message; the next run of the dataset succeeds.
 */

const key = crypto.randomBytes(32).toString('base64');
const { t, api } = useTestApp({ SECRETS_KEY: key });
let cast: RoleCast;
let db: pg.Client;
const table = uniq('x_death');
let datasetId: number;
let node: NodeProcess | undefined;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  await db.query(`CREATE TABLE ${table} AS SELECT g AS id, g * 2 AS x FROM generate_series(1, 100) g`);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = await createObjectDataset(api, cast.tokens.wsAdmin!, {
    name: uniq('death'),
    workspaceId: cast.workspaceId,
    sourceId: source,
    object: { name: 'd', schema: 'public', table },
    columns: [
      ['id', 'integer'],
      ['x', 'integer'],
    ],
  });
  await materialise(api, cast.tokens.wsAdmin!, datasetId);
}, 60_000);
afterAll(async () => {
  await node?.kill();
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.end();
});

it('a node killed mid-extract: a live worker fails the run within a minute, and it can be started again', async () => {
  node = await startNodeProcess({ DATABASE_URL: t.databaseUrl, SECRETS_KEY: key });
  const token = cast.tokens.wsAdmin!;
  const lock = await sourceDb();
  let locked = true;
  try {
    await lock.query('BEGIN');
    await lock.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const started = await nodeCall<RunView>(node, 'POST', `/api/datasets/${datasetId}/extracts`, token, {});
    await waitForRun(api, token, started.job_id, (r) => r.state === 'running', 30_000);
    // The peer's jobs run before the node dies (its sweep, every 15 s, is what finds the run).
    await t.deps.jobs.start();
    await node.kill();
    const diedAt = Date.now();
    await lock.query('ROLLBACK');
    locked = false;
    const failed = await waitForRun(api, token, started.job_id, undefined, 90_000);
    expect(failed).toMatchObject({ state: 'failed', error: MSG.lost });
    expect((await runById(t.deps.db, started.job_id))!.finishedAt!.getTime() - diedAt).toBeLessThan(60_000);
    const again = await runExtract(api, token, datasetId, {}, 'succeeded', 60_000);
    expect(again.rows_loaded).toBe(100);
    expect(ok<RunView>(await api.get(`/api/etl-jobs/${started.job_id}`, token)).state).toBe('failed');
  } finally {
    if (locked) await lock.query('ROLLBACK').catch(() => undefined);
    await lock.end();
  }
}, 180_000);
