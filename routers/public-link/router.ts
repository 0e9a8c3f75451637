import { publicLinkProcedure, router } from '../trpc';
import {
  publicDashboard,
  publicFieldValues,
  publicWidget,
  publicWidgetData,
} from '../../server/public-link/public-link';
import { shareLinkState, unlockShareLink } from '../../server/share-links/link-access';
import { widgetDataOutput } from '../widgets/schemas';
import {
  fieldValuesInput,
  fieldValuesOutput,
  linkStateOutput,
  publicDashboardOutput,
  publicWidgetOutput,
  tokenInput,
  unlockInput,
  unlockOutput,
  widgetDataInput,
  widgetInput,
} from './schemas';

/*
 * The public viewer of a share link: no Authorization header (a Bearer token, if sent, is ignored and widens
 * nothing); the link token in the path, and for a password link the grant of /unlock in X-Share-Grant. An unknown,
 * rotated or revoked token, or one of a deleted dashboard, answers one and the same 404.
 */

const tags = ['Public links'];
const ACCESS =
  'Access: public (share token); a password link needs X-Share-Grant from /unlock. Data is read with the rights of the link owner (row- and column-level security included).';
const base = '/api/public/link/{token}';

export const publicLinkRouter = router({
  get: publicLinkProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: base,
        summary: 'Link state for the viewer',
        description:
          'status (active, suspended, expired), password_required, unlocked, and the dashboard name once the link may be viewed. An unknown, rotated or revoked link: 404. Access: public (share token).',
        tags,
      },
    })
    .input(tokenInput)
    .output(linkStateOutput)
    .query(({ ctx, input }) => shareLinkState(ctx.deps, input.token, ctx.shareGrant)),

  dashboard: publicLinkProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/dashboard`,
        summary: 'Dashboard layout, read-only',
        description: `Tabs, tiles, selectors (with the dataset of their field), parameters and the widgets it shows. Suspended or expired: 403; password link without a valid grant: 401. ${ACCESS}`,
        tags,
      },
    })
    .input(tokenInput)
    .output(publicDashboardOutput)
    .query(({ ctx, input }) => publicDashboard(ctx.deps, input.token, ctx.shareGrant)),

  widget: publicLinkProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/widget/{id}`,
        summary: 'Widget of the shared dashboard',
        description: `Only widgets on that dashboard (any other id: 404): name, kind, dataset and shelves. ${ACCESS}`,
        tags,
      },
    })
    .input(widgetInput)
    .output(publicWidgetOutput)
    .query(({ ctx, input }) => publicWidget(ctx.deps, input.token, ctx.shareGrant, input.id)),

  widgetData: publicLinkProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/widget/{id}/data`,
        summary: 'Widget data for the viewer',
        description: `The saved shelves; filters only as values of the dashboard's selectors, parameters only the dashboard's; sorts by the widget's own fields; page, page_size. The answer is as POST /api/widget/{id}/data. ${ACCESS}`,
        tags,
      },
    })
    .input(widgetDataInput)
    .output(widgetDataOutput)
    .mutation(({ ctx, input: { token, id, ...body } }) => publicWidgetData(ctx.deps, token, ctx.shareGrant, id, body)),

  fieldValues: publicLinkProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${base}/dataset/{id}/field-values`,
        summary: 'Field values for viewer filters',
        description: `Distinct values of a field a selector of the dashboard filters on (query fieldId, query, limit); any other dataset or field: 404. ${ACCESS}`,
        tags,
      },
    })
    .input(fieldValuesInput)
    .output(fieldValuesOutput)
    .query(({ ctx, input: { token, id, ...query } }) => publicFieldValues(ctx.deps, token, ctx.shareGrant, id, query)),

  unlock: publicLinkProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/unlock`,
        summary: 'Unlock a password-protected link',
        description:
          'password; data: grant (send it as X-Share-Grant) and expires_at. Wrong password: 401; after 5 failures in a minute from one address: 429 with Retry-After. Rotation, suspension, revocation or a password change end the grant. Access: public (share token).',
        tags,
      },
    })
    .input(unlockInput)
    .output(unlockOutput)
    .mutation(({ ctx, input }) => unlockShareLink(ctx.deps, input.token, input.password, ctx.ip)),
});
