import dns from 'node:dns';
import net from 'node:net';
import type { SourceSettings } from './types';

/**
 * Asked before anything connects to `host`; throws (a ConnectorError) to refuse. `resolve: false` for a database
 * host behind an SSH tunnel: the SSH server resolves that name, so only the name itself can be judged here.
 * When it resolved the name, it returns the addresses it judged: the connection then goes to those and nowhere
 * else (see pinnedLookup), so a name whose DNS answer changes after the check cannot lead it elsewhere.
 */
export type CheckHost = (host: string, opts: { resolve: boolean }) => Promise<readonly string[] | void>;

/** The addresses the policy approved, per host name (lower case); a name it did not resolve is absent. */
export type CheckedAddresses = Map<string, readonly string[]>;

const hostKey = (host: string) =>
  host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();

/**
 * Puts every host a connection for these settings reaches to `checkHost`: the SSH server when tunnelling (it is
 * what this process connects to) and the database host. The platform's pre-checks and the connectors' connect
 * paths both go through here, so they judge the same hosts the same way.
 */
export async function checkSourceHosts(settings: SourceSettings, checkHost: CheckHost): Promise<CheckedAddresses> {
  const checked: CheckedAddresses = new Map();
  const sshHost = settings.use_ssh ? settings.ssh_tunnel?.host?.trim() : undefined;
  if (sshHost) {
    const addresses = await checkHost(sshHost, { resolve: true });
    if (addresses) checked.set(hostKey(sshHost), addresses);
  }
  const host = settings.host?.trim();
  if (host) {
    const addresses = await checkHost(host, { resolve: !sshHost });
    if (addresses && !sshHost) checked.set(hostKey(host), addresses);
  }
  return checked;
}

/**
 * A `lookup` for net/tls sockets (and http agents) that answers a checked name with the addresses the policy
 * approved, never with a fresh DNS answer. `current` is read on every lookup: the connector re-checks before each
 * new connection. A name the policy did not resolve (no policy, or none given) goes to the system resolver.
 */
export function pinnedLookup(current: () => CheckedAddresses): net.LookupFunction {
  return (hostname, options, callback) => {
    const addresses = current().get(hostKey(hostname));
    if (!addresses) {
      dns.lookup(hostname, { ...options, all: true }, (err, all) => {
        if (err) callback(err, '');
        else if (options.all) callback(null, all);
        else callback(null, all[0].address, all[0].family);
      });
      return;
    }
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    const found = addresses
      .map((address) => ({ address, family: net.isIP(address) }))
      .filter((a) => a.family !== 0 && (!family || a.family === family));
    if (found.length === 0) {
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
      callback(err, '');
      return;
    }
    if (options.all) callback(null, found);
    else callback(null, found[0].address, found[0].family);
  };
}
