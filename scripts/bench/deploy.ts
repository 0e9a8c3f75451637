/**
 * Pipeline deploy of 1,000 objects (100 sources, 300 datasets with schemas, 500 widgets, 100 dashboards) from
 * Разработка to Тест through POST /api/pipeline/{id}/deploy, then a repeated deploy after every original was edited
 * (the copies are updated). Then both are rolled back through POST /api/pipeline/{id}/deployments/{id}/rollback:
 * the repeated deploy (1,000 copies restored to their revision before it), then the first (1,000 copies deleted).
 * The goal: each under 2 s, in one transaction, with a number of SQL statements that does not grow with the number
 * of objects. Statements are counted on the pg clients while each deploy or rollback runs.
 *
 *   npm run bench:deploy     (TEST_DATABASE_URL or DATABASE_URL: the server the throwaway metadata database goes on)
 */
import os from 'node:os';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import type { AppDeps } from '../../server/app/deps';
import { startPlatform } from './support';

const SERVER_URL =
  process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const COUNTS = { sources: 100, datasets: 300, widgets: 500, dashboards: 100 };

/** Statements sent by any pg client while `f` runs, by the table they write (or read first). */
async function counted<T>(
  f: () => Promise<T>,
): Promise<{ result: T; ms: number; statements: Map<string, number>; slowest: [number, string][] }> {
  const statements = new Map<string, number>();
  const timings: [number, string][] = [];
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = (typeof first === 'string' ? first : (first?.text ?? '')).toLowerCase();
    const target =
      /(?:insert into|update|delete from)\s+"?([a-z_]+)/.exec(text)?.[1] ??
      /\bfrom\s+"?([a-z_]+)/.exec(text)?.[1] ??
      text.split(/\s+/).slice(0, 2).join(' ');
    statements.set(target, (statements.get(target) ?? 0) + 1);
    const started = performance.now();
    const out = original.apply(this, args);
    if (out instanceof Promise)
      void out.then(
        () =>
          timings.push([
            performance.now() - started,
            text
              .replace(/\s+/g, ' ')
              .replace(/^ *with ds as \(.*?\) /, '')
              .slice(0, 70),
          ]),
        () => undefined,
      );
    return out;
  };
  const started = performance.now();
  try {
    const result = await f();
    const slowest = timings.sort((a, b) => b[0] - a[0]).slice(0, 5);
    return { result, ms: performance.now() - started, statements, slowest };
  } finally {
    proto.query = original;
  }
}

async function main() {
  const platform = await startPlatform({ name: 'deploy', server: SERVER_URL, alwaysThrowaway: true });
  const { deps, app, password } = platform;
  await app.ready();
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown, token?: string) => {
    const res = await app.inject({
      method,
      url,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      ...(body !== undefined ? { payload: body as object } : {}),
    });
    if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json().data;
  };
  try {
    const token = (await call('POST', '/api/auth/login', { username: 'admin', password })).token as string;
    const me = await call('GET', '/api/users/me', undefined, token);
    const stages: number[] = [];
    for (const name of ['bench dev', 'bench test', 'bench prod']) {
      const res = await deps.db.execute<{ id: number }>(sql`
        with ws as (insert into workspaces (name, type, created_by) values (${name}, 'shared', ${me.id}) returning id)
        insert into workspace_members (workspace_id, user_id, role) select id, ${me.id}, 'Администратор' from ws
        returning workspace_id as id`);
      stages.push(res.rows[0].id);
    }
    const pipeline = await call('POST', '/api/pipeline', { name: 'bench' }, token);
    for (const [order, id] of stages.entries())
      await call('PUT', `/api/pipeline/${pipeline.id}/stage/${order}`, { workspace_id: id }, token);
    console.log('building 1,000 objects in Разработка...');
    await buildObjects(deps.db, stages[0], me.id as number);

    const body = { from_stage: 0, objects: [] };
    const first = await counted(() => call('POST', `/api/pipeline/${pipeline.id}/deploy`, body, token));
    await touchEverything(deps.db, stages[0]);
    const again = await counted(() => call('POST', `/api/pipeline/${pipeline.id}/deploy`, body, token));
    const rollback = (d: { deployment_id: number }) =>
      counted(() => call('POST', `/api/pipeline/${pipeline.id}/deployments/${d.deployment_id}/rollback`, {}, token));
    const undoAgain = await rollback(again.result);
    const undoFirst = await rollback(first.result);
    const actions = (r: { objects: { action: string }[] }) =>
      r.objects.reduce<Record<string, number>>((a, o) => ({ ...a, [o.action]: (a[o.action] ?? 0) + 1 }), {});
    const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    const table = (m: Map<string, number>) =>
      [...m.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
    console.log(`\nnode ${process.version}, ${os.cpus().length} cores; ${JSON.stringify(COUNTS)}`);
    console.log(
      `  deploy #1: ${first.ms.toFixed(0)} ms, ${JSON.stringify(actions(first.result))}, ${total(first.statements)} SQL statements`,
    );
    console.log(`    by table: ${table(first.statements)}`);
    console.log(
      `  repeated deploy after editing all: ${again.ms.toFixed(0)} ms, ${JSON.stringify(actions(again.result))}, ${total(again.statements)} SQL statements`,
    );
    console.log(`    by table: ${table(again.statements)}`);
    for (const [name, run] of [
      ['rollback of the repeated deploy', undoAgain],
      ['rollback of deploy #1', undoFirst],
    ] as const) {
      console.log(
        `  ${name}: ${run.ms.toFixed(0)} ms, ${JSON.stringify(actions(run.result))}, ${total(run.statements)} SQL statements`,
      );
      console.log(`    by table: ${table(run.statements)}`);
    }
    for (const [name, run] of [
      ['deploy #1', first],
      ['repeated deploy', again],
      ['rollback of the repeated deploy', undoAgain],
      ['rollback of deploy #1', undoFirst],
    ] as const)
      console.log(
        `  slowest statements of ${name}: ${run.slowest.map(([ms, q]) => `${ms.toFixed(0)} ms ${q}`).join(' | ')}`,
      );
    const met = [first, again, undoAgain, undoFirst].every((run) => run.ms < 2000);
    console.log(`  goal (each < 2 s): ${met ? 'met' : 'NOT met'}`);
  } finally {
    await platform.close();
  }
}

type Db = AppDeps['db'];

/**
 * The objects, written straight into the metadata store (valid shapes, no source is read): each dataset has two
 * objects, five physical and one calculated field, a relation, a hierarchy, a filter, a parameter and an RLS and a CLS
 * rule; each dashboard shows five widgets and has a selector on a field.
 */
async function buildObjects(db: Db, ws: number, author: number): Promise<void> {
  const { sources, datasets, widgets, dashboards } = COUNTS;
  await db.execute(sql`insert into data_sources (name, type, workspace_id, author_id, settings)
    select 'source ' || g, 'postgresql', ${ws}, ${author},
      jsonb_build_object('host', '127.0.0.1', 'port', 5432, 'username', 'postgres', 'db', 'test')
    from generate_series(1, ${sources}) g`);
  await db.execute(sql`insert into datasets (name, workspace_id, author_id)
    select 'dataset ' || g, ${ws}, ${author} from generate_series(1, ${datasets}) g`);
  await db.execute(sql`insert into dataset_sources (dataset_id, data_source_id)
    select d.id, s.id from (select id, row_number() over (order by id) n from datasets where workspace_id = ${ws}) d
    join (select id, row_number() over (order by id) n from data_sources where workspace_id = ${ws}) s
      on s.n = (d.n - 1) % ${sources} + 1`);
  await db.execute(sql`insert into dataset_objects (dataset_id, data_source_id, name, "schema", "table", position)
    select ds.dataset_id, ds.data_source_id, t.name, 'public', t.name, t.p
    from dataset_sources ds join datasets d on d.id = ds.dataset_id and d.workspace_id = ${ws},
      (values ('sales', 0), ('regions', 1)) t(name, p)`);
  await db.execute(sql`insert into dataset_fields (dataset_id, object_id, name, title, kind, "column", primitive_type, position)
    select o.dataset_id, o.id, c.name, c.name, 'physical', c.name, c.type, c.p
    from dataset_objects o join datasets d on d.id = o.dataset_id and d.workspace_id = ${ws},
      (values ('id', 'integer', 0), ('region', 'integer', 1), ('amount', 'float', 2)) c(name, type, p)
    where o.name = 'sales' or c.name <> 'amount'`);
  await db.execute(sql`insert into dataset_fields (dataset_id, name, title, kind, formula, primitive_type, position)
    select id, 'double', 'double', 'calculated', '[sales.amount] * 2', 'float', 9 from datasets where workspace_id = ${ws}`);
  const f = (object: string, name: string) => sql`(select f.id from dataset_fields f
      left join dataset_objects o on o.id = f.object_id
      where f.dataset_id = d.id and f.name = ${name} and coalesce(o.name, '') = ${object})`;
  await db.execute(sql`insert into dataset_relations (dataset_id, left_object_id, right_object_id, conditions)
    select d.id, (select id from dataset_objects where dataset_id = d.id and name = 'sales'),
      (select id from dataset_objects where dataset_id = d.id and name = 'regions'),
      jsonb_build_array(jsonb_build_object('leftFieldId', ${f('sales', 'region')}, 'rightFieldId', ${f('regions', 'id')}))
    from datasets d where d.workspace_id = ${ws}`);
  await db.execute(sql`insert into dataset_hierarchies (dataset_id, name, field_ids)
    select d.id, 'h', array[${f('sales', 'region')}, ${f('', 'double')}] from datasets d where d.workspace_id = ${ws}`);
  await db.execute(sql`insert into dataset_filters (dataset_id, field_id, op, "values")
    select d.id, ${f('sales', 'amount')}, 'gt', '[0]'::jsonb from datasets d where d.workspace_id = ${ws}`);
  await db.execute(sql`insert into dataset_parameters (dataset_id, name, primitive_type, default_value)
    select d.id, 'rate', 'number', '2' from datasets d where d.workspace_id = ${ws}`);
  await db.execute(sql`insert into dataset_rls_rules (dataset_id, field_id, attribute, operator)
    select d.id, ${f('sales', 'region')}, 'region', 'in' from datasets d where d.workspace_id = ${ws}`);
  await db.execute(sql`insert into dataset_cls_rules (dataset_id, field_ids, action)
    select d.id, array[${f('sales', 'amount')}], 'mask' from datasets d where d.workspace_id = ${ws}`);
  await db.execute(sql`insert into widgets (name, type, dataset_id, workspace_id, author_id, config)
    select 'widget ' || g, 'table', d.id, ${ws}, ${author},
      jsonb_build_object('rows', jsonb_build_array(jsonb_build_object('id', 'r', 'field', 'region', 'table', 'sales')))
    from generate_series(1, ${widgets}) g
    join (select id, row_number() over (order by id) n from datasets where workspace_id = ${ws}) d
      on d.n = (g - 1) % ${datasets} + 1`);
  await db.execute(sql`insert into dashboards (name, workspace_id, author_id, layout)
    select 'dashboard ' || g, ${ws}, ${author}, jsonb_build_object(
      'tabs', '[]'::jsonb,
      'items', (select jsonb_agg(jsonb_build_object('widget_id', w.id, 'tab_id', null, 'x', 0, 'y', w.n, 'w', 4, 'h', 3))
        from (select id, row_number() over (order by id) n from widgets where workspace_id = ${ws}) w
        where (w.n - 1) / 5 = g - 1),
      'selectors', (select jsonb_agg(jsonb_build_object('id', 's', 'name', 's', 'field_id', f.id, 'op', 'in',
          'values', '[]'::jsonb, 'widget_ids', jsonb_build_array(w.id)))
        from (select id, dataset_id, row_number() over (order by id) n from widgets where workspace_id = ${ws}) w
        join dataset_fields f on f.dataset_id = w.dataset_id and f.name = 'region' and f.object_id is not null
        where w.n = (g - 1) * 5 + 1 and f.id = (select min(id) from dataset_fields
          where dataset_id = w.dataset_id and name = 'region')),
      'parameters', '[]'::jsonb)
    from generate_series(1, ${dashboards}) g`);
}

/** Every original saved again (a new name: a real change), so the repeated deploy updates all 1,000 copies. */
async function touchEverything(db: Db, ws: number): Promise<void> {
  for (const table of ['data_sources', 'datasets', 'widgets', 'dashboards'])
    await db.execute(
      sql`update ${sql.identifier(table)} set name = name || ' v2', updated_at = now() where workspace_id = ${ws}`,
    );
  await db.execute(sql`update dataset_fields set title = title || ' v2'
    where dataset_id in (select id from datasets where workspace_id = ${ws})`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
