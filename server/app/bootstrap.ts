import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ensureSystemGroups, type SystemGroupIds } from '../users/system-groups';
import { createUserAccount } from '../users/accounts';
import { countUsers } from '../users/store';
import { loadSigningKey } from '../auth/signing-key';

export interface BootstrapResult {
  systemGroups: SystemGroupIds;
  signingKey: Uint8Array;
  /** Set only on the very first start when no ADMIN_PASSWORD was given: shown once, never stored in clear. */
  generatedAdminPassword?: string;
}

const BOOTSTRAP_LOCK = 724_513_902;

/**
 * First-start seeding, idempotent and safe for several nodes starting together: the system groups, the signing key
 * and, on an empty installation, the first system administrator (member of both system groups).
 */
export async function bootstrap(
  db: Db,
  opts: { adminUsername: string; adminPassword?: string },
): Promise<BootstrapResult> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`);
    const systemGroups = await ensureSystemGroups(tx);
    const signingKey = await loadSigningKey(tx);
    let generatedAdminPassword: string | undefined;
    if ((await countUsers(tx)) === 0) {
      const password = opts.adminPassword ?? (generatedAdminPassword = generatePassword());
      await createUserAccount(tx, {
        username: opts.adminUsername,
        password,
        fullName: 'Системный администратор',
        accountType: 'local',
        groupIds: [systemGroups.platformAdmins, systemGroups.workspaceManagers],
      });
    }
    return { systemGroups, signingKey, generatedAdminPassword };
  });
}

function generatePassword(): string {
  // base64url of 18 random bytes always has letters; the suffix guarantees a digit for the password rules.
  return `${crypto.randomBytes(18).toString('base64url')}7`;
}
