import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import type { DatasetDetails } from '../datasets/helpers';
import { createPgSource, sourceDb, type FlatData, type WidgetView } from '../widgets/world';
import { materialise, runExtract } from './world';

/*
 * Enough rows that the PostgreSQL COPY stream arrives in many chunks and waits on backpressure: every row and value
 * arrives intact (aggregates over all columns equal live), text with quotes, commas and line breaks included.
 */

const ROWS = 300_000;
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
const table = uniq('x_volume');
const owner = () => cast.tokens.wsAdmin!;

async function datasetOn(source: number, live: boolean): Promise<number> {
  const id = ok<DatasetDetails>(
    await api.post(
      '/api/dataset',
      { name: uniq('v'), workspace_id: cast.workspaceId, live: true, data_source_ids: [source] },
      owner(),
    ),
  ).id;
  const f = (fid: number, column: string, primitive_type: string) => ({
    id: fid,
    object_id: -1,
    name: column,
    column,
    primitive_type,
  });
  ok(
    await api.put(
      `/api/dataset/${id}/schema`,
      {
        objects: [{ id: -1, data_source_id: source, name: 'v', schema: 'public', table }],
        fields: [f(-2, 'id', 'integer'), f(-3, 'label', 'string'), f(-4, 'x', 'float'), f(-5, 'at', 'datetime')],
        relations: [],
        hierarchies: [],
        filters: [],
        parameters: [],
      },
      owner(),
    ),
  );
  if (!live) await materialise(api, owner(), id);
  return id;
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  await db.query(`CREATE TABLE ${table} AS
    SELECT g AS id,
           CASE g % 4 WHEN 0 THEN 'a,"b"' || g WHEN 1 THEN E'line\\nbreak ' || g WHEN 2 THEN '' ELSE NULL END AS label,
           (g % 1000) / 8.0 AS x,
           TIMESTAMPTZ '2024-01-01 00:00:00+03' + make_interval(secs => g) AS at
    FROM generate_series(1, ${ROWS}) g`);
});
afterAll(async () => {
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.end();
});

describe('a large PostgreSQL pull', () => {
  it('loads every row and value intact', async () => {
    const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
    const [liveId, matId] = [await datasetOn(source, true), await datasetOn(source, false)];
    const run = await runExtract(api, owner(), matId);
    expect(run.rows_loaded).toBe(ROWS);
    const config = {
      type: 'table',
      rows: [],
      columns: [
        { id: 'n', sql: 'COUNT([v.id])' },
        { id: 's', sql: 'SUM([v.id])' },
        { id: 'l', sql: 'SUM(LEN([v.label]))' },
        { id: 'nl', sql: 'COUNT([v.label])' },
        { id: 'x', sql: 'SUM([v.x])' },
        { id: 'mx', sql: 'MAX([v.at])' },
        { id: 'mn', sql: 'MIN([v.at])' },
      ],
    };
    const answers = [];
    for (const id of [liveId, matId]) {
      const w = ok<WidgetView>(await api.post('/api/widget', { name: 'w', dataset_id: id, ...config }, owner())).id;
      answers.push(ok<FlatData>(await api.post(`/api/widget/${w}/data`, {}, owner())).rows);
    }
    expect(answers[0][0]).toMatchObject({ n: ROWS, s: (ROWS * (ROWS + 1)) / 2, mn: '2023-12-31T21:00:01' });
    expect(answers[1]).toEqual(answers[0]);
  });
});
