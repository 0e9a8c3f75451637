import { readFile, rm } from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJobs } from '../../../db/schema/exports';
import { pdfPageCount } from '../../../server/file-export/render-file';
import { exportJobById } from '../../../server/file-export/store';
import { produceExport } from '../../../server/file-export/produce';
import { useTestApp } from '../../support/app';
import { createDashboardRow } from '../../support/factories';
import { launchChromium } from '../../web/chromium';
import { DEFAULT_LIMITS, putLimits, runExport } from './jobs';
import { pdfPages } from './pdf-text';
import { exportWorld, type ExportWorld } from './world';

/*
 * PDF and PNG through a real headless Chromium (Debian chromium, scripts/test-services/ensure-chromium.sh): the
 * render pages draw the widgets with the shared chart module; the job prints or screenshots them.
 */

const { t, api } = useTestApp();
let w: ExportWorld;
let browser: Browser;
let dashboardId: number;
let barId: number;
const DASHBOARD = 'Сводка продаж';

/** The PDF's document title (Chromium writes it to the Info dictionary as UTF-16BE, hex or literal). */
function pdfHasTitle(pdf: Buffer, title: string): boolean {
  const utf16 = Buffer.from(`\ufeff${title}`, 'utf16le').swap16();
  return pdf.includes(utf16) || pdf.toString('latin1').toUpperCase().includes(utf16.toString('hex').toUpperCase());
}

/** A dashboard of the editor's with the widgets one under another. */
async function dashboardOf(name: string, widgetIds: number[]): Promise<number> {
  const items = widgetIds.map((id, i) => ({ widget_id: id, tab_id: null, x: 0, y: i * 6, w: 12, h: 6 }));
  const row = await createDashboardRow(t.deps, {
    workspaceId: w.cast.workspaceId,
    authorId: w.cast.users.editor.id,
    name,
    layout: { tabs: [], items, selectors: [], parameters: [] },
  });
  return row.id;
}

beforeAll(async () => {
  [w, browser] = await Promise.all([exportWorld(t.deps, api, 24), launchChromium()]);
  process.env.RENDER_ORIGIN = await t.app.listen({ port: 0, host: '127.0.0.1' });
  barId = await w.widget({
    name: 'Выручка по товарам',
    type: 'bar',
    rows: [{ id: 'product', sql: '[sales.product]' }],
    columns: [{ id: 'amount', sql: 'SUM([sales.amount])' }],
    sorts: [],
  });
  dashboardId = await dashboardOf(DASHBOARD, [barId, w.widgetId]);
}, 600_000);
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

/**
 * The PNG's size and its pixels counted: not white, and saturated (max - min channel over 80: the chart's series
 * colours, which neither the text nor the grey table lines have).
 */
async function pngPixels(png: Buffer): Promise<{ width: number; height: number; coloured: number; saturated: number }> {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (b64: string) => {
      const g = globalThis as unknown as { Image: new () => any; document: any };
      const img = new g.Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const canvas = g.document.createElement('canvas');
      canvas.width = img.width;
      canvas.height = img.height;
      const c = canvas.getContext('2d');
      c.drawImage(img, 0, 0);
      const d: Uint8ClampedArray = c.getImageData(0, 0, img.width, img.height).data;
      let coloured = 0;
      let saturated = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) coloured++;
        if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 80) saturated++;
      }
      return { width: img.width, height: img.height, coloured, saturated };
    }, png.toString('base64'));
  } finally {
    await page.close();
  }
}

/** A page's text with its runs of white space as one space. */
const words = (page: string) => page.replace(/\s+/g, ' ').trim();

const producePng = async (objectType: 'widget' | 'dashboard', objectId: number) => {
  const out = await produceExport(t.deps, { ownerUserId: w.cast.users.viewer.id, objectType, objectId, format: 'png' });
  const png = await readFile(out.filePath);
  await rm(out.filePath);
  expect(png.subarray(1, 4).toString()).toBe('PNG');
  // The header's size is the decoded image's.
  const pixels = await pngPixels(png);
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([pixels.width, pixels.height]);
  return pixels;
};

describe('pdf and png exports', () => {
  it("pdf of a dashboard: its pages, its title, each tile's title and the numbers of its table", async () => {
    const job = await runExport(api, w.cast.tokens.viewer!, {
      object_type: 'dashboard',
      object_id: dashboardId,
      format: 'pdf',
    });
    expect(job.state, job.error ?? '').toBe('succeeded');
    expect(job.file_name).toBe(`${DASHBOARD}.pdf`);
    const file = await api.get(`/api/exports/${job.job_id}/file`, w.cast.tokens.viewer);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    // The job's file is in storage (the default store is this node's disk: read it in place).
    const path = t.deps.storage.localPath((await exportJobById(t.deps.db, job.job_id))!.filePath!)!;
    const pdf = await readFile(path);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfHasTitle(pdf, DASHBOARD)).toBe(true);
    // Two tiles of 320 px fit on one A4 page; the table shows its first rows (the tile clips the rest).
    const pages = (await pdfPages(path)).map(words);
    expect(pages).toHaveLength(1);
    expect(pdfPageCount(pdf)).toBe(1);
    expect(pages[0]).toMatch(
      new RegExp(`^${DASHBOARD} Выручка по товарам Продажи по дням id Товар Дата продажи Сумма 1 `),
    );
    for (const s of w.sales.slice(1, 11).filter((x) => x.amount !== null))
      expect(pages[0]).toContain(` ${s.id} ${s.product} ${s.sold_on} ${s.amount} `);
  }, 180_000);

  it('png of a table widget: the viewport width and drawn pixels', async () => {
    const png = await producePng('widget', w.widgetId);
    // The widget page's viewport (900 x 800): the content is shorter, so the full-page screenshot is the viewport.
    expect([png.width, png.height]).toEqual([900, 800]);
    expect(png.coloured).toBeGreaterThan(3_000);
    // Text and grey lines only: nothing in a chart colour.
    expect(png.saturated).toBeLessThan(200);
  }, 180_000);

  it('png of a bar chart widget: the viewport width and the bars drawn in their colour', async () => {
    const png = await producePng('widget', barId);
    expect([png.width, png.height]).toEqual([900, 800]);
    // Five bars of about 320 x 40 px and more in the series colour.
    expect(png.saturated).toBeGreaterThan(20_000);
  }, 180_000);

  it('pdf over max_pages fails naming the limit', async () => {
    const tiles = await Promise.all([1, 2, 3, 4, 5].map((i) => w.widget({ name: `Таблица ${i}` })));
    const long = await dashboardOf('Длинный дашборд', tiles);
    await putLimits(api, w.cast.tokens.sysadmin!, { max_pages: 1 });
    try {
      const job = await runExport(api, w.cast.tokens.viewer!, {
        object_type: 'dashboard',
        object_id: long,
        format: 'pdf',
      });
      expect(job.state).toBe('failed');
      expect(job.error).toBe('Превышен лимит экспорта max_pages: больше 1 страниц');
    } finally {
      await putLimits(api, w.cast.tokens.sysadmin!, DEFAULT_LIMITS);
    }
    const whole = await runExport(api, w.cast.tokens.viewer!, {
      object_type: 'dashboard',
      object_id: long,
      format: 'pdf',
    });
    expect(whole.state, whole.error ?? '').toBe('succeeded');
    const key = (await exportJobById(t.deps.db, whole.job_id))!.filePath!;
    const pages = (await pdfPages(t.deps.storage.localPath(key)!)).map(words);
    // Five tiles that may not break across pages: two A4 pages, the first tile on the first, the last on the last.
    expect(pages).toHaveLength(2);
    expect(pages[0]).toMatch(/^Длинный дашборд Таблица 1 id Товар/);
    expect(pages[1]).toContain('Таблица 5 id Товар');
  }, 180_000);

  it("a mailing's pdf (no export job) gets a job row that records its success", async () => {
    const out = await produceExport(t.deps, {
      ownerUserId: w.cast.users.editor.id,
      objectType: 'widget',
      objectId: barId,
      format: 'pdf',
    });
    await rm(out.filePath);
    const rows = await t.deps.db.select().from(exportJobs).where(eq(exportJobs.ownerId, w.cast.users.editor.id));
    expect(rows).toEqual([
      expect.objectContaining({ state: 'succeeded', progress: 100, error: null, objectId: barId }),
    ]);
  }, 180_000);
});
