import { afterEach, describe, expect, it, vi } from 'vitest';
import { startMemoryTrim } from '../../../server/app/memory-trim';

/** The exposed collector, replaced by a recorder: what is tested is when the trimmer asks, not what V8 frees. */
const holder = globalThis as { gc?: unknown };
const original = holder.gc;
let stop: () => void = () => undefined;

afterEach(() => {
  stop();
  holder.gc = original;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Keeps the event loop busy for `ms`, in slices, as a burst of requests would. */
async function busyFor(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const slice = performance.now() + 15;
    while (performance.now() < slice) {
      /* work */
    }
    await new Promise((r) => setImmediate(r));
  }
}

describe('memory trim', () => {
  it('collects once after the start and once after each burst, never during one', async () => {
    const calls: { options: unknown; at: number }[] = [];
    holder.gc = (options: unknown) => calls.push({ options, at: performance.now() });
    // Busy above half the time: the test worker's own chatter is never a burst, the loop below always is.
    stop = startMemoryTrim({
      checkMs: 50,
      quietChecks: 3,
      busyUtilisation: 0.5,
      growthBytes: Number.MAX_SAFE_INTEGER,
    });
    // The start counts as work: one collection in the first quiet stretch, then none while nothing happens.
    await vi.waitFor(() => expect(calls).toHaveLength(1), { timeout: 5_000 });
    await sleep(300);
    expect(calls).toHaveLength(1);
    expect(calls[0].options).toEqual({ type: 'major', execution: 'sync', flavor: 'last-resort' });

    const burstStart = performance.now();
    await busyFor(400);
    const burstEnd = performance.now();
    expect(calls).toHaveLength(1);
    await vi.waitFor(() => expect(calls).toHaveLength(2), { timeout: 5_000 });
    expect(calls[1].at).toBeGreaterThan(burstEnd);
    expect(calls[1].at).toBeGreaterThan(burstStart + 400);
    await sleep(300);
    expect(calls).toHaveLength(2);
  });

  it('collects on heap growth without a busy check, and not on memory outside the heap', async () => {
    let calls = 0;
    holder.gc = () => calls++;
    // Nothing counts as busy here: only growth can make it collect again after the first quiet stretch.
    stop = startMemoryTrim({ checkMs: 50, quietChecks: 2, busyUtilisation: 1, growthBytes: 8 * 1024 * 1024 });
    await vi.waitFor(() => expect(calls).toBe(1), { timeout: 5_000 });
    // 64 MB outside V8's heap (as DuckDB's or a buffer's memory): RSS grows, the heap does not.
    const outside = Buffer.alloc(64 * 1024 * 1024, 1);
    await sleep(300);
    expect(calls).toBe(1);
    // ~24 MB of objects on the heap, kept.
    const kept = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `value ${i}` }));
    await vi.waitFor(() => expect(calls).toBe(2), { timeout: 5_000 });
    expect(outside.length + kept.length).toBeGreaterThan(0);
  });
});
