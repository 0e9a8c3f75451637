import { Worker } from 'node:worker_threads';

/*
 * Viewers of one public share link, as the viewer page loads it: the dashboard, then the data of its widgets at once,
 * in a loop, over keep-alive HTTP. Used by bench:viewers (one node) and bench:cluster (nodes behind haproxy). The
 * load runs in a worker thread (its own event loop), so that the server's latencies are not the client's.
 */

// The load generator: plain JavaScript in a worker thread. Each viewer keeps up to 6 connections, as a browser does.
const LOAD = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { base, token, widgetIds, viewers, seconds } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: viewers * 6 });
const url = new URL(base);
const requests = [];
const pages = [];
let errors = 0;
const errorSamples = [];
function request(method, path, body) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, agent, headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - t0;
          requests.push(ms);
          if (res.statusCode !== 200) {
            errors++;
            if (errorSamples.length < 5) errorSamples.push(res.statusCode + ' ' + Buffer.concat(chunks).toString().slice(0, 200));
          }
          resolve();
        });
      },
    );
    req.on('error', (e) => {
      errors++;
      if (errorSamples.length < 5) errorSamples.push(String(e));
      resolve();
    });
    if (body) req.write(body);
    req.end();
  });
}
const linkBase = '/api/public/link/' + token;
async function viewer(deadline) {
  while (performance.now() < deadline) {
    const t0 = performance.now();
    await request('GET', linkBase + '/dashboard');
    await Promise.all(widgetIds.map((id) => request('POST', linkBase + '/widget/' + id + '/data', '{}')));
    pages.push(performance.now() - t0);
  }
}
(async () => {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: viewers }, () => viewer(deadline)));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  parentPort.postMessage({ requests, pages, errors, errorSamples, elapsed });
})();
`;

export interface LoadResult {
  requests: number[];
  pages: number[];
  errors: number;
  errorSamples: string[];
  elapsed: number;
}

export function runLoad(data: { base: string; token: string; widgetIds: number[]; viewers: number; seconds: number }) {
  return new Promise<LoadResult>((resolve, reject) => {
    const worker = new Worker(LOAD, { eval: true, workerData: data });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))] ?? NaN;
};
