import { noteReplyHeader } from '../../kernel/reply-headers';
import { dataPathReads } from '../../ops/ops';

/** Which path answered a widget read: a rollup of the dataset, its DuckDB extract, or its live source. */
export type DataPath = 'rollup' | 'extract' | 'live';

/** A widget read answered by `path`: counted (GET /metrics) and named in the answer's X-Data-Path header. */
export function recordDataPath(path: DataPath): void {
  dataPathReads.inc(path);
  noteReplyHeader('X-Data-Path', path);
}
