/**
 * The import directions of DESIGN.md section 2 ("Layout and layers"), checked by `npm run lint:deps`:
 *   REST adapter or /trpc -> routers/<area> -> server/<area> services -> {access, objects, query, the area's store}
 *   -> {query/compile, kernel, db, adapters}.
 * Type-only imports are seen (tsPreCompilationDeps) and named `type-only` where a rule lets them through.
 */

const fs = require('node:fs');
const path = require('node:path');

// The folders of server/ that are layers every area may use, not areas themselves.
// storage (files, extracts, exports in STORAGE_URL), cache (the optional Redis), cluster (the cache bus) and ops (the
// counters /metrics reads) are the node's edges every area reaches through one module each.
const LAYERS = 'app|kernel|query|objects|access|storage|cache|cluster|ops';
const AREAS = fs
  .readdirSync(path.join(__dirname, 'server'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !LAYERS.split('|').includes(entry.name))
  .map((entry) => entry.name);

// Service modules an area offers besides the one named after it: functions another area calls as a whole
// operation (revoke a user's tokens, hash a password, look an account up), not row internals. Adding a module here
// is the reviewed way to widen an area's surface.
const AREA_SERVICES = {
  auth: ['actor', 'passwords', 'refresh-tokens', 'login-throttle', 'session-tokens', 'login', 'opaque-tokens'],
  users: ['accounts'],
  service: ['dictionary', 'source-network', 'installation'],
  // The query run layer and the dataset tools reach a source through its area: a connector for a source row (secrets
  // opened, network policy applied), the one mapping of source failures, the catalogue of a source's tables.
  // Pipelines' substitution rules take settings "of the same make-up as the source of that type": the same
  // validation, secret rules, masked read and address policy as a source.
  // The AI assistant and the MCP server check SQL with the console's read-only plan and log what they run.
  'data-sources': [
    'connection',
    'connector-errors',
    'metadata',
    'settings',
    'network-policy',
    'sql-validation',
    'access-log',
  ],
  // The model a query compiles against, loaded by dataset id (the query layer caches it per version).
  // The AI assistant checks formulas as the schema editor does; the MCP server previews a dataset as the REST path.
  datasets: ['load-model', 'formulas', 'data'],
  // A widget's data as POST /api/widget/{id}/data reads it: dashboard data reads each of its widgets so.
  widgets: ['data'],
  // The public viewer of a share link reads the dashboard's layout and data as the dashboard area does, and finds the
  // link (token, grant, unlock) through the share-links area.
  dashboards: ['data', 'layout'],
  'share-links': ['link-access'],
  // Sources check that their kind is switched on and build their connections with the driver the kind picked.
  admin: ['source-types', 'drivers'],
  // Mailings attach the files an export makes (produceExport, with the mailing owner's rights).
  'file-export': ['produce'],
  // Rollups are built from the extract's current load and are fresh only while it stays current.
  etl: ['open-load'],
  // The query layer answers a read from a rollup: which ones are servable and their connectors, on the shared types.
  rollups: ['serving', 'types'],
  // The query layer answers reads from rollups: their shared types and the servable, fresh builds (open one).
  rollups: ['types', 'serving'],
  // Pipelines roll a deploy back by writing revisions' snapshots back (restore) and compare them (diff).
  revisions: ['restore', 'diff'],
};

// What one area may import of another: its store (tx-first cores), its views and messages, its service module named
// after the area (server/widgets/widgets.ts) and the modules in AREA_SERVICES. Anything else in an area folder is
// that area's internals.
const AREA_PUBLIC = [
  '^server/[^/]+/(store|views|messages)\\.ts$',
  `^server/(${AREAS.map((area) => `${area}/${area}`).join('|')})\\.ts$`,
  ...Object.entries(AREA_SERVICES).map(([area, modules]) => `^server/${area}/(${modules.join('|')})\\.ts$`),
];

// The owner of every table family (db/schema/<family>.ts -> server/<area>): only the owner imports the family file;
// any other area reads and writes those tables through the owner's store.ts, views.ts or services (AREA_PUBLIC), so a
// table's invariants (locks, edit times, caches dropped) live in one place. A list that shows another family's
// columns joins the subquery the owner's views.ts offers (userRef, groupRef, workspaceRef, datasetRef, sourceRef,
// dashboardRef) or asks the owner for a batch by ids, never a lookup per row; a hot single statement across families
// embeds the owners' SQL pieces (server/widgets/widget-load.ts). server/access (the one access policy) and
// server/objects (the object kinds table, the one object list) may import any family, and so may server/app
// (composition), though its first-start seeding goes through the owners' stores too. db/ itself is not checked
// (client.ts hands drizzle the index, family files reference each other's keys), test/ is not cruised, and scripts/
// is exempt: benchmarks set up their data directly.
const TABLE_OWNERS = {
  users: 'users',
  groups: 'groups',
  workspaces: 'workspaces',
  'auth-tokens': 'auth',
  'api-tokens': 'mcp-tokens',
  settings: 'service',
  'data-sources': 'data-sources',
  datasets: 'datasets',
  widgets: 'widgets',
  dashboards: 'dashboards',
  'object-rights': 'access',
  'dataset-rls-rules': 'access',
  'dataset-cls-rules': 'access',
  pipelines: 'pipelines',
  sso: 'sso',
  extracts: 'etl',
  notifications: 'notifications',
  'share-links': 'share-links',
  'driver-plugins': 'admin',
  mailings: 'mailings',
  'mail-channels': 'mail-channels',
  exports: 'file-export',
  rollups: 'rollups',
  revisions: 'revisions',
};
const ANY_FAMILY = ['access', 'objects', 'app'];

// A family file without an owner fails the lint: a new table family names its owner here first.
const unowned = fs
  .readdirSync(path.join(__dirname, 'db/schema'))
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((family) => family !== 'index' && !(family in TABLE_OWNERS));
if (unowned.length) throw new Error(`db/schema: no owner in TABLE_OWNERS for ${unowned.join(', ')}`);

const TABLE_OWNER_RULES = Object.entries(TABLE_OWNERS).map(([family, owner]) => ({
  name: `table-owner-${family}`,
  severity: 'error',
  comment:
    `db/schema/${family}.ts belongs to server/${owner}: other areas go through its store.ts, views.ts or services ` +
    '(TABLE_OWNERS in .dependency-cruiser.cjs says why).',
  from: { path: '^(server|routers|adapters)/', pathNot: `^server/(${[owner, ...ANY_FAMILY].join('|')})/` },
  to: { path: `^db/schema/${family}\\.ts$` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...TABLE_OWNER_RULES,
    {
      name: 'schema-index-only-in-db',
      severity: 'error',
      comment:
        'db/schema/index.ts is for drizzle (db/client.ts): code names the family file it reads, so TABLE_OWNERS can ' +
        'tell who touches which tables.',
      from: { pathNot: '^(db|test)/' },
      to: { path: '^db/schema/index\\.ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle of value imports makes module load order matter (a binding is undefined at import time).',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-circular-types',
      severity: 'error',
      comment:
        'A cycle through a type-only import still hides which side owns what. No exception: AppDeps names no ' +
        "area's type (areas keep their caches in slots of server/kernel/app-caches.ts, hooks and job kinds are " +
        'plugged in by server/app/start.ts).',
      from: {},
      to: { circular: true, via: { dependencyTypes: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file or a package.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment: 'Code the server runs must not need a devDependency (`npm ci --omit=dev` installs must start).',
      from: { path: '^(server|routers|adapters|db)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'server-not-to-api-surface',
      severity: 'error',
      comment:
        'server/* never sees fastify, the routers or the REST adapter; only the composition root (server/app) wires ' +
        'them together.',
      from: { path: '^server/', pathNot: '^server/app/' },
      to: { path: ['^routers/', '^adapters/rest/', '(^|/)node_modules/(fastify|@fastify/[^/]+)/', '^fastify$'] },
    },
    {
      name: 'adapters-not-to-server',
      severity: 'error',
      comment:
        'Adapters know nothing of any area or router. adapters/rest may use server/kernel: the envelope and the ' +
        'raw-route failures answer through the ONE error table (describeError, FieldErrors) so REST and /trpc ' +
        'cannot drift apart.',
      from: { path: '^adapters/' },
      to: { path: '^(server|routers)/', pathNot: '^server/kernel/' },
    },
    {
      name: 'adapters-sources-not-to-kernel',
      severity: 'error',
      comment: 'Connectors are usable without the server: only adapters/rest has a reason to reach server/kernel.',
      from: { path: '^adapters/', pathNot: '^adapters/rest/' },
      to: { path: '^server/' },
    },
    {
      name: 'kernel-is-a-leaf',
      severity: 'error',
      comment: 'server/kernel imports only db/, zod, drizzle-orm (SQL fragments for paging), @trpc/server and itself.',
      from: { path: '^server/kernel/' },
      to: {
        dependencyTypesNot: ['core'],
        pathNot: ['^server/kernel/', '^db/', '(^|/)node_modules/(zod|drizzle-orm|@trpc/server)/'],
      },
    },
    {
      name: 'query-compile-is-pure',
      severity: 'error',
      comment:
        'server/query/compile is pure: the expression language, kernel errors and itself; no db/, no run/, no I/O. ' +
        'adapters/sources only for its types (Dialect, PrimitiveType): see query-compile-types-only.',
      from: { path: '^server/query/compile/' },
      to: {
        pathNot: ['^server/query/compile/', '^server/query/expr/', '^server/kernel/', '^adapters/sources/'],
      },
    },
    {
      name: 'query-compile-types-only',
      severity: 'error',
      comment: 'server/query/compile may name the connector types, never load a connector.',
      from: { path: '^server/query/compile/' },
      to: { path: '^adapters/sources/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'dataset-security-one-entry',
      severity: 'error',
      comment:
        'Dataset security (row and column rules) is applied in one place: server/query/read.ts and the dataset ' +
        'definitions reach it only through server/access/dataset-security/secured.ts, and the rule services through ' +
        'its rule-stores.ts; how each rule kind narrows a read stays inside the folder.',
      from: { pathNot: '^server/access/dataset-security/' },
      to: {
        path: '^server/access/dataset-security/',
        pathNot: '^server/access/dataset-security/(secured|rule-stores)\\.ts$',
      },
    },
    {
      name: 'app-is-the-root',
      severity: 'error',
      comment:
        'server/app composes everything and nothing imports it but tests and scripts. Allowed: type-only imports ' +
        'of deps.ts (AppDeps) and config.ts.',
      from: { pathNot: '^(server/app|scripts|test)/' },
      to: { path: '^server/app/', pathNot: '^server/app/(deps|config)\\.ts$' },
    },
    {
      name: 'app-deps-config-types-only',
      severity: 'error',
      comment: 'AppDeps and the config are handed in as arguments; outside server/app they are imported as types.',
      from: { pathNot: '^(server/app|scripts|test)/' },
      to: { path: '^server/app/(deps|config)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'app-trpc-only-from-routers',
      severity: 'error',
      comment: 'The procedure builders are the API surface: only routers/ build procedures.',
      from: { pathNot: '^(server/app|routers|scripts|test)/' },
      to: { path: '^routers/(trpc|context)\\.ts$' },
    },
    {
      name: 'no-area-internals',
      severity: 'error',
      comment:
        "No area imports another area's internals, only its service module (server/<area>/<area>.ts), store.ts, " +
        'views.ts, messages.ts and AREA_SERVICES. The layers (access, objects, query) import no area internals ' +
        'either.',
      from: { path: '^server/(?!app/)([^/]+)/' },
      to: {
        path: `^server/(?!(${LAYERS})/)[^/]+/`,
        pathNot: ['^server/$1/', ...AREA_PUBLIC],
      },
    },
    {
      name: 'db-is-a-leaf',
      severity: 'error',
      comment: 'db/ (schema, client, migrations) imports nothing of server/, routers/ or adapters/.',
      from: { path: '^db/' },
      to: { path: '^(server|routers|adapters)/' },
    },
    {
      name: 'routers-hold-no-sql',
      severity: 'error',
      comment: 'A router never holds SQL: no db/, no drizzle-orm; it calls a server/<area> service.',
      from: { path: '^routers/' },
      to: { path: ['^db/', '(^|/)node_modules/drizzle-orm/'] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^db/migrations/' },
    // Packages that declare only `exports` (chevrotain) resolve through these.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
