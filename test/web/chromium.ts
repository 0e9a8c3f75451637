import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';

/*
 * Headless Chromium for the browser tests: Debian's `chromium`, installed by scripts/test-services/ensure-chromium.sh
 * like the other test servers (paid once per machine). A machine where it cannot be installed fails the test: a
 * browser test that skips proves nothing.
 */
const script = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'scripts',
  'test-services',
  'ensure-chromium.sh',
);

export async function launchChromium(): Promise<Browser> {
  try {
    await promisify(execFile)('bash', [script], { timeout: 15 * 60_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`ensure-chromium.sh failed: ${e.stderr?.trim() || e.message}`);
  }
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
}
