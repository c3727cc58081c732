// Allocator: the product. Same contract, same random draws and the same answers as
// ReferenceAllocator (the upstream algorithm, adapters/reference-allocator.ts), but the search for
// a free address runs in a WASM index of taken offsets instead of a per-address cache lookup.
//
//   offset:   0 ─────────── rangeOffset−1 │ rangeOffset ──────────────────────────── count−1
//   address:  first                        │ offsetAddress                              last
//             └──── lower (static) band ───┘└──────── upper (dynamic) band ─────────────┘
//
//   allocateNext: draw a start in the upper band exactly as the reference does, ask the index
//   for the first free offset from there (wrapping inside the band), reserve it, create the
//   record. AlreadyExists → keep it marked for this call and ask again from the next offset;
//   any other error → un-reserve and abort. Upper band exhausted → the same in the lower band.
//
// The store stays the source of truth. The index is a mirror of the store's cache plus this
// process's own in-flight work:
//
//   taken   = { canonical names in [first, last] the cache holds, ANY labels }   (cache events)
//           ∪ { offsets reserved by in-flight creates of this allocator }
//           ∪ { offsets that collided (AlreadyExists) during a running allocateNext }
//   counted = |{ canonical names in [first, last] with both allocator labels }| (an integer, kept
//             from cache events: the store passes the previous version of an updated record, so
//             an update moves the count only when it adds or removes the labels)
//   extras  = labelled names inside the prefix that have no offset: the network address, the
//             IPv4 broadcast, non-canonical spellings (`2001:db8:0::5`) — upstream counts them
//   used()  = counted + extras.size                                                   O(1)
//
// Why each rule keeps the answers equal to the reference's (sequential calls, cache in step):
// the reference skips a candidate iff `cache.get(name)` finds it, i.e. iff its canonical name is
// in the cache — exactly `taken`. A collision only skips the address for the rest of that call
// (the reference would try it again next call), so collision marks are removed when the call
// ends unless the cache has learned about the name meanwhile.
//
// Invariants: every bit set in `taken` is cleared again by a cache delete event, by the end of
// the call that set it (failed create, collision), or stays because the cache holds the name.
// Hence `taken.count() ≥ count` means the range is really full (or its last free addresses are
// reserved by creates in flight in this process) and allocateNext fails fast — after making the
// same random draws as the reference, so both stay in step.
//
// A successful create sets its bit again only if the cache has not reported the name while the
// create was pending (`inflight`): then a stale delete event may have cleared the reservation
// and the record's own add event is still to come. If the cache did report it, later events
// are the truth — re-setting would leak a bit when the record was deleted before the call
// resumed.
//
// On a store with synchronous operations (store.sync, e.g. MemoryStore) the same steps run in
// one synchronous call (allocateNow, nextNow, deleteNow): nothing can interleave between the
// choice and the create, and "reported while pending" is the `now` record's nowSeen flag.
import {
  AlreadyExistsError,
  ErrAllocated,
  ErrFull,
  ErrNotInRange,
  ErrNotReady,
  InvalidArgumentError,
  InvalidRangeError,
} from './errors.ts';
import { canonicalOf, formatAddr, parseAddrInto, wordsToBig, type Family } from './address.ts';
import { Prefix, refuseIPv4MappedOverlap } from './geometry.ts';
import { FreeIndex, type IndexKind } from './free-index.ts';
import { MemoryStore } from './memory-store.ts';
import { NULL_RECORDER, recorderFor, type MetricsRecorder } from './metrics.ts';
import { defaultRandom, drawBelow, drawU64, type RandomSource, type U64Out } from './random.ts';
import { DryRunAllocator, type DryRunTarget } from './dry-run.ts';
import { hasAllocatorLabels, labelsFor, parseRecordName } from './records.ts';
import type { IPAddressRecord, Store, StoreCache, StoreWatcher, SyncStoreOps } from './store.ts';
import type { AllocatorOptions, IPAllocator, IPFamily, ParentRef } from './types.ts';
import { OK } from './wasm.ts';


/** Allocator options: the shared ones plus the index representation (default: by size). */
export interface IndexedAllocatorOptions extends AllocatorOptions {
  /** 'dense' (a bitmap, up to 2^31 addresses), 'sparse', or 'auto' (dense up to 2^24). */
  index?: IndexKind;
}

const TWO32 = 4294967296;
/** Go's math.MaxInt64: rand.Int63n's bound, above which upstream draws with rand.Uint64. */
const MAX_INT64 = (1n << 63n) - 1n;
const U32_MAX = 0xffffffff;

/** How the upper band's start offset is drawn (upstream's switch on rangeSize). */
const DRAW_EMPTY = 0; // rangeSize == 0: ErrFull before any draw
const DRAW_BELOW = 1; // rand.Int63n(rangeSize)
const DRAW_U64 = 2; // rand.Uint64() with the #134193 guard (IPv6 /64)

/** The store calls withNow() makes. */
const NOW_CREATE = 0;
const NOW_DELETE = 1;
const CALL_CREATE = 2;
const CALL_DELETE = 3;

/** allocateNext's answers other than an address (nextNow, beginNext). */
const NEXT_NOT_READY = 0;
const NEXT_FULL = 1;

const RESOLVED: Promise<void> = Promise.resolve();
const TRUE: Promise<boolean> = Promise.resolve(true);
const FALSE: Promise<boolean> = Promise.resolve(false);

export class Allocator implements IPAllocator, DryRunTarget {
  readonly cidr: string;
  readonly ipFamily: IPFamily;
  readonly store: Store;
  /** The range geometry (offsets are relative to `prefix.first`). */
  readonly prefix: Prefix;

  private readonly cache: StoreCache;
  private readonly fam: Family;
  private readonly labels: Readonly<Record<string, string>>;
  private readonly random: RandomSource;
  private metrics: MetricsRecorder = NULL_RECORDER;
  private ready = true;
  private destroyed = false;
  private usedAfterDestroy = 0;
  private sizeForFree: bigint;

  /** null when [first, last] is empty (/31, /32, /128). */
  private readonly taken: FreeIndex | null;
  /** Labelled canonical names in [first, last] that the cache holds (see the header). */
  private counted = 0;
  private readonly extras = new Set<string>();
  /**
   * Names with a create in flight → 1 once the cache reported an add for the name while the
   * create was pending, else 0. Decides whether a successful create must set its bit again.
   */
  private readonly inflight = new Map<string, number>();
  /**
   * Our own records whose bit we set ourselves because the cache had not reported them when the
   * create succeeded (a lagging cache) → their offset. An add or delete event, or our own release,
   * removes the entry. If the add event was lost and the record deleted meanwhile, no event will
   * ever come: onResync (the cache re-listed) clears the bits of those the cache still lacks.
   */
  private readonly selfMarked = new Map<string, readonly [number, number]>();
  private readonly unsubscribe: () => void;

  // Geometry as u32 numbers for the hot path.
  private readonly rangeOffset: number;
  /** count − 1: the last offset. */
  private readonly lastHi: number;
  private readonly lastLo: number;
  /** count as a float (exact below 2^53) for the full check. */
  private readonly countNum: number;
  private readonly drawKind: number;
  /** rangeSize = count − rangeOffset, the size of the upper band. */
  private readonly rsHi: number;
  private readonly rsLo: number;
  /**
   * DRAW_U64 only: a drawn offset above (limitHi, limitLo) makes offsetAddress + offset leave the
   * family, and upstream's iterator then yields nothing (only for the last /64 of the space).
   */
  private readonly hasLimit: boolean;
  private readonly limitHi: number;
  private readonly limitLo: number;

  /**
   * The store's synchronous operations (MemoryStore), or null: every call goes through promises.
   * Read on every call, not cached: a MemoryStore whose create/delete/get is replaced later (a
   * test spy, a fault injector) stops offering them, and its replacement must not be bypassed.
   */
  private get syncOps(): SyncStoreOps | null {
    const s = this.store.sync;
    return s === undefined ? null : s;
  }
  /** A dense index over fewer than 2^32 offsets: the one-call takeFree32 path applies. */
  private readonly dense32: boolean;
  /**
   * The record this allocator is writing right now, inside a store call (withNow), with its
   * offset: its own cache event, delivered during the call by a synchronous cache, skips
   * classify(). nowSeen: that event has arrived.
   */
  private nowName: string | null = null;
  private nowHi = 0;
  private nowLo = 0;
  private nowSeen = false;
  /** Where the next scan starts (beginNext, after()). Read before any await. */
  private startHi = 0;
  private startLo = 0;

  /** During the constructor's replay: the offsets seen so far, (hi, lo) pairs (see the constructor). */
  private loadPairs: Uint32Array | null = null;
  private loadN = 0;

  private readonly draw: U64Out = { hi: 0, lo: 0 };
  private readonly words = new Uint32Array(4);
  private readonly off = new Uint32Array(2);

  constructor(cidr: string, options: IndexedAllocatorOptions = {}) {
    const p = Prefix.parse(cidr);
    if (p.version === 6 && p.length < 64) {
      throw new InvalidRangeError(`shortest allowed prefix length for service CIDR is 64, got ${p.length}`);
    }
    if (!p.hasFirst) throw new InvalidRangeError('invalid address []');
    refuseIPv4MappedOverlap(p);
    this.prefix = p;
    this.cidr = p.cidr;
    this.ipFamily = p.family;
    this.fam = p.version;
    this.labels = labelsFor(p.family);
    this.store = options.store ?? new MemoryStore();
    this.cache = this.store.cache;
    this.random = options.random ?? defaultRandom();
    this.sizeForFree = p.size;

    this.rangeOffset = p.rangeOffset;
    const empty = p.isEmpty;
    this.countNum = p.countHi * TWO32 + p.countLo;
    // last offset = count − 1
    this.lastHi = p.countLo === 0 ? p.countHi - 1 : p.countHi;
    this.lastLo = (p.countLo - 1) >>> 0;
    // rangeSize = count − rangeOffset (count ≥ rangeOffset whenever rangeOffset > 0)
    const rs = p.count - BigInt(p.rangeOffset);
    this.rsHi = Number(rs >> 32n);
    this.rsLo = Number(rs & 0xffffffffn);
    this.drawKind = empty || rs === 0n ? DRAW_EMPTY : rs >= MAX_INT64 ? DRAW_U64 : DRAW_BELOW;
    const top = p.width === 32 ? 0xffffffffn : (1n << 128n) - 1n;
    const limit = top - wordsToBig(p.offsetAddress);
    this.hasLimit = this.drawKind === DRAW_U64 && limit < 1n << 64n;
    this.limitHi = this.hasLimit ? Number(limit >> 32n) : 0;
    this.limitLo = this.hasLimit ? Number(limit & 0xffffffffn) : 0;

    const kind = options.index ?? 'auto';
    this.taken = empty ? null : new FreeIndex(p.countHi, p.countLo, kind);
    this.dense32 = this.taken !== null && this.taken.kind === 'dense' && p.countHi === 0;

    const watcher: StoreWatcher = {
      onAdd: (r, previous) => this.onAdd(r, previous),
      onResync: () => this.onResync(),
      onDelete: (r) => this.onDelete(r),
    };
    // Warm start: the cache replays every record it holds through onAdd; their offsets are
    // collected and set in one bulk call (a sparse index then builds its pages at once instead of
    // inserting a million runs one by one). If anything fails, nothing is left subscribed or held.
    this.loadPairs = this.taken === null ? null : new Uint32Array(64);
    let unsubscribe: (() => void) | undefined;
    try {
      unsubscribe = this.cache.subscribe(watcher);
      const pairs = this.loadPairs;
      this.loadPairs = null;
      if (pairs !== null && this.loadN > 0) this.taken!.setMany(pairs, this.loadN);
    } catch (e) {
      this.loadPairs = null;
      this.destroyed = true;
      unsubscribe?.();
      this.taken?.destroy();
      throw e;
    }
    this.loadN = 0;
    this.unsubscribe = unsubscribe;
    if (options.metrics !== undefined && options.metrics !== false) this.enableMetrics(options.metrics);
  }

  /** The factory: `Allocator.create("10.96.0.0/12", { store })`. */
  static create(cidr: string, options: IndexedAllocatorOptions = {}): Allocator {
    return new Allocator(cidr, options);
  }

  /** Usable addresses (hostsPerNetwork). */
  get size(): bigint {
    return this.prefix.size;
  }

  /** The MetaAllocator's switch (upstream `ready`); allocate/allocateNext throw ErrNotReady while false. */
  setReady(ready: boolean): void {
    this.ready = ready && !this.destroyed;
  }

  isReady(): boolean {
    return this.ready && this.cache.hasSynced();
  }

  // ── allocate (static) ──────────────────────────────────────────────────────────────────────

  allocate(ip: string, owner?: ParentRef): Promise<void> {
    const sync = this.syncOps;
    if (sync === null) return this.allocateAsync(ip, owner);
    try {
      this.allocateNow(sync, ip, owner);
      return RESOLVED;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** allocate() on a store with synchronous operations: one step, no await. */
  private allocateNow(sync: SyncStoreOps, ip: string, owner: ParentRef | undefined): void {
    const name = this.checkRange(ip, false);
    const start = this.metrics.start();
    const o = this.off;
    this.prefix.offsetOf(this.fam, this.words, o);
    const oHi = o[0]!;
    const oLo = o[1]!;
    const reserved = this.taken!.set(oHi, oLo);
    let seen: boolean;
    try {
      seen = this.createNow(sync, name, oHi, oLo, owner);
    } catch (e) {
      throw this.staticFailed(e, reserved, name, oHi, oLo);
    }
    this.staticDone(seen, name, oHi, oLo, start);
  }

  private async allocateAsync(ip: string, owner: ParentRef | undefined): Promise<void> {
    const name = this.checkRange(ip, false);
    const start = this.metrics.start();
    const o = this.off;
    this.prefix.offsetOf(this.fam, this.words, o);
    const oHi = o[0]!;
    const oLo = o[1]!;
    // Reserve before the create, as allocateNext does: when the index cannot get memory
    // (OutOfMemoryError) nothing has been written yet, and the add event finds the bit set.
    const reserved = this.taken!.set(oHi, oLo);
    this.inflight.set(name, 0);
    try {
      await this.createCall(name, oHi, oLo, owner);
    } catch (e) {
      this.inflight.delete(name);
      throw this.staticFailed(e, reserved, name, oHi, oLo);
    }
    const seen = this.inflight.get(name) !== 0;
    this.inflight.delete(name);
    this.staticDone(seen, name, oHi, oLo, start);
  }

  /** A failed static create: un-reserve, count it, and the error to throw. */
  private staticFailed(e: unknown, reserved: boolean, name: string, oHi: number, oLo: number): unknown {
    if (reserved && !this.destroyed && this.cache.get(name) === undefined) this.taken!.clear(oHi, oLo);
    this.metrics.error(this.cidr, 'static');
    return e instanceof AlreadyExistsError ? new ErrAllocated() : e;
  }

  private staticDone(seen: boolean, name: string, oHi: number, oLo: number, start: number): void {
    // The cache may not have told us yet: mark it now (its add event will agree).
    if (!seen && !this.destroyed) this.markSelf(name, oHi, oLo);
    this.metrics.allocation(this.cidr, 'static');
    this.metrics.gauges(this.cidr, this);
    this.metrics.observe(this.cidr, start);
  }

  /** Ready, parse, range: leaves the address in this.words, returns its canonical name. */
  private checkRange(ip: string, dryRun: boolean): string {
    if (!this.isReady()) throw new ErrNotReady();
    const w = this.words;
    const family = parseAddrInto(ip, w);
    const name = canonicalOf(ip as string, family, w);
    if (!this.prefix.inRange(family, w)) {
      if (!dryRun) this.metrics.error(this.cidr, 'static');
      throw new ErrNotInRange(name, this.cidr);
    }
    return name;
  }

  // ── the store calls ────────────────────────────────────────────────────────────────────────

  /**
   * Runs one store call with `now` set to the record it writes (name and offset): that record's
   * own cache event, delivered inside the call by a synchronous cache, skips classify() and sets
   * nowSeen. The previous `now` is restored afterwards, in case a watcher re-entered this
   * allocator. NOW_CREATE / NOW_DELETE call sync.createSync / deleteSync and return whether the
   * event arrived; CALL_CREATE / CALL_DELETE return store.create / delete's promise.
   */
  private withNow(op: number, sync: SyncStoreOps | null, name: string, oHi: number, oLo: number, owner: ParentRef | undefined): boolean | Promise<unknown> {
    const pName = this.nowName;
    const pHi = this.nowHi;
    const pLo = this.nowLo;
    const pSeen = this.nowSeen;
    this.nowName = name;
    this.nowHi = oHi;
    this.nowLo = oLo;
    this.nowSeen = false;
    try {
      switch (op) {
        case NOW_CREATE:
          sync!.createSync({ name, labels: this.labels, parentRef: owner ?? null });
          return this.nowSeen;
        case NOW_DELETE:
          sync!.deleteSync(name);
          return this.nowSeen;
        case CALL_CREATE:
          return this.store.create({ name, labels: this.labels, parentRef: owner ?? null });
        default:
          return this.store.delete(name);
      }
    } finally {
      this.nowName = pName;
      this.nowHi = pHi;
      this.nowLo = pLo;
      this.nowSeen = pSeen;
    }
  }

  /** createSync under `now`: whether the record's add event arrived during the call. */
  private createNow(sync: SyncStoreOps, name: string, oHi: number, oLo: number, owner: ParentRef | undefined): boolean {
    return this.withNow(NOW_CREATE, sync, name, oHi, oLo, owner) as boolean;
  }

  /** store.create under `now` (for the part of the call that runs synchronously). */
  private createCall(name: string, oHi: number, oLo: number, owner: ParentRef | undefined): Promise<IPAddressRecord> {
    return this.withNow(CALL_CREATE, null, name, oHi, oLo, owner) as Promise<IPAddressRecord>;
  }

  /** deleteSync, under `now` only for a name with an offset here: whether its delete event arrived. */
  private deleteNow(sync: SyncStoreOps, name: string, ours: boolean, oHi: number, oLo: number): boolean {
    if (!ours) {
      sync.deleteSync(name);
      return false;
    }
    return this.withNow(NOW_DELETE, sync, name, oHi, oLo, undefined) as boolean;
  }

  /** store.delete, under `now` only for a name with an offset here. */
  private deleteCall(name: string, ours: boolean, oHi: number, oLo: number): Promise<void> {
    if (!ours) return this.store.delete(name);
    return this.withNow(CALL_DELETE, null, name, oHi, oLo, undefined) as Promise<void>;
  }

  /** True while a call of this allocator is creating `name` (in flight, or synchronously right now). */
  private isInflight(name: string): boolean {
    return name === this.nowName || (this.inflight.size !== 0 && this.inflight.has(name));
  }

  // ── allocateNext (dynamic) ─────────────────────────────────────────────────────────────────

  allocateNext(owner?: ParentRef): Promise<string> {
    const sync = this.syncOps;
    if (sync === null) return this.allocateNextAsync(owner);
    try {
      const r = this.nextNow(sync, owner);
      return typeof r === 'string' ? Promise.resolve(r) : Promise.reject(r === NEXT_NOT_READY ? new ErrNotReady() : new ErrFull());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** True when the store has synchronous operations: tryAllocateNextNow() may be used. */
  get canAllocateNow(): boolean {
    return this.syncOps !== null;
  }

  /**
   * allocateNext() in one synchronous step, for callers that try several allocators in turn
   * (MetaAllocator): the address, or null exactly where allocateNext() would reject with ErrFull
   * or ErrNotReady — same random draws, same metrics, but no Error is built. Any other error is
   * thrown. Only on a store with synchronous operations (`canAllocateNow`), else it throws
   * InvalidArgumentError.
   */
  tryAllocateNextNow(owner?: ParentRef): string | null {
    const sync = this.syncOps;
    if (sync === null) throw new InvalidArgumentError(`tryAllocateNextNow needs a store with synchronous operations (${this.cidr})`);
    const r = this.nextNow(sync, owner);
    return typeof r === 'string' ? r : null;
  }

  /**
   * The common start of allocateNext: ready check, the upper band's start drawn exactly as the
   * reference draws it (into startHi/startLo), the O(1) full check. Returns whether the upper
   * band is scanned (false only when the draw leaves the address family, IPv6 /64 at the top),
   * or NEXT_NOT_READY / NEXT_FULL (the metrics of a full range already recorded).
   */
  private beginNext(): boolean | number {
    if (!this.isReady()) return NEXT_NOT_READY;
    const d = this.draw;
    const ro = this.rangeOffset;
    let upper = true;
    if (this.drawKind === DRAW_U64) {
      drawU64(this.random, d);
      if (d.hi === U32_MAX && d.lo > U32_MAX - ro) d.lo -= ro; // #134193 overflow guard
      if (this.hasLimit && (d.hi > this.limitHi || (d.hi === this.limitHi && d.lo > this.limitLo))) upper = false;
    } else if (this.drawKind === DRAW_BELOW) {
      drawBelow(this.random, this.rsHi, this.rsLo, d);
    } else {
      return NEXT_FULL; // rangeSize == 0: no draw, no metric (upstream)
    }
    if (this.taken!.count() >= this.countNum) {
      // Full: skip both scans, but keep the random stream in step with the reference.
      if (ro !== 0) drawBelow(this.random, 0, ro, d);
      this.metrics.error(this.cidr, 'dynamic');
      return NEXT_FULL;
    }
    // band offset = rangeOffset + drawn offset; past the band (or past 2^64) clamps to its start
    let sLo = d.lo + ro;
    let sHi = d.hi;
    if (sLo >= TWO32) {
      sLo -= TWO32;
      sHi++;
    }
    if (sHi > U32_MAX) {
      sHi = 0;
      sLo = ro;
    }
    this.startHi = sHi;
    this.startLo = sLo;
    return upper;
  }

  /** allocateNext() on a store with synchronous operations, one step: the address, NEXT_NOT_READY or NEXT_FULL. */
  private nextNow(sync: SyncStoreOps, owner: ParentRef | undefined): string | number {
    const upper = this.beginNext();
    if (typeof upper === 'number') return upper;
    const start = this.metrics.start();
    const ro = this.rangeOffset;
    let result: string | null = null;
    try {
      if (upper) result = this.scanBandNow(sync, this.startHi, this.startLo, 0, ro, this.lastHi, this.lastLo, owner);
      if (result === null && ro !== 0) {
        drawBelow(this.random, 0, ro, this.draw);
        result = this.scanBandNow(sync, 0, this.draw.lo, 0, 0, 0, ro - 1, owner);
      }
    } catch (e) {
      this.metrics.error(this.cidr, 'dynamic'); // an aborting store error counts twice (upstream)
      throw e;
    }
    if (result === null) {
      this.metrics.error(this.cidr, 'dynamic');
      return NEXT_FULL;
    }
    this.metrics.observe(this.cidr, start);
    return result;
  }

  private async allocateNextAsync(owner: ParentRef | undefined): Promise<string> {
    const upper = this.beginNext();
    if (typeof upper === 'number') throw upper === NEXT_NOT_READY ? new ErrNotReady() : new ErrFull();
    const start = this.metrics.start();
    const ro = this.rangeOffset;
    let result: string | null = null;
    try {
      // startHi/startLo are read before the first await: no other call can overwrite them first.
      if (upper) result = await this.scanBand(this.startHi, this.startLo, 0, ro, this.lastHi, this.lastLo, owner);
      if (result === null && ro !== 0) {
        drawBelow(this.random, 0, ro, this.draw);
        result = await this.scanBand(0, this.draw.lo, 0, 0, 0, ro - 1, owner);
      }
    } catch (e) {
      this.metrics.error(this.cidr, 'dynamic'); // an aborting store error counts twice (upstream)
      throw e;
    }
    if (result === null) {
      this.metrics.error(this.cidr, 'dynamic');
      throw new ErrFull();
    }
    this.metrics.observe(this.cidr, start);
    return result;
  }

  /**
   * scanBand with synchronous store operations. A dense index finds and reserves the offset in
   * one core call (takeFree32); offsets are below 2^32 there.
   */
  private scanBandNow(
    sync: SyncStoreOps, sHi: number, sLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number, owner: ParentRef | undefined,
  ): string | null {
    const taken = this.taken!;
    let collided: (string | number)[] | null = null;
    try {
      for (;;) {
        if (this.destroyed) return null;
        let oHi = 0;
        let oLo: number;
        if (this.dense32) {
          oLo = taken.takeFree32(sLo, loLo, hiLo);
          if (oLo < 0) return null;
        } else {
          if (!taken.nextFree(sHi, sLo, loHi, loLo, hiHi, hiLo)) return null;
          oHi = taken.resultHi;
          oLo = taken.resultLo;
          taken.set(oHi, oLo);
        }
        const name = this.prefix.formatAt(oHi, oLo);
        let seen: boolean;
        try {
          seen = this.createNow(sync, name, oHi, oLo, owner);
        } catch (e) {
          this.dynamicFailed(e, name, oHi, oLo);
          (collided ??= []).push(name, oHi, oLo);
          this.after(oHi, oLo, loHi, loLo, hiHi, hiLo);
          sHi = this.startHi;
          sLo = this.startLo;
          continue;
        }
        this.dynamicDone(seen, name, oHi, oLo);
        return name;
      }
    } finally {
      if (collided !== null && !this.destroyed) this.unmarkCollisions(collided);
    }
  }

  /**
   * The first address of the closed band [lo, hi] from `s` (wrapping) that the cache does not
   * know and the store lets us create. null when the band is exhausted; other store errors are
   * thrown (after un-reserving).
   */
  private async scanBand(
    sHi: number, sLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number, owner: ParentRef | undefined,
  ): Promise<string | null> {
    const taken = this.taken!;
    let collided: (string | number)[] | null = null;
    try {
      for (;;) {
        if (this.destroyed || !taken.nextFree(sHi, sLo, loHi, loLo, hiHi, hiLo)) return null;
        const oHi = taken.resultHi;
        const oLo = taken.resultLo;
        taken.set(oHi, oLo); // reserve before awaiting: concurrent calls skip it
        const name = this.prefix.formatAt(oHi, oLo);
        this.inflight.set(name, 0);
        try {
          await this.createCall(name, oHi, oLo, owner);
        } catch (e) {
          this.inflight.delete(name);
          this.dynamicFailed(e, name, oHi, oLo);
          (collided ??= []).push(name, oHi, oLo);
          this.after(oHi, oLo, loHi, loLo, hiHi, hiLo);
          sHi = this.startHi;
          sLo = this.startLo;
          continue;
        }
        // Success. If the cache has not reported our record yet, an old delete event may have
        // cleared the reservation meanwhile: set it again (our add event will agree). If the
        // cache did report it, its later events are the truth and we leave the bit alone.
        const seen = this.inflight.get(name) !== 0;
        this.inflight.delete(name);
        this.dynamicDone(seen, name, oHi, oLo);
        return name;
      }
    } finally {
      if (collided !== null && !this.destroyed) this.unmarkCollisions(collided);
    }
  }

  /** A failed dynamic create: AlreadyExists returns (a mid-air collision: go on); anything else un-reserves and is thrown (abort, master #135499). */
  private dynamicFailed(e: unknown, name: string, oHi: number, oLo: number): void {
    this.metrics.error(this.cidr, 'dynamic');
    if (e instanceof AlreadyExistsError) return;
    if (!this.destroyed && this.cache.get(name) === undefined) this.taken!.clear(oHi, oLo);
    throw e;
  }

  private dynamicDone(seen: boolean, name: string, oHi: number, oLo: number): void {
    if (!seen && !this.destroyed) this.markSelf(name, oHi, oLo);
    this.metrics.allocation(this.cidr, 'dynamic');
    this.metrics.gauges(this.cidr, this);
  }

  /** The offset after (oHi, oLo) inside the closed band [lo, hi], wrapping: into startHi/startLo. */
  private after(oHi: number, oLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number): void {
    let sLo = oLo + 1;
    let sHi = oHi;
    if (sLo === TWO32) {
      sLo = 0;
      sHi++;
    }
    if (sHi > hiHi || (sHi === hiHi && sLo > hiLo)) {
      sHi = loHi;
      sLo = loLo;
    }
    this.startHi = sHi;
    this.startLo = sLo;
  }

  /** Sets the bit of our own record the cache has not reported yet, and remembers it (selfMarked). */
  private markSelf(name: string, oHi: number, oLo: number): void {
    this.taken!.set(oHi, oLo);
    this.selfMarked.set(name, [oHi, oLo]);
  }

  /** The cache re-listed: bits we set for records it still does not hold are stale. */
  private onResync(): void {
    if (this.destroyed || this.selfMarked.size === 0) return;
    for (const [name, [oHi, oLo]] of [...this.selfMarked]) {
      if (this.cache.get(name) !== undefined || this.isInflight(name)) continue;
      this.selfMarked.delete(name);
      this.taken!.clear(oHi, oLo);
    }
  }

  /** End of a call: collision marks go unless the cache now holds the name (or a create is in flight). */
  private unmarkCollisions(collided: (string | number)[]): void {
    for (let i = 0; i < collided.length; i += 3) {
      const name = collided[i] as string;
      if (this.cache.get(name) === undefined && !this.isInflight(name)) {
        this.taken!.clear(collided[i + 1] as number, collided[i + 2] as number);
      }
    }
  }

  // ── release, has, forEach, used, free ─────────────────────────────────────────────────────

  release(ip: string): Promise<void> {
    // Malformed text is the caller's error (InvalidAddressError, nothing sent); upstream's Release
    // takes a net.IP and ignores every error of the delete, as this does.
    let pending: Promise<void> | undefined;
    try {
      const w = this.words;
      const family = parseAddrInto(ip, w);
      const name = canonicalOf(ip, family, w);
      // The offset now: this.words and this.off are reused by event handlers during the call.
      const ours = this.prefix.offsetOf(family, w, this.off) === OK;
      const oHi = this.off[0]!;
      const oLo = this.off[1]!;
      const sync = this.syncOps;
      if (sync !== null) {
        let seen: boolean;
        try {
          seen = this.deleteNow(sync, name, ours, oHi, oLo);
        } catch {
          return RESOLVED; // the delete failed: ignored
        }
        // Its delete event, already delivered, cleared the bit and the selfMarked entry.
        if (seen) this.metrics.gauges(this.cidr, this);
        else this.released(ours, name, oHi, oLo);
        return RESOLVED;
      }
      try {
        pending = this.deleteCall(name, ours, oHi, oLo);
      } catch {
        return RESOLVED; // a delete that throws instead of rejecting: ignored all the same
      }
      return pending.then(() => this.released(ours, name, oHi, oLo), () => undefined);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * The delete succeeded. If the cache never reported the record (its add event was lost), no
   * delete event will come either: clear the bit here, unless a call has the name in flight or
   * the cache holds it. A late add event sets it again and its delete clears it.
   */
  private released(ours: boolean, name: string, oHi: number, oLo: number): void {
    if (ours && !this.destroyed && this.cache.get(name) === undefined && !this.isInflight(name)) {
      this.taken!.clear(oHi, oLo);
    }
    if (this.selfMarked.size !== 0) this.selfMarked.delete(name);
    this.metrics.gauges(this.cidr, this);
  }

  has(ip: string): Promise<boolean> {
    const w = this.words;
    let name: string;
    try {
      name = canonicalOf(ip, parseAddrInto(ip, w), w);
    } catch {
      return FALSE;
    }
    const sync = this.syncOps;
    if (sync !== null) return sync.getSync(name) !== undefined ? TRUE : FALSE;
    return this.store.get(name).then((r) => r !== undefined);
  }

  forEach(fn: (ip: string) => void): void {
    if (typeof fn !== 'function') throw new InvalidArgumentError('forEach needs a function');
    for (const r of this.cache.list(this.labels)) fn(r.name);
  }

  used(): number {
    if (this.destroyed) return this.usedAfterDestroy;
    return this.counted + this.extras.size;
  }

  free(): bigint {
    const used = BigInt(this.used());
    return used > this.sizeForFree ? 0n : this.sizeForFree - used;
  }

  // ── dry run, metrics, lifecycle ───────────────────────────────────────────────────────────

  dryRun(): IPAllocator {
    return new DryRunAllocator(this);
  }

  checkAllocate(ip: string): void {
    this.checkRange(ip, true);
  }

  checkAllocateNext(): string {
    if (!this.isReady()) throw new ErrNotReady();
    return formatAddr(this.fam, this.prefix.network);
  }

  enableMetrics(registry?: unknown): void {
    this.metrics = recorderFor(registry);
    this.metrics.gauges(this.cidr, this); // seeded gauges: the open upstream fix (#140615)
  }

  /** Unsubscribes and frees the WASM indexes. Final: allocate/allocateNext throw ErrNotReady afterwards. */
  destroy(): void {
    if (this.destroyed) return;
    this.usedAfterDestroy = this.used();
    this.destroyed = true;
    this.ready = false;
    this.unsubscribe();
    this.taken?.destroy();
  }

  /** Test hook: the size free() subtracts from (upstream tests overwrite a.size). */
  __setSizeForTest(size: bigint): void {
    this.sizeForFree = size;
  }

  /**
   * Test hook: `taken` re-derives the index's counters and summaries (0 = consistent); `counted`
   * re-derives used() from the cache's records (0 = equal, 1 = not); `takenCount` is the number
   * of taken offsets. O(cache size).
   */
  __validate(): { taken: number; counted: number; takenCount: number } {
    let derived = 0;
    if (!this.destroyed) {
      for (const r of this.cache.list()) {
        if (this.classify(r.name) === 1 && hasAllocatorLabels(r, this.ipFamily)) derived++;
      }
    }
    return {
      taken: this.taken?.validate() ?? 0,
      counted: this.destroyed || derived === this.counted ? 0 : 1,
      takenCount: this.taken?.count() ?? 0,
    };
  }

  // ── cache events ──────────────────────────────────────────────────────────────────────────

  /**
   * Classifies a record name. Returns 0 (ignore), 1 (has an offset: in this.off) or 2 (inside
   * the prefix but no offset: network, IPv4 broadcast, or a non-canonical spelling).
   */
  private classify(name: string): 0 | 1 | 2 {
    const w = this.words;
    const family = parseRecordName(name, w);
    if (family !== this.fam || !this.prefix.contains(family, w)) return 0;
    if (canonicalOf(name, family, w) !== name) return 2;
    return this.prefix.offsetOf(family, w, this.off) === OK ? 1 : 2;
  }

  private onAdd(r: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    if (this.destroyed) return;
    const labelled = hasAllocatorLabels(r, this.ipFamily);
    if (r.name === this.nowName) {
      // our own record, written right now: its offset is known
      this.nowSeen = true;
      this.taken!.set(this.nowHi, this.nowLo);
    } else {
      const c = this.classify(r.name);
      if (c === 0) return;
      if (c === 2) {
        if (labelled) this.extras.add(r.name);
        else this.extras.delete(r.name);
        return;
      }
      if (this.loadPairs !== null) this.collect(this.off[0]!, this.off[1]!);
      else this.taken!.set(this.off[0]!, this.off[1]!);
    }
    // A new name counts when labelled; an update only when it adds or drops the labels.
    const was = previous !== undefined && hasAllocatorLabels(previous, this.ipFamily);
    if (labelled !== was) this.counted += labelled ? 1 : -1;
    if (this.inflight.size !== 0 && this.inflight.has(r.name)) this.inflight.set(r.name, 1);
    if (this.selfMarked.size !== 0) this.selfMarked.delete(r.name);
  }

  /** Appends an offset to the warm-start buffer, doubling it when full. */
  private collect(hi: number, lo: number): void {
    let b = this.loadPairs!;
    const i = this.loadN << 1;
    if (i + 2 > b.length) {
      const grown = new Uint32Array(b.length * 2);
      grown.set(b);
      this.loadPairs = b = grown;
    }
    b[i] = hi;
    b[i + 1] = lo;
    this.loadN++;
  }

  private onDelete(r: IPAddressRecord): void {
    if (this.destroyed) return;
    if (r.name === this.nowName) {
      this.nowSeen = true;
      this.taken!.clear(this.nowHi, this.nowLo); // our own release, right now
    } else {
      const c = this.classify(r.name);
      if (c === 0) return;
      if (c === 2) {
        this.extras.delete(r.name);
        return;
      }
      this.taken!.clear(this.off[0]!, this.off[1]!);
    }
    if (hasAllocatorLabels(r, this.ipFamily)) this.counted--;
    if (this.selfMarked.size !== 0) this.selfMarked.delete(r.name);
  }
}

// Compile-time conformance (upstream `var _ Interface = &Allocator{}`).
const _conforms: (a: Allocator) => IPAllocator = (a) => a;
void _conforms;
