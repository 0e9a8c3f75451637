import type { AppDeps } from '../app/deps';
import { badRequest } from '../kernel/errors';
import { getInstallationSettings } from '../service/installation';
import { SSO_MESSAGES } from './messages';

/**
 * Every address of the SSO flow hangs off the installation's base URL (base_url of the installation settings, or
 * PUBLIC_BASE_URL): the callback the IdP returns to and the page the browser lands on with its one-time code. A
 * redirect URI anywhere else is refused, so that the flow cannot hand a code to a foreign site (open redirect).
 */
export async function installationBaseUrl(deps: AppDeps): Promise<URL> {
  const { base_url } = await getInstallationSettings(deps);
  if (!base_url) throw badRequest(SSO_MESSAGES.noBaseUrl);
  let url: URL;
  try {
    url = new URL(base_url);
  } catch {
    throw badRequest(SSO_MESSAGES.noBaseUrl);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  url.search = '';
  url.hash = '';
  return url;
}

/** GET/POST /api/auth/sso/{providerId}/callback under the base URL: the OIDC redirect_uri and the SAML ACS URL. */
export const callbackUrl = (base: URL, providerId: number) =>
  new URL(`api/auth/sso/${providerId}/callback`, base).toString();

/** The default SAML entity id of the platform for one provider. */
export const defaultEntityId = (base: URL, providerId: number) =>
  new URL(`api/auth/sso/${providerId}`, base).toString();

/**
 * The redirect URI of GET /api/auth/sso/{providerId}/authorize (default: the base URL itself), accepted only on the
 * base URL's origin and under its path. Credentials in it and fragments are refused.
 */
export function checkedRedirectUri(base: URL, redirectUri: string | undefined): string {
  if (redirectUri === undefined || redirectUri === '') return base.toString();
  let url: URL;
  try {
    url = new URL(redirectUri, base);
  } catch {
    throw badRequest(SSO_MESSAGES.foreignRedirect);
  }
  const underBase =
    url.origin === base.origin &&
    (url.pathname + '/').startsWith(base.pathname) &&
    url.username === '' &&
    url.password === '' &&
    url.hash === '' &&
    !url.pathname.includes('//');
  if (!underBase) throw badRequest(SSO_MESSAGES.foreignRedirect);
  return url.toString();
}
