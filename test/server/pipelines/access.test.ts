import { describe, expect, it } from 'vitest';
import type { WorkspaceRole } from '../../../server/access/roles';
import {
  requirePipelineAdmin,
  requireStageAdmin,
  requireStageRole,
  stageAt,
  type PipelineContext,
} from '../../../server/pipelines/access';

/** A pipeline context with the given stage workspaces (null: unbound) and caller roles. */
function ctxOf(workspaces: (number | null)[], roles: (WorkspaceRole | null)[], isAuthor = false): PipelineContext {
  const now = new Date();
  return {
    pipeline: { id: 1, name: 'p', description: '', authorId: isAuthor ? 7 : 8, createdAt: now, updatedAt: now },
    stages: workspaces.map((workspaceId, order) => ({
      id: order + 1,
      pipelineId: 1,
      order,
      workspaceId,
      boundBy: null,
      boundAt: null,
    })),
    roles,
    isAuthor,
  };
}

const status = (f: () => unknown): number | 'ok' => {
  try {
    f();
    return 'ok';
  } catch (e) {
    return (e as { status: number }).status;
  }
};

describe('requirePipelineAdmin (rename, delete, bind, unbind)', () => {
  it('lets the author alone act while no stage is bound', () => {
    expect(status(() => requirePipelineAdmin(ctxOf([null, null, null], [null, null, null], true)))).toBe('ok');
    expect(status(() => requirePipelineAdmin(ctxOf([null, null, null], [null, null, null], false)))).toBe(403);
  });

  it('needs Администратор in every bound stage once one is bound, the author included', () => {
    const A = 'Администратор';
    expect(status(() => requirePipelineAdmin(ctxOf([1, 2, null], [A, A, null])))).toBe('ok');
    expect(status(() => requirePipelineAdmin(ctxOf([1, 2, null], [A, 'Редактор', null], true)))).toBe(403);
    expect(status(() => requirePipelineAdmin(ctxOf([1, null, 3], [A, null, null], true)))).toBe(403);
    expect(status(() => requirePipelineAdmin(ctxOf([null, null, 3], [null, null, A])))).toBe('ok');
  });
});

describe('requireStageRole / requireStageAdmin (rules, deploy)', () => {
  const ctx = ctxOf([1, 2, null], ['Наблюдатель', 'Администратор', null]);
  it('answer by the role in that one stage', () => {
    expect(requireStageRole(ctx, 0)).toBe('Наблюдатель');
    expect(status(() => requireStageAdmin(ctx, 0))).toBe(403);
    expect(status(() => requireStageAdmin(ctx, 1))).toBe('ok');
  });

  it('answer 400 for an unbound stage, 403 for no role, 404 for an order other than 0..2', () => {
    expect(status(() => requireStageRole(ctx, 2))).toBe(400);
    expect(status(() => requireStageRole(ctxOf([1, 2, 3], ['Наблюдатель', null, null]), 1))).toBe(403);
    for (const order of [-1, 3, 1.5, Number.NaN]) expect(status(() => stageAt(ctx, order))).toBe(404);
  });
});
