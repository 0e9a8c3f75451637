/**
 * Which error statuses an operation documents, derived from what it is: who may call it, whether it names an
 * object in its path, whether it takes input, whether it writes. Every one of them answers the one error envelope.
 */

export const ERROR_ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';

export const errorEnvelopeSchema = {
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

const DESCRIPTIONS: Record<number, string> = {
  400: 'Запрос не может быть выполнен',
  401: 'Токен отсутствует, истёк или подпись недействительна',
  403: 'Доступ запрещён',
  404: 'Объект не найден или находится в другом пространстве',
  413: 'Слишком большой запрос',
  415: 'Неподдерживаемый формат тела запроса',
  422: 'Ошибка валидации',
  429: 'Слишком много попыток, повторите позже',
  500: 'Внутренняя ошибка сервера',
  502: 'Внешний сервис ответил ошибкой',
  504: 'Внешний сервис не ответил вовремя',
};

/**
 * Public operations that still check a credential of their own (a password, a refresh token) and so answer 401,
 * and the ones that throttle repeated failures with 429.
 */
const CREDENTIAL_CHECKS = new Set(['POST /api/auth/login', 'POST /api/auth/refresh']);
const THROTTLED = new Set(['POST /api/auth/login']);
/** Operations that wait for the AI provider: 502 when it fails, 504 when it does not answer in time. */
const UPSTREAM_CALLS = new Set(['POST /api/ai/formula', 'POST /api/ai/sql', 'POST /api/ai/widget-code']);

export interface OperationTraits {
  /** `METHOD /path` */
  key: string;
  method: string;
  isPublic: boolean;
  /** A gate beyond authentication (system administrator, workspace manager) runs before the handler. */
  hasRoleGate: boolean;
  hasPathParameters: boolean;
  hasInput: boolean;
  hasBody: boolean;
}

export function errorStatuses(op: OperationTraits): number[] {
  const statuses = new Set<number>([400, 500]);
  if (!op.isPublic || CREDENTIAL_CHECKS.has(op.key)) statuses.add(401);
  if (!op.isPublic && (op.hasRoleGate || op.method !== 'GET')) statuses.add(403);
  if (op.hasPathParameters) statuses.add(404);
  if (op.hasInput) statuses.add(422);
  if (op.hasBody) statuses.add(413).add(415);
  if (THROTTLED.has(op.key)) statuses.add(429);
  if (UPSTREAM_CALLS.has(op.key)) statuses.add(502).add(504);
  return [...statuses].sort((a, b) => a - b);
}

export function errorResponse(status: number) {
  return {
    description: DESCRIPTIONS[status] ?? `HTTP ${status}`,
    content: { 'application/json': { schema: { $ref: ERROR_ENVELOPE_REF } } },
  };
}
