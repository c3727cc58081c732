// The package root (`import … from 'ipallocator'`): what applications call. Three more entry
// points keep optional dependencies and low-level pieces out of it:
//   ipallocator/kubernetes  KubernetesStore and ServiceCIDRs (loads @kubernetes/client-node)
//   ipallocator/metrics     the metrics API, prom-client imported statically (prometheus.ts)
//   ipallocator/core        address text, upstream's range helpers, random sources (core.ts)
// Everything else under adapters/ is internal.
//
//   const a = Allocator.create('10.96.0.0/12', { store });   // the product (WASM index)
//   const r = new ReferenceAllocator('10.96.0.0/12', { store }); // the same contract, upstream's scan

// ── allocators ─────────────────────────────────────────────────────────────────────────────
export { Allocator, type IndexedAllocatorOptions } from './allocator.ts';
export { ReferenceAllocator } from './reference-allocator.ts';
export type { DryRunAllocator } from './dry-run.ts';
export type { AllocatorOptions } from './types.ts';
export { MetaAllocator, RANGE_POLICIES } from './meta-allocator.ts';
export type { MetaAllocatorOptions, RangePolicy, RangeInfo, SkippedCIDR } from './meta-allocator.ts';
export { DualStackAllocator, type DualStackIPs, type DualStackOptions, StillAllocatedError } from './dual-stack.ts';
export { MAX_ALLOCATE_MANY, Range, type RangeOptions, type RangeSnapshot, type RangeView } from './range.ts';
export { STRATEGIES, STRATEGY_NAMES } from './builtin-strategies.ts';
export type { AllocationStrategy, Offset, OffsetChooser, StrategyIndex, StrategyView } from './strategy.ts';
export type { StrategyName, StrategyOption } from './builtin-strategies.ts';
export { coolDown } from './cool-down.ts';
export type { CoolDownOptions } from './cool-down.ts';
export type { Cooling } from './cooling.ts';
export type { IPAllocator, IPFamily, MetricsRegistry } from './types.ts';
export type { IndexKind } from './free-index.ts';

// ── ServiceCIDRs ───────────────────────────────────────────────────────────────────────────
export { InMemoryServiceCIDRs, serviceCIDRAllocatable, validateServiceCIDRSpec } from './service-cidrs.ts';
export type {
  AddServiceCIDROptions,
  InMemoryServiceCIDRsOptions,
  ServiceCIDR,
  ServiceCIDRSource,
  ServiceCIDRWatcher,
  ServiceCIDRWatcherErrorHandler,
} from './service-cidrs.ts';

// ── stores ─────────────────────────────────────────────────────────────────────────────────
export { MemoryStore, type MemoryStoreOptions, type WatcherErrorHandler } from './memory-store.ts';
export { CONTROLLER_NAME, LABEL_IP_FAMILY, LABEL_MANAGED_BY, allocatorLabels } from './store.ts';
export type {
  DeleteErrorHandler,
  IPAddressRecord,
  NewIPAddressRecord,
  ParentRef,
  Store,
  StoreCache,
  StoreWatcher,
  SyncStoreOps,
} from './store.ts';
export { validateRecord } from './records.ts';
export { RECONCILE_GRACE_MS, ownerKey, reconcile, type ReconcileOptions, type ReconcileResult, type ReconcileTarget } from './reconcile.ts';

// ── errors ─────────────────────────────────────────────────────────────────────────────────
export {
  AlreadyExistsError,
  ErrAllocated,
  ErrDestroyed,
  ErrFull,
  ErrMismatchedNetwork,
  ErrNotInRange,
  ErrNotReady,
  IPAllocatorError,
  type IPAllocatorErrorCode,
  InvalidAddressError,
  InvalidArgumentError,
  InvalidCIDRError,
  InvalidRangeError,
  InvalidRecordError,
  NotFoundError,
  OutOfMemoryError,
  type MemoryShortage,
  type OutOfMemoryDetails,
} from './errors.ts';

// ── WebAssembly memory ─────────────────────────────────────────────────────────────────────
export { memoryLimit, setMemoryLimit } from './wasm.ts';

// ── randomness (the `random` option) ───────────────────────────────────────────────────────
export { seededRandom, type RandomSource, type UpstreamDraw } from './random.ts';
