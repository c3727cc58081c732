// PrefixTable: entries held by their prefix (one family), found by an address in a time that depends on
// the number of distinct prefix lengths held — at most 33 for IPv4, 129 for IPv6 — not on the
// number of prefixes.
//
//   levels (one per prefix length held, shortest first)
//   /16  { 10.1.0.0 → [10.1.0.0/16] }
//   /24  { 10.1.2.0 → [10.1.2.0/24],  10.2.3.0 → [10.2.3.0/24],  … }
//
//   containing(10.1.2.7): /16 → 10.1.2.7 & /16 = 10.1.0.0 → 10.1.0.0/16
//                         /24 → 10.1.2.7 & /24 = 10.1.2.0 → 10.1.2.0/24
//
//   IPv6 /64  { fd00:0 → { 0:1 → [fd00:0:0:1::/64] } }     (words 0, then 1)
//
// A level keys a prefix by the words of its masked network that the mask covers, one Map per
// word (IPv4: word 3 alone; an IPv6 /64: words 0 and 1, a /112: all four), so two prefixes share
// a bucket only when they are the same prefix: no crafted set of ranges can crowd one bucket
// (a 32-bit mix of the words could be made to collide, and each look-up would then go over
// every prefix sharing the key). A level holds one family's prefixes of one length, so a key
// found is the containment itself: a look-up reads no prefix (over thousands of ranges, each
// prefix read is a cache miss). Prefixes nest or are disjoint, so the prefixes containing an
// address are one per level at most (two entries of one prefix excepted).
//
// Invariant: `levels` and every bucket are replaced, never changed in place: a look-up that an
// entry found calls back into the owner (which may add or delete entries) walks what it began with.
//
// The last look-up is remembered until the next add or delete: a MetaAllocator finds the range
// of an address, then the store's events of that address are routed, by the same table — one
// look-up for the call (over thousands of ranges, a look-up's Map reads are cache misses).
import type { Family } from './address.ts';
import type { Prefix } from './geometry.ts';

/**
 * What a PrefixTable holds: an object held under its own `prefix` (a range's slot, say), and found
 * as it is: no wrapper between a bucket and what its owner reads (over thousands of ranges, each
 * object read on the way is a cache miss). @internal
 */
export interface Prefixed {
  readonly prefix: Prefix;
}

/**
 * masked word → the next word's Map, and after the last word the entries of the prefix with that
 * network (a bucket, replaced on change).
 */
type Node<E> = Map<number, Node<E> | readonly E[]>;

interface Level<E> {
  readonly version: Family;
  readonly length: number;
  /** The mask of this length, as four u32 words (IPv4: word 3 only). */
  readonly mask: Uint32Array;
  /** The words the mask covers, [from, to): the keys on the way to a bucket. */
  readonly from: number;
  readonly to: number;
  readonly root: Node<E>;
}

const NONE: readonly never[] = Object.freeze([]);

/** @internal */
export class PrefixTable<E extends Prefixed> {
  /** One level per prefix length held, by length (shortest first); a level is dropped when it empties. */
  private levels: readonly Level<E>[] = [];
  /**
   * The last look-up (containing): its family (0: none since the last add or delete, which end
   * it), its address's words, and its answer.
   */
  private lastFamily: 0 | Family = 0;
  private readonly lastWords = new Uint32Array(4);
  private lastFound: readonly E[] = NONE;
  /** Look-ups walked (lookUp): see `lookUps`. */
  private walked = 0;

  /**
   * How many look-ups (containing) walked the levels, not answered from the memo of the last
   * one: what a test counts to see how often a call and its store events look an address up.
   * @internal
   */
  get lookUps(): number {
    return this.walked;
  }

  /** Ends the memo of the last look-up, and lets go of what it found (a range dropped since). */
  private forgetLast(): void {
    this.lastFamily = 0;
    this.lastFound = NONE;
  }

  /** Holds `entry` under its prefix (several entries may share a prefix); hold an entry once at most. */
  add(entry: E): void {
    this.forgetLast();
    const p = entry.prefix;
    let level = this.levelOf(p);
    if (level === undefined) {
      const from = p.version === 4 ? 3 : 0;
      // an IPv6 /0 covers no word: keyed by word 0 all the same (masked, always 0)
      const to = p.version === 4 ? 4 : Math.max(1, Math.ceil(p.length / 32));
      level = { version: p.version, length: p.length, mask: maskOf(p), from, to, root: new Map() };
      this.levels = [...this.levels, level].sort((a, b) => a.length - b.length);
    }
    let node = level.root;
    for (let k = level.from; k < level.to - 1; k++) {
      const key = keyAt(p.network, level.mask, k);
      let next = node.get(key) as Node<E> | undefined;
      if (next === undefined) node.set(key, (next = new Map()));
      node = next;
    }
    const key = keyAt(p.network, level.mask, level.to - 1);
    node.set(key, [...((node.get(key) as readonly E[] | undefined) ?? NONE), entry]);
  }

  /** Lets go of `entry`; false when it is not held (deleted already, or never added). */
  delete(entry: E): boolean {
    this.forgetLast();
    const p = entry.prefix;
    const level = this.levelOf(p);
    if (level === undefined) return false;
    const path: Node<E>[] = [];
    let node = level.root;
    for (let k = level.from; k < level.to - 1; k++) {
      path.push(node);
      const next = node.get(keyAt(p.network, level.mask, k)) as Node<E> | undefined;
      if (next === undefined) return false;
      node = next;
    }
    const key = keyAt(p.network, level.mask, level.to - 1);
    const bucket = node.get(key) as readonly E[] | undefined;
    if (bucket === undefined || !bucket.includes(entry)) return false;
    if (bucket.length > 1) {
      node.set(
        key,
        bucket.filter((h) => h !== entry),
      );
      return true;
    }
    node.delete(key);
    // the Maps left empty go too, from the bucket's up
    for (let k = level.to - 2; k >= level.from && node.size === 0; k--) {
      node = path.pop()!;
      node.delete(keyAt(p.network, level.mask, k));
    }
    if (level.root.size === 0) this.levels = this.levels.filter((l) => l !== level);
    return true;
  }

  /**
   * The entries held under the prefixes of `version` that contain the address `w` (four u32 words,
   * IPv4 as [0, 0, 0, v4] as parseAddrInto writes it; network and broadcast included:
   * Prefix.contains), shortest prefix first. Read-only: where one prefix length holds the
   * address, its bucket as it is (buckets are replaced, never changed: a look-up on every store
   * event allocates nothing); else a new array, or a shared empty one. The same address as the
   * last look-up, with nothing added or deleted since, is answered what that one found.
   */
  containing(version: Family, w: ArrayLike<number>): readonly E[] {
    const last = this.lastWords;
    if (version === this.lastFamily && w[3] === last[3] && w[2] === last[2] && w[1] === last[1] && w[0] === last[0]) return this.lastFound;
    const found = this.lookUp(version, w);
    this.lastFamily = version;
    last[0] = w[0]!;
    last[1] = w[1]!;
    last[2] = w[2]!;
    last[3] = w[3]!;
    this.lastFound = found;
    return found;
  }

  /** containing() without the memo. */
  private lookUp(version: Family, w: ArrayLike<number>): readonly E[] {
    this.walked++;
    const levels = this.levels;
    let found: readonly E[] = NONE;
    let merged: E[] | null = null; // once a second level holds it
    for (let i = 0; i < levels.length; i++) {
      const level = levels[i]!;
      if (level.version !== version) continue;
      const m = level.mask;
      let node: Node<E> | readonly E[] | undefined = level.root;
      for (let k = level.from; k < level.to && node !== undefined; k++) node = (node as Node<E>).get((w[k]! & m[k]!) | 0);
      if (node === undefined) continue;
      // every prefix of the bucket has the masked words of `w` as its network: each contains it
      const bucket = node as readonly E[];
      if (found.length === 0) {
        found = bucket;
        continue;
      }
      merged ??= [...found];
      merged.push(...bucket);
      found = merged;
    }
    return found;
  }

  /** The level of `p`'s family and length (undefined: none holds such a prefix). */
  private levelOf(p: Prefix): Level<E> | undefined {
    return this.levels.find((l) => l.length === p.length && l.version === p.version);
  }

  /** Everything held, in no particular order (a new array). */
  all(): E[] {
    const out: E[] = [];
    const walk = (node: Node<E>, depth: number) => {
      for (const child of node.values()) {
        if (depth === 1) out.push(...(child as readonly E[]));
        else walk(child as Node<E>, depth - 1);
      }
    };
    for (const level of this.levels) walk(level.root, level.to - level.from);
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

/** The key of word `k` of a masked network: an int32, as containing() computes it (a small integer to the Map, not a heap number). */
function keyAt(network: ArrayLike<number>, mask: Uint32Array, k: number): number {
  return (network[k]! & mask[k]!) | 0;
}
