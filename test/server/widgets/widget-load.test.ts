import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type pg from 'pg';
import { dataSources } from '../../../db/schema/data-sources';
import { inArray } from 'drizzle-orm';
import type { Actor } from '../../../server/auth/actor';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { insertSource } from '../../../server/data-sources/store';
import { insertDataset } from '../../../server/datasets/store';
import { insertWidget } from '../../../server/widgets/store';
import { loadWidgetForData } from '../../../server/widgets/widget-load';
import { useTestApp } from '../../support/app';
import { createUser, uniq, type TestUser } from '../../support/factories';

/*
 * The widget data hot path reads the widget, the caller's access, its dataset's version and owner and the dataset's
 * whole source rows in ONE prepared statement, over tables of three areas (the pieces come from datasets/views.ts and
 * data-sources/views.ts).
 */

const { t } = useTestApp();
let user: TestUser;

beforeAll(async () => {
  user = await createUser(t.deps);
});
afterEach(() => vi.restoreAllMocks());

const actorOf = (u: TestUser): Actor => ({
  userId: u.id,
  username: u.username,
  accountType: 'local',
  groupIds: [],
  isSysadmin: false,
  isWorkspaceManager: false,
  tokenKind: 'session',
});

const source = (name: string) =>
  insertSource(t.deps.db, {
    name: uniq(name),
    type: 'postgresql',
    workspaceId: user.personalWorkspaceId,
    authorId: user.id,
    settings: { host: '127.0.0.1', port: 5432, db: name, username: 'reader' },
    secrets: t.deps.secretBox.seal({ password: `${name}-secret` }),
  });

describe('loadWidgetForData', () => {
  it('answers the widget with its dataset, the caller’s standing on both and the dataset’s whole source rows in one query', async () => {
    const [a, b] = [await source('a'), await source('b')];
    await source('unused');
    const dataset = await t.deps.db.transaction((tx) =>
      insertDataset(tx, { name: uniq('ds'), workspaceId: user.personalWorkspaceId, authorId: user.id }, [b.id, a.id]),
    );
    const widget = await insertWidget(t.deps.db, {
      name: uniq('w'),
      type: 'table',
      datasetId: dataset.id,
      workspaceId: user.personalWorkspaceId,
      authorId: user.id,
    });
    readCachesChanged(t.deps); // no cached answer: the statement runs
    const pool = (t.deps.db as unknown as { $client: pg.Pool }).$client;
    const queries = vi.spyOn(pool, 'query');

    const read = await loadWidgetForData(t.deps, actorOf(user), widget.id);

    // The read epoch's bump above is also told to other nodes (server/cluster/cache-bus.ts) on the same pool, on the
    // next turn: that message is not part of the read.
    const reads = queries.mock.calls.filter(([q]) => !/pg_notify/.test(typeof q === 'string' ? q : String(q)));
    expect(reads).toHaveLength(1);
    expect(read).toMatchObject({
      role: 'Администратор',
      row: { id: widget.id },
      datasetReadable: true,
      dataset: { id: dataset.id, version: dataset.version, workspaceId: dataset.workspaceId, authorId: user.id },
    });
    const rows = await t.deps.db
      .select()
      .from(dataSources)
      .where(inArray(dataSources.id, [a.id, b.id]));
    const byId = (x: { id: number }, y: { id: number }) => x.id - y.id;
    expect([...read.sources].sort(byId)).toEqual(rows.sort(byId));
  });
});
