import type { AppDeps } from '../app/deps';
import { badRequest } from '../kernel/errors';
import { installationBaseUrl } from './base-url';
import { samlEndpoints } from './login-flow';
import { SSO_MESSAGES } from './messages';
import { testOidcProvider } from './oidc';
import { oidcSettingsOf, openProviderSecrets, samlSettingsOf } from './provider-settings';
import { providerOr404 } from './providers';
import { idpMetadataOf, samlSpMetadata } from './saml';

/**
 * POST /api/sso-providers/{id}/test: fetches the OIDC discovery document or the SAML IdP metadata now (no cache)
 * and answers whether a login could start, with what is wrong in Russian.
 */
export async function testProvider(deps: AppDeps, id: number): Promise<{ ok: boolean; message: string }> {
  const row = await providerOr404(deps, id);
  if (row.kind === 'oidc') {
    const problem = await testOidcProvider(oidcSettingsOf(row), openProviderSecrets(deps, row));
    return problem
      ? { ok: false, message: SSO_MESSAGES.idpUnreachable(problem) }
      : { ok: true, message: SSO_MESSAGES.testOk };
  }
  try {
    const meta = await idpMetadataOf(samlSettingsOf(row), { fresh: true });
    return { ok: true, message: `${SSO_MESSAGES.testOk} (IdP ${meta.entityId})` };
  } catch (e) {
    return { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
}

/** GET /api/sso-providers/{id}/sp-metadata: the SAML SP metadata XML to load into the IdP. */
export async function spMetadata(deps: AppDeps, id: number): Promise<string> {
  const row = await providerOr404(deps, id);
  if (row.kind !== 'saml') throw badRequest(SSO_MESSAGES.samlOnly);
  const base = await installationBaseUrl(deps);
  return samlSpMetadata(samlSettingsOf(row), openProviderSecrets(deps, row), samlEndpoints(base, row));
}
