// MemoryStore: the embedded Store (adapters/store.ts) — a Map of IPAddress records plus a cache
// view, for a single process and for tests.
//
//   create/delete/get ──► authority (Map name → record)      the compare-and-set: create fails
//                              │                             with AlreadyExistsError if the name
//                              │ events (add / delete)        exists, delete with NotFoundError
//                              ▼
//                         cache  (Map name → record) ──► watchers (subscribe)
//
// By default the cache follows the authority synchronously: a change is in the cache and every
// watcher has seen it before create()/delete() return their promise — upstream's test fixture
// (cache == API). `lagCache()` queues the events instead, delivered by `flushCache()` or after a
// delay, to model an informer that is behind. Several allocators may share one store; that is
// how several API servers share one IPAddress namespace.
//
// The authority answers synchronously, so the store also offers createSync/deleteSync/getSync
// (`store.sync`, adapters/store.ts SyncStoreOps): create() is createSync() wrapped in a promise.
// Allocator uses them, so an allocation on a MemoryStore has no await between choosing an
// address and creating its record. `new MemoryStore({ syncOps: false })` hides them (every call
// then goes through the promises, as with a remote store); a subclass that overrides create,
// delete or get — or an instance whose method is replaced later (a test spy) — does not offer
// them either, so such a replacement is never bypassed.
//
// Test hooks (named `*` below, none used by the allocators themselves):
//   failCreates(error, times)      the next `times` creates reject with `error` (nothing stored)
//   collideCreates(times)          the next `times` creates reject with AlreadyExistsError although
//                                  the name is free and stays free (upstream A19 "mid-air collision")
//   lagCache(delayMs?) / flushCache() / syncCache()
//   setSynced(false)               cache.hasSynced() answers false (informer not synced)
//   inject(name, labels, parentRef) write a record directly (any name, e.g. `invalid-ip-address`)
//   injectAuthorityOnly(...)       write a record the cache never hears about (until a flush of a
//                                  later change of the same name)
//   counters: createCalls, deleteCalls, getCalls
import { AlreadyExistsError, NotFoundError } from './errors.ts';
import type { IPAddressRecord, Store, StoreCache, StoreWatcher, SyncStoreOps } from './store.ts';
import type { ParentRef } from './types.ts';

type CacheEvent = { kind: 'add' | 'delete'; record: IPAddressRecord };

const RESOLVED: Promise<void> = Promise.resolve();

/** The value a deleted name keeps in NameTable's map (see there). */
const TOMB: IPAddressRecord = Object.freeze({ name: '', labels: Object.freeze({}), parentRef: null });

/** What NameTable.peek finds: a record, TOMB (deleted, key kept) or undefined (never there). */
type Slot = IPAddressRecord | undefined;

/** The live record of a slot. */
function liveOf(slot: Slot): IPAddressRecord | undefined {
  return slot === TOMB ? undefined : slot;
}

/**
 * A Map of records by name that deletes by leaving a tombstone (TOMB) and compacts when the
 * tombstones outnumber the live records (and 1,024). Why: V8 Maps rehash on delete, and the
 * create/delete churn the allocators make on every allocate/release cost 0.16 µs per pair on a
 * Map of 32k names but 0.46 µs at 64.9k and 2.8 µs at 65.5k (Node 20, measured), against
 * 0.06–0.12 µs with tombstones: an address that comes back reuses its key's entry. A create is one
 * lookup (peek) and one set, a delete one lookup and one set; compaction is amortised O(1) and the
 * map never holds more than 2 × live + 1,024 entries.
 */
class NameTable {
  private map = new Map<string, Slot>();
  private live = 0;
  /** Tombstones in the map. */
  private dead = 0;

  get(name: string): IPAddressRecord | undefined {
    return liveOf(this.map.get(name));
  }

  /** The raw slot, for set(). */
  peek(name: string): Slot {
    return this.map.get(name);
  }

  /** Stores `record` under `name`; `slot` is what peek(name) returned (the caller has just looked). */
  set(name: string, record: IPAddressRecord, slot: Slot): void {
    if (slot === undefined) this.live++;
    else if (slot === TOMB) {
      this.live++;
      this.dead--;
    }
    this.map.set(name, record);
  }

  /** Removes and returns the record, or undefined when absent. */
  delete(name: string): IPAddressRecord | undefined {
    const r = this.map.get(name);
    if (r === undefined || r === TOMB) return undefined;
    this.map.set(name, TOMB);
    this.live--;
    this.dead++;
    if (this.dead > 1024 && this.dead > this.live) this.compact();
    return r;
  }

  get size(): number {
    return this.live;
  }

  /** The live records, as a new array (a plain loop: a generator costs ≈ 3× per record). */
  values(): IPAddressRecord[] {
    const out: IPAddressRecord[] = [];
    for (const r of this.map.values()) if (r !== TOMB && r !== undefined) out.push(r);
    return out;
  }

  /** A copy holding the live records. */
  clone(): NameTable {
    const t = new NameTable();
    for (const r of this.values()) t.set(r.name, r, undefined);
    return t;
  }

  private compact(): void {
    const m = new Map<string, Slot>();
    for (const [k, r] of this.map) if (r !== TOMB) m.set(k, r);
    this.map = m;
    this.dead = 0;
  }
}

export interface MemoryStoreOptions {
  /**
   * Cache behaviour: 'sync' (default, cache == authority), 'manual' (events wait for
   * flushCache()), or a number of milliseconds after which queued events are delivered.
   */
  cache?: 'sync' | 'manual' | number;
  /** Initial answer of cache.hasSynced() (default true). */
  synced?: boolean;
  /**
   * Offer the synchronous operations as `store.sync` (default true). false makes allocators go
   * through the promise-returning create/delete/get, as they do with a remote store.
   */
  syncOps?: boolean;
}

let stampSecond = -1;
let stamp = '';
/**
 * creationTimestamp text at Kubernetes' precision (whole seconds, `2026-12-02T12:00:00Z`),
 * formatted once per second. (Reusing the text without reading the clock would need a timer to
 * expire it, and Deno's test sanitizer reports any pending timer as a leak, even an unref'd one.)
 */
function stampNow(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== stampSecond) {
    stampSecond = second;
    stamp = new Date(second * 1000).toISOString().slice(0, 19) + 'Z';
  }
  return stamp;
}

function matches(record: IPAddressRecord, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (labels === undefined) return true;
  for (const k in labels) if (record.labels[k] !== labels[k]) return false;
  return true;
}

class MemoryCache implements StoreCache {
  /**
   * name → record, as far as the watchers have been told. While `shared`, this IS the
   * authority's table (cache == authority, the default): no second copy, no second map update.
   * The store forks a private copy the first time the two may differ (lagCache,
   * injectAuthorityOnly).
   */
  records: NameTable;
  shared = true;
  /** Subscribed watchers, in order. Replaced (never mutated) on (un)subscribe, so a notification loop is not disturbed by a watcher that unsubscribes. */
  watchers: readonly StoreWatcher[] = [];
  synced = true;

  get(name: string): IPAddressRecord | undefined {
    return this.records.get(name);
  }

  list(labels?: Readonly<Record<string, string>>): IPAddressRecord[] {
    const all = this.records.values();
    return labels === undefined ? all : all.filter((r) => matches(r, labels));
  }

  get size(): number {
    return this.records.size;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  subscribe(watcher: StoreWatcher): () => void {
    // Replay before registering: a watcher added late first sees every record already cached.
    const all = this.records.values(); // a copy: a watcher may change the store while replaying
    for (let i = 0; i < all.length; i++) watcher.onAdd(all[i]!);
    this.watchers = [...this.watchers, watcher];
    return () => {
      this.watchers = this.watchers.filter((w) => w !== watcher);
    };
  }

  constructor(authority: NameTable) {
    this.records = authority;
  }

  /** Shared mode: the authority already changed; tell the watchers. */
  notifyAdd(record: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    const ws = this.watchers;
    for (let i = 0; i < ws.length; i++) ws[i]!.onAdd(record, previous);
  }

  notifyDelete(last: IPAddressRecord): void {
    const ws = this.watchers;
    for (let i = 0; i < ws.length; i++) ws[i]!.onDelete(last);
  }

  /** Gives the cache its own copy of the records (from now on events are applied to it). */
  fork(): void {
    if (!this.shared) return;
    this.records = this.records.clone();
    this.shared = false;
  }

  apply(e: CacheEvent): void {
    const name = e.record.name;
    if (e.kind === 'add') {
      const slot = this.records.peek(name);
      this.records.set(name, e.record, slot);
      this.notifyAdd(e.record, liveOf(slot));
      return;
    }
    const last = this.records.delete(name);
    if (last === undefined) return; // the cache never saw it: nothing to tell
    this.notifyDelete(last);
  }
}

export class MemoryStore implements Store, SyncStoreOps {
  private readonly authority = new NameTable();
  private readonly memCache = new MemoryCache(this.authority);
  readonly cache: StoreCache = this.memCache;
  private readonly syncEnabled: boolean;

  /** Events not yet applied to the cache (only in lag mode). */
  private readonly queue: CacheEvent[] = [];
  private lagMode: 'sync' | 'manual' | number = 'sync';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private version = 0;

  private failures: { error: Error; remaining: number } | undefined;
  private collisions = 0;

  /** Number of create() calls, including failed and injected-failure ones. */
  createCalls = 0;
  /** Number of create() calls answered with AlreadyExistsError (real or injected). */
  alreadyExistsAnswers = 0;
  deleteCalls = 0;
  getCalls = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const mode = options.cache ?? 'sync';
    if (mode !== 'sync') this.lagCache(mode);
    if (options.synced === false) this.memCache.synced = false;
    this.syncEnabled = options.syncOps !== false;
  }

  /**
   * This store's synchronous operations (itself), or null: with syncOps: false, and whenever
   * create, delete or get is not MemoryStore's own (a subclass override, or a method replaced on
   * the instance later, e.g. a test spy) — callers then go through that method.
   */
  get sync(): SyncStoreOps | null {
    return this.syncEnabled && this.create === PROTO.create && this.delete === PROTO.delete && this.get === PROTO.get ? this : null;
  }

  create(record: IPAddressRecord): Promise<IPAddressRecord> {
    try {
      return Promise.resolve(this.createSync(record));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  delete(name: string): Promise<void> {
    try {
      this.deleteSync(name);
      return RESOLVED;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  get(name: string): Promise<IPAddressRecord | undefined> {
    return Promise.resolve(this.getSync(name));
  }

  /** create(), answered synchronously: the stored record, or throws AlreadyExistsError (or an injected failure). */
  createSync(record: IPAddressRecord): IPAddressRecord {
    this.createCalls++;
    const f = this.failures;
    if (f !== undefined) {
      if (--f.remaining <= 0) this.failures = undefined;
      throw f.error;
    }
    if (this.collisions > 0) {
      this.collisions--;
      this.alreadyExistsAnswers++;
      throw new AlreadyExistsError(record.name);
    }
    const slot = this.authority.peek(record.name);
    if (slot !== undefined && slot !== TOMB) {
      this.alreadyExistsAnswers++;
      throw new AlreadyExistsError(record.name);
    }
    return this.write(record, true, slot);
  }

  /** delete(), answered synchronously: throws NotFoundError when absent. */
  deleteSync(name: string): void {
    this.deleteCalls++;
    const r = this.authority.delete(name);
    if (r === undefined) throw new NotFoundError(name);
    if (this.memCache.shared) this.memCache.notifyDelete(r);
    else this.emit({ kind: 'delete', record: r });
  }

  /** get(), answered synchronously: the authority's record, or undefined. */
  getSync(name: string): IPAddressRecord | undefined {
    this.getCalls++;
    return this.authority.get(name);
  }

  /** Number of watchers subscribed to the cache. */
  get watcherCount(): number {
    return this.memCache.watchers.length;
  }

  /** Number of records in the authority. */
  get size(): number {
    return this.authority.size;
  }

  /** Every record in the authority (a copy of the list). */
  records(): IPAddressRecord[] {
    return this.authority.values();
  }

  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  // ── test hooks ─────────────────────────────────────────────────────────────────────────────

  /** The next `times` creates (default 1; Infinity for always) reject with `error`; nothing is stored. */
  failCreates(error: Error, times = 1): void {
    this.failures = times > 0 ? { error, remaining: times } : undefined;
  }

  /**
   * The next `times` creates reject with AlreadyExistsError although the name is free: what an
   * allocator sees when another API server won the name and its cache has not caught up.
   */
  collideCreates(times = 1): void {
    this.collisions = times;
  }

  /**
   * From now on cache events queue up: delivered by flushCache(), or — when `delayMs` is given —
   * automatically about `delayMs` ms after the first queued event.
   */
  lagCache(delayMs?: number | 'manual'): void {
    this.memCache.fork();
    this.lagMode = typeof delayMs === 'number' ? delayMs : 'manual';
  }

  /** Delivers every queued event, in order. Returns how many. */
  flushCache(): number {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    let n = 0;
    while (this.queue.length > 0) {
      this.memCache.apply(this.queue.shift()!);
      n++;
    }
    return n;
  }

  /** Back to a synchronous cache (flushes what is queued first). */
  syncCache(): void {
    this.flushCache();
    this.lagMode = 'sync';
  }

  /** Number of cache events waiting. */
  get pendingEvents(): number {
    return this.queue.length;
  }

  /** What cache.hasSynced() answers. */
  setSynced(synced: boolean): void {
    this.memCache.synced = synced;
  }

  /**
   * Writes a record directly (no AlreadyExists check: replaces a record of the same name, which
   * the cache reports as an update, i.e. onAdd again). Any name is accepted, valid or not.
   */
  inject(name: string, labels: Record<string, string> = {}, parentRef: ParentRef | null = null): IPAddressRecord {
    return this.write({ name, labels, parentRef }, true, this.authority.peek(name));
  }

  /** Writes a record into the authority only: the cache does not hear about it. */
  injectAuthorityOnly(name: string, labels: Record<string, string> = {}, parentRef: ParentRef | null = null): IPAddressRecord {
    this.memCache.fork();
    return this.write({ name, labels, parentRef }, false, this.authority.peek(name));
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  /** Stores a new version of `record.name`; `slot` is the authority's peek(name) (the caller looked). */
  private write(record: IPAddressRecord, notify: boolean, slot: Slot): IPAddressRecord {
    const v = ++this.version;
    const stored: IPAddressRecord = Object.freeze({
      name: record.name,
      // Shared frozen label sets (the allocators pass one per family) are kept as they are.
      labels: Object.isFrozen(record.labels) ? record.labels : Object.freeze({ ...record.labels }),
      parentRef: record.parentRef === null || record.parentRef === undefined ? null : Object.freeze({ ...record.parentRef }),
      resourceVersion: String(v),
      uid: `memory-${v}`,
      creationTimestamp: stampNow(),
    });
    this.authority.set(stored.name, stored, slot);
    if (this.memCache.shared) {
      if (notify) this.memCache.notifyAdd(stored, liveOf(slot));
      return stored;
    }
    if (notify) this.emit({ kind: 'add', record: stored });
    return stored;
  }

  private emit(e: CacheEvent): void {
    if (this.lagMode === 'sync') {
      this.memCache.apply(e);
      return;
    }
    this.queue.push(e);
    if (typeof this.lagMode === 'number' && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flushCache();
      }, this.lagMode);
    }
  }
}

/** MemoryStore's own methods, for the `sync` check. */
const PROTO = MemoryStore.prototype;
