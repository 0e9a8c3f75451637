import type { AnyProcedure, AnyRouter } from '@trpc/server';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { OPERATION_DESCRIPTIONS } from './openapi-descriptions';
import {
  ERROR_ENVELOPE_REF,
  errorEnvelopeSchema,
  errorResponse,
  errorStatuses,
  type OperationTraits,
} from './openapi-errors';
import { describeParameter } from './openapi-parameters';
import { GROUP_TAGS } from './openapi-tags';

/*
 * The rules that turn the generated document into the published one. They look at what each operation is (its
 * procedure's gates, its path, its input), never at a list of operations, so a new router is covered as it lands;
 * `documentGaps` names whatever the rules could not fill in.
 */

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  description?: string;
  schema?: Schema;
}
interface ResponseObject {
  description?: string;
  content?: Record<string, { schema?: unknown }>;
}
export interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: unknown;
  responses?: Record<string, ResponseObject>;
  /** false on an operation that answers a protocol of its own instead of the envelope (JSON-RPC of /mcp). */
  'x-envelope'?: false;
}

const BEARER = [{ bearerAuth: [] }];

/** `METHOD /path` -> whether the procedure runs without authentication. */
function procedureGates(appRouter: AnyRouter): Map<string, { isPublic: boolean }> {
  const gates = new Map<string, { isPublic: boolean }>();
  for (const procedure of Object.values(appRouter._def.procedures as Record<string, AnyProcedure>)) {
    const def = procedure._def as unknown as {
      meta?: { openapi?: { method: string; path: string } };
      middlewares: { _type?: string; featureSwitch?: boolean }[];
    };
    const openapi = def.meta?.openapi;
    if (!openapi) continue;
    // tRPC keeps `.use()` middlewares, input/output parsers (marked with _type) and, last, the call of the resolver.
    // A feature switch (routers/trpc.ts) does not authenticate.
    const uses = def.middlewares.slice(0, -1).filter((m) => m._type === undefined && !m.featureSwitch).length;
    gates.set(`${openapi.method.toUpperCase()} ${openapi.path}`, { isPublic: uses === 0 });
  }
  return gates;
}

function forEachOperation(doc: OpenAPIObject, fn: (op: Operation, method: string, path: string) => void): void {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (op) fn(op, method.toUpperCase(), path);
    }
  }
}

function walkSchemas(node: unknown, visit: (schema: Schema, key: string | undefined) => void, key?: string): void {
  if (Array.isArray(node)) {
    for (const item of node) walkSchemas(item, visit, key);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Schema;
  visit(schema, key);
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties' && v && typeof v === 'object') {
      for (const [name, prop] of Object.entries(v)) walkSchemas(prop, visit, name);
    } else if (k !== 'enum' && k !== 'const' && k !== 'default') {
      walkSchemas(v, visit, k === 'items' || k === 'anyOf' || k === 'oneOf' || k === 'allOf' ? key : undefined);
    }
  }
}

const hasType = (schema: Schema, type: string) =>
  schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

/** Timestamps (`*_at` properties) as date-time; integer bounds as inclusive minimum/maximum. */
function tidySchema(schema: Schema, key: string | undefined): void {
  if (key && /_at$/.test(key) && hasType(schema, 'string') && schema.format === undefined) schema.format = 'date-time';
  if (hasType(schema, 'integer')) {
    if (typeof schema.exclusiveMinimum === 'number') {
      schema.minimum = Math.max(Number(schema.minimum ?? -Infinity), schema.exclusiveMinimum + 1);
      delete schema.exclusiveMinimum;
    }
    if (typeof schema.exclusiveMaximum === 'number') {
      schema.maximum = Math.min(Number(schema.maximum ?? Infinity), schema.exclusiveMaximum - 1);
      delete schema.exclusiveMaximum;
    }
  }
}

function wrapSuccess(op: Operation): void {
  const json = op.responses?.['200']?.content?.['application/json'];
  if (json) {
    json.schema = {
      type: 'object',
      required: ['success', 'data'],
      properties: { success: { type: 'boolean', enum: [true] }, data: json.schema ?? {} },
    };
  }
}

/** A parameter or body field that names an object by id: `id`, `dataset_id`, `user_ids`, `workspaceId`, `objectIds`. */
const OBJECT_ID = /^(id|.+_ids?|.+Ids?)$/;

function namesObjects(op: Operation): boolean {
  if ((op.parameters ?? []).some((p) => OBJECT_ID.test(p.name))) return true;
  let found = false;
  walkSchemas(op.requestBody, (_schema, key) => {
    if (key && OBJECT_ID.test(key)) found = true;
  });
  return found;
}

/**
 * The error responses of an operation that answers a protocol of its own: a status it declares keeps its own body,
 * and where the envelope may answer the same status (a failure before the handler), either may come.
 */
function ownProtocolError(declared: ResponseObject | undefined, status: number, derived: boolean): ResponseObject {
  const envelope = errorResponse(status);
  const own = declared?.content?.['application/json']?.schema;
  if (!declared || own === undefined) return envelope;
  if (!derived) return declared;
  return {
    description: `${envelope.description}; ${declared.description ?? ''}`.replace(/; $/, ''),
    content: { 'application/json': { schema: { anyOf: [{ $ref: ERROR_ENVELOPE_REF }, own] } } },
  };
}

function dropUnusedSchemas(doc: OpenAPIObject): void {
  const schemas = doc.components?.schemas;
  if (!schemas) return;
  // A schema may refer to another: repeat until nothing more falls away.
  for (let changed = true; changed;) {
    changed = false;
    const text = JSON.stringify({ paths: doc.paths, components: { ...doc.components } });
    for (const name of Object.keys(schemas)) {
      if (!text.includes(`"#/components/schemas/${name}"`)) {
        delete schemas[name];
        changed = true;
      }
    }
  }
}

/**
 * `rawKeys`: operations that are raw routes (their own security, their own declared error statuses kept; with
 * `envelope: false` their own answers too); every other operation comes from a procedure and is described by its
 * gates.
 */
export function finishDocument(
  doc: OpenAPIObject,
  appRouter: AnyRouter,
  rawKeys: Map<string, { envelope: boolean }>,
): void {
  const gates = procedureGates(appRouter);
  const usedGroups = new Set<string>();
  doc.components = {
    ...doc.components,
    schemas: { ...doc.components?.schemas, ErrorEnvelope: errorEnvelopeSchema as never },
  };

  forEachOperation(doc, (op, method, path) => {
    const key = `${method} ${path}`;
    const isRaw = rawKeys.has(key);
    const ownProtocol = rawKeys.get(key)?.envelope === false;
    const gate = gates.get(key);
    if (!isRaw && gate) op.security = gate.isPublic ? [] : BEARER;
    op.description ??= OPERATION_DESCRIPTIONS[key];

    for (const param of op.parameters ?? []) {
      if (param.schema) walkSchemas(param.schema, tidySchema);
      if (/At(From|To)$/.test(param.name) && param.schema && param.schema.format === undefined)
        param.schema.format = 'date-time';
      param.description ??= describeParameter(
        key,
        path,
        param.name,
        param.in,
        param.schema?.description as string | undefined,
      );
    }
    walkSchemas(op.requestBody, tidySchema);
    if (ownProtocol) op['x-envelope'] = false;
    else wrapSuccess(op);
    walkSchemas(op.responses, tidySchema);

    const responses = (op.responses ??= {});
    const declared = Object.keys(responses).filter((code) => /^[45]/.test(code));
    const declaredResponses = Object.fromEntries(declared.map((code) => [code, responses[code]]));
    for (const code of declared) delete responses[code];
    const isPublic = Array.isArray(op.security) && op.security.length === 0;
    const traits: OperationTraits = {
      key,
      method,
      path,
      isPublic,
      hasPathParameters: path.includes('{'),
      // The ids of a protocol of its own (JSON-RPC request ids) name no object.
      namesObjects: !ownProtocol && namesObjects(op),
      hasInput: (op.parameters?.length ?? 0) > 0 || op.requestBody !== undefined,
      ownProtocol,
    };
    const derived = new Set(errorStatuses(traits));
    const statuses = new Set(derived);
    if (isRaw) for (const code of declared) statuses.add(Number(code));
    for (const status of [...statuses].sort((a, b) => a - b)) {
      responses[String(status)] = ownProtocol
        ? ownProtocolError(declaredResponses[status], status, derived.has(status))
        : errorResponse(status);
    }

    op.tags = op.tags?.map((tag) => {
      const group = GROUP_TAGS[tag];
      if (!group) return tag;
      usedGroups.add(tag);
      return group.name;
    });
  });

  walkSchemas(doc.components?.schemas, tidySchema);
  doc.tags = Object.entries(GROUP_TAGS)
    .filter(([group]) => usedGroups.has(group))
    .map(([group, tag]) => ({ name: tag.name, description: tag.description, 'x-catalogue-group': group }));
  dropUnusedSchemas(doc);
}

/** What the rules could not fill in; the tests require this to be empty. */
export function documentGaps(doc: OpenAPIObject): string[] {
  const gaps: string[] = [];
  const rootTags = new Set((doc.tags ?? []).map((t) => t.name));
  forEachOperation(doc, (op, method, path) => {
    const key = `${method} ${path}`;
    if (!op.summary) gaps.push(`${key}: no summary`);
    if (!op.description) gaps.push(`${key}: no description`);
    if (!op.tags?.length) gaps.push(`${key}: no tag`);
    for (const tag of op.tags ?? [])
      if (!rootTags.has(tag)) gaps.push(`${key}: tag "${tag}" has no root tag (openapi-tags.ts)`);
    if (!Array.isArray(op.security)) gaps.push(`${key}: security not declared`);
    for (const p of op.parameters ?? [])
      if (!p.description) gaps.push(`${key}: parameter ${p.in} ${p.name} has no description`);
    for (const [code, res] of Object.entries(op.responses ?? {})) {
      const schema = res.content?.['application/json']?.schema as { $ref?: string } | undefined;
      // An operation of its own protocol (x-envelope: false) may answer an error with a body of that protocol.
      if (/^[45]/.test(code) && schema?.$ref !== ERROR_ENVELOPE_REF && !(op['x-envelope'] === false && schema))
        gaps.push(`${key}: ${code} is not the error envelope`);
    }
  });
  return gaps;
}
