// ReferenceAllocator: the upstream algorithm as written, in plain TypeScript and BigInt — the
// slow, obviously-correct oracle that Allocator (adapters/allocator.ts) is tested against.
//
// It follows upstream master (docs/semantics.md; the seed is pkg/registry/core/service/ipallocator
// /ipallocator.go): a random start in the upper band, a linear wraparound scan asking the cache
// about every candidate by name, a create for each candidate the cache does not know, AlreadyExists
// → next candidate, any other create error → abort with it; then the same in the lower band.
//
// A range and its bands (IPv4 /24, rangeOffset 16):
//
//   network   first          offsetAddress                        last   broadcast
//   .0        .1 ───── .16   .17 ─────────────────────────────── .254   .255
//   (never)   └ lower band ┘ └ upper ("dynamic") band: scanned first ┘    (never; IPv6 has no
//             (static-preferred, scanned only when the upper is full)      broadcast: last = all-ones)
//
// Nothing here is fast on purpose: every candidate is formatted and looked up by name, exactly
// like upstream's lister.Get(ip.String()). Only used() is O(1) (a set of counted names kept from
// the cache's events), because the gauges read it after every allocation.
import {
  isAllocated,
  isAlreadyExists,
  isDestroyed,
  ErrAllocated,
  ErrDestroyed,
  ErrFull,
  ErrNotInRange,
  ErrNotReady,
  NOT_READY_WHY,
  InvalidArgumentError,
  InvalidRangeError,
} from './errors.ts';
import { checkReady, classCalledOn, optionsObject, unboundCall, unboundRead } from './input.ts';
import { quoteInput } from './quote.ts';
import { formatAddr, formatIPv6, parseAddrInto, parsePrefix, wordsToBig, type Family } from './address.ts';
import { DryRunAllocator } from './dry-run.ts';
import { invalidFirstAddressError, Prefix, refuseIPv4MappedOverlap, shortIPv6RangeRefusal } from './geometry.ts';
import {
  checkParentRef,
  forEachLabelledAddress,
  hasAllocatorLabels,
  parseRecordName,
  refuseBlindStore,
  writeLabelsFor,
} from './records.ts';
import { storeOption } from './memory-store.ts';
import { NULL_RECORDER, recorderFor, switchRecorder, type MetricsRecorder, type Scope } from './metrics.ts';
import { drawBelow, randomOption, drawU64, type RandomSource, type U64Out } from './random.ts';
import {
  allocatorWatcher,
  cacheHolds,
  checkUnsubscribe,
  COLLISIONS_PER_TURN,
  deleteErrorHandler,
  type IPAddressRecord,
  nextTurn,
  recordAnswer,
  BEING_DESTROYED,
  AS_ALLOCATE,
  AS_DRY_RUN,
  type AllocateCheck,
  CHECK_ALLOCATE,
  CHECK_ALLOCATE_NEXT,
  STOP_SEARCHES,
  type Store,
  type StoreWatcher,
  syncedAnswer,
  tellDeleteError,
  type DeleteErrorHandler,
  type ParentRef,
} from './store.ts';
import { ChooserCalls } from './chooser-calls.ts';
import { type AllocatorOptions, type IPAllocator, type IPFamily, type MetricsRegistry, readOnlyFields } from './types.ts';
import { INSPECT, type InspectOptions, inspection } from './inspect.ts';
import { SAME_THREAD } from './same-thread.ts';

const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_INT64 = (1n << 63n) - 1n;

/** Range geometry in BigInt, as upstream's NewIPAllocator computes it. */
// Computed independently of adapters/geometry.ts so the oracle does not share its arithmetic with the product.
/** @internal */
export interface BigGeometry {
  family: IPFamily;
  width: 32 | 128;
  bits: number;
  /** Canonical masked prefix text. */
  cidr: string;
  network: bigint;
  broadcast: bigint;
  /** network + 1 */
  first: bigint;
  /** broadcast (IPv6) or broadcast − 1 (IPv4); may be < first (empty range). */
  last: bigint;
  /** hostsPerNetwork. */
  size: bigint;
  rangeOffset: bigint;
  /** first + rangeOffset: the start of the dynamic band. */
  offsetAddress: bigint;
}

/** @internal */
export function bigGeometry(cidrText: string): BigGeometry {
  const p = parsePrefix(cidrText);
  const width = p.family === 4 ? 32 : 128;
  const short = shortIPv6RangeRefusal(p.family, p.bits);
  if (short !== undefined) throw new InvalidRangeError(short);
  refuseIPv4MappedOverlap(Prefix.parse(cidrText));
  const h = width - p.bits;
  const top = (1n << BigInt(width)) - 1n;
  const hostMask = (1n << BigInt(h)) - 1n;
  const value = p.family === 4 ? BigInt(p.words[3]!) : wordsToBig(p.words);
  const network = value & (top ^ hostMask);
  const broadcast = network | hostMask;

  // hostsPerNetwork
  let size: bigint;
  if (h >= 64) size = MAX_UINT64;
  else {
    size = (1n << BigInt(h)) - 1n; // no network address
    if (p.family === 4) size = size === 0n ? 0n : size - 1n; // no broadcast address
  }

  // calculateRangeOffset (KEP-3070) on k8s.io/utils RangeSize: the raw size 2^h, saturating at
  // MaxInt64, and 0 for an IPv4 /0 or /1 and an IPv6 /0 or /1
  const cidrSize = h >= width - 1 ? 0n : h >= 63 ? MAX_INT64 : 1n << BigInt(h);
  let rangeOffset = 0n;
  if (cidrSize > 16n) {
    rangeOffset = cidrSize / 16n;
    if (rangeOffset < 16n) rangeOffset = 16n;
    if (rangeOffset > 256n) rangeOffset = 256n;
  }

  const first = network + 1n;
  // upstream: prefix.Masked().Addr().Next() is the invalid Addr past the last address, and
  // addOffsetAddress on it fails with "invalid address []"; ours names the range and the cause.
  if (first > top) throw invalidFirstAddressError(`${formatBig(p.family, network)}/${p.bits}`);
  const last = p.family === 4 ? broadcast - 1n : broadcast;
  const offsetAddress = first + rangeOffset;
  return {
    family: p.family === 4 ? 'IPv4' : 'IPv6',
    width,
    bits: p.bits,
    cidr: `${formatBig(p.family, network)}/${p.bits}`,
    network,
    broadcast,
    first,
    last,
    size,
    rangeOffset,
    offsetAddress,
  };
}

function formatBig(family: Family, v: bigint): string {
  if (family === 4) return formatAddr(4, [0, 0, 0, Number(v)]);
  return formatIPv6(
    Number((v >> 96n) & 0xffffffffn),
    Number((v >> 64n) & 0xffffffffn),
    Number((v >> 32n) & 0xffffffffn),
    Number(v & 0xffffffffn),
  );
}

// ---------------------------------------------------------------------------------------------

/** Thrown internally when a band has been scanned to the end. */
const BAND_FULL = Symbol('band full');
/** allocateFromRange's rejection when the range stopped being ready after a collision: ErrNotReady, not counted. */
const NO_LONGER_READY = Symbol('no longer ready');

/**
 * The same contract as Allocator, written as upstream's ipallocator.go is: a linear scan of the
 * store's cache, BigInt math, no WebAssembly. For the same random source and store it gives the
 * same answers as Allocator: the baseline to compare with.
 */
// The oracle of our tests (test/allocator-equivalence.test.ts).
export class ReferenceAllocator implements IPAllocator, Disposable {
  /** Makes postMessage refuse the allocator, saying why (SAME_THREAD); first, so it is read first. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read by structuredClone, not by this code
  private readonly sameThreadOnly = SAME_THREAD;
  readonly cidr: string;
  readonly ipFamily: IPFamily;
  readonly store: Store;
  private readonly g: BigGeometry;
  private readonly fam: Family;
  private readonly random: RandomSource;
  /**
   * Its draws from a random source of the caller's, from inside which allocate, allocateNext,
   * release and destroy are refused, as Allocator refuses them: a source that destroyed this
   * allocator would otherwise have the draw go on to write a record after the destroy.
   */
  private readonly drawCalls = new ChooserCalls(
    () => `ReferenceAllocator ${this.cidr}: its random source may not change or destroy the allocator it draws for`,
  );
  /**
   * What setReady, enableMetrics, destroy and [STOP_SEARCHES] change, in an object of its own
   * rather than fields of this one: an object made with Object.create(allocator) (a wrapper
   * overriding one method) and the allocator under it share it (are destroyed together, made
   * ready together), as Allocator's are. `stopping`: searches stop at their next collision.
   */
  private readonly shared: { destroyed: boolean; ready: boolean; metrics: MetricsRecorder; stopping: boolean } = {
    destroyed: false,
    ready: true,
    metrics: NULL_RECORDER,
    stopping: false,
  };
  /** Names of labelled records of this family inside the prefix: used() = its size. */
  private readonly counted = new Set<string>();
  private readonly unsubscribe: () => void;
  private readonly draw: U64Out = { hi: 0, lo: 0 };
  private readonly words = new Uint32Array(4);

  /**
   * An allocator for the range `cidr` over `options.store` (default: a MemoryStore of its own),
   * subscribed to the store's cache at once. Throws as Allocator's constructor does.
   */
  constructor(cidr: string, options?: AllocatorOptions) {
    const opts = optionsObject(options, 'ReferenceAllocator', { store: true, random: true, metrics: true });
    this.g = bigGeometry(cidr);
    this.cidr = this.g.cidr;
    this.ipFamily = this.g.family;
    this.fam = this.g.family === 'IPv4' ? 4 : 6;
    this.store = storeOption(opts.store);
    refuseBlindStore(this.store, this.ipFamily, 'ReferenceAllocator');
    readOnlyFields(this, 'cidr', 'ipFamily', 'store');
    this.random = this.drawCalls.guardRandom(randomOption(opts.random));
    const watcher: StoreWatcher = allocatorWatcher({
      onAdd: (r) => {
        if (this.counts(r)) this.counted.add(r.name);
        else this.counted.delete(r.name);
      },
      onDelete: (r) => {
        this.counted.delete(r.name);
      },
    });
    const metrics = opts.metrics === undefined || opts.metrics === false ? null : recorderFor(opts.metrics); // throws before subscribing
    this.unsubscribe = checkUnsubscribe(this.store.cache.subscribe(watcher));
    if (metrics !== null) {
      this.shared.metrics = metrics;
      metrics.track(this.cidr, this);
    }
  }

  /**
   * `new ReferenceAllocator(cidr, options)`, spelled as `Allocator.create` for the one-line swap;
   * called on a subclass, an instance of that subclass.
   */
  static create<A extends ReferenceAllocator>(
    this: new (
      cidr: string,
      options?: AllocatorOptions,
    ) => A,
    cidr: string,
    options?: AllocatorOptions,
  ): A;
  static create(cidr: string, options?: AllocatorOptions): ReferenceAllocator;
  static create(this: unknown, cidr: string, options: AllocatorOptions = {}): ReferenceAllocator {
    // biome-ignore lint/complexity/noThisInStatic: the class it is called on, which may be a subclass
    return new (classCalledOn(this, ReferenceAllocator))(cidr, options);
  }

  /** Usable addresses (hostsPerNetwork). */
  get size(): bigint {
    if (!(this instanceof ReferenceAllocator)) throw unboundRead(this, 'ReferenceAllocator', 'size');
    return this.g.size;
  }

  /**
   * ErrNotReady, saying why: setReady(false), or else the store has not synced — or, `since`
   * (a search stopped after a collision), has stopped being synced.
   */
  private notReady(since = false): ErrNotReady {
    if (!this.shared.ready) return new ErrNotReady(NOT_READY_WHY.switchedOff);
    return new ErrNotReady(since ? NOT_READY_WHY.storeUnsynced : NOT_READY_WHY.storeNotSynced);
  }

  /** The MetaAllocator's switch (upstream `ready`); allocate/allocateNext throw ErrNotReady while false. */
  setReady(this: object, ready: boolean): void;
  setReady(this: ReferenceAllocator, ready: boolean): void {
    checkThis(this, 'setReady');
    this.live();
    this.shared.ready = checkReady(ready);
  }

  isReady(this: object): boolean;
  isReady(this: ReferenceAllocator): boolean {
    checkThis(this, 'isReady');
    this.live();
    return this.shared.ready && syncedAnswer(this.store.cache.hasSynced());
  }

  allocate(this: object, ip: string, owner?: ParentRef | null): Promise<void>;
  async allocate(this: ReferenceAllocator, ip: string, owner?: ParentRef | null): Promise<void> {
    checkThis(this, 'allocate');
    this.drawCalls.refuseInside();
    const name = this.checkRange(ip, false);
    const parentRef = checkParentRef(owner);
    this.live(); // the owner's getters may have destroyed this (as Allocator)
    const start = this.shared.metrics.start();
    await this.createRecord(name, parentRef, 'static');
    this.shared.metrics.observe(this.cidr, start);
  }

  allocateNext(this: object, owner?: ParentRef | null): Promise<string>;
  async allocateNext(this: ReferenceAllocator, owner?: ParentRef | null): Promise<string> {
    checkThis(this, 'allocateNext');
    this.live(); // before the owner: after destroy() every call is ErrDestroyed
    this.drawCalls.refuseInside();
    const parentRef = checkParentRef(owner);
    if (!this.isReady()) throw this.notReady();
    const start = this.shared.metrics.start();
    const g = this.g;
    const d = this.draw;
    const rangeSize = g.size - g.rangeOffset;
    let offset: bigint;
    if (rangeSize >= MAX_INT64) {
      drawU64(this.random, d);
      offset = (BigInt(d.hi) << 32n) | BigInt(d.lo);
      if (MAX_UINT64 - offset < g.rangeOffset) offset -= g.rangeOffset; // kubernetes/kubernetes#134193 overflow guard
    } else if (rangeSize === 0n) {
      throw new ErrFull(); // no metric: upstream returns before counting
    } else {
      drawBelow(this.random, Number(rangeSize >> 32n), Number(rangeSize & 0xffffffffn), d);
      offset = (BigInt(d.hi) << 32n) | BigInt(d.lo);
    }
    let err: unknown;
    try {
      const ip = await this.allocateFromRange(g.offsetAddress, g.last, offset, parentRef);
      this.shared.metrics.observe(this.cidr, start);
      return ip;
    } catch (e) {
      err = e;
    }
    if (err === BAND_FULL && g.rangeOffset !== 0n) {
      drawBelow(this.random, 0, Number(g.rangeOffset), d);
      try {
        const ip = await this.allocateFromRange(g.first, g.offsetAddress - 1n, BigInt(d.lo), parentRef);
        this.shared.metrics.observe(this.cidr, start);
        return ip;
      } catch (e) {
        err = e;
      }
    }
    if (isDestroyed(err)) throw err; // destroyed during a collision: the search stopped, no verdict to count
    if (err === NO_LONGER_READY) throw this.notReady(true); // as a call that starts there: not counted
    this.shared.metrics.error(this.cidr, 'dynamic');
    throw err === BAND_FULL ? new ErrFull() : err;
  }

  /**
   * upstream ipIterator + allocateFromRange: candidates start, start+1, …, last, first, …,
   * start−1 where start = first + offset (no candidates if that overflows the family width;
   * clamped to first if it is past last). Rejects with BAND_FULL when every candidate failed,
   * and with NO_LONGER_READY when, after a collision, the range is no longer ready (setReady(false),
   * or its store's cache not synced any more): the search stops there, as the Allocator's does
   * (upstream's goes on; the Allocator's answer is the one this oracle checks).
   *
   * One deliberate difference: a band ending at ffff:…:ffff wraps to its first address like any
   * other. Upstream's iterator steps past the end of the address space to the invalid Addr and
   * stops, so it reports "range is full" with free addresses below the start (an upstream bug;
   * geometry.ts ipIterator makes the same choice).
   */
  private async allocateFromRange(first: bigint, last: bigint, offset: bigint, owner: ParentRef | null): Promise<string> {
    let start = first + offset;
    if (start > (1n << BigInt(this.g.width)) - 1n || first > last) throw BAND_FULL;
    if (start > last) start = first;
    let ip = start;
    let collisions = 0; // the static band holds at most 256 addresses: this band's count is the call's
    do {
      const name = formatBig(this.fam, ip);
      if (!cacheHolds(this.store.cache, name)) {
        // a cache in plain JavaScript may answer null
        try {
          await this.createRecord(name, owner, 'dynamic');
          return name;
        } catch (e) {
          // mid-air collision: another allocator has it and our cache does not know yet
          if (!isAllocated(e)) throw e; // errors.Is: a store's rejection may be anything, a revoked Proxy too
          // now and then timers and I/O run, so a timer can end a search that would never end
          if (++collisions % COLLISIONS_PER_TURN === 0) await nextTurn();
          // destroyed while the create was in flight, or meanwhile, or asked to stop: stop searching
          this.liveInSearch();
          const ready = this.isReady();
          this.liveInSearch(); // the cache's hasSynced() may destroy this allocator or stop its searches
          if (!ready) throw NO_LONGER_READY;
        }
      }
      ip = ip === last ? first : ip + 1n;
    } while (ip !== start);
    throw BAND_FULL;
  }

  /** ErrDestroyed when this allocator was destroyed or asked to stop its searches (STOP_SEARCHES). */
  private liveInSearch(): void {
    if (this.shared.stopping) throw new ErrDestroyed(`ReferenceAllocator ${this.cidr}`, this.destroyed ? undefined : BEING_DESTROYED);
    this.live();
  }

  /** upstream createIPAddress: create, count, set the gauges. */
  private async createRecord(name: string, owner: ParentRef | null, scope: Scope): Promise<void> {
    try {
      await this.store.create({ name, labels: writeLabelsFor(this.ipFamily), parentRef: owner });
    } catch (e) {
      this.shared.metrics.error(this.cidr, scope);
      if (isAlreadyExists(e)) throw new ErrAllocated();
      throw e;
    }
    this.shared.metrics.allocation(this.cidr, scope);
    this.gauges();
  }

  /** Ready, parse, range: returns the canonical name or throws (ErrNotReady, InvalidAddressError, ErrNotInRange). */
  private checkRange(ip: string, dryRun: boolean): string {
    if (!this.isReady()) throw this.notReady();
    const w = this.words;
    const family = parseAddrInto(ip, w);
    const name = formatAddr(family, w);
    const v = family === 4 ? BigInt(w[3]!) : wordsToBig(w);
    if (family !== this.fam || v < this.g.first || v > this.g.last) {
      if (!dryRun) this.shared.metrics.error(this.cidr, 'static');
      throw new ErrNotInRange(name, this.cidr);
    }
    return name;
  }

  /**
   * Releases `ip`: deletes its record, as upstream's Release, which ignores every error of the
   * delete (and logs it), as this does, telling `onDeleteError` when given; releasing a free
   * address is a no-op. An address of this family outside
   * the range is not refused: its record, if one exists (another range's on the same store), is
   * deleted too. Malformed text rejects with InvalidAddressError (upstream's Release takes a
   * net.IP); an address of the other family cannot be this range's: it is never sent to the store.
   */
  release(this: object, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void>;
  async release(this: ReferenceAllocator, ip: string, onDeleteError?: DeleteErrorHandler): Promise<void> {
    checkThis(this, 'release');
    this.live();
    this.drawCalls.refuseInside();
    const told = deleteErrorHandler(onDeleteError);
    const w = this.words;
    const family = parseAddrInto(ip, w);
    if (family !== this.fam) return;
    const name = formatAddr(family, w);
    try {
      await this.store.delete(name);
    } catch (e) {
      await tellDeleteError(told, e);
      return;
    }
    this.gauges();
  }

  /**
   * Updates the used/free gauges — not once destroyed: they read used(), which then throws, and
   * a call the store answered after destroy() must still end as the store answered.
   */
  private gauges(): void {
    if (!this.destroyed) this.shared.metrics.gauges(this.cidr, this);
  }

  /** Malformed text rejects with InvalidAddressError; the other family resolves false without asking the store. */
  has(this: object, ip: string): Promise<boolean>;
  async has(this: ReferenceAllocator, ip: string): Promise<boolean> {
    checkThis(this, 'has');
    this.live();
    const w = this.words;
    const family = parseAddrInto(ip, w);
    if (family !== this.fam) return false;
    const name = formatAddr(family, w);
    return recordAnswer(await this.store.get(name), 'get', name) !== null;
  }

  forEach(this: object, fn: (ip: string) => void): void;
  forEach(this: ReferenceAllocator, fn: (ip: string) => void): void {
    checkThis(this, 'forEach');
    this.live();
    if (typeof fn !== 'function') throw new InvalidArgumentError(`forEach needs a function, got ${quoteInput(fn)}`);
    forEachLabelledAddress(this.store.cache, this.ipFamily, () => this.destroyed, fn);
  }

  used(this: object): number;
  used(this: ReferenceAllocator): number {
    checkThis(this, 'used');
    this.live();
    return this.counted.size;
  }

  free(this: object): bigint;
  free(this: ReferenceAllocator): bigint {
    checkThis(this, 'free');
    const used = BigInt(this.used());
    const size = this.size;
    return used > size ? 0n : size - used;
  }

  dryRun(this: object): IPAllocator;
  dryRun(this: ReferenceAllocator): IPAllocator {
    checkThis(this, 'dryRun');
    this.live();
    return new DryRunAllocator(this);
  }

  /**
   * What allocate(ip) checks before its store call, in its order — ready, the address's text, in
   * [first, last] (checkRange) — thrown as allocate throws it. `how` (AllocateCheck): AS_DRY_RUN,
   * the default, for the dry run's allocate and a MetaAllocator's check of its range (nothing
   * counted); AS_ALLOCATE for the real call's (CHECK_ALLOCATE: a call from inside the random
   * source refused first, an ErrNotInRange counted, as allocate does). @internal for
   * DryRunAllocator
   */
  checkAllocate(ip: string, how: AllocateCheck = AS_DRY_RUN): void {
    if (how.refuseInside) this.drawCalls.refuseInside();
    this.checkRange(ip, !how.count);
  }

  /** @internal for DryRunAllocator */
  checkRelease(ip: string): void {
    this.live();
    parseAddrInto(ip, this.words);
  }

  /**
   * What allocateNext checks before its store call — not destroyed, the owner, ready — then the
   * network address, the dry run's answer; for the real call (CHECK_ALLOCATE_NEXT, `dryRun`
   * false), a call from inside the random source is refused too. @internal for DryRunAllocator
   */
  checkAllocateNext(owner: ParentRef | null | undefined, dryRun = true): string {
    this.live();
    checkParentRef(owner);
    if (!dryRun) this.drawCalls.refuseInside();
    if (!this.isReady()) throw this.notReady();
    return formatBig(this.fam, this.g.network);
  }

  enableMetrics(this: object, registry?: MetricsRegistry | true): void;
  enableMetrics(this: ReferenceAllocator, registry?: MetricsRegistry | true): void {
    checkThis(this, 'enableMetrics');
    this.live();
    this.shared.metrics = switchRecorder(this.shared.metrics, registry, this.cidr, this);
  }

  destroy(this: object): void;
  destroy(this: ReferenceAllocator): void {
    checkThis(this, 'destroy');
    if (this.destroyed) return;
    this.drawCalls.refuseInside();
    this.shared.destroyed = true;
    this.shared.ready = false;
    this.shared.metrics.untrack(this.cidr);
    this.unsubscribe();
  }

  [Symbol.dispose](this: object): void;
  [Symbol.dispose](this: ReferenceAllocator): void {
    checkThis(this, '[Symbol.dispose]');
    this.destroy();
  }

  /** What console.log and util.inspect show, in Node and Deno: the range, used, free and isReady() (inspection). */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](
    this: ReferenceAllocator,
    depth: number,
    options?: InspectOptions,
    inspect?: (value: unknown, options?: object) => string,
  ): string {
    const live = () => ({ used: this.used(), free: this.free(), ready: this.isReady() });
    return inspection(this, ReferenceAllocator, 'ReferenceAllocator', () => ({ cidr: this.cidr }), live, depth, options, inspect);
  }

  private get destroyed(): boolean {
    return this.shared.destroyed;
  }

  /** After destroy() every method but destroy throws ErrDestroyed. */
  private live(): void {
    if (this.destroyed) throw new ErrDestroyed(`ReferenceAllocator ${this.cidr}`);
  }

  /**
   * checkAllocate for the real call. Nothing is checked when allocate is overridden. See
   * CHECK_ALLOCATE. @internal for DualStackAllocator
   */
  [CHECK_ALLOCATE](ip: string): void {
    if (this.allocate !== ReferenceAllocator.prototype.allocate) return;
    this.checkAllocate(ip, AS_ALLOCATE);
  }

  /**
   * checkAllocateNext for the real call. Nothing is checked when allocateNext is overridden. See
   * CHECK_ALLOCATE_NEXT. @internal for DualStackAllocator
   */
  [CHECK_ALLOCATE_NEXT](): void {
    if (this.allocateNext !== ReferenceAllocator.prototype.allocateNext) return;
    this.checkAllocateNext(undefined, false);
  }

  /**
   * Ends this allocator's running searches at their next collision, with ErrDestroyed, and every
   * later one at its first: its owner (a DualStackAllocator) is about to destroy it. See
   * STOP_SEARCHES. @internal
   */
  [STOP_SEARCHES](): void {
    this.shared.stopping = true;
  }

  private counts(r: IPAddressRecord): boolean {
    if (!hasAllocatorLabels(r, this.ipFamily)) return false;
    const w = this.words;
    const family = parseRecordName(r.name, w);
    if (family !== this.fam) return false;
    const v = family === 4 ? BigInt(w[3]!) : wordsToBig(w);
    return v >= this.g.network && v <= this.g.broadcast;
  }
}

/**
 * Refuses a call of a ReferenceAllocator's method without its object (unboundCall), with the
 * product's answer. Checked first here, where nothing is timed; Allocator asks only once a call
 * has failed (unboundOr).
 */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof ReferenceAllocator)) throw unboundCall(self, 'ReferenceAllocator', method);
}

// Compile-time conformance (upstream `var _ Interface = &Allocator{}`).
const _conforms: (a: ReferenceAllocator) => IPAllocator = (a) => a;
void _conforms;
