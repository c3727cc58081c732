// The boundary between a range and a strategy (adapters/strategy.ts): the view the range gives it
// — the whole index to this package's own strategies (own), a checked read-only one to a
// strategy of yours — and the checks on what the strategy gives back: its chooser (chooserFor),
// each answer (chooseChecked, isOffset, notFreeError), and what "nothing free" means from a
// chooser that sees part of the range only (fullError).
import { ErrDestroyed, ErrFull, InvalidArgumentError } from './errors.ts';
import type { FreeIndex } from './free-index.ts';
import type { Cooling } from './cooling.ts';
import { quoteInput } from './quote.ts';
import type { AllocationStrategy, Offset, OffsetChooser, StrategyIndex, StrategyView } from './strategy.ts';

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
  return new ErrFull(partSeen(chooser));
}

/**
 * Why `chooser` (null: upstream's scan) sees part of its range only, or undefined when it sees it
 * all: what the ErrFull of its "nothing free" says after `range is full`.
 * @internal used by the Allocator for its MetaAllocator
 */
export function partSeen(chooser: OffsetChooser | null): string | undefined {
  return chooser === null ? undefined : SEES_PART.get(chooser);
}

/** `chooser` sees part of its range only, for the reason `why` (fullError's message). @internal for the built-ins */
export function seesOnlyPart(chooser: OffsetChooser, why: string): void {
  SEES_PART.set(chooser, why);
}

/** This package's strategies (the built-ins, coolDown's, a MetaAllocator's guard): they see the whole index. */
const OWN_STRATEGIES = new WeakSet<AllocationStrategy>();

/** Marks `strategy` as one of this package's: it sees the whole index. @internal for coolDown */
export function own(strategy: AllocationStrategy): AllocationStrategy {
  OWN_STRATEGIES.add(strategy);
  return strategy;
}

/** Whether `strategy` is one of this package's (frozen, read as often as needed). @internal for strategyOption */
export function isOwn(strategy: object): boolean {
  return OWN_STRATEGIES.has(strategy as AllocationStrategy);
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
 * itself (this package's strategies get it), or the one behind a read-only view (a coolDown
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
 * The per-range chooser of `strategy` over `view` (AllocationStrategy.forRange), checked: a
 * factory that returns something without a choose(out) method fails here with
 * InvalidArgumentError, not at the first allocation. A chooser of a strategy of yours comes back
 * as a frozen chooser of its choose, taken and cooling, each read once here and the methods
 * called on it, so that what was checked is what the range calls (a getter or a Proxy could
 * answer otherwise later); this package's own come back as they are.
 * @internal
 */
export function chooserFor(strategy: AllocationStrategy, view: StrategyView): OffsetChooser {
  const own = OWN_STRATEGIES.has(strategy);
  const chooser = strategy.forRange(own ? view : Object.freeze({ ...view, index: readOnly(wholeIndex(view)) }));
  const choose: unknown = typeof chooser === 'object' && chooser !== null ? chooser.choose : undefined;
  if (typeof choose !== 'function') {
    // a Promise (an async forRange) is said as choose's is: the range needs its chooser now
    const got: unknown = chooser;
    let shown = quoteInput(got);
    if (typeof got === 'object' && got !== null) {
      try {
        const { then } = got as { then?: unknown };
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
  const taken: unknown = chooser.taken;
  if (taken !== undefined && typeof taken !== 'function') {
    throw new InvalidArgumentError(
      `strategy ${quoteInput(strategy.name)}: the chooser's taken, when present, must be a function, got ${quoteInput(taken)}`,
    );
  }
  if (own) return chooser;
  const cooling = chooser.cooling;
  const read: { choose(out: Offset): boolean; taken?(hi: number, lo: number): void; cooling?: Cooling } = {
    choose: (out) => choose.call(chooser, out) as boolean,
  };
  if (taken !== undefined) read.taken = (hi, lo) => void (taken as (hi: number, lo: number) => void).call(chooser, hi, lo);
  if (cooling !== undefined) read.cooling = cooling;
  seesPartAs(read, chooser);
  return Object.freeze(read);
}

/** Whether a chooser's answer is an offset at all: hi and lo words (isWord). @internal */
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

/** The error of a chooser that named an offset that is not free, or no offset at all (a bug in that strategy). @internal */
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
