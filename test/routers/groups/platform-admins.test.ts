import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { groupMembers } from '../../../db/schema/groups';
import { useTestApp } from '../../support/app';
import { createSysadmin, login } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type { meOutput } from '../../../routers/users/schemas';

type Me = z.output<typeof meOutput>;

// A file of its own: it empties the platform administrators group of its (cloned) database.
const { t, api } = useTestApp();

describe('the last platform administrator', () => {
  it('cannot be removed from the platform administrators group (400)', async () => {
    const adminsGroup = t.deps.systemGroups.platformAdmins;
    const [a, b] = [await createSysadmin(t.deps), await createSysadmin(t.deps)];
    const token = await login(api, a.username, a.password);
    const others = await t.deps.db
      .select({ userId: groupMembers.userId })
      .from(groupMembers)
      .where(eq(groupMembers.groupId, adminsGroup));
    for (const { userId } of others) {
      if (userId !== a.id && userId !== b.id)
        expect((await api.delete(`/api/groups/${adminsGroup}/members/${userId}`, token)).status).toBe(200);
    }
    expect((await api.delete(`/api/groups/${adminsGroup}/members/${b.id}`, token)).status).toBe(200);
    const last = await api.delete(`/api/groups/${adminsGroup}/members/${a.id}`, token);
    expect(last.status).toBe(400);
    expect(failure(last).message).toBe('Нельзя исключить последнего администратора платформы');
    // The token still carries the group as at login: the removal of others does not touch this session's rights.
    expect(ok<Me>(await api.get('/api/users/me', token)).is_system_administrator).toBe(true);
  });
});
