/**
 * Whether dist/ holds the build of the current sources: shared by scripts/build.mjs (which builds when not) and
 * scripts/start.mjs (`npm start`, which runs the build then and only then, so that an ordinary restart starts one
 * node process, not two).
 *
 * Staleness is a hash over every file of the source folders (not only the ones the last bundle imported: a new
 * migration is read at run time, not imported), about 30 ms for the ~500 files.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const dist = path.join(root, 'dist');
export const stampFile = path.join(dist, 'main.stamp');
const SOURCE_DIRS = ['server', 'routers', 'db', 'adapters'];
const SOURCE_FILES = ['package.json', 'tsconfig.json', 'scripts/build.mjs', 'scripts/build-stamp.mjs'];

function listFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

export function sourcesHash() {
  const files = [
    ...SOURCE_DIRS.flatMap((d) => listFiles(path.join(root, d))),
    ...SOURCE_FILES.map((f) => path.join(root, f)),
  ];
  const hash = crypto.createHash('sha256');
  for (const f of files.map((f) => path.relative(root, f)).sort()) {
    hash.update(`${f}\0`);
    hash.update(fs.readFileSync(path.join(root, f)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** A build's folder in dist/: the first 16 hex digits of its sources' hash. */
export const buildDirOf = (stamp) => stamp.slice(0, 16);

function readStamp() {
  try {
    return fs.readFileSync(stampFile, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Whether dist/ is the complete build of the sources whose hash is `stamp` (its loader and its folder). */
export function isBuilt(stamp) {
  return (
    readStamp() === stamp &&
    fs.existsSync(path.join(dist, buildDirOf(stamp), 'main.js')) &&
    fs.existsSync(path.join(dist, 'main.js'))
  );
}
