// NameTable: the MemoryStore's records by name (adapters/memory-store.ts), an open-addressing
// hash table of our own instead of a JS Map.
import type { IPAddressRecord } from './store.ts';

/** The smallest capacity; a power of two, as every capacity. */
const MIN_CAPACITY = 16;

/**
 * The 32-bit tag of a name: FNV-1a over its characters from the table's seed, finished with
 * murmur3's avalanche so that every bit of the slot index depends on every character; odd, so
 * that 0 can mark an empty slot. Exported for the tests.
 * @internal
 */
export function tagOf(name: string, seed: number): number {
  let h = seed ^ name.length;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 1;
}

/** The slot where a name with this tag is looked for first (the tag's low bit is always 1). Exported for the tests. @internal */
export function homeOf(tag: number, mask: number): number {
  return (tag >>> 1) & mask;
}

/**
 * Records by name: linear probing over a power-of-two table of slots, at most half full, deletes
 * by backward shift. A slot holds a hash tag and the index of its record in `entries`, the
 * records in insertion order (the layout of CPython's compact dict), side by side in one typed
 * array: a create of a new name reads the tag and writes the index of the same slot, one cache
 * line (in two arrays, a table of 10^6 names cost a second cache miss per create there).
 *
 * Why not a Map: a V8 Map finds a key through a bucket and then a chain of entries, comparing
 * each entry's key string, and keeps a deleted entry in its chain until the table is rebuilt —
 * three to five cache misses per lookup in a table of 10^5 names, and a create (is the name
 * free? then set) and a delete (get, then delete) each look the name up twice. Here the probe
 * runs over a typed array of 32-bit hash tags (eight slots per cache line) and reads a record only
 * where its tag matches, and a create reuses the slot its check found. Create + delete of fresh
 * names at 10^5 records: ≈ 600 → 370 ns (Node 20); a Map also needed tombstones where the same
 * names come back, which this table does not.
 *
 * Why insertion order: a replay (a new watcher, an allocator's warm start) reads every record
 * and its name; in insertion order those objects sit in memory in the order they were made, in
 * slot order they are scattered (a warm start of 10^6 IPv6 records read in slot order cost
 * ≈ 2.5× as much). A delete leaves a hole in `entries`; an append that finds the array full
 * squeezes the holes out first. `entries` is as long as the slots, so a squeeze leaves room for
 * at least half its length of appends: O(1) per append, amortised. (A growing JS array in its
 * place, pushed to and cut back after each squeeze, regrew through copies on the hot path:
 * ≈ 0.2 µs per create + delete at 32K records.)
 *
 * The hash is seeded per table, so names picked by a caller cannot be aimed at one run of slots
 * without knowing the seed.
 *
 * Invariants (checked by validate()): `slots` has twice the capacity's length, `entries` the
 * capacity's; slot i is empty when its tag `slots[2i]` is 0, else `entries[slots[2i + 1]]`
 * (below `end`) is a record whose name has that tag, and no other slot points there; every record in `entries` has
 * a slot, and entries from `end` on are empty; every record is reachable from its home slot
 * (homeOf) without crossing an empty slot; `count` = records; 2 · count ≤ capacity, and
 * capacity = 16 or 8 · count ≥ capacity (the table grows at half full and shrinks below an
 * eighth).
 *
 * @internal used by MemoryStore (adapters/memory-store.ts) and RecordRouter (adapters/record-router.ts), not
 * part of the package.
 */
export class NameTable {
  private readonly seed: number;
  private mask = MIN_CAPACITY - 1;
  /** Slot i at [2i, 2i + 1]: the hash tag of its name (always odd; 0 where the slot is empty), its record's index in `entries`. */
  private slots = new Int32Array(2 * MIN_CAPACITY);
  /**
   * The records in insertion order in [0, end), undefined where one was deleted and from `end`
   * on; as long as the slots (at most half full), so a squeeze is due after at least half as
   * many appends as it costs.
   */
  private entries: (IPAddressRecord | undefined)[] = new Array<IPAddressRecord | undefined>(MIN_CAPACITY).fill(undefined);
  private end = 0;
  private count = 0;
  /**
   * The last name get() looked up, its tag and what find() answered, until the next change:
   * MemoryStore checks that a name is free and then stores it, and set() need not probe again.
   */
  private lastName: string | undefined = undefined;
  private lastTag = 0;
  private lastAt = 0;

  constructor(seed: number = (Math.random() * 0x100000000) | 0) {
    this.seed = seed;
  }

  get(name: string): IPAddressRecord | undefined {
    const tag = tagOf(name, this.seed);
    const at = this.find(name, tag);
    this.lastName = name;
    this.lastTag = tag;
    this.lastAt = at;
    return at >= 0 ? this.entries[this.slots[2 * at + 1]!] : undefined;
  }

  /** Stores `record` under `name` (= record.name): a new name goes last, a known one keeps its place. */
  set(name: string, record: IPAddressRecord): void {
    let tag: number;
    let at: number;
    if (name === this.lastName) {
      tag = this.lastTag;
      at = this.lastAt;
    } else {
      tag = tagOf(name, this.seed);
      at = this.find(name, tag);
    }
    this.lastName = undefined;
    if (at >= 0) {
      this.entries[this.slots[2 * at + 1]!] = record;
      return;
    }
    const capacity = this.mask + 1;
    if (2 * (this.count + 1) > capacity) {
      this.resize(2 * capacity);
      at = this.find(name, tag);
    }
    at = ~at;
    if (this.end === this.entries.length) this.squeeze();
    this.slots[2 * at] = tag;
    this.slots[2 * at + 1] = this.end;
    this.entries[this.end++] = record;
    this.count++;
  }

  /** Removes and returns the record, or undefined when absent. */
  delete(name: string): IPAddressRecord | undefined {
    this.lastName = undefined;
    let at = this.find(name, tagOf(name, this.seed));
    if (at < 0) return undefined;
    const slots = this.slots;
    const entries = this.entries;
    const removed = entries[slots[2 * at + 1]!];
    entries[slots[2 * at + 1]!] = undefined;
    // backward shift: move each later slot of the run whose record may live at `at` into it, so
    // no probe ever meets an empty slot before its record
    const mask = this.mask;
    for (let next = (at + 1) & mask; slots[2 * next] !== 0; next = (next + 1) & mask) {
      const home = homeOf(slots[2 * next]!, mask);
      // the record at `next` may move to `at` when `at` lies on its way from home to next
      if (((next - home) & mask) >= ((next - at) & mask)) {
        slots[2 * at] = slots[2 * next]!;
        slots[2 * at + 1] = slots[2 * next + 1]!;
        at = next;
      }
    }
    slots[2 * at] = 0;
    this.count--;
    if (8 * this.count < mask + 1 && mask + 1 > MIN_CAPACITY) this.resize((mask + 1) / 2);
    return removed;
  }

  get size(): number {
    return this.count;
  }

  /** The records, as a new array, in insertion order. */
  values(): IPAddressRecord[] {
    const out: IPAddressRecord[] = [];
    const entries = this.entries;
    for (let i = 0; i < this.end; i++) {
      const r = entries[i];
      if (r !== undefined) out.push(r);
    }
    return out;
  }

  /**
   * Re-derives the counts from the slots and entries and checks the invariants above; throws an
   * Error naming the first one broken. Returns the records and slots.
   */
  validate(): { records: number; slots: number } {
    const cap = this.mask + 1;
    if (this.slots.length !== 2 * cap || this.entries.length !== cap || this.end > cap)
      throw new Error(`NameTable: arrays of ${this.slots.length}, ${this.entries.length} (end ${this.end}) for ${cap} slots`);
    const seen = new Uint8Array(cap);
    let count = 0;
    for (let i = 0; i < cap; i++) {
      const tag = this.slots[2 * i]!;
      if (tag === 0) continue;
      count++;
      const e = this.slots[2 * i + 1]!;
      const r = e < this.end ? this.entries[e] : undefined;
      if (r === undefined || seen[e] === 1) throw new Error(`NameTable: slot ${i} points at entry ${e}, which holds no record of its own`);
      seen[e] = 1;
      if (tag !== tagOf(r.name, this.seed)) throw new Error(`NameTable: slot ${i} has a tag that is not its record's name's`);
      for (let j = homeOf(tag, this.mask); j !== i; j = (j + 1) & this.mask) {
        if (this.slots[2 * j] === 0)
          throw new Error(`NameTable: ${JSON.stringify(r.name)} is behind an empty slot: no lookup would find it`);
      }
    }
    let records = 0;
    for (let e = 0; e < cap; e++) {
      const r = this.entries[e];
      if (r === undefined) continue;
      if (seen[e] !== 1) throw new Error(`NameTable: the record ${JSON.stringify(r.name)} (entry ${e}, end ${this.end}) has no slot`);
      records++;
    }
    if (count !== this.count || records !== this.count)
      throw new Error(`NameTable: counted ${this.count} records, the slots hold ${count}, the entries ${records}`);
    if (2 * count > cap || (cap > MIN_CAPACITY && 8 * count < cap)) throw new Error(`NameTable: ${count} records in ${cap} slots`);
    return { records: count, slots: cap };
  }

  /** The slot holding `name`, or ~(the empty slot where it would go). */
  private find(name: string, tag: number): number {
    const mask = this.mask;
    const slots = this.slots;
    for (let i = homeOf(tag, mask); ; i = (i + 1) & mask) {
      const t = slots[2 * i]!;
      if (t === 0) return ~i;
      if (t === tag && this.entries[slots[2 * i + 1]!]!.name === name) return i;
    }
  }

  /** Removes the holes from `entries` in place (the slots keep their capacity). */
  private squeeze(): void {
    const entries = this.entries;
    const moved = this.squeezeInto(entries);
    // cleared one by one, not with fill(undefined, end): in V8 15 (Deno 2.9), which keeps
    // undefined in arrays of doubles, a fill of the whole array (end 0: every record was deleted)
    // makes it an array of doubles again, and the next append an array of objects: a new map at
    // each squeeze of an emptied table, for which set()'s compiled code was thrown away ("wrong map")
    for (let i = this.end; i < entries.length; i++) entries[i] = undefined;
    const slots = this.slots;
    for (let i = 0; i < slots.length; i += 2) if (slots[i] !== 0) slots[i + 1] = moved[slots[i + 1]!]!;
  }

  /**
   * Copies the records of entries[0, end) to target[0, …) in order, sets `end` to their count
   * and returns each old index's new one: sequential passes (finding each moved record's slot
   * instead cost a cache miss per record).
   */
  private squeezeInto(target: (IPAddressRecord | undefined)[]): Int32Array {
    const entries = this.entries;
    const moved = new Int32Array(this.end);
    let to = 0;
    for (let from = 0; from < this.end; from++) {
      const r = entries[from];
      if (r === undefined) continue;
      moved[from] = to;
      target[to++] = r;
    }
    this.end = to;
    return moved;
  }

  private resize(capacity: number): void {
    const old = this.slots;
    const entries = new Array<IPAddressRecord | undefined>(capacity).fill(undefined);
    const moved = this.squeezeInto(entries);
    const mask = capacity - 1;
    const slots = new Int32Array(2 * capacity);
    for (let i = 0; i < old.length; i += 2) {
      const tag = old[i]!;
      if (tag === 0) continue;
      let j = homeOf(tag, mask);
      while (slots[2 * j] !== 0) j = (j + 1) & mask;
      slots[2 * j] = tag;
      slots[2 * j + 1] = moved[old[i + 1]!]!;
    }
    this.slots = slots;
    this.entries = entries;
    this.mask = mask;
  }
}
