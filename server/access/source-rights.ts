import { and, eq, inArray, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { dataSources } from '../../db/schema/data-sources';
import { groupMembers } from '../../db/schema/groups';
import { objectRights } from '../../db/schema/object-rights';
import { users } from '../../db/schema/users';
import { workspaceMembers } from '../../db/schema/workspaces';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { AppError } from '../kernel/errors';
import { readableIds } from './object-access';
import { roleAllowsEdit, WORKSPACE_ROLES } from './roles';
import { cacheSlot } from '../kernel/app-caches';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import { TtlCache } from '../kernel/ttl-cache';

const EDITING_ROLES = WORKSPACE_ROLES.filter((r) => roleAllowsEdit(r));

/** Of the given source ids, those the caller can read (a role in their workspace or a right on the source). */
export async function readableSourceIds(db: DbOrTx, actor: Actor, ids: readonly number[]): Promise<Set<number>> {
  return readableIds(db, actor, 'data_source', [...ids]);
}

/*
 * Which sources a dataset may read. A dataset uses a source of its own workspace, or a source of another workspace
 * whose rows the dataset's author may read raw right now: an editing role there (Редактор or Администратор, directly
 * or by a group), the `edit` right on that source (their own or a group's), or a platform administrator; with an
 * active account. Reading a source is not enough: a Наблюдатель (or a `view` right) reads the source's datasets under
 * their row and column rules, and a dataset of their own on it (every user administers a personal workspace) would
 * read the same rows without those rules; the raw level is the one POST /api/data-source/{id}/preview asks
 * (rawReadableObject). The right belongs to the author, not to whoever opens a widget: readers of
 * the dataset's workspace see data the author brought in. Checked when the schema is saved and on every data read;
 * a refusal is 403 «Нет доступа к источнику данных «…» (id …)». See docs/roles.md.
 */

export interface DatasetOwnerRef {
  id: number;
  version: number;
  workspaceId: number;
  authorId: number | null;
}

export interface SourceRef {
  id: number;
  name: string;
  workspaceId: number;
}

const sourceForbidden = (s: Pick<SourceRef, 'id' | 'name'>) =>
  new AppError('forbidden', `Нет доступа к источнику данных «${s.name}» (id ${s.id})`);

/** Of the given sources, those whose rows the user may read raw now: an editing role there, or an `edit` right. */
async function sourcesUserReads(deps: AppDeps, db: DbOrTx, userId: number, sources: SourceRef[]): Promise<Set<number>> {
  const workspaceIds = [...new Set(sources.map((s) => s.workspaceId))];
  const userGroups = db.select({ id: groupMembers.groupId }).from(groupMembers).where(eq(groupMembers.userId, userId));
  const rows = await db
    .select({
      id: workspaceMembers.workspaceId,
      admin: sql<boolean>`exists (select 1 from ${groupMembers} where ${groupMembers.userId} = ${userId} and ${groupMembers.groupId} = ${deps.systemGroups.platformAdmins})`,
      rights: sql<number[]>`array(select ${objectRights.objectId} from ${objectRights}
        where ${objectRights.objectType} = 'data_source'
          and ${objectRights.objectId} in (${sql.join(
            sources.map((s) => sql`${s.id}`),
            sql`, `,
          )})
          and ${objectRights.right} = 'edit'
          and (${objectRights.userId} = ${userId} or ${objectRights.groupId} in (${userGroups})))`,
    })
    .from(users)
    .leftJoin(
      workspaceMembers,
      and(
        inArray(workspaceMembers.workspaceId, workspaceIds),
        inArray(workspaceMembers.role, EDITING_ROLES),
        or(eq(workspaceMembers.userId, users.id), inArray(workspaceMembers.groupId, userGroups)),
      ),
    )
    .where(and(eq(users.id, userId), eq(users.active, true)));
  if (rows.some((r) => r.admin)) return new Set(sources.map((s) => s.id));
  const workspaces = new Set(rows.flatMap((r) => (r.id === null ? [] : [r.id])));
  const withRight = new Set(rows.flatMap((r) => r.rights ?? []));
  return new Set(sources.filter((s) => workspaces.has(s.workspaceId) || withRight.has(s.id)).map((s) => s.id));
}

/** Whether a dataset's author may use a source of another workspace, keyed with the read epoch. */
const sourceRightDecisions = cacheSlot(
  'access.sourceRights',
  () => new TtlCache<string, boolean>(READ_DECISION_TTL_MS),
);

/**
 * 403 for the first source the dataset may not read. `cached`: decisions are kept per (dataset version, author,
 * source) under the process's read epoch (see AppDeps.caches), so a repeated read costs no metadata query and a
 * membership, role or source change in this process takes effect on the next request. When every decision is known
 * (the same workspace, or cached) it answers at once, without a promise (every widget read comes here), throwing the
 * 403 itself; otherwise the promise of the metadata query's decisions.
 */
export function assertSourcesUsable(
  deps: AppDeps,
  db: DbOrTx,
  dataset: DatasetOwnerRef,
  sources: SourceRef[],
  opts: { cached: boolean },
): Promise<void> | undefined {
  const foreign = sources.filter((s) => s.workspaceId !== dataset.workspaceId);
  if (foreign.length === 0) return undefined;
  const cache = deps.caches.of(sourceRightDecisions);
  const epoch = deps.caches.readEpoch.value;
  const key = (s: SourceRef) =>
    `${epoch}:${dataset.id}:${dataset.version}:${dataset.authorId}:${s.id}:${s.workspaceId}`;
  const allowed = new Map<number, boolean>();
  for (const s of foreign) {
    const hit = opts.cached ? cache.get(key(s)) : undefined;
    if (hit !== undefined) allowed.set(s.id, hit);
  }
  const refuseDenied = () => {
    const denied = foreign.find((s) => !allowed.get(s.id));
    if (denied) throw sourceForbidden(denied);
  };
  const unknown = foreign.filter((s) => !allowed.has(s.id));
  if (unknown.length === 0) {
    refuseDenied();
    return undefined;
  }
  const readable =
    dataset.authorId === null
      ? Promise.resolve(new Set<number>())
      : sourcesUserReads(deps, db, dataset.authorId, unknown);
  return readable.then((ids) => {
    for (const s of unknown) {
      allowed.set(s.id, ids.has(s.id));
      cache.set(key(s), ids.has(s.id));
    }
    refuseDenied();
  });
}

/** At a schema save: every source the objects refer to must be usable by the dataset (fresh, never cached). */
export async function assertSchemaSourcesUsable(
  deps: AppDeps,
  db: DbOrTx,
  dataset: DatasetOwnerRef,
  sourceIds: readonly number[],
): Promise<void> {
  const ids = [...new Set(sourceIds)];
  if (ids.length === 0) return;
  const rows = await db
    .select({ id: dataSources.id, name: dataSources.name, workspaceId: dataSources.workspaceId })
    .from(dataSources)
    .where(inArray(dataSources.id, ids));
  await assertSourcesUsable(deps, db, dataset, rows, { cached: false });
}
