import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../db/embedded';
import { exited, repoRoot, spawnServer, type ServerProcess } from '../server/app/server-process';
import { httpRest } from '../support/http-rest';
import type { Rest } from '../support/rest';

/*
 * A cluster on one machine, as docs/cluster.md describes it: API nodes and workers started as `npm start` runs them
 * (built server, real processes), each with a DATA_DIR of its own, on one external PostgreSQL database (the test
 * app's clone), the S3-compatible server of the run, optionally Redis, and haproxy in front of the API nodes with the
 * configuration printed in docs/cluster.md.
 */

export type NodeRole = 'api' | 'worker' | 'all';

export interface ClusterNode {
  name: string;
  role: NodeRole;
  server: ServerProcess;
  dataDir: string;
  url: string;
  api: Rest;
}

export interface ClusterOptions {
  databaseUrl: string;
  storageUrl: string;
  secretsKey: string;
  redisUrl?: string;
  /** More environment for every node. */
  env?: Record<string, string>;
}

const run = promisify(execFile);

/** The haproxy block of docs/cluster.md, with the listen address and the servers filled in. */
function haproxyConfig(listen: string, servers: { name: string; port: number }[]): string {
  const doc = readFileSync(path.join(repoRoot, 'docs', 'cluster.md'), 'utf8');
  const block = /```haproxy\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error('docs/cluster.md has no ```haproxy block');
  const lines = servers.map((s) => `    server ${s.name} 127.0.0.1:${s.port} check`).join('\n');
  return block[1].replace('${LISTEN}', listen).replace('${SERVERS}', lines);
}

/** Until GET <url>/readyz answers 200. */
async function waitReady(url: string, child: ChildProcess, output: () => string, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`node exited (${child.exitCode}): ${output()}`);
    try {
      const res = await fetch(`${url}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`node not ready at ${url}: ${output()}`);
}

export class Cluster {
  readonly nodes = new Map<string, ClusterNode>();
  private balancer: ChildProcess | undefined;
  private balancerOutput = '';
  balancerPort = 0;
  private readonly dirs: string[] = [];

  constructor(readonly options: ClusterOptions) {}

  /** The load balancer's address and a REST client through it. */
  get url(): string {
    return `http://127.0.0.1:${this.balancerPort}`;
  }

  get api(): Rest {
    return httpRest(() => this.url);
  }

  node(name: string): ClusterNode {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  /** Builds the server once (the nodes then start from dist/ without racing to build it). */
  static async build(): Promise<void> {
    await run(path.join(repoRoot, 'node_modules/.bin/node'), ['scripts/build.mjs', '--if-stale'], {
      cwd: repoRoot,
      timeout: 5 * 60_000,
    });
  }

  async startNode(name: string, role: NodeRole, env: Record<string, string> = {}): Promise<ClusterNode> {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `analytics-cluster-${name}-`));
    this.dirs.push(dataDir);
    const o = this.options;
    const server = await spawnServer(repoRoot, {
      DATA_DIR: dataDir,
      DATABASE_URL: o.databaseUrl,
      STORAGE_URL: o.storageUrl,
      SECRETS_KEY: o.secretsKey,
      REDIS_URL: o.redisUrl,
      NODE_ROLE: role,
      // haproxy adds X-Forwarded-For: the public rate limit and the login throttle count the client behind it.
      TRUST_PROXY: 'loopback',
      // The default drain: above haproxy's 3 failed checks × 500 ms (docs/cluster.md).
      DRAIN_DELAY_MS: '3000',
      ...o.env,
      ...env,
    });
    const url = `http://127.0.0.1:${server.port}`;
    await waitReady(url, server.child, server.output);
    const node: ClusterNode = { name, role, server, dataDir, url, api: httpRest(url) };
    this.nodes.set(name, node);
    return node;
  }

  /**
   * haproxy in front of the API nodes (docs/cluster.md's configuration), in the foreground: all of them, or the
   * named ones. A balancer already running is stopped first.
   */
  async startBalancer(names?: string[]): Promise<void> {
    await this.stopBalancer();
    this.balancerPort = await freePort();
    const servers = [...this.nodes.values()]
      .filter((n) => (names ? names.includes(n.name) : n.role !== 'worker'))
      .map((n) => ({ name: n.name, port: n.server.port }));
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-haproxy-'));
    this.dirs.push(dir);
    const cfg = path.join(dir, 'haproxy.cfg');
    await fs.writeFile(cfg, haproxyConfig(`127.0.0.1:${this.balancerPort}`, servers));
    const bin = process.env.HAPROXY_BIN || '/usr/sbin/haproxy';
    this.balancer = spawn(bin, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.balancer.stdout!.on('data', (d) => (this.balancerOutput += d));
    this.balancer.stderr!.on('data', (d) => (this.balancerOutput += d));
    await waitReady(this.url, this.balancer, () => this.balancerOutput, 20_000);
    // Every server checked up (rise 2) before the test uses the balancer.
    await new Promise((r) => setTimeout(r, 1_200));
  }

  async stopBalancer(): Promise<void> {
    if (this.balancer && this.balancer.exitCode === null) {
      this.balancer.kill('SIGTERM');
      await exited(this.balancer);
    }
    this.balancer = undefined;
    this.balancerOutput = '';
  }

  balancerLog(): string {
    return this.balancerOutput;
  }

  /** Sends a signal to a node; answers its exit code once it has exited. */
  async stopNode(name: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const node = this.node(name);
    node.server.child.kill(signal);
    const code = await exited(node.server.child);
    this.nodes.delete(name);
    return code;
  }

  async close(): Promise<void> {
    for (const n of this.nodes.values()) n.server.child.kill('SIGKILL');
    await Promise.all([...this.nodes.values()].map((n) => exited(n.server.child)));
    this.nodes.clear();
    await this.stopBalancer();
    for (const d of this.dirs) await fs.rm(d, { recursive: true, force: true });
  }
}

/** A fresh SECRETS_KEY. */
export const newSecretsKey = () => crypto.randomBytes(32).toString('base64');
