import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { dataSourceAccessLog } from '../../db/schema/data-sources';
import type { Actor } from '../auth/actor';
import { timeRange } from '../objects/list';
import { orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { ownedObject } from '../access/object-access';
import { userRef } from '../users/views';

export const ACCESS_ACTIONS = ['read', 'query', 'edit'] as const;
export type AccessAction = (typeof ACCESS_ACTIONS)[number];
export const ACCESS_LOG_SORT_FIELDS = ['created_at', 'action', 'user_id'] as const;

/** Who used the source, by name: joined from the users area (one query per page). */
const users = userRef();

/**
 * One line per use of a source: read (metadata, preview, column values, check), query (SQL console) and edit
 * (create, change, copy, file replace, metadata refresh). Written after access is granted, before the work runs,
 * so that failed attempts are on record too. Never holds secrets: `detail` names what was touched, not settings.
 */
export async function logSourceAccess(
  db: DbOrTx,
  sourceId: number,
  actor: Actor,
  action: AccessAction,
  detail = '',
): Promise<void> {
  await db
    .insert(dataSourceAccessLog)
    .values({ dataSourceId: sourceId, userId: actor.userId, action, detail: detail.slice(0, 2000) });
}

export interface AccessLogFilter {
  userId?: number;
  action?: AccessAction;
  createdAtFrom?: Date;
  createdAtTo?: Date;
}

export async function listAccessLog(db: DbOrTx, actor: Actor, sourceId: number, input: PageRequest & AccessLogFilter) {
  await ownedObject(db, actor, 'data_source', sourceId);
  const conditions: SQL[] = [eq(dataSourceAccessLog.dataSourceId, sourceId)];
  if (input.userId !== undefined) conditions.push(eq(dataSourceAccessLog.userId, input.userId));
  if (input.action) conditions.push(eq(dataSourceAccessLog.action, input.action));
  conditions.push(...timeRange(dataSourceAccessLog.createdAt, input.createdAtFrom, input.createdAtTo));
  const where = and(...conditions);
  const [{ total }] = await db.select({ total: count() }).from(dataSourceAccessLog).where(where);
  const rows = await db
    .select({ log: dataSourceAccessLog, username: users.username })
    .from(dataSourceAccessLog)
    .leftJoin(users, eq(users.id, dataSourceAccessLog.userId))
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        {
          created_at: dataSourceAccessLog.createdAt,
          action: dataSourceAccessLog.action,
          user_id: dataSourceAccessLog.userId,
        },
        [desc(dataSourceAccessLog.createdAt)],
        dataSourceAccessLog.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  return pageOf(
    rows.map((r) => ({
      id: r.log.id,
      user_id: r.log.userId,
      username: r.username,
      action: r.log.action as AccessAction,
      detail: r.log.detail,
      created_at: r.log.createdAt.toISOString(),
    })),
    input,
    total,
  );
}
