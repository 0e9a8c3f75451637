import type { FastifyReply } from 'fastify';
import type { ErrorDescription } from '../../server/kernel/error-response';
import type { FieldErrors } from '../../server/kernel/errors';

export interface ErrorEnvelope {
  success: false;
  error: { code: number; message: string; timestamp: string; errors?: FieldErrors };
}

export function successEnvelope(data: unknown) {
  return { success: true as const, data: data ?? null };
}

export function errorEnvelope(status: number, message: string, errors?: FieldErrors): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = { code: status, message, timestamp: new Date().toISOString() };
  if (errors && Object.keys(errors).length > 0) error.errors = errors;
  return { success: false, error };
}

export function sendError(reply: FastifyReply, d: ErrorDescription): FastifyReply {
  if (d.headers) for (const [k, v] of Object.entries(d.headers)) reply.header(k, v);
  return reply.code(d.status).send(errorEnvelope(d.status, d.message, d.errors));
}
