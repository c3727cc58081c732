// The Store: where IPAddress records live, and the cache that watches them.
//
// Modelled on Kubernetes: the authority (API server / etcd) answers create/delete/get, and a
// cache (an informer) holds a possibly-lagging copy, tells watchers about changes, and says when
// it has synced. An allocator never trusts the cache for uniqueness: creating the record whose
// name is the address is the lock; the cache only steers the search.
//
// Implementations: MemoryStore (adapters/memory-store.ts, the embedded default) and
// KubernetesStore (adapters/kubernetes/, IPAddress objects through @kubernetes/client-node).
// An etcd store would map create to a transaction `if version(key) == 0 then put`, delete to a
// delete, and the cache to a watch from a revision.
import { InvalidArgumentError } from './errors.ts';
import { checkIPFamily, isPlainObject, readMember, unreadableInput } from './input.ts';
import { formatCount, quoteInput, quoteText } from './quote.ts';

export const LABEL_IP_FAMILY = 'ipaddress.kubernetes.io/ip-family';
export const LABEL_MANAGED_BY = 'ipaddress.kubernetes.io/managed-by';
/** Upstream `ControllerName`: the managed-by value of every record an allocator writes. */
export const CONTROLLER_NAME = 'ipallocator.k8s.io';
/**
 * Upstream's grace before an IPAddress without its Service is deleted (repairip.go), reconcile()'s
 * default. Here, beside the records' other constants, rather than in reconcile.ts: the command
 * line's help states it without loading the WebAssembly core.
 */
export const RECONCILE_GRACE_MS = 60_000;

/** The object an IPAddress belongs to (upstream `ParentReference`; core group is ""). */
export interface ParentRef {
  group?: string | undefined;
  resource: string;
  namespace?: string | undefined;
  name: string;
}

/** One IPAddress object. `name` is the address in canonical text. */
export interface IPAddressRecord {
  readonly name: string;
  /** `{}` for a record created without labels. */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * null when created through allocate(ip)/allocateNext() without an owner. kube-apiserver
   * requires a parentRef (`spec.parentRef: Required value`): null is no owner, which upstream's
   * owner-less entry points write (a nil one) and an embedded store takes; left out, a store
   * refuses the record (InvalidRecordError), as kube-apiserver does.
   */
  readonly parentRef: Readonly<ParentRef> | null;
  /** Set by the store. */
  readonly resourceVersion?: string | undefined;
  readonly uid?: string | undefined;
  readonly creationTimestamp?: string | undefined;
}

/**
 * A record as MemoryStore's create and createSync take it: labels may be left out (stored as
 * none), as Kubernetes takes an object without labels; the parentRef may not (null for no owner:
 * see IPAddressRecord). The Store interface's create takes an IPAddressRecord, labels included:
 * what the allocators write, and all a store of your own is given by them.
 */
export type NewIPAddressRecord = Omit<IPAddressRecord, 'labels'> & { readonly labels?: Readonly<Record<string, string>> | undefined };

/**
 * Receives cache changes (client-go's ResourceEventHandler, folded into two calls).
 * - `onAdd(record, previous)`: a name the cache did not hold (`previous` undefined), or a new
 *   version of one it held (`previous` = the version the watcher was last given). Stores must pass
 *   `previous` for updates: watchers keep O(1) counts from it.
 * - `onDelete(record)`: the name left the cache; `record` is the version last given to watchers.
 *
 * Order: every watcher is given the events in store order — the order the writes happened —
 * and an event reaches every watcher before the next event reaches any. This holds when a
 * watcher itself writes from inside onAdd/onDelete (a re-entrant write): its event waits until
 * the current one has reached every watcher. A watcher must therefore not expect to have seen
 * the event of its own re-entrant write when that write returns (see SyncStoreOps for when it
 * arrives).
 *
 * Failures: a watcher should not throw. If it does, the store catches it, still delivers the
 * event to every other watcher, keeps the write committed (the writer is not told), and reports
 * the error its own way (MemoryStore: the `onWatcherError` option).
 */
export interface StoreWatcher {
  onAdd(record: IPAddressRecord, previous?: IPAddressRecord): void;
  onDelete(record: IPAddressRecord): void;
  /**
   * Optional: the cache re-listed (watch lost, 410 Gone) and has delivered the differences; it
   * now holds a complete copy again. Watchers that keep state the cache never reported (the
   * allocator's own just-created records) reconcile it here.
   */
  onResync?(): void;
}

/** The cache (informer) view: synchronous, possibly behind the authority. */
export interface StoreCache {
  /** The cached record, or undefined when absent (null, from a cache in plain JavaScript, is taken the same). */
  get(this: object, name: string): IPAddressRecord | undefined;
  /**
   * Records whose labels include every given label (all records when none given). MemoryStore
   * and KubernetesStore refuse labels that are not an object of strings, or whose reading throws,
   * with InvalidArgumentError.
   */
  list(this: object, labels?: Readonly<Record<string, string>>): IPAddressRecord[];
  /** Optional: the number of records in the cache (the allocators do not read it). */
  readonly size?: number;
  /** True once the cache holds a complete copy (informer HasSynced). */
  hasSynced(this: object): boolean;
  /**
   * Subscribes to changes. Like an informer handler added late, the watcher first receives
   * `onAdd` for every record already in the cache (synchronously, before this returns), then
   * every change in order (a write made during the replay arrives after it). A replay that
   * throws leaves the watcher unsubscribed and the error goes to the caller. After a re-list (watch lost, 410 Gone) the store delivers the
   * differences as adds and deletes, so a watcher's view always converges to the cache.
   * Returns the function that unsubscribes. Each call is a subscription of its own: a watcher
   * subscribed twice receives every change twice.
   */
  subscribe(this: object, watcher: StoreWatcher): () => void;
}

/**
 * Optional synchronous operations of a store whose authority lives in this process (MemoryStore).
 * Same contract as Store's create/delete/get, but the answer is the return value or the thrown
 * error. The allocators use them when `store.sync` is set: an allocation is then one synchronous
 * step, with no await between choosing an address and creating its record.
 *
 * When watchers see the event of a createSync/deleteSync (with a cache that follows the
 * authority; a lagging cache delivers later):
 * - called from outside any watcher callback: every watcher has been given the event — and the
 *   events of every write the watchers made meanwhile, in order — before the call returns;
 * - called from inside a watcher's onAdd/onDelete (re-entrant): the call returns first; its event
 *   is delivered after the event being delivered has reached every watcher, and before the
 *   outermost createSync/deleteSync (the one that started the delivery) returns.
 * So a caller of createSync may already have been given, before createSync returns, the event of
 * its own record and then a delete of that record made by another watcher.
 */
export interface SyncStoreOps {
  /** Creates the record if its name is free; throws AlreadyExistsError (or any store error) otherwise. */
  createSync(this: object, record: IPAddressRecord): IPAddressRecord;
  /** Deletes by name; throws NotFoundError when absent. */
  deleteSync(this: object, name: string): void;
  /** Reads from the authority: the record, or undefined (or null) when absent. */
  getSync(this: object, name: string): IPAddressRecord | null | undefined;
}

export interface Store {
  /**
   * Optional: the same store's synchronous operations (see SyncStoreOps), or null/absent when it
   * has none. They must have exactly the effect of create/delete/get.
   */
  readonly sync?: SyncStoreOps | null | undefined;
  /**
   * Creates the record if its name is free. Rejects with AlreadyExistsError otherwise; any other
   * error passes through. A store refuses a malformed record as kube-apiserver does (HTTP 422:
   * the name an address in canonical form, labels of strings, parentRef of upstream's shape —
   * validateRecord in adapters/records.ts; MemoryStore: InvalidRecordError) and stores nothing.
   */
  create(this: object, record: IPAddressRecord): Promise<IPAddressRecord>;
  /** Deletes by name. Rejects with NotFoundError when absent; any other error passes through. */
  delete(this: object, name: string): Promise<void>;
  /** Reads from the authority (not the cache): the record, or undefined (or null) when absent. */
  get(this: object, name: string): Promise<IPAddressRecord | null | undefined>;
  readonly cache: StoreCache;
  /**
   * Stops watches and timers. Afterwards every method of the store and its cache throws, or
   * rejects with, ErrDestroyed, and watchers hear nothing more; closing twice does nothing.
   */
  close(this: object): void;
}

// ── the allocators' side ─────────────────────────────────────────────────────────────────────
// What the allocators use to call a store and check its answers. Each is @internal: the build
// (stripInternal) leaves it out of the shipped store.d.ts, where a store's author, sent there by
// go-to-definition on Store, finds the contract, the label constants and allocatorLabels alone.

/**
 * A store without synchronous operations whose creates keep colliding (broken, or far ahead of its
 * cache) keeps an allocateNext searching — on an IPv6 range, for good — in a chain of promises
 * that would starve timers and I/O. Both allocators let the event loop turn (nextTurn) every this
 * many collisions of one call, so a timer can end the call with destroy(); the swap between them
 * keeps this. Why not more often: each turn waits for a timer (at least 1 ms) where 4,096
 * collisions of a store answering from memory cost tens of ms (a MemoryStore's rejected create
 * ≈ 7–17 µs, its AlreadyExistsError's stack trace included), so the search loses a few percent
 * and a timer of yours waits that long.
 * @internal
 */
export const COLLISIONS_PER_TURN = 4096;

/**
 * The key of an allocator's internal method that ends its running searches (allocateNext's walk
 * over colliding creates) at their next collision, each rejecting with ErrDestroyed: what a
 * DualStackAllocator's destroy() calls on the allocators it owns while its calls are in flight,
 * since it destroys them only once those calls end, and a search over a store whose creates keep
 * colliding would never end (on an IPv6 range). It is for allocators about to be destroyed: from
 * then on every search stops at its first collision, and one that finds no address answers
 * ErrDestroyed rather than ErrFull, until destroy(). Not exported from the
 * package: an allocator of your own without it keeps its searches. Checked only on a collision,
 * so the allocation path pays nothing more.
 * @internal
 */
export const STOP_SEARCHES: unique symbol = Symbol('ipallocator.stopSearches');

/**
 * The key of an allocator's internal method `(ip) => void` that throws what its allocate(ip)
 * would throw before its store call (ErrNotReady, ErrNotInRange or ErrMismatchedNetwork,
 * InvalidAddressError), counting it as allocate counts it, and does nothing else: what a
 * DualStackAllocator asks of both allocators before creating either record, so that an address
 * one of them refuses leaves no create and delete of the other's record behind. It checks
 * nothing when the object's allocate is not its class's own (a subclass or a wrapper that
 * overrides allocate decides for itself). Not exported from the package: an allocator of your
 * own without it is called as before.
 * @internal
 */
export const CHECK_ALLOCATE: unique symbol = Symbol('ipallocator.checkAllocate');

/**
 * The key of an Allocator's internal method `(owner, freeOnly) => string | NoAddress`: its
 * tryAllocateNextNow() saying why there is no address (not ready, or full) where that answers
 * null, for a MetaAllocator, which answers ErrNotReady or ErrFull by it. Under a symbol, so that
 * no member of a subclass of yours can take its name.
 * @internal
 */
export const ALLOCATE_NEXT_NOW: unique symbol = Symbol('ipallocator.allocateNextNow');

/**
 * How an allocator's checkAllocate(ip, how) checks: `count`, an ErrNotInRange counted as an
 * allocation error, as allocate counts it; `refuseInside`, a call from inside its strategy or
 * random source refused first, as allocate refuses it. @internal
 */
export interface AllocateCheck {
  readonly count: boolean;
  readonly refuseInside: boolean;
}

/** The dry run's allocate: nothing counted, nothing refused but what the call itself would refuse. @internal */
export const AS_DRY_RUN: AllocateCheck = Object.freeze({ count: false, refuseInside: false });
/** The real allocate's own check (CHECK_ALLOCATE): counted and refused as allocate does. @internal */
export const AS_ALLOCATE: AllocateCheck = Object.freeze({ count: true, refuseInside: true });

/**
 * The key of an allocator's internal method `() => void` that throws what its allocateNext()
 * would throw before its first store call (ErrDestroyed, ErrNotReady) and does nothing else: what
 * a DualStackAllocator asks of both allocators before creating either record, as CHECK_ALLOCATE.
 * A full range is not checked (another caller may free an address meanwhile: allocateNext
 * decides). It checks nothing when the object's allocateNext is not its class's own. Not exported
 * from the package: an allocator of your own without it is called as before.
 * @internal
 */
export const CHECK_ALLOCATE_NEXT: unique symbol = Symbol('ipallocator.checkAllocateNext');

/**
 * The key of a store's internal method `(labels) => string | undefined`: the filter of its cache
 * (a label selector's text) when the cache leaves out a record with these labels, else undefined
 * (a KubernetesStore narrowed by `family` or `labelSelector` leaves out the rest). An allocator
 * refuses, when made, a store whose cache would leave out the records it writes: it would never
 * hear of its own addresses (used() stuck at 0, each one tried again at the server). Not exported
 * from the package: a store of your own without it is taken as caching every record.
 * @internal
 */
export const CACHE_LEAVES_OUT: unique symbol = Symbol('ipallocator.cacheLeavesOut');

/**
 * What a stopped search's ErrDestroyed says after the allocator's name: it is not destroyed yet
 * (has, used, release still answer), and stays so while a call of the pair's does not end (a
 * store that never answers).
 * @internal
 */
export const BEING_DESTROYED =
  'is being destroyed (the DualStackAllocator that owns it was destroyed, and destroys it once its calls in flight end)';

/** Resolves after timers and I/O due now have run (a setTimeout 0). @internal */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * What a synchronous operation of `store.sync` answered, refused when it is a promise: a store in
 * plain JavaScript whose "synchronous" operations answer later (a plain function returning a
 * promise passes the check made at construction). Read as an answer, such a create would count as
 * made while it may fail, and the address would be handed out with no record to hold it. The
 * promise's own outcome is left to it (handled, so it is not reported as unhandled).
 * @internal
 */
export function syncAnswer<T>(answer: T, op: 'createSync' | 'deleteSync' | 'getSync'): T {
  if (typeof answer === 'object' && answer !== null && typeof (answer as { then?: unknown }).then === 'function') {
    leaveToItself(answer);
    // what the promise stands for may still happen: a record it creates outlives the refusal
    const after =
      op === 'createSync'
        ? '; a record it may still create is left in the store, where reconcile() reports it as a leak once its owner is not one you know'
        : '';
    throw new InvalidArgumentError(
      `store.sync.${op} answered with a promise: sync holds operations that answer at once (leave sync null and the allocators use create, delete and get)${after}`,
    );
  }
  return answer;
}

/**
 * What a store's cache.hasSynced() answered (or `what` else's: a ServiceCIDR source's), refused
 * unless true or false: a promise (a plain function answering later) is truthy, and the allocator
 * would allocate before the cache synced.
 * @internal
 */
export function syncedAnswer(answer: unknown, what = "the store's cache.hasSynced()"): boolean {
  if (answer === true || answer === false) return answer;
  throw new InvalidArgumentError(
    `${what} must answer true or false at once, as an informer's HasSynced does; it answered ${quoteInput(answer)}`,
  );
}

/**
 * Whether `cache` holds a record named `name`: its get answered one (recordAnswer: null or
 * undefined is none, anything else that is no record InvalidArgumentError).
 * @internal
 */
export function cacheHolds(cache: StoreCache, name: string): boolean {
  return recordAnswer(cache.get(name), 'cache.get', name) !== null;
}

/** Which read of a store answered for a name: its get (awaited), its sync.getSync, its cache's get. @internal */
export type RecordRead = 'get' | 'sync.getSync' | 'cache.get';

/** Shared answers of storeHolds on a store with synchronous operations. */
const HOLDS: Promise<boolean> = Promise.resolve(true);
const HOLDS_NOT: Promise<boolean> = Promise.resolve(false);

/**
 * has()'s question to `store`: whether it holds the record `name`. A store with synchronous
 * operations is asked through getSync and answered with a shared, settled promise (no promise
 * made per call); any other through get, whose answer may come without a promise (taken as
 * `await` takes it). The store's errors throw or reject as they came. @internal
 */
export function storeHolds(store: Store, name: string): Promise<boolean> {
  const sync = store.sync;
  if (sync != null) return recordAnswer(syncAnswer(sync.getSync(name), 'getSync'), 'sync.getSync', name) !== null ? HOLDS : HOLDS_NOT;
  return Promise.resolve(store.get(name)).then((r) => recordAnswer(r, 'get', name) !== null);
}

/**
 * What a store's `read` answered for the record named `name`: the record (an object with a
 * string name, as a watcher's event must carry: checkEventRecord), or null for none (undefined
 * or null). Anything else — false, 0, '', text, a number, an object without a string name, a
 * promise from a cache's get that answers later — is InvalidArgumentError quoting it: a store in
 * plain JavaScript breaking its contract, which `!= null` would read as a record held and
 * `typeof === 'object'` as none. Every reader of a get's answer takes it here, so one answer
 * means one thing to all of them; each handles the error where it handles a get that throws.
 * @internal
 */
export function recordAnswer(answer: unknown, read: RecordRead, name: string): IPAddressRecord | null {
  if (answer === undefined || answer === null) return null;
  if (typeof answer === 'object') {
    let given: unknown;
    try {
      given = (answer as { name?: unknown }).name;
    } catch (e) {
      // a revoked Proxy, a getter that throws: said as a record that cannot be read
      throw unreadableInput(`the store's ${read}(${quoteText(name)}) answered a record whose name`, e);
    }
    if (typeof given === 'string') return answer as IPAddressRecord;
  }
  throw notARecordAnswer(answer, read, name);
}

function notARecordAnswer(answer: unknown, read: RecordRead, name: string): InvalidArgumentError {
  leaveToItself(answer);
  const when = read === 'cache.get' ? " at once, from memory, as an informer's lister does" : ' for none';
  return new InvalidArgumentError(
    `the store's ${read}(${quoteText(name)}) must answer the record (an object with a string name) or undefined${when}; it answered ${quoteInput(answer)}`,
  );
}

/**
 * What the cache's list(labels) answered: an array, or another iterable object (a Set, a
 * generator) as an array; anything else (a promise from a list that answers later, null) is
 * InvalidArgumentError saying so, where iterating it failed with a TypeError.
 * @internal
 */
export function cacheList(cache: StoreCache, labels?: Readonly<Record<string, string>>): readonly IPAddressRecord[] {
  const answer: unknown = labels === undefined ? cache.list() : cache.list(labels);
  let list: readonly unknown[] | null = null;
  if (Array.isArray(answer)) list = answer;
  else if (typeof answer === 'object' && answer !== null && typeof (answer as { then?: unknown }).then !== 'function') {
    if (typeof (answer as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function') list = Array.from(answer as Iterable<unknown>);
  }
  if (list === null) throw notAList(answer);
  // every reader takes each record's name: a list that holds something else is said here, not met
  // as a TypeError inside an allocator
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (typeof r !== 'object' || r === null || typeof readMember(r, 'name', `the store's cache.list()'s record ${i + 1}`) !== 'string') {
      throw new InvalidArgumentError(
        `the store's cache.list() answered a list whose record ${formatCount(i + 1)} (of ${formatCount(list.length)}) is ${quoteInput(r)}: a record must be an object with a string name`,
      );
    }
  }
  return list as IPAddressRecord[];
}

function notAList(answer: unknown): InvalidArgumentError {
  leaveToItself(answer);
  return new InvalidArgumentError(
    `the store's cache.list() must answer an array of records at once, from memory, as an informer's lister does; it answered ${quoteInput(answer)}`,
  );
}

/** A refused answer that is a promise: handled, so its rejection is not reported as unhandled — its outcome is not ours to report. */
function leaveToItself(answer: unknown): void {
  if (typeof answer === 'object' && answer !== null && typeof (answer as { then?: unknown }).then === 'function') {
    (answer as PromiseLike<unknown>).then(undefined, () => {});
  }
}

/**
 * Told the error of the store's delete that a release ignores (see IPAllocator.release). What it
 * throws rejects the release; so does the promise it returns, which the release awaits (an async
 * handler that fails is not left as an unhandled rejection).
 */
export type DeleteErrorHandler = (error: unknown) => unknown;

/** A release's `onDeleteError`: undefined or a function, else InvalidArgumentError. @internal */
export function deleteErrorHandler(given: unknown): DeleteErrorHandler | undefined {
  if (given === undefined || typeof given === 'function') return given as DeleteErrorHandler | undefined;
  throw new InvalidArgumentError(`release's onDeleteError must be a function, got ${quoteInput(given)}`);
}

/**
 * Tells a release's `onDeleteError` (when given) the delete's error it ignores, and answers what
 * the release then answers: what the handler throws, or the promise it returns rejects with,
 * rejects it, so an async handler's failure is not left to float unhandled.
 * @internal
 */
export async function tellDeleteError(told: DeleteErrorHandler | undefined, error: unknown): Promise<void> {
  await told?.(error);
}

/**
 * The two labels upstream writes on every IPAddress of `family`. InvalidArgumentError for a
 * family other than 'IPv4' or 'IPv6' (a record labelled otherwise is no allocator's).
 */
export function allocatorLabels(family: 'IPv4' | 'IPv6'): Record<string, string> {
  checkIPFamily(family, 'allocatorLabels: family');
  return { [LABEL_IP_FAMILY]: family, [LABEL_MANAGED_BY]: CONTROLLER_NAME };
}

/**
 * What a store's cache.subscribe returned, as the function that unsubscribes; InvalidArgumentError
 * for anything else (the allocator could never stop listening, nor be destroyed).
 * @internal
 */
export function checkUnsubscribe(unsubscribe: unknown, what = 'options.store: its cache.subscribe'): () => void {
  if (typeof unsubscribe !== 'function') {
    throw new InvalidArgumentError(`${what} must return the function that unsubscribes, got ${quoteInput(unsubscribe)}`);
  }
  return unsubscribe as () => void;
}

/**
 * InvalidArgumentError unless `record`, given to a watcher's `event`, is an object with a string
 * name, whose fields the allocators read (its name, its labels and their two the allocators
 * write) can be read; for onAdd, unless `previous` is undefined or an object whose labels can
 * be read too (the allocators read them to count an update). Every allocator's watcher checks
 * what its cache delivers before anything changes: a cache that delivers anything else broke its
 * contract, and the error its onWatcherError (or whatever called the watcher) gets says what
 * came, not a TypeError from inside the allocator.
 * @internal
 */
export function checkEventRecord(record: unknown, event: 'onAdd' | 'onDelete', previous?: unknown): void {
  // nothing is built on the way: every event an allocator hears passes here
  if (typeof record !== 'object' || record === null) throw notARecord(event, record);
  let name: unknown;
  try {
    name = (record as { name?: unknown }).name;
  } catch (e) {
    // a revoked Proxy, a getter that throws: said here, as a record that cannot be read
    throw unreadableInput(`the store's cache gave its watcher's ${event} a record whose name`, e);
  }
  if (typeof name !== 'string') throw notARecord(event, record);
  checkLabelsReadable(record, event, null);
  if (previous === undefined) return;
  if (typeof previous !== 'object' || previous === null) {
    throw new InvalidArgumentError(
      `the store's cache gave its watcher's ${event} ${quoteInput(previous)} as the previous version of ${quoteInput(name)}: it must be a record, or undefined for a name the cache did not hold`,
    );
  }
  checkLabelsReadable(previous, event, name);
}

function notARecord(event: string, record: unknown): InvalidArgumentError {
  return new InvalidArgumentError(
    `the store's cache gave its watcher's ${event} ${quoteInput(record)}: a record must be an object with a string name`,
  );
}

/**
 * Reads the labels of `record` (the previous version of the record named `previousOf`, when
 * given) and the two of them the allocators write, as the allocators read them: a read that
 * throws is InvalidArgumentError naming the field.
 */
function checkLabelsReadable(record: object, event: string, previousOf: string | null): void {
  let read = 0; // which read threw: an index of LABEL_FIELDS
  try {
    const labels = (record as { labels?: unknown }).labels;
    if (typeof labels === 'object' && labels !== null) {
      read = 1;
      (labels as Record<string, unknown>)[LABEL_IP_FAMILY];
      read = 2;
      (labels as Record<string, unknown>)[LABEL_MANAGED_BY];
    }
  } catch (e) {
    const whose = previousOf === null ? 'a record whose' : `a previous version of ${quoteInput(previousOf)} whose`;
    throw unreadableInput(`the store's cache gave its watcher's ${event} ${whose} ${LABEL_FIELDS[read]}`, e);
  }
}

/** What checkLabelsReadable reads, in order. */
const LABEL_FIELDS = ['metadata.labels', `metadata.labels["${LABEL_IP_FAMILY}"]`, `metadata.labels["${LABEL_MANAGED_BY}"]`];

/** The allocators' own watchers (allocatorWatcher's answers), each with its handlers unchecked. */
const ALLOCATOR_WATCHERS = new WeakMap<StoreWatcher, StoreWatcher>();

/**
 * An allocator's own watcher over `handlers`: any cache's records reach them through
 * checkEventRecord. The handlers neither change the records they are given nor hand them on, so
 * a MemoryStore calls them directly (uncheckedHandlers) with its records as they are, where every
 * other watcher is given them frozen (the freeze would otherwise be part of every allocation).
 * @internal
 */
export function allocatorWatcher(handlers: StoreWatcher): StoreWatcher {
  const watcher: StoreWatcher = {
    onAdd: (r, previous) => {
      checkEventRecord(r, 'onAdd', previous);
      handlers.onAdd(r, previous);
    },
    onDelete: (r) => {
      checkEventRecord(r, 'onDelete');
      handlers.onDelete(r);
    },
  };
  if (handlers.onResync !== undefined) watcher.onResync = () => handlers.onResync!();
  ALLOCATOR_WATCHERS.set(watcher, handlers);
  return watcher;
}

/**
 * The handlers of an allocator's watcher (allocatorWatcher), for a cache whose records need no
 * check (a MemoryStore's: its own objects, with a string name and plain labels, each write
 * validated at the door); undefined for any other watcher.
 * @internal
 */
export function uncheckedHandlers(watcher: StoreWatcher): StoreWatcher | undefined {
  return ALLOCATOR_WATCHERS.get(watcher);
}

/**
 * InvalidArgumentError unless `watcher` is an object with onAdd and onDelete functions (onResync
 * optional): every cache's and ServiceCIDR source's subscribe() checks it before replaying
 * anything. `where` names the call; a watcher whose reading throws is named with it (readMember).
 * @internal
 */
export function checkWatcher(watcher: unknown, where: string): void {
  const given = 'watcher'; // the parameter (readMember)
  let onResync: unknown;
  if (
    typeof watcher !== 'object' ||
    watcher === null ||
    typeof readMember(watcher, 'onAdd', given) !== 'function' ||
    typeof readMember(watcher, 'onDelete', given) !== 'function' ||
    ((onResync = readMember(watcher, 'onResync', given)) !== undefined && typeof onResync !== 'function')
  ) {
    throw new InvalidArgumentError(`${where}: a watcher must be an object with onAdd and onDelete functions, got ${quoteInput(watcher)}`);
  }
}

/**
 * The refusal of a record name that is not a string, given to `where` (`MemoryStore.get`,
 * `KubernetesStore.cache.get`): every store's get, delete and cache.get refuse such a name alike.
 * It is quoted, never converted: a revoked Proxy's String() throws.
 * @internal
 */
export function notAName(name: unknown, where: string): InvalidArgumentError {
  return new InvalidArgumentError(`${where}: a record name must be a string, got ${quoteInput(name)}`);
}

/**
 * The labels a cache's list(labels) asks for, read once: an object of string values, as pairs,
 * else InvalidArgumentError quoting what is wrong, or naming what could not be read (a revoked
 * Proxy, a getter that throws: unreadableInput). `what` names the call
 * (`MemoryStore.cache.list`). Every store's cache reads them here: a value read again for each
 * record could answer differently, and a label value that is no string (or null given for the
 * labels) would match no record, or every record — a list given without a word.
 * @internal
 */
export function wantedLabels(labels: unknown, what: string): [string, string][] {
  const given = `${what} labels`;
  let keys: string[];
  try {
    // a plain object, as a record's labels are: a Map's entries or inherited keys are no labels
    if (!isPlainObject(labels)) {
      throw new InvalidArgumentError(`${what}: labels must be a plain object of strings, got ${quoteInput(labels)}`);
    }
    keys = Object.keys(labels);
  } catch (e) {
    throw unreadableInput(given, e); // ours (the refusal above) passes as it is
  }
  return keys.map((key) => {
    const value = readMember(labels as object, key, given);
    if (typeof value !== 'string') {
      throw new InvalidArgumentError(`${what}: the label ${quoteInput(key)} must be a string, got ${quoteInput(value)}`);
    }
    return [key, value];
  });
}

/** Whether `record` carries every label of `wanted` (wantedLabels' pairs); true for none. @internal */
export function hasLabels(
  record: { readonly labels: Readonly<Record<string, string>> },
  wanted: readonly (readonly [string, string])[],
): boolean {
  for (let i = 0; i < wanted.length; i++) if (record.labels[wanted[i]![0]] !== wanted[i]![1]) return false;
  return true;
}
