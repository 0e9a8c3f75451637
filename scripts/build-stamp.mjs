/**
 * Whether dist/ holds the build of the current sources: shared by scripts/build.mjs (which builds when not) and
 * scripts/start.mjs (`npm start`, which runs the build then and only then, so that an ordinary restart starts one
 * node process, not two).
 *
 * Staleness is a hash over every file of the source folders (not only the ones the last bundle imported: a new
 * migration is read at run time, not imported), 56-61 ms for the ~500 files at a start on a slow machine. The stamp
 * also records the files' identities as stat gives them (size, inode, modification and change times), taken before
 * the hash: while they are unchanged the contents are not read again (readdir and stat only). Any write to a file
 * moves its change time, which no copy or checkout can set back, so an edited file is always hashed.
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

/** Every source file, relative to the root, sorted. */
function sourceFiles() {
  const files = [
    ...SOURCE_DIRS.flatMap((d) => listFiles(path.join(root, d))),
    ...SOURCE_FILES.map((f) => path.join(root, f)),
  ];
  return files.map((f) => path.relative(root, f)).sort();
}

export function sourcesHash() {
  const hash = crypto.createHash('sha256');
  for (const f of sourceFiles()) {
    hash.update(`${f}\0`);
    hash.update(fs.readFileSync(path.join(root, f)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The source files' identities without their contents (see above): what a stamp's second line records. */
export function sourcesStat() {
  const hash = crypto.createHash('sha256');
  for (const f of sourceFiles()) {
    const st = fs.statSync(path.join(root, f));
    hash.update(`${f}\0${st.size}\0${st.ino}\0${st.mtimeMs}\0${st.ctimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Writes the stamp of a build: its sources' hash, and their identities taken before that hash was. */
export function stampText(hash, stat) {
  return `${hash}\n${stat}\n`;
}

/**
 * Whether dist/ is the build of the current sources: by their identities when those are what the stamp recorded,
 * else by their contents' hash (then the identities are recorded, when dist/ can be written, for the next start).
 */
export function isCurrent() {
  const stat = sourcesStat();
  const [hash, recorded] = readStamp();
  if (recorded === stat && isBuilt(hash)) return true;
  const full = sourcesHash();
  if (!isBuilt(full)) return false;
  try {
    fs.writeFileSync(`${stampFile}.${process.pid}`, stampText(full, stat));
    fs.renameSync(`${stampFile}.${process.pid}`, stampFile);
  } catch {
    /* a read-only install: the hash is read again at each start */
  }
  return true;
}

/** A build's folder in dist/: the first 16 hex digits of its sources' hash. */
export const buildDirOf = (stamp) => stamp.slice(0, 16);

/** The stamp's sources hash and the identities recorded with it ('' when missing). */
function readStamp() {
  try {
    const [hash = '', stat = ''] = fs.readFileSync(stampFile, 'utf8').split('\n');
    return [hash.trim(), stat.trim()];
  } catch {
    return ['', ''];
  }
}

/** Whether dist/ is the complete build of the sources whose hash is `stamp` (its loader and its folder). */
export function isBuilt(stamp) {
  return (
    readStamp()[0] === stamp &&
    fs.existsSync(path.join(dist, buildDirOf(stamp), 'main.js')) &&
    fs.existsSync(path.join(dist, 'main.js'))
  );
}
