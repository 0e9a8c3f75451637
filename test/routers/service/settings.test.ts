import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createSysadmin, createUser, login } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type { dictionaryOutput, settingsOutput } from '../../../routers/service/schemas';

type Settings = z.output<typeof settingsOutput>;
type Dictionary = z.output<typeof dictionaryOutput>;

const { t, api } = useTestApp();
let admin: string;
let user: string;

beforeAll(async () => {
  const a = await createSysadmin(t.deps);
  admin = await login(api, a.username, a.password);
  const u = await createUser(t.deps);
  user = await login(api, u.username, u.password);
});

describe('installation settings and dictionary', () => {
  it('shows settings to any user with the read-only 900 s session lifetime', async () => {
    const res = await api.get('/api/settings', user);
    expect(res.status).toBe(200);
    expect(ok<Settings>(res)).toMatchObject({ session_token_ttl: 900, default_locale: 'ru' });
  });

  it('lets only a system administrator change them, partially', async () => {
    expect((await api.put('/api/settings', { instance_name: 'X' }, user)).status).toBe(403);
    const res = await api.put(
      '/api/settings',
      { instance_name: 'Аналитика ООО «Ромашка»', features: { ai_assistant: true } },
      admin,
    );
    expect(res.status).toBe(200);
    expect(ok<Settings>(res).instance_name).toBe('Аналитика ООО «Ромашка»');
    expect(ok<Settings>(res).features.ai_assistant).toBe(true);
    expect(ok<Settings>(res).features.pipelines).toBe(true);
    const read = await api.get('/api/settings', user);
    expect(ok<Settings>(read).instance_name).toBe('Аналитика ООО «Ромашка»');
  });

  it('refuses to change the session lifetime and bad values', async () => {
    const ttl = await api.put('/api/settings', { session_token_ttl: 60 }, admin);
    expect(ttl.status).toBe(422);
    expect(failure(ttl).errors).toHaveProperty('sessionTokenTtl');
    const bad = await api.put('/api/settings', { base_url: 'javascript:alert(1)', default_locale: 'xx' }, admin);
    expect(bad.status).toBe(422);
    expect(Object.keys(failure(bad).errors!).sort()).toEqual(['baseUrl', 'defaultLocale']);
  });

  it('serves the interface dictionary', async () => {
    const res = await api.get('/api/dictionary', user);
    expect(ok<Dictionary>(res).statuses).toEqual({
      new: 'Новый',
      changed: 'Изменён',
      same: 'Без изменений',
      target_only: 'Только здесь',
    });
    expect(ok<Dictionary>(res).stages).toEqual({ '0': 'Разработка', '1': 'Тест', '2': 'Прод' });
    expect(ok<Dictionary>(res).roles).toHaveProperty('Администратор');
    expect(ok<Dictionary>(res).workspace_types.shared).toBe('Общее');
  });
});
