import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PUBLIC_BODY_LIMIT_BYTES } from '../../../server/app/public-rate-limit';
import { ERROR_TABLE } from '../../../server/kernel/errors';
import { useTestApp } from '../../support/app';
import { loginAdmin } from '../../support/factories';
import { failure, ok, type RestResponse } from '../../support/rest';
import { createShareWorld, issueLink, viewer, type ShareWorld, type WidgetData } from './world';

/*
 * Anonymous share-link calls (/api/public/..., the publicLink procedures over /trpc) take small bodies only: a real
 * selector state is a few values, so PUBLIC_BODY_LIMIT_BYTES (not the global 10 MB) answers 413 in the app's envelope
 * before the body is read whole. The schema bounds a value as a selector would carry it.
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

/** Selector values that pass every schema bound and still weigh more than the public limit together. */
function oversizedFilters() {
  const values = Array.from({ length: Math.ceil((PUBLIC_BODY_LIMIT_BYTES * 1.5) / 900) }, (_, i) =>
    `${i}`.padEnd(900, 'x'),
  );
  return [{ selector_id: 'product', values }];
}

const expectTooLarge = (res: RestResponse) => {
  expect(res.status).toBe(413);
  expect(res.body.success).toBe(false);
  expect(failure(res)).toMatchObject({ code: 413, message: ERROR_TABLE.payload_too_large.message });
};

it('a widget-data body over the public limit is a 413 envelope; a real selector state passes', async () => {
  expectTooLarge(await v.data(token, w.widgets.bar, { filters: oversizedFilters() }));
  const chosen = await v.data(token, w.widgets.bar, { filters: [{ selector_id: 'product', values: ['Товар 1'] }] });
  expect(ok<WidgetData>(chosen).kind).toBe('flat');
  // Unlock and unknown public paths are held to the same limit.
  expectTooLarge(await api.post(`/api/public/link/${token}/unlock`, { password: 'x'.repeat(PUBLIC_BODY_LIMIT_BYTES) }));
  expectTooLarge(await api.post('/api/public/no-such-path', { pad: 'x'.repeat(PUBLIC_BODY_LIMIT_BYTES) }));
});

it('a chunked body (no Content-Length) is cut off at the limit as it streams in', async () => {
  const chunked = async (filters: unknown): Promise<RestResponse> => {
    const body = JSON.stringify({ filters });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/public/link/${token}/widget/${w.widgets.bar}/data`,
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      payload: Readable.from([body.slice(0, 20), body.slice(20)]),
    });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };
  expectTooLarge(await chunked(oversizedFilters()));
  expect(ok<WidgetData>(await chunked([{ selector_id: 'product', values: ['Товар 1'] }])).kind).toBe('flat');
});

it('the publicLink procedures over /trpc have the same limit, also batched behind an authenticated one', async () => {
  const input = { token, id: w.widgets.bar, filters: oversizedFilters() };
  const single = await api.call('POST', '/trpc/publicLink.widgetData', { body: { json: input } });
  expectTooLarge(single);
  const admin = await loginAdmin(api);
  const batched = await api.call('POST', '/trpc/users.me,publicLink.widgetData?batch=1', {
    token: admin,
    body: { 1: { json: input } },
  });
  expectTooLarge(batched);
});

it('a chunked multipart body to a public procedure over /trpc is refused, the cut-off stream unread', async () => {
  // The multipart parser of /trpc hands the stream on unread: the limit's error must not go unhandled.
  const form = new FormData();
  form.append('token', token);
  form.append('password', 'x'.repeat(PUBLIC_BODY_LIMIT_BYTES * 2));
  const res = await t.app.inject({ method: 'POST', url: '/trpc/publicLink.unlock', payload: form });
  // No procedure takes a multipart body: /trpc refuses it before reading (server/app/app.ts).
  expect(res.statusCode).toBe(415);
});

it('authenticated routes keep the global limit', async () => {
  const admin = await loginAdmin(api);
  const res = await api.post(
    `/api/dashboard/${w.dashboardId}/data`,
    { filters: oversizedFilters(), widget_ids: [w.widgets.bar] },
    admin,
  );
  expect(res.status).not.toBe(413);
});

it('schema bounds fit a selector: a value longer than 1,000 characters or over 200 parameters is a 422', async () => {
  const long = await v.data(token, w.widgets.bar, {
    filters: [{ selector_id: 'product', values: ['x'.repeat(1_001)] }],
  });
  expect(long.status).toBe(422);
  expect(Object.keys(failure(long).errors ?? {})).toEqual(['filters[0].values[0]']);
  const parameters = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`p${i}`, i]));
  const many = await v.data(token, w.widgets.bar, { parameters });
  expect(many.status).toBe(422);
  expect(Object.keys(failure(many).errors ?? {})).toEqual(['parameters']);
});
