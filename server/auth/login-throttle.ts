import { and, count, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/client';
import { loginFailures } from '../../db/schema/auth-tokens';
import { AppError } from '../kernel/errors';

/**
 * Throttling by (username, client address): a password-guesser is slowed down while the real user, coming from
 * another address, is not locked out; and even from the same address the lock lasts one window only.
 */
const THROTTLE_WINDOW_SECONDS = 60;
const THROTTLE_MAX_FAILURES = 5;

const keyOf = (username: string, ip: string) => `${username.toLowerCase()}|${ip}`;

function tooManyAttempts(): AppError {
  return new AppError('too_many_requests', 'Слишком много неудачных попыток входа, повторите через минуту', {
    headers: { 'retry-after': String(THROTTLE_WINDOW_SECONDS) },
  });
}

/**
 * Books one attempt for the key before the password is checked, and refuses (429) once the window holds the maximum.
 * The booking counts as a failure until the login succeeds (clearLoginFailures) or is released: a check-then-record
 * pair let concurrent guesses all pass the check before any of them was recorded. Attempts on one key queue on a
 * transaction-scoped advisory lock, so the count and the insert are one step for them; other keys do not wait.
 * Returns the booking's id.
 */
export async function reserveLoginAttempt(db: Db, username: string, ip: string): Promise<number> {
  const key = keyOf(username, ip);
  const id = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${'login:' + key}))`);
    const [{ n }] = await tx
      .select({ n: count() })
      .from(loginFailures)
      .where(
        and(
          eq(loginFailures.key, key),
          gt(loginFailures.failedAt, sql`now() - make_interval(secs => ${THROTTLE_WINDOW_SECONDS})`),
        ),
      );
    if (n >= THROTTLE_MAX_FAILURES) return null;
    const [row] = await tx.insert(loginFailures).values({ key }).returning({ id: loginFailures.id });
    return row.id;
  });
  if (id === null) throw tooManyAttempts();
  // Keep the table small: old rows no longer matter to any window.
  if (Math.random() < 0.05) {
    await db.delete(loginFailures).where(lt(loginFailures.failedAt, sql`now() - interval '1 hour'`));
  }
  return id;
}

/** Gives a booked attempt back: the password was right, yet the login did not go through for another reason. */
export async function releaseLoginAttempt(db: DbOrTx, attemptId: number): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.id, attemptId));
}

export async function clearLoginFailures(db: DbOrTx, username: string, ip: string): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.key, keyOf(username, ip)));
}
