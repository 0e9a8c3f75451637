import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../../db/client';
import { insertSource } from '../../../server/data-sources/store';
import { createCopyMap, mapCopyOf, mapObjects, mappedObjects, readCopyMap } from '../../../server/objects/copy-map';
import { useTestApp } from '../../support/app';
import { createSharedWorkspace, createUser, uniq, type TestUser } from '../../support/factories';

/*
 * The copy map (server/objects/copy-map.ts), the engine under a deploy and the copy endpoints: which copy each
 * original gets, under which name, and what a run may not do (map a missing object, see an earlier run's entries).
 */

const { t } = useTestApp();
let user: TestUser;
let target: number;

beforeAll(async () => {
  user = await createUser(t.deps);
  target = await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Администратор' }]);
});

const source = (workspaceId: number, name = uniq('src')) =>
  insertSource(t.deps.db, {
    name,
    type: 'postgresql',
    workspaceId,
    authorId: user.id,
    settings: { host: '127.0.0.1', port: 5432, db: 'shop', username: 'reader' },
  });

/** Runs `f` in a transaction that is rolled back afterwards (nothing the test maps or writes stays). */
async function inRolledBack<T>(f: (tx: Tx) => Promise<T>): Promise<T> {
  let out: T | undefined;
  await t.deps.db
    .transaction(async (tx) => {
      out = await f(tx);
      throw new Error('rollback');
    })
    .catch((e: unknown) => {
      if (!(e instanceof Error) || e.message !== 'rollback') throw e;
    });
  return out as T;
}

describe('copy map', () => {
  it('draws a new id from the kind sequence for each original; keeps a copy named by `keep` only while it is in the target', async () => {
    const [a, b, c] = [
      await source(user.personalWorkspaceId),
      await source(user.personalWorkspaceId),
      await source(user.personalWorkspaceId),
    ];
    const copyOfA = await source(target);
    const elsewhere = await source(user.personalWorkspaceId); // a "copy" that is not in the target workspace
    const res = await inRolledBack(async (tx) => {
      await createCopyMap(tx);
      const copies = sql`select * from (values (${a.id}::int, ${copyOfA.id}::int), (${b.id}::int, ${elsewhere.id}::int))
        l(original_id, copy_id)`;
      const drawn = await mapObjects(tx, 'data_source', [a.id, b.id, c.id, c.id], {
        keep: { copies, workspaceId: target },
      });
      return { drawn, mapped: await mappedObjects(tx, target) };
    });
    expect(res.drawn.get(a.id)).toBe(copyOfA.id);
    expect(res.drawn.get(b.id)).not.toBe(elsewhere.id);
    expect(res.drawn.size).toBe(3);
    const ids = [...res.drawn.values()];
    expect(new Set(ids).size).toBe(3);
    expect(res.mapped.map((m) => [m.originalId, m.copyId, m.created, m.name])).toEqual(
      [a, b, c].sort((x, y) => x.id - y.id).map((o) => [o.id, res.drawn.get(o.id), o.id !== a.id, o.name]),
    );
  });

  it('names the copy when asked, and tells a created copy that meets a namesake in the target', async () => {
    const taken = uniq('taken');
    await source(target, taken);
    const original = await source(user.personalWorkspaceId, taken);
    const other = await source(user.personalWorkspaceId);
    const mapped = await inRolledBack(async (tx) => {
      await createCopyMap(tx);
      await mapObjects(tx, 'data_source', [original.id]);
      await mapObjects(tx, 'dataset', []); // nothing to map: no statement, no entry
      return mappedObjects(tx, target);
    });
    expect(mapped).toEqual([
      expect.objectContaining({
        kind: 'data_source',
        originalId: original.id,
        name: taken,
        nameTaken: true,
        created: true,
      }),
    ]);
    const named = await inRolledBack(async (tx) => {
      const copyId = await mapCopyOf(tx, 'data_source', other.id, 'Новое имя');
      return { copyId, mapped: await mappedObjects(tx, target) };
    });
    expect(named.mapped).toEqual([
      {
        kind: 'data_source',
        originalId: other.id,
        copyId: named.copyId,
        created: true,
        name: 'Новое имя',
        nameTaken: false,
      },
    ]);
  });

  it("answers the kind's 404 for an original that does not exist", async () => {
    const run = inRolledBack(async (tx) => {
      await createCopyMap(tx);
      await mapObjects(tx, 'widget', [2_000_000_000]);
    });
    await expect(run).rejects.toMatchObject({ kind: 'not_found', message: 'Виджет не найден (id 2000000000)' });
  });

  it("a new map in the same transaction starts empty: a second run never sees the first run's entries", async () => {
    const [a, b] = [await source(user.personalWorkspaceId), await source(user.personalWorkspaceId)];
    const seen = await inRolledBack(async (tx) => {
      await mapCopyOf(tx, 'data_source', a.id);
      await mapCopyOf(tx, 'data_source', b.id);
      return readCopyMap(tx, { data_source: [a.id, b.id] });
    });
    expect([...seen.data_source.keys()]).toEqual([b.id]);
  });
});
