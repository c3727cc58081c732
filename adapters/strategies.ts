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
// and coolDown(strategy, { ms } | { allocations }) wraps any of them (adapters/cool-down.ts): a
// released offset stays out of use until the time or the number of allocations has passed, then
// returns.
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
import { ErrDestroyed, ErrFull, InvalidArgumentError } from './errors.ts';
import { didYouMean, readMember } from './input.ts';
import { quoteInput } from './quote.ts';
import type { FreeIndex } from './free-index.ts';
import { drawBelow, drawScanStart, guardedSource, type RandomSource, TWO32, U32_MAX, type U64Out, type UpstreamDraw } from './random.ts';
import type { IPFamily } from './types.ts';
import type { Cooling, CoolingQueue } from './cool-down.ts';

/** The names of the built-in strategies: STRATEGIES's keys. */
export type StrategyName = keyof typeof STRATEGIES;

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

/** `outer`, made over `inner`, sees the part of the range `inner` sees. @internal for coolDown */
export function seesPartAs(outer: OffsetChooser, inner: OffsetChooser): void {
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

/** Marks `strategy` as one of this package's: it sees the whole index. @internal for coolDown */
export function own(strategy: AllocationStrategy): AllocationStrategy {
  OWN_STRATEGIES.add(strategy);
  return strategy;
}

function builtin(name: string, make: (view: StrategyView) => OffsetChooser): AllocationStrategy {
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
    nextFree: (...a: Parameters<StrategyIndex['nextFree']>) =>
      live().nextFree(...offsetWords(a, 6, 'nextFree(sHi, sLo, loHi, loLo, hiHi, hiLo)')),
    has: (...a: Parameters<StrategyIndex['has']>) => live().has(...offsetWords(a, 2, 'has(hi, lo)')),
    count: (...a: unknown[]) => {
      // as the other reads refuse words past theirs: count(lo, hi) would be a band it does not read
      if (a.some((x) => x !== undefined)) {
        throw new InvalidArgumentError(
          `index.count() takes no arguments (it counts every taken offset; countFree(loHi, loLo, hiHi, hiLo) counts a band's free ones), got (${a.map((x) => quoteInput(x)).join(', ')})`,
        );
      }
      return live().count();
    },
    countFree: (...a: Parameters<StrategyIndex['countFree']>) =>
      live().countFree(...offsetWords(a, 4, 'countFree(loHi, loLo, hiHi, hiLo)')),
    selectFree: (...a: Parameters<StrategyIndex['selectFree']>) =>
      live().selectFree(...offsetWords(a, 6, 'selectFree(kHi, kLo, loHi, loLo, hiHi, hiLo)')),
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

/**
 * The arguments of a read-only view's method, checked: as many as `signature` names, each a u32
 * word. The core reads whatever it is given as a u32 (NaN and "x" as 0, -1 as 2^32 − 1, a
 * missing band as [0, 0]), so a strategy of your own that left words out or passed others got
 * answers about other offsets — nextFree(0, 0) answered false, and the range ErrFull with
 * addresses free — instead of an error. The built-in strategies read the index directly.
 * Trailing `undefined`s are what a JavaScript call leaves out (`f(...args)` over a longer
 * array, an optional parameter forwarded): ignored. A trailing value is refused: `has(0, 0, 0,
 * 5)` is an address's four words, not an offset's two, and would answer about offset 0.
 */
function offsetWords<A extends number[]>(args: A, wanted: number, signature: string): A {
  let ok = args.length >= wanted;
  for (let i = 0; ok && i < wanted; i++) ok = isWord(args[i]);
  for (let i = wanted; ok && i < args.length; i++) ok = args[i] === undefined;
  if (ok) return args.length === wanted ? args : (args.slice(0, wanted) as A);
  throw new InvalidArgumentError(
    `index.${signature} takes ${wanted} integers in [0, 2^32) (an offset is hi · 2^32 + lo), got (${args.map((a) => quoteInput(a)).join(', ')})`,
  );
}

/** Each read-only view's FreeIndex: how a coolDown inside a strategy of your own reaches it. */
const BEHIND_READ_ONLY = new WeakMap<StrategyIndex, FreeIndex>();

/**
 * The whole index behind a view, for coolDown's `clear` of what it held: the range's FreeIndex
 * itself (the strategies of this module get it), or the one behind a read-only view (a coolDown
 * that a strategy of your own delegates to). InvalidArgumentError for an index the range did not
 * give.
 * @internal for coolDown
 */
export function wholeIndex(view: StrategyView): FreeIndex {
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
 * - `sequential`: the first free address after the one it chose last in the same band (one
 *   cursor per band), wrapping;
 * - `lowest-free`: the lowest free address;
 * - `random-free`: uniform over the free addresses.
 */
// Typed out (JSR asks every exported value for an explicit type); the compiler holds the object to it.
export const STRATEGIES: Readonly<{
  upstream: AllocationStrategy;
  'legacy-bitmap': AllocationStrategy;
  sequential: AllocationStrategy;
  'lowest-free': AllocationStrategy;
  'random-free': AllocationStrategy;
}> = Object.freeze({
  upstream: builtin('upstream', (v) => new ScanChooser(v, false)),
  'legacy-bitmap': builtin('legacy-bitmap', (v) => new ScanChooser(v, true)),
  sequential: builtin('sequential', (v) => new SequentialChooser(v)),
  'lowest-free': builtin('lowest-free', (v) => new LowestFreeChooser(v)),
  'random-free': builtin('random-free', (v) => new RandomFreeChooser(v)),
});

/** The built-in strategies' names, in STRATEGIES's order: the one list, so a new one is added there alone. */
export const STRATEGY_NAMES: readonly StrategyName[] = Object.freeze(Object.keys(STRATEGIES) as StrategyName[]);

/**
 * The `strategy` option as a strategy object: a built-in's name, or an object with a `name`
 * string and a `forRange` function. InvalidArgumentError for anything else, naming the value as
 * `what` (the option, or coolDown's argument): one wording for a wrong name and a wrong object,
 * for Range, Allocator, MetaAllocator and coolDown alike, with a "did you mean" for a misspelled
 * name.
 */
export function strategyOption(option: unknown, what = 'options.strategy'): AllocationStrategy {
  if (option === undefined) return STRATEGIES.upstream;
  let got: string;
  if (typeof option === 'string') {
    if ((STRATEGY_NAMES as readonly string[]).includes(option)) return STRATEGIES[option as StrategyName];
    got = quoteInput(option);
  } else if (typeof option === 'object' && option !== null) {
    const name = readMember(option, 'name', what);
    const forRange = typeof name === 'string' ? readMember(option, 'forRange', what) : undefined;
    if (typeof forRange === 'function') return option as AllocationStrategy;
    // An object meant as a strategy: which member is wrong. One of a class, with no name at all
    // (a Promise of a strategy, an array, a Map), is said by what it is, as any other value is:
    // "a Promise (a missing await?)" names the mistake, its missing name does not.
    const kind = quoteInput(option);
    const plain = kind === 'a value of type object'; // quoteInput's word for a plain object
    if (name === undefined && !plain) got = kind;
    else if (typeof name !== 'string') got = `${plain ? 'an object' : kind} whose name is ${quoteInput(name)}, not a string`;
    else got = `${plain ? 'an object' : kind} whose forRange is ${quoteInput(forRange)}, not a function`;
  } else got = quoteInput(option);
  throw new InvalidArgumentError(
    `${what} must be one of ${STRATEGY_NAMES.join(', ')} or a strategy object { name, forRange(view) }, got ${got}` +
      didYouMean(option, STRATEGY_NAMES),
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
    // a Promise (an async forRange) is said as choose's is: the range needs its chooser now
    const got: unknown = chooser;
    let shown = quoteInput(got);
    if (typeof got === 'object' && got !== null) {
      try {
        const { then, choose } = got as { then?: unknown; choose?: unknown };
        shown =
          typeof then === 'function' ? 'a Promise: forRange must answer synchronously' : `an object whose choose is ${quoteInput(choose)}`;
      } catch {
        // a getter that throws: the refusal keeps the plainer wording rather than throw the chooser's error
      }
    }
    throw new InvalidArgumentError(
      `strategy ${quoteInput(strategy.name)}: forRange must return an object with a choose(out) method, got ${shown}`,
    );
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

/** The refusals of refuseInside, told apart from an InvalidArgumentError of anyone else's. */
const INSIDE_REFUSALS = new WeakSet<object>();

/**
 * Whether `e` is ChooserCalls.refuseInside's refusal: a call from inside a strategy, its random
 * source or a cool-down's clock, which changed nothing. An InvalidArgumentError thrown for any
 * other reason (a metrics registry of yours refusing, during a destroy) is not.
 * @internal used by MetaAllocator
 */
export function isInsideRefusal(e: unknown): boolean {
  return typeof e === 'object' && e !== null && INSIDE_REFUSALS.has(e);
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
  private holding = false;

  /** `refusal`: the message of the InvalidArgumentError for a call from inside. */
  constructor(private readonly refusal: () => string) {}

  /** InvalidArgumentError while a call into the chooser runs (isInsideRefusal tells it apart). */
  refuseInside(): void {
    if (this.active) {
      const refusal = new InvalidArgumentError(this.refusal());
      INSIDE_REFUSALS.add(refusal);
      throw refusal;
    }
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
    const wasHolding = this.holding;
    this.active = true;
    this.holding = true;
    try {
      cooling.hold(hi, lo);
    } finally {
      this.active = was;
      this.holding = wasHolding;
    }
  }

  /**
   * cooling.expire(): what is due returns to the free pool before the owner counts what is held
   * (a MetaAllocator weighing its ranges). Inside, as its clock (options.now) may not change the
   * range here either: a range it destroyed or changed would be counted as it was.
   */
  expire(cooling: CoolingQueue): void {
    const was = this.active;
    this.active = true;
    try {
      cooling.expire();
    } finally {
      this.active = was;
    }
  }

  /**
   * True while hold() runs: the owner is in the middle of a release (for an Allocator, of the
   * store event that tells it), which its checks must not take for a disagreement.
   */
  get isHolding(): boolean {
    return this.holding;
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

/** Whether a chooser's answer is an offset at all: hi and lo words (isWord). */
export function isOffset(o: Offset): boolean {
  return isWord(o.hi) && isWord(o.lo);
}

/** Whether `x` is a word of an offset: an integer in [0, 2^32). */
function isWord(x: unknown): boolean {
  return typeof x === 'number' && x >>> 0 === x;
}

/**
 * chooser.choose(out), whose answer must be a boolean: anything else is a chooser's mistake that
 * would otherwise read as an answer — a Promise (an async choose) as true with `out` not yet
 * written, a missing `return` as "nothing free". InvalidArgumentError.
 * @internal for coolDown
 */
export function chooseChecked(chooser: OffsetChooser, out: Offset): boolean {
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
