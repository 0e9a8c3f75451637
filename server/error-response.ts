import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { $ZodError } from 'zod/v4/core';
import { AppError, ERROR_TABLE, type FieldErrors } from './errors';
import { fieldErrorsFromIssues } from './validation';

export interface ErrorDescription {
  status: number;
  message: string;
  errors?: FieldErrors;
  headers?: Record<string, string>;
  /** Set for failures we did not foresee: they are logged, and the caller sees only the generic 500 message. */
  unexpected?: unknown;
}

/** Turns anything thrown by a procedure into the one error table's status and message. */
export function describeError(err: unknown): ErrorDescription {
  let e: unknown = err;
  // tRPC wraps what it did not throw itself; look at the cause.
  if (e instanceof TRPCError && !(e instanceof AppError) && e.cause) e = e.cause;
  if (e instanceof AppError) {
    return { status: e.status, message: e.message, errors: e.fieldErrors, headers: e.headers };
  }
  if (e instanceof ZodError || e instanceof $ZodError) {
    return { status: 422, message: ERROR_TABLE.validation.message, errors: fieldErrorsFromIssues(e.issues) };
  }
  if (e instanceof TRPCError) {
    const row = Object.values(ERROR_TABLE).find((r) => r.trpc === e.code);
    if (row && row.status < 500) return { status: row.status, message: row.message };
  }
  return { status: 500, message: ERROR_TABLE.internal.message, unexpected: err };
}
