import type { SourceSettings } from '../../adapters/sources';

/**
 * Which settings are secret. They are stored only inside the encrypted box, never in `settings`, never returned
 * by a read and never logged.
 */
export interface SourceSecrets {
  password?: string;
  ssh_password?: string;
  ssh_private_key?: string;
  ssh_passphrase?: string;
  ssl_key?: string;
}

export function mergeSecrets(plain: SourceSettings, secrets: SourceSecrets): SourceSettings {
  const full: SourceSettings = { ...plain };
  if (secrets.password !== undefined) full.password = secrets.password;
  if (plain.ssh_tunnel) {
    full.ssh_tunnel = {
      ...plain.ssh_tunnel,
      ...(secrets.ssh_password !== undefined ? { password: secrets.ssh_password } : {}),
      ...(secrets.ssh_private_key !== undefined ? { private_key: secrets.ssh_private_key } : {}),
      ...(secrets.ssh_passphrase !== undefined ? { passphrase: secrets.ssh_passphrase } : {}),
    };
  }
  if (plain.ssl) full.ssl = { ...plain.ssl, ...(secrets.ssl_key !== undefined ? { key: secrets.ssl_key } : {}) };
  return full;
}

/** An update that omits a secret keeps the stored one; an explicit null clears it. */
export function keepOmittedSecrets(
  stored: SourceSecrets,
  incoming: SourceSecrets,
  cleared: (keyof SourceSecrets)[] = [],
): SourceSecrets {
  const next: SourceSecrets = { ...stored, ...incoming };
  for (const k of cleared) delete next[k];
  return next;
}
