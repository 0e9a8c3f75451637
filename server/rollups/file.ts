import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import type { PrimitiveType } from '../../adapters/sources';
import type { DatasetModel } from '../query/compile/dataset-model';
import { quoteIdentifier } from '../query/expr';
import type { RollupDefinition } from './types';
import { ROLLUP_TABLE } from './types';

/*
 * The DuckDB file of one build: the grouped rows streamed from the dataset's target into a CSV beside it, then
 * loaded into the table `rollup` with the column types of server/rollups/types.ts (dimensions d0.. typed like their
 * fields, DATE/TIMESTAMP for truncated dates; measure columns m<i>_<part>).
 */

const TYPES: Record<PrimitiveType, string> = {
  integer: 'BIGINT',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  datetime: 'TIMESTAMP',
  string: 'VARCHAR',
  unknown: 'VARCHAR',
};

export interface RollupColumn {
  name: string;
  type: string;
}

/** The table's columns in the order the build query answers them. */
export function rollupColumns(model: DatasetModel, def: RollupDefinition): RollupColumn[] {
  const typeOf = (id: number) => model.fields.find((f) => f.id === id)?.primitiveType ?? 'unknown';
  const cols: RollupColumn[] = def.dimensions.map((d) => ({ name: d.column, type: TYPES[typeOf(d.fieldId)] }));
  for (const m of def.measures) {
    const t = typeOf(m.fieldId);
    if (m.columns.sum) cols.push({ name: m.columns.sum, type: t === 'integer' ? 'HUGEINT' : 'DOUBLE' });
    if (m.columns.count) cols.push({ name: m.columns.count, type: 'BIGINT' });
    if (m.columns.min) cols.push({ name: m.columns.min, type: TYPES[t] });
    if (m.columns.max) cols.push({ name: m.columns.max, type: TYPES[t] });
  }
  return cols;
}

function csvField(type: string, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (type === 'VARCHAR') {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return `"${s.replaceAll('"', '""')}"`;
  }
  // A truncated date from a source that answers a timestamp for it ('2024-01-01T00:00:00'): the day is kept.
  if (type === 'DATE') return String(v).slice(0, 10);
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * Writes the rows into a new DuckDB file at `file` (removed on failure): rows and the file's size in bytes.
 */
export async function writeRollupFile(
  file: string,
  columns: RollupColumn[],
  rows: AsyncIterable<unknown[]>,
  signal: AbortSignal,
): Promise<{ rows: number; bytes: number }> {
  await mkdir(path.dirname(file), { recursive: true });
  const csv = `${file}.csv`;
  await rm(file, { force: true });
  let count = 0;
  try {
    const out = createWriteStream(csv);
    try {
      for await (const row of rows) {
        signal.throwIfAborted();
        const line = columns.map((c, i) => csvField(c.type, row[i])).join(',') + '\n';
        if (!out.write(line)) await once(out, 'drain');
        count++;
      }
    } finally {
      out.end();
      await once(out, 'close');
    }
    signal.throwIfAborted();
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(file, { threads: '2', memory_limit: '128MB' });
    const conn = await instance.connect();
    try {
      const q = (s: string) => quoteIdentifier('duckdb', s);
      await conn.run(`CREATE TABLE ${q(ROLLUP_TABLE)} (${columns.map((c) => `${q(c.name)} ${c.type}`).join(', ')})`);
      if (count > 0) {
        const lit = csv.replaceAll("'", "''");
        await conn.run(
          `COPY ${q(ROLLUP_TABLE)} FROM '${lit}' (FORMAT csv, HEADER false, DELIMITER ',', QUOTE '"', ESCAPE '"', NULLSTR '', ALLOW_QUOTED_NULLS false)`,
        );
      }
      await conn.run('CHECKPOINT');
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
    const { size } = await stat(file);
    return { rows: count, bytes: size };
  } catch (e) {
    await rm(file, { force: true });
    throw e;
  } finally {
    await rm(csv, { force: true });
    await rm(`${file}.wal`, { force: true });
  }
}
