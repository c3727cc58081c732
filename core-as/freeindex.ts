// The index of taken addresses: one handle, two representations, one contract.
//
// An index covers the offsets [0, n) of a range (offset 0 = the range's first usable address).
// Offsets are u64, passed across the boundary as (hi, lo) u32 pairs so JS never needs BigInt.
//
//   kind DENSE  (n ≤ DENSE_MAX_SLOTS): core-as/dense.ts, one bit per offset + summary levels
//   kind SPARSE (any n up to 2^64):     core-as/sparse.ts, memory proportional to what is taken
//
// Every handle points at a block whose first u32 is its kind; this file only dispatches.
// Results that are offsets are written to scratch words 0..1 as (hi, lo).

import * as dense from './dense';
import * as sparse from './sparse';
import { putU64 } from './scratch';
import { NONE, OK, OUT_OF_RANGE } from './status';

export const KIND_AUTO: i32 = 0;
export const KIND_DENSE: i32 = 1;
export const KIND_SPARSE: i32 = 2;
export const DENSE_MAX_SLOTS: u64 = 1 << 24;
/** The most offsets a dense index holds (asked for by kind; dense.ts counts them in u32). */
export const DENSE_MAX_OFFSETS: u64 = <u64>1 << 31;

function u64of(hi: u32, lo: u32): u64 {
  return (<u64>hi << 32) | <u64>lo;
}

/**
 * Creates an empty index over offsets [0, n), n = (nHi, nLo). kind: 0 auto (dense up to
 * DENSE_MAX_SLOTS), 1 dense (n ≤ 2^31), 2 sparse. Returns the handle, or 0 when out of memory or
 * when the kind cannot hold n.
 */
export function index_new(kind: i32, nHi: u32, nLo: u32): usize {
  const n = u64of(nHi, nLo);
  if (kind == KIND_AUTO) kind = n <= DENSE_MAX_SLOTS ? KIND_DENSE : KIND_SPARSE;
  if (kind == KIND_DENSE) return n > DENSE_MAX_OFFSETS ? 0 : dense.dense_new(<u32>n);
  if (kind == KIND_SPARSE) return sparse.sparse_new(n);
  return 0;
}

export function index_kind(h: usize): i32 {
  return <i32>load<u32>(h);
}

/** Frees the index and everything it owns. The handle is invalid afterwards. */
export function index_free(h: usize): void {
  if (h == 0) return;
  if (load<u32>(h) == KIND_DENSE) dense.dense_free(h);
  else sparse.sparse_free(h);
}

/** Marks an offset taken. OK if it was free, NONE if already taken, OUT_OF_RANGE, OUT_OF_MEMORY. */
export function index_set(h: usize, hi: u32, lo: u32): i32 {
  if (load<u32>(h) == KIND_DENSE) return hi != 0 ? OUT_OF_RANGE : dense.dense_set(h, lo);
  return sparse.sparse_set(h, u64of(hi, lo));
}

/** Marks an offset free. OK if it was taken, NONE if already free, OUT_OF_RANGE, OUT_OF_MEMORY. */
export function index_clear(h: usize, hi: u32, lo: u32): i32 {
  if (load<u32>(h) == KIND_DENSE) return hi != 0 ? OUT_OF_RANGE : dense.dense_clear(h, lo);
  return sparse.sparse_clear(h, u64of(hi, lo));
}

/** 1 if taken, 0 if free or out of range. */
export function index_has(h: usize, hi: u32, lo: u32): i32 {
  if (load<u32>(h) == KIND_DENSE) return hi != 0 ? 0 : dense.dense_has(h, lo);
  return sparse.sparse_has(h, u64of(hi, lo));
}

/** Number of taken offsets (exact below 2^53). */
export function index_count(h: usize): f64 {
  if (load<u32>(h) == KIND_DENSE) return <f64>dense.dense_count(h);
  return <f64>sparse.sparse_count(h);
}

/**
 * The first free offset in the closed band [lo, hi] found by scanning start, start+1, …, hi,
 * lo, …, start−1 (each once). A start outside [lo, hi] is clamped to lo. OK with the offset in
 * scratch 0..1, or NONE when every offset of the band is taken (or the band is empty: lo > hi,
 * or lo ≥ n).
 */
export function index_next_free(
  h: usize, sHi: u32, sLo: u32, loHi: u32, loLo: u32, hiHi: u32, hiLo: u32,
): i32 {
  if (load<u32>(h) == KIND_DENSE) {
    if (loHi != 0) return 0;
    const hi = hiHi != 0 ? 0xffffffff : hiLo;
    const s = sHi != 0 ? 0xffffffff : sLo;
    return dense.dense_next_free(h, s, loLo, hi);
  }
  return sparse.sparse_next_free(h, u64of(sHi, sLo), u64of(loHi, loLo), u64of(hiHi, hiLo));
}

/**
 * index_next_free, and the offset it finds marked taken, in one call (space_take's search on
 * offsets): OK with the offset in scratch 0..1, NONE when the band has no free offset, or
 * OUT_OF_MEMORY with nothing marked (a sparse index could not grow).
 */
export function index_take_free(
  h: usize, sHi: u32, sLo: u32, loHi: u32, loLo: u32, hiHi: u32, hiLo: u32,
): i32 {
  if (load<u32>(h) == KIND_DENSE) {
    if (loHi != 0) return NONE;
    const r = dense.dense_take_free32(h, sHi != 0 ? 0xffffffff : sLo, loLo, hiHi != 0 ? 0xffffffff : hiLo);
    if (r < 0) return NONE;
    putU64(0, <u64>r);
    return OK;
  }
  return sparse.sparse_take_free(h, u64of(sHi, sLo), u64of(loHi, loLo), u64of(hiHi, hiLo));
}

/** The smallest taken offset ≥ from: OK with it in scratch 0..1, or NONE. (Ascending walks.) */
export function index_next_set(h: usize, fromHi: u32, fromLo: u32): i32 {
  if (load<u32>(h) == KIND_DENSE) return fromHi != 0 ? 0 : dense.dense_next_set(h, fromLo);
  return sparse.sparse_next_set(h, u64of(fromHi, fromLo));
}

/** Bytes of linear memory the index owns (blocks at their class size). */
export function index_bytes(h: usize): f64 {
  if (load<u32>(h) == KIND_DENSE) return <f64>dense.dense_bytes(h);
  return <f64>sparse.sparse_bytes(h);
}

/**
 * Re-derives every counter and summary from the raw data. 0 when consistent, otherwise a
 * positive code naming the first broken invariant (documented in the kind's file).
 */
export function index_validate(h: usize): i32 {
  if (load<u32>(h) == KIND_DENSE) return dense.dense_validate(h);
  return sparse.sparse_validate(h);
}

/**
 * Gives back memory a sparse index grew into and no longer needs (its run pages and singles nodes
 * left mostly empty after a batch of sets was undone); nothing for a dense one. Never fails or
 * changes the offsets.
 */
export function index_compact(h: usize): void {
  if (load<u32>(h) != KIND_DENSE) sparse.sparse_compact(h);
}

/**
 * Batch set: `count` offsets as (hi, lo) u32 pairs at `ptr` (a buf_alloc buffer). Returns how
 * many were newly set; OUT_OF_RANGE, with the ones before the failing entry set and scratch word
 * 0 = the index of the failing entry; or OUT_OF_MEMORY, with nothing set.
 */
export function index_set_many(h: usize, ptr: usize, count: u32): i32 {
  if (load<u32>(h) == KIND_DENSE) return dense.dense_set_many(h, ptr, count);
  return sparse.sparse_set_many(h, ptr, count);
}

// ── uniform picks: the k-th free offset of a band ──────────────────────────────────────────
// Dense: rank and select along the COUNT summaries (dense.ts), O(64 · levels). Sparse: rank and
// select over the block sums of its run pages and singles nodes (sparse.ts), O(pages / 64 +
// nodes / 64 + one page + one node), whatever the number of runs in the band.

/**
 * The k-th free offset (0-based, ascending) of the closed band [lo, hi]: OK with it in scratch
 * 0..1, or NONE when the band holds k or fewer free offsets. hi ≥ n is clamped to n − 1.
 */
export function index_select_free(h: usize, kHi: u32, kLo: u32, loHi: u32, loLo: u32, hiHi: u32, hiLo: u32): i32 {
  if (load<u32>(h) == KIND_DENSE) {
    if (kHi != 0 || loHi != 0) return NONE;
    const r = dense.dense_select_free(h, kLo, loLo, hiHi != 0 ? 0xffffffff : hiLo);
    if (r < 0) return NONE;
    putU64(0, <u64>r);
    return OK;
  }
  return sparse.sparse_select_free(h, u64of(kHi, kLo), u64of(loHi, loLo), u64of(hiHi, hiLo));
}

/** Free offsets in the closed band [lo, hi] into scratch 0..1 as (hi, lo); returns OK. hi as for index_select_free. */
export function index_count_free(h: usize, loHi: u32, loLo: u32, hiHi: u32, hiLo: u32): i32 {
  if (load<u32>(h) == KIND_DENSE) {
    const free = loHi != 0 ? 0 : dense.dense_count_free(h, loLo, hiHi != 0 ? 0xffffffff : hiLo);
    putU64(0, <u64>free);
    return OK;
  }
  putU64(0, sparse.sparse_count_free(h, u64of(loHi, loLo), u64of(hiHi, hiLo)));
  return OK;
}
