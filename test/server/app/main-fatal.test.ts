import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../db/embedded';
import { repoRoot as root, runningPostmaster, stopLeftovers } from './server-process';

/**
 * A fault nobody handled (a thrown error in a callback, a rejected promise nobody awaited) is logged with its stack
 * and ends the server with exit code 1 after an orderly shutdown (HTTP, then the pool, then the embedded
 * PostgreSQL): never swallowed, never a half-alive process. The fault is injected by a preloaded module once the
 * server answers.
 */

let dataDir = '';
let probe = '';
const children: ChildProcess[] = [];

afterAll(() => stopLeftovers(children, dataDir));

const PROBE = `
const port = process.env.PORT;
const timer = setInterval(async () => {
  try {
    const res = await fetch('http://127.0.0.1:' + port + '/api/v3/api-docs');
    if (res.status !== 200) return;
    clearInterval(timer);
    setTimeout(() => {
      if (process.env.FAULT === 'rejection') Promise.reject(new Error('fatal-probe-rejection'));
      else throw new Error('fatal-probe-exception');
    }, 50);
  } catch {}
}, 200);
`;

async function runUntilExit(fault: 'exception' | 'rejection'): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', probe, 'server/app/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: 'Fatal-probe-1',
      FAULT: fault,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { code, output };
}

describe('server process: unhandled faults', () => {
  it.each(['exception', 'rejection'] as const)(
    'an unhandled %s is logged with its stack and exits 1 after shutting down',
    async (fault) => {
      if (!dataDir) dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-fatal-'));
      if (!probe) {
        probe = path.join(dataDir, 'fatal-probe.mjs');
        await fs.writeFile(probe, PROBE);
      }
      const { code, output } = await runUntilExit(fault);
      expect(code, output).toBe(1);
      const line = output.split('\n').find((l) => l.startsWith('{') && l.includes(`fatal-probe-${fault}`));
      expect(line, output).toBeDefined();
      const logged = JSON.parse(line!) as { level: number; msg: string; err: { message: string; stack: string } };
      expect(logged).toMatchObject({
        level: 60,
        msg: expect.stringMatching(/^(uncaughtException|unhandledRejection): shutting down$/),
      });
      expect(logged.err.stack).toMatch(/fatal-probe\.mjs/);
      // the orderly shutdown ran: the embedded PostgreSQL is stopped
      expect(runningPostmaster(dataDir)).toBeUndefined();
    },
    120_000,
  );
});
