/*
 * PostgreSQL constraint failures that a concurrent request can cause even after our own checks passed (two creates of
 * one name at once). They are turned into 400s instead of surfacing as 500s. drizzle wraps the driver's error, so the
 * code is looked for along the cause chain.
 */
function pgErrorCode(err: unknown): { code?: string; constraint?: string } | undefined {
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code, constraint } = e as { code?: unknown; constraint?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
      return { code, constraint: typeof constraint === 'string' ? constraint : undefined };
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const pg = pgErrorCode(err);
  return pg?.code === '23505' && (!constraint || pg.constraint === constraint);
}

export function isForeignKeyViolation(err: unknown): boolean {
  return pgErrorCode(err)?.code === '23503';
}
