import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import type { ParsedMail } from 'mailparser';
import { beforeAll, describe, expect, it } from 'vitest';
import { pdfPageCount } from '../../../server/file-export/render-file';
import { createDashboardRow } from '../../support/factories';
import { ok } from '../../support/rest';
import { launchChromium } from '../../web/chromium';
import { pdfPages } from '../file-export/pdf-text';
import { ordersWidget, toOf, useMailingWorld, waitRun, type LetterPage, type MailingView } from './world';

/*
 * Every format of a mailing, sent through the loopback SMTP server and parsed with mailparser: xlsx and csv
 * attachments read back row by row, pdf and png drawn by a real headless Chromium (Debian chromium,
 * scripts/test-services/ensure-chromium.sh) opening the app's render pages, and inline images in the HTML body
 * (<img src="cid:...">, the image a related part with that cid; the inbox keeps cid links as sent). A dashboard mailing sends the dashboard as one page
 * (pdf) or its widgets' tables (csv).
 */

const world = useMailingWorld();
const { t, api, owner } = world;
let widgetId: number;
let emailsWidget: number;
let dashboardId: number;
/** A dashboard of a widget of the orders dataset and a total over another dataset of the same table. */
let slicedDashboardId: number;
let ordersDs: { id: number; fieldId: (name: string) => number };
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const DASHBOARD = 'Сводка заказов';

beforeAll(async () => {
  const browser = await launchChromium();
  await browser.close();
  process.env.RENDER_ORIGIN = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const ds = await world.ordersDataset();
  ordersDs = ds;
  widgetId = await ordersWidget(api, owner(), ds.id);
  emailsWidget = ok<{ id: number }>(
    await api.post(
      '/api/widget',
      {
        name: 'Менеджеры',
        dataset_id: ds.id,
        type: 'table',
        rows: [
          { id: 'r', sql: '[orders.region]', alias: 'Регион' },
          { id: 'e', sql: '[orders.manager_email]', alias: 'Почта' },
        ],
        sorts: [{ field_id: 'e', direction: 'asc' }],
      },
      owner(),
    ),
  ).id;
  const items = [widgetId, emailsWidget].map((id, i) => ({ widget_id: id, tab_id: null, x: 0, y: i * 6, w: 12, h: 6 }));
  dashboardId = (
    await createDashboardRow(t.deps, {
      workspaceId: world.cast.workspaceId,
      authorId: world.cast.users.editor.id,
      name: DASHBOARD,
      layout: { tabs: [], items, selectors: [], parameters: [] },
    })
  ).id;
  const other = await world.ordersDataset();
  const totalWidget = ok<{ id: number }>(
    await api.post(
      '/api/widget',
      {
        name: 'Итог',
        dataset_id: other.id,
        type: 'table',
        columns: [{ id: 't', sql: 'SUM([orders.amount])', alias: 'Всего заказов' }],
      },
      owner(),
    ),
  ).id;
  slicedDashboardId = (
    await createDashboardRow(t.deps, {
      workspaceId: world.cast.workspaceId,
      authorId: world.cast.users.editor.id,
      name: 'Срезы',
      layout: {
        tabs: [],
        items: [widgetId, totalWidget].map((id, i) => ({ widget_id: id, tab_id: null, x: 0, y: i * 6, w: 12, h: 6 })),
        selectors: [],
        parameters: [],
      },
    })
  ).id;
}, 600_000);

/** Saves a mailing to one address, runs it now and answers the one letter that arrived. */
async function sendOne(extra: Record<string, unknown>): Promise<ParsedMail> {
  const to = `${String(extra.format)}@example.test`;
  const m = ok<MailingView>(
    await api.post(
      '/api/mailings',
      {
        name: 'Форматы',
        workspace_id: world.cast.workspaceId,
        channel_id: world.channelId,
        subject: 'Заказы',
        body: 'Отчёт за неделю',
        recipients: { emails: [to] },
        ...extra,
      },
      owner(),
    ),
  );
  const before = world.inbox.letters.length;
  const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
  const run = await waitRun(api, owner(), m.id, run_id, 120_000);
  const letters = ok<LetterPage>(await api.get(`/api/mailings/${m.id}/runs/${run_id}/letters`, owner())).content;
  expect(run, JSON.stringify(letters)).toMatchObject({ state: 'succeeded', letters_sent: 1, letters_failed: 0 });
  const got = world.inbox.letters.slice(before);
  expect(got.map(toOf)).toEqual([[to]]);
  return got[0];
}

describe('mailing formats', () => {
  it('xlsx: the widget as a workbook, its rows read back', async () => {
    const mail = await sendOne({ widget_ids: [widgetId], format: 'xlsx' });
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['Продажи.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    ]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(mail.attachments[0].content as unknown as ArrayBuffer);
    const sheet = wb.worksheets[0];
    const rows: unknown[][] = [];
    sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    expect(rows).toEqual([
      ['Регион', 'Сумма'],
      ['east', 3],
      ['north', 15],
      ['south', 7],
    ]);
  });

  it("csv of a dashboard: one table per widget of the dashboard's layout", async () => {
    const mail = await sendOne({ dashboard_id: dashboardId, format: 'csv' });
    expect(mail.attachments.map((a) => [a.filename, a.contentType.split(';')[0]])).toEqual([
      ['Продажи.csv', 'text/csv'],
      ['Менеджеры.csv', 'text/csv'],
    ]);
    const lines = (i: number) =>
      mail.attachments[i].content
        .toString('utf8')
        .replace(/^\ufeff/, '')
        .trim()
        .split(/\r?\n/);
    expect(lines(0)).toEqual(['Регион,Сумма', 'east,3', 'north,15', 'south,7']);
    expect(lines(1)).toEqual([
      'Регион,Почта',
      'east,boss-e@example.test',
      'north,boss-n@example.test',
      'north,"boss-n@example.test, deputy-n@example.test"',
      'south,boss-s@example.test',
    ]);
  });

  it('pdf of a dashboard: the dashboard page as a PDF drawn by Chromium', { timeout: 180_000 }, async () => {
    const mail = await sendOne({ dashboard_id: dashboardId, format: 'pdf' });
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([[`${DASHBOARD}.pdf`, 'application/pdf']]);
    const pdf = mail.attachments[0].content;
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdfPageCount(pdf)).toBeGreaterThanOrEqual(1);
  });

  it(
    'a sliced dashboard pdf: each page shows its own slice of the slice dataset, other datasets whole',
    { timeout: 240_000 },
    async () => {
      const m = ok<MailingView>(
        await api.post(
          '/api/mailings',
          {
            name: 'Срезы дашборда',
            workspace_id: world.cast.workspaceId,
            dashboard_id: slicedDashboardId,
            format: 'pdf',
            channel_id: world.channelId,
            subject: 'Регион {{slice}}',
            slice: {
              dataset_id: ordersDs.id,
              field_id: ordersDs.fieldId('region'),
              recipient_field_id: ordersDs.fieldId('manager_email'),
            },
          },
          owner(),
        ),
      );
      const before = world.inbox.letters.length;
      const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
      const run = await waitRun(api, owner(), m.id, run_id, 200_000);
      expect(run).toMatchObject({ state: 'succeeded', letters_failed: 0 });
      const dir = await mkdtemp(path.join(tmpdir(), 'sliced-pdf-'));
      try {
        const pages = new Map<string, string>();
        for (const mail of world.inbox.letters.slice(before)) {
          const file = path.join(dir, `${pages.size}.pdf`);
          await writeFile(file, mail.attachments[0].content);
          pages.set(String(mail.subject), (await pdfPages(file)).join('\n').replace(/\s+/g, ' '));
        }
        expect([...pages.keys()].sort()).toEqual(['Регион east', 'Регион north', 'Регион south']);
        const sums: Record<string, number> = { east: 3, north: 15, south: 7 };
        for (const [region, sum] of Object.entries(sums)) {
          const text = pages.get(`Регион ${region}`)!;
          // The sliced widget: its own region and sum only.
          expect(text).toMatch(new RegExp(`${region} ${sum}\\b`));
          for (const other of Object.keys(sums).filter((r) => r !== region)) expect(text).not.toContain(other);
          // The widget of another dataset is not the slice's: the total of every region.
          expect(text).toMatch(/Всего заказов 25\b/);
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it('png of a widget: an image drawn by Chromium', { timeout: 180_000 }, async () => {
    const mail = await sendOne({ widget_ids: [widgetId], format: 'png' });
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([['Продажи.png', 'image/png']]);
    expect(mail.attachments[0].content.subarray(0, 8)).toEqual(PNG);
  });

  it(
    'inline: the HTML body shows the image by its cid, the image a related part with that cid',
    { timeout: 180_000 },
    async () => {
      const mail = await sendOne({ widget_ids: [widgetId], format: 'inline' });
      expect(mail.text?.trim()).toBe('Отчёт за неделю');
      const html = String(mail.html);
      const cids = [...html.matchAll(/<img src="cid:([^"]+)">/g)].map((x) => x[1]);
      expect(cids).toEqual(['image0@mailing']);
      expect(html).toContain('<p>Отчёт за неделю</p>');
      expect(mail.attachments.map((a) => [a.contentType, a.cid, a.related, a.contentDisposition])).toEqual([
        ['image/png', 'image0@mailing', true, 'inline'],
      ]);
      expect(mail.attachments[0].content.subarray(0, 8)).toEqual(PNG);
    },
  );
});
