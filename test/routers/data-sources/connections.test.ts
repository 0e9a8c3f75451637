import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { dataSources } from '../../../db/schema/data-sources';
import { datasetSources, datasets } from '../../../db/schema/datasets';
import { useTestApp } from '../../support/app';
import { failure, type Deleted } from '../../support/rest';
import { createRoleCast, createUser, login, type RoleCast } from '../../support/factories';
import {
  SERVERS,
  createSource,
  ok,
  randomName,
  sleep,
  type DependentObjects,
  type SourcePage,
  type SourceView,
} from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

const SECRET = 'S3cret-pa55-word-never-shown';

describe('POST /api/data-source', () => {
  it('creates a source in the personal workspace by default, port pre-filled, password kept secret', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const { port: _p, ...withoutPort } = SERVERS.postgresql();
    const res = await api.post(
      '/api/data-source',
      { name: 'Продажи', type: 'postgresql', settings: { ...withoutPort, password: SECRET } },
      token,
    );
    const src = ok<SourceView>(res);
    expect(src).toMatchObject({
      name: 'Продажи',
      type: 'postgresql',
      type_name: 'PostgreSQL',
      workspace_id: u.personalWorkspaceId,
      author: { id: u.id, username: u.username },
      can_edit: true,
      settings: { host: '127.0.0.1', port: 5432, username: 'postgres', db: 'test', use_ssh: false, password_set: true },
    });
    expect(src.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    // stored only in the encrypted box
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, src.id));
    expect(JSON.stringify(row.settings)).not.toContain(SECRET);
    expect(row.secrets).toMatch(/^v1:/);
    expect(row.secrets).not.toContain(SECRET);
    expect(t.deps.secretBox.open<{ password: string }>(row.secrets!).password).toBe(SECRET);
  });

  it('pre-fills http_port for ClickHouse and refuses it for other kinds', async () => {
    const { http_port: _h, port: _p, ...ch } = SERVERS.clickhouse();
    const src = ok<SourceView>(
      await api.post('/api/data-source', { name: 'ch', type: 'clickhouse', settings: ch }, cast.tokens.editor),
    );
    expect(src.settings).toMatchObject({ port: 9000, http_port: 8123, password_set: false });
    const res = await api.post(
      '/api/data-source',
      { name: 'pg', type: 'postgresql', settings: { ...SERVERS.postgresql(), http_port: 8123 } },
      cast.tokens.editor,
    );
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ 'settings.httpPort': 'is not used by postgresql sources' });
  });

  it('validates the body: blank name, unknown kind, malformed settings, unknown fields', async () => {
    const token = cast.tokens.editor;
    const blank = await api.post(
      '/api/data-source',
      { name: ' ', type: 'postgresql', settings: SERVERS.postgresql() },
      token,
    );
    expect(blank.status).toBe(422);
    expect(failure(blank)).toMatchObject({
      code: 422,
      message: 'Ошибка валидации',
      errors: { name: 'must not be blank' },
    });
    const kind = await api.post('/api/data-source', { name: 'x', type: 'oracle', settings: {} }, token);
    expect(kind.status).toBe(422);
    expect(failure(kind).errors!.type).toMatch(/must be one of/);
    const port = await api.post(
      '/api/data-source',
      { name: 'x', type: 'postgresql', settings: { host: 'h', port: 70000, ssl: 'yes' } },
      token,
    );
    expect(port.status).toBe(422);
    expect(failure(port).errors).toMatchObject({
      'settings.port': expect.any(String),
      'settings.ssl': expect.any(String),
    });
    const noHost = await api.post(
      '/api/data-source',
      { name: 'x', type: 'mysql', settings: { username: 'root' } },
      token,
    );
    expect(failure(noHost).errors).toEqual({ 'settings.host': 'must not be blank' });
    const ssh = await api.post(
      '/api/data-source',
      { name: 'x', type: 'mysql', settings: { host: 'h', use_ssh: true } },
      token,
    );
    expect(failure(ssh).errors).toEqual({ 'settings.sshTunnel': 'must not be null when useSsh is true' });
    const extra = await api.post(
      '/api/data-source',
      { name: 'x', type: 'mysql', settings: { host: 'h', colour: 'red' } },
      token,
    );
    expect(failure(extra).errors).toEqual({ 'settings.colour': 'unknown field' });
    const file = await api.post('/api/data-source', { name: 'x', type: 'file', settings: {} }, token);
    expect(file.status).toBe(422);
    expect(failure(file).errors!.type).toMatch(/POST \/api\/files/);
    const notObject = await api.call('POST', '/api/data-source', {
      token,
      body: '"text"',
      headers: { 'content-type': 'application/json' },
    });
    expect(notObject.status).toBe(422);
    expect((await api.post('/api/data-source', 'plain text', token)).status).toBe(415);
  });

  it('with check_connection refuses to save a source that does not connect, and saves nothing', async () => {
    const name = randomName('unreachable');
    const res = await api.post(
      '/api/data-source',
      {
        name,
        type: 'postgresql',
        settings: { ...SERVERS.postgresql(), db: 'no_such_database_here' },
        check_connection: true,
        workspace_id: cast.workspaceId,
      },
      cast.tokens.editor,
    );
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(/^Источник не сохранён: .*no_such_database_here/);
    const rows = await t.deps.db.select().from(dataSources).where(eq(dataSources.name, name));
    expect(rows).toHaveLength(0);
    const good = await api.post(
      '/api/data-source',
      { name, type: 'mysql', settings: SERVERS.mysql(), check_connection: true, workspace_id: cast.workspaceId },
      cast.tokens.editor,
    );
    expect(ok<SourceView>(good).name).toBe(name);
  });

  it('needs an editing role in the target workspace', async () => {
    const body = { name: 'x', type: 'postgresql', settings: SERVERS.postgresql(), workspace_id: cast.workspaceId };
    expect((await api.post('/api/data-source', body)).status).toBe(401);
    expect((await api.post('/api/data-source', body, cast.tokens.plain)).status).toBe(404);
    expect((await api.post('/api/data-source', body, cast.tokens.viewer)).status).toBe(403);
    expect((await api.post('/api/data-source', body, cast.tokens.sysadmin)).status).toBe(403);
    expect((await api.post('/api/data-source', body, cast.tokens.editor)).status).toBe(200);
    expect((await api.post('/api/data-source', body, cast.tokens.wsAdmin)).status).toBe(200);
    // auth before validation
    expect((await api.post('/api/data-source', { name: '' })).status).toBe(401);
  });
});

describe('GET /api/data-source/{id}', () => {
  it('answers readers, 404 for callers outside the workspace', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { password: SECRET },
    });
    const url = `/api/data-source/${src.id}`;
    expect((await api.get(url)).status).toBe(401);
    expect((await api.get(url, cast.tokens.plain)).status).toBe(404);
    expect((await api.get(url, cast.tokens.manager)).status).toBe(404);
    const viewer = await api.get(url, cast.tokens.viewer);
    expect(ok<SourceView>(viewer)).toMatchObject({ id: src.id, can_edit: false, settings: { password_set: true } });
    expect(ok<SourceView>(await api.get(url, cast.tokens.sysadmin)).can_edit).toBe(false);
    expect(ok<SourceView>(await api.get(url, cast.tokens.wsAdmin)).can_edit).toBe(true);
    for (const token of Object.values(cast.tokens)) {
      const r = await api.get(url, token);
      expect(JSON.stringify(r.body)).not.toContain(SECRET);
    }
    const missing = await api.get('/api/data-source/99999999', cast.tokens.viewer);
    expect(missing.status).toBe(404);
    expect(failure(missing).message).toBe('Источник данных не найден (id 99999999)');
    expect((await api.get('/api/data-source/abc', cast.tokens.viewer)).status).toBe(422);
  });
});

describe('PUT /api/data-source/{id}', () => {
  it('changes name and settings, keeps an omitted password, clears it on null, always bumps updated_at', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { password: SECRET },
    });
    const url = `/api/data-source/${src.id}`;
    await sleep(20);
    const renamed = ok<SourceView>(await api.put(url, { name: 'Новое имя' }, cast.tokens.editor));
    expect(renamed.name).toBe('Новое имя');
    expect(renamed.settings.password_set).toBe(true);
    expect(Date.parse(renamed.updated_at)).toBeGreaterThan(Date.parse(src.updated_at));

    // a read sent back as it is (type, *_set flags, empty password box) changes nothing secret
    await sleep(20);
    const same = ok<SourceView>(
      await api.put(url, { type: 'postgresql', settings: { ...renamed.settings, password: '' } }, cast.tokens.editor),
    );
    expect(same.settings).toEqual(renamed.settings);
    expect(Date.parse(same.updated_at)).toBeGreaterThan(Date.parse(renamed.updated_at));
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, src.id));
    expect(t.deps.secretBox.open<{ password: string }>(row.secrets!).password).toBe(SECRET);

    const moved = ok<SourceView>(
      await api.put(
        url,
        { settings: { host: 'db.example', port: 6432, username: 'u', password: 'other' } },
        cast.tokens.editor,
      ),
    );
    expect(moved.settings).toMatchObject({ host: 'db.example', port: 6432, username: 'u', db: '', password_set: true });
    const cleared = ok<SourceView>(
      await api.put(url, { settings: { host: 'db.example', password: null } }, cast.tokens.editor),
    );
    expect(cleared.settings).toMatchObject({ port: 5432, password_set: false });
    const [after] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, src.id));
    expect(after.secrets).toBeNull();
  });

  it('keeps SSH and SSL secrets write-only and drops them with their block', async () => {
    const src = await createSource(api, cast.tokens.editor, 'mysql', {
      workspace_id: cast.workspaceId,
      settings: {
        use_ssh: true,
        ssh_tunnel: {
          host: 'bastion',
          username: 'tunnel',
          private_key: 'PRIVATE-KEY-TEXT',
          passphrase: 'PASSPHRASE-TEXT',
        },
        ssl: { enabled: true, ca: 'CA-CERT', key: 'CLIENT-KEY-TEXT' },
      },
    });
    expect(src.settings.ssh_tunnel).toEqual({
      host: 'bastion',
      port: 22,
      username: 'tunnel',
      password_set: false,
      private_key_set: true,
      passphrase_set: true,
    });
    expect(src.settings.ssl).toEqual({ enabled: true, reject_unauthorized: true, ca: 'CA-CERT', key_set: true });
    const text = JSON.stringify(ok<SourceView>(await api.get(`/api/data-source/${src.id}`, cast.tokens.editor)));
    for (const secret of ['PRIVATE-KEY-TEXT', 'PASSPHRASE-TEXT', 'CLIENT-KEY-TEXT']) expect(text).not.toContain(secret);
    const kept = ok<SourceView>(
      await api.put(
        `/api/data-source/${src.id}`,
        {
          settings: {
            ...SERVERS.mysql(),
            use_ssh: true,
            ssh_tunnel: { host: 'bastion', username: 'tunnel' },
            ssl: { enabled: true },
          },
        },
        cast.tokens.editor,
      ),
    );
    expect(kept.settings.ssh_tunnel).toMatchObject({ host: 'bastion', private_key_set: true, passphrase_set: true });
    expect(kept.settings.ssl).toMatchObject({ key_set: true });
    const dropped = ok<SourceView>(
      await api.put(`/api/data-source/${src.id}`, { settings: SERVERS.mysql() }, cast.tokens.editor),
    );
    expect(dropped.settings.ssh_tunnel).toBeUndefined();
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, src.id));
    expect(row.secrets).toBeNull();
  });

  it('is for owners: the author with an editing role or the workspace Администратор', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', { workspace_id: cast.workspaceId });
    const url = `/api/data-source/${src.id}`;
    expect((await api.put(url, { name: 'x' })).status).toBe(401);
    expect((await api.put(url, { name: 'x' }, cast.tokens.plain)).status).toBe(404);
    expect((await api.put(url, { name: 'x' }, cast.tokens.viewer)).status).toBe(403);
    expect((await api.put(url, { name: 'x' }, cast.tokens.sysadmin)).status).toBe(403);
    expect((await api.put(url, { name: 'by author' }, cast.tokens.editor)).status).toBe(200);
    expect((await api.put(url, { name: 'by admin' }, cast.tokens.wsAdmin)).status).toBe(200);
    // another editor is not the author
    const other = await createSource(api, cast.tokens.wsAdmin, 'postgresql', { workspace_id: cast.workspaceId });
    expect((await api.put(`/api/data-source/${other.id}`, { name: 'x' }, cast.tokens.editor)).status).toBe(403);
    const kind = await api.put(url, { type: 'mysql' }, cast.tokens.editor);
    expect(kind.status).toBe(400);
    expect((await api.put(url, { name: '' }, cast.tokens.editor)).status).toBe(422);
  });
});

describe('GET /api/data-source', () => {
  it('lists the sources the caller can see, with filters, sort and pages', async () => {
    const ws = await cast.newWorkspace();
    const tag = randomName('list');
    const a = await createSource(api, cast.tokens.editor, 'postgresql', { name: `${tag} Альфа`, workspace_id: ws });
    await sleep(15);
    const b = await createSource(api, cast.tokens.wsAdmin, 'mysql', { name: `${tag} бета`, workspace_id: ws });
    await sleep(15);
    const c = await createSource(api, cast.tokens.editor, 'clickhouse', { name: `${tag} Гамма`, workspace_id: ws });
    const list = (q: string, token = cast.tokens.viewer) => api.get(`/api/data-source?workspaceId=${ws}&${q}`, token);

    const all = ok<SourcePage>(await list(''));
    expect(all.content.map((s) => s.id)).toEqual([c.id, b.id, a.id]); // newest change first
    expect(all.page).toEqual({ size: 20, number: 0, total_elements: 3, total_pages: 1 });
    expect(ok<SourcePage>(await list('sort=name,asc')).content.map((s) => s.id)).toEqual([a.id, b.id, c.id]);
    const paged = ok<SourcePage>(await list('sort=id,desc&page=1&size=2'));
    expect(paged.content.map((s) => s.id)).toEqual([a.id]);
    expect(paged.page).toEqual({ size: 2, number: 1, total_elements: 3, total_pages: 2 });
    expect(ok<SourcePage>(await list('type=mysql')).content.map((s) => s.id)).toEqual([b.id]);
    expect(ok<SourcePage>(await list(`author=${cast.users.editor.id}&sort=id,asc`)).content.map((s) => s.id)).toEqual([
      a.id,
      c.id,
    ]);
    expect(ok<SourcePage>(await list(`query=${encodeURIComponent('БЕТА')}`)).content.map((s) => s.id)).toEqual([b.id]);
    expect(ok<SourcePage>(await list(`query=${encodeURIComponent('%')}`)).content).toHaveLength(0);

    const today = new Date().toISOString().slice(0, 10);
    expect(ok<SourcePage>(await list(`createdAtFrom=${today}&createdAtTo=${today}`)).page.total_elements).toBe(3);
    expect(ok<SourcePage>(await list(`updatedAtTo=2000-01-01`)).page.total_elements).toBe(0);
    expect(
      ok<SourcePage>(await list(`createdAtFrom=${encodeURIComponent(b.created_at)}&sort=id,asc`)).content.map(
        (s) => s.id,
      ),
    ).toEqual([b.id, c.id]);
    expect(
      ok<SourcePage>(await list(`createdAtTo=${encodeURIComponent(b.created_at)}&sort=id,asc`)).content.map(
        (s) => s.id,
      ),
    ).toEqual([a.id, b.id]);

    // nothing of the workspace for an outsider; the sysadmin sees it
    expect(ok<SourcePage>(await list('', cast.tokens.plain)).page.total_elements).toBe(0);
    expect(ok<SourcePage>(await list('', cast.tokens.sysadmin)).page.total_elements).toBe(3);

    const bad = await list('sort=password,asc&page=-1&createdAtFrom=yesterday&type=oracle');
    expect(bad.status).toBe(422);
    expect(Object.keys(failure(bad).errors!).sort()).toEqual(['createdAtFrom', 'page', 'sort', 'type']);
    expect((await api.get('/api/data-source')).status).toBe(401);
  });
});

describe('DELETE /api/data-source/{id}', () => {
  it('deletes for owners, 400 while a dataset depends on the source', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', { workspace_id: cast.workspaceId });
    const url = `/api/data-source/${src.id}`;
    expect((await api.delete(url, cast.tokens.viewer)).status).toBe(403);
    expect((await api.delete(url, cast.tokens.plain)).status).toBe(404);

    const [ds] = await t.deps.db
      .insert(datasets)
      .values({ name: 'Продажи по городам', workspaceId: cast.workspaceId })
      .returning();
    await t.deps.db.insert(datasetSources).values({ datasetId: ds.id, dataSourceId: src.id });
    const blocked = await api.delete(url, cast.tokens.editor);
    expect(blocked.status).toBe(400);
    expect(failure(blocked).message).toMatch(/датасеты \(1\): «Продажи по городам»/);
    const objects = ok<DependentObjects>(await api.get(`${url}/objects`, cast.tokens.viewer));
    expect(objects).toEqual({
      content: [{ type: 'dataset', id: ds.id, name: 'Продажи по городам', workspace_id: cast.workspaceId }],
      hidden_count: 0,
    });

    await t.deps.db.delete(datasets).where(eq(datasets.id, ds.id));
    expect(ok<Deleted>(await api.delete(url, cast.tokens.editor))).toEqual({ id: src.id, deleted: true });
    expect((await api.get(url, cast.tokens.editor)).status).toBe(404);
    expect((await api.delete(url, cast.tokens.editor)).status).toBe(404);
  });
});

describe('POST /api/data-source/{id}/copy', () => {
  it('duplicates settings and secrets into a workspace where the caller edits', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { password: SECRET },
    });
    const url = `/api/data-source/${src.id}/copy`;
    const copy = ok<SourceView>(await api.post(url, {}, cast.tokens.editor));
    expect(copy).toMatchObject({
      name: `${src.name} (копия)`,
      workspace_id: cast.workspaceId,
      type: 'postgresql',
      settings: src.settings,
    });
    expect(copy.id).not.toBe(src.id);
    expect(copy.uuid).not.toBe(src.uuid);
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, copy.id));
    expect(t.deps.secretBox.open<{ password: string }>(row.secrets!).password).toBe(SECRET);

    const personal = cast.users.editor.personalWorkspaceId;
    const elsewhere = ok<SourceView>(
      await api.post(url, { name: 'Моя копия', workspace_id: personal }, cast.tokens.editor),
    );
    expect(elsewhere).toMatchObject({ name: 'Моя копия', workspace_id: personal });
    expect(JSON.stringify(elsewhere)).not.toContain(SECRET);

    expect((await api.post(url, {}, cast.tokens.viewer)).status).toBe(403);
    expect((await api.post(url, {}, cast.tokens.plain)).status).toBe(404);
    // the target workspace must be editable and visible
    expect(
      (await api.post(url, { workspace_id: cast.users.plain.personalWorkspaceId }, cast.tokens.editor)).status,
    ).toBe(404);
    expect((await api.post(url, { name: '' }, cast.tokens.editor)).status).toBe(422);
  });
});
