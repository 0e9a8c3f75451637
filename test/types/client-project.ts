import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/*
 * A throwaway frontend project for the client-type tests: a temp folder whose node_modules holds only the packages
 * a frontend would install (symlinked from ours), compiled by tsc with strict settings.
 */

export const run = promisify(execFile);
export const root = path.resolve(import.meta.dirname, '../..');

export async function clientProject(prefix: string, packages: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  for (const pkg of packages) {
    await mkdir(path.dirname(path.join(dir, 'node_modules', pkg)), { recursive: true });
    await symlink(path.join(root, 'node_modules', pkg), path.join(dir, 'node_modules', pkg), 'dir');
  }
  return dir;
}

export async function compileClient(dir: string, files: string[]): Promise<{ ok: boolean; output: string }> {
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ESNext', 'DOM'],
        types: [],
        // Resolve inside this folder's node_modules only, not the server's behind the symlinks.
        preserveSymlinks: true,
        skipLibCheck: false,
      },
      files,
    }),
  );
  try {
    const { stdout } = await run(path.join(root, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir });
    return { ok: true, output: stdout };
  } catch (err) {
    return { ok: false, output: String((err as { stdout?: string }).stdout ?? err) };
  }
}

/** The line numbers of `file` that tsc reported errors on, ascending. */
export function reportedLines(output: string, file: string): number[] {
  const lines = new Set(
    [...output.matchAll(new RegExp(`^${file.replace('.', '\\.')}\\((\\d+),\\d+\\): error`, 'gm'))].map((m) =>
      Number(m[1]),
    ),
  );
  return [...lines].sort((a, b) => a - b);
}
