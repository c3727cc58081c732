// The strategy contract: what a strategy is given of a range and what it answers. The built-ins
// that keep it are in adapters/builtin-strategies.ts, coolDown in adapters/cool-down.ts, the view
// and the checks on what a strategy answers in strategy-view.ts, an owner's calls into it in
// chooser-calls.ts (adapters/DESIGN.md, "Range and strategies").
//
// A strategy is a plug-in with one job: given the index of taken offsets, name a free offset. The
// range then marks it and hands out its address, so every strategy gets the same errors and the
// same invariants (ErrFull only when nothing is free, nothing handed out twice, nothing lost).
//
// The operations a strategy needs, on the index (FreeIndex, core-as/freeindex.ts):
//   nextFree(start, lo, hi)   the first free offset from start, wrapping inside [lo, hi]
//   has(o), count()           test, taken offsets
//   countFree(lo, hi)         free offsets of a band
//   selectFree(k, lo, hi)     the k-th free offset of a band (a uniform pick: k uniform in
//                             [0, countFree)); dense O(64 · levels), sparse O(pages / 64 +
//                             nodes / 64 + one node) (core-as/DESIGN.md, "Uniform picks")
// Offsets are u64 values as (hi, lo) u32 pairs (value = hi · 2^32 + lo), as everywhere in the
// index: a /64 has 2^64 − 1 of them.
//
// A strategy object is stateless and can be shared: `forRange(view)` makes the per-range chooser
// (sequential's cursor, a cool-down's queue), once per range and again when a range is restored.
// Range takes it as `new Range(cidr, { strategy })`; anything else that owns an index and a random
// source (an allocator) can drive the same object through the same StrategyView. Range and the
// Allocator both drive theirs through StrategyDriver (adapters/strategy-driver.ts).
import type { Cooling } from './cooling.ts';
import type { FreeIndex } from './free-index.ts';
import type { RandomSource, UpstreamDraw } from './random.ts';
import type { IPFamily } from './types.ts';

/** An offset as two u32 words: value = hi · 2^32 + lo. */
export interface Offset {
  hi: number;
  lo: number;
}

/**
 * The index operations a strategy may use: reads (results of searches in resultHi/resultLo). A
 * chooser changes nothing; the range marks what it chose. Every argument is a word of an offset,
 * an integer in [0, 2^32): a strategy of your own that passes fewer or others gets
 * InvalidArgumentError, which fails the call.
 */
export type StrategyIndex = Pick<FreeIndex, 'kind' | 'nextFree' | 'has' | 'count' | 'countFree' | 'selectFree' | 'resultHi' | 'resultLo'>;

/** What a strategy sees of one range. */
export interface StrategyView {
  /** The range's index of taken offsets. A chooser reads it on every call (it is not swapped under it). */
  readonly index: StrategyIndex;
  /**
   * Usable addresses (offsets 0 … size − 1) as (sizeHi, sizeLo). 0 for a range with none (an
   * IPv4 /31 or /32, an IPv6 /128): its chooser is made all the same (a strategy is accepted or
   * refused there as on any range), and never asked to choose.
   */
  readonly sizeHi: number;
  readonly sizeLo: number;
  /** The static band is [0, rangeOffset), the dynamic band [rangeOffset, size) (KEP-3070). */
  readonly rangeOffset: number;
  readonly family: IPFamily;
  /** The range's random source. */
  readonly random: RandomSource;
  /**
   * Which upstream draw `upstream` reproduces: 'bitmap' (the legacy Range: rand.Intn over the
   * dynamic band) or 'ipallocator' (the IPAddress allocator: rand.Uint64 with upstream master's
   * overflow guard when the band holds 2^63 or more). They differ only for bands that large.
   */
  readonly draw: UpstreamDraw;
}

/** The per-range state of a strategy. */
export interface OffsetChooser {
  /**
   * Writes a free offset to `out` (not marking it: the range does) and returns true; false only
   * when nothing it may choose is free. Under a cool-down it may be called while the index marks
   * every offset (each free address held): answer false, and the range gives the oldest held
   * address back early and asks again.
   */
  choose(out: Offset): boolean;
  /** Told after the range marked the offset it chose (sequential moves its cursor here). */
  taken?(hi: number, lo: number): void;
  /**
   * Present when released offsets are held back (coolDown's chooser, or one of your own that
   * passes a coolDown chooser's `cooling` on): the range holds what it releases there, and gives
   * each back when due before every choice (the oldest early when choose finds nothing free),
   * whichever chooser chooses.
   */
  readonly cooling?: Cooling;
}

/** A plug-in: a name and a factory of per-range choosers. */
export interface AllocationStrategy {
  readonly name: string;
  forRange(view: StrategyView): OffsetChooser;
}
