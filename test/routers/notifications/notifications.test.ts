import { beforeAll, describe, expect, it } from 'vitest';
import { insertNotification } from '../../../server/notifications/store';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';

/*
 * GET /api/notifications (newest first, unreadOnly, unreadFirst), GET /api/notifications/unread-count,
 * POST /api/notifications/{id}/read, POST /api/notifications/read-all: each user sees and marks only their own.
 */

interface Notification {
  id: number;
  kind: string;
  title: string;
  message: string;
  object_type: string | null;
  object_id: number | null;
  read: boolean;
  created_at: string;
}
interface NotificationPage {
  content: Notification[];
  page: { size: number; number: number; total_elements: number; total_pages: number };
}

const { t, api } = useTestApp();
let cast: RoleCast;
const me = () => cast.tokens.editor!;
const unread = async (token: string) =>
  ok<{ count: number }>(await api.get('/api/notifications/unread-count', token)).count;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  for (const title of ['first', 'second', 'third'])
    await insertNotification(t.deps.db, {
      userId: cast.users.editor.id,
      kind: 'extract_succeeded',
      title,
      message: `m ${title}`,
      objectType: 'etl_job',
      objectId: 1,
    });
  await insertNotification(t.deps.db, {
    userId: cast.users.viewer.id,
    kind: 'extract_failed',
    title: 'other',
    message: '',
  });
});

describe('notifications', () => {
  it('lists the own notifications newest first, pages them and counts the unread', async () => {
    const page = ok<NotificationPage>(await api.get('/api/notifications', me()));
    expect(page.content.map((n) => n.title)).toEqual(['third', 'second', 'first']);
    expect(page.content[0]).toMatchObject({
      kind: 'extract_succeeded',
      object_type: 'etl_job',
      object_id: 1,
      read: false,
    });
    expect(page.page).toEqual({ size: 20, number: 0, total_elements: 3, total_pages: 1 });
    const second = ok<NotificationPage>(await api.get('/api/notifications', me(), { size: '2', page: '1' }));
    expect(second.content.map((n) => n.title)).toEqual(['first']);
    expect(await unread(me())).toBe(3);
  });

  it('sorts by a field of the answer when asked; an unknown field is a 422 on sort', async () => {
    const byTitle = ok<NotificationPage>(await api.get('/api/notifications', me(), { sort: 'title,asc' }));
    expect(byTitle.content.map((n) => n.title)).toEqual(['first', 'second', 'third']);
    const oldest = ok<NotificationPage>(await api.get('/api/notifications', me(), { sort: 'created_at,asc' }));
    expect(oldest.content.map((n) => n.title)).toEqual(['first', 'second', 'third']);
    const bad = await api.get('/api/notifications', me(), { sort: 'message,asc' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.error.errors)).toEqual(['sort']);
  });

  it('marks one read; unreadOnly and unreadFirst; another user cannot mark it', async () => {
    const [third, second] = ok<NotificationPage>(await api.get('/api/notifications', me())).content;
    expect(ok<Notification>(await api.post(`/api/notifications/${second.id}/read`, undefined, me())).read).toBe(true);
    expect(await unread(me())).toBe(2);
    const onlyUnread = ok<NotificationPage>(await api.get('/api/notifications', me(), { unreadOnly: 'true' }));
    expect(onlyUnread.content.map((n) => n.title)).toEqual(['third', 'first']);
    ok(await api.post(`/api/notifications/${third.id}/read`, undefined, me()));
    const firstUnread = ok<NotificationPage>(await api.get('/api/notifications', me(), { unreadFirst: 'true' }));
    expect(firstUnread.content.map((n) => [n.title, n.read])).toEqual([
      ['first', false],
      ['third', true],
      ['second', true],
    ]);
    expect((await api.post(`/api/notifications/${third.id}/read`, undefined, cast.tokens.viewer)).status).toBe(404);
    expect((await api.post('/api/notifications/2147483000/read', undefined, me())).status).toBe(404);
    expect((await api.post('/api/notifications/99999999999/read', undefined, me())).status).toBe(422);
    expect((await api.get('/api/notifications', me(), { unreadOnly: 'maybe' })).status).toBe(422);
  });

  it('marks all read, for the caller only', async () => {
    expect(ok<{ marked: number }>(await api.post('/api/notifications/read-all', undefined, me())).marked).toBe(1);
    expect(await unread(me())).toBe(0);
    expect(await unread(cast.tokens.viewer!)).toBe(1);
    expect((await api.get('/api/notifications/unread-count')).status).toBe(401);
  });
});
