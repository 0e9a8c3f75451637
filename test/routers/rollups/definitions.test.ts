import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { failure, ok, type Deleted } from '../../support/rest';
import { createSalesWorld, makeSales } from '../widgets/world';
import type { RollupView } from './world';

/*
 * Rollup definitions over REST: create, list, read, replace and delete; every bad definition is a 422 naming the
 * element and saying in Russian what is wrong, and nothing is saved; reading is for whoever reads the dataset,
 * defining and building for its owner.
 */

const { t, api } = useTestApp();
let world: Awaited<ReturnType<typeof createSalesWorld>>;
let other: Awaited<ReturnType<typeof createSalesWorld>>;
const owner = () => world.cast.tokens.wsAdmin!;
const f = (name: string) => world.fieldId(name);
const base = () => ({
  name: 'Продажи по месяцам',
  dimensions: [{ field_id: f('sold_on'), granularity: 'month' }, { field_id: f('product') }],
  measures: [{ field_id: f('amount'), aggregation: 'SUM' }],
  refresh: { mode: 'schedule', cron: '0 3 * * *' },
});

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, makeSales(30));
  other = await createSalesWorld(t.deps, api, makeSales(3));
});
afterAll(async () => {
  await world.dispose();
  await other.dispose();
});

describe('CRUD', () => {
  it('creates, lists, reads, replaces and deletes a rollup', async () => {
    const created = ok<RollupView>(await api.post(`/api/dataset/${world.datasetId}/rollups`, base(), owner()));
    expect(created).toMatchObject({
      dataset_id: world.datasetId,
      name: 'Продажи по месяцам',
      dimensions: [
        { field_id: f('sold_on'), granularity: 'month', column: 'd0' },
        { field_id: f('product'), granularity: null, column: 'd1' },
      ],
      measures: [{ field_id: f('amount'), aggregation: 'SUM', columns: { sum: 'm0_sum' } }],
      refresh: { mode: 'schedule', cron: '0 3 * * *', timezone: 'UTC' },
      enabled: true,
      last_build: null,
      rows: null,
      fresh: false,
    });
    const list = ok<RollupView[]>(await api.get(`/api/dataset/${world.datasetId}/rollups`, owner()));
    expect(list.map((r) => r.id)).toEqual([created.id]);
    const replaced = ok<RollupView>(
      await api.put(
        `/api/dataset/${world.datasetId}/rollups/${created.id}`,
        { ...base(), name: 'Переименован', enabled: false, measures: [{ field_id: f('qty'), aggregation: 'AVG' }] },
        owner(),
      ),
    );
    expect(replaced).toMatchObject({
      name: 'Переименован',
      enabled: false,
      measures: [{ field_id: f('qty'), aggregation: 'AVG', columns: { sum: 'm0_sum', count: 'm0_count' } }],
    });
    const one = ok<RollupView>(await api.get(`/api/dataset/${world.datasetId}/rollups/${created.id}`, owner()));
    expect(one.name).toBe('Переименован');
    const deleted = ok<Deleted>(await api.delete(`/api/dataset/${world.datasetId}/rollups/${created.id}`, owner()));
    expect(deleted).toEqual({ id: created.id, deleted: true });
    const gone = await api.get(`/api/dataset/${world.datasetId}/rollups/${created.id}`, owner());
    expect(gone.status).toBe(404);
    expect(failure(gone).message).toBe(`Агрегат не найден (id ${created.id})`);
  });

  it('answers 404 for a rollup addressed through another dataset', async () => {
    const created = ok<RollupView>(
      await api.post(`/api/dataset/${world.datasetId}/rollups`, { ...base(), name: 'чужой путь' }, owner()),
    );
    const wrong = await api.get(`/api/dataset/${other.datasetId}/rollups/${created.id}`, other.cast.tokens.wsAdmin!);
    expect(wrong.status).toBe(404);
  });
});

describe('bad definitions: 422 with the field map, nothing saved', () => {
  const cases: [string, () => Record<string, unknown>, string, RegExp][] = [
    [
      'an unknown field',
      () => ({ ...base(), dimensions: [{ field_id: 999_999 }] }),
      'dimensions[0].field_id',
      /Поле не найдено \(id 999999\)/,
    ],
    [
      'a field of another dataset',
      () => ({ ...base(), measures: [{ field_id: other.fieldId('amount'), aggregation: 'SUM' }] }),
      'measures[0].field_id',
      /принадлежит другому датасету/,
    ],
    [
      'an unknown granularity',
      () => ({ ...base(), dimensions: [{ field_id: f('sold_on'), granularity: 'decade' }] }),
      'dimensions[0].granularity',
      /Неизвестная детализация даты «decade»/,
    ],
    [
      'a granularity on a field that is not a date',
      () => ({ ...base(), dimensions: [{ field_id: f('product'), granularity: 'month' }] }),
      'dimensions[0].granularity',
      /только к полю даты/,
    ],
    [
      'COUNT DISTINCT',
      () => ({ ...base(), measures: [{ field_id: f('product'), aggregation: 'COUNT DISTINCT' }] }),
      'measures[0].aggregation',
      /^Мера «product» не складывается: число различных значений/,
    ],
    [
      'MEDIAN',
      () => ({ ...base(), measures: [{ field_id: f('amount'), aggregation: 'median' }] }),
      'measures[0].aggregation',
      /^Мера «amount» не складывается: медиану/,
    ],
    [
      'a calculated field that aggregates already',
      () => ({ ...base(), measures: [{ field_id: f('Выручка'), aggregation: 'SUM' }] }),
      'measures[0].field_id',
      /^Мера «Выручка» не складывается: формула поля уже агрегирует \(SUM\)/,
    ],
    [
      'an unknown aggregation',
      () => ({ ...base(), measures: [{ field_id: f('amount'), aggregation: 'PRODUCT' }] }),
      'measures[0].aggregation',
      /Неизвестная агрегация «PRODUCT»/,
    ],
    [
      'SUM of text',
      () => ({ ...base(), measures: [{ field_id: f('product'), aggregation: 'SUM' }] }),
      'measures[0].aggregation',
      /SUM применима только к числовым полям/,
    ],
    [
      'a duplicate dimension',
      () => ({ ...base(), dimensions: [{ field_id: f('product') }, { field_id: f('product'), granularity: null }] }),
      'dimensions[1].field_id',
      /Измерение «product» с этой детализацией уже есть/,
    ],
    [
      'neither dimensions nor measures',
      () => ({ ...base(), dimensions: [], measures: [] }),
      'measures',
      /Укажите хотя бы одно измерение или одну меру/,
    ],
    ['a bad cron', () => ({ ...base(), refresh: { mode: 'schedule', cron: '99 * * * *' } }), 'refresh.cron', /./],
    [
      'an unknown time zone',
      () => ({ ...base(), refresh: { mode: 'schedule', cron: '0 3 * * *', timezone: 'Mars/Olympus' } }),
      'refresh.timezone',
      /Неизвестный часовой пояс: Mars\/Olympus/,
    ],
    [
      'refresh with the extract on a live dataset',
      () => ({ ...base(), refresh: { mode: 'with_extract' } }),
      'refresh.mode',
      /у него нет синхронизаций/,
    ],
  ];
  it.each(cases)('%s', async (_name, body, path, message) => {
    const res = await api.post(`/api/dataset/${world.datasetId}/rollups`, { ...body(), name: 'плохой' }, owner());
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    const err = failure(res);
    expect(err.errors?.[path], JSON.stringify(err)).toMatch(message);
    const list = ok<RollupView[]>(await api.get(`/api/dataset/${world.datasetId}/rollups`, owner()));
    expect(list.some((r) => r.name === 'плохой')).toBe(false);
  });

  it('a taken name', async () => {
    ok(await api.post(`/api/dataset/${world.datasetId}/rollups`, { ...base(), name: 'дважды' }, owner()));
    const res = await api.post(`/api/dataset/${world.datasetId}/rollups`, { ...base(), name: 'дважды' }, owner());
    expect(res.status).toBe(422);
    expect(failure(res).errors?.name).toBe('Агрегат с именем «дважды» в этом датасете уже есть');
  });
});

describe('access', () => {
  it('a viewer reads the rollups but cannot define, change, build or delete them', async () => {
    const created = ok<RollupView>(
      await api.post(`/api/dataset/${world.datasetId}/rollups`, { ...base(), name: 'для зрителя' }, owner()),
    );
    const viewer = world.cast.tokens.viewer!;
    const path = `/api/dataset/${world.datasetId}/rollups`;
    expect((await api.get(path, viewer)).status).toBe(200);
    expect((await api.get(`${path}/${created.id}`, viewer)).status).toBe(200);
    expect((await api.post(path, { ...base(), name: 'от зрителя' }, viewer)).status).toBe(403);
    expect((await api.put(`${path}/${created.id}`, base(), viewer)).status).toBe(403);
    expect((await api.post(`${path}/${created.id}/build`, {}, viewer)).status).toBe(403);
    expect((await api.delete(`${path}/${created.id}`, viewer)).status).toBe(403);
    // Someone outside the workspace does not see the dataset at all.
    expect((await api.get(path, world.cast.tokens.plain!)).status).toBe(404);
  });
});
