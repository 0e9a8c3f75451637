import type { Viewer } from '../access/viewer';
import type { DatasetOwnerRef } from '../access/source-rights';
import type { DataSourceRow } from '../data-sources/connection';
import { datasetSecurity, type DatasetSecurity } from '../access/dataset-security/secured';
import type { AppDeps } from '../app/deps';
import {
  compileFieldValuesQuery,
  compilePreviewQuery,
  type FieldValuesRequest,
  type PreviewRequest,
} from './compile/compile-dataset';
import { compileWidgetQuery } from './compile/compile-widget';
import { compileTemplate, fillTemplate, requestShape, type PlanTemplate } from './compile/plan-templates';
import { clusterWidgetQueries, fusedKey } from './compile/fusion';
import type { DatasetModel } from './compile/dataset-model';
import type { CompiledQuery, WidgetQueryInput } from './compile/types';
import type { Dialect } from './expr';
import { compileAndRun, datasetQueryContext, type DatasetQueryContext } from './run/dataset-context';
import { queryEngineFor, streamQuery } from './run/engine';
import { cacheSlot } from '../kernel/app-caches';
import { TtlCache } from '../kernel/ttl-cache';
import { recordDataPath, type DataPath } from './rollups/data-path';
import { mayReadRollups, noRollupsToRead, readFromRollup } from './rollups/read-rollup';

/*
 * THE one entry point for reading a dataset's data. Widget data (POST /api/widget/{id}/data), widget preview
 * (POST /api/widget/preview), dataset preview (POST /api/dataset/{id}/preview) and field values
 * (GET /api/dataset/{id}/field-values) all come here, and so do dashboard data and the share-link viewer
 * (readWidgetQueries), file exports (streamData, checkWholeRead) and their render pages, mailings' slices and the MCP
 * tools. The caller has already found the object through the access policy (server/access); here
 * the dataset's own right to its sources is checked, and the viewer is where row- and column-level security apply:
 * every read below starts with securedRead, the one place they are applied.
 */

/** Compiled widget queries by dataset version and request (compiling is pure: nothing to invalidate but age). */
const plans = cacheSlot('query.plans', () => new TtlCache<string, CompiledQuery>(10 * 60_000, 5_000));

/**
 * Widget requests' plan templates by dataset version, the viewer's column and row rules and the request's shape
 * (compile/plan-templates.ts); null for a shape that keeps none (its requests are compiled whole, into `plans`).
 */
const templates = cacheSlot('query.templates', () => new TtlCache<string, PlanTemplate | null>(10 * 60_000, 5_000));

export type ReadRequest =
  | { kind: 'widget'; query: WidgetQueryInput }
  | ({ kind: 'preview' } & PreviewRequest)
  | ({ kind: 'field-values' } & FieldValuesRequest);

export interface ReadResult {
  model: DatasetModel;
  query: CompiledQuery;
  /** The rows as the target returned them: up to one more than a request's limit, so the caller can tell has_more. */
  rows: unknown[][];
  /** The target stopped before the end (its row cap), so there may be more rows than `rows` holds. */
  truncated: boolean;
  /** Where the rows came from: a rollup of the dataset, its extract, or the live source (X-Data-Path). */
  path: DataPath;
}

/**
 * `dataset`: a dataset the viewer's actor may read (found through the access policy). `sources`: its data sources
 * when the caller read them already (the widget data hot path reads them with the widget), else they are read here.
 */
/**
 * The dataset's query context (model, sources, the dataset's right to them) with the viewer's security applied to
 * this request: column-level security (hidden fields out of the model's reach, masked output columns answering the
 * mask) and row-level security (the actor's rules as filters of the model, a predicate, not another query). The
 * request is refused here, before anything runs, when it names what the viewer may not see.
 */
async function securedRead(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  request: ReadRequest,
  sources: DataSourceRow[] | undefined,
): Promise<{ ctx: DatasetQueryContext; security: DatasetSecurity }> {
  const ctx = await datasetQueryContext(deps, dataset, sources);
  const security = await datasetSecurity(deps, viewer, ctx.model, request);
  security.validate(ctx.sources.dialectOf);
  return { ctx, security };
}

export async function readData(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  request: ReadRequest,
  sources?: DataSourceRow[],
): Promise<ReadResult> {
  const { ctx, security } = await securedRead(deps, viewer, dataset, request, sources);
  if (request.kind === 'widget' && !noRollupsToRead(deps, ctx.model.id, ctx.model.version)) {
    const fromRollup = await rollupAnswer(deps, ctx, security, request.query);
    if (fromRollup) return fromRollup;
  }
  const path = sourcePath(ctx);
  // A repeated widget request: the plan and result of the last identical one, while the result cache still holds it.
  const { text: requestText, key: answerKey } =
    request.kind === 'widget' ? answerKeyOf(deps, ctx, security, request.query) : { text: '', key: '' };
  if (request.kind === 'widget') {
    const answer = repeatedAnswer(deps, ctx, answerKey);
    if (answer) {
      recordDataPath(path);
      return {
        model: security.visible,
        query: answer.query,
        rows: security.mask(answer.query, answer.result.rows),
        truncated: answer.result.truncated,
        path,
      };
    }
  }
  const { query, result, dataKey } = await compileAndRun(deps, { ...ctx, model: security.visible }, (dialectOf) =>
    compileRequest(deps, security.model, request, dialectOf, security.key, requestText),
  );
  if (request.kind === 'widget') {
    deps.caches.of(answers).set(answerKey, { query, dataKey });
    recordDataPath(path);
  }
  return {
    model: security.visible,
    query,
    rows: security.mask(query, result.rows),
    truncated: result.truncated,
    path,
  };
}

/**
 * Answers of widget requests by everything that decides them, looked up before compiling: the dataset and its
 * version (every save bumps it), the read epoch (rules, rights, sources and memberships changed, here or on another
 * node: server/kernel/cache-changes.ts), the viewer's security key (their column rules and their row rules' filters
 * with their own attribute values: two viewers whose rules differ never share an entry) and the request's text. An
 * entry keeps the compiled query and its target's data key (the extract's load, or the live source's settings),
 * not rows: the rows are the result cache's, read under the query's own key, so an answer dies whenever the result
 * cache's entry does (TTL, memory budget, clears), and a data key that moved on (an extract loaded, a source edited)
 * refuses it. The caller's access checks (securedRead, rollups first) run before it, as for every read.
 */
const answers = cacheSlot(
  'query.answers',
  () => new TtlCache<string, { query: CompiledQuery; dataKey: string }>(10 * 60_000, 5_000),
);

/**
 * A widget request's text and answer key, kept with a frozen query object (a repeated request's query is the same
 * object: server/widgets/data.ts) while what the key starts with is unchanged: the key is then the same string, whose
 * hash V8 keeps, rather than the request serialised, joined and hashed again on every read.
 */
const requestKeys = new WeakMap<WidgetQueryInput, { prefix: string; text: string; key: string }>();

function answerKeyOf(
  deps: AppDeps,
  ctx: DatasetQueryContext,
  security: DatasetSecurity,
  query: WidgetQueryInput,
): { text: string; key: string } {
  const model = ctx.model;
  const prefix = `${model.id}:${model.version}:${deps.caches.readEpoch.value}:${security.key}`;
  const known = requestKeys.get(query);
  if (known?.prefix === prefix) return known;
  const text = known?.text ?? JSON.stringify(query);
  const entry = { prefix, text, key: `${prefix}\u0000${text}` };
  if (Object.isFrozen(query)) requestKeys.set(query, entry);
  return entry;
}

function repeatedAnswer(deps: AppDeps, ctx: DatasetQueryContext, key: string) {
  const answer = deps.caches.of(answers).get(key);
  if (!answer) return undefined;
  let dataKey: string;
  try {
    dataKey = ctx.sources.dataKey(deps, answer.query.dataSourceId);
  } catch {
    return undefined; // the source is not the dataset's any more: compile as a first read would, and say so
  }
  if (dataKey !== answer.dataKey) return undefined;
  const result = queryEngineFor(deps).cachedResult(dataKey, ctx.model.version, answer.query);
  return result && { query: answer.query, result };
}

/** The path a read not answered by a rollup takes: the dataset's extract or its live source. */
const sourcePath = (ctx: DatasetQueryContext): DataPath => (ctx.model.live ? 'live' : 'extract');

/**
 * Several widget queries over one dataset read by one viewer (POST /api/dashboard/{id}/data, the share-link
 * viewer): answers are each query's own, as readData would give them, in the order given, failures one by one.
 * Queries that differ only in their measures are answered by one query computing all of them, when their compiled
 * queries prove to have one shape (the same rows, groups, order and page); anything that keeps the fused request
 * from compiling (a hidden field in one widget, say) sends its members back to be read one by one.
 */
export async function readWidgetQueries(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  queries: WidgetQueryInput[],
  sources: DataSourceRow[] | undefined,
  /** Bounds the reads running at once (each holds a source connection), shared with the caller's other reads. */
  limit: <T>(task: () => Promise<T>) => Promise<T>,
): Promise<PromiseSettledResult<ReadResult>[]> {
  const alone = (q: WidgetQueryInput) =>
    limit(() => readData(deps, viewer, dataset, { kind: 'widget', query: q }, sources));
  const out = new Array<PromiseSettledResult<ReadResult>>(queries.length);
  const settle = async (i: number, read: Promise<ReadResult>) => {
    out[i] = await read.then(
      (value) => ({ status: 'fulfilled', value }) as const,
      (reason: unknown) => ({ status: 'rejected', reason }) as const,
    );
  };
  // Queries a rollup answers are read from it one by one (a rollup read is small); the others are fused as before.
  let rest = queries.map((_, i) => i);
  if (await mayReadRollups(deps, dataset.id, dataset.version)) {
    const fromRollups = await Promise.all(
      queries.map((q) => limit(() => readRollupOnly(deps, viewer, dataset, q, sources)).catch(() => null)),
    );
    fromRollups.forEach((r, i) => {
      if (r) out[i] = { status: 'fulfilled', value: r };
    });
    rest = rest.filter((i) => !fromRollups[i]);
  }
  const restQueries = rest.map((i) => queries[i]);
  await Promise.all(
    clusterWidgetQueries(restQueries).map(async (cluster) => {
      const members = cluster.members.map((m) => rest[m]);
      const fused = cluster.fused;
      const fusedRead = fused ? await prepareFused(deps, viewer, dataset, queries, members, fused, sources) : null;
      if (!fusedRead) return Promise.all(members.map((m) => settle(m, alone(queries[m]))));
      // One execution: its failure (the source down) is every member's, as each read alone would have met it.
      const run = limit(fusedRead.run);
      await Promise.all(
        members.map((m, position) =>
          settle(
            m,
            run.then((r) => r[position]),
          ),
        ),
      );
    }),
  );
  return out;
}

/** A widget query answered from a rollup of the dataset, or null when none answers it (nothing else is read). */
async function readRollupOnly(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  query: WidgetQueryInput,
  sources: DataSourceRow[] | undefined,
): Promise<ReadResult | null> {
  const { ctx, security } = await securedRead(deps, viewer, dataset, { kind: 'widget', query }, sources);
  return rollupAnswer(deps, ctx, security, query);
}

/** The answer of a rollup of the dataset that answers the request exactly under the viewer's rules, if one does. */
async function rollupAnswer(
  deps: AppDeps,
  ctx: DatasetQueryContext,
  security: DatasetSecurity,
  query: WidgetQueryInput,
): Promise<ReadResult | null> {
  const fromRollup = await readFromRollup(deps, ctx, security, query);
  if (!fromRollup) return null;
  recordDataPath('rollup');
  return { model: security.visible, ...fromRollup, path: 'rollup' };
}

/**
 * Compiles a fused request and its members under the viewer's rules; null when they do not share one shape or the
 * fused request does not compile. `run` reads once and cuts each member's columns out of the rows.
 */
async function prepareFused(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  queries: WidgetQueryInput[],
  members: number[],
  fused: WidgetQueryInput,
  sources: DataSourceRow[] | undefined,
): Promise<{ run: () => Promise<ReadResult[]> } | null> {
  const request = { kind: 'widget', query: fused } as const;
  try {
    const { ctx, security } = await securedRead(deps, viewer, dataset, request, sources);
    const dialectOf = ctx.sources.dialectOf;
    const whole = shapedPlan(deps, security.model, fused, dialectOf, security.key);
    const parts = members.map((m) => shapedPlan(deps, security.model, queries[m], dialectOf, security.key));
    if (whole.shape === undefined || parts.some((p) => p.shape !== whole.shape)) return null;
    const index = new Map(whole.columns.map((c, i) => [c.key, i]));
    const categories = fused.rows.length + fused.series.length;
    const picks = parts.map((part, position) =>
      part.columns.map((c, i) => (i < categories ? i : index.get(fusedKey(position, c.key)))),
    );
    if (picks.some((p) => p.some((i) => i === undefined))) return null;
    return {
      run: async () => {
        const target = ctx.sources.target(deps, whole.dataSourceId);
        const result = await queryEngineFor(deps).execute(target, whole, ctx.model.version);
        const rows = security.mask(whole, result.rows);
        const path = sourcePath(ctx);
        for (let i = 0; i < parts.length; i++) recordDataPath(path);
        return parts.map((query, position) => ({
          model: security.visible,
          query,
          rows: rows.map((row) => picks[position].map((i) => row[i!])),
          truncated: result.truncated,
          path,
        }));
      },
    };
  } catch {
    return null;
  }
}

/** A widget query compiled with its shape, cached like every compiled widget query. */
function shapedPlan(
  deps: AppDeps,
  model: DatasetModel,
  query: WidgetQueryInput,
  dialectOf: (id: number) => Dialect,
  columnRulesKey: string,
): CompiledQuery {
  const planKey = `shape:${model.id}:${model.version}:${columnRulesKey}:${JSON.stringify(query)}`;
  const cached = deps.caches.of(plans).get(planKey);
  if (cached) return cached;
  const compiled = compileWidgetQuery(model, query, dialectOf, { shape: true });
  deps.caches.of(plans).set(planKey, compiled);
  return compiled;
}

/** Rows handed on together by streamData: about one cursor fetch, so a writer awaits its drain once per batch. */
const STREAM_BATCH = 2_000;

export interface StreamDataOptions {
  /** Aborting stops the read and cancels the query at the server. */
  signal?: AbortSignal;
  /** The whole read's time budget (the engine's statement timeout when not given). */
  timeoutMs?: number;
  /** Stops after `maxRows + 1` rows (the query is cancelled), so the caller can tell the limit was passed. */
  maxRows?: number;
}

export interface DataStream extends AsyncIterable<unknown[][]> {
  model: DatasetModel;
  /** The compiled query (its output columns, in the order of each row); without a row limit. */
  query: CompiledQuery;
  /** Stops reading and cancels the rest at the server; leaving a for-await loop early does the same. */
  close(): Promise<void>;
}

/**
 * Every row of a widget query, streamed (file exports, POST /api/exports): the same source rights, column-level
 * security (refusals, hidden fields, the mask on every batch) and row-level security as readData, compiled with the
 * widget's sorts and no page limit, read through the target's cursor (Connector.openStream) with the engine's time
 * budget and the caller's signal. Not cached: a stream is read once, and the cache would hold all of it.
 */
export async function streamData(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  request: { kind: 'widget'; query: WidgetQueryInput },
  sources?: DataSourceRow[],
  opts: StreamDataOptions = {},
): Promise<DataStream> {
  const { ctx, security, query } = await compileWholeRead(deps, viewer, dataset, request, sources);
  const target = ctx.sources.target(deps, query.dataSourceId);
  const rows = await streamQuery(queryEngineFor(deps), target, query, opts);
  const cap = opts.maxRows === undefined ? Infinity : opts.maxRows + 1;
  return {
    model: security.visible,
    query,
    close: () => rows.close(),
    async *[Symbol.asyncIterator]() {
      let seen = 0;
      let batch: unknown[][] = [];
      try {
        for await (const row of rows) {
          batch.push(row);
          if (++seen >= cap) break;
          if (batch.length >= STREAM_BATCH) {
            yield security.mask(query, batch);
            batch = [];
          }
        }
        if (batch.length) yield security.mask(query, batch);
      } finally {
        await rows.close();
      }
    },
  };
}

/** A widget query compiled for a whole read as the viewer (rights, column and row rules applied), nothing run. */
async function compileWholeRead(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  request: { kind: 'widget'; query: WidgetQueryInput },
  sources?: DataSourceRow[],
) {
  const { ctx, security } = await securedRead(deps, viewer, dataset, request, sources);
  const query = compileWidgetQuery(security.model, request.query, ctx.sources.dialectOf, { allRows: true });
  return { ctx, security, query };
}

/**
 * Whether streamData would accept this read (POST /api/exports checks before queuing a job): the same checks and
 * compilation, nothing run; a refusal throws the error the read would (a 422 naming the request's field).
 */
export async function checkWholeRead(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  request: { kind: 'widget'; query: WidgetQueryInput },
  sources?: DataSourceRow[],
): Promise<void> {
  await compileWholeRead(deps, viewer, dataset, request, sources);
}

function compileRequest(
  deps: AppDeps,
  model: DatasetModel,
  request: ReadRequest,
  dialectOf: (id: number) => Dialect,
  columnRulesKey: string,
  /** The request's JSON (widget requests). */
  requestText: string,
): CompiledQuery {
  switch (request.kind) {
    case 'widget':
      return compileWidgetRequest(deps, model, request.query, dialectOf, columnRulesKey, requestText);
    case 'preview':
      return compilePreviewQuery(model, request, dialectOf);
    case 'field-values':
      return compileFieldValuesQuery(model, request, dialectOf);
  }
}

/**
 * A widget request's query. Compiling depends on the model (its version and the viewer's column and row rules), the
 * request and the sources' dialects (fixed per source id) only. A request of a shape already compiled only puts its
 * values into the shape's template; a shape that keeps no template is compiled whole per request text, as before.
 */
function compileWidgetRequest(
  deps: AppDeps,
  model: DatasetModel,
  query: WidgetQueryInput,
  dialectOf: (id: number) => Dialect,
  rulesKey: string,
  requestText: string,
): CompiledQuery {
  const prefix = `${model.id}:${model.version}:${rulesKey}:`;
  const planKey = prefix + requestText;
  // No shape: a value does not read as its type, and the whole compile below names it.
  const shape = requestShape(query);
  if (shape) {
    const shapeKey = prefix + shape.key;
    const template = deps.caches.of(templates).get(shapeKey);
    if (template) return fillTemplate(template, shape);
    if (template === undefined) {
      const made = compileTemplate(model, query, shape, dialectOf);
      deps.caches.of(templates).set(shapeKey, made.template);
      if (!made.template) deps.caches.of(plans).set(planKey, made.query);
      return made.query;
    }
  }
  const cached = deps.caches.of(plans).get(planKey);
  if (cached) return cached;
  const compiled = compileWidgetQuery(model, query, dialectOf);
  deps.caches.of(plans).set(planKey, compiled);
  return compiled;
}

/** A result row as an object keyed by the output columns' keys. */
export function rowObject(query: CompiledQuery, row: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const columns = query.columns;
  for (let i = 0; i < columns.length; i++) out[columns[i].key] = row[i] ?? null;
  return out;
}
