// A block under 4 KiB is cut from a 4 KiB slab, and a slab past the first 120 MiB of arena needs
// a 4 KiB leaf of slab counts too (core-as/heap.ts). When the slab can be had but its leaf
// cannot, the failure is the two 4 KiB blocks the request needed, not the small block: read as
// the small block, a cap with 4 KiB free looked fragmented, and raising it by requested − free
// (the contract of OutOfMemoryDetails.requested) raised it by nothing. Its own file: it takes the
// memory past 120 MiB in a fresh process, where nothing has cut a slab up there yet.
import { afterAll, describe, expect, it } from 'vitest';
import { core, HEAP_FAIL_LIMIT, memoryLimit, setMemoryLimit } from '../adapters/wasm.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

const KiB = 1024;
const MiB = 1024 * KiB;
const PAGE = 4 * KiB;
/** Rounded up to the 64 KiB steps setMemoryLimit takes. */
const pagesUp = (bytes: number) => Math.ceil(Math.max(0, bytes) / (64 * KiB)) * 64 * KiB;

describe('a small block whose slab needs a leaf of slab counts', () => {
  it('that cannot be had is reported as the slab and the leaf, and raising the cap by requested − free lets it succeed', () => {
    setMemoryLimit(Infinity);
    // everything below the arena is bookkeeping while no leaf has been taken from the arena
    const start = memoryLimit();
    const arena = start.limit - core.heap_bytes_free() - start.inUse;
    const pages: number[] = [];
    // 4 KiB blocks until the arena is carved up to 120 MiB, where the first leaves end
    let last = 0;
    while (last - arena + PAGE < 120 * MiB) {
      last = core.buf_alloc(PAGE);
      expect(last).not.toBe(0);
      pages.push(last);
    }
    // then up to the cap, set at the memory's size: all that is left free is one 4 KiB block up there
    setMemoryLimit(memoryLimit().size);
    for (let p = core.buf_alloc(PAGE); p !== 0; p = core.buf_alloc(PAGE)) pages.push(p);
    let highest = 0;
    for (let i = 1; i < pages.length; i++) if (pages[i]! > pages[highest]!) highest = i;
    expect(pages[highest]! - arena).toBeGreaterThanOrEqual(120 * MiB);
    core.buf_free(pages[highest]!, PAGE);
    pages.splice(highest, 1);
    // blocks of 2 KiB until their free list is empty and the next needs a slab: the failure
    const smalls: number[] = [];
    let failedAt = -1;
    for (let i = 0; i < 10_000 && failedAt < 0; i++) {
      const p = core.buf_alloc(2 * KiB);
      if (p === 0) failedAt = i;
      else smalls.push(p);
    }
    expect(failedAt).toBeGreaterThanOrEqual(0);
    const requested = core.heap_failed_bytes();
    const free = core.heap_bytes_free();
    expect(free).toBeLessThan(2 * PAGE); // the one 4 KiB block, and small blocks of other sizes
    expect(requested).toBeGreaterThanOrEqual(2 * PAGE); // the slab and its leaf
    expect(core.heap_failed_reason()).toBe(HEAP_FAIL_LIMIT);
    // the contract users read: the cap raised by requested − free, in 64 KiB steps, is enough
    setMemoryLimit(memoryLimit().limit + pagesUp(requested - free));
    const p = core.buf_alloc(2 * KiB);
    expect(p).not.toBe(0);
    smalls.push(p);
    expect(core.heap_validate()).toBe(0);
    for (const s of smalls) core.buf_free(s, 2 * KiB);
    for (const q of pages) core.buf_free(q, PAGE);
    expect(core.heap_validate()).toBe(0);
    setMemoryLimit(Infinity);
  });
});
