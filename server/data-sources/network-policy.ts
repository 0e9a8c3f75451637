import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { checkSourceHosts, ConnectorError, type CheckHost, type SourceSettings } from '../../adapters/sources';
import type { AppDeps } from '../deps';
import { compiledSourceNetworkPolicy, type CompiledNetworkPolicy } from '../settings/source-network';
import { viaConnector } from './connector-errors';

export const refusedMessage = (what: string) => `Подключение к адресу ${what} запрещено настройками платформы`;

/**
 * Why a connection to `host` is refused, or null. Deny wins: a host is refused when its name matches a deny pattern
 * or any of its addresses lies in a denied network. With an allow list, the name must match an allow pattern or
 * every address must lie in an allowed network. Without `resolve` (a database host behind SSH) only the name, or
 * the address it literally is, is judged.
 */
export async function hostRefusal(policy: CompiledNetworkPolicy, rawHost: string, opts: { resolve: boolean }): Promise<string | null> {
  const host = rawHost.trim().replace(/^\[(.*)\]$/, '$1');
  if (!host) return null;
  const literal = net.isIP(host) !== 0;
  if (!literal && policy.deny.hasName(host)) return refusedMessage(host);

  let addresses: string[] = literal ? [host] : [];
  if (!literal && opts.resolve) {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      addresses = []; // not resolvable: the driver will say so itself, unless an allow list refuses it below
    }
  }
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

/** The connectors' checkHost hook: the installation's current policy, read (cached) on every connect. */
export function sourceHostCheck(deps: AppDeps): CheckHost {
  return async (host, opts) => {
    const refusal = await hostRefusal(await compiledSourceNetworkPolicy(deps), host, opts);
    if (refusal) throw new ConnectorError(refusal, 'settings');
  };
}

/** 400 when the policy refuses a host of the settings: before a check, a save or a copy connects or stores them. */
export async function assertSourceAddressAllowed(deps: AppDeps, settings: SourceSettings): Promise<void> {
  await viaConnector(() => checkSourceHosts(settings, sourceHostCheck(deps)));
}
