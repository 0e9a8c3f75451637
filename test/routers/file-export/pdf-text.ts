import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/*
 * The text of a PDF as Debian's pdftotext (poppler-utils) reads it, page by page: the export tests check what the
 * printed pages say. pdftotext is installed by scripts/test-services/ensure-poppler.sh like the other test tools; a
 * machine where it cannot be had fails the test.
 */
const run = promisify(execFile);
const script = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'scripts',
  'test-services',
  'ensure-poppler.sh',
);

let ready: Promise<string> | undefined;

function pdftotext(): Promise<string> {
  ready ??= run('bash', [script], { timeout: 15 * 60_000 }).then(
    () => process.env.PDFTOTEXT_PATH ?? '/usr/bin/pdftotext',
    (err: { stderr?: string; message: string }) => {
      throw new Error(`ensure-poppler.sh failed: ${err.stderr?.trim() || err.message}`);
    },
  );
  return ready;
}

/** The text of each page (pdftotext separates pages with a form feed). */
export async function pdfPages(file: string): Promise<string[]> {
  const { stdout } = await run(await pdftotext(), ['-layout', '-enc', 'UTF-8', file, '-'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.replace(/\f$/, '').split('\f');
}
