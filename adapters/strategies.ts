// Allocation strategies: how allocateNext chooses among the free offsets of a range.
//
// This module is their one import (the package root's, and every owner's); each part has a
// module of its own, and imports only those listed below it:
//   builtin-strategies.ts  the built-ins (STRATEGIES) and the `strategy` option (strategyOption)
//   guarded-strategy.ts    a MetaAllocator's guard around a strategy
//   chooser-calls.ts       an owner's calls into its strategy (ChooserCalls)
//   strategy-view.ts       the view a strategy is given, and the checks on what it gives back
//   strategy.ts            the contract: StrategyView, OffsetChooser, AllocationStrategy
// coolDown (adapters/cool-down.ts) wraps any strategy, its held offsets queued in cooling.ts.
// Adding a built-in: adapters/DESIGN.md, "Adding a built-in strategy".
export type { AllocationStrategy, Offset, OffsetChooser, StrategyIndex, StrategyView } from './strategy.ts';
export { STRATEGIES, STRATEGY_NAMES, type StrategyName, type StrategyOption, strategyOption } from './builtin-strategies.ts';
/** @internal used by MetaAllocator */
export { guardedStrategy } from './guarded-strategy.ts';
/** @internal used by Range, the Allocator and MetaAllocator */
export { ChooserCalls, isInsideRefusal } from './chooser-calls.ts';
/** @internal used by Range and the Allocator */
export { fullError } from './strategy-view.ts';
export { isOffset, notFreeError } from './strategy-view.ts';
