import { defineRawRoute } from '../../adapters/rest/raw-route';
import type { Actor } from '../../server/auth/actor';
import type { AppDeps } from '../../server/app/deps';
import { notFound } from '../../server/kernel/errors';
import { viewerAsset } from '../../server/public-link/page-assets';

/*
 * The viewer page of a share link, outside /api: GET /s/{token} (the page; the same for every token, it asks the
 * public viewer API for the rest) and GET /s/assets/{name} (its script, styles, the chart module and ECharts). Raw
 * routes without authentication; they are pages, not API operations, so they are not in the API document.
 */

// The page runs only its own scripts and talks only to this origin. Inline styles: ECharts' tooltips set them.
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'",
  // The token is in the address: it must not leave with a Referer.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-robots-tag': 'noindex, nofollow',
};

const page = defineRawRoute<AppDeps, Actor>({
  method: 'GET',
  path: '/s/{token}',
  auth: 'public',
  doc: { tags: ['Public links'], summary: 'Viewer page of a share link' },
  async handler(_req, reply) {
    const asset = await viewerAsset('index.html')!;
    return reply
      .headers({ ...PAGE_HEADERS, 'cache-control': 'no-store' })
      .type(asset.type)
      .send(asset.body);
  },
});

const assets = defineRawRoute<AppDeps, Actor>({
  method: 'GET',
  path: '/s/assets/{name}',
  auth: 'public',
  doc: { tags: ['Public links'], summary: 'Script, styles and chart library of the viewer page' },
  async handler(req, reply) {
    const found = viewerAsset((req.params as { name: string }).name);
    if (!found) throw notFound('Файл не найден');
    const asset = await found;
    return reply
      .headers({ 'x-content-type-options': 'nosniff', 'cache-control': 'public, max-age=300' })
      .type(asset.type)
      .send(asset.body);
  },
});

/** Registered beside the raw routes, but not documented (they are not API operations). */
export const viewerPageRoutes = [page, assets];
