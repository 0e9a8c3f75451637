import type { SourceSettings } from './types';

/**
 * Asked before anything connects to `host`; throws (a ConnectorError) to refuse. `resolve: false` for a database
 * host behind an SSH tunnel: the SSH server resolves that name, so only the name itself can be judged here.
 */
export type CheckHost = (host: string, opts: { resolve: boolean }) => Promise<void>;

/**
 * Puts every host a connection for these settings reaches to `checkHost`: the SSH server when tunnelling (it is
 * what this process connects to) and the database host. The platform's pre-checks and the connectors' connect
 * paths both go through here, so they judge the same hosts the same way.
 */
export async function checkSourceHosts(settings: SourceSettings, checkHost: CheckHost): Promise<void> {
  const sshHost = settings.use_ssh ? settings.ssh_tunnel?.host?.trim() : undefined;
  if (sshHost) await checkHost(sshHost, { resolve: true });
  const host = settings.host?.trim();
  if (host) await checkHost(host, { resolve: !sshHost });
}
