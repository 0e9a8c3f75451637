import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema';
import type { Actor } from '../auth/actor';
import { AppError, invalid } from '../kernel/errors';

/**
 * `view_as_user_id` (API only): a system administrator reads data as another user would. Row-level security will
 * apply that user's row filter; until then the user must exist and the data are the same. Anyone else: 403.
 */
export async function checkViewAs(db: DbOrTx, actor: Actor, userId: number | undefined): Promise<void> {
  if (userId === undefined) return;
  if (!actor.isSysadmin) throw new AppError('forbidden');
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId));
  if (!user) throw invalid({ viewAsUserId: `Пользователь не найден (id ${userId})` });
}
