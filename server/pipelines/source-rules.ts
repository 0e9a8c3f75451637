import { and, asc, eq } from 'drizzle-orm';
import type { SourceKind, SourceSettings } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import { pipelineSourceRules } from '../../db/schema/pipelines';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { openSecrets, type DataSourceRow } from '../data-sources/connection';
import { assertSourceAddressAllowed } from '../data-sources/network-policy';
import { nextSecrets, normalizeSettings, settingsView, type SettingsInput } from '../data-sources/settings';
import { sourceInWorkspaceByUuid, sourcesInWorkspace } from '../data-sources/views';
import { badRequest, notFound } from '../kernel/errors';
import { SOURCE_KIND_LABELS } from '../service/dictionary';
import { pipelineForCaller, requireStageAdmin, requireStageRole, stageAt, type PipelineContext } from './access';
import { MSG } from './messages';

/*
 * Data-source substitution rules of a receiving stage: GET/PUT/DELETE /api/pipeline/{id}/stage/{order}/data-source-rule.
 * A rule is keyed by the uuid of a source of the previous stage's workspace and holds connection settings of that
 * source's kind, validated, kept and masked exactly as a source's (secrets sealed in the same box, never returned;
 * an omitted password keeps the stored one, and a stored password does not follow the settings to another address).
 * The next deploy into the stage gives the copy of the source these settings. Stage 0 has no previous stage, so none.
 * A rule's connection check is POST /api/data-source/check with the rule's type and settings.
 */

type RuleRow = typeof pipelineSourceRules.$inferSelect;

export interface SourceRuleView {
  source_uuid: string;
  type: string;
  /** As a source read shows them: no secret values, only `*_set` flags. */
  settings: Record<string, unknown>;
  author_id: number | null;
  created_at: string;
  updated_at: string;
}

export interface RuleSourceView {
  uuid: string;
  id: number;
  name: string;
  type: string;
  type_name: string;
  /** The rule of the stage for this source; null: the copy keeps the source stage's connection. */
  rule: SourceRuleView | null;
}

export interface StageSourceRules {
  stage_order: number;
  source_stage_order: number;
  sources: RuleSourceView[];
  /** Rules whose source is no longer in the previous stage (deleted, or the stage bound elsewhere): delete them. */
  orphan_rules: SourceRuleView[];
}

function ruleView(deps: AppDeps, row: RuleRow): SourceRuleView {
  let secrets = {};
  try {
    secrets = openSecrets(deps, row);
  } catch {
    // A box that no longer opens shows as "no secret stored": the read still answers.
  }
  return {
    source_uuid: row.sourceUuid,
    type: row.type,
    settings: settingsView(row.type, row.settings as SourceSettings & Record<string, unknown>, secrets),
    author_id: row.authorId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The stage `order` is a receiving stage: 404 for an unknown order, 400 for stage 0. */
function receivingStage(ctx: PipelineContext, order: number): void {
  stageAt(ctx, order);
  if (order === 0) throw badRequest(MSG.firstStageHasNoRules);
}

/** The sources of the previous stage's workspace that can have a rule (a file is copied with its source). */
async function previousStageSources(db: DbOrTx, ctx: PipelineContext, order: number): Promise<DataSourceRow[]> {
  const workspaceId = ctx.stages[order - 1].workspaceId;
  if (workspaceId === null) return [];
  return (await sourcesInWorkspace(db, workspaceId)).filter((s) => s.type !== 'file');
}

/** GET: the previous stage's sources with their rules, and the orphan rules apart. Any role in stage {order}. */
export async function listSourceRules(
  deps: AppDeps,
  actor: Actor,
  id: number,
  order: number,
): Promise<StageSourceRules> {
  const ctx = await pipelineForCaller(deps.db, actor, id);
  receivingStage(ctx, order);
  requireStageRole(ctx, order);
  const sources = await previousStageSources(deps.db, ctx, order);
  const rules = await deps.db
    .select()
    .from(pipelineSourceRules)
    .where(and(eq(pipelineSourceRules.pipelineId, id), eq(pipelineSourceRules.stageOrder, order)))
    .orderBy(asc(pipelineSourceRules.createdAt), asc(pipelineSourceRules.id));
  const byUuid = new Map(rules.map((r) => [r.sourceUuid, r]));
  const listed = new Set(sources.map((s) => s.uuid));
  return {
    stage_order: order,
    source_stage_order: order - 1,
    sources: sources.map((s) => {
      const rule = byUuid.get(s.uuid);
      return {
        uuid: s.uuid,
        id: s.id,
        name: s.name,
        type: s.type,
        type_name: SOURCE_KIND_LABELS[s.type] ?? s.type,
        rule: rule ? ruleView(deps, rule) : null,
      };
    }),
    orphan_rules: rules.filter((r) => !listed.has(r.sourceUuid)).map((r) => ruleView(deps, r)),
  };
}

export interface SourceRuleInput {
  source_uuid: string;
  settings: SettingsInput;
}

/** PUT: creates or changes the rule for a source of the previous stage. Администратор in stage {order}. */
export async function upsertSourceRule(
  deps: AppDeps,
  actor: Actor,
  id: number,
  order: number,
  input: SourceRuleInput,
): Promise<SourceRuleView> {
  const check = await pipelineForCaller(deps.db, actor, id);
  receivingStage(check, order);
  requireStageAdmin(check, order);
  const source = await sourceOfPreviousStage(deps.db, check, order, input.source_uuid);
  const kind = source.type as SourceKind;
  const plain = normalizeSettings(kind, input.settings);
  await assertSourceAddressAllowed(deps, plain);

  const row = await deps.db.transaction(async (tx) => {
    // Again under the pipeline's lock: a concurrent unbind or role change decides before the rule is written.
    const ctx = await pipelineForCaller(tx, actor, id, { lock: true });
    requireStageAdmin(ctx, order);
    await sourceOfPreviousStage(tx, ctx, order, input.source_uuid);
    const [existing] = await tx
      .select()
      .from(pipelineSourceRules)
      .where(ruleKey(id, order, input.source_uuid))
      .for('update');
    const stored = existing && existing.type === kind ? openSecrets(deps, existing) : {};
    const previous = existing && existing.type === kind ? (existing.settings as SourceSettings) : undefined;
    const secrets = nextSecrets(stored, input.settings, plain, previous);
    const values = {
      type: kind,
      settings: plain,
      secrets: Object.keys(secrets).length ? deps.secretBox.seal(secrets) : null,
      authorId: actor.userId,
    };
    if (existing) {
      const [updated] = await tx
        .update(pipelineSourceRules)
        .set({ ...values, updatedAt: new Date() })
        .where(eq(pipelineSourceRules.id, existing.id))
        .returning();
      return updated;
    }
    const [created] = await tx
      .insert(pipelineSourceRules)
      .values({ ...values, pipelineId: id, stageOrder: order, sourceUuid: input.source_uuid })
      .returning();
    return created;
  });
  return ruleView(deps, row);
}

const ruleKey = (id: number, order: number, uuid: string) =>
  and(
    eq(pipelineSourceRules.pipelineId, id),
    eq(pipelineSourceRules.stageOrder, order),
    eq(pipelineSourceRules.sourceUuid, uuid),
  );

/** The source with `uuid` in the previous stage's workspace: 400 when that stage is unbound, 404 when absent. */
async function sourceOfPreviousStage(
  db: DbOrTx,
  ctx: PipelineContext,
  order: number,
  uuid: string,
): Promise<DataSourceRow> {
  const workspaceId = ctx.stages[order - 1].workspaceId;
  if (workspaceId === null) throw badRequest(MSG.stageNotBound(order - 1));
  const source = await sourceInWorkspaceByUuid(db, workspaceId, uuid);
  if (!source) throw notFound(MSG.sourceNotInPreviousStage(uuid));
  if (source.type === 'file') throw badRequest(MSG.ruleNotNeeded);
  return source;
}

/**
 * DELETE (query sourceUuid): the copy returns to the source stage's connection at the next deploy. Orphan rules are
 * deleted the same way. Администратор in stage {order}.
 */
export async function deleteSourceRule(
  deps: AppDeps,
  actor: Actor,
  id: number,
  order: number,
  sourceUuid: string,
): Promise<{ source_uuid: string; deleted: true }> {
  await deps.db.transaction(async (tx) => {
    const ctx = await pipelineForCaller(tx, actor, id, { lock: true });
    receivingStage(ctx, order);
    requireStageAdmin(ctx, order);
    const deleted = await tx
      .delete(pipelineSourceRules)
      .where(ruleKey(id, order, sourceUuid))
      .returning({ id: pipelineSourceRules.id });
    if (deleted.length === 0) throw notFound(MSG.ruleNotFound(sourceUuid));
  });
  return { source_uuid: sourceUuid, deleted: true };
}
