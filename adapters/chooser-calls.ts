// ChooserCalls: the calls of a range (or an allocator) into its strategy, made so that nothing
// called from inside them changes the range.
import type { CoolingQueue } from './cooling.ts';
import { InvalidArgumentError } from './errors.ts';
import type { FreeIndex } from './free-index.ts';
import { guardedSource, type RandomSource } from './random.ts';
import type { AllocationStrategy, Offset, OffsetChooser, StrategyView } from './strategy.ts';
import { chooseChecked, chooserFor } from './strategy-view.ts';

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

  /** `source.nextU32()` inside the guard (DrawGuard). */
  draw(source: RandomSource): number {
    const was = this.active;
    this.active = true;
    try {
      return source.nextU32();
    } finally {
      this.active = was;
    }
  }

  // Each call restores what `active` was before it rather than clearing it, so the guard
  // survives a call made inside another: draw() runs inside choose() whenever a chooser draws
  // from view.random, and must leave `active` set for the rest of the choice.

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
