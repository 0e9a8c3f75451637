import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { driverPlugins } from '../../db/schema/driver-plugins';

/* The uploaded connector plugins' rows others need (transaction first, no actor, no checks). */

/**
 * Ids of the plugins that serve the source kind, their rows held FOR SHARE until the transaction ends: DELETE
 * /api/admin/drivers/{id} takes its row FOR UPDATE before it looks for kinds using it, so a switch to a plugin and
 * the plugin's delete run one after the other, the second seeing what the first did.
 */
export async function lockPluginIdsForKind(tx: DbOrTx, kind: string): Promise<number[]> {
  const rows = await tx
    .select({ id: driverPlugins.id })
    .from(driverPlugins)
    .where(eq(driverPlugins.sourceType, kind))
    .orderBy(asc(driverPlugins.id))
    .for('share');
  return rows.map((r) => r.id);
}
