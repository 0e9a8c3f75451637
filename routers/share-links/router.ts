import { shareLinkProcedure, router } from '../trpc';
import {
  activateShareLink,
  createShareLink,
  listShareLinks,
  revokeShareLink,
  rotateShareLink,
  suspendShareLink,
  updateShareLinkSettings,
} from '../../server/share-links/share-links';
import {
  createShareLinkInput,
  dashboardLinksInput,
  linkInput,
  shareLinkList,
  shareLinkView,
  updateShareLinkInput,
} from './schemas';

const tags = ['Public links'];
const OWNER =
  'Access: owner of the dashboard (the author, a user or group with the edit right, or Администратор of its workspace).';
const base = '/api/dashboard/{id}/share-links';

export const shareLinkRouter = router({
  list: shareLinkProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: base,
        summary: 'Share links of a dashboard',
        description: `Links that are not revoked, oldest first: link_id, name, url, status (active, suspended, expired), password_protected, expires_at. ${OWNER}`,
        tags,
      },
    })
    .input(dashboardLinksInput)
    .output(shareLinkList)
    .query(async ({ ctx, input }) => ({ content: await listShareLinks(ctx.deps, ctx.actor, input.id) })),

  create: shareLinkProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: base,
        summary: 'Issue a share link',
        description: `A random address of 256 bits (stored hashed); name, optional password and expiry. The answer carries url and token. The link shows the dashboard with the rights of the user who issues it. ${OWNER}`,
        tags,
      },
    })
    .input(createShareLinkInput)
    .output(shareLinkView)
    .mutation(({ ctx, input: { id, ...body } }) => createShareLink(ctx.deps, ctx.actor, id, body)),

  update: shareLinkProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: `${base}/{linkId}`,
        summary: 'Change a share link',
        description: `Name, password (left out: unchanged; null removes it) and expiry (left out: unchanged; null: never). A new or removed password ends every grant of the link. ${OWNER}`,
        tags,
      },
    })
    .input(updateShareLinkInput)
    .output(shareLinkView)
    .mutation(({ ctx, input: { id, linkId, ...body } }) =>
      updateShareLinkSettings(ctx.deps, ctx.actor, id, linkId, body),
    ),

  revoke: shareLinkProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${base}/{linkId}`,
        summary: 'Revoke a share link',
        description: `Revoked for good: its address and grants stop at once, and it is gone from the list (then 404). ${OWNER}`,
        tags,
      },
    })
    .input(linkInput)
    .output(shareLinkView)
    .mutation(({ ctx, input }) => revokeShareLink(ctx.deps, ctx.actor, input.id, input.linkId)),

  suspend: shareLinkProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{linkId}/suspend`,
        summary: 'Suspend a share link',
        description: `The viewer sees only the state «suspended»; grants end. Suspending a suspended link changes nothing. ${OWNER}`,
        tags,
      },
    })
    .input(linkInput)
    .output(shareLinkView)
    .mutation(({ ctx, input }) => suspendShareLink(ctx.deps, ctx.actor, input.id, input.linkId)),

  activate: shareLinkProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{linkId}/activate`,
        summary: 'Make a suspended link active again',
        description: `An expired link stays expired until PUT moves its expiry. ${OWNER}`,
        tags,
      },
    })
    .input(linkInput)
    .output(shareLinkView)
    .mutation(({ ctx, input }) => activateShareLink(ctx.deps, ctx.actor, input.id, input.linkId)),

  rotate: shareLinkProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{linkId}/rotate`,
        summary: 'Change the link address',
        description: `A new token and url; the old address and every grant stop working at once. ${OWNER}`,
        tags,
      },
    })
    .input(linkInput)
    .output(shareLinkView)
    .mutation(({ ctx, input }) => rotateShareLink(ctx.deps, ctx.actor, input.id, input.linkId)),
});
