import { expect } from 'vitest';
import type { z } from 'zod';
import type {
  buildOutput,
  buildPage,
  historyPage,
  rollupOutput,
  suggestOutput,
} from '../../../routers/rollups/schemas';
import type { AppDeps } from '../../../server/app/deps';
import { openRollup, servableRollups } from '../../../server/rollups/serving';
import { ROLLUP_TABLE, ROWS_COLUMN } from '../../../server/rollups/types';
import { loadDatasetRow } from '../../../server/datasets/load-model';
import { ok, type Rest } from '../../support/rest';

/* Helpers of the rollup tests: answers typed by the router's schemas, building and waiting, reading a built rollup. */

export type RollupView = z.output<typeof rollupOutput>;
export type BuildView = z.output<typeof buildOutput>;
export type BuildPage = z.output<typeof buildPage>;
export type BuildHistory = z.output<typeof historyPage>;
export type SuggestAnswer = z.output<typeof suggestOutput>;

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Waits until GET .../builds shows the build ended (succeeded, failed or cancelled). */
export const waitForBuild = (
  api: Rest,
  token: string,
  datasetId: number,
  rollupId: number,
  buildId: number,
  timeoutMs = 30_000,
): Promise<BuildView> => waitForBuildState(api, token, datasetId, rollupId, buildId, 'ended', timeoutMs);

/** POST .../build and waits for the build to end; expects it to succeed unless told otherwise. */
export async function buildRollup(
  api: Rest,
  token: string,
  datasetId: number,
  rollupId: number,
  expectState: BuildView['state'] = 'succeeded',
): Promise<BuildView> {
  const started = ok<BuildView>(await api.post(`/api/dataset/${datasetId}/rollups/${rollupId}/build`, {}, token));
  const done = await waitForBuild(api, token, datasetId, rollupId, started.build_id);
  expect(done.state, JSON.stringify(done)).toBe(expectState);
  return done;
}

/** The servable rollups of the dataset at its current version. */
export async function servable(deps: AppDeps, datasetId: number) {
  const row = await loadDatasetRow(deps.db, datasetId);
  return servableRollups(deps, datasetId, row.version);
}

/** Every row of the served rollup's table, as the DuckDB connector answers them, sorted as text. */
export async function rollupRows(deps: AppDeps, datasetId: number, rollupId: number): Promise<unknown[][]> {
  const served = (await servable(deps, datasetId)).find((s) => s.definition.id === rollupId);
  if (!served) throw new Error(`rollup ${rollupId} is not servable`);
  const { connector } = await openRollup(deps, served);
  // The dimensions and measures in definition order, then the group's row count (not the text ranks).
  const { dimensions, measures } = served.definition;
  const columns = [
    ...dimensions.map((d) => d.column),
    ...measures.flatMap((m) => [m.columns.sum, m.columns.count, m.columns.min, m.columns.max]),
    ROWS_COLUMN,
  ].filter((c): c is string => c !== undefined);
  const result = await connector.query(`SELECT ${columns.join(', ')} FROM ${ROLLUP_TABLE}`, []);
  return sortRows(result.rows);
}

export const sortRows = (rows: unknown[][]) =>
  [...rows].sort((a, b) =>
    JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0,
  );

/**
 * Waits until GET .../builds shows the build in `state` (a running build, say, before it is cancelled), or ended
 * whichever way for 'ended'.
 */
export async function waitForBuildState(
  api: Rest,
  token: string,
  datasetId: number,
  rollupId: number,
  buildId: number,
  state: BuildView['state'] | 'ended',
  timeoutMs = 30_000,
): Promise<BuildView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = ok<BuildPage>(await api.get(`/api/dataset/${datasetId}/rollups/${rollupId}/builds?size=100`, token));
    const build = page.content.find((b) => b.build_id === buildId);
    if (build && (build.state === state || (state === 'ended' && TERMINAL.has(build.state)))) return build;
    if (build && TERMINAL.has(build.state)) throw new Error(`build ${buildId} ended ${build.state}, not ${state}`);
    if (Date.now() > deadline) throw new Error(`build ${buildId} still ${build?.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
