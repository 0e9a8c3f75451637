import type { Rest } from './rest';

/** One operation of the served OpenAPI document (`GET /api/v3/api-docs`). */
export interface ApiOperation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;
  /** `METHOD /path`, as failures are reported. */
  key: string;
  isPublic: boolean;
  parameters: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: JsonSchema }[];
  /** The body's media type and schema, when the operation takes one. */
  body?: { mediaType: string; schema: JsonSchema; required: boolean };
}

// The subset of JSON Schema the document uses (zod's toJSONSchema output plus the hand-written raw route docs).
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  default?: unknown;
}

const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;

/** Every operation the running application documents, in document order. */
export async function listOperations(api: Rest): Promise<ApiOperation[]> {
  const res = await api.get('/api/v3/api-docs');
  if (res.status !== 200) throw new Error(`GET /api/v3/api-docs answered ${res.status}`);
  const doc = res.body as {
    security?: unknown[];
    paths: Record<
      string,
      Record<
        string,
        {
          security?: unknown[];
          parameters?: ApiOperation['parameters'];
          requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
        }
      >
    >;
  };
  const out: ApiOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      const op = item[m];
      if (!op) continue;
      const security = op.security ?? doc.security ?? [];
      const [mediaType, content] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
      const method = m.toUpperCase() as ApiOperation['method'];
      out.push({
        method,
        path,
        key: `${method} ${path}`,
        isPublic: security.length === 0,
        parameters: op.parameters ?? [],
        body: mediaType
          ? { mediaType, schema: content!.schema, required: op.requestBody?.required ?? false }
          : undefined,
      });
    }
  }
  return out;
}

/** `/api/x/{id}/y/{queryId}` with the given values, each percent-encoded unless `raw` says it is already. */
export function fillPath(path: string, values: Record<string, string>, raw = false): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return raw ? v : encodeURIComponent(v);
  });
}

/** Names of the path parameters of a template, in order. */
export const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

/**
 * The smallest value a schema accepts: required properties only, the first enum member, the minimum number.
 * Integer properties named in `ids` take that id, so that a request is about the objects a test made.
 */
export function minimalValue(s: JsonSchema, ids: Record<string, number> = {}, name = ''): unknown {
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return minimalValue(alternatives.find((a) => a.type !== 'null') ?? alternatives[0], ids, name);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : [];
  const type = types.find((t) => t !== 'null') ?? types[0];
  switch (type) {
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k) => [k, minimalValue(s.properties?.[k] ?? {}, ids, k)]));
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => minimalValue(s.items ?? {}, ids, name));
    case 'integer':
    case 'number':
      return ids[name] ?? s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'string':
      if (s.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (s.format === 'date-time') return new Date().toISOString();
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    case 'null':
      return null;
    default:
      return 'x';
  }
}
