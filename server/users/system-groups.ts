import type { DbOrTx } from '../../db/client';
import { ensureSystemGroup, groupIdsBySystemKey } from '../groups/store';

/** The groups every installation has from its first start. They cannot be deleted. */
const SYSTEM_GROUPS = {
  platform_admins: { name: 'Администраторы платформы', description: 'Системные администраторы платформы' },
  workspace_managers: {
    name: 'Менеджеры рабочих пространств',
    description: 'Участники группы создают командные пространства',
  },
} as const;

export interface SystemGroupIds {
  platformAdmins: number;
  workspaceManagers: number;
}

export async function ensureSystemGroups(db: DbOrTx): Promise<SystemGroupIds> {
  for (const [key, g] of Object.entries(SYSTEM_GROUPS)) {
    await ensureSystemGroup(db, key, { name: g.name, description: g.description });
  }
  return loadSystemGroupIds(db);
}

export async function loadSystemGroupIds(db: DbOrTx): Promise<SystemGroupIds> {
  const byKey = await groupIdsBySystemKey(db, Object.keys(SYSTEM_GROUPS));
  const platformAdmins = byKey.get('platform_admins');
  const workspaceManagers = byKey.get('workspace_managers');
  if (!platformAdmins || !workspaceManagers) throw new Error('system groups are missing: run the bootstrap first');
  return { platformAdmins, workspaceManagers };
}
