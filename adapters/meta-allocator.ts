// MetaAllocator: one IP family over many ranges — upstream master's MetaAllocator
// (pkg/registry/core/service/ipallocator/cidrallocator.go) on our Allocator.
//
//   ServiceCIDRs (source)            ranges (one Allocator per canonical CIDR)       one Store
//   ┌ kubernetes: 10.96.0.0/12,  ┐   ┌ 10.96.0.0/12   refs {kubernetes}       ┐
//   │             fd00::/108     ├──►│ 10.100.0.0/16  refs {extra, extra-dup} ├──► IPAddress
//   │ extra:      10.100.0.0/16  │   └ (fd00::/108 → the IPv6 MetaAllocator)  ┘    records
//   └ extra-dup:  10.100.0.0/16  ┘
//
// * A range exists while at least one ServiceCIDR lists its CIDR (a reference set keyed by the
//   canonical CIDR); the last reference gone → the Allocator is destroyed. CIDRs of the other
//   family are ignored; CIDRs no Allocator can serve (malformed, IPv6 shorter than /64,
//   255.255.255.255/32 and the all-ones IPv6 /128, IPv6 ranges overlapping the IPv4-mapped block
//   ::ffff:0:0/96) and ServiceCIDRs listing no CIDR are skipped and reported through
//   `skipped()` / `onSkip`, never thrown.
// * Readiness, recomputed on every add, update and delete for the ranges of the CIDRs the
//   ServiceCIDR lists or listed (no other range's references changed): ready while some
//   referencing ServiceCIDR is allocatable (Ready not False, no deletionTimestamp). Upstream
//   means the same ("ready if any of them is") but clears it only when the lone reference is
//   not allocatable, and its delete handler leaves it: a CIDR listed by two ServiceCIDRs stayed
//   ready after both became unready or were being deleted, and took allocations the finalizers
//   of those ServiceCIDRs then waited for (docs/semantics.md).
// * All ranges share the MetaAllocator's Store: an address taken through one range is taken for
//   every overlapping range (upstream's ranges share one API server). One subscription to its
//   cache serves them all (RecordRouter), and one table of the ranges by prefix (the router's
//   PrefixTable) both sends an event to the ranges whose prefix contains its address and finds
//   the ranges holding an address for allocate and release, so neither grows with the
//   number of ranges, and a range is routed events exactly while calls can reach it
//   (adapters/DESIGN.md).
// * allocate/release go to a range that contains the address as a host (upstream
//   PrefixContainsIP: not the network address, not the IPv4 broadcast) — so with 192.168.1.0/24
//   and 192.168.0.0/16, 192.168.1.0 is served by the /16. allocate needs a ready range, release
//   does not; no range → ErrMismatchedNetwork (allocate → ErrNotReady while the ServiceCIDR
//   source has not synced), except that release still deletes a record of ours there (its range
//   deleted since: upstream leaves it taken; docs/semantics.md). has asks the store, which every
//   range shares, for any address of the family, without looking a range up (upstream's asks a
//   ready range: docs/semantics.md).
// * allocateNext tries ranges in the policy's order and moves on only after ErrFull or
//   ErrNotReady; any other error (a store failure) is returned at once (upstream master since
//   kubernetes/kubernetes#135499; before it, every error moved on). None left → ErrFull, or
//   ErrNotReady when no range was full and some were not ready, or the ServiceCIDR source has
//   not synced yet (upstream answers ErrFull there too; docs/semantics.md): what a lone
//   Allocator answers, and nothing is full. Under a
//   cool-down, a first pass takes free addresses only (a range whose free ones are all held
//   answers full there), and only when none had one does a second pass, in the same policy
//   order, let the ranges give held addresses back early. A range whose strategy or random
//   source deletes its ServiceCIDR, or marks it for deletion, while it chooses takes nothing:
//   the call goes on as if the range had gone before it (refuseIfRangeLeft); upstream hands out
//   no address from a ServiceCIDR being deleted. A create already sent when the ServiceCIDR is
//   deleted or marked stands, as upstream's: the call answers its address, which stays allocated
//   until released (in a cluster the ServiceCIDR's finalizer waits for it).
// * A range whose Allocator cannot be built for lack of WASM memory is skipped, and built at a
//   later call once it may fit (retryForMemory). Meanwhile a call only it could have served
//   answers OutOfMemoryError, which says what to do, instead of ErrFull or ErrMismatchedNetwork.
//
// Range-selection policies (`policy` option):
//   'upstream'  random order, drawn per call from the injected random source. Upstream iterates a
//               Go map, whose order is unspecified and randomised by the runtime.
//   'ordered'   ServiceCIDR creation order (creationTimestamp, then name; those without a
//               timestamp last, in arrival order):
//               a new range is used only once the older ones are full.
//   'weighted'  random, each pick weighted by the range's free addresses among the ranges still
//               untried (ranges with nothing free, or not ready, are tried last) — bigger and
//               emptier ranges are more likely (upstream's TODO in AllocateNextService). Under a
//               cool-down, the first pass weighs the free addresses not held back, the only ones
//               it takes.
// allocate picks among the ready ranges containing the address in the same spirit: a random
// rotation for 'upstream', creation order otherwise (the choice only decides whose metrics count
// the attempt: every range asks the same store); release and rangeFor take the first range
// in creation order containing it, whatever the policy, drawing nothing.
import { Allocator, FULL, type IndexedAllocatorOptions, isSearchAnswer, NOT_READY, type NoAddress } from './allocator.ts';
import { canonicalOf, parseAddrInto, parsePrefix, type Family } from './address.ts';
import {
  ErrDestroyed,
  ErrFull,
  ErrMismatchedNetwork,
  ErrNotReady,
  NOT_READY_WHY,
  InvalidArgumentError,
  type InvalidRangeError,
  OutOfMemoryError,
  rejectSoon,
  rethrowLater,
} from './errors.ts';
import { checkIPFamily, didYouMean, optionsObject, readMember, unboundCall, unboundOr, unboundRead } from './input.ts';
import { quoteInput } from './quote.ts';
import { markDryRun } from './dry-run.ts';
import { type IndexKind, indexKindOption } from './free-index.ts';
import { Prefix, rangeRefusal } from './geometry.ts';
import { storeOption } from './memory-store.ts';
import { drawU64, guardedSource, isOwnGenerator, randomOption, type RandomSource, TWO32, type U64Out, uniformBelow } from './random.ts';
import type { AllocationStrategy } from './strategy.ts';
import { guardedStrategy } from './guarded-strategy.ts';
import { isInsideRefusal } from './chooser-calls.ts';
import { STRATEGIES, type StrategyOption, strategyOption } from './builtin-strategies.ts';
import type { FreeOnlyPass } from './cooling.ts';
import { recorderFor } from './metrics.ts';
import { checkParentRef, hasAllocatorLabels, forEachLabelledAddress, labelledChange, refuseBlindStore } from './records.ts';
import {
  compareCreation,
  readServiceCIDR,
  serviceCIDRAllocatable,
  serviceCIDRName,
  type ServiceCIDR,
  type ServiceCIDRSource,
} from './service-cidrs.ts';
import {
  allocatorWatcher,
  checkUnsubscribe,
  deleteErrorHandler,
  type IPAddressRecord,
  recordAnswer,
  ALLOCATE_NEXT_NOW,
  AS_DRY_RUN,
  CHECK_ALLOCATE,
  CHECK_ALLOCATE_NEXT,
  STOP_SEARCHES,
  type Store,
  storeHolds,
  syncAnswer,
  syncedAnswer,
  tellDeleteError,
  type DeleteErrorHandler,
  type ParentRef,
} from './store.ts';
import { RecordRouter, type Slot } from './record-router.ts';
import { TopLevelPrefixes } from './top-level-prefixes.ts';
import { type IPAllocator, type IPFamily, type MetricsRegistry, readOnlyFields } from './types.ts';
import { memoryHeadroom, outOfMemoryAgain } from './wasm.ts';
import { INSPECT, type InspectOptions, inspection } from './inspect.ts';
import { SAME_THREAD } from './same-thread.ts';

export type RangePolicy = 'upstream' | 'ordered' | 'weighted';
export const RANGE_POLICIES: readonly RangePolicy[] = Object.freeze(['upstream', 'ordered', 'weighted']);

export interface MetaAllocatorOptions {
  /** Where the IPAddress records live, shared by every range. Default: a new MemoryStore. */
  store?: Store | undefined;
  /** Random source for the policies and every range's start offsets. Default: `defaultRandom()`. */
  random?: RandomSource | undefined;
  /** Range selection for allocateNext (default 'upstream'). */
  policy?: RangePolicy | undefined;
  /** Enable metrics at construction: a prom-client Registry, or true for the default registry. */
  metrics?: MetricsRegistry | boolean | undefined;
  /** Index representation of every range (default 'auto'). */
  index?: IndexKind | undefined;
  /** How every range's allocateNext chooses among its free addresses (Allocator's `strategy`; default 'upstream'). */
  strategy?: StrategyOption | undefined;
  /**
   * Called once per (ServiceCIDR, CIDR) that cannot be served (upstream logs and skips it), once
   * the ranges of the event that found it are made: it may change the ServiceCIDRs or destroy
   * the MetaAllocator (a skip no longer listed by then, its ServiceCIDR deleted, is not
   * reported). For the ServiceCIDRs the source already lists it is called from inside the
   * constructor, before the MetaAllocator is assigned to anything: keep what it needs in the
   * skip itself (or read skipped() later). An error it throws does not stop the bookkeeping; it is rethrown
   * asynchronously, where it surfaces as an uncaught exception (as MemoryStore's default
   * onWatcherError does).
   */
  onSkip?: ((skipped: SkippedCIDR) => void) | undefined;
}

/** A CIDR of a ServiceCIDR that has no range, and why. */
export interface SkippedCIDR {
  readonly serviceCIDR: string;
  /** The CIDR as written in the ServiceCIDR. */
  readonly cidr: string;
  readonly reason: Error;
}

/** A range as `ranges()` reports it, frozen (its `serviceCIDRs` too). */
export interface RangeInfo {
  readonly cidr: string;
  readonly ready: boolean;
  /** Names of the ServiceCIDRs listing this CIDR. */
  readonly serviceCIDRs: readonly string[];
  readonly size: bigint;
  readonly used: number;
  readonly free: bigint;
}

const META_ALLOCATOR_OPTIONS: Record<keyof MetaAllocatorOptions, true> = {
  store: true,
  random: true,
  policy: true,
  metrics: true,
  index: true,
  strategy: true,
  onSkip: true,
};

/** What a range not built for lack of memory (`cidr`) is said as, in allocateNext's error and the dry run's. */
function notBuilt(cidr: string): string {
  return `the range ${cidr} could not be built for lack of WASM memory`;
}

/** What builds a range not built for lack of memory: said with notBuilt. */
const BUILT_LATER = 'a later call builds it once memory is freed, the cap is raised or its records drop';

/** The key of a skipped CIDR: the ServiceCIDR's name and the CIDR as it wrote it. */
function skipKey(serviceCIDR: string, cidr: string): string {
  // JSON: a name or a CIDR of a source of your own may hold any character, the separator too
  return JSON.stringify([serviceCIDR, cidr]);
}

/** One range: the Allocator of a canonical CIDR and the ServiceCIDRs that list it. */
interface RangeEntry {
  readonly cidr: string;
  readonly allocator: Allocator;
  /** Invariant: never empty while the entry is in `entries` (the last delete destroys it). */
  readonly refs: Set<string>;
  /** Set when the range is gone (its allocator destroyed): a running allocateNext skips it. */
  removed: boolean;
  /**
   * Its ServiceCIDRs let it allocate (upstream's `ready` flag, as set on the allocator): what
   * routing asks. The allocator's isReady() also needs the store synced; before that, a call
   * routed to it answers ErrNotReady, as upstream's does.
   */
  ready: boolean;
  /** Where it stands in `order`: see Rank. */
  rank: Rank;
  /** Its index in `order` while it is there (`order[pos] === e`), set as `order` is replaced. */
  pos: number;
  /** Its slot in the router's table, where look-ups by address find it (null once out of it). */
  route: Slot<RangeEntry> | null;
  /**
   * The allocator's size as a number when that is exact (at most 2^53), else -1: the 'weighted'
   * policy weighs a range by size − used() in numbers then, as Number(free()) would, without a
   * BigInt per range per draw.
   */
  readonly size53: number;
}

/** Where refuseIfRangeLeft, run after each call into a range's strategy, finds the range: null while it is being made. */
interface RangeSlot {
  entry: RangeEntry | null;
}

/** Why refuseIfRangeLeft refused: the range left allocation during its strategy's or random source's call. */
const LEFT_DURING_CHOICE = {
  removed: 'its ServiceCIDRs were deleted while it chose an address',
  unready: 'its ServiceCIDRs were marked for deletion or not Ready while it chose an address',
} as const;

/**
 * The errors refuseIfRangeLeft threw, told apart from the same classes thrown for any other
 * reason (a strategy's own ErrNotReady, a store's): what allocate(ip) and allocateNext
 * (rangeRefused) catch from their range's call is a refusal only when it is one of these (a
 * count of refusals on the range would also move for another call refused meanwhile, one started
 * from the store's create, and drop an address this call had taken).
 */
const LEFT_ALLOCATION = new WeakSet<object>();

/** Whether `e` is refuseIfRangeLeft's refusal (LEFT_ALLOCATION). */
function isLeftAllocation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && LEFT_ALLOCATION.has(e);
}

/**
 * The errors a range's strategy, random source or cool-down clock — code of yours — threw from
 * a call into it (callYourCode: forRange, choose, taken, nextU32, now), told apart from the same
 * classes thrown for the range: an ErrDestroyed of its own is the caller's to see, even once the
 * range is gone (rangeRefused), where the range's ErrDestroyed (its search stopped, its store
 * closed) only says it went away.
 */
const YOUR_CODE_THREW = new WeakSet<object>();

/** Makes `call`, a call into a range's code of yours, marking what it throws as its own (YOUR_CODE_THREW). */
function callYourCode<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    if (typeof err === 'object' && err !== null) YOUR_CODE_THREW.add(err);
    throw err;
  }
}

/**
 * A range's place in creation order: the first of its ServiceCIDRs in creation order (byCreation:
 * its object as it was when the range was placed, and its arrival), then the CIDR's index in that
 * ServiceCIDR's list. Kept on the range, so that `order` stays sorted by what it was sorted with
 * while a ServiceCIDR changes, until the range is placed again.
 */
interface Rank {
  readonly sc: ServiceCIDR;
  readonly seq: number;
  readonly index: number;
}

/** A ServiceCIDR as last delivered, with its CIDRs of our family resolved once. */
interface KnownServiceCIDR {
  sc: ServiceCIDR;
  /** Arrival order: breaks creationTimestamp ties. */
  readonly seq: number;
  /** Our family's CIDRs: canonical key and the text as written. */
  ours: { key: string; text: string }[];
}

/**
 * What a MetaAllocator's methods change, other than the contents of its maps and sets: held in an
 * object of its own (MetaAllocator.shared), not in fields, so that an object made with
 * Object.create(metaAllocator) — a wrapper overriding one method — and the MetaAllocator under it
 * share it, as they share an Allocator's state. An assignment through the wrapper would give the
 * wrapper a field of its own, and the two would part: a range waiting on memory, built by the
 * wrapper's call, stayed out of the order of the MetaAllocator under it. What only the source's
 * and the store's watchers change (`seq`, `labelled`) is here too, so that a frozen MetaAllocator
 * (Object.freeze) still follows its store and its source: as fields, each event threw a TypeError
 * into the watcher.
 */
interface Shared {
  destroyed: boolean;
  /** undefined while metrics are off; else what every new range is given. */
  metrics: MetricsRegistry | true | undefined;
  /**
   * Every range in creation order (sorted by rank, compareRank); replaced (never mutated) on
   * change, so running calls keep theirs. A change copies it once (a memmove of n pointers) and
   * moves only the ranges of the CIDRs it touched (reorder).
   */
  order: readonly RangeEntry[];
  /** The ranges' prefixes: Σ size of those no other range contains. */
  tops: TopLevelPrefixes;
  /**
   * Skips not yet given to onSkip (report): an event makes its ranges first, then reports, so
   * that an onSkip that changes the ServiceCIDRs finds them made, and a change it makes is not
   * undone by the rest of the event's bookkeeping (which worked from what it had read before).
   */
  unreported: SkippedCIDR[];
  /**
   * When the last sync failed to build a range for lack of memory (null when none is waiting on
   * memory): the lowest WASM memory headroom (memoryHeadroom()) it failed at, and the family's
   * labelled records then. While the headroom has not grown past it (no cap raised, nothing
   * freed) and the records have not dropped (a range's index holds its records), building that
   * range would fail the same way.
   */
  memoryWait: { headroom: number; records: number } | null;
  /** sync() is running; resync: an event came meanwhile, and it runs again once done. */
  syncing: boolean;
  resync: boolean;
  /**
   * Allocators that refused destroy(), called from inside their own strategy, random source or
   * cool-down's clock (removeEntry); destroyed once that call returns (reap).
   */
  undestroyed: Allocator[];
  /** [STOP_SEARCHES] was called: every range, those made since too, stops its searches. */
  stopping: boolean;
  /** The family's labelled records in the cache (upstream Used: not filtered by CIDR), kept from the events. */
  labelled: number;
  /** The next ServiceCIDR's sequence number (KnownServiceCIDR.seq). */
  seq: number;
  /**
   * The source's hasSynced, read once, until it answers true (null then, and for a source without
   * one): till then an allocateNext that found no range full answers ErrNotReady, not ErrFull,
   * since the ranges may not all be known yet. Not asked again once synced, as an informer's
   * HasSynced stays true: a source closed since (whose methods then throw) is not asked, and one
   * closed before it was seen synced is taken as synced (sourceSynced).
   */
  sourceHasSynced: (() => unknown) | null;
  /**
   * Counts what can give a range weight under 'weighted' (pickWeighted): every event of the
   * store's cache (used() moves only with them) and every change of an existing range's
   * readiness. While it stands still, ranges that weighed nothing still weigh nothing.
   */
  weighChanges: number;
}

const TWO53 = 9007199254740992;
const TWO53_BIG = 9007199254740992n;

/**
 * One family's allocator over every ServiceCIDR of a source (upstream's cidrallocator.go): a
 * range per CIDR, following the source as ServiceCIDRs are added, become ready and are deleted.
 * allocate and allocateNext check that a range may allocate before each create they send to the
 * store (allocateNext before each address it tries); a create already sent when the range's
 * ServiceCIDR is deleted or marked for deletion is not undone: the call resolves with its
 * address, allocated until released, as upstream's (has, forEach and used() count it, release
 * deletes it; in a cluster the ServiceCIDR's finalizer waits for it).
 */
export class MetaAllocator implements IPAllocator, Disposable {
  /** Makes postMessage refuse the MetaAllocator, saying why (SAME_THREAD); first, so it is read first. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read by structuredClone, not by this code
  private readonly sameThreadOnly = SAME_THREAD;
  /** Upstream returns an empty IPNet: a MetaAllocator has no single CIDR. */
  readonly cidr = '';
  readonly ipFamily: IPFamily;
  readonly store: Store;
  readonly policy: RangePolicy;

  private readonly fam: Family;
  private readonly random: RandomSource;
  /**
   * Whether the ranges call nothing of yours as they choose (upstream's scan, drawing from this
   * package's generator): then no range goes away during its own call, and none is left to reap.
   */
  private readonly rangesCallNothing: boolean;
  /** The weighted policy's 64-bit draw (reused). */
  private readonly draw: U64Out = { hi: 0, lo: 0 };
  /** options.index, given to every range; undefined: the Allocator's default. */
  private readonly indexKind: IndexKind | undefined;
  private readonly strategy: AllocationStrategy;
  private readonly onSkip: ((s: SkippedCIDR) => void) | undefined;
  /** canonical CIDR → range. */
  private readonly entries = new Map<string, RangeEntry>();
  /**
   * The one store subscription of every range's index (their Allocators' feed): an event goes to the
   * ranges containing its address only. Its table holds the ranges by prefix (those in `entries`,
   * each attached to its allocator's slot): which contain an address, without going over every
   * range. A range's place in creation order is its `pos`.
   */
  private readonly router: RecordRouter<RangeEntry>;
  private readonly known = new Map<string, KnownServiceCIDR>();
  /**
   * canonical CIDR → the names of the known ServiceCIDRs listing it (of our family), as `known`
   * stands now: what a sync pass reads instead of going over every ServiceCIDR.
   */
  private readonly listing = new Map<string, Set<string>>();
  /**
   * The canonical CIDRs whose listing, or one of whose ServiceCIDRs, changed since the last sync
   * pass: the only ones a pass has to look at. A pass over every ServiceCIDR at each event, with
   * a sort of every range and the top-level size by notContained, made adding n ServiceCIDRs one
   * by one O(n³).
   */
  private readonly dirty = new Set<string>();
  /** skipKey(serviceCIDR, cidr) → the report. */
  private readonly skips = new Map<string, SkippedCIDR>();
  /** Canonical CIDRs whose Allocator cannot be built (out of memory excepted: that may pass). */
  private readonly bad = new Map<string, Error>();
  /**
   * The ranges the last sync could not build for lack of memory (canonical CIDR → what routing
   * needs): an address only such a range serves, or an allocateNext that only such a range could
   * have answered, is refused with OutOfMemoryError, which says what to do, not with
   * ErrMismatchedNetwork or ErrFull.
   */
  private readonly starved = new Map<string, { prefix: Prefix; refs: Set<string>; ready: boolean; reason: OutOfMemoryError }>();
  private readonly unsubscribeStore: () => void;
  private unsubscribeSource: () => void;
  /**
   * What its methods and its watchers change other than the contents of its maps and sets: see
   * Shared. One object, not fields of its own, so that a frozen MetaAllocator (Object.freeze)
   * still follows its store and its source, and a wrapper made with Object.create(meta) shares it.
   */
  private readonly shared: Shared = {
    destroyed: false,
    metrics: undefined,
    order: [],
    tops: new TopLevelPrefixes(),
    unreported: [],
    memoryWait: null,
    syncing: false,
    resync: false,
    undestroyed: [],
    stopping: false,
    labelled: 0,
    seq: 0,
    sourceHasSynced: null,
    weighChanges: 0,
  };
  private readonly words = new Uint32Array(4);

  /**
   * The `family` ('IPv4' or 'IPv6') allocator over `source` (InMemoryServiceCIDRs, or
   * KubernetesServiceCIDRs from `ipallocator/kubernetes`); every range writes to `options.store`.
   * It subscribes to the source at once. Throws InvalidArgumentError for a wrong family or policy.
   * A CIDR that cannot be served is skipped and reported to `options.onSkip`, as upstream logs it.
   */
  constructor(family: IPFamily, source: ServiceCIDRSource, options?: MetaAllocatorOptions) {
    const opts = optionsObject(options, 'MetaAllocator', META_ALLOCATOR_OPTIONS);
    // read once: what was checked is what is called (a getter may answer differently twice)
    const subscribe = typeof source === 'object' && source !== null ? readMember(source, 'subscribe', 'source') : undefined;
    if (typeof subscribe !== 'function') {
      throw new InvalidArgumentError(`source must be a ServiceCIDRSource (an object with subscribe()), got ${quoteInput(source)}`);
    }
    const hasSynced = readMember(source, 'hasSynced', 'source');
    this.shared.sourceHasSynced = typeof hasSynced === 'function' ? () => hasSynced.call(source) : null;
    checkIPFamily(family);
    // undefined is the default; null is refused, as every other option refuses it
    const policy = opts.policy === undefined ? 'upstream' : opts.policy;
    if (!RANGE_POLICIES.includes(policy))
      throw new InvalidArgumentError(
        `options.policy must be one of ${RANGE_POLICIES.join(', ')}, got ${quoteInput(policy)}${didYouMean(policy, RANGE_POLICIES)}`,
      );
    this.ipFamily = family;
    this.fam = family === 'IPv4' ? 4 : 6;
    this.policy = policy;
    this.store = storeOption(opts.store);
    refuseBlindStore(this.store, family, 'MetaAllocator');
    // a store assigned under a live MetaAllocator would reach its later ranges and its releases,
    // not its earlier ranges
    readOnlyFields(this, 'cidr', 'ipFamily', 'store', 'policy');
    this.random = randomOption(opts.random);
    this.indexKind = opts.index === undefined ? undefined : indexKindOption(opts.index, 'options.index');
    // each range gets it through a guard of its own (rangeCalls)
    this.strategy = strategyOption(opts.strategy);
    this.rangesCallNothing = this.strategy === STRATEGIES.upstream && isOwnGenerator(this.random);
    if (opts.onSkip !== undefined && typeof opts.onSkip !== 'function') {
      throw new InvalidArgumentError(`options.onSkip must be a function, got ${quoteInput(opts.onSkip)}`);
    }
    this.onSkip = opts.onSkip;
    if (opts.metrics !== undefined && opts.metrics !== false) {
      recorderFor(opts.metrics); // validates
      this.shared.metrics = opts.metrics;
    }
    const router = new RecordRouter<RangeEntry>(this.fam);
    this.router = router;
    this.unsubscribeStore = checkUnsubscribe(
      this.store.cache.subscribe(
        allocatorWatcher({
          // never below 0, as an Allocator's count (TakenAddresses.count): a delete the cache
          // should not have delivered (twice, or of a record it never added) is ignored
          onAdd: (r, previous) => {
            this.shared.weighChanges++;
            this.shared.labelled = Math.max(0, this.shared.labelled + labelledChange(r, previous, this.ipFamily));
            router.onAdd(r, previous);
          },
          onDelete: (r) => {
            this.shared.weighChanges++;
            if (hasAllocatorLabels(r, this.ipFamily)) this.shared.labelled = Math.max(0, this.shared.labelled - 1);
            router.onDelete(r);
          },
          onResync: () => {
            this.shared.weighChanges++;
            router.onResync();
          },
        }),
      ),
    );
    let unsubscribeSource: unknown;
    // A ServiceCIDR of the replay refused (thrown from onAdd) is rethrown once subscribe has
    // returned: thrown through the source's subscribe, it would leave the source holding this
    // watcher with no unsubscribe to give it back.
    let replay: { refused: { error: unknown } | null } | null = { refused: null };
    try {
      unsubscribeSource = (subscribe as ServiceCIDRSource['subscribe']).call(source, {
        onAdd: (sc) => {
          if (replay === null) return this.onServiceCIDR(sc);
          if (replay.refused !== null) return; // the construction fails: the rest is not read
          try {
            this.onServiceCIDR(sc);
          } catch (e) {
            replay.refused = { error: e };
          }
        },
        onDelete: (sc) => this.onServiceCIDRDeleted(sc),
      });
    } catch (e) {
      // a closed source (ErrDestroyed), or one whose replay failed part-way: nobody will hold
      // this object to destroy it, so the store subscription and the ranges built go now
      this.unsubscribeSource = () => {};
      this.destroy();
      throw e;
    }
    const refused = replay.refused;
    replay = null;
    if (typeof unsubscribeSource !== 'function') {
      // The ranges its replay built are freed and the store let go; the source's later events
      // find this destroyed.
      this.unsubscribeSource = () => {};
      this.destroy();
      if (refused !== null) throw refused.error;
      checkUnsubscribe(unsubscribeSource, 'source.subscribe');
    }
    this.unsubscribeSource = unsubscribeSource as () => void;
    if (refused !== null) {
      this.destroy(); // unsubscribes from the source too
      throw refused.error;
    }
  }

  /**
   * Whether the ServiceCIDR source holds a complete copy (its hasSynced(); true without one). A
   * source closed since (its hasSynced() throws ErrDestroyed) will never tell of another range:
   * this serves the ranges it last told of, answering as a synced source's allocator does, never
   * with the source's ErrDestroyed, which would say this MetaAllocator is destroyed.
   */
  private sourceSynced(): boolean {
    const hasSynced = this.shared.sourceHasSynced;
    if (hasSynced === null) return true;
    let answer: unknown;
    try {
      answer = hasSynced();
    } catch (e) {
      if (!(e instanceof ErrDestroyed)) throw e;
      answer = true;
    }
    if (!syncedAnswer(answer, "the ServiceCIDR source's hasSynced()")) return false;
    this.shared.sourceHasSynced = null;
    return true;
  }

  /**
   * Σ usable addresses of the top-level ranges (those no other range contains). ErrDestroyed after
   * destroy(), as free(): the ranges it counts are gone (0n would read as a family with none).
   */
  get size(): bigint {
    if (!(this instanceof MetaAllocator)) throw unboundRead(this, 'MetaAllocator', 'size');
    this.live();
    this.retryForMemory();
    return this.shared.tops.size;
  }

  // ── allocation ────────────────────────────────────────────────────────────────────────────

  allocate(this: object, ip: string, owner?: ParentRef | null): Promise<void>;
  allocate(this: MetaAllocator, ip: string, owner?: ParentRef | null): Promise<void> {
    try {
      this.live();
      // As Allocator.allocate, the address's errors (InvalidAddressError, ErrMismatchedNetwork)
      // win over the owner's; all come before the range rotation's draw, so a refused call spends
      // none. The owner is read first all the same: its getters may call back into this object,
      // which must not happen between route() and drawRange() (they share this.words).
      let ownerError: { error: unknown } | null = null;
      let checked: ParentRef | null = null; // read once: the range gets the copy checked here
      try {
        checked = checkParentRef(owner);
      } catch (error) {
        ownerError = { error };
      }
      this.live(); // the owner's getters destroyed this: ErrDestroyed, not "no range holds it"
      const first = this.route(ip, true);
      if (first === null) throw this.unallocatable(ip);
      if (ownerError !== null) throw ownerError.error;
      const name = canonicalOf(ip, this.fam, this.words);
      const w = this.words;
      let e: RangeEntry | null = first;
      if (this.policy === 'upstream' && this.shared.order.length > 1) e = this.drawRange(w, true);
      this.live(); // the random source destroyed this meanwhile: ErrDestroyed, not "no range"
      for (;;) {
        if (e === null) throw this.unallocatable(ip); // the random source or a strategy changed the ranges meanwhile
        try {
          // the range takes the address as parsed here (its words read before it calls anything of
          // yours); a rebuild of its index runs its strategy's forRange first. What it refuses
          // before its store call is thrown, not returned as a rejection, so that its refusal by
          // refuseIfRangeLeft is seen here: an answer it returns is the call's, whatever else
          // happened meanwhile.
          return e.allocator.allocateParsed(name, w, checked ?? undefined);
        } catch (err) {
          if (!isLeftAllocation(err)) throw err;
        } finally {
          this.reap();
        }
        // That forRange took the range out of allocation (refuseIfRangeLeft), nothing taken:
        // another ready range holding the address takes it, as if the range had gone before the
        // call.
        this.live();
        parseAddrInto(name, w); // code of yours called meanwhile may have parsed into the words
        e = this.nearest(w, true, 0);
      }
    } catch (err) {
      return rejectSoon(orUnbound(err, this, 'allocate'));
    }
  }

  /**
   * What allocate(ip) checks before its store call, whichever range it draws: not destroyed, a
   * ready range holds the address (ErrMismatchedNetwork, ErrNotReady, OutOfMemoryError as
   * allocate answers them; InvalidAddressError), then what every such range answers alike — the
   * first in creation order asked for them (its allocator's checkAllocate: ErrNotReady while the
   * store has not synced): they share the store, their readiness and the address. A range's one
   * answer of its own, its refusal of a call from inside its strategy, is not asked here: allocate
   * meets it in the range it draws, before its store call (a DualStackAllocator's IPv4 address is
   * taken synchronously, before any record exists; its IPv6 address after an await, no longer
   * inside the strategy). Nothing is checked when allocate is overridden. See CHECK_ALLOCATE.
   * @internal for DualStackAllocator
   */
  [CHECK_ALLOCATE](ip: string): void {
    if (this.allocate !== MetaAllocator.prototype.allocate) return;
    this.live();
    const e = this.route(ip, true);
    if (e === null) throw this.unallocatable(ip);
    // as a dry run checks: the range holds the address (nothing to count), and its refusal of a
    // call from inside its strategy is met by allocate in the range it draws (above)
    e.allocator.checkAllocate(ip, AS_DRY_RUN);
  }

  /**
   * What allocateNext checks of the MetaAllocator itself before any store call: not destroyed.
   * Whether a range is ready is its own answer, met as allocateNext walks them. Nothing is checked
   * when allocateNext is overridden. See CHECK_ALLOCATE_NEXT. @internal for DualStackAllocator
   */
  [CHECK_ALLOCATE_NEXT](): void {
    if (this.allocateNext !== MetaAllocator.prototype.allocateNext) return;
    this.live();
  }

  allocateNext(this: object, given?: ParentRef | null): Promise<string>;
  allocateNext(this: MetaAllocator, given?: ParentRef | null): Promise<string> {
    try {
      this.retryForMemory();
      this.live();
      const owner = checkParentRef(given) ?? undefined; // read once: every range tried gets this copy
      const call = new NextCall(owner);
      this.beginPass(call, this.shared.order);
      const r = this.walk(call);
      return typeof r === 'string' ? Promise.resolve(r) : r;
    } catch (err) {
      return rejectSoon(orUnbound(err, this, 'allocateNext'));
    }
  }

  /**
   * Starts a pass of allocateNext over `list`: under 'ordered' (or with at most one range) its
   * ranges in order, skipping those tried; otherwise the untried ones, drawn one by one.
   */
  private beginPass(call: NextCall, list: readonly RangeEntry[]): void {
    call.list = list;
    call.moved = null;
    call.vacated = -1;
    call.weightlessAt = -1;
    if (this.policy === 'ordered' || list.length <= 1) {
      call.pool = null;
      call.next = 0;
    } else {
      const tried = call.tried;
      // the first pass draws from the list itself (no copy); a later one, rare, from those untried
      call.pool = tried === null ? list : list.filter((e) => !tried.has(e));
      call.next = call.pool.length;
    }
  }

  /**
   * allocateNext's search, from where `call` stands: the address, or a promise of it; ErrFull,
   * ErrDestroyed and a range's other errors are thrown.
   *
   * Why one loop that returns a promise only when it must, rather than an `async` method: over a
   * store with synchronous operations every range answers at once (tryAllocateNextNow), and an
   * async function would still pay its frame and promise machinery on every call. So the walk
   * runs synchronously while the ranges answer at once; when one answers with a promise, the
   * walk returns that promise chained to itself, and re-enters here with `call` (which holds
   * where it stopped) once the range has answered null. Either way it is this one loop, so the
   * order of the ranges, the random draws and the end conditions are the same on both paths.
   * Its throws become rejections: allocateNext's catch, or the `then` callback's promise, which
   * the caller already holds.
   */
  private walk(call: NextCall): string | Promise<string> {
    for (;;) {
      const list = call.list;
      if (call.pool === null) {
        while (call.next < list.length) {
          const e = list[call.next++]!;
          this.live(); // destroyed while an earlier range was tried: ErrDestroyed, not ErrFull
          if (call.tried?.has(e)) continue;
          const r = this.tryRange(e, call);
          if (r === null) continue;
          if (typeof r === 'string') return r;
          return r.then((ip) => (ip !== null ? ip : this.walk(call)));
        }
      } else {
        while (call.next > 0) {
          const n = call.next;
          call.settle();
          const i = this.policy === 'upstream' ? uniformBelow(this.random, n) : this.pickWeighted(call, n);
          const e = call.untried(i);
          call.vacated = i; // its place goes to the last untried range at the next draw (settle)
          call.next = n - 1;
          this.live();
          const r = this.tryRange(e, call);
          if (r === null) continue;
          if (typeof r === 'string') return r;
          return r.then((ip) => (ip !== null ? ip : this.walk(call)));
        }
      }
      this.live(); // destroyed during the last range's store call: ErrDestroyed, not ErrFull
      if (call.freeOnly?.heldBack === true) {
        // no range had a free address, and some held theirs back: now they give those back early
        call.freeOnly = null;
        call.tried = null;
        this.beginPass(call, this.shared.order);
        continue;
      }
      // Not ready, rather than full, when that is all that held it up: with a range full, adding
      // a range is the fix, and the answer is upstream's ErrFull; with none full, waiting for the
      // store's sync or a Ready condition is.
      if (this.shared.order === list) {
        // a range that could have answered was not built for lack of memory: that is the reason
        const st = this.starvedRange();
        if (st !== null) throw this.starvedError(st.cidr, st.reason, 'allocateNext found no free address in the ranges built');
        // a range not built for lack of memory and not ready would answer ErrNotReady too
        const notReady = call.notReady || [...this.starved.values()].some((s) => !s.ready);
        if (call.full) throw new ErrFull(call.fullWhy);
        if (notReady) throw new ErrNotReady(NOT_READY_WHY.noRangeReady);
        if (!this.sourceSynced()) throw new ErrNotReady(NOT_READY_WHY.serviceCIDRsNotSynced);
        // upstream's answer, ErrFull, with why: there is no range to allocate from
        throw new ErrFull(list.length === 0 ? this.noRange() : undefined);
      }
      // The list changed during the call (a range added or removed while a store call was in
      // flight): the ranges added meanwhile are tried too, those tried already are not.
      const tried = (call.tried ??= new Set());
      for (const e of list) tried.add(e);
      this.beginPass(call, this.shared.order);
    }
  }

  /**
   * tryNext on a range, then reap: a rebuild of its index (at the call's start, or after a
   * collision) may have run its strategy's forRange, and its strategy or a random source of your
   * own may have removed ranges (or destroyed this). An immediate answer stays immediate (no
   * promise); upstream's scan with this package's generator calls nothing: nothing to reap.
   */
  private tryRange(e: RangeEntry, call: NextCall): string | null | Promise<string | null> {
    if (this.rangesCallNothing) return tryNext(e, call);
    let r: string | null | Promise<string | null>;
    try {
      r = tryNext(e, call);
    } finally {
      this.reap();
    }
    return typeof r === 'object' && r !== null ? r.finally(() => this.reap()) : r;
  }

  /**
   * Index in the untried [0, n) drawn with probability free/Σfree over the ready ranges (in the
   * first pass, free less what a cool-down holds back: freeOf); n − 1 when all weigh 0.
   *
   * Once all weigh 0, the next draws of the pass answer n − 1 without weighing again, as long as
   * nothing that could give one weight has happened since (call.weightlessAt): a call over many
   * full ranges weighs them once, not n(n + 1)/2 times — on a store whose operations answer with
   * promises too. Weighing again would have found them all weightless and made no draw: the
   * answers are the same. A range gains weight only
   *
   *   - by an event of the store's cache (used() moves only with them: an address freed, a
   *     record re-labelled, a re-list) or a change of its readiness: counted in
   *     shared.weighChanges, whoever made it and whenever (a release that settled while a range's
   *     promise was pending, code of yours in the store's hasSynced or your metrics registry);
   *   - by the store's cache becoming synced: so a pass where a range of ready ServiceCIDRs was
   *     not ready (the cache not synced) weighs at every draw;
   *   - by a cool-down's hold running out, or whatever a strategy, clock or random source of
   *     yours does: so the shortcut is taken only where the ranges call none of them
   *     (rangesCallNothing: no cool-down either).
   */
  private pickWeighted(call: NextCall, n: number): number {
    const changes = this.shared.weighChanges; // before weighing: a change made while weighing is seen at the next draw
    if (call.weightlessAt === changes) return n - 1;
    let total = 0;
    let unsynced = false;
    // the call's own: a store's hasSynced (readyNow) may start another call of this MetaAllocator
    const weights = call.weights.length >= n ? call.weights : (call.weights = new Float64Array(n));
    for (let i = 0; i < n; i++) {
      const e = call.untried(i);
      let w = 0; // a removed range weighs nothing
      if (readyNow(e)) w = freeOf(e, call.freeOnly !== null);
      else if (e.ready && !e.removed) unsynced = true;
      weights[i] = w;
      total += w;
    }
    if (total === 0) {
      if (this.rangesCallNothing && !unsynced) call.weightlessAt = changes;
      return n - 1;
    }
    // a uniform double in [0, 1) from 53 random bits
    const d = this.draw;
    drawU64(this.random, d); // two checked u32 draws, high first
    const u = (((d.hi >>> 11) * TWO32 + d.lo) / TWO53) * total;
    let acc = 0;
    let last = -1;
    for (let i = 0; i < n; i++) {
      if (weights[i] === 0) continue;
      acc += weights[i]!;
      last = i;
      if (u < acc) return i;
    }
    return last; // rounding left u ≥ acc
  }

  /**
   * Releases `ip` through the first range, in creation order, that holds it as a host, ready or
   * not (upstream getAllocator): that range's allocator deletes its record and ignores the
   * delete's errors, telling `onDeleteError` when given; a free address is a no-op.
   *
   * An address of this family that no range holds (its ServiceCIDR deleted since it was handed
   * out) is released all the same when its record carries this family's allocator labels: the
   * record is deleted and the call resolves, as a range's release of an address outside it
   * does; the store's errors, of the read too, are ignored and told to `onDeleteError`. Upstream
   * answers getAllocator's error and deletes nothing: the address stays taken until a repair
   * loop finds it. With no such record, or for the other family, it rejects with
   * ErrMismatchedNetwork (upstream) — OutOfMemoryError when a range not built for lack of memory
   * holds it; malformed text rejects with InvalidAddressError.
   */
  release(this: object, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void>;
  release(this: MetaAllocator, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void> {
    try {
      this.live();
      deleteErrorHandler(onDeleteError); // refused whatever the address, as a range's release refuses it
      const e = this.route(ip, false);
      if (e !== null) return e.allocator.releaseParsed(canonicalOf(ip, this.fam, this.words), this.words, onDeleteError);
      const told = deleteErrorHandler(onDeleteError);
      const w = this.words;
      if (parseAddrInto(ip, w) !== this.fam) throw this.mismatched(ip, false);
      return this.releaseUnrouted(ip, canonicalOf(ip, this.fam, w), told);
    } catch (err) {
      return rejectSoon(orUnbound(err, this, 'release'));
    }
  }

  /**
   * release() of `ip` (record name `name`), of this family, that no range holds: its record is
   * deleted when it is one of ours (hasAllocatorLabels), else ErrMismatchedNetwork. Only our
   * labels let a record go: one written by anyone else, in no range of ours, is not ours to free.
   */
  private releaseUnrouted(ip: string, name: string, told: DeleteErrorHandler | undefined): Promise<void> {
    const sync = this.store.sync;
    if (sync != null) {
      let record: IPAddressRecord | null | undefined;
      try {
        record = recordAnswer(syncAnswer(sync.getSync(name), 'getSync'), 'sync.getSync', name);
      } catch (err) {
        return tellDeleteError(told, err); // whether it was ours is unknown: ignored, as a delete's error
      }
      if (record == null || !hasAllocatorLabels(record, this.ipFamily)) throw this.mismatched(ip, false);
      try {
        syncAnswer(sync.deleteSync(name), 'deleteSync');
      } catch (err) {
        return tellDeleteError(told, err); // ignored (upstream)
      }
      return Promise.resolve();
    }
    // a store in plain JavaScript may answer without a promise, or throw instead of rejecting:
    // taken as `await` takes them
    return (async () => {
      let record: IPAddressRecord | null | undefined;
      try {
        record = recordAnswer(await this.store.get(name), 'get', name);
      } catch (err) {
        await tellDeleteError(told, err);
        return;
      }
      if (record == null || !hasAllocatorLabels(record, this.ipFamily)) throw this.mismatched(ip, false);
      try {
        await this.store.delete(name);
      } catch (err) {
        await tellDeleteError(told, err);
      }
    })();
  }

  /**
   * Whether the record of `ip` exists, for any address of this family: what forEach lists and
   * release deletes. Every range asks the one store, so the store is asked without looking a
   * range up: for an address of a range, ready or not (as release routes), and for one that no
   * range holds (its ServiceCIDR deleted since it was handed out), as an Allocator's has() asks
   * for an address outside its range. Upstream asks a ready range only (getAllocator(ip, true))
   * and answers false otherwise, so an address of a range whose ServiceCIDR is not Ready, being
   * deleted or gone is false there while its record stays — a rollback that asks has() after
   * release would miss an address still held. Malformed text rejects with InvalidAddressError;
   * an address of the other family is false; the store's errors reject.
   */
  has(this: object, ip: string): Promise<boolean>;
  has(this: MetaAllocator, ip: string): Promise<boolean> {
    // not an async function: the store's answer is returned as it comes, not wrapped in another promise
    try {
      this.live();
      const w = this.words;
      if (parseAddrInto(ip, w) !== this.fam) return Promise.resolve(false);
      return storeHolds(this.store, canonicalOf(ip, this.fam, w));
    } catch (err) {
      return rejectSoon(orUnbound(err, this, 'has'));
    }
  }

  /**
   * The CIDR of the range that would serve `ip` (upstream getAllocator): a range containing it
   * as a host whose ServiceCIDRs make it ready (whether or not the store has synced), any such
   * range when `ready` is false. Throws ErrMismatchedNetwork when there is none (OutOfMemoryError
   * when one not built for lack of memory would serve it), InvalidAddressError for malformed text,
   * InvalidArgumentError for a `ready` that is not a boolean (`'false'` would ask for a ready one).
   */
  rangeFor(this: object, ip: string, ready?: boolean): string;
  rangeFor(this: MetaAllocator, ip: string, ready = true): string {
    checkThis(this, 'rangeFor');
    this.live();
    if (typeof ready !== 'boolean') throw new InvalidArgumentError(`rangeFor's ready must be true or false, got ${quoteInput(ready)}`);
    const e = this.route(ip, ready);
    if (e === null) throw this.mismatched(ip, ready);
    return e.cidr;
  }

  /**
   * ErrMismatchedNetwork for `ip`, which route() has parsed: no range (no ready one when
   * `readyOnly`) holds it — or OutOfMemoryError when one that would was not built for lack of
   * memory.
   */
  private mismatched(ip: string, readyOnly: boolean): ErrMismatchedNetwork | OutOfMemoryError {
    const family = parseAddrInto(ip, this.words) === 4 ? 'IPv4' : 'IPv6';
    if (family !== this.ipFamily)
      return new ErrMismatchedNetwork(`${ip} is an ${family} address; this MetaAllocator serves ${this.ipFamily}`);
    const w = this.words;
    for (const [cidr, st] of this.starved) {
      if ((!readyOnly || st.ready) && st.prefix.inRange(this.fam, w)) return this.starvedError(cidr, st.reason, `${ip} is in ${cidr}`);
    }
    return new ErrMismatchedNetwork(`no ${readyOnly ? 'ready ' : ''}range of this MetaAllocator holds ${ip}`);
  }

  /**
   * allocate's refusal of `ip`, which no ready range holds: ErrNotReady while the ServiceCIDR
   * source has not synced (the range holding it may not be known yet), else mismatched()'s.
   */
  private unallocatable(ip: string): ErrMismatchedNetwork | OutOfMemoryError | ErrNotReady {
    const err = this.mismatched(ip, true);
    if (!(err instanceof ErrMismatchedNetwork) || parseAddrInto(ip, this.words) !== this.fam) return err;
    return this.sourceSynced() ? err : new ErrNotReady(NOT_READY_WHY.serviceCIDRsNotSynced);
  }

  /** A ready range not built for lack of memory (null: none), for allocateNext. */
  private starvedRange(): { cidr: string; reason: OutOfMemoryError } | null {
    for (const [cidr, st] of this.starved) if (st.ready) return { cidr, reason: st.reason };
    return null;
  }

  /**
   * OutOfMemoryError for a call a range not built for lack of memory (`cidr`) would have served:
   * what its build needed (`reason`), with the memory measured now (outOfMemoryAgain) — not as the
   * build found it, which may be many calls and indexes ago.
   */
  private starvedError(cidr: string, reason: OutOfMemoryError, what: string): OutOfMemoryError {
    return outOfMemoryAgain(`${what}, and ${notBuilt(cidr)}`, reason, BUILT_LATER);
  }

  /**
   * Parses `ip` into this.words (throws InvalidAddressError) and returns the first range in
   * `order` holding it (a ready one when `readyOnly`), or null — without drawing: has, release
   * and rangeFor answer the same through any range holding it (one store), and an address no
   * range serves spends no draw.
   */
  private route(ip: string, readyOnly: boolean): RangeEntry | null {
    this.retryForMemory(); // before the parse: building a range runs its strategy, which may call back in
    const w = this.words;
    return parseAddrInto(ip, w) === this.fam ? this.nearest(w, readyOnly, 0) : null;
  }

  /**
   * allocate's range under 'upstream' with several ranges: one holding the address `w` (what
   * route() just parsed into this.words, as it was before the draw) — ready ones only when
   * `readyOnly` — going round `order` from a random range, as upstream's map iteration order is
   * random: the range found counts the allocation.
   */
  private drawRange(w: Uint32Array, readyOnly: boolean): RangeEntry | null {
    // A random source of your own may call back in, which parses into this.words (`w`): the
    // address is kept aside across the draw as four numbers, not as a copy of `w` (a new typed
    // array per call: under Deno, several hundred nanoseconds)
    const w0 = w[0]!;
    const w1 = w[1]!;
    const w2 = w[2]!;
    const w3 = w[3]!;
    const drawn = uniformBelow(this.random, this.shared.order.length);
    w[0] = w0;
    w[1] = w1;
    w[2] = w2;
    w[3] = w3;
    const n = this.shared.order.length; // after the draw: a random source of your own may have changed the ranges
    return this.nearest(w, readyOnly, n > 0 ? drawn % n : 0);
  }

  /**
   * Of the ranges holding the address `w` as a host (upstream PrefixContainsIP: [first, last], the
   * prefix less network and IPv4 broadcast) — ready ones only when `readyOnly` — the first met
   * going round `order` from index `start`: what a walk of `order` from there would find, from
   * the few ranges whose prefix contains it (the router's table) instead of every range.
   */
  private nearest(w: Uint32Array, readyOnly: boolean, start: number): RangeEntry | null {
    const list = this.shared.order;
    const n = list.length;
    if (n === 1) {
      // the one range: what the table below would find, without looking it up (route null: it
      // is being dropped, out of the table already)
      const e = list[0]!;
      return e.route !== null && e.allocator.prefix.inRange(this.fam, w) && (!readyOnly || e.ready) ? e : null;
    }
    const found = this.router.containing(w);
    let best: RangeEntry | null = null;
    let bestSteps = n;
    for (let i = 0; i < found.length; i++) {
      const e = found[i]!.range;
      // null: being built (its allocator subscribed, not attached yet); else made, not yet placed
      // in `order` by the change making it
      if (e === null || list[e.pos] !== e) continue;
      if (!e.allocator.prefix.inRange(this.fam, w) || (readyOnly && !e.ready)) continue;
      const steps = (e.pos - start + n) % n;
      if (steps < bestSteps) {
        best = e;
        bestSteps = steps;
      }
    }
    return best;
  }

  // ── reading ───────────────────────────────────────────────────────────────────────────────

  forEach(this: object, fn: (ip: string) => void): void;
  forEach(this: MetaAllocator, fn: (ip: string) => void): void {
    checkThis(this, 'forEach');
    this.live();
    if (typeof fn !== 'function') throw new InvalidArgumentError(`forEach needs a function, got ${quoteInput(fn)}`);
    forEachLabelledAddress(this.store.cache, this.ipFamily, () => this.destroyed, fn);
  }

  /** Records of this family carrying both allocator labels, in any range or none (upstream). O(1). */
  used(this: object): number;
  used(this: MetaAllocator): number {
    checkThis(this, 'used');
    this.live();
    return this.shared.labelled;
  }

  /**
   * Σ size of the top-level ranges − used(), never negative, as a bigint. Upstream sums `int`s,
   * so an IPv6 /64 (2^64 − 1 addresses) contributes −1 there; that overflow is not reproduced.
   */
  free(this: object): bigint;
  free(this: MetaAllocator): bigint {
    checkThis(this, 'free');
    this.live();
    this.retryForMemory();
    const used = BigInt(this.shared.labelled);
    const top = this.shared.tops.size;
    return used > top ? 0n : top - used;
  }

  /**
   * The ranges in creation order. A range that the store's cache removes while its readiness is
   * asked (readyNow) is left out; when that destroys this MetaAllocator, ErrDestroyed.
   */
  ranges(this: object): RangeInfo[];
  ranges(this: MetaAllocator): RangeInfo[] {
    checkThis(this, 'ranges');
    this.live();
    this.retryForMemory();
    const out: RangeInfo[] = [];
    for (const e of this.shared.order) {
      const ready = readyNow(e);
      if (e.removed) continue;
      out.push(
        Object.freeze({
          cidr: e.cidr,
          ready,
          serviceCIDRs: Object.freeze([...e.refs]),
          size: e.allocator.size,
          used: e.allocator.used(),
          free: e.allocator.free(),
        }),
      );
    }
    this.live();
    return out;
  }

  /** The CIDRs currently skipped, with their reasons. */
  skipped(this: object): SkippedCIDR[];
  skipped(this: MetaAllocator): SkippedCIDR[] {
    checkThis(this, 'skipped');
    this.live();
    this.retryForMemory();
    return [...this.skips.values()];
  }

  // ── dry run, metrics, lifecycle ───────────────────────────────────────────────────────────

  /**
   * The dry run of a ready range (the first in creation order), or, when none is ready, a view
   * whose allocate/allocateNext answer ErrNotReady (upstream returns an empty, unready Allocator).
   * Like upstream, the view checks against that one range only.
   */
  dryRun(this: object): IPAllocator;
  dryRun(this: MetaAllocator): IPAllocator {
    checkThis(this, 'dryRun');
    this.live();
    this.retryForMemory();
    for (const e of this.shared.order) if (readyNow(e)) return e.allocator.dryRun();
    this.live(); // the store's cache destroyed this while a range's readiness was asked
    return new NotReadyDryRun(this);
  }

  /**
   * The dry run's release when no range is ready: not destroyed (ErrDestroyed), and the text
   * parses (InvalidAddressError); nothing is deleted. @internal for NotReadyDryRun
   */
  checkRelease(ip: string): void {
    this.live();
    parseAddrInto(ip, this.words); // the words are not read: no new array for them
  }

  /**
   * The dry run's allocate when no range is ready (upstream: an empty, unready Allocator's, which
   * answers ErrNotReady whatever the address): ErrDestroyed, the address's text
   * (InvalidAddressError), then the owner's errors. @internal for NotReadyDryRun
   */
  checkAllocate(ip: string, owner: ParentRef | null | undefined): void {
    this.live();
    parseAddrInto(ip, this.words); // the real call refuses the address's text before the owner
    checkParentRef(owner);
    this.live(); // the owner's getters destroyed this: ErrDestroyed, as allocate answers
  }

  /** The dry run's allocateNext when no range is ready: ErrDestroyed, then the owner's errors. @internal for NotReadyDryRun */
  checkAllocateNext(owner: ParentRef | null | undefined): void {
    this.live();
    checkParentRef(owner);
    this.live(); // the owner's getters destroyed this: ErrDestroyed, as allocateNext answers
  }

  /**
   * The dry run's ErrNotReady when no range is ready (upstream's answer), saying why as
   * allocateNext does: a ready range not built for lack of memory (where allocateNext answers
   * OutOfMemoryError), ranges none of which is ready, ServiceCIDRs not synced yet, or no range of
   * this family at all. @internal for NotReadyDryRun
   */
  notReady(): ErrNotReady {
    // a ready range not built for lack of memory is why, as allocateNext's OutOfMemoryError says
    const st = this.starvedRange();
    if (st !== null) return new ErrNotReady(`${notBuilt(st.cidr)} (${BUILT_LATER})`);
    if (this.shared.order.length > 0 || this.starved.size > 0) return new ErrNotReady(NOT_READY_WHY.noRangeReady);
    return new ErrNotReady(this.sourceSynced() ? this.noRange() : NOT_READY_WHY.serviceCIDRsNotSynced);
  }

  /** Why a MetaAllocator without a range of its family cannot allocate, after upstream's text. */
  private noRange(): string {
    return `this MetaAllocator has no ${this.ipFamily} range to allocate from`;
  }

  /**
   * Enables metrics on every range, now and later (each range reports under its own cidr label),
   * in `registry`, or in prom-client's default registry for `true` or none.
   */
  enableMetrics(this: object, registry?: MetricsRegistry | true): void;
  enableMetrics(this: MetaAllocator, registry?: MetricsRegistry | true): void {
    checkThis(this, 'enableMetrics');
    this.live();
    recorderFor(registry, 'registry'); // validates before changing anything
    // the registry's own methods may destroy this (as they may an Allocator): ErrDestroyed then,
    // as an Allocator answers, not a return that looks as if metrics were enabled
    this.live();
    this.shared.metrics = registry ?? true;
    for (const e of this.shared.order) {
      if (e.removed) continue; // destroyed by the registry while an earlier range was enabled
      e.allocator.enableMetrics(registry);
    }
    this.live();
  }

  /**
   * Stops listening to the source and the store and destroys every range. Idempotent; every other
   * method throws (or rejects with) ErrDestroyed afterwards. Called from a strategy's forRange
   * while a ServiceCIDR's ranges are being made, it destroys the range being made too, and the
   * event makes no more; called from onSkip, it ends the event's reports. Called from a range's forRange during a call of ours (a rebuild
   * of its index), it destroys that range once its strategy returns, and the call rejects with
   * ErrDestroyed, nothing allocated.
   */
  destroy(this: object): void;
  destroy(this: MetaAllocator): void {
    checkThis(this, 'destroy');
    if (this.destroyed) return;
    this.shared.destroyed = true;
    // Every step runs whatever an earlier one throws (an unsubscribe of a store or source of your
    // own), and the first error is rethrown at the end: a second destroy() does nothing, so no
    // allocator's memory may depend on it.
    let failure: { error: unknown } | undefined;
    const step = (f: () => void) => {
      try {
        f();
      } catch (error) {
        failure ??= { error };
      }
    };
    step(() => this.unsubscribeSource());
    step(() => this.unsubscribeStore());
    for (const e of this.entries.values()) step(() => this.removeEntry(e));
    this.entries.clear();
    this.router.close(); // something that still holds this object holds no record or range through it
    this.shared.order = [];
    this.shared.tops = new TopLevelPrefixes();
    this.forget();
    if (failure !== undefined) throw failure.error;
  }

  /**
   * Drops what the ServiceCIDRs and the skips left behind (destroy): a destroyed MetaAllocator
   * holds no ServiceCIDR, skip or error alive for whoever still holds it. The allocators left for
   * reap stay: they are freed once their strategy returns.
   */
  private forget(): void {
    this.known.clear();
    this.listing.clear();
    this.dirty.clear();
    this.skips.clear();
    this.shared.unreported = [];
    this.bad.clear();
    this.starved.clear();
    this.shared.memoryWait = null;
  }

  /**
   * A range is gone: its allocator is destroyed, and allocateNext calls that listed it skip it.
   * An allocator whose strategy, random source or cool-down's clock called this (through
   * destroy() or a ServiceCIDR deleted from there) refuses, being inside that call: it is
   * destroyed when the call returns — by the call of ours that reached it (reap), else by a
   * microtask, once the stack that read the clock has unwound (a release's hold, an async
   * store's answer).
   */
  private removeEntry(e: RangeEntry): void {
    e.removed = true;
    try {
      e.allocator.destroy();
    } catch (err) {
      if (!(err instanceof InvalidArgumentError)) throw err;
      this.shared.undestroyed.push(e.allocator);
      queueMicrotask(() => this.reap());
    }
  }

  /**
   * The random source of the range `slot` holds: each draw from one of your own is a call into
   * the range's code of yours, as each of its strategy's calls is (callGuarded).
   */
  private rangeRandom(slot: RangeSlot): RandomSource {
    return guardedSource(this.random, { draw: (source) => this.callGuarded(() => source.nextU32(), slot) });
  }

  /**
   * Makes `call`, a call into the strategy or random source of the range `slot` holds, then,
   * once it returned, refuseIfRangeLeft: that is code of yours, which may delete or mark the
   * range's ServiceCIDR while the range chooses, and the range must not go on to take an address
   * then. What it throws is marked as its own (callYourCode) and reaches the caller as it is.
   * What guardedStrategy wraps around each of the strategy's calls, and rangeRandom around each
   * draw. A read of the range's cool-down clock is made through callYourCode alone: the range
   * reads it outside a choice too (a release starting a hold, 'weighted' weighing the range),
   * where the range leaving is no refusal; in a choice, the chooser's call that follows is checked.
   */
  private callGuarded<T>(call: () => T, slot: RangeSlot): T {
    const answer = callYourCode(call);
    this.refuseIfRangeLeft(slot);
    return answer;
  }

  /**
   * Throws when the range `slot` holds left allocation during the call into its strategy (forRange,
   * choose, taken) or random source that just returned; runs after each (callGuarded,
   * rangeRandom), as that code of yours may have changed the ServiceCIDRs. ErrDestroyed when the
   * call destroyed this MetaAllocator (nothing is made or allocated after it); and when it took
   * the range out of allocation, its ServiceCIDRs deleted (ErrDestroyed naming the range) or none
   * of them allocatable any more (ErrNotReady), as a deletion or its deletionTimestamp does —
   * marked as its own (LEFT_ALLOCATION). No address is chosen in a range whose ServiceCIDR is
   * being deleted: the range's call fails with nothing taken, allocateNext goes on to the next
   * range (tryNext), and allocate(ip) to another ready range holding the address. A range being
   * made (`slot` still empty) is not checked: the event making it settles what its forRange
   * changed.
   */
  private refuseIfRangeLeft(slot: RangeSlot): void {
    this.live();
    const e = slot.entry;
    if (e === null || (!e.removed && e.ready)) return;
    const refusal = e.removed
      ? new ErrDestroyed(`Allocator ${e.cidr}`, `is being destroyed (${LEFT_DURING_CHOICE.removed})`)
      : new ErrNotReady(LEFT_DURING_CHOICE.unready);
    LEFT_ALLOCATION.add(refusal);
    throw refusal;
  }

  /**
   * Destroys the allocators destroy() left for later (see removeEntry), now that no strategy of
   * theirs runs. Any other error of a destroy (a metrics registry that throws as the range's
   * gauges leave it) is rethrown asynchronously, as onSkip's errors are: reap runs at the end of
   * a call of ours, whose answer is the call's own, or in a microtask.
   */
  private reap(): void {
    if (this.shared.undestroyed.length === 0) return;
    const left = this.shared.undestroyed;
    this.shared.undestroyed = [];
    for (const a of left) {
      try {
        a.destroy();
      } catch (e) {
        // still inside its strategy (a call within a call), nothing changed: the outer one reaps
        // it; anything else (a metrics registry of yours refusing as its gauges leave, an
        // InvalidArgumentError too) came from a destroy that went through, and is not lost
        if (isInsideRefusal(e)) this.shared.undestroyed.push(a);
        else rethrowLater(e);
      }
    }
  }

  /** `using meta = new MetaAllocator(…)`: destroy() at the end of the scope. */
  [Symbol.dispose](this: object): void;
  [Symbol.dispose](this: MetaAllocator): void {
    checkThis(this, '[Symbol.dispose]');
    this.destroy();
  }

  /**
   * What console.log and util.inspect show, in Node and Deno: the family, the ranges' CIDRs and
   * used (inspection). Read from the fields as they are: ranges() and free() may first retry a
   * rebuild that waits for memory, which an inspection must not set off.
   */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](this: MetaAllocator, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string {
    const live = () => {
      this.live();
      return { ranges: this.shared.order.filter((e) => !e.removed).map((e) => e.cidr), used: this.shared.labelled };
    };
    return inspection(this, MetaAllocator, 'MetaAllocator', () => ({ ipFamily: this.ipFamily }), live, depth, options, inspect);
  }

  private get destroyed(): boolean {
    return this.shared.destroyed;
  }

  private live(): void {
    if (this.destroyed) throw new ErrDestroyed(`MetaAllocator ${this.ipFamily}`);
  }

  /**
   * Ends the running searches of every range at their next collision, with ErrDestroyed (which
   * allocateNext rejects with), and every later one at its first, in the ranges made since too:
   * the owner (a DualStackAllocator) is about to destroy this. See STOP_SEARCHES. @internal
   */
  [STOP_SEARCHES](): void {
    this.shared.stopping = true;
    for (const e of this.entries.values()) e.allocator[STOP_SEARCHES]();
  }

  // ── events ────────────────────────────────────────────────────────────────────────────────

  private onServiceCIDR(delivered: ServiceCIDR): void {
    if (this.destroyed) return;
    const sc = readServiceCIDR(delivered); // before anything changes: unreadable input changes nothing
    if (this.destroyed) return; // by its getters: a destroyed MetaAllocator keeps no ServiceCIDR
    try {
      this.applyServiceCIDR(sc);
    } finally {
      this.report();
    }
  }

  /** onServiceCIDR once `sc` is read: its CIDRs of our family resolved, then sync(). */
  private applyServiceCIDR(sc: ServiceCIDR): void {
    const ours: { key: string; text: string }[] = [];
    const cidrs: readonly unknown[] = Array.isArray(sc.cidrs) ? sc.cidrs : [];
    // An update: what it no longer lists is skipped no more (what it still lists stays skipped,
    // reported once); a skip is named by the CIDR's text as listed, '' for a spec with none.
    const listed = new Set(cidrs.map((text) => (typeof text === 'string' ? text : quoteInput(text))));
    if (cidrs.length === 0) listed.add('');
    for (const [key, s] of [...this.skips]) if (s.serviceCIDR === sc.name && !listed.has(s.cidr)) this.skips.delete(key);
    for (const text of cidrs) {
      let family: Family;
      try {
        family = parsePrefix(text).family;
      } catch (e) {
        this.skip(sc.name, typeof text === 'string' ? text : quoteInput(text), e as Error);
        continue;
      }
      if (family !== this.fam) continue;
      ours.push({ key: Prefix.parse(text).cidr, text: text as string });
    }
    if (cidrs.length === 0) {
      // Nothing was parsed, so the report names the ServiceCIDR, not a ParsePrefix call.
      const got = Array.isArray(sc.cidrs) ? 'is empty' : `is ${quoteInput(sc.cidrs)}, not an array`;
      this.skip(sc.name, '', new InvalidArgumentError(`ServiceCIDR ${quoteInput(sc.name)} lists no CIDRs (spec.cidrs ${got})`));
    }
    const k = this.known.get(sc.name);
    this.relist(sc.name, k?.ours ?? [], ours);
    if (k !== undefined) {
      k.sc = sc;
      k.ours = ours;
    } else {
      this.known.set(sc.name, { sc, seq: this.shared.seq++, ours });
    }
    this.sync();
  }

  /**
   * Moves the ServiceCIDR `name` in `listing` from the CIDRs it listed (`before`) to those it
   * lists (`after`), and marks all of them dirty: the ranges of its CIDRs are the only ones
   * whose references, readiness or place in creation order it can change. A name that stays
   * listed keeps its place in the CIDR's set.
   */
  private relist(name: string, before: readonly { key: string }[], after: readonly { key: string }[]): void {
    for (const { key } of before) {
      this.dirty.add(key);
      if (after.some((o) => o.key === key)) continue;
      const names = this.listing.get(key);
      if (names === undefined) continue;
      names.delete(name);
      if (names.size === 0) this.listing.delete(key);
    }
    for (const { key } of after) {
      this.dirty.add(key);
      let names = this.listing.get(key);
      if (names === undefined) this.listing.set(key, (names = new Set()));
      names.add(name);
    }
  }

  private onServiceCIDRDeleted(delivered: ServiceCIDR): void {
    if (this.destroyed) return;
    const name = serviceCIDRName(delivered);
    if (this.destroyed) return; // by its getters
    const k = this.known.get(name);
    if (k === undefined) return;
    this.known.delete(name);
    // a CIDR a pass cut short by a throw left dirty stays so: another ServiceCIDR may list it still
    const pending = new Set(k.ours.filter(({ key }) => this.dirty.has(key)).map(({ key }) => key));
    this.relist(name, k.ours, []);
    for (const [key, s] of [...this.skips]) if (s.serviceCIDR === name) this.skips.delete(key);
    if (this.shared.syncing) {
      this.sync(); // delivered while the ranges are being made: that run takes the delete in
      return;
    }
    // A delete builds nothing (ranges waiting on memory are tried at the next add or update, or
    // by retryForMemory): its CIDRs are settled here, so they are not dirty any more (unless pending).
    const leaving: RangeEntry[] = [];
    const arriving: [RangeEntry, Rank][] = [];
    try {
      this.settleDeleted(name, k.ours, pending, leaving, arriving);
    } finally {
      if (!this.destroyed) this.reorder(leaving, arriving); // even when a range's removal threw
    }
  }

  /**
   * onServiceCIDRDeleted's bookkeeping of the CIDRs the ServiceCIDR `name` listed (`ours`); those
   * `pending` were dirty before the delete, and are left for the next pass.
   */
  private settleDeleted(
    name: string,
    ours: readonly { key: string }[],
    pending: ReadonlySet<string>,
    leaving: RangeEntry[],
    arriving: [RangeEntry, Rank][],
  ): void {
    for (const { key } of ours) {
      if (!pending.has(key)) this.dirty.delete(key);
      const st = this.starved.get(key);
      if (st !== undefined) {
        st.refs.delete(name);
        if (st.refs.size === 0) this.starved.delete(key);
        else st.ready = this.readyFor(st.refs);
      }
      const e = this.entries.get(key);
      if (e === undefined || !e.refs.has(name)) continue; // a CIDR listed twice: settled at the first
      // the ServiceCIDRs listing it now, not e.refs less this one: a pass cut short by a throw
      // may have left e.refs naming one that no longer lists it (its rank would then have none),
      // or missing one that lists it since
      const names = this.listing.get(key);
      leaving.push(e);
      if (names === undefined) {
        this.dropEntry(e);
        continue;
      }
      for (const n of [...e.refs]) if (!names.has(n)) e.refs.delete(n);
      for (const n of names) e.refs.add(n);
      e.ready = this.readyFor(e.refs); // the ServiceCIDRs left decide
      e.allocator.setReady(e.ready);
      this.shared.weighChanges++;
      arriving.push([e, this.rankOf(key)]); // its first ServiceCIDR may have been this one
    }
  }

  /**
   * Builds the ranges skipped for lack of WASM memory again (sync) when they may fit since: the
   * headroom grew past what it was when they failed (the cap was raised, or an index freed
   * memory), or the records they would index dropped (as an Allocator decides when to rebuild an
   * index it dropped). O(1) otherwise, so every call that reads the ranges asks first.
   */
  private retryForMemory(): void {
    const wait = this.shared.memoryWait;
    if (wait === null || this.destroyed || (memoryHeadroom() <= wait.headroom && this.shared.labelled >= wait.records)) return;
    try {
      this.sync();
    } finally {
      this.report();
    }
    this.live(); // a range's strategy destroyed this while it was built: the call ends with ErrDestroyed
  }

  /**
   * Upstream syncAllocators, run whole: an event delivered while it runs (by a range's strategy,
   * whose forRange runs as the range is made, to a source of your own that delivers at once)
   * updates the ServiceCIDRs known and leaves the ranges to this run, which goes over them again
   * once it is done. Each pass works from the ServiceCIDRs as they were when it began: one
   * nested inside it would make a range the pass then makes again, or drop references the
   * nested event added.
   */
  private sync(): void {
    if (this.shared.syncing) {
      this.shared.resync = true;
      return;
    }
    this.shared.syncing = true;
    try {
      do {
        this.shared.resync = false;
        this.syncPass();
      } while (this.shared.resync && !this.destroyed);
    } finally {
      this.shared.syncing = false;
    }
  }

  /**
   * One pass of sync(): the CIDRs changed since the last pass (dirty) and those waiting on memory
   * (tried again at every change, as upstream recomputes what to add at every event), in the
   * order their first ServiceCIDR arrived, then in that ServiceCIDR's list. Every other range is
   * as the pass would leave it: its ServiceCIDRs have not changed since it was last looked at.
   */
  private syncPass(): void {
    // set again below by a range that still cannot get memory; null meanwhile, so a call back in
    // from a range being built (its strategy) does not start another sync
    this.shared.memoryWait = null;
    const keys = [...new Set([...this.dirty, ...this.starved.keys()])];
    this.dirty.clear();
    this.starved.clear();
    let passed = false;
    try {
      this.syncKeys(keys);
      passed = true;
    } finally {
      // a pass cut short by a throw leaves its CIDRs for the next one (looking again is harmless)
      if (!passed && !this.destroyed) for (const key of keys) this.dirty.add(key);
    }
  }

  /** syncPass on `keys`: their ranges made, updated or removed, and placed in creation order. */
  private syncKeys(keys: string[]): void {
    const wanted = new Map<string, { refs: Set<string>; ready: boolean; texts: [string, string][]; rank: Rank }>();
    const gone: string[] = [];
    for (const key of this.inArrivalOrder(keys)) {
      const names = this.listing.get(key);
      if (names === undefined) {
        gone.push(key);
        continue;
      }
      const w = { refs: new Set<string>(), ready: false, texts: [] as [string, string][], rank: this.rankOf(key) };
      for (const name of [...names].sort((a, b) => this.known.get(a)!.seq - this.known.get(b)!.seq)) {
        w.refs.add(name);
        for (const o of this.known.get(name)!.ours) if (o.key === key) w.texts.push([name, o.text]);
      }
      wanted.set(key, w);
    }
    // now, from the ServiceCIDRs as the pass began (an event nested in it changes `known`)
    for (const w of wanted.values()) w.ready = this.readyFor(w.refs);
    const leaving: RangeEntry[] = [];
    const arriving: [RangeEntry, Rank][] = [];
    try {
      // A CIDR no ServiceCIDR lists any more (spec.cidrs is immutable in the API; defensive).
      for (const key of gone) {
        const e = this.entries.get(key);
        if (e === undefined) continue;
        leaving.push(e);
        this.dropEntry(e);
      }
      for (const [key, w] of wanted) {
        const e = this.entries.get(key);
        if (e !== undefined) {
          for (const name of [...e.refs]) if (!w.refs.has(name)) e.refs.delete(name);
          for (const name of w.refs) e.refs.add(name);
          e.ready = w.ready;
          e.allocator.setReady(e.ready);
          this.shared.weighChanges++;
          leaving.push(e);
          arriving.push([e, w.rank]);
          continue;
        }
        if (this.destroyed) return; // by an earlier range's strategy: the ranges left to make are not made
        const slot: RangeSlot = { entry: null };
        let a: Allocator;
        try {
          // a range no Allocator serves is refused here, so the reason is rangeSkipReason's, as the CLI shows it
          const failed = this.bad.get(key) ?? rangeSkipReason(Prefix.parse(key));
          if (failed !== undefined) throw failed;
          const options: IndexedAllocatorOptions = { store: this.store, random: this.rangeRandom(slot) };
          if (this.indexKind !== undefined) options.index = this.indexKind;
          if (this.strategy !== STRATEGIES.upstream)
            options.strategy = guardedStrategy(this.strategy, (call) => this.callGuarded(call, slot), callYourCode);
          if (this.shared.metrics !== undefined) options.metrics = this.shared.metrics;
          a = Allocator.create(key, options, this.router);
        } catch (err) {
          if (this.destroyed) return; // by its strategy's forRange (ErrDestroyed from guard): nothing to report
          const reason = err as Error;
          // A CIDR no Allocator can serve fails the same way every time; a lack of WASM memory is
          // passing, so that CIDR is tried again at the next change of the ServiceCIDRs (upstream
          // recomputes what to add at every event), or sooner, once the headroom grew or the records
          // dropped (retryForMemory).
          if (err instanceof OutOfMemoryError) {
            this.waitForMemory();
            this.starved.set(key, { prefix: Prefix.parse(key), refs: w.refs, ready: w.ready, reason: err });
          } else this.bad.set(key, reason);
          for (const [name, text] of w.texts) this.skip(name, text, reason);
          continue;
        }
        if (this.destroyed) {
          // by its strategy's forRange: destroy() freed the ranges it knew, not this one yet
          a.destroy();
          return;
        }
        a.setReady(w.ready);
        if (this.shared.stopping) a[STOP_SEARCHES](); // a range made since: its searches would be the call's next
        const made: RangeEntry = {
          cidr: key,
          allocator: a,
          refs: w.refs,
          removed: false,
          ready: w.ready,
          rank: w.rank,
          pos: -1,
          route: null,
          size53: a.size <= TWO53_BIG ? Number(a.size) : -1,
        };
        slot.entry = made;
        this.entries.set(key, made);
        made.route = this.router.attach(a.prefix, made);
        this.shared.tops.add(a.prefix);
        arriving.push([made, made.rank]);
        for (const [name, text] of w.texts) this.skips.delete(skipKey(name, text)); // skipped before for lack of memory
      }
    } finally {
      // the ranges changed so far take their place, even when a range's removal threw
      // (destroyed meanwhile: destroy() emptied the order, which stays empty)
      if (!this.destroyed) this.reorder(leaving, arriving);
    }
  }

  /**
   * `keys` in the order a pass over every known ServiceCIDR, in arrival order, each one's CIDRs
   * in its list, would first meet them (those no ServiceCIDR lists, last).
   */
  private inArrivalOrder(keys: string[]): string[] {
    if (keys.length <= 1) return keys;
    const at = new Map<string, [number, number]>();
    for (const key of keys) {
      const names = this.listing.get(key);
      let first: KnownServiceCIDR | undefined;
      for (const name of names ?? []) {
        const k = this.known.get(name)!;
        if (first === undefined || k.seq < first.seq) first = k;
      }
      at.set(key, first === undefined ? [Infinity, 0] : [first.seq, first.ours.findIndex((o) => o.key === key)]);
    }
    return keys.sort((a, b) => {
      const x = at.get(a)!;
      const y = at.get(b)!;
      return x[0] - y[0] || x[1] - y[1];
    });
  }

  /**
   * Whether a range listed by the ServiceCIDRs named `refs` may allocate: some known one is
   * allocatable (upstream: "ready if any of them is"). The one place readiness is worked out.
   */
  private readyFor(refs: Iterable<string>): boolean {
    for (const ref of refs) {
      const k = this.known.get(ref);
      if (k !== undefined && serviceCIDRAllocatable(k.sc)) return true;
    }
    return false;
  }

  /** Notes a range this pass could not build for lack of memory: the lowest headroom of its failures, and the records now. */
  private waitForMemory(): void {
    const headroom = Math.min(this.shared.memoryWait?.headroom ?? Infinity, memoryHeadroom());
    this.shared.memoryWait = { headroom, records: this.shared.labelled };
  }

  /**
   * Where the range of `key` goes in creation order now (see Rank): the first in creation order
   * of the known ServiceCIDRs listing it. As a sort of every ServiceCIDR, each one's CIDRs in its
   * list, would first meet it.
   */
  private rankOf(key: string): Rank {
    let first: KnownServiceCIDR | undefined;
    for (const name of this.listing.get(key) ?? []) {
      const k = this.known.get(name)!;
      if (first === undefined || byCreation(k, first) < 0) first = k;
    }
    if (first === undefined) throw new Error(`MetaAllocator: the range ${key} is placed while no ServiceCIDR lists it`);
    return { sc: first.sc, seq: first.seq, index: first.ours.findIndex((o) => o.key === key) };
  }

  /**
   * A new `order`: the ranges `leaving` taken out (removed, or about to move), then those
   * `arriving` put in at their rank. A binary search each, in one copy of the list: ranges added
   * in creation order, as a source replays and creates them, go to the end.
   */
  private reorder(leaving: readonly RangeEntry[], arriving: readonly [RangeEntry, Rank][]): void {
    if (leaving.length === 0 && arriving.length === 0) return;
    const order = this.shared.order.slice();
    let moved = order.length; // the first index whose range may have moved: `pos` is set from there
    for (const e of leaving) {
      let i = rankIndex(order, e.rank);
      // ranks tie when a change cut short by a throw left a range with the rank it had, which a
      // range placed since took (the same ServiceCIDR and index): it is among those of that rank
      while (order[i] !== e && i + 1 < order.length && compareRank(order[i + 1]!.rank, e.rank) === 0) i++;
      if (order[i] !== e) throw new Error(`MetaAllocator: the range ${e.cidr} is not where its rank puts it`);
      order.splice(i, 1);
      moved = Math.min(moved, i);
    }
    for (const [e, rank] of arriving) {
      if (e.removed) continue; // removed later in the same change
      e.rank = rank;
      const i = rankIndex(order, rank);
      order.splice(i, 0, e);
      moved = Math.min(moved, i);
    }
    for (let i = moved; i < order.length; i++) order[i]!.pos = i;
    this.shared.order = order;
  }

  /** A range is gone: destroyed (removeEntry) and out of `entries` and the top-level size. */
  private dropEntry(e: RangeEntry): void {
    this.entries.delete(e.cidr);
    if (e.route !== null) this.router.drop(e.route); // no event reaches it, even while its allocator waits to be destroyed (removeEntry)
    e.route = null;
    this.shared.tops.delete(e.allocator.prefix);
    this.removeEntry(e);
  }

  /** Records a CIDR that cannot be served; onSkip hears of it once the event is done (report). */
  private skip(serviceCIDR: string, cidr: string, reason: Error): void {
    if (this.destroyed) return;
    const key = skipKey(serviceCIDR, cidr);
    if (this.skips.has(key)) return;
    const s: SkippedCIDR = Object.freeze({ serviceCIDR, cidr, reason });
    this.skips.set(key, s);
    if (this.onSkip !== undefined) this.shared.unreported.push(s);
  }

  /**
   * Gives onSkip the skips recorded and still skipped, in order. An onSkip that delivers another event reports
   * that event's skips, and those left of this one, from there: each is reported once. An event
   * delivered while ranges are being made (by a range's strategy) leaves its skips to the run
   * making them, which reports them once it is done: onSkip never sees ranges half made.
   */
  private report(): void {
    if (this.shared.syncing) return;
    while (this.shared.unreported.length > 0) {
      if (this.destroyed) {
        this.shared.unreported = []; // by an earlier onSkip: nothing more to report
        return;
      }
      const s = this.shared.unreported.shift()!;
      // no longer skipped (its ServiceCIDR deleted from an earlier onSkip, or its range made
      // since): what onSkip hears is what skipped() lists
      if (this.skips.get(skipKey(s.serviceCIDR, s.cidr)) !== s) continue;
      try {
        this.onSkip!(s);
      } catch (e) {
        // A failing report must not stop the range bookkeeping (or a constructor mid-replay):
        // surface it the way a store surfaces a failing watcher by default.
        rethrowLater(e);
      }
    }
  }
}

const EMPTY_WEIGHTS = new Float64Array(0);

/**
 * Where one allocateNext call stands, so that its search (MetaAllocator.walk) can stop at a range
 * that answers with a promise and go on from the same place once it has answered.
 */
class NextCall {
  /** The ranges of this pass: the MetaAllocator's list as it was when the pass began. */
  list: readonly RangeEntry[] = [];
  /**
   * The random policies draw from `pool` (null: `list` in order) as a Fisher–Yates shuffle does,
   * without a copy: the untried ranges are positions [0, next) of the pool, each holding the
   * pool's own range unless `moved` says otherwise. A drawn range's place goes to the last
   * untried one:
   *
   *   untried  [ a  b  c  d  e ]   draw 1 (b)  →  [ a  e  c  d ] b    moved {1: e}
   *
   * That move is made at the next draw (`vacated` until then): a call whose first range answers
   * makes no map.
   */
  pool: readonly RangeEntry[] | null = null;
  moved: Map<number, RangeEntry> | null = null;
  vacated = -1;
  /** In order: the index in `list` of the next range; drawn: how many of the pool are untried. */
  next = 0;
  /** Ranges tried in earlier passes (null during the first): a later pass skips them. */
  tried: Set<RangeEntry> | null = null;
  /** A range tried answered full; one answered not ready: what the call answers when none is left. */
  full = false;
  /** Why the first range that answered full and sees part of itself only had nothing free (Allocator.fullWhy). */
  fullWhy: string | undefined = undefined;
  notReady = false;
  /**
   * The first pass takes free addresses only: under a cool-down, a range whose free addresses
   * are all held answers full there, so that another range's free address comes first. Null in
   * the second pass, run only when some range held addresses back (heldBack): their early
   * return, in the same policy order. Without a cool-down nothing is ever held back: one pass.
   */
  freeOnly: FreeOnlyPass | null = { heldBack: false };
  /** The 'weighted' policy's weights of the untried ranges, by position (made at its first draw). */
  weights = EMPTY_WEIGHTS;
  /**
   * The 'weighted' policy found every untried range of this pass weightless, and none can gain
   * weight while shared.weighChanges stays at this value (pickWeighted says why): its next draws
   * take the last untried range without weighing them again until it moves. −1: weigh at every
   * draw; set back by a new pass.
   */
  weightlessAt = -1;
  /** The owner as checked once: every range tried gets this copy. */
  constructor(readonly owner: ParentRef | undefined) {}

  /** The untried range at position i (< next). */
  untried(i: number): RangeEntry {
    return this.moved?.get(i) ?? this.pool![i]!;
  }

  /** Makes the last draw's move: the range last in the untried positions takes the drawn one's place. */
  settle(): void {
    const i = this.vacated;
    if (i < 0) return;
    this.vacated = -1;
    const last = this.next; // the untried are [0, next): the last one was at `next` before the draw
    if (i !== last) (this.moved ??= new Map()).set(i, this.untried(last));
  }
}

/**
 * allocateNext on one range: the address, or null when the caller should try the next range
 * (`call` notes whether it was full or not ready). On a store with synchronous operations the
 * answer is immediate (no promise, and a full range builds no ErrFull); otherwise a promise of it.
 */
function tryNext(e: RangeEntry, call: NextCall): string | null | Promise<string | null> {
  // not ready: what its allocateNext would answer (ErrNotReady); removed: it went away while the
  // call tried an earlier one, or while its readiness was asked (neither full nor not ready)
  if (!readyNow(e)) {
    if (!e.removed) call.notReady = true;
    return null;
  }
  const a = e.allocator;
  if (!a.canAllocateNow) return tryNextAsync(e, call);
  let r: string | NoAddress;
  try {
    r = a[ALLOCATE_NEXT_NOW](call.owner, call.freeOnly);
  } catch (err) {
    return rangeRefused(e, call, err);
  }
  if (typeof r === 'string') return r;
  noAddressIn(e, call, r);
  return null;
}

/**
 * What the range `e`'s allocateNext answered without an address, noted on `call` alike on both
 * paths: FULL (ErrFull), or else not ready (ErrNotReady): when asked (NOT_READY), or no longer
 * after a create collided (NO_LONGER_READY: setReady(false) by its ServiceCIDRs, its store's
 * cache not synced any more).
 */
function noAddressIn(e: RangeEntry, call: NextCall, r: NoAddress): void {
  if (r !== FULL) {
    call.notReady = true;
    return;
  }
  call.full = true;
  if (!e.removed) call.fullWhy ??= e.allocator.fullWhy();
}

/**
 * What tryNext and tryNextAsync make of the error `err` of the range `e`'s allocateNext: null
 * (the next range is tried) when it is the range's own refusal, nothing taken — refuseIfRangeLeft's
 * (isLeftAllocation: its ServiceCIDRs deleted or made not allocatable by its strategy, random
 * source or cool-down clock — a clock's change is refused at the chooser's call that follows it;
 * not ready, unless deleted), or its allocator's answer (isSearchAnswer): ErrFull or
 * ErrNotReady (noAddressIn). An ErrDestroyed once the range is removed too, unless its strategy,
 * random source or cool-down clock threw it (YOUR_CODE_THREW): its search stopped at the next
 * address (deleted during a store call), or its store was closed after the range's removal or
 * this MetaAllocator's destroy(), which then answers for itself (walk). Anything else — ErrFull
 * or ErrNotReady thrown by its strategy or its store too, and its strategy's, random source's or
 * clock's own ErrDestroyed — is the call's error, and is thrown.
 */
function rangeRefused(e: RangeEntry, call: NextCall, err: unknown): null {
  if (isLeftAllocation(err)) {
    if (!e.removed) call.notReady = true;
    return null;
  }
  if (isSearchAnswer(err) && (err instanceof ErrFull || err instanceof ErrNotReady)) {
    noAddressIn(e, call, err instanceof ErrFull ? FULL : NOT_READY);
    return null;
  }
  if (e.removed && err instanceof ErrDestroyed && !YOUR_CODE_THREW.has(err)) return null;
  throw err;
}

/**
 * Number(e.allocator.free()), in numbers when the size is exact as one (size53); with `freeOnly`
 * (the pass that takes free addresses only), less those a cool-down holds back, which that pass
 * does not take: counted as free, a range of held addresses would be drawn as if it had room.
 */
function freeOf(e: RangeEntry, freeOnly: boolean): number {
  const held = freeOnly ? e.allocator.heldByCoolDown() : 0;
  if (e.size53 < 0) return Math.max(0, Number(e.allocator.free()) - held);
  const taken = e.allocator.used() + held;
  return taken > e.size53 ? 0 : e.size53 - taken;
}

/**
 * Whether the range can allocate now (its allocator's isReady()); false for a removed range. The
 * one place that asks: isReady() asks the store's cache whether it has synced, and code there (a
 * watcher-driven ServiceCIDR source) may delete the range's ServiceCIDR, which destroys its
 * allocator, so a range is read after the question only when this answered true or it checks
 * `removed` itself.
 */
function readyNow(e: RangeEntry): boolean {
  return !e.removed && e.allocator.isReady() && !e.removed;
}

async function tryNextAsync(e: RangeEntry, call: NextCall): Promise<string | null> {
  try {
    return await e.allocator.allocateNextFreeOnly(call.owner, call.freeOnly);
  } catch (err) {
    return rangeRefused(e, call, err);
  }
}

/**
 * Why a MetaAllocator skips the range of `p` (the reason skipped() and onSkip give), or undefined
 * when it makes an Allocator for it: rangeRefusal, the error an Allocator of that range throws.
 * The command line's `status` and `map` refuse a range with this, so they show what a
 * MetaAllocator serves.
 * @internal
 */
export function rangeSkipReason(p: Prefix): InvalidRangeError | undefined {
  return rangeRefusal(p);
}

/** Creation order (compareCreation), then arrival order. */
function byCreation(a: KnownServiceCIDR, b: KnownServiceCIDR): number {
  return compareCreation(a.sc, b.sc) || a.seq - b.seq;
}

/** The order of two ranks: their ServiceCIDRs' (byCreation), then the CIDRs' index in the first. */
function compareRank(a: Rank, b: Rank): number {
  return compareCreation(a.sc, b.sc) || a.seq - b.seq || a.index - b.index;
}

/** The first index of `order` (sorted by rank) whose range ranks at or after `rank`; the end first, where most ranges go. */
function rankIndex(order: readonly RangeEntry[], rank: Rank): number {
  const n = order.length;
  if (n === 0 || compareRank(order[n - 1]!.rank, rank) < 0) return n;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareRank(order[mid]!.rank, rank) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * DryRun with no ready range: allocations answer ErrNotReady, reads go to the MetaAllocator.
 * Malformed address text is refused with InvalidAddressError first, as the MetaAllocator's own
 * allocate and release refuse it, and as the dry runs of a Range or an Allocator do.
 */
class NotReadyDryRun implements IPAllocator {
  readonly cidr = '';
  constructor(private readonly meta: MetaAllocator) {
    markDryRun(this);
  }
  get ipFamily(): IPFamily {
    return viewOf(this, 'ipFamily').meta.ipFamily;
  }
  get size(): bigint {
    return viewOf(this, 'size').meta.size;
  }
  allocate(this: object, ip: string, owner?: ParentRef | null): Promise<void>;
  async allocate(this: NotReadyDryRun, ip: string, owner?: ParentRef | null): Promise<void> {
    checkViewThis(this, 'allocate');
    this.meta.checkAllocate(ip, owner);
    throw this.meta.notReady();
  }
  allocateNext(this: object, owner?: ParentRef | null): Promise<string>;
  async allocateNext(this: NotReadyDryRun, owner?: ParentRef | null): Promise<string> {
    checkViewThis(this, 'allocateNext');
    this.meta.checkAllocateNext(owner);
    throw this.meta.notReady();
  }
  /**
   * Whether tryAllocateNextNow() may be used, as a ready MetaAllocator's dry run (its range's
   * Allocator's, on the same store) says: true on a store with synchronous operations. Throws
   * ErrDestroyed once the MetaAllocator is destroyed.
   */
  get canAllocateNow(): boolean {
    const { meta } = viewOf(this, 'canAllocateNow');
    meta.checkAllocateNext(null); // no owner to check: ErrDestroyed only
    return meta.store.sync != null;
  }
  /**
   * As allocateNext() here, in one synchronous step: null where allocateNext() rejects with
   * ErrNotReady, as a not-ready Allocator's tryAllocateNextNow() answers. Refuses, in this order:
   * a destroyed MetaAllocator (ErrDestroyed), a store without synchronous operations
   * (InvalidArgumentError: canAllocateNow is false), a malformed owner.
   */
  tryAllocateNextNow(this: object, owner?: ParentRef | null): string | null;
  tryAllocateNextNow(this: NotReadyDryRun, owner?: ParentRef | null): string | null {
    checkViewThis(this, 'tryAllocateNextNow');
    if (!this.canAllocateNow) {
      throw new InvalidArgumentError(`tryAllocateNextNow needs a store with synchronous operations (MetaAllocator ${this.meta.ipFamily})`);
    }
    this.meta.checkAllocateNext(owner);
    return null;
  }
  release(this: object, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void>;
  async release(this: NotReadyDryRun, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void> {
    checkViewThis(this, 'release');
    this.meta.checkRelease(ip);
    deleteErrorHandler(onDeleteError);
  }
  has(this: object, ip: string): Promise<boolean>;
  async has(this: NotReadyDryRun, ip: string): Promise<boolean> {
    checkViewThis(this, 'has');
    return this.meta.has(ip);
  }
  forEach(this: object, fn: (ip: string) => void): void;
  forEach(this: NotReadyDryRun, fn: (ip: string) => void): void {
    checkViewThis(this, 'forEach');
    this.meta.forEach(fn);
  }
  used(this: object): number;
  used(this: NotReadyDryRun): number {
    checkViewThis(this, 'used');
    return this.meta.used();
  }
  free(this: object): bigint;
  free(this: NotReadyDryRun): bigint {
    checkViewThis(this, 'free');
    return this.meta.free();
  }
  dryRun(this: object): IPAllocator;
  dryRun(this: NotReadyDryRun): IPAllocator {
    checkViewThis(this, 'dryRun');
    return this;
  }
  enableMetrics(this: object, _registry?: unknown): void;
  enableMetrics(this: NotReadyDryRun, _registry?: unknown): void {
    checkViewThis(this, 'enableMetrics');
  }
  destroy(this: object): void;
  destroy(this: NotReadyDryRun): void {
    checkViewThis(this, 'destroy');
  }

  /**
   * What console.log and util.inspect show, in Node and Deno: the family and used of the
   * MetaAllocator it views, or that it is destroyed (inspection). Named DryRunAllocator, as its
   * errors name it: the type users see (this class is not exported).
   */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](this: NotReadyDryRun, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string {
    const live = () => ({ used: this.meta.used() });
    return inspection(this, NotReadyDryRun, 'DryRunAllocator', () => ({ ipFamily: this.meta.ipFamily }), live, depth, options, inspect);
  }
}

/**
 * What allocate, allocateNext and release reject with once they failed (unboundOr): a call
 * without its object fails at its first read of `this`, and a check first would cost every call
 * (≈ 6 % of an allocateNext + release).
 */
function orUnbound(error: unknown, self: unknown, method: string): unknown {
  return unboundOr(error, self, MetaAllocator, 'MetaAllocator', method);
}

/** Refuses a call of a MetaAllocator's method without its object (unboundCall), as the allocators answer it. */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof MetaAllocator)) throw unboundCall(self, 'MetaAllocator', method);
}

/**
 * Refuses a call of a view's method without its object (unboundCall), naming the view as a
 * ready MetaAllocator's is named: DryRunAllocator, the type users see (this class is not exported).
 */
function checkViewThis(self: unknown, method: string): void {
  if (!(self instanceof NotReadyDryRun)) throw unboundCall(self, 'DryRunAllocator', method);
}

/** `self`, a view whose getter is read, or the getter's unboundRead when it is none (checkViewThis). */
function viewOf(self: unknown, getter: string): NotReadyDryRun {
  if (!(self instanceof NotReadyDryRun)) throw unboundRead(self, 'DryRunAllocator', getter);
  return self;
}

// Compile-time conformance (upstream `var _ Interface = &MetaAllocator{}`).
const _conforms: (a: MetaAllocator) => IPAllocator = (a) => a;
void _conforms;
