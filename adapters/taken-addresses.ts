// TakenAddresses: the addresses an Allocator must not offer, kept in a WASM index in step with
// the store's cache and with the Allocator's own store calls in flight.
//
//   taken  = { canonical names in [first, last] the cache holds, any labels }   (cache events)
//          ∪ { addresses of the allocator's creates in flight, and of its created records the
//              cache has not reported yet }                                     (`pending`)
//          ∪ { addresses that collided during a running allocateNext }          (its Search)
//   used() = counted (labelled canonical names in [first, last]) + extras (labelled names in
//            the prefix without an offset: network, IPv4 broadcast, non-canonical spellings)
//
// An `Op` is the one record of an operation in flight. While a synchronous store call runs, its
// op is `current` (the call's own cache event arrives inside the call); an op whose call goes
// through promises, or whose record the cache has not reported yet, is in `pending` by name.
// Either way its own event is recognised by name, without parsing. Several calls may be in
// flight for one name (two allocate(ip) of the same address): `pending` holds them all, chained,
// and an event of the name reaches each — the add event of the call that won is the only one
// the others' records will ever have.
//
// A strategy other than upstream's scan (adapters/strategy.ts) chooses through `takeChosen()`,
// the sequence Range runs too (adapters/strategy-driver.ts).
// With a cool-down, a released address — a delete event, whoever released it — stays marked,
// held by the cool-down, until its time comes; an add event or a reservation claims it back.
//
// Invariants (checked by validate()):
// 1. A bit is cleared by a cache delete event, by the end of a call of its name that failed
//    (a failed create, whichever call set the bit; a collision), by the allocator's own release,
//    on re-list (a pending op the cache never reported), or when a create answered after a
//    re-list that did not list its name finds the store no longer holds it — unless the cache
//    holds the name or a pending op may still create it (`unreserve`: one whose record the cache
//    has not reported; a reported record the cache no longer holds was deleted, and its op
//    claims nothing). A stale bit only costs capacity until then, and a missing bit costs only
//    a collision (the store refuses the create): nothing is ever allocated twice.
//    With none of the allocator's calls in flight, every bit is a record the cache holds, a
//    created record it has not reported yet (pending, its store call ended), or a cool-down's hold.
// 2. The index never throws into the store: when an event cannot be recorded for lack of WASM
//    memory, `stale` is set, the index's memory is freed at once (or, while allocateNext calls
//    run, when the last of them ends: `users`), and the index is rebuilt from the cache (the
//    source of truth), the pending ops and the running synchronous calls' reservations before the next allocation
//    (`fresh()`); if that fails, it throws OutOfMemoryError and nothing changed. A rebuild that
//    failed for lack of memory is not tried again while its conditions hold (`failedRebuild`):
//    no more headroom in WASM memory, no fewer records; at the latest after a number of refusals
//    proportional to its records, so that a change nothing here notices cannot keep it failing.
// 3. A successful create whose add event has not come is marked again and stays pending: an old
//    delete event may have cleared the reservation; once the cache reported it, events are the truth.
import { type Family, formatAddr, isCanonical } from './address.ts';
import { type ErrFull, InvalidArgumentError, OutOfMemoryError } from './errors.ts';
import { FreeIndex, type IndexKind } from './free-index.ts';
import type { Prefix } from './geometry.ts';
import { hasAllocatorLabels, labelledChange, parseRecordName } from './records.ts';
import type { RandomSource } from './random.ts';
import { loadNewIndex } from './sliced-load.ts';
import { AddressSpace, BAND_UPPER } from './space.ts';
import { memoryHeadroom, outOfMemoryAgain, remeasured, wasmOutOfMemory } from './wasm.ts';
import type { AllocationStrategy, OffsetChooser } from './strategy.ts';
import { ChooserCalls } from './chooser-calls.ts';
import { fullError, partSeen } from './strategy-view.ts';
import { CallReturns, type CoolingQueue, type FreeOnlyPass } from './cooling.ts';
import { type ChooserOver, StrategyDriver } from './strategy-driver.ts';
import {
  allocatorWatcher,
  cacheHolds,
  cacheList,
  checkUnsubscribe,
  type IPAddressRecord,
  recordAnswer,
  type Store,
  type StoreCache,
  type StoreWatcher,
} from './store.ts';
import type { IPFamily } from './types.ts';

/**
 * Marks `n` addresses (`words`, four per address) taken in a new index: a warm start or a
 * rebuild, in one batch, or in slices where that batch does not fit under the memory cap beside
 * the index (loadNewIndex). Throws OutOfMemoryError when a slice fails too, the index dropped
 * and `requested` its whole need.
 */
function loadInto(index: AddressSpace, words: Uint32Array, n: number): void {
  loadNewIndex(
    index.kind,
    words.subarray(0, n * 4),
    4,
    (batch) => index.setMany(batch, batch.length >>> 2),
    () => index.destroy(),
  );
}

/**
 * After a rebuild that read n records from the cache (the store's other ranges' included: what a
 * retry costs) failed for lack of memory, at most n / RECORDS_PER_REFUSAL
 * allocations are refused at once (nothing having changed) before one tries again: a caller
 * that retries on OutOfMemoryError pays O(RECORDS_PER_REFUSAL) per attempt, amortized, instead
 * of O(n), and a change the conditions miss (fragmentation undone, a host that grows again,
 * unlabelled records gone) is found all the same.
 */
const RECORDS_PER_REFUSAL = 64;

/**
 * An operation of the allocator in flight: from its reservation until the store call settles
 * and, for a create, until the cache reports the record (or re-lists).
 * @internal
 */
export class Op {
  /** Words of the address (IPv4: [0, 0, 0, v4]). */
  readonly address = new Uint32Array(4);
  name = '';
  /** allocateNext: the band the address was taken from (BAND_UPPER: dynamic, BAND_LOWER: static). */
  band = BAND_UPPER;
  /**
   * This op set the address's bit (false: it was set already). Inside the op's own synchronous
   * call its add event then needs no second mark (onAdd) — unless the address was released
   * meanwhile (a delete event of the name, or a call nested in this one that failed and cleared
   * it): releasedWhileRunning then clears this flag. What a failure may clear is decided by
   * unreserve (the cache, other ops, a cool-down), not by this flag.
   */
  reserved = false;
  /**
   * The op claimed its address from a cool-down's hold (or took it from a running allocateNext
   * that had returned it from the hold), which would have ended then: a failure holds it again.
   */
  heldUntil: number | undefined = undefined;
  /**
   * The cache reported the record while the op was pending: an add event (or, for the running
   * synchronous call, any event). Then later events are the truth and a successful create does
   * not mark the address again.
   */
  seen = false;
  /** The store call is still running (false: created, waiting for the cache). */
  calling = true;
  /**
   * The cache re-listed while the call ran and did not list the name. A create answered after
   * that was applied either after the list (its add event is still to come) or before it and
   * deleted since (no event will ever come): only the store can tell (`created` asks it).
   */
  acrossRelist = false;
  /** The op of an outer synchronous call (a watcher re-entered the allocator). */
  outer: Op | null = null;
  /** The next pending op of the same name (`pending` chains them). */
  nextSameName: Op | null = null;
}

/**
 * Where a TakenAddresses hears of the cache's records, when not from a subscription of its own:
 * the cache's contract (the records held, synchronously, then every change in order), for the
 * records whose name is an address inside `prefix` at least. Its handlers apply them as they
 * apply the cache's own events: one algorithm either way.
 * @internal
 */
export interface RecordFeed {
  /**
   * `writing`, when given, names the record of the synchronous store call the subscriber is
   * making now (null: none runs), an address inside `prefix`, whose event comes inside the call:
   * the feed may hand it that event without reading the name.
   */
  subscribe(prefix: Prefix, watcher: StoreWatcher, writing?: () => string | null): () => void;
}

/**
 * The addresses one allocateNext found taken at the store (AlreadyExists): they stay marked until
 * the call ends — its scan goes on after them, never back — and are then unreserved
 * (TakenAddresses.forgetCollisions). Four words per address in one array that doubles when full:
 * 16 bytes per collision, where keeping each candidate's op and name text cost some 400 bytes of
 * JS heap, so that a call on a large range over a store whose creates all collide (broken, or far
 * ahead of its cache) did not run out of heap.
 * @internal
 */
export class Collisions {
  /** Four words per address, `count` of them. */
  words = new Uint32Array(16);
  count = 0;

  add(w: Uint32Array): void {
    if ((this.count + 1) * 4 > this.words.length) {
      const grown = new Uint32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    const to = this.words;
    const i = this.count * 4;
    to[i] = w[0]!;
    to[i + 1] = w[1]!;
    to[i + 2] = w[2]!;
    to[i + 3] = w[3]!;
    this.count++;
  }
}

/**
 * One allocateNext from beginSearch() to endSearch(): what its steps share. Reused by the next
 * call once it ended with an address or without one, as an Op is.
 * @internal
 */
export class Search {
  /** Why it ended before its first candidate (a code of the allocator's); 0 once it searches. */
  refused = 0;
  /** Its start time for the metrics. */
  start = 0;
  freeOnly: FreeOnlyPass | null = null;
  /** What a cool-down returned to the free pool for it, held again if it fails (beginCall). */
  returns: CallReturns | null = null;
  /** Where it collided at the store; null until the first collision. */
  collided: Collisions | null = null;
  found = false;
  /** It calls the store through promises: an async call until it ends (asyncCalls). */
  throughPromises = false;
}

/** @internal */
export function copy4(from: ArrayLike<number>, to: Uint32Array): void {
  to[0] = from[0]!;
  to[1] = from[1]!;
  to[2] = from[2]!;
  to[3] = from[3]!;
}

/** @internal */
export class TakenAddresses {
  /**
   * Labelled canonical names in [first, last] the cache holds, as its events tell (count()).
   * Never negative.
   */
  private counted = 0;
  private readonly extras = new Set<string>();
  /**
   * The index; null when [first, last] is empty (/31, /32, /128). While `stale`, a destroyed one
   * (its memory freed, dropIndex) until the rebuild replaces it: read only its geometry then.
   */
  private index: AddressSpace | null;
  /** The index missed an event for lack of WASM memory: rebuild it before the next allocation. */
  private stale = false;
  /**
   * allocateNext calls running, a cool-down's hold of a released address, its expiries before
   * heldNow() counts, and a rebuild's forRange (beginUse() to endUse()). Their takes from the
   * index, the hold's expiries and the
   * forRange call code of the caller's (a random source's draw, a strategy's choice, a
   * cool-down's clock) that may write to the store and so drop the index. While any runs, a drop
   * marks it stale only: a take reads the index as it was (a mark it missed costs a collision at
   * most), and the last user's endUse() frees it.
   */
  private users = 0;
  /**
   * While stale: the conditions under which the last rebuild failed for lack of WASM memory
   * (null: none has failed, or a change since means the next allocation tries again). While
   * the headroom has not grown and the records (labelled in range, plus pending ops) have not
   * dropped, a rebuild would fail the same way: fresh() refuses at once, `refusals` times at most,
   * with the details of the `error` the rebuild failed with.
   */
  private failedRebuild: { headroom: number; records: number; refusals: number; error: OutOfMemoryError } | null = null;
  /** The index representation, resolved at construction (a rebuild keeps it). */
  private readonly kind: IndexKind;
  /**
   * Creates in flight through promises, and created records the cache has not reported: by name,
   * the first op of the name here and the others chained after it (Op.nextSameName).
   */
  private readonly pending = new Map<string, Op>();
  /** The op of the synchronous store call running now (its cache event arrives inside the call). */
  private current: Op | null = null;
  /** A free Op for the next call (one allocation less per call). */
  private spare: Op | null = new Op();
  /** A free Search for the next allocateNext. */
  private spareSearch: Search | null = new Search();
  /**
   * Allocator calls running through store promises, from their reservation until they have
   * settled: their marks (a reservation, an allocateNext's collisions) have no record yet.
   */
  private asyncCalls = 0;
  /** During subscribe()'s replay: the addresses seen, four words each, loaded in one call. */
  private loading: { words: Uint32Array; n: number } | null = null;
  private readonly words = new Uint32Array(4);
  private readonly fam: Family;
  private unsubscribe: () => void = () => {};
  private closed = false;
  /** True from the first step of destroy() on. */
  get isClosed(): boolean {
    return this.closed;
  }
  /**
   * A strategy other than upstream's scan, with its per-range chooser and cool-down (if any);
   * null for upstream's scan, and for an empty range (never asked to choose).
   */
  private driver: StrategyDriver | null = null;
  private chooser: OffsetChooser | null = null;
  private cooling: CoolingQueue | null = null;
  private readonly off = new Uint32Array(2);

  /**
   * Throws OutOfMemoryError when the WASM memory cap is reached. The events come from `feed` when
   * given (a MetaAllocator's RecordRouter), else from a subscription of its own to `cache`.
   */
  constructor(
    private readonly prefix: Prefix,
    kind: IndexKind,
    private readonly ipFamily: IPFamily,
    private readonly cache: StoreCache,
    private readonly feed: RecordFeed | null = null,
  ) {
    this.fam = prefix.version;
    this.index = AddressSpace.of(prefix, kind);
    this.kind = this.index?.kind ?? 'auto';
  }

  /**
   * Subscribes to the cache (or the feed): its replay of every record is loaded in one bulk call
   * (a sparse index builds its pages at once), then events keep the index in step. On failure
   * nothing stays subscribed and the index is freed.
   */
  subscribe(): void {
    const watcher: StoreWatcher = allocatorWatcher({
      onAdd: (r, previous) => this.onAdd(r, previous),
      onDelete: (r) => this.onDelete(r),
      onResync: () => this.onResync(),
    });
    this.loading = { words: new Uint32Array(256), n: 0 };
    let unsubscribe: (() => void) | undefined;
    try {
      // A subscribe that returns no function: its events still come, and are ignored once this
      // is destroyed below.
      unsubscribe =
        this.feed !== null
          ? this.feed.subscribe(this.prefix, watcher, () => (this.current === null ? null : this.current.name)) // an address in range: see enter()
          : checkUnsubscribe(this.cache.subscribe(watcher));
      const l = this.loading;
      this.loading = null;
      if (this.index !== null) loadInto(this.index, l.words, l.n);
    } catch (e) {
      this.loading = null;
      unsubscribe?.();
      this.destroy();
      throw remeasured(e); // the index, dropped, counts as needed
    }
    this.unsubscribe = unsubscribe;
  }

  /**
   * Adds `change` to `counted`, never below 0: the change that would take it below is a delete
   * (or an update dropping the labels) of a record the cache never delivered, or delivered
   * deleted already — a cache that breaks its contract. Ignored, so that used() stays a count
   * and free() at most the size; a later add of the name is counted once, as it should be.
   */
  private count(change: -1 | 0 | 1): void {
    this.counted = Math.max(0, this.counted + change);
  }

  /** Allocated addresses of the family inside the prefix (upstream Used). O(1). Never negative. */
  used(): number {
    return this.counted + this.extras.size;
  }

  /** Free addresses a cool-down holds back from the strategy's choice (0 without one). O(1). */
  get held(): number {
    return this.cooling === null ? 0 : this.cooling.size;
  }

  /**
   * `held`, after returning the holds whose time has come (what the range's next allocateNext
   * would do first): a time-based cool-down's holds otherwise count as held until that call.
   * Throws what the cool-down's clock throws; its clock may not call into the allocator
   * (refuseInsideStrategy), as in allocateNext.
   */
  heldNow(): number {
    const cooling = this.cooling;
    if (cooling === null || this.stale || this.closed) return this.held;
    // its clock may write to the store (not call into the allocator): the index stays readable
    // for the expiries, even if that write drops it
    this.beginUse();
    try {
      this.strategyCalls.expire(cooling);
    } finally {
      this.endUse();
    }
    return this.held;
  }

  /** True when [first, last] holds no address. */
  get isEmpty(): boolean {
    return this.index === null;
  }

  /** Whether allocateNext draws at all (the dynamic band is not empty). */
  get hasUpperBand(): boolean {
    return this.index?.hasUpperBand === true;
  }

  /**
   * The index as it is, for a running allocateNext that has called fresh() at its start: a
   * rebuild drops the call's collision marks (then a candidate may collide again), so the call
   * asks for fresh() again only when another call found the index stale meanwhile.
   */
  get space(): AddressSpace {
    return this.index!;
  }

  /** See `users`: the index stays readable until the matching endUse(), even when it is dropped meanwhile. */
  private beginUse(): void {
    this.users++;
  }

  /** In a finally: an index dropped while it was in use is freed after the last user. */
  private endUse(): void {
    if (--this.users === 0 && this.stale) this.index!.destroy(); // idempotent
  }

  /**
   * The index, rebuilt first when it missed events (stale) — from the cache, the pending ops
   * and the running synchronous calls' reservations. Throws OutOfMemoryError when that fails
   * (it stays stale; nothing else changed). Null for an empty range.
   */
  fresh(): AddressSpace | null {
    if (this.stale) this.rebuildUnlessFailing();
    return this.index;
  }

  /**
   * Rebuilds the stale index — unless the last rebuild failed for lack of memory and nothing that
   * could make it succeed has changed since: then OutOfMemoryError at once, without reading the
   * cache. Raising the cap or freeing WASM memory (another index destroyed, addresses released
   * from a sparse one) grows the headroom; a release of a record of this range lowers the
   * records; either one lets the next call try again, and so does the last of `refusals`.
   */
  private rebuildUnlessFailing(): void {
    const failed = this.failedRebuild;
    if (failed !== null) {
      if (failed.refusals > 0 && memoryHeadroom() <= failed.headroom && this.records() >= failed.records) {
        failed.refusals--;
        throw outOfMemoryAgain(
          `the index of ${this.prefix.cidr} could not be rebuilt for lack of WASM memory`,
          failed.error, // what the failed rebuild needed, and the memory now
          'as far as this allocator can tell nothing that could let it succeed has happened since (more WASM memory free below the limit, a record of the range released): it tries again when one of them does',
        );
      }
      this.failedRebuild = null;
    }
    this.rebuild();
  }

  /** What a rebuild loads, roughly: the labelled records in range and the pending ops. O(1). */
  private records(): number {
    return this.counted + this.pending.size;
  }

  /**
   * Chooses with `strategy` instead of upstream's scan (after subscribe(): the chooser starts
   * from what the cache holds). InvalidArgumentError for a strategy whose forRange misbehaves.
   */
  useStrategy(strategy: AllocationStrategy, random: RandomSource): void {
    const driver = new StrategyDriver(strategy, this.strategyCalls, this.prefix, random, 'ipallocator', () => {
      this.dropIndex(); // the hook's error goes on; the rebuild before the next allocation drops the mark
    });
    const index = this.index;
    if (index === null) return this.askEmpty(driver);
    // may refuse: nothing assigned yet; an event of a write in forRange that ran out of memory
    // leaves the index stale, as after any other event: the next allocation rebuilds it
    this.useChooser(this.chooserOver(driver, index));
    this.driver = driver;
  }

  /**
   * The strategy's chooser over `index`. Its forRange may run code of the caller's that writes to
   * the store; an event of such a write that runs out of WASM memory drops the index (stale), which
   * stays readable until forRange returns (see `users`).
   */
  private chooserOver(driver: StrategyDriver, index: AddressSpace): ChooserOver {
    this.beginUse();
    try {
      return driver.over(index.index);
    } finally {
      this.endUse();
    }
  }

  /** Chooses with `made` from now on. */
  private useChooser(made: ChooserOver): void {
    this.chooser = made.chooser;
    this.cooling = made.cooling;
  }

  /** Its calls into the strategy, from inside which the allocator refuses calls (refuseInsideStrategy). */
  private readonly strategyCalls = new ChooserCalls(
    () =>
      `Allocator ${this.prefix.cidr}: its random source, a strategy's forRange(), choose() or taken(), and a cool-down's clock may not change or destroy the allocator they choose for`,
  );

  /** `random` drawn from inside, as the strategy is called (ChooserCalls.guardRandom). */
  guardRandom(random: RandomSource): RandomSource {
    return this.strategyCalls.guardRandom(random);
  }

  /** InvalidArgumentError when called from the strategy's forRange(), choose() or taken(). */
  refuseInsideStrategy(): void {
    this.strategyCalls.refuseInside();
  }

  /** True when a strategy other than upstream's scan chooses (takeChosen). */
  get choosing(): boolean {
    return this.chooser !== null;
  }

  /**
   * An empty range (an IPv4 /31 or /32, an IPv6 /128) never chooses, but its strategy is asked
   * for a chooser all the same (size 0, over a one-slot index of its own, freed at once), so
   * that a strategy is accepted or refused as on any range. The chooser is dropped.
   */
  private askEmpty(driver: StrategyDriver): void {
    const blank = new FreeIndex(0, 1, this.kind);
    try {
      driver.over(blank);
    } finally {
      blank.destroy();
    }
  }

  /**
   * The start of an allocateNext that asks the strategy: its record of what the cool-down returns
   * to the free pool for it (held again if it fails: endCall), or null without a cool-down.
   * `freeOnly`: no held address comes back early in it (CallReturns.freeOnly).
   */
  beginCall(freeOnly = false): CallReturns | null {
    if (this.cooling === null) return null;
    const returns = new CallReturns(this.cooling);
    returns.freeOnly = freeOnly;
    return returns;
  }

  /**
   * The end of that allocateNext, after its collision marks were settled: when it succeeded, a
   * count-based cool-down's clock ticks; when it failed, what the cool-down returned for it and
   * is still free is held again as before (CoolingQueue.endCall).
   * Not after a rebuild (a new queue; held addresses are free then) nor while one is due.
   */
  private endCall(returns: CallReturns, failed: boolean): void {
    if (returns.queue !== this.cooling || this.stale || this.closed) return;
    // A count-based cool-down counts allocateNext calls that succeed: one tick here, not one per
    // candidate (a call that meets collisions at the store takes several).
    if (!failed) returns.queue.tick();
    returns.queue.endCall(returns, failed);
  }

  /**
   * The strategy's next choice, taken into the index's `address`: false when it has none (the
   * range is full). InvalidArgumentError when the strategy names an offset that is not free.
   * What the cool-down returns to the free pool meanwhile is recorded in `returns` (beginCall).
   */
  takeChosen(returns: CallReturns | null): boolean {
    const cooling = this.cooling;
    if (cooling === null || returns === null || returns.queue !== cooling) return this.takeChosenNow();
    cooling.record(returns);
    try {
      return this.takeChosenNow();
    } finally {
      cooling.record(null);
    }
  }

  /** The ErrFull of an allocateNext that found nothing: what the strategy could not see, if anything (fullError). */
  full(): ErrFull {
    return fullError(this.chooser);
  }

  /** What full() says after `range is full`, if anything (partSeen): no error made. */
  fullWhy(): string | undefined {
    return partSeen(this.chooser);
  }

  private takeChosenNow(): boolean {
    // nothing it may choose is free (see Range's takeNext)
    return this.driver!.take(this.index!, this.chooser!, this.cooling);
  }

  /**
   * Marks op's address taken for a static allocation: op.reserved when this call marked it (it
   * was free, or held by a cool-down: claimed, with op.heldUntil; op.heldUntil too when a running
   * allocateNext had returned it from the hold: CoolingQueue.handOver), false when it was taken
   * already. Throws OutOfMemoryError.
   */
  reserve(op: Op): void {
    const w = op.address;
    op.heldUntil = undefined;
    const cooling = this.cooling;
    if (this.index!.set(w)) {
      op.reserved = true;
      // free, but maybe returned from the hold by a running allocateNext: its hold is this op's now
      if (cooling?.returning && this.index!.offsetOf(w, this.off)) op.heldUntil = cooling.handOver(this.off[0]!, this.off[1]!);
      return;
    }
    const until =
      cooling !== null && cooling.size !== 0 && this.index!.offsetOf(w, this.off) ? cooling.untilOf(this.off[0]!, this.off[1]!) : undefined;
    op.reserved = until !== undefined && cooling!.claim(this.off[0]!, this.off[1]!);
    if (op.reserved) op.heldUntil = until;
  }

  // ── ops ───────────────────────────────────────────────────────────────────────────────────

  /** An op for a new call (the spare one when free). */
  takeOp(): Op {
    const op = this.spare ?? new Op();
    this.spare = null;
    op.seen = false;
    op.reserved = false;
    op.heldUntil = undefined;
    op.acrossRelist = false;
    return op;
  }

  /** An op for the address `w` named `name` (its canonical text). */
  opFor(name: string, w: ArrayLike<number>): Op {
    const op = this.takeOp();
    op.name = name;
    copy4(w, op.address);
    return op;
  }

  /** An op for the address `index` has just taken (and so reserved) in `band`: allocateNext's candidate. */
  opOfTaken(index: AddressSpace, band: number): Op {
    const op = this.opFor(index.addressText(), index.address);
    op.band = band;
    op.reserved = true;
    return op;
  }

  /** `op` is settled and no longer referenced: the next call may reuse it. */
  recycle(op: Op): void {
    this.spare = op;
  }

  /**
   * The start of an allocateNext: the index stays readable until endSearch(), even when it is
   * dropped meanwhile (`users`); a search through promises counts as an async call.
   */
  beginSearch(freeOnly: FreeOnlyPass | null, throughPromises: boolean): Search {
    const s = this.spareSearch ?? new Search();
    this.spareSearch = null;
    s.refused = 0;
    s.start = 0;
    s.freeOnly = freeOnly;
    s.returns = null;
    s.collided = null;
    s.found = false;
    s.throughPromises = throughPromises;
    this.beginUse();
    if (throughPromises) this.callStarted();
    return s;
  }

  /**
   * The end of that allocateNext (in a finally), however it ends: its collisions are unreserved,
   * what a cool-down returned for it is settled (endCall), and the index is freed if it was
   * dropped meanwhile. A search that found an address is recycled here; one that found none is
   * read once more, then recycled (recycleSearch).
   */
  endSearch(s: Search): void {
    if (s.collided !== null) this.forgetCollisions(s.collided);
    s.collided = null;
    if (s.returns !== null) this.endCall(s.returns, !s.found);
    if (s.throughPromises) this.callEnded();
    this.endUse();
    if (s.found) this.spareSearch = s;
  }

  recycleSearch(s: Search): void {
    this.spareSearch = s;
  }

  /**
   * Around a synchronous store call for `op` (enter, then leave in a finally): while it runs, op
   * is `current`, so its own cache event (delivered inside the call) is recognised without
   * parsing. leave() restores the outer op: a watcher may re-enter the allocator. op's address is
   * in [first, last]: a feed asks for the running call's name (RecordFeed.subscribe's `writing`).
   */
  enter(op: Op): void {
    op.calling = true;
    op.outer = this.current;
    this.current = op;
  }

  leave(op: Op): void {
    this.current = op.outer;
    op.outer = null;
    op.calling = false;
  }

  /**
   * A store call through promises: `op` is pending (its events are recognised) until it settles.
   * The answer is taken as `await` takes it (a store in plain JavaScript may answer without a
   * promise): a plain value is success, a thenable is followed, one whose `then` throws is a
   * rejection. A call that throws instead of rejecting is a rejection all the same. Either way
   * the op settles, so a failure is undone as any rejected create is.
   */
  callAsync<T>(op: Op, call: () => Promise<T>): Promise<T> {
    op.calling = true;
    this.addPending(op);
    const done = () => {
      op.calling = false;
      this.removePending(op);
    };
    let p: Promise<T>;
    try {
      p = Promise.resolve(call());
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.then(
      (v) => {
        done();
        return v;
      },
      (e: unknown) => {
        done();
        throw e;
      },
    );
  }

  /**
   * A successful create. When the cache has not reported the record yet, an old delete event may
   * have cleared the reservation meanwhile: mark it again and keep the op pending until the
   * cache reports the name (or re-lists). When it did, later events are the truth.
   *
   * When the cache re-listed during the call without the name, the record may be gone already,
   * and then no event would ever settle the op (its address would stay marked until the next
   * re-list): `store` is asked (askStore). A cache whose get fails (throws, or answers what is no
   * record) is asked no more: the store is, and the create's success stands.
   */
  created(op: Op, store: Store): void {
    if (op.seen || this.closed) {
      this.spare = op;
      return;
    }
    this.markTaken(op.address);
    if (op === this.spare) this.spare = null;
    this.addPending(op);
    if (!op.acrossRelist) return;
    let held: boolean;
    try {
      held = cacheHolds(this.cache, op.name);
    } catch {
      held = false; // a cache that cannot answer: the store says (the create succeeded all the same)
    }
    if (!held) this.askStore(op, store);
  }

  /**
   * Asks `store` whether the record a create across a re-list made still exists. When it does
   * not, it was created before the cache's re-list and deleted before the list was taken: no
   * event of it will come, so the op is settled here and the address released. When the store
   * holds it, or the cache has reported the name meanwhile, the events settle it as any other.
   * A store that cannot answer (or answers what is no record) leaves the address marked until
   * the next re-list: capacity, never a second allocation.
   */
  private askStore(op: Op, store: Store): void {
    let call: Promise<unknown>;
    try {
      call = Promise.resolve(store.get(op.name)); // a store in plain JavaScript may answer without a promise
    } catch {
      return;
    }
    call
      .then((r) => recordAnswer(r, 'get', op.name) !== null) // an answer that is no record: as a get that fails
      .then(
        (exists) => {
          if (!exists) this.goneAcrossRelist(op);
        },
        () => undefined,
      );
  }

  /** A create across a re-list whose record the store no longer holds (askStore). */
  private goneAcrossRelist(op: Op): void {
    if (this.closed || op.seen || op.calling || !this.isPending(op)) return;
    let held: boolean;
    try {
      held = cacheHolds(this.cache, op.name);
    } catch {
      return; // a cache that cannot answer: the op stays pending, and the next re-list settles it
    }
    this.removePending(op);
    if (!held && !this.awaitedByOther(op.name, null)) this.markReleased(op.address);
  }

  /**
   * A failed create: clears the bit unless the cache has reported the name, holds it, or another
   * op has it. Also when this op did not set the bit: the one that did (a concurrent create of
   * the same name) may have settled meanwhile, its record deleted before the cache said so.
   */
  failed(op: Op): void {
    if (!op.seen) this.unreserve(op);
  }

  /** An allocator call through store promises has made its reservation (validate counts it as in flight). */
  callStarted(): void {
    this.asyncCalls++;
  }

  /** That call has settled (its marks are the cache's, pending, or cleared). */
  callEnded(): void {
    this.asyncCalls--;
  }

  /**
   * Clears op's bit unless the cache holds the name, another op has it (invariant 1), or a
   * cool-down holds it (a record of that name was deleted meanwhile: held addresses stay marked).
   * An address op claimed from a cool-down goes back under it, until its hold would have ended.
   */
  unreserve(op: Op): void {
    this.unreserveAddress(op.name, op.address, op.heldUntil, op);
  }

  /** unreserve() of the address `w` named `name`, for `except` (null: an address no op holds any more). */
  private unreserveAddress(name: string, w: Uint32Array, heldUntil: number | undefined, except: Op | null): void {
    if (this.closed || this.cacheMayHold(name) || this.awaitedByOther(name, except)) return;
    // Cleared or held from here: an outer running call of the name (op nested in it) reserves no more.
    if (this.current !== null) this.releasedWhileRunning(name, false);
    if (this.isHeld(w)) return;
    if (heldUntil !== undefined && this.cooling !== null && !this.stale && this.index!.offsetOf(w, this.off)) {
      this.cooling.holdAgain(this.off[0]!, this.off[1]!, heldUntil);
      return;
    }
    this.markFree(w);
  }

  /**
   * A candidate of search `s` collided at the store (AlreadyExists): its address stays marked,
   * kept in `s.collided`, until the search ends. `op` stays the search's until the next
   * candidate is taken after it (Allocator.nextAfter recycles it then).
   */
  collided(s: Search, op: Op): void {
    s.collided ??= new Collisions();
    s.collided.add(op.address);
  }

  /**
   * At the end of a search: its collisions are unreserved (unreserve), unless the cache holds the
   * name now (or an op has it; cacheMayHold: a cache that cannot answer holds it).
   */
  private forgetCollisions(collisions: Collisions): void {
    const all = collisions.words;
    const w = new Uint32Array(4);
    for (let i = 0; i < collisions.count * 4; i += 4) {
      w[0] = all[i]!;
      w[1] = all[i + 1]!;
      w[2] = all[i + 2]!;
      w[3] = all[i + 3]!;
      this.unreserveAddress(formatAddr(this.fam, w), w, undefined, null);
    }
  }

  /**
   * Whether a pending op of `name` other than `except` may still create its record: the cache
   * has not reported one (not seen). A seen op's record is the cache's to report: when the cache
   * no longer holds it, it was deleted, and that op claims the address no more.
   */
  private awaitedByOther(name: string, except: Op | null): boolean {
    for (let op = this.pending.get(name) ?? null; op !== null; op = op.nextSameName) if (op !== except && !op.seen) return true;
    return false;
  }

  /** Whether the cool-down holds the address `w`. */
  private isHeld(w: ArrayLike<number>): boolean {
    const cooling = this.cooling;
    return (
      cooling !== null &&
      cooling.size !== 0 &&
      !this.stale &&
      this.index!.offsetOf(w, this.off) &&
      cooling.holds(this.off[0]!, this.off[1]!)
    );
  }

  /**
   * The allocator's delete of `op.name` (address in `op.address`) succeeded synchronously. Its
   * event, delivered inside the call, cleared the bit; otherwise (a store that reports later)
   * clear it here.
   */
  deletedSync(op: Op): void {
    if (!op.seen) this.deleted(op.name, op.address);
    else if (this.pending.size !== 0) this.settleName(op.name, false); // created records of ours the cache never reported: settled too
    this.spare = op;
  }

  /**
   * A delete of the allocator succeeded but its event has not come (a lagging cache, or it was
   * lost): clear the bit here unless the cache holds the name or an op has it. A late add event
   * sets it again and its delete clears it. A cache that fails to answer (its get throws) is
   * taken as holding the name: the release has happened and resolves all the same, and the bit
   * waits for the cache's delete event, as it does for a cache that still holds the name.
   */
  deleted(name: string, w: Uint32Array): void {
    if (this.closed) return;
    if (this.pending.size !== 0) this.settleName(name, false); // our unconfirmed creates: settled
    if (!this.cacheMayHold(name) && !this.awaitedByOther(name, null)) this.markReleased(w);
  }

  /**
   * Whether the cache holds `name`, a cache that cannot answer (its get throws, or answers what
   * is no record) taken as holding it: the bit then waits for the cache's events or the next
   * re-list — capacity, never a second allocation — and the call that asked ends as the store
   * answered it (a release resolves, a failed create rejects with the store's own error, a
   * create that went through answers its address).
   */
  private cacheMayHold(name: string): boolean {
    try {
      return cacheHolds(this.cache, name);
    } catch {
      return true;
    }
  }

  // ── pending ops by name ───────────────────────────────────────────────────────────────────

  /** Adds `op` to the pending ops of its name (after any already there). */
  private addPending(op: Op): void {
    op.nextSameName = null;
    let last = this.pending.get(op.name);
    if (last === undefined) {
      this.pending.set(op.name, op);
      return;
    }
    while (last.nextSameName !== null) last = last.nextSameName;
    last.nextSameName = op;
  }

  /** Whether `op` is among the pending ops of its name. */
  private isPending(op: Op): boolean {
    for (let o = this.pending.get(op.name) ?? null; o !== null; o = o.nextSameName) if (o === op) return true;
    return false;
  }

  /** Removes `op` from the pending ops of its name (if there). */
  private removePending(op: Op): void {
    const first = this.pending.get(op.name);
    if (first === op) {
      if (op.nextSameName === null) this.pending.delete(op.name);
      else this.pending.set(op.name, op.nextSameName);
    } else {
      let before: Op | null = first ?? null;
      while (before !== null && before.nextSameName !== op) before = before.nextSameName;
      if (before === null) return;
      before.nextSameName = op.nextSameName;
    }
    op.nextSameName = null;
  }

  /**
   * News of `name` — its add event (`added`), its delete event, or a delete of ours that
   * succeeded: its pending ops learn of it (an add event counts as seen for each), and the
   * created ones among them, which waited only for such news, are settled. Returns whether any was.
   */
  private settleName(name: string, added: boolean): boolean {
    let settled = false;
    for (let op: Op | null = this.pending.get(name) ?? null; op !== null; ) {
      const next = op.nextSameName;
      if (added) op.seen = true;
      if (!op.calling) {
        this.removePending(op);
        settled = true;
      }
      op = next;
    }
    return settled;
  }

  // ── the cache events ──────────────────────────────────────────────────────────────────────

  /**
   * Classifies a record name into `w`: 0 not ours (other family, outside the prefix, not an
   * address), 1 an address in [first, last] in canonical text, 2 inside the prefix but without
   * an offset (network, IPv4 broadcast, a non-canonical spelling).
   */
  private classify(name: string, w: Uint32Array): 0 | 1 | 2 {
    const family = parseRecordName(name, w);
    if (family !== this.fam || !this.prefix.contains(family, w)) return 0;
    if (!isCanonical(name, family, w) || !this.prefix.inRange(family, w)) return 2;
    return 1;
  }

  /** The op with this name: the running synchronous call's (or an outer one's), or a pending one. */
  private opOf(name: string): Op | undefined {
    for (let op = this.current; op !== null; op = op.outer) if (op.name === name) return op;
    return this.pending.size === 0 ? undefined : this.pending.get(name);
  }

  // The running synchronous call's own event, with no other op of ours in flight — two of them
  // per allocateNext + release on a store with synchronous operations — takes a short path in
  // onAdd and onDelete: what addEvent and deleteEvent do for it, without searching the ops or
  // settling others. Kept that small, onAdd and onDelete are inlined where the store delivers
  // (measured: a MemoryStore's allocateNext + release costs less CPU, see the commit that made
  // it); every other event goes on to addEvent and deleteEvent, which handle any event.

  private onAdd(r: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    if (this.closed) return;
    const op = this.current;
    if (op !== null && op.name === r.name && op.outer === null && this.pending.size === 0) {
      op.seen = true;
      if (!op.reserved) this.markTaken(op.address);
      this.count(labelledChange(r, previous, this.ipFamily));
      return;
    }
    this.addEvent(r, previous);
  }

  private onDelete(r: IPAddressRecord): void {
    if (this.closed) return;
    const op = this.current;
    if (op !== null && op.name === r.name && op.outer === null && this.pending.size === 0) {
      op.reserved = false; // as releasedWhileRunning
      op.seen = true;
      this.markReleased(op.address);
      if (hasAllocatorLabels(r, this.ipFamily)) this.count(-1);
      return;
    }
    this.deleteEvent(r);
  }

  /** An add event, whoever wrote the record. */
  private addEvent(r: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    const op = this.opOf(r.name);
    if (op !== undefined) {
      // Ours: its address is known. The bit is set again (an old delete event may have cleared
      // it) — except inside our own synchronous call that reserved it: nothing ran in between.
      op.seen = true;
      // An outer running call of the name (a store hook or a watcher nested this one in it) has
      // its record reported too: the event may be its own create's, and would not come again.
      for (let o = op.outer; o !== null; o = o.outer) if (o.name === r.name) o.seen = true;
      if (this.pending.size !== 0) this.settleName(r.name, true); // created records among them: confirmed now
      if (op !== this.current || !op.reserved) this.markTaken(op.address);
    } else {
      const w = this.words;
      const c = this.classify(r.name, w);
      if (c === 0) return;
      if (c === 2) {
        if (hasAllocatorLabels(r, this.ipFamily)) this.extras.add(r.name);
        else this.extras.delete(r.name);
        return;
      }
      if (this.loading !== null) this.load(w);
      else this.markTaken(w);
    }
    this.count(labelledChange(r, previous, this.ipFamily));
  }

  /** A delete event, whoever deleted the record. */
  private deleteEvent(r: IPAddressRecord): void {
    const op = this.opOf(r.name);
    if (op !== undefined) {
      // A create in flight through promises does not count this as seen: it may be an old
      // delete of the name, and the create's own add event is still to come. Inside our own
      // synchronous calls of the name (every one running, not only the innermost: a release
      // nested in our create gets the event), the record was deleted: the bit is cleared (or
      // held) below, so a call's own add event, if it comes in the call, must mark it again.
      if (this.current !== null) this.releasedWhileRunning(r.name, true);
      if (this.pending.size !== 0) this.settleName(r.name, false); // created records among them, deleted before confirmed
      this.markReleased(op.address);
    } else {
      const w = this.words;
      const c = this.classify(r.name, w);
      if (c === 0) return;
      if (c === 2) {
        this.extras.delete(r.name);
        return;
      }
      this.markReleased(w);
    }
    if (hasAllocatorLabels(r, this.ipFamily)) this.count(-1);
  }

  /**
   * The cache re-listed: created records it still does not hold were deleted unseen. Creates
   * still calling are flagged: when one succeeds, the store says whether its record outlived
   * the list (created).
   */
  private onResync(): void {
    if (this.closed) return;
    for (const op of [...this.pending.values()]) {
      if (cacheHolds(this.cache, op.name)) continue;
      for (let o: Op | null = op; o !== null; o = o.nextSameName) if (o.calling && !o.seen) o.acrossRelist = true;
      if (this.settleName(op.name, false) && !this.pending.has(op.name)) this.markReleased(op.address);
    }
  }

  /**
   * The address of `name` is released — cleared, or held by a cool-down — while synchronous
   * calls run. A running call of the name (an outer one, when a store hook or a watcher nested a
   * release or a failed create of the same address inside it) then holds no reservation: its own
   * add event must mark the address again (onAdd trusts `reserved` for the running call). With
   * `deleteEvent`, each has seen the news too: a create that ends without its add event (it went
   * to the nested call) must not wait for it, its record is gone.
   */
  private releasedWhileRunning(name: string, deleteEvent: boolean): void {
    for (let o = this.current; o !== null; o = o.outer) {
      if (o.name !== name) continue;
      o.reserved = false;
      if (deleteEvent) o.seen = true;
    }
  }

  /**
   * Sets a bit; out of WASM memory drops the index (stale) instead of throwing into the store.
   * Returns false when the bit was set already and no cool-down held it — true when it was not,
   * and when the index cannot tell (stale).
   */
  markTaken(w: ArrayLike<number>): boolean {
    if (this.stale) return true;
    try {
      return this.index!.set(w) || (this.cooling !== null && this.claimHeld(w));
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
      this.dropIndex();
      return true;
    }
  }

  /**
   * The index missed an event for lack of WASM memory: stale from here, and its memory freed at
   * once — an allocator that does not allocate again soon (a standby replica, one whose index
   * others' writes outgrew) must not keep it from every other index in the process. fresh()
   * rebuilds it from the cache before the next allocation.
   */
  private dropIndex(): void {
    this.stale = true;
    if (this.users === 0) this.index!.destroy(); // else when the last allocateNext running ends (endUse)
  }

  /** `w` (marked) is held by the cool-down: it is taken from now on. True if it was held. */
  private claimHeld(w: ArrayLike<number>): boolean {
    const cooling = this.cooling;
    if (cooling === null || cooling.size === 0 || !this.index!.offsetOf(w, this.off)) return false;
    return cooling.claim(this.off[0]!, this.off[1]!);
  }

  /**
   * A record left the store: clear its bit — or, with a cool-down, keep it marked and held until
   * its time comes.
   */
  private markReleased(w: ArrayLike<number>): void {
    const cooling = this.cooling;
    if (cooling === null || this.stale) {
      this.markFree(w);
      return;
    }
    const off = this.off;
    if (!this.index!.offsetOf(w, off) || !this.index!.has(w) || cooling.holds(off[0]!, off[1]!)) return;
    // its clock may write to the store (not call into the allocator): the index stays readable
    // for the expiries the hold clears, even if that write drops it
    this.beginUse();
    try {
      this.strategyCalls.hold(cooling, off[0]!, off[1]!);
    } catch {
      // A cool-down whose clock fails holds nothing: the address is free at once. Nothing may
      // throw into the store here; the next allocateNext reads the clock again and fails there.
      this.markFree(w);
    } finally {
      this.endUse();
    }
  }

  /**
   * Clears a bit; a sparse run split out of memory drops the index (stale). Returns false when the
   * bit was clear already — true when it was set, and when the index cannot tell (stale).
   */
  markFree(w: ArrayLike<number>): boolean {
    if (this.stale) return true;
    try {
      return this.index!.clear(w);
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
      this.dropIndex();
      return true;
    }
  }

  /** Appends an address to the warm-start buffer, doubling it when full. */
  private load(w: Uint32Array): void {
    const l = this.loading!;
    if ((l.n + 1) * 4 > l.words.length) {
      const grown = new Uint32Array(l.words.length * 2);
      grown.set(l.words);
      l.words = grown;
    }
    l.words.set(w, l.n * 4);
    l.n++;
  }

  private rebuild(): void {
    this.index!.destroy(); // dropped when it went stale already (dropIndex): idempotent
    const records = cacheList(this.cache);
    // The list is the store's code, which may call this allocator again: a call whose own rebuild
    // made the index current meanwhile keeps it — its writes are marked there, and may be
    // missing from this list, read before them.
    if (!this.stale) return;
    const w = new Uint32Array(4);
    const words: number[] = [];
    let listed = 0; // every record read, the store's other ranges' included: what a retry costs
    for (const r of records) {
      listed++;
      if (this.classify(r.name, w) === 1) words.push(w[0]!, w[1]!, w[2]!, w[3]!);
    }
    for (const op of this.pending.values()) words.push(...op.address);
    // The running synchronous calls' reservations (a rebuild nested in a store call: a hook or a
    // watcher called the allocator again): their add events trust the bit (onAdd).
    for (let op = this.current; op !== null; op = op.outer) if (op.reserved) words.push(...op.address);
    let index: AddressSpace | undefined;
    try {
      index = new AddressSpace(this.prefix, this.kind);
      loadInto(index, Uint32Array.from(words), words.length / 4);
    } catch (caught) {
      index?.destroy();
      throw this.rebuildFailed(remeasured(caught), listed); // the new index, dropped, counts as needed
    }
    if (this.driver === null) {
      this.index = index;
      this.stale = false;
      return;
    }
    try {
      this.askOver(this.driver, index);
    } catch (e) {
      throw this.rebuildFailed(e, listed); // out of memory in forRange (its own, or an event's)
    }
  }

  /**
   * `e`, the error a rebuild that read `listed` records of the cache failed with. Still stale:
   * the next allocation tries again — after an OutOfMemoryError, only once the headroom grew or
   * the records dropped, or after as many refusals as the records it read / RECORDS_PER_REFUSAL
   * (rebuildUnlessFailing).
   */
  private rebuildFailed(e: unknown, listed: number): unknown {
    if (e instanceof OutOfMemoryError) {
      const read = listed + this.pending.size;
      this.failedRebuild = {
        headroom: memoryHeadroom(),
        records: this.records(),
        refusals: Math.floor(read / RECORDS_PER_REFUSAL),
        error: e,
      };
    }
    return e;
  }

  /**
   * The last step of a rebuild: the strategy's chooser over the new, loaded `index` (a cool-down's
   * held addresses are free again). Its forRange may run code of the caller's that writes to the
   * store, so the new index takes the events from here — an event ignored while stale would be
   * missing from an index that is then trusted: a record created meanwhile offered again, one
   * deleted meanwhile never offered. Until the new chooser is in place no cool-down holds: a
   * release clears its bit (the old queue serves the old index). A forRange that throws, or an
   * event it caused that ran out of WASM memory (OutOfMemoryError), leaves the index stale and
   * the new one freed, as before the rebuild: the next allocation tries again.
   */
  private askOver(driver: StrategyDriver, index: AddressSpace): void {
    const before = { index: this.index, cooling: this.cooling };
    this.index = index;
    this.cooling = null;
    this.stale = false;
    let made: ChooserOver;
    try {
      made = this.chooserOver(driver, index);
    } catch (e) {
      this.undoRebuild(before);
      throw remeasured(e); // the new index, dropped, counts as given back
    }
    if (this.stale) {
      this.undoRebuild(before);
      throw wasmOutOfMemory(
        `rebuilding the index of ${this.prefix.cidr} (marking an address written to the store while its strategy's forRange() ran)`,
      );
    }
    this.useChooser(made);
  }

  /** A rebuild that failed after loading the new index: stale, as before it, the new index freed. */
  private undoRebuild(before: { index: AddressSpace | null; cooling: CoolingQueue | null }): void {
    this.index!.destroy(); // idempotent
    this.index = before.index;
    this.cooling = before.cooling;
    this.stale = true;
  }

  // ── checks and lifecycle ──────────────────────────────────────────────────────────────────

  /**
   * Re-derives what is kept here from the cache and the index, and throws an Error naming the
   * first disagreement (see Allocator.validate). Returns the number of addresses marked taken.
   */
  validate(cidr: string): { indexed: number } {
    // The clock, read as a release starts a hold, runs in the middle of the store event that
    // tells of it (its bit not yet held, used() not yet counted down), and events of the writes it
    // makes wait behind that one: what is kept here and the cache disagree until it ends.
    if (this.strategyCalls.isHolding) {
      throw new InvalidArgumentError(
        `Allocator ${cidr}: validate() cannot check the allocator from inside a cool-down's clock read as a release starts a hold: the store event of that release is then still being applied`,
      );
    }
    const index = this.index;
    const fresh = index !== null && !this.stale;
    if (fresh) {
      const code = index.index.validate();
      if (code !== 0)
        throw new Error(`Allocator ${cidr}: the WASM index failed its consistency check (code ${code}): a bug in ipallocator`);
      const held = this.cooling?.check(this.current === null && this.asyncCalls === 0);
      if (held) throw new Error(`Allocator ${cidr}: cool-down: ${held}`);
    }
    let counted = 0;
    let inRange = 0;
    const w = new Uint32Array(4);
    for (const r of cacheList(this.cache)) {
      if (this.classify(r.name, w) !== 1) continue;
      inRange++;
      if (hasAllocatorLabels(r, this.ipFamily)) counted++;
      if (fresh && !index.has(w)) throw new Error(`Allocator ${cidr}: the cache holds ${r.name}, the index does not mark it taken`);
    }
    if (counted !== this.counted) {
      throw new Error(`Allocator ${cidr}: used() counts ${this.counted} labelled records in range, the cache holds ${counted}`);
    }
    const indexed = fresh ? index.count() : 0;
    if (this.current !== null || this.asyncCalls !== 0) return { indexed };
    // With no call in flight, `pending` holds only created records the cache has not reported
    // (a store call counted as running would keep this check off for good), and every mark is a
    // record of the cache, such a record, or held by a cool-down.
    let unreported = 0;
    for (const [name, first] of this.pending) {
      for (let op: Op | null = first; op !== null; op = op.nextSameName) {
        if (op.calling)
          throw new Error(`Allocator ${cidr}: a create of ${name} counts as running with no call in flight: a bug in ipallocator`);
      }
      if (!cacheHolds(this.cache, name)) unreported++;
    }
    const cooling = this.cooling?.size ?? 0;
    if (fresh && indexed !== inRange + unreported + cooling) {
      throw new Error(
        `Allocator ${cidr}: the index marks ${indexed} addresses taken with no call in flight, ` +
          `the cache holds ${inRange} in range${unreported === 0 ? '' : `, ${unreported} created not yet reported`}` +
          `${cooling === 0 ? '' : ` and the cool-down ${cooling}`}`,
      );
    }
    return { indexed };
  }

  /**
   * Unsubscribes and frees the index. Idempotent; events are ignored afterwards. An unsubscribe
   * that throws (a store of your own) is rethrown once the index is freed: a second destroy()
   * does nothing, so the memory must not depend on the store.
   */
  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.unsubscribe();
    } finally {
      this.index?.destroy();
      this.pending.clear();
    }
  }
}
