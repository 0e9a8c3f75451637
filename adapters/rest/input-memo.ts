import type { FastifyRequest } from 'fastify';
import { deepFreeze } from '../../server/kernel/deep-freeze';

/*
 * Validated inputs of the REST operations whose procedure asks for it (restMemoizesInput, routers/trpc.ts), by the
 * request's URL and body text. A dashboard sends each widget's data request with the same body again and again (every
 * viewer, every refresh); its JSON parse and zod parse were about a sixth of a cached answer's CPU in a bench:load hit
 * profile. Parsing is a pure function of the text, so an identical request reuses the body and the input the first one
 * got. Nothing else is skipped: the procedure's chain runs as always (authentication before the input step, every
 * access check after it); only the input step hands on the remembered input instead of parsing again.
 *
 * Entries are shared by every caller, so they are frozen when stored: code that changed its input in place would
 * fail at once on the first request (a TypeError) instead of changing another caller's request.
 */

/** Larger bodies are parsed every time: a widget request is a few hundred bytes, and entries are kept in memory. */
const MAX_BODY_CHARS = 4_096;
/** Per operation; the oldest entry goes first (a request with a new filter value per call adds one each time). */
const MAX_ENTRIES = 500;

interface Entry {
  /** The parsed JSON body, as req.body. */
  body: unknown;
  /** The procedure's input as its input parser returned it. */
  input: unknown;
}

/**
 * The memo of one operation; registerRestRoutes keeps it in the route's config, where the body parser finds it. A
 * request is remembered the second time it comes: a request with a new filter value per call (a selector being
 * changed) is then never frozen and stored, only its key noted.
 */
export class InputMemo {
  private readonly entries = new Map<string, Entry>();
  private readonly seen = new Set<string>();

  get(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  /** Whether the request came before (then it is worth remembering); notes it otherwise. */
  cameBefore(key: string): boolean {
    if (this.seen.delete(key)) return true;
    if (this.seen.size >= MAX_ENTRIES) this.seen.delete(this.seen.values().next().value!);
    this.seen.add(key);
    return false;
  }

  set(key: string, entry: Entry): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation's memo, put there by registerRestRoutes for the body parser. */
    restInputMemo?: InputMemo;
  }
}

/** What the body parser found for this request: the memo's key, and the entry when the same request came before. */
interface RequestMemo {
  memo: InputMemo;
  key: string;
  entry: Entry | undefined;
}

const requestMemo = Symbol('rest.inputMemo');
type WithMemo = FastifyRequest & { [requestMemo]?: RequestMemo };

/**
 * Called by the JSON body parser with the body text: on a route with a memo, the body parsed for the same request
 * before (the parser then skips JSON.parse), else undefined. Either way the route's handler finds the key
 * (memoOf), to use the remembered input or to store the one it parses.
 */
export function rememberedBody(req: FastifyRequest, text: string): unknown {
  if (text.length > MAX_BODY_CHARS) return undefined;
  const memo = req.routeOptions.config?.restInputMemo;
  if (!memo) return undefined;
  const key = `${req.url}\u0000${text}`;
  const entry = memo.get(key);
  (req as WithMemo)[requestMemo] = { memo, key, entry };
  return entry?.body;
}

/**
 * For the route's handler: `known` when the same request was parsed and remembered before, `remember` when it came
 * once before (stores the input the procedure's parser returns, with the body the request parsed to). Undefined for
 * a request the memo does not take (no body, one too large, or its first time).
 */
export function memoOf(req: FastifyRequest): { known: unknown } | { remember: (input: unknown) => void } | undefined {
  const m = (req as WithMemo)[requestMemo];
  if (!m) return undefined;
  if (m.entry) return { known: m.entry.input };
  if (!m.memo.cameBefore(m.key)) return undefined;
  return {
    remember: (input) => m.memo.set(m.key, { body: deepFreeze(req.body), input: deepFreeze(input) }),
  };
}
