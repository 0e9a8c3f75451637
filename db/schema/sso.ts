import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { groups } from './groups';
import { users } from './users';

/**
 * An external identity provider (OIDC or SAML 2.0). `settings` holds what may be shown (issuer URL, client id,
 * scopes, IdP metadata, entity id, SP certificate); `secrets` is a secret box (server/secrets/secret-box.ts) with the
 * client secret and the SP signing key, never returned by any read.
 */
export const ssoProviders = pgTable(
  'sso_providers',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    kind: text('kind').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    settings: jsonb('settings').notNull().default({}),
    secrets: text('secrets'),
    usernameClaim: text('username_claim').notNull(),
    autoCreateUsers: boolean('auto_create_users').notNull().default(false),
    defaultGroupIds: integer('default_group_ids')
      .array()
      .notNull()
      .default(sql`'{}'::int[]`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('sso_providers_name_lower_uq').on(sql`lower(${t.name})`),
    check('sso_providers_kind_ck', sql`${t.kind} in ('oidc', 'saml')`),
  ],
);

/** IdP group name -> platform group, applied at every SSO login through the provider. */
export const ssoGroupMappings = pgTable(
  'sso_group_mappings',
  {
    providerId: integer('provider_id')
      .notNull()
      .references(() => ssoProviders.id, { onDelete: 'cascade' }),
    idpGroup: text('idp_group').notNull(),
    groupId: integer('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.providerId, t.idpGroup, t.groupId] })],
);

/**
 * A login started at GET /api/auth/sso/{providerId}/authorize and not yet come back: the state (stored as its
 * SHA-256), the OIDC nonce and PKCE verifier or the SAML request id, and where the browser goes afterwards. Spent
 * on the callback (deleted), gone with its provider, useless after expires_at.
 */
export const ssoLoginStates = pgTable(
  'sso_login_states',
  {
    id: serial('id').primaryKey(),
    providerId: integer('provider_id')
      .notNull()
      .references(() => ssoProviders.id, { onDelete: 'cascade' }),
    stateHash: text('state_hash').notNull().unique(),
    nonce: text('nonce'),
    codeVerifier: text('code_verifier'),
    samlRequestId: text('saml_request_id'),
    redirectUri: text('redirect_uri').notNull(),
    /** SHA-256 of the browser binding cookie the login started with (server/sso/browser-binding.ts). */
    browserHash: text('browser_hash'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('sso_login_states_expires_idx').on(t.expiresAt)],
);

/**
 * The one-time code a successful callback hands the browser (stored as its SHA-256), traded once by
 * POST /api/auth/sso/exchange for session tokens. Bound to its provider, redirect URI and browser.
 */
export const ssoLoginCodes = pgTable(
  'sso_login_codes',
  {
    id: serial('id').primaryKey(),
    codeHash: text('code_hash').notNull().unique(),
    providerId: integer('provider_id')
      .notNull()
      .references(() => ssoProviders.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    redirectUri: text('redirect_uri').notNull(),
    /** The login state's browser binding: only the browser that started the login may trade the code. */
    browserHash: text('browser_hash'),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [index('sso_login_codes_expires_idx').on(t.expiresAt)],
);

/** SAML assertion ids already accepted, kept until the assertion would have expired anyway: a replay is refused. */
export const ssoSamlAssertions = pgTable(
  'sso_saml_assertions',
  {
    providerId: integer('provider_id')
      .notNull()
      .references(() => ssoProviders.id, { onDelete: 'cascade' }),
    assertionId: text('assertion_id').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.providerId, t.assertionId] }),
    index('sso_saml_assertions_expires_idx').on(t.expiresAt),
  ],
);
