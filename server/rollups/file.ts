import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import type { PrimitiveType, ResultColumn } from '../../adapters/sources';
import type { DatasetModel } from '../query/compile/dataset-model';
import { quoteIdentifier, type Dialect } from '../query/expr';
import type { RollupDefinition, RollupDimension } from './types';
import { ROLLUP_TABLE, ROWS_COLUMN, isTextType, ordersTextAsBytes, rankColumn } from './types';

/*
 * The DuckDB file of one build: the grouped rows streamed from the dataset's target into a CSV beside it, then
 * loaded into the table `rollup` with the column types of server/rollups/types.ts (dimensions d0.. typed like their
 * fields, DATE/TIMESTAMP for truncated dates, the rank d<i>_rank of a text one; measure columns m<i>_<part>; the
 * group's row count n).
 *
 * Fractional numbers: the sources answer a DECIMAL column's sums exactly and the connectors give them as numbers
 * whose shortest text is that decimal. When every value of a column is such plain text, the column is
 * DECIMAL(38, most fraction digits seen) and DuckDB re-adds the partial sums exactly, as the source adds the rows;
 * anything else (an exponent, NaN, more digits than DECIMAL holds) keeps it DOUBLE.
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
  /** The build query's column for it, when known: a DOUBLE column is DECIMAL only when the source's is. */
  source?: ResultColumn;
}

const typeIn = (model: DatasetModel, id: number): PrimitiveType =>
  model.fields.find((f) => f.id === id)?.primitiveType ?? 'unknown';

/** The dimensions ranked in the source's order (types.ts rankColumn): the text ones, unless it orders bytes. */
export function rankedDimensions(model: DatasetModel, def: RollupDefinition, source: Dialect): RollupDimension[] {
  if (ordersTextAsBytes(source)) return [];
  return def.dimensions.filter((d) => !d.granularity && isTextType(typeIn(model, d.fieldId)));
}

/** The table's columns: dimensions, their ranks, measure columns, the row count; `source` runs the build. */
export function rollupColumns(model: DatasetModel, def: RollupDefinition, source: Dialect): RollupColumn[] {
  const typeOf = (id: number) => typeIn(model, id);
  const cols: RollupColumn[] = def.dimensions.map((d) => ({ name: d.column, type: TYPES[typeOf(d.fieldId)] }));
  for (const d of rankedDimensions(model, def, source)) cols.push({ name: rankColumn(d), type: 'BIGINT' });
  for (const m of def.measures) {
    const t = typeOf(m.fieldId);
    if (m.columns.sum) cols.push({ name: m.columns.sum, type: t === 'integer' ? 'HUGEINT' : 'DOUBLE' });
    if (m.columns.count) cols.push({ name: m.columns.count, type: 'BIGINT' });
    if (m.columns.min) cols.push({ name: m.columns.min, type: TYPES[t] });
    if (m.columns.max) cols.push({ name: m.columns.max, type: TYPES[t] });
  }
  cols.push({ name: ROWS_COLUMN, type: 'BIGINT' });
  return cols;
}

/** The widest DECIMAL DuckDB keeps (HUGEINT), and the most fraction digits we let a column have. */
const DECIMAL_WIDTH = 38;
const MAX_SCALE = 18;
const PLAIN_DECIMAL = /^-?(\d+)(?:\.(\d+))?$/;

/** Watches a DOUBLE column's values: DECIMAL(38, scale) when every one is plain decimal text that fits. */
class DecimalWatch {
  private plain = true;
  private digits = 0;

  /** `scale`: the fraction digits the source declares (its sums print them all, the connectors drop zeros). */
  constructor(private scale = 0) {}

  see(text: string): void {
    if (!this.plain) return;
    const m = PLAIN_DECIMAL.exec(text);
    if (!m) {
      this.plain = false;
      return;
    }
    this.scale = Math.max(this.scale, m[2]?.length ?? 0);
    this.digits = Math.max(this.digits, m[1].replace(/^0+/, '').length);
  }

  type(): string {
    // Room for sums of many partial sums: 10 more integer digits than any value has.
    const fits = this.plain && this.scale <= MAX_SCALE && this.digits + 10 + this.scale <= DECIMAL_WIDTH;
    return fits ? `DECIMAL(${DECIMAL_WIDTH}, ${this.scale})` : 'DOUBLE';
  }
}

/**
 * What the source says of a fractional column: its DECIMAL scale (0 when unsaid), 'float' for a floating-point one,
 * undefined when the build did not say (the values decide).
 */
function decimalScale(c: ResultColumn | undefined): number | 'float' | undefined {
  if (!c) return undefined;
  if (!/decimal|numeric/i.test(c.db_type)) return 'float';
  const typed = /\(\s*\d+\s*,\s*(\d+)\s*\)/.exec(c.db_type);
  return c.scale ?? (typed ? Number(typed[1]) : 0);
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
  const watches = columns.map((c) => {
    if (c.type !== 'DOUBLE') return null;
    const declared = decimalScale(c.source);
    return declared === 'float' ? null : new DecimalWatch(declared);
  });
  try {
    const out = createWriteStream(csv);
    try {
      for await (const row of rows) {
        signal.throwIfAborted();
        const fields = columns.map((c, i) => csvField(c.type, row[i]));
        fields.forEach((text, i) => {
          if (text !== '') watches[i]?.see(text);
        });
        const line = fields.join(',') + '\n';
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
      const types = columns.map((c, i) => watches[i]?.type() ?? c.type);
      await conn.run(
        `CREATE TABLE ${q(ROLLUP_TABLE)} (${columns.map((c, i) => `${q(c.name)} ${types[i]}`).join(', ')})`,
      );
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
