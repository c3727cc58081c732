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
 * Records by name: linear probing over a power-of-two table, at most half full, deletes by
 * backward shift (no tombstones).
 *
 * Why not a Map: a V8 Map finds a key through a bucket and then a chain of entries, comparing
 * each entry's key string, and keeps a deleted entry in its chain until the table is rebuilt —
 * three to five cache misses per lookup in a table of 10^5 names, and a create (is the name
 * free? then set) and a delete (get, then delete) each look the name up twice. Here the probe
 * runs over a typed array of 32-bit hash tags (sixteen per cache line) and touches a record
 * only where its tag matches, and a create reuses the slot its check found. Create + delete of
 * fresh names at 10^5 records: ≈ 600 → 370 ns (Node 20); a Map also needed tombstones where
 * the same names come back, which this table does not.
 *
 * The hash is seeded per table, so names picked by a caller cannot be aimed at one run of slots
 * without knowing the seed; iteration order (values()) follows the slots, i.e. no particular order,
 * so a replay reads the records scattered over the heap (the price is in adapters/DESIGN.md).
 *
 * Invariants (checked by validate()): `tags[i]` is 0 for an empty slot, else the tag of
 * `records[i].name`; every record is reachable from its home slot (homeOf) without crossing
 * an empty slot; `count` = occupied slots; 2 · count ≤ capacity, and capacity = 16 or
 * 8 · count ≥ capacity (the table grows at half full and shrinks below an eighth).
 *
 * @internal used by MemoryStore (adapters/memory-store.ts), not part of the package.
 */
export class NameTable {
  private readonly seed: number;
  private mask = MIN_CAPACITY - 1;
  /** Hash tag of the name in each slot (always odd), 0 where the slot is empty. */
  private tags = new Int32Array(MIN_CAPACITY);
  private records: (IPAddressRecord | undefined)[] = new Array<IPAddressRecord | undefined>(MIN_CAPACITY).fill(undefined);
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
    return at >= 0 ? this.records[at] : undefined;
  }

  /** Stores `record` under `name` (= record.name), replacing any record of that name. */
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
      return;
    }
    if (2 * (this.count + 1) > this.tags.length) {
      this.resize(2 * this.tags.length);
      at = this.find(name, tag);
    }
    at = ~at;
    this.tags[at] = tag;
    this.records[at] = record;
    this.count++;
  }

  /** Removes and returns the record, or undefined when absent. */
  delete(name: string): IPAddressRecord | undefined {
    this.lastName = undefined;
    let at = this.find(name, tagOf(name, this.seed));
    if (at < 0) return undefined;
    const removed = this.records[at];
    // backward shift: move each later record of the run that may live at `at` into it, so no
    // probe ever meets a hole before its record
    const mask = this.mask;
    const tags = this.tags;
    const records = this.records;
    for (let next = (at + 1) & mask; tags[next] !== 0; next = (next + 1) & mask) {
      const home = homeOf(tags[next]!, mask);
      // the record at `next` may move to `at` when `at` lies on its way from home to next
      if (((next - home) & mask) >= ((next - at) & mask)) {
        tags[at] = tags[next]!;
        records[at] = records[next];
        at = next;
      }
    }
    tags[at] = 0;
    records[at] = undefined;
    this.count--;
    if (8 * this.count < tags.length && tags.length > MIN_CAPACITY) this.resize(tags.length / 2);
    return removed;
  }

  get size(): number {
    return this.count;
  }

  /** The records, as a new array, in no particular order. */
  values(): IPAddressRecord[] {
    const out: IPAddressRecord[] = [];
    const records = this.records;
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
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
    t.count = this.count;
    return t;
  }

  /**
   * Re-derives the count from the slots and checks the invariants above; throws an Error naming
   * the first one broken. Returns the records and slots.
   */
  validate(): { records: number; slots: number } {
    const cap = this.tags.length;
    let count = 0;
    for (let i = 0; i < cap; i++) {
      const tag = this.tags[i]!;
      const r = this.records[i];
      if (tag === 0) {
        if (r !== undefined) throw new Error(`NameTable: empty slot ${i} holds a record named ${JSON.stringify(r.name)}`);
        continue;
      }
      count++;
      if (r === undefined || tag !== tagOf(r.name, this.seed))
        throw new Error(`NameTable: slot ${i} has a tag that is not its record's name's`);
      for (let j = homeOf(tag, this.mask); j !== i; j = (j + 1) & this.mask) {
        if (this.tags[j] === 0) throw new Error(`NameTable: ${JSON.stringify(r.name)} is behind an empty slot: no lookup would find it`);
      }
    }
    if (count !== this.count) throw new Error(`NameTable: counted ${this.count} records, the slots hold ${count}`);
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

  private resize(capacity: number): void {
    const oldTags = this.tags;
    const oldRecords = this.records;
    const mask = capacity - 1;
    const tags = new Int32Array(capacity);
    const records = new Array<IPAddressRecord | undefined>(capacity).fill(undefined);
    for (let i = 0; i < oldTags.length; i++) {
      const tag = oldTags[i]!;
      if (tag === 0) continue;
      let j = homeOf(tag, mask);
      while (tags[j] !== 0) j = (j + 1) & mask;
      tags[j] = tag;
      records[j] = oldRecords[i];
    }
    this.tags = tags;
    this.records = records;
    this.mask = mask;
  }
}
