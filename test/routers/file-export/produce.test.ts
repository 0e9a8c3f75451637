import { readFile, rm } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { produceExport } from '../../../server/file-export/produce';
import { AppError } from '../../../server/kernel/errors';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import type { DatasetDetails } from '../datasets/helpers';
import { exportWorld, type ExportWorld } from './world';

/* produceExport (the export jobs' and mailings' entry): CSV and XLSX of a widget under the owner's rights. */

const { t, api } = useTestApp();
let w: ExportWorld;

beforeAll(async () => {
  w = await exportWorld(t.deps, api, 30);
});
afterAll(() => w.close());

describe('produceExport', () => {
  it('csv: UTF-8 with BOM, headers from the shelves, every row', async () => {
    const file = await produceExport(t.deps, {
      ownerUserId: w.cast.users.viewer.id,
      objectType: 'widget',
      objectId: w.widgetId,
      format: 'csv',
    });
    const bytes = await readFile(file.filePath);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = bytes.subarray(3).toString('utf8').trim().split('\n');
    expect(lines[0]).toBe('id,Товар,Дата продажи,Сумма');
    expect(lines).toHaveLength(31);
    const first = w.sales[0];
    expect(lines[1]).toMatch(new RegExp(`^1,${first.product},${first.sold_on}`));
    expect(file.fileName).toBe('Продажи по дням.csv');
    expect(file.contentType).toContain('text/csv');
    await rm(file.filePath);
  });

  it('xlsx: numbers are numbers, dates are dates', async () => {
    const file = await produceExport(t.deps, {
      ownerUserId: w.cast.users.viewer.id,
      objectType: 'widget',
      objectId: w.widgetId,
      format: 'xlsx',
    });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file.filePath);
    const sheet = wb.worksheets[0];
    expect(sheet.getRow(1).values).toEqual([undefined, 'id', 'Товар', 'Дата продажи', 'Сумма']);
    expect(sheet.rowCount).toBe(31);
    const row = sheet.getRow(3);
    expect(row.getCell(1).value).toBe(2);
    expect(row.getCell(3).value).toBeInstanceOf(Date);
    expect((row.getCell(3).value as Date).toISOString().slice(0, 10)).toBe(w.sales[1].sold_on);
    expect(typeof row.getCell(4).value).toBe('number');
    await rm(file.filePath);
  });
});

describe('xlsx cells take their column type, not a guess from the value', () => {
  let typed: ExportWorld;
  beforeAll(async () => {
    typed = await exportWorld(t.deps, api, 3);
    // Text that looks like a number and like a date, in the text field `product`.
    await typed.source.db.query(
      `UPDATE ${typed.source.sales} SET product = CASE id WHEN 1 THEN '00123' WHEN 2 THEN '2024-01-05' ELSE product END`,
    );
  });
  afterAll(() => typed.close());

  it('a text column keeps 00123 and 2024-01-05 as text; integer, date and numeric columns are typed', async () => {
    const file = await produceExport(t.deps, {
      ownerUserId: typed.cast.users.viewer.id,
      objectType: 'widget',
      objectId: typed.widgetId,
      format: 'xlsx',
    });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file.filePath);
    await rm(file.filePath);
    const sheet = wb.worksheets[0];
    const cells = (n: number) => [1, 2, 3, 4].map((c) => sheet.getRow(n).getCell(c).value);
    const [s1, s2] = typed.sales;
    expect(cells(2)).toEqual([1, '00123', new Date(`${s1.sold_on}T00:00:00Z`), s1.amount]);
    expect(cells(3)).toEqual([2, '2024-01-05', new Date(`${s2.sold_on}T00:00:00Z`), s2.amount]);
    expect(sheet.getRow(2).getCell(3).numFmt).toBe('yyyy-mm-dd');
  });
});

describe('produceExport streams rows under row- and column-level security', () => {
  // More rows than one cursor fetch (2,000) even after the row rule, so the stream reads several batches.
  let big: ExportWorld;
  let fieldId: (name: string) => number;
  beforeAll(async () => {
    big = await exportWorld(t.deps, api, 6_000);
    const d = ok<DatasetDetails>(await api.get(`/api/dataset/${big.datasetId}`, big.cast.tokens.wsAdmin));
    fieldId = (name) => d.fields.find((f) => f.name === name)!.id;
  }, 120_000);
  afterAll(async () => {
    await t.deps.db.delete(datasetClsRules);
    readCachesChanged(t.deps);
    await big.close();
  });
  const cls = async (action: 'hide' | 'mask', name: string) => {
    await t.deps.db.insert(datasetClsRules).values({
      datasetId: big.datasetId,
      fieldIds: [fieldId(name)],
      action,
      userIds: [big.cast.users.viewer.id],
      groupIds: [],
    });
    readCachesChanged(t.deps);
  };
  const csvOf = async () => {
    const file = await produceExport(t.deps, {
      ownerUserId: big.cast.users.viewer.id,
      objectType: 'widget',
      objectId: big.widgetId,
      format: 'csv',
    });
    const lines = (await readFile(file.filePath, 'utf8')).slice(1).trim().split('\n');
    await rm(file.filePath);
    return lines.slice(1).map((l) => l.split(','));
  };

  it('csv: only the rows the row rule lets through, the masked column as the mask; a hidden field is refused', async () => {
    const viewer = big.cast.users.viewer.id;
    ok(
      await api.put(
        `/api/users/${viewer}/attributes`,
        { attributes: { product: ['чай', 'кофе'] } },
        big.cast.tokens.sysadmin,
      ),
    );
    ok(
      await api.post(
        `/api/dataset/${big.datasetId}/rls-rules`,
        { operator: 'in', field_id: fieldId('product'), attribute: 'product', user_ids: [viewer] },
        big.cast.tokens.wsAdmin,
      ),
    );
    await cls('mask', 'amount');
    const rows = await csvOf();
    const kept = big.sales.filter((s) => s.product === 'чай' || s.product === 'кофе');
    expect(kept.length).toBeGreaterThan(2_000);
    expect(rows).toHaveLength(kept.length);
    expect(rows.map((r) => Number(r[0]))).toEqual(kept.map((s) => s.id));
    expect(new Set(rows.map((r) => r[1]))).toEqual(new Set(['чай', 'кофе']));
    rows.forEach((r, i) => expect(r[3]).toBe(kept[i].amount === null ? '' : '***'));

    await cls('hide', 'product');
    // Refused exactly as a field the dataset lacks (the shelf reading it names the missing field).
    const refused = (await csvOf().catch((e: unknown) => e)) as AppError;
    expect(refused).toBeInstanceOf(AppError);
    expect(refused.status).toBe(422);
    expect(Object.values(refused.fieldErrors ?? {}).join(' ')).toMatch(/sales\.product/);
  }, 120_000);
});
