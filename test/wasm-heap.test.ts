// The core's heap (core-as/heap.ts) through its raw exports: buf_alloc / buf_free, and
// heap_validate, which re-derives the heap's invariants. Blocks never overlap, are aligned as the
// buddy system promises, keep what is written into them, and the bytes in use are counted
// exactly; freed large blocks merge, and so do the 4 KiB slabs small blocks are cut from once all
// their blocks are free, so memory given back in pieces serves a larger request without growing
// the memory.
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../adapters/random.ts';
import { OutOfMemoryError } from '../adapters/errors.ts';
import { Range } from '../adapters/range.ts';
import { core, HEAP_FAIL_FRAGMENTED, HEAP_FAIL_LIMIT, memoryLimit, setMemoryLimit } from '../adapters/wasm.ts';

/** A seeded u32 source. */
const u32Source = (seed: number): (() => number) => {
  const r = seededRandom(seed);
  return () => r.nextU32();
};

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

/** The block size a request of `size` occupies: the next power of two, at least 16. */
const classSize = (size: number): number => Math.max(16, 2 ** Math.ceil(Math.log2(Math.max(1, size))));

interface Block {
  p: number;
  size: number;
  bytes: number;
  tag: number;
}

const words = (): Uint32Array => new Uint32Array(core.memory.buffer);

/** Writes the block's tag into its first and last words. */
function stamp(b: Block): void {
  const w = words();
  w[b.p >>> 2] = b.tag;
  w[(b.p + b.bytes - 4) >>> 2] = b.tag;
}

function stampIntact(b: Block): boolean {
  const w = words();
  return w[b.p >>> 2] === b.tag && w[(b.p + b.bytes - 4) >>> 2] === b.tag;
}

/** The largest block the heap hands out without growing the memory (given back at once). */
function largestWithoutGrowth(): number {
  setMemoryLimit(0);
  const size = memoryLimit().size;
  try {
    for (let bytes = 2 ** 31; bytes >= 4096; bytes /= 2) {
      const p = core.buf_alloc(bytes);
      if (p === 0) continue;
      core.buf_free(p, bytes);
      expect(memoryLimit().size).toBe(size);
      return bytes;
    }
    return 0;
  } finally {
    setMemoryLimit(Infinity);
  }
}

describe('the core heap', () => {
  it('random allocations and frees of 1 B to 512 KiB: no overlap, aligned, contents kept, bytes counted', () => {
    const u32 = u32Source(0x4ea9);
    const base = core.heap_bytes_in_use();
    const live: Block[] = [];
    let inUse = 0;
    let tag = 1;
    for (let step = 0; step < 12_000; step++) {
      if (live.length === 0 || u32() % 100 < 55) {
        const size = Math.max(1, Math.floor(2 ** ((u32() % 1900) / 100))); // log-uniform, 1 B .. 512 KiB
        const p = core.buf_alloc(size);
        expect(p, `allocation ${step} of ${size} B`).not.toBe(0);
        const b: Block = { p, size, bytes: classSize(size), tag: tag++ };
        expect(p % 16).toBe(0);
        // large blocks sit at multiples of their size from a 64 KiB-aligned arena
        if (b.bytes >= 4096) expect(p % Math.min(b.bytes, 65536)).toBe(0);
        for (const o of live) {
          if (p < o.p + o.bytes && o.p < p + b.bytes) throw new Error(`block ${p}+${b.bytes} overlaps ${o.p}+${o.bytes}`);
        }
        stamp(b);
        live.push(b);
        inUse += b.bytes;
      } else {
        const i = u32() % live.length;
        const b = live[i]!;
        expect(stampIntact(b), `contents of block ${b.p}+${b.bytes}`).toBe(true);
        core.buf_free(b.p, b.size);
        live[i] = live[live.length - 1]!;
        live.pop();
        inUse -= b.bytes;
      }
      expect(core.heap_bytes_in_use()).toBe(base + inUse);
      if (step % 64 === 0) expect(core.heap_validate(), `heap after step ${step}`).toBe(0);
    }
    for (const b of live) {
      expect(stampIntact(b)).toBe(true);
      core.buf_free(b.p, b.size);
    }
    expect(core.heap_bytes_in_use()).toBe(base);
    expect(core.heap_validate()).toBe(0);
  });

  it('small blocks of every class, allocated and freed at random: invariants hold at every step, and once all are free their slabs merge back', () => {
    const u32 = u32Source(0x51ab);
    expect(core.heap_bytes_in_use()).toBe(0); // the tests before this one gave everything back
    const before = largestWithoutGrowth();
    const live: Block[] = [];
    let tag = 1;
    for (let step = 0; step < 6_000; step++) {
      // grow to a few thousand blocks, then shrink to none: slabs fill, empty, get cut again
      const growing = step < 3_000 ? u32() % 100 < 70 : u32() % 100 < 30;
      if (live.length === 0 || growing) {
        const size = 1 + (u32() % 2 ** (1 + (u32() % 11))); // 1 B .. 2 KiB, every small class
        const p = core.buf_alloc(size);
        expect(p).not.toBe(0);
        const b: Block = { p, size, bytes: classSize(size), tag: tag++ };
        expect(p % b.bytes, 'a small block sits at a multiple of its size in its slab').toBe(0);
        stamp(b);
        live.push(b);
      } else {
        const i = u32() % live.length;
        const b = live[i]!;
        expect(stampIntact(b), `contents of block ${b.p}+${b.bytes}`).toBe(true);
        core.buf_free(b.p, b.size);
        live[i] = live[live.length - 1]!;
        live.pop();
      }
      expect(core.heap_validate(), `heap after step ${step}`).toBe(0);
    }
    for (const b of live.splice(0)) core.buf_free(b.p, b.size);
    expect(core.heap_validate()).toBe(0);
    expect(core.heap_bytes_in_use()).toBe(0);
    // What stays with small blocks is at most one cached empty slab for each of the 8 classes.
    const held = core.heap_small_bytes_free();
    expect(held % 4096).toBe(0);
    expect(held).toBeLessThanOrEqual(8 * 4096);
    // With no growth allowed, the largest block the memory held before is there again: the slabs
    // merged back, and the cached ones go back as soon as nothing else would do.
    expect(largestWithoutGrowth()).toBeGreaterThanOrEqual(before);
    expect(core.heap_small_bytes_free()).toBe(0);
    expect(core.heap_validate()).toBe(0);
  });

  it('a slab cut past the leaves of slab counts the core starts with gets a leaf from the arena, and everything freed merges around it', () => {
    // The first leaves cover about 120 MiB of arena; hold 4 KiB blocks until the heap hands them
    // out past 160 MiB, then small blocks until one comes from a slab up there.
    const PAST = 160 * 2 ** 20;
    const pages: number[] = [];
    while (pages.length === 0 || pages[pages.length - 1]! < PAST) {
      const p = core.buf_alloc(4096);
      expect(p).not.toBe(0);
      pages.push(p);
    }
    const smalls: number[] = [];
    while (smalls.length === 0 || smalls[smalls.length - 1]! < PAST) {
      expect(smalls.length, 'small blocks before one came from past 160 MiB').toBeLessThan(100_000);
      const p = core.buf_alloc(16);
      expect(p).not.toBe(0);
      smalls.push(p);
    }
    expect(core.heap_validate()).toBe(0);
    for (const p of smalls) core.buf_free(p, 16);
    for (const p of pages) core.buf_free(p, 4096);
    expect(core.heap_validate()).toBe(0);
    // the leaf is bookkeeping: not in use, and heap_validate counts it among the carved bytes
    expect(core.heap_bytes_in_use()).toBe(0);
  });

  it('large blocks freed in pieces merge: 64 blocks of 64 KiB given back serve one of 2 MiB with no new memory', () => {
    const pieces: number[] = [];
    for (let i = 0; i < 64; i++) {
      const p = core.buf_alloc(65536);
      expect(p).not.toBe(0);
      pieces.push(p);
    }
    const u32 = u32Source(7);
    for (let i = pieces.length - 1; i > 0; i--) {
      const j = u32() % (i + 1);
      [pieces[i], pieces[j]] = [pieces[j]!, pieces[i]!];
    }
    for (const p of pieces) core.buf_free(p, 65536);
    setMemoryLimit(0); // no growth from here on
    const size = memoryLimit().size;
    const big = core.buf_alloc(2 * 2 ** 20);
    expect(big).not.toBe(0);
    expect(memoryLimit().size).toBe(size);
    core.buf_free(big, 2 * 2 ** 20);
    setMemoryLimit(Infinity);
  });

  it('a request the cap refuses returns 0 and changes nothing', () => {
    setMemoryLimit(0);
    const before = core.heap_bytes_in_use();
    const size = memoryLimit().size;
    expect(core.buf_alloc(2 ** 30)).toBe(0);
    expect(core.heap_bytes_in_use()).toBe(before);
    expect(memoryLimit().size).toBe(size);
    setMemoryLimit(Infinity);
    const p = core.buf_alloc(2 ** 20); // and the heap goes on
    expect(p).not.toBe(0);
    core.buf_free(p, 2 ** 20);
  });

  it('records why a request failed: the cap, when less is free below it than asked; fragmented, when enough is free but in pieces', () => {
    setMemoryLimit(memoryLimit().size + 2 ** 20);
    const capFree = (): number => core.heap_limit_pages() * 65536 - memoryLimit().size; // room above the memory
    // every 64 KiB block the cap allows, then every other one given back: half free, in 64 KiB pieces
    const blocks: number[] = [];
    for (let p = core.buf_alloc(65536); p !== 0; p = core.buf_alloc(65536)) blocks.push(p);
    expect(capFree()).toBeLessThan(65536);
    expect(core.heap_failed_reason()).toBe(HEAP_FAIL_LIMIT);
    expect(core.heap_failed_bytes()).toBe(65536);
    const free = core.heap_bytes_free();
    expect(free).toBeLessThan(65536);
    blocks.sort((a, b) => a - b); // every other by address: no two freed ones are neighbours
    for (let i = 0; i < blocks.length; i += 2) core.buf_free(blocks[i]!, 65536);
    const freed = core.heap_bytes_free();
    expect(freed).toBe(free + Math.ceil(blocks.length / 2) * 65536);
    expect(core.buf_alloc(131072)).toBe(0); // no two free neighbours are buddies
    expect(core.heap_failed_reason()).toBe(HEAP_FAIL_FRAGMENTED);
    expect(core.heap_failed_bytes()).toBe(131072);
    expect(core.heap_bytes_free()).toBe(freed);
    // more than all that is free: the cap again
    const more = 2 ** Math.ceil(Math.log2(freed + 1));
    expect(core.buf_alloc(more)).toBe(0);
    expect([core.heap_failed_reason(), core.heap_failed_bytes(), core.heap_bytes_free()]).toEqual([HEAP_FAIL_LIMIT, more, freed]);
    for (let i = 1; i < blocks.length; i += 2) core.buf_free(blocks[i]!, 65536);
    expect(core.heap_validate()).toBe(0);
    setMemoryLimit(Infinity);
  });

  it('a Range whose index or whose own small block does not fit reports both: what raising the cap must make room for', () => {
    setMemoryLimit(memoryLimit().size + 8 * 65536);
    const index = 32768 + 2048; // a dense index of a /14: its 32 KiB bitmap and its summaries
    const requested: number[] = [];
    for (let left = 1; left <= 12; left++) {
      // every block below the cap taken (the small ones too), then the last `left` 4 KiB ones given back
      const blocks: number[] = [];
      for (let p = core.buf_alloc(4096); p !== 0; p = core.buf_alloc(4096)) blocks.push(p);
      const small: number[] = [];
      for (let p = core.buf_alloc(64); p !== 0; p = core.buf_alloc(64)) small.push(p);
      for (const p of blocks.splice(blocks.length - left)) core.buf_free(p, 4096);
      try {
        new Range('10.0.0.0/14', { indexKind: 'dense' }).destroy();
      } catch (e) {
        expect(e).toBeInstanceOf(OutOfMemoryError);
        requested.push((e as OutOfMemoryError).requested!);
      } finally {
        for (const p of blocks) core.buf_free(p, 4096);
        for (const p of small) core.buf_free(p, 64);
      }
    }
    // the index did not fit, or it did and the Range's own block (64 bytes) did not: either way
    // both, what the whole Range needs (never that block alone, nor the index without it); where
    // the index's second block (its summaries, 2 KiB) found no room, with the slab it is cut
    // from and that slab's leaf of counts (4 KiB each)
    expect(requested.length).toBeGreaterThan(0);
    for (const r of requested) expect(r).toBeGreaterThanOrEqual(index + 64);
    expect(Math.max(...requested)).toBeLessThanOrEqual(32768 + 2 * 4096 + 64);
    expect(core.heap_validate()).toBe(0);
    setMemoryLimit(Infinity);
  });
});
