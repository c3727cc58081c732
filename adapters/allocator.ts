// Allocator: the product. Upstream's contract, draws and answers (ipallocator.go; its oracle here
// is ReferenceAllocator), with a WASM index of taken addresses in place of a cache lookup per
// candidate.
//
//   first                        offsetAddress                                          last
//     │◂──── lower (static) ─────▸│◂──────────────── upper (dynamic) ───────────────────▸│
//
//   allocateNext: draw a start in the upper band as upstream does, take the first address from
//   there the index does not hold (wrapping inside the band), create its record. AlreadyExists →
//   keep it marked until the call ends and go on after it; any other error → un-mark and abort.
//   Upper band exhausted → the same in the lower band (adapters/space.ts).
//
// The store is the source of truth; creating the record named by the address is the only lock.
// What not to offer is TakenAddresses' job (adapters/taken-addresses.ts). Each operation is
// written once as steps, run in one synchronous call on a store with synchronous operations,
// else around the store's promises (adapters/DESIGN.md, "The allocation path").
import {
  isAlreadyExists,
  ErrAllocated,
  ErrDestroyed,
  ErrNotInRange,
  ErrNotReady,
  InvalidArgumentError,
  NOT_READY_WHY,
  OutOfMemoryError,
  rejectSoon,
} from './errors.ts';
import { checkReady, classCalledOn, optionsObject, unboundCall, unboundOr, unboundRead } from './input.ts';
import { quoteInput } from './quote.ts';
import { canonicalOf, formatAddr, parseAddrInto, parseCanonical, type Family } from './address.ts';
import { Prefix, rangeRefusal } from './geometry.ts';
import { type IndexKind, indexKindOption } from './free-index.ts';
import { storeOption } from './memory-store.ts';
import { NULL_RECORDER, recorderFor, sizeLessUsed, switchRecorder, type MetricsRecorder } from './metrics.ts';
import { randomOption, type RandomSource } from './random.ts';
import { DryRunAllocator } from './dry-run.ts';
import { checkParentRef, forEachLabelledAddress, refuseBlindStore, writeLabelsFor } from './records.ts';
import { BAND_LOWER, BAND_UPPER } from './space.ts';
import { STRATEGIES, type StrategyOption, strategyOption } from './builtin-strategies.ts';
import type { FreeOnlyPass } from './cooling.ts';
import {
  COLLISIONS_PER_TURN,
  deleteErrorHandler,
  nextTurn,
  ALLOCATE_NEXT_NOW,
  AS_ALLOCATE,
  AS_DRY_RUN,
  type AllocateCheck,
  BEING_DESTROYED,
  CHECK_ALLOCATE,
  CHECK_ALLOCATE_NEXT,
  STOP_SEARCHES,
  type Store,
  type IPAddressRecord,
  type StoreCache,
  type SyncStoreOps,
  storeHolds,
  syncAnswer,
  syncedAnswer,
  tellDeleteError,
  type DeleteErrorHandler,
  type ParentRef,
} from './store.ts';
import { RecordRouter } from './record-router.ts';
import { type Op, type Search, TakenAddresses } from './taken-addresses.ts';
import { remeasured } from './wasm.ts';
import { type AllocatorOptions, type IPAllocator, type IPFamily, type MetricsRegistry, readOnlyFields } from './types.ts';
import { INSPECT, type InspectOptions, inspection } from './inspect.ts';
import { SAME_THREAD } from './same-thread.ts';

/** Allocator options: the shared ones plus the index representation and the strategy. */
export interface IndexedAllocatorOptions extends AllocatorOptions {
  /** 'dense' (a bitmap, up to 2^31 addresses), 'sparse', or 'auto' (dense up to 2^24). */
  index?: IndexKind | undefined;
  /**
   * How allocateNext chooses among free addresses: 'upstream' (the default: upstream's random
   * scan, the same draws and answers as ReferenceAllocator), 'legacy-bitmap', 'sequential',
   * 'lowest-free', 'random-free', or a strategy object — coolDown(…) of any of them, or your own
   * (docs/strategies.md). A cool-down holds back addresses
   * released by anyone on the store.
   */
  strategy?: StrategyOption | undefined;
}

const ALLOCATOR_OPTIONS: Record<keyof IndexedAllocatorOptions, true> = {
  store: true,
  random: true,
  metrics: true,
  index: true,
  strategy: true,
};

/**
 * allocateNext's answers other than an address (Search.refused), as ALLOCATE_NEXT_NOW gives them:
 * not ready, not ready any more after a collision (its store's cache stopped being synced, or
 * setReady(false) — ErrNotReady both, saying which), full. @internal for MetaAllocator
 */
export const NOT_READY = -2;
/** See NOT_READY. @internal */
export const NO_LONGER_READY = -3;
/** See NOT_READY. @internal */
export const FULL = -1;
/** NOT_READY, NO_LONGER_READY or FULL. @internal */
export type NoAddress = typeof NOT_READY | typeof NO_LONGER_READY | typeof FULL;

/**
 * The errors allocateNext answers for its range itself, ErrNotReady or ErrFull when its search
 * found no address (noAddress), told apart from the same classes thrown by its strategy or its
 * store, which are the call's own error: a MetaAllocator goes on to its next range after the
 * range's answer only, on both store paths.
 */
const SEARCH_ANSWERS = new WeakSet<object>();

/** Whether `e` is an allocateNext's answer for its range (SEARCH_ANSWERS). @internal for MetaAllocator */
export function isSearchAnswer(e: unknown): boolean {
  return typeof e === 'object' && e !== null && SEARCH_ANSWERS.has(e);
}

/** `e`, marked as an allocateNext's answer for its range (SEARCH_ANSWERS). */
function searchAnswer<E extends Error>(e: E): E {
  SEARCH_ANSWERS.add(e);
  return e;
}

/** The band of a strategy's choice (the strategy keeps to the bands itself). */
const BAND_CHOSEN = 2;

/** Shared promises for the synchronous path. */
const RESOLVED: Promise<void> = Promise.resolve();
const FALSE: Promise<boolean> = Promise.resolve(false);

/**
 * The ClusterIP allocator of one Service range: upstream's answers (ipallocator.go), with a
 * WebAssembly index of taken addresses in place of upstream's linear scan. Addresses are
 * IPAddress records in a Store, shared with any other allocator of the same store.
 */
export class Allocator implements IPAllocator, Disposable {
  /** Makes postMessage refuse the allocator, saying why (SAME_THREAD); first, so it is read first. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read by structuredClone, not by this code
  private readonly sameThreadOnly = SAME_THREAD;
  readonly cidr: string;
  readonly ipFamily: IPFamily;
  readonly store: Store;
  /** The range geometry. @internal */
  readonly prefix: Prefix;

  private readonly cache: StoreCache;
  private readonly fam: Family;
  private readonly random: RandomSource;
  /** What not to offer: the cache's addresses and this allocator's calls in flight. */
  private readonly taken: TakenAddresses;
  /**
   * What setReady, enableMetrics and [STOP_SEARCHES] change, in an object of its own rather than
   * fields of this one: an object made with Object.create(allocator) (a wrapper overriding one
   * method) and the allocator under it share it, as they share the index and its destroyed state.
   * `stopping`: searches stop at their next collision (STOP_SEARCHES).
   */
  private readonly shared: { ready: boolean; metrics: MetricsRecorder; stopping: boolean } = {
    ready: true,
    metrics: NULL_RECORDER,
    stopping: false,
  };
  private readonly words = new Uint32Array(4);
  /**
   * The address of an async release whose delete has gone through, written as it settles for
   * the index (releaseName). Not this.words: the cache the index asks may call in again, and
   * parse there. No other release writes it meanwhile: each settles in a promise reaction of
   * its own.
   */
  private readonly released = new Uint32Array(4);

  /**
   * An allocator for the range `cidr` (e.g. `10.96.0.0/12`, `fd00::/108`) over `options.store`
   * (default: a MemoryStore of its own). It subscribes to the store's cache at once and holds what
   * the cache already has. Throws InvalidCIDRError for malformed text; InvalidRangeError for a
   * range upstream refuses (IPv6 shorter than /64; 255.255.255.255/32 and the all-ones IPv6 /128,
   * whose first address would be past the end: upstream's `invalid address []`, followed by the
   * range and why; an overlap with the IPv4-mapped block ::ffff:0:0/96); OutOfMemoryError when
   * the WASM memory cap is reached.
   * Any other /31, /32 or /128 is accepted, as upstream does, with size 0: allocateNext answers
   * ErrFull and allocate ErrNotInRange. Free its memory with destroy() or `using`.
   */
  constructor(cidr: string, options?: IndexedAllocatorOptions);
  /**
   * @internal a MetaAllocator's range: its index hears the store's records from the
   * MetaAllocator's `router` instead of a subscription of its own. Left out of the published
   * types; anything else given third is ignored, as JavaScript ignores an extra argument.
   */
  constructor(cidr: string, options: IndexedAllocatorOptions | undefined, router: RecordRouter | undefined);
  constructor(cidr: string, options?: IndexedAllocatorOptions, router?: unknown) {
    const opts = optionsObject(options, 'Allocator', ALLOCATOR_OPTIONS);
    const p = Prefix.parse(cidr);
    const refused = rangeRefusal(p);
    if (refused !== undefined) throw refused;
    this.prefix = p;
    this.cidr = p.cidr;
    this.ipFamily = p.family;
    this.fam = p.version;
    this.store = storeOption(opts.store);
    refuseBlindStore(this.store, p.family, 'Allocator');
    readOnlyFields(this, 'cidr', 'ipFamily', 'store');
    this.cache = this.store.cache;
    const random = randomOption(opts.random);
    const strategy = strategyOption(opts.strategy);
    // before anything is subscribed or allocated: a registry that cannot take the metrics throws here
    const metrics = opts.metrics === undefined || opts.metrics === false ? null : recorderFor(opts.metrics);
    const feed = router instanceof RecordRouter ? router : null;
    this.taken = new TakenAddresses(p, indexKindOption(opts.index, 'options.index'), p.family, this.cache, feed);
    this.random = this.taken.guardRandom(random);
    try {
      this.taken.subscribe();
      if (strategy !== STRATEGIES.upstream) this.taken.useStrategy(strategy, this.random);
    } catch (e) {
      this.taken.destroy();
      throw remeasured(e); // the index, dropped, counts as given back (a strategy's forRange that ran out)
    }
    if (metrics !== null) {
      this.shared.metrics = metrics;
      metrics.track(this.cidr, this); // seeded gauges: the open upstream fix (kubernetes/kubernetes#140615)
    }
  }

  /**
   * The factory: `Allocator.create("10.96.0.0/12", { store })`, as `new Allocator(…)`; called on
   * a subclass, an instance of that subclass, as `new` on it would make.
   */
  static create<A extends Allocator>(
    this: new (
      cidr: string,
      options?: IndexedAllocatorOptions,
    ) => A,
    cidr: string,
    options?: IndexedAllocatorOptions,
  ): A;
  static create(cidr: string, options?: IndexedAllocatorOptions): Allocator;
  /** @internal a MetaAllocator's range (see the constructor) */
  static create(cidr: string, options: IndexedAllocatorOptions | undefined, router: RecordRouter | undefined): Allocator;
  static create(this: unknown, cidr: string, options: IndexedAllocatorOptions = {}, router?: unknown): Allocator {
    // biome-ignore lint/complexity/noThisInStatic: the class it is called on, which may be a subclass
    return new (classCalledOn(this, Allocator))(cidr, options, router as RecordRouter | undefined);
  }

  /** Usable addresses (upstream hostsPerNetwork). */
  get size(): bigint {
    if (!(this instanceof Allocator)) throw unboundRead(this, 'Allocator', 'size');
    return this.prefix.size;
  }

  /** The MetaAllocator's switch (upstream `ready`): allocate/allocateNext answer ErrNotReady while false. */
  setReady(this: object, ready: boolean): void;
  setReady(this: Allocator, ready: boolean): void {
    checkThis(this, 'setReady');
    this.live();
    this.shared.ready = checkReady(ready);
  }

  /** Ready and the cache has synced (upstream: the informer's HasSynced). */
  isReady(this: object): boolean;
  isReady(this: Allocator): boolean {
    try {
      this.live();
      return this.shared.ready && syncedAnswer(this.cache.hasSynced());
    } catch (e) {
      throw orUnbound(e, this, 'isReady');
    }
  }

  /**
   * ErrNotReady, saying why: setReady(false), or else the store has not synced — or, `since`
   * (a search stopped after a collision), has stopped being synced.
   */
  private notReady(since = false): ErrNotReady {
    if (!this.shared.ready) return new ErrNotReady(NOT_READY_WHY.switchedOff);
    return new ErrNotReady(since ? NOT_READY_WHY.storeUnsynced : NOT_READY_WHY.storeNotSynced);
  }

  // ── allocate (static) ──────────────────────────────────────────────────────────────────────

  /**
   * Reserves `ip` for `owner`. Rejects with ErrNotInRange outside [first, last] (or the other
   * family), ErrAllocated when its record exists, ErrNotReady, InvalidAddressError (malformed
   * text), InvalidArgumentError (an owner not of upstream's ParentReference shape),
   * OutOfMemoryError; other store errors pass through. Nothing changes when it rejects.
   */
  allocate(this: object, ip: string, owner?: ParentRef | null): Promise<void>;
  allocate(this: Allocator, ip: string, owner?: ParentRef | null): Promise<void> {
    try {
      this.taken.refuseInsideStrategy();
      return this.allocateOp(this.taken.takeOp(), ip, false, owner);
    } catch (e) {
      return rejectSoon(orUnbound(e, this, 'allocate'));
    }
  }

  /**
   * allocate() of an address its caller has parsed: `name` its canonical text, `words` its
   * address (of this family). The same checks in the same order, less the parse; what allocate
   * rejects with before its store call (and, on a store with synchronous operations, after it)
   * is thrown, for the caller to tell its own refusals from the rest. @internal for
   * MetaAllocator, which parsed the address to find the range
   */
  allocateParsed(name: string, words: Uint32Array, owner: ParentRef | null | undefined): Promise<void> {
    this.taken.refuseInsideStrategy();
    return this.allocateOp(this.taken.opFor(name, words), name, true, owner);
  }

  /**
   * allocate's steps for `op`, which holds the address from the start: the readiness check, a
   * user's store, and the owner's getters may call back into this allocator or the caller, which
   * parse into words of their own. `ip` is parsed into op after the readiness check, as upstream
   * does, unless `parsed`: op holds the caller's parse of it already.
   */
  private allocateOp(op: Op, ip: string, parsed: boolean, owner: ParentRef | null | undefined): Promise<void> {
    let parentRef: ParentRef | null;
    try {
      if (!this.isReady()) throw this.notReady();
      if (parsed) this.checkInRange(this.fam, op.address, ip, false);
      else op.name = this.parseInRange(ip, op.address, false);
      // the owner before the reservation: a refused owner leaves nothing marked (as upstream, a
      // range error comes first)
      parentRef = checkParentRef(owner);
      this.live(); // its getters may have destroyed this allocator
      this.taken.fresh();
      this.taken.reserve(op); // the add event finds the bit set
    } catch (e) {
      this.taken.recycle(op);
      throw this.outOfMemory(e, 'static');
    }
    const start = this.shared.metrics.start();
    const sync = this.store.sync;
    if (sync != null) {
      this.createNow(sync, op, parentRef, null);
      this.created(op, 'static', start);
      return RESOLVED;
    }
    const record = this.recordOf(op, parentRef);
    this.taken.callStarted();
    return this.taken
      .callAsync(op, () => this.store.create(record))
      .then(
        () => {
          this.taken.callEnded();
          this.created(op, 'static', start);
        },
        (e: unknown) => {
          this.taken.callEnded();
          throw this.createFailed(op, e);
        },
      );
  }

  /** `ip` parsed into `w`: its canonical name, checked in range (checkInRange). */
  private parseInRange(ip: string, w: Uint32Array, dryRun: boolean): string {
    const family = parseAddrInto(ip, w);
    const name = canonicalOf(ip, family, w);
    this.checkInRange(family, w, name, dryRun);
    return name;
  }

  /** ErrNotInRange (counted, unless for a dry run) for an address `w` of `family` outside [first, last]. */
  private checkInRange(family: Family, w: Uint32Array, name: string, dryRun: boolean): void {
    if (family !== this.fam || this.taken.isEmpty || !this.prefix.inRange(family, w)) {
      if (!dryRun) this.shared.metrics.error(this.cidr, 'static');
      throw new ErrNotInRange(name, this.cidr);
    }
  }

  // ── allocateNext (dynamic) ─────────────────────────────────────────────────────────────────

  /**
   * Reserves a free address, dynamic band first (then the static band), and returns it. Rejects with ErrFull,
   * ErrNotReady, InvalidArgumentError (owner), OutOfMemoryError; a store error other than
   * AlreadyExists aborts the call and passes through.
   */
  allocateNext(this: object, owner?: ParentRef | null): Promise<string>;
  allocateNext(this: Allocator, owner?: ParentRef | null): Promise<string> {
    try {
      return this.allocateNextFreeOnly(owner, null);
    } catch (e) {
      return rejectSoon(orUnbound(e, this, 'allocateNext')); // allocateNextFreeOnly rejects what it throws: called without `this`
    }
  }

  /**
   * allocateNext(), taking free addresses only when `freeOnly` is given: no address a cool-down
   * holds comes back early, and `freeOnly.heldBack` is set when that is why it answers ErrFull
   * (MetaAllocator's first pass over its ranges). @internal for MetaAllocator
   */
  allocateNextFreeOnly(owner: ParentRef | null | undefined, freeOnly: FreeOnlyPass | null): Promise<string> {
    try {
      this.live(); // before the owner: after destroy() every call is ErrDestroyed
      this.taken.refuseInsideStrategy();
      const parentRef = checkParentRef(owner);
      const sync = this.store.sync;
      if (sync == null) return this.allocateNextAsync(parentRef, freeOnly);
      const r = this.allocateNextSync(sync, parentRef, freeOnly);
      return typeof r === 'string' ? Promise.resolve(r) : rejectSoon(this.noAddress(r));
    } catch (e) {
      return rejectSoon(e);
    }
  }

  /**
   * Which call allocates on this store: true when it has synchronous operations, so that
   * tryAllocateNextNow() may be used; false when only allocateNext() can. It says which call to
   * make, not that the call succeeds. Throws ErrDestroyed after destroy(), as every method does
   * (true, then ErrDestroyed from the call it chose, would mislead). A store closed under the
   * allocator is not seen here (the Store interface cannot tell): both calls then fail with the
   * store's ErrDestroyed.
   */
  get canAllocateNow(): boolean {
    if (!(this instanceof Allocator)) throw unboundRead(this, 'Allocator', 'canAllocateNow');
    this.live();
    return this.store.sync != null;
  }

  /**
   * allocateNext() in one synchronous step, for callers that try several allocators in turn
   * (MetaAllocator): the address, or null exactly where allocateNext() would reject with ErrFull
   * or ErrNotReady — same draws, same metrics, no Error built. Other errors are thrown. Only on a
   * store with synchronous operations (`canAllocateNow`), else InvalidArgumentError. `Now`: it
   * answers at once where allocateNext() returns a promise (Range, synchronous throughout, names
   * its counterpart tryAllocateNext()).
   */
  tryAllocateNextNow(this: object, owner?: ParentRef | null): string | null;
  tryAllocateNextNow(this: Allocator, owner?: ParentRef | null): string | null {
    try {
      this.live();
      this.taken.refuseInsideStrategy();
      const sync = this.store.sync;
      if (sync == null) throw new InvalidArgumentError(`tryAllocateNextNow needs a store with synchronous operations (${this.cidr})`);
      const r = this.allocateNextSync(sync, checkParentRef(owner), null);
      return typeof r === 'string' ? r : null;
    } catch (e) {
      throw orUnbound(e, this, 'tryAllocateNextNow');
    }
  }

  /**
   * tryAllocateNextNow() answering why there is no address (NoAddress) where it answers null
   * (a MetaAllocator answers ErrFull or ErrNotReady by it); `freeOnly` as allocateNextFreeOnly's.
   * See ALLOCATE_NEXT_NOW. @internal for MetaAllocator
   */
  [ALLOCATE_NEXT_NOW](owner: ParentRef | undefined, freeOnly: FreeOnlyPass | null): string | NoAddress {
    this.live();
    this.taken.refuseInsideStrategy();
    const sync = this.store.sync;
    if (sync == null) throw new InvalidArgumentError(`tryAllocateNextNow needs a store with synchronous operations (${this.cidr})`);
    return this.allocateNextSync(sync, checkParentRef(owner), freeOnly);
  }

  /** The synchronous driver: the address, or why there is none (NoAddress). */
  private allocateNextSync(sync: SyncStoreOps, parentRef: ParentRef | null, freeOnly: FreeOnlyPass | null): string | NoAddress {
    const s = this.taken.beginSearch(freeOnly, false);
    try {
      for (let op = this.candidate(null, s); op !== null; op = this.candidate(op, s)) {
        if (this.createNow(sync, op, parentRef, s)) return this.found(s, op);
      }
    } finally {
      this.taken.endSearch(s);
    }
    return this.notFound(s);
  }

  /** The driver through the store's promises: the same steps. */
  private async allocateNextAsync(parentRef: ParentRef | null, freeOnly: FreeOnlyPass | null): Promise<string> {
    const s = this.taken.beginSearch(freeOnly, true);
    let collisions = 0;
    try {
      for (let op = this.candidate(null, s); op !== null; op = this.candidate(op, s)) {
        const record = this.recordOf(op, parentRef);
        try {
          await this.taken.callAsync(op, () => this.store.create(record));
        } catch (e) {
          // now and then timers and I/O run, so a timer can end a search that would never end
          // (COLLISIONS_PER_TURN). op stays this call's until nextAfter().
          if (++collisions % COLLISIONS_PER_TURN === 0) await nextTurn();
          this.collision(s, op, e);
          continue;
        }
        return this.found(s, op);
      }
    } finally {
      this.taken.endSearch(s);
    }
    throw this.noAddress(this.notFound(s));
  }

  /** Search `s`'s first candidate (`after` null) or the one after `after`; an index out of memory is counted (outOfMemory). */
  private candidate(after: Op | null, s: Search): Op | null {
    try {
      return after === null ? this.firstCandidate(s) : this.nextAfter(after, s);
    } catch (e) {
      throw this.outOfMemory(e, 'dynamic');
    }
  }

  /**
   * The first candidate of search `s`: ready, a fresh index, then the upper (dynamic) band's draw
   * and first free address (upstream's draw, adapters/space.ts), else the lower (static) band's;
   * a strategy's choice instead when one chooses. Null when there is none; `s.refused` says when
   * the search did not start: NOT_READY, or FULL without a scan (rangeSize 0: no draw, no metric,
   * as upstream).
   */
  private firstCandidate(s: Search): Op | null {
    if (!this.isReady()) s.refused = NOT_READY;
    else if (!this.taken.hasUpperBand) s.refused = FULL;
    if (s.refused !== 0) return null;
    const index = this.taken.fresh()!;
    if (this.taken.choosing) {
      s.start = this.shared.metrics.start();
      s.returns = this.taken.beginCall(s.freeOnly !== null);
      return this.taken.takeChosen(s.returns) ? this.taken.opOfTaken(index, BAND_CHOSEN) : null;
    }
    const upper = index.takeUpper(this.random);
    s.start = this.shared.metrics.start();
    // the draw may have had the index dropped: its address is read from `address`, and the lower
    // band searched in the index fresh() rebuilds
    if (upper) return this.taken.opOfTaken(this.taken.space, BAND_UPPER);
    const again = this.taken.fresh()!;
    return again.takeLower(this.random) ? this.taken.opOfTaken(again, BAND_LOWER) : null;
  }

  /**
   * The candidate after a collision at `op`: in its band, else (dynamic band exhausted) the
   * static band's. Another call may have found the index stale while this one waited for the
   * store: it is rebuilt here, or, when that fails, this call fails with OutOfMemoryError too.
   * op is recycled only once read: the rebuild reads the store's cache, whose code may call this
   * allocator, and a call would take a recycled op and write its own address over op's. A range
   * no longer ready (setReady(false), or its store's cache not synced since the search began)
   * ends the search as one that starts there does: NOT_READY, no other address tried. The
   * cache's hasSynced() may itself destroy this allocator (its ServiceCIDR deleted there) or stop
   * its searches, whatever it answers: that is looked at after it, and ends the search too.
   */
  private nextAfter(op: Op, s: Search): Op | null {
    if (this.destroyed || this.shared.stopping) return null; // liveAfterSearch says why
    const ready = this.isReady();
    if (this.destroyed || this.shared.stopping) return null; // by the cache's hasSynced(): liveAfterSearch says why
    if (!ready) {
      s.refused = NO_LONGER_READY;
      return null;
    }
    const index = this.taken.fresh()!;
    const band = op.band;
    const after = band !== BAND_CHOSEN && index.takeAfter(band, op.address);
    this.taken.recycle(op);
    if (band === BAND_CHOSEN) return this.taken.takeChosen(s.returns) ? this.taken.opOfTaken(index, BAND_CHOSEN) : null;
    if (after) return this.taken.opOfTaken(index, band);
    if (band === BAND_UPPER && index.takeLower(this.random)) return this.taken.opOfTaken(index, BAND_LOWER);
    return null;
  }

  /** Search `s` created op's record: its address. */
  private found(s: Search, op: Op): string {
    const name = op.name;
    s.found = true;
    this.created(op, 'dynamic', s.start); // recycles op: its metrics may call in again and reuse it
    return name;
  }

  /**
   * Search `s` ended without an address (or stopped: liveAfterSearch): why (NoAddress), counted
   * as an error unless it never started or, taking free addresses only, found none because a
   * cool-down held some: then `freeOnly` is told, and the caller asks again, held ones allowed.
   */
  private notFound(s: Search): NoAddress {
    const { refused, returns, freeOnly } = s;
    this.taken.recycleSearch(s);
    if (refused !== 0) return refused as NoAddress; // set by firstCandidate and nextAfter only
    this.liveAfterSearch();
    if (returns !== null && freeOnly !== null && returns.heldBack) freeOnly.heldBack = true;
    else this.shared.metrics.error(this.cidr, 'dynamic');
    return FULL;
  }

  /** The error of allocateNext's answer `r` (NoAddress). */
  private noAddress(r: NoAddress): Error {
    return searchAnswer(r === FULL ? this.taken.full() : this.notReady(r === NO_LONGER_READY));
  }

  // ── the create and how it settles (allocate and allocateNext) ─────────────────────────────

  private recordOf(op: Op, parentRef: ParentRef | null): IPAddressRecord {
    return { name: op.name, labels: writeLabelsFor(this.ipFamily), parentRef };
  }

  /**
   * The create of op's record through the store's synchronous call, op `current` meanwhile (its
   * cache event comes inside the call). True when it was made. A failure is settled before op
   * stops being current: allocate's (`s` null) is thrown (createFailed); in allocateNext's search
   * `s`, a collision answers false and any other failure is thrown (collision).
   */
  private createNow(sync: SyncStoreOps, op: Op, parentRef: ParentRef | null, s: Search | null): boolean {
    const record = this.recordOf(op, parentRef);
    this.taken.enter(op);
    try {
      syncAnswer(sync.createSync(record), 'createSync');
      return true;
    } catch (e) {
      if (s === null) throw this.createFailed(op, e);
      this.collision(s, op, e);
      return false;
    } finally {
      this.taken.leave(op);
    }
  }

  /** A failed static create: un-reserve, count it, and the error to throw. */
  private createFailed(op: Op, e: unknown): unknown {
    this.taken.failed(op);
    this.taken.recycle(op);
    this.shared.metrics.error(this.cidr, 'static');
    return isAlreadyExists(e) ? new ErrAllocated() : e;
  }

  /**
   * A failed dynamic create: AlreadyExists is a mid-air collision (the bit stays set until the
   * search ends; go on after op, which nextAfter recycles). Anything else un-reserves and aborts
   * the call, as upstream master does. Counted either way.
   */
  private collision(s: Search, op: Op, e: unknown): void {
    this.shared.metrics.error(this.cidr, 'dynamic');
    if (isAlreadyExists(e)) return this.taken.collided(s, op);
    if (!op.seen) this.taken.unreserve(op);
    this.shared.metrics.error(this.cidr, 'dynamic'); // an aborting store error counts twice (upstream)
    throw e;
  }

  /**
   * `e`, counted as an allocation error of `scope` when it is an OutOfMemoryError: the index could
   * not take the address, which fails the allocation as a failed create does upstream.
   */
  private outOfMemory(e: unknown, scope: 'static' | 'dynamic'): unknown {
    if (e instanceof OutOfMemoryError) this.shared.metrics.error(this.cidr, scope);
    return e;
  }

  /** A successful create (static or dynamic): settle the op, count it. */
  private created(op: Op, scope: 'static' | 'dynamic', start: number): void {
    this.taken.created(op, this.store);
    this.shared.metrics.allocation(this.cidr, scope);
    this.gauges();
    this.shared.metrics.observe(this.cidr, start);
  }

  /**
   * Updates the used/free gauges — not once destroyed: they read used(), which then throws, and
   * a call the store answered after destroy() must still end as the store answered (its record
   * exists: an ErrDestroyed would lose it).
   */
  private gauges(): void {
    if (!this.destroyed) this.shared.metrics.gauges(this.cidr, this);
  }

  // ── release, has, forEach, used, free ─────────────────────────────────────────────────────

  /**
   * Releases `ip`: deletes its record. Upstream ignores every error of the delete (and logs it),
   * as this does, telling `onDeleteError` when given; releasing a free address is a no-op. As
   * upstream, an address of this family outside the range is not refused: its record, if one
   * exists (another range's on the same store), is deleted too. Malformed text rejects with
   * InvalidAddressError; an address of the other family is never sent to the store (it cannot be
   * this range's).
   */
  release(this: object, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void>;
  release(this: Allocator, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void> {
    try {
      this.live();
      this.taken.refuseInsideStrategy();
      const told = deleteErrorHandler(onDeleteError);
      const name = parseCanonical(ip, this.fam, this.words);
      return name === null ? RESOLVED : this.releaseName(name, this.words, told);
    } catch (e) {
      return rejectSoon(orUnbound(e, this, 'release'));
    }
  }

  /**
   * release() of an address of this family its caller has parsed: `name` its canonical text,
   * `words` its address. The same checks in the same order, less the parse. @internal for
   * MetaAllocator
   */
  releaseParsed(name: string, words: Uint32Array, onDeleteError: DeleteErrorHandler | undefined): Promise<void> {
    try {
      this.live();
      this.taken.refuseInsideStrategy();
      return this.releaseName(name, words, deleteErrorHandler(onDeleteError));
    } catch (e) {
      return rejectSoon(e);
    }
  }

  /** release's delete of the record `name`, of this family, whose address is `w`. */
  private releaseName(name: string, w: Uint32Array, told: DeleteErrorHandler | undefined): Promise<void> {
    // No rebuild of a stale index here: a release needs none (the rebuild reads the cache
    // later), and under memory pressure freeing addresses must keep working. Only an address
    // this range counts is the index's business (a range of size 0 has no index at all); any
    // other (outside the range, its network or broadcast record) is deleted as upstream deletes
    // it, and its event counted as any writer's.
    const ours = this.prefix.inRange(this.fam, w);
    const sync = this.store.sync;
    if (sync != null) {
      // an address of ours: the delete event, which comes inside the call, is this call's own
      const op = ours ? this.taken.opFor(name, w) : null;
      if (op !== null) this.taken.enter(op);
      try {
        syncAnswer(sync.deleteSync(name), 'deleteSync');
      } catch (e) {
        if (op !== null) {
          this.taken.leave(op);
          this.taken.recycle(op);
        }
        return tellDeleteError(told, e); // ignored (upstream), told once op is settled: the handler may call in again
      }
      if (op !== null) {
        this.taken.leave(op);
        this.taken.deletedSync(op);
      }
      this.gauges();
      return RESOLVED;
    }
    // the address as four numbers, read before the store runs (it may call in again, and parse
    // into `w`): not a copy of `w`, a new typed array per release (under Deno, several hundred
    // nanoseconds)
    const w0 = w[0]!;
    const w1 = w[1]!;
    const w2 = w[2]!;
    const w3 = w[3]!;
    let call: Promise<void>;
    try {
      // a store in plain JavaScript may answer without a promise: taken as `await` takes it
      call = Promise.resolve(this.store.delete(name));
    } catch (e) {
      return tellDeleteError(told, e); // a delete that throws instead of rejecting: ignored all the same
    }
    return call.then(
      () => {
        if (this.destroyed) return;
        if (ours) {
          const r = this.released;
          r[0] = w0;
          r[1] = w1;
          r[2] = w2;
          r[3] = w3;
          this.taken.deleted(name, r);
        }
        this.shared.metrics.gauges(this.cidr, this);
      },
      (e: unknown) => tellDeleteError(told, e),
    );
  }

  /**
   * Whether a record named `ip` exists in the store (asks the store, not the cache; upstream Has).
   * Malformed text rejects with InvalidAddressError; a well-formed address of the other family
   * resolves false without asking the store.
   */
  has(this: object, ip: string): Promise<boolean>;
  has(this: Allocator, ip: string): Promise<boolean> {
    try {
      this.live();
      const name = parseCanonical(ip, this.fam, this.words);
      return name === null ? FALSE : storeHolds(this.store, name);
    } catch (e) {
      return rejectSoon(orUnbound(e, this, 'has'));
    }
  }

  /** Calls `fn` for each allocated address of this family the cache holds (upstream ForEach: not filtered by CIDR). */
  forEach(this: object, fn: (ip: string) => void): void;
  forEach(this: Allocator, fn: (ip: string) => void): void {
    checkThis(this, 'forEach');
    this.live();
    if (typeof fn !== 'function') throw new InvalidArgumentError(`forEach needs a function, got ${quoteInput(fn)}`);
    forEachLabelledAddress(this.cache, this.ipFamily, () => this.destroyed, fn);
  }

  /**
   * Allocated addresses of this family inside the prefix (upstream Used), as the cache's events
   * tell. O(1). Never negative: a delete event that would take it below 0 (a cache breaking its
   * contract) is ignored.
   */
  used(this: object): number;
  used(this: Allocator): number {
    try {
      this.live();
      return this.taken.used();
    } catch (e) {
      throw orUnbound(e, this, 'used');
    }
  }

  /**
   * What its ErrFull says after `range is full`, if anything: why its strategy sees part of the
   * range only ('legacy-bitmap' on an IPv6 range past 65,535 addresses), so that a MetaAllocator
   * whose ranges are all full says it too. @internal
   */
  fullWhy(): string | undefined {
    return this.taken.fullWhy();
  }

  /**
   * The free addresses its cool-down holds back from allocateNext now (0 without one), holds
   * whose time has come returned first: a MetaAllocator's 'weighted' policy does not count them
   * as free in the pass that takes free addresses only. @internal
   */
  heldByCoolDown(): number {
    this.live();
    return this.taken.heldNow();
  }

  /** size − used, never negative. */
  free(this: object): bigint;
  free(this: Allocator): bigint {
    let used: bigint;
    try {
      used = BigInt(this.used());
    } catch (e) {
      throw orUnbound(e, this, 'free');
    }
    const size = this.size; // a subclass may answer another size (as upstream's tests set the field)
    return used > size ? 0n : size - used;
  }

  // ── dry run, metrics, checks, lifecycle ───────────────────────────────────────────────────

  /** A view that checks but persists nothing (upstream DryRun), with canAllocateNow and tryAllocateNextNow as the Allocator has them. */
  dryRun(this: object): DryRunAllocator;
  dryRun(this: Allocator): DryRunAllocator {
    checkThis(this, 'dryRun');
    this.live();
    return new DryRunAllocator(this);
  }

  /**
   * What allocate(ip) checks before its store call, in its order — ready, the address's text, in
   * [first, last] — thrown as allocate throws it; nothing is reserved. `how` (AllocateCheck):
   * AS_DRY_RUN, the default, for the dry run's allocate and a MetaAllocator's check of its range
   * (nothing counted); AS_ALLOCATE for the real call's (CHECK_ALLOCATE: a call from inside the
   * strategy refused first, an ErrNotInRange counted, as allocate does). @internal for
   * DryRunAllocator and MetaAllocator
   */
  checkAllocate(ip: string, how: AllocateCheck = AS_DRY_RUN): void {
    if (how.refuseInside) this.taken.refuseInsideStrategy();
    if (!this.isReady()) throw this.notReady();
    this.parseInRange(ip, this.words, !how.count);
  }

  /**
   * checkAllocate for the real call. Nothing is checked when allocate is overridden. See
   * CHECK_ALLOCATE. @internal for DualStackAllocator
   */
  [CHECK_ALLOCATE](ip: string): void {
    if (this.allocate !== Allocator.prototype.allocate) return;
    this.checkAllocate(ip, AS_ALLOCATE);
  }

  /**
   * checkAllocateNext for the real call (nothing counted, as allocateNext counts nothing there).
   * Nothing is checked when allocateNext is overridden. See CHECK_ALLOCATE_NEXT. @internal for
   * DualStackAllocator
   */
  [CHECK_ALLOCATE_NEXT](): void {
    if (this.allocateNext !== Allocator.prototype.allocateNext) return;
    this.checkAllocateNext(undefined, false);
  }

  /** The dry run's release: not destroyed, and the text parses (InvalidAddressError). @internal for DryRunAllocator */
  checkRelease(ip: string): void {
    this.live();
    parseCanonical(ip, this.fam, this.words);
  }

  /**
   * What allocateNext checks before its store call, in its order — not destroyed, the owner, ready
   * — then the network address, the dry run's answer. For the real call (CHECK_ALLOCATE_NEXT,
   * `dryRun` false), a call from inside the strategy is refused too; whether the range is full is
   * not checked. @internal for DryRunAllocator
   */
  checkAllocateNext(owner: ParentRef | undefined, dryRun = true): string {
    this.live();
    checkParentRef(owner);
    if (!dryRun) this.taken.refuseInsideStrategy();
    if (!this.isReady()) throw this.notReady();
    return formatAddr(this.fam, this.prefix.network);
  }

  /**
   * Registers the five upstream metrics in prom-client (the one given, or the default registry
   * for `true` or none) and records to them, the gauges seeded at once. Given another registry than before, this range's
   * gauges leave the previous one (unless another allocator reports them there); its counters and
   * histogram, cumulative, keep there what they counted.
   */
  enableMetrics(this: object, registry?: MetricsRegistry | true): void;
  enableMetrics(this: Allocator, registry?: MetricsRegistry | true): void {
    checkThis(this, 'enableMetrics');
    this.live();
    this.shared.metrics = switchRecorder(this.shared.metrics, registry, this.cidr, this);
  }

  /**
   * Re-derives what this allocator keeps from the cache and its index, and throws an Error naming
   * the first disagreement: the index's own counters and summaries; used() against the cache's
   * labelled records; every address the cache holds in [first, last] marked taken (a missing
   * mark would let the index offer an address the store holds); and, while none of this
   * allocator's calls is in flight, nothing else marked but what a cool-down holds and records it
   * created that the cache has not reported yet (a mark more would keep a free address from
   * allocateNext). Returns `indexed`, the number of addresses the
   * index marks taken (the cache's, plus creates in flight or not yet reported); 0, with only
   * used() checked, while the index waits to be rebuilt after running out of WASM memory.
   * O(cache size + index size): for tests and debugging.
   */
  validate(this: object): { indexed: number };
  validate(this: Allocator): { indexed: number } {
    checkThis(this, 'validate');
    this.live();
    return this.taken.validate(this.cidr);
  }

  /**
   * Unsubscribes from the store and frees the WASM index; with metrics on, the range's gauges
   * leave the registry (unless another allocator reports them there). Idempotent; every other
   * method throws ErrDestroyed afterwards.
   */
  destroy(this: object): void;
  destroy(this: Allocator): void {
    checkThis(this, 'destroy');
    if (this.destroyed) return;
    this.taken.refuseInsideStrategy();
    this.shared.ready = false;
    try {
      this.taken.destroy(); // destroyed from its first step: the store's unsubscribe may call back
    } finally {
      this.shared.metrics.untrack(this.cidr); // the gauges leave the registry (see untrack)
    }
  }

  /** `using a = new Allocator(…)`: destroy() at the end of the scope. */
  [Symbol.dispose](this: object): void;
  [Symbol.dispose](this: Allocator): void {
    checkThis(this, '[Symbol.dispose]');
    this.destroy();
  }

  /** What console.log and util.inspect show, in Node and Deno: the range, used, free and isReady() (inspection). */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](this: Allocator, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string {
    const live = () => ({ used: this.used(), free: this.free(), ready: this.isReady() });
    return inspection(this, Allocator, 'Allocator', () => ({ cidr: this.cidr }), live, depth, options, inspect);
  }

  /**
   * Destroyed: kept by the index's owner, not by a field of this object, so that an object made
   * with Object.create(allocator) (a wrapper overriding one method) and the allocator under it are
   * destroyed together — the index they share is freed by either's destroy().
   */
  private get destroyed(): boolean {
    return this.taken.isClosed;
  }

  private live(): void {
    if (this.destroyed) throw new ErrDestroyed(`Allocator ${this.cidr}`);
  }

  /**
   * After a search found no address: ErrDestroyed when it stopped because this allocator was
   * destroyed during a collision's create, or asked to stop (STOP_SEARCHES), not for want of an
   * address.
   */
  private liveAfterSearch(): void {
    if (this.shared.stopping) throw new ErrDestroyed(`Allocator ${this.cidr}`, this.destroyed ? undefined : BEING_DESTROYED);
    this.live();
  }

  /**
   * Ends this allocator's running searches at their next collision, with ErrDestroyed, and every
   * later one at its first: its owner (a DualStackAllocator) is about to destroy it. See
   * STOP_SEARCHES. @internal
   */
  [STOP_SEARCHES](): void {
    this.shared.stopping = true;
  }
}

sizeLessUsed(Allocator.prototype.free); // the gauges compute available_ips from used() and size

/**
 * What a method of Allocator on the allocation path throws once it failed: unboundOr's answer
 * (called without an Allocator). Checked only on failure: a check first would cost every call.
 */
function orUnbound(error: unknown, self: unknown, method: string): unknown {
  return unboundOr(error, self, Allocator, 'Allocator', method);
}

/** The check of the methods off the allocation path, made first (unboundCall): simpler, and not timed. */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof Allocator)) throw unboundCall(self, 'Allocator', method);
}
