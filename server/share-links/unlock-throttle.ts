import { and, count, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { shareLinkUnlockFailures } from '../../db/schema/share-links';
import { AppError } from '../kernel/errors';
import { MSG } from './messages';

/*
 * Failed unlocks of a password link (POST /api/public/link/{token}/unlock), throttled per (link, client address): a
 * guesser is slowed down without locking the link for its other viewers. As with logins, an attempt is booked
 * before the password is checked (so concurrent guesses cannot all pass a check-then-record), under an advisory lock
 * per key; a right password clears the key's bookings.
 */
const UNLOCK_WINDOW_SECONDS = 60;
const UNLOCK_MAX_FAILURES = 5;

const keyOf = (linkId: number, ip: string) => `${linkId}|${ip}`;

export async function reserveUnlockAttempt(db: Db, linkId: number, ip: string): Promise<void> {
  const key = keyOf(linkId, ip);
  const booked = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${'share-unlock:' + key}))`);
    const [{ n }] = await tx
      .select({ n: count() })
      .from(shareLinkUnlockFailures)
      .where(
        and(
          eq(shareLinkUnlockFailures.key, key),
          gt(shareLinkUnlockFailures.failedAt, sql`now() - make_interval(secs => ${UNLOCK_WINDOW_SECONDS})`),
        ),
      );
    if (n >= UNLOCK_MAX_FAILURES) return false;
    await tx.insert(shareLinkUnlockFailures).values({ key });
    return true;
  });
  if (!booked)
    throw new AppError('too_many_requests', MSG.tooManyUnlocks, {
      headers: { 'retry-after': String(UNLOCK_WINDOW_SECONDS) },
    });
  // Keep the table small: old rows no longer matter to any window.
  if (Math.random() < 0.05)
    await db
      .delete(shareLinkUnlockFailures)
      .where(lt(shareLinkUnlockFailures.failedAt, sql`now() - interval '1 hour'`));
}

export async function clearUnlockFailures(db: Db, linkId: number, ip: string): Promise<void> {
  await db.delete(shareLinkUnlockFailures).where(eq(shareLinkUnlockFailures.key, keyOf(linkId, ip)));
}
