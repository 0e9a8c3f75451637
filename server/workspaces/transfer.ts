import type { Tx } from '../../db/client';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { roleIsAdmin } from '../access/roles';
import { assertWorkspaceEditable, assertWorkspaceReadable } from '../access/workspace-access';
import { AppError, badRequest, invalid } from '../kernel/errors';
import { readCachesChanged } from '../kernel/read-epoch';
import { moveDashboardsToWorkspace } from '../dashboards/store';
import { dashboardsInWorkspace } from '../dashboards/views';
import { moveSourcesToWorkspace } from '../data-sources/store';
import { sourcesInWorkspace } from '../data-sources/views';
import { moveDatasetsToWorkspace } from '../datasets/store';
import { datasetsInWorkspace } from '../datasets/views';
import { moveWidgetsToWorkspace } from '../widgets/store';
import { widgetsInWorkspace } from '../widgets/views';

/*
 * POST /api/workspaces/{id}/transfer: objects of the caller's personal workspace {id} move to a shared workspace
 * where the caller may create objects (Редактор or Администратор), irreversibly, keeping their ids (only the
 * workspace changes), in one transaction.
 *
 * Nothing may be left pointing across the move the way a published report never may point at someone's personal
 * content:
 * - what a moved object needs (a dashboard its widgets, a widget its dataset, a dataset its sources) moves too when
 *   `include_dependencies` is true; otherwise a dependency that would stay in the personal workspace is refused (400)
 *   naming both objects;
 * - what stays and needs a moved object is refused too (a widget lives beside its dataset, a dashboard shows only
 *   widgets of its own workspace), naming both: move them together. A personal dataset may keep reading a moved
 *   source (the owner still can, as the dataset's reads check), so a source may move alone.
 */

type Kind = 'data_source' | 'dataset' | 'widget' | 'dashboard';
const KINDS: Kind[] = ['data_source', 'dataset', 'widget', 'dashboard'];
const LABEL: Record<Kind, string> = {
  data_source: 'Источник данных',
  dataset: 'Датасет',
  widget: 'Виджет',
  dashboard: 'Дашборд',
};
/** The kind in the genitive, for «зависит от ...». */
const OF: Record<Kind, string> = {
  data_source: 'источника данных',
  dataset: 'датасета',
  widget: 'виджета',
  dashboard: 'дашборда',
};

export interface TransferInput {
  target_workspace_id: number;
  objects: { type: Kind; id: number }[];
  include_dependencies: boolean;
}

export interface TransferResult {
  workspace_id: number;
  target_workspace_id: number;
  objects: { type: Kind; id: number; name: string }[];
}

/** Everything of the personal workspace, with the edges "a needs b". */
interface PersonalContent {
  names: Map<string, string>;
  needs: Map<string, string[]>;
}

const key = (type: Kind, id: number) => `${type}:${id}`;
const parse = (k: string) => {
  const [type, id] = k.split(':');
  return { type: type as Kind, id: Number(id) };
};

export async function transferObjects(
  deps: AppDeps,
  actor: Actor,
  workspaceId: number,
  input: TransferInput,
): Promise<TransferResult> {
  const seen = new Set<string>();
  const duplicates: Record<string, string> = {};
  input.objects.forEach((o, i) => {
    if (seen.has(key(o.type, o.id))) duplicates[`objects[${i}]`] = `Объект указан дважды: ${o.type} ${o.id}`;
    seen.add(key(o.type, o.id));
  });
  if (Object.keys(duplicates).length) throw invalid(duplicates);

  const result = await deps.db.transaction(async (tx) => {
    const { workspace, role } = await assertWorkspaceReadable(tx, actor, workspaceId);
    // Rights first: only the one who could own a transfer from {id} (its Администратор) learns what kind it is.
    if (workspace.type !== 'personal') {
      if (!roleIsAdmin(role)) throw new AppError('forbidden');
      throw badRequest('Переносить можно только из личного пространства');
    }
    if (workspace.ownerUserId !== actor.userId) throw new AppError('forbidden');
    const target = await assertWorkspaceEditable(tx, actor, input.target_workspace_id);
    if (target.workspace.type !== 'shared') throw badRequest('Переносить можно только в командное пространство');
    const content = await loadContent(tx, workspaceId);
    for (const o of input.objects)
      if (!content.names.has(key(o.type, o.id)))
        throw badRequest(`${LABEL[o.type]} не найден в личном пространстве (id ${o.id})`);
    const moving = closeOver(content, [...seen], input.include_dependencies);
    checkNothingStaysBehindNeedingIt(content, moving);
    await moveRows(tx, workspaceId, input.target_workspace_id, moving);
    return {
      workspace_id: workspaceId,
      target_workspace_id: input.target_workspace_id,
      objects: [...moving]
        .map(parse)
        .map((o) => ({ ...o, name: content.names.get(key(o.type, o.id))! }))
        .sort((a, b) => KINDS.indexOf(a.type) - KINDS.indexOf(b.type) || a.id - b.id),
    };
  });
  readCachesChanged(deps);
  return result;
}

async function loadContent(tx: Tx, workspaceId: number): Promise<PersonalContent> {
  const names = new Map<string, string>();
  const needs = new Map<string, string[]>();
  const need = (from: string, to: string) => needs.set(from, [...(needs.get(from) ?? []), to]);
  // Each owner reads its own objects of the workspace; one after another, as they share the transaction.
  const sources = await sourcesInWorkspace(tx, workspaceId);
  const sets = await datasetsInWorkspace(tx, workspaceId);
  const ws = await widgetsInWorkspace(tx, workspaceId);
  const ds = await dashboardsInWorkspace(tx, workspaceId);
  for (const s of sources) names.set(key('data_source', s.id), s.name);
  for (const d of sets) names.set(key('dataset', d.id), d.name);
  for (const w of ws) names.set(key('widget', w.id), w.name);
  for (const d of ds) names.set(key('dashboard', d.id), d.name);
  // Only edges inside the personal workspace matter: what lives elsewhere neither moves nor stays behind.
  const inside = (k: string) => names.has(k);
  for (const d of sets)
    for (const sourceId of d.dataSourceIds)
      if (inside(key('data_source', sourceId))) need(key('dataset', d.id), key('data_source', sourceId));
  for (const w of ws) if (inside(key('dataset', w.datasetId))) need(key('widget', w.id), key('dataset', w.datasetId));
  for (const d of ds)
    for (const widgetId of d.widgetIds)
      if (inside(key('widget', widgetId))) need(key('dashboard', d.id), key('widget', widgetId));
  return { names, needs };
}

function describe(content: PersonalContent, k: string): string {
  const { type, id } = parse(k);
  return `${LABEL[type]} «${content.names.get(k)}» (id ${id})`;
}

function describeOf(content: PersonalContent, k: string): string {
  const { type, id } = parse(k);
  return `${OF[type]} «${content.names.get(k)}» (id ${id})`;
}

/** The chosen objects with their dependencies (or a 400 naming the first one that would stay behind). */
function closeOver(content: PersonalContent, chosen: string[], includeDependencies: boolean): Set<string> {
  const moving = new Set(chosen);
  const queue = [...chosen];
  while (queue.length) {
    const k = queue.pop()!;
    for (const dep of content.needs.get(k) ?? []) {
      if (moving.has(dep)) continue;
      if (!includeDependencies)
        throw badRequest(
          `${describe(content, k)} зависит от ${describeOf(content, dep)}, который остаётся в личном пространстве: перенесите его тоже или передайте include_dependencies: true`,
        );
      moving.add(dep);
      queue.push(dep);
    }
  }
  return moving;
}

function checkNothingStaysBehindNeedingIt(content: PersonalContent, moving: Set<string>): void {
  for (const [k, deps] of content.needs) {
    if (moving.has(k)) continue;
    const needed = deps.find((d) => moving.has(d) && !d.startsWith('data_source:'));
    if (needed)
      throw badRequest(
        `${describe(content, k)} остаётся в личном пространстве и зависит от ${describeOf(content, needed)}: перенесите их вместе`,
      );
  }
}

/** Each owner moves its objects, keeping their ids; the kinds in KINDS order, as before. */
const MOVES: Record<Kind, (tx: Tx, ids: number[], from: number, to: number) => Promise<number>> = {
  data_source: moveSourcesToWorkspace,
  dataset: moveDatasetsToWorkspace,
  widget: moveWidgetsToWorkspace,
  dashboard: moveDashboardsToWorkspace,
};

async function moveRows(tx: Tx, from: number, to: number, moving: Set<string>): Promise<void> {
  const ids = (type: Kind) =>
    [...moving]
      .map(parse)
      .filter((o) => o.type === type)
      .map((o) => o.id);
  for (const type of KINDS) {
    const list = ids(type);
    if (!list.length) continue;
    const moved = await MOVES[type](tx, list, from, to);
    // A concurrent move or delete took one away: refuse rather than move a part.
    if (moved !== list.length) throw badRequest('Объекты изменились во время переноса: повторите запрос');
  }
}
