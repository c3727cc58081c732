// MemoryStore: the embedded Store (adapters/store.ts) — a table of IPAddress records by name
// (name-table.ts) plus a cache view, for a single process and for tests.
//
//   create/delete/get ──► authority (name → record,      the compare-and-set: create fails with
//                         a NameTable: name-table.ts)
//                              │                          AlreadyExistsError if the name exists,
//                              │ events, in store order   delete with NotFoundError
//                              ▼
//                         cache (the same table) ──► watchers (subscribe)
//
// The cache is the authority (upstream's test fixture: cache == API). Every write is checked at
// the door as kube-apiserver checks an IPAddress (validateRecord in adapters/records.ts): a
// malformed record is refused with InvalidRecordError and nothing is stored, so no bad record
// ever reaches a watcher. Several allocators may share one store; that is how several API
// servers share one IPAddress namespace.
//
// The authority answers synchronously, so the store also offers createSync/deleteSync/getSync
// (`store.sync`, adapters/store.ts SyncStoreOps): create() is createSync() wrapped in a promise.
// Allocator uses them, so an allocation on a MemoryStore has no await between choosing an
// address and creating its record. `new MemoryStore({ syncOps: false })` hides them (every call
// then goes through the promises, as with a remote store).
//
// Events reach every watcher in store order, also when a watcher writes from inside its own
// onAdd/onDelete: such a re-entrant write is queued and delivered once the event being
// delivered has reached every watcher (MemoryCache below). A watcher that throws fails neither the
// write nor the other watchers: its error goes to `onWatcherError`.
//
// Fault injection (failing creates, collisions, a lagging or unsynced cache, records that skip
// validation) lives in a test-only subclass under test/, through the protected members below. A
// cache that can fall behind the authority needs a table of its own: the subclass makes one once,
// at construction (newCache), so the product's cache has no second mode to test on every write.
import { AlreadyExistsError, ErrDestroyed, InvalidArgumentError, NotFoundError, rethrowLater } from './errors.ts';
import { isPlainObject, optionsObject, readMember, unboundCall, unboundOr, unboundRead, unreadableInput } from './input.ts';
import { quoteInput } from './quote.ts';
import { isAllocatorLabelSet, isCheckedParentRef, readRecord, storedLabelsOf, unreadableRecord, validateFields } from './records.ts';
import { NameTable } from './name-table.ts';
import {
  checkWatcher,
  hasLabels,
  type IPAddressRecord,
  type NewIPAddressRecord,
  notAName,
  type Store,
  type StoreCache,
  type StoreWatcher,
  type SyncStoreOps,
  uncheckedHandlers,
  wantedLabels,
  type ParentRef,
} from './store.ts';
import { INSPECT, type InspectOptions, inspection } from './inspect.ts';
import { SAME_THREAD } from './same-thread.ts';

const RESOLVED: Promise<void> = Promise.resolve();

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

// A record written is read once, field by field, and its labels and parentRef copied as frozen
// data (the allocators' shared label sets kept as they are; createSync stores labelsFor()'s
// for an allocator's write set): what validateFields checks is then
// what is stored and what watchers get — a getter, even on a frozen object, cannot answer one
// thing to the check and another to the copy. What is not a plain object (an array, a Map, a
// class instance) is kept as given, for the check to refuse: a copy of a Map would be `{}`.

/** The labels a record keeps. */
function ownLabels(labels: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  if (labels === undefined) return NO_LABELS;
  return isAllocatorLabelSet(labels) || !isPlainObject(labels) ? labels : Object.freeze({ ...labels });
}

/** The parentRef a record keeps: left out (undefined) it stays so, for validateFields to refuse. */
function ownParentRef(ref: ParentRef | null | undefined): ParentRef | null | undefined {
  if (ref === undefined || ref === null) return ref;
  if (isCheckedParentRef(ref)) return ref; // an allocator's owner: a frozen plain copy already
  return isPlainObject(ref) ? Object.freeze({ ...ref }) : ref;
}

/**
 * A stored record: own fields `name`, `labels` (frozen) and `parentRef` (a frozen copy, or
 * null), plus the store's write counter, turned into the text fields Kubernetes has
 * (`resourceVersion`, `uid`, and `creationTimestamp` when the store stamps times) only when
 * read: the allocators never read them, so no write pays for strings or clock formatting.
 *
 * Records are shared, as client-go's informer cache objects are: every reader and watcher gets
 * the same object. It is frozen where it is first handed out (handOut), not when it is made:
 * Object.freeze on every write cost as much as the rest of the record path, and the allocators'
 * own writes and watchers never hand a record on. Object.freeze is a call into the runtime even
 * on a frozen object, so a record remembers that it was frozen, and a second hand-out
 * (Allocator.has asks for the same record each time) costs a field read.
 */
class StoredRecord implements IPAddressRecord {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly parentRef: ParentRef | null;
  /**
   * The store's write counter at this version, negated once the record is frozen (freeze): the
   * sign holds that bit so that no record needs a field more for it (8 B each).
   */
  #version: number;
  /** Milliseconds since the epoch, or NaN when the store does not stamp times. */
  readonly #created: number;

  constructor(name: string, labels: Readonly<Record<string, string>>, parentRef: ParentRef | null, version: number, created: number) {
    this.name = name;
    this.labels = labels;
    this.parentRef = parentRef;
    this.#version = version;
    this.#created = created;
  }

  /** Freezes `record`, once (a private field stays writable in a frozen object). */
  static freeze(record: StoredRecord): void {
    if (record.#version < 0) return;
    record.#version = -record.#version;
    Object.freeze(record);
  }

  /** The store's write counter at this version, as decimal text. */
  get resourceVersion(): string {
    return String(Math.abs(this.#version));
  }

  /** Unique per stored version: `memory-<resourceVersion>`. */
  get uid(): string {
    return `memory-${Math.abs(this.#version)}`;
  }

  /**
   * Kubernetes' precision and format: whole seconds, RFC 3339 (`2026-12-02T12:00:00Z`), when
   * the store was made with `timestamps: true`; else undefined.
   */
  get creationTimestamp(): string | undefined {
    const t = this.#created;
    if (Number.isNaN(t)) return undefined;
    return new Date(t - (t % 1000)).toISOString().slice(0, 19) + 'Z';
  }

  /** JSON shows what a Kubernetes object would (the getters above are not own fields). */
  toJSON(): IPAddressRecord {
    const json: { -readonly [K in keyof IPAddressRecord]: IPAddressRecord[K] } = {
      name: this.name,
      labels: this.labels,
      parentRef: this.parentRef,
      resourceVersion: this.resourceVersion,
      uid: this.uid,
    };
    const created = this.creationTimestamp;
    if (created !== undefined) json.creationTimestamp = created;
    return json;
  }
}

// Its getters (uid, resourceVersion, creationTimestamp) are what reconcile compares: no caller
// can replace them for every record.
Object.freeze(StoredRecord.prototype);

/**
 * A record as the store hands it to a caller: frozen (the store's own object, shared by every
 * reader, so a change would change the store). Every record a MemoryStore holds or tells of is a
 * StoredRecord: keep() makes them all.
 */
function handOut<R extends IPAddressRecord | undefined>(record: R): R {
  if (record !== undefined) StoredRecord.freeze(record as unknown as StoredRecord);
  return record;
}

/** `watcher` given frozen records (handOut): what every watcher but an allocator's own gets. */
function frozenRecordsFor(watcher: StoreWatcher): StoreWatcher {
  return {
    onAdd: (record, previous) => {
      handOut(record);
      handOut(previous);
      if (previous === undefined) watcher.onAdd(record);
      else watcher.onAdd(record, previous);
    },
    onDelete: (record) => {
      watcher.onDelete(handOut(record));
    },
  };
}

/**
 * What a watcher's failure is reported with: the error it threw, the watcher, and the event it
 * was given (`add`/`delete` and the record).
 */
export type WatcherErrorHandler = (
  error: unknown,
  watcher: StoreWatcher,
  event: { kind: 'add' | 'delete'; record: IPAddressRecord },
) => void;

export interface MemoryStoreOptions {
  /**
   * Offer the synchronous operations as `store.sync` (default true). false makes allocators go
   * through the promise-returning create/delete/get, as they do with a remote store.
   */
  syncOps?: boolean | undefined;
  /**
   * Called when a watcher's onAdd/onDelete throws. The write that caused the event stays
   * committed and every other watcher still gets the event. Default: the error is rethrown
   * asynchronously (queueMicrotask), so it surfaces as an uncaught exception (Node's
   * 'uncaughtException', Deno's unhandled error) instead of vanishing. A handler that throws
   * has its own error rethrown the same way.
   */
  onWatcherError?: WatcherErrorHandler | undefined;
  /**
   * Stamp each record with its creation time (`creationTimestamp`, whole seconds, as
   * kube-apiserver does). Default false: only `reconcile` reads it (its grace period), and a
   * clock read on every write is a large share of a write's cost; upstream's fake clientset, the
   * store of its allocator tests, does not set it either.
   */
  timestamps?: boolean | undefined;
}

/** One subscribe() call; `active` turns false on unsubscribe (or close) and stays false. */
interface Subscription {
  /** What events are delivered to: an allocator's watcher's handlers (uncheckedHandlers), or frozenRecordsFor(given). */
  readonly watcher: StoreWatcher;
  /** The watcher as subscribed (what onWatcherError is told). */
  readonly given: StoreWatcher;
  active: boolean;
}

/** An event waiting for delivery, with the subscriptions that were current when it happened. */
interface PendingEvent {
  readonly add: boolean;
  readonly record: IPAddressRecord;
  readonly previous: IPAddressRecord | undefined;
  readonly subs: readonly Subscription[];
}

/**
 * The cache view and its event delivery. It reads the authority's own table (cache == authority,
 * as upstream's test fixture): no second copy, no second update per write, and always synced.
 *
 * Store order: an event is delivered to every watcher before the next event is delivered to
 * any. A write made while an event is being delivered (a watcher writing from its onAdd or
 * onDelete, or a watcher subscribing) is queued behind it; the outermost delivery drains the
 * queue before its write returns. Each queued event keeps the watcher list of the moment it
 * happened: a watcher subscribed later does not get it again (its replay already showed the
 * record), one unsubscribed since is skipped.
 *
 * @internal exported for the test-only subclass under test/ (a cache with a table of its own,
 * which can lag), not part of the package.
 */
export class MemoryCache implements StoreCache {
  /** Makes postMessage refuse the cache, saying why (SAME_THREAD); first, so it is read first. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read by structuredClone, not by this code
  private readonly sameThreadOnly = SAME_THREAD;
  /**
   * name → record: the table the cache was made with. The store passes its authority, so the
   * table already holds a write when added/deleted tells the watchers of it.
   */
  protected readonly records: NameTable;
  /**
   * What (un)subscribe and a delivery change, in an object of its own rather than in fields of
   * the cache: a wrapper made with Object.create(cache) reads it from the cache and so changes
   * the cache's own (a subscribe through the wrapper during a delivery gave the wrapper a list of
   * its own, which the store never delivers to).
   *
   * `subs`: the subscribed watchers, in order. A delivery, and each queued event, holds the list
   * as it was: while one runs, (un)subscribe replaces the list instead of changing it. Outside a
   * delivery nothing holds it (the queue is empty), and it is changed in place: a copy at every
   * subscribe made subscribing n watchers O(n²) (a MetaAllocator subscribes one per range).
   * `delivering`: true while an event (or a replay) is being delivered: writes then queue behind it.
   * `closed`: set by close(); here too, so that a frozen cache (Object.freeze) still closes.
   */
  private readonly state: { subs: Subscription[]; delivering: boolean; closed: boolean } = { subs: [], delivering: false, closed: false };
  private readonly queue: PendingEvent[] = [];
  /** Told of a watcher that throws (a declared field, not a parameter property: those come before `thread`). */
  private readonly onWatcherError: WatcherErrorHandler;

  constructor(records: NameTable, onWatcherError: WatcherErrorHandler) {
    this.records = records;
    this.onWatcherError = onWatcherError;
  }

  get(name: string): IPAddressRecord | undefined {
    try {
      if (this.state.closed) throw destroyed();
      if (typeof name !== 'string') throw notAName(name, 'MemoryStore.cache.get');
      return handOut(this.records.get(name));
    } catch (e) {
      throw unboundOr(e, this, MemoryCache, CACHE, 'get'); // the allocators read it as they allocate: checked on failure only
    }
  }

  list(labels?: Readonly<Record<string, string>>): IPAddressRecord[] {
    if (!(this instanceof MemoryCache)) throw unboundCall(this, CACHE, 'list');
    if (this.state.closed) throw destroyed();
    const wanted = labels === undefined ? [] : wantedLabels(labels, 'MemoryStore.cache.list');
    const all = this.records.values();
    const out = wanted.length === 0 ? all : all.filter((r) => hasLabels(r, wanted));
    for (let i = 0; i < out.length; i++) handOut(out[i]);
    return out;
  }

  get size(): number {
    if (!(this instanceof MemoryCache)) throw unboundRead(this, CACHE, 'size');
    if (this.state.closed) throw destroyed();
    return this.records.size;
  }

  /** True: the cache is the authority, so it has nothing to catch up on. */
  hasSynced(): boolean {
    // asked on every allocation: `closed`, false on a live cache, is the one read of the answer,
    // and what is not a live cache (called without it: `this` undefined or another object) is
    // told apart only then
    if (this?.state?.closed === false) return true;
    if (!(this instanceof MemoryCache)) throw unboundCall(this, CACHE, 'hasSynced');
    throw destroyed();
  }

  /**
   * Registers the watcher and replays every cached record to it as onAdd(record), before
   * returning (watcherCount counts it during the replay). Something that is not a watcher (no
   * onAdd/onDelete functions) is refused with InvalidArgumentError. A write the watcher makes
   * during its replay is delivered to it (and to everyone) after the replay. When the replay
   * throws, the watcher is unsubscribed again and the error passes to the caller (its own
   * failure, not another watcher's).
   */
  subscribe(watcher: StoreWatcher): () => void {
    if (!(this instanceof MemoryCache)) throw unboundCall(this, CACHE, 'subscribe');
    if (this.state.closed) throw destroyed();
    checkWatcher(watcher, 'MemoryStore.cache.subscribe');
    const sub: Subscription = { watcher: uncheckedHandlers(watcher) ?? frozenRecordsFor(watcher), given: watcher, active: true };
    const all = this.records.values(); // a copy: the watcher may write while replaying
    const outermost = !this.state.delivering;
    this.state.delivering = true;
    if (outermost) this.state.subs.push(sub);
    else this.state.subs = [...this.state.subs, sub];
    try {
      for (let i = 0; i < all.length; i++) sub.watcher.onAdd(all[i]!);
    } catch (e) {
      this.unsubscribe(sub);
      throw e;
    } finally {
      if (outermost) {
        try {
          if (this.queue.length !== 0) this.drain();
        } finally {
          this.state.delivering = false;
        }
      }
    }
    return () => this.unsubscribe(sub);
  }

  get watcherCount(): number {
    if (!(this instanceof MemoryCache)) throw unboundRead(this, CACHE, 'watcherCount');
    return this.state.subs.length;
  }

  /**
   * The store added `record` (an update when `previous`, the prior record, is set); the table
   * already holds it.
   */
  added(record: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    this.publish(true, record, previous);
  }

  /** The store deleted `record`; the table no longer holds it. */
  deleted(record: IPAddressRecord): void {
    this.publish(false, record, undefined);
  }

  /** Stops every delivery: no watcher hears anything after close. */
  close(): void {
    this.state.closed = true;
    for (const s of this.state.subs) s.active = false;
    this.state.subs = [];
    this.queue.length = 0;
  }

  private unsubscribe(sub: Subscription): void {
    if (!sub.active) return;
    sub.active = false;
    if (this.state.delivering) this.state.subs = this.state.subs.filter((s) => s !== sub);
    else {
      const i = this.state.subs.indexOf(sub);
      if (i >= 0) this.state.subs.splice(i, 1);
    }
  }

  private publish(add: boolean, record: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    if (this.state.delivering) {
      this.queue.push({ add, record, previous, subs: this.state.subs });
      return;
    }
    this.state.delivering = true;
    try {
      this.deliver(add, record, previous, this.state.subs);
      if (this.queue.length !== 0) this.drain();
    } finally {
      this.state.delivering = false;
    }
  }

  /** Delivers the queued events in order, including those queued meanwhile; empties the queue. */
  private drain(): void {
    const q = this.queue;
    try {
      for (let i = 0; i < q.length; i++) {
        const e = q[i]!;
        this.deliver(e.add, e.record, e.previous, e.subs);
      }
    } finally {
      q.length = 0;
    }
  }

  private deliver(add: boolean, record: IPAddressRecord, previous: IPAddressRecord | undefined, subs: readonly Subscription[]): void {
    for (let i = 0; i < subs.length; i++) {
      const s = subs[i]!;
      if (!s.active) continue;
      try {
        if (add) s.watcher.onAdd(record, previous);
        else s.watcher.onDelete(record);
      } catch (e) {
        this.report(e, s.given, add, record);
      }
    }
  }

  private report(error: unknown, watcher: StoreWatcher, add: boolean, record: IPAddressRecord): void {
    try {
      this.onWatcherError(error, watcher, { kind: add ? 'add' : 'delete', record: handOut(record) });
    } catch (e) {
      rethrowLater(e);
    }
  }
}

/** How a message names the cache when one of its methods is called without it (unboundCall). */
const CACHE = 'MemoryStore.cache';

/** What every method answers after close(): the store was closed, so the message says so (not "destroyed"). */
function destroyed(): ErrDestroyed {
  return new ErrDestroyed('MemoryStore', 'has been closed');
}

/**
 * The embedded store: IPAddress records in memory. A create is the compare-and-set by name that
 * keeps an address from being held twice (AlreadyExistsError); `cache` is the view allocators
 * watch, always in sync. Allocators sharing one MemoryStore behave as API servers sharing a
 * cluster.
 */
export class MemoryStore implements Store, SyncStoreOps {
  /** Makes postMessage refuse the store, saying why (SAME_THREAD); first, so it is read first. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read by structuredClone, not by this code
  private readonly sameThreadOnly = SAME_THREAD;
  /** The records (the compare-and-set table). @internal (as NameTable) */
  protected readonly authority: NameTable = new NameTable();
  /** The cache view (over `authority`), and the delivery of events to watchers. @internal (as MemoryCache) */
  protected readonly view: MemoryCache;
  readonly cache: StoreCache;
  /** Whether `sync` offers the synchronous operations (false with `syncOps: false`). */
  private readonly syncOffered: boolean;
  /**
   * What changes after construction, in one object of its own rather than in fields of the
   * store: a wrapper made with Object.create(store) reads it from the store and so writes the
   * store's own (a field written through the wrapper became the wrapper's, which then counted on
   * its own and gave a uid the store gave again), and a frozen store (Object.freeze) still
   * writes it. `version` counts writes: the resourceVersion of the next record is `version + 1`.
   */
  private readonly state = { version: 0, closed: false };
  private readonly timestamps: boolean;

  /** An empty store. Every record is validated at the door (InvalidRecordError). */
  constructor(options?: MemoryStoreOptions) {
    const opts = optionsObject(options, 'MemoryStore', { syncOps: true, onWatcherError: true, timestamps: true });
    if (opts.syncOps !== undefined && typeof opts.syncOps !== 'boolean') {
      throw new InvalidArgumentError(`options.syncOps must be a boolean, got ${quoteInput(opts.syncOps)}`);
    }
    if (opts.onWatcherError !== undefined && typeof opts.onWatcherError !== 'function') {
      throw new InvalidArgumentError(`options.onWatcherError must be a function, got ${quoteInput(opts.onWatcherError)}`);
    }
    this.view = this.newCache(this.authority, opts.onWatcherError ?? rethrowLater);
    this.cache = this.view;
    this.syncOffered = opts.syncOps !== false;
    if (opts.timestamps !== undefined && typeof opts.timestamps !== 'boolean') {
      throw new InvalidArgumentError(`options.timestamps must be a boolean, got ${quoteInput(opts.timestamps)}`);
    }
    this.timestamps = opts.timestamps === true;
  }

  /**
   * This store's synchronous operations, or null with `syncOps: false`: the object it is read
   * from, so that the allocators call the createSync, deleteSync and getSync of a subclass, or of
   * a wrapper made with Object.create(store), not the store's own past them.
   */
  get sync(): SyncStoreOps | null {
    return this.syncOffered ? this : null;
  }

  /** Assigned (Object.assign(store, { sync })), it becomes this object's own, as when it was a field. */
  set sync(ops: SyncStoreOps | null) {
    Object.defineProperty(this, 'sync', { value: ops, writable: true, enumerable: true, configurable: true });
  }

  create(this: object, record: NewIPAddressRecord): Promise<IPAddressRecord>;
  create(this: MemoryStore, record: NewIPAddressRecord): Promise<IPAddressRecord> {
    try {
      return Promise.resolve(this.createSync(record));
    } catch (e) {
      return Promise.reject(orUnbound(e, this, 'create'));
    }
  }

  delete(this: object, name: string): Promise<void>;
  delete(this: MemoryStore, name: string): Promise<void> {
    try {
      if (typeof name !== 'string') throw notAName(name, 'MemoryStore.delete');
      this.deleteSync(name);
      return RESOLVED;
    } catch (e) {
      return Promise.reject(orUnbound(e, this, 'delete'));
    }
  }

  get(this: object, name: string): Promise<IPAddressRecord | undefined>;
  get(this: MemoryStore, name: string): Promise<IPAddressRecord | undefined> {
    try {
      if (typeof name !== 'string') throw notAName(name, 'MemoryStore.get');
      return Promise.resolve(this.getSync(name));
    } catch (e) {
      return Promise.reject(orUnbound(e, this, 'get'));
    }
  }

  /**
   * create(), answered synchronously: the stored record (the store's own copy, frozen), or throws
   * AlreadyExistsError (the name exists), InvalidRecordError (the record is malformed; see
   * validateRecord in adapters/records.ts) or ErrDestroyed (after close). Watchers are told as
   * SyncStoreOps describes.
   */
  createSync(this: object, record: NewIPAddressRecord): IPAddressRecord;
  createSync(this: MemoryStore, record: NewIPAddressRecord): IPAddressRecord {
    try {
      if (this.state.closed) throw destroyed();
      const given = readRecord(record); // refused: not a record, or one that throws when read
      const name = given.name as string;
      // An allocator's own write (its write-only label set, by identity: writeLabelsFor) is
      // answered to that allocator, which drops the answer: left unfrozen, so an allocation does
      // no more than store. The record is frozen when it is handed out (handOut).
      const allocators = storedLabelsOf(given.labels);
      let field = 'metadata.labels';
      let labels: Readonly<Record<string, string>>;
      let ref: ParentRef | null | undefined;
      try {
        labels = allocators ?? ownLabels(given.labels as Readonly<Record<string, string>> | undefined);
        field = 'spec.parentRef';
        ref = ownParentRef(given.parentRef as ParentRef | null | undefined);
      } catch (e) {
        throw unreadableRecord(name, field, e); // copying a revoked Proxy, a getter that throws
      }
      validateFields(name, labels, ref);
      const previous = this.authority.get(name);
      if (previous !== undefined) throw new AlreadyExistsError(name);
      const stored = this.keep(name, labels, ref as ParentRef | null, undefined, true); // not undefined: validateFields refuses it
      return allocators === undefined ? handOut(stored) : stored;
    } catch (e) {
      throw orUnbound(e, this, 'createSync');
    }
  }

  /**
   * delete(), answered synchronously: throws NotFoundError when absent, InvalidArgumentError for
   * a name that is not a string, ErrDestroyed after close.
   */
  deleteSync(this: object, name: string): void;
  deleteSync(this: MemoryStore, name: string): void {
    try {
      if (this.state.closed) throw destroyed();
      if (typeof name !== 'string') throw notAName(name, 'MemoryStore.deleteSync');
      const r = this.authority.delete(name);
      if (r === undefined) throw new NotFoundError(name);
      this.changed(false, r, undefined);
    } catch (e) {
      throw orUnbound(e, this, 'deleteSync');
    }
  }

  /** get(), answered synchronously: the authority's record (frozen), or undefined. */
  getSync(this: object, name: string): IPAddressRecord | undefined;
  getSync(this: MemoryStore, name: string): IPAddressRecord | undefined {
    try {
      if (this.state.closed) throw destroyed();
      if (typeof name !== 'string') throw notAName(name, 'MemoryStore.getSync');
      return handOut(this.authority.get(name));
    } catch (e) {
      throw orUnbound(e, this, 'getSync');
    }
  }

  /** Number of watchers subscribed to the cache. */
  get watcherCount(): number {
    if (!(this instanceof MemoryStore)) throw unboundRead(this, 'MemoryStore', 'watcherCount');
    if (this.state.closed) throw destroyed();
    return this.view.watcherCount;
  }

  /** Number of records in the authority. */
  get size(): number {
    if (!(this instanceof MemoryStore)) throw unboundRead(this, 'MemoryStore', 'size');
    if (this.state.closed) throw destroyed();
    return this.authority.size;
  }

  /** Every record in the authority (a new array, in the order they were created; the records frozen). */
  records(this: object): IPAddressRecord[];
  records(this: MemoryStore): IPAddressRecord[] {
    checkThis(this, 'records');
    if (this.state.closed) throw destroyed();
    const all = this.authority.values();
    for (let i = 0; i < all.length; i++) handOut(all[i]);
    return all;
  }

  /**
   * Re-derives the record count of the name table from its slots and checks its invariants (see
   * NameTable); throws an Error naming the first one broken. For tests.
   */
  validate(this: object): { records: number; slots: number };
  validate(this: MemoryStore): { records: number; slots: number } {
    checkThis(this, 'validate');
    if (this.state.closed) throw destroyed();
    return this.authority.validate();
  }

  /**
   * Ends the store: watchers hear nothing more, and every method (of the store and its cache)
   * then throws, or rejects with, ErrDestroyed. Idempotent.
   */
  close(this: object): void;
  close(this: MemoryStore): void {
    checkThis(this, 'close');
    // `state` is the store's own, read through an object made with Object.create(store) too: so
    // the store itself is closed, not only its cache
    const state = this.state as MemoryStore['state'] | undefined;
    if (state === undefined) throw unboundCall(this, 'MemoryStore', 'close'); // Object.create(MemoryStore.prototype): no store under it
    if (state.closed) return;
    state.closed = true;
    this.view.close();
  }

  [Symbol.dispose](this: object): void;
  [Symbol.dispose](this: MemoryStore): void {
    checkThis(this, '[Symbol.dispose]');
    this.close();
  }

  /** What console.log and util.inspect show, in Node and Deno: its record count and watchers, or that it is closed (inspection). */
  [INSPECT](this: object, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string;
  [INSPECT](this: MemoryStore, depth: number, options?: InspectOptions, inspect?: (value: unknown, options?: object) => string): string {
    const live = () => (this.state.closed ? { closed: true } : { size: this.authority.size, watcherCount: this.view.watcherCount });
    return inspection(this, MemoryStore, 'MemoryStore', () => ({}), live, depth, options, inspect);
  }

  /** True once close() was called. */
  protected get isClosed(): boolean {
    // read with another object, `this.state` is undefined: say so as the public methods do
    if (!(this instanceof MemoryStore)) throw unboundRead(this, 'MemoryStore', 'isClosed');
    return this.state.closed;
  }

  /**
   * Stores a new version of `record.name` (replacing any record of that name, which watchers
   * see as an update) without validation; `previous` is the authority's get(name). Tells the
   * watchers through changed() when `announce`. The labels and parentRef are copied first (the
   * allocators' shared label sets are kept as they are). The allocators' event handlers take a
   * MemoryStore's records as they are, without the checks a cache of your own gets: a subclass that
   * puts a record no create would take (a name that is no text, labels that cannot be read) has
   * the allocators read what it wrote.
   */
  protected put(record: IPAddressRecord, previous: IPAddressRecord | undefined, announce: boolean): IPAddressRecord {
    try {
      return this.keep(record.name, ownLabels(record.labels), ownParentRef(record.parentRef) ?? null, previous, announce);
    } catch (e) {
      throw orUnbound(e, this, 'put');
    }
  }

  /** put() of fields the store owns (ownLabels, ownParentRef): stored as they are. */
  private keep(
    name: string,
    labels: Readonly<Record<string, string>>,
    ref: ParentRef | null,
    previous: IPAddressRecord | undefined,
    announce: boolean,
  ): IPAddressRecord {
    const stored = new StoredRecord(name, labels, ref, ++this.state.version, this.timestamps ? Date.now() : Number.NaN);
    this.authority.set(stored.name, stored);
    if (announce) this.changed(true, stored, previous);
    return stored;
  }

  /**
   * The cache, made once by the constructor: a view of `authority` itself. A test double
   * overrides this to give its cache a table of its own, which can fall behind the authority;
   * being called from the constructor, an override must not read the subclass's own fields (they
   * are not set yet). @internal (names MemoryCache and NameTable)
   */
  protected newCache(authority: NameTable, onWatcherError: WatcherErrorHandler): MemoryCache {
    return new MemoryCache(authority, onWatcherError);
  }

  /** The authority changed: tell the cache (a test double may hold the event back instead). */
  protected changed(add: boolean, record: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    // on the allocation path (every create and delete): checked on failure only, `view` not found
    const view = (this as MemoryStore | undefined)?.view;
    if (view === undefined) throw unboundCall(this, 'MemoryStore', 'changed');
    if (add) view.added(record, previous);
    else view.deleted(record);
  }
}

/**
 * What a method of MemoryStore on the allocation path (createSync, deleteSync, getSync and the
 * promise-returning calls made of them) throws or rejects with once it failed: unboundOr's answer
 * (called without a MemoryStore). Checked only on failure, as Allocator's and Range's are: a call
 * on its store pays nothing for it.
 */
function orUnbound(error: unknown, self: unknown, method: string): unknown {
  return unboundOr(error, self, MemoryStore, 'MemoryStore', method);
}

/** The check of the methods off the allocation path, made first (unboundCall): simpler, and not timed. */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof MemoryStore)) throw unboundCall(self, 'MemoryStore', method);
}

/**
 * The `store` option of the allocators: a new MemoryStore of their own when omitted, else the
 * given object after checking it has a Store's shape (create/delete/get functions and a cache
 * with get/list/hasSynced/subscribe), so a wrong value fails at construction with
 * InvalidArgumentError instead of a TypeError deep inside a later call.
 * @internal
 */
export function storeOption(store: unknown): Store {
  if (store === undefined) return new MemoryStore();
  const s = store as Partial<Store> | null;
  let missing: string[];
  try {
    missing = typeof s === 'object' && s !== null ? missingStoreMembers(s) : [];
  } catch (e) {
    throw unreadableInput('options.store', e); // a revoked Proxy, a member's getter that throws
  }
  if (typeof s !== 'object' || s === null || missing.length > 0) {
    const which = missing.length > 0 ? `; it lacks ${missing.join(', ')}` : '';
    throw new InvalidArgumentError(
      `options.store must be a Store (create, delete, get and a cache with get, list, hasSynced, subscribe)${which}: got ${quoteInput(store)}`,
    );
  }
  checkSyncOps(readMember(s, 'sync', 'options.store'));
  checkCacheReads(s.cache as StoreCache);
  return store as Store;
}

/**
 * The cache's reads answer at once, as an informer's lister and HasSynced do: an `async` get,
 * list or hasSynced answers a promise, which the allocators would read as a record held (every
 * address taken: ErrFull on a free range), a listing, or "synced" (allocations before the cache
 * has synced), with no error. Refused here; subscribe's promise is refused where it is called.
 */
function checkCacheReads(cache: StoreCache): void {
  for (const name of ['get', 'list', 'hasSynced'] as const) {
    if (isAsyncFunction(cache[name], `cache.${name}`)) {
      throw new InvalidArgumentError(
        `options.store.cache.${name} is an async function: a cache answers from memory at once, as an informer's lister does (an async read belongs in the store's get)`,
      );
    }
  }
}

/** The members a Store must have as functions that `s` lacks, named as a caller writes them (`cache.get`). */
function missingStoreMembers(s: Partial<Store>): string[] {
  const missing: string[] = (['create', 'delete', 'get'] as const).filter((m) => typeof s[m] !== 'function');
  const cache = s.cache as Partial<StoreCache> | null | undefined;
  if (typeof cache !== 'object' || cache === null) return [...missing, 'cache'];
  for (const m of ['get', 'list', 'hasSynced', 'subscribe'] as const) if (typeof cache[m] !== 'function') missing.push(`cache.${m}`);
  return missing;
}

/** Whether `op` is an async function, read without letting a Proxy's trap throw out of it (`name`: its path under options.store). */
function isAsyncFunction(op: object, name: string): boolean {
  try {
    return op.constructor?.name === 'AsyncFunction';
  } catch (e) {
    throw unreadableInput(`options.store.${name}.constructor`, e);
  }
}

/**
 * `store.sync`: null/absent, or three synchronous functions. An `async` one answers with a
 * promise the allocator would read as success (a create refused later would hand out an address
 * twice), so it is refused here.
 */
function checkSyncOps(sync: unknown): void {
  if (sync === undefined || sync === null) return;
  if (typeof sync !== 'object' && typeof sync !== 'function') {
    throw new InvalidArgumentError(
      `options.store.sync must be null or an object with createSync, deleteSync and getSync, got ${quoteInput(sync)}`,
    );
  }
  const ops = sync as Partial<Record<keyof SyncStoreOps, unknown>>;
  for (const name of ['createSync', 'deleteSync', 'getSync'] as const) {
    const op = readMember(ops, name, 'options.store.sync');
    if (typeof op !== 'function') {
      throw new InvalidArgumentError(`options.store.sync must be null or have ${name}, a function; got ${quoteInput(op)}`);
    }
    if (isAsyncFunction(op, `sync.${name}`)) {
      throw new InvalidArgumentError(
        `options.store.sync.${name} is an async function: sync holds operations that answer at once (leave sync null and the allocators use create, delete and get)`,
      );
    }
  }
}
