import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { eq } from 'drizzle-orm';
import { settings } from '../../../db/schema/settings';
import type { aiProviderView, checkOutput } from '../../../routers/admin/schemas';
import { useTestApp } from '../../support/app';
import { createSysadmin, createUser, login } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { startFakeProvider, type FakeProvider } from '../ai/fake-provider';

/*
 * AI provider administration (GET and PUT /api/admin/ai-provider, POST /api/admin/ai-provider/check) against an
 * OpenAI-compatible server on loopback. Who the settings let use the assistant: test/routers/ai/access.test.ts.
 */

type ProviderView = z.output<typeof aiProviderView>;
type Check = z.output<typeof checkOutput>;

const KEY = 'sk-test-secret-key-123';
const MODEL = 'test-model';
const { t, api } = useTestApp();
let fake: FakeProvider;
let admin: string;
let user: string;

beforeAll(async () => {
  fake = await startFakeProvider({ apiKey: KEY, model: MODEL });
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  const u = await createUser(t.deps);
  user = await login(api, u.username, u.password);
});
afterAll(() => fake.close());

describe('GET/PUT /api/admin/ai-provider', () => {
  it('is for system administrators only', async () => {
    expect((await api.get('/api/admin/ai-provider', user)).status).toBe(403);
    expect((await api.put('/api/admin/ai-provider', { enabled: false }, user)).status).toBe(403);
    expect((await api.post('/api/admin/ai-provider/check', {}, user)).status).toBe(403);
    expect((await api.get('/api/admin/ai-provider')).status).toBe(401);
  });

  it('starts disabled and unconfigured; enabling needs base_url and model (422)', async () => {
    expect(ok<ProviderView>(await api.get('/api/admin/ai-provider', admin))).toMatchObject({
      enabled: false,
      base_url: null,
      model: null,
      api_key: null,
      api_key_set: false,
      allowed_group_ids: [],
    });
    const res = await api.put('/api/admin/ai-provider', { enabled: true }, admin);
    expect(res.status).toBe(422);
    expect(Object.keys(failure(res).errors ?? {}).sort()).toEqual(['baseUrl', 'model']);
    expect((await api.put('/api/admin/ai-provider', { base_url: 'ftp://x' }, admin)).status).toBe(422);
    expect((await api.put('/api/admin/ai-provider', { allowed_group_ids: [2_000_000_000] }, admin)).status).toBe(422);
  });

  it('stores the api_key sealed and answers it masked; an omitted key is kept, null clears it', async () => {
    const saved = ok<ProviderView>(
      await api.put(
        '/api/admin/ai-provider',
        { enabled: true, provider: 'vllm', base_url: fake.baseUrl, model: MODEL, api_key: KEY, timeout_ms: 2000 },
        admin,
      ),
    );
    expect(saved).toMatchObject({ enabled: true, provider: 'vllm', api_key: '********', api_key_set: true });
    const [row] = await t.deps.db.select().from(settings).where(eq(settings.key, 'ai_provider'));
    expect(JSON.stringify(row.value)).not.toContain(KEY);
    expect(JSON.stringify(ok(await api.get('/api/admin/ai-provider', admin)))).not.toContain(KEY);

    ok(await api.put('/api/admin/ai-provider', { model: MODEL }, admin));
    fake.script({ content: 'ok' });
    expect(ok<Check>(await api.post('/api/admin/ai-provider/check', {}, admin))).toEqual({
      ok: true,
      message: 'Подключение успешно',
    });
    expect(fake.requests.at(-1)).toMatchObject({ authorization: `Bearer ${KEY}`, model: MODEL });
  });

  it('check answers ok false with a message for a wrong key, an error status, silence and a dead address', async () => {
    const before = fake.problems.length;
    const wrongKey = ok<Check>(await api.post('/api/admin/ai-provider/check', { api_key: 'wrong' }, admin));
    expect(wrongKey.ok).toBe(false);
    expect(wrongKey.message).toMatch(/^AI-провайдер ответил ошибкой 400/);
    expect(fake.problems.slice(before)).toEqual(['authorization Bearer wrong']);

    fake.script({ status: 503 });
    const down = ok<Check>(await api.post('/api/admin/ai-provider/check', {}, admin));
    expect(down).toMatchObject({ ok: false });
    expect(down.message).toMatch(/^AI-провайдер ответил ошибкой 503/);

    fake.script({ content: 'ok', delayMs: 1500 });
    expect(ok<Check>(await api.post('/api/admin/ai-provider/check', { timeout_ms: 1000 }, admin))).toEqual({
      ok: false,
      message: 'AI-провайдер не ответил за 1 с',
    });

    const dead = ok<Check>(
      await api.post('/api/admin/ai-provider/check', { base_url: 'http://127.0.0.1:9/v1' }, admin),
    );
    expect(dead.ok).toBe(false);
    expect(dead.message).toMatch(/^Не удалось подключиться к AI-провайдеру/);
    // Overrides are not saved.
    expect(ok<ProviderView>(await api.get('/api/admin/ai-provider', admin)).base_url).toBe(fake.baseUrl);
  });
});
