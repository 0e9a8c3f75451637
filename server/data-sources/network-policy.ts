import dns from 'node:dns';
import net from 'node:net';
import { checkSourceHosts, ConnectorError, type CheckHost, type SourceSettings } from '../../adapters/sources';
import type { AppDeps } from '../app/deps';
import { compiledSourceNetworkPolicy, type CompiledNetworkPolicy } from '../service/source-network';
import { viaConnector } from './connector-errors';

const refusedMessage = (what: string) => `Подключение к адресу ${what} запрещено настройками платформы`;

/**
 * Why a connection to `host` is refused (null: allowed). Deny wins: a host is refused when its name matches a deny
 * pattern or any of its addresses lies in a denied network. With an allow list, the name must match an allow pattern
 * or every address must lie in an allowed network. Without `resolve` (a database host behind SSH) only the name, or
 * the address it literally is, is judged. `resolved`: the addresses a name resolved to; when it is allowed, the
 * connection must go to exactly these (a second DNS answer could differ). Undefined when nothing was resolved.
 */
async function judgeHost(
  policy: CompiledNetworkPolicy,
  rawHost: string,
  opts: { resolve: boolean },
): Promise<{ refusal: string | null; resolved?: string[] }> {
  const host = rawHost.trim().replace(/^\[(.*)\]$/, '$1');
  if (!host) return { refusal: null };
  const literal = net.isIP(host) !== 0;
  if (!literal && policy.deny.hasName(host)) return { refusal: refusedMessage(host) };
  const resolved = !literal && opts.resolve ? await resolveAll(host) : undefined;
  return { refusal: judgeAddresses(policy, host, literal, resolved ?? (literal ? [host] : [])), resolved };
}

function judgeAddresses(
  policy: CompiledNetworkPolicy,
  host: string,
  literal: boolean,
  addresses: string[],
): string | null {
  const where = (address: string) => (literal ? host : `${host} (${address})`);
  const denied = addresses.find((a) => policy.deny.hasAddress(a));
  if (denied) return refusedMessage(where(denied));

  if (policy.allow.size === 0) return null;
  if (!literal && policy.allow.hasName(host)) return null;
  // Behind SSH a name can only be allowed by name; a name that does not resolve cannot be shown to be allowed.
  if (addresses.length === 0) return refusedMessage(host);
  const outside = addresses.find((a) => !policy.allow.hasAddress(a));
  return outside ? refusedMessage(where(outside)) : null;
}

// The system resolver through dns.lookup, read at call time: the same one sockets use by default.
async function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve) => {
    dns.lookup(host, { all: true, verbatim: true }, (err, addresses) => {
      // Not resolvable: the driver will say so itself, unless an allow list refuses it.
      resolve(err ? [] : addresses.map((a) => a.address));
    });
  });
}

/**
 * The connectors' checkHost hook: the installation's current policy, read (cached) on every connect. Returns the
 * addresses it judged, which the connection is then pinned to.
 */
export function sourceHostCheck(deps: AppDeps): CheckHost {
  return async (host, opts) => {
    const { refusal, resolved } = await judgeHost(await compiledSourceNetworkPolicy(deps), host, opts);
    if (refusal) throw new ConnectorError(refusal, 'settings');
    return resolved;
  };
}

/** 400 when the policy refuses a host of the settings: before a check, a save or a copy connects or stores them. */
export async function assertSourceAddressAllowed(deps: AppDeps, settings: SourceSettings): Promise<void> {
  await viaConnector(() => checkSourceHosts(settings, sourceHostCheck(deps)));
}
