import type { SourceSettings } from '../../adapters/sources';
import type { DbOrTx, Tx } from '../../db/client';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject, readableObject } from '../access/object-access';
import { fieldsHiddenFrom } from '../access/dataset-security/secured';
import { assertSchemaSourcesUsable } from '../access/source-rights';
import { notFound } from '../kernel/errors';
import { pageOf } from '../kernel/paging';
import type { ObjectRow } from '../objects/kinds';
import { readCachesChanged } from '../kernel/read-epoch';
import { lockWorkspaceLayouts } from '../dashboards/store';
import { loadDatasetModel, type DatasetRow } from '../datasets/load-model';
import { assertSourceAddressAllowed } from '../data-sources/network-policy';
import { endRunsOf, stopRunsAfter, type EndedRuns } from '../etl/etl';
import { userNamesById } from '../users/views';
import { diffSnapshots, type RevisionDiffEntry } from './diff';
import { restoreSnapshots } from './restore';
import {
  latestRevisions,
  listRevisions,
  recordRevisions,
  revisionOf,
  type RevisionChange,
  type RevisionEntry,
  type RevisionKind,
  type RevisionWithSnapshot,
  type Snapshot,
} from './store';

/*
 * GET /api/{data-source|dataset|widget|dashboard}/{id}/revisions, .../revisions/{rev}, .../revisions/{rev}/diff and
 * POST .../revisions/{rev}/restore. Reads: whoever may read the object (a reader who does not own a dataset sees its
 * revisions as GET /api/dataset/{id} shows it: without the security rules, which only its owner manages, and without
 * the fields column rules hide from them). A restore: whoever may edit it (the owner), serialised with its saves by
 * the object's row lock; it writes the old revision back and records a new one ('restored').
 */

export interface RevisionView {
  rev: number;
  change: RevisionChange;
  author: { id: number; name: string | null } | null;
  created_at: string;
  deployment_id: number | null;
}

export interface RevisionDetails extends RevisionView {
  snapshot: Snapshot;
}

const revisionNotFound = (rev: number) => notFound(`Версия ${rev} не найдена`);

async function viewsOf(db: DbOrTx, entries: RevisionEntry[]): Promise<RevisionView[]> {
  const names = await userNamesById(
    db,
    entries.map((e) => e.authorId),
  );
  return entries.map((e) => ({
    rev: e.rev,
    change: e.change,
    author: e.authorId === null ? null : { id: e.authorId, name: names.get(e.authorId)?.username ?? null },
    created_at: e.createdAt.toISOString(),
    deployment_id: e.deploymentId,
  }));
}

/** Whoever may read the object; answers how its snapshots are shown to them. */
async function readerOf(db: DbOrTx, actor: Actor, kind: RevisionKind, id: number) {
  const { isOwner } = await readableObject(db, actor, kind, id);
  if (kind !== 'dataset' || isOwner) return (s: Snapshot) => s;
  const hidden = await fieldsHiddenFrom(db, actor, await loadDatasetModel(db, id));
  return (s: Snapshot): Snapshot => {
    const children = { ...s.children };
    delete children.dataset_rls_rules;
    delete children.dataset_cls_rules;
    if (children.dataset_fields)
      children.dataset_fields = children.dataset_fields.filter((f) => !hidden.has(Number(f.id)));
    return { row: s.row, children };
  };
}

export async function listObjectRevisions(
  deps: AppDeps,
  actor: Actor,
  kind: RevisionKind,
  id: number,
  page: { page: number; size: number },
) {
  await readableObject(deps.db, actor, kind, id);
  const { items, total } = await listRevisions(deps.db, kind, id, page);
  return pageOf(await viewsOf(deps.db, items), page, total);
}

async function revisionOr404(db: DbOrTx, kind: RevisionKind, id: number, rev: number): Promise<RevisionWithSnapshot> {
  const found = await revisionOf(db, kind, id, rev);
  if (!found) throw revisionNotFound(rev);
  return found;
}

export async function getObjectRevision(
  deps: AppDeps,
  actor: Actor,
  kind: RevisionKind,
  id: number,
  rev: number,
): Promise<RevisionDetails> {
  const shown = await readerOf(deps.db, actor, kind, id);
  const found = await revisionOr404(deps.db, kind, id, rev);
  const [view] = await viewsOf(deps.db, [found]);
  return { ...view, snapshot: shown(found.snapshot) };
}

/** What changed from revision `rev` to revision `against` (by default the current, latest one). */
export async function diffObjectRevisions(
  deps: AppDeps,
  actor: Actor,
  kind: RevisionKind,
  id: number,
  rev: number,
  against?: number,
): Promise<{ rev: number; against: number; changes: RevisionDiffEntry[] }> {
  const shown = await readerOf(deps.db, actor, kind, id);
  const from = await revisionOr404(deps.db, kind, id, rev);
  const target = against ?? (await latestRevisions(deps.db, kind, [id])).get(id)?.rev ?? from.rev; // from exists: so does a latest
  const to = target === rev ? from : await revisionOr404(deps.db, kind, id, target);
  return { rev, against: target, changes: diffSnapshots(shown(from.snapshot), shown(to.snapshot)) };
}

/**
 * Writes revision `rev` back over the object and records it as a new revision ('restored'). What it named that no
 * longer exists is not put back and is listed in `missing`. A source keeps its current secrets.
 */
export async function restoreObjectRevision(
  deps: AppDeps,
  actor: Actor,
  kind: RevisionKind,
  id: number,
  rev: number,
): Promise<{ revision: RevisionView; missing: string[] }> {
  let ended: EndedRuns | undefined;
  const out = await deps.db.transaction(async (tx) => {
    const row = await lockForEdit(tx, actor, kind, id);
    const found = await revisionOr404(tx, kind, id, rev);
    ended = await checkRestore(deps, tx, kind, row, found.snapshot);
    const { missing } = await restoreSnapshots(tx, kind, [{ id, snapshot: found.snapshot }]);
    await recordRevisions(tx, kind, [id], 'restored', actor.userId);
    const { items } = await listRevisions(tx, kind, id, { page: 0, size: 1 });
    const [revision] = await viewsOf(tx, items);
    return { revision, missing };
  });
  readCachesChanged(deps); // reads cache the object's row (and a dataset's version): the next read takes this one
  if (ended) await stopRunsAfter(deps, ended);
  if (kind === 'data_source') await deps.connectors.release(id).catch(() => undefined);
  return out;
}

/**
 * The edit check and the object's row lock, in the order its saves take them: a dashboard's layout lock of its
 * workspace first (as PUT /api/dashboard/{id}/schema does), then the row. Answers the locked row.
 */
async function lockForEdit(tx: Tx, actor: Actor, kind: RevisionKind, id: number): Promise<LockedRow> {
  if (kind === 'dashboard') {
    const { row } = await ownedObject(tx, actor, 'dashboard', id);
    await lockWorkspaceLayouts(tx, row.workspaceId);
  }
  return (await ownedObject(tx, actor, kind, id, { forUpdate: true })).row;
}

type LockedRow = ObjectRow<RevisionKind>;

/**
 * What a save of the same content would check: a source's address against the network policy, a dataset's sources
 * usable by it; a dataset put back on its source ends its synchronisation under way (as PUT /api/dataset/{id} does).
 */
async function checkRestore(
  deps: AppDeps,
  tx: Tx,
  kind: RevisionKind,
  row: LockedRow,
  snapshot: Snapshot,
): Promise<EndedRuns | undefined> {
  if (kind === 'data_source' && snapshot.row.type !== 'file' && snapshot.row.settings)
    await assertSourceAddressAllowed(deps, snapshot.row.settings as SourceSettings);
  if (kind !== 'dataset') return undefined;
  const dataset = row as DatasetRow;
  const sources = (snapshot.children?.dataset_sources ?? []).map((r) => Number(r.data_source_id));
  await assertSchemaSourcesUsable(deps, tx, dataset, sources);
  if (snapshot.row.live === true && !dataset.live) return endRunsOf(tx, { datasetIds: [dataset.id] }, 'live');
  return undefined;
}
