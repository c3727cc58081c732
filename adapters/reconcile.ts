// reconcile: find (and optionally delete) IPAddress records whose owner the caller does not know
// — the leaks a failed or interrupted allocation leaves behind.
//
// Why leaks exist: an allocation is one create of the record named by the address. When the
// create reaches the store but its reply does not reach the allocator (a timeout, a reset
// connection, a crash between the IPAddress create and the Service create), the caller sees an
// error while the record exists. A release whose delete failed leaves a record the caller
// considers freed. Neither is a duplicate — the store's create is the lock, so no address is
// ever held twice — but the address stays taken until someone deletes the record.
//
// Upstream (pkg/registry/core/service/ipallocator/controller/repairip.go) runs a repair loop in kube-apiserver: an
// IPAddress managed by `ipallocator.k8s.io` whose parent Service does not exist is deleted once it
// is older than 60 s (the grace covers the window between the IPAddress create and the Service
// create). `reconcile` is the same rule as a function the caller runs with the owners it knows:
//
//   records = store.cache.list({managed-by: ipallocator.k8s.io})   (optionally one family)
//   leak    = record whose parentRef is null or not in knownOwners
//   young   = leak created less than graceMs ago (kept, reported separately)
//   delete  = options.delete: store.delete(name) for every leak past the grace
//             (NotFound counts as done; other errors are reported, never thrown; a record the
//             store still holds afterwards, a finalizer's, is reported as held)
//
// Records of other controllers (no managed-by label) are never touched. Given an allocator, only
// the records inside its range(s) are considered: the store may be shared with allocators of
// other ranges (kube-apiserver's own included), whose owners this caller does not know. The
// cache view is used, as upstream's repair loop uses its informer: run it after the cache has
// synced.
import { isDryRun } from './dry-run.ts';
import { InvalidArgumentError, isDestroyed, isNotFound } from './errors.ts';
import { checkIPFamily, optionsObject, readMember, unreadableInput } from './input.ts';
import { quoteInput } from './quote.ts';
import { Prefix } from './geometry.ts';
import { Range } from './range.ts';
import { parseRecordName, requireParentRef } from './records.ts';
import {
  cacheList,
  CONTROLLER_NAME,
  LABEL_IP_FAMILY,
  LABEL_MANAGED_BY,
  RECONCILE_GRACE_MS,
  type IPAddressRecord,
  recordAnswer,
  type Store,
  syncAnswer,
  type ParentRef,
} from './store.ts';
import type { IPAllocator, IPFamily } from './types.ts';

export { RECONCILE_GRACE_MS };

/**
 * InvalidArgumentError for an allocator without a `store`, saying what to pass instead: a dry-run
 * view and a DualStackAllocator (told by `allocator(family)` and no `cidr`, which every
 * IPAllocator has) have none to be given, an IPAllocator of your own may be given one.
 */
function withoutStore(target: object): InvalidArgumentError {
  const instead = isDryRun(target, 'target')
    ? 'a dry-run view has none: pass the allocator it views (with `delete: false`, reconcile only reports)'
    : target instanceof Range
      ? 'a Range keeps its addresses in memory, with no store and no owners, so nothing of it can leak; reconcile reads the records of a Store (or of an allocator over one)'
      : typeof (target as { allocator?: unknown }).allocator === 'function' && !('cidr' in target)
        ? "pass each of its allocators, allocator('IPv4') and allocator('IPv6'), or the store itself (every managed record on it is then read)"
        : "give it one (a readonly `store` field), or pass the store itself (every managed record on it is then read, not only its range's)";
  return new InvalidArgumentError(
    `reconcile needs the store of the allocator it is given, and ${quoteInput(target)} has no \`store\`: ${instead}`,
  );
}

/**
 * What reconcile() reads the records from: a Store (every managed record in it), or an allocator
 * over one, of which only the records inside its range are read (a MetaAllocator's: inside any
 * of its ranges). reconcile needs the allocator's store: Allocator, ReferenceAllocator and
 * MetaAllocator have it as `store`, and so may an IPAllocator of your own; one without a `store`
 * is refused (InvalidArgumentError).
 */
export type ReconcileTarget = Store | IPAllocator | { readonly store: Store };

export interface ReconcileOptions {
  /** Delete the leaks past the grace (default false: report only). */
  delete?: boolean | undefined;
  /** Leaks no older than this (by creationTimestamp) are kept. Default 60 s (upstream); 0 = no grace. */
  graceMs?: number | undefined;
  /** Only records labelled with this family. */
  family?: IPFamily | undefined;
  /** The clock, in ms since the epoch (tests). Default Date.now. */
  now?: (() => number) | undefined;
}

/**
 * What reconcile() answers, frozen: the answer, its lists and the entries of `errors` (the records
 * are the store's, as its cache listed them; the errors, as they were thrown).
 */
export interface ReconcileResult {
  /** Records no known owner holds, past the grace. */
  readonly leaks: readonly IPAddressRecord[];
  /** Records no known owner holds, still inside the grace (or of unknown age, unless graceMs is 0). */
  readonly young: readonly IPAddressRecord[];
  /** Names deleted (or found already gone). */
  readonly deleted: readonly string[];
  /**
   * Names whose delete the store accepted but whose record (the same uid) it still holds: a finalizer
   * holds the IPAddress, which the API server only marked for deletion. The address stays taken
   * until whoever owns the finalizer removes it.
   */
  readonly held: readonly string[];
  /**
   * Deletes that failed (the records stay and will be reported again next time), and deletes
   * accepted whose reading back failed (gone, or held by a finalizer: the next run tells).
   */
  readonly errors: readonly { readonly name: string; readonly error: unknown }[];
}

/**
 * The identity of an owner: group/resource/namespace/name, "" for a field that is absent (undefined
 * or null) — as in Kubernetes, where a ParentReference field left out reads as "" (Go's zero value;
 * upstream's repair loop then looks up a Service named "", which does not exist). Absence is never
 * written as text: a parentRef without a name must not read as owned by a Service named
 * "undefined", a name Kubernetes allows.
 */
export function ownerKey(ref: ParentRef): string {
  if (typeof ref !== 'object' || ref === null)
    throw new InvalidArgumentError(`an owner must be a ParentRef object, got ${quoteInput(ref)}`);
  // each field read once, as a caller's input: a revoked Proxy, a getter that throws is refused
  const field = (key: keyof ParentRef): string | null | undefined => {
    const v = readMember(ref, key, 'owner');
    if (v === undefined || v === null || typeof v === 'string') return v;
    throw new InvalidArgumentError(`owner.${key} must be a string, got ${quoteInput(v)}`);
  };
  return `${field('group') ?? ''}/${field('resource') ?? ''}/${field('namespace') ?? ''}/${field('name') ?? ''}`;
}

/**
 * A knownOwners predicate whose every answer is checked to be true or false: a promise (an async
 * predicate asking the cluster) is truthy and would make every record known, and `undefined` (a
 * missing return) falsy, every record a leak, deleted with `delete: true`. Either is refused
 * before anything is deleted, in the pass that finds the leaks.
 */
function knownBy(predicate: (owner: ParentRef | null, record: IPAddressRecord) => unknown) {
  return (owner: ParentRef | null, record: IPAddressRecord): boolean => {
    const answer = predicate(owner, record);
    if (answer === true || answer === false) return answer;
    // the advice fits the cause: an async predicate is told how to ask the cluster, a missing
    // return is named, any other value is only shown
    let advice = '';
    if (typeof answer === 'object' && answer !== null && typeof (answer as { then?: unknown }).then === 'function') {
      (answer as PromiseLike<unknown>).then(undefined, () => {}); // its outcome is not ours to report
      advice = ': to ask the cluster, read its owners first and pass them (ParentRefs, or a predicate over what you read)';
    } else if (answer === undefined) {
      advice = ' (a missing return?)';
    }
    throw new InvalidArgumentError(
      `knownOwners must answer true or false at once; for ${quoteInput(record.name)} it answered ${quoteInput(answer)}${advice}`,
    );
  };
}

/**
 * Lists the records of `target` managed by the allocator whose owner is not in `knownOwners`, and
 * deletes them when asked; a record made without an owner (parentRef null) is among them unless
 * the predicate, given null for it, keeps it. `target`: a Store (every managed record in it), or an allocator (only
 * the records of its family inside its range; a MetaAllocator's: inside any of its ranges).
 * `knownOwners`: ParentRefs, each checked as allocate() checks its `owner` (InvalidArgumentError
 * naming the item, e.g. `knownOwners[1].resource: Required value`, before anything is read), or a
 * predicate over a record's parentRef.
 *
 * Rejects with ErrDestroyed when the allocator is destroyed before it settles (by the predicate, a
 * store watcher, or another task while a store call is awaited) or the store is closed meanwhile:
 * no store call follows the destroy; the records deleted before it stay deleted.
 */
export async function reconcile(
  target: ReconcileTarget,
  knownOwners: Iterable<ParentRef> | ((owner: ParentRef | null, record: IPAddressRecord) => boolean),
  options?: ReconcileOptions,
): Promise<ReconcileResult> {
  const opts = optionsObject(options, 'reconcile', { delete: true, graceMs: true, family: true, now: true });
  if (typeof target !== 'object' || target === null) {
    throw new InvalidArgumentError(`reconcile needs a Store or an allocator, got ${quoteInput(target)}`);
  }
  let store: Store;
  let allocator: boolean;
  try {
    store = 'create' in target ? target : (target as { store?: Store }).store!;
    allocator = !('create' in target) && typeof (target as Partial<IPAllocator>).allocateNext === 'function';
    if (allocator && store == null) throw withoutStore(target);
  } catch (e) {
    throw unreadableInput('target', e); // a revoked Proxy, a throwing `store` getter; ours passes as it is
  }
  let isStore: boolean;
  try {
    isStore = typeof store === 'object' && store !== null && typeof store.delete === 'function' && typeof store.cache?.list === 'function';
  } catch (e) {
    throw unreadableInput(store === target ? 'target' : 'target.store', e); // a revoked Proxy as the store
  }
  if (!isStore) throw new InvalidArgumentError(`reconcile needs a Store or an allocator, got ${quoteInput(target)}`);
  const alive = aliveCheck(target);
  alive();
  const inScope = 'create' in target ? null : scopeOf(target);
  let known: (owner: ParentRef | null, record: IPAddressRecord) => boolean;
  if (typeof knownOwners === 'function') {
    known = knownBy(knownOwners);
  } else {
    // Each owner is checked as allocate() checks its `owner`: a misspelt or missing field would
    // otherwise match no record, and every record would read as a leak (and be deleted).
    let owners: unknown[] | undefined;
    try {
      // the caller's code runs here: a Proxy's `has` trap, the iterator and its next()
      owners = typeof knownOwners === 'object' && knownOwners !== null && Symbol.iterator in knownOwners ? [...knownOwners] : undefined;
    } catch (e) {
      throw unreadableInput('knownOwners', e); // a revoked Proxy, an iterator that throws
    }
    if (owners === undefined) {
      throw new InvalidArgumentError(`knownOwners must be ParentRefs or a function, got ${quoteInput(knownOwners)}`);
    }
    // each read as allocate() reads its owner (a field whose getter throws: knownOwners[i].name)
    const keys = new Set(owners.map((ref, i) => ownerKey(requireParentRef(ref, `knownOwners[${i}]`))));
    known = (owner) => owner !== null && keys.has(ownerKey(owner));
  }
  const grace = opts.graceMs === undefined ? RECONCILE_GRACE_MS : opts.graceMs;
  if (opts.delete !== undefined && typeof opts.delete !== 'boolean') {
    throw new InvalidArgumentError(`delete must be true or false, got ${quoteInput(opts.delete)}`);
  }
  if (typeof grace !== 'number' || !Number.isFinite(grace) || grace < 0) {
    throw new InvalidArgumentError(`graceMs must be a non-negative number, got ${quoteInput(grace)}`);
  }
  if (opts.family !== undefined) checkIPFamily(opts.family);
  if (opts.now !== undefined && typeof opts.now !== 'function') {
    throw new InvalidArgumentError(`now must be a function answering ms since the epoch, got ${quoteInput(opts.now)}`);
  }
  const now = (opts.now ?? Date.now)();
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new InvalidArgumentError(`now() must answer a finite number of ms since the epoch, got ${quoteInput(now)}`);
  }
  alive(); // destroyed by `now` or by iterating `knownOwners`
  const selector: Record<string, string> = { [LABEL_MANAGED_BY]: CONTROLLER_NAME };
  if (opts.family !== undefined) selector[LABEL_IP_FAMILY] = opts.family;

  /** Whether `r` is older than the grace (upstream's repair loop: repairip.go, ipLifetime > gracePeriod). */
  const pastGrace = (r: IPAddressRecord): boolean => {
    const created = r.creationTimestamp === undefined ? NaN : Date.parse(r.creationTimestamp);
    return grace === 0 || (!Number.isNaN(created) && now - created > grace);
  };
  const leaks: IPAddressRecord[] = [];
  const young: IPAddressRecord[] = [];
  for (const r of cacheList(store.cache, selector)) {
    // Checked again here: a store whose list ignores the selector would otherwise have another
    // controller's records deleted.
    const labels = r.labels ?? {};
    if (labels[LABEL_MANAGED_BY] !== CONTROLLER_NAME || (opts.family !== undefined && labels[LABEL_IP_FAMILY] !== opts.family)) continue;
    if (inScope !== null && !inScope(r.name)) continue;
    if (known(r.parentRef, r)) continue;
    (pastGrace(r) ? leaks : young).push(r);
  }
  alive(); // destroyed by the `known` predicate

  const deleted: string[] = [];
  const held: string[] = [];
  const errors: ReconcileResult['errors'][number][] = [];
  if (opts.delete === true) {
    const sync = store.sync ?? null;
    /**
     * Whether the record as read now is still a leak: its owner still unknown, itself past the
     * grace (a record created again meanwhile is young), and, where records carry a uid, the
     * same object unchanged. A store whose records carry no uid is judged by the record read.
     */
    const stillLeak = (r: IPAddressRecord, current: IPAddressRecord): boolean =>
      (current === r || r.uid === undefined || (current.uid === r.uid && current.resourceVersion === r.resourceVersion)) &&
      pastGrace(current) &&
      !known(current.parentRef, current);
    /**
     * Whether the store still holds the object after its delete was accepted: the Store's delete
     * answers nothing, and an API server answers a delete of an object a finalizer holds by only
     * marking it. A read that shows the same uid says so. A read that fails says neither: the
     * name goes to `errors`, to be looked at again next time (gone, or held).
     */
    const stillThere = async (name: string, before: IPAddressRecord): Promise<boolean> => {
      try {
        const after = recordAnswer(await store.get(name), 'get', name);
        return after !== null && after.uid !== undefined && after.uid === before.uid;
      } catch (e) {
        if (isDestroyed(e)) throw e; // the store was closed: nothing to tell, the run ends
        const why = e instanceof Error ? e.message : String(e);
        throw new Error(`${name}: the delete was accepted, but reading it back to tell deleted from held failed: ${why}`, { cause: e });
      }
    };
    for (const r of leaks) {
      // An allocator destroyed meanwhile ends the run before its next store call: by the
      // watchers of the last delete (a MemoryStore tells them inside deleteSync), by the
      // predicate, or by another task while a store call was awaited. Each alive() below
      // follows one of those.
      alive();
      try {
        // Read again first: while this ran, the address may have been released and allocated
        // to a known owner (a Store's delete has no precondition). A store with synchronous
        // operations reads and deletes in one step; through promises a window is left between
        // the read and the delete, as long as the store's delete takes to arrive.
        if (sync !== null) {
          const current = recordAnswer(syncAnswer(sync.getSync(r.name), 'getSync'), 'sync.getSync', r.name);
          if (current !== null) {
            if (!stillLeak(r, current)) continue;
            alive();
            syncAnswer(sync.deleteSync(r.name), 'deleteSync');
          }
          deleted.push(r.name);
          continue;
        }
        const answer = await store.get(r.name);
        alive(); // before the answer is judged: a run whose allocator was destroyed meanwhile ends
        const current = recordAnswer(answer, 'get', r.name);
        if (current === null) {
          deleted.push(r.name); // gone already
          continue;
        }
        if (!stillLeak(r, current)) continue;
        alive();
        await store.delete(r.name);
        alive(); // the delete is done; its reading back is not
        if (await stillThere(r.name, current)) held.push(r.name);
        else deleted.push(r.name);
      } catch (e) {
        // ErrDestroyed, from alive() or from a store closed meanwhile, ends the run: every
        // later store call would fail the same way
        if (isDestroyed(e)) throw e;
        if (isNotFound(e)) deleted.push(r.name);
        else errors.push(Object.freeze({ name: r.name, error: e }));
      }
    }
  }
  alive(); // destroyed while the last read was awaited: the run ends as every other does
  return Object.freeze({
    leaks: Object.freeze(leaks),
    young: Object.freeze(young),
    deleted: Object.freeze(deleted),
    held: Object.freeze(held),
    errors: Object.freeze(errors),
  });
}

/**
 * For an allocator: a function that throws its ErrDestroyed once it is destroyed (its `used()`,
 * which every allocator answers in O(1) until then), so a run checks after each callback and
 * each await. For a Store, nothing: a closed store's own calls answer ErrDestroyed.
 */
function aliveCheck(target: ReconcileTarget): () => void {
  if ('create' in target) return () => {};
  const used = (target as { used?: unknown }).used;
  if (typeof used !== 'function') return () => {};
  return () => {
    used.call(target);
  };
}

/**
 * For an allocator: whether a record name is an address inside its range (netip
 * Prefix.Contains), or inside any range of a MetaAllocator (its `ranges()`); null (no limit) for
 * anything else with a `store`.
 */
function scopeOf(target: object): ((name: string) => boolean) | null {
  const t = target as { cidr?: unknown; ranges?: unknown };
  let cidrs: string[];
  if (typeof t.cidr === 'string' && t.cidr !== '') cidrs = [t.cidr];
  else if (typeof t.ranges === 'function') cidrs = (t.ranges as () => { cidr: string }[])().map((r) => r.cidr);
  else return null;
  const prefixes = cidrs.map((c) => Prefix.parse(c));
  const words = new Uint32Array(4);
  // Read as the allocators read record names (parseRecordName: IPv4-mapped text is IPv6, as
  // netip reads it), so a record is in scope exactly when its allocator counts it.
  return (name) => {
    const version = parseRecordName(name, words);
    return version !== 0 && prefixes.some((p) => p.contains(version, words));
  };
}
