import { Transform, type Readable } from 'node:stream';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { sendError } from '../../adapters/rest/envelope';
import { describeError } from '../kernel/error-response';
import { AppError } from '../kernel/errors';
import type { AppDeps } from './deps';
import type { SharedRedis } from '../cache/redis';

/*
 * Requests without any authentication (the share-link viewer API /api/public/..., its publicLink procedures over
 * /trpc and the viewer page /s/...) are limited per client address: config.publicRateLimitPerMinute public calls a
 * minute (0: off). Only these requests pay for the check; authenticated routes are untouched. With REDIS_URL the
 * windows live in Redis and every node counts into the same one; without it (or while Redis does not answer) each
 * process counts its own.
 *
 * A request is classified by where the router sends it, not by its raw text: the router decodes %-escapes in paths
 * (/api/%70ublic/... is /api/public/...), and tRPC decodes its procedure path once more and runs a batch
 * (/trpc/users.me,publicLink.widgetData?batch=1) as several calls. A /trpc request costs one call per public procedure
 * it names, so a batch cannot buy many data reads for the price of one. (@fastify/rate-limit counts one per request,
 * which is why the counter is our own.)
 *
 * The same requests take bodies of PUBLIC_BODY_LIMIT_BYTES at most, not the global BODY_LIMIT_BYTES: anyone can send
 * them, and 10 MB bodies parsed and validated by a crowd slow down every other caller. A /trpc batch that names a
 * public procedure is held to it as a whole: one body carries the inputs of all its calls.
 */

/** Enough for any real selector state of a viewer (the viewer page sends one value per selector). */
export const PUBLIC_BODY_LIMIT_BYTES = 64 * 1024;

const PUBLIC_PREFIX = /^\/(api\/public\/|s\/)/;
const PUBLIC_PROCEDURE = 'publicLink.';
const WINDOW_MS = 60_000;

/** How many public calls a request makes: 1 for a public REST path or the page, one per publicLink procedure of a
 * /trpc call (batched or not), 0 for anything else. */
function publicCallsOf(req: FastifyRequest): number {
  const route = req.routeOptions.url;
  // A path no route matches is a cheap 404, but it is still counted when it looks public.
  if (route === undefined) return PUBLIC_PREFIX.test(req.url) ? 1 : 0;
  if (PUBLIC_PREFIX.test(route)) return 1;
  if (route !== '/trpc/:path') return 0;
  let path: string;
  try {
    // As tRPC does with the router's (already decoded) parameter before it looks procedures up.
    path = decodeURIComponent((req.params as { path: string }).path);
  } catch {
    return 0; // tRPC answers a malformed escape with a 400 before any procedure runs
  }
  return path.split(',').filter((p) => p.startsWith(PUBLIC_PROCEDURE)).length;
}

interface Window {
  used: number;
  endsAt: number;
}

interface Verdict {
  allowed: boolean;
  retryAfterMs: number;
}

type Take = (address: string, calls: number, now: number) => Verdict;

/** A fixed one-minute window per address; calls that would pass the budget are refused whole. */
function windowCounter(max: number): Take {
  const windows = new Map<string, Window>();
  let sweepAt = 0;
  return (address, calls, now) => {
    // Ended windows are dropped once a window, so guessed addresses cannot grow the map for long.
    if (now >= sweepAt) {
      for (const [key, w] of windows) if (w.endsAt <= now) windows.delete(key);
      sweepAt = now + WINDOW_MS;
    }
    let w = windows.get(address);
    if (!w || w.endsAt <= now) {
      w = { used: 0, endsAt: now + WINDOW_MS };
      windows.set(address, w);
    }
    if (w.used + calls > max) return { allowed: false, retryAfterMs: w.endsAt - now };
    w.used += calls;
    return { allowed: true, retryAfterMs: 0 };
  };
}

/*
 * The same window kept in Redis, one key per address that lives as long as its window (its expiry is the window's
 * end, set by the call that opens it): the check and the count are one script, atomic across nodes, so calls
 * refused are not counted and two nodes cannot both spend the last call. Redis's clock ends the window, not the
 * nodes'.
 */
const SHARED_WINDOW = `
redis.call('SET', KEYS[1], 0, 'PX', ARGV[3], 'NX')
local used = tonumber(redis.call('GET', KEYS[1]))
local calls = tonumber(ARGV[1])
if used + calls > tonumber(ARGV[2]) then return {0, redis.call('PTTL', KEYS[1])} end
redis.call('INCRBY', KEYS[1], calls)
return {1, 0}
`;

/** A public call waits this long for Redis before this node's own window decides. */
const SHARED_WINDOW_WAIT_MS = 500;

function sharedWindowCounter(redis: SharedRedis, max: number, local: Take) {
  const take = redis.script(SHARED_WINDOW, 1);
  return async (address: string, calls: number, now: number): Promise<Verdict> => {
    try {
      const [allowed, ttl] = (await take(
        SHARED_WINDOW_WAIT_MS,
        [`public-rate:${address}`],
        [calls, max, WINDOW_MS],
      )) as [number, number];
      return { allowed: allowed === 1, retryAfterMs: ttl > 0 ? ttl : WINDOW_MS };
    } catch (e) {
      // Fail open to this node's window, not to no limit, and never to an error: the caller still gets an answer.
      redis.failed(e);
      return local(address, calls, now);
    }
  };
}

export function registerPublicRateLimit(app: FastifyInstance, deps: Pick<AppDeps, 'config' | 'redis'>): void {
  const max = deps.config.publicRateLimitPerMinute;
  if (max <= 0) return;
  const local = windowCounter(max);
  const take = deps.redis ? sharedWindowCounter(deps.redis, max, local) : local;
  app.addHook('onRequest', async (req, reply) => {
    const calls = publicCallsOf(req);
    if (calls === 0) return;
    const { allowed, retryAfterMs } = await take(req.ip, calls, Date.now());
    if (allowed) return;
    const err = new AppError('too_many_requests', 'Слишком много запросов, повторите позже', {
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    });
    return sendError(reply, describeError(err));
  });
}

const tooLarge = () => new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();

/** The body passed on as it arrives, failing as the body parser does once more than `limit` bytes came. */
function capped(payload: Readable, limit: number): Readable {
  let received = 0;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      if (received > limit) return done(tooLarge());
      done(null, chunk);
    },
  });
  payload.on('error', (err) => out.destroy(err));
  // The body parser listens for the error; a parser that hands the stream on unread (multipart over /trpc) does not,
  // and an error nobody listens for would end the process.
  out.on('error', () => {});
  return payload.pipe(out);
}

/** 413 in the envelope (the error handler's answer to fastify's own body limit) for public bodies over the limit. */
export function registerPublicBodyLimit(app: FastifyInstance): void {
  app.addHook('preParsing', async (req, reply, payload) => {
    if (publicCallsOf(req) === 0) return payload;
    const length = req.headers['content-length'];
    if (length !== undefined) {
      // Node reads no more than Content-Length bytes as this request's body: the header is enough to judge.
      if (Number(length) <= PUBLIC_BODY_LIMIT_BYTES) return payload;
      // The rest of the body is not read: the connection ends with the answer, as fastify does for its own limit.
      reply.header('connection', 'close');
      throw tooLarge();
    }
    if (req.headers['transfer-encoding'] === undefined) return payload;
    return capped(payload, PUBLIC_BODY_LIMIT_BYTES);
  });
}
