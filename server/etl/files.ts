import path from 'node:path';

/*
 * The local files of extracts on a node, under DATA_DIR/extracts: the partial files of the runs it runs
 * (dataset-<id>.duckdb.<run>.part, with their WAL and pipes) and, on an installation of an older version, the
 * dataset's extract itself (dataset-<id>.duckdb), read in place until the sweep stores it as a load.
 */

export const EXTRACTS_DIR = 'extracts';

/** Where an older version kept a dataset's extract (no load id): still read, then stored as a load by the sweep. */
export const legacyExtractFileOf = (dataDir: string, datasetId: number) =>
  path.join(dataDir, EXTRACTS_DIR, `dataset-${datasetId}.duckdb`);

/** Partial files of a dataset's extract are named so the sweep can find them: dataset-<id>.duckdb.<run>.part */
export const partFileOf = (dataDir: string, datasetId: number, runId: number) =>
  `${legacyExtractFileOf(dataDir, datasetId)}.${runId}.part`;

/**
 * The dataset a file of the extracts folder belongs to: an older version's extract (dataset-<id>.duckdb), its WAL,
 * and the partial files of its runs with their WAL and pipes (dataset-<id>.duckdb.<run>.part...). Null for any other
 * name.
 */
export function extractFileOwner(name: string): number | null {
  const m = /^dataset-(\d+)\.duckdb(\..*)?$/.exec(name);
  return m ? Number(m[1]) : null;
}
