import { z } from 'zod';
import { defineRawRoute, type RawScope } from '../../adapters/rest/raw-route';
import type { Actor } from '../../server/auth/actor';
import type { AppDeps } from '../../server/app/deps';
import { AppError } from '../../server/kernel/errors';
import { finishOidcLogin, finishSamlLogin, startSsoLogin } from '../../server/sso/login-flow';
import { spMetadata } from '../../server/sso/provider-checks';
import { entityIdText, wireString } from '../common';

/*
 * The redirects of the browser SSO flow (public, no token) and the SAML SP metadata (system administrator): raw
 * routes, since they answer a 302 or XML instead of the envelope. A failure still answers the error envelope: no
 * redirect, no code, no session.
 */

const tags = ['Login and providers'];
const providerIdParam = z.strictObject({ providerId: entityIdText() });
const idParam = z.strictObject({ id: entityIdText() });
const providerIdParameter = {
  name: 'providerId',
  in: 'path',
  required: true,
  schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  description: 'SSO provider id',
};
// A redirect has no 2xx answer: `default` names the error envelope every failure answers instead of a redirect.
const redirect = {
  '302': {
    description: 'Redirect',
    headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } },
  },
  default: {
    description: 'Any refusal: the error envelope, no redirect, no code, no session',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
  },
};

/** GET authorize also sets the browser binding cookie (server/sso/browser-binding.ts). */
const authorizeRedirect = {
  ...redirect,
  '302': {
    ...redirect['302'],
    headers: {
      ...redirect['302'].headers,
      'Set-Cookie': {
        description:
          'analytics_sso_browser: HttpOnly, SameSite=Lax, Path=api/auth/sso under the base URL path ' +
          '(/api/auth/sso, or /analytics/api/auth/sso for a base URL ending in /analytics/), Max-Age=600',
        schema: { type: 'string' },
      },
    },
  },
};

const queryText = (query: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries((query ?? {}) as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    ),
  );

const authorize = defineRawRoute<AppDeps, Actor>({
  method: 'GET',
  path: '/api/auth/sso/{providerId}/authorize',
  auth: 'public',
  doc: {
    operationId: 'sso-authorize',
    summary: 'Start SSO login at the identity provider',
    description:
      'Redirects (302) to the IdP. redirectUri (default: the installation base URL) must lie under the base URL; ' +
      'the callback sends the browser there with a one-time `code` for POST /api/auth/sso/exchange. Sets an ' +
      'HttpOnly cookie (path: api/auth/sso under the base URL path, e.g. /analytics/api/auth/sso) that ties the ' +
      'login to this browser: only a request carrying it may trade the code.',
    tags,
    parameters: [
      providerIdParameter,
      { name: 'redirectUri', in: 'query', required: false, schema: { type: 'string' }, description: 'Where to land' },
    ],
    responses: authorizeRedirect,
  },
  handler: async (req, reply, { deps }) => {
    const { providerId } = providerIdParam.parse(req.params);
    const { redirectUri } = z.object({ redirectUri: wireString().max(2000).optional() }).parse(req.query ?? {});
    const start = await startSsoLogin(deps, providerId, redirectUri, req.headers.cookie);
    return reply.header('set-cookie', start.setCookie).redirect(start.url, 302);
  },
});

const oidcCallback = defineRawRoute<AppDeps, Actor>({
  method: 'GET',
  path: '/api/auth/sso/{providerId}/callback',
  auth: 'public',
  doc: {
    operationId: 'sso-callback-oidc',
    summary: 'OIDC redirect back from the provider',
    description: 'Checks state, PKCE, nonce and the ID token, then redirects (302) to the redirect URI with `code`.',
    tags,
    parameters: [
      providerIdParameter,
      {
        name: 'code',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: 'Authorization code from the IdP',
      },
      {
        name: 'state',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: 'The state the login started with',
      },
    ],
    responses: redirect,
  },
  handler: async (req, reply, { deps }) => {
    const { providerId } = providerIdParam.parse(req.params);
    return reply.redirect(await finishOidcLogin(deps, providerId, queryText(req.query), req.ip), 302);
  },
});

/** The ACS takes the form the IdP's browser POST carries (application/x-www-form-urlencoded), on its route only. */
const formScope: RawScope<AppDeps> = {
  async setup(scope) {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 2 * 1024 * 1024 },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
  },
};

const samlCallback = defineRawRoute<AppDeps, Actor>({
  method: 'POST',
  path: '/api/auth/sso/{providerId}/callback',
  auth: 'public',
  scope: formScope,
  doc: {
    operationId: 'sso-callback-saml',
    summary: 'SAML assertion consumer (ACS)',
    description:
      'Takes the signed SAMLResponse (signature, audience, destination, time window, InResponseTo and assertion replay ' +
      'checked) and redirects (302) to the redirect URI with `code`.',
    tags,
    parameters: [providerIdParameter],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: ['SAMLResponse', 'RelayState'],
            properties: { SAMLResponse: { type: 'string' }, RelayState: { type: 'string' } },
          },
        },
      },
    },
    responses: redirect,
  },
  handler: async (req, reply, { deps }) => {
    const { providerId } = providerIdParam.parse(req.params);
    const form = queryText(req.body);
    return reply.redirect(await finishSamlLogin(deps, providerId, form, req.ip), 302);
  },
});

const samlSpMetadata = defineRawRoute<AppDeps, Actor>({
  method: 'GET',
  path: '/api/sso-providers/{id}/sp-metadata',
  auth: 'bearer',
  doc: {
    operationId: 'sso-provider-sp-metadata',
    summary: 'SAML service-provider metadata for the IdP',
    description: 'Raw XML: entity id, ACS URL (= the callback) and the signing certificate. System administrator.',
    tags,
    parameters: [{ ...providerIdParameter, name: 'id' }],
    responses: {
      '200': {
        description: 'SP metadata',
        content: { 'application/samlmetadata+xml': { schema: { type: 'string' } } },
      },
    },
  },
  handler: async (req, reply, { deps, actor }) => {
    if (!actor.isSysadmin) throw new AppError('forbidden');
    const { id } = idParam.parse(req.params);
    const xml = await spMetadata(deps, id);
    return reply.code(200).type('application/samlmetadata+xml; charset=utf-8').send(xml);
  },
});

export const ssoRawRoutes = [authorize, oidcCallback, samlCallback, samlSpMetadata];
