import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

/*
 * Memory back to the system when the node goes quiet, so the start command can run V8 for throughput.
 *
 * V8 sizes its heap for speed: under load the young generation grows to its 16 MB semi-spaces and the old generation
 * to several times what is live, and after the load it keeps those pages (a regular major GC empties them into its
 * pool; RSS stays). `--optimize-for-size` keeps the heap small all the time instead, at about twice the CPU per request
 * (a 1 MB young generation promotes what in-flight requests hold, and the old generation is then marked every few
 * hundred ms: bench:load, GET /api/settings 177 -> 83 us, widget data misses 1,297 -> 619 us per request). So the start
 * command runs with `--expose-gc` and the young generation at its 16 MB from the start (`--min-semi-space-size=16`:
 * the start itself then takes 2 scavenges instead of 9 and no full GC, ~70 -> ~30 ms of pauses before ready), and this
 * asks for V8's memory-reducing collection (the "last resort" flavour: full GCs until nothing more is freed, new space
 * shrunk, pooled pages unmapped) once the event loop has been quiet for a few seconds after work or growth: after the
 * start, and after each burst of requests.
 *
 * It runs only between bursts (a busy second restarts the count), costs one pause on a quiet node (~160 ms after
 * bench:load, with a ~40 MB live heap), and does nothing where `gc` is not exposed (tests, `node dist/main.js`
 * without the flag).
 */

type ExposedGc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface MemoryTrimOptions {
  /** How often the event loop's utilisation is looked at. */
  checkMs?: number;
  /** This many quiet checks in a row after work or growth, then the collection. */
  quietChecks?: number;
  /** A check whose event-loop utilisation is above this is work. */
  busyUtilisation?: number;
  /**
   * V8's heap (its spaces but the young generation's, which grows and shrinks by itself) this far above its size
   * after the last collection is growth, even when no check was busy (a slow trickle of requests). The heap, not RSS:
   * memory outside it (DuckDB's, buffers) is not what the collection frees, and an extract growing it must not set
   * off one collection after another.
   */
  growthBytes?: number;
  /** Told after each collection: RSS before and after, and the pause. */
  onTrim?: (trim: { rssBefore: number; rssAfter: number; pauseMs: number }) => void;
}

/** Starts the trimmer; returns its stop. A no-op without an exposed `gc`. */
export function startMemoryTrim(opts: MemoryTrimOptions = {}): () => void {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  if (typeof gc !== 'function') return () => undefined;
  const checkMs = opts.checkMs ?? 1_000;
  const quietChecks = opts.quietChecks ?? 3;
  const busyUtilisation = opts.busyUtilisation ?? 0.05;
  const growthBytes = opts.growthBytes ?? 16 * 1024 * 1024;
  let last = performance.eventLoopUtilization();
  let quiet = 0;
  // The start itself is work: the first quiet stretch after it trims what loading the modules left.
  let dirty = true;
  let trimmedHeap = Number.POSITIVE_INFINITY;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilisation = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (utilisation > busyUtilisation) {
      quiet = 0;
      dirty = true;
      return;
    }
    if (settledHeapBytes() > trimmedHeap + growthBytes) dirty = true;
    if (!dirty || ++quiet < quietChecks) return;
    const rssBefore = process.memoryUsage.rss();
    const t0 = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const pauseMs = performance.now() - t0;
    trimmedHeap = settledHeapBytes();
    dirty = false;
    quiet = 0;
    // The collection's own pause is not the next check's work.
    last = performance.eventLoopUtilization();
    opts.onTrim?.({ rssBefore, rssAfter: process.memoryUsage.rss(), pauseMs });
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The committed size of V8's heap spaces but the young generation's. */
function settledHeapBytes(): number {
  let bytes = 0;
  for (const space of v8.getHeapSpaceStatistics()) if (!space.space_name.startsWith('new_')) bytes += space.space_size;
  return bytes;
}
