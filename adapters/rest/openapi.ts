import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';

/** A raw route (file download, multipart upload, HTML page, redirect) described beside its registration. */
export interface RawOperationDoc {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  operation: Record<string, unknown>;
}

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Запрос не может быть выполнен',
  '401': 'Токен отсутствует, истёк или подпись недействительна',
  '403': 'Доступ запрещён',
  '404': 'Объект не найден или находится в другом пространстве',
  '422': 'Ошибка валидации',
  '500': 'Внутренняя ошибка сервера',
};

const errorEnvelopeSchema = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { type: 'boolean', enum: [false] },
    error: {
      type: 'object',
      required: ['code', 'message', 'timestamp'],
      properties: {
        code: { type: 'integer', description: 'Equals the HTTP status' },
        message: { type: 'string', description: 'Russian message' },
        timestamp: { type: 'string', format: 'date-time' },
        errors: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'Field path (e.g. parameters[0].primitiveType) -> message; validation failures only',
        },
      },
    },
  },
} as const;

type Operation = {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
  requestBody?: unknown;
};

const BODY_ERROR_STATUSES: Record<string, string> = {
  '413': 'Слишком большой запрос',
  '415': 'Неподдерживаемый формат тела запроса',
};

function wrapSuccess(op: Operation): void {
  const ok = op.responses?.['200'];
  const json = ok?.content?.['application/json'];
  if (json) {
    json.schema = {
      type: 'object',
      required: ['success', 'data'],
      properties: { success: { type: 'boolean', enum: [true] }, data: json.schema ?? {} },
    };
  }
}

function replaceErrors(op: Operation, isProtected: boolean): void {
  const responses = (op.responses ??= {});
  for (const code of Object.keys(responses)) if (code !== '200' && /^[45]/.test(code)) delete responses[code];
  const statuses = op.requestBody ? { ...ERROR_STATUSES, ...BODY_ERROR_STATUSES } : ERROR_STATUSES;
  for (const [code, description] of Object.entries(statuses)) {
    if (!isProtected && (code === '401' || code === '403')) continue;
    responses[code] = {
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    } as never;
  }
}

/**
 * The tRPC-generated document, post-processed: every success wrapped in `{success, data}`, every error in the one
 * error envelope, a bearer scheme, and the raw routes merged in.
 */
export function buildOpenApiDocument(appRouter: AnyRouter, opts: { version: string; rawOperations: RawOperationDoc[] }): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter as never, {
    title: 'Analytics Platform API',
    description:
      'REST API of the self-hosted analytics platform. Every response is an envelope: `{success: true, data}` or ' +
      '`{success: false, error: {code, message, timestamp, errors?}}`. Authorization: `Bearer <session token or API token>`.',
    version: opts.version,
    baseUrl: '/',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT session token or apt_ API token' } },
  });
  for (const raw of opts.rawOperations) {
    const item = ((doc.paths ??= {})[raw.path] ??= {}) as Record<string, unknown>;
    item[raw.method] = raw.operation;
  }
  for (const item of Object.values(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      const isProtected = Array.isArray(op.security) && op.security.length > 0;
      wrapSuccess(op);
      replaceErrors(op, isProtected);
    }
  }
  doc.servers = [{ url: '/' }];
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, ErrorEnvelope: errorEnvelopeSchema as never } };
  return doc;
}
