// RecordRouter: a MetaAllocator's one subscription to the store's cache, handing each event to
// the ranges (their TakenAddresses) whose prefix contains its address; its table of the ranges
// by prefix is the one the MetaAllocator finds its ranges in.
import type { Family } from './address.ts';
import { cmp4, type Prefix } from './geometry.ts';
import { NameTable } from './name-table.ts';
import { PrefixTable } from './prefix-table.ts';
import { quoteInput } from './quote.ts';
import { parseRecordName } from './records.ts';
import type { IPAddressRecord, StoreWatcher } from './store.ts';
import type { RecordFeed } from './taken-addresses.ts';

/**
 * One range in the router's table, held under its prefix: the watcher of its TakenAddresses, what
 * that subscription gave as `writing`, and the range its owner attached to it (attach; null while
 * the range is being built). The owner finds its ranges by address in the same table
 * (containing), so a range is routed events exactly while its owner can find it: a range the
 * owner drops (drop) hears nothing more, even while its allocator waits to be destroyed.
 * @internal
 */
export interface Slot<R> {
  readonly prefix: Prefix;
  readonly watcher: StoreWatcher;
  readonly writing: (() => string | null) | undefined;
  range: R | null;
}

/**
 * One subscription to a store's cache for the TakenAddresses of many ranges of one family (a
 * MetaAllocator's): each event's name is parsed once, and the event goes only to the watchers
 * whose prefix contains the address (overlapping ranges all get it), found in a PrefixTable —
 * where a subscription per range would have every range hear, and parse, every event. (The
 * handlers of the ranges reached parse the name again: parseRecordName's memo answers them.)
 * Its owner subscribes to the cache and hands each event to onAdd, onDelete and onResync.
 *
 * The table is the owner's too: it attaches each range (`R`) to the slot its allocator's
 * subscription made, and looks ranges up by address in it (containing). A look-up by the owner
 * and the events of that address that follow it (a release and its delete event) are one walk
 * of the table: it answers the address it last looked up from its memo (PrefixTable.containing).
 *
 * A watcher's replay is the records as the events delivered here left them (`records`), not the
 * cache's list(): the cache may already hold a write whose event has yet to come here (queued
 * behind the event being delivered, or coming to the owner after the watcher that made the range
 * during it). Replayed from the list, that record would reach the new watcher twice (counted
 * twice in its used()), and a delete on its way, for a record it never saw, once too often.
 *
 * A replay gives a watcher the records its prefix contains only (its handlers would drop the
 * others). Building many ranges in a row (a source's first replay: 1,000 ServiceCIDRs over 10^5
 * records) would read every record once per range; so once the replays since the last event have
 * read the records about as many times as a sort costs (sortingReplay), a replay reads a copy of
 * the records sorted by address (`sorted`), made once and dropped by the next event, and finds a
 * prefix's records with two binary searches:
 *
 *   records (insertion order)    10.0.0.9  10.1.0.4  10.0.0.2  10.2.0.7
 *   sorted  (by address)         10.0.0.2  10.0.0.9  10.1.0.4  10.2.0.7
 *                                └ 10.0.0.0/16 ────┘ └ 10.1.0.0/16
 *
 * The first replays after an event read `records` as they are: a range added now and then
 * between allocations, or two at a time, pays a pass each and no sort. An event only drops the
 * copy: the allocation path pays one field write.
 * @internal
 */
export class RecordRouter<R = unknown> implements RecordFeed {
  /** A slot per subscription (per range), by prefix; replaced by close(). */
  private table = new PrefixTable<Slot<R>>();
  /** The subscriptions held (in `table`). */
  private subscriptions = 0;
  /**
   * The records of the family by name, as of the last event delivered here: what a replay gives.
   * A NameTable, not a Map: every event of the family sets or deletes an entry, and a Map's
   * deleted entries stay in its chains until it rebuilds (measured: a MetaAllocator's
   * allocateNext + release on a MemoryStore cost 12 % more with a Map).
   */
  private records = new NameTable();
  /** `records` sorted by address; null since an event changed them (or before a second replay). */
  private sorted: SortedRecords | null = null;
  /** Replays since the last event: the one sortingReplay names sorts. */
  private replays = 0;
  private readonly words = new Uint32Array(4);
  /** Set by close(): every event (add, delete, re-list) is ignored from then on. */
  private closed = false;
  /**
   * While exactly one subscription is held (else null): it, as a bucket of the table, and its
   * `writing`, which route() asks.
   */
  private only: readonly Slot<R>[] | null = null;
  private onlyWriting: (() => string | null) | undefined = undefined;

  constructor(private readonly fam: Family) {}

  /**
   * Holds `watcher` for the addresses of `prefix`, after giving it every record of the family
   * inside `prefix` that the events have brought so far, as a cache replays its records to a new
   * watcher. A replay that throws leaves it unsubscribed, as the cache's own subscribe does.
   * `writing` (RecordFeed): the record name of the watcher's own synchronous store call running.
   */
  subscribe(prefix: Prefix, watcher: StoreWatcher, writing?: () => string | null): () => void {
    const slot: Slot<R> = { prefix, watcher, writing, range: null };
    this.table.add(slot);
    this.subscriptions++;
    this.changedSubscriptions();
    try {
      // what the replay reads stays as it is: an event during it (a watcher writing) changes
      // `records` and reaches this watcher through the table
      for (const r of this.inPrefix(prefix)) watcher.onAdd(r);
    } catch (e) {
      this.drop(slot);
      throw e;
    }
    return () => this.drop(slot);
  }

  /**
   * Attaches `range` to the slot of the subscription made for `prefix` (the very Prefix object
   * the range's allocator subscribed with) and returns it: what containing() finds it by, and
   * drop() takes back. Throws when no such subscription is held (its allocator subscribes as it
   * is built: the owner attaches a range it has just built).
   */
  attach(prefix: Prefix, range: R): Slot<R> {
    // the slots containing its network hold its own
    for (const slot of this.table.containing(prefix.version, prefix.network)) {
      if (slot.prefix !== prefix || slot.range !== null) continue;
      slot.range = range;
      return slot;
    }
    throw new Error(`RecordRouter: no subscription of the range ${prefix.cidr} to attach it to`);
  }

  /**
   * The slots whose prefix contains the address `w` (four u32 words, as parseAddrInto writes
   * them; network and broadcast included), shortest prefix first: PrefixTable.containing.
   * Read-only.
   */
  containing(w: ArrayLike<number>): readonly Slot<R>[] {
    return this.table.containing(this.fam, w);
  }

  /** Look-ups of its table that walked it, not answered from its memo (PrefixTable.lookUps), since the last close(). */
  get lookUps(): number {
    return this.table.lookUps;
  }

  /**
   * Lets go of a slot (what subscribe made, attach returned): its watcher hears no event from
   * now on, and containing() no longer finds its range. A slot let go already: nothing.
   */
  drop(slot: Slot<R>): void {
    if (!this.table.delete(slot)) return;
    this.subscriptions--;
    this.changedSubscriptions();
  }

  /** A subscription was added or let go: `only` follows. */
  private changedSubscriptions(): void {
    const one = this.subscriptions === 1;
    this.only = one ? this.table.all() : null;
    this.onlyWriting = one ? this.only![0]!.writing : undefined;
  }

  /** The records inside `prefix` (network and broadcast included), as `records` holds them now. */
  private inPrefix(p: Prefix): IPAddressRecord[] {
    if (++this.replays >= sortingReplay(this.records.size) && this.records.size > 0) {
      this.sorted ??= SortedRecords.of(this.records.values(), this.fam);
      return this.sorted.inPrefix(p);
    }
    const out: IPAddressRecord[] = [];
    const w = this.words;
    for (const r of this.records.values()) {
      parseRecordName(r.name, w); // of this family: onAdd kept no other
      if (p.contains(this.fam, w)) out.push(r);
    }
    return out;
  }

  /**
   * Forgets every record and every slot, and keeps none from later events: its owner is done with
   * it (a destroyed MetaAllocator holds no record or range alive), even when the store goes on
   * delivering events (a store of your own whose unsubscribe threw). A watcher still subscribed
   * (a range whose destroy waits for its strategy to return) hears nothing more.
   */
  close(): void {
    this.closed = true;
    this.table = new PrefixTable();
    this.subscriptions = 0;
    this.only = null;
    this.onlyWriting = undefined;
    this.records = new NameTable();
    this.sorted = null;
    this.replays = 0;
  }

  onAdd(r: IPAddressRecord, previous: IPAddressRecord | undefined): void {
    if (this.closed) return;
    const to = this.route(r.name);
    if (to === null) return;
    this.records.set(r.name, r); // before the delivery: a range made during it has it from its replay, and is not in `to`
    this.changed();
    let failures: Failure[] | null = null;
    for (let i = 0; i < to.length; i++) {
      try {
        to[i]!.watcher.onAdd(r, previous);
      } catch (error) {
        (failures ??= []).push({ prefix: to[i]!.prefix, error }); // the others hear of it all the same, as they would from the cache
      }
    }
    if (failures !== null) throw oneError(failures, `the add of ${r.name}`);
  }

  onDelete(r: IPAddressRecord): void {
    if (this.closed) return;
    const to = this.route(r.name);
    if (to === null) return;
    this.records.delete(r.name);
    this.changed();
    let failures: Failure[] | null = null;
    for (let i = 0; i < to.length; i++) {
      try {
        to[i]!.watcher.onDelete(r);
      } catch (error) {
        (failures ??= []).push({ prefix: to[i]!.prefix, error });
      }
    }
    if (failures !== null) throw oneError(failures, `the delete of ${r.name}`);
  }

  /** A re-list concerns every watcher. */
  onResync(): void {
    if (this.closed) return;
    let failures: Failure[] | null = null;
    for (const slot of this.table.all()) {
      try {
        slot.watcher.onResync?.();
      } catch (error) {
        (failures ??= []).push({ prefix: slot.prefix, error });
      }
    }
    if (failures !== null) throw oneError(failures, 'a re-list');
  }

  /** `records` changed: the sorted copy is out of date, and the next replay reads `records` again. */
  private changed(): void {
    this.sorted = null;
    this.replays = 0;
  }

  /** The watchers whose prefix contains the address `name`; null when it is no address of this family. */
  private route(name: string): readonly Slot<R>[] | null {
    // The only subscriber's own write, in its synchronous store call: an address inside its
    // prefix, and no other prefix is held, so the name need not be parsed and looked up — a
    // MetaAllocator over one range, both events of each allocation and release.
    if (this.onlyWriting !== undefined && this.onlyWriting() === name) return this.only;
    const w = this.words;
    return parseRecordName(name, w) === this.fam ? this.table.containing(this.fam, w) : null;
  }
}

/**
 * The replay, counted from the last event, that sorts `n` records for itself and the replays
 * after it. A sort costs about log2(n) / 2.5 passes over the records (measured: 3 passes at 10^3
 * records, 7 at 10^5): sorting once the passes since the event have cost most of a sort spends
 * at most about twice what the cheaper choice would have over any run of replays, and the third
 * replay at the earliest, so that two ranges built per event (a ServiceCIDR listing two CIDRs of
 * the family) never pay a sort, which cost them 3.5 times their two passes at 10^5 records.
 */
function sortingReplay(n: number): number {
  return Math.max(3, Math.ceil(Math.log2(n) / 3));
}

/** What one range's handler threw, and the range's prefix. */
interface Failure {
  readonly prefix: Prefix;
  readonly error: unknown;
}

/**
 * What the store is told when the handlers of ranges threw on one event (`what`): the error
 * itself when one did, as a cache tells any watcher's; else an AggregateError whose `errors` are
 * every one of them, in delivery order, and whose message names each range — the store reports
 * one error per watcher (MemoryStore's onWatcherError), and the ranges share one.
 */
function oneError(failures: readonly Failure[], what: string): unknown {
  if (failures.length === 1) return failures[0]!.error;
  const each = failures.map((f) => `${f.prefix.cidr}: ${f.error instanceof Error ? f.error.message : quoteInput(f.error)}`);
  return new AggregateError(
    failures.map((f) => f.error),
    `the handlers of ${failures.length} ranges threw on ${what} (${each.join('; ')})`,
  );
}

/**
 * Records sorted by address, four words each in `words` (IPv4: [0, 0, 0, v4]), for the replays
 * of RecordRouter: a prefix's records are one run of it, found by two binary searches.
 */
class SortedRecords {
  private constructor(
    private readonly words: Uint32Array,
    private readonly records: readonly IPAddressRecord[],
  ) {}

  /** `records` (names of the family `fam`), sorted: O(n log n), each name parsed once. */
  static of(records: readonly IPAddressRecord[], fam: Family): SortedRecords {
    const n = records.length;
    const unsorted = new Uint32Array(n * 4);
    const list: IPAddressRecord[] = [];
    const w = new Uint32Array(4);
    for (const r of records) {
      parseRecordName(r.name, w);
      unsorted.set(w, list.length * 4);
      list.push(r);
    }
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    if (fam === 4) order.sort((a, b) => unsorted[a * 4 + 3]! - unsorted[b * 4 + 3]!);
    else order.sort((a, b) => compareWords(unsorted, a, unsorted, b));
    const words = new Uint32Array(n * 4);
    const sorted: IPAddressRecord[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const j = order[i]!;
      words.set(unsorted.subarray(j * 4, j * 4 + 4), i * 4);
      sorted[i] = list[j]!;
    }
    return new SortedRecords(words, sorted);
  }

  /** The records in [network, broadcast] of `p`, by address. */
  inPrefix(p: Prefix): IPAddressRecord[] {
    return this.records.slice(this.lowerBound(p.network, 0), this.lowerBound(p.broadcast, 1));
  }

  /**
   * The first index whose address is ≥ `target` (`past` 0), or > it (`past` 1): where a run
   * starting at `target` begins, or where one ending at it ends.
   */
  private lowerBound(target: Uint32Array, past: 0 | 1): number {
    let lo = 0;
    let hi = this.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareWords(this.words, mid, target, 0) < past) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** cmp4 of the address at index `i` of `a` and that at index `j` of `b` (four words each). */
function compareWords(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  const x = i * 4;
  const y = j * 4;
  return cmp4(a[x]!, a[x + 1]!, a[x + 2]!, a[x + 3]!, b[y]!, b[y + 1]!, b[y + 2]!, b[y + 3]!);
}
