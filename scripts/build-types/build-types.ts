/**
 * `npm run build:types`: the router's type as one declaration file, dist/types/app-router.d.ts, that a frontend
 * imports with only @trpc/client (and so @trpc/server) and superjson installed.
 *
 * 1. tsc emits the declarations of routers/index.ts; procedure inputs and outputs come out as plain structural types
 *    (what zod infers), so zod itself is not needed by the reader.
 * 2. The server's request context and the OpenAPI meta type are swapped for opaque stand-ins: a client never reads
 *    them, and following them would drag in the whole server (database, drivers) and trpc-to-openapi.
 * 3. dts-bundle-generator inlines whatever the server's own files still contribute and keeps @trpc/server external.
 * 4. The bundle is checked: no import but @trpc/server.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const work = path.join(root, 'dist/types-build');
const out = path.join(root, 'dist/types/app-router.d.ts');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);

const STAND_INS: [RegExp, string][] = [
  [/import\("\.\/context"\)\.Context/g, 'object'],
  [/import\("trpc-to-openapi"\)\.OpenApiMeta/g, 'Record<string, unknown>'],
];

rmSync(work, { recursive: true, force: true });
execFileSync(bin('tsc'), ['-p', path.join(root, 'scripts/build-types/tsconfig.json')], { stdio: 'inherit' });

const routerDts = path.join(work, 'routers/index.d.ts');
let text = readFileSync(routerDts, 'utf8');
for (const [pattern, replacement] of STAND_INS) {
  // A stand-in that matches nothing means a file moved: fail here rather than in dts-bundle-generator's type check.
  if (!text.match(pattern)) throw new Error(`build-types: ${pattern} no longer occurs in routers/index.d.ts`);
  text = text.replace(pattern, replacement);
}
writeFileSync(routerDts, text);
const entry = path.join(work, 'app-router.d.ts');
writeFileSync(entry, "import type { appRouter } from './routers/index';\nexport type AppRouter = typeof appRouter;\n");

mkdirSync(path.dirname(out), { recursive: true });
execFileSync(
  bin('dts-bundle-generator'),
  [
    '--silent',
    '--no-banner',
    '--external-imports',
    '@trpc/server',
    '--project',
    path.join(root, 'scripts/build-types/tsconfig.json'),
    '-o',
    out,
    entry,
  ],
  { stdio: 'inherit' },
);

const bundle = readFileSync(out, 'utf8');
const foreign = [...bundle.matchAll(/(?:from\s+|import\()["']([^"']+)["']/g)]
  .map((m) => m[1])
  .filter((spec) => spec !== '@trpc/server');
if (foreign.length) {
  console.error(
    `dist/types/app-router.d.ts still imports ${[...new Set(foreign)].join(', ')}: add a stand-in or inline it`,
  );
  process.exit(1);
}
rmSync(work, { recursive: true, force: true });
console.log(`dist/types/app-router.d.ts: ${(bundle.length / 1024).toFixed(0)} KiB`);
