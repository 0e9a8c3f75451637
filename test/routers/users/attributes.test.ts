import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createSysadmin, createUser, login, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type { attributeKeysOutput, attributesOutput } from '../../../routers/users/schemas';

type AttributeKeys = z.output<typeof attributeKeysOutput>;
type Attributes = z.output<typeof attributesOutput>;

const { t, api } = useTestApp();
let adminToken: string;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  adminToken = await login(api, admin.username, admin.password);
});

describe('user attributes', () => {
  it('replaces the whole map at once and lists known keys', async () => {
    const u = await createUser(t.deps);
    const key = uniq('region');
    const empty = await api.get(`/api/users/${u.id}/attributes`, adminToken);
    expect(empty.status).toBe(200);
    expect(ok<Attributes>(empty)).toEqual({ attributes: {} });

    const first = await api.put(
      `/api/users/${u.id}/attributes`,
      { attributes: { [key]: ['Север', 'Запад', 'Север'], dept: ['42'] } },
      adminToken,
    );
    expect(first.status).toBe(200);
    expect(ok<Attributes>(first).attributes).toEqual({ [key]: ['Север', 'Запад'], dept: ['42'] });

    const second = await api.put(`/api/users/${u.id}/attributes`, { attributes: { [key]: [] } }, adminToken);
    expect(ok<Attributes>(second).attributes).toEqual({ [key]: [] });
    expect(ok<Attributes>(await api.get(`/api/users/${u.id}/attributes`, adminToken)).attributes).toEqual({
      [key]: [],
    });

    const plain = await createUser(t.deps);
    const keys = await api.get('/api/user-attributes', await login(api, plain.username, plain.password));
    expect(keys.status).toBe(200);
    expect(ok<AttributeKeys>(keys).keys).toContainEqual({ key, user_count: 1 });
    expect(ok<AttributeKeys>(keys).keys.find((k) => k.key === 'dept')).toBeUndefined();
  });

  it('writes nothing when the body is invalid (422) and answers unknown users with 404', async () => {
    const u = await createUser(t.deps);
    await api.put(`/api/users/${u.id}/attributes`, { attributes: { team: ['a'] } }, adminToken);
    const badKey = await api.put(
      `/api/users/${u.id}/attributes`,
      { attributes: { ok: ['x'], 'bad key': ['y'] } },
      adminToken,
    );
    expect(badKey.status).toBe(422);
    expect(failure(badKey).errors).toEqual({
      'attributes.bad key':
        'key must start with a letter or _ and contain only letters, digits and _ . - (at most 100)',
    });
    const blankValue = await api.put(
      `/api/users/${u.id}/attributes`,
      { attributes: { ok: ['x'], other: [''] } },
      adminToken,
    );
    expect(blankValue.status).toBe(422);
    expect(failure(blankValue).errors).toEqual({ 'attributes.other[0]': 'must not be blank' });
    expect(ok<Attributes>(await api.get(`/api/users/${u.id}/attributes`, adminToken)).attributes).toEqual({
      team: ['a'],
    });
    const notList = await api.put(`/api/users/${u.id}/attributes`, { attributes: { team: 'a' } }, adminToken);
    expect(notList.status).toBe(422);
    expect((await api.put('/api/users/987654/attributes', { attributes: {} }, adminToken)).status).toBe(404);
    expect((await api.get('/api/users/987654/attributes', adminToken)).status).toBe(404);
  });

  it('deletes attributes with the account', async () => {
    const u = await createUser(t.deps);
    const key = uniq('gone');
    await api.put(`/api/users/${u.id}/attributes`, { attributes: { [key]: ['1'] } }, adminToken);
    expect((await api.delete(`/api/users/${u.id}`, adminToken)).status).toBe(200);
    const keys = await api.get('/api/user-attributes', adminToken);
    expect(ok<AttributeKeys>(keys).keys.find((k) => k.key === key)).toBeUndefined();
  });
});
