// The dense index (core-as/dense.ts) through FreeIndex(kind 'dense') and its u32 fast path (bench/fast-path-index.ts),
// random operation sequences (fast-check), the legacy bitmap snapshot, and the upstream
// AllocationBitmap cases (pkg/registry/core/service/allocator/bitmap_test.go) as named rows.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FreeIndex } from '../adapters/free-index.ts';
import { FastPathIndex } from '../bench/fast-path-index.ts';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { core, memoryU32, OUT_OF_RANGE } from '../adapters/wasm.ts';

// ── the model ──────────────────────────────────────────────────────────────────────────────

/** The contract of index_next_free, written out as a scan (obviously correct, slow). */
function modelNextFree(taken: Set<number>, n: number, start: number, lo: number, hi: number): number {
  if (lo >= n) return -1;
  if (hi >= n) hi = n - 1;
  if (lo > hi) return -1;
  if (start < lo || start > hi) start = lo;
  for (let x = start; x <= hi; x++) if (!taken.has(x)) return x;
  for (let x = lo; x < start; x++) if (!taken.has(x)) return x;
  return -1;
}

function _modelNextSet(sorted: number[], from: number): number {
  for (const x of sorted) if (x >= from) return x;
  return -1;
}

/** Big-endian minimal bytes of the number with bit i set for every i in `taken` (upstream big.Int.Bytes()). */
function referenceBytes(taken: Iterable<number>): Uint8Array {
  let v = 0n;
  for (const i of taken) v |= 1n << BigInt(i);
  if (v === 0n) return new Uint8Array(0);
  let hex = v.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  const out = new Uint8Array(hex.length / 2);
  for (let k = 0; k < out.length; k++) out[k] = parseInt(hex.slice(2 * k, 2 * k + 2), 16);
  return out;
}

function nextFree(ix: FreeIndex, start: number, lo: number, hi: number): number {
  return ix.nextFree(0, start, 0, lo, 0, hi) ? ix.resultLo : -1;
}

function walk(ix: FreeIndex, from = 0, limit = Infinity): number[] {
  const out: number[] = [];
  let at = from;
  while (out.length < limit && at < 2 ** 32 && ix.nextSet(0, at)) {
    expect(ix.resultHi).toBe(0);
    out.push(ix.resultLo);
    at = ix.resultLo + 1;
  }
  return out;
}

// ── random operation sequences ─────────────────────────────────────────────────────────────

type Op =
  | { op: 'set' | 'clear' | 'has'; x: number }
  | { op: 'nextFree'; start: number; lo: number; hi: number }
  | { op: 'fill'; lo: number; len: number } // setMany over [lo, lo+len), then a nextFree inside
  | { op: 'clearBand'; lo: number; len: number }
  | { op: 'walk'; from: number; steps: number };

/** Offsets near the places where words (64) and summary words (4096, 262144) begin and end. */
const BOUNDARIES = [0, 64, 128, 4096, 8192, 262144, 524288];

function offsetArb(n: number): fc.Arbitrary<number> {
  const near = fc
    .tuple(fc.constantFrom(...BOUNDARIES, n, n - 1, n >>> 1), fc.integer({ min: -70, max: 70 }))
    .map(([b, d]) => Math.max(0, b + d));
  return fc.oneof(near, fc.integer({ min: 0, max: Math.max(0, n + 2) }));
}

function opArb(n: number): fc.Arbitrary<Op> {
  const x = offsetArb(n);
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constant('set' as const), x }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('clear' as const), x }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('has' as const), x }) },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('nextFree' as const), start: x, lo: x, hi: x }) },
    {
      weight: 2,
      arbitrary: fc.record({ op: fc.constant('fill' as const), lo: x, len: fc.integer({ min: 1, max: 9000 }) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ op: fc.constant('clearBand' as const), lo: x, len: fc.integer({ min: 1, max: 200 }) }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('walk' as const), from: x, steps: fc.integer({ min: 1, max: 20 }) }) },
  );
}

function runOps(n: number, ops: Op[]): void {
  const fast = new FastPathIndex(0, n, 'dense');
  const ix = fast.index;
  const taken = new Set<number>();
  try {
    expect(ix.kind).toBe('dense');
    for (const o of ops) {
      switch (o.op) {
        case 'set':
          expect(ix.set(0, o.x)).toBe(o.x < n && !taken.has(o.x));
          if (o.x < n) taken.add(o.x);
          break;
        case 'clear':
          expect(ix.clear(0, o.x)).toBe(taken.has(o.x));
          taken.delete(o.x);
          break;
        case 'has':
          expect(ix.has(0, o.x)).toBe(taken.has(o.x));
          break;
        case 'nextFree': {
          const want = modelNextFree(taken, n, o.start, o.lo, o.hi);
          expect(nextFree(ix, o.start, o.lo, o.hi)).toBe(want);
          expect(fast.nextFree32(o.start, o.lo, o.hi)).toBe(want);
          break;
        }
        case 'fill': {
          const hi = Math.min(n, o.lo + o.len);
          if (o.lo >= hi) break;
          const pairs = new Uint32Array(2 * (hi - o.lo));
          let fresh = 0;
          for (let x = o.lo; x < hi; x++) {
            pairs[2 * (x - o.lo) + 1] = x;
            if (!taken.has(x)) fresh++;
            taken.add(x);
          }
          expect(ix.setMany(pairs)).toBe(fresh);
          // A full (or nearly full) band: the summaries must find the one hole or report none.
          const s = o.lo + ((o.len * 7) % (hi - o.lo));
          expect(fast.nextFree32(s, o.lo, hi - 1)).toBe(modelNextFree(taken, n, s, o.lo, hi - 1));
          expect(fast.nextFree32(s, o.lo, hi)).toBe(modelNextFree(taken, n, s, o.lo, hi));
          break;
        }
        case 'clearBand':
          for (let x = o.lo; x < Math.min(n, o.lo + o.len); x += 3) {
            expect(ix.clear(0, x)).toBe(taken.delete(x));
          }
          break;
        case 'walk': {
          const sorted = [...taken].sort((a, b) => a - b);
          const got = walk(ix, o.from, o.steps);
          const want = sorted.filter((x) => x >= o.from).slice(0, o.steps);
          expect(got).toEqual(want);
          break;
        }
      }
      expect(ix.count()).toBe(taken.size);
      expect(ix.validate()).toBe(0);
    }
    expect(walk(ix)).toEqual([...taken].sort((a, b) => a - b));
  } finally {
    fast.destroy();
  }
}

/** Generous: property runs are not timed, only allowed to finish on a loaded machine. */
const PROPERTY_TIMEOUT_MS = 60_000;

const sizeArb = fc.oneof(
  fc.integer({ min: 1, max: 200 }),
  fc.constantFrom(1, 63, 64, 65, 4095, 4096, 4097, 65534, 65535, 262144, 262145, 2 ** 20 - 2, 2 ** 20),
  fc.integer({ min: 1, max: 2 ** 20 }),
);

describe('dense index: random operations against a Set model', () => {
  it(
    'set/clear/has/nextFree/setMany/nextSet agree with the model and validate() stays 0',
    () => {
      fc.assert(
        fc.property(
          sizeArb.chain((n) => fc.tuple(fc.constant(n), fc.array(opArb(n), { maxLength: 40 }))),
          ([n, ops]) => runOps(n, ops),
        ),
        { numRuns: 150 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'nextFree over bands crossing summary boundaries at high fill',
    () => {
      // Everything taken except a few holes; bands of every shape around 64, 4096 and 262144.
      const n = 2 ** 20 - 2;
      const fast = new FastPathIndex(0, n, 'dense');
      const ix = fast.index;
      try {
        const all = new Uint32Array(2 * n);
        for (let x = 0; x < n; x++) all[2 * x + 1] = x;
        expect(ix.setMany(all)).toBe(n);
        expect(ix.validate()).toBe(0);
        expect(fast.nextFree32(0, 0, n - 1)).toBe(-1);
        const holes = new Set<number>();
        const taken = { has: (x: number) => x < n && !holes.has(x) } as Set<number>;
        fc.assert(
          fc.property(fc.array(offsetArb(n), { maxLength: 6 }), offsetArb(n), offsetArb(n), offsetArb(n), (hs, start, a, b) => {
            for (const h of hs) if (h < n && ix.clear(0, h)) holes.add(h);
            const lo = Math.min(a, b);
            const hi = Math.max(a, b);
            expect(fast.nextFree32(start, lo, hi)).toBe(modelNextFree(taken, n, start, lo, hi));
            expect(fast.nextFree32(start, lo, lo)).toBe(modelNextFree(taken, n, start, lo, lo)); // a band of one
            expect(ix.validate()).toBe(0);
            for (const h of holes) ix.set(0, h);
            holes.clear();
          }),
          { numRuns: 300 },
        );
      } finally {
        fast.destroy();
      }
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('a 2^24 index: a few operations at both ends and across the top summary', () => {
    const n = 2 ** 24;
    const fast = new FastPathIndex(0, n, 'dense');
    const ix = fast.index;
    try {
      expect((ix.bytes() * 8) / n).toBeLessThanOrEqual(1.1);
      expect(fast.nextFree32(n - 1, 0, n - 1)).toBe(n - 1);
      expect(ix.set(0, n - 1)).toBe(true);
      expect(ix.set(0, n)).toBe(false);
      expect(fast.nextFree32(n - 1, 0, n - 1)).toBe(0); // wraps
      expect(fast.nextFree32(n - 1, n - 1, n + 5)).toBe(-1); // band of one, hi clamped
      const big = new Uint32Array(2 * 300000);
      for (let k = 0; k < 300000; k++) big[2 * k + 1] = k; // crosses the first level-2 summary word (262144)
      expect(ix.setMany(big)).toBe(300000);
      expect(fast.nextFree32(0, 0, n - 1)).toBe(300000);
      expect(fast.nextFree32(5, 0, 299999)).toBe(-1);
      expect(ix.clear(0, 262144)).toBe(true);
      expect(fast.nextFree32(100, 0, n - 1)).toBe(262144);
      expect(fast.nextFree32(262145, 0, 299999)).toBe(262144); // wraps to the hole
      expect(walk(ix, 299990, 12)).toEqual([299990, 299991, 299992, 299993, 299994, 299995, 299996, 299997, 299998, 299999, n - 1]);
      expect(ix.count()).toBe(300000);
      expect(ix.validate()).toBe(0);
    } finally {
      fast.destroy();
    }
  });
});

// ── batch, snapshot, memory ────────────────────────────────────────────────────────────────

describe('dense index: setMany, snapshot, restore', () => {
  it(
    'setMany equals individual sets (duplicates included)',
    () => {
      fc.assert(
        fc.property(
          fc
            .integer({ min: 1, max: 70000 })
            .chain((n) => fc.tuple(fc.constant(n), fc.array(fc.integer({ min: 0, max: n - 1 }), { maxLength: 3000 }))),
          ([n, xs]) => {
            const a = new FreeIndex(0, n, 'dense');
            const b = new FreeIndex(0, n, 'dense');
            try {
              let fresh = 0;
              for (const x of xs) if (a.set(0, x)) fresh++;
              const pairs = new Uint32Array(2 * xs.length);
              xs.forEach((x, k) => (pairs[2 * k + 1] = x));
              expect(b.setMany(pairs)).toBe(fresh);
              expect(b.validate()).toBe(0);
              expect(b.count()).toBe(a.count());
              expect(walk(b)).toEqual(walk(a));
              expect(b.snapshotBits()).toEqual(a.snapshotBits());
            } finally {
              a.destroy();
              b.destroy();
            }
          },
        ),
        { numRuns: 60 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('setMany stops at an out-of-range entry, keeping the ones before it consistent', () => {
    const ix = new FreeIndex(0, 100, 'dense');
    try {
      expect(() => ix.setMany(new Uint32Array([0, 5, 0, 70, 0, 100, 0, 7]))).toThrow(InvalidArgumentError);
      expect(walk(ix)).toEqual([5, 70]);
      expect(ix.count()).toBe(2);
      expect(ix.validate()).toBe(0);
      expect(() => ix.setMany(new Uint32Array([1, 5]))).toThrow(/position 0/);
    } finally {
      ix.destroy();
    }
  });

  it('snapshot bytes equal the big-endian minimal bytes of the bitmap, and restore is the identity', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 5000 })
          .chain((n) => fc.tuple(fc.constant(n), fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { maxLength: 400 }))),
        ([n, xs]) => {
          const a = new FreeIndex(0, n, 'dense');
          const b = new FreeIndex(0, n, 'dense');
          try {
            for (const x of xs) a.set(0, x);
            b.set(0, n - 1); // restore replaces, it does not merge
            const bytes = a.snapshotBits();
            expect(bytes).toEqual(referenceBytes(xs));
            b.restoreBits(bytes);
            expect(b.validate()).toBe(0);
            expect(b.count()).toBe(xs.length);
            expect(walk(b)).toEqual([...xs].sort((p, q) => p - q));
            expect(b.snapshotBits()).toEqual(bytes);
          } finally {
            a.destroy();
            b.destroy();
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('restore rejects a snapshot with a bit beyond the index and leaves it unchanged', () => {
    const ix = new FreeIndex(0, 10, 'dense');
    try {
      ix.set(0, 2);
      expect(() => ix.restoreBits(new Uint8Array([0x04, 0x00]))).toThrow(InvalidArgumentError); // offset 10
      expect(() => ix.restoreBits(new Uint8Array([0x01, 0x00, 0x00]))).toThrow(/offset 16/);
      expect(walk(ix)).toEqual([2]);
      ix.restoreBits(new Uint8Array([0x00, 0x02, 0x01])); // leading zero ignored; offsets 0 and 9
      expect(walk(ix)).toEqual([0, 9]);
      ix.restoreBits(new Uint8Array(0));
      expect(ix.count()).toBe(0);
      expect(ix.snapshotBits()).toEqual(new Uint8Array(0));
      expect(ix.validate()).toBe(0);
    } finally {
      ix.destroy();
    }
  });

  it('memory stays within 1.1 bits per address for service-range sizes ≥ 2^16', () => {
    for (const n of [2 ** 16 - 2, 65535, 2 ** 20 - 2, 2 ** 24]) {
      const ix = new FreeIndex(0, n, 'dense');
      expect((ix.bytes() * 8) / n).toBeLessThanOrEqual(1.1);
      ix.destroy();
    }
    // Other sizes round up to heap.ts's power-of-two classes (≤ 2×); small ones pay a fixed
    // header (one 128-byte heap class) on top of the bitmap.
    for (const n of [100000, 3 * 2 ** 18]) {
      const ix = new FreeIndex(0, n, 'dense');
      expect((ix.bytes() * 8) / n).toBeLessThanOrEqual(2.2);
      ix.destroy();
    }
    for (const n of [1, 254, 2 ** 12 - 2]) {
      const ix = new FreeIndex(0, n, 'dense');
      expect(ix.bytes()).toBeLessThanOrEqual(Math.ceil(n / 8) * 1.1 + 160);
      ix.destroy();
    }
  });

  it('destroy returns every byte it took', () => {
    const before = core.heap_bytes_in_use();
    const made = [1, 64, 65, 4097, 100000, 2 ** 16 - 2].map((n) => new FreeIndex(0, n, 'dense'));
    for (const ix of made) {
      ix.set(0, 0);
      ix.snapshotBits();
    }
    expect(core.heap_bytes_in_use()).toBe(before + made.reduce((s, ix) => s + ix.bytes(), 0));
    for (const ix of made) ix.destroy();
    expect(core.heap_bytes_in_use()).toBe(before);
  });

  it('validate names the broken invariant when level 0 is edited behind its back', () => {
    const fast = new FastPathIndex(0, 256, 'dense');
    const ix = fast.index;
    try {
      const w = core.dense_words_ptr(fast.handle) >>> 2; // u32 index of word 0
      const u32 = () => memoryU32();
      ix.set(0, 0);
      u32()[w] = 0; // offset 0 gone, count says 1
      expect(ix.validate()).toBe(1);
      u32()[w + 4] = 1; // offset 128 instead: same count, but ANY summary still points at word 0
      expect(ix.validate()).toBe(5);
      expect(core.dense_rebuild(fast.handle)).toBe(1);
      expect(ix.validate()).toBe(0);
      const pairs = new Uint32Array(128);
      for (let k = 0; k < 64; k++) pairs[2 * k + 1] = 64 + k; // word 1 full
      ix.setMany(pairs);
      u32()[w + 2] = 0xfffffffe; // offset 64 gone ...
      u32()[w] = 1; // ... offset 0 taken: same count, but FULL still says word 1 is full
      expect(ix.validate()).toBe(3);
      fast.destroy();
      const oddFast = new FastPathIndex(0, 100, 'dense');
      const odd = oddFast.index;
      const v = core.dense_words_ptr(oddFast.handle) >>> 2;
      odd.set(0, 0);
      u32()[v] = 0;
      u32()[v + 3] = 0x80000000; // offset 127 ≥ n: padding must stay zero
      expect(odd.validate()).toBe(2);
      expect(core.dense_rebuild(oddFast.handle)).toBe(0);
      expect(odd.validate()).toBe(0);
      oddFast.destroy();
    } finally {
      fast.destroy();
    }
  });
});

// ── edge cases of the contract ─────────────────────────────────────────────────────────────

describe('dense index: contract edges', () => {
  const rows: Array<{ name: string; n: number; taken: number[]; start: number; lo: number; hi: number; want: number }> = [
    { name: 'empty band lo > hi', n: 100, taken: [], start: 5, lo: 10, hi: 9, want: -1 },
    { name: 'lo beyond n', n: 100, taken: [], start: 100, lo: 100, hi: 200, want: -1 },
    { name: 'hi clamped to n-1', n: 100, taken: [98], start: 98, lo: 90, hi: 5000, want: 99 },
    { name: 'start below band → lo', n: 100, taken: [10], start: 3, lo: 10, hi: 20, want: 11 },
    { name: 'start above band → lo', n: 100, taken: [], start: 50, lo: 10, hi: 20, want: 10 },
    { name: 'wraps to lo', n: 100, taken: [18, 19, 20], start: 18, lo: 10, hi: 20, want: 10 },
    { name: 'band of one, taken', n: 100, taken: [42], start: 42, lo: 42, hi: 42, want: -1 },
    { name: 'band of one, free', n: 100, taken: [41, 43], start: 0, lo: 42, hi: 42, want: 42 },
    { name: 'full band inside a free index', n: 200, taken: [63, 64, 65], start: 64, lo: 63, hi: 65, want: -1 },
    { name: 'n = 1', n: 1, taken: [], start: 0, lo: 0, hi: 0, want: 0 },
    { name: 'n = 1 full', n: 1, taken: [0], start: 0, lo: 0, hi: 0, want: -1 },
    { name: 'last word partial', n: 70, taken: [69], start: 69, lo: 64, hi: 200, want: 64 },
  ];
  for (const r of rows) {
    it(r.name, () => {
      const fast = new FastPathIndex(0, r.n, 'dense');
      const ix = fast.index;
      try {
        for (const x of r.taken) ix.set(0, x);
        expect(fast.nextFree32(r.start, r.lo, r.hi)).toBe(r.want);
        expect(nextFree(ix, r.start, r.lo, r.hi)).toBe(r.want);
        expect(ix.validate()).toBe(0);
      } finally {
        fast.destroy();
      }
    });
  }

  it('out of range: set/clear report OUT_OF_RANGE, has is false', () => {
    const fast = new FastPathIndex(0, 100, 'dense');
    const ix = fast.index;
    try {
      expect(core.index_set(fast.handle, 0, 100)).toBe(OUT_OF_RANGE);
      expect(core.index_clear(fast.handle, 0, 100)).toBe(OUT_OF_RANGE);
      expect(core.index_set(fast.handle, 1, 0)).toBe(OUT_OF_RANGE);
      expect(ix.set(0, 100)).toBe(false);
      expect(ix.has(0, 100)).toBe(false);
      expect(ix.nextSet(0, 100)).toBe(false);
      expect(ix.count()).toBe(0);
    } finally {
      fast.destroy();
    }
  });
});

// ── upstream AllocationBitmap cases (pkg/registry/core/service/allocator/bitmap_test.go) ──────────────────────────
//
// The allocator owns the strategy; here allocateNext is upstream's randomScanStrategyWithOffset
// expressed with nextFree: a random start in the upper band [offset, max−1], then in [0, offset−1].

/** A small seeded PRNG (mulberry32) so every row is reproducible. */
function rng(seed: number): (bound: number) => number {
  let s = seed >>> 0;
  return (bound) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % bound) >>> 0;
  };
}

class BitmapMap {
  readonly fast: FastPathIndex;
  readonly ix: FreeIndex;
  private readonly rand: (bound: number) => number;
  constructor(
    readonly max: number,
    readonly offset: number,
    seed = 1,
  ) {
    this.fast = new FastPathIndex(0, max, 'dense');
    this.ix = this.fast.index;
    this.rand = rng(seed);
  }
  allocate(i: number): boolean {
    return this.ix.set(0, i);
  }
  allocateNext(): number | undefined {
    if (this.ix.count() >= this.max) return undefined;
    const { max, offset } = this;
    let r = this.fast.nextFree32(offset + this.rand(max - offset), offset, max - 1);
    if (r < 0 && offset > 0) r = this.fast.nextFree32(this.rand(offset), 0, offset - 1);
    if (r < 0) return undefined;
    this.ix.set(0, r);
    return r;
  }
  free(): number {
    return this.max - this.ix.count();
  }
}

const C_CASES = [
  { name: 'NewAllocationMap', max: 32, reserved: 0 },
  { name: 'max 8', max: 8, reserved: 0 },
  { name: 'max 128 reserved 16', max: 128, reserved: 16 },
  { name: 'max 1024 reserved 64', max: 1024, reserved: 64 },
  { name: 'max 65535 reserved 256', max: 65535, reserved: 256 },
];

describe('upstream bitmap_test.go (section C)', () => {
  for (const tc of C_CASES) {
    for (const seed of [1, 2, 3]) {
      it(`C1 TestAllocate — ${tc.name} (seed ${seed})`, () => {
        const m = new BitmapMap(tc.max, tc.reserved, seed);
        expect(m.allocateNext()).toBeDefined();
        expect(m.ix.count()).toBe(1);
        expect(m.free()).toBe(tc.max - 1);
        m.fast.destroy();
      });
    }

    it(`C2 TestAllocateMax — ${tc.name}`, () => {
      const m = new BitmapMap(tc.max, tc.reserved);
      for (let i = 0; i < tc.max; i++) expect(m.allocate(i)).toBe(true);
      expect(m.allocateNext()).toBeUndefined();
      expect(m.allocate(tc.max)).toBe(false);
      expect(core.index_set(m.fast.handle, 0, tc.max)).toBe(OUT_OF_RANGE);
      expect(m.free()).toBe(0);
      expect(m.ix.validate()).toBe(0);
      m.fast.destroy();
    });

    it(`C3 TestAllocateNextMax — ${tc.name}`, () => {
      const m = new BitmapMap(tc.max, tc.reserved, 7);
      for (let i = 0; i < tc.max; i++) expect(m.allocateNext()).toBeDefined();
      expect(m.allocateNext()).toBeUndefined();
      expect(m.free()).toBe(0);
      m.fast.destroy();
    });

    it(`C4 TestAllocateError — ${tc.name}`, () => {
      const m = new BitmapMap(tc.max, tc.reserved);
      expect(m.allocate(3)).toBe(true);
      expect(m.allocate(3)).toBe(false);
      m.fast.destroy();
    });

    it(`C5 TestRelease — ${tc.name}`, () => {
      const m = new BitmapMap(tc.max, tc.reserved);
      m.allocate(3);
      expect(m.ix.has(0, 3)).toBe(true);
      expect(m.ix.clear(0, 3)).toBe(true);
      expect(m.ix.has(0, 3)).toBe(false);
      m.fast.destroy();
    });

    it(`C6 TestForEach — ${tc.name}`, () => {
      for (const sub of [[], [0], [0, 2, 5], [0, 1, 2, 3, 4, 5, 6, 7]]) {
        const m = new BitmapMap(tc.max, tc.reserved);
        for (const i of sub) {
          expect(m.allocate(i)).toBe(true);
          expect(m.ix.has(0, i)).toBe(true);
        }
        expect(walk(m.ix)).toEqual(sub);
        m.fast.destroy();
      }
    });

    it(`C7 TestSnapshotAndRestore — ${tc.name}`, () => {
      const m = new BitmapMap(tc.max, tc.reserved);
      m.allocate(3);
      const bytes = m.ix.snapshotBits();
      expect(bytes).toEqual(new Uint8Array([0x08]));
      const m2 = new BitmapMap(10, 0);
      m2.ix.restoreBits(bytes);
      expect(m2.ix.count()).toBe(1);
      expect(m2.ix.has(0, 3)).toBe(true);
      m.fast.destroy();
      m2.fast.destroy();
    });
  }

  for (const seed of [1, 2, 3, 4]) {
    it(`C8 TestAllocateMax_BitmapReserved (seed ${seed})`, () => {
      const m = new BitmapMap(128, 16, seed);
      for (let i = 0; i < 112; i++) expect(m.allocateNext()).toBeDefined();
      expect(m.free()).toBe(16);
      for (let i = 0; i < 16; i++) expect(m.ix.has(0, i)).toBe(false); // upper band filled first
      expect(m.allocateNext()).toBeDefined();
      expect(m.ix.count()).toBe(113);
      expect(m.free()).toBe(15);
      m.fast.destroy();
    });

    it(`C9 TestPreAllocateReservedFull_BitmapReserved (seed ${seed})`, () => {
      const m = new BitmapMap(128, 16, seed);
      for (let i = 16; i < 128; i++) expect(m.allocate(i)).toBe(true);
      for (let i = 0; i < 15; i++) expect(m.allocate(i)).toBe(true);
      expect(m.free()).toBe(1);
      expect([...Array(16).keys()].filter((i) => !m.ix.has(0, i))).toHaveLength(1);
      expect(m.allocateNext()).toBe(15);
      expect(m.free()).toBe(0);
      expect(m.allocateNext()).toBeUndefined();
      expect(m.ix.count()).toBe(128);
      m.fast.destroy();
    });

    it(`C10 TestAllocateUniqueness (seed ${seed})`, () => {
      const m = new BitmapMap(128, 16, seed);
      const seen = new Set<number>();
      for (let i = 0; i < 128; i++) {
        const r = m.allocateNext();
        expect(r).toBeDefined();
        expect(seen.has(r!)).toBe(false);
        seen.add(r!);
      }
      expect(seen.size).toBe(128);
      m.fast.destroy();
    });
  }
});

describe('takeFree32 (find and mark in one core call)', () => {
  it('equals nextFree32 followed by set, for both kinds and through FreeIndex.takeFree, on random bands', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.boolean()), { maxLength: 200 }),
        (n, steps) => {
          const fused = new FastPathIndex(0, n, 'dense');
          const twoCalls = new FastPathIndex(0, n, 'dense');
          const sparse = new FastPathIndex(0, n, 'sparse'); // the fallback path of takeFree32
          const viaIndex = new FastPathIndex(0, n, 'dense'); // FreeIndex.takeFree (index_take_free)
          try {
            for (const [a, b, c, clear] of steps) {
              if (clear) {
                for (const x of [fused, twoCalls, sparse, viaIndex]) x.index.clear(0, a % n);
                continue;
              }
              const lo = Math.min(b % n, c % n);
              const hi = Math.max(b % n, c % n);
              const want = twoCalls.nextFree32(a % n, lo, hi);
              if (want >= 0) twoCalls.index.set(0, want);
              expect(fused.takeFree32(a % n, lo, hi)).toBe(want);
              expect(sparse.takeFree32(a % n, lo, hi)).toBe(want);
              const ix = viaIndex.index;
              expect(ix.takeFree(0, a % n, 0, lo, 0, hi) ? ix.resultLo : -1).toBe(want);
              expect(ix.count()).toBe(twoCalls.index.count());
              expect(fused.index.count()).toBe(twoCalls.index.count());
              expect(fused.index.validate()).toBe(0);
              expect(sparse.index.validate()).toBe(0);
            }
          } finally {
            fused.destroy();
            twoCalls.destroy();
            sparse.destroy();
            viaIndex.destroy();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
