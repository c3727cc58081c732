// How a range gets filled before a case is timed. Every fill is an ORDER of offsets; the fill at
// k addresses is its first k entries, so 50 % ⊂ 90 % ⊂ 99 % ⊂ 99.9 % and a harness can grow one
// store step by step instead of rebuilding it per fill level.
//
//   uniform: a random permutation (partial Fisher–Yates, fixed seed): any prefix is a uniformly
//            random set of distinct offsets over the whole range, both bands.
//   organic: what repeated allocateNext produces: a random start in the dynamic band
//            [rangeOffset, size − 1], the first free offset scanning upward with wraparound, and
//            only when that band is full the same in the static band [0, rangeOffset − 1]
//            (upstream's allocateNextService). Simulated here once with a fixed seed; it clusters, which is what
//            makes high organic fills expensive for a linear scan.
import { Seeded } from './seeded.ts';

export type FillKind = 'uniform' | 'organic';

/** The first k offsets of a random permutation of [0, size). */
export function uniformOrder(size: number, k: number, seed: number): Uint32Array {
  const rng = new Seeded(seed);
  const perm = new Uint32Array(size);
  for (let i = 0; i < size; i++) perm[i] = i;
  for (let i = 0; i < k; i++) {
    const j = i + rng.intn(size - i);
    const t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  return perm.slice(0, k);
}

/** First clear bit in [from, to] (inclusive) of a bitmap, or −1; skips full words. */
function firstClear(bits: Uint32Array, from: number, to: number): number {
  let i = from;
  while (i <= to) {
    const w = bits[i >>> 5];
    if (w === 0xffffffff && (i & 31) === 0) {
      i += 32;
      continue;
    }
    if ((w & (1 << (i & 31))) === 0) return i;
    i++;
  }
  return -1;
}

/** The offsets k successive allocateNext calls take, in order (range [0, size), dynamic band from rangeOffset). */
export function organicOrder(size: number, rangeOffset: number, k: number, seed: number): Uint32Array {
  const rng = new Seeded(seed);
  const bits = new Uint32Array(Math.ceil(size / 32) + 1);
  const out = new Uint32Array(k);
  const pick = (lo: number, hi: number): number => {
    if (hi < lo) return -1;
    const start = lo + rng.intn(hi - lo + 1);
    let at = firstClear(bits, start, hi);
    if (at < 0 && start > lo) at = firstClear(bits, lo, start - 1);
    return at;
  };
  for (let n = 0; n < k; n++) {
    let at = pick(rangeOffset, size - 1);
    if (at < 0) at = pick(0, rangeOffset - 1);
    if (at < 0) throw new Error(`organicOrder: range of ${size} is full after ${n}`);
    bits[at >>> 5] |= 1 << (at & 31);
    out[n] = at;
  }
  return out;
}

/** k random u64 offsets as (hi, lo) pairs, in [0, 2^64 − 2] (distinct with overwhelming probability: callers check counts). */
export function randomU64Pairs(k: number, seed: number): Uint32Array {
  const rng = new Seeded(seed);
  const out = new Uint32Array(2 * k);
  for (let i = 0; i < k; i++) {
    const hi = rng.u32();
    let lo = rng.u32();
    if (hi === 0xffffffff && lo >= 0xfffffffe) lo = 0xfffffffd;
    out[2 * i] = hi;
    out[2 * i + 1] = lo;
  }
  return out;
}

/** Offsets of [0, size) not in the first k of `order`, up to `limit`, in a seeded random order. */
export function freeOffsets(size: number, order: Uint32Array, k: number, limit: number, seed: number): Uint32Array {
  const taken = new Uint8Array(size);
  for (let i = 0; i < k; i++) taken[order[i]] = 1;
  const free: number[] = [];
  for (let i = 0; i < size; i++) if (!taken[i]) free.push(i);
  const rng = new Seeded(seed);
  for (let i = free.length - 1; i > 0; i--) {
    const j = rng.intn(i + 1);
    const t = free[i];
    free[i] = free[j];
    free[j] = t;
  }
  return Uint32Array.from(free.slice(0, limit));
}
