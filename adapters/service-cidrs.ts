// Where a MetaAllocator learns its ranges: ServiceCIDR objects, added, updated and removed at run
// time (upstream: a ServiceCIDR informer in pkg/registry/core/service/ipallocator/cidrallocator.go).
//
//   source (in memory, or a Kubernetes informer) ──subscribe──► MetaAllocator
//        onAdd(sc)     a new ServiceCIDR, or a new version of one (update = onAdd again)
//        onDelete(sc)  the object is gone (its finalizer has run)
//
// The contract mirrors StoreCache.subscribe (adapters/store.ts): a subscriber first receives
// `onAdd` for every object already known, synchronously and in creation order, then every change
// in order. An informer-backed source (KubernetesServiceCIDRs) implements the same three members over
// `networking.k8s.io/v1` ServiceCIDRs: `name` = metadata.name, `cidrs` = spec.cidrs, `ready` from
// the `Ready` condition (absent → undefined), `deletionTimestamp` and `creationTimestamp` from
// metadata.
//
// InMemoryServiceCIDRs is the embedded source: synchronous add/update/delete that notify the
// subscribers before returning, with the API server's validation of spec.cidrs.
import { parsePrefix } from './address.ts';
import { InvalidArgumentError, InvalidCIDRError, rethrowLater } from './errors.ts';
import { arrayLength, optionsObject, readElements, readMember, unboundCall } from './input.ts';
import { formatCount, quoteInput, quoteText } from './quote.ts';
import { SAME_THREAD } from './same-thread.ts';
import { Prefix } from './geometry.ts';
import { dns1123SubdomainProblems } from './label-rules.ts';
import { checkWatcher } from './store.ts';

/** One ServiceCIDR object as the allocators see it (immutable once delivered). */
export interface ServiceCIDR {
  /** metadata.name (the default object made from the API server flags is called `kubernetes`). */
  readonly name: string;
  /** spec.cidrs: one or two CIDR strings, at most one per family. Immutable in the API. */
  readonly cidrs: readonly string[];
  /**
   * The `Ready` condition: true (status True), false (False or Unknown), or undefined when the
   * object has no Ready condition — upstream then assumes ready ("kcm not running").
   */
  readonly ready?: boolean | undefined;
  /** metadata.deletionTimestamp: set once deletion has started (finalizer pending). */
  readonly deletionTimestamp?: string | null | undefined;
  /** metadata.creationTimestamp (RFC 3339); orders ranges for the 'ordered' policy. */
  readonly creationTimestamp?: string | undefined;
}

/**
 * Creation order of ServiceCIDRs: creationTimestamp, earliest first. Kubernetes stamps whole
 * seconds, so ServiceCIDRs made in the same second tie: they are then ordered by name, which
 * every replica sees alike (arrival order differs between a replica that watched them come and
 * one that listed them later). Without a timestamp (a source of your own that sets none): last,
 * and 0 between two such, so that a stable sort keeps their arrival order.
 * @internal
 */
export function compareCreation(a: ServiceCIDR, b: ServiceCIDR): number {
  const ta = creationTime(a);
  const tb = creationTime(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (ta !== Infinity && a.name !== b.name) return a.name < b.name ? -1 : 1;
  return 0;
}

function creationTime(sc: ServiceCIDR): number {
  const t = sc.creationTimestamp === undefined ? NaN : Date.parse(sc.creationTimestamp);
  return Number.isNaN(t) ? Infinity : t;
}

/** Receives ServiceCIDR changes. An update of an existing name is delivered as `onAdd` again. */
export interface ServiceCIDRWatcher {
  onAdd(sc: ServiceCIDR): void;
  onDelete(sc: ServiceCIDR): void;
}

/** What a MetaAllocator needs from a ServiceCIDR source (an informer implements it). */
export interface ServiceCIDRSource {
  /**
   * Subscribes: `onAdd` for every object already known (synchronously, in creation order, before
   * this returns), then every change in order. Returns the function that unsubscribes. Each call
   * is a subscription of its own: a watcher subscribed twice receives every change twice.
   */
  subscribe(this: object, watcher: ServiceCIDRWatcher): () => void;
  /** True once the source holds a complete copy (informer HasSynced). */
  hasSynced(this: object): boolean;
  /** The objects known now, in creation order. */
  list(this: object): ServiceCIDR[];
}

/**
 * The most entries of spec.cidrs read unvalidated (the API server allows two): by addServiceCIDR
 * with `unvalidated`, and by a MetaAllocator from a source of your own. An array whose length was
 * set far past its elements would otherwise be read hole by hole.
 */
const MAX_UNVALIDATED_CIDRS = 64;

/**
 * A ServiceCIDR as a source delivered it, read once into a frozen object of our own: what a
 * MetaAllocator checks is what it keeps (a getter or a Proxy may answer differently at each
 * read). `cidrs` is copied when it is an array and kept as read otherwise (the MetaAllocator
 * reports such a ServiceCIDR as listing no CIDRs). Throws InvalidArgumentError for something
 * that is not an object, a name that is not a string, more than 64 CIDRs, a ready, deletionTimestamp
 * or creationTimestamp not of its type, and a member that cannot be read (a revoked Proxy, a
 * getter that throws), naming it.
 * @internal
 */
export function readServiceCIDR(sc: unknown): ServiceCIDR {
  const name = serviceCIDRName(sc);
  const o = sc as object;
  const cidrs = readMember(o, 'cidrs', 'ServiceCIDR');
  const length = arrayLength(cidrs, 'ServiceCIDR.cidrs');
  if (length !== undefined && length > MAX_UNVALIDATED_CIDRS) {
    throw new InvalidArgumentError(
      `ServiceCIDR.cidrs holds ${formatCount(length)} entries; at most ${formatCount(MAX_UNVALIDATED_CIDRS)} are read`,
    );
  }
  const listed = length === undefined ? cidrs : Object.freeze(readElements(cidrs, length, 'ServiceCIDR.cidrs'));
  // Of the types ServiceCIDR gives them, or refused: a MetaAllocator reads them again at every
  // event (the order sorts on creationTimestamp), where an object's text conversion would run
  // the caller's code, or throw, once the ranges were half rebuilt; and a Ready condition's
  // status text ('False') would be read as ready.
  const ready = readMember(o, 'ready', 'ServiceCIDR');
  if (ready !== undefined && typeof ready !== 'boolean') {
    throw new InvalidArgumentError(`ServiceCIDR.ready must be true, false or undefined (no Ready condition), got ${quoteInput(ready)}`);
  }
  const deletionTimestamp = readMember(o, 'deletionTimestamp', 'ServiceCIDR');
  if (deletionTimestamp !== undefined && deletionTimestamp !== null && typeof deletionTimestamp !== 'string') {
    throw new InvalidArgumentError(`ServiceCIDR.deletionTimestamp must be text, null or undefined, got ${quoteInput(deletionTimestamp)}`);
  }
  const creationTimestamp = readMember(o, 'creationTimestamp', 'ServiceCIDR');
  if (creationTimestamp !== undefined && typeof creationTimestamp !== 'string') {
    throw new InvalidArgumentError(
      `ServiceCIDR.creationTimestamp must be text (RFC 3339) or undefined, got ${quoteInput(creationTimestamp)}`,
    );
  }
  return Object.freeze({ name, cidrs: listed as readonly string[], ready, deletionTimestamp, creationTimestamp });
}

/** The name of a ServiceCIDR a source delivered (all a delete needs), read as readServiceCIDR reads it. @internal */
export function serviceCIDRName(sc: unknown): string {
  if (typeof sc !== 'object' || sc === null) throw new InvalidArgumentError(`expected a ServiceCIDR object, got ${quoteInput(sc)}`);
  const name = readMember(sc, 'name', 'ServiceCIDR');
  if (typeof name !== 'string') throw new InvalidArgumentError(`ServiceCIDR.name must be a string, got ${quoteInput(name)}`);
  return name;
}

/** Upstream `isReady(sc) && sc.DeletionTimestamp.IsZero()`: may its ranges allocate? */
export function serviceCIDRAllocatable(sc: ServiceCIDR): boolean {
  if (typeof sc !== 'object' || sc === null) throw new InvalidArgumentError(`expected a ServiceCIDR object, got ${quoteInput(sc)}`);
  // read as a caller's input: a revoked Proxy, a getter that throws is InvalidArgumentError
  const deletion = readMember(sc, 'deletionTimestamp', 'ServiceCIDR');
  return readMember(sc, 'ready', 'ServiceCIDR') !== false && (deletion === undefined || deletion === null);
}

/**
 * The API server's validation of spec.cidrs (pkg/apis/networking/validation ValidateServiceCIDR).
 * Takes the `cidrs` array itself (`validateServiceCIDRSpec(spec.cidrs)`), not the spec or the
 * ServiceCIDR holding it: an object with a `cidrs` or `spec.cidrs` field is refused with a message saying so. The
 * array must hold one or two entries, each a CIDR in canonical form (apimachinery validation.IsValidCIDR: no bits
 * set past the prefix length, IPv6 as RFC 5952, no IPv4-mapped IPv6 address), and when two, one
 * of each family (`may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and
 * 2001:db8::/64`). Throws InvalidArgumentError / InvalidCIDRError. A CIDR no allocator serves
 * passes, as the API server stores it: an IPv6 prefix shorter than /64, 255.255.255.255/32 (upstream
 * NewIPAllocator refuses them, and its MetaAllocator skips them), an IPv6 prefix overlapping the
 * IPv4-mapped block, `::/64` (every allocator here refuses it: refuseIPv4MappedOverlap). A
 * MetaAllocator skips each (skipped(), onSkip).
 */
export function validateServiceCIDRSpec(cidrs: readonly unknown[]): void {
  checkedCIDRs(cidrs);
}

/**
 * `cidrs` read once into an array of our own (a hole read as undefined), as validateServiceCIDRSpec
 * checks it: what was checked is what is kept. An array whose reading throws (a revoked Proxy, an
 * element's getter that throws) is InvalidArgumentError naming it (arrayLength).
 */
function checkedCIDRs(cidrs: unknown): string[] {
  const length = arrayLength(cidrs, 'spec.cidrs');
  if (length === undefined || length < 1 || length > 2) {
    throw new InvalidArgumentError(
      `spec.cidrs must hold 1 or 2 CIDRs, got ${length !== undefined ? length : quoteInput(cidrs)}${length === undefined ? specHint(cidrs) : ''}`,
    );
  }
  const given = readElements(cidrs, length, 'spec.cidrs');
  const families = given.map((c) => {
    const written = parsePrefix(c); // the address as written, host bits and all
    const p = Prefix.from(written.family, written.words, written.bits);
    if (c !== p.cidr) {
      const n = p.network;
      const w = written.words;
      const hostBits = w[0] !== n[0] || w[1] !== n[1] || w[2] !== n[2] || w[3] !== n[3];
      throw new InvalidCIDRError(
        c,
        hostBits
          ? `must not have bits set beyond the prefix length (its canonical form is ${JSON.stringify(p.cidr)})`
          : `must be in canonical form (${JSON.stringify(p.cidr)})`,
      );
    }
    return p.family;
  });
  if (families.length === 2 && families[0] === families[1]) {
    throw new InvalidArgumentError(
      `spec.cidrs may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64, got two ${families[0]} CIDRs: ${quoteText(given[0] as string)} and ${quoteText(given[1] as string)}`,
    );
  }
  return given as string[];
}

/**
 * What to pass instead of `cidrs`, which is no array: for an object with a `cidrs` field (a
 * ServiceCIDR as a source lists it, or a spec), that field; for one with a `spec.cidrs` field (a
 * ServiceCIDR as the API server answers it), that one; else nothing to add.
 */
function specHint(cidrs: unknown): string {
  if (typeof cidrs !== 'object' || cidrs === null) return '';
  if (readMember(cidrs, 'cidrs', 'spec') !== undefined) return ': pass its `cidrs` array, not the object holding it';
  const spec = readMember(cidrs, 'spec', 'spec.cidrs');
  if (typeof spec !== 'object' || spec === null || readMember(spec, 'cidrs', 'spec.cidrs') === undefined) return '';
  return ': pass its `spec.cidrs` array, not the object holding it';
}

/** The error for an empty name, in the API server's words. */
const NAME_REQUIRED = 'ServiceCIDR metadata.name: Required value: name is required';

/**
 * metadata.name must be a DNS-1123 subdomain, as the API server requires (NameIsDNSSubdomain);
 * refused in its words (label-rules.ts is their one home), each problem named.
 */
function checkName(name: unknown): void {
  if (typeof name !== 'string') {
    throw new InvalidArgumentError(`ServiceCIDR metadata.name: Invalid value: ${quoteInput(name)}: must be a string`);
  }
  if (name === '') throw new InvalidArgumentError(NAME_REQUIRED);
  const problems = dns1123SubdomainProblems(name);
  if (problems.length > 0) {
    throw new InvalidArgumentError(`ServiceCIDR metadata.name: Invalid value: ${quoteInput(name)}: ${problems.join('; ')}`);
  }
}

export interface AddServiceCIDROptions {
  /** The Ready condition (default: none, which counts as ready). */
  ready?: boolean | undefined;
  /** Skip the API server's validation of `cidrs` (to feed a MetaAllocator malformed objects in tests); at most 64 entries still. */
  unvalidated?: boolean | undefined;
}

/** Receives the error a watcher threw, the watcher, and the event it was handling. */
export type ServiceCIDRWatcherErrorHandler = (
  error: unknown,
  watcher: ServiceCIDRWatcher,
  event: { kind: 'add' | 'delete'; serviceCIDR: ServiceCIDR },
) => void;

export interface InMemoryServiceCIDRsOptions {
  /**
   * Called when a watcher throws from onAdd/onDelete, in subscribe's replay too. The change
   * stands, the other watchers still receive it, and the watcher stays subscribed. Default:
   * rethrow the error from a microtask, outside the change, so it reaches the runtime's
   * uncaught-error handler instead of vanishing.
   */
  onWatcherError?: ServiceCIDRWatcherErrorHandler | undefined;
}

/** One change waiting to be delivered: every watcher subscribed when its turn comes gets it. */
interface ServiceCIDREvent {
  readonly kind: 'add' | 'delete';
  readonly serviceCIDR: ServiceCIDR;
}

/**
 * The embedded ServiceCIDR source: a map of objects in creation order. Every change is delivered
 * to the subscribers synchronously, before the method returns (like upstream's test fixture once
 * the worker has synced). A change made by a watcher from inside its callback — or from inside
 * the replay subscribe() gives it — is queued and delivered once the change being delivered (the
 * replay) has reached every watcher it is for, so each watcher sees the changes in the order
 * they were made, after the objects they change.
 */
export class InMemoryServiceCIDRs implements ServiceCIDRSource {
  /** Makes postMessage refuse the source, saying why (SAME_THREAD); first, so it is read first. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: read by structuredClone, not by this code
  private readonly sameThreadOnly = SAME_THREAD;
  /** name → object; Map order = creation order. */
  private readonly objects = new Map<string, ServiceCIDR>();
  /** One entry per subscribe() call (the same watcher subscribed twice is two), as MemoryStore keeps them. */
  private readonly subscriptions = new Set<{ readonly watcher: ServiceCIDRWatcher }>();
  /** Changes not yet delivered (only non-empty while a delivery is running). */
  private readonly queue: ServiceCIDREvent[] = [];
  /**
   * What changes after construction, in one object of its own rather than in fields of the
   * source: a wrapper made with Object.create(source) reads it from the source and so writes the
   * source's own (written onto the wrapper, `clock` gave two ServiceCIDRs one creation time, and
   * a change made on the source during a delivery the wrapper ran was delivered inside it), and a
   * frozen source (Object.freeze) still writes it. `clock` is added to each creationTimestamp;
   * `delivering` is set while a delivery runs (emit, subscribe).
   */
  private readonly state = { clock: 0, delivering: false };
  /**
   * The objects as the changes delivered so far left them (`objects` less the queued ones): what
   * a watcher subscribed during a delivery is replayed, the queued changes reaching it after.
   */
  private readonly delivered = new Map<string, ServiceCIDR>();
  private readonly onWatcherError: ServiceCIDRWatcherErrorHandler;

  /** An empty source; add ServiceCIDRs to it, and give it to a MetaAllocator. */
  constructor(options: InMemoryServiceCIDRsOptions = {}) {
    const handler = optionsObject(options, 'InMemoryServiceCIDRs', { onWatcherError: true }).onWatcherError;
    if (handler !== undefined && typeof handler !== 'function') {
      throw new InvalidArgumentError(`options.onWatcherError must be a function, got ${quoteInput(handler)}`);
    }
    this.onWatcherError = handler ?? rethrowLater;
  }

  /**
   * Creates a ServiceCIDR. Throws InvalidArgumentError when the name is not a DNS subdomain
   * (upstream ValidateServiceCIDRName), an option or `cidrs` is invalid (validateServiceCIDRSpec),
   * and then when the name exists, in that order.
   */
  addServiceCIDR(this: object, name: string, cidrs: readonly string[], options?: AddServiceCIDROptions): ServiceCIDR;
  addServiceCIDR(this: InMemoryServiceCIDRs, name: string, cidrs: readonly string[], options?: AddServiceCIDROptions): ServiceCIDR {
    checkThis(this, 'addServiceCIDR');
    checkName(name);
    const opts = optionsObject(options, 'addServiceCIDR', { ready: true, unvalidated: true });
    if (opts.ready !== undefined && typeof opts.ready !== 'boolean') {
      throw new InvalidArgumentError(`options.ready must be true, false or undefined, got ${quoteInput(opts.ready)}`);
    }
    if (opts.unvalidated !== undefined && typeof opts.unvalidated !== 'boolean') {
      throw new InvalidArgumentError(`options.unvalidated must be true, false or undefined, got ${quoteInput(opts.unvalidated)}`);
    }
    let kept: unknown[];
    if (opts.unvalidated !== true) kept = checkedCIDRs(cidrs);
    else {
      const length = arrayLength(cidrs, 'spec.cidrs');
      if (length === undefined) throw new InvalidArgumentError(`spec.cidrs must be an array, got ${quoteInput(cidrs)}${specHint(cidrs)}`);
      // unvalidated skips the API server's rules, not the size of what it could send
      if (length > MAX_UNVALIDATED_CIDRS) {
        throw new InvalidArgumentError(
          `spec.cidrs holds ${formatCount(length)} entries; even unvalidated, at most ${formatCount(MAX_UNVALIDATED_CIDRS)}`,
        );
      }
      kept = readElements(cidrs, length, 'spec.cidrs');
    }
    // last, as the API server validates an object before it stores it: what is wrong with the
    // call is said first, not hidden behind the name it reuses
    if (this.objects.has(name)) throw new InvalidArgumentError(`servicecidrs.networking.k8s.io "${name}" already exists`);
    const sc: ServiceCIDR = Object.freeze({
      name,
      cidrs: Object.freeze(kept as string[]),
      ready: opts.ready,
      deletionTimestamp: null,
      // strictly increasing, so creation order survives equal wall-clock milliseconds
      creationTimestamp: new Date(Date.now() + this.state.clock++).toISOString(),
    });
    this.objects.set(name, sc);
    this.emit('add', sc);
    return sc;
  }

  /** Sets (true/false) or removes (undefined) the Ready condition. */
  setReady(this: object, name: string, ready: boolean | undefined): ServiceCIDR;
  setReady(this: InMemoryServiceCIDRs, name: string, ready: boolean | undefined): ServiceCIDR {
    checkThis(this, 'setReady');
    if (ready !== undefined && typeof ready !== 'boolean') {
      throw new InvalidArgumentError(`ready must be true, false or undefined, got ${quoteInput(ready)}`);
    }
    return this.update(name, { ready });
  }

  /** Starts deletion: sets deletionTimestamp (the object stays until deleteServiceCIDR). */
  markDeleting(this: object, name: string): ServiceCIDR;
  markDeleting(this: InMemoryServiceCIDRs, name: string): ServiceCIDR {
    checkThis(this, 'markDeleting');
    return this.update(name, { deletionTimestamp: new Date().toISOString() });
  }

  /** Removes the object (its finalizer has run). Throws InvalidArgumentError when absent. */
  deleteServiceCIDR(this: object, name: string): void;
  deleteServiceCIDR(this: InMemoryServiceCIDRs, name: string): void {
    checkThis(this, 'deleteServiceCIDR');
    const sc = this.get(name);
    this.objects.delete(name);
    this.emit('delete', sc);
  }

  /** The object, or an InvalidArgumentError (a name that is no string or is empty, or `not found`). */
  get(this: object, name: string): ServiceCIDR;
  get(this: InMemoryServiceCIDRs, name: string): ServiceCIDR {
    checkThis(this, 'get');
    // refused as addServiceCIDR refuses it: "5 (number) not found" would read as a lookup that missed
    if (typeof name !== 'string') {
      throw new InvalidArgumentError(`ServiceCIDR metadata.name: Invalid value: ${quoteInput(name)}: must be a string`);
    }
    // and so is an empty name (a name left unset, most likely), which no ServiceCIDR can have
    if (name === '') throw new InvalidArgumentError(NAME_REQUIRED);
    const sc = this.objects.get(name);
    // quoted: a name may hold characters a reader cannot see
    if (sc === undefined) throw new InvalidArgumentError(`servicecidrs.networking.k8s.io ${quoteInput(name)} not found`);
    return sc;
  }

  list(this: object): ServiceCIDR[];
  list(this: InMemoryServiceCIDRs): ServiceCIDR[] {
    checkThis(this, 'list');
    return [...this.objects.values()];
  }

  hasSynced(this: object): boolean;
  hasSynced(this: InMemoryServiceCIDRs): boolean {
    checkThis(this, 'hasSynced'); // else true for any object, as if it were a source
    return true;
  }

  /**
   * Replays the objects to `watcher` (onAdd each, in creation order), then delivers it every
   * change. What it changes from inside the replay is delivered to every watcher after the
   * replay, itself included; what it throws is reported (onWatcherError), and it stays subscribed.
   */
  subscribe(this: object, watcher: ServiceCIDRWatcher): () => void;
  subscribe(this: InMemoryServiceCIDRs, watcher: ServiceCIDRWatcher): () => void {
    checkThis(this, 'subscribe');
    checkWatcher(watcher, 'InMemoryServiceCIDRs.subscribe');
    const sub = { watcher };
    const outermost = !this.state.delivering;
    this.state.delivering = true;
    try {
      for (const sc of [...this.delivered.values()]) this.deliver(watcher, { kind: 'add', serviceCIDR: sc });
      this.subscriptions.add(sub);
      if (outermost) this.drain();
    } finally {
      if (outermost) this.endDelivery();
    }
    return () => {
      this.subscriptions.delete(sub);
    };
  }

  private update(name: string, patch: Partial<Pick<ServiceCIDR, 'ready' | 'deletionTimestamp'>>): ServiceCIDR {
    const sc: ServiceCIDR = Object.freeze({ ...this.get(name), ...patch });
    this.objects.set(name, sc); // an existing key keeps its place in creation order
    this.emit('add', sc);
    return sc;
  }

  /** Queues a change and, unless a delivery is already running (re-entrant call), delivers the queue. */
  private emit(kind: 'add' | 'delete', serviceCIDR: ServiceCIDR): void {
    this.queue.push({ kind, serviceCIDR });
    if (this.state.delivering) return;
    this.state.delivering = true;
    try {
      this.drain();
    } finally {
      this.endDelivery();
    }
  }

  /** Delivers the queued changes, those queued meanwhile too, each to the watchers subscribed when its turn comes. */
  private drain(): void {
    for (let i = 0; i < this.queue.length; i++) {
      const event = this.queue[i]!;
      // delivered from now on: a watcher subscribed during it is replayed the object as it leaves it
      if (event.kind === 'add') this.delivered.set(event.serviceCIDR.name, event.serviceCIDR);
      else this.delivered.delete(event.serviceCIDR.name);
      for (const s of [...this.subscriptions]) {
        // unsubscribed by an earlier watcher of this event (subscribed again: replayed already)
        if (!this.subscriptions.has(s)) continue;
        this.deliver(s.watcher, event);
      }
    }
  }

  /** A delivery ends: drain() delivered the queue (deliver() reports what a watcher throws). */
  private endDelivery(): void {
    this.queue.length = 0;
    this.state.delivering = false;
  }

  private deliver(watcher: ServiceCIDRWatcher, event: ServiceCIDREvent): void {
    try {
      if (event.kind === 'add') watcher.onAdd(event.serviceCIDR);
      else watcher.onDelete(event.serviceCIDR);
    } catch (e) {
      this.report(e, watcher, event);
    }
  }

  private report(error: unknown, watcher: ServiceCIDRWatcher, event: ServiceCIDREvent): void {
    try {
      this.onWatcherError(error, watcher, event);
    } catch (e) {
      rethrowLater(e);
    }
  }
}

/**
 * Refuses a method of InMemoryServiceCIDRs called without its object (unboundCall): taken off it
 * or passed as a callback, where `this` is undefined or another object. Checked first: none is on
 * the allocation path (a MetaAllocator asks hasSynced only until it answers true).
 */
function checkThis(self: unknown, method: string): void {
  if (!(self instanceof InMemoryServiceCIDRs)) throw unboundCall(self, 'InMemoryServiceCIDRs', method);
}
