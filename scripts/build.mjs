/**
 * Compiles the server into dist/<build>/ (ESM with code splitting: main.js plus chunks; our own code, npm packages
 * stay external and load from node_modules), so that `npm start` runs plain JavaScript instead of compiling
 * TypeScript at every start. What the server loads only on first use (`await import()`: DuckDB, exceljs, SAML, the
 * MCP SDK, the renderer, ...) lands in chunks an idle server never reads.
 *
 *   node scripts/build.mjs             build
 *   node scripts/build.mjs --if-stale  build only when the sources differ from the last build (scripts/build-stamp.mjs;
 *                                      `npm start` checks the same in its own process: scripts/start.mjs)
 *
 * dist/main.js is a small loader, rewritten by each build: it turns on Node's compile cache and imports the current
 * build. Each build keeps its own folder (the last three are kept) because a running server still imports its lazy
 * chunks from the build it started with: a rebuild beside it must not delete them.
 *
 * dist/<build>/migrations and dist/<build>/chunks/migrations are links to db/migrations, where the bundled
 * db/migrate.ts looks for them (beside the file it is bundled into).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildDirOf, dist, isBuilt, root, sourcesHash, sourcesStat, stampFile, stampText } from './build-stamp.mjs';

/** A build's folder: the first 16 hex digits of its sources' hash (only such folders are ever pruned). */
const BUILD_DIR = /^[0-9a-f]{16}$/;
const KEEP_BUILDS = 3;
/**
 * Node's compile cache (V8 code cache of every module, ours and node_modules'): a second start skips parsing and
 * compiling. In node_modules/.cache, the usual place for derived caches: not in DATA_DIR, whose contents are the
 * installation's data (backed up, possibly shared by several checkouts or none), while this cache belongs to the
 * code of this checkout; Node keys entries by file content, so a stale entry is never used.
 */
const COMPILE_CACHE = ['node_modules', '.cache', 'node-compile-cache'];

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

/**
 * Node built-ins that bundled code imports as ES modules but that load here through require. Importing `node:http` as
 * an ES module makes Node build its module namespace, which reads every export, lazy getters included: http's
 * WebSocket, CloseEvent and MessageEvent load undici, about 200 ms and 13 MB an idle server never needed (the tRPC
 * node-http adapter imports IncomingMessage). require() reads nothing it is not asked for. The shim exports every
 * data property of the module as it is in this Node (a getter's name is left out: importing one fails the build).
 */
const REQUIRED_BUILTINS = ['http'];

const requiredBuiltins = {
  name: 'required-builtins',
  setup(b) {
    const filter = new RegExp(`^(node:)?(${REQUIRED_BUILTINS.join('|')})$`);
    b.onResolve({ filter }, (args) =>
      args.kind === 'import-statement' || args.kind === 'dynamic-import'
        ? { path: args.path.replace(/^(node:)?/, 'node:'), namespace: 'required-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'required-builtin' }, (args) => {
      const mod = createRequire(import.meta.url)(args.path);
      const names = Object.entries(Object.getOwnPropertyDescriptors(mod))
        .filter(([name, d]) => 'value' in d && name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name))
        .map(([name]) => name);
      const lines = [`const m = require(${JSON.stringify(args.path)});`, 'export default m;'];
      for (const name of names) lines.push(`export const ${name} = m.${name};`);
      return { contents: lines.join('\n'), loader: 'js', resolveDir: root };
    });
  },
};

/** Every installed package but BUNDLED (and their subpaths) stays an import. */
function externals() {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((n) => !BUNDLED.includes(n));
  return names.flatMap((n) => [n, `${n}/*`]);
}

function loaderSource(buildDir) {
  return `// Written by scripts/build.mjs: the current build is ${buildDir}/.
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
module.enableCompileCache?.(path.join(root, ${COMPILE_CACHE.map((p) => JSON.stringify(p)).join(', ')}));
await import('./${buildDir}/main.js');
`;
}

/** Removes all but the newest KEEP_BUILDS build folders (the current one always stays). */
function pruneBuilds(current) {
  const builds = fs
    .readdirSync(dist, { withFileTypes: true })
    .filter((e) => e.isDirectory() && BUILD_DIR.test(e.name) && e.name !== current)
    .map((e) => ({ name: e.name, mtime: fs.statSync(path.join(dist, e.name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of builds.slice(KEEP_BUILDS - 1))
    fs.rmSync(path.join(dist, old.name), { recursive: true, force: true });
  // The single-bundle layout of earlier versions.
  for (const f of ['main.js.map', 'migrations']) fs.rmSync(path.join(dist, f), { force: true });
}

const ifStale = process.argv.includes('--if-stale');
// The identities first: a file written between the two makes them differ from what the hash read (see isCurrent).
const stat = sourcesStat();
const stamp = sourcesHash();
const buildDir = buildDirOf(stamp);
if (ifStale && isBuilt(stamp)) process.exit(0);

const { build } = await import('esbuild');
// A private folder per build, then renames into place: a start that runs while another one builds never reads a
// half-written bundle.
fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
const work = fs.mkdtempSync(path.join(root, '.tmp', 'build-'));
try {
  const out = path.join(work, buildDir);
  await build({
    entryPoints: [path.join(root, 'server/app/main.ts')],
    outdir: out,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // npm packages load from node_modules, except the pure-JavaScript ones listed in BUNDLED: drizzle-orm alone
    // costs Node 24 over a second and ~80 MB at start when loaded file by file (every one of its modules re-reads
    // its 180 KB package.json).
    external: externals(),
    // In every output file (the entry and each chunk): bundled CommonJS code calls require.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    plugins: [requiredBuiltins],
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'warning',
  });
  fs.symlinkSync(path.join('..', '..', 'db', 'migrations'), path.join(out, 'migrations'));
  // And beside the chunks: db/migrate.ts lands in one (server/app/main.ts loads the app by import()).
  const chunks = path.join(out, 'chunks');
  if (fs.existsSync(chunks))
    fs.symlinkSync(path.join('..', '..', '..', 'db', 'migrations'), path.join(chunks, 'migrations'));
  fs.mkdirSync(dist, { recursive: true });
  const target = path.join(dist, buildDir);
  // The same sources built by a concurrent start: its folder is as good as this one.
  if (!fs.existsSync(target)) fs.renameSync(out, target);
  fs.writeFileSync(path.join(work, 'main.js'), loaderSource(buildDir));
  fs.renameSync(path.join(work, 'main.js'), path.join(dist, 'main.js'));
  fs.writeFileSync(path.join(work, 'main.stamp'), stampText(stamp, stat));
  fs.renameSync(path.join(work, 'main.stamp'), stampFile);
  pruneBuilds(buildDir);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
