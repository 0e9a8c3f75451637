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
  /**
   * What lies behind a foreseen failure (a source driver's own error behind «Подключение к источнику прервано»): not
   * for the caller, who gets the short message, but logged so that an operator can see what the source said.
   */
  cause?: unknown;
}

/** Turns anything thrown by a procedure into the one error table's status and message. */
export function describeError(err: unknown): ErrorDescription {
  if (err instanceof AppError) {
    return {
      status: err.status,
      message: err.message,
      errors: err.fieldErrors,
      headers: err.headers,
      cause: err.cause,
    };
  }
  const cause = err instanceof TRPCError ? err.cause : undefined;
  if (cause instanceof AppError) return describeError(cause);
  // Input parsing failed (tRPC reports BAD_REQUEST with the zod error as cause). A zod error under any other code is
  // an output that did not match its schema: our defect, a 500.
  const isZod = (x: unknown): x is $ZodError => x instanceof ZodError || x instanceof $ZodError;
  if (err instanceof TRPCError && err.code === 'BAD_REQUEST' && isZod(cause)) {
    return { status: 422, message: ERROR_TABLE.validation.message, errors: fieldErrorsFromIssues(cause.issues) };
  }
  if (isZod(err))
    return { status: 422, message: ERROR_TABLE.validation.message, errors: fieldErrorsFromIssues(err.issues) };
  const e = err;
  if (e instanceof TRPCError) {
    const row = Object.values(ERROR_TABLE).find((r) => r.trpc === e.code);
    if (row && row.status < 500) return { status: row.status, message: row.message };
  }
  return { status: 500, message: ERROR_TABLE.internal.message, unexpected: err };
}
