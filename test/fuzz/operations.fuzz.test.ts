import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { useTestApp } from '../support/app';
import { createSharedWorkspace, createSysadmin, createUser, login } from '../support/factories';
import {
  fillPath,
  listOperations,
  pathParams,
  type ApiOperation,
  type JsonSchema,
} from '../support/openapi-operations';
import type { Rest, RestResponse } from '../support/rest';
import { createWorkspaceObjects, pathValuesFor, type WorkspaceObjects } from '../support/workspace-objects';

/*
 * Property-based fuzzing of every operation of the served OpenAPI document, as a system administrator: wrong types,
 * missing and extra fields, hostile strings and numbers, hostile path ids. Whatever is sent, the answer is never a
 * 5xx, never carries a stack trace, and never leaks database text. The document is walked at run time, so a new
 * operation is fuzzed without editing this file. Reproduce a run with FUZZ_SEED=<seed printed below>.
 */

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

const MIB = 'a'.repeat(1024 * 1024);
const HOSTILE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDC00y',
  '\uDBFF\uDBFF',
  MIB,
  '',
  ' ',
  '../../etc/passwd',
  "' OR 1=1 --",
  '"; DROP TABLE users; --',
  '%00',
  '${7*7}',
  '<script>alert(1)</script>',
  '\u202Eevil',
  '😀'.repeat(300),
  '\\',
];
const HOSTILE_NUMBERS = [
  2 ** 31,
  2 ** 31 - 1,
  2 ** 53 + 1,
  -1,
  0,
  1.5,
  -0.5,
  1e308,
  -(2 ** 31) - 1,
  Number.MAX_SAFE_INTEGER,
];
/** Query and path text that is not a number the schema can take. */
const HOSTILE_NUMBER_TEXT = [
  '2147483648',
  '9007199254740993',
  '99999999999999999999',
  '-1',
  '0',
  '1.5',
  'NaN',
  'Infinity',
  '1e400',
  '0x10',
  'abc',
  '',
  ' 1',
];
const HOSTILE_PATH_IDS = [
  '../',
  '..%2F..%2F',
  '%00',
  '%2500',
  '99999999999999999999',
  '2147483648',
  '-1',
  '0',
  '1.5',
  'abc',
  'NaN',
  '1e3',
  '%ED%A0%80',
  '%20',
];

// ---- values from the document's schemas ------------------------------------------------------------------------

const hostileString = fc.constantFrom(...HOSTILE_STRINGS);
const hostileNumber = fc.constantFrom(...HOSTILE_NUMBERS);
const wrongType = fc.oneof(
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.constant([1, 'a', null]),
  fc.constant({ nested: { deeper: '\u0000' } }),
);
const anyHostile = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: wrongType },
);

/**
 * How values are made: `fit` values satisfy the schema (so that one hostile value placed among them gets past the
 * others to the code behind), `hostile` ones are hostile wherever they can be. Ids by field name point at the
 * fixture objects, so that a request reaches the write it would make rather than stopping at a 404.
 */
interface Gen {
  hostile: boolean;
  ids: Record<string, number[]>;
}

function typesOf(s: JsonSchema): string[] {
  if (Array.isArray(s.type)) return s.type;
  if (s.type) return [s.type];
  if (s.properties) return ['object'];
  if (s.items) return ['array'];
  return [];
}

const mixed = <T>(
  g: Gen,
  fit: fc.Arbitrary<T>,
  hostile: fc.Arbitrary<unknown>,
  hostileWeight = 1,
): fc.Arbitrary<unknown> =>
  g.hostile ? fc.oneof({ weight: 2, arbitrary: fit }, { weight: hostileWeight, arbitrary: hostile }) : fit;

function valueOf(s: JsonSchema, name: string, depth: number, g: Gen): fc.Arbitrary<unknown> {
  // Connection settings would make the server connect: only ever to loopback.
  if (name === 'host') return fc.constantFrom('127.0.0.1', 'localhost', '::1');
  if (s.const !== undefined) return mixed(g, fc.constant(s.const), wrongType);
  if (s.enum) return mixed(g, fc.constantFrom(...s.enum), hostileString);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((a) => valueOf(a, name, depth, g)));
  if (s.allOf?.length) return valueOf(s.allOf[0], name, depth, g);
  const types = typesOf(s);
  if (types.length === 0)
    return mixed(g, fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.constant(null)), hostileString);
  return fc.oneof(...types.map((t) => valueOfType(s, t, name, depth, g)));
}

const FITTING_TEXT = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);

function valueOfType(s: JsonSchema, type: string, name: string, depth: number, g: Gen): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return mixed(g, fc.boolean(), wrongType);
    case 'integer':
    case 'number': {
      const clamp = (n: number) => Math.min(Math.max(n, -(2 ** 31)), 2 ** 31 - 1);
      const min = clamp(s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1000));
      const max = Math.max(min, clamp(Math.min(s.maximum ?? 1000, min + 10_000)));
      let fitting: fc.Arbitrary<number> =
        type === 'integer' ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
      const ids = g.ids[name] ?? (/(_id|Id)$/.test(name) ? g.ids.any : undefined);
      if (ids?.length)
        fitting = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: fitting });
      return mixed(g, fitting, fc.oneof(hostileNumber, wrongType), 2);
    }
    case 'string': {
      const fitting =
        s.format === 'uuid'
          ? fc.uuid()
          : s.format === 'date-time'
            ? fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString())
            : s.pattern
              ? fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 1000))
              : FITTING_TEXT.map((v) => v.slice(0, s.maxLength ?? 12));
      return mixed(
        g,
        fitting,
        fc.oneof({ weight: 3, arbitrary: hostileString }, { weight: 1, arbitrary: wrongType }),
        3,
      );
    }
    case 'array': {
      if (depth > 4) return fc.constant([]);
      const item = s.items ? valueOf(s.items, name, depth + 1, g) : wrongType;
      return mixed(g, fc.array(item, { minLength: Math.min(s.minItems ?? 0, 3), maxLength: 3 }), wrongType);
    }
    case 'object': {
      if (depth > 4) return fc.constant({});
      return mixed(g, objectOf(s, depth, g), wrongType);
    }
    default:
      return g.hostile ? wrongType : fc.constant(null);
  }
}

/** An object with its required fields and some optional ones; hostile ones now and then lack one or carry an extra. */
function objectOf(s: JsonSchema, depth: number, g: Gen): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const required = new Set(s.required ?? []);
  const entries = Object.entries(props);
  const record = fc.record(Object.fromEntries(entries.map(([k, v]) => [k, valueOf(v, k, depth + 1, g)])), {
    requiredKeys: entries.map(([k]) => k).filter((k) => required.has(k)),
  }) as fc.Arbitrary<Record<string, unknown>>;
  if (!g.hostile) return record;
  const mutation = fc.constantFrom('none', 'none', 'none', 'drop-required', 'extra-field', 'dict');
  return fc.tuple(record, mutation, fc.nat(), wrongType).map(([obj, m, n, extra]) => {
    const out = { ...obj };
    if (m === 'drop-required' && required.size) delete out[[...required][n % required.size]];
    if (m === 'extra-field') out[`extra_${n % 3}`] = extra;
    if (m === 'dict' && entries.length === 0) out[['key', '\u0000', '\uD800', 'a'.repeat(300)][n % 4]] = extra;
    return out;
  });
}

/** Every place in a value where one thing can be swapped: each leaf and each container. */
function placesOf(v: unknown, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(path);
  if (Array.isArray(v)) v.forEach((x, i) => placesOf(x, [...path, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) placesOf(x, [...path, k], out);
  return out;
}

function replaceAt(v: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(v) ? [...v] : { ...(v as object) };
  copy[head] = replaceAt(copy[head], rest, replacement);
  return copy;
}

/** A fitting value with exactly one hostile thing in it (or, a third of the time, hostile all over). */
function bodyOf(s: JsonSchema, ids: Record<string, number[]>): fc.Arbitrary<unknown> {
  const oneHostile = fc.tuple(valueOf(s, '', 0, { hostile: false, ids }), fc.nat(), anyHostile).map(([fit, n, bad]) => {
    const places = placesOf(fit);
    // Leaves first: a hostile leaf among fitting siblings is what reaches the database.
    const leaves = places.filter((p) => p.length > 0);
    const pick = leaves.length ? leaves[n % leaves.length] : [];
    return replaceAt(fit, pick, bad);
  });
  return fc.oneof(
    { weight: 4, arbitrary: oneHostile },
    { weight: 2, arbitrary: valueOf(s, '', 0, { hostile: true, ids }) },
    { weight: 1, arbitrary: valueOf(s, '', 0, { hostile: false, ids }) },
    { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant(undefined)) },
  );
}

// ---- requests ----------------------------------------------------------------------------------------------------

/** Query and path text: percent-encoded, except that a lone surrogate (which encodeURIComponent refuses) goes as invalid UTF-8. */
function encodeText(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return '%ED%A0%80';
  }
}

function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The text of one query parameter: a value of its schema, or hostile number text. */
function queryValueOf(
  schema: JsonSchema | undefined,
  name: string,
  ids: Record<string, number[]>,
): fc.Arbitrary<string> {
  const fromSchema = valueOf(schema ?? {}, name, 0, { hostile: true, ids }).map((v) =>
    v === MIB ? 'a'.repeat(8000) : textOf(v),
  );
  return fc.oneof(
    { weight: 3, arbitrary: fromSchema },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_NUMBER_TEXT) },
  );
}

interface FuzzRequest {
  method: ApiOperation['method'];
  url: string;
  body?: unknown;
  multipart?: Record<string, string>;
}

function requestsOf(
  op: ApiOperation,
  objects: WorkspaceObjects,
  ids: Record<string, number[]>,
): fc.Arbitrary<FuzzRequest> {
  const fixture = pathValuesFor(op.path, objects) ?? {};
  const pathArb = fc.record(
    Object.fromEntries(
      pathParams(op.path).map((p) => {
        const real = fixture[p] !== undefined ? [encodeText(fixture[p])] : [];
        const typed =
          p === 'queryId' ? [encodeText(objects.queryId), '00000000-0000-0000-0000-000000000000'] : ['1', '2147483647'];
        const hostile = fc.constantFrom(
          ...typed,
          ...HOSTILE_PATH_IDS,
          '%00abc',
          encodeText('\u0000'),
          encodeText('😀'),
        );
        return [
          p,
          real.length
            ? fc.oneof({ weight: 2, arbitrary: fc.constant(real[0]) }, { weight: 1, arbitrary: hostile })
            : hostile,
        ];
      }),
    ),
  );
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const queryArb = fc.record(
    Object.fromEntries(queryParams.map((p) => [p.name, queryValueOf(p.schema, p.name, ids)])),
    { requiredKeys: [] },
  ) as fc.Arbitrary<Record<string, string>>;
  const extraQuery = fc.option(fc.constantFrom('unknown=1', 'page=1&page=2', '__proto__=x', 'size[]=1'), { freq: 4 });
  let bodyArb: fc.Arbitrary<unknown> = fc.constant(undefined);
  let multipartArb: fc.Arbitrary<Record<string, string> | undefined> = fc.constant(undefined);
  if (op.body?.mediaType === 'application/json') {
    bodyArb = bodyOf(op.body.schema, ids);
  } else if (op.body?.mediaType === 'multipart/form-data') {
    const fields = Object.entries(op.body.schema.properties ?? {}).filter(([k]) => k !== 'file');
    multipartArb = fc.record(
      Object.fromEntries(
        fields.map(([k, s]) => [
          k,
          valueOf(s, k, 1, { hostile: true, ids }).map((v) => (v === MIB ? 'a'.repeat(8000) : textOf(v))),
        ]),
      ),
      { requiredKeys: [] },
    ) as fc.Arbitrary<Record<string, string>>;
  }
  return fc.tuple(pathArb, queryArb, extraQuery, bodyArb, multipartArb).map(([path, query, extra, body, multipart]) => {
    const qs = [...Object.entries(query).map(([k, v]) => `${k}=${encodeText(v)}`), ...(extra ? [extra] : [])].join('&');
    return { method: op.method, url: fillPath(op.path, path, true) + (qs ? `?${qs}` : ''), body, multipart };
  });
}

async function send(api: Rest, token: string, r: FuzzRequest): Promise<RestResponse> {
  if (r.multipart) {
    const form = new FormData();
    for (const [k, v] of Object.entries(r.multipart)) form.append(k, v);
    form.append('file', new Blob([Buffer.from('id,name\n1,a\n')]), 'fuzz.csv');
    return api.call(r.method, r.url, { token, body: form });
  }
  return api.call(r.method, r.url, { token, body: r.body });
}

// ---- what must never be seen -------------------------------------------------------------------------------------

const STACK_TRACE = /\n?\s{4}at [\w.<>[\]]+ \(|\s{4}at (?:file:|node:|\/)/;
/** Database wording that only a leaked driver error would put in an answer. */
const SQL_TEXT =
  /syntax error at or near|violates (?:not-null|foreign key|unique|check) constraint|duplicate key value|invalid byte sequence for encoding|null character not permitted|unsupported Unicode escape|value "[^"]*" is out of range for type|invalid input syntax for type|relation "[^"]+" does not exist|\b(?:select|insert into|update \S+ set|delete from)\b[^\n]{0,200}?\b(?:from|values|where|returning)\b/i;
/**
 * Operations whose answer is the source's own error text by contract (SQL console, SQL check, connection check):
 * there database wording in an answer is the feature, not a leak.
 */
const SOURCE_TEXT_BY_CONTRACT = /\/queries|\/sql\/validate|\/check$/;

function problemOf(op: ApiOperation, res: RestResponse): string | undefined {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  if (res.status >= 500) return `${res.status}: ${text.slice(0, 300)}`;
  if (STACK_TRACE.test(text)) return `stack trace in ${res.status}: ${text.slice(0, 300)}`;
  if (!SOURCE_TEXT_BY_CONTRACT.test(op.path)) {
    // Echoed input is not a leak: look only at what the server wrote, i.e. the error envelope's texts.
    const err = (res.body as { error?: { message?: string; errors?: Record<string, string> } })?.error;
    const written = err ? [err.message ?? '', ...Object.values(err.errors ?? {})].join('\n') : '';
    const m = SQL_TEXT.exec(written);
    if (m) return `database text in ${res.status}: «${m[0]}» in ${written.slice(0, 300)}`;
  }
  return undefined;
}

// ---- the run -------------------------------------------------------------------------------------------------------

const { t, api } = useTestApp();
let token: string;
let objects: WorkspaceObjects;
let memberUserId: number;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  token = await login(api, admin.username, admin.password);
  const member = await createUser(t.deps);
  const ws = await createSharedWorkspace(t.deps, [
    { userId: admin.id, role: 'Администратор' },
    { userId: member.id, role: 'Наблюдатель' },
  ]);
  objects = await createWorkspaceObjects(api, token, ws, member.id);
  memberUserId = member.id;
});

afterAll(async () => {
  await objects?.dispose();
});

test(
  'no operation answers hostile input with a 5xx, a stack trace or database text',
  { timeout: 180_000 },
  async () => {
    const operations = await listOperations(api);
    // Deletions last, so that the objects they remove are still there for everything else.
    operations.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const ids: Record<string, number[]> = {
      workspace_id: [objects.workspaceId],
      workspaceId: [objects.workspaceId],
      data_source_id: [objects.sourceId, objects.fileSourceId],
      data_source_ids: [objects.sourceId],
      dataset_id: [objects.datasetId],
      datasetId: [objects.datasetId],
      field_id: [objects.fieldId],
      fieldId: [objects.fieldId],
      field_ids: [objects.fieldId],
      user_id: [memberUserId],
      user_ids: [memberUserId],
      any: [objects.workspaceId, objects.sourceId, objects.datasetId, objects.fieldId, memberUserId],
    };
    let requests = 0;
    let serverErrors = 0;
    const failures: string[] = [];
    const started = Date.now();
    for (const op of operations) {
      const found = new Map<string, string>();
      const result = await fc.check(
        fc.asyncProperty(requestsOf(op, objects, ids), async (r) => {
          const res = await send(api, token, r);
          requests++;
          if (res.status >= 500) serverErrors++;
          const problem = problemOf(op, res);
          if (problem)
            found.set(
              problem.slice(0, 60),
              `${r.method} ${r.url.slice(0, 200)} body=${JSON.stringify(r.body ?? r.multipart ?? null)?.slice(0, 200)} -> ${problem}`,
            );
          return true;
        }),
        { seed: SEED, numRuns: RUNS },
      );
      if (result.failed) failures.push(`${op.key}: property error ${String(result.errorInstance)}`);
      for (const f of found.values()) failures.push(`${op.key}: ${f}`);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `fuzz: ${requests} requests over ${operations.length} operations, ${serverErrors} 5xx, ${failures.length} problems, ${seconds} s (FUZZ_SEED=${SEED})`,
    );
    const failingOperations = [...new Set(failures.map((f) => f.split(':')[0]))];
    if (failures.length)
      console.log(
        `fuzz: failing operations (${failingOperations.length}):\n${failingOperations.join('\n')}\n\n${failures.slice(0, 200).join('\n')}`,
      );
    // Failures first: a property that threw (an answer outside the document, say) also ends its runs early, and the
    // failure says why where the request count would not.
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThanOrEqual(operations.length * RUNS);
  },
);

test('a hostile Authorization header is a 401 on every protected operation, never a 5xx', async () => {
  const operations = await listOperations(api);
  const headers = [
    'Bearer \u0000',
    'Bearer a\u0000b',
    'Bearer apt_\u0000',
    'Bearer apt_\uD800',
    `Bearer ${token.slice(0, -2)}\u0000\u0000`,
    `Bearer ${token}\u0000`,
    'Bearer \uDC00',
    `Bearer ${'a'.repeat(64 * 1024)}`,
    'Bearer ../../etc/passwd',
    'Bearer %00',
    'Basic YWRtaW46YWRtaW4=',
    'Bearer',
    'bearer  x  y',
  ];
  let cells = 0;
  const wrong: string[] = [];
  for (const op of operations) {
    const url = fillPath(op.path, {
      id: '1',
      queryId: objects.queryId,
      memberId: '1',
      userId: '1',
      type: 'postgresql',
      objectType: 'widget',
      objectId: '1',
      groupId: '1',
      ruleId: '1',
      order: '1',
      providerId: '1',
      linkId: '1',
      token: 'not-a-share-link-token',
      jobId: '1',
      runId: '1',
      rollupId: '1',
      buildId: '1',
      rev: '1',
      deploymentId: '1',
    });
    for (const authorization of headers) {
      const res = await api.call(op.method, url, { headers: { authorization } });
      cells++;
      const expected = op.isPublic ? res.status < 500 : res.status === 401;
      if (!expected)
        wrong.push(
          `${op.key} with ${JSON.stringify(authorization.slice(0, 40))}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
        );
    }
  }
  console.log(`fuzz: ${cells} requests with hostile Authorization headers`);
  expect(wrong).toEqual([]);
});

test('the detector flags 5xx, stack traces and database text, and not ordinary messages', () => {
  const op = { path: '/api/dataset/{id}' } as ApiOperation;
  const envelope = (status: number, message: string, errors?: Record<string, string>): RestResponse => ({
    status,
    headers: {},
    body: { success: false, error: { code: status, message, timestamp: '', errors } },
  });
  const flagged = {
    serverError: problemOf(op, envelope(500, 'Внутренняя ошибка сервера')),
    stack: problemOf(op, envelope(400, 'Error: boom\n    at Object.<anonymous> (/srv/app/server/x.ts:1:1)')),
    driverText: problemOf(op, envelope(400, 'invalid byte sequence for encoding "UTF8": 0x00')),
    sqlText: problemOf(op, envelope(400, 'select "id" from "datasets" where "id" = $1')),
  };
  const passed = {
    validation: problemOf(
      op,
      envelope(422, 'Ошибка валидации', {
        name: 'must not contain NUL or invalid characters',
        sort: 'must name one of the fields: name, created_at',
      }),
    ),
    notFound: problemOf(op, envelope(404, 'Датасет не найден (id 7)')),
    consoleError: problemOf(
      { path: '/api/data-source/{id}/queries' } as ApiOperation,
      envelope(400, 'syntax error at or near "x"'),
    ),
  };
  expect(Object.entries(flagged).filter(([, v]) => v === undefined)).toEqual([]);
  expect(Object.entries(passed).filter(([, v]) => v !== undefined)).toEqual([]);
});
