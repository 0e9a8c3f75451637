import { beforeAll, describe, expect, it } from 'vitest';
import { failure, ok } from '../../support/rest';
import { MAILING_RUN, MAILING_SCHEDULE } from '../../../server/mailings/run-job';
import {
  createChannel,
  ordersWidget,
  toOf,
  useMailingWorld,
  waitRun,
  type LetterPage,
  type MailingView,
} from './world';

/*
 * Mailings over REST (/api/mailings ...) sending through a real SMTP server on loopback (STARTTLS, AUTH), letters
 * parsed with mailparser. The mailing's owner (the editor) has a row-level rule: only regions north and south, so
 * slices, recipients and attachment rows all follow the owner's rights.
 */

const world = useMailingWorld();
const { t, api, owner } = world;
let ds: { id: number; fieldId: (name: string) => number };
let widgetId: number;

beforeAll(async () => {
  ds = await world.ordersDataset();
  const editor = world.cast.users.editor.id;
  ok(
    await api.put(
      `/api/users/${editor}/attributes`,
      { attributes: { region: ['north', 'south'] } },
      world.cast.tokens.sysadmin,
    ),
  );
  ok(
    await api.post(
      `/api/dataset/${ds.id}/rls-rules`,
      { field_id: ds.fieldId('region'), attribute: 'region', operator: 'in', user_ids: [editor] },
      world.cast.tokens.wsAdmin,
    ),
  );
  widgetId = await ordersWidget(api, owner(), ds.id);
});

const slice = () => ({
  dataset_id: ds.id,
  field_id: ds.fieldId('region'),
  recipient_field_id: ds.fieldId('manager_email'),
});
const body = (extra: Record<string, unknown> = {}) => ({
  name: 'Продажи по регионам',
  workspace_id: world.cast.workspaceId,
  widget_ids: [widgetId],
  format: 'csv',
  channel_id: world.channelId,
  subject: 'Продажи: {{slice}}',
  body: 'Отчёт во вложении',
  ...extra,
});

type Notes = { content: { kind: string; object_id: number | null; title: string; message: string }[] };

/** A mailing to plain addresses, run now and waited for: the run and its letters. */
async function runOnce(extra: Record<string, unknown>) {
  const m = ok<MailingView>(await api.post('/api/mailings', body(extra), owner()));
  const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
  const run = await waitRun(api, owner(), m.id, run_id);
  return { m, run, letters: await lettersOfRun(m.id, run_id) };
}

const setEmail = async (userId: number, email: string | null) =>
  ok(await api.put(`/api/users/${userId}`, { email }, world.cast.tokens.sysadmin));

/** The pg-boss schedule of a mailing: [cron, time zone] pairs (none when it has no active schedule). */
async function bossSchedule(mailingId: number) {
  const boss = await t.deps.jobs.start();
  const rows = await boss.getSchedules(MAILING_SCHEDULE.name, `mailing-${mailingId}`);
  return rows.map((r) => [r.cron, r.timezone]);
}

async function lettersOfRun(mailingId: number, runId: number) {
  return ok<LetterPage>(await api.get(`/api/mailings/${mailingId}/runs/${runId}/letters?size=100`, owner())).content;
}

describe('mailings', () => {
  it('estimates slices with the caller rights before saving', async () => {
    const est = ok(await api.post('/api/mailings/slice-estimate', slice(), owner()));
    expect(est).toEqual({ slice_count: 2, letter_count: 3, sample_values: ['north', 'south'] });
  });

  it('a sliced run sends one letter per value and recipient, each with its own rows (RLS of the owner)', async () => {
    const m = ok<MailingView>(await api.post('/api/mailings', body({ slice: slice() }), owner()));
    expect(m).toMatchObject({ status: 'active', author_id: world.cast.users.editor.id, format: 'csv' });
    const before = world.inbox.letters.length;
    const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
    const run = await waitRun(api, owner(), m.id, run_id);
    expect(run).toMatchObject({ state: 'succeeded', letters_sent: 3, letters_failed: 0 });
    const got = world.inbox.letters.slice(before);
    expect(got.length).toBe(3);
    const byTo = new Map(got.map((l) => [toOf(l)[0], l]));
    expect([...byTo.keys()].sort()).toEqual(['boss-n@example.test', 'boss-s@example.test', 'deputy-n@example.test']);
    const north = byTo.get('boss-n@example.test')!;
    expect(north.subject).toBe('Продажи: north');
    expect(north.attachments.length).toBe(1);
    const csv = north.attachments[0].content.toString('utf8');
    expect(csv).toMatch(/north/);
    expect(csv).toMatch(/15/);
    expect(csv).not.toMatch(/south|east/);
    const south = byTo.get('boss-s@example.test')!.attachments[0].content.toString('utf8');
    expect(south).toMatch(/south/);
    expect(south).not.toMatch(/north|east/);
    const letters = await lettersOfRun(m.id, run_id);
    expect(letters.map((l) => [l.recipient, l.slice_value, l.status]).sort()).toEqual([
      ['boss-n@example.test', 'north', 'sent'],
      ['boss-s@example.test', 'south', 'sent'],
      ['deputy-n@example.test', 'north', 'sent'],
    ]);
    expect(letters.every((l) => l.sent_at !== null)).toBe(true);
    const runs = ok<{ content: { run_id: number }[] }>(
      await api.get(`/api/mailings/${m.id}/runs`, world.cast.tokens.viewer),
    );
    expect(runs.content.map((r) => r.run_id)).toEqual([run_id]);
    // Letters are the owner's: a viewer of the workspace reads runs, not letters.
    expect((await api.get(`/api/mailings/${m.id}/runs/${run_id}/letters`, world.cast.tokens.viewer)).status).toBe(403);
  });

  it('a run queued twice is worked on once: every letter sent once and counted', async () => {
    const m = ok<MailingView>(await api.post('/api/mailings', body({ slice: slice() }), owner()));
    const before = world.inbox.letters.length;
    const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
    // Several jobs of one run: pg-boss's retry of a job it thought lost beside the sweep's (server/mailings/run-job.ts).
    await Promise.all([
      t.deps.jobs.send(MAILING_RUN, { runId: run_id }),
      t.deps.jobs.send(MAILING_RUN, { runId: run_id }),
    ]);
    const run = await waitRun(api, owner(), m.id, run_id);
    expect(run).toMatchObject({ state: 'succeeded', letters_sent: 3, letters_failed: 0 });
    // The other jobs of the run end without sending: give them the time a second pass would take.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(world.inbox.letters.length - before).toBe(3);
  });

  it('a refusing recipient is retried a bounded number of times and never blocks the others; the owner is notified', async () => {
    world.inbox.refuse.add('boss-s@example.test');
    try {
      const m = ok<MailingView>(await api.post('/api/mailings', body({ slice: slice() }), owner()));
      const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
      const run = await waitRun(api, owner(), m.id, run_id);
      expect(run).toMatchObject({ state: 'failed', letters_sent: 2, letters_failed: 1 });
      const letters = await lettersOfRun(m.id, run_id);
      const refused = letters.find((l) => l.recipient === 'boss-s@example.test')!;
      expect(refused).toMatchObject({ status: 'failed', attempts: 3 });
      expect(refused.error).toMatch(/550/);
      const notes = ok<{ content: { kind: string; object_id: number }[] }>(
        await api.get('/api/notifications', owner()),
      );
      expect(notes.content.some((n) => n.kind === 'mailing_failed' && n.object_id === run_id)).toBe(true);
    } finally {
      world.inbox.refuse.clear();
    }
  });

  it('plain recipients, test letter, pause and resume, update, list and delete', async () => {
    const m = ok<MailingView>(
      await api.post(
        '/api/mailings',
        body({
          schedule: '0 8 * * 1',
          timezone: 'Europe/Moscow',
          recipients: { emails: ['one@example.test'], user_ids: [], group_ids: [] },
        }),
        owner(),
      ),
    );
    const before = world.inbox.letters.length;
    expect(ok(await api.post(`/api/mailings/${m.id}/test`, { emails: ['t@example.test'] }, owner()))).toEqual({
      ok: true,
      recipients: ['t@example.test'],
    });
    const test = world.inbox.letters[before];
    expect(test.subject).toBe('[Тест] Продажи: ');
    expect(test.attachments[0].filename).toMatch(/\.csv$/);
    expect(ok<MailingView>(await api.post(`/api/mailings/${m.id}/pause`, {}, owner())).status).toBe('paused');
    expect((await api.post(`/api/mailings/${m.id}/pause`, {}, owner())).status).toBe(400);
    expect((await api.post(`/api/mailings/${m.id}/pause`, {}, world.cast.tokens.viewer)).status).toBe(403);
    const paused = ok<{ content: MailingView[] }>(await api.get('/api/mailings?status=paused', owner()));
    expect(paused.content.map((x) => x.id)).toContain(m.id);
    expect(ok<MailingView>(await api.post(`/api/mailings/${m.id}/resume`, {}, owner())).status).toBe('active');
    const { run_id } = ok<{ run_id: number }>(await api.post(`/api/mailings/${m.id}/run`, {}, owner()));
    expect(await waitRun(api, owner(), m.id, run_id)).toMatchObject({ state: 'succeeded', letters_sent: 1 });
    const updated = ok<MailingView>(
      await api.put(
        `/api/mailings/${m.id}`,
        body({ name: 'Другое имя', recipients: { emails: ['one@example.test'] } }),
        owner(),
      ),
    );
    expect(updated).toMatchObject({ name: 'Другое имя', schedule: null });
    expect(ok<MailingView>(await api.get(`/api/mailings/${m.id}`, world.cast.tokens.viewer)).name).toBe('Другое имя');
    expect((await api.get(`/api/mailings/${m.id}`, world.cast.tokens.plain)).status).toBe(404);
    expect(ok(await api.delete(`/api/mailings/${m.id}`, owner()))).toEqual({ id: m.id, deleted: true });
    expect((await api.get(`/api/mailings/${m.id}/runs/${run_id}`, owner())).status).toBe(404);
  });

  it('users and the members of groups get letters at their e-mail addresses, each address once', async () => {
    const group = ok<{ id: number }>(
      await api.post('/api/groups', { name: 'Получатели отчёта' }, world.cast.tokens.sysadmin),
    );
    const { viewer, plain, manager, wsAdmin } = world.cast.users;
    ok(
      await api.post(
        `/api/groups/${group.id}/members`,
        { user_ids: [viewer.id, plain.id, wsAdmin.id] },
        world.cast.tokens.sysadmin,
      ),
    );
    await setEmail(viewer.id, 'viewer@example.test');
    await setEmail(plain.id, 'Plain@Example.test');
    await setEmail(manager.id, 'manager@example.test');
    // wsAdmin has no address: a member without one is skipped.
    const before = world.inbox.letters.length;
    const { run, letters } = await runOnce({
      recipients: { user_ids: [manager.id], group_ids: [group.id], emails: ['plain@example.test', 'x@example.test'] },
    });
    expect(run).toMatchObject({ state: 'succeeded', letters_sent: 4, letters_failed: 0 });
    const expected = ['manager@example.test', 'plain@example.test', 'viewer@example.test', 'x@example.test'];
    expect(letters.map((l) => l.recipient).sort()).toEqual(expected);
    expect(world.inbox.letters.slice(before).flatMap(toOf).sort()).toEqual(expected);

    const res = await api.post('/api/mailings', body({ recipients: { group_ids: [group.id, 2147483647] } }), owner());
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ 'recipients.group_ids[1]': 'Группа не найдена (id 2147483647)' });
  });

  it("a test letter without addresses goes to the caller's e-mail; a caller without one gets a clear 400", async () => {
    const m = ok<MailingView>(
      await api.post('/api/mailings', body({ recipients: { emails: ['one@example.test'] } }), owner()),
    );
    await setEmail(world.cast.users.editor.id, 'editor@example.test');
    const before = world.inbox.letters.length;
    expect(ok(await api.post(`/api/mailings/${m.id}/test`, {}, owner()))).toEqual({
      ok: true,
      recipients: ['editor@example.test'],
    });
    expect(world.inbox.letters.slice(before).map((l) => [toOf(l), l.subject])).toEqual([
      [['editor@example.test'], '[Тест] Продажи: '],
    ]);
    // The workspace's Администратор may send one too, but has no address of their own.
    const res = await api.post(`/api/mailings/${m.id}/test`, {}, world.cast.tokens.wsAdmin);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Укажите адреса (emails): у вашей учётной записи нет адреса электронной почты');
    expect(world.inbox.letters.length).toBe(before + 1);
  });

  it('a wrong channel password fails every letter with the server reply after 3 attempts; the owner is notified', async () => {
    const wrong = (await createChannel(api, world.cast.tokens.sysadmin!, world.inbox.port, 'не-тот-пароль')).id;
    const before = world.inbox.letters.length;
    const { m, run, letters } = await runOnce({
      name: 'Неверный пароль',
      channel_id: wrong,
      recipients: { emails: ['a@example.test', 'b@example.test'] },
    });
    expect(run).toMatchObject({
      state: 'failed',
      letters_sent: 0,
      letters_failed: 2,
      error: 'Не отправлено писем: 2 из 2',
    });
    expect(letters.map((l) => [l.recipient, l.status, l.attempts, l.sent_at])).toEqual([
      ['a@example.test', 'failed', 3, null],
      ['b@example.test', 'failed', 3, null],
    ]);
    for (const l of letters) expect(l.error).toMatch(/^535 .*Authentication failed: bad credentials/);
    expect(world.inbox.letters.length).toBe(before);
    const notes = ok<Notes>(await api.get('/api/notifications', owner()));
    expect(notes.content.filter((n) => n.kind === 'mailing_failed' && n.object_id === run.run_id)).toEqual([
      expect.objectContaining({
        title: `Рассылка «${m.name}» завершилась с ошибками`,
        message: 'Не отправлено писем: 2 из 2',
      }),
    ]);
  });

  it('an unreachable SMTP server fails the letters with the connection error after 3 attempts', async () => {
    const nowhere = (await createChannel(api, world.cast.tokens.sysadmin!, 1)).id;
    const { run, letters } = await runOnce({ channel_id: nowhere, recipients: { emails: ['a@example.test'] } });
    expect(run).toMatchObject({ state: 'failed', letters_sent: 0, letters_failed: 1 });
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ status: 'failed', attempts: 3 });
    expect(letters[0].error).toMatch(/ECONNREFUSED 127\.0\.0\.1:1/);
    const notes = ok<Notes>(await api.get('/api/notifications', owner()));
    expect(notes.content.some((n) => n.kind === 'mailing_failed' && n.object_id === run.run_id)).toBe(true);
  });

  it('the pg-boss schedule follows create, pause, resume, update and delete', async () => {
    const m = ok<MailingView>(
      await api.post(
        '/api/mailings',
        body({ schedule: '0 8 * * 1', timezone: 'Europe/Moscow', recipients: { emails: ['one@example.test'] } }),
        owner(),
      ),
    );
    expect(await bossSchedule(m.id)).toEqual([['0 8 * * 1', 'Europe/Moscow']]);
    ok(await api.post(`/api/mailings/${m.id}/pause`, {}, owner()));
    expect(await bossSchedule(m.id)).toEqual([]);
    ok(await api.post(`/api/mailings/${m.id}/resume`, {}, owner()));
    expect(await bossSchedule(m.id)).toEqual([['0 8 * * 1', 'Europe/Moscow']]);
    const again = (extra: Record<string, unknown>) =>
      api.put(`/api/mailings/${m.id}`, body({ recipients: { emails: ['one@example.test'] }, ...extra }), owner());
    ok(await again({ schedule: '30 9 * * 1-5', timezone: 'Asia/Vladivostok' }));
    expect(await bossSchedule(m.id)).toEqual([['30 9 * * 1-5', 'Asia/Vladivostok']]);
    ok(await again({ schedule: '30 9 * * 1-5', timezone: 'Asia/Vladivostok', status: 'paused' }));
    expect(await bossSchedule(m.id)).toEqual([]);
    ok(await again({ schedule: '0 7 1 * *', timezone: 'UTC' }));
    expect(await bossSchedule(m.id)).toEqual([['0 7 1 * *', 'UTC']]);
    ok(await again({ schedule: null }));
    expect(await bossSchedule(m.id)).toEqual([]);
    ok(await again({ schedule: '0 7 1 * *' }));
    expect(await bossSchedule(m.id)).toEqual([['0 7 1 * *', 'UTC']]);
    ok(await api.delete(`/api/mailings/${m.id}`, owner()));
    expect(await bossSchedule(m.id)).toEqual([]);
    // Created paused: nothing scheduled until it is resumed.
    const paused = ok<MailingView>(
      await api.post(
        '/api/mailings',
        body({ schedule: '0 8 * * *', status: 'paused', recipients: { emails: ['one@example.test'] } }),
        owner(),
      ),
    );
    expect(await bossSchedule(paused.id)).toEqual([]);
    ok(await api.post(`/api/mailings/${paused.id}/resume`, {}, owner()));
    expect(await bossSchedule(paused.id)).toEqual([['0 8 * * *', 'UTC']]);
  });

  it('bad input is a clear 4xx, never a 500', async () => {
    const other = await world.ordersDataset();
    const cases: [Record<string, unknown>, string][] = [
      [body({ channel_id: 2147483647 }), 'channel_id'],
      [body({ schedule: '61 * * * *' }), 'schedule'],
      [body({ schedule: 'every day' }), 'schedule'],
      [body({ timezone: 'Mars/Olympus' }), 'timezone'],
      [body({ widget_ids: [2147483647] }), 'widget_ids[0]'],
      [body({ widget_ids: [] }), 'widget_ids'],
      [body({ slice: { ...slice(), field_id: other.fieldId('region') } }), 'slice.field_id'],
      [body({ recipients: { emails: ['not an address'] } }), 'recipients.emails[0]'],
      [body({ recipients: { user_ids: [2147483647] } }), 'recipients.user_ids[0]'],
      [body({ name: 'a\u0000b' }), 'name'],
      [body({ format: 'docx' }), 'format'],
    ];
    for (const [b, field] of cases) {
      const res = await api.post('/api/mailings', b, owner());
      expect(res.status, JSON.stringify(b)).toBe(422);
      expect(Object.keys(failure(res).errors ?? {}), JSON.stringify(b)).toContain(field);
    }
    expect((await api.post('/api/mailings', body({ channel_id: 99999999999 }), owner())).status).toBe(422);
    expect((await api.get('/api/mailings/99999999999', owner())).status).toBe(422);
    expect((await api.get('/api/mailings/2147483647', owner())).status).toBe(404);
    expect((await api.post('/api/mailings/2147483647/run', {}, owner())).status).toBe(404);
    expect((await api.get('/api/mailings/2147483647/runs/1', owner())).status).toBe(404);
    const est = await api.post(
      '/api/mailings/slice-estimate',
      { ...slice(), field_id: other.fieldId('region') },
      owner(),
    );
    expect(est.status).toBe(422);
  });
});
