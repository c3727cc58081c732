// The sparse index's uniform-pick operations (FreeIndex.countFree / selectFree over a band: the
// rank of core-as/sparse.ts, summed from the block words of its run pages and singles nodes)
// against a sorted-list model, with validate() (block sums included) after every change.
//
// Property tests draw clustered offsets so that runs, singles and their merges all occur, and
// bands whose ends fall inside runs, on singles, in gaps, at 0 and at n − 1, on domains up to
// 2^64 − 1. A larger fixed case has more than 64 run pages and more than 64 singles nodes, so
// answers cross block boundaries, and keeps answering while sets and clears split, merge and
// rebuild pages and nodes.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FreeIndex } from '../adapters/free-index.ts';
import { seededRandom, uniformBelow } from '../adapters/random.ts';
import { byValue, hiOf, loOf, MAX_N, pairsOf } from './sparse-helpers.ts';

const u64 = (hi: number, lo: number): bigint => (BigInt(hi) << 32n) | BigInt(lo);

/** The model: the taken offsets, sorted ascending. */
class SortedModel {
  constructor(
    readonly n: bigint,
    readonly taken: bigint[] = [],
  ) {}

  /** Taken offsets below x (binary search). */
  rank(x: bigint): number {
    let a = 0;
    let b = this.taken.length;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (this.taken[m]! < x) a = m + 1;
      else b = m;
    }
    return a;
  }
  countFree(lo: bigint, hi: bigint): bigint {
    if (lo > hi || lo >= this.n) return 0n;
    if (hi >= this.n) hi = this.n - 1n;
    return hi - lo + 1n - BigInt(this.rank(hi + 1n) - this.rank(lo));
  }
  /**
   * Start at lo + k and step past every taken offset at or below the candidate: the answer is
   * lo + k + j where taken[r0 + j] is the first taken offset from lo on with taken[i] − (i − r0)
   * > lo + k. That difference never falls as i grows (the offsets are distinct integers), so the
   * first such i is found by bisection: stepping one by one cost the large case below seconds
   * of bigint compares per question.
   */
  selectFree(k: bigint, lo: bigint, hi: bigint): bigint | null {
    if (lo > hi || lo >= this.n) return null;
    if (hi >= this.n) hi = this.n - 1n;
    const r0 = this.rank(lo);
    let a = r0;
    let b = this.taken.length;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (this.taken[m]! - BigInt(m - r0) > lo + k) b = m;
      else a = m + 1;
    }
    const y = lo + k + BigInt(a - r0);
    return y <= hi ? y : null;
  }
  add(x: bigint): void {
    this.taken.splice(this.rank(x), 0, x);
  }
  remove(x: bigint): void {
    this.taken.splice(this.rank(x), 1);
  }
}

function checkBand(ix: FreeIndex, model: SortedModel, lo: bigint, hi: bigint, ks: bigint[]): void {
  ix.countFree(hiOf(lo), loOf(lo), hiOf(hi), loOf(hi));
  const free = model.countFree(lo, hi);
  expect(u64(ix.resultHi, ix.resultLo), `countFree [${lo}, ${hi}]`).toBe(free);
  for (const k of ks) {
    if (k < 0n || k > MAX_N) continue;
    const want = model.selectFree(k, lo, hi);
    const found = ix.selectFree(hiOf(k), loOf(k), hiOf(lo), loOf(lo), hiOf(hi), loOf(hi));
    expect(found ? u64(ix.resultHi, ix.resultLo) : null, `selectFree k=${k} of [${lo}, ${hi}]`).toBe(want);
  }
}

/** The model with each toggled offset flipped (taken → free, free → taken). */
function applyToggles(model: SortedModel, toggled: Set<bigint>): SortedModel {
  const kept = model.taken.filter((x) => !toggled.has(x));
  // the few offsets toggled in, merged into the kept ones (sorting the whole list again cost
  // the large case below most of its time)
  const added = [...toggled].filter((x) => model.taken[model.rank(x)] !== x).sort(byValue);
  const merged: bigint[] = [];
  let i = 0;
  for (const x of added) {
    while (i < kept.length && kept[i]! < x) merged.push(kept[i++]!);
    merged.push(x);
  }
  while (i < kept.length) merged.push(kept[i++]!);
  return new SortedModel(model.n, merged);
}

/** k values worth asking for a band with `free` free offsets: both ends, past the end, the middle, a random one. */
function ksFor(free: bigint, r: bigint): bigint[] {
  return [0n, 1n, free - 1n, free, free + 1n, free / 2n, free > 0n ? r % free : 0n];
}

/** Offsets clustered around a few bases: runs of many lengths, singles, and offsets that join them. */
const clustered = (n: bigint) =>
  fc
    .array(
      fc.record({
        base: n > 1000n ? fc.constantFrom(0n, n / 3n, n / 2n, n - 200n) : fc.constant(0n),
        at: fc.integer({ min: 0, max: 150 }),
        len: fc.integer({ min: 1, max: 6 }),
      }),
      { maxLength: 60 },
    )
    .map((items) => {
      const out: bigint[] = [];
      for (const { base, at, len } of items) for (let i = 0; i < len; i++) if (base + BigInt(at + i) < n) out.push(base + BigInt(at + i));
      return out;
    });

describe('sparse countFree / selectFree against a sorted-list model', () => {
  for (const n of [1n, 2n, 150n, 1n << 40n, MAX_N]) {
    it(`n = ${n}: bands starting and ending inside runs, on singles and in gaps; empty and full bands`, () => {
      fc.assert(
        fc.property(clustered(n), fc.array(fc.nat(), { maxLength: 20 }), fc.bigInt({ min: 0n, max: MAX_N }), (sets, clears, r) => {
          const ix = new FreeIndex(hiOf(n), loOf(n), 'sparse');
          try {
            const model = new SortedModel(n);
            for (const x of sets) if (ix.set(hiOf(x), loOf(x))) model.add(x);
            // clears split runs and leave singles beside them
            for (const c of clears) {
              if (model.taken.length === 0) break;
              const x = model.taken[c % model.taken.length]!;
              expect(ix.clear(hiOf(x), loOf(x))).toBe(true);
              model.remove(x);
            }
            expect(ix.validate()).toBe(0);
            expect(ix.count()).toBe(model.taken.length);
            // band ends: 0, n − 1, and every taken offset and its neighbours (inside a run, at its ends, beside it)
            const ends = new Set<bigint>([0n, n - 1n]);
            for (const t of model.taken) for (const d of [-1n, 0n, 1n]) if (t + d >= 0n && t + d < n) ends.add(t + d);
            const list = [...ends].sort(byValue);
            const pick = (i: number) => list[Number((r + BigInt(i * 7919)) % BigInt(list.length))]!;
            checkBand(ix, model, 0n, n - 1n, ksFor(model.countFree(0n, n - 1n), r)); //  the whole range
            for (let i = 0; i < 6; i++) {
              let lo = pick(2 * i);
              let hi = pick(2 * i + 1);
              if (lo > hi) [lo, hi] = [hi, lo];
              checkBand(ix, model, lo, hi, ksFor(model.countFree(lo, hi), r));
            }
            // an empty band (lo > hi), a band past n, a one-offset band on a taken offset (full)
            if (n > 1n) checkBand(ix, model, 1n, 0n, [0n]);
            checkBand(ix, model, n, MAX_N, [0n]);
            if (model.taken.length > 0) {
              const t = model.taken[Number(r % BigInt(model.taken.length))]!;
              checkBand(ix, model, t, t, [0n, 1n]);
            }
          } finally {
            ix.destroy();
          }
        }),
        { numRuns: n === 1n ? 20 : 120, seed: 0x5e1ec7 },
      );
    });
  }

  it('singles nodes with whole chunks of slots emptied: rank and select step over the empty chunks', () => {
    const n = MAX_N;
    const rng = seededRandom(20261205);
    const ix = new FreeIndex(hiOf(n), loOf(n), 'sparse');
    try {
      // 40,000 random singles: a few full-size nodes, each keeping a key count per 64 slots
      const offsets: bigint[] = [];
      for (let i = 0; i < 40_000; i++) offsets.push(u64(uniformBelow(rng, 0x100000000), uniformBelow(rng, 0x100000000)) % n);
      ix.setMany(pairsOf(offsets));
      let model = new SortedModel(n, [...new Set(offsets)].sort(byValue));
      // 3,000 neighbouring keys cleared around the middle of the second node (a bulk load cuts
      // 40,000 keys into 7 nodes of 5,715): half its chunks left empty, its middle one among
      // them, where a bisection of the chunks starts; the node still too full to be rebuilt smaller
      const from = 7000;
      const cleared = model.taken.slice(from, from + 3000);
      for (const x of cleared) expect(ix.clear(hiOf(x), loOf(x))).toBe(true);
      model = applyToggles(model, new Set(cleared));
      expect(ix.validate()).toBe(0);
      // the free offsets at, inside and just past the emptied stretch, as k of the whole range and of bands
      const ks: bigint[] = [];
      const after = [0, 1, 5, 30, 200].map((d) => model.taken[from + d]!);
      for (const x of [cleared[0]!, cleared[1]!, cleared[1500]!, cleared[2999]!, model.taken[from - 1]!, ...after]) {
        const k = x - BigInt(model.rank(x));
        ks.push(k - 1n, k, k + 1n);
      }
      checkBand(ix, model, 0n, n - 1n, ks);
      for (const lo of [cleared[0]! - 1n, cleared[0]! + 1n, cleared[1500]!]) {
        const free = model.countFree(lo, n - 1n);
        checkBand(ix, model, lo, n - 1n, [0n, 1n, free / 2n, free - 1n]);
        checkBand(ix, model, 0n, lo, [model.countFree(0n, lo) - 1n, 0n]);
      }
    } finally {
      ix.destroy();
    }
  });

  it('more than 64 run pages and 64 singles nodes: answers across block sums, through page splits and merges and node rebuilds', () => {
    const n = MAX_N;
    const rng = seededRandom(20260101);
    const ix = new FreeIndex(hiOf(n), loOf(n), 'sparse');
    try {
      // 20,000 runs of 2..5 offsets in the low 2^40, and 450,000 random singles over the range
      const offsets: bigint[] = [];
      for (let i = 0; i < 20_000; i++) {
        const start = BigInt(i) * 50_000_000n + BigInt(uniformBelow(rng, 1000));
        const len = 2 + uniformBelow(rng, 4);
        for (let j = 0; j < len; j++) offsets.push(start + BigInt(j));
      }
      for (let i = 0; i < 450_000; i++) offsets.push(u64(uniformBelow(rng, 0x100000000), uniformBelow(rng, 0x100000000)) % n);
      ix.setMany(pairsOf(offsets));
      let model = new SortedModel(n, [...new Set(offsets)].sort(byValue));
      expect(ix.count()).toBe(model.taken.length);
      const ask = (label: string) => {
        expect(ix.validate(), label).toBe(0);
        const r = u64(uniformBelow(rng, 0x100000000), uniformBelow(rng, 0x100000000));
        checkBand(ix, model, 0n, n - 1n, ksFor(model.countFree(0n, n - 1n), r));
        // bands inside the runs' region (many pages), and from a single to near the end (many nodes)
        const runsEnd = 20_000n * 50_000_000n;
        for (let i = 0; i < 4; i++) {
          const lo = model.taken[uniformBelow(rng, 40_000)]! + BigInt(uniformBelow(rng, 3)) - 1n;
          const hi = (i & 1) === 0 ? runsEnd - BigInt(uniformBelow(rng, 1000)) : n - 1n - BigInt(uniformBelow(rng, 1000));
          const free = model.countFree(lo, hi);
          checkBand(ix, model, lo, hi, [0n, free - 1n, free, free / 3n, (free * 2n) / 3n]);
        }
      };
      ask('after the bulk load');
      // one by one: runs grown, joined and split (pages split and merge), singles added and removed
      // (nodes rebuilt); the model takes the changes at the end (a sorted array is slow to edit)
      const toggled = new Set<bigint>();
      // (one expect for all the changes: one per change was much of this test's time)
      const refused: bigint[] = [];
      for (let i = 0; i < 6000; i++) {
        const t = model.taken[uniformBelow(rng, model.taken.length)]!;
        const x = t + BigInt(uniformBelow(rng, 5)) - 2n;
        if (x < 0n || x >= n) continue;
        const taken = ix.has(hiOf(x), loOf(x));
        if (!(taken ? ix.clear(hiOf(x), loOf(x)) : ix.set(hiOf(x), loOf(x)))) refused.push(x);
        if (!toggled.delete(x)) toggled.add(x);
      }
      expect(refused, 'sets and clears answered false').toEqual([]);
      model = applyToggles(model, toggled);
      ask('after sets and clears');
      // clear most of the runs' offsets: pages empty out, merge and are freed; block sums follow
      toggled.clear();
      const runsEnd = 20_000n * 50_000_000n;
      for (const x of model.taken) {
        if (x >= runsEnd) break;
        if (uniformBelow(rng, 10) < 8) {
          if (!ix.clear(hiOf(x), loOf(x))) refused.push(x);
          toggled.add(x);
        }
      }
      expect(refused, 'clears answered false').toEqual([]);
      model = applyToggles(model, toggled);
      ask('after most runs were cleared');
    } finally {
      ix.destroy();
    }
  });
});
