import { beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { accessOutput } from '../../../routers/ai/schemas';
import { useTestApp } from '../../support/app';
import { addToGroup, createGroup, createSysadmin, createUser, login, type TestUser } from '../../support/factories';
import { ok } from '../../support/rest';

/*
 * GET /api/ai/access: whether the AI provider settings (PUT /api/admin/ai-provider) let the caller use the assistant,
 * and why not. Nothing here calls the provider, so its address is never reached.
 */

type Access = z.output<typeof accessOutput>;

const { t, api } = useTestApp();
let admin: string;
let user: string;
let member: TestUser;

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  member = await createUser(t.deps);
  user = await login(api, member.username, member.password);
  // Enabling needs an address and a model.
  ok(await api.put('/api/admin/ai-provider', { base_url: 'http://127.0.0.1:9/v1', model: 'test-model' }, admin));
});

describe('GET /api/ai/access', () => {
  it('says why not: switched off, not in an allowed group; and yes when allowed', async () => {
    ok(await api.put('/api/admin/ai-provider', { enabled: false }, admin));
    expect(ok<Access>(await api.get('/api/ai/access', user))).toEqual({
      enabled: false,
      reason: 'AI-ассистент отключён администратором платформы',
    });
    const group = await createGroup(t.deps);
    ok(await api.put('/api/admin/ai-provider', { enabled: true, allowed_group_ids: [group.id] }, admin));
    expect(ok<Access>(await api.get('/api/ai/access', user))).toEqual({
      enabled: false,
      reason: 'AI-ассистент доступен только участникам разрешённых групп',
    });
    await addToGroup(t.deps, member.id, group.id);
    // A session token carries the groups of its login: the member logs in again to be seen in the new group.
    const again = await login(api, member.username, member.password);
    expect(ok<Access>(await api.get('/api/ai/access', again))).toEqual({ enabled: true, reason: null });
    ok(await api.put('/api/admin/ai-provider', { allowed_group_ids: [] }, admin));
    expect(ok<Access>(await api.get('/api/ai/access', user))).toEqual({ enabled: true, reason: null });
    expect((await api.get('/api/ai/access')).status).toBe(401);
  });
});
