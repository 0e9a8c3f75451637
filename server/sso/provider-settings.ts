import type { AppDeps } from '../app/deps';
import { invalid, type FieldErrors } from '../kernel/errors';
import { isAllowedIdpAddress } from './idp-address';
import { parseIdpMetadata } from './idp-metadata';
import { SSO_MESSAGES } from './messages';
import { createSelfSignedCertificate } from './self-signed-cert';
import type { SsoProviderRow } from './store';

/*
 * The settings of a provider as stored: what may be shown lives in `settings` (jsonb), the client secret and the SP
 * signing key only in the secret box (`secrets`). A SAML provider gets its own SP signing key and self-signed
 * certificate when it is created; they stay for its life (the IdP pins the certificate).
 */

export const PROVIDER_KINDS = ['oidc', 'saml'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The settings of POST/PUT /api/sso-providers (snake_case wire names; which ones count depends on the kind). */
export interface ProviderSettingsInput {
  issuer_url?: string;
  client_id?: string;
  /** Omitted on update: unchanged; null: cleared (a public client with PKCE only). */
  client_secret?: string | null;
  scopes?: string[];
  idp_metadata_url?: string;
  idp_metadata_xml?: string;
  entity_id?: string;
  groups_claim?: string;
}

export interface OidcSettings {
  issuer_url: string;
  client_id: string;
  scopes: string[];
  groups_claim: string;
}

export interface SamlSettings {
  idp_metadata_url: string | null;
  idp_metadata_xml: string | null;
  entity_id: string | null;
  groups_claim: string;
  sp_certificate: string;
}

export interface ProviderSecrets {
  client_secret?: string;
  sp_private_key?: string;
}

export const DEFAULT_USERNAME_CLAIM: Record<ProviderKind, string> = { oidc: 'preferred_username', saml: 'nameID' };
const DEFAULT_SCOPES = ['openid', 'profile', 'email'];
const BLANK = 'must not be blank';

const isHttpUrl = (s: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(s).protocol);
  } catch {
    return false;
  }
};

const filled = (s: string | undefined): s is string => s !== undefined && s.trim() !== '';

/** Stored settings and secrets for a create (previous undefined) or an update that sends settings. */
export async function buildSettings(
  kind: ProviderKind,
  input: ProviderSettingsInput,
  previous?: { settings: Record<string, unknown>; secrets: ProviderSecrets },
  providerName = 'sso',
): Promise<{ settings: OidcSettings | SamlSettings; secrets: ProviderSecrets }> {
  const errors: FieldErrors = {};
  if (kind === 'oidc') {
    if (!filled(input.issuer_url)) errors['settings.issuerUrl'] = BLANK;
    else if (!isHttpUrl(input.issuer_url)) errors['settings.issuerUrl'] = 'Ожидается адрес http(s)';
    if (!filled(input.client_id)) errors['settings.clientId'] = BLANK;
    if (Object.keys(errors).length) throw invalid(errors);
    const scopes = input.scopes?.length ? [...new Set(input.scopes)] : DEFAULT_SCOPES;
    const secrets: ProviderSecrets = {};
    const secret = input.client_secret === undefined ? previous?.secrets.client_secret : input.client_secret;
    if (secret) secrets.client_secret = secret;
    return {
      settings: {
        issuer_url: input.issuer_url!.trim(),
        client_id: input.client_id!.trim(),
        scopes: scopes.includes('openid') ? scopes : ['openid', ...scopes],
        groups_claim: input.groups_claim?.trim() || 'groups',
      },
      secrets,
    };
  }
  const url = input.idp_metadata_url?.trim() || null;
  const xml = input.idp_metadata_xml?.trim() || null;
  if (!url && !xml) errors['settings.idpMetadataUrl'] = 'Нужен адрес или XML метаданных IdP';
  if (url && !isHttpUrl(url)) errors['settings.idpMetadataUrl'] = 'Ожидается адрес http(s)';
  else if (url && !isAllowedIdpAddress(new URL(url))) errors['settings.idpMetadataUrl'] = SSO_MESSAGES.insecureIdpUrl;
  if (xml) {
    const parsed = parseIdpMetadata(xml);
    if ('error' in parsed) errors['settings.idpMetadataXml'] = parsed.error;
  }
  if (Object.keys(errors).length) throw invalid(errors);
  const kept = previous?.settings as Partial<SamlSettings> | undefined;
  let certificate = kept?.sp_certificate;
  let key = previous?.secrets.sp_private_key;
  if (!certificate || !key) {
    const pair = await createSelfSignedCertificate(`${providerName} SAML SP`);
    certificate = pair.certificatePem;
    key = pair.privateKeyPem;
  }
  return {
    settings: {
      idp_metadata_url: url,
      idp_metadata_xml: xml,
      entity_id: input.entity_id?.trim() || null,
      groups_claim: input.groups_claim?.trim() || 'groups',
      sp_certificate: certificate,
    },
    secrets: { sp_private_key: key },
  };
}

export function openProviderSecrets(deps: Pick<AppDeps, 'secretBox'>, row: SsoProviderRow): ProviderSecrets {
  return row.secrets ? deps.secretBox.open<ProviderSecrets>(row.secrets) : {};
}

export const oidcSettingsOf = (row: SsoProviderRow) => row.settings as OidcSettings;
export const samlSettingsOf = (row: SsoProviderRow) => row.settings as SamlSettings;
