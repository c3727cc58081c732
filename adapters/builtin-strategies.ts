// The built-in strategies, by name (STRATEGIES), and the `strategy` option that names one of them
// or gives a strategy object (strategyOption). They keep the contract of adapters/strategy.ts.
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
// Adding one: adapters/DESIGN.md, "Adding a built-in strategy".
import { InvalidArgumentError } from './errors.ts';
import { didYouMean, readMember } from './input.ts';
import { quoteInput } from './quote.ts';
import { drawBelow, drawScanStart, TWO32, U32_MAX, type U64Out, type UpstreamDraw } from './random.ts';
import type { AllocationStrategy, Offset, OffsetChooser, StrategyIndex, StrategyView } from './strategy.ts';
import { isOwn, own, seesOnlyPart } from './strategy-view.ts';

/** The names of the built-in strategies: STRATEGIES's keys. */
export type StrategyName = keyof typeof STRATEGIES;

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
      seesOnlyPart(
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

function builtin(name: StrategyName, make: (view: StrategyView) => OffsetChooser): AllocationStrategy {
  return own(Object.freeze({ name, forRange: make }));
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
// Typed out (JSR asks every exported value for an explicit type). The compiler holds the object to
// it both ways (freeze's type argument: a key the type lacks is refused too), and each built-in's
// name to a StrategyName (builtin) — not to its own key: test/strategies.test.ts checks that.
export const STRATEGIES: Readonly<{
  upstream: AllocationStrategy;
  'legacy-bitmap': AllocationStrategy;
  sequential: AllocationStrategy;
  'lowest-free': AllocationStrategy;
  'random-free': AllocationStrategy;
}> = Object.freeze<typeof STRATEGIES>({
  upstream: builtin('upstream', (v) => new ScanChooser(v, false)),
  'legacy-bitmap': builtin('legacy-bitmap', (v) => new ScanChooser(v, true)),
  sequential: builtin('sequential', (v) => new SequentialChooser(v)),
  'lowest-free': builtin('lowest-free', (v) => new LowestFreeChooser(v)),
  'random-free': builtin('random-free', (v) => new RandomFreeChooser(v)),
});

/** The built-in strategies' names, in STRATEGIES's order (a new one is added to STRATEGIES and its type). */
export const STRATEGY_NAMES: readonly StrategyName[] = Object.freeze(Object.keys(STRATEGIES) as StrategyName[]);

/**
 * The `strategy` option as a strategy object: a built-in's name, or an object with a `name`
 * string and a `forRange` function. InvalidArgumentError for anything else, naming the value as
 * `what` (the option, or coolDown's argument): one wording for a wrong name and a wrong object,
 * for Range, Allocator, MetaAllocator and coolDown alike, with a "did you mean" for a misspelled
 * name. A strategy of your own comes back as a frozen strategy of the name and forRange read once
 * here; this package's own come back as they are.
 * @internal
 */
export function strategyOption(option: unknown, what = 'options.strategy'): AllocationStrategy {
  if (option === undefined) return STRATEGIES.upstream;
  let got: string;
  if (typeof option === 'string') {
    if ((STRATEGY_NAMES as readonly string[]).includes(option)) return STRATEGIES[option as StrategyName];
    got = quoteInput(option);
  } else if (typeof option === 'object' && option !== null) {
    if (isOwn(option)) return option as AllocationStrategy;
    const name = readMember(option, 'name', what);
    const forRange = typeof name === 'string' ? readMember(option, 'forRange', what) : undefined;
    // What was checked is what is used: the name and forRange read here, not read again by each
    // chooser made (a restore makes one) nor by the errors naming the strategy, where a getter or
    // a Proxy could answer otherwise, or throw. forRange is called on the object, as a method.
    if (typeof forRange === 'function') {
      return Object.freeze({ name: name as string, forRange: (view: StrategyView) => forRange.call(option, view) as OffsetChooser });
    }
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
