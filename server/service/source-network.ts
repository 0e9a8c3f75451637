import net from 'node:net';
import type { AppDeps } from '../app/deps';
import { readSetting, writeSetting } from './store';
import { settingChangedEverywhere } from '../kernel/cache-changes';

/**
 * Which hosts data sources may connect to (GET/PUT /api/settings/source-network). Entries are an IPv4/IPv6 CIDR
 * network, a single address, or a host name pattern (`db.corp.example`, `*.corp.example`).
 */
export interface SourceNetworkPolicy {
  allow: string[];
  deny: string[];
}

const KEY = 'source_network';
/** Link-local networks hold cloud metadata services (169.254.169.254): a source has no business there. */
const DEFAULT_SOURCE_NETWORK: SourceNetworkPolicy = { allow: [], deny: ['169.254.0.0/16', 'fe80::/10'] };

export const NETWORK_ENTRY_MESSAGE =
  'must be an IP address, a CIDR network (10.0.0.0/8, fd00::/8) or a host name pattern (db.example, *.corp.example)';

const LABEL = '[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?';
const HOST_PATTERN = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*\\.?$`, 'i');

type ParsedEntry =
  | { kind: 'address'; address: string; family: 'ipv4' | 'ipv6' }
  | { kind: 'subnet'; address: string; prefix: number; family: 'ipv4' | 'ipv6' }
  | { kind: 'name'; pattern: RegExp };

function parseNetworkEntry(raw: string): ParsedEntry | null {
  const entry = raw.trim().toLowerCase();
  if (!entry || entry.length > 253) return null;
  const slash = entry.indexOf('/');
  if (slash >= 0) {
    const address = entry.slice(0, slash);
    const prefixText = entry.slice(slash + 1);
    const version = net.isIP(address);
    if (!version || !/^\d{1,3}$/.test(prefixText)) return null;
    const prefix = Number(prefixText);
    if (prefix > (version === 4 ? 32 : 128)) return null;
    return { kind: 'subnet', address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
  }
  const version = net.isIP(entry);
  if (version) return { kind: 'address', address: entry, family: version === 4 ? 'ipv4' : 'ipv6' };
  if (!HOST_PATTERN.test(entry)) return null;
  const name = entry.replace(/\.$/, '');
  const escaped = name.replace(/[.]/g, '\\.');
  // `*.corp.example` is any name under corp.example (one label or more), never corp.example itself.
  const pattern = name.startsWith('*.') ? new RegExp(`^.+${escaped.slice(1)}$`) : new RegExp(`^${escaped}$`);
  return { kind: 'name', pattern };
}

export const isNetworkEntry = (raw: string): boolean => parseNetworkEntry(raw) !== null;

/** One side of the policy, ready for matching: addresses in a BlockList, names as patterns. */
class NetworkList {
  private readonly addresses = new net.BlockList();
  private readonly names: RegExp[] = [];
  readonly size: number;

  constructor(entries: string[]) {
    for (const raw of entries) {
      const e = parseNetworkEntry(raw);
      if (!e) continue;
      if (e.kind === 'address') this.addresses.addAddress(e.address, e.family);
      else if (e.kind === 'subnet') this.addresses.addSubnet(e.address, e.prefix, e.family);
      else this.names.push(e.pattern);
    }
    this.size = entries.length;
  }

  hasName(host: string): boolean {
    const name = host.trim().toLowerCase().replace(/\.$/, '');
    return !net.isIP(name) && this.names.some((p) => p.test(name));
  }

  hasAddress(address: string): boolean {
    // An IPv4-mapped IPv6 address (::ffff:169.254.1.1) is the IPv4 address for every purpose here.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped) return this.addresses.check(mapped, 'ipv4');
    const version = net.isIP(address);
    return version !== 0 && this.addresses.check(address, version === 4 ? 'ipv4' : 'ipv6');
  }
}

export interface CompiledNetworkPolicy {
  allow: NetworkList;
  deny: NetworkList;
}

async function storedPolicy(deps: AppDeps): Promise<Partial<SourceNetworkPolicy>> {
  return (await deps.caches.settings.getOrLoad(
    KEY,
    async () => (await readSetting(deps.db, KEY)) ?? {},
  )) as Partial<SourceNetworkPolicy>;
}

export async function getSourceNetworkPolicy(deps: AppDeps): Promise<SourceNetworkPolicy> {
  const stored = await storedPolicy(deps);
  return { allow: stored.allow ?? DEFAULT_SOURCE_NETWORK.allow, deny: stored.deny ?? DEFAULT_SOURCE_NETWORK.deny };
}

// Keyed by the cached stored object: compiled once per settings-cache lifetime, not on every connection.
const compiled = new WeakMap<object, CompiledNetworkPolicy>();

export async function compiledSourceNetworkPolicy(deps: AppDeps): Promise<CompiledNetworkPolicy> {
  const stored = await storedPolicy(deps);
  let c = compiled.get(stored);
  if (!c) {
    const policy = await getSourceNetworkPolicy(deps);
    c = { allow: new NetworkList(policy.allow), deny: new NetworkList(policy.deny) };
    compiled.set(stored, c);
  }
  return c;
}

/** Replaces both lists (entries validated by the caller's schema). Open pools reconnect under the new rules. */
export async function updateSourceNetworkPolicy(
  deps: AppDeps,
  input: SourceNetworkPolicy,
): Promise<SourceNetworkPolicy> {
  const next: SourceNetworkPolicy = { allow: input.allow.map((e) => e.trim()), deny: input.deny.map((e) => e.trim()) };
  await writeSetting(deps.db, KEY, next);
  settingChangedEverywhere(deps, KEY);
  // Pooled connections were admitted under the old rules; every new connection is checked under the new ones.
  await deps.connectors.closeAll();
  return getSourceNetworkPolicy(deps);
}
