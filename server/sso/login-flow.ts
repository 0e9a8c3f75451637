import crypto from 'node:crypto';
import { z } from 'zod';
import type { AppDeps } from '../app/deps';
import { sessionFor, type LoginResult } from '../auth/login';
import { clearLoginFailures, releaseLoginAttempt, reserveLoginAttempt } from '../auth/login-throttle';
import { AppError, badRequest, notFound, unauthorized } from '../kernel/errors';
import { readCachesChanged } from '../kernel/read-epoch';
import { isWireText } from '../kernel/validation';
import { createUserAccount, findUserByUsername, usernameText } from '../users/accounts';
import { callbackUrl, checkedRedirectUri, defaultEntityId, installationBaseUrl } from './base-url';
import { bindBrowser, sameBrowser } from './browser-binding';
import { SSO_MESSAGES } from './messages';
import { oidcAuthorizeUrl, oidcCallbackClaims } from './oidc';
import { oidcSettingsOf, openProviderSecrets, samlSettingsOf, type ProviderKind } from './provider-settings';
import { samlAcs, samlAuthorizeUrl, type SamlEndpoints } from './saml';
import {
  findProvider,
  insertLoginCode,
  insertLoginState,
  listProviderRows,
  lockAccountName,
  missingGroupIds,
  rememberAssertion,
  spendLoginCode,
  syncMappedGroups,
  takeLoginState,
  userIsActive,
  type SsoProviderRow,
} from './store';

/*
 * The browser SSO flow (all public, no token):
 *   GET /api/auth/sso/{providerId}/authorize -> 302 to the IdP, with a login state kept in sso_login_states (state
 *     stored hashed; OIDC nonce and PKCE verifier or the SAML request id; the checked redirect URI). The state is
 *     server-side rather than sealed in a cookie so that it is single-use on every node and dies with its provider.
 *   GET (OIDC) or POST (SAML ACS) /api/auth/sso/{providerId}/callback -> the state spent, the IdP's answer checked,
 *     the user matched, created or refused, the group mappings applied -> 302 to the redirect URI with `code`.
 *   POST /api/auth/sso/exchange -> the one-time code spent for exactly the result of POST /api/auth/login, in the
 *     browser that started the login only (browser-binding.ts).
 * SSO logins share the password login's throttle (by username and client address) and its refusals.
 */

const STATE_TTL_MS = 10 * 60_000;
const CODE_TTL_MS = 60_000;

const accountName = usernameText();
const randomText = () => crypto.randomBytes(32).toString('base64url');
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

export interface LoginPageProvider {
  id: number;
  name: string;
  kind: ProviderKind;
  authorize_url: string;
}

/** GET /api/auth/sso/providers: the enabled providers, each with where the login page sends the browser. */
export async function loginPageProviders(deps: AppDeps): Promise<LoginPageProvider[]> {
  let base: URL | null = null;
  try {
    base = await installationBaseUrl(deps);
  } catch {
    /* without a base URL the paths are relative */
  }
  const rows = await listProviderRows(deps.db, { enabledOnly: true });
  return rows.map((row) => {
    const path = `api/auth/sso/${row.id}/authorize`;
    return {
      id: row.id,
      name: row.name,
      kind: row.kind as ProviderKind,
      authorize_url: base ? new URL(path, base).toString() : `/${path}`,
    };
  });
}

async function enabledProvider(deps: AppDeps, id: number): Promise<SsoProviderRow> {
  const row = await findProvider(deps.db, id);
  if (!row) throw notFound(SSO_MESSAGES.providerNotFound(id));
  if (!row.enabled) throw badRequest(SSO_MESSAGES.providerDisabled);
  return row;
}

export function samlEndpoints(base: URL, row: SsoProviderRow): SamlEndpoints {
  return {
    entityId: samlSettingsOf(row).entity_id ?? defaultEntityId(base, row.id),
    acsUrl: callbackUrl(base, row.id),
  };
}

export interface LoginStart {
  /** The IdP address to redirect the browser to. */
  url: string;
  /** The browser binding cookie the redirect sets. */
  setCookie: string;
}

/** GET /api/auth/sso/{providerId}/authorize: where the browser goes, and the cookie that ties the login to it. */
export async function startSsoLogin(
  deps: AppDeps,
  providerId: number,
  redirectUri: string | undefined,
  cookieHeader: string | undefined,
): Promise<LoginStart> {
  const row = await enabledProvider(deps, providerId);
  const base = await installationBaseUrl(deps);
  const redirect = checkedRedirectUri(base, redirectUri);
  const secrets = openProviderSecrets(deps, row);
  const browser = bindBrowser(cookieHeader, base);
  const state = randomText();
  const stateRow = {
    providerId,
    stateHash: sha256(state),
    redirectUri: redirect,
    browserHash: browser.hash,
    expiresAt: new Date(Date.now() + STATE_TTL_MS),
  };
  if (row.kind === 'oidc') {
    const start = await oidcAuthorizeUrl(row, oidcSettingsOf(row), secrets, callbackUrl(base, providerId), state);
    await insertLoginState(deps.db, { ...stateRow, nonce: start.nonce, codeVerifier: start.codeVerifier });
    return { url: start.url, setCookie: browser.setCookie };
  }
  const start = await samlAuthorizeUrl(samlSettingsOf(row), secrets, samlEndpoints(base, row), state);
  await insertLoginState(deps.db, { ...stateRow, samlRequestId: start.requestId });
  return { url: start.url, setCookie: browser.setCookie };
}

/** The state of a callback, spent: an unknown, foreign, expired or reused one is a 401. */
async function spendState(deps: AppDeps, row: SsoProviderRow, state: string | undefined) {
  if (!state) throw unauthorized(SSO_MESSAGES.badState);
  const stateRow = await takeLoginState(deps.db, row.id, sha256(state));
  if (!stateRow) throw unauthorized(SSO_MESSAGES.badState);
  return stateRow;
}

/** GET /api/auth/sso/{providerId}/callback (OIDC): the redirect URI with the one-time code. */
export async function finishOidcLogin(
  deps: AppDeps,
  providerId: number,
  query: Record<string, string>,
  ip: string,
): Promise<string> {
  const row = await enabledProvider(deps, providerId);
  if (row.kind !== 'oidc') throw badRequest(SSO_MESSAGES.idpAnswerInvalid('провайдер не OIDC'));
  const stateRow = await spendState(deps, row, query.state);
  const base = await installationBaseUrl(deps);
  const current = new URL(callbackUrl(base, providerId));
  for (const [k, v] of Object.entries(query)) current.searchParams.set(k, v);
  const claims = await oidcCallbackClaims(row, oidcSettingsOf(row), openProviderSecrets(deps, row), current, {
    state: query.state,
    nonce: stateRow.nonce ?? '',
    codeVerifier: stateRow.codeVerifier ?? '',
  });
  return completeLogin(deps, row, claims, stateRow, ip);
}

/** POST /api/auth/sso/{providerId}/callback (SAML ACS): the redirect URI with the one-time code. */
export async function finishSamlLogin(
  deps: AppDeps,
  providerId: number,
  form: { SAMLResponse?: string; RelayState?: string },
  ip: string,
): Promise<string> {
  const row = await enabledProvider(deps, providerId);
  if (row.kind !== 'saml') throw badRequest(SSO_MESSAGES.idpAnswerInvalid('провайдер не SAML'));
  const stateRow = await spendState(deps, row, form.RelayState);
  if (!form.SAMLResponse) throw unauthorized(SSO_MESSAGES.idpAnswerInvalid('нет SAMLResponse'));
  const base = await installationBaseUrl(deps);
  const login = await samlAcs(
    samlSettingsOf(row),
    openProviderSecrets(deps, row),
    samlEndpoints(base, row),
    form.SAMLResponse,
    stateRow.samlRequestId ?? '',
  );
  if (!(await rememberAssertion(deps.db, row.id, login.assertionId, login.validUntil))) {
    throw unauthorized(SSO_MESSAGES.replayedAssertion);
  }
  return completeLogin(deps, row, login.profile, stateRow, ip);
}

const textsOf = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value])
    .filter((v): v is string | number => typeof v === 'string' || typeof v === 'number')
    .map((v) => String(v).trim())
    .filter((v) => v !== '');

/*
 * An account's name and address as POST /api/users would take them: an IdP's claim that would not pass (a NUL, a
 * malformed or over-long address) is left out of the new account rather than failing the login.
 */
const FULL_NAME = z.string().max(200).refine(isWireText);
const EMAIL = z.email().max(320).refine(isWireText);
const claimOf = (rule: z.ZodType<string>, value: unknown): string | undefined => {
  const text = textsOf(value)[0];
  return text !== undefined && rule.safeParse(text).success ? text : undefined;
};

const groupsClaimOf = (row: SsoProviderRow) =>
  row.kind === 'oidc' ? oidcSettingsOf(row).groups_claim : samlSettingsOf(row).groups_claim;

/**
 * The IdP has vouched for the identity: the account is matched by the username claim (created when the provider
 * allows it), refused when deactivated, its mapped groups brought in line, and a one-time code issued.
 */
async function completeLogin(
  deps: AppDeps,
  row: SsoProviderRow,
  claims: Record<string, unknown>,
  { redirectUri, browserHash }: { redirectUri: string; browserHash: string | null },
  ip: string,
): Promise<string> {
  const username = textsOf(claims[row.usernameClaim])[0];
  if (!username) throw unauthorized(SSO_MESSAGES.noUsername(row.usernameClaim));
  // The rule of POST /api/users, before any database work: a name with NUL would fail there, an overlong or spaced one
  // would become an account no administrator could have made.
  if (!accountName.safeParse(username).success) {
    throw new AppError('forbidden', SSO_MESSAGES.badUsername(row.usernameClaim));
  }
  const attempt = await reserveLoginAttempt(deps.db, username, ip);
  const idpGroups = textsOf(claims[groupsClaimOf(row)]);
  const code = randomText();
  let groupsChanged = false;
  try {
    groupsChanged = await deps.db.transaction(async (tx) => {
      // Two first logins of one new user at once (a double click, two tabs): the second finds the account the first
      // made instead of failing on the unique username.
      await lockAccountName(tx, username);
      let user = await findUserByUsername(tx, username);
      if (!user) {
        if (!row.autoCreateUsers) throw new AppError('forbidden', SSO_MESSAGES.noAccount(username));
        const missing = new Set(await missingGroupIds(tx, row.defaultGroupIds));
        ({ user } = await createUserAccount(tx, {
          username,
          accountType: 'sso',
          fullName: claimOf(FULL_NAME, claims.name) ?? '',
          email: claimOf(EMAIL, claims.email ?? claims.mail) ?? null,
          groupIds: row.defaultGroupIds.filter((id) => !missing.has(id)),
        }));
      }
      // Only SSO accounts are matched: an IdP whose user happens to be called «admin» must not become the local
      // administrator (a local account with the same name is someone else's until an administrator says otherwise).
      if (user.accountType !== 'sso') throw new AppError('forbidden', SSO_MESSAGES.notSsoAccount(username));
      if (!user.active) throw unauthorized(SSO_MESSAGES.accountDisabled);
      const changed = await syncMappedGroups(tx, row.id, user.id, idpGroups);
      await insertLoginCode(tx, {
        codeHash: sha256(code),
        providerId: row.id,
        userId: user.id,
        redirectUri,
        browserHash,
        expiresAt: new Date(Date.now() + CODE_TTL_MS),
      });
      return changed;
    });
  } catch (e) {
    // The IdP proved the identity: a refusal for the account's sake is not a guess against the address.
    if (e instanceof AppError) await releaseLoginAttempt(deps.db, attempt);
    throw e;
  }
  if (groupsChanged) readCachesChanged(deps);
  await clearLoginFailures(deps.db, username, ip);
  const target = new URL(redirectUri);
  target.searchParams.set('code', code);
  return target.toString();
}

/**
 * Whether a spent code may be traded here. A code is bound to the redirect URI it was delivered to; the catalogue's
 * exchange body is the code alone, so the binding is checked with what every exchange has: the redirect URI must
 * still lie under the installation's base URL (a base URL moved since the callback voids the code); a browser's
 * Origin header (sent with every script POST) must be the redirect URI's origin, so that a page of another site
 * holding a leaked code cannot trade it in the victim's browser; and redirect_uri, when a client sends it, must equal
 * it.
 */
function boundHere(redirectUri: string, base: URL, sent: string | undefined, origin: string | undefined): boolean {
  if (sent !== undefined && sent !== redirectUri) return false;
  if (origin !== undefined && origin !== new URL(redirectUri).origin) return false;
  try {
    return checkedRedirectUri(base, redirectUri) === redirectUri;
  } catch {
    return false;
  }
}

/**
 * POST /api/auth/sso/exchange: the code spent once (concurrent replays included) for the login result, in the browser
 * that started the login. A refused binding spends the code too: whoever tried it elsewhere has seen it.
 */
export async function exchangeSsoCode(
  deps: AppDeps,
  input: { code: string; redirect_uri?: string },
  request: { origin?: string; cookie?: string },
): Promise<LoginResult> {
  const base = await installationBaseUrl(deps);
  const outcome = await deps.db.transaction(async (tx) => {
    const spent = await spendLoginCode(tx, sha256(input.code));
    if (!spent) return 'bad' as const;
    if (!boundHere(spent.redirectUri, base, input.redirect_uri, request.origin)) return 'bad' as const;
    if (!sameBrowser(request.cookie, spent.browserHash)) return 'other-browser' as const;
    const provider = await findProvider(tx, spent.providerId);
    if (!provider?.enabled) return 'bad' as const;
    if (!(await userIsActive(tx, spent.userId))) return 'disabled' as const;
    return sessionFor(deps, tx, spent.userId);
  });
  if (outcome === 'bad') throw unauthorized(SSO_MESSAGES.badCode);
  if (outcome === 'other-browser') throw unauthorized(SSO_MESSAGES.otherBrowser);
  if (outcome === 'disabled') throw unauthorized(SSO_MESSAGES.accountDisabled);
  return outcome;
}
