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
 * Public operations that still check a credential of their own and so answer 401: a password, a refresh token, a
 * one-time SSO code, and a share link's password grant (every viewer path but the link's state, which is what tells
 * the viewer a password is needed).
 */
const CREDENTIAL_CHECKS = new Set(['POST /api/auth/login', 'POST /api/auth/refresh', 'POST /api/auth/sso/exchange']);
const SHARE_LINK_STATE = 'GET /api/public/link/{token}';
/**
 * Operations under the login throttle (server/auth/login-throttle.ts): repeated failures for one username from one
 * address are refused with 429 — the password login, the SSO callbacks and the old-password check of a password
 * change.
 */
const THROTTLED = new Set([
  'POST /api/auth/login',
  'GET /api/auth/sso/{providerId}/callback',
  'POST /api/auth/sso/{providerId}/callback',
  'PUT /api/users/me/password',
]);
/**
 * The unauthenticated share-link paths: rate limited per client address (server/app/public-rate-limit.ts) and the
 * unlock throttled per link, both 429; a link suspended, expired or with public links switched off is a 403.
 */
const SHARE_LINK = /^\/api\/public\//;
/** Operations that wait for the AI provider: 502 when it fails, 504 when it does not answer in time. */
const UPSTREAM_CALLS = new Set(['POST /api/ai/formula', 'POST /api/ai/sql', 'POST /api/ai/widget-code']);

export interface OperationTraits {
  /** `METHOD /path` */
  key: string;
  method: string;
  path: string;
  isPublic: boolean;
  hasPathParameters: boolean;
  /** A parameter or a body field names an object by id (`id`, `*_id`, `*_ids`, `*Id`, `*Ids`). */
  namesObjects: boolean;
  hasInput: boolean;
  /** The operation's own answers are not the envelope (e.g. JSON-RPC): input is not validated into a 422. */
  ownProtocol: boolean;
}

export function errorStatuses(op: OperationTraits): number[] {
  // 400: a body that is no JSON, a malformed URL, a request the server cannot carry out.
  const statuses = new Set<number>([400, 500]);
  const shareLink = SHARE_LINK.test(op.path);
  if (!op.isPublic || CREDENTIAL_CHECKS.has(op.key) || (shareLink && op.key !== SHARE_LINK_STATE)) statuses.add(401);
  // Any authenticated call may be refused with 403 before its own checks: an API token is held to the token switch,
  // the allowed account types and the access group on every call (server/auth/authenticate.ts).
  if (!op.isPublic || shareLink) statuses.add(403);
  // An id in the path or in the input that names no object the caller may see.
  if (op.hasPathParameters || op.namesObjects) statuses.add(404);
  if (op.hasInput && !op.ownProtocol) statuses.add(422);
  // Whatever the operation takes, a method with a body has it parsed: too large (413) or not JSON (415).
  if (op.method !== 'GET') statuses.add(413).add(415);
  if (THROTTLED.has(op.key) || shareLink) statuses.add(429);
  if (UPSTREAM_CALLS.has(op.key)) statuses.add(502).add(504);
  return [...statuses].sort((a, b) => a - b);
}

export function errorResponse(status: number) {
  return {
    description: DESCRIPTIONS[status] ?? `HTTP ${status}`,
    content: { 'application/json': { schema: { $ref: ERROR_ENVELOPE_REF } } },
  };
}
