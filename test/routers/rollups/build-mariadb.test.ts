import { afterAll, beforeAll, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { dataSources } from '../../../db/schema/data-sources';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import { mysqlSettings } from '../../adapters/sources/servers';
import type { DatasetDetails } from '../datasets/helpers';
import { createObjectDataset } from '../etl/world';
import { buildRollup, rollupRows, sortRows, type RollupView } from './world';

/*
 * A live dataset on a real MariaDB source: its rollup is one GROUP BY run at MariaDB (weeks start on Monday, quarters
 * and datetimes truncated as the query compiler truncates them), and its rows are those of the same GROUP BY run
 * directly, NULLs kept as their own group.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let conn: mysql.Connection;
const table = uniq('r_orders');
let datasetId: number;
const owner = () => cast.tokens.wsAdmin!;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  const s = mysqlSettings();
  conn = await mysql.createConnection({ host: s.host, port: s.port, user: s.username, database: 'test' });
  await conn.query(
    `CREATE TABLE ${table} (id int, city varchar(100), amount decimal(12,2), placed date, at datetime) DEFAULT CHARSET = utf8mb4`,
  );
  const cities = ['Москва', 'Казань', 'a,b "c"', null];
  const rows = Array.from({ length: 250 }, (_, i) => [
    i + 1,
    cities[i % cities.length],
    i % 13 === 0 ? null : ((i * 37) % 1000) / 100 + 0.05,
    i % 17 === 0 ? null : `2024-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 27) + 1).padStart(2, '0')}`,
    `2024-0${(i % 9) + 1}-1${i % 9} 1${i % 10}:0${i % 6}:00`,
  ]);
  await conn.query(`INSERT INTO ${table} VALUES ?`, [rows]);
  const [row] = await t.deps.db
    .insert(dataSources)
    .values({
      name: uniq('maria'),
      type: 'mysql',
      workspaceId: cast.workspaceId,
      authorId: cast.users.wsAdmin.id,
      settings: { host: s.host, port: s.port, username: s.username, db: 'test' },
    })
    .returning({ id: dataSources.id });
  datasetId = await createObjectDataset(api, owner(), {
    name: uniq('m'),
    workspaceId: cast.workspaceId,
    sourceId: row.id,
    object: { name: 'orders', schema: 'test', table },
    columns: [
      ['id', 'integer'],
      ['city', 'string'],
      ['amount', 'float'],
      ['placed', 'date'],
      ['at', 'datetime'],
    ],
  });
});
afterAll(async () => {
  await conn.query(`DROP TABLE IF EXISTS ${table}`);
  await conn.end();
});

it('builds a rollup whose rows are the same GROUP BY run at MariaDB directly', async () => {
  const details = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner()));
  const f = (name: string) => details.fields.find((x) => x.name === name)!.id;
  const rollup = ok<RollupView>(
    await api.post(
      `/api/dataset/${datasetId}/rollups`,
      {
        name: 'по неделям',
        dimensions: [
          { field_id: f('city') },
          { field_id: f('placed'), granularity: 'week' },
          { field_id: f('at'), granularity: 'quarter' },
        ],
        measures: [
          { field_id: f('amount'), aggregation: 'SUM' },
          { field_id: f('id'), aggregation: 'COUNT' },
          { field_id: f('at'), aggregation: 'MAX' },
        ],
        refresh: { mode: 'schedule', cron: '*/30 * * * *', timezone: 'Asia/Yekaterinburg' },
      },
      owner(),
    ),
  );
  const build = await buildRollup(api, owner(), datasetId, rollup.id);
  const [rows] = await conn.query(
    `SELECT city,
            DATE_FORMAT(DATE_SUB(placed, INTERVAL WEEKDAY(placed) DAY), '%Y-%m-%d') AS w,
            DATE_FORMAT(MAKEDATE(YEAR(at), 1) + INTERVAL (QUARTER(at) - 1) QUARTER, '%Y-%m-%dT%H:%i:%s') AS q,
            SUM(amount) AS s, COUNT(id) AS n, DATE_FORMAT(MAX(at), '%Y-%m-%dT%H:%i:%s') AS mx, COUNT(*) AS all_rows
       FROM ${table} GROUP BY 1, 2, 3`,
  );
  const num = (v: unknown) => (v === null ? null : Number(v));
  const expected = sortRows(
    (rows as Record<string, unknown>[]).map((r) => [r.city, r.w, r.q, num(r.s), num(r.n), r.mx, num(r.all_rows)]),
  );
  expect(build.rows).toBe(expected.length);
  expect(await rollupRows(t.deps, datasetId, rollup.id)).toEqual(expected);
});
