import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import type { z } from 'zod';
import type { datasetPreviewOutput, fieldValuesOutput } from '../../../routers/datasets/data-procedures';
import { failure, ok } from '../../support/rest';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
} from '../widgets/world';

type DatasetPreview = z.output<typeof datasetPreviewOutput>;
type FieldValues = z.output<typeof fieldValuesOutput>;

const SALES = makeSales(60);
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let ds: Awaited<ReturnType<typeof createSalesDataset>>;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
    extraFields: [{ id: -32, name: 'Месяц', formula: 'MONTH([sales.sold_on])' }],
    // the dataset's own filter applies to every read
    filters: [{ id: -61, field_id: -15, op: 'gte', values: [2], value_type: 'integer' }],
  });
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

const visible = SALES.filter((s) => s.qty >= 2);

describe('GET /api/dataset/{id}/field-values', () => {
  it('distinct values ascending, searched, limited', async () => {
    const products = [...new Set(visible.map((s) => s.product))].sort();
    const res = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, {
      fieldId: String(ds.fieldId('product')),
    });
    expect(res.status).toBe(200);
    expect(ok<FieldValues>(res)).toEqual({ field_id: ds.fieldId('product'), values: products, has_more: false });
    const searched = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, {
      fieldId: String(ds.fieldId('product')),
      query: 'КА',
    });
    expect(ok<FieldValues>(searched).values).toEqual(products.filter((p) => p.includes('ка')));
    const limited = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, {
      fieldId: String(ds.fieldId('product')),
      limit: '2',
    });
    expect(ok<FieldValues>(limited)).toEqual({
      field_id: ds.fieldId('product'),
      values: products.slice(0, 2),
      has_more: true,
    });
    // a calculated field with the dataset's formula
    const months = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, {
      fieldId: String(ds.fieldId('Месяц')),
    });
    expect(ok<FieldValues>(months).values).toEqual(
      [...new Set(visible.map((s) => Number(s.sold_on.slice(5, 7))))].sort((a, b) => a - b),
    );
  });

  it('bad input and access', async () => {
    const unknown = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, { fieldId: '999999' });
    expect([unknown.status, failure(unknown).errors]).toEqual([
      422,
      { fieldId: 'Поле датасета не найдено (id 999999)' },
    ]);
    const big = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, {
      fieldId: String(ds.fieldId('product')),
      limit: '1001',
    });
    expect(big.status).toBe(422);
    const hostile = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, {
      fieldId: String(ds.fieldId('product')),
      query: "'; DROP TABLE x; --%_",
    });
    expect(ok<FieldValues>(hostile).values).toEqual([]);
    const outsider = await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.plain, {
      fieldId: String(ds.fieldId('product')),
    });
    expect([outsider.status, failure(outsider).message]).toEqual([404, `Датасет не найден (id ${ds.id})`]);
  });
});

describe('POST /api/dataset/{id}/preview', () => {
  it('rows of the chosen fields with the dataset filter and the request filters', async () => {
    const res = await api.post(
      `/api/dataset/${ds.id}/preview`,
      {
        field_ids: [ds.fieldId('id'), ds.fieldId('name'), ds.fieldId('qty')],
        filters: [{ sql: '[sales.product]', op: 'eq', values: ['чай'] }],
        limit: 1000,
      },
      cast.tokens.viewer,
    );
    expect(res.status).toBe(200);
    expect(ok<DatasetPreview>(res).columns).toEqual([
      { field_id: ds.fieldId('id'), name: 'id', title: 'id', primitive_type: 'integer' },
      { field_id: ds.fieldId('name'), name: 'name', title: 'name', primitive_type: 'string' },
      { field_id: ds.fieldId('qty'), name: 'qty', title: 'qty', primitive_type: 'integer' },
    ]);
    const names = ['Север', 'Юг', 'Восток'];
    const expected = visible.filter((s) => s.product === 'чай').map((s) => [s.id, names[s.region_id - 1], s.qty]);
    expect([...ok<DatasetPreview>(res).rows].sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual(expected);
    expect(ok<DatasetPreview>(res).has_more).toBe(false);
  });

  it('all visible fields by default, limited; bad input', async () => {
    const res = await api.post(`/api/dataset/${ds.id}/preview`, { limit: 3 }, cast.tokens.viewer);
    // «Выручка» aggregates: the preview groups by the other fields (id among them: one group per row)
    expect(ok<DatasetPreview>(res).columns.map((c: { name: string }) => c.name)).toEqual([
      'id',
      'region_id',
      'product',
      'amount',
      'qty',
      'sold_on',
      'id',
      'name',
      'Выручка',
      'Месяц',
    ]);
    expect(ok<DatasetPreview>(res).rows).toHaveLength(3);
    for (const r of ok<DatasetPreview>(res).rows) expect(r[8]).toBe(r[3]);
    const physical = await api.post(
      `/api/dataset/${ds.id}/preview`,
      { field_ids: [ds.fieldId('id')], limit: 3 },
      cast.tokens.viewer,
    );
    expect(ok<DatasetPreview>(physical).rows).toHaveLength(3);
    expect(ok<DatasetPreview>(physical).has_more).toBe(true);
    expect((await api.post(`/api/dataset/${ds.id}/preview`, { limit: 5000 }, cast.tokens.viewer)).status).toBe(422);
    expect(
      (await api.post(`/api/dataset/${ds.id}/preview`, { field_ids: [1, 999999] }, cast.tokens.viewer)).status,
    ).toBe(422);
    expect(
      (await api.post(`/api/dataset/${ds.id}/preview`, { view_as_user_id: cast.users.viewer.id }, cast.tokens.viewer))
        .status,
    ).toBe(403);
    // Field values take it as a query parameter (viewAsUserId), with the same rule: a system administrator only.
    const valuesAs = (token: string | undefined) =>
      api.get(`/api/dataset/${ds.id}/field-values`, token, {
        fieldId: String(ds.fieldId('id')),
        viewAsUserId: String(cast.users.viewer.id),
      });
    expect(failure(await valuesAs(cast.tokens.viewer)).message).toBe('Доступ запрещён');
    expect((await valuesAs(cast.tokens.sysadmin)).status).toBe(200);
    expect(
      (
        await api.post(
          `/api/dataset/${ds.id}/preview`,
          { field_ids: [ds.fieldId('id')], view_as_user_id: cast.users.viewer.id },
          cast.tokens.sysadmin,
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await api.post(
          `/api/dataset/${ds.id}/preview`,
          { filters: [{ sql: '1; DROP TABLE x', op: 'eq', values: [1] }] },
          cast.tokens.viewer,
        )
      ).status,
    ).toBe(422);
    expect((await api.post(`/api/dataset/${ds.id}/preview`, {}, cast.tokens.plain)).status).toBe(404);
  });
});
