import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

/**
 * The one error table. Both transports read it: REST turns the kind into the HTTP status of the envelope,
 * /trpc into the tRPC code (and the same status in error.data.httpStatus).
 */
export const ERROR_TABLE = {
  bad_request: { status: 400, trpc: 'BAD_REQUEST', message: 'Запрос не может быть выполнен' },
  unauthorized: { status: 401, trpc: 'UNAUTHORIZED', message: 'Требуется аутентификация' },
  forbidden: { status: 403, trpc: 'FORBIDDEN', message: 'Доступ запрещён' },
  not_found: { status: 404, trpc: 'NOT_FOUND', message: 'Объект не найден' },
  payload_too_large: { status: 413, trpc: 'PAYLOAD_TOO_LARGE', message: 'Слишком большой запрос' },
  unsupported_media_type: {
    status: 415,
    trpc: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Неподдерживаемый формат тела запроса',
  },
  validation: { status: 422, trpc: 'UNPROCESSABLE_CONTENT', message: 'Ошибка валидации' },
  too_many_requests: { status: 429, trpc: 'TOO_MANY_REQUESTS', message: 'Слишком много попыток, повторите позже' },
  service_unavailable: {
    status: 503,
    trpc: 'SERVICE_UNAVAILABLE',
    message: 'Сервис временно недоступен, повторите позже',
  },
  // An upstream service (the AI provider) answered with an error or nothing usable; or did not answer in time.
  bad_gateway: { status: 502, trpc: 'BAD_GATEWAY', message: 'Внешний сервис ответил ошибкой' },
  gateway_timeout: { status: 504, trpc: 'GATEWAY_TIMEOUT', message: 'Внешний сервис не ответил вовремя' },
  internal: { status: 500, trpc: 'INTERNAL_SERVER_ERROR', message: 'Внутренняя ошибка сервера' },
} as const satisfies Record<string, { status: number; trpc: TRPC_ERROR_CODE_KEY; message: string }>;

export type ErrorKind = keyof typeof ERROR_TABLE;
export type FieldErrors = Record<string, string>;

/**
 * A failure the caller can act on. It is a TRPCError so that tRPC passes it through untouched; the REST adapter
 * reads `kind`, `message` and `fieldErrors` from it.
 */
export class AppError extends TRPCError {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly fieldErrors?: FieldErrors;
  readonly headers?: Record<string, string>;

  constructor(
    kind: ErrorKind,
    message?: string,
    opts: { fieldErrors?: FieldErrors; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    const row = ERROR_TABLE[kind];
    super({ code: row.trpc, message: message ?? row.message, cause: opts.cause });
    this.kind = kind;
    this.status = row.status;
    this.fieldErrors = opts.fieldErrors;
    this.headers = opts.headers;
  }
}

export const badRequest = (message: string) => new AppError('bad_request', message);
export const notFound = (message: string = ERROR_TABLE.not_found.message) => new AppError('not_found', message);
export const unauthorized = (message?: string) => new AppError('unauthorized', message);
/** A 422 for a rule that zod cannot express (for example a reference to an id that does not exist). */
export const invalid = (fieldErrors: FieldErrors, message?: string) =>
  new AppError('validation', message ?? ERROR_TABLE.validation.message, { fieldErrors });
