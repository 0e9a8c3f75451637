import net, { type AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { channelListOutput } from '../../../routers/mail-channels/schemas';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createChannel, startInbox, toOf, type ChannelView, type Inbox, type MailingView } from '../mailings/world';

/*
 * SMTP mail channels over REST (/api/mail-channels) against a real SMTP server on loopback (STARTTLS, AUTH): CRUD
 * with the password masked, a real test letter, each failure of a test letter in Russian with the server's reply,
 * deletion refused while used.
 */

type ChannelPage = z.output<typeof channelListOutput>;

const { t, api } = useTestApp();
let cast: RoleCast;
let inbox: Inbox;
const admin = () => cast.tokens.sysadmin!;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  inbox = await startInbox();
});
afterAll(async () => {
  await inbox?.close();
});

describe('mail channels', () => {
  it('creates, reads masked, updates keeping the password, lists for anyone by id and name', async () => {
    const ch = await createChannel(api, admin(), inbox.port);
    expect(ch.password).toBe('********');
    const got = ok<ChannelView>(await api.get(`/api/mail-channels/${ch.id}`, admin()));
    expect(got).toMatchObject({ host: '127.0.0.1', security: 'starttls', password: '********' });
    const { id: _id, created_at: _c, updated_at: _u, password: _p, ...body } = got;
    const changed = ok<ChannelView>(
      await api.put(`/api/mail-channels/${ch.id}`, { ...body, name: 'renamed' }, admin()),
    );
    expect(changed.name).toBe('renamed');
    // The password was kept: the test letter still authenticates.
    expect(ok(await api.post(`/api/mail-channels/${ch.id}/test`, { to: 'a@example.test' }, admin()))).toEqual({
      ok: true,
      message: 'Письмо отправлено',
    });
    const mail = inbox.letters.at(-1)!;
    expect(mail.subject).toBe('Проверка почтового канала');
    expect(toOf(mail)).toEqual(['a@example.test']);
    const list = ok<ChannelPage>(await api.get('/api/mail-channels?size=1000', cast.tokens.plain));
    expect(list.content.find((c) => c.id === ch.id)).toEqual({ id: ch.id, name: 'renamed' });
    expect((await api.get(`/api/mail-channels/${ch.id}`, cast.tokens.plain)).status).toBe(403);
    expect((await api.post('/api/mail-channels', { ...body }, cast.tokens.editor)).status).toBe(403);
  });

  it('GET /api/mail-channels is a paged list: page, size, sort by id, name, created_at or updated_at, query in the name', async () => {
    const prefix = uniq('paged');
    const ids: Record<string, number> = {};
    for (const name of ['b', 'a', 'c'])
      ids[name] = ok<ChannelView>(
        await api.post(
          '/api/mail-channels',
          { name: `${prefix}-${name}`, host: '127.0.0.1', port: 25, from_address: 'm@example.test' },
          admin(),
        ),
      ).id;
    const page = async (query: string, token = admin()) =>
      ok<ChannelPage>(await api.get(`/api/mail-channels?query=${prefix}&${query}`, token));
    const first = await page('size=2&sort=name,desc');
    expect(first.page).toEqual({ size: 2, number: 0, total_elements: 3, total_pages: 2 });
    expect(first.content.map((c) => c.id)).toEqual([ids.c, ids.b]);
    expect(first.content[0]).toMatchObject({ host: '127.0.0.1', port: 25, from_address: 'm@example.test' });
    const second = await page('size=2&page=1&sort=name,desc');
    expect(second.content.map((c) => c.id)).toEqual([ids.a]);
    // By id unless asked otherwise; anyone else gets id and name only.
    const plain = await page('', cast.tokens.plain);
    expect(plain.page).toEqual({ size: 20, number: 0, total_elements: 3, total_pages: 1 });
    expect(plain.content).toEqual(['b', 'a', 'c'].map((n) => ({ id: ids[n], name: `${prefix}-${n}` })));
    expect((await page('sort=created_at,desc')).content.map((c) => c.id)).toEqual([ids.c, ids.a, ids.b]);
    // A field it cannot sort by (host is hidden from most callers) and bad paging: 422 naming the parameter.
    for (const [query, field] of [
      ['sort=host', 'sort'],
      ['sort=nope,asc', 'sort'],
      ['size=0', 'size'],
      ['page=-1', 'page'],
    ]) {
      const res = await api.get(`/api/mail-channels?${query}`, cast.tokens.plain);
      expect(res.status, query).toBe(422);
      expect(Object.keys(failure(res).errors ?? {})).toEqual([field]);
    }
  });

  it('the password is stored sealed, never as the plain text, and a new one replaces it sealed', async () => {
    const ch = await createChannel(api, admin(), inbox.port, 'Пароль-в-открытую-1');
    // The whole stored row, as text: the password must appear nowhere in it.
    const stored = async () => {
      const { rows } = await t.deps.db.execute<{ row: string; box: string | null }>(
        sql`select row_to_json(c)::text as row, c.password_box as box from mail_channels c where c.id = ${ch.id}`,
      );
      return rows[0];
    };
    const before = await stored();
    expect(before.row).not.toContain('Пароль-в-открытую-1');
    expect(before.box).not.toBeNull();
    expect(t.deps.secretBox.open<string>(before.box!)).toBe('Пароль-в-открытую-1');
    const { id: _id, created_at: _c, updated_at: _u, ...body } = ch;
    ok(await api.put(`/api/mail-channels/${ch.id}`, { ...body, password: 'Другой-пароль-2' }, admin()));
    const after = await stored();
    expect(after.row).not.toContain('Другой-пароль-2');
    expect(after.box).not.toBe(before.box);
    expect(t.deps.secretBox.open<string>(after.box!)).toBe('Другой-пароль-2');
    // null removes it: no password stored, none answered.
    const cleared = ok<ChannelView>(await api.put(`/api/mail-channels/${ch.id}`, { ...body, password: null }, admin()));
    expect(cleared.password).toBeNull();
    expect((await stored()).box).toBeNull();
  });

  describe('a failed test letter: ok false, what happened in Russian, the reply of the server after it', () => {
    /** A channel as the test wants it (STARTTLS with the inbox's user by default) and its test letter's answer. */
    const testOf = async (over: Record<string, unknown>, to = 'a@example.test') => {
      const body = { name: uniq('smtp'), host: '127.0.0.1', from_address: 'm@example.test', ...over };
      const ch = ok<ChannelView>(await api.post('/api/mail-channels', body, admin()));
      return ok<{ ok: boolean; message: string }>(await api.post(`/api/mail-channels/${ch.id}/test`, { to }, admin()));
    };
    const asUser = (password: string) => ({ port: inbox.port, username: 'mailer', password });
    /** A loopback port nothing listens on: one the system gave out and is closed again. */
    const closedPort = async () => {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise((resolve) => server.close(resolve));
      return port;
    };

    it('authentication refused (535)', async () => {
      expect(await testOf(asUser('wrong'))).toEqual({
        ok: false,
        message: `Ошибка аутентификации на сервере 127.0.0.1:${inbox.port}: 535 Authentication failed: bad credentials`,
      });
    });

    it('a closed port: the connection refused', async () => {
      const port = await closedPort();
      expect(await testOf({ port, security: 'none' })).toEqual({
        ok: false,
        message: `Сервер 127.0.0.1:${port} отклонил подключение: connect ECONNREFUSED 127.0.0.1:${port}`,
      });
    });

    it('a host name that does not resolve', async () => {
      const res = await testOf({ host: 'no-such-host.invalid', port: 25, security: 'none' });
      expect(res.ok).toBe(false);
      expect(res.message).toMatch(
        /^Адрес сервера no-such-host\.invalid:25 не найден: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
      );
    });

    it('the recipient refused (550)', async () => {
      inbox.refuse.add('nobody@example.test');
      expect(await testOf(asUser('секрет-42'), 'nobody@example.test')).toEqual({
        ok: false,
        message: `Сервер 127.0.0.1:${inbox.port} не принял адрес получателя: 550 Mailbox unavailable`,
      });
    });

    it('TLS: ssl (implicit TLS) against a server that greets in plain text', async () => {
      const res = await testOf({ ...asUser('секрет-42'), security: 'ssl' });
      expect(res.ok).toBe(false);
      expect(res.message).toMatch(
        new RegExp(`^Ошибка TLS при подключении к 127\\.0\\.0\\.1:${inbox.port}: .*wrong version number`),
      );
    });

    it('a server that never greets: no answer in time', { timeout: 60_000 }, async () => {
      const silent = net.createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as AddressInfo;
      try {
        // The greeting timer or the idle socket's, whichever fires first: both are nodemailer's 15 s.
        const res = await testOf({ port, security: 'none' });
        expect(res.ok).toBe(false);
        expect(res.message).toMatch(
          new RegExp(`^Сервер 127\\.0\\.0\\.1:${port} не ответил за 15 с: (Greeting never received|Timeout)$`),
        );
      } finally {
        silent.close();
      }
    });

    it('any other refusal: the letter refused (554)', async () => {
      const strict = new SMTPServer({
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onData(stream, _session, cb) {
          stream.resume();
          stream.on('end', () => cb(Object.assign(new Error('Message rejected as spam'), { responseCode: 554 })));
        },
      });
      await new Promise<void>((resolve) => strict.listen(0, '127.0.0.1', resolve));
      const { port } = strict.server.address() as AddressInfo;
      try {
        expect(await testOf({ port, security: 'none' })).toEqual({
          ok: false,
          message: `Не удалось отправить письмо через 127.0.0.1:${port}: 554 Message rejected as spam`,
        });
      } finally {
        strict.close();
      }
    });
  });

  it('a channel used by a mailing cannot be deleted (400); unused it can', async () => {
    const used = await createChannel(api, admin(), inbox.port);
    const dashboard = ok<{ id: number }>(
      await api.post('/api/dashboard', { name: 'Сводка', workspace_id: cast.workspaceId }, cast.tokens.editor),
    );
    const mailing = ok<MailingView>(
      await api.post(
        '/api/mailings',
        {
          name: 'Сводка',
          workspace_id: cast.workspaceId,
          dashboard_id: dashboard.id,
          format: 'pdf',
          channel_id: used.id,
          recipients: { emails: ['a@example.test'] },
        },
        cast.tokens.editor,
      ),
    );
    const refused = await api.delete(`/api/mail-channels/${used.id}`, admin());
    expect(refused.status).toBe(400);
    expect(failure(refused).message).toBe(
      'Канал используется рассылками (1): сначала переведите их на другой канал или удалите',
    );
    expect(ok<ChannelView>(await api.get(`/api/mail-channels/${used.id}`, admin())).id).toBe(used.id);
    // Once the mailing is gone the channel can go.
    ok(await api.delete(`/api/mailings/${mailing.id}`, cast.tokens.editor));
    expect(ok(await api.delete(`/api/mail-channels/${used.id}`, admin()))).toEqual({ id: used.id, deleted: true });
    const free = await createChannel(api, admin(), inbox.port);
    expect(ok(await api.delete(`/api/mail-channels/${free.id}`, admin()))).toEqual({ id: free.id, deleted: true });
    expect((await api.get(`/api/mail-channels/${free.id}`, admin())).status).toBe(404);
  });

  it('bad input is a 422 or 404, never a 500', async () => {
    const base = { name: 'x', host: 'h', port: 25, from_address: 'a@example.test' };
    for (const body of [
      { ...base, port: 0 },
      { ...base, security: 'tls' },
      { ...base, from_address: 'not-an-address' },
      { ...base, name: 'a\u0000b' },
      { ...base, extra: 1 },
    ])
      expect((await api.post('/api/mail-channels', body, admin())).status).toBe(422);
    expect((await api.get('/api/mail-channels/99999999999', admin())).status).toBe(422);
    expect((await api.get('/api/mail-channels/2147483647', admin())).status).toBe(404);
    expect((await api.post('/api/mail-channels/2147483647/test', { to: 'a@example.test' }, admin())).status).toBe(404);
    expect((await api.post('/api/mail-channels/1/test', { to: 'bad' }, admin())).status).toBe(422);
  });
});
