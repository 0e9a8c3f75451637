import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

/*
 * Every answer a test gets from the app is checked against the document the app serves (GET /api/v3/api-docs): the
 * status is documented for the operation (method and templated path, a literal segment winning over a parameter as
 * in the router), the content type is documented for that status, and a JSON body is valid against its schema. The
 * operations are read from the document at run time, so a new one is checked with no edit here. A mismatch throws
 * from the call, which fails the test that made it.
 */

const DOC_PATH = '/api/v3/api-docs';
/** The document's components, registered under this id (`#/components/schemas/X` becomes `<id>#/$defs/X`). */
const COMPONENTS_ID = 'openapi-components';
const ERROR_ENVELOPE = `${COMPONENTS_ID}#/$defs/ErrorEnvelope`;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * What is served but is no operation of the document, and so is not checked. Anything else that matches no
 * operation must be the router's own not-found answer (below).
 */
const NOT_OPERATIONS: { method?: string; path: RegExp }[] = [
  // The document itself, hidden from itself.
  { method: 'GET', path: /^\/api\/v3\/api-docs$/ },
  // Swagger UI: a browsable page over the document.
  { path: /^\/docs(\/|$)/ },
  // tRPC: the same procedures in tRPC's own protocol, not the REST contract.
  { path: /^\/trpc(\/|$)/ },
  // The share-link viewer page (HTML for browsers), outside /api.
  { path: /^\/s\// },
  // GET and DELETE /mcp: the Streamable HTTP transport's 405 for a stateless server; no 2xx, so left out of the
  // document on purpose (routers/mcp/raw.ts).
  { method: 'GET', path: /^\/mcp$/ },
  { method: 'DELETE', path: /^\/mcp$/ },
  // The node's health and metrics (server/app/health.ts, metrics.ts): for load balancers and scrapers, not the API.
  { method: 'GET', path: /^\/(healthz|readyz|metrics)$/ },
];

interface MediaType {
  schema?: unknown;
}
interface ResponseDoc {
  content?: Record<string, MediaType>;
}
interface Operation {
  key: string;
  segments: (string | null)[];
  responses: Record<string, ResponseDoc>;
}

/** A document ready to check answers against (see documentChecker). */
interface CompiledDocument {
  ajv: Ajv2020;
  operations: Map<string, Operation[]>;
  validators: Map<string, ValidateFunction>;
}

/** The document's `#/components/schemas/X` references pointed at the components registered apart. */
function componentRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(componentRefs);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) =>
      k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')
        ? [k, `${COMPONENTS_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`]
        : [k, componentRefs(v)],
    ),
  );
}

function isMalformed(path: string): boolean {
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    return true;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

interface Document {
  openapi: string;
  paths: Record<string, Record<string, { responses?: Record<string, ResponseDoc> }>>;
  components?: { schemas?: Record<string, unknown> };
}

function compileDocument(served: Document): CompiledDocument {
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; a 3.0 document (nullable, no type arrays) would need another dialect.
  if (!/^3\.1\./.test(served.openapi))
    throw new Error(`openapi-validation: expects OpenAPI 3.1, got ${served.openapi}`);
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  addFormats(ajv);
  // OpenAPI's own format for file contents (multipart parts); any string.
  ajv.addFormat('binary', true);
  const doc = componentRefs(served) as Document;
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: doc.components?.schemas ?? {} });
  const operations = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const list = operations.get(method.toUpperCase()) ?? [];
      list.push({
        key: `${method.toUpperCase()} ${path}`,
        segments: path
          .split('/')
          .slice(1)
          .map((s) => (/^\{[^}]+\}$/.test(s) ? null : s)),
        responses: op.responses ?? {},
      });
      operations.set(method.toUpperCase(), list);
    }
  }
  return { ajv, operations, validators: new Map() };
}

/** The operation the router would run: the templates that match, the one with a literal at the first difference. */
function findOperation(compiled: CompiledDocument, method: string, path: string): Operation | undefined {
  const segments = path.split('/').slice(1).map(safeDecode);
  const matching = (compiled.operations.get(method === 'HEAD' ? 'GET' : method) ?? []).filter(
    (op) =>
      op.segments.length === segments.length &&
      op.segments.every((s, i) => (s === null ? segments[i] !== '' : s === segments[i])),
  );
  matching.sort((a, b) => {
    for (let i = 0; i < a.segments.length; i++) {
      if ((a.segments[i] === null) !== (b.segments[i] === null)) return a.segments[i] === null ? 1 : -1;
    }
    return 0;
  });
  return matching[0];
}

/** The documented response of a status: the exact code, its range (`4XX`), or `default`. */
function responseFor(op: Operation, status: number): [string, ResponseDoc] | undefined {
  for (const code of [String(status), `${String(status)[0]}XX`, 'default']) {
    const res = op.responses[code];
    if (res) return [code, res];
  }
  return undefined;
}

function mediaTypeMatches(documented: string, actual: string): boolean {
  if (documented === actual || documented === '*/*') return true;
  return documented.endsWith('/*') && actual.startsWith(documented.slice(0, -1));
}

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

function errorsText(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map(
      (e) =>
        `  body${e.instancePath} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`,
    )
    .join('\n');
}

const preview = (text: string) => (text.length > 400 ? `${text.slice(0, 400)}…` : text);

export interface Exchange {
  method: string;
  url: string;
  /** Whether the request carried an Authorization header (the not-found answer depends on it). */
  authorized: boolean;
  /** Whether the request carried a body. */
  hasBody: boolean;
  status: number;
  contentType: string | undefined;
  body: string;
}

/** What is wrong with one exchange by the document, or undefined when nothing is; null when it is not an operation. */
function problemOf(compiled: CompiledDocument, ex: Exchange): string | null | undefined {
  const method = ex.method.toUpperCase();
  // The path as the server receives it: inject (light-my-request) resolves the URL first, so `..` and `.` segments
  // are gone by then, as they are with an HTTP client that normalises (curl without --path-as-is).
  const path = new URL(ex.url, 'http://localhost').pathname;
  if (NOT_OPERATIONS.some((n) => (n.method === undefined || n.method === method) && n.path.test(path))) return null;
  const mediaType = ex.contentType?.split(';')[0].trim().toLowerCase();
  const op = findOperation(compiled, method, path);
  if (!op) {
    // No operation: the router's not-found answer (server/app/app.ts), a 404, or a 401 without a token; a path that
    // is no valid percent-encoded UTF-8 is refused before routing with a 400. A body is read first all the same (not
    // JSON 400, too large 413, not a JSON type 415), and a share-link path is counted by the public rate limit (429).
    const expected = isMalformed(path)
      ? [400]
      : [
          404,
          ...(ex.authorized ? [] : [401]),
          ...(ex.hasBody ? [400, 413, 415] : []),
          ...(/^\/api\/public\//.test(path) ? [429] : []),
        ];
    if (!expected.includes(ex.status) || mediaType !== 'application/json')
      return `${method} ${path} is in no operation of the document, yet it answered ${ex.status} ${mediaType ?? '(no content type)'} instead of the not-found envelope (${expected.join(' or ')})`;
    return validateJson(
      compiled,
      ERROR_ENVELOPE,
      { $ref: ERROR_ENVELOPE },
      ex.body,
      `${method} ${path} (no operation)`,
    );
  }
  const where = `${op.key} (${method} ${preview(ex.url)})`;
  const found = responseFor(op, ex.status);
  if (!found)
    return `${where} answered ${ex.status}, which the document does not list (documented: ${Object.keys(op.responses).join(', ')})`;
  const [code, response] = found;
  const content = response.content;
  if (!content || Object.keys(content).length === 0) {
    if (ex.body.length > 0)
      return `${where} answered ${ex.status} with a ${mediaType ?? 'body'} body; the document says ${code} has no content`;
    return undefined;
  }
  if (!mediaType)
    return `${where} answered ${ex.status} without a content type; the document says ${code} is ${Object.keys(content).join(' or ')}`;
  const documented = Object.keys(content).find((d) => mediaTypeMatches(d.toLowerCase(), mediaType));
  if (documented === undefined)
    return `${where} answered ${ex.status} as ${mediaType}; the document says ${code} is ${Object.keys(content).join(' or ')}`;
  if (!isJson(mediaType) || content[documented].schema === undefined) return undefined;
  const key = `${op.key} ${code} ${documented}`;
  return validateJson(compiled, key, content[documented].schema, ex.body, `${where} ${ex.status} ${mediaType}`);
}

/** `key` names the schema's place in the document: each schema is compiled once, when an answer first needs it. */
function validateJson(
  compiled: CompiledDocument,
  key: string,
  schema: unknown,
  text: string,
  where: string,
): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${where}: the body is not JSON: ${preview(text)}`;
  }
  let validate = compiled.validators.get(key);
  if (!validate) {
    validate = compiled.ajv.compile(schema as object);
    compiled.validators.set(key, validate);
  }
  if (validate(body)) return undefined;
  return `${where}: the body does not match the documented schema:\n${errorsText(validate.errors)}\nbody: ${preview(text)}`;
}

/**
 * What is wrong with an exchange by the document: a message, undefined when nothing is, null when the exchange is
 * no operation of the document (NOT_OPERATIONS).
 */
export function documentChecker(doc: unknown): (ex: Exchange) => string | null | undefined {
  const compiled = compileDocument(doc as Document);
  return (ex) => problemOf(compiled, ex);
}

// ---- per app, per test file -----------------------------------------------------------------------------------------

const documents = new WeakMap<FastifyInstance, Promise<ReturnType<typeof documentChecker>>>();
let validated = 0;

/** How many answers this test file had checked against the document. */
export const validatedResponses = () => validated;

/** The app's document, fetched and compiled once per app. */
async function checkerOf(app: FastifyInstance, inject: FastifyInstance['inject']) {
  let checker = documents.get(app);
  if (!checker) {
    checker = (async () => {
      const res = await inject({ method: 'GET', url: DOC_PATH });
      if (res.statusCode !== 200) throw new Error(`openapi-validation: GET ${DOC_PATH} answered ${res.statusCode}`);
      return documentChecker(res.json());
    })();
    documents.set(app, checker);
  }
  return checker;
}

class OpenApiMismatch extends Error {
  override name = 'OpenApiMismatch';
}

/** Throws when the exchange is not what the document says. */
async function checkExchange(app: FastifyInstance, inject: FastifyInstance['inject'], ex: Exchange): Promise<void> {
  const problem = (await checkerOf(app, inject))(ex);
  if (problem === null) return;
  validated++;
  if (problem !== undefined) throw new OpenApiMismatch(`OpenAPI: ${problem}`);
}

function headerOf(headers: InjectOptions['headers'], name: string): unknown {
  if (!headers) return undefined;
  const entry = Object.entries(headers).find(([k]) => k.toLowerCase() === name);
  return entry?.[1];
}

/**
 * Makes every `app.inject({...})` of the tests check its answer (test/support/app.ts calls this for each test app):
 * `rest()` and the tests that inject directly (a client address, a raw body) alike.
 */
export function validateInjectedResponses(app: FastifyInstance): void {
  const inject = app.inject.bind(app) as FastifyInstance['inject'];
  const checked = async (opts: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const options: InjectOptions = typeof opts === 'string' ? { url: opts } : opts;
    const res = await inject(options);
    const target = options.url ?? options.path ?? '/';
    const url = typeof target === 'string' ? target : (target.pathname ?? '/');
    await checkExchange(app, inject, {
      method: String(options.method ?? 'GET'),
      url,
      authorized: headerOf(options.headers, 'authorization') !== undefined,
      hasBody: options.payload !== undefined || options.body !== undefined,
      status: res.statusCode,
      contentType: res.headers['content-type'] as string | undefined,
      body: res.body,
    });
    return res;
  };
  app.inject = ((opts?: InjectOptions | string, callback?: unknown) => {
    // The chain and callback forms would bypass the check: the tests use the promise form only.
    if (opts === undefined || callback !== undefined)
      throw new Error('test apps take app.inject(options) only, so that every answer is checked against the document');
    return checked(opts);
  }) as FastifyInstance['inject'];
}
