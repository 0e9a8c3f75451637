import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { publicDashboardOutput } from '../../routers/public-link/schemas';
import type { Envelope } from '../support/rest';
import { launchChromium } from '../web/chromium';
import { runBlocks, shellBlocks, type WalkthroughRun } from './shell-blocks';
import { startServer, type StartedServer } from './started-server';

/*
 * docs/quickstart.md is true: its ```sh blocks, run in order in one bash against a server started as `npm start`
 * starts it (fresh DATA_DIR, ADMIN_PASSWORD set), print what its ```text blocks say, and the share link they end with
 * opens in a headless Chromium on the dashboard with the bar chart of the data the page shows. When an operation the
 * page uses moves or changes its shape, a command fails and so does this test, with the command and its output.
 *
 * The page's demo table gets a random name here (the page reads TABLE from the environment), dropped at the end, so
 * runs never share it.
 */

// The browser globals the page functions below use: they run in Chromium (this project is typed without the DOM).
declare const document: any;
declare const window: any;

const PAGE = 'docs/quickstart.md';
const markdown = readFileSync(path.resolve(import.meta.dirname, '../..', PAGE), 'utf8');
const blocks = shellBlocks(markdown);
const table = `quickstart_${crypto.randomBytes(5).toString('hex')}`;
const adminPassword = `Quickstart-${crypto.randomBytes(6).toString('hex')}-1`;

let server: StartedServer | undefined;
let browser: Browser | undefined;
let run: WalkthroughRun;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer({ ADMIN_PASSWORD: adminPassword }), launchChromium()]);
}, 15 * 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  const db = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' });
  await db.connect();
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.end();
});

describe(PAGE, { timeout: 120_000 }, () => {
  it('its commands run in order against the started server and print what the page shows', async () => {
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    try {
      run = await runBlocks(blocks, {
        page: PAGE,
        env: { BASE_URL: server!.baseUrl, ADMIN_PASSWORD: adminPassword, TABLE: table },
        report: ['SHARE_TOKEN', 'WIDGET_ID'],
        timeoutMs: 90_000,
      });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- server output\n${server!.output()}`);
    }
    for (const [i, b] of blocks.entries())
      if (b.expected !== undefined)
        expect(run.outputs[i].trimEnd(), `output of the block at ${PAGE}:${b.line}`).toBe(b.expected.trimEnd());
    expect(run.vars.SHARE_TOKEN).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('the share link it prints opens on the dashboard with the bar chart of the data the page shows', async () => {
    expect(run, 'the walkthrough did not run').toBeDefined();
    const widgetId = Number(run.vars.WIDGET_ID);
    // What the page says the widget's data is: the expected output of the block that reads it.
    const dataBlock = blocks.find((b) => b.code.includes('/api/widget/$WIDGET_ID/data'));
    expect(dataBlock?.expected, `no block of ${PAGE} reads the widget's data with its output shown`).toBeDefined();
    const rows = dataBlock!
      .expected!.trim()
      .split('\n')
      .map((l) => l.split('\t'));

    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${server!.baseUrl}/s/${run.vars.SHARE_TOKEN}`);
    await page.waitForFunction(() => ['ready', 'message', 'password'].includes(document.body.dataset.state ?? ''));
    expect(await page.evaluate(() => document.body.dataset.state)).toBe('ready');

    // Names as the walkthrough saved them (read back through the public viewer API the page itself uses).
    const res = await fetch(`${server!.baseUrl}/api/public/link/${run.vars.SHARE_TOKEN}/dashboard`);
    const body = (await res.json()) as Envelope<z.output<typeof publicDashboardOutput>>;
    if (!body.success) throw new Error(`public dashboard: ${res.status} ${JSON.stringify(body)}`);
    const board = body.data;
    expect(await page.textContent('#title')).toBe(board.name);
    const tile = page.locator(`[data-widget-id="${widgetId}"]`);
    expect(await tile.getAttribute('data-kind')).toBe('bar');
    expect(await tile.locator('h3').textContent()).toBe(board.widgets.find((w) => w.id === widgetId)?.name);
    expect(await tile.locator('.error').count()).toBe(0);
    const box = await tile.locator('canvas').first().boundingBox();
    expect(box?.width).toBeGreaterThan(100);
    expect(box?.height).toBeGreaterThan(100);

    const option = await page.evaluate((id) => {
      const chart = window.shareViewer.charts.get(id);
      return chart ? chart.getOption() : null;
    }, widgetId);
    expect(option, 'no chart drawn for the widget').not.toBeNull();
    expect(option.xAxis[0].data).toEqual(rows.map(([category]) => category));
    expect(option.series[0].data).toEqual(rows.map(([, value]) => Number(value)));
    expect(errors).toEqual([]);
    await page.close();
  });
});
