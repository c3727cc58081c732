// The held offsets of a cool-down (coolDown, adapters/cool-down.ts): the queue the range that owns
// the index runs (CoolingQueue) — it holds its releases there, returns what is due before each
// choice, and holds again what a failed allocation returned — and what a strategy may see of it
// (Cooling).
import { InvalidArgumentError, OutOfMemoryError } from './errors.ts';
import { unboundCall, unboundRead } from './input.ts';
import type { FreeIndex } from './free-index.ts';
import { OffsetMap } from './offset-map.ts';
import { quoteInput } from './quote.ts';

/**
 * A cool-down's held addresses as a strategy may see them: how many, and whether one is held.
 * Holding and returning them is the range's (see coolingQueueOf).
 */
export class Cooling {
  readonly #queue: CoolingQueue;

  /** @internal made by coolDown's chooser, over a queue of its own */
  constructor(queue: CoolingQueue) {
    // the constructor is reachable from any instance: a queue made elsewhere would be trusted
    // by the range (its claim() decides whether an address is taken)
    if (!CoolingQueue.isQueue(queue)) throw new InvalidArgumentError('a Cooling is made by coolDown(…).forRange, over its own queue');
    this.#queue = queue;
    QUEUES.set(this, queue);
  }

  /** Held offsets. */
  get size(): number {
    try {
      return this.#queue.size;
    } catch (e) {
      // read off another object, off none, or off a wrapper (see isCooling)
      if (Cooling.#isCooling(this)) throw e;
      throw Cooling.#isWrapper(this) ? refuseWrapper('.size is read') : unboundRead(this, 'Cooling', 'size');
    }
  }

  /** Whether (hi, lo) is held. */
  holds(this: object, hi: number, lo: number): boolean;
  holds(this: Cooling, hi: number, lo: number): boolean {
    // a strategy may ask this for each candidate: checked on failure only (the TypeError of #queue
    // read off another object, off none, or off a wrapper)
    try {
      return this.#queue.holds(hi, lo);
    } catch (e) {
      if (Cooling.#isCooling(this)) throw e;
      throw Cooling.#isWrapper(this) ? refuseWrapper('.holds() is called') : unboundCall(this, 'Cooling', 'holds');
    }
  }

  /**
   * Whether `self` is a Cooling itself. An object made from one with Object.create, or a Proxy of
   * one, is `instanceof Cooling` but has no #queue to read through (a #field is not inherited, and
   * a Proxy does not forward it): refused (see isWrapper), not with the TypeError of the read.
   */
  static #isCooling(self: unknown): boolean {
    return typeof self === 'object' && self !== null && #queue in self;
  }

  /**
   * Whether `self`, no Cooling itself, is an instance of Cooling all the same: an object made
   * from one with Object.create, or a Proxy of one. False for anything else, and for a Proxy
   * whose prototype cannot be read (revoked): said as a read without the object.
   */
  static #isWrapper(self: unknown): boolean {
    try {
      return self instanceof Cooling;
    } catch {
      return false;
    }
  }
}

/**
 * Size or holds() asked of an object made from a Cooling with Object.create, or of a Proxy of
 * one, as Range refuses a change asked of a wrapper: the queue is a #field, which the wrapper
 * neither inherits nor is forwarded. `member` is the member and its verb (`.size is read`).
 */
function refuseWrapper(member: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `Cooling${member} only on the Cooling itself, not on an object made from it with Object.create, nor on a Proxy of it: neither reaches the addresses the cool-down holds`,
  );
}

/** Each Cooling's queue: only the range and coolDown's chooser change it. */
const QUEUES = new WeakMap<Cooling, CoolingQueue>();

/**
 * The queue behind a chooser's `cooling`, for the range whose index is `index` to hold its
 * releases there; null when there is none. InvalidArgumentError for anything coolDown did not
 * make (a cool-down of your own would be ignored: the range holds releases only through
 * coolDown's queue), and for a cooling made for another range: its queue would return this
 * range's releases in that range's index, and hand out one of its addresses twice.
 * @internal used by Range and TakenAddresses
 */
export function coolingQueueOf(cooling: Cooling | undefined, index: FreeIndex): CoolingQueue | null {
  if (cooling === undefined || cooling === null) return null;
  const queue = (typeof cooling === 'object' && QUEUES.get(cooling)) || null;
  if (queue === null) {
    throw new InvalidArgumentError(
      `a chooser's cooling must be one coolDown(…).forRange made (leave it out for no cool-down), got ${quoteInput(cooling)}`,
    );
  }
  if (!queue.serves(index)) {
    throw new InvalidArgumentError(
      "a chooser's cooling must be the one coolDown(…).forRange made for this range's view (a restore calls forRange again: make a new chooser each time)",
    );
  }
  return queue;
}

/**
 * Has every later read of the clock behind `cooling`, a chooser's cooling as forRange returned
 * it, made through `guard` (see CoolingQueue.guardClock). Nothing for anything coolDown did not
 * make, which coolingQueueOf refuses when the range takes the chooser.
 * @internal used by guardedStrategy
 */
export function guardClock(cooling: Cooling, guard: (read: () => number) => number): void {
  QUEUES.get(cooling)?.guardClock(guard);
}

/**
 * What a cool-down returned to the free pool during one allocation call (due or early), and how
 * many allocations it counted: held again, in place, if the call fails (CoolingQueue.endCall).
 * @internal used by Range and TakenAddresses
 */
export class CallReturns {
  /** The offsets returned, as (hi, lo) pairs. */
  readonly offsets: number[] = [];
  /** Ticks of a count-based cool-down's clock while it recorded (a Range's takes: each an allocation). */
  ticks = 0;
  /**
   * Set by the owner: the call takes free addresses only, and no held one comes back early (a
   * MetaAllocator's first pass over its ranges: another range's free address comes first).
   */
  freeOnly = false;
  /** Set when freeOnly kept held addresses from coming back early: the call may succeed without it. */
  heldBack = false;

  constructor(
    /** The queue they came from: another queue (a restore or rebuild made a new one) is left alone. */
    readonly queue: CoolingQueue,
  ) {}

  /** Empty again, for the owner's next call (after endCall of the last one: Range reuses one). */
  clear(): void {
    this.offsets.length = 0;
    this.ticks = 0;
    this.freeOnly = false;
    this.heldBack = false;
  }
}

/**
 * An allocateNext over several ranges that first takes free addresses only (MetaAllocator):
 * `heldBack` is set when a range found none because its cool-down held some, which a second
 * pass, held ones allowed, may then give back early.
 * @internal
 */
export interface FreeOnlyPass {
  heldBack: boolean;
}

/** Entries a cool-down queue may hold beyond twice what it keeps (CoolingQueue.keepInProportion). */
const STALE_SLACK = 1024;

/**
 * The held (released, cooling) offsets of one range: marked in its index, queued in release
 * order with the time (or allocation count) at which they return.
 *
 * A call that allocates may return held offsets to the free pool (those due, and when nothing
 * else is free the oldest early); if it then fails, they are held again as they were: same place
 * in line, same deadline. Until the call ends, their FIFO entries stay where they are (in
 * `returned`; compaction keeps them), free to anyone. One rule for such an offset: the entry
 * belongs to whoever holds the offset now. Another call's take of it (a strategy's choice)
 * hands the entry over to that call (took): its failure holds the offset again in place, its
 * success keeps it. A static reservation of it takes the entry's deadline (handOver), as a
 * claim of a held offset does: its failure holds the offset again until then, last in line.
 * Anyone else's mark (a record the cache reports) keeps it: a later delete holds it anew.
 * @internal reached through coolingQueueOf
 */
export class CoolingQueue {
  // FIFO as parallel growable arrays with a head index (compacted when half is consumed)
  private his: number[] = [];
  private los: number[] = [];
  private untils: number[] = [];
  private head = 0;
  /** offset key → its FIFO position (a claimed offset's stale entry is skipped on expiry). */
  private readonly held = new OffsetMap<number>();
  /** Addresses handed out so far (the clock of a count-based cool-down; see tick). */
  private allocations = 0;
  /** The time clock's last reading, and how far it has stepped back in all (≤ 0): see now(). */
  private lastReading = Number.NEGATIVE_INFINITY;
  private steppedBack = 0;
  /**
   * offset key → its FIFO position and the call that returned it to the free pool, for calls
   * still running (not held: its index bit is clear unless someone took it since). The entry
   * stays in the FIFO until that call ends: held again there if the call fails, dropped if it
   * succeeds. (One call's record is not another's: an offset taken, released and returned again
   * by a second call meanwhile is that call's.)
   */
  private readonly returned = new OffsetMap<{ at: number; by: CallReturns }>();
  /** The running call's record of what it returns (set only while its synchronous steps run), or null. */
  private recording: CallReturns | null = null;

  /** The range's own index, writable (held offsets go back through it, and are marked again by endCall). */
  readonly #index: Pick<FreeIndex, 'clear' | 'has' | 'set'>;

  /** How now() reads the time clock: the clock itself, or a call of it through guardClock's guard; null for a count. */
  private readClock: (() => number) | null;

  /** Whether `q` was made by this class (a brand: no other object has its private field). */
  static isQueue(q: unknown): q is CoolingQueue {
    return typeof q === 'object' && q !== null && #index in q;
  }

  constructor(
    index: Pick<FreeIndex, 'clear' | 'has' | 'set'>,
    /** The time clock, or null for a count of allocations. */
    private readonly clock: (() => number) | null,
    private readonly wait: number,
    /** Where the dynamic band starts (offsets below it are the static band). */
    private readonly dynamicFrom = 0,
  ) {
    this.#index = index;
    this.readClock = clock;
  }

  /**
   * Reads the time clock through `guard` from now on (it calls the clock and returns its
   * answer, or throws), in place of any guard set before: a strategy may hand back the cooling
   * it made for an earlier forRange. Nothing for a count.
   */
  guardClock(guard: (read: () => number) => number): void {
    const clock = this.clock;
    if (clock !== null) this.readClock = () => guard(clock);
  }

  /** Held offsets. */
  get size(): number {
    return this.held.size;
  }

  /** Held offsets in the dynamic band. */
  get dynamicSize(): number {
    return this.dynamicHeld;
  }
  private dynamicHeld = 0;

  private isDynamic(hi: number, lo: number): boolean {
    return hi !== 0 || lo >= this.dynamicFrom;
  }

  /** (hi, lo) is no longer held. */
  private unhold(hi: number, lo: number): void {
    this.held.delete(hi, lo);
    if (this.isDynamic(hi, lo)) this.dynamicHeld--;
  }

  /** Whether this queue returns offsets to `index`. */
  serves(index: FreeIndex): boolean {
    return this.#index === index;
  }

  /**
   * Holds nothing any more, without touching the index: for a range whose index was just
   * overwritten (a restore), where a queue its strategy handed back again must not return
   * offsets the new state marks.
   */
  forget(): void {
    this.his = [];
    this.los = [];
    this.untils = [];
    this.head = 0;
    this.held.clear();
    this.dynamicHeld = 0;
    this.returned.clear();
    this.recording = null;
  }

  /**
   * The cool-down's time (or the allocation count). InvalidArgumentError when options.now gives
   * no finite number; its own error when it throws. The time never goes back: where the clock
   * steps back, the time goes on from where it was (every deadline is on this time), so an
   * address released after the step is not held behind the earlier ones until the clock is back
   * where it stood — holds come back in the order they were made, the oldest first. The clock is
   * called with `this` undefined, as a guard calls it: read into a local first, so that it is not
   * called as a method of this queue.
   */
  private now(): number {
    const read = this.readClock;
    if (read === null) return this.allocations;
    const t = read();
    if (typeof t !== 'number' || !Number.isFinite(t)) {
      throw new InvalidArgumentError(`coolDown options.now must return the time in milliseconds, a finite number, got ${quoteInput(t)}`);
    }
    if (t < this.lastReading) this.steppedBack += t - this.lastReading;
    this.lastReading = t;
    return t - this.steppedBack;
  }

  /** Whether (hi, lo) is held (marked in the index, free to everyone but the strategy). */
  holds(hi: number, lo: number): boolean {
    return this.held.size !== 0 && this.held.has(hi, lo);
  }

  /**
   * Starts holding a just-released offset (still marked in the index). The clock is read first:
   * when it fails, this throws and holds nothing. A time-based cool-down first returns what is
   * due: on a range that hears releases but seldom allocates (a standby replica), holds would
   * otherwise outlive their time and grow without bound.
   */
  hold(hi: number, lo: number): void {
    const now = this.now();
    if (this.clock !== null) this.expireBy(now);
    this.enqueue(hi, lo, now + this.wait);
  }

  /**
   * Holds (hi, lo) again until `until`, the end of the hold a claim took it from: the allocation
   * that claimed it failed. Queued last, it returns no earlier than `until`.
   */
  holdAgain(hi: number, lo: number, until: number): void {
    this.enqueue(hi, lo, until);
  }

  /** When the hold of (hi, lo) ends; undefined when it is not held. */
  untilOf(hi: number, lo: number): number | undefined {
    const pos = this.held.size === 0 ? undefined : this.held.get(hi, lo);
    return pos === undefined ? undefined : this.untils[pos];
  }

  private enqueue(hi: number, lo: number, until: number): void {
    const pos = this.his.length;
    this.held.set(hi, lo, pos);
    if (this.isDynamic(hi, lo)) this.dynamicHeld++;
    this.his.push(hi);
    this.los.push(lo);
    this.untils.push(until);
    this.keepInProportion();
  }

  /**
   * Entries of offsets claimed or held again since pile up between expiries: they are dropped
   * once the FIFO holds more than 2 · (held + returned) + STALE_SLACK entries, so that it stays
   * in proportion to what it keeps (check() verifies this after every step). Run wherever the
   * FIFO grows or what it keeps shrinks; each drop is O(entries), paid for by the STALE_SLACK +
   * kept steps it takes to need another.
   */
  private keepInProportion(): void {
    if (this.his.length > 2 * (this.held.size + this.returned.size) + STALE_SLACK) this.dropStale();
  }

  /** Stops holding (hi, lo) because it is taken by hand (or loaded): true if it was held. */
  claim(hi: number, lo: number): boolean {
    if (this.held.size === 0) return false;
    if (!this.held.has(hi, lo)) return false;
    this.unhold(hi, lo);
    this.keepInProportion();
    return true;
  }

  /**
   * The recording call's take just marked (hi, lo), which was free: when another running call
   * returned it, its entry passes to the recording call, whose end keeps it (success) or holds
   * it again in place (failure). Without this, the first call's end finds it taken and leaves it
   * to the taker, whose failure then frees it: the hold is lost.
   */
  took(hi: number, lo: number): void {
    const r = this.recording;
    if (this.returned.size === 0 || r === null) return;
    const entry = this.returned.get(hi, lo);
    if (entry === undefined || entry.by === r) return;
    entry.by = r;
    r.offsets.push(hi, lo);
  }

  /** Whether a running call returned offsets that are not back yet (handOver may find one). */
  get returning(): boolean {
    return this.returned.size !== 0;
  }

  /**
   * A static reservation just marked (hi, lo), which was free: when a running call returned it,
   * that call lets it go, and the deadline of its hold is returned (undefined when none did), for
   * the reservation to hold it again until then if it fails (holdAgain), as after a claim.
   */
  handOver(hi: number, lo: number): number | undefined {
    if (this.returned.size === 0) return undefined;
    const entry = this.returned.get(hi, lo);
    if (entry === undefined) return undefined;
    this.returned.delete(hi, lo);
    const until = this.untils[entry.at];
    this.keepInProportion();
    return until;
  }

  /**
   * An address was handed out (a count-based cool-down's clock): ticked by the owner once per
   * allocation, never per candidate — Range per address it takes (allocateMany's n count n), the
   * Allocator once per allocateNext whose create succeeded. A tick while a call records is taken
   * back if that call fails (endCall).
   */
  tick(): void {
    this.allocations++;
    if (this.recording !== null) this.recording.ticks++;
  }

  /**
   * Records into `r` what is returned to the free pool (and ticked) until record(null): the
   * synchronous steps of the call `r` belongs to.
   */
  record(r: CallReturns | null): void {
    this.recording = r;
  }

  /**
   * Whether held offsets may come back early now: not in a call that takes free addresses only
   * (CallReturns.freeOnly), which is told that some were held back. Asked only where some are held.
   */
  mayReturnEarly(): boolean {
    const r = this.recording;
    if (r === null || !r.freeOnly) return true;
    r.heldBack = true;
    return false;
  }

  /** (hi, lo) at FIFO position `at` leaves the hold for the free pool: noted for the call recording. */
  private noteReturn(hi: number, lo: number, at: number): void {
    const r = this.recording;
    if (r === null) return;
    this.returned.set(hi, lo, { at, by: r });
    r.offsets.push(hi, lo);
  }

  /**
   * The end of the call that recorded `r` (record(null) first). When it succeeded, what it
   * returned stays free. When it failed, each offset it returned that is still free is marked
   * again and held in its old place in line with its old deadline (one taken meanwhile, or held
   * anew by a release, stays as it is), and its ticks are taken back: the queue is as it was
   * before the call. Best effort: when marking one again needs WASM memory there is none of
   * (a sparse index's runs), it and the rest stay free.
   */
  endCall(r: CallReturns, failed: boolean): void {
    const o = r.offsets;
    if (failed) this.allocations -= r.ticks;
    let holding = failed;
    for (let i = 0; i < o.length; i += 2) {
      const hi = o[i]!;
      const lo = o[i + 1]!;
      const entry = this.returned.get(hi, lo);
      if (entry === undefined || entry.by !== r) continue; // handed over to its taker, or returned again since by another call
      this.returned.delete(hi, lo);
      // held anew by a release meanwhile, or marked meanwhile by a record the cache reports (it stays so)
      if (!holding || this.held.has(hi, lo)) continue;
      try {
        if (!this.#index.set(hi, lo)) continue;
      } catch (e) {
        if (!(e instanceof OutOfMemoryError)) throw e;
        holding = false; // the rest stay free
        continue;
      }
      this.held.set(hi, lo, entry.at);
      if (this.isDynamic(hi, lo)) this.dynamicHeld++;
      if (entry.at < this.head) this.head = entry.at;
    }
    this.compact();
  }

  /**
   * Returns to the free pool every held offset whose time has come. Best effort: when the index
   * cannot clear one for lack of WASM memory, the rest stay held (marked, in line) and go back
   * at a later call; the allocation that called this goes on among the free offsets.
   */
  expire(): void {
    if (this.head === this.his.length) return;
    this.expireBy(this.now());
  }

  private expireBy(now: number): void {
    try {
      while (this.head < this.his.length && this.untils[this.head]! <= now) this.pop();
    } catch (e) {
      if (!(e instanceof OutOfMemoryError)) throw e;
    }
    this.compact();
  }

  /**
   * Returns to the free pool the `n` offsets held longest at or above offset `from` (fewer if
   * fewer are held there): false when none was.
   */
  releaseOldest(n: number, from = 0): boolean {
    let released = 0;
    for (let at = this.head; released < n && at < this.his.length; at++) {
      const hi = this.his[at]!;
      const lo = this.los[at]!;
      if (hi === 0 && lo < from) continue;
      if (this.held.get(hi, lo) !== at) continue; // claimed since (and maybe held again: a newer entry)
      this.#index.clear(hi, lo); // first: when it throws (out of memory), the entry is still held
      this.unhold(hi, lo);
      this.noteReturn(hi, lo, at);
      released++;
    }
    // the entries at the head that hold nothing any more go
    while (this.head < this.his.length && this.held.get(this.his[this.head]!, this.los[this.head]!) !== this.head) {
      this.head++;
    }
    this.compact();
    return released > 0;
  }

  /**
   * The first FIFO entry: cleared in the index when still held. The clear comes first: when it
   * throws (OutOfMemoryError: the clear splits a run), the entry is still held and first in line.
   */
  private pop(): void {
    const at = this.head;
    const hi = this.his[at]!;
    const lo = this.los[at]!;
    if (this.held.get(hi, lo) === at) {
      this.#index.clear(hi, lo);
      this.unhold(hi, lo);
      this.noteReturn(hi, lo, at);
    }
    this.head++; // (an entry not held any more was claimed since, and maybe held again: a newer entry)
  }

  /**
   * The first FIFO position in use: the head, or before it the entry of an offset a running call
   * returned (it goes back there if the call fails). Held entries are all at or past the head.
   */
  private firstKept(): number {
    let first = this.head;
    if (this.returned.size !== 0) {
      this.returned.forEach(({ at }) => {
        if (at < first) first = at;
      });
    }
    return first;
  }

  /** Keeps only the entries of offsets still held or returned by a running call (in order), and renumbers them. */
  private dropStale(): void {
    const his: number[] = [];
    const los: number[] = [];
    const untils: number[] = [];
    let head = 0;
    for (let at = this.firstKept(); at < this.his.length; at++) {
      const hi = this.his[at]!;
      const lo = this.los[at]!;
      const entry = this.returned.get(hi, lo);
      if (this.held.get(hi, lo) === at) this.held.set(hi, lo, his.length);
      else if (entry?.at === at) entry.at = his.length;
      else continue;
      if (at < this.head) head++;
      his.push(hi);
      los.push(lo);
      untils.push(this.untils[at]!);
    }
    this.his = his;
    this.los = los;
    this.untils = untils;
    this.head = head;
  }

  private compact(): void {
    const h = this.firstKept();
    if (h >= 1024 && h * 2 >= this.his.length) {
      this.his = this.his.slice(h);
      this.los = this.los.slice(h);
      this.untils = this.untils.slice(h);
      this.head -= h;
      this.held.update((pos) => pos - h);
      this.returned.forEach((entry) => {
        entry.at -= h;
      });
    }
    this.keepInProportion();
  }

  /**
   * Every held offset is marked in the index, and counted in its band; and, when `idle` (no
   * allocation call of the owner running), nothing a call returned is still kept in line: a
   * message naming what is not so, or null.
   */
  check(idle: boolean): string | null {
    let dynamic = 0;
    let unmarked: string | null = null;
    this.held.forEach((pos) => {
      const hi = this.his[pos]!;
      const lo = this.los[pos]!;
      if (!this.#index.has(hi, lo)) unmarked ??= `held offset ${(BigInt(hi) << 32n) | BigInt(lo)} is not marked in the index`;
      if (this.isDynamic(hi, lo)) dynamic++;
    });
    if (unmarked !== null) return unmarked;
    if (dynamic !== this.dynamicHeld) return `${dynamic} held offsets are in the dynamic band, the count says ${this.dynamicHeld}`;
    const kept = this.held.size + this.returned.size;
    if (this.his.length > 2 * kept + STALE_SLACK)
      return `the queue has ${this.his.length} entries for ${kept} offsets held or returned: those claimed or held again since are not dropped`;
    // each call ends by keeping or holding again what it returned
    if (idle && this.recording === null && this.returned.size !== 0)
      return `${this.returned.size} offsets returned by calls that have ended are still kept in line`;
    return null;
  }
}
