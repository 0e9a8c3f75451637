import crypto from 'node:crypto';
import net from 'node:net';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Dialect } from '../../../../server/query/expr';

/** A database with the fixture table `t` (see live-fixtures.ts): runs a query and returns the first row's `v`. */
export interface LiveServer {
  dialect: Dialect;
  /** What to write after FROM to read the fixture table as `t`. */
  from: string;
  value(sql: string, values: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

export function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 1000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

const ROW1 = `1, 7, 2, 0, 2.5, 2.567, -2.5, 'Привет, мир', '  ab  ', '50%_x', NULL, '2024-01-31', '2024-03-10 10:45:30', '2024-03-11 09:05:00', TRUE, NULL`;
const ROW_N2 = (id: number) =>
  `${id}, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`;
const COLUMNS = 'id, n, m, z, x, x2, neg, s, sp, p, sn, d, ts, ts2, ok, nul';

export async function postgres(): Promise<LiveServer> {
  const client = new pg.Client({
    host: process.env.TEST_PG_HOST ?? '127.0.0.1',
    port: 5432,
    user: 'postgres',
    database: 'test',
  });
  await client.connect();
  await client.query(`CREATE TEMP TABLE t (id int, n int, m int, z int, x double precision, x2 double precision,
    neg double precision, s text, sp text, p text, sn text, d date, ts timestamp, ts2 timestamp, ok boolean, nul int, u uuid)`);
  await client.query(`INSERT INTO t (${COLUMNS}, u) VALUES (${ROW1}, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
    (${ROW_N2(2)}, NULL), (${ROW_N2(3)}, NULL)`);
  return {
    dialect: 'postgresql',
    from: 't',
    async value(sql, values) {
      // Text as the server writes it, so no driver conversion (dates to local Date objects) is in the way.
      const result = await client.query({ text: sql, values, types: { getTypeParser: () => (v: string) => v } });
      return result.rows[0].v;
    },
    close: () => client.end(),
  };
}

export async function mariadb(): Promise<LiveServer> {
  const conn = await mysql.createConnection({
    host: process.env.MARIADB_HOST ?? '127.0.0.1',
    port: Number(process.env.MARIADB_PORT ?? 3306),
    user: 'root',
    database: 'test',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  await conn.query(`CREATE TEMPORARY TABLE t (id int, n int, m int, z int, x double, x2 double, neg double,
    s varchar(100), sp varchar(100), p varchar(100), sn varchar(100), d date, ts datetime, ts2 datetime, ok boolean, nul int)
    DEFAULT CHARSET = utf8mb4`);
  await conn.query(`INSERT INTO t (${COLUMNS}) VALUES (${ROW1}), (${ROW_N2(2)}), (${ROW_N2(3)})`);
  return {
    dialect: 'mysql',
    from: 't',
    async value(sql, values) {
      // A server-side prepared statement: the values really are bound.
      const [rows] = await conn.execute(sql, values as (string | number | boolean | null)[]);
      return (rows as { v: unknown }[])[0].v;
    },
    close: () => conn.end(),
  };
}

export async function duckdb(): Promise<LiveServer> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run(`CREATE TABLE t (id INTEGER, n INTEGER, m INTEGER, z INTEGER, x DOUBLE, x2 DOUBLE, neg DOUBLE, s VARCHAR,
    sp VARCHAR, p VARCHAR, sn VARCHAR, d DATE, ts TIMESTAMP, ts2 TIMESTAMP, ok BOOLEAN, nul INTEGER)`);
  await conn.run(`INSERT INTO t (${COLUMNS}) VALUES (${ROW1}), (${ROW_N2(2)}), (${ROW_N2(3)})`);
  return {
    dialect: 'duckdb',
    from: 't',
    async value(sql, values) {
      const reader = await conn.runAndReadAll(sql, values as DuckDBValue[]);
      return reader.getRowObjectsJson()[0].v;
    },
    close: async () => conn.closeSync(),
  };
}

/** ClickHouse over HTTP: the 18.16 server takes literals inline, so there are never values to send. */
export async function clickhouse(): Promise<LiveServer> {
  const url = `http://${process.env.CLICKHOUSE_HOST ?? '127.0.0.1'}:${process.env.CLICKHOUSE_HTTP_PORT ?? 8123}/`;
  const run = async (sql: string) => {
    const response = await fetch(url, { method: 'POST', body: sql });
    const text = await response.text();
    if (!response.ok) throw new Error(text);
    return text;
  };
  const table = `expr_test_${crypto.randomBytes(4).toString('hex')}`;
  const n = (type: string) => `Nullable(${type})`;
  await run(`CREATE TABLE ${table} (id Int32, n ${n('Int32')}, m ${n('Int32')}, z ${n('Int32')}, x ${n('Float64')},
    x2 ${n('Float64')}, neg ${n('Float64')}, s ${n('String')}, sp ${n('String')}, p ${n('String')}, sn ${n('String')},
    d ${n('Date')}, ts ${n('DateTime')}, ts2 ${n('DateTime')}, ok ${n('UInt8')}, nul ${n('Int32')}) ENGINE = Memory`);
  await run(`INSERT INTO ${table} (${COLUMNS}) VALUES (${ROW1.replace('TRUE', '1')}), (${ROW_N2(2)}), (${ROW_N2(3)})`);
  return {
    dialect: 'clickhouse',
    from: `${table} AS t`,
    async value(sql, values) {
      if (values.length > 0) throw new Error('ClickHouse queries must not carry bound values');
      return (JSON.parse(await run(`${sql} FORMAT JSON`)) as { data: { v: unknown }[] }).data[0].v;
    },
    close: async () => void (await run(`DROP TABLE IF EXISTS ${table}`)),
  };
}
