/**
 * `npm start`: builds when the sources changed since the last build (scripts/build.mjs, in a process of its own), then
 * runs the current build in this process, with the node flags of the start command. An ordinary restart, with
 * nothing to build, is one node process: checking the build from a separate `node scripts/build.mjs --if-stale`
 * cost a whole second node start for a ~30 ms hash (bench:startup, second start: 898 -> 847 ms mean of 6 pairs).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isCurrent, root } from './build-stamp.mjs';

if (!isCurrent()) {
  // The build's own process: esbuild and the bundler's memory are not the server's.
  const built = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
// By its path, not a literal specifier: dist/ exists only once built (a clean clone's lint resolves imports).
await import(pathToFileURL(path.join(root, 'dist/main.js')).href);
