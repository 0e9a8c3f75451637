import { roleIsAdmin, type WorkspaceRole } from '../access/roles';
import { dictionary } from '../service/dictionary';
import type { PipelineRow, PipelineStageRow } from './access';
import type { StageWithWorkspace } from './store';
import { STAGE_NAMES } from './stages';

export interface StageView {
  order: number;
  name: string;
  workspace_id: number | null;
  workspace_name: string | null;
  bound_at: string | null;
  /** The caller's role in the bound workspace; null when unbound or none. */
  role: WorkspaceRole | null;
}

export interface PipelineView {
  id: number;
  name: string;
  description: string;
  author_id: number | null;
  bound_count: number;
  /** «Не настроен» while no stage is bound, else «Привязано N из 3». */
  binding_label: string;
  stages: StageView[];
  /** Whether the caller may rename, delete, bind and unbind (Администратор in all bound stages; author while none). */
  can_manage: boolean;
  created_at: string;
  updated_at: string;
}

/** The label of the binding state (labels from the interface dictionary, GET /api/dictionary). */
function bindingLabel(boundCount: number): string {
  const labels = dictionary().pipeline_binding;
  return boundCount === 0 ? labels.none : labels.partial.replace('{n}', String(boundCount));
}

function stageView(s: StageWithWorkspace): StageView {
  return {
    order: s.stage.order,
    name: STAGE_NAMES[s.stage.order],
    workspace_id: s.stage.workspaceId,
    workspace_name: s.workspaceName,
    bound_at: s.stage.boundAt?.toISOString() ?? null,
    role: s.role,
  };
}

export function pipelineView(row: PipelineRow, stages: StageWithWorkspace[], actorId: number): PipelineView {
  const bound = stages.filter((s) => s.stage.workspaceId !== null);
  const canManage = bound.length === 0 ? row.authorId === actorId : bound.every((s) => roleIsAdmin(s.role));
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    author_id: row.authorId,
    bound_count: bound.length,
    binding_label: bindingLabel(bound.length),
    stages: stages.map(stageView),
    can_manage: canManage,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A stage row as a view when the workspace name and role are already known. */
export const boundStageView = (
  stage: PipelineStageRow,
  workspaceName: string | null,
  role: WorkspaceRole | null,
): StageView => stageView({ stage, workspaceName, role });
