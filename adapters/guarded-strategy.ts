// A MetaAllocator's guard around a strategy: every call into it made through the MetaAllocator's
// own guard, so that a strategy that calls back into the MetaAllocator is refused there.
import { STRATEGIES } from './builtin-strategies.ts';
import { type Cooling, guardClock } from './cooling.ts';
import type { AllocationStrategy, Offset, StrategyView } from './strategy.ts';
import { chooserFor, own, seesPartAs } from './strategy-view.ts';

/**
 * `strategy` with each call into it — forRange, and its chooser's choose and taken — run through
 * `guard` (which makes the call and returns its answer, or throws): how a MetaAllocator sees a
 * strategy that calls back into it. The chooser answers as the strategy's own, over the view it
 * would have had (a strategy of your own still sees the index read-only), with its `cooling`,
 * whose clock is read through `clockGuard` when given (guardClock): the range reads it outside
 * the chooser's calls, and outside a choice too (as a release starts a hold).
 * The default (upstream's scan, no chooser) is returned as it is.
 * @internal used by MetaAllocator
 */
export function guardedStrategy(
  strategy: AllocationStrategy,
  guard: <T>(call: () => T) => T,
  clockGuard?: (read: () => number) => number,
): AllocationStrategy {
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
        const cooling = inner.cooling;
        if (cooling !== undefined) {
          if (clockGuard !== undefined) guardClock(cooling, clockGuard);
          chooser.cooling = cooling;
        }
        seesPartAs(chooser, inner);
        return chooser;
      },
    }),
  );
}
