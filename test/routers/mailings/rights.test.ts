import { describe, expect, it } from 'vitest';
import { createSharedWorkspace } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createPgSource } from '../widgets/world';
import { createOrdersDataset, toOf, useMailingWorld, waitRun, type LetterPage, type MailingView } from './world';

/*
 * Whose rights build a mailing's letters (docs/mailings.md): the owner's. The owner's column rules apply to every
 * attachment (a masked field shows the mask, a hidden one is refused and its data never sent), and an object the
 * owner cannot read is refused when the mailing is saved and fails the letters when the owner loses it afterwards.
 */

const world = useMailingWorld();
const { t, api, owner } = world;
type Notes = { content: { kind: string; object_id: number | null; title: string; message: string }[] };

async function tableWidget(datasetId: number, shelves: Record<string, unknown>) {
  return ok<{ id: number }>(
    await api.post(
      '/api/widget',
      { name: 'Заказы', dataset_id: datasetId, type: 'table', ...shelves },
      world.cast.tokens.wsAdmin,
    ),
  ).id;
}

const mailingBody = (workspaceId: number, widgetId: number, extra: Record<string, unknown> = {}) => ({
  name: 'Заказы',
  workspace_id: workspaceId,
  widget_ids: [widgetId],
  format: 'csv',
  channel_id: world.channelId,
  recipients: { emails: ['cls@example.test'] },
  ...extra,
});

async function runAs(token: string, mailingId: number) {
  const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${mailingId}/run`, {}, token));
  const run = await waitRun(api, token, mailingId, run_id);
  const letters = ok<LetterPage>(await api.get(`/api/mailings/${mailingId}/runs/${run_id}/letters`, token)).content;
  return { run, letters };
}

describe("the owner's column rules", () => {
  it('a masked field shows the mask in the CSV; a hidden one fails the letter and is never sent', async () => {
    const ds = await world.ordersDataset(world.cast.workspaceId);
    const rule = (field: string, action: 'hide' | 'mask') =>
      api.post(
        `/api/dataset/${ds.id}/cls-rules`,
        { field_ids: [ds.fieldId(field)], action, user_ids: [world.cast.users.editor.id] },
        world.cast.tokens.wsAdmin,
      );
    ok(await rule('manager_email', 'mask'));
    ok(await rule('amount', 'hide'));
    const masked = await tableWidget(ds.id, {
      rows: [
        { id: 'r', sql: '[orders.region]', alias: 'Регион' },
        { id: 'e', sql: '[orders.manager_email]', alias: 'Почта' },
      ],
      sorts: [{ field_id: 'r', direction: 'asc' }],
    });
    const hidden = await tableWidget(ds.id, {
      rows: [{ id: 'r', sql: '[orders.region]', alias: 'Регион' }],
      columns: [{ id: 's', sql: 'SUM([orders.amount])', alias: 'Сумма' }],
    });

    const m = ok<MailingView>(await api.post('/api/mailings', mailingBody(world.cast.workspaceId, masked), owner()));
    const before = world.inbox.letters.length;
    const { run } = await runAs(owner(), m.id);
    expect(run).toMatchObject({ state: 'succeeded', letters_sent: 1 });
    const [letter] = world.inbox.letters.slice(before);
    const csv = letter.attachments[0].content.toString('utf8').replace(/^\ufeff/, '');
    expect(csv.trim().split(/\r?\n/)).toEqual(['Регион,Почта', 'east,***', 'north,***', 'north,***', 'south,***']);

    const h = ok<MailingView>(await api.post('/api/mailings', mailingBody(world.cast.workspaceId, hidden), owner()));
    const at = world.inbox.letters.length;
    const failed = await runAs(owner(), h.id);
    expect(failed.run).toMatchObject({ state: 'failed', letters_sent: 0, letters_failed: 1 });
    expect(failed.letters.map((l) => [l.recipient, l.status])).toEqual([['cls@example.test', 'failed']]);
    expect(failed.letters[0].error).toBe(
      'Письмо не собрано с правами владельца рассылки: Ошибка валидации: ' +
        'Ошибка в выражении: поле [orders.amount] не найдено в датасете',
    );
    expect(world.inbox.letters.length).toBe(at);
    // The Администратор (no rule) would see the amounts: the refusal is the owner's rule, not a broken widget.
    const preview = await api.post(`/api/widget/${hidden}/data`, {}, world.cast.tokens.wsAdmin);
    expect(preview.status).toBe(200);
  });
});

describe('an object the owner cannot read', () => {
  it('is refused when the owner saves the mailing; an administrator who reads it may put it in, and becomes the owner', async () => {
    // A workspace the owner (the editor) is not a member of.
    const closed = await createSharedWorkspace(t.deps, [
      { userId: world.cast.users.wsAdmin.id, role: 'Администратор' },
    ]);
    const ds = await world.ordersDataset(closed);
    const widget = await tableWidget(ds.id, { rows: [{ id: 'r', sql: '[orders.region]' }] });
    const dashboard = ok<{ id: number }>(
      await api.post('/api/dashboard', { name: 'Закрытый', workspace_id: closed }, world.cast.tokens.wsAdmin),
    ).id;
    const refused = async (b: Record<string, unknown>, token = owner(), method: 'post' | 'put' = 'post', id = 0) => {
      const res =
        method === 'post' ? await api.post('/api/mailings', b, token) : await api.put(`/api/mailings/${id}`, b, token);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      return failure(res).errors;
    };
    expect(await refused(mailingBody(world.cast.workspaceId, widget))).toEqual({
      'widget_ids[0]': `Объект недоступен владельцу рассылки (widget id ${widget})`,
    });
    expect(
      await refused({
        ...mailingBody(world.cast.workspaceId, widget),
        widget_ids: [],
        dashboard_id: dashboard,
        format: 'pdf',
      }),
    ).toEqual({ dashboard_id: `Объект недоступен владельцу рассылки (dashboard id ${dashboard})` });
    const slice = {
      dataset_id: ds.id,
      field_id: ds.fieldId('region'),
      recipient_field_id: ds.fieldId('manager_email'),
    };
    const own = await world.ordersDataset(world.cast.workspaceId);
    const ownWidget = await tableWidget(own.id, { rows: [{ id: 'r', sql: '[orders.region]' }] });
    expect(await refused(mailingBody(world.cast.workspaceId, ownWidget, { slice }))).toEqual({
      'slice.dataset_id': `Объект недоступен владельцу рассылки (dataset id ${ds.id})`,
    });
    // The workspace's Администратор reads the closed widget and may put it in the author's mailing: editing makes them
    // its owner, so its letters are then built with their rights.
    const m = ok<MailingView>(await api.post('/api/mailings', mailingBody(world.cast.workspaceId, ownWidget), owner()));
    expect(m.author_id).toBe(world.cast.users.editor.id);
    const edited = ok<MailingView>(
      await api.put(`/api/mailings/${m.id}`, mailingBody(world.cast.workspaceId, widget), world.cast.tokens.wsAdmin),
    );
    expect(edited.author_id).toBe(world.cast.users.wsAdmin.id);
  });

  it("an administrator cannot route what only the author reads: an edit is checked with the editor's rights, a test letter is built with the caller's", async () => {
    // A workspace only the author (the editor) is a member of, and the author's mailing on a widget there.
    const authorOnly = await createSharedWorkspace(t.deps, [
      { userId: world.cast.users.editor.id, role: 'Администратор' },
    ]);
    const sourceId = await createPgSource(t.deps, authorOnly, world.cast.users.editor.id);
    const ds = await createOrdersDataset(api, owner(), { workspaceId: authorOnly, sourceId, table: world.table });
    const closed = ok<{ id: number }>(
      await api.post(
        '/api/widget',
        { name: 'Только автору', dataset_id: ds.id, type: 'table', rows: [{ id: 'r', sql: '[orders.region]' }] },
        owner(),
      ),
    ).id;
    const m = ok<MailingView>(await api.post('/api/mailings', mailingBody(world.cast.workspaceId, closed), owner()));
    const admin = world.cast.tokens.wsAdmin;
    const before = world.inbox.letters.length;
    // Redirected to the administrator's own address: refused, the widget is not theirs to read.
    const redirected = await api.put(
      `/api/mailings/${m.id}`,
      mailingBody(world.cast.workspaceId, closed, { recipients: { emails: ['admin@example.test'] } }),
      admin,
    );
    expect(redirected.status).toBe(422);
    expect(failure(redirected).errors).toEqual({
      'widget_ids[0]': `Объект недоступен владельцу рассылки (widget id ${closed})`,
    });
    // A test letter to the administrator is built with the administrator's rights: the widget is not found.
    const test = await api.post(`/api/mailings/${m.id}/test`, { emails: ['admin@example.test'] }, admin);
    expect(test.status).toBe(404);
    expect(world.inbox.letters.length).toBe(before);
    // Unchanged: still the author's mailing, to the author's recipients.
    const kept = ok<MailingView>(await api.get(`/api/mailings/${m.id}`, admin));
    expect(kept).toMatchObject({ author_id: world.cast.users.editor.id, recipients: { emails: ['cls@example.test'] } });
    // The author's own test letter is built with the author's rights and arrives.
    ok(await api.post(`/api/mailings/${m.id}/test`, { emails: ['author@example.test'] }, owner()));
    expect(world.inbox.letters.slice(before).map(toOf)).toEqual([['author@example.test']]);
  });

  it('lost after saving (owner removed from the workspace): letters fail with the reason, run failed, owner notified', async () => {
    const ws = await world.cast.newWorkspace();
    const ds = await world.ordersDataset(ws);
    const widget = await tableWidget(ds.id, { rows: [{ id: 'r', sql: '[orders.region]' }] });
    const m = ok<MailingView>(
      await api.post(
        '/api/mailings',
        mailingBody(ws, widget, {
          name: 'Потерянный доступ',
          recipients: { emails: ['a@example.test', 'b@example.test'] },
        }),
        owner(),
      ),
    );
    const members = ok<{ content: { member_id: number; user_id: number | null }[] }>(
      await api.get(`/api/workspaces/${ws}/members?size=100`, world.cast.tokens.wsAdmin),
    ).content;
    const editor = members.find((x) => x.user_id === world.cast.users.editor.id)!;
    ok(await api.delete(`/api/workspaces/${ws}/members/${editor.member_id}`, world.cast.tokens.wsAdmin));

    const before = world.inbox.letters.length;
    const { run, letters } = await runAs(world.cast.tokens.wsAdmin!, m.id);
    expect(run).toMatchObject({
      state: 'failed',
      letters_sent: 0,
      letters_failed: 2,
      error: 'Не отправлено писем: 2 из 2',
    });
    expect(letters.map((l) => [l.recipient, l.status, l.error])).toEqual([
      ['a@example.test', 'failed', `Письмо не собрано с правами владельца рассылки: Виджет не найден (id ${widget})`],
      ['b@example.test', 'failed', `Письмо не собрано с правами владельца рассылки: Виджет не найден (id ${widget})`],
    ]);
    expect(world.inbox.letters.slice(before).flatMap(toOf)).toEqual([]);
    const notes = ok<Notes>(await api.get('/api/notifications', owner()));
    expect(notes.content.filter((n) => n.kind === 'mailing_failed' && n.object_id === run.run_id)).toEqual([
      expect.objectContaining({
        title: 'Рассылка «Потерянный доступ» завершилась с ошибками',
        message: 'Не отправлено писем: 2 из 2',
      }),
    ]);
  });
});
