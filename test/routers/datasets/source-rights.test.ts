import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import type { listMembersOutput } from '../../../routers/workspaces/schemas';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import {
  addToGroup,
  createGroup,
  createSharedWorkspace,
  createUser,
  login,
  loginAdmin,
  uniq,
  type TestUser,
} from '../../support/factories';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
} from '../widgets/world';

/*
 * A dataset reads a source of its own workspace, or one of another workspace whose rows its author may read raw right
 * now (an editing role there, the `edit` right on the source, or a platform administrator): a Наблюдатель of the
 * source's workspace, or a `view` right, reads the source's datasets under their row and column rules, and may not
 * build a dataset of their own on it that would read the same rows without them.
 * Losing that right stops every read at once (403 «Нет доступа к источнику данных …»), and so does a schema save
 * that adds another table of the source; a reader removed from the dataset's workspace stops reading at once too.
 */

interface Body<T> {
  data: T;
  error?: { message: string };
}
type MemberList = z.output<typeof listMembersOutput>;

const { t, api } = useTestApp();
let db: pg.Client;
let tables: { sales: string; regions: string };
let adminA: TestUser;
let adminB: TestUser;
let author: TestUser;
let reader: TestUser;
const tokens: Record<string, string> = {};
let wsA: number;
let wsB: number;
let sourceA: number;

beforeAll(async () => {
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(30));
  [adminA, adminB, author, reader] = await Promise.all([
    createUser(t.deps),
    createUser(t.deps),
    createUser(t.deps),
    createUser(t.deps),
  ]);
  // The author edits in workspace A, and builds in workspace B.
  wsA = await createSharedWorkspace(t.deps, [
    { userId: adminA.id, role: 'Администратор' },
    { userId: author.id, role: 'Редактор' },
  ]);
  wsB = await createSharedWorkspace(t.deps, [
    { userId: adminB.id, role: 'Администратор' },
    { userId: author.id, role: 'Редактор' },
    { userId: reader.id, role: 'Наблюдатель' },
  ]);
  sourceA = await createPgSource(t.deps, wsA, adminA.id);
  for (const u of [adminA, adminB, author, reader]) tokens[u.username] = await login(api, u.username, u.password);
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

async function removeMember(workspaceId: number, userId: number, adminToken: string) {
  const list = await api.get(`/api/workspaces/${workspaceId}/members`, adminToken);
  expect(list.status, JSON.stringify(list.body)).toBe(200);
  const member = (list.body as Body<MemberList>).data.content.find((m) => m.user_id === userId)!;
  const removed = await api.delete(`/api/workspaces/${workspaceId}/members/${member.member_id}`, adminToken);
  expect(removed.status, JSON.stringify(removed.body)).toBe(200);
}

const forbiddenSource = (res: { status: number; body: Body<unknown> }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.body.error?.message).toMatch(/^Нет доступа к источнику данных «.+» \(id \d+\)$/);
};

describe('a dataset on a source of another workspace', () => {
  it("is refused to an author who only reads the source (a Наблюдатель there, or a `view` right): it would read the source's rows without the row and column rules of its datasets", async () => {
    const viewerOfA = await createUser(t.deps);
    const wsV = await createSharedWorkspace(t.deps, [
      { userId: adminA.id, role: 'Администратор' },
      { userId: viewerOfA.id, role: 'Наблюдатель' },
    ]);
    const sourceV = await createPgSource(t.deps, wsV, adminA.id);
    const own = await createSharedWorkspace(t.deps, [{ userId: viewerOfA.id, role: 'Администратор' }]);
    const token = await login(api, viewerOfA.username, viewerOfA.password);
    await expect(createSalesDataset(api, token, { workspaceId: own, sourceId: sourceV, tables })).rejects.toThrow(
      /403.*Нет доступа к источнику данных/,
    );
    const granted = await api.put(
      `/api/access/data_source/${sourceV}/users/${viewerOfA.id}`,
      { right: 'view' },
      tokens[adminA.username],
    );
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    await expect(createSalesDataset(api, token, { workspaceId: own, sourceId: sourceV, tables })).rejects.toThrow(
      /403.*Нет доступа к источнику данных/,
    );
    // The `edit` right is the raw level: now the dataset may be built.
    ok(
      await api.put(
        `/api/access/data_source/${sourceV}/users/${viewerOfA.id}`,
        { right: 'edit' },
        tokens[adminA.username],
      ),
    );
    await createSalesDataset(api, token, { workspaceId: own, sourceId: sourceV, tables });
  });

  it('reads while its author can read the source, and stops at once when the author is removed from it', async () => {
    const ds = await createSalesDataset(api, tokens[author.username], { workspaceId: wsB, sourceId: sourceA, tables });
    const created = await api.post(
      '/api/widget',
      {
        name: uniq('w'),
        type: 'table',
        dataset_id: ds.id,
        rows: [{ id: 'p', sql: '[sales.product]' }],
        columns: [{ id: 'n', sql: 'COUNT()' }],
      },
      tokens[author.username],
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const widgetId = (created.body as Body<{ id: number }>).data.id;
    const read = (token: string) => api.post(`/api/widget/${widgetId}/data`, {}, token);
    const preview = (token: string) =>
      api.post(
        '/api/widget/preview',
        { dataset_id: ds.id, type: 'table', columns: [{ id: 'n', sql: 'COUNT()' }] },
        token,
      );
    const datasetPreview = (token: string) => api.post(`/api/dataset/${ds.id}/preview`, {}, token);
    const values = (token: string) =>
      api.get(`/api/dataset/${ds.id}/field-values`, token, { fieldId: String(ds.fieldId('product')) });

    for (const token of [tokens[author.username], tokens[reader.username]]) {
      expect((await read(token)).status).toBe(200);
      expect((await read(token)).status).toBe(200); // a second read is served from the caches
      expect((await preview(token)).status).toBe(200);
      expect((await datasetPreview(token)).status).toBe(200);
      expect((await values(token)).status).toBe(200);
    }

    await removeMember(wsA, author.id, tokens[adminA.username]);

    for (const token of [tokens[author.username], tokens[reader.username]]) {
      forbiddenSource(await read(token));
      forbiddenSource(await preview(token));
      forbiddenSource(await datasetPreview(token));
      forbiddenSource(await values(token));
    }
    // Nor may the author add another table of that source.
    const schema = {
      ...ds.details,
      objects: [
        ...ds.details.objects,
        { id: -1, data_source_id: sourceA, name: 'more', schema: 'public', table: tables.sales },
      ],
    };
    const { id: _id, ...body } = schema;
    const saved = await api.put(
      `/api/dataset/${ds.id}/schema`,
      {
        objects: body.objects,
        fields: body.fields,
        relations: body.relations,
        hierarchies: body.hierarchies,
        filters: body.filters,
        parameters: body.parameters,
      },
      tokens[author.username],
    );
    forbiddenSource(saved);
  });

  it("an `edit` right on the source counts like an editing membership: granted to the author's group it lets the dataset read, revoked it stops reads at once", async () => {
    const builder = await createUser(t.deps);
    const group = await createGroup(t.deps);
    await addToGroup(t.deps, builder.id, group.id);
    const wsE = await createSharedWorkspace(t.deps, [{ userId: adminA.id, role: 'Администратор' }]);
    const wsF = await createSharedWorkspace(t.deps, [
      { userId: builder.id, role: 'Администратор' },
      { userId: reader.id, role: 'Наблюдатель' },
    ]);
    const sourceE = await createPgSource(t.deps, wsE, adminA.id);
    const grant = await api.put(
      `/api/access/data_source/${sourceE}/groups/${group.id}`,
      { right: 'edit' },
      tokens[adminA.username],
    );
    expect(grant.status, JSON.stringify(grant.body)).toBe(200);
    const builderToken = await login(api, builder.username, builder.password);
    const ds = await createSalesDataset(api, builderToken, { workspaceId: wsF, sourceId: sourceE, tables });
    const values = () =>
      api.get(`/api/dataset/${ds.id}/field-values`, tokens[reader.username], {
        fieldId: String(ds.fieldId('product')),
      });
    expect((await values()).status).toBe(200);
    expect((await values()).status).toBe(200);
    const revoked = await api.delete(`/api/access/data_source/${sourceE}/groups/${group.id}`, tokens[adminA.username]);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    forbiddenSource(await values());
  });

  it('stops reading when the author account is switched off', async () => {
    const other = await createUser(t.deps);
    const wsC = await createSharedWorkspace(t.deps, [
      { userId: adminA.id, role: 'Администратор' },
      { userId: other.id, role: 'Редактор' },
    ]);
    const wsD = await createSharedWorkspace(t.deps, [
      { userId: other.id, role: 'Администратор' },
      { userId: reader.id, role: 'Наблюдатель' },
    ]);
    const sourceC = await createPgSource(t.deps, wsC, adminA.id);
    const otherToken = await login(api, other.username, other.password);
    const ds = await createSalesDataset(api, otherToken, { workspaceId: wsD, sourceId: sourceC, tables });
    const values = () =>
      api.get(`/api/dataset/${ds.id}/field-values`, tokens[reader.username], {
        fieldId: String(ds.fieldId('product')),
      });
    expect((await values()).status).toBe(200);
    expect((await values()).status).toBe(200);
    const off = await api.put(`/api/users/${other.id}`, { active: false }, await loginAdmin(api));
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    forbiddenSource(await values());
  });

  it('a reader removed from the dataset workspace stops reading its widgets at once', async () => {
    const sourceB = await createPgSource(t.deps, wsB, adminB.id);
    const ds = await createSalesDataset(api, tokens[adminB.username], { workspaceId: wsB, sourceId: sourceB, tables });
    const created = await api.post(
      '/api/widget',
      { name: uniq('w'), type: 'table', dataset_id: ds.id, rows: [{ id: 'p', sql: '[sales.product]' }] },
      tokens[adminB.username],
    );
    const widgetId = (created.body as Body<{ id: number }>).data.id;
    const read = () => api.post(`/api/widget/${widgetId}/data`, {}, tokens[reader.username]);
    expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(200);
    await removeMember(wsB, reader.id, tokens[adminB.username]);
    expect((await read()).status).toBe(404);
  });
});
