// The sparse index: the taken offsets of a huge range (up to 2^64 − 1 offsets, an IPv6 /64),
// memory following what is taken, not the size of the range.
//
// Every taken offset belongs to exactly one maximal run of taken offsets (free on both sides, or
// at 0 / n − 1). The runs are kept in two structures by length:
//
//   header (24 B → 32-byte block)
//   ┌──────────────────────────────┐
//   │ u32 kind = KIND_SPARSE (2)   │
//   │ u32 runs    ─────────────────┼──▸ core-as/sparse-runs.ts: runs of ≥ 2 offsets as [start, end]
//   │ u32 singles ─────────────────┼──▸ core-as/sparse-singles.ts: runs of exactly 1 offset, as keys
//   │ u32 (unused)                 │     (an ordered set with one-cache-miss lookups)
//   │ u64 n       offsets [0, n)   │
//   └──────────────────────────────┘
//
//   offsets   0 ········ 7 8 9 ············ 40 ·········· 91 92 93 94 ·····
//   taken               ■ ■ ■               ■             ■  ■  ■  ■
//   stored              runs: [7, 9]        singles: 40   runs: [91, 94]
//
// Invariants (checked by sparse_validate; codes below):
//   P1 the runs structure holds maximal runs only, each of at least 2 offsets (its own invariants:
//      sorted, a.end + 1 < b.start, inside [0, n)).
//   P2 the singles hold offsets < n that are isolated: neither neighbour is a single or in a run.
//   P3 no offset is in both. count = runs' count + singles' count.
// Hence the next free offset after a taken x is x + 1 for a single and end + 1 for a run: one
// lookup in each structure, whatever the length of the run (an organic /64 fill is mostly long
// runs; a random one is mostly singles).
//
// Random allocation in a /64 leaves almost every taken offset isolated, so the hot path (has, a
// next-free that lands on a free offset, set, clear) is a few probes of one singles node, usually
// one cache line. No export leaves state half-changed: a set or clear that needs memory
// (a singles node rebuilt, a run split) allocates before it changes anything, or fails with
// OUT_OF_MEMORY and the index as it was.

import { halloc, hfree, hblock_size, heap_free_for_blocks } from './heap';
import { getU32, putU32, putU64 } from './scratch';
import { OK, NONE, OUT_OF_RANGE, OUT_OF_MEMORY } from './status';
import {
  runs_new, runs_free, runs_set, runs_clear, runs_has, runs_count, runs_bounds, runs_first_free_from,
  runs_next_set, runs_bytes, runs_validate, runs_load, runs_run_count, radixSort, radixHistBytes, runStart, runEnd, nextTaken,
  runs_rank, runs_select_gap, runs_compact,
} from './sparse-runs';
import {
  singles_new, singles_free, singles_has, singles_insert, singles_near, singles_insert_near, singles_remove, singles_next, singles_count,
  singles_bytes, singles_validate, singles_build, singles_copy_sorted, nextKey, nearPrev, nearNext,
  singles_rank, singles_nodes, singles_before_node, singles_node_count, singles_node_walk, singles_node_chunks,
  singles_chunk_first, chunkKey, chunkSlot, chunkIndex, singles_node_shape, singles_compact, singles_growth_bound, SINGLES_LARGEST_BLOCK,
} from './sparse-singles';

/** Must equal KIND_SPARSE in freeindex.ts (not imported: freeindex.ts imports this file). */
const KIND: u32 = 2;

// ── header ─────────────────────────────────────────────────────────────────────────────────
const H_KIND: usize = 0; //    u32 = KIND
const H_RUNS: usize = 4; //    u32 runs of ≥ 2 offsets (sparse-runs.ts handle)
const H_SINGLES: usize = 8; // u32 isolated offsets (sparse-singles.ts handle)
const H_N: usize = 16; //      u64 domain size: every taken offset is < n
const HEADER_SIZE: usize = 24;

/** Batches at least this large (and ≥ count / 4) take the sort-and-rebuild path of set_many. */
const BULK_MIN: u32 = 64;
/** Larger batches go one by one: their sort copies (16 bytes per entry) would pass 2 GiB. */
const BULK_MAX: u32 = 1 << 26;

// ── validate() codes ───────────────────────────────────────────────────────────────────────
/** 1: the kind word is not KIND_SPARSE. */
export const SPARSE_BAD_KIND: i32 = 1;
/** 2: a run of one offset in the runs structure (P1). */
export const SPARSE_SHORT_RUN: i32 = 2;
/** 3: a single next to a run or inside one, or two singles side by side (P2, P3). */
export const SPARSE_NOT_ISOLATED: i32 = 3;
/** 4: a single ≥ n (P2). */
export const SPARSE_SINGLE_OUT_OF_RANGE: i32 = 4;
/** 10 + c: the runs structure broke its own invariant c (RUNS_* in sparse-runs.ts). */
export const SPARSE_RUNS_BASE: i32 = 10;
/** 30 + c: the singles broke their own invariant c (SINGLES_* in sparse-singles.ts; runs' codes reach 11). */
export const SPARSE_SINGLES_BASE: i32 = 30;

// @ts-ignore: decorator
@inline function runsOf(h: usize): usize { return <usize>load<u32>(h + H_RUNS); }
// @ts-ignore: decorator
@inline function singlesOf(h: usize): usize { return <usize>load<u32>(h + H_SINGLES); }
// @ts-ignore: decorator
@inline function nOf(h: usize): u64 { return load<u64>(h + H_N); }

// ── the contract (core-as/freeindex.ts) ────────────────────────────────────────────────────

/** An empty index over [0, n). 0 when out of memory. */
export function sparse_new(n: u64): usize {
  //  stops at the first block that fails, so the failure recorded is that one (heap_failed_*)
  const h = halloc(HEADER_SIZE);
  if (h == 0) return 0;
  const r = runs_new(n);
  if (r == 0) {
    hfree(h, HEADER_SIZE);
    return 0;
  }
  const s = singles_new();
  if (s == 0) {
    runs_free(r);
    hfree(h, HEADER_SIZE);
    return 0;
  }
  memory.fill(h, 0, HEADER_SIZE);
  store<u32>(h + H_KIND, KIND);
  store<u32>(h + H_RUNS, <u32>r);
  store<u32>(h + H_SINGLES, <u32>s);
  store<u64>(h + H_N, n);
  return h;
}

/** Returns every block. */
export function sparse_free(h: usize): void {
  runs_free(runsOf(h));
  singles_free(singlesOf(h));
  hfree(h, HEADER_SIZE);
}

/** Marks x taken, joining the runs or singles beside it. OK / NONE (taken) / OUT_OF_RANGE / OUT_OF_MEMORY. */
export function sparse_set(h: usize, x: u64): i32 {
  const n = nOf(h);
  if (x >= n) return OUT_OF_RANGE;
  const S = singlesOf(h);
  const R = runsOf(h);
  if (singles_near(S, x)) return NONE;
  const leftSingle = nearPrev;
  const rightSingle = nearNext;
  //  no runs at all (a random fill): x is free and, without a single beside it, a new single
  const noRuns = runs_count(R) == 0;
  if (!noRuns && runs_has(R, x) != 0) return NONE;
  if (!leftSingle && !rightSingle && (noRuns || ((x == 0 || runs_has(R, x - 1) == 0) && (x + 1 >= n || runs_has(R, x + 1) == 0)))) {
    //  ·  x  ·   →   a new single (OUT_OF_MEMORY when its node must be rebuilt and cannot)
    return singles_insert_near(S, x);
  }
  //  [■■] x      x [■■]     ■ x      x ■     →  x joins a run, or makes one with the single(s)
  //  runs_set allocates only when no run is beside x (then nothing changed on failure); the
  //  singles it then absorbs join that run without allocating.
  const st = runs_set(R, x);
  if (st != OK) return st;
  if (leftSingle) {
    runs_set(R, x - 1);
    singles_remove(S, x - 1);
  }
  if (rightSingle) {
    runs_set(R, x + 1);
    singles_remove(S, x + 1);
  }
  return OK;
}

/** Marks x free. OK / NONE (free) / OUT_OF_RANGE / OUT_OF_MEMORY (a run split; nothing changed). */
export function sparse_clear(h: usize, x: u64): i32 {
  if (x >= nOf(h)) return OUT_OF_RANGE;
  const S = singlesOf(h);
  if (singles_remove(S, x)) return OK; //  never allocates
  const R = runsOf(h);
  if (!runs_bounds(R, x)) return NONE;
  const s = runStart;
  const e = runEnd;
  //  a piece of one offset left beside x becomes a single:  [s x ■■] → s · [■■]
  const leftSingle = x > s && x - 1 == s;
  const rightSingle = x < e && x + 1 == e;
  // the singles first (they may need memory), then the run: shrinking a run from its ends never
  // allocates, so only a split of a run into two runs of ≥ 2 can still fail, and then nothing
  // has changed.
  if (leftSingle && singles_insert(S, s) != OK) return OUT_OF_MEMORY;
  if (rightSingle && singles_insert(S, e) != OK) {
    if (leftSingle) singles_remove(S, s);
    return OUT_OF_MEMORY;
  }
  if (leftSingle) runs_clear(R, s);
  if (rightSingle) runs_clear(R, e);
  return runs_clear(R, x);
}

/** 1 if x is taken, 0 if free or out of range. */
export function sparse_has(h: usize, x: u64): i32 {
  if (x >= nOf(h)) return 0;
  if (singles_has(singlesOf(h), x)) return 1;
  const R = runsOf(h);
  return runs_count(R) != 0 && runs_has(R, x) != 0 ? 1 : 0;
}

export function sparse_count(h: usize): u64 {
  return singles_count(singlesOf(h)) + runs_count(runsOf(h));
}

/** The first free offset ≥ x: x, a single's x + 1, or its run's end + 1 (P1, P2; may equal n). */
// @ts-ignore: decorator
@inline function firstFreeFrom(h: usize, x: u64): u64 {
  if (singles_has(singlesOf(h), x)) return x + 1; //  x < n ≤ 2^64 − 1: no overflow
  const R = runsOf(h);
  return runs_count(R) == 0 ? x : runs_first_free_from(R, x);
}

/**
 * First free offset scanning start..hi, then lo..start−1, in the closed band [lo, hi]. O(log):
 * runs are maximal, so only what holds start and what holds lo are ever looked at.
 */
export function sparse_next_free(h: usize, start: u64, lo: u64, hi: u64): i32 {
  const n = nOf(h);
  if (lo > hi || lo >= n) return NONE;
  if (hi >= n) hi = n - 1;
  if (start < lo || start > hi) start = lo;
  //  lo        start              hi
  //  ├───────────┼──[■■■■■]·········┤     the run holding start ends before hi: its end + 1
  let f = firstFreeFrom(h, start);
  if (f <= hi) {
    putU64(0, f);
    return OK;
  }
  //  lo        start              hi
  //  ├···········┼[■■■■■■■■■■■■■■■■■┼■■]  start..hi is covered: wrap to lo, accept only < start
  if (start == lo) return NONE;
  f = firstFreeFrom(h, lo);
  if (f < start) {
    putU64(0, f);
    return OK;
  }
  return NONE;
}

/**
 * sparse_next_free, and the offset it finds marked taken: OK with it in scratch 0..1, NONE (the
 * band has no free offset), or OUT_OF_MEMORY (nothing marked). A start in a range this large is
 * nearly always free, so marking it is the search's first step and its answer: one lookup instead
 * of a search and a set (the set's lookup of its neighbours included). Only a taken start pays
 * that failed attempt before the search.
 */
export function sparse_take_free(h: usize, start: u64, lo: u64, hi: u64): i32 {
  const n = nOf(h);
  if (lo > hi || lo >= n) return NONE;
  if (hi >= n) hi = n - 1;
  if (start < lo || start > hi) start = lo;
  let st = sparse_set(h, start);
  if (st == OK) {
    putU64(0, start);
    return OK;
  }
  if (st < 0) return st; //  OUT_OF_MEMORY: nothing marked
  if (sparse_next_free(h, start, lo, hi) != OK) return NONE;
  st = sparse_set(h, (<u64>getU32(0) << 32) | <u64>getU32(1)); //  free: OK, or OUT_OF_MEMORY
  return st < 0 ? st : OK;
}

/** The smallest taken offset ≥ from: OK with it in scratch 0..1, or NONE. */
export function sparse_next_set(h: usize, from: u64): i32 {
  const a = singles_next(singlesOf(h), from);
  const b = runs_next_set(runsOf(h), from);
  if (!a && !b) return NONE;
  putU64(0, a && (!b || nextKey < nextTaken) ? nextKey : nextTaken);
  return OK;
}

/** Bytes owned: header, runs and singles, each block at its class size. */
export function sparse_bytes(h: usize): usize {
  return hblock_size(HEADER_SIZE) + runs_bytes(runsOf(h)) + singles_bytes(singlesOf(h));
}

/**
 * For tests: the shape of singles node p into scratch words 0..5 (core-as/sparse-singles.ts,
 * singles_node_shape). OK, or NONE when p is past the last node or h is not a sparse index.
 */
export function sparse_singles_node(h: usize, p: u32): i32 {
  if (load<u32>(h + H_KIND) != KIND) return NONE;
  return singles_node_shape(singlesOf(h), p) ? OK : NONE;
}

/**
 * Bytes the index may grow by when `count` more offsets, spread as its singles are, are set
 * (core-as/sparse-singles.ts, singles_growth_bound): for the estimate of a refused load into a
 * live index. 0 when h is not a sparse index or holds no singles.
 */
export function sparse_growth_bound(h: usize, count: u32): f64 {
  if (load<u32>(h + H_KIND) != KIND) return 0;
  return singles_growth_bound(singlesOf(h), count);
}

/**
 * The bytes free below the cap in pieces that can hold a largest singles node (64 KiB): what the
 * growth sparse_growth_bound counts can use, most of it in such nodes.
 */
export function sparse_free_for_nodes(): f64 {
  return heap_free_for_blocks(SINGLES_LARGEST_BLOCK);
}

/**
 * Gives back the memory of run pages and singles nodes left mostly empty (after a batch of sets
 * was undone): neighbouring pages and nodes merged in place, oversized nodes rebuilt smaller,
 * directories shrunk. Never fails; the offsets stay.
 */
export function sparse_compact(h: usize): void {
  runs_compact(runsOf(h));
  singles_compact(singlesOf(h));
}

/** Re-derives P1–P3 and both structures' own invariants; 0, or the code of the first broken one. */
export function sparse_validate(h: usize): i32 {
  if (load<u32>(h + H_KIND) != KIND) return SPARSE_BAD_KIND;
  const R = runsOf(h);
  const S = singlesOf(h);
  const n = nOf(h);
  const rc = runs_validate(R);
  if (rc != 0) return SPARSE_RUNS_BASE + rc;
  const sc = singles_validate(S);
  if (sc != 0) return SPARSE_SINGLES_BASE + sc;
  // P1: every run has ≥ 2 offsets and no single beside it
  let from: u64 = 0;
  while (runs_next_set(R, from)) {
    const s = nextTaken;
    const e = runs_first_free_from(R, s) - 1;
    if (e == s) return SPARSE_SHORT_RUN;
    if ((s > 0 && singles_has(S, s - 1)) || singles_has(S, e + 1)) return SPARSE_NOT_ISOLATED;
    if (e + 1 >= n) break;
    from = e + 1;
  }
  // P2, P3: every single is < n, outside every run, with both neighbours free
  from = 0;
  while (singles_next(S, from)) {
    const k = nextKey;
    if (k >= n) return SPARSE_SINGLE_OUT_OF_RANGE;
    if (runs_has(R, k) != 0 || (k > 0 && runs_has(R, k - 1) != 0) || runs_has(R, k + 1) != 0) return SPARSE_NOT_ISOLATED;
    if (k + 1 >= n) break;
    if (singles_has(S, k + 1)) return SPARSE_NOT_ISOLATED;
    from = k + 1;
  }
  return 0;
}

// ── uniform picks: count and select the free offsets of a band ────────────────────────────
//
// Both come from rank(x) = taken offsets below x = runs_rank + singles_rank, each a sum of block
// words and of one block's entries, then one page or node (sparse-runs.ts, sparse-singles.ts):
// O(pages / 64 + nodes / 64 + 64 + one page + half a node), whatever the number of runs.
//
//   free(y) = y − rank(y)  (free offsets below y; nondecreasing, +1 at each free offset)
//   the k-th free offset of [lo, hi] is the j-th free offset of [0, n), j = k + free(lo)
//
// Select has two interleaved ordered sets to look through. The free offsets are the offsets
// outside the runs (the gaps; runs_select_gap gives the m-th) minus the singles, which all lie in
// gaps (P3). If c singles lie below the answer y, y is gap offset j + c; and a single s_i (the
// i-th, 0-based) lies below y exactly when free(s_i) = s_i − runs_rank(s_i) − i ≤ j. That
// quantity rises with i, so c is found by bisection over the nodes by their first key, then
// within the node over every 64th key (without runs, a walk that stops at the first that fails),
// then by bisection over the ≤ 64 keys after the last that passed.
//
//   offsets  0 1 2 3 [4 5 6] 7 8 9 10 …     run [4, 6]; singles 1 and 8
//   gaps     0 1 2 3         7 8 9 10 …     gap offsets, numbered 0 1 2 3 4 5 6 7 …
//   free     0   2 3         7   9 10 …     j = 4: singles 1 and 8 lie below it (c = 2) → gap 6 = 9

/** Node keys read by select: those of one chunk of a singles node, at most 64 consecutive ones. */
const PICK_STEP: u32 = 64;
const PICK_KEYS: usize = memory.data(64 * 8, 8);

/** Offsets below x that are taken (x ≤ n). */
// @ts-ignore: decorator
@inline function rankOf(h: usize, x: u64): u64 {
  return runs_rank(runsOf(h), x) + singles_rank(singlesOf(h), x);
}

/** Free offsets below single s, the idx-th key of the singles: s − runs below s − idx. */
// @ts-ignore: decorator
@inline function freeBelowSingle(R: usize, s: u64, idx: u64): u64 {
  return s - runs_rank(R, s) - idx;
}

/** Free offsets of the closed band [lo, hi] (hi clamped to n − 1; 0 when lo > hi or lo ≥ n). */
export function sparse_count_free(h: usize, lo: u64, hi: u64): u64 {
  const n = nOf(h);
  if (lo > hi || lo >= n) return 0;
  if (hi >= n) hi = n - 1;
  //  hi + 1 ≤ n ≤ 2^64 − 1: no overflow; hi − lo + 1 ≤ 2^64 − 1 likewise
  return hi - lo + 1 - (rankOf(h, hi + 1) - rankOf(h, lo));
}

/** The number of singles below the j-th free offset of [0, n) (one that exists). */
function singlesBelowFree(h: usize, j: u64): u64 {
  const S = singlesOf(h);
  const R = runsOf(h);
  if (singles_count(S) == 0) return 0;
  //  the last node whose first key has at most j free offsets below it (every node holds a key:
  //  only a lone node may be empty, and then the count is 0)
  let a: u32 = 0;
  let b = singles_nodes(S);
  while (a < b) {
    const mid = (a + b) >>> 1;
    singles_node_walk(S, mid, 0, 0, 1, PICK_KEYS);
    if (freeBelowSingle(R, load<u64>(PICK_KEYS), singles_before_node(S, mid)) <= j) a = mid + 1;
    else b = mid;
  }
  if (a == 0) return 0;
  const q = a - 1;
  const base = singles_before_node(S, q);
  //  the node's chunks (CHUNK_SLOTS slots each, their keys counted): the last whose first key
  //  qualifies, bisected (chunk 0's does: it is the node's first key). The keys from a chunk on
  //  that fails all fail, so the answer lies among the ≤ 64 keys of that chunk.
  a = 1;
  b = singles_node_chunks(S, q);
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (singles_chunk_first(S, q, mid) && freeBelowSingle(R, chunkKey, base + <u64>chunkIndex) <= j) a = mid + 1;
    else b = mid;
  }
  singles_chunk_first(S, q, a - 1);
  const first = chunkIndex; //  in-node index of that chunk's first key
  const firstSlot = chunkSlot; // and its slot
  const keys = singles_node_walk(S, q, firstSlot, 0, PICK_STEP, PICK_KEYS);
  a = 1;
  b = keys;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (freeBelowSingle(R, load<u64>(PICK_KEYS + (<usize>mid << 3)), base + <u64>(first + mid)) <= j) a = mid + 1;
    else b = mid;
  }
  assert(first + a <= singles_node_count(S, q), 'sparse: select went past its node');
  return base + <u64>(first + a);
}

/**
 * The k-th free offset (0-based, ascending) of the closed band [lo, hi] (hi clamped to n − 1):
 * OK with it in scratch 0..1, or NONE when the band holds k or fewer free offsets.
 */
export function sparse_select_free(h: usize, k: u64, lo: u64, hi: u64): i32 {
  const n = nOf(h);
  if (lo > hi || lo >= n) return NONE;
  if (hi >= n) hi = n - 1;
  const takenBelowLo = rankOf(h, lo);
  if (k >= hi - lo + 1 - (rankOf(h, hi + 1) - takenBelowLo)) return NONE;
  const j = k + (lo - takenBelowLo); //  < hi + 1 − (taken in [0, hi]) ≤ 2^64 − 1
  const y = runs_select_gap(runsOf(h), j + singlesBelowFree(h, j));
  //  (guarded: --noAssert keeps an assert's expression when it writes a global, as sparse_has does)
  if (!ASC_NO_ASSERT) assert(y >= lo && y <= hi && sparse_has(h, y) == 0, 'sparse: select found no free offset of the band');
  putU64(0, y);
  return OK;
}

// ── batch load ─────────────────────────────────────────────────────────────────────────────

// @ts-ignore: decorator
@inline function offsetAt(ptr: usize, i: u32): u64 {
  const at = ptr + (<usize>i << 3);
  return (<u64>load<u32>(at) << 32) | <u64>load<u32>(at, 4);
}

// @ts-ignore: decorator
@inline function setOffsetAt(ptr: usize, i: u32, x: u64): void {
  const at = ptr + (<usize>i << 3);
  store<u32>(at, <u32>(x >>> 32));
  store<u32>(at, <u32>x, 4);
}

/** Not an offset (offsets are below n ≤ 2^64 − 1): an entry sparse_set_many found set already. */
const NOT_ADDED: u64 = 0xffffffffffffffff;

/**
 * Sets the `count` offsets at ptr as (hi, lo) u32 pairs, unsorted, duplicates allowed (the
 * buffer is the host's scratch: it may be overwritten). Returns how many were newly set. An
 * entry ≥ n: the entries before it are set, scratch word 0 = its position, OUT_OF_RANGE. Out of
 * memory: nothing is set (what was, is cleared again), scratch word 0 = the failing position,
 * OUT_OF_MEMORY.
 */
export function sparse_set_many(h: usize, ptr: usize, count: u32): i32 {
  const n = nOf(h);
  let m = count;
  for (let i: u32 = 0; i < count; i++) {
    if (offsetAt(ptr, i) >= n) {
      m = i;
      break;
    }
  }
  let added: i32 = -1;
  if (m >= BULK_MIN && m <= BULK_MAX && <u64>m * 4 >= sparse_count(h)) added = bulkLoad(h, ptr, m);
  if (added < 0) {
    // one by one: small batches, or the bulk path found no memory for its copies
    added = 0;
    for (let i: u32 = 0; i < m; i++) {
      const st = sparse_set(h, offsetAt(ptr, i));
      if (st == OK) added++;
      else if (st == OUT_OF_MEMORY) {
        // All or nothing: clear what this call set, last first. Each clear undoes the set made
        // just before it, so it needs no memory that set did not free.
        for (let j = <i32>i - 1; j >= 0; j--) {
          const x = offsetAt(ptr, <u32>j);
          if (x != NOT_ADDED) sparse_clear(h, x);
        }
        putU32(0, i);
        return OUT_OF_MEMORY;
      } else {
        setOffsetAt(ptr, i, NOT_ADDED); // set already: not this call's to undo (the buffer is the host's scratch copy)
      }
    }
  }
  if (m < count) {
    putU32(0, m);
    return OUT_OF_RANGE;
  }
  return added;
}

// The merge of bulkLoad (module globals: no closures): its inputs, and its output (counted
// only while oEmit is false).
let mKeys: usize = 0; //    sorted new keys (duplicates allowed)
let mM: u32 = 0;
let mOlds: usize = 0; //    old singles, sorted
let mOldCount: u32 = 0;
let oEmit = false;
let oSingles: usize = 0; // u64 keys
let oNs: u32 = 0;
let oRuns: usize = 0; //    (start, end) u64 pairs
let oNr: u32 = 0;
let oTotal: u64 = 0;

// @ts-ignore: decorator
@inline function put(s: u64, e: u64): void {
  if (s == e) {
    if (oEmit) store<u64>(oSingles + (<usize>oNs << 3), s);
    oNs++;
  } else {
    if (oEmit) {
      const at = oRuns + (<usize>oNr << 4);
      store<u64>(at, s);
      store<u64>(at, e, 8);
    }
    oNr++;
  }
  oTotal += e - s + 1;
}

/**
 * Three sorted streams (new keys, old singles, old runs) coalesced into maximal runs, put in
 * ascending order: the current run [cs, ce] grows by each next item [s, e] with s ≤ ce + 1, else
 * it is put and the item starts the next one.
 */
function merge(R: usize, n: u64): void {
  oNs = 0;
  oNr = 0;
  oTotal = 0;
  let j: u32 = 0; //   next key
  let q: u32 = 0; //   next old single
  let haveRun = runs_next_set(R, 0);
  let rs: u64 = nextTaken;
  let re: u64 = haveRun ? runs_first_free_from(R, rs) - 1 : 0;
  let have = false;
  let cs: u64 = 0;
  let ce: u64 = 0;
  for (;;) {
    let s: u64 = 0xffffffffffffffff;
    let e: u64 = 0;
    let from = 0; //  which stream the item comes from: 1 key, 2 single, 3 run
    if (j < mM) {
      s = e = load<u64>(mKeys + (<usize>j << 3));
      from = 1;
    }
    if (q < mOldCount) {
      const k = load<u64>(mOlds + (<usize>q << 3));
      if (from == 0 || k < s) {
        s = e = k;
        from = 2;
      }
    }
    if (haveRun && (from == 0 || rs < s)) {
      s = rs;
      e = re;
      from = 3;
    }
    if (from == 0) break;
    if (from == 1) j++;
    else if (from == 2) q++;
    else {
      haveRun = re + 1 < n && runs_next_set(R, re + 1);
      if (haveRun) {
        rs = nextTaken;
        re = runs_first_free_from(R, rs) - 1;
      }
    }
    if (have && s <= ce + 1) {
      //  [cs ···· ce]      →  [cs ······· e]     (ce < n ≤ 2^64 − 1: ce + 1 cannot wrap)
      //        [s ···· e]
      if (e > ce) ce = e;
    } else {
      if (have) put(cs, ce);
      cs = s;
      ce = e;
      have = true;
    }
  }
  if (have) put(cs, ce);
}

/** Buckets of sortOffsets' first pass: at most 2^20 (a 4 MiB counter block, for 8 · 2^20 keys and more). */
const SORT_MAX_BITS: u32 = 20;
/** Buckets this small are sorted by insertion; larger ones by radixSort. */
const SORT_SMALL: u32 = 32;
/** Buckets up to this size are radix-sorted with 8-bit digits, larger ones with 11-bit digits. */
const SORT_MEDIUM: u32 = 4096;

/**
 * Sorts the m offsets at ptr ((hi, lo) u32 pairs) into keys (m × u64). One pass scatters them by
 * their top bits into about m / 8 buckets, then each bucket is sorted where it lies: by
 * insertion when small (random offsets: a handful each), else by radixSort, with room the size
 * of the largest bucket. Against a radix sort of the whole copy this needs no second buffer of m
 * keys for spread offsets (new memory costs page faults on a warm start) and reads the keys
 * twice instead of seven times. false when memory ran out (nothing to undo).
 */
function sortOffsets(ptr: usize, m: u32, keys: usize): bool {
  let bits: i32 = 32 - <i32>clz<u32>(m) - 3; //  ≈ m / 8 buckets
  if (bits < 4) bits = 4;
  if (bits > <i32>SORT_MAX_BITS) bits = <i32>SORT_MAX_BITS;
  const buckets: u32 = 1 << bits;
  const shift = <u64>(64 - bits);
  const countBytes = <usize>buckets << 2;
  const count = halloc(countBytes);
  if (count == 0) return false;
  memory.fill(count, 0, countBytes);
  for (let i: u32 = 0; i < m; i++) {
    const c = count + (<usize>(offsetAt(ptr, i) >>> shift) << 2);
    store<u32>(c, load<u32>(c) + 1);
  }
  //  counts → starts; the largest bucket sizes the room of the big-bucket sorts
  let sum: u32 = 0;
  let largest: u32 = 0;
  for (let b: u32 = 0; b < buckets; b++) {
    const c = load<u32>(count + (<usize>b << 2));
    store<u32>(count + (<usize>b << 2), sum);
    sum += c;
    if (c > largest) largest = c;
  }
  for (let i: u32 = 0; i < m; i++) {
    const k = offsetAt(ptr, i);
    const c = count + (<usize>(k >>> shift) << 2);
    const at = load<u32>(c);
    store<u32>(c, at + 1);
    store<u64>(keys + (<usize>at << 3), k);
  }
  //  now count[b] is the end of bucket b (= the start of b + 1)
  const roomBytes: usize = largest > SORT_SMALL ? <usize>largest << 3 : 0;
  const histBytes = radixHistBytes(largest > SORT_MEDIUM ? 11 : 8);
  const room = roomBytes != 0 ? halloc(roomBytes) : 0;
  const hist = roomBytes != 0 ? halloc(histBytes) : 0;
  const ok = roomBytes == 0 || (room != 0 && hist != 0);
  if (ok) {
    let start: u32 = 0;
    for (let b: u32 = 0; b < buckets; b++) {
      const end = load<u32>(count + (<usize>b << 2));
      const size = end - start;
      const at = keys + (<usize>start << 3);
      if (size <= SORT_SMALL) {
        for (let i: u32 = 1; i < size; i++) {
          const k = load<u64>(at + (<usize>i << 3));
          let j = i;
          while (j > 0 && load<u64>(at + (<usize>(j - 1) << 3)) > k) {
            store<u64>(at + (<usize>j << 3), load<u64>(at + (<usize>(j - 1) << 3)));
            j--;
          }
          store<u64>(at + (<usize>j << 3), k);
        }
      } else {
        const sorted = radixSort(at, room, size, hist, size > SORT_MEDIUM ? 11 : 8);
        if (sorted != at) memory.copy(at, sorted, <usize>size << 3);
      }
      start = end;
    }
  }
  hfree(count, countBytes);
  if (room != 0) hfree(room, roomBytes);
  if (hist != 0) hfree(hist, histBytes);
  return ok;
}

/**
 * The bulk path: sort a copy of the m offsets, merge them with the singles and runs already
 * there into maximal runs (a pass that counts, then one that writes), build a fresh runs
 * structure and fresh singles from them, then swap them in. Returns how many were newly set, or
 * −1 when memory ran out (then nothing changed and every temporary block is returned).
 *
 * Temporary memory is kept to the sorted copy (8 B per offset, plus room for the largest bucket
 * of the sort) when the index holds no singles yet (a warm start): the output singles are then
 * written over the sorted keys they come from (each single put has consumed at least one key, so
 * the writes never pass the reads).
 */
function bulkLoad(h: usize, ptr: usize, m: u32): i32 {
  const S = singlesOf(h);
  const R = runsOf(h);
  const n = nOf(h);
  const oldSingles = <u32>singles_count(S);
  const keyBytes = <usize>m << 3;
  const singleBytes = (<usize>oldSingles << 3) + 8;
  const a = halloc(keyBytes);
  const olds = halloc(singleBytes);
  const R2 = runs_new(n);
  const S2 = singles_new();
  let outSinglesBytes: usize = 0; //  0: the singles are written over the sorted keys
  let outRunsBytes: usize = 0;
  oSingles = 0;
  oRuns = 0;
  let added: i32 = -1;
  if (a != 0 && olds != 0 && R2 != 0 && S2 != 0 && sortOffsets(ptr, m, a)) {
    mKeys = a;
    mM = m;
    singles_copy_sorted(S, olds);
    mOlds = olds;
    mOldCount = oldSingles;
    oEmit = false;
    merge(R, n);
    if (oldSingles != 0) {
      outSinglesBytes = (<usize>oNs << 3) + 8;
      oSingles = halloc(outSinglesBytes);
    } else oSingles = mKeys;
    outRunsBytes = (<usize>oNr << 4) + 16;
    oRuns = halloc(outRunsBytes);
    if (oSingles != 0 && oRuns != 0) {
      oEmit = true;
      merge(R, n);
      if (runs_load(R2, oRuns, oNr) && singles_build(S2, oSingles, oNs)) {
        const before = sparse_count(h);
        runs_free(R);
        singles_free(S);
        store<u32>(h + H_RUNS, <u32>R2);
        store<u32>(h + H_SINGLES, <u32>S2);
        added = <i32>(oTotal - before);
      }
    }
  }
  hfree(a, keyBytes);
  hfree(olds, singleBytes);
  if (outSinglesBytes != 0) hfree(oSingles, outSinglesBytes);
  if (outRunsBytes != 0) hfree(oRuns, outRunsBytes);
  if (added < 0) {
    if (R2 != 0) runs_free(R2);
    if (S2 != 0) singles_free(S2);
  }
  return added;
}
