// The package root (`import … from 'ipallocator'`): the public API. Everything else under
// adapters/ is internal. Kubernetes-backed storage lives behind its own entry point
// ('ipallocator/kubernetes') so that the core never loads @kubernetes/client-node.
//
//   const a = Allocator.create('10.96.0.0/12', { store });   // the product (WASM index)
//   const r = new ReferenceAllocator('10.96.0.0/12', { store }); // the same contract, upstream's scan

// ── allocators ─────────────────────────────────────────────────────────────────────────────
export { Allocator, type IndexedAllocatorOptions } from './allocator.ts';
export { ReferenceAllocator } from './reference-allocator.ts';
export { DryRunAllocator } from './dry-run.ts';
export type { AllocatorOptions } from './types.ts';
export { MetaAllocator, RANGE_POLICIES, isNotContained } from './meta-allocator.ts';
export type { MetaAllocatorOptions, RangePolicy, RangeInfo, SkippedCIDR } from './meta-allocator.ts';
export { DualStackAllocator, type DualStackIPs, type DualStackOptions } from './dual-stack.ts';
export { Range, type RangeOptions, type RangeSnapshot, type RangeView } from './range.ts';
export type { IPAllocator, IPFamily, ParentRef } from './types.ts';
export type { IndexKind } from './free-index.ts';

// ── ServiceCIDRs ───────────────────────────────────────────────────────────────────────────
export { InMemoryServiceCIDRs, serviceCIDRAllocatable, validateServiceCIDRSpec } from './service-cidrs.ts';
export type { ServiceCIDR, ServiceCIDRSource, ServiceCIDRWatcher, AddServiceCIDROptions } from './service-cidrs.ts';

// ── stores ─────────────────────────────────────────────────────────────────────────────────
export { MemoryStore, type MemoryStoreOptions } from './memory-store.ts';
export { CONTROLLER_NAME, LABEL_IP_FAMILY, LABEL_MANAGED_BY, allocatorLabels } from './store.ts';
export type { IPAddressRecord, Store, StoreCache, StoreWatcher } from './store.ts';
export { RECONCILE_GRACE_MS, ownerKey, reconcile, type ReconcileOptions, type ReconcileResult } from './reconcile.ts';

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
  InvalidAddressError,
  InvalidArgumentError,
  InvalidCIDRError,
  InvalidRangeError,
  InvalidRecordError,
  NotFoundError,
  OutOfMemoryError,
} from './errors.ts';

// ── WebAssembly memory ─────────────────────────────────────────────────────────────────────
export { memoryLimit, setMemoryLimit } from './wasm.ts';

// ── randomness ─────────────────────────────────────────────────────────────────────────────
export { Xoshiro128, defaultRandom, drawBelow, drawU64, seededRandom, uniformBelow } from './random.ts';
export type { RandomSource, U64Out } from './random.ts';

// ── metrics ────────────────────────────────────────────────────────────────────────────────
export {
  DEF_BUCKETS,
  METRIC_ALLOCATED_IPS,
  METRIC_ALLOCATIONS,
  METRIC_AVAILABLE_IPS,
  METRIC_DURATION,
  METRIC_ERRORS,
  enableMetrics,
  registerMetrics,
} from './metrics.ts';
export type { AllocatorMetrics } from './metrics.ts';

// ── addresses and prefixes ─────────────────────────────────────────────────────────────────
export { canonicalAddr, formatAddr, formatIPv4, formatIPv6, formatPrefix, parseAddr, parseAddrInto, parsePrefix } from './address.ts';
export type { Family } from './address.ts';
export { Prefix, addOffsetAddress, broadcastAddress, calculateRangeOffset, hostsPerNetwork, ipIterator } from './geometry.ts';
