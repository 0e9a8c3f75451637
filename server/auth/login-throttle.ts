import { and, count, eq, gt, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { loginFailures } from '../../db/schema';
import { AppError } from '../errors';

/**
 * Throttling by (username, client address): a password-guesser is slowed down while the real user, coming from
 * another address, is not locked out; and even from the same address the lock lasts one window only.
 */
export const THROTTLE_WINDOW_SECONDS = 60;
export const THROTTLE_MAX_FAILURES = 5;

const keyOf = (username: string, ip: string) => `${username.toLowerCase()}|${ip}`;

export async function assertLoginAllowed(db: DbOrTx, username: string, ip: string): Promise<void> {
  const [{ n }] = await db
    .select({ n: count() })
    .from(loginFailures)
    .where(
      and(
        eq(loginFailures.key, keyOf(username, ip)),
        gt(loginFailures.failedAt, sql`now() - make_interval(secs => ${THROTTLE_WINDOW_SECONDS})`),
      ),
    );
  if (n >= THROTTLE_MAX_FAILURES) {
    throw new AppError('too_many_requests', 'Слишком много неудачных попыток входа, повторите через минуту', {
      headers: { 'retry-after': String(THROTTLE_WINDOW_SECONDS) },
    });
  }
}

export async function recordLoginFailure(db: DbOrTx, username: string, ip: string): Promise<void> {
  await db.insert(loginFailures).values({ key: keyOf(username, ip) });
  // Keep the table small: old rows no longer matter to any window.
  if (Math.random() < 0.05) {
    await db.delete(loginFailures).where(lt(loginFailures.failedAt, sql`now() - interval '1 hour'`));
  }
}

export async function clearLoginFailures(db: DbOrTx, username: string, ip: string): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.key, keyOf(username, ip)));
}
