import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createSysadmin, login } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { startFakeProvider, type FakeProvider } from './fake-provider';

/*
 * Bad input on every AI operation (/api/admin/ai-provider, /api/ai/*): refused with 4xx in the envelope, never a 5xx. A provider is
 * configured and enabled (an OpenAI-compatible server on loopback), so that the refusals come from validation and
 * not from a missing provider; none of these calls reaches it.
 */

const KEY = 'sk-bad-input';
const MODEL = 'bad-input-model';
const { t, api } = useTestApp();
let admin: string;
let fake: FakeProvider;

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  fake = await startFakeProvider({ apiKey: KEY, model: MODEL });
  ok(
    await api.put(
      '/api/admin/ai-provider',
      { enabled: true, base_url: fake.baseUrl, model: MODEL, api_key: KEY, timeout_ms: 1000 },
      admin,
    ),
  );
});
afterAll(async () => {
  await fake.close();
});

describe('AI operations refuse hostile input with 4xx', () => {
  it('bodies: 422 with the field map (415 for a body that is no JSON object); the provider is never asked', async () => {
    const kinds = 'must be one of: table, pivot, bar, line, area, pie, scatter, kpi';
    const badText = 'must not contain NUL or invalid characters';
    const cases: [string, string, unknown, Record<string, string>][] = [
      ['PUT', '/api/admin/ai-provider', { base_url: 'http://x\u0000' }, { baseUrl: badText }],
      ['PUT', '/api/admin/ai-provider', { model: 'a\ud800' }, { model: badText }],
      ['PUT', '/api/admin/ai-provider', { timeout_ms: 1e12 }, { timeoutMs: 'must be less than or equal to 120000' }],
      ['PUT', '/api/admin/ai-provider', { allowed_group_ids: [0] }, { 'allowedGroupIds[0]': 'must be greater than 0' }],
      ['PUT', '/api/admin/ai-provider', { extra: 1 }, { extra: 'unknown field' }],
      [
        'POST',
        '/api/admin/ai-provider/check',
        { base_url: 'javascript:alert(1)' },
        { baseUrl: 'must be an http(s) URL' },
      ],
      [
        'POST',
        '/api/ai/formula',
        { dataset_id: 2_147_483_648, prompt: 'x' },
        { datasetId: 'must be less than or equal to 2147483647' },
      ],
      ['POST', '/api/ai/formula', { dataset_id: 1, prompt: 'x'.repeat(4001) }, { prompt: 'size must be at most 4000' }],
      ['POST', '/api/ai/formula', { dataset_id: 1, prompt: '\u0000' }, { prompt: badText }],
      ['POST', '/api/ai/sql', { data_source_id: -1, prompt: 'x' }, { dataSourceId: 'must be greater than 0' }],
      ['POST', '/api/ai/sql', { data_source_id: 1, prompt: 'x', schema: '' }, { schema: 'must not be blank' }],
      ['POST', '/api/ai/widget-code', { dataset_id: 1, prompt: 'x', type: 'nonsense' }, { type: kinds }],
      ['POST', '/api/ai/widget-code', { dataset_id: 1, prompt: 'x' }, { type: kinds }],
    ];
    for (const [method, url, body, errors] of cases) {
      const res = await api.call(method as 'PUT' | 'POST', url, { token: admin, body });
      const what = `${method} ${url} ${JSON.stringify(body)}`;
      expect(res.status, what).toBe(422);
      expect(failure(res), what).toMatchObject({ code: 422, message: 'Ошибка валидации', errors });
    }
    const notJson = await api.call('PUT', '/api/admin/ai-provider', { token: admin, body: 'not an object' });
    expect(notJson.status).toBe(415);
    expect(failure(notJson).message).toBe('Неподдерживаемый формат тела запроса');
    expect(fake.requests).toEqual([]);
    expect(fake.problems).toEqual([]);
  });

  it('unknown objects and ids: 404 or 422, before the provider is asked', async () => {
    const res = await api.post('/api/ai/formula', { dataset_id: 2_000_000_000, prompt: 'x' }, admin);
    expect(res.status).toBe(404);
    expect(failure(res).code).toBe(404);
    const sql = await api.post('/api/ai/sql', { data_source_id: 2_000_000_000, prompt: 'x' }, admin);
    expect(sql.status).toBe(404);
    const widget = await api.post(
      '/api/ai/widget-code',
      { dataset_id: 2_000_000_000, prompt: 'x', type: 'bar' },
      admin,
    );
    expect(widget.status).toBe(404);
    expect(fake.requests).toEqual([]);
    for (const id of ['abc', '2147483648', '0']) {
      const del = await api.delete(`/api/admin/drivers/${id}`, admin);
      expect(del.status, id).toBe(422);
      expect(Object.keys(failure(del).errors ?? {}), id).toEqual(['id']);
    }
  });

  it('the check without base_url and model answers ok false with the reason', async () => {
    ok(await api.put('/api/admin/ai-provider', { enabled: false, base_url: null, model: null }, admin));
    try {
      const check = ok<{ ok: boolean; message: string }>(
        await api.post('/api/admin/ai-provider/check', undefined, admin),
      );
      expect(check).toEqual({ ok: false, message: 'AI-провайдер не настроен: укажите base_url и модель' });
    } finally {
      ok(await api.put('/api/admin/ai-provider', { enabled: true, base_url: fake.baseUrl, model: MODEL }, admin));
    }
  });
});
