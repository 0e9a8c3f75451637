import { z } from 'zod';
import { publicProcedure, router } from '../trpc';
import { exchangeSsoCode, loginPageProviders } from '../../server/sso/login-flow';
import { loginOutput } from '../auth/schemas';
import { exchangeInput, loginProvidersOutput } from './schemas';

/*
 * The JSON half of the browser SSO flow, public (no token). The redirects (authorize, OIDC callback, SAML ACS) are
 * raw routes in raw.ts.
 */

const tags = ['Login and providers'];

export const ssoRouter = router({
  listProviders: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/auth/sso/providers',
        summary: 'Enabled SSO providers for the login page',
        description:
          'Each item: id, name, kind (oidc, saml) and authorize_url, where the login page sends the browser. Access: public, no token.',
        tags,
        protect: false,
      },
    })
    .input(z.void())
    .output(loginProvidersOutput)
    .query(({ ctx }) => loginPageProviders(ctx.deps)),

  exchange: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/sso/exchange',
        summary: 'Trade the one-time SSO code for session tokens (the login result)',
        description:
          'The code the SSO callback appended to the redirect URI: valid for one minute, once, and only while its provider ' +
          'is enabled. It is bound to the redirect URI it was delivered to: that URI must still lie under the ' +
          "installation's base URL, a browser's Origin header must be its origin, and redirect_uri, when sent, must " +
          'equal it. The request must carry the cookie GET /api/auth/sso/{providerId}/authorize set in the same ' +
          'browser (401 otherwise). A refused code is spent. Answers exactly what ' +
          'POST /api/auth/login answers. Access: public, no token.',
        tags,
        protect: false,
      },
    })
    .input(exchangeInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => exchangeSsoCode(ctx.deps, input, { origin: ctx.origin, cookie: ctx.cookie })),
});
