import { z } from 'zod';
import {
  diffObjectRevisions,
  getObjectRevision,
  listObjectRevisions,
  restoreObjectRevision,
} from '../../server/revisions/revisions';
import { REVISION_CHANGES, type RevisionKind } from '../../server/revisions/store';
import { authedProcedure, router } from '../trpc';
import { entityId, pagedQuery, pageSchema } from '../common';

/*
 * The revisions of one object kind: GET {base}/{id}/revisions (paged, newest first), GET {base}/{id}/revisions/{rev}
 * (the object as it was), GET {base}/{id}/revisions/{rev}/diff?against= and POST {base}/{id}/revisions/{rev}/restore.
 * One router per kind, under `revision` in the app router.
 */

const revisionView = z.object({
  rev: z.number().int(),
  change: z.enum(REVISION_CHANGES),
  author: z.object({ id: z.number().int(), name: z.string().nullable() }).nullable(),
  created_at: z.string(),
  deployment_id: z.number().int().nullable(),
});

const snapshot = z.object({
  row: z.record(z.string(), z.unknown()).describe("The object's own row, DB column names (no secrets)"),
  children: z
    .record(z.string(), z.array(z.record(z.string(), z.unknown())))
    .optional()
    .describe("A dataset's schema and security rule rows by table, sorted by id"),
});

const diffEntry = z.object({
  path: z.string().describe('`row.name`, `children.dataset_fields[id=12].formula`, `row.layout.items[widget_id=7].w`'),
  change: z.enum(['added', 'removed', 'changed']),
  old: z.unknown().optional(),
  new: z.unknown().optional(),
});

export const revisionPage = pageSchema(revisionView);
export const revisionDetails = revisionView.extend({ snapshot });
export const revisionDiff = z.object({ rev: z.number().int(), against: z.number().int(), changes: z.array(diffEntry) });
export const restoreOutput = z.object({ revision: revisionView, missing: z.array(z.string()) });

const objectId = { id: entityId() };
const revInput = z.strictObject({ ...objectId, rev: entityId().describe('Revision number (from 1)') });

const LABELS: Record<RevisionKind, string> = {
  data_source: 'data source',
  dataset: 'dataset',
  widget: 'widget',
  dashboard: 'dashboard',
};

function revisionProcedures(kind: RevisionKind, base: `/api/${string}`, tags: string[]) {
  const label = LABELS[kind];
  const read = `Access: whoever may read the ${label}.`;
  return {
    revisions: authedProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: `${base}/{id}/revisions`,
          summary: `Revisions of a ${label}`,
          description:
            `Every saved state, newest first: revision number, author, time and the change (created, saved, ` +
            `schema_saved, deployed with its deployment_id, restored, rolled_back). Paged from 0. ${read}`,
          tags,
        },
      })
      .input(z.strictObject({ ...objectId, page: pagedQuery.page, size: pagedQuery.size }))
      .output(revisionPage)
      .query(({ ctx, input }) => listObjectRevisions(ctx.deps, ctx.actor, kind, input.id, input)),

    revision: authedProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: `${base}/{id}/revisions/{rev}`,
          summary: `A ${label} as it was at a revision`,
          description:
            `The stored rows of that revision (a data source's secrets are never kept). 404 for a revision the ` +
            `${label} does not have. ${read}`,
          tags,
        },
      })
      .input(revInput)
      .output(revisionDetails)
      .query(({ ctx, input }) => getObjectRevision(ctx.deps, ctx.actor, kind, input.id, input.rev)),

    revisionDiff: authedProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: `${base}/{id}/revisions/{rev}/diff`,
          summary: `What changed in a ${label} between two revisions`,
          description:
            `The changed paths from revision {rev} to revision \`against\` (default: the current one), each ` +
            `added, removed or changed with its old and new value. ${read}`,
          tags,
        },
      })
      .input(revInput.extend({ against: entityId().optional().describe('The later revision (default: current)') }))
      .output(revisionDiff)
      .query(({ ctx, input }) => diffObjectRevisions(ctx.deps, ctx.actor, kind, input.id, input.rev, input.against)),

    revisionRestore: authedProcedure
      .meta({
        openapi: {
          method: 'POST',
          path: `${base}/{id}/revisions/{rev}/restore`,
          summary: `Restore a ${label} to a revision`,
          description:
            `No body. Writes the revision back (ids kept) and records it as a new revision (restored). What it ` +
            `names that no longer exists is not put back and is listed in \`missing\`` +
            (kind === 'data_source' ? '; the current password and other secrets are kept' : '') +
            `. Access: whoever may edit the ${label} (its owner).`,
          tags,
        },
      })
      .input(revInput)
      .output(restoreOutput)
      .mutation(({ ctx, input }) => restoreObjectRevision(ctx.deps, ctx.actor, kind, input.id, input.rev)),
  };
}

/** `revision.<kind>.*` over /trpc; over REST under each kind's own path (`/api/data-source/{id}/revisions` ...). */
export const revisionRouter = router({
  dataSource: router(revisionProcedures('data_source', '/api/data-source', ['Sources'])),
  dataset: router(revisionProcedures('dataset', '/api/dataset', ['Datasets'])),
  widget: router(revisionProcedures('widget', '/api/widget', ['Widgets'])),
  dashboard: router(revisionProcedures('dashboard', '/api/dashboard', ['Dashboards'])),
});
