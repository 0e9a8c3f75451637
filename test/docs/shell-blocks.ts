import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/*
 * Runs the shell walkthrough of a Markdown page as a reader does: every ```sh block, in order, in ONE bash process,
 * so the variables one block sets are there for the next. Blocks fenced otherwise (```console for starting the
 * server, ```json, ...) are not run. A ```text block that follows a ```sh block with nothing but blank lines between
 * is that block's output as the page shows it, and must be exactly what the block printed.
 *
 * The script runs under `set -euo pipefail`: the first failing command (a curl that cannot connect, an error
 * envelope refused by the page's own `pick`, a psql error, an unset variable) ends the run, and an ERR trap names the
 * command and the block's line in the page.
 */

export interface ShellBlock {
  /** 1-based line of the opening fence in the page. */
  line: number;
  code: string;
  /** The ```text block right after it, if any. */
  expected?: string;
}

export function shellBlocks(markdown: string): ShellBlock[] {
  const fences: { info: string; line: number; body: string; gapBefore: string }[] = [];
  const lines = markdown.split('\n');
  let open: { info: string; line: number; body: string[] } | null = null;
  let gap: string[] = [];
  lines.forEach((text, i) => {
    if (open) {
      if (/^```\s*$/.test(text)) {
        fences.push({ info: open.info, line: open.line, body: open.body.join('\n'), gapBefore: gap.join('\n') });
        open = null;
        gap = [];
      } else open.body.push(text);
      return;
    }
    const fence = /^```(\S*)\s*$/.exec(text);
    if (fence) open = { info: fence[1], line: i + 1, body: [] };
    else gap.push(text);
  });
  if (open) throw new Error(`unclosed code fence at line ${(open as { line: number }).line}`);
  const blocks: ShellBlock[] = [];
  fences.forEach((f, i) => {
    if (f.info !== 'sh') return;
    const next = fences[i + 1];
    const adjacent = next?.info === 'text' && next.gapBefore.trim() === '';
    blocks.push({ line: f.line, code: f.body, expected: adjacent ? next.body : undefined });
  });
  return blocks;
}

export interface WalkthroughRun {
  /** What each block printed on stdout, in order (blocks after a failure: absent). */
  outputs: string[];
  /** Variables named in `report`, as the shell held them at the end. */
  vars: Record<string, string>;
}

/**
 * Runs the blocks; fails with the failing command, the page's line, stderr and every block's output so far.
 * `env` is added to the environment (BASE_URL, ADMIN_PASSWORD, ...); `report` names shell variables to hand back.
 */
export async function runBlocks(
  blocks: ShellBlock[],
  opts: { page: string; env: Record<string, string>; report: string[]; timeoutMs: number },
): Promise<WalkthroughRun> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'walkthrough-'));
  try {
    const script = [
      'set -euo pipefail',
      `trap 'echo "walkthrough: \\"$BASH_COMMAND\\" failed (exit $?) in the block at ${opts.page}:$QS_LINE" >&2' ERR`,
      ...blocks.map((b, i) => `QS_LINE=${b.line}\n{\n${b.code}\n} > "$QS_OUT/${i}.out"`),
      `{ ${opts.report.map((v) => `printf '%s=%s\\n' ${v} "$${v}"`).join('; ')}; } > "$QS_OUT/vars"`,
    ].join('\n');
    const { code, stderr } = await runBash(script, { ...opts.env, QS_OUT: dir }, opts.timeoutMs);
    const outputs: string[] = [];
    for (let i = 0; i < blocks.length; i++) {
      const text = await fs.readFile(path.join(dir, `${i}.out`), 'utf8').catch(() => undefined);
      if (text === undefined) break;
      outputs.push(text);
    }
    if (code !== 0) {
      const shown = outputs.map((o, i) => `--- stdout of the block at ${opts.page}:${blocks[i].line}\n${o}`).join('');
      throw new Error(`the walkthrough of ${opts.page} failed (${code}):\n--- stderr\n${stderr}\n${shown}`);
    }
    const vars: Record<string, string> = {};
    for (const line of (await fs.readFile(path.join(dir, 'vars'), 'utf8')).split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) vars[line.slice(0, eq)] = line.slice(eq + 1);
    }
    return { outputs, vars };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function runBash(
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? `killed by ${signal} (timeout ${timeoutMs} ms?)`, stderr });
    });
  });
}
