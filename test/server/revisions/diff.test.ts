import { describe, expect, it } from 'vitest';
import { diffSnapshots, type RevisionDiffEntry } from '../../../server/revisions/diff';

/* diffSnapshots: the changed paths between two snapshots (rows of an object's tables), as a user reads them. */

const field = (id: number, name: string, formula: string | null = null) => ({ id, dataset_id: 1, name, formula });

const dataset = (fields: ReturnType<typeof field>[], name = 'Продажи') => ({
  row: { id: 1, name, description: '', workspace_id: 3, settings: { mode: 'live', cache_ttl: 60 } },
  children: { dataset_fields: fields, dataset_relations: [] as unknown[] },
});

describe('diffSnapshots', () => {
  it('finds nothing between equal snapshots, whatever the key order of their json', () => {
    const a = dataset([field(12, 'Выручка', 'SUM([s.amount])')]);
    const b = {
      children: {
        dataset_relations: [],
        dataset_fields: [{ formula: 'SUM([s.amount])', name: 'Выручка', dataset_id: 1, id: 12 }],
      },
      row: { settings: { cache_ttl: 60, mode: 'live' }, workspace_id: 3, description: '', name: 'Продажи', id: 1 },
    };
    expect(diffSnapshots(a, b)).toEqual([]);
  });

  it('names row columns and nested json by dotted paths', () => {
    const a = dataset([], 'Продажи');
    const b = dataset([], 'Продажи 2026');
    b.row.settings = { mode: 'materialized', cache_ttl: 60 };
    expect(diffSnapshots(a, b)).toEqual<RevisionDiffEntry[]>([
      { path: 'row.name', change: 'changed', old: 'Продажи', new: 'Продажи 2026' },
      { path: 'row.settings.mode', change: 'changed', old: 'live', new: 'materialized' },
    ]);
  });

  it('matches child rows by id: a field added, one removed, one formula changed, in id order', () => {
    const a = dataset([field(12, 'Выручка', 'SUM([s.amount])'), field(13, 'Регион'), field(15, 'Скидка')]);
    const b = dataset([
      field(11, 'Маржа', '[Выручка] - [Себестоимость]'),
      field(12, 'Выручка', 'SUM([s.net])'),
      field(15, 'Скидка'),
    ]);
    expect(diffSnapshots(a, b)).toEqual<RevisionDiffEntry[]>([
      {
        path: 'children.dataset_fields[id=11]',
        change: 'added',
        new: field(11, 'Маржа', '[Выручка] - [Себестоимость]'),
      },
      {
        path: 'children.dataset_fields[id=12].formula',
        change: 'changed',
        old: 'SUM([s.amount])',
        new: 'SUM([s.net])',
      },
      { path: 'children.dataset_fields[id=13]', change: 'removed', old: field(13, 'Регион') },
    ]);
  });

  it('matches widget shelves by their id and other arrays by index', () => {
    const widget = (x: unknown[], sort: unknown[]) => ({
      row: { id: 5, name: 'Выручка по регионам', config: { shelves: { x }, sort } },
    });
    const a = widget([{ id: 's1', field_id: 12, agg: 'sum' }], ['region']);
    const b = widget(
      [
        { id: 's0', field_id: 13, agg: null },
        { id: 's1', field_id: 12, agg: 'avg' },
      ],
      ['region', 'month'],
    );
    expect(diffSnapshots(a, b)).toEqual<RevisionDiffEntry[]>([
      { path: 'row.config.shelves.x[id="s0"]', change: 'added', new: { id: 's0', field_id: 13, agg: null } },
      { path: 'row.config.shelves.x[id="s1"].agg', change: 'changed', old: 'sum', new: 'avg' },
      { path: 'row.config.sort[1]', change: 'added', new: 'month' },
    ]);
  });

  it('matches dashboard layout items by their widget, so a tile inserted first does not change the others', () => {
    const tile = (widget_id: number, x: number) => ({ widget_id, tab_id: null, x, y: 0, w: 6, h: 4 });
    const dash = (items: unknown[]) => ({ row: { id: 9, name: 'Сводка', layout: { tabs: [], items } } });
    const a = dash([tile(7, 0), tile(8, 6)]);
    const b = dash([tile(21, 0), tile(7, 0), tile(8, 12)]);
    expect(diffSnapshots(a, b)).toEqual<RevisionDiffEntry[]>([
      { path: 'row.layout.items[widget_id=8].x', change: 'changed', old: 6, new: 12 },
      { path: 'row.layout.items[widget_id=21]', change: 'added', new: tile(21, 0) },
    ]);
  });

  it('falls back to indices when a key repeats, and reports a type change as one changed value', () => {
    const a = {
      row: {
        config: {
          items: [
            { id: 1, v: 'a' },
            { id: 1, v: 'b' },
          ],
          limit: 10,
        },
      },
    };
    const b = {
      row: {
        config: {
          items: [
            { id: 1, v: 'a' },
            { id: 1, v: 'c' },
          ],
          limit: { rows: 10 },
        },
      },
    };
    expect(diffSnapshots(a, b)).toEqual<RevisionDiffEntry[]>([
      { path: 'row.config.items[1].v', change: 'changed', old: 'b', new: 'c' },
      { path: 'row.config.limit', change: 'changed', old: 10, new: { rows: 10 } },
    ]);
  });

  it('quotes keys that are not identifiers and treats null as a value', () => {
    const a = { row: { labels: { 'Новый ключ': 1 }, note: null as string | null } };
    const b = { row: { labels: { 'Новый ключ': 2 }, note: 'текст' } };
    expect(diffSnapshots(a, b)).toEqual<RevisionDiffEntry[]>([
      { path: 'row.labels["Новый ключ"]', change: 'changed', old: 1, new: 2 },
      { path: 'row.note', change: 'changed', old: null, new: 'текст' },
    ]);
  });

  it('reads a child table one side lacks as empty, and a missing snapshot as an empty one', () => {
    const a = { row: { id: 1, name: 'A' } };
    const b = { row: { id: 1, name: 'A' }, children: { dataset_filters: [{ id: 4, op: 'in' }] } };
    expect(diffSnapshots(a, b)).toEqual<RevisionDiffEntry[]>([
      { path: 'children.dataset_filters[id=4]', change: 'added', new: { id: 4, op: 'in' } },
    ]);
    expect(diffSnapshots(null, a)).toEqual<RevisionDiffEntry[]>([
      { path: 'row.id', change: 'added', new: 1 },
      { path: 'row.name', change: 'added', new: 'A' },
    ]);
    expect(diffSnapshots(a, null)).toEqual<RevisionDiffEntry[]>([
      { path: 'row.id', change: 'removed', old: 1 },
      { path: 'row.name', change: 'removed', old: 'A' },
    ]);
    expect(diffSnapshots(null, null)).toEqual([]);
  });
});
