/** Where the builds of rollups live in storage: rollups/dataset-<id>/rollup-<id>/<load id>.duckdb. */

export const rollupPrefixOf = (datasetId: number) => `rollups/dataset-${datasetId}/`;
export const rollupKeyOf = (datasetId: number, rollupId: number, loadId: string) =>
  `${rollupPrefixOf(datasetId)}rollup-${rollupId}/${loadId}.duckdb`;
const KEY = /^rollups\/dataset-(\d+)\/rollup-(\d+)\/([0-9a-f-]{36})\.duckdb$/;
export function parseRollupKey(key: string): { datasetId: number; rollupId: number; loadId: string } | null {
  const m = KEY.exec(key);
  return m ? { datasetId: Number(m[1]), rollupId: Number(m[2]), loadId: m[3] } : null;
}
