// Range: a synchronous, in-memory allocator over one prefix, on the WASM index of taken offsets.
// It follows upstream's legacy bitmap allocator (pkg/registry/core/service/ipallocator/bitmap.go)
// without its 2^16 cap on IPv6 ranges.
//
//   network  first = offset 0        first + rangeOffset                    last  (broadcast)
//      │       │◂── static band ──▸│◂──────────── dynamic band ───────────────▸│       │
//      ▼       ▼                   ▼                                           ▼       ▼
//      ┌───────┬───────────────────┬───────────────────────────────────────────┬───────┐
//      │ net   │ [0, offset − 1]   │ [offset, max − 1]                          │ bcast │ IPv4
//      └───────┴───────────────────┴───────────────────────────────────────────┴───────┘
//   max = usable addresses = upstream hostsPerNetwork: IPv4 2^h − 2, IPv6 2^h − 1, saturating at
//   2^64 − 1 (an IPv6 prefix shorter than /64 offers its first 2^64 − 1 addresses).
//
// allocateNext draws a start in the dynamic band and takes the first free offset from there with
// wraparound (the index answers in O(log n) words, where upstream scans bit by bit), then the
// static band the same way — upstream's randomScanStrategyWithOffset, same distribution. The
// bands, the draw and the search are adapters/space.ts, shared with Allocator: one core call per
// allocation, and address ⇄ offset happens in the core (core-as/space.ts).
//
// allocateNext's choice is a strategy (adapters/strategy.ts; option `strategy`): the default,
// 'upstream', is the path above; any other asks its chooser for a free offset and marks it
// through adapters/strategy-driver.ts (the Allocator's sequence too), then counts it here, so
// every strategy shares this file's errors, counts and invariants. A cool-down's held offsets
// stay marked in the index while free to everything else (has, used, forEach, allocate, snapshot).
//
// Upstream differences, on purpose:
// - no 2^16 cap for IPv6 (upstream: min(2^h, 65536) − 1 addresses): a /64 holds 2^64 − 1
//   addresses in a sparse index whose memory follows what is taken;
// - text in, text out, typed errors for malformed text (upstream takes net.IP values);
// - snapshots of ranges over 2^24 addresses use their own format, and every
//   snapshot carries its length and a CRC-32 that fromSnapshot checks (see RangeSnapshot);
// - IPv6 ranges overlapping the IPv4-mapped block ::ffff:0:0/96 are refused
//   (refuseIPv4MappedOverlap in geometry.ts says why);
// - after destroy() every method throws ErrDestroyed (upstream's Destroy only stops metrics).
import { type Family, formatAddr, parseAddrInto, parseIPv4Fast } from './address.ts';
import {
  ErrAllocated,
  ErrDestroyed,
  ErrFull,
  ErrMismatchedNetwork,
  ErrNotInRange,
  InvalidAddressError,
  InvalidArgumentError,
  OutOfMemoryError,
} from './errors.ts';
import { arrayLength, classCalledOn, memberName, optionsObject, readMember, unboundCall, unboundOr, unboundRead } from './input.ts';
import { formatCount, inElement, quoteInput } from './quote.ts';
import { DENSE_AUTO_MAX_OFFSETS, FreeIndex, type IndexKind, indexKindOption } from './free-index.ts';
import { Prefix, refuseIPv4MappedOverlap } from './geometry.ts';
import { inLoadOrder, loadNewIndex, loadSlices, SPARSE_BYTES_PER_ADDRESS } from './sliced-load.ts';
import { AddressSpace } from './space.ts';
import { bytesInUse, memoryNow, remeasured } from './wasm.ts';
import { ChooserCalls } from './chooser-calls.ts';
import { fullError } from './strategy-view.ts';
import type { OffsetChooser } from './strategy.ts';
import { STRATEGIES, type StrategyOption, strategyOption } from './builtin-strategies.ts';
import { CallReturns, type CoolingQueue } from './cooling.ts';
import { type ChooserOver, StrategyDriver } from './strategy-driver.ts';
import { type MetricsRecorder, NULL_RECORDER, recorderFor, sizeLessUsed, switchRecorder } from './metrics.ts';
import { randomOption, type RandomSource, TWO32 } from './random.ts';
import { type IPFamily, type MetricsRegistry, readOnlyFields } from './types.ts';
import { INSPECT, type InspectOptions, inspection } from './inspect.ts';
import { SAME_THREAD } from './same-thread.ts';

/** plainOffset's answers besides an offset: a plain dotted quad outside the range; any other text. */
const OUTSIDE = -1;
const NOT_PLAIN = -2;

/**
 * The most addresses one allocateMany call reserves: 2^24, the largest range that gets a dense
 * index by default (free-index.ts), so any such range fills in one call. A larger
 * count would build an array of strings beyond what a JavaScript heap holds (a fatal
 * out-of-memory, not an exception); call again for more.
 */
export const MAX_ALLOCATE_MANY: number = DENSE_AUTO_MAX_OFFSETS;

/** What an allocateMany or loadMany whose undo ran out says of the addresses left marked (notUndone). */
const NOT_GIVEN_BACK = 'could not be given back: they stay allocated (forEach lists them; release them to free them)';

/** Ranges of at most this many addresses snapshot as upstream's bitmap, larger ones as offsets. */
const BITMAP_SNAPSHOT_MAX = 16777216;

export interface RangeOptions {
  /** Random source for allocateNext (default: seeded from crypto.getRandomValues). */
  random?: RandomSource | undefined;
  /** Force an index representation (tests, benchmarks). Default: dense up to 2^24 addresses. */
  indexKind?: IndexKind | undefined;
  /**
   * How allocateNext chooses among free addresses: 'upstream' (the default: upstream's random
   * scan), 'legacy-bitmap', 'sequential', 'lowest-free', 'random-free', or a strategy object —
   * coolDown(…) of any of them, or your own (docs/strategies.md).
   */
  strategy?: StrategyOption | undefined;
  /** Registers the upstream metrics for this range at once: a prom-client Registry, or true for the default one (as enableMetrics). */
  metrics?: MetricsRegistry | boolean | undefined;
}

/**
 * What snapshot() returns and fromSnapshot() takes. `range` and `data` are what restore() takes
 * (upstream's RangeAllocation holds the same two); `length` and `checksum` let fromSnapshot()
 * detect a truncated or corrupted copy.
 */
export interface RangeSnapshot {
  /** The canonical CIDR of the range. */
  range: string;
  /**
   * Ranges of at most 2^24 addresses: upstream's format, the big-endian bytes of the bitmap as a
   * number whose bit i is offset i, minimal length. Larger ranges: the taken offsets, ascending,
   * each as 8 big-endian bytes. The format depends on the range only, not on its index kind.
   */
  data: Uint8Array;
  /** data.length when the snapshot was taken. */
  length: number;
  /**
   * CRC-32 (IEEE 802.3, as zlib's crc32) of `range` (its UTF-8 bytes), a NUL byte, then `data`,
   * an unsigned 32-bit integer: a copy relabelled to another range is refused too.
   */
  checksum: number;
}

/** The synchronous view shared by Range and its dry run. */
export interface RangeView {
  readonly cidr: string;
  readonly ipFamily: IPFamily;
  readonly size: bigint;
  allocate(this: object, ip: string): void;
  allocateNext(this: object): string;
  /** allocateNext() that answers null where it would throw ErrFull (see Range.tryAllocateNext). */
  tryAllocateNext(this: object): string | null;
  release(this: object, ip: string): void;
  has(this: object, ip: string): boolean;
  forEach(this: object, fn: (ip: string) => void): void;
  used(this: object): number;
  free(this: object): bigint;
  dryRun(this: object): RangeView;
}

/** A Range's state that changes after construction (Range.state). */
interface RangeState {
  /** The address space (bands, draw, index; adapters/space.ts); null for an empty range. */
  space: AddressSpace | null;
  /** The space's index (a one-slot index of its own for an empty range, so reads stay branch-free). */
  index: FreeIndex;
  metrics: MetricsRecorder;
  /**
   * Allocated addresses (used()): what the index marks taken less what a cool-down holds, kept
   * in step with the index (validate() re-derives it).
   */
  allocated: number;
  /** Set by destroy(): every method then throws ErrDestroyed. */
  destroyed: boolean;
  /** The strategy's state for this range (remade by restore); null for the default. */
  chooser: OffsetChooser | null;
  /** The cool-down's held offsets, when the strategy has one. */
  cooling: CoolingQueue | null;
  /**
   * The record of what the cool-down returns for the running allocateNext or allocateMany, one
   * reused for every call: a Range's calls cannot overlap (each ends — CoolingQueue.endCall,
   * which lets go of every entry it recorded — before it returns, and a strategy, its random
   * source or a cool-down's clock may not call in meanwhile: ChooserCalls). An Allocator's calls
   * overlap, and make one each.
   */
  returns: CallReturns | null;
  /** Family of the address last parsed into `words`. */
  lastFamily: Family;
}

/**
 * A synchronous, in-memory allocator over one prefix: upstream's legacy bitmap `Range`
 * (pkg/registry/core/service/ipallocator/bitmap.go) without its 2^16 cap on IPv6 ranges, on a
 * WebAssembly index of taken addresses, with snapshots (`snapshot`, `restore`, `fromSnapshot`).
 * No store: what it holds is its own. `destroy()` frees its WebAssembly memory.
 */
export class Range implements RangeView {
  /** Makes postMessage refuse the Range, saying why (SAME_THREAD); first, so it is read first. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read by structuredClone, not by this code
  private readonly sameThreadOnly = SAME_THREAD;
  /** @internal the range geometry */
  readonly prefix: Prefix;
  readonly cidr: string;
  readonly ipFamily: IPFamily;
  /** Usable addresses (max). */
  readonly size: bigint;
  private readonly kindOption: IndexKind | undefined;
  private readonly random: RandomSource;
  /** Usable addresses (size, upstream max) as (hi, lo). */
  private readonly sizeHi: number;
  private readonly sizeLo: number;
  private readonly empty: boolean;
  private readonly words = new Uint32Array(4);
  private readonly off = new Uint32Array(2);
  /** IPv4 with a dense index: the first address as a u32 (plainOffset's fast path), else −1. */
  private readonly v4First: number;
  /**
   * The strategy when not the default upstream scan (which runs in the core: space.takeUpper),
   * with its chooser for this range (remade by restore; an empty range's is never asked to
   * choose); null for the default.
   */
  private readonly driver: StrategyDriver | null;
  /**
   * What changes after construction, in one object of its own rather than in fields of the
   * range, so that a frozen Range (Object.freeze) still allocates, counts and frees its index.
   */
  private readonly state: RangeState;

  /**
   * A range over `cidr` (netip.ParsePrefix rules; host bits are masked). Throws InvalidCIDRError
   * for malformed text, InvalidRangeError for an IPv6 prefix overlapping ::ffff:0:0/96.
   */
  constructor(cidr: string, options?: RangeOptions) {
    const prefix = Prefix.parse(cidr);
    refuseIPv4MappedOverlap(prefix);
    const opts = optionsObject(options, 'Range', { random: true, indexKind: true, strategy: true, metrics: true });
    indexKindOption(opts.indexKind, 'options.indexKind');
    const strategy = strategyOption(opts.strategy);
    const metrics = opts.metrics === undefined || opts.metrics === false ? null : recorderFor(opts.metrics);
    this.prefix = prefix;
    this.cidr = prefix.cidr;
    this.ipFamily = prefix.family;
    this.random = this.strategyCalls.guardRandom(randomOption(opts.random));
    this.sizeHi = prefix.sizeHi;
    this.sizeLo = prefix.sizeLo;
    this.size = prefix.size;
    readOnlyFields(this, 'cidr', 'ipFamily', 'size'); // what a Range answers follows its prefix
    this.empty = prefix.isEmpty;
    this.kindOption = opts.indexKind;
    const space = AddressSpace.of(prefix, opts.indexKind, 'bitmap');
    const index = space?.index ?? new FreeIndex(0, 1, opts.indexKind);
    this.state = {
      space,
      index,
      metrics: NULL_RECORDER,
      allocated: 0,
      destroyed: false,
      chooser: null,
      cooling: null,
      returns: null,
      lastFamily: 4,
    };
    this.driver =
      strategy === STRATEGIES.upstream
        ? null
        : new StrategyDriver(strategy, this.strategyCalls, prefix, this.random, 'bitmap', (hi, lo, why, oom) =>
            this.keptMark(hi, lo, why, oom),
          );
    try {
      this.useChooser(this.chooserOver(this.state.index));
    } catch (e) {
      this.destroy(); // the caller gets no Range to destroy: its index goes back now, not at GC
      throw e;
    }
    const dense32 = !this.empty && this.sizeHi === 0 && this.state.index.kind === 'dense';
    this.v4First = dense32 && prefix.version === 4 ? prefix.first[3]! : -1;
    if (metrics !== null) {
      this.state.metrics = metrics;
      metrics.track(this.cidr, this);
    }
  }

  /**
   * The strategy's per-range state over `index`, made without touching this range (a strategy
   * of your own may throw: the caller commits it only once all else succeeded); null without a
   * strategy. An empty range (an IPv4 /31 or /32, an IPv6 /128) asks its strategy too, over its
   * one-slot index (StrategyDriver.over).
   */
  private chooserOver(index: FreeIndex): ChooserOver | null {
    return this.driver === null ? null : this.driver.over(index);
  }

  /** Chooses with `made` from now on (nothing changes for null: no strategy). */
  private useChooser(made: ChooserOver | null): void {
    if (made === null) return;
    this.state.chooser = made.chooser;
    this.state.cooling = made.cooling;
  }

  /**
   * upstream NewFromSnapshot: a Range over the snapshot's range, restored from its data after
   * checking its length and checksum. InvalidArgumentError when `snapshot` is not a snapshot or
   * its data is truncated or corrupted (snapshots written before `length` and `checksum` existed
   * are refused too: give their range and data to `restore()`, which takes them unchecked, as
   * upstream's Restore does).
   */
  static fromSnapshot<R extends Range>(
    this: new (
      cidr: string,
      options?: RangeOptions,
    ) => R,
    snapshot: RangeSnapshot,
    options?: RangeOptions,
  ): R;
  static fromSnapshot(snapshot: RangeSnapshot, options?: RangeOptions): Range;
  static fromSnapshot(this: unknown, snapshot: RangeSnapshot, options: RangeOptions = {}): Range {
    const { range, data } = checkSnapshot(snapshot); // read once: what was checked is what loads
    // biome-ignore lint/complexity/noThisInStatic: the class it is called on, which may be a subclass
    const r = new (classCalledOn(this, Range))(range, options);
    try {
      r.restore(range, data);
    } catch (e) {
      r.destroy();
      throw remeasured(e); // the whole Range, dropped, counts as needed
    }
    return r;
  }

  /** 'dense' (a bitmap) or 'sparse' (runs), chosen by size unless forced. */
  get indexKind(): 'dense' | 'sparse' {
    if (!(this instanceof Range)) throw unboundRead(this, 'Range', 'indexKind');
    this.throwIfDestroyed();
    return this.state.index.kind;
  }

  /** Throws ErrDestroyed after destroy(). @internal for DryRunRange */
  throwIfDestroyed(): void {
    if (this.state.destroyed) throw new ErrDestroyed(`Range ${this.cidr}`);
  }

  /** Its calls into the strategy, from inside which the range cannot be changed. */
  private readonly strategyCalls = new ChooserCalls(
    () =>
      `Range ${this.cidr}: its random source, a strategy's forRange(), choose() or taken(), and a cool-down's clock may not change or destroy the range they choose for`,
  );

  /**
   * The range itself, to tell it from an object made from it with Object.create, or a Proxy of
   * it that calls its methods on the Proxy: a change runs on the range itself only, never
   * through a wrapper's overrides or a Proxy's traps, which would run the caller's code between
   * its steps. (Such a wrapper reads the range's `state`, so reads go through.) A Proxy whose
   * methods are bound to the range calls them on the range itself, and passes.
   */
  private readonly itself: Range = this;

  /**
   * The start of every call that changes the range: on the range itself (refuseWrapper), not
   * destroyed, not called from the strategy.
   */
  private changing(): void {
    if (this.itself !== this) throw refuseWrapper();
    this.throwIfDestroyed();
    this.strategyCalls.refuseInside();
  }

  /**
   * Parses `ip` into `words` and its offset into `off`. True when it is in [first, last]; false
   * for the other family, outside, or (IPv6 shorter than /64) beyond 2^64 − 1 addresses.
   * Throws InvalidAddressError for malformed text (or a non-string).
   */
  private locate(ip: unknown): boolean {
    this.state.lastFamily = parseAddrInto(ip, this.words);
    return this.locateParsed();
  }

  private locateParsed(): boolean {
    // the core maps address → offset (core-as/space.ts); IPv4 words [0, 0, 0, v] need the family
    const space = this.state.space;
    return space !== null && this.state.lastFamily === this.prefix.version && space.offsetOf(this.words, this.off);
  }

  /**
   * The IPv4 fast path of allocate, release and has: the offset of `ip` when it is a plain dotted
   * quad inside the range, OUTSIDE when a plain dotted quad outside it, NOT_PLAIN for anything else
   * (the general parser then decides, malformed text included). No call into the core.
   */
  private plainOffset(ip: unknown): number {
    if (this.v4First < 0 || typeof ip !== 'string') return NOT_PLAIN;
    const v = parseIPv4Fast(ip);
    if (v < 0) return NOT_PLAIN;
    const o = v - this.v4First;
    return o >= 0 && o < this.sizeLo ? o : OUTSIDE;
  }

  private atOrPastSize(hi: number, lo: number): boolean {
    return hi > this.sizeHi || (hi === this.sizeHi && lo >= this.sizeLo);
  }

  /** ErrNotInRange for the address just located; `element` names it in the caller's array. */
  private notInRange(element?: string): ErrNotInRange {
    return new ErrNotInRange(formatAddr(this.state.lastFamily, this.words), this.cidr, this.partOffered(), element);
  }

  /**
   * For an IPv6 prefix shorter than /64 (not upstream's), the addresses it offers, which the CIDR
   * alone would overstate; undefined for any other range.
   */
  private partOffered(): string | undefined {
    const p = this.prefix;
    if (p.version === 4 || p.length >= 64) return undefined;
    const last = new Uint32Array(4);
    p.addressAt(this.sizeHi, this.sizeLo - 1, last); // offset 2^64 − 2: the last of 2^64 − 1
    return `its first 2^64 − 1 addresses, ${formatAddr(6, p.first)} to ${formatAddr(6, last)}`;
  }

  /** Reserves `ip`. ErrNotInRange outside [first, last] (or other family), ErrAllocated when taken. */
  allocate(this: object, ip: string): void;
  allocate(this: Range, ip: string, owner?: unknown): void {
    try {
      this.changing();
      if (owner != null) throw refuseOwner('allocate', owner);
      const plain = this.plainOffset(ip);
      if (plain >= 0) {
        this.off[0] = 0;
        this.off[1] = plain;
      } else if (!this.locate(ip)) {
        // (a plain dotted quad outside the range is parsed again here, for the error's text)
        this.state.metrics.error(this.cidr, 'static');
        throw this.notInRange();
      }
      if (!this.state.index.set(this.off[0]!, this.off[1]!) && !this.state.cooling?.claim(this.off[0]!, this.off[1]!)) {
        this.state.metrics.error(this.cidr, 'static');
        throw new ErrAllocated();
      }
      this.state.allocated++;
      this.state.metrics.allocation(this.cidr, 'static');
      this.state.metrics.gauges(this.cidr, this);
    } catch (e) {
      // an index that could not mark the address failed the allocation: an allocation error, as
      // upstream's bitmap counts an error of its allocator (only the index throws this, once the
      // call is bound to a Range)
      if (e instanceof OutOfMemoryError) this.state.metrics.error(this.cidr, 'static');
      throw orUnbound(e, this, 'allocate');
    }
  }

  /**
   * Reserves a free address, dynamic band first, and returns it. ErrFull when none is free
   * (tryAllocateNext answers null instead).
   */
  allocateNext(this: object): string;
  allocateNext(this: Range, owner?: unknown): string {
    let full: ErrFull;
    try {
      const ip = this.nextOrNull('allocateNext', owner);
      if (ip !== null) return ip;
      full = fullError(this.state.chooser);
    } catch (e) {
      throw orUnbound(e, this, 'allocateNext');
    }
    throw full; // outside the try: caught and thrown again, it cost a second throw (≈ 0.2 µs)
  }

  /**
   * allocateNext() that answers null where it would throw ErrFull: the same draws and metrics (a
   * full range counts an allocation error), no Error built — for a caller to whom a full range
   * is a common answer (one of several ranges it tries in turn). Other errors are thrown.
   * Allocator's counterpart is tryAllocateNextNow(): its allocateNext() returns a promise, and
   * `Now` names the call that answers at once; every call of a Range answers at once.
   */
  tryAllocateNext(this: object): string | null;
  tryAllocateNext(this: Range, owner?: unknown): string | null {
    try {
      return this.nextOrNull('tryAllocateNext', owner);
    } catch (e) {
      throw orUnbound(e, this, 'tryAllocateNext');
    }
  }

  /** The steps of allocateNext and tryAllocateNext: the address reserved, or null when none is free. */
  private nextOrNull(method: 'allocateNext' | 'tryAllocateNext', owner: unknown): string | null {
    try {
      this.changing();
      if (owner != null) throw refuseOwner(method, owner);
      if (this.state.cooling === null ? this.takeNext() : this.takeNextCooling(this.state.cooling)) {
        const text = this.takenText(); // before the metrics: a registry's code may call in again
        this.state.metrics.allocation(this.cidr, 'dynamic');
        this.state.metrics.gauges(this.cidr, this);
        return text;
      }
    } catch (e) {
      if (e instanceof OutOfMemoryError) this.state.metrics.error(this.cidr, 'dynamic'); // as allocate's
      throw e;
    }
    this.state.metrics.error(this.cidr, 'dynamic');
    return null;
  }

  /**
   * takeNext under a cool-down: when it fails (false, or a throw), what the cool-down returned to
   * the free pool for it is held again, as it was (CoolingQueue.endCall).
   */
  private takeNextCooling(cooling: CoolingQueue): boolean {
    const returns = this.callReturns(cooling);
    let took = false;
    cooling.record(returns);
    try {
      took = this.takeNext();
      return took;
    } finally {
      cooling.record(null);
      cooling.endCall(returns, !took);
    }
  }

  /** The record for a new call under `cooling`, empty (the reused one, or a new one for a new queue). */
  private callReturns(cooling: CoolingQueue): CallReturns {
    let r = this.state.returns;
    if (r === null || r.queue !== cooling) this.state.returns = r = new CallReturns(cooling);
    else r.clear();
    return r;
  }

  /** The text of the address takeNext just marked. */
  private takenText(): string {
    return this.state.space!.addressText();
  }

  /**
   * Finds and marks the next address, its words left in space.address: the dynamic band from a
   * random start, then the static band (adapters/space.ts, the draw and bands the Allocator uses
   * too); or the strategy's choice (StrategyDriver.take). False when full: the count answers
   * first, without drawing.
   */
  private takeNext(): boolean {
    const space = this.state.space;
    if (space === null || this.state.allocated >= this.sizeHi * TWO32 + this.sizeLo) return false;
    const driver = this.driver;
    if (driver === null) {
      if (!space.takeUpper(this.random) && !space.takeLower(this.random)) return false; // only a corrupted index
    } else if (!driver.take(space, this.state.chooser!, this.state.cooling)) {
      // nothing it may choose is free: 'legacy-bitmap' past its 65,535 IPv6 addresses, a strategy
      // of your own that keeps to some addresses — ErrFull, as upstream's capped bitmap answers
      return false;
    } else {
      this.state.cooling?.tick(); // one address handed out (a failed call takes its ticks back: endCall)
    }
    this.state.allocated++;
    return true;
  }

  /**
   * The strategy's taken() hook threw `why` and the mark on (hi, lo) could not be cleared for
   * lack of memory (`oom`, a sparse run split): the offset stays marked and counted, and the
   * error names it, so that it can be released.
   */
  private keptMark(hi: number, lo: number, why: unknown, oom: OutOfMemoryError): never {
    this.recount();
    throw new OutOfMemoryError(
      `the strategy's taken() hook failed (${why instanceof Error ? why.message : quoteInput(why)}), and ${this.state.space!.textAt(hi, lo)} could not be given back: it stays allocated (release it to free it)`,
      oom,
    );
  }

  /** Frees offset (hi, lo): true if it was allocated. With a cool-down it stays marked, held. */
  private freeOffset(hi: number, lo: number): boolean {
    const cooling = this.state.cooling;
    if (cooling === null) return this.state.index.clear(hi, lo);
    if (!this.state.index.has(hi, lo) || cooling.holds(hi, lo)) return false;
    this.strategyCalls.hold(cooling, hi, lo);
    return true;
  }

  /** Sets the count from the index (what it marks, less what a cool-down holds). */
  private recount(): void {
    this.state.allocated = this.state.index.count() - (this.state.cooling?.size ?? 0);
    this.state.metrics.gauges(this.cidr, this);
  }

  /** Undoes freeOffset(hi, lo) that returned true: marked again, or no longer held. */
  private unfree(hi: number, lo: number): void {
    if (this.state.cooling === null) this.state.index.set(hi, lo);
    else this.state.cooling.claim(hi, lo);
  }

  /** Whether (hi, lo) is allocated: marked and not held by a cool-down. */
  private isAllocated(hi: number, lo: number): boolean {
    return this.state.index.has(hi, lo) && (this.state.cooling === null || !this.state.cooling.holds(hi, lo));
  }

  /**
   * Releases `ip`; a free address, one outside the range or one of the other family is a no-op
   * (a Range has no store: it frees only its own addresses). Malformed text throws
   * InvalidAddressError.
   */
  release(this: object, ip: string): void;
  release(this: Range, ip: string): void {
    try {
      this.changing();
      const plain = this.plainOffset(ip);
      const freed =
        plain === NOT_PLAIN ? this.locate(ip) && this.freeOffset(this.off[0]!, this.off[1]!) : plain >= 0 && this.freeOffset(0, plain);
      if (freed) {
        this.state.allocated--;
        this.state.metrics.gauges(this.cidr, this);
      }
    } catch (e) {
      throw orUnbound(e, this, 'release');
    }
  }

  /**
   * Whether `ip` is allocated here. The rule of every `has`: malformed text (or a non-string)
   * throws InvalidAddressError; a well-formed address that is free, outside the range or of the
   * other family answers false.
   */
  has(this: object, ip: string): boolean;
  has(this: Range, ip: string): boolean {
    try {
      this.throwIfDestroyed();
      const plain = this.plainOffset(ip);
      if (plain !== NOT_PLAIN) return plain >= 0 && this.isAllocated(0, plain);
      return this.locate(ip) && this.isAllocated(this.off[0]!, this.off[1]!);
    } catch (e) {
      throw orUnbound(e, this, 'has');
    }
  }

  /**
   * Calls `fn` for every allocated address in ascending order. The callback may change the range:
   * the walk goes on from the next offset in the index as it is then (restore() swaps the index),
   * and ends when the callback destroys the range.
   */
  forEach(this: object, fn: (ip: string) => void): void;
  forEach(this: Range, fn: (ip: string) => void): void {
    checkThis(this, 'forEach');
    this.throwIfDestroyed();
    if (typeof fn !== 'function') throw new InvalidArgumentError(`forEach needs a function, got ${quoteInput(fn)}`);
    let hi = 0;
    let lo = 0;
    // this.state.index is read on every step: a callback's restore() destroys the old one
    while (!this.state.destroyed && this.state.index.nextSet(hi, lo)) {
      hi = this.state.index.resultHi;
      lo = this.state.index.resultLo;
      if (this.atOrPastSize(hi, lo)) break;
      if (this.state.cooling === null || !this.state.cooling.holds(hi, lo)) fn(this.state.space!.textAt(hi, lo));
      if (lo === 0xffffffff) {
        if (hi === 0xffffffff) break;
        hi += 1;
        lo = 0;
      } else {
        lo += 1;
      }
    }
  }

  /** Allocated addresses. */
  used(this: object): number;
  used(this: Range): number {
    try {
      this.throwIfDestroyed();
      return this.state.allocated;
    } catch (e) {
      throw orUnbound(e, this, 'used');
    }
  }

  /** Free addresses: size − used. */
  free(this: object): bigint;
  free(this: Range): bigint {
    try {
      return this.size - BigInt(this.used());
    } catch (e) {
      throw orUnbound(e, this, 'free');
    }
  }

  /**
   * Reserves `n` free addresses at once and returns them (in the order drawn). Throws
   * InvalidArgumentError for a count that is not a non-negative integer; then ErrFull, reserving
   * nothing, when fewer than `n` are free; then InvalidArgumentError above MAX_ALLOCATE_MANY.
   */
  allocateMany(this: object, n: number): string[];
  allocateMany(this: Range, n: number, owner?: unknown): string[] {
    checkThis(this, 'allocateMany');
    this.changing();
    if (owner != null) throw refuseOwner('allocateMany', owner);
    // any integer, however large: its answer is ErrFull or the per-call cap, as the order above says
    if (!Number.isInteger(n) || n < 0) {
      const hint = typeof n === 'bigint' ? ' (a bigint, as free() answers: pass Number(count))' : '';
      throw new InvalidArgumentError(`allocateMany needs a non-negative integer count as a number, got ${quoteInput(n)}${hint}`);
    }
    if (BigInt(n) > this.free()) {
      this.state.metrics.error(this.cidr, 'dynamic');
      throw new ErrFull();
    }
    if (n > MAX_ALLOCATE_MANY) {
      throw new InvalidArgumentError(
        `allocateMany reserves at most ${formatCount(MAX_ALLOCATE_MANY)} addresses per call, got ${formatCount(n)}`,
      );
    }
    const out = new Array<string>(n);
    const taken = new Uint32Array(4 * n); // address words, to undo
    const space = this.state.space;
    // under a cool-down, what it returns to the free pool for this call is held again if the call fails
    const cooling = this.state.cooling;
    const returns = cooling === null ? null : this.callReturns(cooling);
    cooling?.record(returns);
    const inUse = bytesInUse(); // what the index grows into is not given back by the undo
    let i = 0;
    try {
      for (; i < n; i++) {
        // the count said there is room: only a strategy that keeps to some addresses
        // ('legacy-bitmap' past its cap) or a corrupted index fails here, and all is undone
        if (!this.takeNext()) throw fullError(this.state.chooser);
        taken.set(space!.address, 4 * i);
        out[i] = this.takenText();
      }
      cooling?.record(null);
      cooling?.endCall(returns!, false);
    } catch (e) {
      // All or nothing (e.g. OutOfMemoryError part-way): give back what this call took, the last
      // first, so each clear undoes one set; then a cool-down holds again what it returned for
      // this call (those it took included), as before the call. A clear can still need memory (a
      // cool-down's expiry in between split runs): then what is left stays allocated, counted,
      // and the error says so.
      let j = i - 1;
      try {
        for (; j >= 0; j--) {
          if (space!.clear(taken.subarray(4 * j, 4 * j + 4))) this.state.allocated--;
        }
      } catch (undo) {
        if (!(undo instanceof OutOfMemoryError)) throw undo;
        throw this.notUndone('allocateMany', e, `${formatCount(j + 1)} of the addresses it took ${NOT_GIVEN_BACK}`, undo);
      } finally {
        if (cooling !== null) {
          cooling.record(null);
          cooling.endCall(returns!, true); // marks and holds them both: the count stands
        }
        // once the state is settled (a registry's code may call in again): as allocateNext's, for
        // running out of memory or a strategy that can take no more
        if (e instanceof OutOfMemoryError || e instanceof ErrFull) this.state.metrics.error(this.cidr, 'dynamic');
      }
      // the nodes its takes split, left mostly empty, merged and given back; what it gave back
      // counts as needed, and as free; on a sparse index, so does an estimate for the addresses
      // it had not taken (what it grew into and keeps is in use already: not needed again; nor is
      // what the compaction packed of the pages it found, below the memory in use when it began),
      // and at least what its nodes may grow by for all n (filled together, they grow together)
      this.state.index.compact();
      const kept = Math.max(0, bytesInUse() - inUse);
      const packed = Math.max(0, inUse - bytesInUse());
      throw space?.kind === 'sparse'
        ? remeasured(
            e,
            { loaded: i, left: n - i, perAddress: SPARSE_BYTES_PER_ADDRESS, kept, spread: this.state.index.growthBound(n) },
            packed,
          )
        : remeasured(e, undefined, packed);
    }
    for (let j = 0; j < n; j++) this.state.metrics.allocation(this.cidr, 'dynamic');
    if (n > 0) this.state.metrics.gauges(this.cidr, this);
    return out;
  }

  /**
   * Releases many addresses; returns how many were allocated and are now free. Every address is
   * parsed first: malformed text throws InvalidAddressError before anything is released.
   */
  releaseMany(this: object, ips: readonly string[]): number;
  releaseMany(this: Range, ips: readonly string[]): number {
    checkThis(this, 'releaseMany');
    this.changing();
    const offsets = this.offsetsOf('releaseMany', ips, false);
    const done: number[] = []; // positions in `offsets` released by this call
    const inUse = bytesInUse(); // what the index grows into is not given back by the undo
    let i = 0;
    try {
      for (; i < offsets.length; i += 2) if (this.freeOffset(offsets[i]!, offsets[i + 1]!)) done.push(i);
    } catch (e) {
      // All or nothing: a clear that splits a run of a sparse index needs memory, and a cool-down's
      // clock may fail. What this call released is taken back, last first. A re-mark can still
      // need memory (what earlier clears freed, later splits used): then what is left stays
      // released, the count follows the index, and the error says so.
      let k = done.length - 1;
      try {
        for (; k >= 0; k--) this.unfree(offsets[done[k]!]!, offsets[done[k]! + 1]!);
      } catch (undo) {
        if (!(undo instanceof OutOfMemoryError)) throw undo;
        throw this.notUndone(
          'releaseMany',
          e,
          `${formatCount(k + 1)} of the addresses it released could not be taken back: they stay released (has() tells which)`,
          undo,
        );
      }
      // the pages its clears split, left mostly empty by the re-marks, merged and given back;
      // what its clears took, given back by the re-marks, counts as needed, but not what the
      // compaction gave back of the memory in use before the call (pages it packed that the
      // clears did not split). On a sparse index, `requested` is what all of its clears need
      // (clearsNeed), not what it reached: a cap raised by that alone was refused again, a
      // block further on
      this.state.index.compact();
      const kept = Math.max(0, bytesInUse() - inUse);
      const packed = Math.max(0, inUse - bytesInUse());
      throw this.state.index.kind === 'sparse' && this.state.cooling === null
        ? remeasured(
            e,
            { loaded: i >>> 1, left: (offsets.length - i) >>> 1, perAddress: 0, kept, counted: this.clearsNeed(offsets) },
            packed,
          )
        : remeasured(e, undefined, packed);
    }
    const released = done.length;
    this.state.allocated -= released;
    if (released > 0) this.state.metrics.gauges(this.cidr, this);
    return released;
  }

  /**
   * Marks many addresses allocated in one batch (a warm start from a store listing): returns how
   * many became allocated (newly marked, or held by a cool-down and now taken from it). All are parsed and range-checked first: malformed text throws
   * InvalidAddressError and an address outside the range ErrNotInRange, with nothing marked; so
   * does OutOfMemoryError when a sparse index cannot grow (see markAll).
   */
  loadMany(this: object, ips: readonly string[]): number;
  loadMany(this: Range, ips: readonly string[], owner?: unknown): number {
    checkThis(this, 'loadMany');
    this.changing();
    if (owner != null) throw refuseOwner('loadMany', owner);
    const offsets = this.offsetsOf('loadMany', ips, true);
    const added = this.markAll(offsets);
    let claimed = 0; // held by a cool-down: marked already (not added), allocated from now on
    if (this.state.cooling !== null)
      for (let i = 0; i < offsets.length; i += 2) if (this.state.cooling.claim(offsets[i]!, offsets[i + 1]!)) claimed++;
    this.state.allocated = this.state.index.count() - (this.state.cooling?.size ?? 0);
    // a warm start changes the count as allocations do: the gauges seeded when the Range was made say 0
    this.state.metrics.gauges(this.cidr, this);
    return added + claimed;
  }

  /**
   * Marks the offsets `pairs` ((hi, lo) each) taken, all or nothing, and returns how many were
   * newly marked: in one core call when its batch fits beside the index; where it does not
   * under a memory cap, the offsets not marked yet go in slices (loadSlices, inLoadOrder), so
   * that offsets marked already need no memory. When a slice runs out, what the slices before it
   * marked is cleared again, last first; a clear can need memory too (a sparse run split): then
   * what is left stays marked, counted, and the error says so.
   */
  private markAll(pairs: Uint32Array): number {
    const index = this.state.index;
    try {
      return index.setMany(pairs); // one batch: OutOfMemoryError changes nothing
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
    }
    const fresh = inLoadOrder(unmarked(index, pairs), 2);
    const inUse = bytesInUse(); // what the index grows into is not given back by the undo
    let done = 0; // offsets of `fresh` the calls so far marked (or found marked: a repeat)
    try {
      // in slices at once: the one batch ran out above, and the same entries less those marked
      // already would be a second batch of the same kind
      return loadSlices(fresh, 2, (slice) => {
        const added = index.setMany(slice);
        done += slice.length >>> 1;
        return added;
      });
    } catch (e) {
      let j = done - 1;
      try {
        for (; j >= 0; j--) index.clear(fresh[2 * j]!, fresh[2 * j + 1]!);
      } catch (undo) {
        if (!(undo instanceof OutOfMemoryError)) throw undo;
        throw this.notUndone('loadMany', e, `${formatCount(j + 1)} of the addresses it marked ${NOT_GIVEN_BACK}`, undo);
      }
      index.compact();
      // All addresses given back, and the nodes the slices split merged and given back too: the
      // slice's error measured again, so that the memory is as the undo left it and `requested`
      // estimates the whole load — what the slices before it took and gave back, and the offsets
      // not loaded; what the index grew into and keeps is in use already (the one batch's error
      // named a buffer the slices never needed, and the memory before they ran); not what the
      // compaction packed of the pages the index held before the slices, which they did not need;
      // and at least what its nodes may grow by for all of them (filled together, they grow
      // together: a slice refused part-way grew nodes it then gave back no address of).
      const kept = Math.max(0, bytesInUse() - inUse);
      const packed = Math.max(0, inUse - bytesInUse());
      const left = fresh.length / 2 - done;
      const spread = index.growthBound(fresh.length / 2);
      throw index.kind === 'sparse'
        ? remeasured(e, { loaded: done, left, perAddress: SPARSE_BYTES_PER_ADDRESS, kept, spread }, packed)
        : remeasured(e, undefined, packed);
    }
  }

  /**
   * The error of the batch call `method`, failed part-way with `failure`, whose undo ran out of
   * memory too (a sparse run split or re-marked): `left` says what stays done, and the count is
   * taken again from the index. The pages and nodes the call split, left mostly empty by what the
   * undo gave back, are merged and given back first: the error says what the undo needed, with
   * the memory free and in use as it leaves it. The message says what failed first, memory or
   * another error (a strategy of your own may throw), and that error is its `cause`.
   */
  private notUndone(method: string, failure: unknown, left: string, undo: OutOfMemoryError): OutOfMemoryError {
    this.state.index.compact();
    this.recount();
    const what =
      failure instanceof OutOfMemoryError
        ? `${method} ran out part-way`
        : `${method} failed part-way (${failure instanceof Error ? failure.message : quoteInput(failure)})`;
    const error = new OutOfMemoryError(`${what}, and ${left}`, memoryNow(undo));
    Object.defineProperty(error, 'cause', { value: failure, writable: true, configurable: true });
    return error;
  }

  /**
   * What clearing the offsets `pairs` ((hi, lo) each) needs of a sparse index that marks every
   * taken address (no cool-down): counted from what the clears leave behind, read from the index
   * as it is, before them. A clear inside a run of taken addresses leaves a neighbour isolated
   * (held one by one) or starts a run more past it; a clear of an isolated address or of a run's
   * end frees memory instead, counted as nothing (the peak comes before it). The index was
   * measured to hold up to 23 bytes per isolated address added in one direction (its nodes split
   * in halves that are never filled again), 27–31 when the clears of several runs go in opposite
   * directions (nodes split from both ends), and 18.5 per run; SPARSE_BYTES_PER_SPLIT counts either,
   * and one largest node of isolated addresses (64 KiB) is held beside the old one while it is
   * rebuilt. For the error of a releaseMany refused part-way, once its clears were taken back.
   */
  private clearsNeed(pairs: Uint32Array): { bytes: number; how: string } {
    const index = this.state.index;
    const key = (hi: number, lo: number) => `${hi}:${lo}`;
    const cleared = new Set<string>();
    for (let i = 0; i < pairs.length; i += 2) if (index.has(pairs[i]!, pairs[i + 1]!)) cleared.add(key(pairs[i]!, pairs[i + 1]!));
    // taken once every clear is done; offsets past either end of the range are free
    const takenAfter = (hi: number, lo: number) => hi >= 0 && hi <= 0xffffffff && index.has(hi, lo) && !cleared.has(key(hi, lo));
    // the offset `d` (±1, ±2) away from (hi, lo), as [hi, lo]; hi −1 or 2^32 past either end
    const step = (hi: number, lo: number, d: number): [number, number] => {
      const l = lo + d;
      if (l < 0) return [hi - 1, l + 0x100000000];
      if (l > 0xffffffff) return [hi + 1, l - 0x100000000];
      return [hi, l];
    };
    const seen = new Set<string>();
    let isolated = 0;
    let runs = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      const hi = pairs[i]!;
      const lo = pairs[i + 1]!;
      if (!cleared.has(key(hi, lo))) continue; // free already, or a repeat counted
      for (const d of [-1, 1]) {
        const [nh, nl] = step(hi, lo, d);
        if (!takenAfter(nh, nl) || seen.has(key(nh, nl))) continue;
        seen.add(key(nh, nl));
        const [bh, bl] = step(nh, nl, -1);
        const [ah, al] = step(nh, nl, 1);
        if (!takenAfter(bh, bl) && !takenAfter(ah, al)) isolated++; // it had this taken neighbour
      }
      const [h1, l1] = step(hi, lo, 1);
      const [h2, l2] = step(hi, lo, 2);
      if (takenAfter(h1, l1) && takenAfter(h2, l2)) runs++; // a run starts past it, where none did
    }
    const bytes = (isolated + runs) * SPARSE_BYTES_PER_SPLIT + (isolated > 0 ? SINGLES_NODE_BYTES : 0);
    return {
      bytes,
      how: `its clears leave ${formatCount(isolated)} addresses isolated and ${formatCount(runs)} runs more, up to ${SPARSE_BYTES_PER_SPLIT} bytes each${isolated > 0 ? ', and a node of 64 KiB rebuilt beside the old one' : ''}`,
    };
  }

  /** (hi, lo) pairs of the in-range addresses of `ips` (`method`'s argument); strict → throw on the first outside one. */
  private offsetsOf(method: string, ips: readonly string[], strict: boolean): Uint32Array {
    const length = arrayLength(ips, 'ips');
    if (length === undefined) throw new InvalidArgumentError(`${method} needs an array of addresses, got ${quoteInput(ips)}`);
    // Grown as the addresses are read, not sized by the length: an array's length says nothing
    // of its elements (['10.0.0.1'] with its length set to 2^32 − 1 fails at its first hole).
    let out = new Uint32Array(2 * Math.min(length, 4096));
    let n = 0;
    for (let i = 0; i < length; i++) {
      if (this.locateElement(readMember(ips, i, 'ips'), i, strict)) {
        if (n === out.length) {
          const grown = new Uint32Array(2 * out.length);
          grown.set(out);
          out = grown;
        }
        out[n++] = this.off[0]!;
        out[n++] = this.off[1]!;
      }
    }
    this.changing(); // as above: reading the elements ran the caller's code
    return out.subarray(0, n);
  }

  /**
   * locate() of `ips[i]`; `strict`: an address outside the range is refused (ErrNotInRange), not
   * skipped. Either refusal, malformed text or outside, names the element (inElement), the one
   * way to find it in a long listing.
   */
  private locateElement(ip: unknown, i: number, strict: boolean): boolean {
    let inRange: boolean;
    try {
      inRange = this.locate(ip);
    } catch (e) {
      if (e instanceof InvalidAddressError) throw new InvalidAddressError(e.input, inElement(e.reason, memberName('ips', i)));
      throw e;
    }
    if (inRange || !strict) return inRange;
    this.changing(); // an element's getter (a Proxy's) may have destroyed this: that, not the address, is the answer
    throw this.notInRange(memberName('ips', i));
  }

  /** A view that checks but changes nothing (upstream DryRun). */
  dryRun(this: object): RangeView;
  dryRun(this: Range): RangeView {
    checkThis(this, 'dryRun');
    this.throwIfDestroyed();
    return new DryRunRange(this);
  }

  /** Range-checks without allocating (dry run). @internal for DryRunRange */
  checkInRange(ip: string): void {
    this.throwIfDestroyed();
    if (!this.locate(ip)) throw this.notInRange();
  }

  /** The range's state (see RangeSnapshot for the data format). */
  snapshot(this: object): RangeSnapshot;
  snapshot(this: Range): RangeSnapshot {
    checkThis(this, 'snapshot');
    this.throwIfDestroyed();
    const data = this.snapshotData();
    return { range: this.cidr, data, length: data.length, checksum: snapshotChecksum(this.cidr, data) };
  }

  /** The bitmap format for ranges of at most 2^24 addresses, the offsets format above. */
  private get bitmapFormat(): boolean {
    return this.sizeHi === 0 && this.sizeLo <= BITMAP_SNAPSHOT_MAX;
  }

  // The format depends on the range only: a range forced onto the other index kind writes and
  // reads the same bytes as a default one, so snapshots move between them.
  private snapshotData(): Uint8Array {
    if (this.bitmapFormat && this.state.index.kind === 'dense' && !this.state.cooling?.size) return this.state.index.snapshotBits();
    const n = this.used();
    const pairs = new Uint32Array(n * 2);
    let i = 0;
    let hi = 0;
    let lo = 0;
    while (i < n && this.state.index.nextSet(hi, lo)) {
      hi = this.state.index.resultHi;
      lo = this.state.index.resultLo;
      if (this.state.cooling === null || !this.state.cooling.holds(hi, lo)) {
        pairs[2 * i] = hi;
        pairs[2 * i + 1] = lo;
        i++;
      }
      if (lo === 0xffffffff) {
        hi += 1;
        lo = 0;
      } else {
        lo += 1;
      }
    }
    return this.bitmapFormat ? bitmapOf(pairs.subarray(0, 2 * i)) : offsetBytesOf(pairs.subarray(0, 2 * i));
  }

  /**
   * Replaces the state with a snapshot's. ErrMismatchedNetwork when `range` is another network
   * (address or length); InvalidCIDRError when it is not CIDR text; InvalidArgumentError when it
   * is an object with a `range` field, such as the whole snapshot (with the calls to make:
   * restore(snap.range, snap.data) or Range.fromSnapshot(snap)), and when the data does not fit
   * this range. Nothing changes when it throws. The data is taken as given (as upstream's Restore
   * does): Range.fromSnapshot() also checks its length and checksum.
   */
  restore(this: object, range: string, data: Uint8Array): void;
  restore(this: Range, range: string, data: Uint8Array): void {
    checkThis(this, 'restore');
    this.changing();
    if (isSnapshotShaped(range)) throw snapshotAsRange();
    const other = Prefix.parse(range);
    if (other.cidr !== this.cidr) throw new ErrMismatchedNetwork(`the snapshot is of ${other.cidr}, this Range of ${this.cidr}`);
    data = ownBytes(data, 'snapshot data');
    // (an empty range's one-slot index would take bit 0: it goes the checked way below)
    if (this.bitmapFormat && this.state.index.kind === 'dense' && !this.empty) {
      // the data checked first, as the offsets path does, so refused data never reaches a
      // strategy; then the new chooser (same index object; a cool-down starts with nothing held,
      // since the restore overwrites what it held): when a strategy's forRange throws, nothing changed
      this.state.index.checkBits(data, this.cidr);
      const made = this.chooserOver(this.state.index);
      this.state.index.restoreBits(data, this.cidr);
      this.state.allocated = this.state.index.count();
      if (made !== null) {
        made.cooling?.forget(); // a strategy may hand back the queue it made before: it held offsets of the old state
        this.useChooser(made);
      }
      this.state.metrics.gauges(this.cidr, this); // fromSnapshot's metrics were seeded before the data came in
      return;
    }
    const pairs = this.bitmapFormat ? pairsOfBitmap(data) : pairsOfOffsetBytes(data);
    for (let i = 0; i < pairs.length; i += 2) {
      const hi = pairs[i]!;
      const lo = pairs[i + 1]!;
      if (this.atOrPastSize(hi, lo)) {
        throw new InvalidArgumentError(`snapshot offset ${(BigInt(hi) << 32n) | BigInt(lo)} is outside ${this.cidr}`);
      }
    }
    // Build the new space aside and swap it in, so a failure (memory) leaves the range as it was.
    if (this.state.space === null) {
      // no usable address: the data held no offset (refused above); the strategy is asked again, as on any range
      this.useChooser(this.chooserOver(this.state.index));
      return;
    }
    let next: AddressSpace | undefined;
    let made: ReturnType<Range['chooserOver']>;
    try {
      next = new AddressSpace(this.prefix, this.kindOption ?? this.state.index.kind, 'bitmap');
      const index = next.index;
      // in slices where one batch does not fit beside the index: a failure drops the new index
      loadNewIndex(
        next.kind,
        pairs,
        2,
        (batch) => index.setMany(batch),
        () => next!.destroy(),
      );
      made = this.chooserOver(next.index); // over the new index; a cool-down starts with nothing held
    } catch (e) {
      next?.destroy();
      throw remeasured(e); // the new index, dropped, counts as needed
    }
    this.state.space.destroy();
    this.state.space = next;
    this.state.index = next.index;
    this.state.allocated = next.count();
    this.useChooser(made);
    this.state.metrics.gauges(this.cidr, this);
  }

  /**
   * Registers the upstream metrics (prom-client; the one given, or the default registry for `true`
   * or none) and records to them. Given another registry than before, the range's gauges leave
   * the previous one (unless another range reports them there); its counters, cumulative, keep
   * there what they counted.
   */
  enableMetrics(this: object, registry?: MetricsRegistry | true): void;
  enableMetrics(this: Range, registry?: MetricsRegistry | true): void {
    checkThis(this, 'enableMetrics');
    if (this.itself !== this) throw refuseWrapper();
    this.throwIfDestroyed();
    this.state.metrics = switchRecorder(this.state.metrics, registry, this.cidr, this);
  }

  /**
   * Re-derives the index's counters and summaries from its raw data; throws when they disagree
   * (tests and debugging; O(size) for dense ranges). Returns `indexed`, the addresses the index
   * marks taken (used() plus those a cool-down holds), as Allocator.validate() does.
   */
  validate(this: object): { indexed: number };
  validate(this: Range): { indexed: number } {
    checkThis(this, 'validate');
    this.throwIfDestroyed();
    const code = this.state.index.validate();
    if (code !== 0) throw new Error(`Range ${this.cidr}: the WASM index failed its consistency check (code ${code}): a bug in ipallocator`);
    const held = this.state.cooling?.size ?? 0;
    const indexed = this.empty ? 0 : this.state.index.count();
    if (indexed !== this.state.allocated + held) {
      throw new Error(
        `Range ${this.cidr}: used() says ${formatCount(this.state.allocated)} and ${formatCount(held)} are held, the index holds ${formatCount(indexed)}`,
      );
    }
    const problem = this.state.cooling?.check(true); // a Range's call records while it runs (a check from inside one is not idle)
    if (problem) throw new Error(`Range ${this.cidr}: ${problem}`);
    return { indexed };
  }

  /** Bytes of WASM memory the index holds. */
  indexBytes(this: object): number;
  indexBytes(this: Range): number {
    checkThis(this, 'indexBytes');
    this.throwIfDestroyed();
    return this.state.index.bytes();
  }

  /**
   * Frees the WASM memory; with metrics on, the range's gauges leave the registry (unless another
   * range reports them there). Every method then throws ErrDestroyed; calling destroy() again does
   * nothing. `using r = new Range(…)` calls it at the end of the block.
   */
  destroy(this: object): void;
  destroy(this: Range): void {
    checkThis(this, 'destroy');
    if (this.itself !== this) throw refuseWrapper();
    if (this.state.destroyed) return;
    this.strategyCalls.refuseInside();
    this.state.destroyed = true;
    this.state.metrics.untrack(this.cidr); // the gauges leave the registry (see untrack)
    if (this.state.space !== null)
      this.state.space.destroy(); // its index included
    else this.state.index.destroy();
  }

  [Symbol.dispose](this: object): void;
  [Symbol.dispose](this: Range): void {
    checkThis(this, '[Symbol.dispose]');
    this.destroy();
  }

  /** What console.log and util.inspect show, in Node and Deno: the range, used and free (inspection). */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](this: Range, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string {
    return inspection(
      this,
      Range,
      'Range',
      () => ({ cidr: this.cidr }),
      () => ({ used: this.used(), free: this.free() }),
      depth,
      options,
      inspect,
    );
  }
}

sizeLessUsed(Range.prototype.free); // the gauges compute available_ips from used() and size

/** The offsets of `pairs` ((hi, lo) each) that `index` does not mark taken: has() needs no memory. */
function unmarked(index: FreeIndex, pairs: Uint32Array): Uint32Array {
  const out = new Uint32Array(pairs.length);
  let n = 0;
  for (let i = 0; i < pairs.length; i += 2) {
    if (index.has(pairs[i]!, pairs[i + 1]!)) continue;
    out[n++] = pairs[i]!;
    out[n++] = pairs[i + 1]!;
  }
  return out.subarray(0, n);
}

/**
 * Upstream's bitmap format: the big-endian bytes of a number whose bit i is offset i, minimal
 * length. `pairs`: ascending (hi = 0, lo) offsets.
 */
function bitmapOf(pairs: Uint32Array): Uint8Array {
  if (pairs.length === 0) return new Uint8Array(0);
  const top = pairs[pairs.length - 1]!;
  const out = new Uint8Array((top >>> 3) + 1);
  const last = out.length - 1;
  for (let i = 1; i < pairs.length; i += 2) {
    const o = pairs[i]!;
    out[last - (o >>> 3)]! |= 1 << (o & 7);
  }
  return out;
}

/** The offsets of a bitmap (see bitmapOf) as (0, lo) pairs; leading zero bytes are ignored. */
function pairsOfBitmap(data: Uint8Array): Uint32Array {
  let n = 0;
  for (let j = 0; j < data.length; j++) for (let b = data[j]!; b !== 0; b &= b - 1) n++;
  const pairs = new Uint32Array(2 * n);
  let k = 0;
  for (let j = data.length - 1; j >= 0; j--) {
    const base = (data.length - 1 - j) * 8;
    for (let b = data[j]!; b !== 0; b &= b - 1) {
      pairs[k++] = 0;
      pairs[k++] = base + 31 - Math.clz32(b & -b);
    }
  }
  return pairs;
}

/** The offsets format: each offset as 8 big-endian bytes, ascending. */
function offsetBytesOf(pairs: Uint32Array): Uint8Array {
  const data = new Uint8Array(pairs.length * 4);
  const view = new DataView(data.buffer);
  for (let i = 0; i < pairs.length; i++) view.setUint32(i * 4, pairs[i]!);
  return data;
}

function pairsOfOffsetBytes(data: Uint8Array): Uint32Array {
  if (data.length % 8 !== 0) {
    throw new InvalidArgumentError(
      `snapshot data of a range over 2^24 addresses must be a multiple of 8 bytes, got ${formatCount(data.length)}`,
    );
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const pairs = new Uint32Array(data.length / 4);
  for (let i = 0; i < pairs.length; i++) pairs[i] = view.getUint32(i * 4);
  // Ascending and distinct, as snapshot() writes them: anything else is not a snapshot of any
  // state (a duplicate would count one address twice in used()).
  for (let i = 2; i < pairs.length; i += 2) {
    const hi = pairs[i]!;
    const lo = pairs[i + 1]!;
    const prevHi = pairs[i - 2]!;
    if (hi < prevHi || (hi === prevHi && lo <= pairs[i - 1]!)) {
      const offset = (BigInt(hi) << 32n) | BigInt(lo);
      const prev = (BigInt(prevHi) << 32n) | BigInt(pairs[i - 1]!);
      throw new InvalidArgumentError(
        `snapshot offsets must be ascending and distinct: offset ${offset} follows ${prev} (8-byte entry ${i / 2})`,
      );
    }
  }
  return pairs;
}

/** %TypedArray%.prototype's [Symbol.toStringTag] getter: the kind of a real typed array, undefined for anything else. */
const typedArrayKind = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag)!.get!;

/** Whether `data` has Uint8Array.prototype in its chain (never throws: a revoked Proxy does not). */
function looksLikeUint8Array(data: unknown): boolean {
  try {
    return data instanceof Uint8Array;
  } catch {
    return false;
  }
}

/**
 * How to get bytes back from what a snapshot's data becomes when it is stored as JSON: a
 * Uint8Array given to JSON.stringify comes back as an object of numbered keys (nothing says so
 * when it is written), an array, or the base64 text of a snapshot file (`ipallocator map
 * --snapshot`), or a Buffer's JSON. Only the prototype and own descriptors are read, so no getter
 * of the caller's runs.
 */
function storedBytesHint(data: unknown): string {
  if (typeof data === 'string') {
    return ': text; base64, as a snapshot file holds it, decodes with Uint8Array.from(atob(text), (c) => c.charCodeAt(0))';
  }
  let proto: unknown;
  try {
    if (Array.isArray(data)) return ': pass Uint8Array.from(array)';
    proto = typeof data === 'object' && data !== null ? Object.getPrototypeOf(data) : undefined;
  } catch {
    return ''; // a revoked Proxy, or one whose trap throws: named as quoteInput named it
  }
  if (proto !== Object.prototype) return '';
  if (isJsonBuffer(data as object))
    return ": a Buffer written by JSON.stringify ({ type: 'Buffer', data: […] }): pass Uint8Array.from(value.data)";
  return (
    ': JSON.stringify writes a Uint8Array as an object of numbered keys, which cannot be read back as bytes;' +
    " store data as base64 (in Node, Buffer.from(data).toString('base64'), as a snapshot file holds it) and decode it" +
    ' into a Uint8Array before loading'
  );
}

/** `{ type: 'Buffer', data: [...] }`, what JSON.stringify writes of a Buffer; read through descriptors, so no getter runs. */
function isJsonBuffer(o: object): boolean {
  try {
    const type = Object.getOwnPropertyDescriptor(o, 'type');
    const data = Object.getOwnPropertyDescriptor(o, 'data');
    return type !== undefined && type.value === 'Buffer' && data !== undefined && Array.isArray(data.value);
  } catch {
    return false; // a Proxy whose trap throws: named as quoteInput named it
  }
}

/**
 * A copy of the caller's bytes, read once before anything changes: a Uint8Array's buffer may be
 * detached (transferred to a worker) or shrunk, and a subclass may answer `length` or
 * `subarray` as it likes; the copy is made from the array's own elements. Only a real
 * Uint8Array is taken (a Proxy or an object with its prototype is not: copying one would run its
 * iterator, which may not end). InvalidArgumentError for anything else.
 */
function ownBytes(data: unknown, what: string): Uint8Array {
  if (typedArrayKind.call(data) !== 'Uint8Array') {
    const got = looksLikeUint8Array(data)
      ? 'an object that only looks like one (a Proxy of a Uint8Array, or an object made from its prototype): pass the Uint8Array itself'
      : `${quoteInput(data)}${storedBytesHint(data)}`;
    throw new InvalidArgumentError(`${what} must be a Uint8Array, got ${got}`);
  }
  try {
    return new Uint8Array(data as Uint8Array);
  } catch {
    throw new InvalidArgumentError(`${what} cannot be read: its buffer was transferred (detached) or shrunk below it`);
  }
}

/** Throws InvalidArgumentError unless `s` is a whole snapshot as snapshot() wrote it. */
function checkSnapshot(s: unknown): RangeSnapshot {
  if (typeof s !== 'object' || s === null) {
    throw new InvalidArgumentError(`a Range snapshot must be an object { range, data, length, checksum }, got ${quoteInput(s)}`);
  }
  const range = readMember(s, 'range', 'snapshot');
  const given = readMember(s, 'data', 'snapshot');
  const length = readMember(s, 'length', 'snapshot');
  const checksum = readMember(s, 'checksum', 'snapshot');
  if (typeof range !== 'string') throw new InvalidArgumentError(`snapshot.range must be CIDR text, got ${quoteInput(range)}`);
  const data = ownBytes(given, 'snapshot.data');
  const of = `snapshot of ${quoteInput(range)}`;
  if (length === undefined && checksum === undefined) {
    throw new InvalidArgumentError(
      `${of} has no length and checksum (written before they existed, or upstream's data): restore its data with restore(range, data) if you trust it`,
    );
  }
  if (typeof length !== 'number' || typeof checksum !== 'number') {
    throw new InvalidArgumentError(
      `${of} needs both length and checksum as numbers, got length ${quoteInput(length)} and checksum ${quoteInput(checksum)}`,
    );
  }
  if (data.length !== length) {
    throw new InvalidArgumentError(
      `${of}: its data is ${formatCount(data.length)} bytes, the snapshot says ${formatCount(length)}: truncated or padded`,
    );
  }
  if (snapshotChecksum(range, data) !== checksum) {
    if (crc32(0, data) === checksum) {
      throw new InvalidArgumentError(
        `${of} has a checksum of its data only (written by an older version), which cannot tell whether its range was changed: if the range is right, restore its data with restore(range, data)`,
      );
    }
    throw new InvalidArgumentError(`${of} does not match its checksum: corrupted, or its range changed`);
  }
  return { range, data, length, checksum };
}

/**
 * The checksum of a snapshot: CRC-32 of the range text (UTF-8), a NUL byte, then the data. The
 * NUL keeps a byte from moving between the two (`fe80::/10` + `4…` is not `fe80::/104` + `…`).
 */
function snapshotChecksum(range: string, data: Uint8Array): number {
  return crc32(crc32(0, new TextEncoder().encode(`${range}\0`)), data);
}

/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xedb88320): the checksum zlib and PNG use, continued
 * from `crc` (0 to start), as zlib's crc32(crc, bytes).
 */
function crc32(crc: number, data: Uint8Array): number {
  const table = CRC_TABLE ?? (CRC_TABLE = crcTable());
  let c = (crc ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

let CRC_TABLE: Uint32Array | undefined;

function crcTable(): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

/**
 * Whether `a` is a Range or a Range's dry run: the synchronous views, with no store. False for a
 * revoked Proxy (instanceof throws on it), which is no Range either.
 * @internal
 */
export function isRangeView(a: unknown): boolean {
  try {
    return a instanceof Range || a instanceof DryRunRange;
  } catch {
    return false;
  }
}

/**
 * Where a dry run's release parses its text, to check it: the words are not read (no new array
 * per call: under Deno one costs more than the parse).
 */
const DRY_RUN_PARSED = new Uint32Array(4);

/** upstream dryRunRange: range checks only; allocateNext answers the network address. */
class DryRunRange implements RangeView {
  constructor(private readonly real: Range) {}
  get cidr(): string {
    return viewOf(this, 'cidr').real.cidr;
  }
  get ipFamily(): IPFamily {
    return viewOf(this, 'ipFamily').real.ipFamily;
  }
  get size(): bigint {
    return viewOf(this, 'size').real.size;
  }
  allocate(this: object, ip: string): void;
  allocate(this: DryRunRange, ip: string, owner?: unknown): void {
    checkViewThis(this, 'allocate');
    this.real.throwIfDestroyed();
    if (owner != null) throw refuseOwner('allocate', owner);
    this.real.checkInRange(ip);
  }
  allocateNext(this: object): string;
  allocateNext(this: DryRunRange, owner?: unknown): string {
    checkViewThis(this, 'allocateNext');
    this.real.throwIfDestroyed();
    if (owner != null) throw refuseOwner('allocateNext', owner);
    return formatAddr(this.real.prefix.version, this.real.prefix.network);
  }
  /** As allocateNext() here: the network address, nothing reserved (never null: a dry run does not search). */
  tryAllocateNext(this: object): string | null;
  tryAllocateNext(this: DryRunRange, owner?: unknown): string | null {
    checkViewThis(this, 'tryAllocateNext');
    this.real.throwIfDestroyed();
    if (owner != null) throw refuseOwner('tryAllocateNext', owner);
    return formatAddr(this.real.prefix.version, this.real.prefix.network);
  }
  release(this: object, ip: string): void;
  release(this: DryRunRange, ip: string): void {
    checkViewThis(this, 'release');
    this.real.throwIfDestroyed();
    parseAddrInto(ip, DRY_RUN_PARSED);
  }
  has(this: object, ip: string): boolean;
  has(this: DryRunRange, ip: string): boolean {
    checkViewThis(this, 'has');
    return this.real.has(ip);
  }
  forEach(this: object, fn: (ip: string) => void): void;
  forEach(this: DryRunRange, fn: (ip: string) => void): void {
    checkViewThis(this, 'forEach');
    this.real.forEach(fn);
  }
  used(this: object): number;
  used(this: DryRunRange): number {
    checkViewThis(this, 'used');
    return this.real.used();
  }
  free(this: object): bigint;
  free(this: DryRunRange): bigint {
    checkViewThis(this, 'free');
    return this.real.free();
  }
  dryRun(this: object): RangeView;
  dryRun(this: DryRunRange): RangeView {
    checkViewThis(this, 'dryRun');
    return this;
  }

  /**
   * What console.log and util.inspect show, in Node and Deno: the CIDR, used and free it answers
   * (those of its Range), or that the Range is destroyed (inspection).
   */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](this: DryRunRange, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string {
    const live = () => ({ used: this.used(), free: this.free() });
    return inspection(this, DryRunRange, 'DryRunRange', () => ({ cidr: this.cidr }), live, depth, options, inspect);
  }
}

/** What each Range method that an owner could be passed to takes, as refuseOwner says it. */
const TAKES = {
  allocate: 'the address only',
  allocateNext: 'no argument',
  tryAllocateNext: 'no argument',
  allocateMany: 'the count only',
  loadMany: 'the addresses only',
} as const;

/**
 * An owner given to a Range's allocate, allocateNext, tryAllocateNext, allocateMany or loadMany: TypeScript
 * refuses the argument, but JavaScript would drop it without a word, and a caller coming from
 * Allocator (whose records carry their owner) would believe it recorded. null, "no owner" to an
 * Allocator, is no owner here either.
 */
function refuseOwner(method: keyof typeof TAKES, owner: unknown): InvalidArgumentError {
  return new InvalidArgumentError(
    `a Range records no owner: ${method}() takes ${TAKES[method]}, but was also given ${quoteInput(owner)}; to record each address with its owner, use an Allocator (its records carry a parentRef)`,
  );
}

/**
 * A change asked of an object made from a Range with Object.create, or of a Proxy of one (see
 * Range's `itself`): the wrapper may read through to the range, but not change it. A Proxy is
 * named too: a tracing Proxy is the usual wrapper, and its user would not recognise it in
 * "Object.create" alone.
 */
function refuseWrapper(): InvalidArgumentError {
  return new InvalidArgumentError(
    'a Range is changed (allocated from, released to, restored, destroyed, given metrics) only on itself, not on an object made from it with Object.create, nor on a Proxy of it: to override or trace a method, extend Range (fromSnapshot called on the subclass makes one)',
  );
}

/**
 * restore() given an object where the range text goes: most likely the whole snapshot, which
 * fromSnapshot takes. InvalidArgumentError, since the call's arguments are wrong rather than a
 * CIDR's text, with the calls to make (ParsePrefix's "expected a string, got object" alone would
 * not name them).
 */
/**
 * Whether restore's `range` is an object with a `range` field: the whole snapshot (or one like it)
 * given where its range text goes, which snapshotAsRange answers. Any other non-string is no CIDR
 * text, refused as such (InvalidCIDRError), an array or a String object too.
 */
function isSnapshotShaped(range: unknown): boolean {
  return typeof range === 'object' && range !== null && readMember(range, 'range', 'range') !== undefined;
}

function snapshotAsRange(): InvalidArgumentError {
  return new InvalidArgumentError(
    "restore takes a snapshot's range text and data as two arguments, got an object for the range: call restore(snap.range, snap.data) to load a snapshot into this Range (unchecked, as upstream's Restore), or Range.fromSnapshot(snap) for a new Range, its length and checksum checked",
  );
}

/** The most bytes a sparse index holds per isolated address or run a clear leaves behind (Range.clearsNeed). */
const SPARSE_BYTES_PER_SPLIT = 32;
/** A largest node of a sparse index's isolated addresses, held twice while it is rebuilt (core-as/sparse-singles.ts). */
const SINGLES_NODE_BYTES = 64 * 1024;

/**
 * What a method of Range on the allocation path throws once it failed: unboundOr's answer
 * (called without a Range). Checked only on failure: a check first cost 18–36 % of an
 * allocateNext + release.
 */
function orUnbound(error: unknown, self: unknown, method: string): unknown {
  return unboundOr(error, self, Range, 'Range', method);
}

/** The check of the methods off the allocation path, made first (unboundCall): simpler, and not timed. */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof Range)) throw unboundCall(self, 'Range', method);
}

/**
 * A dry run's method called without its view (unboundCall), the view named as its type is
 * published, RangeView (this class is not exported); checked first: a view changes nothing, and
 * is not timed.
 */
function checkViewThis(self: unknown, method: string): void {
  if (!(self instanceof DryRunRange)) throw unboundCall(self, 'RangeView', method);
}

/** `self`, a view whose getter is read, or the getter's unboundRead when it is none (checkViewThis). */
function viewOf(self: unknown, getter: string): DryRunRange {
  if (!(self instanceof DryRunRange)) throw unboundRead(self, 'RangeView', getter);
  return self;
}
