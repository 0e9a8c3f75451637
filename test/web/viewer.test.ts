import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { shareLinks } from '../../db/schema/share-links';
import { useTestApp } from '../support/app';
import { ok } from '../support/rest';
import {
  createShareWorld,
  issueLink,
  qtyByProduct,
  type ShareLink,
  type ShareWorld,
} from '../routers/public-link/world';
import { launchChromium } from './chromium';

/*
 * The share-link viewer page (/s/{token}) in a real headless Chromium against the listening app: it draws the
 * dashboard with the right numbers (read from the ECharts instances and the DOM, and seen in the screenshot's
 * pixels: each bar a solid stretch of its colour from the zero line to its value, heights in proportion to the
 * numbers; the line at each month's height), its selector filters, its tabs switch, the password form opens a protected link, and dead or closed
 * links get their own page.
 */

// The browser globals the page functions below use: they run in Chromium, and this project is typed without the DOM
// library (module-local declarations, seen by nothing else).
declare const document: any;
declare const window: any;
declare const Image: any;

const { t, api } = useTestApp();
let w: ShareWorld;
let browser: Browser;
let base: string;

beforeAll(async () => {
  [w, browser] = await Promise.all([createShareWorld(t, api), launchChromium()]);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 15 * 60_000);
afterAll(async () => {
  await browser?.close();
  await w?.dispose();
});

async function open(token: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(`${base}/s/${token}`);
  (page as Page & { errors: string[] }).errors = errors;
  return page;
}
const settled = (page: Page) =>
  page.waitForFunction(() => ['ready', 'message', 'password'].includes(document.body.dataset.state ?? ''));

/** The option ECharts holds for a widget's chart (what it draws). */
const optionOf = (page: Page, widgetId: number) =>
  page.evaluate((id) => {
    const chart = (
      window as unknown as { shareViewer: { charts: Map<number, { getOption(): unknown }> } }
    ).shareViewer.charts.get(id);
    return chart ? (chart.getOption() as { xAxis?: { data: string[] }[]; series: { data: unknown[] }[] }) : null;
  }, widgetId);

/** Coloured (not white or grey) pixels in a PNG screenshot, counted by the browser decoding it. */
async function colouredPixels(page: Page, png: Buffer): Promise<number> {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const { data } = ctx.getImageData(0, 0, img.width, img.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) n++;
    }
    return n;
  }, png.toString('base64'));
}

type Rgb = [number, number, number];

/** Where ECharts puts the given values of a chart's first series (canvas pixels), its zero line and its colour. */
async function plotOf(page: Page, widgetId: number, values: number[]) {
  const plot = await page.evaluate(
    ([id, vs]) => {
      const chart = window.shareViewer.charts.get(id);
      const at = (i: number, v: number): [number, number] => chart.convertToPixel({ seriesIndex: 0 }, [i, v]);
      return {
        points: vs.map((v: number, i: number) => at(i, v)),
        zero: at(0, 0)[1],
        colour: String(chart.getVisual({ seriesIndex: 0, dataIndex: 0 }, 'color')),
      };
    },
    [widgetId, values] as const,
  );
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(plot.colour);
  if (!hex) throw new Error(`unexpected series colour ${plot.colour}`);
  const colour = [1, 2, 3].map((k) => parseInt(hex[k], 16)) as Rgb;
  return { points: plot.points as [number, number][], zero: plot.zero as number, colour };
}

/**
 * The runs of pixels of about `colour` in the given columns of a PNG screenshot (decoded by the browser):
 * for each x, the [first y, last y] of every vertical stretch of that colour.
 */
async function colourRuns(page: Page, png: Buffer, xs: number[], colour: Rgb): Promise<[number, number][][]> {
  return page.evaluate(
    async ([b64, columns, [r0, g0, b0]]) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.width;
      canvas.height = img.height;
      const ctx = canvas.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const { data } = ctx.getImageData(0, 0, img.width, img.height);
      return columns.map((x: number) => {
        const runs: [number, number][] = [];
        for (let y = 0; y < img.height; y++) {
          const i = (y * img.width + Math.round(x)) * 4;
          const near = Math.max(Math.abs(data[i] - r0), Math.abs(data[i + 1] - g0), Math.abs(data[i + 2] - b0)) <= 40;
          if (!near) continue;
          const last = runs[runs.length - 1];
          if (last && last[1] === y - 1) last[1] = y;
          else runs.push([y, y]);
        }
        return runs;
      });
    },
    [png.toString('base64'), xs, colour] as const,
  );
}

/** One animation frame or two, so that the canvas holds what the last setOption drew. */
const painted = (page: Page) =>
  page.evaluate(() => new Promise((done) => window.requestAnimationFrame(() => window.requestAnimationFrame(done))));

/**
 * The drawn bars of a bar chart, read from its canvas screenshot: at each bar's place a solid stretch of the series
 * colour from the zero line up to the value, heights in proportion to the expected numbers, and gaps between bars.
 */
async function expectBarsDrawn(page: Page, widgetId: number, values: number[]) {
  await painted(page);
  const { points, zero, colour } = await plotOf(page, widgetId, values);
  const png = await page.locator(`[data-widget-id="${widgetId}"] canvas`).screenshot();
  const gaps = points.slice(1).map(([x], i) => (x + points[i][0]) / 2);
  const runs = await colourRuns(page, png, [...points.map(([x]) => x), ...gaps], colour);
  const bars = points.map(([, top], i) => {
    const mid = (top + zero) / 2;
    const bar = runs[i].find(([a, b]) => a <= mid && mid <= b);
    expect(bar, `bar ${i} is not drawn at its place`).toBeDefined();
    expect(Math.abs(bar![0] - top), `bar ${i} top ${bar![0]}, expected ${top}`).toBeLessThanOrEqual(2);
    expect(Math.abs(bar![1] - zero), `bar ${i} bottom ${bar![1]}, expected ${zero}`).toBeLessThanOrEqual(2);
    return bar![1] - bar![0] + 1;
  });
  const maxValue = Math.max(...values);
  const maxHeight = bars[values.indexOf(maxValue)];
  expect(maxHeight).toBeGreaterThan(50);
  for (const [i, h] of bars.entries())
    expect(Math.abs(h - (values[i] / maxValue) * maxHeight), `bar ${i}: ${h}px for ${values[i]}`).toBeLessThanOrEqual(
      3,
    );
  // Between two bars the colour does not reach down to the zero line: they are separate bars.
  for (const [i] of gaps.entries()) expect(runs[points.length + i].some(([, b]) => b >= zero - 2)).toBe(false);
}

describe('an open link', { timeout: 90_000 }, () => {
  let link: ShareLink;
  beforeAll(async () => {
    link = await issueLink(api, w);
  });

  it('draws the dashboard: title, tabs, a bar, a KPI and a pie with the right numbers, visible in the pixels', async () => {
    const page = await open(link.token!);
    await settled(page);
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('ready');
    expect(await page.textContent('#title')).toBe('Продажи');
    expect(await page.locator('.tabs button').allTextContents()).toEqual(['Главная', 'Подробно']);

    const expected = qtyByProduct(w.sales);
    const bar = (await optionOf(page, w.widgets.bar))!;
    expect(bar.xAxis![0].data).toEqual([...expected.keys()].sort());
    expect(bar.series[0].data).toEqual(bar.xAxis![0].data.map((p) => expected.get(p)));

    const total = w.sales.reduce((a, s) => a + s.qty, 0);
    expect(await page.getAttribute(`[data-widget-id="${w.widgets.kpi}"] .kpi-value`, 'data-value')).toBe(String(total));

    const pie = (await optionOf(page, w.widgets.pie))!;
    const slices = pie.series[0].data as { name: string; value: number }[];
    expect(slices.reduce((a, s) => a + s.value, 0)).toBe(total);
    expect(slices.map((s) => s.name).sort()).toEqual(['Восток', 'Север', 'Юг']);

    // Screenshot level: the bars are drawn where and as high as their numbers say.
    await expectBarsDrawn(
      page,
      w.widgets.bar,
      [...expected.keys()].sort().map((p) => expected.get(p)!),
    );
    // The pie tile holds drawn colour, and an empty tile would not.
    const barShot = await page.locator(`[data-widget-id="${w.widgets.bar}"] canvas`).screenshot();
    const pieShot = await page.locator(`[data-widget-id="${w.widgets.pie}"] canvas`).screenshot();
    expect(await colouredPixels(page, barShot)).toBeGreaterThan(2_000);
    expect(await colouredPixels(page, pieShot)).toBeGreaterThan(2_000);
    const title = await page.locator('#title').screenshot();
    expect(await colouredPixels(page, title)).toBeLessThan(50);
    expect((page as Page & { errors: string[] }).errors).toEqual([]);
    await page.close();
  });

  it('the selector filters the widgets it drives (bar and KPI), not the others', async () => {
    const page = await open(link.token!);
    await settled(page);
    const options = await page.locator('select[data-selector="product"] option').allTextContents();
    expect(options).toEqual(['Все', ...[...qtyByProduct(w.sales).keys()].sort()]);
    await page.selectOption('select[data-selector="product"]', { label: 'чай' });
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    const tea = qtyByProduct(w.sales).get('чай')!;
    await page.waitForFunction(
      ([id, v]) => document.querySelector(`[data-widget-id="${id}"] .kpi-value`)?.getAttribute('data-value') === v,
      [w.widgets.kpi, String(tea)] as const,
    );
    const bar = (await optionOf(page, w.widgets.bar))!;
    expect(bar.xAxis![0].data).toEqual(['чай']);
    expect(bar.series[0].data).toEqual([tea]);
    await expectBarsDrawn(page, w.widgets.bar, [tea]);
    const pie = (await optionOf(page, w.widgets.pie))!;
    const total = w.sales.reduce((a, s) => a + s.qty, 0);
    expect((pie.series[0].data as { value: number }[]).reduce((a, s) => a + s.value, 0)).toBe(total);
    await page.close();
  });

  it('the second tab shows the line chart and the table', async () => {
    const page = await open(link.token!);
    await settled(page);
    await page.click('.tabs button[data-tab="more"]');
    await page.waitForSelector(`[data-widget-id="${w.widgets.table}"] table`);
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    const line = (await optionOf(page, w.widgets.line))!;
    const byMonth = new Map<number, number>();
    for (const s of w.sales) {
      const m = Number(s.sold_on.slice(5, 7));
      byMonth.set(m, (byMonth.get(m) ?? 0) + s.qty);
    }
    const months = [...byMonth.keys()].sort((a, b) => a - b).map((m) => byMonth.get(m)!);
    expect(line.series[0].data).toEqual(months);
    // Screenshot level: in the column of each month the line's colour is at the height of its number, and nowhere
    // else in the plot; the heights above the zero line are in proportion to the numbers.
    await painted(page);
    const { points, zero, colour } = await plotOf(page, w.widgets.line, months);
    const png = await page.locator(`[data-widget-id="${w.widgets.line}"] canvas`).screenshot();
    const runs = await colourRuns(
      page,
      png,
      points.map(([x]) => x),
      colour,
    );
    const drawnAt = points.map(([, y], i) => {
      const inPlot = runs[i].filter(([a]) => a > 32 && a < zero - 1); // below the legend, above the x axis
      expect(inPlot.length, `month ${i}: no line drawn`).toBeGreaterThan(0);
      for (const [a, b] of inPlot) {
        expect(Math.abs(a - y), `month ${i}: line colour at ${a}, expected near ${y}`).toBeLessThanOrEqual(6);
        expect(Math.abs(b - y), `month ${i}: line colour at ${b}, expected near ${y}`).toBeLessThanOrEqual(6);
      }
      const ys = inPlot.flatMap(([a, b]) => [a, b]);
      return (Math.min(...ys) + Math.max(...ys)) / 2;
    });
    const top = Math.max(...months);
    const topHeight = zero - drawnAt[months.indexOf(top)];
    expect(topHeight).toBeGreaterThan(50);
    for (const [i, y] of drawnAt.entries())
      expect(Math.abs(zero - y - (months[i] / top) * topHeight), `month ${i}`).toBeLessThanOrEqual(3);
    const cells = await page
      .locator(`[data-widget-id="${w.widgets.table}"] tbody tr`)
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(cells).toEqual(
      [...qtyByProduct(w.sales)].sort(([a], [b]) => (a < b ? -1 : 1)).map(([p, q]) => [p, String(q)]),
    );
    await page.close();
  });
});

describe('password, closed and dead links', { timeout: 90_000 }, () => {
  it('the password form: a wrong password says so, the right one opens the dashboard', async () => {
    const link = await issueLink(api, w, { password: 'пароль-для-браузера-1' });
    const page = await open(link.token!);
    await settled(page);
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('password');
    expect(await page.locator('.grid').count()).toBe(0);
    await page.fill('input[name="password"]', 'не тот пароль');
    await page.click('form.password button');
    await page.waitForFunction(() => document.querySelector('.form-error')?.textContent === 'Неверный пароль');
    await page.fill('input[name="password"]', 'пароль-для-браузера-1');
    await page.click('form.password button');
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    expect(await page.textContent('#title')).toBe('Продажи');
    expect((await optionOf(page, w.widgets.bar))!.series[0].data.length).toBe(qtyByProduct(w.sales).size);
    // A reload keeps the grant of this tab.
    await page.reload();
    await settled(page);
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('ready');
    await page.close();
  });

  it('suspended, expired, revoked and unknown links get their own page', async () => {
    const suspended = await issueLink(api, w);
    ok(await api.post(`${w.linksPath}/${suspended.link_id}/suspend`, undefined, w.owner));
    const expired = await issueLink(api, w);
    await t.deps.db
      .update(shareLinks)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(shareLinks.id, expired.link_id));
    const revoked = await issueLink(api, w);
    ok(await api.delete(`${w.linksPath}/${revoked.link_id}`, w.owner));
    const cases: [string, string, string][] = [
      [suspended.token!, 'suspended', 'Ссылка приостановлена'],
      [expired.token!, 'expired', 'Срок действия ссылки истёк'],
      [revoked.token!, 'gone', 'Ссылка не найдена'],
      ['G'.repeat(43), 'gone', 'Ссылка не найдена'],
    ];
    for (const [token, kind, heading] of cases) {
      const page = await open(token);
      await settled(page);
      expect(await page.evaluate(() => document.body.dataset.message), token).toBe(kind);
      expect(await page.textContent('.message h2')).toBe(heading);
      await page.close();
    }
  });
});
