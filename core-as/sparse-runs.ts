// The runs of a sparse index (core-as/sparse.ts): taken offsets as sorted, maximal closed
// intervals [start, end], for a range of up to 2^64 − 1 offsets. core-as/sparse.ts keeps only the
// runs of two or more offsets here (isolated offsets live in core-as/sparse-singles.ts), so a run
// of any length costs 16 bytes and its next free offset is one lookup away.
//
// Runs live in fixed 4 KiB pages of 256 runs each; a directory, sorted by each page's first start,
// points at the pages. A lookup is a search of the directory (branch-free, it stays in cache), then
// of one page (branchy: it is cold).
//
//   header (40 B → 64-byte block)        directory (dirCap × 32 B, one block, power of two)
//   ┌─────────────────────────────┐      ┌──────────────┬──────────┬─────────┬───────────┬───────────┐
//   │ u32 tag = RUNS_TAG          │      │ u64 key = s0 │ u32 page │ u32 len │ u64 taken │ u64 block │ entry 0 ──┐
//   │ u32 npages                  │      ├──────────────┼──────────┼─────────┼───────────┼───────────┤           │
//   │ u32 dirCap                  │      │ u64 key      │ u32 page │ u32 len │ u64 taken │ (unused)  │ entry 1   │
//   │ u32 dir  ───────────────────┼────▸ ├──────────────┴──────────┴─────────┴───────────┴───────────┤           │
//   │ u64 n      offsets [0, n)   │      │ … npages used, keys strictly rising; `block` is read only   │           │
//   │ u64 count  taken offsets    │      │ in entries 0, 64, 128, …: Σ taken of its 64 entries          │           │
//   │ u32 runs   runs in pages    │      └──────────────────────────────────────────────────────────────┘           │
//   └─────────────────────────────┘      page (4096 B = 256 runs × 16 B, nothing else) ◂──────────────────────────────┘
//                                        ┌─────────┬─────────┬─────────┬─────┬──────────┐
//                                        │ s0 │ e0 │ s1 │ e1 │ s2 │ e2 │ …   │ (unused) │
//                                        └─────────┴─────────┴─────────┴─────┴──────────┘
//                                          u64 start, u64 end   ◂─ len runs ─▸
//
// Invariants (checked by runs_validate; codes below):
//   runs (across all pages, in directory order): sorted, minimal, no overlapping or contiguous
//     runs — for consecutive runs a, b: a.end + 1 < b.start. Hence a run's end + 1 is free.
//   every run: start ≤ end < n (so end + 1 never overflows: n ≤ 2^64 − 1).
//   directory: npages ≤ dirCap, every page has 1..PAGE_RUNS runs, key = its first run's start.
//   count = Σ (end − start + 1), runs = Σ len.
//   taken of a page = Σ (end − start + 1) over its runs; block of entry 64·b = Σ taken of entries
//     64·b .. 64·b + 63 (those in use). So the offsets taken by runs below x (runs_rank) are a
//     sum of npages / 64 block words, at most 63 page words and one page's runs: no walk of the
//     runs, and a set or clear updates two words. Entries move only when a page is added or
//     dropped (a memmove of the directory's tail), and then the blocks from there on are summed
//     again: the same order of work as the move.
//
// An insert into a full page goes, in this order: into the next page when it lands past the full
// page's last run and that page has room; into a fresh page when it lands past the last run of the
// last page (ascending fills stay dense); otherwise the page splits in half. A page that drops
// under MERGE_BELOW runs is merged into a neighbour when both fit in MERGE_MAX; an empty page is
// freed; the directory halves when a quarter full. Random single inserts leave pages ≈ 70 % full;
// runs_load (the bulk build of core-as/sparse.ts) writes BULK_FILL runs per page.

import { halloc, hfree, hblock_size, moveToSmaller } from './heap';
import { OK, NONE, OUT_OF_RANGE, OUT_OF_MEMORY } from './status';

/** The header's first word ("runs"): marks a live run index for runs_validate. */
const RUNS_TAG: u32 = 0x736e7572;

// ── header ─────────────────────────────────────────────────────────────────────────────────
const H_TAG: usize = 0; //    u32 = RUNS_TAG
const H_NPAGES: usize = 4; // u32 pages in use = directory entries in use (≤ dirCap)
const H_DIRCAP: usize = 8; // u32 directory capacity in entries (0 exactly when dir = 0)
const H_DIR: usize = 12; //   u32 directory block: entries sorted by key, keys strictly rising
const H_N: usize = 16; //     u64 domain size: every run lies in [0, n)
const H_COUNT: usize = 24; // u64 taken offsets = Σ (end − start + 1), kept as a counter
const H_RUNS: usize = 32; //  u32 runs = Σ page lengths
const HEADER_SIZE: usize = 40;

// ── directory entries ──────────────────────────────────────────────────────────────────────
const DIR_ENTRY_BITS: usize = 5; // 32 bytes
const D_KEY: usize = 0;
const D_PAGE: usize = 8;
const D_LEN: usize = 12;
const D_TAKEN: usize = 16; // u64 offsets taken by the page's runs
const D_BLOCK: usize = 24; // u64 in entry 64·b only: Σ taken of entries 64·b .. 64·b + 63
/** Entries per block of the directory's block sums. */
const BLOCK_BITS: u32 = 6;
const DIR_MIN_CAP: u32 = 4;

// ── pages ──────────────────────────────────────────────────────────────────────────────────
const RUN_BITS: usize = 4; // 16 bytes: u64 start, u64 end
const PAGE_RUNS: u32 = 256;
const PAGE_SIZE: usize = <usize>PAGE_RUNS << RUN_BITS; // 4096
const MERGE_BELOW: u32 = 64;
const MERGE_MAX: u32 = 192;
/** Runs per page written by a bulk build: room left so the next inserts do not split at once. */
const BULK_FILL: u32 = 224;

// ── validate() codes ───────────────────────────────────────────────────────────────────────
/** 1: the tag word is not RUNS_TAG. */
export const RUNS_BAD_TAG: i32 = 1;
/** 2: npages > dirCap, or pages without a directory. */
export const RUNS_BAD_DIRECTORY: i32 = 2;
/** 3: a page holds 0 or more than PAGE_RUNS runs. */
export const RUNS_BAD_PAGE_LEN: i32 = 3;
/** 4: a run with start > end. */
export const RUNS_RUN_INVERTED: i32 = 4;
/** 5: two runs out of order, overlapping or contiguous (in a page or across pages). */
export const RUNS_RUNS_NOT_MAXIMAL: i32 = 5;
/** 6: a directory key differs from its page's first start. */
export const RUNS_BAD_KEY: i32 = 6;
/** 7: a run reaches n or beyond. */
export const RUNS_RUN_OUT_OF_RANGE: i32 = 7;
/** 8: the count differs from the sum of run lengths. */
export const RUNS_BAD_COUNT: i32 = 8;
/** 9: the run counter differs from the sum of page lengths. */
export const RUNS_BAD_RUNS: i32 = 9;
/** 10: a page's taken count differs from the sum of its run lengths. */
export const RUNS_BAD_PAGE_TAKEN: i32 = 10;
/** 11: a block sum differs from the sum of its entries' taken counts. */
export const RUNS_BAD_BLOCK_SUM: i32 = 11;

// ── field access ───────────────────────────────────────────────────────────────────────────
@inline function npagesOf(h: usize): u32 { return load<u32>(h + H_NPAGES); }
@inline function dirOf(h: usize): usize { return <usize>load<u32>(h + H_DIR); }
@inline function entry(h: usize, p: u32): usize { return dirOf(h) + (<usize>p << DIR_ENTRY_BITS); }
@inline function keyOf(h: usize, p: u32): u64 { return load<u64>(entry(h, p) + D_KEY); }
@inline function pageOf(h: usize, p: u32): usize { return <usize>load<u32>(entry(h, p) + D_PAGE); }
@inline function lenOf(h: usize, p: u32): u32 { return load<u32>(entry(h, p) + D_LEN); }
@inline function setLen(h: usize, p: u32, len: u32): void { store<u32>(entry(h, p) + D_LEN, len); }
@inline function setKey(h: usize, p: u32, key: u64): void { store<u64>(entry(h, p) + D_KEY, key); }
@inline function run(page: usize, r: u32): usize { return page + (<usize>r << RUN_BITS); }
@inline function startOf(rp: usize): u64 { return load<u64>(rp); }
@inline function endOf(rp: usize): u64 { return load<u64>(rp, 8); }
@inline function takenOf(h: usize, p: u32): u64 { return load<u64>(entry(h, p) + D_TAKEN); }
@inline function blockAt(h: usize, p: u32): usize { return entry(h, p & ~((<u32>1 << BLOCK_BITS) - 1)) + D_BLOCK; }

/** Page p's runs gained d taken offsets (its block too). */
@inline function addTaken(h: usize, p: u32, d: u64): void {
  const e = entry(h, p) + D_TAKEN;
  store<u64>(e, load<u64>(e) + d);
  const b = blockAt(h, p);
  store<u64>(b, load<u64>(b) + d);
}

/** Page p's runs lost d taken offsets (its block too). */
@inline function subTaken(h: usize, p: u32, d: u64): void {
  const e = entry(h, p) + D_TAKEN;
  store<u64>(e, load<u64>(e) - d);
  const b = blockAt(h, p);
  store<u64>(b, load<u64>(b) - d);
}

/** Σ (end − start + 1) over runs [from, to) of a page. */
function pageSum(page: usize, from: u32, to: u32): u64 {
  let t: u64 = 0;
  for (let r = from; r < to; r++) t += endOf(run(page, r)) - startOf(run(page, r)) + 1;
  return t;
}

/** Sums the blocks again from the one holding entry p (after entries from p on moved). */
function resumBlocks(h: usize, p: u32): void {
  const np = npagesOf(h);
  const size: u32 = 1 << BLOCK_BITS;
  for (let b = p & ~(size - 1); b < np; b += size) {
    const end = b + size < np ? b + size : np;
    let t: u64 = 0;
    for (let q = b; q < end; q++) t += takenOf(h, q);
    store<u64>(entry(h, b) + D_BLOCK, t);
  }
}

/**
 * Index of the last u64 key ≤ x among `n` sorted keys at `base`, `stride` bytes apart (−1 when
 * none). Branch-free: the loop runs ⌈log2 n⌉ times and each step is a `select`, so random
 * lookups in a cached array pay no mispredicted branches (used for the directory, which stays hot).
 */
@inline function lastAtMost(base: usize, n: u32, strideBits: usize, x: u64): i32 {
  if (n == 0) return -1;
  let at: usize = base; //  invariant: the answer is in [at, at + len) or is "none" (first key > x)
  let len = n;
  while (len > 1) {
    const half = len >>> 1;
    const mid = at + (<usize>half << strideBits);
    at = select<usize>(mid, at, load<u64>(mid) <= x);
    len -= half;
  }
  const i = <i32>((at - base) >>> strideBits);
  return load<u64>(at) <= x ? i : i - 1;
}

/** The last page whose key ≤ x, or −1 when x precedes every run (or there are none). */
@inline function findPage(h: usize, x: u64): i32 {
  return lastAtMost(dirOf(h), npagesOf(h), DIR_ENTRY_BITS, x);
}

/**
 * The last run of `page` (len ≥ 1) whose start ≤ x, or −1. Branchy on purpose, unlike the
 * directory search: a page is usually cold, and a predicted branch lets the CPU start fetching the
 * next probe's line early (branch-free here measured ≈ 1.7× slower at 10^6 random runs; branch-free
 * on the directory, which stays in cache, ≈ 10–15 % faster than branchy).
 */
function findRun(page: usize, len: u32, x: u64): i32 {
  let lo: u32 = 0;
  let hi = len; //  the first start > x lies in [lo, hi]
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (load<u64>(page + (<usize>mid << RUN_BITS)) <= x) lo = mid + 1;
    else hi = mid;
  }
  return <i32>lo - 1;
}

// Results of `locate` (no tuples without managed objects): the run with the greatest start ≤ x.
let locP: i32 = -1; // page index, −1 when none
let locR: i32 = -1; // run index in that page

/** Finds the predecessor run of x (greatest start ≤ x) into locP/locR. Returns its address or 0. */
function locate(h: usize, x: u64): usize {
  const p = findPage(h, x);
  locP = p;
  locR = -1;
  if (p < 0) return 0;
  const page = pageOf(h, <u32>p);
  const r = findRun(page, lenOf(h, <u32>p), x);
  assert(r >= 0, 'sparse: a page key ≤ x but no run start ≤ x');
  locR = r;
  return run(page, <u32>r);
}

// ── memory ─────────────────────────────────────────────────────────────────────────────────

/** Makes room for `need` directory entries. false (nothing changed) when out of memory. */
function ensureDirCap(h: usize, need: u32): bool {
  const cap = load<u32>(h + H_DIRCAP);
  if (need <= cap) return true;
  let ncap = cap < DIR_MIN_CAP ? DIR_MIN_CAP : cap;
  while (ncap < need) ncap <<= 1;
  const nd = halloc(<usize>ncap << DIR_ENTRY_BITS);
  if (nd == 0) return false;
  const old = dirOf(h);
  if (old != 0) {
    memory.copy(nd, old, <usize>npagesOf(h) << DIR_ENTRY_BITS);
    hfree(old, <usize>cap << DIR_ENTRY_BITS);
  }
  store<u32>(h + H_DIR, <u32>nd);
  store<u32>(h + H_DIRCAP, ncap);
  return true;
}

/**
 * A directory at most a quarter used shrinks to room for twice its pages (best effort: it stays
 * as it is when a smaller block cannot be had); one with no pages is freed.
 */
function shrinkDir(h: usize): void {
  const cap = load<u32>(h + H_DIRCAP);
  const np = npagesOf(h);
  if (np == 0) {
    if (cap != 0) hfree(dirOf(h), <usize>cap << DIR_ENTRY_BITS);
    store<u32>(h + H_DIR, 0);
    store<u32>(h + H_DIRCAP, 0);
    return;
  }
  if (cap <= DIR_MIN_CAP || np > cap >>> 2) return;
  let ncap = DIR_MIN_CAP;
  while (ncap < np * 2) ncap <<= 1;
  const nd = moveToSmaller(dirOf(h), <usize>cap << DIR_ENTRY_BITS, <usize>ncap << DIR_ENTRY_BITS, <usize>np << DIR_ENTRY_BITS);
  if (nd == 0) return;
  store<u32>(h + H_DIR, <u32>nd);
  store<u32>(h + H_DIRCAP, ncap);
}

/** Opens directory slot p (entries p.. move right by one). Capacity must already be there. */
function dirInsert(h: usize, p: u32, key: u64, page: usize, len: u32, taken: u64): void {
  const np = npagesOf(h);
  const e = entry(h, p);
  memory.copy(e + (1 << DIR_ENTRY_BITS), e, <usize>(np - p) << DIR_ENTRY_BITS);
  store<u64>(e + D_KEY, key);
  store<u32>(e + D_PAGE, <u32>page);
  store<u32>(e + D_LEN, len);
  store<u64>(e + D_TAKEN, taken);
  store<u32>(h + H_NPAGES, np + 1);
  resumBlocks(h, p);
}

/** Drops directory slot p (its page must already be freed or moved). */
function dirRemove(h: usize, p: u32): void {
  const np = npagesOf(h);
  const e = entry(h, p);
  memory.copy(e, e + (1 << DIR_ENTRY_BITS), <usize>(np - p - 1) << DIR_ENTRY_BITS);
  store<u32>(h + H_NPAGES, np - 1);
  resumBlocks(h, p);
  shrinkDir(h);
}

// ── run insertion and removal (they keep pages, keys and the run counter right) ────────────

/**
 * Inserts the run [s, e] at position i (0 ≤ i ≤ len) of page p; the caller has checked that it
 * fits between its neighbours without touching them. With no pages at all, p = 0 and i = 0
 * create the first page. OK, or OUT_OF_MEMORY with nothing changed.
 */
function insertRun(h: usize, p: u32, i: u32, s: u64, e: u64): i32 {
  const np = npagesOf(h);
  if (np == 0) {
    if (!ensureDirCap(h, 1)) return OUT_OF_MEMORY;
    const page = halloc(PAGE_SIZE);
    if (page == 0) return OUT_OF_MEMORY;
    store<u64>(page, s);
    store<u64>(page, e, 8);
    dirInsert(h, 0, s, page, 1, e - s + 1);
    store<u32>(h + H_RUNS, 1);
    return OK;
  }
  let page = pageOf(h, p);
  let len = lenOf(h, p);
  if (len == PAGE_RUNS && i == PAGE_RUNS && p + 1 < np && lenOf(h, p + 1) < PAGE_RUNS) {
    //  past the end of a full page whose right neighbour has room: [■■■■■■■■] x [■■■·····]
    //  the run goes first there (no split, no allocation)   →      [■■■■■■■■] [x■■■····]
    p++;
    i = 0;
    page = pageOf(h, p);
    len = lenOf(h, p);
  }
  // (i == 0 with p > 0 never happens: a run that precedes page p's first run follows the last run
  // of page p − 1, and callers insert after their predecessor.)
  if (len == PAGE_RUNS) {
    if (!ensureDirCap(h, np + 1)) return OUT_OF_MEMORY;
    const fresh = halloc(PAGE_SIZE);
    if (fresh == 0) return OUT_OF_MEMORY;
    if (i == PAGE_RUNS && p + 1 == np) {
      //  last page, appending:  [■■■■■■■■] + x  →  [■■■■■■■■] [x·······]
      store<u64>(fresh, s);
      store<u64>(fresh, e, 8);
      dirInsert(h, p + 1, s, fresh, 1, e - s + 1);
      store<u32>(h + H_RUNS, load<u32>(h + H_RUNS) + 1);
      return OK;
    }
    //  full page splits in half:  [■■■■■■■■]  →  [■■■■····] [■■■■····]
    const half = PAGE_RUNS >>> 1;
    memory.copy(fresh, run(page, half), <usize>(PAGE_RUNS - half) << RUN_BITS);
    setLen(h, p, half);
    const moved = pageSum(fresh, 0, PAGE_RUNS - half);
    subTaken(h, p, moved);
    dirInsert(h, p + 1, startOf(fresh), fresh, PAGE_RUNS - half, moved);
    if (i > half) {
      p++;
      i -= half;
      page = fresh;
    }
    len = half;
  }
  const at = run(page, i);
  memory.copy(at + (1 << RUN_BITS), at, <usize>(len - i) << RUN_BITS);
  store<u64>(at, s);
  store<u64>(at, e, 8);
  setLen(h, p, len + 1);
  addTaken(h, p, e - s + 1);
  if (i == 0) setKey(h, p, s);
  store<u32>(h + H_RUNS, load<u32>(h + H_RUNS) + 1);
  return OK;
}

/** Removes run i of page p, then frees the page if empty or merges it when nearly empty. */
function removeRun(h: usize, p: u32, i: u32): void {
  const page = pageOf(h, p);
  const len = lenOf(h, p) - 1;
  store<u32>(h + H_RUNS, load<u32>(h + H_RUNS) - 1);
  subTaken(h, p, endOf(run(page, i)) - startOf(run(page, i)) + 1);
  if (len == 0) {
    hfree(page, PAGE_SIZE);
    dirRemove(h, p);
    return;
  }
  const at = run(page, i);
  memory.copy(at, at + (1 << RUN_BITS), <usize>(len - i) << RUN_BITS);
  setLen(h, p, len);
  if (i == 0) setKey(h, p, startOf(page));
  if (len < MERGE_BELOW) {
    //  [■■■·····] [■·······]  →  [■■■■····]   (a nearly empty page joins a neighbour)
    if (p > 0 && lenOf(h, p - 1) + len <= MERGE_MAX) mergeIntoLeft(h, p - 1);
    else if (p + 1 < npagesOf(h) && lenOf(h, p + 1) + len <= MERGE_MAX) mergeIntoLeft(h, p);
  }
}

/** Appends page p+1's runs to page p and frees page p+1. */
function mergeIntoLeft(h: usize, p: u32): void {
  const a = pageOf(h, p);
  const b = pageOf(h, p + 1);
  const la = lenOf(h, p);
  const lb = lenOf(h, p + 1);
  assert(la + lb <= PAGE_RUNS, 'sparse: merged page overflows');
  memory.copy(run(a, la), b, <usize>lb << RUN_BITS);
  setLen(h, p, la + lb);
  addTaken(h, p, takenOf(h, p + 1)); //  page p + 1's block is summed again when it is dropped
  hfree(b, PAGE_SIZE);
  dirRemove(h, p + 1);
}

// ── compaction (after a batch of sets was undone) ──────────────────────────────────────────
//
// Sets split full pages in halves; clears merge a page into a neighbour only once it drops under
// MERGE_BELOW runs and both fit in MERGE_MAX. A batch of sets undone (a load refused under a
// memory cap) leaves the pages it split holding the runs from before it, about half as many each,
// above MERGE_BELOW or beside a neighbour too full to take them: compaction gives them back.

/**
 * Packs the runs into pages of BULK_FILL runs, as a bulk build fills them, in directory order:
 * each page takes runs from the front of the next until it holds BULK_FILL, the emptied pages
 * freed; then the directory shrinks. Needs no memory (the runs move into pages already held),
 * never fails, keeps every run, and leaves ⌈runs / BULK_FILL⌉ pages where no page held more:
 *
 *   [■■■·····] [■■■■····] [■■■■■···]   →   [■■■■■■■·] [■■■■■···]     (BULK_FILL = 7 here: the
 *                                                                       first takes all 4 runs of
 *                                                                       the second, then it is full)
 *
 * (Appending a page to the one before only when all of its runs fit there left the pages just
 * over half full as they were: an undone batch leaves each page it split about half full.)
 */
export function runs_compact(h: usize): void {
  const np = npagesOf(h);
  if (np < 2) return;
  let w: u32 = 0; //  the page being filled: entries 0 .. w are the pages kept
  let changed = false;
  for (let p: u32 = 1; p < np; p++) {
    const lw = lenOf(h, w);
    const lp = lenOf(h, p);
    const from = pageOf(h, p);
    const take: u32 = lw >= BULK_FILL ? 0 : min<u32>(BULK_FILL - lw, lp);
    if (take > 0) changed = true;
    let moved: u64 = 0;
    if (take > 0) {
      memory.copy(run(pageOf(h, w), lw), from, <usize>take << RUN_BITS);
      moved = pageSum(from, 0, take);
      setLen(h, w, lw + take);
      store<u64>(entry(h, w) + D_TAKEN, takenOf(h, w) + moved); //  blocks summed below
    }
    if (take == lp) {
      hfree(from, PAGE_SIZE);
      continue;
    }
    if (take > 0) {
      memory.copy(from, run(from, take), <usize>(lp - take) << RUN_BITS);
      setLen(h, p, lp - take);
      store<u64>(entry(h, p) + D_TAKEN, takenOf(h, p) - moved);
      setKey(h, p, startOf(from));
    }
    if (++w != p) memory.copy(entry(h, w), entry(h, p), 1 << DIR_ENTRY_BITS);
  }
  if (!changed) return;
  store<u32>(h + H_NPAGES, w + 1);
  resumBlocks(h, 0);
  shrinkDir(h);
}

// ── the contract (core-as/freeindex.ts) ────────────────────────────────────────────────────

/** An empty index over [0, n). 0 when out of memory. */
export function runs_new(n: u64): usize {
  const h = halloc(HEADER_SIZE);
  if (h == 0) return 0;
  memory.fill(h, 0, HEADER_SIZE);
  store<u32>(h + H_TAG, RUNS_TAG);
  store<u64>(h + H_N, n);
  return h;
}

/** Returns every block: pages, directory, header. */
export function runs_free(h: usize): void {
  const np = npagesOf(h);
  for (let p: u32 = 0; p < np; p++) hfree(pageOf(h, p), PAGE_SIZE);
  const cap = load<u32>(h + H_DIRCAP);
  if (cap != 0) hfree(dirOf(h), <usize>cap << DIR_ENTRY_BITS);
  hfree(h, HEADER_SIZE);
}

/** Marks x taken, merging with the runs on either side. OK / NONE (taken) / OUT_OF_RANGE / OUT_OF_MEMORY. */
export function runs_set(h: usize, x: u64): i32 {
  if (x >= load<u64>(h + H_N)) return OUT_OF_RANGE;
  const np = npagesOf(h);
  const P = locate(h, x);
  const p = locP;
  const r = locR;
  let pe: u64 = 0;
  if (P != 0) {
    pe = endOf(P);
    if (x <= pe) return NONE;
  }
  // successor run S: the one after P (next page when P ends its page), or the very first run.
  let sp: u32 = 0;
  let sr: u32 = 0;
  if (P != 0) {
    sp = <u32>p;
    sr = <u32>r + 1;
    if (sr == lenOf(h, sp)) {
      sp++;
      sr = 0;
    }
  }
  const S: usize = sp < np ? run(pageOf(h, sp), sr) : 0;
  const joinLeft = P != 0 && pe + 1 == x; //  x < n ≤ 2^64 − 1: no overflow
  const joinRight = S != 0 && startOf(S) == x + 1;
  if (joinLeft && joinRight) {
    //  P        x  S
    //  [■■■■]   ·  [■■■]   →   [■■■■■■■■■]
    //  (P's page gains x and S; removing S takes S's length from S's page)
    addTaken(h, <u32>p, endOf(S) - x + 1);
    store<u64>(P, endOf(S), 8);
    removeRun(h, sp, sr);
  } else if (joinLeft) {
    //  [■■■■] x      →   [■■■■■]
    store<u64>(P, x, 8);
    addTaken(h, <u32>p, 1);
  } else if (joinRight) {
    //  x [■■■]       →   [■■■■]
    store<u64>(S, x);
    addTaken(h, sp, 1);
    if (sr == 0) setKey(h, sp, x);
  } else {
    //  [■■]  x  [■■] →   [■■] [x] [■■]
    const st = P != 0 ? insertRun(h, <u32>p, <u32>r + 1, x, x) : insertRun(h, 0, 0, x, x);
    if (st != OK) return st;
  }
  store<u64>(h + H_COUNT, load<u64>(h + H_COUNT) + 1);
  return OK;
}

/** Marks x free, splitting its run when x is inside. OK / NONE (free) / OUT_OF_RANGE / OUT_OF_MEMORY. */
export function runs_clear(h: usize, x: u64): i32 {
  if (x >= load<u64>(h + H_N)) return OUT_OF_RANGE;
  const R = locate(h, x);
  if (R == 0) return NONE;
  const s = startOf(R);
  const e = endOf(R);
  if (x > e) return NONE;
  const p = <u32>locP;
  const r = <u32>locR;
  if (s == e) {
    //  [x]  →  ·
    removeRun(h, p, r);
  } else if (x == s) {
    //  [x■■■]  →  ·[■■■]
    store<u64>(R, x + 1);
    subTaken(h, p, 1);
    if (r == 0) setKey(h, p, x + 1);
  } else if (x == e) {
    //  [■■■x]  →  [■■■]·
    store<u64>(R, x - 1, 8);
    subTaken(h, p, 1);
  } else {
    //  [■■x■■]  →  [■■]·[■■]   (needs a slot: may be OUT_OF_MEMORY, then nothing changed)
    store<u64>(R, x - 1, 8);
    subTaken(h, p, e - x + 1); //  insertRun adds the right piece to the page that takes it
    const st = insertRun(h, p, r + 1, x + 1, e);
    if (st != OK) {
      store<u64>(R, e, 8);
      addTaken(h, p, e - x + 1);
      return st;
    }
  }
  store<u64>(h + H_COUNT, load<u64>(h + H_COUNT) - 1);
  return OK;
}

/** 1 if x is taken, 0 if free or out of range. */
export function runs_has(h: usize, x: u64): i32 {
  const R = locate(h, x);
  return R != 0 && x <= endOf(R) ? 1 : 0;
}

export function runs_count(h: usize): u64 {
  return load<u64>(h + H_COUNT);
}

/** Number of runs. */
export function runs_run_count(h: usize): u32 {
  return load<u32>(h + H_RUNS);
}

/** The first free offset ≥ x: x itself, or the end + 1 of the run holding it (may equal n). */
export function runs_first_free_from(h: usize, x: u64): u64 {
  const R = locate(h, x);
  if (R == 0) return x;
  const e = endOf(R);
  return x <= e ? e + 1 : x; //  runs are maximal: e + 1 is free (or n); e < n: no overflow
}

/** The run holding x into runStart/runEnd; false when x is free. */
export let runStart: u64 = 0;
export let runEnd: u64 = 0;
export function runs_bounds(h: usize, x: u64): bool {
  const R = locate(h, x);
  if (R == 0 || x > endOf(R)) return false;
  runStart = startOf(R);
  runEnd = endOf(R);
  return true;
}

/** The smallest taken offset ≥ from, into `nextTaken`; false when there is none. */
export let nextTaken: u64 = 0;
export function runs_next_set(h: usize, from: u64): bool {
  const P = locate(h, from);
  if (P != 0) {
    if (from <= endOf(P)) {
      nextTaken = from;
      return true;
    }
    let p = <u32>locP;
    let r = <u32>locR + 1;
    if (r == lenOf(h, p)) {
      p++;
      r = 0;
    }
    if (p >= npagesOf(h)) return false;
    nextTaken = startOf(run(pageOf(h, p), r));
    return true;
  }
  if (npagesOf(h) == 0) return false;
  nextTaken = keyOf(h, 0);
  return true;
}

// ── rank and select (uniform picks: core-as/sparse.ts) ─────────────────────────────────────

/** Σ taken of pages 0 .. p − 1: the block words before p's block, then p's block's entries before p. */
function takenBefore(h: usize, p: u32): u64 {
  const size: u32 = 1 << BLOCK_BITS;
  const first = p & ~(size - 1);
  let t: u64 = 0;
  for (let b: u32 = 0; b < first; b += size) t += load<u64>(entry(h, b) + D_BLOCK);
  for (let q = first; q < p; q++) t += takenOf(h, q);
  return t;
}

/**
 * Offsets below x taken by runs. O(npages / 64 + 64 + PAGE_RUNS): the block words, the page
 * words of x's block, then the runs of x's page that start below x (a run holding x counts up
 * to x − 1).
 */
export function runs_rank(h: usize, x: u64): u64 {
  if (load<u64>(h + H_COUNT) == 0) return 0;
  const p = findPage(h, x);
  if (p < 0) return 0;
  let t = takenBefore(h, <u32>p);
  const page = pageOf(h, <u32>p);
  const len = lenOf(h, <u32>p);
  for (let r: u32 = 0; r < len; r++) {
    const s = startOf(run(page, r));
    if (s >= x) break;
    const e = endOf(run(page, r));
    t += (e < x ? e : x - 1) - s + 1;
  }
  return t;
}

/**
 * The m-th (0-based, ascending) offset that no run holds: the y outside every run with
 * y − runs_rank(y) = m. It may lie at or past n (the caller knows there are enough); the offsets
 * that are singles are not told apart here. O(npages / 64 + 64 + PAGE_RUNS).
 *
 *   offsets  0 ··· [■■■■] ··· [■■] ··········      m counts the · from 0
 *   the last page, then the last run, whose start s has s − (taken below s) ≤ m lies before y;
 *   y = m + the offsets taken up to that run's end.
 */
export function runs_select_gap(h: usize, m: u64): u64 {
  const np = npagesOf(h);
  if (np == 0 || load<u64>(h + H_COUNT) == 0) return m;
  //  blocks: the last whose first page starts at or below the m-th gap offset
  const size: u32 = 1 << BLOCK_BITS;
  let before: u64 = 0; //  taken in the pages before page p
  let p: u32 = 0;
  if (keyOf(h, 0) > m) return m; //  before every run: key 0 − 0 > m
  for (let b: u32 = size; b < np; b += size) {
    const t = before + load<u64>(entry(h, b - size) + D_BLOCK);
    if (keyOf(h, b) - t > m) break;
    before = t;
    p = b;
  }
  //  pages of that block
  while (p + 1 < np && keyOf(h, p + 1) - (before + takenOf(h, p)) <= m) {
    before += takenOf(h, p);
    p++;
  }
  //  runs of that page: page p's first run qualifies
  const page = pageOf(h, p);
  const len = lenOf(h, p);
  let t = before;
  for (let r: u32 = 0; r < len; r++) {
    const s = startOf(run(page, r));
    if (s - t > m) break;
    t += endOf(run(page, r)) - s + 1;
  }
  return m + t;
}

/** Bytes owned: header, directory and pages, each at its class size. */
export function runs_bytes(h: usize): usize {
  const cap = load<u32>(h + H_DIRCAP);
  let b = hblock_size(HEADER_SIZE) + <usize>npagesOf(h) * hblock_size(PAGE_SIZE);
  if (cap != 0) b += hblock_size(<usize>cap << DIR_ENTRY_BITS);
  return b;
}

/** Re-derives count and runs from the pages; 0, or the RUNS_* code of the first broken invariant. */
export function runs_validate(h: usize): i32 {
  if (load<u32>(h + H_TAG) != RUNS_TAG) return RUNS_BAD_TAG;
  const np = npagesOf(h);
  const cap = load<u32>(h + H_DIRCAP);
  if (np > cap || (cap != 0) != (dirOf(h) != 0)) return RUNS_BAD_DIRECTORY;
  const n = load<u64>(h + H_N);
  let count: u64 = 0;
  let runs: u32 = 0;
  let haveLast = false;
  let lastEnd: u64 = 0;
  for (let p: u32 = 0; p < np; p++) {
    const len = lenOf(h, p);
    if (len == 0 || len > PAGE_RUNS) return RUNS_BAD_PAGE_LEN;
    const page = pageOf(h, p);
    if (keyOf(h, p) != startOf(page)) return RUNS_BAD_KEY;
    const countBefore = count;
    for (let r: u32 = 0; r < len; r++) {
      const s = startOf(run(page, r));
      const e = endOf(run(page, r));
      if (s > e) return RUNS_RUN_INVERTED;
      if (e >= n) return RUNS_RUN_OUT_OF_RANGE;
      //  last.end + 1 < s, i.e. a gap of at least one free offset (lastEnd < n − 1: no overflow)
      if (haveLast && lastEnd + 1 >= s) return RUNS_RUNS_NOT_MAXIMAL;
      haveLast = true;
      lastEnd = e;
      count += e - s + 1;
    }
    if (takenOf(h, p) != count - countBefore) return RUNS_BAD_PAGE_TAKEN;
    runs += len;
  }
  if (runs != load<u32>(h + H_RUNS)) return RUNS_BAD_RUNS;
  if (count != load<u64>(h + H_COUNT)) return RUNS_BAD_COUNT;
  const size: u32 = 1 << BLOCK_BITS;
  for (let b: u32 = 0; b < np; b += size) {
    let t: u64 = 0;
    for (let q = b; q < b + size && q < np; q++) t += takenOf(h, q);
    if (load<u64>(entry(h, b) + D_BLOCK) != t) return RUNS_BAD_BLOCK_SUM;
  }
  return 0;
}

// ── bulk build ─────────────────────────────────────────────────────────────────────────────

/** Bytes of the histogram radixSort needs for digits of `bits` bits: one u32 counter per digit value per pass. */
export function radixHistBytes(bits: u32): usize {
  return <usize>(((<u32>64 + bits - 1) / bits) << bits) << 2;
}

/**
 * Sorts the u64 keys at a (m of them) with b as room; returns whichever buffer holds the result.
 * LSD radix sort with digits of `bits` bits (hist: radixHistBytes(bits)); a digit every key
 * shares is skipped. Large arrays take 11 bits (six passes instead of eight of 8 bits: a bulk load
 * of 10^6 random keys measured ≈ 20 % faster, the 2,048 write streams of a pass still fit the L2
 * cache); small ones 8 bits, whose 8 KiB of counters cost less to clear than they save.
 */
export function radixSort(a: usize, b: usize, m: u32, hist: usize, bits: u32): usize {
  const digits: u32 = (<u32>64 + bits - 1) / bits;
  // hist: digits × 2^bits u32 counters, one pass over the keys fills all of them
  memory.fill(hist, 0, radixHistBytes(bits));
  const mask: u64 = (<u64>1 << <u64>bits) - 1;
  for (let i: u32 = 0; i < m; i++) {
    const k = load<u64>(a + (<usize>i << 3));
    for (let d: u32 = 0; d < digits; d++) {
      const c = hist + (<usize>(d << bits) << 2) + (<usize>((k >>> <u64>(d * bits)) & mask) << 2);
      store<u32>(c, load<u32>(c) + 1);
    }
  }
  let src = a;
  let dst = b;
  for (let d: u32 = 0; d < digits; d++) {
    const hd = hist + (<usize>(d << bits) << 2);
    const shift = <u64>(d * bits);
    // a digit every key shares orders nothing: skip the pass
    const k0 = load<u64>(src);
    if (load<u32>(hd + (<usize>((k0 >>> shift) & mask) << 2)) == m) continue;
    let sum: u32 = 0;
    for (let j: usize = 0; j < (<usize>1 << bits); j++) {
      const c = load<u32>(hd + (j << 2));
      store<u32>(hd + (j << 2), sum);
      sum += c;
    }
    for (let i: u32 = 0; i < m; i++) {
      const k = load<u64>(src + (<usize>i << 3));
      const c = hd + (<usize>((k >>> shift) & mask) << 2);
      const pos = load<u32>(c);
      store<u32>(c, pos + 1);
      store<u64>(dst + (<usize>pos << 3), k);
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

// State of the page builder used by bulkLoad (module globals: no closures).
let bDir: usize = 0;
let bNp: u32 = 0;
let bPage: usize = 0;
let bLen: u32 = 0;
let bFailed = false;

/** Appends [s, e] to the pages being built; opens a page every BULK_FILL runs. */
function emit(s: u64, e: u64): void {
  if (bPage == 0 || bLen == BULK_FILL) {
    const page = halloc(PAGE_SIZE);
    if (page == 0) {
      bFailed = true;
      return;
    }
    const en = bDir + (<usize>bNp << DIR_ENTRY_BITS);
    store<u64>(en + D_KEY, s);
    store<u32>(en + D_PAGE, <u32>page);
    store<u64>(en + D_TAKEN, 0);
    bNp++;
    bPage = page;
    bLen = 0;
  }
  const at = run(bPage, bLen);
  store<u64>(at, s);
  store<u64>(at, e, 8);
  bLen++;
  const en = bDir + (<usize>(bNp - 1) << DIR_ENTRY_BITS);
  store<u32>(en + D_LEN, bLen);
  store<u64>(en + D_TAKEN, load<u64>(en + D_TAKEN) + (e - s + 1));
}

/**
 * Fills an empty index with the m runs at ptr, given as (start, end) u64 pairs, sorted and
 * maximal (a.end + 1 < b.start), all inside [0, n), in pages of BULK_FILL runs. true, or false
 * when memory ran out (then the index is still empty).
 */
export function runs_load(h: usize, ptr: usize, m: u32): bool {
  if (m == 0) return true;
  const needPages = (m + BULK_FILL - 1) / BULK_FILL;
  let dcap: u32 = DIR_MIN_CAP;
  while (dcap < needPages) dcap <<= 1;
  const dir = halloc(<usize>dcap << DIR_ENTRY_BITS);
  if (dir == 0) return false;
  bDir = dir;
  bNp = 0;
  bPage = 0;
  bLen = 0;
  bFailed = false;
  let total: u64 = 0;
  for (let i: u32 = 0; i < m && !bFailed; i++) {
    const s = load<u64>(ptr + (<usize>i << 4));
    const e = load<u64>(ptr + (<usize>i << 4), 8);
    emit(s, e);
    total += e - s + 1;
  }
  if (bFailed) {
    for (let p: u32 = 0; p < bNp; p++) hfree(<usize>load<u32>(dir + (<usize>p << DIR_ENTRY_BITS) + D_PAGE), PAGE_SIZE);
    hfree(dir, <usize>dcap << DIR_ENTRY_BITS);
    return false;
  }
  store<u32>(h + H_DIR, <u32>dir);
  store<u32>(h + H_DIRCAP, dcap);
  store<u32>(h + H_NPAGES, bNp);
  store<u32>(h + H_RUNS, m);
  store<u64>(h + H_COUNT, total);
  resumBlocks(h, 0);
  return true;
}
