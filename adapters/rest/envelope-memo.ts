import { successEnvelope } from './envelope';

/*
 * Response texts of the REST operations with an input memo (restMemoizesInput, routers/trpc.ts), by the answer their
 * procedure returned, when that answer is frozen. Widget data (POST /api/widget/{id}/data), the one such operation,
 * answers a repeated request with the same deep-frozen page while the result cache holds its rows
 * (server/widgets/data.ts), and its REST route sends that answer as it is (restSkipsOutputParse): the envelope's
 * JSON is then a pure function of an object that cannot change. In a bench:load hit profile its JSON.stringify was
 * ~4 % of the server's time. Every step up to the answer (authentication, the input step, the access checks, the
 * read) runs as always; only the text made of the answer is reused.
 *
 * A text is kept the second time its answer comes back: a read with a new filter value makes a page that is never
 * asked for again, and that page is only noted, so a stream of misses keeps no text at all.
 */

/** Envelopes longer than this are made every time (a dashboard widget's page is a few hundred bytes to a few KB). */
const MAX_TEXT_CHARS = 64 * 1024;

/** By answer: its envelope's text, or null while it came once (or its text is too long to keep). */
const texts = new WeakMap<object, string | null>();

/** The success envelope's JSON for a frozen answer that came before, else undefined (the caller sends the object). */
export function rememberedEnvelopeText(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !Object.isFrozen(data)) return undefined;
  const known = texts.get(data);
  if (known) return known;
  if (known === undefined) {
    texts.set(data, null);
    return undefined;
  }
  const text = JSON.stringify(successEnvelope(data));
  if (text.length <= MAX_TEXT_CHARS) texts.set(data, text);
  return text;
}
