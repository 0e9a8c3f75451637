import { and, asc, count, eq, ilike, ne, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { groups } from '../../db/schema/groups';
import { getApiTokenSettings } from '../mcp-tokens/mcp-tokens';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { badRequest } from '../kernel/errors';
import { containsPattern, orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { isForeignKeyViolation, isUniqueViolation } from '../kernel/db-errors';
import { insertGroup, updateGroup as updateGroupRow } from './store';
import { findGroupOr404, groupView, groupViewById, memberCountSql, type GroupView } from './views';

export const GROUP_SORT_FIELDS = ['id', 'name', 'member_count', 'created_at'] as const;

export interface GroupInput {
  name?: string;
  description?: string;
}

const duplicateName = (name: string) => badRequest(`Группа с именем «${name}» уже существует`);

async function assertNameFree(db: DbOrTx, name: string, exceptId?: number): Promise<void> {
  const sameName = sql`lower(${groups.name}) = lower(${name})`;
  const [taken] = await db
    .select({ id: groups.id })
    .from(groups)
    .where(exceptId === undefined ? sameName : and(sameName, ne(groups.id, exceptId)));
  if (taken) throw duplicateName(name);
}

/** The check above answers the usual case clearly; the unique index catches the race of two creates at once. */
async function withNameGuard<T>(name: string | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (name !== undefined && isUniqueViolation(e, 'groups_name_lower_uq')) throw duplicateName(name);
    throw e;
  }
}

export async function listGroups(db: DbOrTx, input: PageRequest & { query?: string }) {
  const where = input.query ? ilike(groups.name, containsPattern(input.query)) : undefined;
  const [{ total }] = await db.select({ total: count() }).from(groups).where(where);
  const rows = await db
    .select({ group: groups, members: memberCountSql })
    .from(groups)
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        { id: groups.id, name: sql`lower(${groups.name})`, member_count: memberCountSql, created_at: groups.createdAt },
        // System groups first: they are the ones that grant platform rights.
        [sql`${groups.systemKey} is null`, asc(sql`lower(${groups.name})`)],
        groups.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  return pageOf(
    rows.map((r) => groupView(r.group, r.members)),
    input,
    total,
  );
}

export const getGroup = (db: DbOrTx, id: number): Promise<GroupView> => groupViewById(db, id);

export async function createGroup(
  deps: AppDeps,
  input: Required<Pick<GroupInput, 'name'>> & GroupInput,
): Promise<GroupView> {
  return withNameGuard(input.name, () =>
    deps.db.transaction(async (tx) => {
      await assertNameFree(tx, input.name);
      const row = await insertGroup(tx, { name: input.name, description: input.description ?? '' });
      return groupView(row, 0);
    }),
  );
}

export async function updateGroup(deps: AppDeps, id: number, input: GroupInput): Promise<GroupView> {
  return withNameGuard(input.name, () =>
    deps.db.transaction(async (tx) => {
      const group = await findGroupOr404(tx, id, { forUpdate: true });
      const renamed = input.name !== undefined && input.name !== group.name;
      // Rights are tied to the system groups and people look for them by their names, so the names stay fixed.
      if (renamed && group.systemKey !== null) throw badRequest('Системную группу нельзя переименовать');
      if (renamed) await assertNameFree(tx, input.name!, id);
      await updateGroupRow(tx, id, {
        ...(input.name !== undefined && { name: input.name }),
        ...(input.description !== undefined && { description: input.description }),
      });
      return groupViewById(tx, id);
    }),
  );
}

export async function deleteGroup(deps: AppDeps, id: number): Promise<{ id: number; deleted: true }> {
  try {
    await deps.db
      .transaction(async (tx) => {
        const group = await findGroupOr404(tx, id, { forUpdate: true });
        if (group.systemKey !== null) throw badRequest('Системную группу нельзя удалить');
        // Deleting the token access group would silently lock everyone out of API tokens.
        const tokenSettings = await getApiTokenSettings(deps);
        if (tokenSettings.access_group_id === id) {
          throw badRequest('Группа задана как группа доступа к MCP-токенам: сначала измените настройки токенов');
        }
        // Group memberships and workspace memberships of the group go with it (foreign keys cascade).
        await tx.delete(groups).where(eq(groups.id, id));
      })
      .finally(() => readCachesChanged(deps)); // its workspace memberships went with it
  } catch (e) {
    if (isForeignKeyViolation(e)) throw badRequest('Группу нельзя удалить: на неё ссылаются другие объекты');
    throw e;
  }
  return { id, deleted: true };
}
