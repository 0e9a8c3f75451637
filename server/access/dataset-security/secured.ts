import type { DbOrTx } from '../../../db/client';
import type { AppDeps } from '../../app/deps';
import type { Actor } from '../../auth/actor';
import type { DatasetModel } from '../../query/compile/dataset-model';
import type { CompiledQuery } from '../../query/compile/types';
import type { Dialect } from '../../query/expr';
import type { Viewer } from '../viewer';
import { columnGuard, columnRulesFor, columnRulesKnown, hiddenFieldsOf, type GuardedRequest } from './column-rules';
import { rowFilterSql, rowFiltersFor, rowFiltersKey, rowFiltersKnown } from './row-rules';
import { clsRules } from './rule-stores';

/*
 * Dataset security, the platform's boundary for data: what one viewer may read of a dataset under its column-level
 * (hide, mask) and row-level (attribute filters) rules. Every read of dataset rows takes its model through
 * `datasetSecurity` (server/query/read.ts, for widgets, dashboards, previews, field values, share links, exports,
 * mailings, render pages, MCP), and what a definition shows of the dataset to a reader (GET /api/dataset/{id}, the
 * assistant's prompts) through `fieldsHiddenFrom`. Nothing else in the platform reads the rules.
 */

export interface DatasetSecurity {
  /** The model to compile against: hidden fields out of the request's reach, the row rules among its filters. */
  model: DatasetModel;
  /** The model as the viewer sees it (without the row rules' filters): what a read answers beside its rows. */
  visible: DatasetModel;
  /** Tells apart plans and results compiled for viewers whose rules differ (empty when no rule applies). */
  key: string;
  /** Refuses a request naming a hidden or masked field exactly as one naming a field the dataset lacks. */
  validate(dialectOf: (dataSourceId: number) => Dialect): void;
  /** Result rows with the masked output columns masked. */
  mask(query: CompiledQuery, rows: unknown[][]): unknown[][];
}

/** The viewer's rules (those of the user it reads as) applied to one read of the dataset. */
export async function datasetSecurity(
  deps: AppDeps,
  viewer: Viewer,
  model: DatasetModel,
  request: GuardedRequest,
): Promise<DatasetSecurity> {
  // Most reads: the rules (and a row rule's attributes) are cached, and taken without waiting on the caches.
  const knownColumns = columnRulesKnown(deps, viewer.actor, model);
  const knownRows = rowFiltersKnown(deps, viewer.actor, model);
  const [columnRules, rowFilters] =
    knownColumns && knownRows
      ? [knownColumns, knownRows]
      : await Promise.all([columnRulesFor(deps, viewer.actor, model), rowFiltersFor(deps, viewer.actor, model)]);
  const guard = columnGuard(model, columnRules, request);
  return {
    model: rowFilters.length ? { ...guard.model, filters: [...guard.model.filters, ...rowFilters] } : guard.model,
    visible: guard.model,
    key: `${guard.key}|${rowFiltersKey(rowFilters)}`,
    validate: guard.validate,
    mask: guard.mask,
  };
}

/**
 * The fields hidden from the actor (calculated fields reading them included), read in `db` (the caller's snapshot,
 * beside the model it loaded): what a definition of the dataset leaves out for someone who does not manage its rules.
 */
export async function fieldsHiddenFrom(db: DbOrTx, actor: Actor, model: DatasetModel): Promise<Set<number>> {
  return hiddenFieldsOf(model, await clsRules.list(db, model.id), actor);
}

/**
 * GET /api/dataset/{id}/effective-security: what one user's reads of the dataset get: the row predicate in the
 * dialect (literals inlined; null when no rule applies) and the fields hidden from them, in the model's order.
 */
export async function effectiveSecurity(
  deps: AppDeps,
  user: Actor,
  model: DatasetModel,
  dialect: Dialect | undefined,
): Promise<{ row_filter_sql: string | null; hidden_field_ids: number[] }> {
  const [columnRules, rowFilters] = await Promise.all([
    columnRulesFor(deps, user, model),
    rowFiltersFor(deps, user, model),
  ]);
  return {
    row_filter_sql: dialect ? rowFilterSql(model, rowFilters, dialect) : null,
    hidden_field_ids: model.fields.filter((f) => columnRules.hidden.has(f.id)).map((f) => f.id),
  };
}
