import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createRoleCast, loginAdmin, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';

/*
 * The features of PUT /api/settings switch whole areas off: their operations answer 403 with the feature named,
 * after authentication (a missing token is still a 401). Switched back on, they work again at once.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let admin: string;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  admin = await loginAdmin(api);
});
afterAll(async () => {
  ok(await api.put('/api/settings', { features: { pipelines: true, public_links: true } }, admin));
});

const off = (feature: string) => api.put('/api/settings', { features: { [feature]: false } }, admin).then((r) => ok(r));
const on = (feature: string) => api.put('/api/settings', { features: { [feature]: true } }, admin).then((r) => ok(r));

describe('features of PUT /api/settings', () => {
  it('pipelines off: every /api/pipeline operation answers 403 naming the feature; on again, they work', async () => {
    ok(await api.get('/api/pipeline', cast.tokens.editor));
    await off('pipelines');
    const refused = await api.get('/api/pipeline', cast.tokens.editor);
    expect(refused.status).toBe(403);
    expect(failure(refused).message).toBe('Функция «Пайплайны» отключена администратором платформы');
    expect((await api.post('/api/pipeline', { name: 'p' }, cast.tokens.editor)).status).toBe(403);
    expect((await api.get('/api/pipeline')).status).toBe(401);
    await on('pipelines');
    ok(await api.get('/api/pipeline', cast.tokens.editor));
  });

  it('public links off: no link is issued and no public viewer path answers', async () => {
    const dashboard = ok<{ id: number }>(
      await api.post('/api/dashboard', { name: 'd', workspace_id: cast.workspaceId }, cast.tokens.editor),
    );
    const link = ok<{ url: string }>(
      await api.post(`/api/dashboard/${dashboard.id}/share-links`, { name: 'l' }, cast.tokens.editor),
    );
    const token = link.url.split('/s/')[1];
    ok(await api.get(`/api/public/link/${token}`));
    await off('public_links');
    const viewer = await api.get(`/api/public/link/${token}`);
    expect(viewer.status).toBe(403);
    expect(failure(viewer).message).toBe('Функция «Публичные ссылки» отключена администратором платформы');
    expect(
      (await api.post(`/api/dashboard/${dashboard.id}/share-links`, { name: 'l2' }, cast.tokens.editor)).status,
    ).toBe(403);
    await on('public_links');
    ok(await api.get(`/api/public/link/${token}`));
  });
});
