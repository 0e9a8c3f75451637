import { expect } from 'vitest';
import type { z } from 'zod';
import type { extractionOutput, historyPage, runOutput, runPage } from '../../../routers/etl/schemas';
import { ok, type Rest } from '../../support/rest';

/* Helpers of the extract tests: run views, starting a run and waiting for it to end. */

export type RunView = z.output<typeof runOutput>;
export type RunPage = z.output<typeof runPage>;
export type HistoryPage = z.output<typeof historyPage>;
export type ExtractionView = z.output<typeof extractionOutput>;

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Makes the dataset materialised (PUT /api/dataset/{id} live: false). */
export async function materialise(api: Rest, token: string, datasetId: number): Promise<void> {
  ok(await api.put(`/api/dataset/${datasetId}`, { live: false }, token));
}

export async function waitForRun(
  api: Rest,
  token: string,
  jobId: number,
  until: (r: RunView) => boolean = (r) => TERMINAL.has(r.state),
  timeoutMs = 30_000,
): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = ok<RunView>(await api.get(`/api/etl-jobs/${jobId}`, token));
    if (until(run)) return run;
    if (Date.now() > deadline)
      throw new Error(`run ${jobId} still ${run.state} after ${timeoutMs} ms: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** POST /api/datasets/{id}/extracts and waits for the run to end; expects it to succeed unless told otherwise. */
export async function runExtract(
  api: Rest,
  token: string,
  datasetId: number,
  body: Record<string, unknown> = {},
  expectState: RunView['state'] = 'succeeded',
  timeoutMs = 30_000,
): Promise<RunView> {
  const started = ok<RunView>(await api.post(`/api/datasets/${datasetId}/extracts`, body, token));
  const done = await waitForRun(api, token, started.job_id, undefined, timeoutMs);
  expect(done.state, JSON.stringify(done)).toBe(expectState);
  return done;
}

/**
 * A live dataset over one table or SQL object of one source (POST /api/dataset, then PUT its schema with one physical
 * field per column): answers its id.
 */
export async function createObjectDataset(
  api: Rest,
  token: string,
  opts: {
    name: string;
    workspaceId: number;
    sourceId: number;
    object: { name: string; schema?: string; table?: string; kind?: 'sql'; sql?: string };
    columns: [column: string, primitiveType: string][];
  },
): Promise<number> {
  const { id } = ok<{ id: number }>(
    await api.post(
      '/api/dataset',
      { name: opts.name, workspace_id: opts.workspaceId, live: true, data_source_ids: [opts.sourceId] },
      token,
    ),
  );
  const fields = opts.columns.map(([column, primitive_type], i) => ({
    id: -2 - i,
    object_id: -1,
    name: column,
    column,
    primitive_type,
  }));
  const object = { id: -1, data_source_id: opts.sourceId, ...opts.object };
  ok(
    await api.put(
      `/api/dataset/${id}/schema`,
      { objects: [object], fields, relations: [], hierarchies: [], filters: [], parameters: [] },
      token,
    ),
  );
  return id;
}
