import { readableObject } from '../access/object-access';
import type { Viewer } from '../access/viewer';
import type { AppDeps } from '../app/deps';
import { invalid } from '../kernel/errors';
import type { FilterSpec, WidgetQueryInput } from '../query/compile/types';
import { readData } from '../query/read';
import { MSG } from './messages';
import { fieldRefsById } from '../datasets/views';

/*
 * Slices of a mailing (POST /api/mailings/slice-estimate and every sliced run): the distinct pairs (slice value,
 * recipient value) of the slice dataset, read through THE data entry point (server/query/read.ts) with the viewer
 * of the mailing's owner, so the owner's row and column rules decide which slices exist and who gets them.
 */

export interface SliceSpec {
  dataset_id: number;
  field_id: number;
  recipient_field_id: number;
}

export interface Slice {
  /** The value as text: the letter's slice_value. */
  key: string;
  /** The value as the source gave it: the letter's filter. */
  value: unknown;
  recipients: string[];
}

export interface SlicePlan {
  slices: Slice[];
  /** `[object.field]` of the slice field: letters filter widgets of the slice dataset with it. */
  fieldRef: string;
  datasetId: number;
}

const PAGE = 10_000;
const ADDRESS = /^[^\s@,;<>]+@[^\s@,;<>]+\.[^\s@,;<>]+$/;
const refText = (name: string) => name.replaceAll(']', ']]');

/** Addresses a recipient field value gives: one or several separated by commas, semicolons or spaces. */
function addressesIn(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  return String(value)
    .split(/[,;\s]+/)
    .map((s) => s.trim().toLowerCase())
    .filter((s) => ADDRESS.test(s));
}

/** The slice's fields, checked to belong to its dataset (422 naming the field otherwise). */
async function sliceRefs(deps: AppDeps, spec: SliceSpec, path: string) {
  const fields = await fieldRefsById(deps.db, [spec.field_id, spec.recipient_field_id]);
  const ref = (id: number, key: string) => {
    const f = fields.get(id);
    if (!f || f.datasetId !== spec.dataset_id) throw invalid({ [`${path}${key}`]: MSG.fieldNotInDataset(id) });
    return f.objectName === null ? `[${refText(f.name)}]` : `[${refText(f.objectName)}.${refText(f.name)}]`;
  };
  return { value: ref(spec.field_id, 'field_id'), recipient: ref(spec.recipient_field_id, 'recipient_field_id') };
}

/** Checks a slice before it is saved: the dataset readable by the owner, both fields of it. */
export async function checkSlice(deps: AppDeps, viewer: Viewer, spec: SliceSpec, path: string): Promise<void> {
  await readableObject(deps.db, viewer.actor, 'dataset', spec.dataset_id);
  await sliceRefs(deps, spec, path);
}

export async function planSlices(
  deps: AppDeps,
  viewer: Viewer,
  spec: SliceSpec,
  filters: FilterSpec[] = [],
  path = 'slice.',
): Promise<SlicePlan> {
  const { row: dataset } = await readableObject(deps.db, viewer.actor, 'dataset', spec.dataset_id);
  const refs = await sliceRefs(deps, spec, path);
  const byKey = new Map<string, Slice>();
  for (let page = 1; ; page++) {
    const query: WidgetQueryInput = {
      type: 'table',
      rows: [
        { id: 'v', sql: refs.value },
        { id: 'r', sql: refs.recipient },
      ],
      series: [],
      columns: [],
      filters: filters.map((filter, i) => ({ path: `filters[${i}]`, filter })),
      sorts: [{ field_id: 'v', direction: 'asc' }],
      calculatedFields: [],
      parameters: {},
      page,
      pageSize: PAGE,
    };
    const { rows } = await readData(deps, viewer, dataset, { kind: 'widget', query });
    for (const [value, recipient] of rows.slice(0, PAGE)) {
      if (value === null || value === undefined) continue;
      const key = value instanceof Date ? value.toISOString() : String(value);
      let slice = byKey.get(key);
      if (!slice) byKey.set(key, (slice = { key, value, recipients: [] }));
      for (const a of addressesIn(recipient)) if (!slice.recipients.includes(a)) slice.recipients.push(a);
    }
    if (rows.length <= PAGE) break;
  }
  return { slices: [...byKey.values()], fieldRef: refs.value, datasetId: spec.dataset_id };
}

/** POST /api/mailings/slice-estimate: what a sliced run would send, before the mailing is saved. */
export function estimateOf(plan: SlicePlan) {
  return {
    slice_count: plan.slices.length,
    letter_count: plan.slices.reduce((n, s) => n + s.recipients.length, 0),
    sample_values: plan.slices.slice(0, 10).map((s) => s.key),
  };
}
