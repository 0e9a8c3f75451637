/*
 * Where the platform fetches what it trusts an IdP by (the OIDC discovery document and keys, the SAML metadata with
 * the signing certificates): https only, so that no one on the path can swap the keys. Plain http is allowed on the
 * loopback interface alone, for a local IdP in development and tests.
 */

export const isLoopback = (url: URL) => ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);

/** Whether the platform may fetch from this IdP address (https, or http on loopback). */
export const isAllowedIdpAddress = (url: URL) =>
  url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url));
