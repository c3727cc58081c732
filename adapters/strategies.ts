// Allocation strategies: how allocateNext chooses among the free offsets of a range.
//
// A strategy is a plug-in with one job: given the index of taken offsets, name a free offset. The
// range then marks it and hands out its address, so every strategy gets the same errors and the
// same invariants (ErrFull only when nothing is free, nothing handed out twice, nothing lost).
//
//   offset 0                    rangeOffset                                       size − 1
//     │◂──── static band ───────▸│◂─────────────── dynamic band ─────────────────────▸│
//
// Every built-in keeps KEP-3070's bands: it chooses in the dynamic band, and in the static band
// only when the dynamic band has nothing free. They differ in which free offset they choose:
//
//   upstream       a random start, then the first free offset upward, wrapping (upstream's
//                  allocateNextService / the legacy bitmap's randomScanStrategyWithOffset); the
//                  default, and the only one whose answers equal upstream's for the same draws
//                  (as a strategy object, e.g. inside coolDown, it is ScanChooser below: see its
//                  one difference there)
//   legacy-bitmap  the same scan over the legacy bitmap's range: an IPv6 range holds at most
//                  65,535 addresses there (upstream's 2^16 cap), the draw is rand.Intn
//   sequential     the first free offset after the one it chose last, wrapping (a cursor per band)
//   lowest-free    the lowest free offset (a band's gaps are refilled first)
//   random-free    uniform over the band's free offsets (upstream's scan favours a free offset
//                  that follows a long taken run: it is the first free one for many starts)
//
// and coolDown(strategy, { ms } | { allocations }) wraps any of them: a released offset stays
// out of use until the time or the number of allocations has passed, then returns.
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
import { ErrDestroyed, ErrFull, InvalidArgumentError, OutOfMemoryError } from './errors.ts';
import { nearestName, optionsObject, readMember } from './input.ts';
import { quoteInput } from './quote.ts';
import type { FreeIndex } from './free-index.ts';
import { drawBelow, drawScanStart, guardedSource, type RandomSource, TWO32, U32_MAX, type U64Out, type UpstreamDraw } from './random.ts';
import type { IPFamily } from './types.ts';

/** The built-in strategies, by name. */
export type StrategyName = 'upstream' | 'legacy-bitmap' | 'sequential' | 'lowest-free' | 'random-free';

export const STRATEGY_NAMES: readonly StrategyName[] = Object.freeze([
  'upstream',
  'legacy-bitmap',
  'sequential',
  'lowest-free',
  'random-free',
] as StrategyName[]);

/** An offset as two u32 words: value = hi · 2^32 + lo. */
export interface Offset {
  hi: number;
  lo: number;
}

/**
 * The index operations a strategy may use: reads (results of searches in resultHi/resultLo). A
 * chooser changes nothing; the range marks what it chose.
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
  readonly draw: 'bitmap' | 'ipallocator';
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

/** The `strategy` option: a built-in's name or a strategy object (a built-in, coolDown(…), your own). */
export type StrategyOption = StrategyName | AllocationStrategy;

// ── u64 helpers on (hi, lo) pairs ─────────────────────────────────────────────────────────────

/** (aHi, aLo) + (bHi, bLo) into out; saturates at 2^64 − 1 (a start past every band: nextFree clamps it). */
function add64(aHi: number, aLo: number, bHi: number, bLo: number, out: Offset): void {
  let hi = aHi + bHi;
  let lo = aLo + bLo;
  if (lo >= TWO32) {
    lo -= TWO32;
    hi += 1;
  }
  if (hi > U32_MAX) {
    hi = U32_MAX;
    lo = U32_MAX;
  }
  out.hi = hi;
  out.lo = lo;
}

/** The addresses of an IPv6 range the legacy bitmap holds (upstream's 2^16 cap). */
const LEGACY_BITMAP_IPV6_CAP = 65535;

/**
 * Choosers that see only the first part of their range ('legacy-bitmap' on an IPv6 range past
 * its cap), with why: their "nothing free" is not the range's, and the ErrFull it causes says so
 * (fullError). A chooser of ours made over another (coolDown's, a MetaAllocator's guard) carries
 * the inner one's (seesPartAs).
 */
const SEES_PART = new WeakMap<OffsetChooser, string>();

function seesPartAs(outer: OffsetChooser, inner: OffsetChooser): void {
  const why = SEES_PART.get(inner);
  if (why !== undefined) SEES_PART.set(outer, why);
}

/**
 * The ErrFull of a range whose `chooser` (null: upstream's scan) found nothing free: saying what
 * the chooser could not see, when it sees part of the range only.
 * @internal used by Range and the Allocator
 */
export function fullError(chooser: OffsetChooser | null): ErrFull {
  return new ErrFull(chooser === null ? undefined : SEES_PART.get(chooser));
}

/** The two bands of a range as closed intervals of offsets. */
class Bands {
  /** dynamic band [ro, last]; static band [0, ro − 1] when ro > 0. */
  readonly ro: number;
  readonly lastHi: number;
  readonly lastLo: number;
  /** Offsets in the dynamic band: size − ro, as (hi, lo). */
  readonly dynHi: number;
  readonly dynLo: number;

  /** `cap` (the legacy bitmap's 65,535 for IPv6) limits the range to its first `cap` offsets. */
  constructor(view: StrategyView, cap = 0) {
    let sHi = view.sizeHi;
    let sLo = view.sizeLo;
    if (cap > 0 && (sHi > 0 || sLo > cap)) {
      sHi = 0;
      sLo = cap;
    }
    this.ro = view.rangeOffset;
    this.lastHi = sLo === 0 ? sHi - 1 : sHi;
    this.lastLo = (sLo - 1) >>> 0;
    // size − ro (ro < size whenever ro > 0: calculateRangeOffset keeps the dynamic band non-empty)
    if (sLo >= this.ro) {
      this.dynHi = sHi;
      this.dynLo = sLo - this.ro;
    } else {
      this.dynHi = sHi - 1;
      this.dynLo = sLo + TWO32 - this.ro;
    }
  }

  get hasStatic(): boolean {
    return this.ro > 0;
  }
}

// ── the built-ins ───────────────────────────────────────────────────────────────────────────

/** The first free offset from (sHi, sLo), wrapping inside [lo, hi]: true with it in out. */
function firstFree(
  ix: StrategyIndex,
  sHi: number,
  sLo: number,
  loHi: number,
  loLo: number,
  hiHi: number,
  hiLo: number,
  out: Offset,
): boolean {
  if (!ix.nextFree(sHi, sLo, loHi, loLo, hiHi, hiLo)) return false;
  out.hi = ix.resultHi;
  out.lo = ix.resultLo;
  return true;
}

/**
 * upstream's scan: random start d in the band, the first free offset from ro + d, wrapping; then
 * the static band. Without a strategy the range scans through AddressSpace (adapters/space.ts)
 * instead, with the same draws and answers but one: there, in the last IPv6 /64 of the space, a
 * start whose address would pass ffff:…:ffff finds nothing in the dynamic band (upstream's
 * iterator); here, knowing offsets only, it wraps to the band's first offset. Two of the 2^64
 * draws reach it.
 */
class ScanChooser implements OffsetChooser {
  private readonly bands: Bands;
  /** legacy-bitmap draws as the legacy bitmap does, whatever the view says. */
  private readonly draw: UpstreamDraw;
  private readonly d: U64Out = { hi: 0, lo: 0 };
  private readonly start: Offset = { hi: 0, lo: 0 };

  constructor(
    private readonly view: StrategyView,
    legacy: boolean,
  ) {
    const capped = legacy && view.family === 'IPv6' && (view.sizeHi > 0 || view.sizeLo > LEGACY_BITMAP_IPV6_CAP);
    this.bands = new Bands(view, capped ? LEGACY_BITMAP_IPV6_CAP : 0);
    this.draw = legacy ? 'bitmap' : view.draw;
    if (capped) {
      SEES_PART.set(
        this,
        "'legacy-bitmap' sees only the first 65,535 addresses of an IPv6 range (upstream's legacy bitmap) and gives none beyond them; free() counts the whole range",
      );
    }
  }

  choose(out: Offset): boolean {
    const b = this.bands;
    const v = this.view;
    const d = this.d;
    drawScanStart(v.random, this.draw, b.dynHi, b.dynLo, b.ro, d);
    const s = this.start;
    add64(0, b.ro, d.hi, d.lo, s); // a start past the band wraps to its first offset (nextFree), as upstream's iterator does
    if (firstFree(v.index, s.hi, s.lo, 0, b.ro, b.lastHi, b.lastLo, out)) return true;
    if (!b.hasStatic) return false;
    drawBelow(v.random, 0, b.ro, d);
    return firstFree(v.index, 0, d.lo, 0, 0, 0, b.ro - 1, out);
  }
}

/** The first free offset after the last one chosen, wrapping; one cursor per band. */
class SequentialChooser implements OffsetChooser {
  private readonly bands: Bands;
  /** The next offset to try in the dynamic band, and in the static band. */
  private readonly dyn: Offset;
  private staticNext = 0;

  constructor(private readonly view: StrategyView) {
    this.bands = new Bands(view);
    this.dyn = { hi: 0, lo: this.bands.ro };
  }

  choose(out: Offset): boolean {
    const b = this.bands;
    const ix = this.view.index;
    if (firstFree(ix, this.dyn.hi, this.dyn.lo, 0, b.ro, b.lastHi, b.lastLo, out)) return true;
    return b.hasStatic && firstFree(ix, 0, this.staticNext, 0, 0, 0, b.ro - 1, out);
  }

  taken(hi: number, lo: number): void {
    if (hi === 0 && lo < this.bands.ro)
      this.staticNext = lo + 1; // past the band: nextFree starts over at 0
    else add64(hi, lo, 0, 1, this.dyn); // past the end: nextFree starts over at the band's start
  }
}

/** The lowest free offset of the dynamic band, then of the static band. */
class LowestFreeChooser implements OffsetChooser {
  private readonly bands: Bands;

  constructor(private readonly view: StrategyView) {
    this.bands = new Bands(view);
  }

  choose(out: Offset): boolean {
    const b = this.bands;
    const ix = this.view.index;
    if (firstFree(ix, 0, b.ro, 0, b.ro, b.lastHi, b.lastLo, out)) return true;
    return b.hasStatic && firstFree(ix, 0, 0, 0, 0, 0, b.ro - 1, out);
  }
}

/**
 * Tries of draw-and-test before a uniform pick counts the band's free offsets and selects one.
 * Each accepted draw is uniform over the free offsets, and so is the exact pick after the tries:
 * the mix is exactly uniform. In a band at most half full 8 tries all fail with probability
 * ≤ 1/256; a nearly empty /64 rarely gets to the count (a few µs on a sparse index: a draw and a
 * test is ≈ 100× cheaper), but a seeded restart, whose draws replay the taken offsets, does on
 * every call.
 */
const UNIFORM_TRIES = 8;

/** Uniform over the free offsets of the dynamic band, then of the static band. */
class RandomFreeChooser implements OffsetChooser {
  private readonly bands: Bands;
  private readonly d: U64Out = { hi: 0, lo: 0 };

  constructor(private readonly view: StrategyView) {
    this.bands = new Bands(view);
  }

  choose(out: Offset): boolean {
    const b = this.bands;
    if (this.pick(0, b.ro, b.dynHi, b.dynLo, b.lastHi, b.lastLo, out)) return true;
    return b.hasStatic && this.pick(0, 0, 0, b.ro, 0, b.ro - 1, out);
  }

  /** A uniform free offset of [lo, last], whose size is (nHi, nLo): true with it in out. */
  private pick(loHi: number, loLo: number, nHi: number, nLo: number, lastHi: number, lastLo: number, out: Offset): boolean {
    const ix = this.view.index;
    const rng = this.view.random;
    const d = this.d;
    for (let t = 0; t < UNIFORM_TRIES; t++) {
      drawBelow(rng, nHi, nLo, d);
      add64(loHi, loLo, d.hi, d.lo, out);
      if (!ix.has(out.hi, out.lo)) return true;
    }
    ix.countFree(loHi, loLo, lastHi, lastLo);
    const fHi = ix.resultHi;
    const fLo = ix.resultLo;
    if (fHi === 0 && fLo === 0) return false;
    drawBelow(rng, fHi, fLo, d);
    if (!ix.selectFree(d.hi, d.lo, loHi, loLo, lastHi, lastLo)) return false; // only a corrupted index
    out.hi = ix.resultHi;
    out.lo = ix.resultLo;
    return true;
  }
}

/** The strategies of this module (the built-ins and coolDown's): they see the whole index. */
const OWN_STRATEGIES = new WeakSet<AllocationStrategy>();

function own(strategy: AllocationStrategy): AllocationStrategy {
  OWN_STRATEGIES.add(strategy);
  return strategy;
}

function builtin(name: StrategyName, make: (view: StrategyView) => OffsetChooser): AllocationStrategy {
  return own(Object.freeze({ name, forRange: make }));
}

/**
 * What a strategy of your own sees of the index: the reads StrategyIndex names, nothing else. A
 * chooser that could clear or destroy the index would have the range hand out an address twice
 * (the index is the range's record of what is taken).
 */
function readOnly(index: FreeIndex): StrategyIndex {
  // A strategy may keep its view past the life of its index: once the range is destroyed, or the
  // index replaced (a restore, an allocator's rebuild: the strategy then gets a new view), reading
  // it would read nothing, or memory since given to another range.
  const live = (): FreeIndex => {
    if (index.isDestroyed)
      throw new ErrDestroyed('the index of this strategy view (its range destroyed, or the index replaced by a restore or a rebuild)');
    return index;
  };
  const view: StrategyIndex = Object.freeze({
    get kind() {
      return live().kind;
    },
    nextFree: (...a: Parameters<StrategyIndex['nextFree']>) => live().nextFree(...a),
    has: (...a: Parameters<StrategyIndex['has']>) => live().has(...a),
    count: () => live().count(),
    countFree: (...a: Parameters<StrategyIndex['countFree']>) => live().countFree(...a),
    selectFree: (...a: Parameters<StrategyIndex['selectFree']>) => live().selectFree(...a),
    get resultHi() {
      return index.resultHi;
    },
    get resultLo() {
      return index.resultLo;
    },
  });
  BEHIND_READ_ONLY.set(view, index);
  return view;
}

/** Each read-only view's FreeIndex: how a coolDown inside a strategy of your own reaches it. */
const BEHIND_READ_ONLY = new WeakMap<StrategyIndex, FreeIndex>();

/**
 * The whole index behind a view, for coolDown's `clear` of what it held: the range's FreeIndex
 * itself (the strategies of this module get it), or the one behind a read-only view (a coolDown
 * that a strategy of your own delegates to). InvalidArgumentError for an index the range did not
 * give.
 */
function wholeIndex(view: StrategyView): FreeIndex {
  const index = BEHIND_READ_ONLY.get(view.index) ?? view.index;
  if (typeof (index as Partial<FreeIndex>).clear !== 'function') {
    throw new InvalidArgumentError(
      'coolDown(…).forRange needs the view a range of this copy of ipallocator gave: it returns the addresses it held to ' +
        "that range's index, which this view does not lead to (a view made by hand, or by a range of another copy of the package)",
    );
  }
  return index as FreeIndex;
}

/**
 * The built-in strategies, by name. Each keeps KEP-3070's bands (the static band only when the
 * dynamic band has nothing free); they differ in which free address they choose:
 * - `upstream` (the default): a random start, then the first free address upward, wrapping —
 *   upstream's answers for the same draws;
 * - `legacy-bitmap`: the same scan over the legacy bitmap's range (an IPv6 range holds at most
 *   65,535 addresses);
 * - `sequential`: the first free address after the one it chose last, wrapping;
 * - `lowest-free`: the lowest free address;
 * - `random-free`: uniform over the free addresses.
 */
export const STRATEGIES: Readonly<Record<StrategyName, AllocationStrategy>> = Object.freeze({
  upstream: builtin('upstream', (v) => new ScanChooser(v, false)),
  'legacy-bitmap': builtin('legacy-bitmap', (v) => new ScanChooser(v, true)),
  sequential: builtin('sequential', (v) => new SequentialChooser(v)),
  'lowest-free': builtin('lowest-free', (v) => new LowestFreeChooser(v)),
  'random-free': builtin('random-free', (v) => new RandomFreeChooser(v)),
});

/**
 * The `strategy` option as a strategy object: a built-in's name, or an object with a `name`
 * string and a `forRange` function. InvalidArgumentError for anything else, naming the value as
 * `what` (the option, or coolDown's argument): one wording for a wrong name and a wrong object,
 * for Range, Allocator, MetaAllocator and coolDown alike, with a "did you mean" for a misspelled
 * name.
 */
export function strategyOption(option: unknown, what = 'options.strategy'): AllocationStrategy {
  if (option === undefined) return STRATEGIES.upstream;
  if (typeof option === 'string') {
    if ((STRATEGY_NAMES as readonly string[]).includes(option)) return STRATEGIES[option as StrategyName];
  } else if (
    typeof option === 'object' &&
    option !== null &&
    typeof readMember(option, 'name', what) === 'string' &&
    typeof readMember(option, 'forRange', what) === 'function'
  ) {
    return option as AllocationStrategy;
  }
  const near = typeof option === 'string' ? nearestName(option, STRATEGY_NAMES) : undefined;
  throw new InvalidArgumentError(
    `${what} must be one of ${STRATEGY_NAMES.join(', ')} or a strategy object { name, forRange(view) }, got ${quoteInput(option)}` +
      (near === undefined ? '' : ` (did you mean "${near}"?)`),
  );
}

/**
 * The per-range chooser of `strategy` over `view` (AllocationStrategy.forRange), checked: a
 * factory that returns something without a choose(out) method fails here with
 * InvalidArgumentError, not at the first allocation.
 */
export function chooserFor(strategy: AllocationStrategy, view: StrategyView): OffsetChooser {
  const chooser = strategy.forRange(OWN_STRATEGIES.has(strategy) ? view : Object.freeze({ ...view, index: readOnly(wholeIndex(view)) }));
  if (typeof chooser !== 'object' || chooser === null || typeof chooser.choose !== 'function') {
    throw new InvalidArgumentError(`strategy ${quoteInput(strategy.name)}: forRange must return an object with a choose(out) method`);
  }
  if (chooser.taken !== undefined && typeof chooser.taken !== 'function') {
    throw new InvalidArgumentError(
      `strategy ${quoteInput(strategy.name)}: the chooser's taken, when present, must be a function, got ${quoteInput(chooser.taken)}`,
    );
  }
  return chooser;
}

/**
 * `strategy` with each call into it — forRange, and its chooser's choose and taken — run through
 * `guard` (which makes the call and returns its answer, or throws): how a MetaAllocator sees a
 * strategy that calls back into it. The chooser answers as the strategy's own, over the view it
 * would have had (a strategy of your own still sees the index read-only), with its `cooling`.
 * The default (upstream's scan, no chooser) is returned as it is.
 * @internal used by MetaAllocator
 */
export function guardedStrategy(strategy: AllocationStrategy, guard: <T>(call: () => T) => T): AllocationStrategy {
  if (strategy === STRATEGIES.upstream) return strategy;
  return own(
    Object.freeze({
      name: strategy.name,
      forRange: (view: StrategyView) => {
        const inner = guard(() => chooserFor(strategy, view));
        const chooser: { choose(out: Offset): boolean; taken?(hi: number, lo: number): void; cooling?: Cooling } = {
          choose: (out) => guard(() => inner.choose(out)),
        };
        const taken = inner.taken;
        if (taken !== undefined) chooser.taken = (hi, lo) => guard(() => taken.call(inner, hi, lo));
        if (inner.cooling !== undefined) chooser.cooling = inner.cooling;
        seesPartAs(chooser, inner);
        return chooser;
      },
    }),
  );
}

/**
 * The calls of a range (or an allocator) into its strategy: forRange, and the chooser's choose
 * and taken. While one runs, `active` is true and the owner refuses calls that would change it
 * (refuseInside): a chooser reads the index, and a change from inside would land between the
 * choice and its bookkeeping — the same address handed out twice, another lost; a forRange runs
 * while the owner swaps its index (restore, a rebuild), and a change from inside would land in
 * the index about to be replaced.
 * @internal used by Range and the Allocator
 */
export class ChooserCalls {
  private active = false;

  /** `refusal`: the message of the InvalidArgumentError for a call from inside. */
  constructor(private readonly refusal: () => string) {}

  /** InvalidArgumentError while a call into the chooser runs. */
  refuseInside(): void {
    if (this.active) throw new InvalidArgumentError(this.refusal());
  }

  /**
   * The owner's random source, drawn from inside as a chooser is called: a source of your own
   * may read the range, not change it (a restore or release between the draw and the take it
   * starts would have the take answer for a range that is gone).
   */
  guardRandom(random: RandomSource): RandomSource {
    return guardedSource(random, this);
  }

  /** Enters the guard (DrawGuard); returns what leave() restores. */
  enter(): boolean {
    const was = this.active;
    this.active = true;
    return was;
  }

  leave(was: boolean): void {
    this.active = was;
  }

  // Each call restores what `active` was before it rather than clearing it, so the guard would
  // survive a call made inside another (none is today).

  /** chooserFor(strategy, view). */
  chooserFor(strategy: AllocationStrategy, view: StrategyView): OffsetChooser {
    const was = this.active;
    this.active = true;
    try {
      return chooserFor(strategy, view);
    } finally {
      this.active = was;
    }
  }

  /**
   * chooser.choose(…), its answer copied to `out`, after `cooling` (the queue the owner holds
   * its releases in, if any) has given back what is due; when the chooser finds nothing and
   * nothing is free but what the queue holds (`index` marks all `size` offsets), the oldest
   * quarter of those come back early and it chooses again. While other offsets are free, a
   * chooser that finds nothing keeps to some of them (a rule of its own): the hold is left as it
   * is and the answer is false. The owner runs
   * the queue it holds, whichever chooser chooses: a strategy of your own may pass one coolDown
   * chooser's `cooling` on and choose otherwise (coolDown's own chooser returns held offsets early
   * itself, band by band, and answers false only when nothing is held). In a call that takes free
   * addresses only (CallReturns.freeOnly), nothing held comes back early: the answer is false.
   */
  choose(chooser: OffsetChooser, out: Offset, cooling: CoolingQueue | null, index: FreeIndex, size: number): boolean {
    const was = this.active;
    this.active = true;
    try {
      cooling?.expire(); // inside: its clock (options.now) may not change the range either
      for (;;) {
        // The chooser writes to an object of its own, read once here: `out` stays the owner's.
        // A getter on what the chooser answered could give the check one offset and the marking
        // another; a chooser that froze or kept the object it was given could break the owner's
        // writes to it later.
        const answer: Offset = { hi: 0, lo: 0 };
        if (chooseChecked(chooser, answer)) {
          out.hi = answer.hi;
          out.lo = answer.lo;
          return true;
        }
        if (cooling === null || index.count() < size || cooling.size === 0) return false;
        if (!cooling.mayReturnEarly() || !cooling.releaseOldest(Math.max(1, cooling.size >> 2))) return false;
      }
    } finally {
      this.active = was;
    }
  }

  /**
   * cooling.hold(hi, lo): a release starts a hold. Inside, as its clock (options.now) may not
   * change the range either: it runs between the release's checks and its counting.
   */
  hold(cooling: CoolingQueue, hi: number, lo: number): void {
    const was = this.active;
    this.active = true;
    try {
      cooling.hold(hi, lo);
    } finally {
      this.active = was;
    }
  }

  /**
   * chooser.taken(hi, lo), when the chooser has the hook. What a throw means (the owner's mark
   * undone, the count-based clock not ticked) is StrategyDriver.take's.
   */
  taken(chooser: OffsetChooser, hi: number, lo: number): void {
    if (chooser.taken === undefined) return;
    const was = this.active;
    this.active = true;
    try {
      chooser.taken(hi, lo);
    } finally {
      this.active = was;
    }
  }
}

/** Whether a chooser's answer is an offset at all: hi and lo integers in [0, 2^32). */
export function isOffset(o: Offset): boolean {
  return typeof o.hi === 'number' && typeof o.lo === 'number' && o.hi >>> 0 === o.hi && o.lo >>> 0 === o.lo;
}

/**
 * chooser.choose(out), whose answer must be a boolean: anything else is a chooser's mistake that
 * would otherwise read as an answer — a Promise (an async choose) as true with `out` not yet
 * written, a missing `return` as "nothing free". InvalidArgumentError.
 */
function chooseChecked(chooser: OffsetChooser, out: Offset): boolean {
  const found: unknown = chooser.choose(out);
  if (found === true || found === false) return found;
  const promise = typeof found === 'object' && found !== null && typeof (found as { then?: unknown }).then === 'function';
  throw new InvalidArgumentError(
    `a strategy's choose(out) must return true (it wrote a free offset to out) or false (nothing it may choose is free), got ${
      promise ? 'a Promise: choose must answer synchronously' : quoteInput(found)
    }`,
  );
}

/** The error of a chooser that named an offset that is not free, or no offset at all (a bug in that strategy). */
export function notFreeError(strategy: AllocationStrategy, o: Offset, cidr: string): InvalidArgumentError {
  const name = quoteInput(strategy.name);
  if (!isOffset(o)) {
    return new InvalidArgumentError(
      `strategy ${name} chose { hi: ${quoteInput(o.hi)}, lo: ${quoteInput(o.lo)} }, which is not an offset: hi and lo must be integers in [0, 2^32)`,
    );
  }
  return new InvalidArgumentError(
    `strategy ${name} chose offset ${(BigInt(o.hi) << 32n) | BigInt(o.lo)}, which is taken or outside ${cidr}`,
  );
}

// ── cool-down ────────────────────────────────────────────────────────────────────────────────

/**
 * How long a released address stays out of use: `{ ms, now? }`, a time, or `{ allocations }`, a
 * number of allocations — exactly one of the two: the type refuses `{}` and `{ ms, allocations }`,
 * as coolDown does at run time.
 */
export type CoolDownOptions =
  | {
      /** Milliseconds from the release (on the `now` clock). */
      ms: number;
      /** The clock for `ms`, in milliseconds (default Date.now; a simulation passes its own). */
      now?: (() => number) | undefined;
      allocations?: undefined;
    }
  | {
      /**
       * Allocations on the same range after the release: addresses its allocateNext calls hand out
       * (a Range's allocateMany counts one per address); a call that fails, and the candidates an
       * Allocator's call tries before a create succeeds, are not counted.
       */
      allocations: number;
      ms?: undefined;
      /** Taken, so that one spread of options serves both kinds, and not read: it times `ms` only. */
      now?: (() => number) | undefined;
    };

/**
 * `strategy` with released addresses held back: a released address stays out of use for
 * `options.ms` milliseconds or `options.allocations` allocateNext calls (give one), then returns.
 * A held address is free for every purpose but the strategy's choice: `has` is false, `used()`
 * does not count it, `allocate(ip)` takes it at once, snapshots leave it out.
 *
 * When every free address of the dynamic band is held, the oldest quarter of the addresses held
 * there (at least one) return early and the strategy chooses among them, rather than go into the
 * static band; and when every free address is held, rather than fail: cool-down delays reuse, it
 * never pushes allocations into the static band (KEP-3070) nor makes a range with free addresses
 * answer ErrFull. A quarter, not the oldest alone: API servers sharing a store hold the same addresses in
 * the same order, and would all pick that one.
 *
 * An allocation that fails (allocateNext, allocateMany) leaves the hold as it was: what it
 * returned, early or due, is held again in its place with its deadline, and its allocations are
 * not counted.
 *
 * Memory: held addresses stay marked in the index (no index memory); the queue of held addresses
 * costs about 65 bytes of JS heap each (160 in a /64). 1,000 releases a minute with ms = 60,000
 * hold about 1,000 addresses: about 65 kB, on a range that never allocates too (a release gives
 * back what is due first). With `allocations`, a range that never allocates holds every address
 * released until it does: its clock is its own allocateNext calls.
 */
export function coolDown(strategy: StrategyOption, options: CoolDownOptions): AllocationStrategy {
  // The oldest quarter rather than the oldest alone, measured: 3× the failed creates at 90 % fill
  // with the oldest alone. The queue is a FIFO of (offset, until) plus a Map from offset to its
  // FIFO entry: measured 65 bytes of JS heap per held address (160 in a /64, whose offsets past
  // 2^53 are string keys).
  const inner = strategyOption(strategy, 'strategy');
  const wrapped = COOLED_DOWN.get(inner);
  if (wrapped !== undefined) throw alreadyCooledDown(inner, wrapped);
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(`coolDown options must be an object { ms } or { allocations }, got ${quoteInput(options)}`);
  }
  const { ms, allocations, now } = optionsObject(options, 'coolDown', { ms: true, allocations: true, now: true });
  if ((ms === undefined) === (allocations === undefined)) {
    throw new InvalidArgumentError(
      `coolDown needs exactly one of options.ms and options.allocations, got ${ms === undefined ? 'neither' : `both (ms ${quoteInput(ms)}, allocations ${quoteInput(allocations)})`}`,
    );
  }
  if (ms !== undefined && !(typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)) {
    throw new InvalidArgumentError(`coolDown options.ms must be a finite number ≥ 0, got ${quoteInput(ms)}`);
  }
  if (allocations !== undefined && !(Number.isSafeInteger(allocations) && allocations >= 0)) {
    throw new InvalidArgumentError(`coolDown options.allocations must be an integer ≥ 0, got ${quoteInput(allocations)}`);
  }
  if (now !== undefined && typeof now !== 'function') {
    throw new InvalidArgumentError(`coolDown options.now must be a function returning milliseconds, got ${quoteInput(now)}`);
  }
  const byTime = ms !== undefined;
  const wait = byTime ? ms : allocations!;
  const clock = now ?? Date.now;
  const label = byTime ? `${ms} ms` : `${allocations} allocations`;
  const cooled = own(
    Object.freeze({
      name: `${inner.name}+cool-down(${label})`,
      forRange(view: StrategyView): OffsetChooser {
        const chosen = chooserFor(inner, view);
        // a strategy of your own that passes a coolDown chooser's cooling on: cooled down inside
        if (chosen.cooling !== undefined) throw alreadyCooledDown(inner);
        const chooser = new CoolDownChooser(
          chosen,
          new CoolingQueue(wholeIndex(view), byTime ? clock : null, wait, view.rangeOffset),
          view.rangeOffset,
        );
        seesPartAs(chooser, chosen);
        return chooser;
      },
    }),
  );
  COOLED_DOWN.set(cooled, inner);
  return cooled;
}

/** Each strategy coolDown made → the strategy it wraps. */
const COOLED_DOWN = new WeakMap<AllocationStrategy, AllocationStrategy>();

/**
 * coolDown of a strategy that holds released addresses already: two holds of one release would
 * disagree on when it returns (only the outer one would ever hold anything), so it is refused.
 * `wrapped`: the strategy inside, when coolDown made `strategy`.
 */
function alreadyCooledDown(strategy: AllocationStrategy, wrapped?: AllocationStrategy): InvalidArgumentError {
  const instead =
    wrapped === undefined
      ? 'its chooser holds released addresses (a cooling)'
      : `cool ${quoteInput(wrapped.name)} down once, with the hold you want`;
  return new InvalidArgumentError(`coolDown: strategy ${quoteInput(strategy.name)} is already cooled down: ${instead}`);
}

/** A key for an offset in a Map: exact below 2^53, a string above (a /64's high offsets). */
function keyOf(hi: number, lo: number): number | string {
  return hi < 0x200000 ? hi * TWO32 + lo : `${hi}:${lo}`;
}

/**
 * A cool-down's held addresses as a strategy may see them: how many, and whether one is held.
 * Holding and returning them is the range's (see coolingQueueOf).
 */
export class Cooling {
  readonly #queue: CoolingQueue;

  /** @internal made by coolDown's chooser, over a queue of its own */
  constructor(queue: CoolingQueue) {
    // the constructor is reachable from any instance: a queue made elsewhere would be trusted
    // by the range (its claim() decides whether an address is taken)
    if (!CoolingQueue.isQueue(queue)) throw new InvalidArgumentError('a Cooling is made by coolDown(…).forRange, over its own queue');
    this.#queue = queue;
    QUEUES.set(this, queue);
  }

  /** Held offsets. */
  get size(): number {
    return this.#queue.size;
  }

  /** Whether (hi, lo) is held. */
  holds(hi: number, lo: number): boolean {
    return this.#queue.holds(hi, lo);
  }
}

/** Each Cooling's queue: only the range and coolDown's chooser change it. */
const QUEUES = new WeakMap<Cooling, CoolingQueue>();

/**
 * The queue behind a chooser's `cooling`, for the range whose index is `index` to hold its
 * releases there; null when there is none. InvalidArgumentError for anything coolDown did not
 * make (a cool-down of your own would be ignored: the range holds releases only through
 * coolDown's queue), and for a cooling made for another range: its queue would return this
 * range's releases in that range's index, and hand out one of its addresses twice.
 * @internal used by Range and TakenAddresses
 */
export function coolingQueueOf(cooling: Cooling | undefined, index: FreeIndex): CoolingQueue | null {
  if (cooling === undefined || cooling === null) return null;
  const queue = (typeof cooling === 'object' && QUEUES.get(cooling)) || null;
  if (queue === null) {
    throw new InvalidArgumentError(
      `a chooser's cooling must be one coolDown(…).forRange made (leave it out for no cool-down), got ${quoteInput(cooling)}`,
    );
  }
  if (!queue.serves(index)) {
    throw new InvalidArgumentError(
      "a chooser's cooling must be the one coolDown(…).forRange made for this range's view (a restore calls forRange again: make a new chooser each time)",
    );
  }
  return queue;
}

/**
 * What a cool-down returned to the free pool during one allocation call (due or early), and how
 * many allocations it counted: held again, in place, if the call fails (CoolingQueue.endCall).
 * @internal used by Range and TakenAddresses
 */
export class CallReturns {
  /** The offsets returned, as (hi, lo) pairs. */
  readonly offsets: number[] = [];
  /** Ticks of a count-based cool-down's clock while it recorded (a Range's takes: each an allocation). */
  ticks = 0;
  /**
   * Set by the owner: the call takes free addresses only, and no held one comes back early (a
   * MetaAllocator's first pass over its ranges: another range's free address comes first).
   */
  freeOnly = false;
  /** Set when freeOnly kept held addresses from coming back early: the call may succeed without it. */
  heldBack = false;

  constructor(
    /** The queue they came from: another queue (a restore or rebuild made a new one) is left alone. */
    readonly queue: CoolingQueue,
  ) {}

  /** Empty again, for the owner's next call (after endCall of the last one: Range reuses one). */
  clear(): void {
    this.offsets.length = 0;
    this.ticks = 0;
    this.freeOnly = false;
    this.heldBack = false;
  }
}

/**
 * An allocateNext over several ranges that first takes free addresses only (MetaAllocator):
 * `heldBack` is set when a range found none because its cool-down held some, which a second
 * pass, held ones allowed, may then give back early.
 */
export interface FreeOnlyPass {
  heldBack: boolean;
}

/** Entries a cool-down queue may hold beyond twice what it keeps (CoolingQueue.keepInProportion). */
const STALE_SLACK = 1024;

/**
 * The held (released, cooling) offsets of one range: marked in its index, queued in release
 * order with the time (or allocation count) at which they return.
 *
 * A call that allocates may return held offsets to the free pool (those due, and when nothing
 * else is free the oldest early); if it then fails, they are held again as they were: same place
 * in line, same deadline. Until the call ends, their FIFO entries stay where they are (in
 * `returned`; compaction keeps them), free to anyone. One rule for such an offset: the entry
 * belongs to whoever holds the offset now. Another call's take of it (a strategy's choice)
 * hands the entry over to that call (took): its failure holds the offset again in place, its
 * success keeps it. A static reservation of it takes the entry's deadline (handOver), as a
 * claim of a held offset does: its failure holds the offset again until then, last in line.
 * Anyone else's mark (a record the cache reports) keeps it: a later delete holds it anew.
 * @internal reached through coolingQueueOf
 */
export class CoolingQueue {
  // FIFO as parallel growable arrays with a head index (compacted when half is consumed)
  private his: number[] = [];
  private los: number[] = [];
  private untils: number[] = [];
  private head = 0;
  /** offset key → its FIFO position (a claimed offset's stale entry is skipped on expiry). */
  private readonly held = new Map<number | string, number>();
  /** Addresses handed out so far (the clock of a count-based cool-down; see tick). */
  private allocations = 0;
  /**
   * offset key → its FIFO position and the call that returned it to the free pool, for calls
   * still running (not held: its index bit is clear unless someone took it since). The entry
   * stays in the FIFO until that call ends: held again there if the call fails, dropped if it
   * succeeds. (One call's record is not another's: an offset taken, released and returned again
   * by a second call meanwhile is that call's.)
   */
  private readonly returned = new Map<number | string, { at: number; by: CallReturns }>();
  /** The running call's record of what it returns (set only while its synchronous steps run), or null. */
  private recording: CallReturns | null = null;

  /** The range's own index, writable (held offsets go back through it, and are marked again by endCall). */
  readonly #index: Pick<FreeIndex, 'clear' | 'has' | 'set'>;

  /** Whether `q` was made by this class (a brand: no other object has its private field). */
  static isQueue(q: unknown): q is CoolingQueue {
    return typeof q === 'object' && q !== null && #index in q;
  }

  constructor(
    index: Pick<FreeIndex, 'clear' | 'has' | 'set'>,
    /** The time clock, or null for a count of allocations. */
    private readonly clock: (() => number) | null,
    private readonly wait: number,
    /** Where the dynamic band starts (offsets below it are the static band). */
    private readonly dynamicFrom = 0,
  ) {
    this.#index = index;
  }

  /** Held offsets. */
  get size(): number {
    return this.held.size;
  }

  /** Held offsets in the dynamic band. */
  get dynamicSize(): number {
    return this.dynamicHeld;
  }
  private dynamicHeld = 0;

  private isDynamic(hi: number, lo: number): boolean {
    return hi !== 0 || lo >= this.dynamicFrom;
  }

  /** (hi, lo), held under `key`, is no longer held. */
  private unhold(key: number | string, hi: number, lo: number): void {
    this.held.delete(key);
    if (this.isDynamic(hi, lo)) this.dynamicHeld--;
  }

  /** Whether this queue returns offsets to `index`. */
  serves(index: FreeIndex): boolean {
    return this.#index === index;
  }

  /**
   * Holds nothing any more, without touching the index: for a range whose index was just
   * overwritten (a restore), where a queue its strategy handed back again must not return
   * offsets the new state marks.
   */
  forget(): void {
    this.his = [];
    this.los = [];
    this.untils = [];
    this.head = 0;
    this.held.clear();
    this.dynamicHeld = 0;
    this.returned.clear();
    this.recording = null;
  }

  /** The clock's time (or the allocation count). InvalidArgumentError when options.now gives no finite number; its own error when it throws. */
  private now(): number {
    if (this.clock === null) return this.allocations;
    const t = this.clock();
    if (typeof t !== 'number' || !Number.isFinite(t)) {
      throw new InvalidArgumentError(`coolDown options.now must return the time in milliseconds, a finite number, got ${quoteInput(t)}`);
    }
    return t;
  }

  /** Whether (hi, lo) is held (marked in the index, free to everyone but the strategy). */
  holds(hi: number, lo: number): boolean {
    return this.held.size !== 0 && this.held.has(keyOf(hi, lo));
  }

  /**
   * Starts holding a just-released offset (still marked in the index). The clock is read first:
   * when it fails, this throws and holds nothing. A time-based cool-down first returns what is
   * due: on a range that hears releases but seldom allocates (a standby replica), holds would
   * otherwise outlive their time and grow without bound.
   */
  hold(hi: number, lo: number): void {
    const now = this.now();
    if (this.clock !== null) this.expireBy(now);
    this.enqueue(hi, lo, now + this.wait);
  }

  /**
   * Holds (hi, lo) again until `until`, the end of the hold a claim took it from: the allocation
   * that claimed it failed. Queued last, it returns no earlier than `until`.
   */
  holdAgain(hi: number, lo: number, until: number): void {
    this.enqueue(hi, lo, until);
  }

  /** When the hold of (hi, lo) ends; undefined when it is not held. */
  untilOf(hi: number, lo: number): number | undefined {
    const pos = this.held.size === 0 ? undefined : this.held.get(keyOf(hi, lo));
    return pos === undefined ? undefined : this.untils[pos];
  }

  private enqueue(hi: number, lo: number, until: number): void {
    const pos = this.his.length;
    this.held.set(keyOf(hi, lo), pos);
    if (this.isDynamic(hi, lo)) this.dynamicHeld++;
    this.his.push(hi);
    this.los.push(lo);
    this.untils.push(until);
    this.keepInProportion();
  }

  /**
   * Entries of offsets claimed or held again since pile up between expiries: they are dropped
   * once the FIFO holds more than 2 · (held + returned) + STALE_SLACK entries, so that it stays
   * in proportion to what it keeps (check() verifies this after every step). Run wherever the
   * FIFO grows or what it keeps shrinks; each drop is O(entries), paid for by the STALE_SLACK +
   * kept steps it takes to need another.
   */
  private keepInProportion(): void {
    if (this.his.length > 2 * (this.held.size + this.returned.size) + STALE_SLACK) this.dropStale();
  }

  /** Stops holding (hi, lo) because it is taken by hand (or loaded): true if it was held. */
  claim(hi: number, lo: number): boolean {
    if (this.held.size === 0) return false;
    const key = keyOf(hi, lo);
    if (!this.held.has(key)) return false;
    this.unhold(key, hi, lo);
    this.keepInProportion();
    return true;
  }

  /**
   * The recording call's take just marked (hi, lo), which was free: when another running call
   * returned it, its entry passes to the recording call, whose end keeps it (success) or holds
   * it again in place (failure). Without this, the first call's end finds it taken and leaves it
   * to the taker, whose failure then frees it: the hold is lost.
   */
  took(hi: number, lo: number): void {
    const r = this.recording;
    if (this.returned.size === 0 || r === null) return;
    const entry = this.returned.get(keyOf(hi, lo));
    if (entry === undefined || entry.by === r) return;
    entry.by = r;
    r.offsets.push(hi, lo);
  }

  /** Whether a running call returned offsets that are not back yet (handOver may find one). */
  get returning(): boolean {
    return this.returned.size !== 0;
  }

  /**
   * A static reservation just marked (hi, lo), which was free: when a running call returned it,
   * that call lets it go, and the deadline of its hold is returned (undefined when none did), for
   * the reservation to hold it again until then if it fails (holdAgain), as after a claim.
   */
  handOver(hi: number, lo: number): number | undefined {
    if (this.returned.size === 0) return undefined;
    const key = keyOf(hi, lo);
    const entry = this.returned.get(key);
    if (entry === undefined) return undefined;
    this.returned.delete(key);
    const until = this.untils[entry.at];
    this.keepInProportion();
    return until;
  }

  /**
   * An address was handed out (a count-based cool-down's clock): ticked by the owner once per
   * allocation, never per candidate — Range per address it takes (allocateMany's n count n), the
   * Allocator once per allocateNext whose create succeeded. A tick while a call records is taken
   * back if that call fails (endCall).
   */
  tick(): void {
    this.allocations++;
    if (this.recording !== null) this.recording.ticks++;
  }

  /**
   * Records into `r` what is returned to the free pool (and ticked) until record(null): the
   * synchronous steps of the call `r` belongs to.
   */
  record(r: CallReturns | null): void {
    this.recording = r;
  }

  /**
   * Whether held offsets may come back early now: not in a call that takes free addresses only
   * (CallReturns.freeOnly), which is told that some were held back. Asked only where some are held.
   */
  mayReturnEarly(): boolean {
    const r = this.recording;
    if (r === null || !r.freeOnly) return true;
    r.heldBack = true;
    return false;
  }

  /** (hi, lo) at FIFO position `at` leaves the hold for the free pool: noted for the call recording. */
  private noteReturn(key: number | string, hi: number, lo: number, at: number): void {
    const r = this.recording;
    if (r === null) return;
    this.returned.set(key, { at, by: r });
    r.offsets.push(hi, lo);
  }

  /**
   * The end of the call that recorded `r` (record(null) first). When it succeeded, what it
   * returned stays free. When it failed, each offset it returned that is still free is marked
   * again and held in its old place in line with its old deadline (one taken meanwhile, or held
   * anew by a release, stays as it is), and its ticks are taken back: the queue is as it was
   * before the call. Best effort: when marking one again needs WASM memory there is none of
   * (a sparse index's runs), it and the rest stay free.
   */
  endCall(r: CallReturns, failed: boolean): void {
    const o = r.offsets;
    if (failed) this.allocations -= r.ticks;
    let holding = failed;
    for (let i = 0; i < o.length; i += 2) {
      const hi = o[i]!;
      const lo = o[i + 1]!;
      const key = keyOf(hi, lo);
      const entry = this.returned.get(key);
      if (entry === undefined || entry.by !== r) continue; // handed over to its taker, or returned again since by another call
      this.returned.delete(key);
      // held anew by a release meanwhile, or marked meanwhile by a record the cache reports (it stays so)
      if (!holding || this.held.has(key)) continue;
      try {
        if (!this.#index.set(hi, lo)) continue;
      } catch (e) {
        if (!(e instanceof OutOfMemoryError)) throw e;
        holding = false; // the rest stay free
        continue;
      }
      this.held.set(key, entry.at);
      if (this.isDynamic(hi, lo)) this.dynamicHeld++;
      if (entry.at < this.head) this.head = entry.at;
    }
    this.compact();
  }

  /**
   * Returns to the free pool every held offset whose time has come. Best effort: when the index
   * cannot clear one for lack of WASM memory, the rest stay held (marked, in line) and go back
   * at a later call; the allocation that called this goes on among the free offsets.
   */
  expire(): void {
    if (this.head === this.his.length) return;
    this.expireBy(this.now());
  }

  private expireBy(now: number): void {
    try {
      while (this.head < this.his.length && this.untils[this.head]! <= now) this.pop();
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
    }
    this.compact();
  }

  /**
   * Returns to the free pool the `n` offsets held longest at or above offset `from` (fewer if
   * fewer are held there): false when none was.
   */
  releaseOldest(n: number, from = 0): boolean {
    let released = 0;
    for (let at = this.head; released < n && at < this.his.length; at++) {
      const hi = this.his[at]!;
      const lo = this.los[at]!;
      if (hi === 0 && lo < from) continue;
      const key = keyOf(hi, lo);
      if (this.held.get(key) !== at) continue; // claimed since (and maybe held again: a newer entry)
      this.#index.clear(hi, lo); // first: when it throws (out of memory), the entry is still held
      this.unhold(key, hi, lo);
      this.noteReturn(key, hi, lo, at);
      released++;
    }
    // the entries at the head that hold nothing any more go
    while (this.head < this.his.length && this.held.get(keyOf(this.his[this.head]!, this.los[this.head]!)) !== this.head) {
      this.head++;
    }
    this.compact();
    return released > 0;
  }

  /**
   * The first FIFO entry: cleared in the index when still held. The clear comes first: when it
   * throws (OutOfMemoryError: the clear splits a run), the entry is still held and first in line.
   */
  private pop(): void {
    const at = this.head;
    const hi = this.his[at]!;
    const lo = this.los[at]!;
    const key = keyOf(hi, lo);
    if (this.held.get(key) === at) {
      this.#index.clear(hi, lo);
      this.unhold(key, hi, lo);
      this.noteReturn(key, hi, lo, at);
    }
    this.head++; // (an entry not held any more was claimed since, and maybe held again: a newer entry)
  }

  /**
   * The first FIFO position in use: the head, or before it the entry of an offset a running call
   * returned (it goes back there if the call fails). Held entries are all at or past the head.
   */
  private firstKept(): number {
    let first = this.head;
    if (this.returned.size !== 0) for (const [, { at }] of this.returned) if (at < first) first = at;
    return first;
  }

  /** Keeps only the entries of offsets still held or returned by a running call (in order), and renumbers them. */
  private dropStale(): void {
    const his: number[] = [];
    const los: number[] = [];
    const untils: number[] = [];
    let head = 0;
    for (let at = this.firstKept(); at < this.his.length; at++) {
      const key = keyOf(this.his[at]!, this.los[at]!);
      if (this.held.get(key) === at) this.held.set(key, his.length);
      else if (this.returned.get(key)?.at === at) this.returned.get(key)!.at = his.length;
      else continue;
      if (at < this.head) head++;
      his.push(this.his[at]!);
      los.push(this.los[at]!);
      untils.push(this.untils[at]!);
    }
    this.his = his;
    this.los = los;
    this.untils = untils;
    this.head = head;
  }

  private compact(): void {
    const h = this.firstKept();
    if (h >= 1024 && h * 2 >= this.his.length) {
      this.his = this.his.slice(h);
      this.los = this.los.slice(h);
      this.untils = this.untils.slice(h);
      this.head -= h;
      for (const [k, pos] of this.held) this.held.set(k, pos - h);
      for (const [, entry] of this.returned) entry.at -= h;
    }
    this.keepInProportion();
  }

  /**
   * Every held offset is marked in the index, and counted in its band; and, when `idle` (no
   * allocation call of the owner running), nothing a call returned is still kept in line: a
   * message naming what is not so, or null.
   */
  check(idle: boolean): string | null {
    let dynamic = 0;
    for (const [, pos] of this.held) {
      const hi = this.his[pos]!;
      const lo = this.los[pos]!;
      if (!this.#index.has(hi, lo)) return `held offset ${(BigInt(hi) << 32n) | BigInt(lo)} is not marked in the index`;
      if (this.isDynamic(hi, lo)) dynamic++;
    }
    if (dynamic !== this.dynamicHeld) return `${dynamic} held offsets are in the dynamic band, the count says ${this.dynamicHeld}`;
    const kept = this.held.size + this.returned.size;
    if (this.his.length > 2 * kept + STALE_SLACK)
      return `the queue has ${this.his.length} entries for ${kept} offsets held or returned: those claimed or held again since are not dropped`;
    // each call ends by keeping or holding again what it returned
    if (idle && this.recording === null && this.returned.size !== 0)
      return `${this.returned.size} offsets returned by calls that have ended are still kept in line`;
    return null;
  }
}

class CoolDownChooser implements OffsetChooser {
  readonly cooling: Cooling;
  readonly #queue: CoolingQueue;

  constructor(
    private readonly inner: OffsetChooser,
    queue: CoolingQueue,
    /** The static band is [0, rangeOffset). */
    private readonly rangeOffset: number,
  ) {
    this.#queue = queue;
    this.cooling = new Cooling(queue);
  }

  choose(out: Offset): boolean {
    const cooling = this.#queue;
    // (what is due has returned: the range runs the expiry of the queue it holds, and ticks it)
    // The inner strategy goes into the static band (or finds nothing) only when the dynamic band
    // has nothing free but held offsets, if any: return the oldest quarter of those early and
    // choose again (see coolDown). With none held there, its choice in the static band stands;
    // only when it finds nothing at all do the oldest held offsets of either band return.
    for (;;) {
      const found = chooseChecked(this.inner, out);
      if (found && (out.hi !== 0 || out.lo >= this.rangeOffset)) return true;
      if (cooling.dynamicSize > 0) {
        // a caller that takes free addresses only (a MetaAllocator trying its other ranges
        // first): neither the static band nor a held address yet
        if (!cooling.mayReturnEarly()) return false;
        if (cooling.releaseOldest(Math.max(1, cooling.dynamicSize >> 2), this.rangeOffset)) continue;
      }
      if (found) return true;
      if (cooling.size === 0 || !cooling.mayReturnEarly() || !cooling.releaseOldest(Math.max(1, cooling.size >> 2))) return false;
    }
  }

  taken(hi: number, lo: number): void {
    this.inner.taken?.(hi, lo);
  }
}
