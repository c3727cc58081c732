// NameTable: the MemoryStore's records by name (adapters/memory-store.ts), an open-addressing
// hash table of our own instead of a JS Map.
import type { IPAddressRecord } from './store.ts';

/** The smallest capacity; a power of two, as every capacity. */
const MIN_CAPACITY = 16;

/**
 * The 32-bit tag of a name: FNV-1a over its characters from the table's seed, finished with
 * murmur3's avalanche so that every bit of the slot index depends on every character; odd, so
 * that 0 can mark an empty slot. Exported for the tests.
 */
export function tagOf(name: string, seed: number): number {
  let h = seed ^ name.length;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 1;
}

/** The slot where a name with this tag is looked for first (the tag's low bit is always 1). Exported for the tests. */
export function homeOf(tag: number, mask: number): number {
  return (tag >>> 1) & mask;
}

/**
 * Records by name: linear probing over a power-of-two table of slots, at most half full, deletes
 * by backward shift; beside it the records in insertion order, for iteration.
 *
 * Why not a Map: a V8 Map finds a key through a bucket and then a chain of entries, comparing
 * each entry's key string, and keeps a deleted entry in its chain until the table is rebuilt —
 * three to five cache misses per lookup in a table of 10^5 names, and a create (is the name
 * free? then set) and a delete (get, then delete) each look the name up twice. Here the probe
 * runs over a typed array of 32-bit hash tags (sixteen per cache line) and reads a record only
 * where its tag matches (the slot's record, loaded beside its tag), and a create reuses the slot
 * its check found.
 *
 * Why insertion order for iteration: a replay (a new watcher, an allocator's warm start) reads
 * every record and its name; in insertion order those objects sit in memory in the order they
 * were made, in slot order they are scattered (a warm start of 10^6 records read in slot order
 * cost ≈ 0.2 µs more per record). A delete leaves a hole in `entries`; when the holes outnumber
 * the records (and 1,024) they are squeezed out.
 *
 * The hash is seeded per table, so names picked by a caller cannot be aimed at one run of slots
 * without knowing the seed.
 *
 * Invariants (checked by validate()): slot i is empty when `tags[i]` is 0, else `records[i]` is
 * a record whose name has that tag and `entries[entryOf[i]]` is the same record; each record in
 * `entries` has exactly one slot; every record is reachable from its home slot (homeOf) without
 * crossing an empty slot; `count` = records, `holes` = entries − count ≤ max(count, 1,024);
 * 2 · count ≤ capacity, and capacity = 16 or 8 · count ≥ capacity (the table grows at half full
 * and shrinks below an eighth).
 *
 * @internal used by MemoryStore (adapters/memory-store.ts), not part of the package.
 */
export class NameTable {
  private readonly seed: number;
  private mask = MIN_CAPACITY - 1;
  /** Per slot: the hash tag of its name (always odd), 0 where the slot is empty. */
  private tags = new Int32Array(MIN_CAPACITY);
  /** Per slot: its record. */
  private records: (IPAddressRecord | undefined)[] = new Array<IPAddressRecord | undefined>(MIN_CAPACITY).fill(undefined);
  /** Per slot: its record's index in `entries`. */
  private entryOf = new Int32Array(MIN_CAPACITY);
  /** The records in insertion order; undefined where one was deleted. */
  private entries: (IPAddressRecord | undefined)[] = [];
  private count = 0;
  private holes = 0;
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
    return at >= 0 ? this.records[at] : undefined;
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
      this.records[at] = record;
      this.entries[this.entryOf[at]!] = record;
      return;
    }
    const capacity = this.mask + 1;
    if (2 * (this.count + 1) > capacity) {
      this.resize(2 * capacity);
      at = this.find(name, tag);
    }
    at = ~at;
    this.tags[at] = tag;
    this.records[at] = record;
    this.entryOf[at] = this.entries.length;
    this.entries.push(record);
    this.count++;
  }

  /** Removes and returns the record, or undefined when absent. */
  delete(name: string): IPAddressRecord | undefined {
    this.lastName = undefined;
    let at = this.find(name, tagOf(name, this.seed));
    if (at < 0) return undefined;
    const tags = this.tags;
    const records = this.records;
    const entryOf = this.entryOf;
    const removed = records[at];
    this.entries[entryOf[at]!] = undefined;
    this.holes++;
    // backward shift: move each later slot of the run whose record may live at `at` into it, so
    // no probe ever meets an empty slot before its record
    const mask = this.mask;
    for (let next = (at + 1) & mask; tags[next] !== 0; next = (next + 1) & mask) {
      const home = homeOf(tags[next]!, mask);
      // the record at `next` may move to `at` when `at` lies on its way from home to next
      if (((next - home) & mask) >= ((next - at) & mask)) {
        tags[at] = tags[next]!;
        records[at] = records[next];
        entryOf[at] = entryOf[next]!;
        at = next;
      }
    }
    tags[at] = 0;
    records[at] = undefined;
    this.count--;
    if (this.holes > this.count && this.holes > 1024) this.squeeze();
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
    for (let i = 0; i < entries.length; i++) {
      const r = entries[i];
      if (r !== undefined) out.push(r);
    }
    return out;
  }

  /** A copy holding the same records. */
  clone(): NameTable {
    const t = new NameTable(this.seed);
    t.mask = this.mask;
    t.tags = this.tags.slice();
    t.records = this.records.slice();
    t.entryOf = this.entryOf.slice();
    t.entries = this.entries.slice();
    t.count = this.count;
    t.holes = this.holes;
    return t;
  }

  /**
   * Re-derives the counts from the slots and entries and checks the invariants above; throws an
   * Error naming the first one broken. Returns the records and slots.
   */
  validate(): { records: number; slots: number } {
    const cap = this.mask + 1;
    const seen = new Uint8Array(this.entries.length);
    let count = 0;
    for (let i = 0; i < cap; i++) {
      const tag = this.tags[i]!;
      const r = this.records[i];
      if (tag === 0) {
        if (r !== undefined) throw new Error(`NameTable: empty slot ${i} holds a record named ${JSON.stringify(r.name)}`);
        continue;
      }
      count++;
      const e = this.entryOf[i]!;
      if (r === undefined || this.entries[e] !== r || seen[e] === 1)
        throw new Error(`NameTable: slot ${i} and entry ${e} do not hold the same record`);
      seen[e] = 1;
      if (tag !== tagOf(r.name, this.seed)) throw new Error(`NameTable: slot ${i} has a tag that is not its record's name's`);
      for (let j = homeOf(tag, this.mask); j !== i; j = (j + 1) & this.mask) {
        if (this.tags[j] === 0) throw new Error(`NameTable: ${JSON.stringify(r.name)} is behind an empty slot: no lookup would find it`);
      }
    }
    let records = 0;
    for (let e = 0; e < this.entries.length; e++) {
      if (this.entries[e] === undefined) continue;
      records++;
      if (seen[e] !== 1) throw new Error(`NameTable: the record ${JSON.stringify(this.entries[e]!.name)} has no slot`);
    }
    if (count !== this.count || records !== this.count)
      throw new Error(`NameTable: counted ${this.count} records, the slots hold ${count}, the entries ${records}`);
    if (this.holes !== this.entries.length - records || this.holes > Math.max(records, 1024)) {
      throw new Error(`NameTable: ${this.holes} holes counted, ${this.entries.length - records} among ${this.entries.length} entries`);
    }
    if (2 * count > cap || (cap > MIN_CAPACITY && 8 * count < cap)) throw new Error(`NameTable: ${count} records in ${cap} slots`);
    return { records: count, slots: cap };
  }

  /** The slot holding `name`, or ~(the empty slot where it would go). */
  private find(name: string, tag: number): number {
    const mask = this.mask;
    const tags = this.tags;
    for (let i = homeOf(tag, mask); ; i = (i + 1) & mask) {
      const t = tags[i]!;
      if (t === 0) return ~i;
      if (t === tag && this.records[i]!.name === name) return i;
    }
  }

  /**
   * Removes the holes from `entries`, keeping the order, then points every slot at its record's
   * new place: two sequential passes (finding each moved record's slot instead cost a cache miss
   * per record).
   */
  private squeeze(): void {
    const entries = this.entries;
    const newIndex = new Int32Array(entries.length);
    let to = 0;
    for (let from = 0; from < entries.length; from++) {
      const r = entries[from];
      if (r === undefined) continue;
      newIndex[from] = to;
      entries[to++] = r;
    }
    entries.length = to;
    const tags = this.tags;
    const entryOf = this.entryOf;
    for (let i = 0; i < tags.length; i++) if (tags[i] !== 0) entryOf[i] = newIndex[entryOf[i]!]!;
    this.holes = 0;
  }

  private resize(capacity: number): void {
    const oldTags = this.tags;
    const oldRecords = this.records;
    const oldEntryOf = this.entryOf;
    const mask = capacity - 1;
    const tags = new Int32Array(capacity);
    const records = new Array<IPAddressRecord | undefined>(capacity).fill(undefined);
    const entryOf = new Int32Array(capacity);
    for (let i = 0; i < oldTags.length; i++) {
      const tag = oldTags[i]!;
      if (tag === 0) continue;
      let j = homeOf(tag, mask);
      while (tags[j] !== 0) j = (j + 1) & mask;
      tags[j] = tag;
      records[j] = oldRecords[i];
      entryOf[j] = oldEntryOf[i]!;
    }
    this.tags = tags;
    this.records = records;
    this.entryOf = entryOf;
    this.mask = mask;
  }
}
