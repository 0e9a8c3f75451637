/**
 * Compiles the server to dist/main.js (one ESM bundle of our own code; npm packages stay external and load from
 * node_modules), so that `npm start` runs plain JavaScript instead of compiling TypeScript at every start.
 *
 *   node scripts/build.mjs             build
 *   node scripts/build.mjs --if-stale  build only when the sources differ from the last build (what `npm start` runs)
 *
 * Staleness is a hash over every file of the source folders (not only the ones the last bundle imported: a new
 * migration is read at run time, not imported). dist/migrations is a link to db/migrations, where the bundled
 * db/migrate.ts looks for them.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const stampFile = path.join(dist, 'main.stamp');
const SOURCE_DIRS = ['server', 'routers', 'db', 'adapters'];
const SOURCE_FILES = ['package.json', 'tsconfig.json', 'scripts/build.mjs'];

const BUNDLED = [
  'drizzle-orm',
  'zod',
  'zod-openapi',
  'trpc-to-openapi',
  '@trpc/server',
  'superjson',
  'jose',
  'chevrotain',
];

/** Every installed package but BUNDLED (and their subpaths) stays an import. */
function externals() {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((n) => !BUNDLED.includes(n));
  return names.flatMap((n) => [n, `${n}/*`]);
}

function listFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

function sourcesHash() {
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

function readStamp() {
  try {
    return fs.readFileSync(stampFile, 'utf8').trim();
  } catch {
    return '';
  }
}

const ifStale = process.argv.includes('--if-stale');
const stamp = sourcesHash();
if (ifStale && readStamp() === stamp && fs.existsSync(path.join(dist, 'main.js'))) process.exit(0);

const { build } = await import('esbuild');
// A private folder per build, then renames into place: a start that runs while another one builds never reads a
// half-written bundle.
fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
const work = fs.mkdtempSync(path.join(root, '.tmp', 'build-'));
try {
  await build({
    entryPoints: [path.join(root, 'server/app/main.ts')],
    outfile: path.join(work, 'main.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // npm packages load from node_modules, except the pure-JavaScript ones listed in BUNDLED: drizzle-orm alone
    // costs Node 24 over a second and ~80 MB at start when loaded file by file (every one of its modules re-reads
    // its 180 KB package.json).
    external: externals(),
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'warning',
  });
  fs.mkdirSync(dist, { recursive: true });
  fs.renameSync(path.join(work, 'main.js.map'), path.join(dist, 'main.js.map'));
  fs.renameSync(path.join(work, 'main.js'), path.join(dist, 'main.js'));
  const link = path.join(dist, 'migrations');
  if (!fs.existsSync(link)) {
    fs.symlinkSync(path.join('..', 'db', 'migrations'), path.join(work, 'migrations'));
    fs.renameSync(path.join(work, 'migrations'), link);
  }
  fs.writeFileSync(path.join(work, 'main.stamp'), `${stamp}\n`);
  fs.renameSync(path.join(work, 'main.stamp'), stampFile);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
