// Public types shared by every allocator.
import type { RandomSource } from './random.ts';
import type { DeleteErrorHandler, ParentRef, Store } from './store.ts';

export type IPFamily = 'IPv4' | 'IPv6';

/**
 * The allocator contract, mirroring upstream `ipallocator.Interface` (+ Used/Free).
 * Addresses are strings at this edge; inside they are integers.
 */
export interface IPAllocator {
  /** Canonical (masked) prefix, e.g. "10.96.0.0/12". */
  readonly cidr: string;
  readonly ipFamily: IPFamily;
  /** Usable addresses (upstream hostsPerNetwork): IPv4 2^h−2, IPv6 2^h−1, saturating at 2^64−1. */
  readonly size: bigint;
  /**
   * Reserves `ip` for `owner`, the record's parentRef: null or left out, the record has none
   * (upstream's nil ParentRef). ErrNotInRange, ErrAllocated, ErrNotReady, InvalidAddressError;
   * store errors pass through.
   */
  allocate(this: object, ip: string, owner?: ParentRef | null): Promise<void>;
  /**
   * Reserves a free address (dynamic band first, then the static band) for `owner` (as
   * allocate's) and returns it. ErrFull, ErrNotReady.
   */
  allocateNext(this: object, owner?: ParentRef | null): Promise<string>;
  /**
   * Releases `ip`: deletes the record named by it, as upstream's Release does, and ignores every
   * error of the delete (upstream too). A free address is a no-op; an address of this family
   * outside the range is not refused: its record, if one exists (another range's allocation on
   * the same store), is deleted too. An address of the other family never reaches the store.
   * Malformed text rejects with InvalidAddressError. A MetaAllocator routes `ip` to a range that
   * holds it and rejects an address none holds with ErrMismatchedNetwork; a dry run deletes nothing.
   * `onDeleteError`, when given, is called with the delete's error, which upstream logs
   * (NotFoundError for an address without a record; what it throws, or the promise it returns
   * rejects with, rejects the release);
   * anything but a function is InvalidArgumentError.
   */
  release(this: object, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void>;
  /** Whether an IPAddress with this name exists (asks the store, not the cache). */
  has(this: object, ip: string): Promise<boolean>;
  /**
   * Calls `fn` with the address of each record carrying this family's allocator labels in the
   * cache, as canonical text (not filtered by CIDR, as upstream's ForEach; a name that is no
   * address is skipped).
   */
  forEach(this: object, fn: (ip: string) => void): void;
  /**
   * Allocated addresses of this family inside the prefix (MetaAllocator: every record of the
   * family carrying the allocator's labels, in any of its ranges or none, as upstream's
   * MetaAllocator counts them). Throws ErrDestroyed once destroyed, as
   * every method but destroy() does; DualStackAllocator tells a destroyed allocator by it, so one
   * of your own should too.
   */
  used(this: object): number;
  /** size − used, never negative. */
  free(this: object): bigint;
  /**
   * A view that checks but persists nothing (upstream DryRun). As upstream's, its enableMetrics
   * and destroy do nothing (it records no metric and owns nothing), and it answers as long as
   * the allocator it views does.
   */
  dryRun(this: object): IPAllocator;
  /**
   * Registers the five upstream metrics in `registry`, or in prom-client's default registry when
   * it is `true` or left out (as the `metrics` option takes them), and records into them from now
   * on; the two gauges are set at once. Called again with another registry, it moves there: the
   * two gauge series of this range leave the previous registry (unless another allocator reports
   * them there), while the counters and the histogram, cumulative, keep there what they counted.
   * Loads prom-client, an optional peer dependency, on first use. Throws InvalidArgumentError for
   * anything but `true` or a prom-client Registry.
   */
  enableMetrics(this: object, registry?: MetricsRegistry | true): void;
  /** Detaches from the store and frees the WASM index. Idempotent; every other method then throws ErrDestroyed. */
  destroy(this: object): void;
}

/** Options of both allocator classes. */
export interface AllocatorOptions {
  /** Where the IPAddress records live. Default: a new MemoryStore of its own. */
  store?: Store | undefined;
  /** The random source for start offsets. Default: `defaultRandom()` (seeded from crypto). */
  random?: RandomSource | undefined;
  /** Enable metrics at construction: a prom-client Registry, or true for the default registry. */
  metrics?: MetricsRegistry | boolean | undefined;
}

/**
 * A prom-client `Registry` (prom-client 14 or 15), as the allocators use it: they look their
 * metrics up in it and prom-client registers new ones in it. Declared here instead of imported
 * from prom-client, an optional peer dependency, so that these types compile without it
 * installed; every prom-client Registry has these methods and can be passed as it is.
 */
export interface MetricsRegistry {
  /** The metric of that name registered here, or undefined. */
  getSingleMetric(name: string): unknown;
  /** Called by prom-client's metric constructors for each registry in their `registers` option. */
  registerMetric(metric: object): void;
}

/**
 * Makes the named own fields of `target` read-only at run time too, not only in the types
 * (non-writable, non-configurable): assigning one throws a TypeError in strict-mode code and does
 * nothing otherwise. An allocator's public fields say what it was built over — a store, a range,
 * its allocators — and one assigned under it would leave what it already did behind (the
 * addresses it handed out in the old store, free to be handed out again). The instances keep
 * fast properties and one shared map (checked with %HasFastProperties / %HaveSameMap).
 * @internal
 */
export function readOnlyFields(target: object, ...names: string[]): void {
  for (const name of names) Object.defineProperty(target, name, { writable: false, configurable: false });
}
