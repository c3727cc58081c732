// Allocator: the product. Same contract, same random draws and the same answers as upstream's
// allocator (pkg/registry/core/service/ipallocator/ipallocator.go; its oracle here is
// ReferenceAllocator), but the search for a free address runs in a WASM index of taken addresses
// instead of one cache lookup per candidate.
//
//   first                        offsetAddress                                          last
//     │◂──── lower (static) ─────▸│◂──────────────── upper (dynamic) ───────────────────▸│
//
//   allocateNext: draw a start in the upper band as upstream does, take the first address from
//   there the index does not hold (wrapping inside the band), create its record. AlreadyExists →
//   keep it marked for the rest of this call and go on after it; any other error → un-mark and
//   abort. Upper band exhausted → the same in the lower band (adapters/space.ts).
//
// The store stays the source of truth; creating the record named by the address is the only
// lock. The index mirrors the store's cache plus this allocator's own work:
//
//   taken  = { canonical names in [first, last] the cache holds, any labels }   (cache events)
//          ∪ { addresses of this allocator's creates in flight, and of its created records the
//              cache has not reported yet }                                     (`pending`)
//          ∪ { addresses that collided during a running allocateNext }          (its `collided`)
//   used() = counted (labelled canonical names in [first, last]) + extras (labelled names in
//            the prefix without an offset: network, IPv4 broadcast, non-canonical spellings)
//
// Invariants (checked by validate()):
// 1. A bit in `taken` is cleared by a cache delete event, by the end of the call that set it
//    (failed create, collision) or by our own release, unless the cache holds the name or a
//    pending operation has it. So a stale bit only costs capacity until then, and a missing bit
//    costs only a collision (the store refuses the create): nothing is ever allocated twice.
// 2. Same seed, same store contents ⇒ the same draws and answers as ReferenceAllocator: the
//    reference skips a candidate iff the cache holds its canonical name, i.e. iff its bit is set.
// 3. The index never throws into the store: when an event cannot be recorded for lack of WASM
//    memory, `stale` is set and the index is rebuilt from the cache (the source of truth) before
//    the next operation; if that fails, the operation fails with OutOfMemoryError and changes
//    nothing.
//
// Each operation is written once as steps (begin: check and reserve; settle: success or failure).
// A store with synchronous operations (store.sync, the MemoryStore) runs them in one synchronous
// call, so nothing interleaves between the choice and the create; any other store runs the same
// steps around its promises.
import {
  AlreadyExistsError,
  ErrAllocated,
  ErrDestroyed,
  ErrFull,
  ErrNotInRange,
  ErrNotReady,
  InvalidArgumentError,
  InvalidRangeError,
  OutOfMemoryError,
  optionsObject,
} from './errors.ts';
import { canonicalOf, formatAddr, parseAddrInto, parseIPv4Fast, type Family } from './address.ts';
import { Prefix, refuseIPv4MappedOverlap } from './geometry.ts';
import type { IndexKind } from './free-index.ts';
import { storeOption } from './memory-store.ts';
import { NULL_RECORDER, recorderFor, type MetricsRecorder } from './metrics.ts';
import { randomOption, type RandomSource } from './random.ts';
import { DryRunAllocator, type DryRunTarget } from './dry-run.ts';
import { checkParentRef, hasAllocatorLabels, labelsFor, parseRecordName } from './records.ts';
import { AddressSpace, BAND_LOWER, BAND_UPPER } from './space.ts';
import type { IPAddressRecord, Store, StoreCache, StoreWatcher, SyncStoreOps } from './store.ts';
import type { AllocatorOptions, IPAllocator, IPFamily, ParentRef } from './types.ts';

/** Allocator options: the shared ones plus the index representation (default: by size). */
export interface IndexedAllocatorOptions extends AllocatorOptions {
  /** 'dense' (a bitmap, up to 2^31 addresses), 'sparse', or 'auto' (dense up to 2^24). */
  index?: IndexKind;
}

/**
 * A create of this allocator whose record the cache may not have reported yet: from the
 * reservation until the cache's add (or delete) event for the name, or a re-list.
 */
class Op {
  /** Words of the address (IPv4: [0, 0, 0, v4]). */
  readonly address = new Uint32Array(4);
  name = '';
  /** allocateNext: the band the address was taken from (adapters/space.ts BAND_*). */
  band = BAND_UPPER;
  /** This op set the address's bit (false: it was set already; a failure must not clear it). */
  reserved = false;
  /**
   * The cache reported the record while the op was pending: an add event (or, for the running
   * synchronous call, any event). Then later events are the truth and a successful create does
   * not mark the address again.
   */
  seen = false;
  /** The store call is still running (false: created, waiting for the cache). */
  calling = true;
  /** The op of an outer synchronous call (a watcher re-entered this allocator). */
  outer: Op | null = null;
}

function copy4(from: Uint32Array, to: Uint32Array): void {
  to[0] = from[0]!;
  to[1] = from[1]!;
  to[2] = from[2]!;
  to[3] = from[3]!;
}

/** allocateNext's answers other than an address. */
const NOT_READY = -2;
const FULL = -1;

/** Expected outcomes carry no stack (upstream's sentinel values); shared promises for the sync path. */
const RESOLVED: Promise<void> = Promise.resolve();
const TRUE: Promise<boolean> = Promise.resolve(true);
const FALSE: Promise<boolean> = Promise.resolve(false);

/**
 * The ClusterIP allocator of one Service range: upstream's answers (ipallocator.go), with a
 * WebAssembly index of taken addresses in place of upstream's linear scan. Addresses are
 * IPAddress records in a Store, shared with any other allocator of the same store.
 */
export class Allocator implements IPAllocator, DryRunTarget, Disposable {
  readonly cidr: string;
  readonly ipFamily: IPFamily;
  readonly store: Store;
  /** The range geometry. */
  readonly prefix: Prefix;

  private readonly cache: StoreCache;
  private readonly fam: Family;
  private readonly labels: Readonly<Record<string, string>>;
  private readonly random: RandomSource;
  /** The index representation, resolved at construction (a rebuild keeps it). */
  private readonly kind: IndexKind;
  private metrics: MetricsRecorder = NULL_RECORDER;
  private ready = true;
  private destroyed = false;

  /** The taken addresses (see the header); null when [first, last] is empty (/31, /32, /128). */
  private space: AddressSpace | null;
  /** The index missed an event for lack of WASM memory: rebuild it from the cache before the next operation. */
  private stale = false;
  /** Labelled canonical names in [first, last] the cache holds. */
  private counted = 0;
  private readonly extras = new Set<string>();
  /** Creates in flight through promises, and created records the cache has not reported: by name. */
  private readonly pending = new Map<string, Op>();
  /** The op of the synchronous store call running now (its cache event arrives inside the call). */
  private current: Op | null = null;
  /** A free Op for the next synchronous call (one allocation less per call). */
  private spare: Op | null = new Op();
  /** During the constructor's replay: the addresses seen, four words each, loaded in one call. */
  private loading: { words: Uint32Array; n: number } | null = null;
  private readonly unsubscribe: () => void;
  private readonly words = new Uint32Array(4);

  /**
   * An allocator for the range `cidr` (e.g. `10.96.0.0/12`, `fd00::/108`) over `options.store`
   * (default: a MemoryStore of its own). It subscribes to the store's cache at once and holds what
   * the cache already has. Throws InvalidCIDRError for malformed text; InvalidRangeError for a
   * range upstream refuses (IPv6 shorter than /64, no usable address, an overlap with the
   * IPv4-mapped block ::ffff:0:0/96); OutOfMemoryError when the WASM memory cap is reached.
   * Free its memory with destroy() or `using`.
   */
  constructor(cidr: string, options?: IndexedAllocatorOptions) {
    const opts = optionsObject(options, 'Allocator');
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
    this.store = storeOption(opts.store);
    this.cache = this.store.cache;
    this.random = randomOption(opts.random);
    this.space = AddressSpace.of(p, opts.index ?? 'auto');
    this.kind = this.space?.kind ?? 'auto';

    const watcher: StoreWatcher = {
      onAdd: (r, previous) => this.onAdd(r, previous),
      onDelete: (r) => this.onDelete(r),
      onResync: () => this.onResync(),
    };
    // Warm start: the cache replays every record through onAdd; their addresses are loaded in
    // one bulk call (a sparse index builds its pages at once). On failure nothing stays held.
    this.loading = { words: new Uint32Array(256), n: 0 };
    let unsubscribe: (() => void) | undefined;
    try {
      unsubscribe = this.cache.subscribe(watcher);
      const l = this.loading;
      this.loading = null;
      this.space?.setMany(l.words, l.n);
    } catch (e) {
      this.loading = null;
      this.destroyed = true;
      unsubscribe?.();
      this.space?.destroy();
      throw e;
    }
    this.unsubscribe = unsubscribe;
    if (opts.metrics !== undefined && opts.metrics !== false) this.enableMetrics(opts.metrics);
  }

  /** The factory: `Allocator.create("10.96.0.0/12", { store })`. */
  static create(cidr: string, options: IndexedAllocatorOptions = {}): Allocator {
    return new Allocator(cidr, options);
  }

  /** Usable addresses (upstream hostsPerNetwork). */
  get size(): bigint {
    return this.prefix.size;
  }

  /** The MetaAllocator's switch (upstream `ready`): allocate/allocateNext answer ErrNotReady while false. */
  setReady(ready: boolean): void {
    this.live();
    this.ready = ready;
  }

  /** Ready and the cache has synced (upstream: the informer's HasSynced). */
  isReady(): boolean {
    this.live();
    return this.ready && this.cache.hasSynced();
  }

  // ── allocate (static) ──────────────────────────────────────────────────────────────────────

  /**
   * Reserves `ip` for `owner`. Rejects with ErrNotInRange outside [first, last] (or the other
   * family), ErrAllocated when its record exists, ErrNotReady, InvalidAddressError (malformed
   * text), InvalidArgumentError (an owner not of upstream's ParentReference shape),
   * OutOfMemoryError; other store errors pass through. Nothing changes when it rejects.
   */
  allocate(ip: string, owner?: ParentRef): Promise<void> {
    try {
      const op = this.beginAllocate(ip);
      const record = { name: op.name, labels: this.labels, parentRef: checkParentRef(owner) };
      const start = this.metrics.start();
      const sync = this.store.sync;
      if (sync != null) {
        this.enter(op);
        try {
          sync.createSync(record);
        } catch (e) {
          throw this.createFailed(op, e, 'static');
        } finally {
          this.leave(op);
        }
        this.created(op, 'static', start);
        return RESOLVED;
      }
      return this.callAsync(op, () => this.store.create(record)).then(
        () => this.created(op, 'static', start),
        (e: unknown) => {
          throw this.createFailed(op, e, 'static');
        },
      );
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Ready, parse, range, reserve: the op of the create to make. */
  private beginAllocate(ip: string): Op {
    const w = this.checkRange(ip, false);
    this.freshIndex();
    const op = this.takeOp();
    op.name = canonicalOf(ip, this.fam, w);
    copy4(w, op.address);
    // Reserve before the create, as allocateNext does; the add event finds the bit set. A bit
    // that was set already (the cache knows the name) is not ours to clear on failure.
    op.reserved = this.space!.set(w);
    return op;
  }

  /** Ready, parse, range check: the address words (in this.words). */
  private checkRange(ip: string, dryRun: boolean): Uint32Array {
    if (!this.isReady()) throw new ErrNotReady();
    const w = this.words;
    const family = parseAddrInto(ip, w);
    if (family !== this.fam || this.space === null || !this.prefix.inRange(family, w)) {
      if (!dryRun) this.metrics.error(this.cidr, 'static');
      throw new ErrNotInRange(canonicalOf(ip, family, w), this.cidr);
    }
    return w;
  }

  // ── allocateNext (dynamic) ─────────────────────────────────────────────────────────────────

  /**
   * Reserves a free address, upper band first, and returns it. Rejects with ErrFull,
   * ErrNotReady, InvalidArgumentError (owner), OutOfMemoryError; a store error other than
   * AlreadyExists aborts the call and passes through.
   */
  allocateNext(owner?: ParentRef): Promise<string> {
    try {
      const parentRef = checkParentRef(owner);
      const sync = this.store.sync;
      if (sync == null) return this.allocateNextAsync(parentRef);
      const r = this.allocateNextSync(sync, parentRef);
      return typeof r === 'string' ? Promise.resolve(r) : Promise.reject(r === NOT_READY ? new ErrNotReady() : new ErrFull());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** True when the store has synchronous operations: tryAllocateNextNow() may be used. */
  get canAllocateNow(): boolean {
    return this.store.sync != null;
  }

  /**
   * allocateNext() in one synchronous step, for callers that try several allocators in turn
   * (MetaAllocator): the address, or null exactly where allocateNext() would reject with ErrFull
   * or ErrNotReady — same draws, same metrics, no Error built. Other errors are thrown. Only on a
   * store with synchronous operations (`canAllocateNow`), else InvalidArgumentError.
   */
  tryAllocateNextNow(owner?: ParentRef): string | null {
    const sync = this.store.sync;
    if (sync == null) throw new InvalidArgumentError(`tryAllocateNextNow needs a store with synchronous operations (${this.cidr})`);
    const r = this.allocateNextSync(sync, checkParentRef(owner));
    return typeof r === 'string' ? r : null;
  }

  /** The address, or NOT_READY / FULL. */
  private allocateNextSync(sync: SyncStoreOps, parentRef: ParentRef | null): string | number {
    const band = this.beginNext();
    if (band < 0) return band;
    const start = this.metrics.start();
    let collided: Op[] | null = null;
    try {
      for (let op = this.chosen(band); op !== null; op = this.nextAfter(op)) {
        const record = { name: op.name, labels: this.labels, parentRef };
        this.enter(op);
        try {
          sync.createSync(record);
        } catch (e) {
          (collided ??= []).push(this.collision(op, e));
          continue;
        } finally {
          this.leave(op);
        }
        this.created(op, 'dynamic', start);
        return record.name;
      }
    } finally {
      if (collided !== null) this.forgetCollisions(collided);
    }
    this.metrics.error(this.cidr, 'dynamic');
    return FULL;
  }

  private async allocateNextAsync(parentRef: ParentRef | null): Promise<string> {
    const band = this.beginNext();
    if (band < 0) throw band === NOT_READY ? new ErrNotReady() : new ErrFull();
    const start = this.metrics.start();
    let collided: Op[] | null = null;
    try {
      for (let op = this.chosen(band); op !== null; op = this.nextAfter(op)) {
        const record = { name: op.name, labels: this.labels, parentRef };
        try {
          await this.callAsync(op, () => this.store.create(record));
        } catch (e) {
          (collided ??= []).push(this.collision(op, e));
          continue;
        }
        this.created(op, 'dynamic', start);
        return op.name;
      }
    } finally {
      if (collided !== null) this.forgetCollisions(collided);
    }
    this.metrics.error(this.cidr, 'dynamic');
    throw new ErrFull();
  }

  /**
   * The start of allocateNext: ready, a fresh index, the upper band's draw and first candidate
   * (upstream's draw, adapters/space.ts). Returns BAND_UPPER when the upper band gave a
   * candidate, BAND_LOWER when it had none (the lower band is next), NOT_READY, or FULL without
   * a scan (rangeSize 0: no draw, no metric, as upstream).
   */
  private beginNext(): number {
    if (!this.isReady()) return NOT_READY;
    if (this.space === null || !this.space.hasUpperBand) return FULL;
    this.freshIndex(); // may replace this.space
    const space = this.space;
    return space.takeUpper(this.random) ? BAND_UPPER : BAND_LOWER;
  }

  /** The first candidate: the upper band's (already taken by beginNext), else the lower band's. */
  private chosen(band: number): Op | null {
    if (band === BAND_UPPER) return this.opOfTaken(BAND_UPPER);
    return this.space!.takeLower(this.random) ? this.opOfTaken(BAND_LOWER) : null;
  }

  /** The candidate after a collision at `op`: in its band, else (upper exhausted) the lower band's. */
  private nextAfter(op: Op): Op | null {
    const space = this.space!;
    if (this.destroyed) return null;
    if (space.takeAfter(op.band, op.address)) return this.opOfTaken(op.band);
    if (op.band === BAND_UPPER && space.takeLower(this.random)) return this.opOfTaken(BAND_LOWER);
    return null;
  }

  /** An op for the address the space just took (reserved by the take). */
  private opOfTaken(band: number): Op {
    const op = this.takeOp();
    const space = this.space!;
    copy4(space.address, op.address);
    op.name = space.addressText();
    op.band = band;
    op.reserved = true;
    return op;
  }

  /**
   * A failed dynamic create: AlreadyExists is a mid-air collision (the bit stays set until the
   * call ends; go on). Anything else un-reserves and aborts the call (master). Counted either way.
   */
  private collision(op: Op, e: unknown): Op {
    this.metrics.error(this.cidr, 'dynamic');
    if (e instanceof AlreadyExistsError) return op;
    if (!op.seen) this.unreserve(op);
    this.metrics.error(this.cidr, 'dynamic'); // an aborting store error counts twice (upstream)
    throw e;
  }

  /** End of allocateNext: collision marks go unless the cache holds the name now (or an op has it). */
  private forgetCollisions(collided: Op[]): void {
    for (const op of collided) this.unreserve(op);
  }

  // ── the store calls and their settling ────────────────────────────────────────────────────

  /**
   * Around a synchronous store call for `op` (enter, then leave in a finally): while it runs, op
   * is `current`, so its own cache event (delivered inside the call) is recognised without
   * parsing. leave() restores the outer op: a watcher may re-enter this allocator.
   */
  private enter(op: Op): void {
    op.calling = true;
    op.outer = this.current;
    this.current = op;
  }

  private leave(op: Op): void {
    this.current = op.outer;
    op.outer = null;
    op.calling = false;
  }

  /**
   * A store call through promises: `op` is pending (its events are recognised) until it settles.
   * A call that throws instead of rejecting is a rejection all the same.
   */
  private callAsync<T>(op: Op, call: () => Promise<T>): Promise<T> {
    op.calling = true;
    const shared = this.pending.has(op.name); // a concurrent call has the name: leave its op
    if (!shared) this.pending.set(op.name, op);
    const done = () => {
      op.calling = false;
      if (!shared && this.pending.get(op.name) === op) this.pending.delete(op.name);
    };
    let p: Promise<T>;
    try {
      p = call();
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
   */
  private created(op: Op, scope: 'static' | 'dynamic', start: number): void {
    if (!op.seen && !this.destroyed) {
      this.markTaken(op.address);
      if (!this.pending.has(op.name)) {
        if (op === this.spare) this.spare = null;
        this.pending.set(op.name, op);
      }
    } else {
      this.spare = op;
    }
    this.metrics.allocation(this.cidr, scope);
    this.metrics.gauges(this.cidr, this);
    this.metrics.observe(this.cidr, start);
  }

  /** A failed static create: un-reserve, count it, and the error to throw. */
  private createFailed(op: Op, e: unknown, scope: 'static'): unknown {
    if (op.reserved && !op.seen) this.unreserve(op);
    this.spare = op;
    this.metrics.error(this.cidr, scope);
    return e instanceof AlreadyExistsError ? new ErrAllocated() : e;
  }

  /** Clears op's bit unless the cache holds the name or another op has it (invariant 1). */
  private unreserve(op: Op): void {
    if (this.destroyed || this.cache.get(op.name) !== undefined || this.pending.has(op.name)) return;
    this.markFree(op.address);
  }

  private takeOp(): Op {
    const op = this.spare ?? new Op();
    this.spare = null;
    op.seen = false;
    op.reserved = false;
    return op;
  }

  // ── release, has, forEach, used, free ─────────────────────────────────────────────────────

  /**
   * Releases `ip`: deletes its record. Upstream ignores every error of the delete, as this does;
   * releasing a free address is a no-op. Malformed text rejects with InvalidAddressError; an
   * address of the other family is never sent to the store (it cannot be this range's).
   */
  release(ip: string): Promise<void> {
    try {
      this.live();
      const w = this.words;
      let name: string;
      const v4 = this.fam === 4 && typeof ip === 'string' ? parseIPv4Fast(ip) : -1;
      if (v4 >= 0) {
        // plain dotted quad: canonical as written
        w[0] = 0;
        w[1] = 0;
        w[2] = 0;
        w[3] = v4;
        name = ip;
      } else {
        const family = parseAddrInto(ip, w);
        if (family !== this.fam) return RESOLVED;
        name = canonicalOf(ip, family, w);
      }
      // No rebuild of a stale index here: a release needs none (the rebuild reads the cache
      // later), and under memory pressure freeing addresses must keep working.
      const sync = this.store.sync;
      if (sync != null) {
        const op = this.takeOp();
        op.name = name;
        copy4(w, op.address);
        this.enter(op);
        try {
          sync.deleteSync(name);
        } catch {
          this.spare = op;
          return RESOLVED; // the delete failed: ignored (upstream)
        } finally {
          this.leave(op);
        }
        if (!op.seen) this.released(op.name, op.address);
        else {
          // its delete event cleared the bit; a created record of ours the cache never reported is settled too
          if (this.pending.size !== 0 && this.pending.get(name)?.calling === false) this.pending.delete(name);
          this.metrics.gauges(this.cidr, this);
        }
        this.spare = op;
        return RESOLVED;
      }
      const words = Uint32Array.from(w);
      let call: Promise<void>;
      try {
        call = this.store.delete(name);
      } catch {
        return RESOLVED; // a delete that throws instead of rejecting: ignored all the same
      }
      return call.then(
        () => this.released(name, words),
        () => undefined,
      );
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * The delete succeeded but its event has not come (a lagging cache, or it was lost): clear the
   * bit here unless the cache holds the name or an op has it. A late add event sets it again and
   * its delete clears it.
   */
  private released(name: string, w: Uint32Array): void {
    if (this.destroyed) return;
    const op = this.pending.get(name);
    if (op !== undefined && !op.calling) this.pending.delete(name); // our unconfirmed create: settled
    if (this.cache.get(name) === undefined && !this.pending.has(name)) this.markFree(w);
    this.metrics.gauges(this.cidr, this);
  }

  /**
   * Whether a record named `ip` exists in the store (asks the store, not the cache; upstream Has).
   * Malformed text rejects with InvalidAddressError; a well-formed address of the other family
   * resolves false without asking the store.
   */
  has(ip: string): Promise<boolean> {
    try {
      this.live();
      const w = this.words;
      const family = parseAddrInto(ip, w);
      if (family !== this.fam) return FALSE;
      const name = canonicalOf(ip, family, w);
      const sync = this.store.sync;
      if (sync != null) return sync.getSync(name) !== undefined ? TRUE : FALSE;
      return this.store.get(name).then((r) => r !== undefined);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Calls `fn` for each allocated address of this family the cache holds (upstream ForEach: not filtered by CIDR). */
  forEach(fn: (ip: string) => void): void {
    this.live();
    if (typeof fn !== 'function') throw new InvalidArgumentError(`forEach needs a function, got ${typeof fn}`);
    for (const r of this.cache.list(this.labels)) fn(r.name);
  }

  /** Allocated addresses of this family inside the prefix (upstream Used). O(1). */
  used(): number {
    this.live();
    return this.counted + this.extras.size;
  }

  /** size − used, never negative. */
  free(): bigint {
    const used = BigInt(this.used());
    const size = this.size;
    return used > size ? 0n : size - used;
  }

  // ── dry run, metrics, checks, lifecycle ───────────────────────────────────────────────────

  /** A view that checks but persists nothing (upstream DryRun). */
  dryRun(): IPAllocator {
    this.live();
    return new DryRunAllocator(this);
  }

  /** The dry run's allocate: ready, syntax and range checks only. */
  checkAllocate(ip: string): void {
    this.checkRange(ip, true);
  }

  /** The dry run's allocateNext: the network address when ready. */
  checkAllocateNext(): string {
    if (!this.isReady()) throw new ErrNotReady();
    return formatAddr(this.fam, this.prefix.network);
  }

  /** Registers the five upstream metrics in prom-client (default registry or the one given). */
  enableMetrics(registry?: unknown): void {
    this.live();
    this.metrics = recorderFor(registry);
    this.metrics.gauges(this.cidr, this); // seeded gauges: the open upstream fix (#140615)
  }

  /**
   * Re-derives what this allocator keeps from the cache and its index, and throws an Error naming
   * the first disagreement: the index's own counters and summaries; used() against the cache's
   * labelled records; every address the cache holds in [first, last] marked taken (a missing
   * mark would let the index offer an address the store holds). Returns `indexed`, the number of
   * addresses the index marks taken (the cache's, plus creates in flight or not yet reported).
   * O(cache size + index size): for tests and debugging.
   */
  validate(): { indexed: number } {
    this.live();
    const space = this.space;
    const fresh = space !== null && !this.stale;
    if (fresh) {
      const code = space.index.validate();
      if (code !== 0) throw new Error(`Allocator ${this.cidr}: index invariant ${code} broken`);
    }
    let counted = 0;
    const w = new Uint32Array(4);
    for (const r of this.cache.list()) {
      if (this.classify(r.name, w) !== 1) continue;
      if (hasAllocatorLabels(r, this.ipFamily)) counted++;
      if (fresh && !space.has(w)) throw new Error(`Allocator ${this.cidr}: the cache holds ${r.name}, the index does not mark it taken`);
    }
    if (counted !== this.counted) {
      throw new Error(`Allocator ${this.cidr}: used() counts ${this.counted} labelled records in range, the cache holds ${counted}`);
    }
    return { indexed: fresh ? space.count() : 0 };
  }

  /** Unsubscribes from the store and frees the WASM index. Idempotent; every other method throws ErrDestroyed afterwards. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.ready = false;
    this.unsubscribe();
    this.space?.destroy();
    this.pending.clear();
  }

  /** `using a = new Allocator(…)`: destroy() at the end of the scope. */
  [Symbol.dispose](): void {
    this.destroy();
  }

  private live(): void {
    if (this.destroyed) throw new ErrDestroyed(`Allocator ${this.cidr}`);
  }

  // ── the index and the cache events ────────────────────────────────────────────────────────

  /**
   * Classifies a record name into `w`: 0 not ours (other family, outside the prefix, not an
   * address), 1 an address in [first, last] in canonical text, 2 inside the prefix but without
   * an offset (network, IPv4 broadcast, a non-canonical spelling).
   */
  private classify(name: string, w: Uint32Array): 0 | 1 | 2 {
    const family = parseRecordName(name, w);
    if (family !== this.fam || !this.prefix.contains(family, w)) return 0;
    if (canonicalOf(name, family, w) !== name || !this.prefix.inRange(family, w)) return 2;
    return 1;
  }

  /** The op with this name: the running synchronous call's (or an outer one's), or a pending one. */
  private opOf(name: string): Op | undefined {
    for (let op = this.current; op !== null; op = op.outer) if (op.name === name) return op;
    return this.pending.size === 0 ? undefined : this.pending.get(name);
  }

  private onAdd(r: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    if (this.destroyed) return;
    const op = this.opOf(r.name);
    if (op !== undefined) {
      // Ours: its address is known. The bit is set again (an old delete event may have cleared
      // it) — except inside our own synchronous call that reserved it: nothing ran in between.
      op.seen = true;
      if (!op.calling) this.pending.delete(op.name); // a created record, confirmed now
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
    // A new name counts when labelled; an update only when it adds or drops the labels.
    const labelled = hasAllocatorLabels(r, this.ipFamily);
    const was = previous !== undefined && hasAllocatorLabels(previous, this.ipFamily);
    if (labelled !== was) this.counted += labelled ? 1 : -1;
  }

  private onDelete(r: IPAddressRecord): void {
    if (this.destroyed) return;
    const op = this.opOf(r.name);
    if (op !== undefined) {
      // A create in flight through promises does not count this as seen: it may be an old
      // delete of the name, and the create's own add event is still to come.
      if (op === this.current) op.seen = true;
      if (!op.calling) this.pending.delete(op.name); // a created record, deleted before confirmed
      this.markFree(op.address);
    } else {
      const w = this.words;
      const c = this.classify(r.name, w);
      if (c === 0) return;
      if (c === 2) {
        this.extras.delete(r.name);
        return;
      }
      this.markFree(w);
    }
    if (hasAllocatorLabels(r, this.ipFamily)) this.counted--;
  }

  /** The cache re-listed: created records it still does not hold were deleted unseen. */
  private onResync(): void {
    if (this.destroyed) return;
    for (const op of [...this.pending.values()]) {
      if (op.calling || this.cache.get(op.name) !== undefined) continue;
      this.pending.delete(op.name);
      this.markFree(op.address);
    }
  }

  /** Sets a bit; out of WASM memory marks the index stale instead of throwing into the store. */
  private markTaken(w: ArrayLike<number>): void {
    if (this.stale) return;
    try {
      this.space!.set(w);
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
      this.stale = true;
    }
  }

  /** Clears a bit; a sparse run split out of memory marks the index stale (a stale bit only costs capacity). */
  private markFree(w: ArrayLike<number>): void {
    if (this.stale) return;
    try {
      this.space!.clear(w);
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
      this.stale = true;
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

  /**
   * Before an operation: when the index missed events (stale), rebuild it from the cache and the
   * pending ops. Throws OutOfMemoryError when that fails (the index stays stale; nothing else changed).
   */
  private freshIndex(): void {
    if (!this.stale) return;
    const old = this.space!;
    old.destroy(); // first: the new one may need that memory (idempotent when a rebuild failed before)
    const w = new Uint32Array(4);
    const words: number[] = [];
    for (const r of this.cache.list()) if (this.classify(r.name, w) === 1) words.push(w[0]!, w[1]!, w[2]!, w[3]!);
    for (const op of this.pending.values()) words.push(...op.address);
    let space: AddressSpace | undefined;
    try {
      space = new AddressSpace(this.prefix, this.kind);
      space.setMany(Uint32Array.from(words), words.length / 4);
    } catch (e) {
      space?.destroy();
      throw e; // still stale: the next operation tries again
    }
    this.space = space;
    this.stale = false;
  }
}

// Compile-time conformance (upstream `var _ Interface = &Allocator{}`).
const _conforms: (a: Allocator) => IPAllocator = (a) => a;
void _conforms;
