// A range's address space: the index of taken offsets together with the geometry that turns an
// offset into an address and back, so that every hot-path operation of an allocator crosses the
// JS ↔ WASM boundary once, with addresses (four u32 words) on both sides and the 128-bit math
// here only.
//
//   first = offset 0             first + rangeOffset                          first + n − 1 = last
//     │◂──────── LOWER band ──────▸│◂─────────────── UPPER band ──────────────────▸│
//     [0, rangeOffset − 1]          [rangeOffset, n − 1]
//
//   take(band, d):       start = band start + d (upstream: offsetAddress + rand), the first free
//                        offset from there, wrapping inside the band; marks it; its address → scratch
//   take_after(band, a): the same search from the offset after address a (a collision: go on)
//   set / clear / has(a): the offset of address a, then the index operation
//
// ╒═ Block (SPACE_BYTES) ═╕  0 index handle u32 │ 4 rangeOffset u32 │ 8 n u64 (offsets in [first, last])
//                            16 first, high 64 bits │ 24 first, low 64 bits │ 32 width u32 (32 | 128)
//
// Invariants: n ≥ 1 (an empty range has no space: the host never creates one); rangeOffset ≤ n;
// first + n − 1 fits the width; the index covers exactly [0, n).
import { hblock_size, hcalloc, heap_failed_bytes, hfree, recordFailedNeed } from './heap';
import * as dense from './dense';
import * as sparse from './sparse';
import { index_free, index_new, KIND_DENSE } from './freeindex';
import { getU32, putU32 } from './scratch';
import { NONE, OK, OUT_OF_RANGE } from './status';

/** Bands of a range: UPPER (dynamic, scanned first) and LOWER (static, the first rangeOffset offsets). */
export const BAND_UPPER: i32 = 0;
export const BAND_LOWER: i32 = 1;

// @ts-ignore: decorator
@inline const S_INDEX: usize = 0;
// @ts-ignore: decorator
@inline const S_RANGE_OFFSET: usize = 4;
// @ts-ignore: decorator
@inline const S_N: usize = 8;
// @ts-ignore: decorator
@inline const S_FIRST_HI: usize = 16;
// @ts-ignore: decorator
@inline const S_FIRST_LO: usize = 24;
// @ts-ignore: decorator
@inline const S_WIDTH: usize = 32;
// @ts-ignore: decorator
@inline const SPACE_BYTES: usize = 40;

/** Offsets past the address space of the width, or not below n: "not an offset of this space". */
// @ts-ignore: decorator
@inline const NO_OFFSET: u64 = 0xffffffffffffffff;

/**
 * A space over [first, first + n − 1] with an index of the given kind (freeindex.ts KIND_*).
 * The handle, or 0 when out of memory, when n is 0, or when the kind cannot hold n.
 */
export function space_new(kind: i32, f0: u32, f1: u32, f2: u32, f3: u32, nHi: u32, nLo: u32, rangeOffset: u32, width: u32): usize {
  const n = (<u64>nHi << 32) | <u64>nLo;
  if (n == 0 || <u64>rangeOffset > n) return 0;
  const ix = index_new(kind, nHi, nLo);
  if (ix == 0) {
    // the space's own block is needed too: a cap raised by what the index alone needed held the
    // index and then failed on this block (the next error asking for 64 bytes more)
    const need = heap_failed_bytes();
    if (need > 0) recordFailedNeed(<u64>need + hblock_size(SPACE_BYTES));
    return 0;
  }
  const s = hcalloc(SPACE_BYTES);
  if (s == 0) {
    // the index given back counts as needed too (heap_failed_bytes): the failing block alone, 64
    // bytes next to an index of megabytes, would understate what raising the cap must make room for
    index_free(ix);
    return 0;
  }
  store<u32>(s + S_INDEX, <u32>ix);
  store<u32>(s + S_RANGE_OFFSET, rangeOffset);
  store<u64>(s + S_N, n);
  store<u64>(s + S_FIRST_HI, (<u64>f0 << 32) | <u64>f1);
  store<u64>(s + S_FIRST_LO, (<u64>f2 << 32) | <u64>f3);
  store<u32>(s + S_WIDTH, width);
  return s;
}

/** Frees the space and its index. */
export function space_free(s: usize): void {
  if (s == 0) return;
  index_free(<usize>load<u32>(s + S_INDEX));
  hfree(s, SPACE_BYTES);
}

/** The index handle (for the index_* exports: count, validate, set_many, snapshots). */
export function space_index(s: usize): usize {
  return <usize>load<u32>(s + S_INDEX);
}

// ── address ⇄ offset ──────────────────────────────────────────────────────────────────────

/** The offset of address (w0..w3) from first, or NO_OFFSET when it is not in [first, last]. */
// @ts-ignore: decorator
@inline function offsetOf(s: usize, w0: u32, w1: u32, w2: u32, w3: u32): u64 {
  const hi = (<u64>w0 << 32) | <u64>w1;
  const lo = (<u64>w2 << 32) | <u64>w3;
  const fHi = load<u64>(s + S_FIRST_HI);
  const fLo = load<u64>(s + S_FIRST_LO);
  const borrow = <u64>(lo < fLo);
  // a − first = (hi − fHi − borrow) · 2^64 + (lo − fLo); an offset needs the high part zero
  if (hi < fHi || hi - fHi != borrow) return NO_OFFSET;
  const o = lo - fLo;
  return o < load<u64>(s + S_N) ? o : NO_OFFSET;
}

/** Writes the address first + o (o < n, so it fits the width) to scratch words 0..3. */
// @ts-ignore: decorator
@inline function putAddress(s: usize, o: u64): void {
  const fLo = load<u64>(s + S_FIRST_LO);
  const lo = fLo + o;
  const hi = load<u64>(s + S_FIRST_HI) + <u64>(lo < fLo);
  putU32(0, <u32>(hi >>> 32));
  putU32(1, <u32>hi);
  putU32(2, <u32>(lo >>> 32));
  putU32(3, <u32>lo);
}

// ── the search ───────────────────────────────────────────────────────────────────────────

/**
 * The first free offset of the closed band [lo, hi] from `start` (wrapping; each offset once),
 * marked taken, its address in scratch 0..3: OK, NONE (the band has no free offset), or
 * OUT_OF_MEMORY (a sparse index could not grow; nothing changed).
 */
function takeFrom(s: usize, start: u64, lo: u64, hi: u64): i32 {
  const ix = <usize>load<u32>(s + S_INDEX);
  let o: u64;
  if (load<u32>(ix) == KIND_DENSE) {
    // n ≤ 2^31: every offset is a u32
    const r = dense.dense_next_free32(ix, <u32>start, <u32>lo, <u32>hi);
    if (r < 0) return NONE;
    dense.dense_set(ix, <u32>r);
    o = <u64>r;
  } else {
    // the start itself first, nearly always free in a range that large (sparse_take_free)
    const st = sparse.sparse_take_free(ix, start, lo, hi);
    if (st != OK) return st; // NONE, or OUT_OF_MEMORY: nothing marked
    o = (<u64>getU32(0) << 32) | <u64>getU32(1);
  }
  putAddress(s, o);
  return OK;
}

/** The band's closed offset interval [bandLo, bandHi], set by bandOf (false: the band is empty). */
let bandLo: u64 = 0;
let bandHi: u64 = 0;
// @ts-ignore: decorator
@inline function bandOf(s: usize, band: i32): bool {
  const ro = <u64>load<u32>(s + S_RANGE_OFFSET);
  if (band == BAND_UPPER) {
    bandLo = ro;
    bandHi = load<u64>(s + S_N) - 1;
  } else {
    bandLo = 0;
    bandHi = ro - 1;
  }
  return ro != 0 || band == BAND_UPPER ? bandLo <= bandHi : false;
}

/**
 * allocateNext's search in one band: start at the band's first offset + d (d drawn by the host
 * as upstream draws it; for the upper band d < 2^64 − rangeOffset), take the first free offset
 * from there with wraparound, mark it, write its address to scratch 0..3. A start past the band
 * clamps to the band's start (upstream's iterator); a start whose address leaves the family (only
 * the last IPv6 /64 of the space) yields nothing, as upstream's iterator does.
 * OK, NONE (nothing free in the band), OUT_OF_MEMORY, OUT_OF_RANGE (bad band).
 */
export function space_take(s: usize, band: i32, dHi: u32, dLo: u32): i32 {
  if (band != BAND_UPPER && band != BAND_LOWER) return OUT_OF_RANGE;
  if (!bandOf(s, band)) return NONE;
  const d = (<u64>dHi << 32) | <u64>dLo;
  let start = bandLo + d;
  if (start < d) return NONE; // past 2^64: past the family's end too
  if (band == BAND_UPPER && load<u32>(s + S_WIDTH) == 128) {
    // first + start must stay below 2^128 (u128 carry out of the high half)
    const fLo = load<u64>(s + S_FIRST_LO);
    if (fLo + start < fLo && load<u64>(s + S_FIRST_HI) == 0xffffffffffffffff) return NONE;
  }
  if (start > bandHi) start = bandLo;
  return takeFrom(s, start, bandLo, bandHi);
}

/**
 * The same search continued after a collision: from the offset after address (w0..w3), which
 * must be in the band, wrapping. OK / NONE / OUT_OF_MEMORY as space_take; OUT_OF_RANGE when the
 * address is not in the band.
 */
export function space_take_after(s: usize, band: i32, w0: u32, w1: u32, w2: u32, w3: u32): i32 {
  if (band != BAND_UPPER && band != BAND_LOWER) return OUT_OF_RANGE;
  if (!bandOf(s, band)) return NONE;
  const o = offsetOf(s, w0, w1, w2, w3);
  if (o == NO_OFFSET || o < bandLo || o > bandHi) return OUT_OF_RANGE;
  return takeFrom(s, o == bandHi ? bandLo : o + 1, bandLo, bandHi);
}

// ── point operations by address ───────────────────────────────────────────────────────────

/** Marks address (w0..w3) taken: OK newly, NONE already, OUT_OF_RANGE not in [first, last], OUT_OF_MEMORY. */
export function space_set(s: usize, w0: u32, w1: u32, w2: u32, w3: u32): i32 {
  const o = offsetOf(s, w0, w1, w2, w3);
  if (o == NO_OFFSET) return OUT_OF_RANGE;
  const ix = <usize>load<u32>(s + S_INDEX);
  if (load<u32>(ix) == KIND_DENSE) return dense.dense_set(ix, <u32>o);
  return sparse.sparse_set(ix, o);
}

/** Marks address (w0..w3) free: OK if it was taken, NONE, OUT_OF_RANGE, OUT_OF_MEMORY (a sparse run split). */
export function space_clear(s: usize, w0: u32, w1: u32, w2: u32, w3: u32): i32 {
  const o = offsetOf(s, w0, w1, w2, w3);
  if (o == NO_OFFSET) return OUT_OF_RANGE;
  const ix = <usize>load<u32>(s + S_INDEX);
  if (load<u32>(ix) == KIND_DENSE) return dense.dense_clear(ix, <u32>o);
  return sparse.sparse_clear(ix, o);
}

/** 1 when address (w0..w3) is in [first, last] and taken, else 0. */
export function space_has(s: usize, w0: u32, w1: u32, w2: u32, w3: u32): i32 {
  const o = offsetOf(s, w0, w1, w2, w3);
  if (o == NO_OFFSET) return 0;
  const ix = <usize>load<u32>(s + S_INDEX);
  if (load<u32>(ix) == KIND_DENSE) return dense.dense_has(ix, <u32>o);
  return sparse.sparse_has(ix, o);
}

/**
 * The offset of address (w0..w3) as (hi, lo) in scratch 0..1: OK, or OUT_OF_RANGE when it is not
 * in [first, last]. (Snapshots and bulk loads; the point operations above need no offsets.)
 */
export function space_offset(s: usize, w0: u32, w1: u32, w2: u32, w3: u32): i32 {
  const o = offsetOf(s, w0, w1, w2, w3);
  if (o == NO_OFFSET) return OUT_OF_RANGE;
  putU32(0, <u32>(o >>> 32));
  putU32(1, <u32>o);
  return OK;
}

/** The address of offset (hi, lo) in scratch 0..3: OK, or OUT_OF_RANGE when the offset is not below n. */
export function space_address(s: usize, oHi: u32, oLo: u32): i32 {
  const o = (<u64>oHi << 32) | <u64>oLo;
  if (o >= load<u64>(s + S_N)) return OUT_OF_RANGE;
  putAddress(s, o);
  return OK;
}

/**
 * Bulk load: `count` addresses as four u32 words each at ptr (a buf_alloc buffer) are turned into
 * (hi, lo) offsets in place (entry e's offset at ptr + 8e) and set in one index_set_many call.
 * Returns how many were newly set, or OUT_OF_RANGE with the failing entry in scratch word 0
 * (nothing set), or OUT_OF_MEMORY (nothing set).
 */
export function space_set_many(s: usize, ptr: usize, count: u32): i32 {
  for (let e: u32 = 0; e < count; e++) {
    const at = ptr + (<usize>e << 4);
    const o = offsetOf(s, load<u32>(at), load<u32>(at, 4), load<u32>(at, 8), load<u32>(at, 12));
    if (o == NO_OFFSET) {
      putU32(0, e);
      return OUT_OF_RANGE;
    }
    // entry e's offset goes to ptr + 8e ≤ ptr + 16e: never over an entry not yet read
    store<u32>(ptr + (<usize>e << 3), <u32>(o >>> 32));
    store<u32>(ptr + (<usize>e << 3), <u32>o, 4);
  }
  const ix = <usize>load<u32>(s + S_INDEX);
  if (load<u32>(ix) == KIND_DENSE) return dense.dense_set_many(ix, ptr, count);
  return sparse.sparse_set_many(ix, ptr, count);
}
