import crypto from 'node:crypto';
import { dashboards } from '../../db/schema/dashboards';
import { groupMembers, groups } from '../../db/schema/groups';
import { workspaceMembers, workspaces } from '../../db/schema/workspaces';
import { ADMIN_ROLE, type WorkspaceRole } from '../../server/access/roles';
import { createUserAccount, type AccountType } from '../../server/users/accounts';
import type { AppDeps } from '../../server/app/deps';
import type { z } from 'zod';
import type { loginOutput } from '../../routers/auth/schemas';
import type { createTokenOutput } from '../../routers/mcp-tokens/schemas';
import { ok, type Rest } from './rest';
import { TEST_ADMIN } from './constants';

export const uniq = (prefix = 't') => `${prefix}_${crypto.randomBytes(5).toString('hex')}`;

export interface TestUser {
  id: number;
  username: string;
  password: string;
  personalWorkspaceId: number;
}

/** A fresh account with a random name, optionally in some groups (e.g. the system groups). */
export async function createUser(
  deps: AppDeps,
  opts: { groupIds?: number[]; accountType?: AccountType; password?: string } = {},
): Promise<TestUser> {
  const username = uniq('user');
  const password = opts.password ?? `Pw-${crypto.randomBytes(6).toString('hex')}-1`;
  const { user, personalWorkspaceId } = await deps.db.transaction((tx) =>
    createUserAccount(tx, { username, password, accountType: opts.accountType, groupIds: opts.groupIds }),
  );
  return { id: user.id, username, password, personalWorkspaceId };
}

export async function addToGroup(deps: AppDeps, userId: number, groupId: number) {
  await deps.db.insert(groupMembers).values({ userId, groupId }).onConflictDoNothing();
}

export async function login(api: Rest, username: string, password: string): Promise<string> {
  const res = await api.post('/api/auth/login', { username, password });
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return ok<z.output<typeof loginOutput>>(res).token;
}

export const loginAdmin = (api: Rest) => login(api, TEST_ADMIN.username, TEST_ADMIN.password);

/** A system administrator of its own (tests that change admin-only state should not share the seeded one). */
export async function createSysadmin(deps: AppDeps): Promise<TestUser> {
  return createUser(deps, { groupIds: [deps.systemGroups.platformAdmins] });
}

/** A plain group with a random name. */
export async function createGroup(deps: AppDeps, opts: { name?: string } = {}): Promise<{ id: number; name: string }> {
  const [g] = await deps.db
    .insert(groups)
    .values({ name: opts.name ?? uniq('group') })
    .returning({ id: groups.id, name: groups.name });
  return g;
}

/** A shared workspace with the given members (the first Администратор stands for its creator). */
export async function createSharedWorkspace(
  deps: AppDeps,
  members: { userId?: number; groupId?: number; role: WorkspaceRole }[],
  opts: { name?: string } = {},
): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const creator = members.find((m) => m.userId !== undefined && m.role === ADMIN_ROLE)?.userId ?? null;
    const [ws] = await tx
      .insert(workspaces)
      .values({ name: opts.name ?? uniq('ws'), type: 'shared', createdBy: creator })
      .returning({ id: workspaces.id });
    if (members.length) {
      await tx.insert(workspaceMembers).values(
        members.map((m) => ({
          workspaceId: ws.id,
          userId: m.userId ?? null,
          groupId: m.groupId ?? null,
          role: m.role,
        })),
      );
    }
    return ws.id;
  });
}

/** Adds a user or a group to a workspace directly in the database; returns the member id. */
export async function addWorkspaceMember(
  deps: AppDeps,
  workspaceId: number,
  member: { userId?: number; groupId?: number; role: WorkspaceRole },
): Promise<number> {
  const [row] = await deps.db
    .insert(workspaceMembers)
    .values({ workspaceId, userId: member.userId ?? null, groupId: member.groupId ?? null, role: member.role })
    .returning({ id: workspaceMembers.id });
  return row.id;
}

export const CAST_ROLES = ['anonymous', 'plain', 'viewer', 'editor', 'wsAdmin', 'manager', 'sysadmin'] as const;
export type CastRole = (typeof CAST_ROLES)[number];

/**
 * One caller of every kind, for security tests: a plain user, Наблюдатель / Редактор / Администратор of one shared
 * workspace, a member of «Менеджеры рабочих пространств» and a system administrator (neither of those two is a
 * member of the workspace). `tokens.anonymous` is undefined (no Authorization header).
 */
export interface RoleCast {
  workspaceId: number;
  users: Record<Exclude<CastRole, 'anonymous'>, TestUser>;
  tokens: Record<CastRole, string | undefined>;
  /** A further shared workspace with the same viewer, editor and administrator (for calls that consume one). */
  newWorkspace(): Promise<number>;
}

export async function createRoleCast(deps: AppDeps, api: Rest): Promise<RoleCast> {
  const [plain, viewer, editor, wsAdmin, manager, sysadmin] = await Promise.all([
    createUser(deps),
    createUser(deps),
    createUser(deps),
    createUser(deps),
    createUser(deps, { groupIds: [deps.systemGroups.workspaceManagers] }),
    createSysadmin(deps),
  ]);
  const users = { plain, viewer, editor, wsAdmin, manager, sysadmin };
  const newWorkspace = () =>
    createSharedWorkspace(deps, [
      { userId: wsAdmin.id, role: 'Администратор' },
      { userId: editor.id, role: 'Редактор' },
      { userId: viewer.id, role: 'Наблюдатель' },
    ]);
  const workspaceId = await newWorkspace();
  const tokens: Record<CastRole, string | undefined> = { anonymous: undefined } as Record<CastRole, string | undefined>;
  for (const [role, u] of Object.entries(users)) tokens[role as CastRole] = await login(api, u.username, u.password);
  return { workspaceId, users, tokens, newWorkspace };
}

/** Turns API token issue on for every account type (installation-wide: each test file has its own database). */
export async function enableApiTokens(api: Rest, sysadminToken: string): Promise<void> {
  const res = await api.put(
    '/api/mcp-tokens/settings',
    { enabled: true, allowed_account_types: ['local', 'sso', 'service'], access_group_id: null },
    sysadminToken,
  );
  if (res.status !== 200) throw new Error(`enabling API tokens failed: ${res.status} ${JSON.stringify(res.body)}`);
}

export async function issueApiToken(api: Rest, token: string): Promise<string> {
  const res = await api.post('/api/mcp-tokens', { name: uniq('token') }, token);
  if (res.status !== 200) throw new Error(`issuing an API token failed: ${res.status} ${JSON.stringify(res.body)}`);
  return ok<z.output<typeof createTokenOutput>>(res).token;
}

/** Calls `call` once as each caller of the cast (in order, each with fresh targets it makes itself); status per role. */
export async function statusesByRole(
  cast: RoleCast,
  call: (token: string | undefined, role: CastRole) => Promise<{ status: number }>,
): Promise<Record<CastRole, number>> {
  const out = {} as Record<CastRole, number>;
  for (const role of CAST_ROLES) out[role] = (await call(cast.tokens[role], role)).status;
  return out;
}

/** A dashboard saved straight into the metadata store (layout as the wire has it; empty unless given). */
export async function createDashboardRow(
  deps: AppDeps,
  opts: { workspaceId: number; authorId: number | null; name?: string; layout?: Record<string, unknown> },
): Promise<{ id: number; name: string }> {
  const [row] = await deps.db
    .insert(dashboards)
    .values({
      name: opts.name ?? uniq('dash'),
      workspaceId: opts.workspaceId,
      authorId: opts.authorId,
      layout: opts.layout ?? {},
    })
    .returning({ id: dashboards.id, name: dashboards.name });
  return row;
}
