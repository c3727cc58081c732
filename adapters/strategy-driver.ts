// StrategyDriver: how an owner of an index — Range, or an Allocator's TakenAddresses — drives a
// strategy other than upstream's scan (adapters/strategy.ts). The view a strategy is given and
// the sequence around each of its answers are written here once, so both owners keep the same
// errors and guarantees (adapters/DESIGN.md, "Range and strategies" 3–5):
//
//   ChooserCalls.choose ──▸ a free offset? ──▸ mark it (space.takeAt) ──▸ taken hook
//   (due holds expire;       not an offset, taken or        │               │ throws: unmark,
//    nothing free but held:  past the range:                │               │ then the hook's
//    the oldest come back)   InvalidArgumentError,          │               │ error goes on
//                            nothing changed                └─ its address in space.address
//
// What differs stays with the owner: when it asks (Range after its count, the Allocator after
// fresh()), what an unmark that runs out of WASM memory means to it (`keptMark`), and the tick of
// a count-based cool-down's clock, once per address handed out: a take is only a candidate (an
// Allocator's create may still collide), so Range ticks per take and the Allocator per create
// that succeeded.
import { OutOfMemoryError } from './errors.ts';
import type { FreeIndex } from './free-index.ts';
import type { Prefix } from './geometry.ts';
import { type RandomSource, TWO32, type UpstreamDraw } from './random.ts';
import type { AddressSpace } from './space.ts';
import type { AllocationStrategy, Offset, OffsetChooser } from './strategy.ts';
import type { ChooserCalls } from './chooser-calls.ts';
import { isOffset, notFreeError } from './strategy-view.ts';
import { coolingQueueOf, type CoolingQueue } from './cooling.ts';

/** A chooser made over an index and the queue its cool-down holds releases in (null: none). @internal */
export interface ChooserOver {
  readonly chooser: OffsetChooser;
  readonly cooling: CoolingQueue | null;
}

/**
 * One owner's strategy: the choosers it makes over the owner's index, and the take of each of
 * their answers. The owner keeps the chooser in use and its cool-down's queue (it reads the
 * queue on its own paths: release, has, snapshots) and passes them to take().
 * @internal
 */
export class StrategyDriver {
  /** The chooser's last answer (hi, lo). */
  private readonly chosen: Offset = { hi: 0, lo: 0 };
  /** Usable addresses as a number (the full-range test of ChooserCalls.choose). */
  private readonly size: number;

  /**
   * `calls` is the owner's guard (its refuseInside covers every call made here); `draw` is the
   * upstream draw 'upstream' reproduces (see StrategyView.draw); `keptMark(hi, lo, why, oom)` runs
   * when the taken hook threw `why` and its mark on (hi, lo) could not be cleared for lack of WASM
   * memory (`oom`): the owner records that the offset stays marked, and may throw an error of its own
   * (else the hook's error goes on).
   */
  constructor(
    readonly strategy: AllocationStrategy,
    private readonly calls: ChooserCalls,
    private readonly prefix: Prefix,
    private readonly random: RandomSource,
    private readonly draw: UpstreamDraw,
    private readonly keptMark: (hi: number, lo: number, why: unknown, oom: OutOfMemoryError) => void,
  ) {
    this.size = prefix.sizeHi * TWO32 + prefix.sizeLo;
  }

  /**
   * The strategy's chooser over `index`, with its cool-down's queue, made without changing
   * anything (the owner switches to it once all else succeeded). An empty range (an IPv4 /31 or
   * /32, an IPv6 /128) passes an index of one slot: the view says size 0, and its chooser is
   * never asked to choose, but a strategy is accepted or refused as on any range. Throws what
   * forRange throws, InvalidArgumentError for a chooser or cooling that is not one.
   */
  over(index: FreeIndex): ChooserOver {
    const p = this.prefix;
    const chooser = this.calls.chooserFor(this.strategy, {
      index,
      sizeHi: p.sizeHi,
      sizeLo: p.sizeLo,
      rangeOffset: p.rangeOffset,
      family: p.family,
      random: this.random,
      draw: this.draw,
    });
    return { chooser, cooling: coolingQueueOf(chooser.cooling, index) };
  }

  /**
   * The next offset of `chooser` (made by over() over space.index, with `cooling`), marked in
   * `space`, its address in space.address: false when the chooser has none (nothing it may
   * choose is free). InvalidArgumentError, nothing changed, when it names an offset that is not
   * free; when its taken hook throws, the mark is undone first. Throws OutOfMemoryError
   * (nothing taken).
   */
  take(space: AddressSpace, chooser: OffsetChooser, cooling: CoolingQueue | null): boolean {
    const o = this.chosen;
    const calls = this.calls;
    if (!calls.choose(chooser, o, cooling, space.index, this.size)) return false;
    // (takeAt is false for an offset taken or past the range)
    if (!isOffset(o) || !space.takeAt(o.hi, o.lo)) throw notFreeError(this.strategy, o, this.prefix.cidr);
    const hi = o.hi;
    const lo = o.lo;
    try {
      calls.taken(chooser, hi, lo);
    } catch (e) {
      this.unmark(space, hi, lo, e); // its hook failed: nothing taken
      throw e;
    }
    cooling?.took(hi, lo); // another running call may have returned it: this call holds it again if it fails
    return true;
  }

  /** Clears the mark take() set on (hi, lo) because the taken hook threw `why`. */
  private unmark(space: AddressSpace, hi: number, lo: number, why: unknown): void {
    try {
      space.index.clear(hi, lo);
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
      this.keptMark(hi, lo, why, e);
    }
  }
}
