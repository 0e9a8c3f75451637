import { afterAll, beforeAll, expect, test } from 'vitest';
import { useTestApp } from '../support/app';
import { createRoleCast, type RoleCast } from '../support/factories';
import { fillPath, listOperations, minimalValue, type ApiOperation } from '../support/openapi-operations';
import { ok, type RestResponse } from '../support/rest';
import {
  createWorkspaceObjects,
  datasetSchemaOver,
  pathValuesFor,
  rollupOver,
  widgetOver,
  type WorkspaceObjects,
} from '../support/workspace-objects';

/*
 * The authorization matrix, walked over every operation of the served OpenAPI document (a new operation is checked
 * without editing this file):
 *   - anonymous: 401 everywhere except the operations documented as public (login, refresh, /api/public/*);
 *   - a user who is not a member of workspace W, on W's objects: 403 or 404, never a success;
 *   - a Наблюдатель of W, on every write to W's objects and on the reads reserved to editors and owners: 403.
 * Requests carry the smallest body the operation's schema accepts, so that they get past validation to the access
 * check (a 422 would prove nothing about access, and fails the cell).
 */

/** Operations that may be called without a token, by path. */
const PUBLIC =
  /^\/api\/auth\/(login|refresh)$|^\/api\/public\/|^\/api\/auth\/sso\/(providers|exchange|\{providerId\}\/(authorize|callback))$/;

/**
 * Writes by method that only read, so a Наблюдатель may call them (access «any user» in the catalogue). Not the
 * source's preview: it reads rows outside any dataset, beyond RLS and CLS (RESERVED_READS).
 */
const VIEWER_MAY_CALL = new Set([
  'POST /api/data-source/{id}/check',
  'POST /api/dataset/{id}/preview',
  'POST /api/widget/{id}/data',
  'POST /api/dashboard/{id}/data',
  'POST /api/dataset/{id}/rollups/suggest',
]);

const WRITES = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/**
 * Reads a Наблюдатель may not call: a source's rows and schema outside any dataset (no RLS or CLS narrows them) are
 * for those who may edit the source, its SQL console and access log for its owners.
 */
const RESERVED_READS = new Set([
  'POST /api/data-source/{id}/preview',
  'GET /api/data-source/{id}/column-values',
  'GET /api/data-source/{id}/schemas',
  'GET /api/data-source/{id}/tables',
  'GET /api/data-source/{id}/columns',
  'GET /api/data-source/{id}/queries',
  'GET /api/data-source/{id}/queries/{queryId}',
  'GET /api/data-source/{id}/access-log',
]);

/** Body fields that point at another object, and the object of W each one is pointed at. */
const REFERENCES = ['workspace_id', 'dataset_id', 'data_source_ids'] as const;
type Reference = (typeof REFERENCES)[number];

const { t, api } = useTestApp();
let cast: RoleCast;
let objects: WorkspaceObjects;
/** Objects of the non-member and of the Наблюдатель in their personal workspaces (they may edit those). */
let outsiderOwn: WorkspaceObjects;
let viewerOwn: WorkspaceObjects;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  objects = await createWorkspaceObjects(api, cast.tokens.wsAdmin!, cast.workspaceId, cast.users.viewer.id);
  // A mailing in W (on its widget, through a channel the system administrator adds): the mailing list has W's object.
  const channel = ok<{ id: number }>(
    await api.post(
      '/api/mail-channels',
      { name: 'matrix', host: '127.0.0.1', port: 25, from_address: 'm@example.test' },
      cast.tokens.sysadmin,
    ),
  );
  ok(
    await api.post(
      '/api/mailings',
      {
        name: 'matrix',
        workspace_id: cast.workspaceId,
        widget_ids: [objects.widgetId],
        format: 'csv',
        channel_id: channel.id,
        recipients: { emails: ['m@example.test'] },
      },
      cast.tokens.wsAdmin,
    ),
  );
  outsiderOwn = await createWorkspaceObjects(api, cast.tokens.plain!, cast.users.plain.personalWorkspaceId);
  viewerOwn = await createWorkspaceObjects(api, cast.tokens.viewer!, cast.users.viewer.personalWorkspaceId);
  QUERY_VALUES = {
    fieldId: String(objects.fieldId),
    schema: 'public',
    table: objects.table,
    column: 'city',
    userId: String(cast.users.viewer.id),
  };
});

afterAll(async () => {
  await objects?.dispose();
  await outsiderOwn?.dispose();
  await viewerOwn?.dispose();
});

const refValue = (ref: Reference) =>
  ref === 'workspace_id' ? objects.workspaceId : ref === 'dataset_id' ? objects.datasetId : [objects.sourceId];

/** The smallest body the operation takes, with the given references to W's objects in it. */
function bodyFor(op: ApiOperation, refs: Reference[] = []): unknown {
  if (op.key === 'POST /api/workspaces/{id}/members') return { user_id: cast.users.plain.id, role: 'Наблюдатель' };
  if (!op.body) return undefined;
  // Bodies that replace a whole configuration carry the fixture's own, so that the objects stay usable.
  if (/^\/api\/dataset\/\{id\}\/schema(\/validate)?$/.test(op.path) && !refs.length)
    return datasetSchemaOver(objects.sourceId, objects.table);
  if (op.key === 'PUT /api/widget/{id}') return widgetOver(objects.datasetId);
  if (/^\/api\/dataset\/\{id\}\/rollups(\/\{rollupId\})?$/.test(op.path)) return rollupOver(objects.fieldId);
  if (op.body.mediaType === 'multipart/form-data') {
    const form = new FormData();
    for (const ref of refs) form.append(ref, String(refValue(ref)));
    form.append('file', new Blob([Buffer.from('id,city\n3,Самара\n')]), 'matrix.csv');
    return form;
  }
  // Fields of this body point at the caller's own objects unless a reference to W is asked for.
  const body = minimalValue(op.body.schema, {
    dataset_id: objects.datasetId,
    field_id: objects.fieldId,
    field_ids: objects.fieldId,
    user_id: cast.users.plain.id,
  }) as Record<string, unknown>;
  if (op.key === 'POST /api/data-source/{id}/preview') Object.assign(body, { schema: 'public', table: objects.table });
  if (body && typeof body === 'object' && !Array.isArray(body)) for (const ref of refs) body[ref] = refValue(ref);
  // A dataset schema names its sources inside its objects.
  if (refs.includes('data_source_ids') && /\/schema(\/validate)?$/.test(op.path)) {
    body.objects = [{ id: -1, data_source_id: objects.sourceId, schema: 'public', table: objects.table }];
  }
  return body;
}

/** Body references an operation documents as accepted and ignored (widget data takes the create body). */
const IGNORED_REFERENCES: Record<string, Reference[]> = { 'POST /api/widget/{id}/data': ['dataset_id'] };

/** The references an operation's body can carry (top-level fields of its schema; a dataset schema's sources). */
function referencesOf(op: ApiOperation): Reference[] {
  const props = op.body?.schema.properties ?? {};
  const refs = REFERENCES.filter((r) => r in props && !IGNORED_REFERENCES[op.key]?.includes(r));
  if (/^\/api\/dataset\/\{id\}\/schema(\/validate)?$/.test(op.path)) refs.push('data_source_ids');
  return refs;
}

async function call(
  op: ApiOperation,
  token: string | undefined,
  values: Record<string, string>,
  refs: Reference[] = [],
): Promise<RestResponse> {
  const query = Object.fromEntries(
    op.parameters
      .filter((p) => p.in === 'query' && (p.required || p.name in QUERY_VALUES))
      .map((p) => [p.name, QUERY_VALUES[p.name] ?? 'x']),
  );
  const qs = new URLSearchParams(query).toString();
  const url = fillPath(op.path, values) + (qs ? `?${qs}` : '');
  return api.call(op.method, url, { token, body: bodyFor(op, refs) });
}

/** Query parameters that name a table, column or field of the fixtures. */
let QUERY_VALUES: Record<string, string> = {};

/**
 * Path values on W's objects: the fixtures' own, and for the rights of an object (/api/access/{objectType}/{objectId}
 * ...) W's widget with an existing user and group.
 */
function valuesFor(path: string): Record<string, string> | undefined {
  if (!path.startsWith('/api/access/')) return pathValuesFor(path, objects);
  return {
    objectType: 'widget',
    objectId: String(objects.widgetId),
    userId: String(cast.users.plain.id),
    groupId: String(t.deps.systemGroups.workspaceManagers),
  };
}

const describe = (res: RestResponse) => `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
const refused = (status: number) => status === 403 || status === 404;

test(
  'anonymous, outsider and Наблюдатель get no further than their rights on every operation',
  { timeout: 120_000 },
  async () => {
    const operations = await listOperations(api);
    // Deletions last, so that the objects they remove are there for every other cell.
    operations.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const wrong: string[] = [];
    let cells = 0;
    const placeholder = {
      id: '1',
      queryId: objects.queryId,
      memberId: '1',
      userId: '1',
      ruleId: '1',
      type: 'postgresql',
      order: '1',
      providerId: '1',
      linkId: '1',
      token: 'not-a-share-link-token',
      jobId: '1',
      runId: '1',
      rev: '1',
      deploymentId: '1',
    };

    for (const op of operations) {
      const own = valuesFor(op.path);
      const values = { ...placeholder, ...own };
      const isWrite = WRITES.has(op.method) && !VIEWER_MAY_CALL.has(op.key);
      const viewerRefused = isWrite || RESERVED_READS.has(op.key);

      // The document's own claim: only the public operations go without a token.
      cells++;
      if (op.isPublic !== PUBLIC.test(op.path))
        wrong.push(`${op.key}: documented ${op.isPublic ? 'public' : 'protected'}`);
      if (!PUBLIC.test(op.path)) {
        cells++;
        const res = await call(op, undefined, values);
        if (res.status !== 401) wrong.push(`${op.key} anonymous: ${describe(res)}`);
      }

      if (own) {
        cells++;
        const outsider = await call(op, cast.tokens.plain, values);
        if (!refused(outsider.status)) wrong.push(`${op.key} non-member: ${describe(outsider)}`);
        if (viewerRefused) {
          cells++;
          const viewer = await call(op, cast.tokens.viewer, values);
          if (viewer.status !== 403) wrong.push(`${op.key} Наблюдатель: ${describe(viewer)}`);
        }
      }

      // W's query or membership under an object of the caller's own: the second id must belong to the first.
      const ownPath = pathValuesFor(op.path, outsiderOwn);
      if (ownPath && /\{(queryId|memberId)\}/.test(op.path)) {
        cells++;
        const crossed = await call(op, cast.tokens.plain, {
          ...ownPath,
          queryId: objects.queryId,
          memberId: String(objects.memberId),
        });
        if (crossed.status < 400)
          wrong.push(
            `${op.key} non-member, own object with W's ${op.path.includes('queryId') ? 'query' : 'member'}: ${describe(crossed)}`,
          );
      }

      // A list filtered to W shows a non-member nothing of W.
      if (op.method === 'GET' && op.parameters.some((p) => p.in === 'query' && p.name === 'workspaceId')) {
        cells++;
        const list = await api.get(op.path, cast.tokens.plain, { workspaceId: String(objects.workspaceId) });
        const content = (list.body as { data?: { content?: unknown[] } })?.data?.content;
        if (!refused(list.status) && !(list.status === 200 && content?.length === 0))
          wrong.push(`${op.key}?workspaceId=W non-member: ${describe(list)}`);
        cells++;
        const mine = await api.get(op.path, cast.tokens.wsAdmin, { workspaceId: String(objects.workspaceId) });
        if (!(mine.status === 200 && (mine.body.data?.content?.length ?? 0) > 0))
          wrong.push(`${op.key}?workspaceId=W Администратор sees nothing: ${describe(mine)}`);
      }

      // Objects of W named in the body: from the caller's own objects (or from nothing, on a create).
      const outsiderPath = pathValuesFor(op.path, outsiderOwn);
      const viewerPath = pathValuesFor(op.path, viewerOwn);
      const takesPath = op.path.includes('{');
      for (const ref of referencesOf(op)) {
        if (takesPath && !outsiderPath) continue;
        cells++;
        const outsider = await call(op, cast.tokens.plain, { ...placeholder, ...outsiderPath }, [ref]);
        if (outsider.status < 400) wrong.push(`${op.key} non-member naming W's ${ref}: ${describe(outsider)}`);
        // Reading W's objects is the Наблюдатель's right; putting something into W is not.
        if (isWrite && ref === 'workspace_id' && (!takesPath || viewerPath)) {
          cells++;
          const viewer = await call(op, cast.tokens.viewer, { ...placeholder, ...viewerPath }, [ref]);
          if (viewer.status !== 403) wrong.push(`${op.key} Наблюдатель into W: ${describe(viewer)}`);
        }
      }
    }
    console.log(`authorization matrix: ${cells} cells over ${operations.length} operations, ${wrong.length} wrong`);
    if (wrong.length) console.log(wrong.join('\n'));
    expect(wrong).toEqual([]);
  },
);

test("the same requests get through for W's Администратор, so the refusals above are about rights", async () => {
  const order = ['GET', 'POST', 'PUT'];
  const operations = (await listOperations(api))
    .filter((op) => op.method !== 'DELETE' && valuesFor(op.path))
    .sort((a, b) => order.indexOf(a.method) - order.indexOf(b.method))
    // Restores last: putting an object back to its first revision (before its fields, rules and rollups) would take
    // away what the other requests name.
    .sort((a, b) => Number(a.path.endsWith('/restore')) - Number(b.path.endsWith('/restore')));
  const blocked: string[] = [];
  for (const op of operations) {
    const res = await call(op, cast.tokens.wsAdmin, { ...valuesFor(op.path)! });
    if ([401, 403, 404, 422].includes(res.status)) blocked.push(`${op.key}: ${describe(res)}`);
  }
  console.log(`authorization matrix: ${operations.length} owner cells`);
  expect(blocked).toEqual([]);
});
