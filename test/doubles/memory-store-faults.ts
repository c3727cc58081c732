// FaultyMemoryStore: a MemoryStore with the faults a real API server and informer produce, for
// tests. The embedded store has none of this; it lives here, on the subclass, so the product's
// record path carries no test hooks.
//
//   failCreates(error, times)      the next `times` creates reject with `error` (nothing stored)
//   collideCreates(times)          the next `times` creates reject with AlreadyExistsError although
//                                  the name is free and stays free (upstream A19 "mid-air collision")
//   lagCache(delayMs?) / flushCache() / syncCache() / pendingEvents
//                                  the cache falls behind the authority: events queue up until
//                                  flushed (or `delayMs` later), as an informer that is behind
//   setSynced(false)               cache.hasSynced() answers false (informer not synced)
//   inject(name, labels, parentRef) write a record directly, without validation or AlreadyExists
//                                  (any name, e.g. `invalid-ip-address`: what an older or foreign
//                                  API server may hold); a record of the same name is replaced,
//                                  which watchers see as an update
//   injectAuthorityOnly(...)       write a record the cache never hears about (until a flush of a
//                                  later change of the same name)
//   counters: createCalls, alreadyExistsAnswers, deleteCalls, getCalls
//
// Its createSync/deleteSync/getSync are the faulty ones, and `store.sync` is the store itself, so
// allocators meet the faults on both store paths (`syncOps: false` for the promise path).
//
// The embedded store's cache reads the authority's own table. This double's cache (OwnTableCache,
// made through MemoryStore's newCache) keeps a table of its own from the start, updated by the
// events it is given: equal to the authority while the cache follows it, behind it while events
// are held (lagCache) or a write skips the cache (injectAuthorityOnly).
import { MemoryCache, MemoryStore, type MemoryStoreOptions, type WatcherErrorHandler } from '../../adapters/memory-store.ts';
import { AlreadyExistsError } from '../../adapters/errors.ts';
import { NameTable } from '../../adapters/name-table.ts';
import type { ParentRef, IPAddressRecord } from '../../adapters/store.ts';

export interface FaultyMemoryStoreOptions extends MemoryStoreOptions {
  /**
   * Cache behaviour: 'sync' (default, cache == authority), 'manual' (events wait for
   * flushCache()), or a number of milliseconds after which queued events are delivered.
   */
  cache?: 'sync' | 'manual' | number;
  /** Initial answer of cache.hasSynced() (default true). */
  synced?: boolean;
}

type HeldEvent = { add: boolean; record: IPAddressRecord; previous: IPAddressRecord | undefined };

/**
 * A cache with a table of its own: it holds what its events told it, so it can lag behind the
 * authority, and it answers hasSynced() with `synced`.
 */
class OwnTableCache extends MemoryCache {
  /** What hasSynced() answers (while open). */
  synced = true;

  constructor(onWatcherError: WatcherErrorHandler) {
    super(new NameTable(), onWatcherError);
  }

  override hasSynced(): boolean {
    return super.hasSynced() && this.synced;
  }

  /** `previous` is the cache's own prior record, which a lagging cache may lack. */
  override added(record: IPAddressRecord, _previous: IPAddressRecord | undefined): void {
    const previous = this.records.get(record.name);
    this.records.set(record.name, record);
    super.added(record, previous);
  }

  /** The record the cache held is the one its watchers are told of. */
  override deleted(record: IPAddressRecord): void {
    const last = this.records.delete(record.name);
    if (last === undefined) return; // the cache never saw it: nothing to tell
    super.deleted(last);
  }
}

export class FaultyMemoryStore extends MemoryStore {
  /** Number of create calls, including failed and injected-failure ones. */
  createCalls = 0;
  /** Number of create calls answered with AlreadyExistsError (real or injected). */
  alreadyExistsAnswers = 0;
  deleteCalls = 0;
  getCalls = 0;

  private failures: { error: Error; remaining: number } | undefined;
  private collisions = 0;
  /** 'sync' while the cache follows the authority; else events are held in `held`. */
  private lagMode: 'sync' | 'manual' | number = 'sync';
  private readonly held: HeldEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: FaultyMemoryStoreOptions = {}) {
    const { cache: _cache, synced: _synced, ...storeOptions } = options;
    super(storeOptions);
    const mode = options.cache ?? 'sync';
    if (mode !== 'sync') this.lagCache(mode);
    if (options.synced === false) this.setSynced(false);
  }

  override createSync(record: IPAddressRecord): IPAddressRecord {
    this.createCalls++;
    if (!this.isClosed) {
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
    }
    try {
      return super.createSync(record);
    } catch (e) {
      if (e instanceof AlreadyExistsError) this.alreadyExistsAnswers++;
      throw e;
    }
  }

  override deleteSync(name: string): void {
    this.deleteCalls++;
    super.deleteSync(name);
  }

  override getSync(name: string): IPAddressRecord | undefined {
    this.getCalls++;
    return super.getSync(name);
  }

  override close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.held.length = 0;
    super.close();
  }

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
    this.lagMode = typeof delayMs === 'number' ? delayMs : 'manual';
  }

  /** Delivers every queued event, in order. Returns how many. */
  flushCache(): number {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    let n = 0;
    while (this.held.length > 0) {
      const e = this.held.shift()!;
      super.changed(e.add, e.record, e.previous);
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
    return this.held.length;
  }

  /** What cache.hasSynced() answers. */
  setSynced(synced: boolean): void {
    (this.view as OwnTableCache).synced = synced;
  }

  /**
   * Writes a record directly: no validation, no AlreadyExists check (replaces a record of the
   * same name, which the cache reports as an update, i.e. onAdd again).
   */
  inject(name: string, labels: Record<string, string> = {}, parentRef: ParentRef | null = null): IPAddressRecord {
    return this.put({ name, labels, parentRef }, this.authority.get(name), true);
  }

  /** Writes a record into the authority only: the cache does not hear about it. */
  injectAuthorityOnly(name: string, labels: Record<string, string> = {}, parentRef: ParentRef | null = null): IPAddressRecord {
    return this.put({ name, labels, parentRef }, this.authority.get(name), false);
  }

  /** The cache: its own table (see the top of this file). */
  protected override newCache(_authority: NameTable, onWatcherError: WatcherErrorHandler): MemoryCache {
    return new OwnTableCache(onWatcherError);
  }

  protected override changed(add: boolean, record: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    if (this.lagMode === 'sync') {
      super.changed(add, record, previous);
      return;
    }
    this.held.push({ add, record, previous });
    if (typeof this.lagMode === 'number' && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flushCache();
      }, this.lagMode);
    }
  }
}

/**
 * A FaultyMemoryStore that runs code of yours as a create starts, inside the call that made it (a
 * search's, say): `onCreate` once, at the next create (then cleared), and `beforeEachCreate`
 * before every create. Both paths reach it: the promise path's create runs createSync too.
 */
export class HookedStore extends FaultyMemoryStore {
  onCreate: (() => void) | null = null;
  beforeEachCreate: (() => void) | null = null;

  override createSync(record: IPAddressRecord): IPAddressRecord {
    const once = this.onCreate;
    this.onCreate = null;
    if (once !== null) once();
    if (this.beforeEachCreate !== null) this.beforeEachCreate();
    return super.createSync(record);
  }
}
