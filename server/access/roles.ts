/**
 * Workspace roles. Администратор manages members and settings and edits everything; Редактор creates and edits
 * objects; Наблюдатель only reads. The wire value is the Russian name, as for Администратор in the specification.
 */
export const WORKSPACE_ROLES = ['Администратор', 'Редактор', 'Наблюдатель'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];
export const ADMIN_ROLE: WorkspaceRole = 'Администратор';

const RANK: Record<WorkspaceRole, number> = { Наблюдатель: 1, Редактор: 2, Администратор: 3 };

export const roleAllowsEdit = (role: WorkspaceRole | null | undefined) => !!role && RANK[role] >= RANK['Редактор'];
export const roleIsAdmin = (role: WorkspaceRole | null | undefined) => role === ADMIN_ROLE;

/** The strongest of several roles (a user can be a member directly and through groups). */
export function strongestRole(roles: readonly string[]): WorkspaceRole | null {
  let best: WorkspaceRole | null = null;
  for (const r of roles) {
    if (!(WORKSPACE_ROLES as readonly string[]).includes(r)) continue;
    const role = r as WorkspaceRole;
    if (!best || RANK[role] > RANK[best]) best = role;
  }
  return best;
}

/** Roles ordered weakest to strongest: lets SQL pick the strongest role with max() over ranks. */
export const roleRank = (role: WorkspaceRole): number => RANK[role];
export const roleOfRank = (rank: number | null | undefined): WorkspaceRole | null =>
  WORKSPACE_ROLES.find((r) => RANK[r] === Number(rank)) ?? null;
