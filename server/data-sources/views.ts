import { eq, inArray } from 'drizzle-orm';
import type { SourceSettings } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema/users';
import type { AppDeps } from '../app/deps';
import { SOURCE_KIND_LABELS } from '../settings/dictionary';
import { openSecrets, type DataSourceRow } from './connection';
import type { SourceSecrets } from './secrets';
import { settingsView } from './settings';

export interface AuthorRef {
  id: number;
  username: string;
}

export interface DataSourceView {
  id: number;
  uuid: string;
  name: string;
  type: string;
  type_name: string;
  workspace_id: number;
  settings: Record<string, unknown>;
  author: AuthorRef | null;
  /** Whether the caller may change, delete or query it (see access.ts). */
  can_edit: boolean;
  created_at: string;
  updated_at: string;
}

function secretsForView(deps: AppDeps, row: DataSourceRow): SourceSecrets {
  try {
    return openSecrets(deps, row);
  } catch {
    return {};
  }
}

export function dataSourceView(
  deps: AppDeps,
  row: DataSourceRow,
  author: AuthorRef | null,
  canEdit: boolean,
): DataSourceView {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    type: row.type,
    type_name: SOURCE_KIND_LABELS[row.type] ?? row.type,
    workspace_id: row.workspaceId,
    settings: settingsView(
      row.type,
      row.settings as SourceSettings & Record<string, unknown>,
      secretsForView(deps, row),
    ),
    author,
    can_edit: canEdit,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Usernames of the given authors, for the `author` of views. */
export async function authorsById(db: DbOrTx, ids: (number | null)[]): Promise<Map<number, AuthorRef>> {
  const wanted = [...new Set(ids.filter((i): i is number => i !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db.select({ id: users.id, username: users.username }).from(users).where(inArray(users.id, wanted));
  return new Map(rows.map((r) => [r.id, r]));
}

export async function authorOf(db: DbOrTx, id: number | null): Promise<AuthorRef | null> {
  if (id === null) return null;
  const [row] = await db.select({ id: users.id, username: users.username }).from(users).where(eq(users.id, id));
  return row ?? null;
}
