// PrefixTable: values held by prefix (one family), found by an address in a time that depends on
// the number of distinct prefix lengths held — at most 33 for IPv4, 129 for IPv6 — not on the
// number of prefixes.
//
//   levels (one per prefix length held, shortest first)
//   /16  { key(10.1.0.0) → [10.1.0.0/16] }
//   /24  { key(10.1.2.0) → [10.1.2.0/24],  key(10.2.3.0) → [10.2.3.0/24],  … }
//
//   containing(10.1.2.7): /16 → key(10.1.2.7 & /16) = key(10.1.0.0) → 10.1.0.0/16
//                         /24 → key(10.1.2.7 & /24) = key(10.1.2.0) → 10.1.2.0/24
//
// A key is a 32-bit mix of the masked words: for IPv4 ([0, 0, 0, v4]) it is the masked address
// itself; IPv6 keys may collide, so every value found is checked with Prefix.contains — a
// collision costs a comparison, never a wrong answer. Prefixes nest or are disjoint, so the
// prefixes containing an address are one per level at most (two values of one prefix excepted).
//
// Invariant: `levels` and every bucket are replaced, never changed in place: a look-up that a
// value found calls back into the owner (which may add or delete values) walks what it began with.
import type { Family } from './address.ts';
import type { Prefix } from './geometry.ts';

/** A value and the prefix it was added under. */
export interface Held<T> {
  readonly prefix: Prefix;
  readonly value: T;
}

interface Level<T> {
  readonly length: number;
  /** The mask of this length, as four u32 words (IPv4: word 3 only). */
  readonly mask: Uint32Array;
  /** key of the masked network → the values of the prefixes with that key (replaced on change). */
  readonly buckets: Map<number, readonly Held<T>[]>;
}

const NONE: readonly Held<never>[] = Object.freeze([]);

export class PrefixTable<T> {
  /** One level per prefix length held, by length (shortest first); a level is dropped when it empties. */
  private levels: readonly Level<T>[] = [];

  /** Holds `value` under `p` (several values may share a prefix). Returns what delete() takes back. */
  add(p: Prefix, value: T): Held<T> {
    const held: Held<T> = { prefix: p, value };
    let level = this.levels.find((l) => l.length === p.length);
    if (level === undefined) {
      level = { length: p.length, mask: maskOf(p), buckets: new Map() };
      this.levels = [...this.levels, level].sort((a, b) => a.length - b.length);
    }
    const key = keyOf(p.network, level.mask);
    level.buckets.set(key, [...(level.buckets.get(key) ?? NONE), held]);
    return held;
  }

  /** Lets go of what add() returned; false when it is not held (deleted already). */
  delete(held: Held<T>): boolean {
    const level = this.levels.find((l) => l.length === held.prefix.length);
    if (level === undefined) return false;
    const key = keyOf(held.prefix.network, level.mask);
    const bucket = level.buckets.get(key);
    if (bucket === undefined || !bucket.includes(held)) return false;
    if (bucket.length > 1)
      level.buckets.set(
        key,
        bucket.filter((h) => h !== held),
      );
    else {
      level.buckets.delete(key);
      if (level.buckets.size === 0) this.levels = this.levels.filter((l) => l !== level);
    }
    return true;
  }

  /**
   * What is held under the prefixes of `version` that contain the address `w` (four u32 words,
   * network and broadcast included: Prefix.contains), shortest prefix first. A new array, or a
   * shared empty one when there is none.
   */
  containing(version: Family, w: ArrayLike<number>): readonly Held<T>[] {
    const levels = this.levels;
    const a0 = w[0]!;
    const a1 = w[1]!;
    const a2 = w[2]!;
    const a3 = w[3]!;
    let out: Held<T>[] | null = null;
    for (let i = 0; i < levels.length; i++) {
      const level = levels[i]!;
      const m = level.mask;
      const bucket = level.buckets.get(mix(a0 & m[0]!, a1 & m[1]!, a2 & m[2]!, a3 & m[3]!));
      if (bucket === undefined) continue;
      for (let j = 0; j < bucket.length; j++) {
        const held = bucket[j]!;
        if (!held.prefix.contains(version, w)) continue;
        (out ??= []).push(held);
      }
    }
    return out ?? NONE;
  }

  /** Everything held, in no particular order (a new array). */
  all(): Held<T>[] {
    const out: Held<T>[] = [];
    for (const level of this.levels) for (const bucket of level.buckets.values()) out.push(...bucket);
    return out;
  }
}

/** The mask of `p`'s length as four u32 words, big-endian as the address words are. */
function maskOf(p: Prefix): Uint32Array {
  const mask = new Uint32Array(4);
  const bits = p.version === 4 ? p.length + 96 : p.length; // IPv4 words are [0, 0, 0, v4]
  for (let i = 0; i < 4; i++) {
    const n = Math.min(32, Math.max(0, bits - 32 * i));
    mask[i] = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
  }
  return mask;
}

function keyOf(network: ArrayLike<number>, mask: Uint32Array): number {
  return mix(network[0]! & mask[0]!, network[1]! & mask[1]!, network[2]! & mask[2]!, network[3]! & mask[3]!);
}

/** A 32-bit key of four words: the last word itself when the others are 0 (IPv4), so IPv4 keys never collide. */
function mix(a0: number, a1: number, a2: number, a3: number): number {
  return (a3 ^ Math.imul(a2, 0x85ebca6b) ^ Math.imul(a1, 0xc2b2ae35) ^ Math.imul(a0, 0x27d4eb2f)) | 0;
}
