// OffsetMap: a map keyed by a u64 offset given as (hi, lo) u32 halves, without a key object per
// call. The cool-down queue (adapters/cooling.ts) keeps its held and returned offsets in it.
import { TWO32 } from './random.ts';

/** The smallest capacity of an OffsetMap; a power of two, as every capacity. */
const MIN_SLOTS = 8;
/**
 * An OffsetMap this small does not shrink: a call that returns a quarter of the held offsets
 * early fills the table of returned ones and empties it again, and resized it both ways each time
 * (measured: 1.4× the time of an allocation on a /20 at 99 % fill).
 */
const SMALL_SLOTS = 64;

/**
 * The 32-bit hash of (hi, lo) under `seed`, whose top bits are an OffsetMap's home slot. `hi` goes
 * through two multiplies (as murmur3 finishes) before `lo` joins it: after one only, offsets that
 * differ in the top k bits of both halves hashed alike under every seed (of the 2^2k such offsets
 * a caller can pick on a /64, 2^k to each home). The shift before the last multiply carries the
 * top bits of `lo` into the low bits of the home too. Exported for the tests.
 * @internal
 */
export function offsetHash(hi: number, lo: number, seed: number): number {
  let h = Math.imul(hi ^ seed, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 16), 0xc2b2ae35);
  h ^= lo;
  return Math.imul(h ^ (h >>> 16), 0x9e3779b1);
}

/**
 * A map from offsets (hi, lo) to values, that builds no key per call: linear probing over a
 * power-of-two table of slots, at most half full, deletes by backward shift (as NameTable). A JS
 * Map needs one key per offset, and exact numbers reach 2^53 only: the string key it took for a
 * /64's high offsets (any random one) took two thirds of the time of a cool-down's allocateNext
 * + release there, 5/6 of a forEach's over a /64 with half its addresses held (measured side by
 * side with this table), and twice the memory; a Map of lo per hi cost a Map per held offset.
 * On a /20 it is about as fast as a Map keyed by number. The hash is seeded per table: offsets
 * a caller picks cannot be aimed at one run of slots without knowing the seed.
 *
 * Invariants: slot i is empty when `vals[i]` is undefined (no value is), else it holds (hi, lo)
 * at keys[2i], keys[2i + 1], no other slot does, and it is reachable from its home slot without
 * crossing an empty one; 2 · size ≤ capacity, and capacity ≤ SMALL_SLOTS or 8 · size ≥ capacity
 * (it grows at half full and shrinks below an eighth).
 * @internal
 */
export class OffsetMap<V extends NonNullable<unknown>> {
  private readonly seed = (Math.random() * TWO32) >>> 0;
  private mask = MIN_SLOTS - 1;
  private shift = 32 - Math.log2(MIN_SLOTS);
  private keys = new Uint32Array(2 * MIN_SLOTS);
  /** Slot i's value, undefined where it is empty. */
  private vals: (V | undefined)[] = new Array<V | undefined>(MIN_SLOTS).fill(undefined);
  private count = 0;

  get size(): number {
    return this.count;
  }

  private home(hi: number, lo: number): number {
    return offsetHash(hi, lo, this.seed) >>> this.shift;
  }

  /** The slot of (hi, lo), or −1 when it has none. */
  private find(hi: number, lo: number): number {
    const keys = this.keys;
    for (let i = this.home(hi, lo); ; i = (i + 1) & this.mask) {
      if (this.vals[i] === undefined) return -1;
      if (keys[2 * i] === hi && keys[2 * i + 1] === lo) return i;
    }
  }

  get(hi: number, lo: number): V | undefined {
    if (this.size === 0) return undefined;
    const i = this.find(hi, lo);
    return i < 0 ? undefined : this.vals[i];
  }

  has(hi: number, lo: number): boolean {
    return this.size !== 0 && this.find(hi, lo) >= 0;
  }

  set(hi: number, lo: number, value: V): void {
    const keys = this.keys;
    let i = this.home(hi, lo);
    for (; this.vals[i] !== undefined; i = (i + 1) & this.mask) {
      if (keys[2 * i] === hi && keys[2 * i + 1] === lo) {
        this.vals[i] = value;
        return;
      }
    }
    if (2 * (this.size + 1) > this.vals.length) {
      this.resize(2 * this.vals.length);
      this.set(hi, lo, value);
      return;
    }
    keys[2 * i] = hi;
    keys[2 * i + 1] = lo;
    this.vals[i] = value;
    this.count++;
  }

  /** Removes (hi, lo): true if it was there. */
  delete(hi: number, lo: number): boolean {
    if (this.size === 0) return false;
    let i = this.find(hi, lo);
    if (i < 0) return false;
    // backward shift: each entry after i in its run moves into the hole unless its home lies
    // after the hole (it would then sit before its home)
    const { keys, vals, mask } = this;
    for (let j = (i + 1) & mask; vals[j] !== undefined; j = (j + 1) & mask) {
      if (((j - this.home(keys[2 * j]!, keys[2 * j + 1]!)) & mask) < ((j - i) & mask)) continue;
      keys[2 * i] = keys[2 * j]!;
      keys[2 * i + 1] = keys[2 * j + 1]!;
      vals[i] = vals[j];
      i = j;
    }
    vals[i] = undefined;
    this.count--;
    if (8 * this.size < vals.length && vals.length > SMALL_SLOTS) this.resize(vals.length >> 1);
    return true;
  }

  clear(): void {
    this.mask = MIN_SLOTS - 1;
    this.shift = 32 - Math.log2(MIN_SLOTS);
    this.keys = new Uint32Array(2 * MIN_SLOTS);
    this.vals = new Array<V | undefined>(MIN_SLOTS).fill(undefined);
    this.count = 0;
  }

  /** Each value replaced by `fn` of it. */
  update(fn: (value: V) => V): void {
    const vals = this.vals;
    for (let i = 0; i < vals.length; i++) if (vals[i] !== undefined) vals[i] = fn(vals[i]!);
  }

  /** Calls `fn` with each value (a callback, not an iterator: firstKept runs on every allocation). */
  forEach(fn: (value: V) => void): void {
    const vals = this.vals;
    for (let i = 0; i < vals.length; i++) if (vals[i] !== undefined) fn(vals[i]!);
  }

  private resize(capacity: number): void {
    const { keys, vals } = this;
    this.mask = capacity - 1;
    this.shift = 32 - Math.log2(capacity);
    this.keys = new Uint32Array(2 * capacity);
    this.vals = new Array<V | undefined>(capacity).fill(undefined);
    this.count = 0;
    for (let i = 0; i < vals.length; i++) if (vals[i] !== undefined) this.set(keys[2 * i]!, keys[2 * i + 1]!, vals[i]!);
  }
}
