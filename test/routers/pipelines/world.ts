import type { z } from 'zod';
import { dataSources } from '../../../db/schema/data-sources';
import type {
  availableWorkspacesOutput,
  listPipelinesOutput,
  pipelineView,
  sourceRuleView,
  stageSourceRulesOutput,
  stageView,
} from '../../../routers/pipelines/schemas';
import type { AppDeps } from '../../../server/app/deps';
import type { WorkspaceRole } from '../../../server/access/roles';
import { createSharedWorkspace, createUser, login, uniq, type TestUser } from '../../support/factories';
import { ok, type Rest } from '../../support/rest';

// Answers of the pipeline operations, as the router's zod outputs describe them.
export type PipelineView = z.output<typeof pipelineView>;
export type PipelinePage = z.output<typeof listPipelinesOutput>;
export type StageView = z.output<typeof stageView>;
export type Available = z.output<typeof availableWorkspacesOutput>;
export type SourceRules = z.output<typeof stageSourceRulesOutput>;
export type SourceRule = z.output<typeof sourceRuleView>;

export const PERSONAS = ['author', 'adminAll', 'adminSome', 'viewer', 'outsider'] as const;
export type Persona = (typeof PERSONAS)[number];

/**
 * The callers of the permissions table (Authentication point 6). In a bound pipeline (stages 0 and 1 bound, 2 free):
 * adminAll is Администратор in both, adminSome is Редактор in stage 0 and Администратор in stage 1, viewer is
 * Наблюдатель in both, outsider has no role; `author` makes pipelines of their own that stay unbound.
 */
export interface PipelineWorld {
  users: Record<Persona, TestUser>;
  tokens: Record<Persona, string>;
  /** A fresh shared workspace with the given roles (default: adminAll and adminSome Администратор, viewer Наблюдатель). */
  workspace(roles?: Partial<Record<Persona, WorkspaceRole>>): Promise<number>;
  /** A pipeline made by adminAll with stage 0 and 1 bound to fresh workspaces (roles as above). */
  boundPipeline(): Promise<{ id: number; ws0: number; ws1: number }>;
}

const FREE_ROLES: Partial<Record<Persona, WorkspaceRole>> = {
  adminAll: 'Администратор',
  adminSome: 'Администратор',
  viewer: 'Наблюдатель',
};

export async function createPipelineWorld(deps: AppDeps, api: Rest): Promise<PipelineWorld> {
  const list = await Promise.all(PERSONAS.map(() => createUser(deps)));
  const users = Object.fromEntries(PERSONAS.map((p, i) => [p, list[i]])) as Record<Persona, TestUser>;
  const tokens = {} as Record<Persona, string>;
  for (const p of PERSONAS) tokens[p] = await login(api, users[p].username, users[p].password);

  const workspace = (roles: Partial<Record<Persona, WorkspaceRole>> = FREE_ROLES) =>
    createSharedWorkspace(
      deps,
      (Object.entries(roles) as [Persona, WorkspaceRole][]).map(([p, role]) => ({ userId: users[p].id, role })),
    );
  const boundPipeline = async () => {
    const ws0 = await workspace({ adminAll: 'Администратор', adminSome: 'Редактор', viewer: 'Наблюдатель' });
    const ws1 = await workspace({ adminAll: 'Администратор', adminSome: 'Администратор', viewer: 'Наблюдатель' });
    const p = await postPipeline(api, tokens.adminAll);
    await bind(api, tokens.adminAll, p.id, 0, ws0);
    await bind(api, tokens.adminAll, p.id, 1, ws1);
    return { id: p.id, ws0, ws1 };
  };
  return { users, tokens, workspace, boundPipeline };
}

export async function postPipeline(
  api: Rest,
  token: string,
  over: Record<string, unknown> = {},
): Promise<PipelineView> {
  return ok<PipelineView>(await api.post('/api/pipeline', { name: uniq('pipe'), ...over }, token));
}

export async function bind(api: Rest, token: string, id: number, order: number, workspaceId: number) {
  return ok<StageView>(await api.put(`/api/pipeline/${id}/stage/${order}`, { workspace_id: workspaceId }, token));
}

/** A data source saved straight into the store (no connection is made by these tests). */
export async function createSourceRow(
  deps: AppDeps,
  opts: { workspaceId: number; authorId: number; type?: string; name?: string },
): Promise<{ id: number; uuid: string; name: string }> {
  const [row] = await deps.db
    .insert(dataSources)
    .values({
      name: opts.name ?? uniq('src'),
      type: opts.type ?? 'postgresql',
      workspaceId: opts.workspaceId,
      authorId: opts.authorId,
      settings: { host: 'dev-db.example', port: 5432, username: 'dev', db: 'sales', use_ssh: false },
    })
    .returning({ id: dataSources.id, uuid: dataSources.uuid, name: dataSources.name });
  return row;
}
