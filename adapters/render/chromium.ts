import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/*
 * Headless Chromium for the export render pages (PDF, PNG): playwright-core drives the Debian `chromium` found by
 * CHROMIUM_PATH or on PATH (/usr/bin/chromium). No browser is downloaded: without one, pdf/png exports fail with
 * a clear message and csv/xlsx still work.
 */

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

function chromiumPath(): string | null {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export interface RenderRequest {
  /** The page's address (the app's own render route). */
  url: string;
  /** Sent with every request of the page (the X-Render-Token). */
  headers: Record<string, string>;
  kind: 'pdf' | 'png';
  out: string;
  /** The page sets body[data-state=ready|error] when it has drawn everything. */
  timeoutMs: number;
  width: number;
  signal?: AbortSignal;
}

/** Opens the page, waits for it to finish drawing, prints or screenshots it; answers the page's own error if any. */
export async function renderPage(req: RenderRequest): Promise<void> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('Chromium не найден: экспорт в PDF и PNG недоступен (задайте CHROMIUM_PATH)');
  // playwright-core loads on the first PDF or PNG export, not with the server.
  const { chromium } = await import('playwright-core');
  const browser: Browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
    timeout: req.timeoutMs,
  });
  const onAbort = () => void browser.close().catch(() => undefined);
  req.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const context = await browser.newContext({ viewport: { width: req.width, height: 800 }, locale: 'ru-RU' });
    await context.setExtraHTTPHeaders(req.headers);
    const page = await context.newPage();
    await page.goto(req.url, { timeout: req.timeoutMs });
    await page.waitForSelector('body[data-state=ready], body[data-state=error]', { timeout: req.timeoutMs });
    const state = await page.getAttribute('body', 'data-state');
    if (state === 'error') throw new Error((await page.textContent('#error')) || 'Страница не отрисована');
    if (req.kind === 'pdf') await page.pdf({ path: req.out, format: 'A4', printBackground: true });
    else await page.screenshot({ path: req.out, fullPage: true });
  } finally {
    req.signal?.removeEventListener('abort', onAbort);
    await browser.close().catch(() => undefined);
  }
}
