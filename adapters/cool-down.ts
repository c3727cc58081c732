// Cool-down: coolDown(strategy, { ms } | { allocations }) holds released addresses back from a
// strategy's choice until a time or a number of allocations has passed (adapters/builtin-strategies.ts
// has the built-ins it wraps). The range that owns the index runs the queue of held offsets
// (CoolingQueue, adapters/cooling.ts): it holds its releases there, returns what is due before
// each choice, and holds again what a failed allocation returned.
import { strategyOption, type StrategyOption } from './builtin-strategies.ts';
import { Cooling, CoolingQueue } from './cooling.ts';
import { InvalidArgumentError } from './errors.ts';
import { optionsObject } from './input.ts';
import { quoteInput } from './quote.ts';
import type { AllocationStrategy, Offset, OffsetChooser, StrategyView } from './strategy.ts';
import { chooseChecked, chooserFor, own, seesPartAs, wholeIndex } from './strategy-view.ts';

/** Milliseconds on a clock that never steps back (the default clock of a time-based cool-down). */
const monotonicMs = (): number => performance.now();

/**
 * How long a released address stays out of use: `{ ms, now? }`, a time, or `{ allocations }`, a
 * number of allocations — exactly one of the two: the type refuses `{}` and `{ ms, allocations }`,
 * as coolDown does at run time.
 */
export type CoolDownOptions =
  | {
      /** Milliseconds from the release (on the `now` clock). */
      ms: number;
      /**
       * The clock for `ms`, in milliseconds (default performance.now, which never steps back; a
       * simulation passes its own), called as a plain function (`this` undefined: bind a method
       * first). Where a clock steps back (Date.now when the system time is
       * corrected), the cool-down's time goes on from where it was, so each address is still held
       * for its `ms`; a clock that jumps forward, or swings back and forth, gives holds back early.
       */
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
 * costs about 50 bytes of JS heap each, on a /64 too. 1,000 releases a minute with ms = 60,000
 * hold about 1,000 addresses: under 80 kB, on a range that never allocates too (a release gives
 * back what is due first). With `allocations`, a range that never allocates holds every address
 * released until it does: its clock is its own allocateNext calls.
 */
export function coolDown(strategy: StrategyOption, options: CoolDownOptions): AllocationStrategy {
  // The oldest quarter rather than the oldest alone, measured: 3× the failed creates at 90 % fill
  // with the oldest alone. The queue is a FIFO of (offset, until) plus a table from offset to its
  // FIFO entry (OffsetMap): measured 45–56 bytes of JS heap per held address at 10^3–10^5 held,
  // 49–75 on a /64 (with a Map keyed by number or string: 61–80, and 115–138 on a /64).
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
    throw new InvalidArgumentError(
      `coolDown options.allocations must be a whole number from 0 to 2^53 − 1 (Number.MAX_SAFE_INTEGER), got ${quoteInput(allocations)}`,
    );
  }
  if (now !== undefined && typeof now !== 'function') {
    throw new InvalidArgumentError(`coolDown options.now must be a function returning milliseconds, got ${quoteInput(now)}`);
  }
  const byTime = ms !== undefined;
  const wait = byTime ? ms : allocations!;
  const clock = now ?? monotonicMs;
  const label = byTime ? `${ms} ms` : `${allocations} allocation${allocations === 1 ? '' : 's'}`;
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
