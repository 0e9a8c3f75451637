import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, type Connector, type ResultColumn } from '../../../adapters/sources';
import { DROPPED_MESSAGE } from '../../../adapters/sources/driver-errors';
import type { DatasetModel } from '../../../server/query/compile/dataset-model';
import { pullExtract } from '../../../server/etl/pull';

/*
 * Which error a failed pull reports when both sides of the pipe fail: the source dropping mid-row leaves a cut line
 * in the pipe, which DuckDB then refuses; the run must say the source dropped, not DuckDB's CSV complaint (this was
 * a race that CI lost). A load that fails on its own says so in Russian, without the server's file paths.
 *
 * The source here is a connector that writes chosen bytes (no protocol is imitated: pull.ts only sees a Writable).
 */

const COLUMNS: ResultColumn[] = [
  { name: 'id', db_type: 'int8', primitive_type: 'integer' },
  { name: 'v', db_type: 'int8', primitive_type: 'integer' },
];

function model(): DatasetModel {
  const field = (id: number, column: string) => ({
    id,
    objectId: 1,
    name: column,
    title: column,
    kind: 'physical' as const,
    column,
    formula: null,
    derivation: null,
    primitiveType: 'integer' as const,
    aggregation: 'none' as const,
    hidden: false,
    description: '',
    sortByFieldId: null,
  });
  return {
    id: 1,
    name: 'd',
    workspaceId: 1,
    live: false,
    dataSourceIds: [1],
    version: 1,
    updatedAt: new Date(),
    objects: [{ id: 1, dataSourceId: 1, name: 't', kind: 'table', schema: 'public', table: 't', sql: null }],
    fields: [field(1, 'id'), field(2, 'v')],
    relations: [],
    hierarchies: [],
    filters: [],
    parameters: [],
  };
}

/** A source whose COPY writes `body` (in pieces, as a socket would) and then ends with `end` (an error, or none). */
function source(body: string, end?: Error): Connector {
  const fail = () => Promise.reject(new Error('not used'));
  return {
    kind: 'postgresql',
    dialect: 'postgresql',
    check: fail,
    listSchemas: fail,
    listTables: fail,
    listColumns: () => Promise.resolve([]),
    query: () => Promise.resolve({ columns: [], rows: [[null]], truncated: false }),
    stream: () => {
      throw new Error('not used');
    },
    openStream: fail,
    async copyCsv(_sql: string, out: Writable, opts) {
      await opts?.onColumns?.(COLUMNS);
      const bytes = Buffer.from(body);
      for (let at = 0; at < bytes.length; at += 65_536) {
        if (!out.write(bytes.subarray(at, at + 65_536))) await new Promise((r) => out.once('drain', r));
      }
      // Let the loader read what was written before the source fails.
      await new Promise((r) => setTimeout(r, 50));
      if (end) throw end;
      return { columns: COLUMNS, rows: body.split('\n').length - 1 };
    },
    close: () => Promise.resolve(),
  } as Connector;
}

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'pull-test-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const pull = (connector: Connector, runId: number) =>
  pullExtract({
    model: model(),
    sourceOf: () => ({ connector, dialect: 'postgresql' }),
    mode: 'full',
    runId,
    dataDir,
    signal: new AbortController().signal,
    onStep: () => Promise.resolve(),
    onProgress: () => undefined,
  });

const rows = (n: number) => Array.from({ length: n }, (_, i) => `${i},${i * 2}\n`).join('');

describe('pullExtract failures', () => {
  it('a source dropped mid-row reports the source, never the cut line DuckDB then refuses', async () => {
    for (let run = 1; run <= 5; run++) {
      const dropped = new ConnectorError(DROPPED_MESSAGE, 'connection');
      // The cut last line ("3") is what the source had sent when it dropped.
      await expect(pull(source(`${rows(200_000)}3`, dropped), run)).rejects.toBe(dropped);
    }
    expect((await readdir(path.join(dataDir, 'extracts'))).filter((f) => f.includes('.part'))).toEqual([]);
  });

  it('a load that fails on its own says so in Russian, without file paths', async () => {
    const error = await pull(source(`${rows(10)}x,y\n`), 10).then(
      () => new Error('loaded'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(/^Не удалось загрузить строки источника в извлечение: /);
    expect(error.message).not.toMatch(/\/tmp|\.pipe/);
  });

  it('a complete copy loads every row', async () => {
    await expect(pull(source(rows(1000)), 20)).resolves.toMatchObject({ rows: 1000 });
  });
});
