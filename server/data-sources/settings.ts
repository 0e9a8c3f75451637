import { sourceKindInfo, type SourceKind, type SourceSettings } from '../../adapters/sources';
import { invalid, type FieldErrors } from '../kernel/errors';
import { keepOmittedSecrets, type SourceSecrets } from './secrets';

/*
 * Connection settings as the API takes them. Secret fields (password, ssh_tunnel.password / private_key /
 * passphrase, ssl.key) follow one rule everywhere:
 *   omitted or ""  -> unchanged (on create: none),
 *   null           -> removed,
 *   a string       -> replaced.
 * So an interface can send back a form whose password box was left empty without wiping the stored password.
 */

type Secret = string | null | undefined;

export interface SslInput {
  enabled: boolean;
  reject_unauthorized?: boolean;
  ca?: string;
  cert?: string;
  key?: Secret;
}

export interface SshTunnelInput {
  host: string;
  port?: number;
  username: string;
  password?: Secret;
  private_key?: Secret;
  passphrase?: Secret;
}

export interface SettingsInput {
  host?: string;
  port?: number;
  http_port?: number;
  username?: string;
  password?: Secret;
  db?: string;
  use_ssh?: boolean;
  ssl?: SslInput | null;
  ssh_tunnel?: SshTunnelInput | null;
  initial_sql?: string;
}

const DEFAULT_SSH_PORT = 22;

/** The stored (non-secret) settings, with the kind's defaults filled in; 422 for what the kind does not take. */
export function normalizeSettings(kind: SourceKind, input: SettingsInput, path = 'settings'): SourceSettings {
  const info = sourceKindInfo(kind);
  const errors: FieldErrors = {};
  const at = (field: string) => `${path}.${field}`;
  if (kind === 'file') {
    throw invalid({ type: 'file sources are created by uploading a file: POST /api/files' });
  }
  const host = input.host?.trim();
  if (!host) errors[at('host')] = 'must not be blank';
  if (input.http_port !== undefined && info.default_http_port === null)
    errors[at('httpPort')] = `is not used by ${kind} sources`;
  if (input.use_ssh && !input.ssh_tunnel) errors[at('sshTunnel')] = 'must not be null when useSsh is true';
  if (input.ssh_tunnel && !input.ssh_tunnel.host?.trim()) errors[at('sshTunnel.host')] = 'must not be blank';
  if (input.ssh_tunnel && !input.ssh_tunnel.username?.trim()) errors[at('sshTunnel.username')] = 'must not be blank';
  if (Object.keys(errors).length) throw invalid(errors);

  const plain: SourceSettings = {
    host,
    port: input.port ?? info.default_port ?? undefined,
    ...(info.default_http_port !== null ? { http_port: input.http_port ?? info.default_http_port } : {}),
    username: input.username ?? '',
    db: input.db ?? '',
    use_ssh: input.use_ssh ?? false,
  };
  if (input.ssl) {
    plain.ssl = {
      enabled: input.ssl.enabled,
      reject_unauthorized: input.ssl.reject_unauthorized ?? true,
      ...(input.ssl.ca ? { ca: input.ssl.ca } : {}),
      ...(input.ssl.cert ? { cert: input.ssl.cert } : {}),
    };
  }
  if (input.ssh_tunnel) {
    plain.ssh_tunnel = {
      host: input.ssh_tunnel.host.trim(),
      port: input.ssh_tunnel.port ?? DEFAULT_SSH_PORT,
      username: input.ssh_tunnel.username.trim(),
    };
  }
  if (input.initial_sql?.trim()) plain.initial_sql = input.initial_sql;
  return plain;
}

/** The secrets the input sets, and those it removes (null). */
export function secretChanges(input: SettingsInput): { set: SourceSecrets; cleared: (keyof SourceSecrets)[] } {
  const set: SourceSecrets = {};
  const cleared: (keyof SourceSecrets)[] = [];
  const take = (key: keyof SourceSecrets, value: Secret) => {
    if (value === null) cleared.push(key);
    else if (value !== undefined && value !== '') set[key] = value;
  };
  take('password', input.password);
  take('ssh_password', input.ssh_tunnel?.password);
  take('ssh_private_key', input.ssh_tunnel?.private_key);
  take('ssh_passphrase', input.ssh_tunnel?.passphrase);
  take('ssl_key', input.ssl?.key);
  return { set, cleared };
}

/**
 * The secrets after an update: omitted ones kept, null ones removed, and those whose block (ssh_tunnel, ssl) is
 * gone from the settings dropped, so that a removed tunnel does not leave its key behind. With `previous` (the
 * saved settings) a stored secret is not carried over to another address either: see withheldSecrets.
 */
export function nextSecrets(
  stored: SourceSecrets,
  input: SettingsInput,
  plain: SourceSettings,
  previous?: SourceSettings,
): SourceSecrets {
  const { set, cleared } = secretChanges(input);
  const next = keepOmittedSecrets(stored, set, cleared);
  if (previous) for (const key of withheldSecrets(stored, input, plain, previous)) delete next[key];
  if (!plain.ssh_tunnel) {
    delete next.ssh_password;
    delete next.ssh_private_key;
    delete next.ssh_passphrase;
  }
  if (!plain.ssl) delete next.ssl_key;
  return next;
}

/**
 * Stored secrets that must not follow the settings to a new address: whoever may edit a source could otherwise
 * point it at a server of their own and receive the saved password there. The database password belongs to the
 * database address (host, port, HTTP port, user, database, the SSH hop it travels through, and TLS not weakened); the SSH password,
 * key and passphrase belong to the SSH server address (host, port, user). A secret sent again with the change is
 * the caller's own and is used. The client TLS key stays: it never leaves the platform, it only signs.
 */
export function withheldSecrets(
  stored: SourceSecrets,
  input: SettingsInput,
  plain: SourceSettings,
  previous: SourceSettings,
): (keyof SourceSecrets)[] {
  const { set } = secretChanges(input);
  const sshMoved = sshAddress(plain) !== sshAddress(previous);
  const dbMoved =
    dbAddress(plain) !== dbAddress(previous) || (!!plain.use_ssh && sshMoved) || tlsWeakened(previous, plain);
  const owners: [keyof SourceSecrets, boolean][] = [
    ['password', dbMoved],
    ['ssh_password', sshMoved],
    ['ssh_private_key', sshMoved],
    ['ssh_passphrase', sshMoved],
  ];
  return owners
    .filter(([key, moved]) => moved && stored[key] !== undefined && set[key] === undefined)
    .map(([key]) => key);
}

const hostOf = (host: string | undefined) => (host ?? '').trim().toLowerCase();

/**
 * The same address with less protection on the way: TLS turned off, certificate checks turned off, or another CA
 * trusted. Each lets whoever sits between the platform and the server read the password, so it counts as a move.
 */
function tlsWeakened(previous: SourceSettings, next: SourceSettings): boolean {
  const before = previous.ssl;
  const after = next.ssl;
  if (!before?.enabled) return false;
  if (!after?.enabled) return true;
  if (before.reject_unauthorized !== false && after.reject_unauthorized === false) return true;
  return (before.ca ?? '') !== (after.ca ?? '');
}

function dbAddress(s: SourceSettings): string {
  return JSON.stringify([
    hostOf(s.host),
    s.port ?? null,
    s.http_port ?? null,
    s.username ?? '',
    s.db ?? '',
    !!s.use_ssh,
  ]);
}

function sshAddress(s: SourceSettings): string {
  const t = s.ssh_tunnel;
  return t ? JSON.stringify([hostOf(t.host), t.port ?? DEFAULT_SSH_PORT, t.username]) : '';
}

/** Settings for a read: no secret values, only whether each one is stored. */
export function settingsView(
  kind: string,
  plain: SourceSettings & Record<string, unknown>,
  secrets: SourceSecrets,
): Record<string, unknown> {
  if (kind === 'file') {
    // Where the files lie on the server is not the caller's business: what was uploaded and what it became is.
    const { file, upload } = plain as { file?: { tables?: string[] }; upload?: Record<string, unknown> };
    const { stored_file: _stored, ...info } = upload ?? {};
    return { file: { tables: file?.tables ?? [], ...info } };
  }
  const { password: _never, ssl, ssh_tunnel, ...rest } = plain;
  const view: Record<string, unknown> = { ...rest, password_set: !!secrets.password };
  if (ssl) {
    const { key: _key, ...sslRest } = ssl;
    view.ssl = { ...sslRest, key_set: !!secrets.ssl_key };
  }
  if (ssh_tunnel) {
    const { password: _p, private_key: _k, passphrase: _pp, ...sshRest } = ssh_tunnel;
    view.ssh_tunnel = {
      ...sshRest,
      password_set: !!secrets.ssh_password,
      private_key_set: !!secrets.ssh_private_key,
      passphrase_set: !!secrets.ssh_passphrase,
    };
  }
  return view;
}

/** Overrides for a check of a saved source: the saved settings with the given fields replaced. */
export function overrideSettings(saved: SourceSettings, over: SettingsInput): SettingsInput {
  const base: SettingsInput = {
    host: saved.host,
    port: saved.port,
    http_port: saved.http_port,
    username: saved.username,
    db: saved.db,
    use_ssh: saved.use_ssh,
    ssl: saved.ssl ? { ...saved.ssl } : undefined,
    ssh_tunnel: saved.ssh_tunnel ? { ...saved.ssh_tunnel } : undefined,
    initial_sql: saved.initial_sql,
  };
  const merged: SettingsInput = { ...base };
  for (const [k, v] of Object.entries(over) as [keyof SettingsInput, unknown][]) {
    if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  }
  return merged;
}
