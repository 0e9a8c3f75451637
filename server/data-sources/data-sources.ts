import { eq } from 'drizzle-orm';
import type { SourceKind, SourceSettings } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import { dataSources } from '../../db/schema/data-sources';
import { assertWorkspaceEditable, defaultWorkspaceFor } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { badRequest } from '../kernel/errors';
import { mapCopyOf } from '../objects/copy-map';
import { listObjects, type StdListFilter } from '../objects/list';
import type { PageRequest } from '../kernel/paging';
import { assertKindEnabled } from '../admin/source-types';
import { isForeignKeyViolation } from '../kernel/db-errors';
import { deletableObject, ownedObject, readableObject } from '../access/object-access';
import { logSourceAccess } from './access-log';
import { checkConnection } from './check';
import { openSecrets, type DataSourceRow } from './connection';
import { sourceDependents } from './dependents';
import { removeFileSourceFiles } from './file-storage';
import { assertSourceAddressAllowed } from './network-policy';
import { mergeSecrets, type SourceSecrets } from './secrets';
import { nextSecrets, normalizeSettings, secretChanges, type SettingsInput } from './settings';
import { copySources, insertSource, loadFullSource, sourceFileCopies, updateSource, type SourcePatch } from './store';
import { authorOf, authorsById, dataSourceView, type DataSourceView } from './views';
import { recordRevisions } from '../revisions/store';

export const DATA_SOURCE_SORT_FIELDS = ['id', 'name', 'type', 'created_at', 'updated_at'] as const;

export interface DataSourceListFilter extends StdListFilter {
  type?: string;
}

export interface CreateDataSourceInput {
  name: string;
  type: string;
  settings: SettingsInput;
  workspace_id?: number;
  /** Check the connection first and refuse to save when it fails (nothing is written then). */
  check_connection?: boolean;
}

export interface UpdateDataSourceInput {
  name?: string;
  /** Accepted so that a client can send a read back; it must name the source's own kind. */
  type?: string;
  settings?: SettingsInput;
  check_connection?: boolean;
}

const sealOrNull = (deps: AppDeps, secrets: SourceSecrets) =>
  Object.keys(secrets).length ? deps.secretBox.seal(secrets) : null;

export async function listDataSources(deps: AppDeps, actor: Actor, input: PageRequest & DataSourceListFilter) {
  const { db } = deps;
  return listObjects(
    db,
    actor,
    'data_source',
    input,
    {
      where: [input.type ? eq(dataSources.type, input.type) : undefined],
      sort: { fields: DATA_SOURCE_SORT_FIELDS, columns: { type: dataSources.type } },
    },
    async (items) => {
      const authors = await authorsById(
        db,
        items.map((i) => i.row.authorId),
      );
      return items.map(({ row, isOwner }) =>
        dataSourceView(deps, row, row.authorId === null ? null : (authors.get(row.authorId) ?? null), isOwner),
      );
    },
  );
}

export async function getDataSource(deps: AppDeps, actor: Actor, id: number): Promise<DataSourceView> {
  const { row, isOwner } = await readableObject(deps.db, actor, 'data_source', id);
  return dataSourceView(deps, row, await authorOf(deps.db, row.authorId), isOwner);
}

async function assertConnects(deps: AppDeps, kind: SourceKind, settings: SourceSettings): Promise<void> {
  const result = await checkConnection(deps, kind, settings);
  if (!result.ok) throw badRequest(`Источник не сохранён: ${result.message}`);
}

export async function createDataSource(
  deps: AppDeps,
  actor: Actor,
  input: CreateDataSourceInput,
): Promise<DataSourceView> {
  const workspaceId = input.workspace_id ?? (await defaultWorkspaceFor(deps.db, actor));
  await assertWorkspaceEditable(deps.db, actor, workspaceId);
  const kind = await assertKindEnabled(deps, input.type);
  const plain = normalizeSettings(kind, input.settings);
  const secrets = secretChanges(input.settings).set;
  await assertSourceAddressAllowed(deps, plain);
  // The check runs before anything is written: a failing connection leaves no source behind.
  if (input.check_connection) await assertConnects(deps, kind, mergeSecrets(plain, secrets));

  const row = await deps.db.transaction(async (tx) => {
    const created = await insertSource(tx, {
      name: input.name,
      type: kind,
      workspaceId,
      authorId: actor.userId,
      settings: plain,
      secrets: sealOrNull(deps, secrets),
    });
    await logSourceAccess(tx, created.id, actor, 'edit', 'создание источника');
    await recordRevisions(tx, 'data_source', [created.id], 'created', actor.userId);
    return created;
  });
  return dataSourceView(deps, row, { id: actor.userId, username: actor.username }, true);
}

export async function updateDataSource(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: UpdateDataSourceInput,
): Promise<DataSourceView> {
  const first = await ownedObject(deps.db, actor, 'data_source', id);
  if (input.type !== undefined && input.type !== first.row.type)
    throw badRequest('Тип источника нельзя изменить: создайте новый источник');
  if (input.settings && first.row.type === 'file') {
    throw badRequest('Настройки файлового источника меняются загрузкой нового файла: PUT /api/files/{id}');
  }
  const kind = first.row.type as SourceKind;
  if (input.settings) await assertSourceAddressAllowed(deps, normalizeSettings(kind, input.settings));
  if (input.settings && input.check_connection) {
    const plain = normalizeSettings(kind, input.settings);
    await assertConnects(
      deps,
      kind,
      mergeSecrets(
        plain,
        nextSecrets(openSecrets(deps, first.row), input.settings, plain, first.row.settings as SourceSettings),
      ),
    );
  }

  const { row, settingsChanged } = await deps.db.transaction(async (tx) => {
    const { row: locked } = await ownedObject(tx, actor, 'data_source', id, { forUpdate: true });
    const change: SourcePatch = {};
    if (input.name !== undefined) change.name = input.name;
    if (input.settings) {
      const plain = normalizeSettings(kind, input.settings);
      change.settings = plain;
      change.secrets = sealOrNull(
        deps,
        nextSecrets(openSecrets(deps, locked), input.settings, plain, locked.settings as SourceSettings),
      );
    }
    // The store drops the metadata read over the old settings and moves updated_at even when nothing changes.
    const updated = await updateSource(tx, id, change);
    await logSourceAccess(tx, id, actor, 'edit', input.settings ? 'изменение подключения' : 'изменение источника');
    await recordRevisions(tx, 'data_source', [id], 'saved', actor.userId);
    return { row: updated, settingsChanged: !!input.settings };
  });
  readCachesChanged(deps); // widget reads cache this source's row: the next read takes the new one
  if (settingsChanged) await deps.connectors.release(id).catch(() => undefined);
  return dataSourceView(deps, row, await authorOf(deps.db, row.authorId), true);
}

function dependentsMessage(names: string[], total: number): string {
  const shown = names
    .slice(0, 5)
    .map((n) => `«${n}»`)
    .join(', ');
  const more = total > 5 ? ` и ещё ${total - 5}` : '';
  return `Источник нельзя удалить: на нём построены датасеты (${total})${shown ? `: ${shown}${more}` : ''}. Сначала удалите их или переключите на другой источник`;
}

/** Deletes a source (any kind) and, for a file source, its stored files. Datasets on it block the deletion. */
export async function deleteDataSource(deps: AppDeps, actor: Actor, id: number, opts: { onlyKind?: SourceKind } = {}) {
  let deleted: DataSourceRow;
  try {
    deleted = await deps.db.transaction(async (tx) => {
      const { row } = await deletableObject(tx, actor, 'data_source', id);
      if (opts.onlyKind && row.type !== opts.onlyKind)
        throw badRequest('Источник не является файловым: удалите его через DELETE /api/data-source/{id}');
      await assertNoDependents(tx, id);
      await tx.delete(dataSources).where(eq(dataSources.id, id));
      return row;
    });
  } catch (e) {
    // A dataset created on the source while we were deleting it: its foreign key refuses.
    if (isForeignKeyViolation(e)) throw badRequest(dependentsMessage([], 1));
    throw e;
  }
  deps.localQueries.abortOf(id);
  readCachesChanged(deps);
  await deps.connectors.release(id).catch(() => undefined);
  if (deleted.type === 'file') await removeFileSourceFiles(deps, deleted.uuid);
  return { id, deleted: true as const };
}

async function assertNoDependents(db: DbOrTx, id: number): Promise<void> {
  const dependents = await sourceDependents(db, id);
  if (dependents.length)
    throw badRequest(
      dependentsMessage(
        dependents.map((d) => d.name),
        dependents.length,
      ),
    );
}

export async function copyDataSource(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: { name?: string; workspace_id?: number },
): Promise<DataSourceView> {
  const { row } = await ownedObject(deps.db, actor, 'data_source', id);
  const workspaceId = input.workspace_id ?? row.workspaceId;
  await assertWorkspaceEditable(deps.db, actor, workspaceId);
  await assertKindEnabled(deps, row.type);
  // A copy is a new source: it must be allowed where it connects today, whatever was allowed when it was saved.
  if (row.type !== 'file') await assertSourceAddressAllowed(deps, row.settings as SourceSettings);
  // A file source takes its file along (the store copies it); when the transaction fails the copied files go.
  const files = sourceFileCopies(deps);
  let created: DataSourceRow;
  try {
    created = await deps.db.transaction(async (tx) => {
      const copyId = await mapCopyOf(tx, 'data_source', id, input.name ?? `${row.name} (копия)`);
      await copySources(tx, { workspaceId, authorId: actor.userId }, { files });
      await logSourceAccess(tx, copyId, actor, 'edit', `копия источника ${row.id}`);
      await recordRevisions(tx, 'data_source', [copyId], 'created', actor.userId);
      await logSourceAccess(tx, row.id, actor, 'read', `скопирован в источник ${copyId}`);
      return loadFullSource(tx, copyId);
    });
  } catch (e) {
    await files.discard();
    throw e;
  }
  return dataSourceView(deps, created, { id: actor.userId, username: actor.username }, true);
}
