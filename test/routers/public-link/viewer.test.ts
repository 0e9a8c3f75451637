import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { z } from 'zod';
import type { listMembersOutput } from '../../../routers/workspaces/schemas';
import { shareLinks } from '../../../db/schema/share-links';
import { useTestApp } from '../../support/app';
import { failure, ok, type RestResponse } from '../../support/rest';
import {
  createShareWorld,
  issueLink,
  qtyByProduct,
  viewer,
  type FieldValues,
  type LinkState,
  type PublicDashboard,
  type PublicWidget,
  type ShareWorld,
  type WidgetData,
} from './world';

/*
 * The public viewer of a share link over REST: GET /api/public/link/{token}, /dashboard, /widget/{id},
 * POST /widget/{id}/data, GET /dataset/{id}/field-values. No Authorization header; the viewer sees only what the
 * dashboard shows, with the link owner's rights.
 */

const { t, api } = useTestApp();
let w: ShareWorld;
let token: string;
const v = viewer(api);

beforeAll(async () => {
  w = await createShareWorld(t, api);
  token = (await issueLink(api, w)).token!;
});
afterAll(() => w?.dispose());

const flat = (d: WidgetData) => {
  if (d.kind !== 'flat') throw new Error('expected flat data');
  return d.rows;
};
const kpi = (d: WidgetData) => {
  if (d.kind !== 'kpi') throw new Error('expected kpi data');
  return d.row;
};

describe('an active link without a password, no Authorization header', () => {
  it('GET state: active, no password, the dashboard name', async () => {
    expect(ok<LinkState>(await v.state(token))).toEqual({
      status: 'active',
      password_required: false,
      unlocked: true,
      dashboard_name: 'Продажи',
    });
  });

  it('GET /dashboard: tabs, tiles, the selector with its dataset, the widgets it shows (not their saved filters)', async () => {
    const d = ok<PublicDashboard>(await v.dashboard(token));
    expect(d.name).toBe('Продажи');
    expect(d.tabs.map((x) => x.id)).toEqual(['main', 'more']);
    expect(d.items.map((i) => i.widget_id)).toEqual([
      w.widgets.bar,
      w.widgets.kpi,
      w.widgets.pie,
      w.widgets.line,
      w.widgets.table,
    ]);
    expect(d.selectors).toEqual([
      expect.objectContaining({ id: 'product', field_id: w.productField, dataset_id: w.datasetId }),
    ]);
    expect(d.widgets.map((x) => x.type)).toEqual(['bar', 'kpi', 'pie', 'line', 'table']);
    expect(d.widgets.some((x) => x.id === w.widgets.other)).toBe(false);
    expect(JSON.stringify(d)).not.toContain('workspace_id');
  });

  it('widget data are the saved shelves over the rows; a selector value filters the widgets it drives', async () => {
    const expected = qtyByProduct(w.sales);
    const rows = flat(ok<WidgetData>(await v.data(token, w.widgets.bar)));
    expect(new Map(rows.map((r) => [r.p, r.q]))).toEqual(expected);
    expect(kpi(ok<WidgetData>(await v.data(token, w.widgets.kpi))).q).toBe(w.sales.reduce((a, s) => a + s.qty, 0));
    const tea = { filters: [{ selector_id: 'product', values: ['чай'] }] };
    expect(kpi(ok<WidgetData>(await v.data(token, w.widgets.kpi, tea))).q).toBe(expected.get('чай'));
    expect(flat(ok<WidgetData>(await v.data(token, w.widgets.bar, tea)))).toEqual([
      { p: 'чай', q: expected.get('чай') },
    ]);
    // The pie is not driven by the selector: unfiltered.
    const pie = flat(ok<WidgetData>(await v.data(token, w.widgets.pie, tea)));
    expect(pie.reduce((a, r) => a + Number(r.q), 0)).toBe(w.sales.reduce((a, s) => a + s.qty, 0));
  });

  it('sorts by the widget own fields and pages; a sort by anything else is a 422', async () => {
    const desc = flat(
      ok<WidgetData>(
        await v.data(token, w.widgets.table, { sorts: [{ field_id: 'q', direction: 'desc' }], page_size: 2 }),
      ),
    );
    const top = [...qtyByProduct(w.sales).values()].sort((a, b) => b - a).slice(0, 2);
    expect(desc.map((r) => r.q)).toEqual(top);
    const bad = await v.data(token, w.widgets.table, { sorts: [{ field_id: 'secret', direction: 'asc' }] });
    expect(bad.status).toBe(422);
    expect(failure(bad).errors).toHaveProperty(['sorts[0].fieldId']);
  });

  it('filters only through the dashboard selectors and parameters: an unknown selector or parameter is a 422, raw filters are refused', async () => {
    const unknown = await v.data(token, w.widgets.bar, { filters: [{ selector_id: 'nope', values: [1] }] });
    expect(unknown.status).toBe(422);
    const param = await v.data(token, w.widgets.bar, { parameters: { rate: 5 } });
    expect(param.status).toBe(422);
    const raw = await v.data(token, w.widgets.bar, { filters: [{ sql: '[sales.qty]', op: 'gt', values: [0] }] });
    expect(raw.status).toBe(422);
    const shelves = await v.data(token, w.widgets.bar, { rows: [{ id: 'x', sql: '[sales.amount]' }] });
    expect(shelves.status).toBe(422);
  });

  it('GET /widget/{id}: a widget of the dashboard; one of another dashboard or none at all is a 404', async () => {
    expect(ok<PublicWidget>(await v.widget(token, w.widgets.bar))).toMatchObject({ id: w.widgets.bar, type: 'bar' });
    for (const id of [w.widgets.other, 2_147_483_647]) {
      expect((await v.widget(token, id)).status).toBe(404);
      expect((await v.data(token, id)).status).toBe(404);
    }
  });

  it('field values only for a field a selector filters on, of its dataset; anything else is a 404', async () => {
    const values = ok<FieldValues>(await v.values(token, w.datasetId, w.productField));
    expect(values.values).toEqual([...qtyByProduct(w.sales).keys()].sort());
    expect((await v.values(token, w.datasetId, w.qtyField)).status).toBe(404);
    expect((await v.values(token, w.datasetId + 1000, w.productField)).status).toBe(404);
  });

  it('a Bearer token widens nothing: a system administrator still sees only this dashboard', async () => {
    const admin = w.cast.tokens.sysadmin!;
    const res = await api.call('GET', `/api/public/link/${token}/widget/${w.widgets.other}`, { token: admin });
    expect(res.status).toBe(404);
    const dead = await api.call('GET', `/api/public/link/${'C'.repeat(43)}/dashboard`, { token: admin });
    expect(dead.status).toBe(404);
    const garbage = await api.call('GET', `/api/public/link/${token}/dashboard`, {
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(garbage.status).toBe(200);
  });
});

describe('the owner’s rights, row- and column-level security apply', () => {
  it('an RLS rule on the owner limits the public rows and field values; its removal takes effect at once', async () => {
    const link = await issueLink(api, w);
    const rule = ok<{ id: number }>(
      await api.post(
        `/api/dataset/${w.datasetId}/rls-rules`,
        { field_id: w.productField, attribute: 'product', operator: 'in', user_ids: [w.cast.users.editor.id] },
        w.cast.tokens.wsAdmin,
      ),
    );
    ok(
      await api.put(
        `/api/users/${w.cast.users.editor.id}/attributes`,
        { attributes: { product: ['кофе'] } },
        w.cast.tokens.sysadmin,
      ),
    );
    try {
      const rows = flat(ok<WidgetData>(await v.data(link.token!, w.widgets.bar)));
      expect(rows).toEqual([{ p: 'кофе', q: qtyByProduct(w.sales).get('кофе') }]);
      expect(ok<FieldValues>(await v.values(link.token!, w.datasetId, w.productField)).values).toEqual(['кофе']);
    } finally {
      ok(await api.delete(`/api/dataset/${w.datasetId}/rls-rules/${rule.id}`, w.cast.tokens.wsAdmin));
    }
    expect(flat(ok<WidgetData>(await v.data(link.token!, w.widgets.bar))).length).toBe(qtyByProduct(w.sales).size);
  });
});

describe('column-level security of the owner over the public path (hide and mask)', () => {
  const addCls = async (action: 'hide' | 'mask', fieldId: number) =>
    ok<{ id: number }>(
      await api.post(
        `/api/dataset/${w.datasetId}/cls-rules`,
        { field_ids: [fieldId], action, user_ids: [w.cast.users.editor.id] },
        w.cast.tokens.wsAdmin,
      ),
    ).id;
  const dropCls = async (id: number) =>
    ok(await api.delete(`/api/dataset/${w.datasetId}/cls-rules/${id}`, w.cast.tokens.wsAdmin));

  /** The error without its timestamp. */
  const errorOf = (res: RestResponse) => ({ status: res.status, error: { ...failure(res), timestamp: undefined } });

  it('a masked field comes back masked in every public widget, filtered or not; removing the rule unmasks it', async () => {
    const tok = (await issueLink(api, w)).token!;
    const products = [...qtyByProduct(w.sales).keys()].sort();
    const rule = await addCls('mask', w.qtyField);
    try {
      expect(flat(ok<WidgetData>(await v.data(tok, w.widgets.bar)))).toEqual(products.map((p) => ({ p, q: '***' })));
      expect(kpi(ok<WidgetData>(await v.data(tok, w.widgets.kpi))).q).toBe('***');
      const tea = { filters: [{ selector_id: 'product', values: ['чай'] }] };
      expect(flat(ok<WidgetData>(await v.data(tok, w.widgets.bar, tea)))).toEqual([{ p: 'чай', q: '***' }]);
      const pie = flat(ok<WidgetData>(await v.data(tok, w.widgets.pie)));
      expect(pie.length).toBeGreaterThan(1);
      expect(pie.every((r) => r.q === '***')).toBe(true);
      // The selector's own field is not masked: its values are still offered.
      expect(ok<FieldValues>(await v.values(tok, w.datasetId, w.productField)).values).toEqual(products);
    } finally {
      await dropCls(rule);
    }
    expect(kpi(ok<WidgetData>(await v.data(tok, w.widgets.kpi))).q).toBe(w.sales.reduce((a, s) => a + s.qty, 0));
  });

  it('a hidden field is unknown to the public widgets reading it, exactly as to their owner; others still answer', async () => {
    const tok = (await issueLink(api, w)).token!;
    const rule = await addCls('hide', w.qtyField);
    try {
      for (const id of [w.widgets.bar, w.widgets.kpi, w.widgets.pie, w.widgets.table]) {
        const res = await v.data(tok, id);
        expect(errorOf(res)).toEqual({
          status: 422,
          error: {
            code: 422,
            message: 'Ошибка валидации',
            errors: { 'columns[0].sql': 'Ошибка в выражении: поле [sales.qty] не найдено в датасете' },
          },
        });
        // The same answer as the owner's own (authenticated) read of the widget.
        expect(errorOf(res)).toEqual(errorOf(await api.post(`/api/widget/${id}/data`, {}, w.owner)));
      }
      expect(ok<FieldValues>(await v.values(tok, w.datasetId, w.productField)).values).toEqual(
        [...qtyByProduct(w.sales).keys()].sort(),
      );
      // An administrator of the workspace is not under the rule: it hides the field from the owner only.
      expect(ok(await api.post(`/api/widget/${w.widgets.kpi}/data`, {}, w.cast.tokens.wsAdmin))).toEqual({
        kind: 'kpi',
        row: { q: w.sales.reduce((a, s) => a + s.qty, 0) },
      });
    } finally {
      await dropCls(rule);
    }
    expect(flat(ok<WidgetData>(await v.data(tok, w.widgets.bar))).length).toBe(qtyByProduct(w.sales).size);
  });
});

describe('every viewer path in every link state', () => {
  type Path = 'state' | 'dashboard' | 'widget' | 'data' | 'values' | 'unlock';
  type Expect = Record<Path, number>;
  /** The grant to send and the password /unlock tries (the right one on a password link: a wrong one is throttled). */
  interface As {
    grant?: string;
    password?: string;
  }
  const call = (tok: string, { grant, password = 'любой' }: As = {}): Record<Path, () => Promise<RestResponse>> => ({
    state: () => v.state(tok, grant),
    dashboard: () => v.dashboard(tok, grant),
    widget: () => v.widget(tok, w.widgets.bar, grant),
    data: () => v.data(tok, w.widgets.bar, {}, grant),
    values: () => v.values(tok, w.datasetId, w.productField, grant),
    unlock: () => v.unlock(tok, password),
  });
  const walk = async (tok: string, expected: Expect, as: As = {}) => {
    const got: Record<string, number> = {};
    for (const [path, fn] of Object.entries(call(tok, as))) got[path] = (await fn()).status;
    expect(got).toEqual(expected);
  };
  /** Every path's status and whole body but the error's timestamp. */
  const answers = async (tok: string, as: As = {}) => {
    const got: Record<string, { status: number; body: unknown }> = {};
    for (const [path, fn] of Object.entries(call(tok, as))) {
      const res = await fn();
      got[path] = { status: res.status, body: { ...res.body, error: { ...failure(res), timestamp: undefined } } };
    }
    return got;
  };
  const deadAnswer = {
    status: 404,
    body: { success: false, error: { code: 404, message: 'Ссылка не найдена или больше не действует' } },
  };
  const unknownToken = 'D'.repeat(43);
  /** A dead token answers every path exactly as a token never issued does: nothing tells them apart. */
  const expectDead = async (tok: string, as: As = {}) => {
    const got = await answers(tok, as);
    expect(got).toEqual(await answers(unknownToken, as));
    for (const answer of Object.values(got)) expect(answer).toEqual(deadAnswer);
  };
  const owner = () => w.owner;
  const action = (linkId: number, suffix: string) => api.post(`${w.linksPath}/${linkId}${suffix}`, undefined, owner());

  it('active, suspended, active again, expired, rotated away, revoked, unknown, malformed', async () => {
    // A link without a password: /unlock is a 400 while it is active, a 403 while suspended or expired.
    const open = { state: 200, dashboard: 200, widget: 200, data: 200, values: 200, unlock: 400 };
    const blocked = { state: 200, dashboard: 403, widget: 403, data: 403, values: 403, unlock: 403 };
    const link = await issueLink(api, w);
    const tok = link.token!;
    await walk(tok, open);
    await action(link.link_id, '/suspend');
    await walk(tok, blocked);
    await action(link.link_id, '/activate');
    await walk(tok, open);
    await t.deps.db
      .update(shareLinks)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(shareLinks.id, link.link_id));
    await action(link.link_id, '/activate'); // bumps this node's caches
    await action(link.link_id, '/suspend');
    await action(link.link_id, '/activate');
    await walk(tok, blocked);
    expect(ok<LinkState>(await v.state(tok)).status).toBe('expired');
    await api.put(`${w.linksPath}/${link.link_id}`, { name: 'n', expires_at: null }, owner());
    const rotated = ok<{ token: string }>(await action(link.link_id, '/rotate')).token;
    await expectDead(tok);
    await walk(rotated, open);
    await api.delete(`${w.linksPath}/${link.link_id}`, owner());
    await expectDead(rotated);
    await expectDead('short');
    await expectDead(`${unknownToken.slice(0, 42)}!`);
  });

  it('a password link: state only until /unlock; the grant opens it; the grant dies with rotate, suspend, password change and revoke', async () => {
    // /unlock is tried with the right password: it opens an active link whatever grant is sent, never a blocked one.
    const open = { state: 200, dashboard: 200, widget: 200, data: 200, values: 200, unlock: 200 };
    const blocked = { state: 200, dashboard: 403, widget: 403, data: 403, values: 403, unlock: 403 };
    const locked = { state: 200, dashboard: 401, widget: 401, data: 401, values: 401, unlock: 200 };
    let password = 'верный-пароль-1';
    const link = await issueLink(api, w, { password });
    const tok = link.token!;
    await walk(tok, locked, { password });
    expect(ok<LinkState>(await v.state(tok))).toEqual({
      status: 'active',
      password_required: true,
      unlocked: false,
      dashboard_name: null,
    });
    const wrong = await v.unlock(tok, 'не тот');
    expect(wrong.status).toBe(401);
    const unlocked = ok<{ grant: string; expires_at: string }>(await v.unlock(tok, password));
    expect(new Date(unlocked.expires_at).getTime()).toBeGreaterThan(Date.now());
    let grant = unlocked.grant;
    await walk(tok, open, { grant, password });
    expect(ok<LinkState>(await v.state(tok, grant))).toMatchObject({ unlocked: true, dashboard_name: 'Продажи' });
    // A tampered grant, or one of another link, opens nothing.
    await walk(tok, locked, { grant: grant.slice(0, -2) + (grant.endsWith('AA') ? 'BB' : 'AA'), password });
    const [id, version, exp, sig] = grant.split('.');
    await walk(tok, locked, { grant: [id, version, String(Number(exp) + 3600), sig].join('.'), password });
    await walk(tok, locked, { grant: 'x'.repeat(5000), password });

    // suspend + activate: the old grant is dead
    await action(link.link_id, '/suspend');
    await walk(tok, blocked, { grant, password });
    await action(link.link_id, '/activate');
    await walk(tok, locked, { grant, password });
    grant = ok<{ grant: string }>(await v.unlock(tok, password)).grant;
    await walk(tok, open, { grant, password });

    // password change
    await api.put(`${w.linksPath}/${link.link_id}`, { name: 'n', password: 'новый-пароль-2' }, owner());
    expect((await v.unlock(tok, password)).status).toBe(401);
    password = 'новый-пароль-2';
    await walk(tok, locked, { grant, password });
    grant = ok<{ grant: string }>(await v.unlock(tok, password)).grant;
    await walk(tok, open, { grant, password });

    // rotate: the old address is dead (as an unknown one, grant or not), and the grant does not open the new one
    const rotated = ok<{ token: string }>(await action(link.link_id, '/rotate')).token;
    await expectDead(tok, { grant, password });
    await expectDead(tok, { password });
    await walk(rotated, locked, { grant, password });
    grant = ok<{ grant: string }>(await v.unlock(rotated, password)).grant;
    await walk(rotated, open, { grant, password });

    // revoke
    await api.delete(`${w.linksPath}/${link.link_id}`, owner());
    await expectDead(rotated, { grant, password });
    await expectDead(rotated, { password });
  });

  it('unlock of a link without a password is a 400; of a suspended link a 403', async () => {
    const link = await issueLink(api, w);
    expect(failure(await v.unlock(link.token!, 'x'))).toMatchObject({
      code: 400,
      message: 'Ссылка не защищена паролем',
    });
    const locked = await issueLink(api, w, { password: 'пароль-3x' });
    await action(locked.link_id, '/suspend');
    expect(failure(await v.unlock(locked.token!, 'пароль-3x'))).toMatchObject({
      code: 403,
      message: 'Ссылка приостановлена владельцем',
    });
  });

  it('the owner losing the dashboard kills the link: removed from the workspace, every path answers as an unknown token', async () => {
    const plain = await issueLink(api, w);
    const withPassword = await issueLink(api, w, { password: 'пароль-владельца' });
    const grant = ok<{ grant: string }>(await v.unlock(withPassword.token!, 'пароль-владельца')).grant;
    await walk(plain.token!, { state: 200, dashboard: 200, widget: 200, data: 200, values: 200, unlock: 400 });
    const members = `/api/workspaces/${w.cast.workspaceId}/members`;
    const list = ok<z.output<typeof listMembersOutput>>(await api.get(members, w.cast.tokens.wsAdmin, { size: '100' }));
    const membership = list.content.find((m) => m.user_id === w.cast.users.editor.id)!;
    ok(await api.delete(`${members}/${membership.member_id}`, w.cast.tokens.wsAdmin));
    try {
      await expectDead(plain.token!);
      await expectDead(withPassword.token!, { grant, password: 'пароль-владельца' });
    } finally {
      ok(await api.post(members, { user_id: w.cast.users.editor.id, role: membership.role }, w.cast.tokens.wsAdmin));
    }
    // Back in the workspace, the owner's links work again: they were never revoked.
    await walk(plain.token!, { state: 200, dashboard: 200, widget: 200, data: 200, values: 200, unlock: 400 });
  });

  it('the owner’s account switched off kills the link as an unknown token; switched on again, it works', async () => {
    const link = await issueLink(api, w);
    const open = { state: 200, dashboard: 200, widget: 200, data: 200, values: 200, unlock: 400 };
    await walk(link.token!, open);
    const account = `/api/users/${w.cast.users.editor.id}`;
    ok(await api.put(account, { active: false }, w.cast.tokens.sysadmin));
    try {
      await expectDead(link.token!);
    } finally {
      ok(await api.put(account, { active: true }, w.cast.tokens.sysadmin));
    }
    await walk(link.token!, open);
  });
});

describe('unlock throttling per link and address', () => {
  it('after 5 wrong passwords in a minute: 429 with Retry-After, even for the right one; another link is not affected', async () => {
    const link = await issueLink(api, w, { password: 'правильный-1' });
    const other = await issueLink(api, w, { password: 'правильный-1' });
    for (let i = 0; i < 5; i++) expect((await v.unlock(link.token!, `неверный-${i}`)).status).toBe(401);
    const throttled = await v.unlock(link.token!, 'правильный-1');
    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toBe('60');
    expect(failure(throttled).code).toBe(429);
    expect((await v.unlock(other.token!, 'правильный-1')).status).toBe(200);
  });

  it('another client address is not affected by this address’s failures', async () => {
    const link = await issueLink(api, w, { password: 'правильный-2' });
    const unlockFrom = async (remoteAddress: string, password: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/public/link/${link.token!}/unlock`,
        payload: { password },
        remoteAddress,
      });
      return { status: res.statusCode, body: res.json(), headers: res.headers };
    };
    for (let i = 0; i < 5; i++) expect((await unlockFrom('192.0.2.10', `неверный-${i}`)).status).toBe(401);
    const throttled = await unlockFrom('192.0.2.10', 'правильный-2');
    expect(throttled.status).toBe(429);
    expect(failure(throttled).message).toBe('Слишком много неверных паролей, повторите через минуту');
    // Same link, another address: its own budget, the right password opens the link.
    expect(ok<{ grant: string }>(await unlockFrom('192.0.2.11', 'правильный-2')).grant).toMatch(/\./);
    expect((await unlockFrom('192.0.2.11', 'неверный')).status).toBe(401);
    // The first address stays throttled.
    expect((await unlockFrom('192.0.2.10', 'правильный-2')).status).toBe(429);
  });
});

describe('bad input', () => {
  it('NUL bytes, huge and garbage tokens and ids answer 404 or 422, never 500', async () => {
    const tokens = ['%00', 'a%00b', 'x'.repeat(900), '..%2F..%2Fetc', '%E2%80%AE', token.toUpperCase(), `${token}%00`];
    for (const tok of tokens) {
      const res = await api.call('GET', `/api/public/link/${tok}/dashboard`);
      expect([404, 422]).toContain(res.status);
      expect(res.body.success).toBe(false);
    }
    for (const id of ['0', '-1', '99999999999', 'abc', '1.5', '%00']) {
      const res = await api.call('GET', `/api/public/link/${token}/widget/${id}`);
      expect([404, 422]).toContain(res.status);
    }
    const nul = await v.data(token, w.widgets.bar, { filters: [{ selector_id: 'product', values: ['a\u0000b'] }] });
    expect(nul.status).toBe(422);
    const huge = await v.data(token, w.widgets.bar, {
      filters: [{ selector_id: 'product', values: Array.from({ length: 5000 }, (_, i) => `v${i}`) }],
    });
    expect(huge.status).toBe(422);
    const notJson = await api.call('POST', `/api/public/link/${token}/widget/${w.widgets.bar}/data`, {
      body: '{"filters":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
  });
});
