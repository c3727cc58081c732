// Random numbers for the allocators: one small seedable generator and the draws both allocators
// make, so that the same seed and the same store contents give the same choices in
// ReferenceAllocator and Allocator (the equivalence tests depend on this).
//
// The generator is xoshiro128** (Blackman & Vigna, 2018): 128 bits of state in four u32 words,
// period 2^128 − 1, u32 output, no BigInt and no allocation per draw. It is not cryptographic;
// upstream uses math/rand for the same job (a random start for the scan, not a secret).
//
// The draws (upstream → here):
//   rand.Int63n(n), rand.Intn(n)  →  drawBelow(rng, nHi, nLo, out)  uniform in [0, n), n < 2^64
//   rand.Uint64()                  →  drawU64(rng, out)               uniform in [0, 2^64)
//   allocateNext's start in the dynamic band (the choice between the two above and master's
//   overflow guard)               →  drawScanStart(rng, draw, nHi, nLo, rangeOffset, out)
// Uniformity is exact: bitmask rejection (draw ⌈log2 n⌉ bits, retry when ≥ n; < 2 tries on
// average). The sequences differ from Go's (different generator); only the distribution matters.
//
// The rejection loop is bounded: each try of a working source is accepted with probability over
// 1/2, so MAX_DRAW_TRIES (64) rejections in a row happen with probability under 2^-64 — never —
// while a broken source (one that returns 0xffffffff forever) would loop forever. After
// MAX_DRAW_TRIES the draw throws InvalidArgumentError naming the source. A working source makes
// exactly the draws it made before the bound existed.

import { InvalidArgumentError } from './errors.ts';
import { readMember, unboundCall } from './input.ts';
import { quoteInput } from './quote.ts';

/**
 * Rejections in a row after which a draw gives up on its source and throws InvalidArgumentError:
 * a uniform source gets there with probability under 2^-64, a broken one (returning 0xffffffff
 * forever) would otherwise loop forever.
 * @internal
 */
export const MAX_DRAW_TRIES = 64;

/** The error of a draw whose source was rejected MAX_DRAW_TRIES times in a row. */
function brokenSourceError(rng: RandomSource, below: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `${sourceName(rng)} gave ${MAX_DRAW_TRIES} values in a row outside [0, ${below}) after masking; a uniform source does that with probability under 2^-64, so it is broken (e.g. it returns the same value forever)`,
  );
}

/** The source's next value, which must be an integer in [0, 2^32): InvalidArgumentError naming the source otherwise. */
function nextU32Of(rng: RandomSource): number {
  const x = rng.nextU32();
  if (typeof x !== 'number' || x >>> 0 !== x) {
    throw new InvalidArgumentError(`${sourceName(rng)}: nextU32() must return an integer in [0, 2^32), got ${quoteInput(x)}`);
  }
  return x;
}

/** "random source <class name>", or "the random source" for a plain object. */
function sourceName(rng: RandomSource): string {
  let source = rng;
  // guarded (a MetaAllocator's range: twice), then the caller's own object, named when read once
  while (source instanceof GuardedSource) source = source.source;
  return source instanceof CallerSource ? source.name : nameOf(source);
}

/**
 * sourceName's words for `source`, from its class's name. A Proxy or a getter may throw, or
 * call back in, when its constructor is read: the caller's objects are named once, when
 * randomOption takes them, and a name that cannot be read is "the random source".
 */
function nameOf(source: object): string {
  let name: unknown;
  try {
    name = (source as { constructor?: { name?: unknown } }).constructor?.name;
  } catch {
    // a Proxy whose trap throws, a constructor getter that throws: named generically
  }
  return typeof name === 'string' && name !== '' && name !== 'Object' ? `random source ${name}` : 'the random source';
}

/** A source of uniformly distributed u32 values. */
export interface RandomSource {
  /** A uniform integer in [0, 2^32). */
  nextU32(): number;
}

/**
 * `options.random` as the allocators take it: undefined (the default source) or an object with
 * a nextU32 method; anything else is InvalidArgumentError, at construction rather than at the
 * first draw.
 * @internal
 */
export function randomOption(random: unknown): RandomSource {
  if (random === undefined) return defaultRandom();
  const next = typeof random === 'object' && random !== null ? readMember(random, 'nextU32', 'options.random') : undefined;
  if (typeof next !== 'function') {
    // seededRandom itself, not the generator it makes, is the likely slip: say how to call it
    const hint = random === seededRandom ? ' (the generator seededRandom(seed) makes, e.g. seededRandom(1))' : '';
    throw new InvalidArgumentError(`options.random must be an object with a nextU32() method${hint}, got ${quoteInput(random)}`);
  }
  return OWN_GENERATORS.has(random as object)
    ? (random as RandomSource)
    : new CallerSource(random as object, next as (this: object) => unknown, sourceName(random as RandomSource));
}

/**
 * A random source of the caller's with its nextU32 read once, by randomOption: what was checked
 * is what is called, so a method deleted or replaced afterwards, or a getter that answers
 * otherwise the next time, cannot turn a draw into a TypeError. Its name for error messages is
 * read then too: a draw's error is ours, not the caller's getter's.
 */
class CallerSource implements RandomSource {
  constructor(
    readonly source: object,
    private readonly next: (this: object) => unknown,
    /** sourceName's words for it. */
    readonly name: string,
  ) {}

  nextU32(): number {
    return this.next.call(this.source) as number; // checked by nextU32Of
  }
}

/**
 * 2^32: a u64 kept as two u32 words (hi, lo) — draws, offsets, sizes — has the value
 * hi · TWO32 + lo.
 * @internal
 */
export const TWO32 = 4294967296;
/** The largest u32 (2^32 − 1): a word of such a pair, or of a generator's state, is at most this. @internal */
export const U32_MAX = 0xffffffff;

/** The result of a 64-bit draw: value = hi · 2^32 + lo, both u32. @internal */
export interface U64Out {
  hi: number;
  lo: number;
}

/** SplitMix32-style finaliser, a bijection of the u32 values: the round function of seededRandom's Feistel network. */
function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * The generators made by `new Xoshiro128` itself (seededRandom, defaultRandom), frozen, which
 * guardedSource uses unguarded: known by identity, as an object that only looks like one
 * (Object.create(Xoshiro128.prototype) with a nextU32 of its own, or a Proxy whose
 * getPrototypeOf answers Xoshiro128.prototype) calls the caller's code.
 */
const OWN_GENERATORS = new WeakSet<object>();

/**
 * xoshiro128**: four u32 state words, never all zero.
 *
 *   result = rotl(s1 · 5, 7) · 9
 *   t = s1 << 9;  s2 ^= s0;  s3 ^= s1;  s1 ^= s2;  s0 ^= s3;  s2 ^= t;  s3 = rotl(s3, 11)
 */
export class Xoshiro128 implements RandomSource {
  // The state lives in a typed array: u32 values ≥ 2^30 do not fit V8's small integers, so plain
  // number fields would allocate a heap number on every store (measured 21 ns per draw vs ~3).
  private readonly s = new Uint32Array(4);

  /**
   * From four state words, each an integer in [0, 2^32) (an all-zero state is replaced by a fixed
   * non-zero one, the only state xoshiro cannot leave); anything else is InvalidArgumentError
   * naming the word, rather than its low 32 bits taken silently (2^32 would be 0, and −1 would be
   * 2^32 − 1). Use `seededRandom(seed)` to start from one number. The generator is frozen (a
   * subclass's is not): the allocators call it unguarded, knowing it calls nothing else.
   */
  constructor(s0: number, s1: number, s2: number, s3: number) {
    const given = [s0, s1, s2, s3];
    for (let i = 0; i < given.length; i++) {
      const w = given[i];
      if (typeof w !== 'number' || !Number.isInteger(w) || w < 0 || w > U32_MAX) {
        throw new InvalidArgumentError(
          `Xoshiro128 state words must be integers in [0, 2^32), got ${typeof w === 'number' ? String(w) : quoteInput(w)} as word ${i}`,
        );
      }
    }
    if ((s0 | s1 | s2 | s3) === 0) s0 = 0x9e3779b9;
    const s = this.s;
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
    if (new.target === Xoshiro128) {
      // frozen, so no nextU32 of the caller's can shadow this one afterwards: guardedSource then
      // knows it calls nothing (a subclass may override nextU32, and is guarded)
      Object.freeze(this);
      OWN_GENERATORS.add(this);
    }
  }

  nextU32(this: object): number;
  nextU32(this: Xoshiro128): number {
    // taken off its generator (`{ nextU32: rng.nextU32 }`, a bare call): the typed error, not a
    // TypeError from reading the state
    const s = (this as Xoshiro128 | undefined)?.s;
    if (s === undefined) throw unboundCall(this, 'Xoshiro128', 'nextU32');
    const s0 = s[0]! | 0;
    const s1 = s[1]! | 0;
    let s2 = s[2]! | 0;
    let s3 = s[3]! | 0;
    const m = Math.imul(s1, 5);
    const result = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s[1] = s1 ^ s2;
    s[0] = s0 ^ s3;
    s2 ^= t;
    s[2] = s2;
    s[3] = (s3 << 11) | (s3 >>> 21);
    return result;
  }
}

/**
 * Round keys of the seed's Feistel network (hex digits of π, one per round): distinct keys keep
 * the rounds from being the same function.
 */
const SEED_ROUND_KEYS = [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0x082efa98, 0xec4e6c89];

/** Set in a negative seed's high word, which otherwise uses 21 bits (2^53 = 2^21 · 2^32): −n and n differ. */
const NEGATIVE_SEED_BIT = 0x80000000;

/**
 * A generator started from a seed: an integer of magnitude at most Number.MAX_SAFE_INTEGER
 * (2^53 − 1). Its sign counts (−1 and 1 differ); −0 is 0, as everywhere in JavaScript. Different
 * seeds start from different states, and neighbouring seeds' sequences look unrelated from the
 * first draw on; equal seeds give equal sequences in every runtime.
 * InvalidArgumentError, saying what is wrong, for anything else: not a number (a bigint, a numeric
 * string), NaN or ±Infinity, a fraction (only its integer part could count, so every seed in
 * [0, 1), Math.random()'s, would give one sequence), or a larger magnitude (2^64 or
 * Number.MAX_VALUE have lost their low bits, so they could not be told apart from their
 * neighbours).
 */
export function seededRandom(seed: number): Xoshiro128 {
  if (typeof seed !== 'number') {
    const hint = typeof seed === 'bigint' ? ' (a bigint: pass Number(seed))' : '';
    throw new InvalidArgumentError(`seed must be an integer (a number), got ${quoteInput(seed)}${hint}`);
  }
  if (!Number.isInteger(seed)) {
    throw new InvalidArgumentError(
      Number.isFinite(seed)
        ? `seed must be an integer, got ${seed}: only its integer part would count, so every seed in [0, 1) (Math.random()'s) would give the same sequence`
        : `seed must be an integer, got ${seed}`,
    );
  }
  if (Math.abs(seed) > Number.MAX_SAFE_INTEGER) {
    throw new InvalidArgumentError(
      `seed must be at most Number.MAX_SAFE_INTEGER (2^53 − 1) in magnitude, got ${seed}: beyond it, distinct integers share one number`,
    );
  }
  // Every state word must depend on every bit of the seed: xoshiro128**'s first output is a
  // function of s1 alone, and its next few outputs of few words, so a word built from one half
  // of the seed makes all seeds that share that half start alike (from the high half alone, every
  // seed below 2^32 would give the same first draw). An 8-round Feistel network over the 54 bits (lo, hi, sign) mixes both
  // halves into every word; each round is a bijection of the 64-bit pair, so the pair after round 4
  // (s0, s1) is different for different seeds, and so is the pair after round 8 (s2, s3).
  const n = Math.abs(seed);
  let left = n >>> 0;
  let right = (Math.floor(n / TWO32) ^ (seed < 0 ? NEGATIVE_SEED_BIT : 0)) >>> 0;
  const words: number[] = [];
  for (let round = 0; round < SEED_ROUND_KEYS.length; round++) {
    const next = (left ^ mix32(right ^ SEED_ROUND_KEYS[round]!)) >>> 0;
    left = right;
    right = next;
    if (round % 4 === 3) words.push(left, right);
  }
  return new Xoshiro128(words[0]!, words[1]!, words[2]!, words[3]!);
}

/** A generator seeded from `crypto.getRandomValues` (the default of both allocators). */
export function defaultRandom(): Xoshiro128 {
  const s = new Uint32Array(4);
  globalThis.crypto.getRandomValues(s);
  return new Xoshiro128(s[0]!, s[1]!, s[2]!, s[3]!);
}

/**
 * Uniform integer in [0, n) with n = nHi · 2^32 + nLo, 1 ≤ n < 2^64, written to `out`.
 * Draws: none when n = 1; otherwise one u32 per try when n ≤ 2^32, two (hi first) when larger.
 * Throws RangeError for n = 0, InvalidArgumentError for a broken source (MAX_DRAW_TRIES).
 * @internal
 */
export function drawBelow(rng: RandomSource, nHi: number, nLo: number, out: U64Out): void {
  // m = n − 1, the largest allowed value.
  let mHi = nHi >>> 0;
  let mLo = nLo >>> 0;
  if (mLo === 0) {
    if (mHi === 0) throw new RangeError('drawBelow: n must be at least 1');
    mHi -= 1;
    mLo = 0xffffffff;
  } else {
    mLo -= 1;
  }
  // Math.clz32 is given the words as int32s (`| 0`, the same bits: it reads them as u32s anyway).
  // A u32 at or above 2^31 is a double to V8, and Deno's V8 (its Maglev tier) compiles Math.clz32
  // for int32s only: each such word deoptimized this function, which was then compiled again —
  // on an IPv6 /64, at every draw (test/deopt-loops.test.ts).
  if (mHi === 0) {
    out.hi = 0;
    if (mLo === 0) {
      out.lo = 0;
      return;
    }
    const mask = 0xffffffff >>> Math.clz32(mLo | 0);
    let x: number;
    let tries = 0;
    do {
      if (tries++ === MAX_DRAW_TRIES) throw brokenSourceError(rng, String(mLo + 1));
      x = (nextU32Of(rng) & mask) >>> 0;
    } while (x > mLo);
    out.lo = x;
    return;
  }
  const maskHi = 0xffffffff >>> Math.clz32(mHi | 0);
  for (let tries = 0; tries < MAX_DRAW_TRIES; tries++) {
    const h = (nextU32Of(rng) & maskHi) >>> 0;
    const l = nextU32Of(rng);
    if (h < mHi || (h === mHi && l <= mLo)) {
      out.hi = h;
      out.lo = l;
      return;
    }
  }
  throw brokenSourceError(rng, String(((BigInt(mHi) << 32n) | BigInt(mLo)) + 1n));
}

/** Uniform u64 (upstream `rand.Uint64()`), two draws: hi then lo. @internal */
export function drawU64(rng: RandomSource, out: U64Out): void {
  out.hi = nextU32Of(rng);
  out.lo = nextU32Of(rng);
}

/**
 * Which upstream allocator's draw: ipallocator.go (the Allocator) or the legacy bitmap.go (Range);
 * a strategy is told it as StrategyView.draw.
 */
export type UpstreamDraw = 'ipallocator' | 'bitmap';

/** The high word of Go's math.MaxInt64 (2^63 − 1, low word all ones): rand.Int63n's bound. */
const MAX_INT64_HI = 0x7fffffff;

/**
 * upstream allocateNext's random start d in a dynamic band of n = nHi · 2^32 + nLo offsets
 * (1 ≤ n < 2^64) that follows a static band of `rangeOffset` offsets (< 2^32), written to `out`:
 *
 *   'ipallocator'  n ≥ MaxInt64 (an IPv6 /64): rand.Uint64(), then master's overflow guard
 *                  (d > MaxUint64 − rangeOffset → d − rangeOffset); otherwise rand.Int63n(n)
 *   'bitmap'       rand.Intn(n) whatever n (the legacy bitmap)
 *
 * The draws of drawU64 or drawBelow and nothing else, so that AddressSpace's scan and the
 * 'upstream' strategy's (ScanChooser) draw alike for the same range.
 * @internal
 */
export function drawScanStart(rng: RandomSource, draw: UpstreamDraw, nHi: number, nLo: number, rangeOffset: number, out: U64Out): void {
  if (draw === 'ipallocator' && (nHi > MAX_INT64_HI || (nHi === MAX_INT64_HI && nLo === U32_MAX))) {
    drawU64(rng, out);
    if (out.hi === U32_MAX && out.lo > U32_MAX - rangeOffset) out.lo -= rangeOffset;
  } else {
    drawBelow(rng, nHi, nLo, out);
  }
}

const numberOut: U64Out = { hi: 0, lo: 0 };

/**
 * Uniform integer in [0, n) for an integer 1 ≤ n ≤ 2^53, as a number. Same draws as
 * `drawBelow(rng, ⌊n / 2^32⌋, n mod 2^32, …)`.
 * @internal
 */
export function uniformBelow(rng: RandomSource, n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > 9007199254740992) {
    throw new RangeError(`uniformBelow: n must be an integer in [1, 2^53], got ${n}`);
  }
  drawBelow(rng, Math.floor(n / TWO32), n >>> 0, numberOut);
  return numberOut.hi * TWO32 + numberOut.lo;
}

/**
 * What guards a draw from a source of the caller's: it makes the draw, inside a range's or
 * allocator's re-entry guard (ChooserCalls), or followed by a MetaAllocator's check that the
 * draw left the range allocatable. @internal
 */
export interface DrawGuard {
  /** `source.nextU32()`, guarded: its value, or what it threw. */
  draw(source: RandomSource): number;
}

/**
 * A random source of the caller's, called inside `guard` (a range's or allocator's re-entry
 * guard: the source may read what it draws for, not change it). Errors about its values name the
 * caller's source.
 */
class GuardedSource implements RandomSource {
  constructor(
    readonly source: RandomSource,
    private readonly guard: DrawGuard,
  ) {}

  nextU32(): number {
    return this.guard.draw(this.source);
  }
}

/**
 * Whether `random` is one of this package's generators (OWN_GENERATORS), which call no code of
 * yours as they draw: nothing drawn for can change during a draw. @internal
 */
export function isOwnGenerator(random: RandomSource): boolean {
  return OWN_GENERATORS.has(random);
}

/** `random` drawn inside `guard`; this package's generators call nothing and are used as they are. @internal */
export function guardedSource(random: RandomSource, guard: DrawGuard): RandomSource {
  return isOwnGenerator(random) ? random : new GuardedSource(random, guard);
}
