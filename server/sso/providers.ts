import type { AppDeps } from '../app/deps';
import { isUniqueViolation } from '../kernel/db-errors';
import { AppError, badRequest, invalid, notFound } from '../kernel/errors';
import { callbackUrl, installationBaseUrl } from './base-url';
import { SSO_MESSAGES } from './messages';
import {
  buildSettings,
  DEFAULT_USERNAME_CLAIM,
  oidcSettingsOf,
  openProviderSecrets,
  samlSettingsOf,
  type ProviderKind,
  type ProviderSettingsInput,
} from './provider-settings';
import {
  deleteProviderRow,
  findProvider,
  groupMappingRows,
  insertProvider,
  listProviderRows,
  missingGroupIds,
  replaceGroupMappingRows,
  updateProviderRow,
  type SsoProviderRow,
} from './store';

/* Provider setup, system administrators only: GET/POST /api/sso-providers, GET/PUT/DELETE /api/sso-providers/{id},
 * GET/PUT /api/sso-providers/{id}/group-mappings. Secrets are never returned: `client_secret_set` says whether one
 * is stored. */

export interface ProviderInput {
  name: string;
  kind: ProviderKind;
  enabled?: boolean;
  settings: ProviderSettingsInput;
  username_claim?: string;
  auto_create_users?: boolean;
  default_group_ids?: number[];
}

export type ProviderUpdate = Partial<ProviderInput>;

export interface ProviderView {
  id: number;
  name: string;
  kind: ProviderKind;
  enabled: boolean;
  settings: Record<string, unknown>;
  username_claim: string;
  auto_create_users: boolean;
  default_group_ids: number[];
  /** Where the IdP sends the user back (OIDC redirect URI, SAML ACS); null while the installation has no base URL. */
  callback_url: string | null;
  created_at: string;
  updated_at: string;
}

function settingsView(deps: AppDeps, row: SsoProviderRow): Record<string, unknown> {
  if (row.kind === 'oidc') {
    let secretSet = false;
    try {
      secretSet = !!openProviderSecrets(deps, row).client_secret;
    } catch {
      /* a box sealed with another key: shown as not set */
    }
    return { ...oidcSettingsOf(row), client_secret_set: secretSet };
  }
  const { sp_certificate: _shownInSpMetadata, ...rest } = samlSettingsOf(row);
  return rest;
}

async function baseOrNull(deps: AppDeps): Promise<URL | null> {
  try {
    return await installationBaseUrl(deps);
  } catch {
    return null;
  }
}

function providerView(deps: AppDeps, row: SsoProviderRow, base: URL | null): ProviderView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as ProviderKind,
    enabled: row.enabled,
    settings: settingsView(deps, row),
    username_claim: row.usernameClaim,
    auto_create_users: row.autoCreateUsers,
    default_group_ids: row.defaultGroupIds,
    callback_url: base ? callbackUrl(base, row.id) : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function providerOr404(deps: Pick<AppDeps, 'db'>, id: number): Promise<SsoProviderRow> {
  const row = await findProvider(deps.db, id);
  if (!row) throw notFound(SSO_MESSAGES.providerNotFound(id));
  return row;
}

async function assertGroupsExist(deps: AppDeps, ids: readonly number[] | undefined, field: string) {
  if (!ids?.length) return;
  const missing = new Set(await missingGroupIds(deps.db, ids));
  const errors: Record<string, string> = {};
  ids.forEach((id, i) => {
    if (missing.has(id)) errors[`${field}[${i}]`] = SSO_MESSAGES.groupNotFound(id);
  });
  if (Object.keys(errors).length) throw invalid(errors);
}

async function withNameGuard<T>(name: string | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (name !== undefined && isUniqueViolation(e, 'sso_providers_name_lower_uq')) {
      throw badRequest(SSO_MESSAGES.duplicateName(name));
    }
    throw e;
  }
}

export async function listProviders(deps: AppDeps): Promise<ProviderView[]> {
  const base = await baseOrNull(deps);
  return (await listProviderRows(deps.db)).map((row) => providerView(deps, row, base));
}

export async function getProvider(deps: AppDeps, id: number): Promise<ProviderView> {
  return providerView(deps, await providerOr404(deps, id), await baseOrNull(deps));
}

export async function createProvider(deps: AppDeps, input: ProviderInput): Promise<ProviderView> {
  await assertGroupsExist(deps, input.default_group_ids, 'defaultGroupIds');
  const { settings, secrets } = await buildSettings(input.kind, input.settings, undefined, input.name);
  const row = await withNameGuard(input.name, () =>
    insertProvider(deps.db, {
      name: input.name,
      kind: input.kind,
      enabled: input.enabled ?? true,
      settings,
      secrets: deps.secretBox.seal(secrets),
      usernameClaim: input.username_claim?.trim() || DEFAULT_USERNAME_CLAIM[input.kind],
      autoCreateUsers: input.auto_create_users ?? false,
      defaultGroupIds: [...new Set(input.default_group_ids ?? [])],
    }),
  );
  return providerView(deps, row, await baseOrNull(deps));
}

/** Fields not sent keep their value; settings, when sent, replace the stored ones except an omitted secret. */
export async function updateProvider(deps: AppDeps, id: number, input: ProviderUpdate): Promise<ProviderView> {
  await assertGroupsExist(deps, input.default_group_ids, 'defaultGroupIds');
  const row = await withNameGuard(input.name, () =>
    deps.db.transaction(async (tx) => {
      const current = await findProvider(tx, id, { forUpdate: true });
      if (!current) throw notFound(SSO_MESSAGES.providerNotFound(id));
      if (input.kind !== undefined && input.kind !== current.kind) throw badRequest(SSO_MESSAGES.kindChange);
      const kind = current.kind as ProviderKind;
      const stored = input.settings
        ? await buildSettings(kind, input.settings, {
            settings: current.settings as Record<string, unknown>,
            secrets: openProviderSecrets(deps, current),
          })
        : undefined;
      return updateProviderRow(tx, id, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        ...(stored ? { settings: stored.settings, secrets: deps.secretBox.seal(stored.secrets) } : {}),
        ...(input.username_claim !== undefined
          ? { usernameClaim: input.username_claim.trim() || DEFAULT_USERNAME_CLAIM[kind] }
          : {}),
        ...(input.auto_create_users !== undefined ? { autoCreateUsers: input.auto_create_users } : {}),
        ...(input.default_group_ids !== undefined ? { defaultGroupIds: [...new Set(input.default_group_ids)] } : {}),
      });
    }),
  );
  if (!row) throw new AppError('not_found', SSO_MESSAGES.providerNotFound(id));
  return providerView(deps, row, await baseOrNull(deps));
}

/** Users who came through the provider keep their accounts; its login states and codes go with it. */
export async function deleteProvider(deps: AppDeps, id: number) {
  if (!(await deleteProviderRow(deps.db, id))) throw notFound(SSO_MESSAGES.providerNotFound(id));
  return { id, deleted: true as const };
}

export interface GroupMapping {
  idp_group: string;
  group_id: number;
}

export async function getGroupMappings(deps: AppDeps, id: number): Promise<{ mappings: GroupMapping[] }> {
  await providerOr404(deps, id);
  const rows = await groupMappingRows(deps.db, id);
  return { mappings: rows.map((r) => ({ idp_group: r.idpGroup, group_id: r.groupId })) };
}

/** Replaces the whole list; applied from the next SSO login of each user. */
export async function setGroupMappings(deps: AppDeps, id: number, mappings: GroupMapping[]) {
  const missing = new Set(await missingGroupIds(deps.db, [...new Set(mappings.map((m) => m.group_id))]));
  const errors: Record<string, string> = {};
  mappings.forEach((m, i) => {
    if (missing.has(m.group_id)) errors[`mappings[${i}].groupId`] = SSO_MESSAGES.groupNotFound(m.group_id);
  });
  if (Object.keys(errors).length) throw invalid(errors);
  await deps.db.transaction(async (tx) => {
    if (!(await findProvider(tx, id, { forUpdate: true }))) throw notFound(SSO_MESSAGES.providerNotFound(id));
    await replaceGroupMappingRows(
      tx,
      id,
      mappings.map((m) => ({ idpGroup: m.idp_group.trim(), groupId: m.group_id })),
    );
  });
  return getGroupMappings(deps, id);
}
