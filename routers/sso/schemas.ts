import { z } from 'zod';
import { PROVIDER_KINDS } from '../../server/sso/provider-settings';
import { entityId, nonBlank, wireString } from '../common';

const id = entityId();
const providerId = entityId().describe('Identity provider id');

export const providerIdInput = z.strictObject({ id: providerId });
const url = wireString().trim().max(2000);

export const loginProvidersOutput = z.array(
  z.object({
    id: z.number().int(),
    name: z.string(),
    kind: z.enum(PROVIDER_KINDS),
    authorize_url: z.string().describe('Where the login page sends the browser (GET, 302 to the IdP)'),
  }),
);

export const exchangeInput = z.strictObject({
  code: nonBlank(200).describe('The one-time code the callback appended to the redirect URI'),
  redirect_uri: url.optional().describe('When sent, must equal the redirect URI the login started with'),
});

const providerSettings = z.strictObject({
  issuer_url: url.optional().describe('OIDC: issuer (discovery at /.well-known/openid-configuration)'),
  client_id: wireString().trim().max(500).optional().describe('OIDC: client id'),
  client_secret: wireString()
    .max(2000)
    .nullable()
    .optional()
    .describe('OIDC: client secret; omitted on update = unchanged, null = none (public client with PKCE)'),
  scopes: z.array(nonBlank(100)).max(50).optional().describe('OIDC: scopes (default openid profile email)'),
  idp_metadata_url: url.optional().describe('SAML: where the IdP metadata is fetched'),
  idp_metadata_xml: wireString()
    .max(1024 * 1024)
    .optional()
    .describe('SAML: the IdP metadata itself'),
  entity_id: url.optional().describe('SAML: entity id of the platform (default {base_url}/api/auth/sso/{id})'),
  groups_claim: wireString()
    .trim()
    .max(200)
    .optional()
    .describe('Claim or attribute with the IdP groups (default groups)'),
});

const providerFields = {
  name: nonBlank(200),
  kind: z.enum(PROVIDER_KINDS),
  enabled: z.boolean().optional(),
  settings: providerSettings,
  username_claim: wireString()
    .trim()
    .max(200)
    .optional()
    .describe('Claim or attribute matched with the username (default preferred_username; SAML nameID)'),
  auto_create_users: z.boolean().optional().describe('Create an account (type sso) at the first login'),
  default_group_ids: z.array(id).max(100).optional().describe('Groups of an account created at its first login'),
};

export const createProviderInput = z.strictObject(providerFields);
export const updateProviderInput = z.strictObject({
  id: providerId,
  ...z.object(providerFields).partial().shape,
});

export const providerView = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: z.enum(PROVIDER_KINDS),
  enabled: z.boolean(),
  settings: z.record(z.string(), z.unknown()).describe('Secrets never shown: client_secret_set says one is stored'),
  username_claim: z.string(),
  auto_create_users: z.boolean(),
  default_group_ids: z.array(z.number().int()),
  callback_url: z.string().nullable().describe('OIDC redirect URI / SAML ACS URL to register at the IdP'),
  created_at: z.string(),
  updated_at: z.string(),
});
export const providerListOutput = z.array(providerView);

export const testOutput = z.object({ ok: z.boolean(), message: z.string() });

const mapping = z.strictObject({ idp_group: nonBlank(500), group_id: id });
export const groupMappingsOutput = z.object({
  mappings: z.array(z.object({ idp_group: z.string(), group_id: z.number().int() })),
});
export const setGroupMappingsInput = z.strictObject({ id: providerId, mappings: z.array(mapping).max(1000) });
