import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { datasets } from '../../../db/schema/datasets';
import { widgets } from '../../../db/schema/widgets';
import type { Actor } from '../../../server/auth/actor';
import { AppError } from '../../../server/kernel/errors';
import { listObjects } from '../../../server/objects/list';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, uniq, type TestUser } from '../../support/factories';

const { t } = useTestApp();

const actorOf = (u: TestUser, opts: { sysadmin?: boolean } = {}): Actor => ({
  userId: u.id,
  username: u.username,
  accountType: 'local',
  groupIds: [],
  isSysadmin: opts.sysadmin ?? false,
  isWorkspaceManager: false,
  tokenKind: 'session',
});

const page = { page: 0, size: 20 };

describe('listObjects', () => {
  it('pages the readable objects of a kind with the caller’s standing on each, the area’s conditions and sort fields', async () => {
    const [author, viewer, stranger, sysadmin] = await Promise.all([1, 2, 3, 4].map(() => createUser(t.deps)));
    const ws = await createSharedWorkspace(t.deps, [
      { userId: author.id, role: 'Редактор' },
      { userId: viewer.id, role: 'Наблюдатель' },
    ]);
    const [dataset] = await t.deps.db
      .insert(datasets)
      .values({ name: uniq('ds'), workspaceId: ws, authorId: author.id })
      .returning();
    const names = ['b', 'A', 'c'].map((n) => `${n}_${uniq()}`);
    for (const [i, name] of names.entries()) {
      await t.deps.db
        .insert(widgets)
        .values({ name, type: i === 2 ? 'kpi' : 'table', datasetId: dataset.id, workspaceId: ws, authorId: author.id });
    }
    const list = (actor: Actor, sort?: { field: string; direction: 'asc' | 'desc' }, type?: string) =>
      listObjects(
        t.deps.db,
        actor,
        'widget',
        { ...page, sort, workspaceId: ws },
        {
          where: [type ? eq(widgets.type, type) : undefined],
          sort: { fields: ['id', 'name', 'type', 'created_at', 'updated_at'], columns: { type: widgets.type } },
        },
        (items) => items.map(({ row, role, isOwner }) => ({ name: row.name, role, isOwner })),
      );

    const byName = await list(actorOf(viewer), { field: 'name', direction: 'asc' });
    // Names sort case aside.
    expect(byName.content.map((w) => w.name)).toEqual([names[1], names[0], names[2]]);
    expect(byName.content.every((w) => w.role === 'Наблюдатель' && !w.isOwner)).toBe(true);
    expect(byName.page).toEqual({ size: 20, number: 0, total_elements: 3, total_pages: 1 });

    expect((await list(actorOf(author))).content.every((w) => w.role === 'Редактор' && w.isOwner)).toBe(true);
    expect(
      (await list(actorOf(sysadmin, { sysadmin: true }))).content.every((w) => w.role === null && !w.isOwner),
    ).toBe(true);
    expect((await list(actorOf(stranger))).page.total_elements).toBe(0);
    expect((await list(actorOf(viewer), undefined, 'kpi')).content.map((w) => w.name)).toEqual([names[2]]);

    // A sort field the list does not offer is the caller's 422; one it offers without a column is a programming error.
    await expect(list(actorOf(viewer), { field: 'dataset_id', direction: 'asc' })).rejects.toBeInstanceOf(AppError);
    await expect(
      listObjects(t.deps.db, actorOf(viewer), 'widget', page, { sort: { fields: ['id', 'type'] } }, (items) => items),
    ).rejects.toThrow('no column for the sort field type');
  });
});
