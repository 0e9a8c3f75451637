/*
 * What changed between two snapshots of one object (revision diff, pipeline compare details): a flat list of paths a
 * user can read, with the old and the new value.
 *
 * A snapshot is the object's own row plus its child rows by table (server/revisions/store.ts). Paths start at `row`
 * or `children.<table>`; object keys follow with a dot (`row.config.shelves`), array elements in brackets: elements
 * that all carry a unique `id` (or, like dashboard layout items, a unique `widget_id`) are matched by that key
 * (`children.dataset_fields[id=12].formula`, `row.layout.items[widget_id=7].w`), so an inserted element does not make
 * every later one "changed"; any other array is compared by index (`row.config.sort[0]`). An element added or removed
 * as a whole is one entry with the whole element. The order of keyed elements is not compared (child rows are kept
 * sorted by id, and a layout's meaning does not depend on the order of its items).
 *
 * Deterministic order: `row` before `children`, keys in code-unit order, keyed elements by key, indexed ones by index.
 * A missing snapshot (no revision) reads as an empty one, so every value shows as added or removed.
 */

export interface RevisionDiffEntry {
  path: string;
  change: 'added' | 'removed' | 'changed';
  old?: unknown;
  new?: unknown;
}

/** The shape diffSnapshots reads: any snapshot of server/revisions/store.ts fits it. */
interface DiffableSnapshot {
  row: Record<string, unknown>;
  children?: Record<string, unknown[]>;
}

type Plain = Record<string, unknown>;

/** Keys an array's elements may be matched by, in order of preference. */
const ELEMENT_KEYS = ['id', 'widget_id'] as const;

export function diffSnapshots(before: DiffableSnapshot | null, after: DiffableSnapshot | null): RevisionDiffEntry[] {
  const out: RevisionDiffEntry[] = [];
  diffValue('row', before?.row ?? {}, after?.row ?? {}, out);
  const a = before?.children ?? {};
  const b = after?.children ?? {};
  // A table one side does not list has no rows there (an older snapshot may not know a newer child table).
  for (const table of sortedKeys(a, b)) {
    diffValue(`children${segment(table)}`, a[table] ?? [], b[table] ?? [], out);
  }
  return out;
}

function diffValue(path: string, a: unknown, b: unknown, out: RevisionDiffEntry[]): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined) {
    out.push({ path, change: 'added', new: b });
    return;
  }
  if (b === undefined) {
    out.push({ path, change: 'removed', old: a });
    return;
  }
  if (isPlain(a) && isPlain(b)) {
    for (const key of sortedKeys(a, b)) diffValue(path + segment(key), a[key], b[key], out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    diffArray(path, a, b, out);
    return;
  }
  if (!deepEqual(a, b)) out.push({ path, change: 'changed', old: a, new: b });
}

function diffArray(path: string, a: unknown[], b: unknown[], out: RevisionDiffEntry[]): void {
  const key = ELEMENT_KEYS.find((k) => keyedBy(a, k) && keyedBy(b, k));
  if (key === undefined) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) diffValue(`${path}[${i}]`, a[i], b[i], out);
    return;
  }
  const byKey = (list: unknown[]) => new Map(list.map((e) => [(e as Plain)[key] as number | string, e]));
  const olds = byKey(a);
  const news = byKey(b);
  const keys = [...new Set([...olds.keys(), ...news.keys()])].sort(compareKeys);
  for (const k of keys) diffValue(`${path}[${key}=${JSON.stringify(k)}]`, olds.get(k), news.get(k), out);
}

/** Every element a plain object with a number or string `key`, no two alike (an empty array fits any key). */
function keyedBy(list: unknown[], key: string): boolean {
  const seen = new Set<unknown>();
  for (const e of list) {
    if (!isPlain(e)) return false;
    const v = e[key];
    if ((typeof v !== 'number' && typeof v !== 'string') || seen.has(v)) return false;
    seen.add(v);
  }
  return true;
}

function compareKeys(x: number | string, y: number | string): number {
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (typeof x === 'number') return -1;
  if (typeof y === 'number') return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `.name` for an identifier-like key, `["a key"]` for any other. */
function segment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function sortedKeys(a: object, b: object): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}

function isPlain(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlain(a) && isPlain(b)) {
    const keys = sortedKeys(a, b);
    return keys.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}
