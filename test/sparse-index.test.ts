// The sparse index (core-as/sparse.ts: runs of ≥ 2 offsets in sparse-runs.ts, isolated offsets in
// sparse-singles.ts) against a Set<bigint> model, through FreeIndex(…, 'sparse').
//
// One random driver (`runOps`) serves every domain: small ones (n = 1..300, every case of the run
// logic), many runs (bands and merges across page boundaries), domains at the top of u64
// (n = 2^64 − 1, offsets near 0, 2^32, 2^63, 2^64 − 2), and long consecutive runs. After every
// step the index must agree with the model and `validate()` must be 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FreeIndex } from '../adapters/free-index.ts';
import { core } from '../adapters/wasm.ts';
import { xorshift } from './helpers.ts';
import { byValue, hiOf, loOf, MAX_N, pairsOf, withFree } from './sparse-helpers.ts';

const TWO32 = 1n << 32n;

/** Every index made here, destroyed in afterAll (and most tests destroy their own earlier). */
const made: FreeIndex[] = [];
function sparse(n: bigint): FreeIndex {
  const ix = new FreeIndex(hiOf(n), loOf(n), 'sparse');
  made.push(ix);
  return ix;
}
function destroy(ix: FreeIndex): void {
  ix.destroy();
  made.splice(made.indexOf(ix), 1);
}

// ── the model: a slow, obviously correct implementation of the contract ─────────────────────
class Model {
  readonly taken = new Set<bigint>();
  constructor(readonly n: bigint) {}

  set(x: bigint): boolean {
    if (x >= this.n || this.taken.has(x)) return false;
    this.taken.add(x);
    return true;
  }
  clear(x: bigint): boolean {
    return this.taken.delete(x);
  }
  /** First free ≥ x (the set is finite, so the walk is bounded by its size). */
  private firstFree(x: bigint): bigint {
    while (this.taken.has(x)) x++;
    return x;
  }
  /** start..hi, then lo..start−1, in [lo, min(hi, n−1)]; start outside → lo. */
  nextFree(start: bigint, lo: bigint, hi: bigint): bigint | null {
    if (lo > hi || lo >= this.n) return null;
    if (hi >= this.n) hi = this.n - 1n;
    if (start < lo || start > hi) start = lo;
    const a = this.firstFree(start);
    if (a <= hi) return a;
    const b = this.firstFree(lo);
    return b < start ? b : null;
  }
  nextSet(from: bigint): bigint | null {
    let best: bigint | null = null;
    for (const x of this.taken) if (x >= from && (best === null || x < best)) best = x;
    return best;
  }
}

// ── the driver ──────────────────────────────────────────────────────────────────────────────
type Op =
  | { t: 'set'; x: bigint }
  | { t: 'clear'; x: bigint }
  | { t: 'has'; x: bigint }
  | { t: 'nextFree'; s: bigint; lo: bigint; hi: bigint }
  | { t: 'takeFree'; s: bigint; lo: bigint; hi: bigint }
  | { t: 'nextSet'; x: bigint }
  | { t: 'fill'; x: bigint; len: number }
  | { t: 'many'; xs: bigint[] };

function opArb(off: fc.Arbitrary<bigint>, maxFill: number): fc.Arbitrary<Op> {
  return fc.oneof(
    { weight: 5, arbitrary: off.map((x): Op => ({ t: 'set', x })) },
    { weight: 3, arbitrary: off.map((x): Op => ({ t: 'clear', x })) },
    { weight: 1, arbitrary: off.map((x): Op => ({ t: 'has', x })) },
    { weight: 3, arbitrary: fc.tuple(off, off, off).map(([s, lo, hi]): Op => ({ t: 'nextFree', s, lo, hi })) },
    { weight: 2, arbitrary: fc.tuple(off, off, off).map(([s, lo, hi]): Op => ({ t: 'takeFree', s, lo, hi })) },
    { weight: 1, arbitrary: off.map((x): Op => ({ t: 'nextSet', x })) },
    { weight: 1, arbitrary: fc.tuple(off, fc.integer({ min: 1, max: maxFill })).map(([x, len]): Op => ({ t: 'fill', x, len })) },
    { weight: 1, arbitrary: fc.array(off, { maxLength: 150 }).map((xs): Op => ({ t: 'many', xs })) },
  );
}

const resultOf = (ix: FreeIndex): bigint => (BigInt(ix.resultHi) << 32n) | BigInt(ix.resultLo);

function step(ix: FreeIndex, m: Model, op: Op): void {
  switch (op.t) {
    case 'set':
      expect(ix.set(hiOf(op.x), loOf(op.x)), `set ${op.x}`).toBe(m.set(op.x));
      break;
    case 'clear':
      expect(ix.clear(hiOf(op.x), loOf(op.x)), `clear ${op.x}`).toBe(m.clear(op.x));
      break;
    case 'has':
      expect(ix.has(hiOf(op.x), loOf(op.x)), `has ${op.x}`).toBe(m.taken.has(op.x));
      break;
    case 'nextFree': {
      const want = m.nextFree(op.s, op.lo, op.hi);
      const got = ix.nextFree(hiOf(op.s), loOf(op.s), hiOf(op.lo), loOf(op.lo), hiOf(op.hi), loOf(op.hi));
      expect(got ? resultOf(ix) : null, `nextFree(${op.s}, [${op.lo}, ${op.hi}])`).toBe(want);
      break;
    }
    case 'takeFree': {
      // nextFree and a set of what it finds, in one call (the start itself tried first)
      const want = m.nextFree(op.s, op.lo, op.hi);
      if (want !== null) m.set(want);
      const got = ix.takeFree(hiOf(op.s), loOf(op.s), hiOf(op.lo), loOf(op.lo), hiOf(op.hi), loOf(op.hi));
      expect(got ? resultOf(ix) : null, `takeFree(${op.s}, [${op.lo}, ${op.hi}])`).toBe(want);
      break;
    }
    case 'nextSet': {
      const want = m.nextSet(op.x);
      const got = ix.nextSet(hiOf(op.x), loOf(op.x));
      expect(got ? resultOf(ix) : null, `nextSet(${op.x})`).toBe(want);
      break;
    }
    case 'fill':
      for (let i = 0n; i < BigInt(op.len); i++) {
        const x = op.x + i;
        if (x >= MAX_N) break; // beyond the 64-bit domain
        expect(ix.set(hiOf(x), loOf(x))).toBe(m.set(x));
      }
      break;
    case 'many': {
      const bad = op.xs.findIndex((x) => x >= m.n);
      const ok = bad < 0 ? op.xs : op.xs.slice(0, bad);
      let want = 0;
      for (const x of ok) if (m.set(x)) want++;
      if (bad < 0) expect(ix.setMany(pairsOf(op.xs))).toBe(want);
      else expect(() => ix.setMany(pairsOf(op.xs))).toThrow(`position ${bad}`);
      break;
    }
  }
  expect(ix.validate(), `validate after ${op.t}`).toBe(0);
  expect(ix.count()).toBe(m.taken.size);
}

function runOps(n: bigint, ops: Op[]): void {
  const ix = sparse(n);
  const m = new Model(n);
  try {
    for (const op of ops) step(ix, m, op);
    runOpsOn(ix, m);
  } finally {
    destroy(ix);
  }
}

/** A full ascending walk agrees with the model. */
function runOpsOn(ix: FreeIndex, m: Model): void {
  const sorted = [...m.taken].sort(byValue);
  let from = 0n;
  for (const x of sorted) {
    expect(ix.nextSet(hiOf(from), loOf(from))).toBe(true);
    expect(resultOf(ix)).toBe(x);
    from = x + 1n;
  }
  if (from < MAX_N) expect(ix.nextSet(hiOf(from), loOf(from))).toBe(false);
}

/** Offsets clustered around anchors (± 40), clamped to [0, 2^64 − 1]. */
function nearArb(anchors: bigint[], spread = 40): fc.Arbitrary<bigint> {
  return fc.tuple(fc.constantFrom(...anchors), fc.integer({ min: -spread, max: spread })).map(([a, d]) => {
    const x = a + BigInt(d);
    return x < 0n ? 0n : x > MAX_N ? MAX_N : x;
  });
}

let heapBefore = 0;
beforeAll(() => {
  heapBefore = core.heap_bytes_in_use();
});
afterAll(() => {
  for (const ix of [...made]) destroy(ix);
  // sparse_free returns every block: the heap is back where it started
  expect(core.heap_bytes_in_use()).toBe(heapBefore);
});

describe('sparse index', () => {
  it('is kind sparse, empty, and valid when new (including n = 0 and n = 2^64 − 1)', () => {
    for (const n of [0n, 1n, 300n, MAX_N]) {
      const ix = sparse(n);
      expect(ix.kind).toBe('sparse');
      expect(ix.count()).toBe(0);
      expect(ix.validate()).toBe(0);
      expect(ix.nextSet(0, 0)).toBe(false);
      destroy(ix);
    }
  });

  it('agrees with the model on small domains (n = 1..300)', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 300 })
          .chain((n) =>
            fc.tuple(fc.constant(BigInt(n)), fc.array(opArb(fc.bigInt({ min: 0n, max: BigInt(n) + 2n }), 40), { maxLength: 120 })),
          ),
        ([n, ops]) => runOps(n, ops),
      ),
      { numRuns: 300 },
    );
  });

  it('agrees with the model across page boundaries (thousands of runs, splits and merges)', () => {
    fc.assert(
      fc.property(
        fc.array(opArb(fc.bigInt({ min: 0n, max: 12_000n }), 30), { maxLength: 200 }),
        fc.integer({ min: 0, max: 2 }),
        (ops, stride) => {
          // seed ~2000 runs of length 1 (every other or every third offset), then mutate
          const seed: bigint[] = [];
          for (let x = 0n; x < 12_000n; x += BigInt(stride + 2)) seed.push(x);
          runOps(12_001n, [{ t: 'many', xs: seed }, ...ops]);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('clearing every run page by page frees and merges pages and stays valid', () => {
    const ix = sparse(1_000_000n);
    const m = new Model(1_000_000n);
    for (let x = 0n; x < 6000n; x += 2n) step(ix, m, { t: 'set', x });
    const afterFill = ix.bytes();
    // clear in an order that empties pages from the middle out
    for (let k = 0n; k < 3000n; k++) {
      const x = ((k * 1237n) % 3000n) * 2n;
      step(ix, m, { t: 'clear', x });
    }
    expect(ix.count()).toBe(0);
    expect(ix.bytes()).toBeLessThan(afterFill);
    destroy(ix);
  });

  // Run pages hold 256 runs (core-as/sparse-runs.ts); only runs of ≥ 2 offsets live there. Runs
  // [6k, 6k + 1] fill page 0 completely and open page 1 for run 256, so the rows below hit exact
  // page edges; l is the start of page 0's last run.
  const PAGE_RUNS = 256n;
  const mid = 6n * (PAGE_RUNS / 2n);
  const pageEdgeRows: Array<{ name: string; ops: (l: bigint) => Op[] }> = [
    { name: 'a new run past the end of a full page spills into the next page', ops: (l) => [{ t: 'fill', x: l + 3n, len: 2 }] },
    { name: 'sets joining the last run of a full page to the first of the next', ops: (l) => [{ t: 'fill', x: l + 2n, len: 4 }] },
    {
      name: 'clear splitting the last run of a full page',
      ops: (l) => [
        { t: 'fill', x: l + 2n, len: 3 },
        { t: 'clear', x: l + 2n },
      ],
    },
    {
      name: 'clear splitting a middle run of a full page splits the page',
      ops: () => [
        { t: 'fill', x: mid + 2n, len: 3 },
        { t: 'clear', x: mid + 2n },
      ],
    },
    {
      name: 'clear the first offset of the second page updates its key',
      ops: (l) => [
        { t: 'set', x: l + 8n },
        { t: 'clear', x: l + 6n },
        { t: 'nextSet', x: l + 1n },
        { t: 'set', x: l + 6n },
      ],
    },
    {
      name: 'a run of two cleared to a single leaves the pages for the singles',
      ops: (l) => [
        { t: 'clear', x: l + 7n },
        { t: 'nextSet', x: l + 2n },
        { t: 'set', x: l + 7n },
      ],
    },
    {
      name: 'band across the page edge',
      ops: (l) => [
        { t: 'nextFree', s: l, lo: l - 8n, hi: l + 8n },
        { t: 'nextFree', s: l + 6n, lo: l, hi: l + 7n },
      ],
    },
  ];
  for (const row of pageEdgeRows) {
    for (const second of [10n, PAGE_RUNS]) {
      it(`page edges: ${row.name} (second page ${second === PAGE_RUNS ? 'full' : 'not full'})`, () => {
        const n = 1_000_000n;
        const ix = sparse(n);
        const m = new Model(n);
        try {
          for (let k = 0n; k < PAGE_RUNS + second; k++) step(ix, m, { t: 'fill', x: 6n * k, len: 2 });
          for (const op of row.ops(6n * (PAGE_RUNS - 1n))) step(ix, m, op);
          for (let x = 0n; x < 6n * (PAGE_RUNS + second) + 8n; x++) expect(ix.has(hiOf(x), loOf(x))).toBe(m.taken.has(x));
        } finally {
          destroy(ix);
        }
      });
    }
  }

  it('isolated offsets bunched in clusters far apart (nodes cut small, refitted, merged away) agree with the model', () => {
    // every other offset near 2^40, every third near 2^63, a few strays: one node's interpolation
    // cannot place clusters 2^63 apart, so the nodes are cut around each cluster
    const seed: bigint[] = [];
    for (let i = 0n; i < 1500n; i++) seed.push((1n << 40n) + 2n * i);
    for (let i = 0n; i < 1000n; i++) seed.push((1n << 63n) + 3n * i);
    for (let i = 1n; i <= 40n; i++) seed.push((MAX_N / 41n) * i);
    const arb = fc.oneof(
      nearArb([1n << 40n, (1n << 40n) + 3000n, 1n << 63n, (1n << 63n) + 3000n], 60),
      fc.bigInt({ min: 0n, max: MAX_N - 1n }),
    );
    fc.assert(
      fc.property(fc.array(opArb(arb, 8), { maxLength: 150 }), fc.boolean(), (ops, bulk) => {
        // bulk: one set_many (the bulk build); else one set at a time (node rebuilds as they fill)
        const load: Op[] = bulk ? [{ t: 'many', xs: seed }] : seed.map((x): Op => ({ t: 'set', x }));
        runOps(MAX_N, [...load, ...ops]);
      }),
      { numRuns: 6 },
    );
  });

  it('agrees with the model near the top of u64 (n = 2^64 − 1) and at 0, 2^32, 2^63', () => {
    const anchors = [0n, TWO32 - 1n, TWO32, 1n << 63n, MAX_N - 1n, MAX_N];
    fc.assert(
      fc.property(fc.array(opArb(nearArb(anchors), 60), { maxLength: 150 }), (ops) => runOps(MAX_N, ops)),
      { numRuns: 200 },
    );
  });

  it('agrees with the model on domains just under 2^32, 2^63 and 2^64', () => {
    fc.assert(
      fc.property(fc.constantFrom(TWO32 + 1n, (1n << 63n) + 5n, MAX_N - 3n), fc.array(fc.nat(), { maxLength: 1 }), (n, _) => {
        const arb = nearArb([0n, TWO32, 1n << 63n, n - 1n, n], 12);
        fc.assert(
          fc.property(fc.array(opArb(arb, 20), { maxLength: 80 }), (ops) => runOps(n, ops)),
          { numRuns: 30 },
        );
      }),
      { numRuns: 3 },
    );
  });

  it('long consecutive runs: nextFree jumps to the run end, wraps, and reports a covered band as full', () => {
    const base = (1n << 63n) - 2500n;
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    step(ix, m, { t: 'fill', x: base, len: 5000 });
    expect(ix.bytes()).toBeLessThan(8192); // one run: header + directory + one page
    const cases: Array<[string, bigint, bigint, bigint]> = [
      ['inside the run → its end + 1', base + 10n, 0n, MAX_N - 1n],
      ['band ends inside the run, wraps to lo', base + 10n, base - 3n, base + 4000n],
      ['band fully covered → none', base + 10n, base, base + 4999n],
      ['band covered, start at lo → none', base, base, base + 100n],
      ['run extends beyond hi, lo free', base + 4000n, base - 1n, base + 4500n],
      ['hi beyond n is clamped', MAX_N - 2n, MAX_N - 5n, MAX_N + 0n],
    ];
    for (const [, s, lo, hi] of cases) step(ix, m, { t: 'nextFree', s, lo, hi });
    // splitting the run by clears leaves holes that nextFree finds in order
    step(ix, m, { t: 'clear', x: base + 2500n });
    step(ix, m, { t: 'clear', x: base + 1200n });
    step(ix, m, { t: 'nextFree', s: base, lo: base, hi: base + 4999n });
    expect(resultOf(ix)).toBe(base + 1200n);
    step(ix, m, { t: 'nextFree', s: base + 1201n, lo: base, hi: base + 4999n });
    expect(resultOf(ix)).toBe(base + 2500n);
    step(ix, m, { t: 'nextFree', s: base + 2501n, lo: base, hi: base + 4999n });
    expect(resultOf(ix)).toBe(base + 1200n); // wrapped
    step(ix, m, { t: 'set', x: base + 1200n });
    step(ix, m, { t: 'set', x: base + 2500n }); // rejoins into one run
    step(ix, m, { t: 'nextFree', s: base + 7n, lo: base, hi: base + 4999n });
    // the whole domain's edge: a run ending at n − 1
    step(ix, m, { t: 'fill', x: MAX_N - 100n, len: 100 });
    step(ix, m, { t: 'nextFree', s: MAX_N - 50n, lo: MAX_N - 100n, hi: MAX_N - 1n });
    step(ix, m, { t: 'nextFree', s: MAX_N - 50n, lo: MAX_N - 101n, hi: MAX_N - 1n });
    expect(resultOf(ix)).toBe(MAX_N - 101n);
    destroy(ix);
  });

  it('a fully taken small domain has no free offset from any start', () => {
    for (const n of [1n, 2n, 257n]) {
      const ix = sparse(n);
      const m = new Model(n);
      step(ix, m, { t: 'fill', x: 0n, len: Number(n) });
      for (let s = 0n; s <= n; s++) step(ix, m, { t: 'nextFree', s, lo: 0n, hi: n });
      destroy(ix);
    }
  });

  it('set_many equals the individual sets (unsorted, duplicates, bulk and one-by-one paths)', () => {
    const off = fc
      .oneof(fc.bigInt({ min: 0n, max: 5000n }), nearArb([1n << 40n, MAX_N - 2n], 300))
      .map((x) => (x >= MAX_N ? MAX_N - 1n : x));
    fc.assert(
      fc.property(fc.array(off, { maxLength: 300 }), fc.array(off, { maxLength: 3000 }), (before, batch) => {
        const a = sparse(MAX_N);
        const b = sparse(MAX_N);
        try {
          a.setMany(pairsOf(before));
          for (const x of before) b.set(hiOf(x), loOf(x));
          let want = 0;
          for (const x of batch) if (b.set(hiOf(x), loOf(x))) want++;
          expect(a.setMany(pairsOf(batch))).toBe(want);
          expect(a.validate()).toBe(0);
          expect(a.count()).toBe(b.count());
          // same runs: walk both
          let from = 0n;
          for (;;) {
            const ga = a.nextSet(hiOf(from), loOf(from));
            const gb = b.nextSet(hiOf(from), loOf(from));
            expect(ga).toBe(gb);
            if (!ga) break;
            expect(resultOf(a)).toBe(resultOf(b));
            from = resultOf(a);
            // skip to the end of this run (a band starting at it, so no wrap)
            if (!a.nextFree(hiOf(from), loOf(from), hiOf(from), loOf(from), 0xffffffff, 0xffffffff)) break;
            from = resultOf(a);
          }
        } finally {
          destroy(a);
          destroy(b);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('set_many reports the position of the first out-of-range entry and keeps the ones before it', () => {
    const ix = sparse(1000n);
    const xs = [...Array.from({ length: 200 }, (_, i) => BigInt((i * 7) % 1000)), 1000n, 5n, 6n];
    expect(() => ix.setMany(pairsOf(xs))).toThrow('position 200');
    expect(ix.count()).toBe(200);
    expect(ix.has(0, 6)).toBe(false);
    expect(ix.validate()).toBe(0);
    destroy(ix);
  });

  it('holds 10^6 random offsets of a /64 in at most 16 bytes each; allocate and release around them stay valid', () => {
    const N = 1_000_000;
    const u32 = xorshift(0x9e3779b9);
    const pairs = new Uint32Array(2 * N);
    for (let i = 0; i < 2 * N; i++) pairs[i] = u32();
    for (let i = 0; i < N; i++) if (pairs[2 * i] === 0xffffffff && pairs[2 * i + 1] === 0xffffffff) pairs[2 * i + 1] = 0;
    const ix = sparse(MAX_N);
    const added = ix.setMany(pairs);
    expect(added).toBeGreaterThan(N - 10); // distinct with overwhelming probability
    expect(ix.bytes() / added).toBeLessThanOrEqual(16);
    // the allocator's strategy: a random start, the next free offset, take it, give it back
    for (let i = 0; i < 20_000; i++) {
      const j = u32() % N;
      const [h, l] = [pairs[2 * j], pairs[2 * j + 1]];
      expect(ix.has(h, l)).toBe(true);
      expect(ix.nextFree(h, l, 0, 0, 0xffffffff, 0xfffffffe)).toBe(true);
      const [fh, fl] = [ix.resultHi, ix.resultLo];
      expect(fh !== h || fl !== l).toBe(true);
      expect(ix.set(fh, fl)).toBe(true);
      expect(ix.clear(h, l)).toBe(true);
      expect(ix.set(h, l)).toBe(true);
      expect(ix.clear(fh, fl)).toBe(true);
    }
    expect(ix.count()).toBe(added);
    expect(ix.validate()).toBe(0);
    destroy(ix);
  });

  it('stays under 24 bytes per taken address at 10^5 random offsets set one by one, and 16 when loaded in bulk', () => {
    const N = 100_000;
    const u32 = xorshift(0x2545f491);
    const pairs = new Uint32Array(2 * N);
    for (let i = 0; i < 2 * N; i++) pairs[i] = u32();
    for (let i = 0; i < N; i++) if (pairs[2 * i] === 0xffffffff && pairs[2 * i + 1] === 0xffffffff) pairs[2 * i + 1] = 0;

    const one = sparse(MAX_N);
    for (let i = 0; i < N; i++) one.set(pairs[2 * i], pairs[2 * i + 1]);
    expect(one.validate()).toBe(0);
    expect(one.bytes() / one.count()).toBeLessThan(24);

    const bulk = sparse(MAX_N);
    expect(bulk.setMany(pairs)).toBe(one.count());
    expect(bulk.validate()).toBe(0);
    expect(bulk.bytes() / bulk.count()).toBeLessThanOrEqual(16);
    // and the bulk build merges into what is there: the second half onto the first
    const half = sparse(MAX_N);
    const first = half.setMany(pairs.subarray(0, N));
    expect(first + half.setMany(pairs.subarray(N))).toBe(one.count());
    expect(half.validate()).toBe(0);
    destroy(one);
    destroy(bulk);
    destroy(half);
  });

  it('memory follows what is taken: releasing 15 of every 16 of 10^5 random offsets shrinks the index', () => {
    const N = 100_000;
    const u32 = xorshift(0x51f15e);
    const pairs = new Uint32Array(2 * N);
    for (let i = 0; i < 2 * N; i++) pairs[i] = u32();
    for (let i = 0; i < N; i++) if (pairs[2 * i] === 0xffffffff && pairs[2 * i + 1] === 0xffffffff) pairs[2 * i + 1] = 0;
    const ix = sparse(MAX_N);
    ix.setMany(pairs);
    const full = ix.bytes();
    for (let i = 0; i < N; i++) if (i % 16 !== 0) ix.clear(pairs[2 * i], pairs[2 * i + 1]);
    expect(ix.validate()).toBe(0);
    expect(ix.count()).toBe(N / 16);
    expect(ix.bytes() / ix.count()).toBeLessThan(32);
    expect(ix.bytes()).toBeLessThan(full / 4);
    for (let i = 0; i < N; i += 16) expect(ix.has(pairs[2 * i], pairs[2 * i + 1])).toBe(true);
    destroy(ix);
  });

  it('singles set one by one split nodes and grow the router; released again they drop nodes and shrink it, valid throughout', () => {
    // validate() re-derives the router too: every bucket must name the node holding its first key
    const N = 60_000;
    const u32 = xorshift(0x7f4a7c15);
    const xs: bigint[] = [];
    for (let i = 0; i < N; i++) xs.push(((BigInt(u32()) << 32n) | BigInt(u32())) % MAX_N);
    // a cluster too, so some nodes are cut small and several share a router bucket
    for (let i = 0n; i < 3000n; i++) xs.push((1n << 50n) + 2n * i);
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    xs.forEach((x, i) => {
      expect(ix.set(hiOf(x), loOf(x))).toBe(m.set(x));
      if (i % 4096 === 0) expect(ix.validate(), `after ${i} sets`).toBe(0);
    });
    expect(ix.validate()).toBe(0);
    expect(ix.count()).toBe(m.taken.size);
    const full = ix.bytes();
    xs.forEach((x, i) => {
      if (i % 64 === 0) return;
      expect(ix.clear(hiOf(x), loOf(x))).toBe(m.clear(x));
      if (i % 4096 === 1) expect(ix.validate(), `after ${i} clears`).toBe(0);
    });
    expect(ix.validate()).toBe(0);
    expect(ix.count()).toBe(m.taken.size);
    expect(ix.bytes()).toBeLessThan(full / 8);
    for (const x of xs) expect(ix.has(hiOf(x), loOf(x))).toBe(m.taken.has(x));
    runOpsOn(ix, m);
    destroy(ix);
  });

  it('many clusters of singles set round robin and cleared cluster by cluster: nodes cut, grown and dropped, the router kept right', () => {
    // each cluster ends up in nodes of its own: hundreds of nodes, most rebuilt many times
    const u32 = xorshift(0x3c6ef372);
    const bases = Array.from({ length: 300 }, () => (BigInt(u32()) << 32n) | BigInt((u32() & 0xfff00000) >>> 0));
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    for (let k = 0n; k < 40n; k++) {
      for (const b of bases) expect(ix.set(hiOf(b + 2n * k), loOf(b + 2n * k))).toBe(m.set(b + 2n * k));
      if (k % 8n === 0n) expect(ix.validate(), `after round ${k}`).toBe(0);
    }
    expect(ix.validate()).toBe(0);
    bases.forEach((b, i) => {
      for (let k = 0n; k < 40n; k++) expect(ix.clear(hiOf(b + 2n * k), loOf(b + 2n * k))).toBe(m.clear(b + 2n * k));
      if (i % 25 === 0) expect(ix.validate(), `after cluster ${i}`).toBe(0);
    });
    expect(ix.count()).toBe(0);
    expect(ix.validate()).toBe(0);
    destroy(ix);
  });

  it('an offset used again right after a lookup, a take or a release, on either of two indexes and across rebuilds, agrees with the model', () => {
    // The singles remember where the last key looked up or inserted is (or would go), so the next
    // operation on that key skips the lookup. Here a few offsets recur on two indexes holding the
    // same offsets: taken and released back to back as an allocator does, one of the indexes
    // sometimes destroyed and made again (its blocks reused), with bursts of neighbours that grow
    // and cut nodes (and, cleared, shrink and drop them) or load in bulk in between; no validate() until the end,
    // since it looks keys up itself.
    type Kind = 'take' | 'takeRelease' | 'set' | 'setClear' | 'clear' | 'has' | 'burst' | 'bulk' | 'unburst' | 'renew';
    const BURST = 300n;
    const burst = (x: bigint): bigint[] => Array.from({ length: Number(BURST) }, (_, i) => x + 2n + 2n * BigInt(i));
    const anchors = [1n << 40n, (1n << 40n) + 4n * BURST, 1n << 63n];
    const opArbMemo = fc.record({
      ix: fc.constantFrom(0, 1),
      t: fc.constantFrom<Kind>('take', 'takeRelease', 'set', 'setClear', 'clear', 'has', 'burst', 'bulk', 'unburst', 'renew'),
      //  even offsets: set one by one they stay singles, until a take from a taken one joins its neighbour
      x: fc.tuple(fc.constantFrom(...anchors), fc.integer({ min: -6, max: 6 })).map(([a, j]) => a + 2n * BigInt(j)),
    });
    fc.assert(
      fc.property(fc.array(opArbMemo, { minLength: 20, maxLength: 200 }), (ops) => {
        const ixs = [sparse(MAX_N), sparse(MAX_N)];
        const ms = [new Model(MAX_N), new Model(MAX_N)];
        try {
          for (const { ix: k, t, x } of ops) {
            const ix = ixs[k]!;
            const m = ms[k]!;
            const set = (y: bigint): void => expect(ix.set(hiOf(y), loOf(y)), `set ${y}`).toBe(m.set(y));
            const clear = (y: bigint): void => expect(ix.clear(hiOf(y), loOf(y)), `clear ${y}`).toBe(m.clear(y));
            const has = (y: bigint): void => expect(ix.has(hiOf(y), loOf(y)), `has ${y}`).toBe(m.taken.has(y));
            const take = (): bigint => {
              expect(ix.nextFree(hiOf(x), loOf(x), 0, 0, hiOf(MAX_N - 1n), loOf(MAX_N - 1n))).toBe(true);
              const o = resultOf(ix);
              expect(o, `take from ${x}`).toBe(m.nextFree(x, 0n, MAX_N - 1n));
              set(o);
              return o;
            };
            switch (t) {
              case 'take':
                take();
                break;
              case 'takeRelease': {
                const o = take();
                has(o);
                clear(o);
                has(o);
                break;
              }
              case 'set':
                set(x);
                break;
              case 'setClear':
                set(x);
                has(x);
                clear(x);
                has(x);
                break;
              case 'clear':
                clear(x);
                break;
              case 'has':
                has(x);
                break;
              case 'burst':
                for (const y of burst(x)) set(y);
                break;
              case 'bulk': {
                //  set_many: a small index takes the bulk path (fresh singles swapped in)
                const ys = burst(x);
                let added = 0;
                for (const y of ys) if (m.set(y)) added++;
                expect(ix.setMany(pairsOf(ys))).toBe(added);
                break;
              }
              case 'unburst':
                for (const y of burst(x)) clear(y);
                break;
              case 'renew':
                destroy(ix);
                ixs[k] = sparse(MAX_N);
                ms[k] = new Model(MAX_N);
                break;
            }
            expect(ixs[k]!.count()).toBe(ms[k]!.taken.size);
          }
          for (const k of [0, 1]) {
            expect(ixs[k]!.validate(), `index ${k}`).toBe(0);
            runOpsOn(ixs[k]!, ms[k]!);
          }
        } finally {
          for (const ix of ixs) destroy(ix);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a key looked up in singles that bulk loads then replaced is found in singles built later in the same blocks', () => {
    // The singles remember the place of the last key looked up, per set. A bulk load builds fresh
    // singles and frees the old ones, whose blocks a later bulk load may get back: what was
    // remembered of the freed set must not answer for the set built there. Bulk loads between
    // the lookup and the one that adds x: 0 to 3, so that one of them builds in the first blocks.
    const x = 1n << 40n;
    for (let loads = 0; loads < 4; loads++) {
      const ix = sparse(MAX_N);
      try {
        const has = (y: bigint): boolean => ix.has(hiOf(y), loOf(y));
        expect(ix.set(hiOf(x + 100n), loOf(x + 100n))).toBe(true); //  a node, so a lookup looks
        expect(has(x)).toBe(false);
        //  64 offsets or more: a bulk load (fewer are set one by one)
        const load = (from: bigint, ys: bigint[]): void => {
          const batch = [...ys, ...Array.from({ length: 64 }, (_, i) => from + 2n * BigInt(i))];
          expect(ix.setMany(pairsOf(batch))).toBe(batch.length);
        };
        for (let i = 0; i < loads; i++) load(x + 1000n * BigInt(i + 1), []);
        load(x + 10_000n, [x]);
        expect(has(x), `after ${loads} other loads`).toBe(true);
        expect(ix.set(hiOf(x), loOf(x))).toBe(false);
        expect(ix.validate()).toBe(0);
      } finally {
        destroy(ix);
      }
    }
  });

  it('singles set past the span a node was fitted to, and between its keys (joining them into runs), agree with the model', () => {
    // a bulk-built node fitted to 3,000 keys two apart; then keys beyond its last one (they pile
    // into the slots after it, then force a refit) and odd offsets between two singles (a run of 3)
    const base = 1n << 40n;
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    step(ix, m, { t: 'many', xs: Array.from({ length: 3000 }, (_, i) => base + 2n * BigInt(i)) });
    for (let i = 0n; i < 400n; i++) step(ix, m, { t: 'set', x: base + 6000n + 3n * i });
    for (let i = 0n; i < 200n; i++) step(ix, m, { t: 'set', x: base + 1n + 14n * i });
    for (let i = 0n; i < 200n; i++) step(ix, m, { t: 'clear', x: base + 2n + 28n * i });
    step(ix, m, { t: 'nextFree', s: base, lo: base, hi: base + 7000n });
    runOpsOn(ix, m);
    destroy(ix);
  });

  it('bytes() is exactly the heap the index holds, router and directories included, as it grows, shrinks and reloads', () => {
    const before = core.heap_bytes_in_use();
    const ix = sparse(MAX_N);
    const u32 = xorshift(0x5eed1e55);
    const xs = Array.from({ length: 30_000 }, () => (BigInt(u32()) << 32n) | BigInt(u32() >>> 1));
    const held = (): number => core.heap_bytes_in_use() - before;
    for (const x of xs) ix.set(hiOf(x), loOf(x));
    for (let x = 1n << 62n; x < (1n << 62n) + 3000n; x++) ix.set(hiOf(x), loOf(x)); // a run
    expect(ix.bytes()).toBe(held());
    for (let i = 0; i < xs.length; i += 2) ix.clear(hiOf(xs[i]), loOf(xs[i]));
    expect(ix.bytes()).toBe(held());
    ix.setMany(pairsOf(xs));
    expect(ix.bytes()).toBe(held());
    expect(ix.validate()).toBe(0);
    destroy(ix);
    expect(held()).toBe(0);
  });

  it('set_many onto runs without singles (the merged singles written over the sorted keys) equals the individual sets', () => {
    const ix = sparse(1_000_000n);
    const m = new Model(1_000_000n);
    step(ix, m, { t: 'fill', x: 100n, len: 100 });
    step(ix, m, { t: 'fill', x: 300n, len: 100 });
    const u32 = xorshift(0x1234567);
    // duplicates, keys inside and beside the runs, keys that join two runs
    const batch = Array.from({ length: 400 }, () => BigInt(u32() % 1000));
    batch.push(200n, 299n, 99n, 400n, 401n);
    step(ix, m, { t: 'many', xs: batch });
    runOpsOn(ix, m);
    destroy(ix);
  });

  it('an index emptied by clears keeps one small node: taking and releasing one offset at a time then needs no memory', () => {
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    const u32 = xorshift(0x0badf00d);
    const xs = Array.from({ length: 5000 }, () => (BigInt(u32()) << 32n) | BigInt(u32()));
    for (const x of xs) step(ix, m, { t: 'set', x });
    for (const x of xs) step(ix, m, { t: 'clear', x });
    expect(ix.count()).toBe(0);
    expect(ix.bytes()).toBeLessThan(512);
    // no growth, and every free block taken away: an allocation anywhere would fail
    withFree([], () => {
      for (let i = 0; i < 1000; i++) {
        const x = (BigInt(u32()) << 32n) | BigInt(u32());
        step(ix, m, { t: 'nextFree', s: x, lo: 0n, hi: MAX_N - 1n });
        step(ix, m, { t: 'set', x: resultOf(ix) });
        step(ix, m, { t: 'clear', x: resultOf(ix) });
      }
    });
    destroy(ix);
  });

  it('OUT_OF_MEMORY while singles nodes grow or split leaves the index as it was, and it goes on once memory is back', () => {
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    const u32 = xorshift(0x600dcafe);
    const limit = core.heap_limit_pages();
    const held: Array<[number, number]> = [];
    let failures = 0;
    try {
      core.heap_set_limit_pages(0); // no growth beyond the current memory
      for (let size = 1 << 20; size >= 16; size >>= 1) {
        for (let p = core.buf_alloc(size); p !== 0; p = core.buf_alloc(size)) held.push([p, size]);
      }
      // give back a little (freed blocks merge: 4 to 64 KiB here, at most one of each size), so
      // some rebuilds fit and others do not
      for (let i = held.length - 1; i >= 0; i--) {
        const [p, size] = held[i]!;
        if (size >= 4096 && size <= 65536) {
          core.buf_free(p, size);
          held.splice(i, 1);
        }
      }
      let successes = 0;
      for (let i = 0; i < 20_000 && failures < 50; i++) {
        const x = (BigInt(u32()) << 32n) | BigInt((u32() & 0xfffffffe) >>> 0);
        const before = ix.bytes();
        try {
          expect(ix.set(hiOf(x), loOf(x))).toBe(m.set(x));
          successes++;
        } catch (e) {
          expect((e as Error).name).toBe('OutOfMemoryError');
          expect(ix.has(hiOf(x), loOf(x))).toBe(false);
          expect(ix.bytes()).toBe(before);
          failures++;
        }
        expect(ix.count()).toBe(m.taken.size);
      }
      expect(successes).toBeGreaterThan(0);
      expect(ix.validate()).toBe(0);
    } finally {
      for (const [p, size] of held) core.buf_free(p, size);
      core.heap_set_limit_pages(limit);
    }
    expect(failures).toBeGreaterThan(0);
    for (let i = 0; i < 2000; i++) step(ix, m, { t: 'set', x: (BigInt(u32()) << 32n) | BigInt((u32() & 0xfffffffe) >>> 0) });
    runOpsOn(ix, m);
    destroy(ix);
  });

  it('reports OUT_OF_MEMORY when a split or a new page cannot be had, and changes nothing', () => {
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    const limit = core.heap_limit_pages();
    try {
      core.heap_set_limit_pages(0); // no growth beyond the current memory
      let failedAt = -1n;
      for (let x = 0n; x < 50_000_000n; x += 2n) {
        try {
          ix.set(hiOf(x), loOf(x));
          m.set(x);
        } catch (e) {
          expect((e as Error).name).toBe('OutOfMemoryError');
          failedAt = x;
          break;
        }
      }
      expect(failedAt).toBeGreaterThan(0n);
      expect(ix.validate()).toBe(0);
      expect(ix.has(hiOf(failedAt), loOf(failedAt))).toBe(false);
      expect(ix.count()).toBe(m.taken.size);

      // a batch that cannot get its sort copies (or its pages) falls back to one by one and
      // stops at the failing entry: whatever it set is a prefix of the batch, and stays valid
      // (four more 64 KiB pages: room for the batch buffer, the sort copies and some pages, not all)
      core.heap_set_limit_pages(core.memory.buffer.byteLength / 65536 + 4);
      const batch = Array.from({ length: 5000 }, (_, i) => (1n << 62n) + BigInt(i) * 3n);
      const b = sparse(MAX_N);
      try {
        b.setMany(pairsOf(batch));
      } catch (e) {
        expect((e as Error).name).toBe('OutOfMemoryError');
      }
      expect(b.validate()).toBe(0);
      const k = b.count();
      for (let i = 0; i < batch.length; i++) expect(b.has(hiOf(batch[i]), loOf(batch[i]))).toBe(i < k);
      destroy(b);
    } finally {
      core.heap_set_limit_pages(limit);
      destroy(ix);
    }
  });

  it('a clear that splits a run or leaves singles under a memory cap either works or fails with nothing changed', () => {
    // 6,000 consecutive offsets, then every other one from the middle released under a cap: each
    // release splits a run (a page slot) and leaves a single behind (a singles node may grow)
    const base = 1n << 62n;
    const ix = sparse(MAX_N);
    const m = new Model(MAX_N);
    const limit = core.heap_limit_pages();
    step(ix, m, { t: 'fill', x: base, len: 6000 });
    const failed: bigint[] = [];
    const held: Array<[number, number]> = [];
    try {
      // no growth, and every free block of the sizes the index uses taken away
      core.heap_set_limit_pages(0);
      for (let size = 1 << 16; size >= 16; size >>= 1) {
        for (let p = core.buf_alloc(size); p !== 0; p = core.buf_alloc(size)) held.push([p, size]);
      }
      for (let x = base + 1500n; x < base + 4500n; x += 2n) {
        const before = ix.bytes();
        try {
          expect(ix.clear(hiOf(x), loOf(x))).toBe(true);
          m.clear(x);
        } catch (e) {
          expect((e as Error).name).toBe('OutOfMemoryError');
          expect(ix.has(hiOf(x), loOf(x))).toBe(true);
          expect(ix.bytes()).toBe(before);
          failed.push(x);
        }
        expect(ix.validate()).toBe(0);
        expect(ix.count()).toBe(m.taken.size);
      }
    } finally {
      for (const [p, size] of held) core.buf_free(p, size);
      core.heap_set_limit_pages(limit);
    }
    // the first release split the run in place; the next ones needed a singles node
    expect(m.taken.has(base + 1500n)).toBe(false);
    expect(failed.length).toBeGreaterThan(0);
    // with memory back, the refused releases go through
    for (const x of failed) step(ix, m, { t: 'clear', x });
    runOpsOn(ix, m);
    destroy(ix);
  });
});
