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
import type { IPAddressRecord, Store, StoreCache, StoreWatcher } from './store.ts';
import type { ParentRef } from './types.ts';

type CacheEvent = { kind: 'add' | 'delete'; record: IPAddressRecord };

/**
 * A Map of records by name that deletes by leaving a tombstone (undefined) and compacts when the
 * tombstones outnumber the live entries. Why: V8 Maps rehash on delete, and a create/delete churn
 * on a Map of ~65k names cost 0.4–2.3 µs per pair (measured, Node 20) against 0.06–0.27 µs here;
 * the allocators do exactly that churn on every allocate/release. Compaction is amortised O(1).
 */
class NameTable {
  private map = new Map<string, IPAddressRecord | undefined>();
  private live = 0;
  private dead = 0;

  get(name: string): IPAddressRecord | undefined {
    return this.map.get(name);
  }

  has(name: string): boolean {
    return this.map.get(name) !== undefined;
  }

  set(name: string, record: IPAddressRecord): void {
    if (this.map.get(name) === undefined) {
      if (this.map.has(name)) this.dead--;
      this.live++;
    }
    this.map.set(name, record);
  }

  /** Removes and returns the record, or undefined when absent. */
  delete(name: string): IPAddressRecord | undefined {
    const r = this.map.get(name);
    if (r === undefined) return undefined;
    this.map.set(name, undefined);
    this.live--;
    this.dead++;
    if (this.dead > 1024 && this.dead > this.live) this.compact();
    return r;
  }

  get size(): number {
    return this.live;
  }

  *values(): IterableIterator<IPAddressRecord> {
    for (const r of this.map.values()) if (r !== undefined) yield r;
  }

  /** A copy holding the live records. */
  clone(): NameTable {
    const t = new NameTable();
    for (const r of this.values()) t.set(r.name, r);
    return t;
  }

  private compact(): void {
    const m = new Map<string, IPAddressRecord | undefined>();
    for (const [k, r] of this.map) if (r !== undefined) m.set(k, r);
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
}

let isoAt = -1;
let isoText = '';
/** The current time as RFC 3339 text, formatted at most once per millisecond (it costs ≈ 1 µs). */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoAt) {
    isoAt = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
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
  readonly watchers = new Set<StoreWatcher>();
  synced = true;

  get(name: string): IPAddressRecord | undefined {
    return this.records.get(name);
  }

  list(labels?: Readonly<Record<string, string>>): IPAddressRecord[] {
    const out: IPAddressRecord[] = [];
    for (const r of this.records.values()) if (matches(r, labels)) out.push(r);
    return out;
  }

  get size(): number {
    return this.records.size;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  subscribe(watcher: StoreWatcher): () => void {
    // Replay before registering: a watcher added late first sees every record already cached.
    for (const r of [...this.records.values()]) watcher.onAdd(r);
    this.watchers.add(watcher);
    return () => {
      this.watchers.delete(watcher);
    };
  }

  constructor(authority: NameTable) {
    this.records = authority;
  }

  /** Shared mode: the authority already changed; tell the watchers. */
  notifyAdd(record: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    for (const w of [...this.watchers]) w.onAdd(record, previous);
  }

  notifyDelete(last: IPAddressRecord): void {
    for (const w of [...this.watchers]) w.onDelete(last);
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
      const previous = this.records.get(name);
      this.records.set(name, e.record);
      for (const w of [...this.watchers]) w.onAdd(e.record, previous);
      return;
    }
    const last = this.records.delete(name);
    if (last === undefined) return; // the cache never saw it: nothing to tell
    for (const w of [...this.watchers]) w.onDelete(last);
  }
}

export class MemoryStore implements Store {
  private readonly authority = new NameTable();
  private readonly memCache = new MemoryCache(this.authority);
  readonly cache: StoreCache = this.memCache;

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
  }

  create(record: IPAddressRecord): Promise<IPAddressRecord> {
    this.createCalls++;
    const f = this.failures;
    if (f !== undefined) {
      if (--f.remaining <= 0) this.failures = undefined;
      return Promise.reject(f.error);
    }
    if (this.collisions > 0) {
      this.collisions--;
      this.alreadyExistsAnswers++;
      return Promise.reject(new AlreadyExistsError(record.name));
    }
    if (this.authority.has(record.name)) {
      this.alreadyExistsAnswers++;
      return Promise.reject(new AlreadyExistsError(record.name));
    }
    return Promise.resolve(this.write(record, true));
  }

  delete(name: string): Promise<void> {
    this.deleteCalls++;
    const r = this.authority.delete(name);
    if (r === undefined) return Promise.reject(new NotFoundError(name));
    if (this.memCache.shared) this.memCache.notifyDelete(r);
    else this.emit({ kind: 'delete', record: r });
    return Promise.resolve();
  }

  get(name: string): Promise<IPAddressRecord | undefined> {
    this.getCalls++;
    return Promise.resolve(this.authority.get(name));
  }

  /** Number of records in the authority. */
  get size(): number {
    return this.authority.size;
  }

  /** Every record in the authority (a copy of the list). */
  records(): IPAddressRecord[] {
    return [...this.authority.values()];
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
    return this.write({ name, labels, parentRef }, true);
  }

  /** Writes a record into the authority only: the cache does not hear about it. */
  injectAuthorityOnly(name: string, labels: Record<string, string> = {}, parentRef: ParentRef | null = null): IPAddressRecord {
    this.memCache.fork();
    return this.write({ name, labels, parentRef }, false);
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  private write(record: IPAddressRecord, notify: boolean): IPAddressRecord {
    const v = ++this.version;
    const stored: IPAddressRecord = Object.freeze({
      name: record.name,
      // Shared frozen label sets (the allocators pass one per family) are kept as they are.
      labels: Object.isFrozen(record.labels) ? record.labels : Object.freeze({ ...record.labels }),
      parentRef: record.parentRef === null || record.parentRef === undefined ? null : Object.freeze({ ...record.parentRef }),
      resourceVersion: String(v),
      uid: `memory-${v}`,
      creationTimestamp: isoNow(),
    });
    if (this.memCache.shared) {
      const previous = this.authority.get(stored.name);
      this.authority.set(stored.name, stored);
      if (notify) this.memCache.notifyAdd(stored, previous);
      return stored;
    }
    this.authority.set(stored.name, stored);
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
