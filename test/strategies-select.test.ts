// The index's uniform-pick operations (FreeIndex.selectFree / countFree: the k-th free offset of a
// band, the free offsets of a band) against a Set model, on both index kinds, with the dense
// index's invariants (COUNT summaries included) re-derived after every batch.
import { describe, expect, it } from 'vitest';
import { FreeIndex } from '../adapters/free-index.ts';
import { seededRandom, uniformBelow } from '../adapters/random.ts';

/** The model: the free offsets of [lo, hi] in ascending order. */
function freeIn(taken: Set<number>, lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let o = lo; o <= hi; o++) if (!taken.has(o)) out.push(o);
  return out;
}

function check(index: FreeIndex, taken: Set<number>, n: number, lo: number, hi: number): void {
  const free = freeIn(taken, lo, Math.min(hi, n - 1));
  index.countFree(0, lo, 0, hi);
  expect([index.resultHi, index.resultLo]).toEqual([0, free.length]);
  const ks = new Set([0, 1, free.length - 1, free.length, free.length + 1, free.length >>> 1]);
  for (const k of ks) {
    if (k < 0) continue;
    const found = index.selectFree(0, k, 0, lo, 0, hi);
    if (k < free.length) {
      expect(found).toBe(true);
      expect([index.resultHi, index.resultLo]).toEqual([0, free[k]]);
    } else {
      expect(found).toBe(false);
    }
  }
}

describe('selectFree / countFree against a Set model', () => {
  for (const kind of ['dense', 'sparse'] as const) {
    for (const n of [1, 63, 64, 65, 4095, 4097, 70000, 262145]) {
      it(`${kind}, ${n} offsets, random fills and bands`, () => {
        const rng = seededRandom(n * 7 + (kind === 'dense' ? 1 : 2));
        const index = new FreeIndex(0, n, kind);
        const taken = new Set<number>();
        try {
          for (const fill of [0, 0.01, 0.5, 0.97, 1]) {
            const target = Math.floor(n * fill);
            // grow or shrink to the fill, mixing set and clear so counts move both ways; the new
            // offsets are drawn from the free ones (a partial shuffle), not by retrying random
            // offsets until a free one turns up, which costs n·ln n draws to fill to 1
            const free = freeIn(taken, 0, n - 1);
            const refused: number[] = [];
            for (let i = 0; taken.size < target; i++) {
              const j = i + uniformBelow(rng, free.length - i);
              const o = free[j]!;
              free[j] = free[i]!;
              taken.add(o);
              // one expect for the whole fill: one per set() was most of the time this test took
              if (!index.set(0, o)) refused.push(o);
            }
            expect(refused, 'offsets whose set() answered false').toEqual([]);
            for (let i = 0; i < Math.min(50, taken.size); i++) {
              const o = uniformBelow(rng, n);
              if (taken.delete(o)) expect(index.clear(0, o)).toBe(true);
            }
            expect(index.validate()).toBe(0);
            const bands: [number, number][] = [
              [0, n - 1],
              [0, n + 100], // hi past the index: clamped
              [n - 1, n - 1],
            ];
            for (let b = 0; b < 6; b++) {
              const lo = uniformBelow(rng, n);
              bands.push([lo, lo + uniformBelow(rng, Math.min(n - lo, 5000))]);
            }
            for (const [lo, hi] of bands) check(index, taken, n, lo, hi);
          }
        } finally {
          index.destroy();
        }
      });
    }
  }

  it('a dense index re-derives its COUNT summaries after a batch load and after clears', () => {
    const n = 1 << 20;
    const index = new FreeIndex(0, n, 'dense');
    const rng = seededRandom(5);
    const pairs = new Uint32Array(2 * 30000);
    for (let i = 0; i < 30000; i++) pairs[2 * i + 1] = uniformBelow(rng, n);
    index.setMany(pairs);
    expect(index.validate()).toBe(0);
    const taken = new Set<number>();
    for (let i = 0; i < 30000; i++) taken.add(pairs[2 * i + 1]!);
    for (let i = 0; i < 1000; i++) {
      const o = pairs[2 * i + 1]!;
      if (taken.delete(o)) index.clear(0, o);
    }
    expect(index.validate()).toBe(0);
    for (let b = 0; b < 20; b++) {
      const lo = uniformBelow(rng, n);
      check(index, taken, n, lo, Math.min(n - 1, lo + uniformBelow(rng, 20000)));
    }
    index.destroy();
  });

  it('a sparse /64-sized index picks exactly beyond 2^32 and answers counts beyond 2^53', () => {
    const index = new FreeIndex(0xffffffff, 0xffffffff, 'sparse');
    index.set(1, 5);
    index.set(1, 6);
    index.set(1, 8);
    // free offsets of [2^32 + 4, 2^32 + 10]: 4, 7, 9, 10
    expect(index.selectFree(0, 1, 1, 4, 1, 10)).toBe(true);
    expect([index.resultHi, index.resultLo]).toEqual([1, 7]);
    expect(index.selectFree(0, 3, 1, 4, 1, 10)).toBe(true);
    expect([index.resultHi, index.resultLo]).toEqual([1, 10]);
    expect(index.selectFree(0, 4, 1, 4, 1, 10)).toBe(false);
    index.countFree(0, 0, 0xffffffff, 0xffffffff); // the whole index: 2^64 − 1 − 3
    expect([index.resultHi, index.resultLo]).toEqual([0xffffffff, 0xffffffff - 3]);
    // the k-th free past 2^32 free offsets below: k = 2^32 + 5 from 0 lands past the taken 2^32 + 5, 2^32 + 6
    expect(index.selectFree(1, 5, 0, 0, 0xffffffff, 0xffffffff)).toBe(true);
    expect([index.resultHi, index.resultLo]).toEqual([1, 7]);
    index.destroy();
  });
});
