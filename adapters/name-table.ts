// NameTable: the MemoryStore's records by name (adapters/memory-store.ts), a Map that keeps
// deleted names as tombstones where names come back and deletes them for real where they do not.
import type { IPAddressRecord } from './store.ts';

/** The value a deleted name keeps in NameTable's map (see there). */
const TOMB: IPAddressRecord = Object.freeze({ name: '', labels: Object.freeze({}), parentRef: null });

/** What NameTable.peek finds: a record, TOMB (deleted, key kept) or undefined (never there). */
export type Slot = IPAddressRecord | undefined;

/** The live record of a slot. */
export function liveOf(slot: Slot): IPAddressRecord | undefined {
  return slot === TOMB ? undefined : slot;
}

/**
 * A Map of records by name that deletes by leaving a tombstone (TOMB) where names come back, and
 * compacts when the tombstones outnumber the live records (and 1,024).
 *
 * Why tombstones: a V8 Map entry that is deleted stays in its bucket's chain as a hole until the
 * table is rebuilt, and a key set again is appended anew. Where the same names are created and
 * deleted over and over (an IPv4 range's churn: a few hundred free addresses of a /16 at 99 %),
 * those chains grow long: a create/delete pair cost 12–46 µs there with plain deletes, against
 * 0.4 µs with tombstones (an address that comes back reuses its key's entry).
 *
 * Why not always: where names never come back (an IPv6 /64: every allocateNext draws a new
 * address) tombstones only fill the map and cost the compactions; plain deletes made an
 * allocateNext+release 2.2 → 1.6 µs at 10^5 addresses (Node 20, measured). So the table watches
 * how often a tombstone is revived: with plain deletes it still leaves one for every 8th delete,
 * and goes back to tombstones for all as soon as 1 in 16 of those comes back (decided every 512
 * sampled deletes); with tombstones for all it decides at each compaction, over everything since
 * the last one.
 *
 * Invariants (checked by validate()): `live` = entries that are records, `dead` = entries that
 * are TOMB, and entries ≤ 2 × live + 1,025 (a delete that makes `dead` exceed both 1,024 and
 * `live` compacts). In a MemoryStore every key was a valid record name (validated on create).
 *
 * @internal used by MemoryStore (adapters/memory-store.ts), not part of the package.
 */
export class NameTable {
  private readonly map = new Map<string, Slot>();
  private live = 0;
  /** Tombstones in the map. */
  private dead = 0;
  /** Whether every delete leaves a tombstone (else every 8th: see above). */
  private tombstoneAll = true;
  /** Deletes counted for the 1-in-8 sample. */
  private deletes = 0;
  /** Tombstones left, and revived by a set, since the last decision. */
  private buried = 0;
  private revived = 0;

  get(name: string): IPAddressRecord | undefined {
    return liveOf(this.map.get(name));
  }

  /** The raw slot, for set(). */
  peek(name: string): Slot {
    return this.map.get(name);
  }

  /** Stores `record` under `name`; `slot` is what peek(name) returned (the caller has just looked). */
  set(name: string, record: IPAddressRecord, slot: Slot): void {
    if (slot === undefined) this.live++;
    else if (slot === TOMB) {
      this.live++;
      this.dead--;
      this.revived++;
    }
    this.map.set(name, record);
  }

  /** Removes and returns the record, or undefined when absent. */
  delete(name: string): IPAddressRecord | undefined {
    const r = this.map.get(name);
    if (r === undefined || r === TOMB) return undefined;
    this.live--;
    if (this.tombstoneAll || (++this.deletes & 7) === 0) {
      this.map.set(name, TOMB);
      this.dead++;
      this.buried++;
    } else {
      this.map.delete(name);
    }
    if (this.dead > 1024 && this.dead > this.live) {
      this.decide();
      this.compact();
    } else if (!this.tombstoneAll && this.buried === 512) {
      this.decide();
    }
    return r;
  }

  /** Tombstones for every delete while at least 1 in 16 of those left since the last decision came back. */
  private decide(): void {
    this.tombstoneAll = this.revived * 16 >= this.buried;
    this.buried = 0;
    this.revived = 0;
  }

  get size(): number {
    return this.live;
  }

  /** The live records, as a new array (a plain loop: a generator costs ≈ 3× per record). */
  values(): IPAddressRecord[] {
    const out: IPAddressRecord[] = [];
    for (const r of this.map.values()) if (r !== TOMB && r !== undefined) out.push(r);
    return out;
  }

  /** A copy holding the live records. */
  clone(): NameTable {
    const t = new NameTable();
    for (const r of this.values()) t.set(r.name, r, undefined);
    return t;
  }

  /**
   * Re-derives the counts from the map and checks the invariants above; throws an Error naming
   * the first one broken. Returns the counts.
   */
  validate(): { live: number; tombstones: number; entries: number } {
    let live = 0;
    let dead = 0;
    for (const [name, r] of this.map) {
      if (r === TOMB) dead++;
      else if (r !== undefined && r.name === name) live++;
      else throw new Error(`NameTable: entry ${JSON.stringify(name)} holds a record named ${JSON.stringify(r?.name)}`);
    }
    if (live !== this.live || dead !== this.dead) {
      throw new Error(`NameTable: counted ${this.live} live and ${this.dead} tombstones, the map holds ${live} and ${dead}`);
    }
    if (live + dead > 2 * live + 1025) throw new Error(`NameTable: ${dead} tombstones for ${live} records were never compacted`);
    return { live, tombstones: dead, entries: live + dead };
  }

  /**
   * Deletes the tombstones in place. Copying the live entries into a new Map instead costs more
   * on a churn of names that never come back (an IPv6 /64): the new Map grows through every
   * capacity up to the old one's (measured ≈ 25 % more per create/delete pair at 10^5 records).
   */
  private compact(): void {
    for (const [k, r] of this.map) if (r === TOMB) this.map.delete(k);
    this.dead = 0;
  }
}
