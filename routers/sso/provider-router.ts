import { router, sysadminProcedure } from '../trpc';
import { testProvider } from '../../server/sso/provider-checks';
import {
  createProvider,
  deleteProvider,
  getGroupMappings,
  getProvider,
  listProviders,
  setGroupMappings,
  updateProvider,
} from '../../server/sso/providers';
import { deletedOutput } from '../common';
import { z } from 'zod';
import {
  createProviderInput,
  groupMappingsOutput,
  providerIdInput,
  providerListOutput,
  providerView,
  setGroupMappingsInput,
  testOutput,
  updateProviderInput,
} from './schemas';

/* Identity provider setup, system administrators only. The SAML SP metadata (raw XML) is in raw.ts. */

const tags = ['Login and providers'];

export const ssoProviderRouter = router({
  list: sysadminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/sso-providers',
        summary: 'List configured identity providers',
        description:
          'All identity providers, enabled or not; secrets masked (client_secret_set). Access: system administrator.',
        tags,
      },
    })
    .input(z.void())
    .output(providerListOutput)
    .query(({ ctx }) => listProviders(ctx.deps)),

  create: sysadminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/sso-providers',
        summary: 'Add an OIDC or SAML provider',
        description:
          'OIDC: issuer_url, client_id, client_secret, scopes; SAML: idp_metadata_url or idp_metadata_xml, entity_id (an SP signing key and certificate are made for it). username_claim, groups_claim, auto_create_users, default_group_ids. Access: system administrator.',
        tags,
      },
    })
    .input(createProviderInput)
    .output(providerView)
    .mutation(({ ctx, input }) => createProvider(ctx.deps, input)),

  get: sysadminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/sso-providers/{id}',
        summary: 'Provider details, secrets masked',
        description:
          'Settings without secrets (client_secret_set says one is stored) and callback_url to register at the IdP. Access: system administrator.',
        tags,
      },
    })
    .input(providerIdInput)
    .output(providerView)
    .query(({ ctx, input }) => getProvider(ctx.deps, input.id)),

  update: sysadminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/sso-providers/{id}',
        summary: 'Change a provider (omitted fields and secrets unchanged)',
        description:
          'Fields not sent keep their value; settings sent replace the stored ones, except an omitted client_secret (null clears it). The kind cannot change. Access: system administrator.',
        tags,
      },
    })
    .input(updateProviderInput)
    .output(providerView)
    .mutation(({ ctx, input: { id, ...change } }) => updateProvider(ctx.deps, id, change)),

  delete: sysadminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/sso-providers/{id}',
        summary: 'Remove a provider (users keep their accounts)',
        description:
          'Its login states, one-time codes and group mappings go with it; accounts made through it stay. Access: system administrator.',
        tags,
      },
    })
    .input(providerIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteProvider(ctx.deps, input.id)),

  test: sysadminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/sso-providers/{id}/test',
        summary: 'Check the discovery document or the IdP metadata',
        description:
          'Fetches the OIDC discovery document or the SAML IdP metadata now and answers ok with a message (what is wrong when not ok). Access: system administrator.',
        tags,
      },
    })
    .input(providerIdInput)
    .output(testOutput)
    .mutation(({ ctx, input }) => testProvider(ctx.deps, input.id)),

  getGroupMappings: sysadminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/sso-providers/{id}/group-mappings',
        summary: 'IdP group to platform group mapping',
        description: 'The list of {idp_group, group_id}. Access: system administrator.',
        tags,
      },
    })
    .input(providerIdInput)
    .output(groupMappingsOutput)
    .query(({ ctx, input }) => getGroupMappings(ctx.deps, input.id)),

  setGroupMappings: sysadminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/sso-providers/{id}/group-mappings',
        summary: 'Replace the group mapping (whole list; applied at each SSO login)',
        description:
          'At each SSO login through the provider the user is added to the mapped groups of their IdP groups and removed from the other mapped groups; unmapped groups are left alone. Access: system administrator.',
        tags,
      },
    })
    .input(setGroupMappingsInput)
    .output(groupMappingsOutput)
    .mutation(({ ctx, input }) => setGroupMappings(ctx.deps, input.id, input.mappings)),
});
