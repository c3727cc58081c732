// The informer: a list + watch loop feeding an in-memory map of records — IPAddress records for
// the store; any cluster-scoped kind given a `convert` (ServiceCIDRs, service-cidrs.ts).
//
// Why not client-node's makeInformer (ListWatch): it stops for good after an `error` event,
// waits a fixed 1 s…30 s before reconnecting, does not page lists, and does not ask for
// bookmarks. This loop is client-go's Reflector reduced to what the allocator needs:
//
//              ┌────────────── expired (410) / error ─────────────┐
//              ▼                                                   │
//   list (paged, consistent) ──► diff into the map ──► watch from the list's resourceVersion
//              ▲                                            │ end (server timeout, client
//              └──── backoff after errors                    │ inactivity timeout, connection
//                                                            │ lost), refused connection,
//                                                            │ 429, 502, 503:
//                                                            └──► watch again from the last rv
//
// * A watch that ends — cleanly, or by losing its connection after the server answered — is
//   resumed from the last resourceVersion seen (events or bookmarks), losing nothing: every
//   event up to it has been applied. So is a watch request refused for now — the connection
//   refused (the API server restarting), 429 (throttled), 503 or a proxy's 502 (see resumable)
//   — after the backoff: client-go's reflector does the same (isWatchErrorRetriable), so that
//   an API server's restart does not make every client list everything again. A 410 (an ERROR
//   event whose Status has code 410 or reason Expired or Gone, or HTTP 410) means the server no
//   longer has the history: re-list at once. Any other failure (500, 504, an
//   ERROR event of another kind, a watch request the server never answered, a watch that ended
//   within a second of its answer with no event — client-go's "very short watch" —, a failed
//   list) re-lists after an exponential backoff with jitter. A re-list delivers the differences to
//   subscribers as adds and deletes.
// * A wait the server asked for is honoured before the next list or watch: a watch refused with
//   a 429, or any status ≥ 500, carrying a Retry-After header (for a 429, the Status's
//   retryAfterSeconds too), read as every other request's (requests.ts askedWait: at most
//   60 s, 0 or below 200 ms), and a list page's wait that the request's deadline cut short.
//   The backoff then waits that long at least — client-go's rest client waits a refused watch's Retry-After out
//   before it sends the watch again (rest/request.go Watch, rest/with_retry.go checkWait and
//   Before, which takes the larger of its backoff and the Retry-After); without it an
//   overloaded server asking for 10 s would be asked again after 200 ms.
//   (One watch, its deadlines and how its end is read: watch-session.ts. The paged list:
//   pager.ts. The backoff: backoff.ts.)
// * State: 'syncing' until the first list is applied, then 'synced'; 'relisting' while the map
//   may be behind after a failure — a re-list pending or running, or a watch refused for now
//   and not yet answered again (hasSynced stays true, like client-go's HasSynced); 'stopped'
//   after stop().
//
// Read-your-writes. The store applies its own successful creates and deletes to the map at once
// (the upstream test fixture's fake API updates the informer synchronously, and an allocator
// that reads Used() right after Allocate() expects that). A reply and the watch travel on
// different connections, so either can arrive first; every change is ordered by resourceVersion
// (an etcd revision, compared as kube-apiserver's watch cache does):
// * `shown` is the newest revision the list/watch has applied: the map already reflects every
//   change up to it. A reply at or below it is old news and is dropped — a create reply must not
//   bring back an object the watch has since shown deleted:
//
//     watch:  ADDED x@5 ── DELETED x@6 (another client) ── shown = 6
//     reply:                                    create x@5 ──► 5 ≤ 6: ignored (x stays gone)
//
// * an ADDED/MODIFIED or DELETED event older than the record held for that name is ignored;
// * a delete removes only the incarnation it deleted: the uid in the answer, or — when the
//   answer names none — the record the map held when the request was sent, if nothing newer has
//   replaced it since (a record the watch delivered meanwhile is another client's re-creation);
// * a record this store deleted leaves a tombstone (by uid): later ADDED/MODIFIED events for
//   that uid are stale and ignored; its DELETED event removes the tombstone;
// * a re-list keeps records newer than the list's resourceVersion (local writes the list
//   predates) and skips listed objects whose uid was tombstoned while it was in flight; a
//   tombstone older than the list request is wrong (the list, a consistent read, would not show
//   an object deleted before it was sent: the delete's answer was not the server's), so the
//   listed object is taken and the tombstone dropped — unless the list is older than
//   what the watch has shown: the server's revisions went back (an etcd restore without
//   --bump-revision), and the map is replaced by the list as it is.
// Invariant: the map only holds objects the server held at some revision, each at most once,
// never moves back past what the list/watch has shown (unless the server's revisions went back,
// as above; that is seen only while they are below the last one shown), and converges to the
// server's set once the watch catches up.
import { checkWatcher, hasLabels, type IPAddressRecord, notAName, type StoreCache, wantedLabels } from '../store.ts';
import { ErrDestroyed, InvalidArgumentError } from '../errors.ts';
import { optionsObject, readMember, unboundCall, unboundOr, unboundRead, unreadableInput } from '../input.ts';
import { formatCount, quoteInput } from '../quote.ts';
import { fieldProblem, namedObjectProblem, typeProblem } from './answers.ts';
import {
  blockedPort,
  causeChain,
  deniedByRuntime,
  httpCode,
  KubernetesApiError,
  SyncBlockedError,
  SyncDeniedError,
  SyncTimeoutError,
  translate,
} from './errors.ts';
import { UnusableProxyError } from './proxy-environment.ts';
import { GROUP, matchesSelector, notOlder, revision, toRecord, type LabelSelector } from './objects.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import { MAX_TIMEOUT_MS } from './numbers.ts';
import type { ListerWatcher, ListPage } from './lister-watcher.ts';
import { listAll } from './pager.ts';
import { askedWait } from './requests.ts';
import { WatchSession, type WatchOutcome } from './watch-session.ts';
import { type InformerState, StateReporter, SyncWaiters } from './informer-state.ts';

/** @internal */
export type { ListerWatcher, ListPage };

/** What the informer keeps per object: a name, the identity and version it orders by, labels. */
export interface CachedRecord {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly resourceVersion?: string | undefined;
  readonly uid?: string | undefined;
}

/** Receives the informer's changes (StoreWatcher for IPAddress records). @internal */
export interface InformerWatcher<R> {
  /** A new name (`previous` undefined) or a new version of one (`previous` = the last one given). */
  onAdd(record: R, previous?: R): void;
  /** The name is gone; `record` is the last version given. */
  onDelete(record: R): void;
  /** Optional: a re-list finished and its differences were delivered. */
  onResync?(): void;
}

/** How long `waitForSync` may wait. */
export interface WaitForSyncOptions {
  /** Reject with SyncTimeoutError after this many ms (≥ 0; Infinity or absent: no limit). */
  timeoutMs?: number | undefined;
  /** Reject with `signal.reason` when it aborts (at once if it already has). */
  signal?: AbortSignal | undefined;
}

/** @internal */
export interface InformerOptions<R extends CachedRecord = IPAddressRecord> {
  /** Who owns the informer, for errors (`KubernetesStore`). Default: the resource. */
  owner?: string;
  /**
   * The kind of the resource's objects (default IPAddress) and their apiVersion (default
   * networking.k8s.io/v1): a list of a kind other than `${kind}List`, or in another apiVersion,
   * or without a kind or an apiVersion, is a failed list, and a watch event whose object says
   * another kind or apiVersion, or says none, fails the watch.
   */
  kind?: string;
  apiVersion?: string;
  /** Object (list item, watch event, create answer) → frozen record. Default: IPAddress toRecord. */
  convert?: (obj: unknown) => R;
  selector?: LabelSelector;
  /** List page size (limit); 0 lists in one request. Default 500 (client-go's pager default). */
  pageSize?: number;
  backoff?: BackoffOptions;
  /** Server-side watch timeout; default a random 300–600 s, like client-go. */
  watchTimeoutSeconds?: number;
  /** Called when a subscriber throws (default: console.error). */
  onWatcherError?: (err: unknown) => void;
}

/** Counters for observability and tests. */
export interface InformerStats {
  lists: number;
  watches: number;
  /** Watches answered with 410 Expired (or a Status saying Expired or Gone without the code): re-listed at once. */
  expired: number;
  /** Failed lists and watches (other than 410), a list page the server asked to wait (429, or a 5xx with Retry-After) and sent again included. */
  errors: number;
}

/**
 * Whether a failed watch request may be sent again from the same resourceVersion: the
 * connection was refused (no server listening: it is restarting), the server throttled it (429,
 * as an HTTP answer or an ERROR event) — client-go's reflector: isWatchErrorRetriable and its
 * IsTooManyRequests case — or it answered 503 Service Unavailable or a proxy 502 Bad Gateway.
 * For those two, client-go's rest client sends the watch again itself when they carry a
 * Retry-After (after that wait, which the loop honours too: see run): resuming keeps an
 * overloaded or restarting server from being listed in full by every client, and loses nothing
 * (a resourceVersion too old is answered 410, and re-listed). A 500 or 504 still re-lists (a 504
 * may be a resourceVersion too large, after an etcd restore), after the wait it asks for if any.
 */
function resumable(err: unknown): boolean {
  const code = httpCode(err);
  if (code === 429 || code === 502 || code === 503) return true;
  return causeChain(err).some((e) => e.code === 'ECONNREFUSED'); // Node and Deno alike, client-node 1.x and 2.x
}

const MAX_TOMBSTONES = 10_000;

/** True when both versions are revisions and `a` is strictly newer than `b`. */
function isNewerThan(a: string | undefined, b: string | undefined): boolean {
  const x = revision(a);
  const y = revision(b);
  return x !== undefined && y !== undefined && x > y;
}

/**
 * How a message names the cache when one of its methods is called without it (unboundCall): a
 * KubernetesStore's cache is the one informer users reach (a KubernetesServiceCIDRs keeps its
 * informer to itself).
 */
const CACHE = 'KubernetesStore.cache';

/**
 * What every call answers once the informer is stopped: ErrDestroyed naming its owner, which
 * stops it only from close() (a KubernetesStore, a KubernetesServiceCIDRs), so the message says
 * `has been closed`, the word of the call the user made. @internal
 */
export function closedError(owner: string): ErrDestroyed {
  return new ErrDestroyed(owner, 'has been closed');
}

/** @internal */
export class Informer<R extends CachedRecord = IPAddressRecord> {
  private readonly records = new Map<string, R>();
  /** uid → name of records this store deleted whose DELETED event has not arrived yet. */
  private readonly tombstones = new Map<string, string>();
  /** One entry per subscribe() call (the same watcher subscribed twice is two), as MemoryStore keeps them. */
  private readonly subscriptions = new Set<{ readonly watcher: InformerWatcher<R> }>();
  private readonly status = new StateReporter((err) => this.reportThrown(err, 'an onStateChange listener'));
  private synced = false;
  private rv = '';
  private stopped = false;
  private started = false;
  /** The watch in progress, from the request to its outcome, for stop() (which does nothing to one already settled). */
  private watch: WatchSession | undefined;
  private readonly backoff: Backoff;
  /**
   * The newest revision the list/watch has applied (list resourceVersion, event or bookmark):
   * the map reflects every change up to it. Only grows, except when a re-list shows the server's
   * revisions went back (an etcd restore): it is then the list's.
   */
  private shown: number | undefined;
  private readonly syncWaiters = new SyncWaiters();
  /**
   * When (performance.now() ms) the server allows the next list or watch: the end of the last
   * wait it asked for (a refused watch's Retry-After, a list page's wait). 0: no wait asked. A
   * monotonic clock, as client-go sleeps a duration: the wall clock set back or forward (NTP, a
   * VM restored) neither stretches nor skips the wait.
   */
  private notBefore = 0;
  /** The owner's name for errors. */
  readonly owner: string;
  readonly stats: InformerStats = { lists: 0, watches: 0, expired: 0, errors: 0 };
  /** The last list/watch failure, cleared once the map is kept up to date again (a list, or a watch answered after one was refused). */
  lastError: Error | undefined;
  /**
   * The last failure when the runtime denied a permission it needed (Deno's NotCapable, read from
   * the error as thrown: the translated one may leave its cause out), and Deno's words for it.
   * Current only while it is still lastError.
   */
  private denial: { error: Error; denied: string } | undefined;
  /**
   * Set when a list or watch failed on a port fetch never connects to (blockedPort) or a proxy no
   * request goes through (UnusableProxyError): every retry would fail alike, so the loop has
   * ended, and every waitForSync rejects with it.
   */
  private blocked: SyncBlockedError | undefined;
  private readonly convert: (obj: unknown) => R;

  constructor(
    private readonly lw: ListerWatcher,
    private readonly resource: string,
    private readonly options: InformerOptions<R> = {},
  ) {
    this.convert = options.convert ?? (toRecord as unknown as (obj: unknown) => R);
    this.owner = options.owner ?? resource;
    this.backoff = new Backoff(options.backoff);
  }

  // --- StoreCache ------------------------------------------------------------------------------

  get(name: string): R | undefined {
    try {
      this.assertRunning();
      // a Map answers undefined for any key: a name that is not a string would read as absent
      if (typeof name !== 'string') throw notAName(name, `${this.owner}.cache.get`);
      return this.records.get(name);
    } catch (e) {
      throw unboundOr(e, this, Informer, CACHE, 'get'); // the allocators read it as they allocate: checked on failure only
    }
  }

  list(labels?: Readonly<Record<string, string>>): R[] {
    if (!(this instanceof Informer)) throw unboundCall(this, CACHE, 'list');
    this.assertRunning();
    const wanted = labels === undefined ? [] : wantedLabels(labels, `${this.owner}.cache.list`);
    const out: R[] = [];
    for (const r of this.records.values()) {
      if (hasLabels(r, wanted)) out.push(r);
    }
    return out;
  }

  get size(): number {
    if (!(this instanceof Informer)) throw unboundRead(this, CACHE, 'size');
    this.assertRunning();
    return this.records.size;
  }

  hasSynced(): boolean {
    try {
      this.assertRunning();
      return this.synced;
    } catch (e) {
      throw unboundOr(e, this, Informer, CACHE, 'hasSynced'); // asked on every allocation: checked on failure only
    }
  }

  subscribe(watcher: InformerWatcher<R>): () => void {
    if (!(this instanceof Informer)) throw unboundCall(this, CACHE, 'subscribe');
    this.assertRunning();
    checkWatcher(watcher, `${this.owner}.cache.subscribe`);
    for (const r of [...this.records.values()]) {
      if (this.stopped) break; // the replay's watcher closed the store
      // a throw ends the replay with the watcher not subscribed and the error the caller's, as
      // the StoreCache contract says and MemoryStore does (a later event's throw is reported)
      watcher.onAdd(r);
    }
    // A closed store keeps no subscriber, and says so as every call after close() does.
    this.assertRunning();
    const sub = { watcher };
    this.subscriptions.add(sub);
    return () => {
      this.subscriptions.delete(sub);
    };
  }

  /** The cache's methods after stop() throw ErrDestroyed (the unsubscribe functions keep working). */
  private assertRunning(): void {
    if (this.stopped) throw closedError(this.owner);
  }

  // --- lifecycle -------------------------------------------------------------------------------

  get state(): InformerState {
    return this.status.state;
  }

  /** Listens to state changes (with the error that caused a re-list). Returns the unsubscriber. */
  onStateChange(listener: (state: InformerState, error?: Error) => void): () => void {
    return this.status.listen(listener);
  }

  /**
   * Resolves once the first list is applied. Rejects with ErrDestroyed when stopped (before or
   * while waiting), SyncTimeoutError after `timeoutMs`, SyncDeniedError when the runtime denies
   * the list a permission (before the first sync), SyncBlockedError when fetch refuses the
   * server's port or the proxy is unusable (no list is sent again), `signal.reason` when the
   * signal aborts, InvalidArgumentError for options of the wrong type. Leaves no timer or
   * listener behind.
   */
  waitForSync(options: WaitForSyncOptions = {}): Promise<void> {
    let read: WaitForSyncOptions;
    try {
      read = optionsObject(options, 'waitForSync', { timeoutMs: true, signal: true });
    } catch (e) {
      return Promise.reject(e);
    }
    const { timeoutMs, signal } = read;
    if (
      timeoutMs !== undefined &&
      !(typeof timeoutMs === 'number' && timeoutMs >= 0 && (timeoutMs <= MAX_TIMEOUT_MS || timeoutMs === Infinity))
    ) {
      return Promise.reject(
        new InvalidArgumentError(
          `waitForSync: timeoutMs must be a number of milliseconds from 0 to ${formatCount(MAX_TIMEOUT_MS)} or Infinity, got ${quoteInput(timeoutMs)}`,
        ),
      );
    }
    let isSignal = signal === undefined;
    try {
      isSignal ||=
        typeof signal === 'object' &&
        signal !== null &&
        typeof readMember(signal, 'addEventListener', 'options.signal') === 'function' &&
        'aborted' in signal;
    } catch (e) {
      return Promise.reject(unreadableInput('options.signal', e)); // a revoked Proxy (`in`), a getter that throws
    }
    if (!isSignal) {
      return Promise.reject(new InvalidArgumentError(`waitForSync: signal must be an AbortSignal, got ${quoteInput(signal)}`));
    }
    if (this.stopped) return Promise.reject(closedError(this.owner));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.synced) return Promise.resolve();
    // blocked for good, or denied now and on every retry until granted: waiting would never end
    if (this.blocked !== undefined) return Promise.reject(this.blocked);
    const denied = this.deniedSync();
    if (denied !== undefined) return Promise.reject(denied);
    return this.syncWaiters.add(timeoutMs, signal, () => new SyncTimeoutError(this.owner, this.resource, timeoutMs!, this.lastError));
  }

  /** A SyncDeniedError when the last failure is the runtime's denial of a permission; undefined otherwise. */
  private deniedSync(): SyncDeniedError | undefined {
    const d = this.denial;
    if (d === undefined || d.error !== this.lastError) return undefined;
    return new SyncDeniedError(this.owner, this.resource, d.denied, d.error);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    void this.run();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.watch?.stop(); // aborts its request, answered or not
    this.backoff.cancel();
    this.status.set('stopped');
    this.syncWaiters.rejectAll(() => closedError(this.owner));
    // Nothing is delivered or read any more: let go of the subscribers (an allocator never
    // destroyed keeps its WASM index through them) and of what was cached.
    this.subscriptions.clear();
    this.records.clear();
    this.tombstones.clear();
    this.status.clear(); // told 'stopped' above; nothing follows
  }

  // --- local writes (read-your-writes) ----------------------------------------------------------

  /**
   * How many times a re-list found the server's revisions gone back. A reply to a request sent
   * before (`history` as the request was sent) cannot be ordered against the new revisions: it
   * is left to the list/watch.
   */
  get history(): number {
    return this.resets;
  }
  private resets = 0;

  /**
   * Applies the object a successful create returned — unless the list/watch has already shown
   * its revision: the map then holds that create or what followed it (another client may have
   * deleted the object again), and an old reply must not move it backwards.
   */
  appliedCreate(obj: unknown, history: number): void {
    if (this.stopped || history !== this.resets) return;
    const rec = this.convert(obj);
    if (this.hasShown(rec.resourceVersion)) return;
    this.upsert(rec);
  }

  /**
   * Applies a finished delete of `name`. `uid` is the object the answer says it removed;
   * `sent` is the record the map held when the request was sent. The record removed is the one
   * of that uid; without a uid, `sent` if it is still the record held (anything else arrived
   * meanwhile: another client's re-creation, which must stay).
   */
  appliedDelete(name: string, uid: string | undefined, sent: R | undefined, history: number): void {
    if (this.stopped || history !== this.resets) return;
    const cur = this.records.get(name);
    const gone = uid !== undefined ? (cur !== undefined && cur.uid === uid ? cur : undefined) : cur === sent ? cur : undefined;
    if (gone !== undefined) {
      this.records.delete(name);
      this.emit('onDelete', gone);
    }
    const tombstone = uid ?? sent?.uid;
    if (tombstone !== undefined) {
      this.tombstones.set(tombstone, name);
      if (this.tombstones.size > MAX_TOMBSTONES) this.tombstones.delete(this.tombstones.keys().next().value!);
    }
  }

  /** True when the list/watch has applied revision `rv` (unknown or unparsable: false). */
  private hasShown(rv: string | undefined): boolean {
    const r = revision(rv);
    return r !== undefined && this.shown !== undefined && r <= this.shown;
  }

  private advanceShown(rv: string | undefined): void {
    const r = revision(rv);
    if (r !== undefined && (this.shown === undefined || r > this.shown)) this.shown = r;
  }

  // --- the loop --------------------------------------------------------------------------------

  /**
   * client-go's Run → ListAndWatch → watch, as one loop until stop(): list when there is no
   * resume point (`rv` empty: at the start, after a 410 or a failure that is not resumable),
   * then one watch from `rv`; its outcome decides whether the next turn resumes, re-lists, or
   * first waits out the backoff.
   */
  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.rv === '') {
        try {
          await this.relist();
        } catch (err) {
          if (this.stopped) return;
          this.failed(translate(err, 'list', this.resource, undefined, this.lw.server), err);
          if (this.blocked !== undefined) return; // no list could ever be sent: trying again would only fail again
          await this.pause();
          continue;
        }
        if (this.stopped) return;
      }
      const outcome = await this.watchOnce();
      if (this.stopped) return;
      if (outcome.events > 0) this.backoff.reset();
      switch (outcome.kind) {
        case 'closed':
          // Resume from the last resourceVersion; back off only when the watch brought nothing
          // (a server that keeps closing at once must not be hammered).
          if (outcome.events === 0) await this.pause();
          break;
        case 'expired':
          this.stats.expired++;
          this.rv = '';
          this.status.set('relisting');
          if (outcome.events === 0 && this.backoff.failing) await this.pause();
          else this.backoff.countFailure();
          break;
        case 'error': {
          if (!resumable(outcome.error)) this.rv = '';
          const asked = askedWait(outcome.error, { verb: 'watch', resource: this.resource });
          if (asked !== undefined) this.serverAsked(asked.seconds);
          this.failed(translate(outcome.error, 'watch', this.resource, undefined, this.lw.server), outcome.error);
          if (this.blocked !== undefined) return;
          await this.pause();
          break;
        }
      }
    }
  }

  /** The server asked for `seconds` before it is sent anything more (see notBefore). */
  private serverAsked(seconds: number): void {
    this.notBefore = Math.max(this.notBefore, performance.now() + seconds * 1000);
  }

  /** The backoff after a failure, and at least what is left of the wait the server asked for. */
  private pause(): Promise<void> {
    return this.backoff.wait(Math.max(0, this.notBefore - performance.now()));
  }

  /** `error` is the failure as said (translated), `thrown` as it was thrown, when it differs. */
  private failed(error: Error, thrown: unknown = error): void {
    this.stats.errors++;
    this.lastError = error;
    const denied = deniedByRuntime(thrown);
    this.denial = denied === undefined ? undefined : { error, denied };
    // a failure no retry can change: the server's port is one fetch refuses, or the proxy one no
    // request goes through (both read once, as the store started)
    const port = blockedPort(thrown, this.lw.server);
    if (port !== undefined || causeChain(thrown).some((e) => e instanceof UnusableProxyError)) {
      this.blocked = new SyncBlockedError(this.owner, this.resource, this.lw.server, port, error);
    }
    this.status.set(this.synced ? 'relisting' : 'syncing', error);
    // Before the first sync, a permission the runtime denies ends every wait for it (SyncDeniedError);
    // any other failure may pass, and the waits go on. A listener above may have stopped the informer.
    if (denied !== undefined && !this.synced && !this.stopped) {
      this.syncWaiters.rejectAll(() => new SyncDeniedError(this.owner, this.resource, denied, error));
    }
    const blocked = this.blocked;
    if (blocked !== undefined && !this.synced && !this.stopped) this.syncWaiters.rejectAll(() => blocked);
  }

  /** The apiVersion the resource is asked for in (its lists and watch events must say it). */
  private get apiVersion(): string {
    return this.options.apiVersion ?? `${GROUP}/v1`;
  }

  private async relist(): Promise<void> {
    this.stats.lists++;
    // Tombstones made before this list is sent: an object the list still shows was not deleted.
    const settledBefore = new Set(this.tombstones.keys());
    const { items, resourceVersion } = await listAll(this.lw, {
      resource: this.resource,
      listKind: `${this.options.kind ?? 'IPAddress'}List`,
      apiVersion: this.apiVersion,
      pageSize: this.options.pageSize ?? 500,
      labelSelector: this.options.selector?.text || undefined,
      // A page the server asks to wait (a 429, or a 5xx with Retry-After) is sent again after the
      // wait: meanwhile lastError (and SyncTimeoutError) say why the list has not answered. Should
      // the request's deadline end it during the wait, the next list still waits it out.
      onWait: (error: Error, seconds: number) => {
        if (this.stopped) return;
        this.serverAsked(seconds);
        this.failed(error);
      },
      stopped: () => this.stopped,
    });
    if (this.stopped) return;
    // A consistent list is never older than what a watch showed before it, unless the server's
    // revisions went back (etcd restored from a backup without --bump-revision): then nothing
    // held can be ordered against the list, which is taken as it is (as client-go's Replace does).
    const listed = revision(resourceVersion);
    const revisionsWentBack = listed !== undefined && this.shown !== undefined && listed < this.shown;
    this.replace(
      items.map((o) => this.convert(o)),
      resourceVersion,
      revisionsWentBack,
      settledBefore,
    );
    this.rv = resourceVersion;
    if (revisionsWentBack) {
      this.shown = listed;
      this.resets++;
    } else {
      this.advanceShown(resourceVersion);
    }
    this.lastError = undefined;
    const first = !this.synced;
    this.synced = true;
    this.status.set('synced');
    if (first) this.syncWaiters.resolveAll();
  }

  /** One watch from the last resourceVersion (client-go's reflector watch()); see watch-session.ts. */
  private watchOnce(): Promise<WatchOutcome> {
    this.stats.watches++;
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
    const request = {
      resourceVersion: this.rv,
      allowWatchBookmarks: true,
      timeoutSeconds,
      ...(this.options.selector?.text ? { labelSelector: this.options.selector.text } : {}),
    };
    const watch = new WatchSession(this.lw, request, {
      apply: (type, object) => this.applyEvent(type, object),
      answered: () => {
        if (this.status.state === 'relisting' && this.rv !== '') {
          // answered again after a refused watch: the map is being kept up to date once more
          this.lastError = undefined;
          this.status.set('synced');
        }
      },
    });
    this.watch = watch;
    watch.open();
    return watch.outcome;
  }

  // --- applying changes ------------------------------------------------------------------------

  /** The failure of a watch whose event is refused (`why`): lastError says it, and the store re-lists. */
  private refusedEvent(why: string): KubernetesApiError {
    return new KubernetesApiError('watch', this.resource, undefined, undefined, undefined, why);
  }

  /**
   * A watch event other than ERROR: applied to the map; its resourceVersion is the new resume
   * point. An ADDED, MODIFIED or DELETED whose object has no name (null, no metadata), or an
   * event of a type not known, is not applied: the error returned fails the watch, and the map is
   * listed again after the backoff — as client-go's reflector does with an event it cannot
   * decode — so it is never cached as a record named "" nor skipped for good.
   */
  private applyEvent(type: string, object: unknown): Error | undefined {
    const obj = object as { metadata?: { resourceVersion?: string } };
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        const kind = this.options.kind ?? 'IPAddress';
        // An object of another kind or apiVersion than the resource's (a Service named like an
        // address on the IPAddress watch), or saying neither, is never applied: client-go's
        // reflector (reflector.go, watchHandler) skips an event whose object is not of the
        // expected type or GroupVersionKind, reporting it ("expected type …, but watch event
        // object had type …"); our report is lastError, which the failed watch sets, and the
        // re-list after it is what the other refused events get too.
        const problem =
          namedObjectProblem(object) ?? typeProblem(object as object, kind, { apiVersion: this.apiVersion }) ?? fieldProblem(object, kind);
        if (problem !== undefined) {
          return this.refusedEvent(`the API server sent ${type === 'ADDED' ? 'an' : 'a'} ${type} event whose object is ${problem}`);
        }
        if (type === 'DELETED') this.remove(this.convert(obj));
        else this.upsert(this.convert(obj));
        break;
      }
      case 'BOOKMARK':
        break;
      default:
        // client-go's watch decoder refuses an event of any other type ("got invalid watch event
        // type"), which ends the watch as a failure; its reflector re-lists after the backoff
        return this.refusedEvent(
          `the API server sent a watch event of a type not known, ${quoteInput(type)} (known: ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)`,
        );
    }
    const rv = obj?.metadata?.resourceVersion;
    if (rv) {
      this.rv = rv;
      this.advanceShown(rv);
    }
    return undefined;
  }

  private upsert(rec: R): void {
    if (!matchesSelector(this.options.selector, rec.labels)) return;
    if (rec.uid !== undefined && this.tombstones.has(rec.uid)) return;
    const cur = this.records.get(rec.name);
    if (cur && notOlder(cur.resourceVersion, rec.resourceVersion)) return;
    this.records.set(rec.name, rec);
    this.emit('onAdd', rec, cur);
  }

  private remove(rec: R): void {
    if (rec.uid !== undefined && this.tombstones.delete(rec.uid)) {
      // Already removed by our own delete; only drop a record of that same incarnation.
      const cur = this.records.get(rec.name);
      if (!cur || cur.uid !== rec.uid) return;
    }
    const cur = this.records.get(rec.name);
    if (!cur) return;
    // A DELETED older than what we hold belongs to an earlier incarnation of the name.
    if (cur.uid !== rec.uid && notOlder(cur.resourceVersion, rec.resourceVersion)) return;
    this.records.delete(rec.name);
    this.emit('onDelete', cur);
  }

  /**
   * Replaces the map with a list taken at `listRV`, delivering the differences. `asListed` (the
   * server's revisions went back): the list is the truth, with no record kept for being newer.
   */
  private replace(listed: R[], listRV: string, asListed: boolean, tombstonesBefore: ReadonlySet<string>): void {
    if (asListed) this.tombstones.clear();
    for (const r of listed) if (r.uid !== undefined && tombstonesBefore.has(r.uid)) this.tombstones.delete(r.uid);
    const fresh = new Map<string, R>();
    const listedUids = new Set<string>();
    for (const r of listed) {
      if (r.uid !== undefined) listedUids.add(r.uid);
      if (r.uid !== undefined && this.tombstones.has(r.uid)) continue; // the list predates our delete
      if (!matchesSelector(this.options.selector, r.labels)) continue;
      fresh.set(r.name, r);
    }
    // Deletions first, so a watcher never sees two records of one name.
    for (const [name, cur] of [...this.records]) {
      if (this.stopped) return; // a watcher closed the store
      const next = fresh.get(name);
      if (next && next.uid === cur.uid) continue;
      if (!asListed) {
        if (!next && isNewerThan(cur.resourceVersion, listRV)) continue; // our write, newer than the list
        if (next && notOlder(cur.resourceVersion, next.resourceVersion)) continue; // a newer incarnation we wrote
      }
      this.records.delete(name);
      this.emit('onDelete', cur);
    }
    for (const [name, next] of fresh) {
      if (this.stopped) return;
      const cur = this.records.get(name);
      if (
        cur &&
        (asListed
          ? cur.uid === next.uid && cur.resourceVersion === next.resourceVersion
          : notOlder(cur.resourceVersion, next.resourceVersion))
      )
        continue;
      this.records.set(name, next);
      this.emit('onAdd', next, cur);
    }
    // A tombstone whose uid the list no longer shows is settled.
    for (const uid of [...this.tombstones.keys()]) if (!listedUids.has(uid)) this.tombstones.delete(uid);
    for (const sub of [...this.subscriptions]) {
      if (this.stopped) return;
      if (!this.subscriptions.has(sub)) continue; // unsubscribed by an earlier watcher's onResync
      try {
        sub.watcher.onResync?.();
      } catch (err) {
        this.reportThrown(err, 'a store watcher');
      }
    }
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** What a callback of the user's threw (`what`: which), told to onWatcherError, by default console.error. */
  private reportThrown(err: unknown, what: string): void {
    if (this.options.onWatcherError !== undefined) this.options.onWatcherError(err);
    else console.error(`ipallocator: ${what} threw`, err);
  }

  private emit(kind: 'onAdd' | 'onDelete', rec: R, previous?: R): void {
    for (const sub of [...this.subscriptions]) {
      if (this.stopped) return; // an earlier watcher closed the store: nothing more is delivered
      // unsubscribed by an earlier watcher of this event (subscribed again: replayed already)
      if (!this.subscriptions.has(sub)) continue;
      this.call(sub.watcher, kind, rec, previous);
    }
  }

  private call(w: InformerWatcher<R>, kind: 'onAdd' | 'onDelete', rec: R, previous?: R): void {
    try {
      if (kind === 'onAdd') w.onAdd(rec, previous);
      else w.onDelete(rec);
    } catch (err) {
      this.reportThrown(err, 'a store watcher');
    }
  }
}

// Compile-time conformance: over IPAddress records the informer is the store's cache.
const _conforms: (i: Informer) => StoreCache = (i) => i;
void _conforms;
