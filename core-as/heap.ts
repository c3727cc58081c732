// Raw memory for the core: a buddy allocator for blocks of 4 KiB and more, size-class free lists
// for smaller blocks, over `memory.grow`, with an optional cap.
//
// The core runs with `--runtime stub`, whose managed allocations are never freed, so nothing on
// the hot path uses managed objects. Indexes and iterators take their memory from here instead.
//
//   class k holds blocks of exactly 2^k bytes (k = MIN_CLASS .. MAX_CLASS); callers free with the
//   size they allocated (sized free), so blocks carry no header while in use.
//
//   ┌──────────── linear memory ──────────────────────────────────────────────────────────────────┐
//   │ static data │ free-block bitmap (128 KiB) │ first leaves │ arena: blocks ▸        │ not carved │
//   └─────────────┴─────────────────────────────┴──────────────┴────────────────────────┴────────────┘
//                 ^ __heap_base (aligned)                      ^ ARENA (64 KiB aligned) ^ ARENA + top
//
// Large classes (k ≥ LARGE_CLASS, 4 KiB): a buddy system over the arena. A block of class k starts
// at an arena offset that is a multiple of 2^k; its buddy is the block at offset ^ 2^k. A large
// allocation takes the smallest free block of class ≥ k and splits it, halving; a large free
// merges the block with its buddy while the buddy is free and whole, so memory freed by one
// index can hold an index of another size (a Range destroyed under a memory cap leaves room for
// a different one). The arena is carved at `top`, aligned up to the class; the gap that alignment
// skips becomes free blocks first, which merge with the free blocks below them, and a block of
// the class that merging makes is taken instead of one carved past the gap.
//
// Small classes (k < LARGE_CLASS): a 4 KiB large block, a slab, is cut into blocks of one class,
// all onto that class's free list. A slab whose blocks are all free again goes back to the buddy
// system (and merges), except that each class keeps one such empty slab cached, so a class whose
// use goes up and down by one block does not cut and return a slab every time; the cached slabs
// go back too as soon as the heap would otherwise fail (cap reached, host refusing).
//
// A small block finds its slab by rounding its address down to 4 KiB (the arena is 64 KiB
// aligned), and the slab's count in a table of one u16 per 4 KiB unit of arena:
//
//   slab entry (u16):  15 │ 14 ····· 12 │ 11 ··· 9 │ 8 ··········· 0
//                      1  │      0      │  k − 4   │ blocks in use (0 .. 256)
//   0 = the unit is not a slab
//
//   LEAVES (512 × u32) ──▸ leaf: 2,048 entries (4 KiB) for 8 MiB of arena, 0 = no slab there yet
//
// The first leaves (15 with today's static data: 120 MiB of arena) fill the gap that aligning the
// arena to 64 KiB leaves after the bitmap, which is there anyway; a later one is a 4 KiB block
// taken when the first slab of its 8 MiB is cut, and kept (bookkeeping, like the bitmap: not in
// heap_bytes_in_use).
//
// Invariants: a block is either owned by exactly one caller or on exactly one free list. A free
// large block has its bit set in the bitmap (one bit per 4 KiB of arena, at its first unit) and
// holds [next, prev, class] in its first words; every other unit's bit is clear. No two free large
// blocks of one class are buddies (they would have been merged). A free small block holds
// [next, prev] (doubly linked, so releasing a slab unlinks its blocks in O(blocks)) and lies in a
// slab of its class; a slab's count + its blocks on the free list = 4 KiB / 2^k. A slab with count
// 0 is its class's cached empty slab (EMPTY_SLAB), at most one per class. `heap_validate`
// re-derives all of it.
//
// The cap (`heap_set_limit_pages`) bounds `memory.grow`; when growing would pass it, or the host
// refuses, `halloc` returns 0 and the caller reports OUT_OF_MEMORY. Nothing a caller can see
// changes on failure (the cached empty slabs may have gone back to the buddy system). The last
// failure is recorded for the host's error message (`heap_failed_*`), which describes the
// caller's whole operation, read once it has given back what it took: the bytes it needed (the
// blocks it held when it failed, which it has given back since, plus the block it could not get,
// or more when the caller says so: recordFailedNeed), and why — the cap (or wasm32's 4 GiB) would
// have to be passed, the free memory adds up to that but no piece of it fits (fragmented), or the
// host refused to grow below the cap. With it are kept the largest free piece of 4 KiB or more and
// the memory held for small blocks at that moment (what a fragmented failure's message names: the
// operation's own blocks, given back since, may have merged the pieces), and a count of failures
// (heap_failures), by which the host tells whether the record is still the one it read. Work that
// may fail without failing its caller (a smaller node, a resized router) runs between
// beginBestEffort and endBestEffort and leaves the record alone, so that the failure an operation
// reports is its own even when it cleans up after it.
// Memory is never returned to the host (WebAssembly cannot shrink).

export const MIN_CLASS: i32 = 4; //  16 bytes
export const MAX_CLASS: i32 = 31; // 2 GiB
/** The smallest class the buddy system manages: 4 KiB, the unit of the bitmap and of a slab. */
const LARGE_CLASS: i32 = 12;
const SLAB_BYTES: usize = <usize>1 << LARGE_CLASS;
const SLAB_MASK: usize = SLAB_BYTES - 1;
const PAGE_BITS: i32 = 16; //     64 KiB WebAssembly pages
/** Smallest growth step: 16 pages = 1 MiB. */
const MIN_GROW_PAGES: i32 = 16;
/** One bit per 4 KiB unit of a 4 GiB arena. */
const BITMAP_BYTES: usize = (<usize>1 << (32 - LARGE_CLASS)) >>> 3;

// A free large block's first words.
const F_NEXT: usize = 0;
const F_PREV: usize = 4;
const F_CLASS: usize = 8;
// A free small block's first words.
const S_NEXT: usize = 0;
const S_PREV: usize = 4;

// Slab entries (drawn above): u16, one per 4 KiB unit, in leaves of LEAF_UNITS.
const E_SLAB: u32 = 0x8000;
const E_CLASS_SHIFT: u32 = 9;
const E_CLASS_MASK: u32 = 7;
const E_COUNT_MASK: u32 = 0x1ff;
const LEAF_BITS: i32 = 11; // 2,048 u16 entries: one 4 KiB leaf
const LEAF_MASK: usize = (<usize>1 << LEAF_BITS) - 1;
const LEAF_COUNT: usize = <usize>1 << (32 - LARGE_CLASS - LEAF_BITS); // 512 leaves for 4 GiB

const FREE_HEADS: usize = memory.data(32 * 4, 16); // u32 head per class: absolute address, 0 = none
/** u32 per small class: its cached empty slab (absolute address), 0 = none. */
const EMPTY_SLAB: usize = memory.data(LARGE_CLASS * 4, 16);
/** u32 per 8 MiB of arena: its leaf of slab entries (absolute address), 0 = not yet needed. */
const LEAVES: usize = memory.data(<i32>LEAF_COUNT * 4, 16);
let BITMAP: usize = 0; // set by init(); 0 until the first allocation
let ARENA: usize = 0;
/** Arena bytes carved so far: everything below ARENA + top is a block, owned or free. */
let top: usize = 0;
let limitPages: i32 = 65536; // 4 GiB: the wasm32 maximum
let bytesInUse: u64 = 0;
/** Bytes of the slabs (4 KiB blocks cut for small classes), and of the small blocks handed out of them. */
let smallHeld: u64 = 0;
let smallInUse: u64 = 0;
// Why the last request that failed failed (heap_failed_reason):
/** The free memory below the cap (or wasm32's 4 GiB), added up, is less than the block. */
export const HEAP_FAIL_LIMIT: i32 = 1;
/** The free memory below the cap adds up to the block, but no free piece of it holds the block. */
export const HEAP_FAIL_FRAGMENTED: i32 = 2;
/** The host refused to grow the memory, below the cap. */
export const HEAP_FAIL_HOST: i32 = 3;
/** The block the last request that failed asked for (its class size, or the request when larger than any block); 0 = none yet. */
let failedBlock: u64 = 0;
/** bytesInUse when it failed: what its caller held then, less what the caller gives back, is part of what it needed. */
let failedInUse: u64 = 0;
/** At least this much was needed in all (recordFailedNeed: blocks the caller would have asked for next); 0 = no floor. */
let failedNeed: u64 = 0;
/** The last failure was the host refusing to grow the memory below the cap. */
let failedHost: bool = false;
/** The last failure asked for more than any block can hold: no free memory could have served it. */
let failedTooLarge: bool = false;
/** The largest free piece (largestFree) when the last failure was recorded: what the failed block was measured against. */
let failedLargest: u64 = 0;
/** Bytes free for small blocks only when the last failure was recorded (heap_failed_small_free). */
let failedSmallFree: u64 = 0;
/** Failures recorded so far (heap_failures): tells the host whether the record is still the one it read. */
let failures: u32 = 0;
/** Best-effort work in progress (beginBestEffort): its failures are not recorded. */
let bestEffort: i32 = 0;
/** Whether grow()'s last false was the host's refusal (memory.grow failed) rather than the cap. */
let hostRefused: bool = false;
/** heap_validate's scratch: u32 per small class, the free blocks its slab entries promise. */
const VALIDATE_FREE: usize = memory.data(LARGE_CLASS * 4, 16);
/** Leaves taken from the arena (those past the gap before it): bookkeeping, never freed. */
let arenaLeaves: u32 = 0;

/** Size class of a request: the smallest k ≥ MIN_CLASS with 2^k ≥ size. */
export function classOf(size: usize): i32 {
  if (size <= (<usize>1 << MIN_CLASS)) return MIN_CLASS;
  return 32 - clz<u32>(<u32>(size - 1));
}

/**
 * Makes linear memory reach `to` bytes. Grows geometrically (by at least a quarter of the current
 * size and at least MIN_GROW_PAGES), because every memory.grow is reported to the host's garbage
 * collector as new external memory: growing page by page made V8 run a full mark-compact of a
 * large JS heap every few grows (measured: 28 collections of 415 MB while one sparse index of
 * 10^6 offsets was built). Falls back to the exact need near the cap.
 */
function grow(to: usize): bool {
  const have = <usize>memory.size() << PAGE_BITS;
  if (to <= have) return true;
  const size = memory.size();
  const need = <i32>((to - have + 0xffff) >>> PAGE_BITS);
  hostRefused = false;
  if (size + need > limitPages) return false;
  let step = max(need, max(size >> 2, MIN_GROW_PAGES));
  if (size + step > limitPages) step = limitPages - size;
  if (memory.grow(step) >= 0) return true;
  if (memory.grow(need) >= 0) return true; // the host refused the larger step: the exact need
  hostRefused = true;
  return false;
}

/**
 * Bytes free below the cap: the free blocks of the carved arena (large ones and those held for
 * small blocks) and the room between the arena's top and the cap. O(1), from the counters
 * heap_validate checks: top = free large + slabs + large in use + arena leaves.
 */
function freeBelowLimit(): u64 {
  const limit = <u64>limitPages << PAGE_BITS;
  const end = <u64>(ARENA != 0 ? ARENA : arenaStart()) + <u64>top;
  const room = limit > end ? limit - end : 0;
  return <u64>top - (<u64>arenaLeaves << LARGE_CLASS) - bytesInUse + room;
}

/**
 * Records that a block of `bytes` could not be had (heap_failed_*) after grow() or the 32-bit
 * space refused it; `grew` says whether grow() was asked (and so whether the host may have
 * refused). What the caller holds now is noted, to be counted as needed once it is given back.
 */
function recordFailure(bytes: u64, grew: bool): void {
  if (bestEffort != 0) return;
  failures++;
  failedBlock = bytes;
  failedLargest = largestFree();
  failedSmallFree = smallHeld - smallInUse;
  failedInUse = bytesInUse;
  failedNeed = 0;
  failedHost = grew && hostRefused;
  failedTooLarge = false;
}

function bitmapStart(): usize {
  return (__heap_base + 15) & ~<usize>15;
}

/** Where the arena starts (ARENA once init() placed it): after the bitmap, 64 KiB aligned. */
function arenaStart(): usize {
  return (bitmapStart() + BITMAP_BYTES + 0xffff) & ~<usize>0xffff;
}

/** Places the bitmap, the first leaves and the arena (once). False when that memory cannot be had. */
function init(): bool {
  if (ARENA != 0) return true;
  const bitmap = bitmapStart();
  const arena = arenaStart();
  if (!grow(arena)) return false; // fresh memory is zero: every bit clear, every entry 0
  BITMAP = bitmap;
  ARENA = arena;
  // The gap that aligning the arena leaves after the bitmap holds the first leaves.
  let leaf = bitmap + BITMAP_BYTES;
  for (let i: usize = 0; i < LEAF_COUNT && leaf + SLAB_BYTES <= arena; i++) {
    store<u32>(LEAVES + (i << 2), <u32>leaf);
    leaf += SLAB_BYTES;
  }
  return true;
}

/**
 * For a caller whose operation needs `bytes` in all, in several blocks, when one that is not the
 * last failed: the failure is recorded as needing at least that much (a dense index: its bitmap
 * and summaries), so that the host's message names what the whole needs, not the first piece.
 */
export function recordFailedNeed(bytes: u64): void {
  if (bestEffort == 0 && bytes > failedNeed) failedNeed = bytes;
}

/**
 * Starts work whose failure to get memory does not fail its caller (a node rebuilt smaller, a
 * router or directory resized): until endBestEffort, failures leave the record of the last real
 * one as it is. Nests.
 */
// @ts-ignore: decorator
@inline export function beginBestEffort(): void {
  bestEffort++;
}

// @ts-ignore: decorator
@inline export function endBestEffort(): void {
  bestEffort--;
}

// ── the bitmap of free large blocks, by arena offset ──────────────────────────────────────────

function bitAt(off: usize): usize {
  return BITMAP + ((off >>> LARGE_CLASS) >>> 3);
}

function isFreeStart(off: usize): bool {
  return ((<u32>load<u8>(bitAt(off)) >>> <u32>((off >>> LARGE_CLASS) & 7)) & 1) != 0;
}

function setFreeStart(off: usize, free: bool): void {
  const at = bitAt(off);
  const bit = <u8>(1 << <u8>((off >>> LARGE_CLASS) & 7));
  store<u8>(at, free ? load<u8>(at) | bit : load<u8>(at) & ~bit);
}

// ── large blocks: free lists of the buddy system (doubly linked, so a buddy can be unlinked) ──

function pushLarge(off: usize, k: i32): void {
  const p = ARENA + off;
  const head = FREE_HEADS + (<usize>k << 2);
  const next = <usize>load<u32>(head);
  store<u32>(p + F_NEXT, <u32>next);
  store<u32>(p + F_PREV, 0);
  store<u32>(p + F_CLASS, <u32>k);
  if (next != 0) store<u32>(next + F_PREV, <u32>p);
  store<u32>(head, <u32>p);
  setFreeStart(off, true);
}

function unlinkLarge(p: usize, k: i32): void {
  const next = <usize>load<u32>(p + F_NEXT);
  const prev = <usize>load<u32>(p + F_PREV);
  if (prev != 0) store<u32>(prev + F_NEXT, <u32>next);
  else store<u32>(FREE_HEADS + (<usize>k << 2), <u32>next);
  if (next != 0) store<u32>(next + F_PREV, <u32>prev);
  setFreeStart(p - ARENA, false);
}

/** Not an arena offset (offsets are multiples of 4 KiB): takeLarge's "no memory". */
const NO_BLOCK: usize = 0xffffffff;

/** A block of class k ≥ LARGE_CLASS as an arena offset, or NO_BLOCK when memory cannot be had. */
function takeLarge(k: i32): usize {
  const off = takeLargeOnce(k);
  // Out of memory: the cached empty slabs go back first (they may complete a merge), then retry.
  if (off == NO_BLOCK && releaseEmptySlabs()) return takeLargeOnce(k);
  return off;
}

function takeLargeOnce(k: i32): usize {
  const free = takeFreeLarge(k);
  if (free != NO_BLOCK) return free;
  // None free: carve at `top`, aligned up to the class; the gap becomes free blocks. Carved
  // first, the gap merges with the free blocks below it, and when all the arena below the
  // aligned start is free that makes a block of this class: taken, it needs no memory past the
  // gap. (Carving the new block past the gap at once needed twice the class: a 2 MiB index after
  // a 1 MiB one given back asked for 4 MiB of arena, not 2, with nothing in use.)
  const size = <u64>1 << k;
  const start = (<u64>top + size - 1) & ~(size - 1);
  const end = <u64>ARENA + start + size;
  if (end > 0xffffffff) {
    recordFailure(size, false); // past the 32-bit space
    return NO_BLOCK;
  }
  if (<u64>top < start) {
    if (!grow(<usize>(<u64>ARENA + start))) {
      recordFailure(size, true);
      return NO_BLOCK;
    }
    while (<u64>top < start) {
      // the largest aligned block at top that stays below start: its class is top's lowest set bit
      const gap = top;
      const c = <i32>ctz<u32>(<u32>gap);
      top += <usize>1 << c;
      freeLarge(gap, c); // merged with its buddy below when that is free
    }
    const merged = takeFreeLarge(k);
    if (merged != NO_BLOCK) return merged;
  }
  if (!grow(<usize>end)) {
    recordFailure(size, true);
    return NO_BLOCK;
  }
  top = <usize>(start + size);
  return <usize>start;
}

/** The smallest free block of class k or more, halved down to k (the upper halves go free), or NO_BLOCK. */
function takeFreeLarge(k: i32): usize {
  for (let j = k; j <= MAX_CLASS; j++) {
    const p = <usize>load<u32>(FREE_HEADS + (<usize>j << 2));
    if (p == 0) continue;
    unlinkLarge(p, j);
    const off = p - ARENA;
    while (j > k) {
      j--;
      pushLarge(off + (<usize>1 << j), j);
    }
    return off;
  }
  return NO_BLOCK;
}

/** Frees a large block, merged with its buddy as long as the buddy is free and whole. */
function freeLarge(off: usize, k: i32): void {
  while (k < MAX_CLASS) {
    const buddy = off ^ (<usize>1 << k);
    if (buddy >= top || !isFreeStart(buddy)) break;
    const p = ARENA + buddy;
    if (<i32>load<u32>(p + F_CLASS) != k) break; // free, but split: part of it is in use
    unlinkLarge(p, k);
    off = min(off, buddy);
    k++;
  }
  pushLarge(off, k);
}

// ── slabs: small blocks cut from 4 KiB blocks, counted in the slab entries ────────────────────

/** The slab entry of the unit at arena offset `off`. Its leaf must exist (any slab's does). */
// @ts-ignore: decorator
@inline
function entryAt(off: usize): usize {
  const unit = off >>> LARGE_CLASS;
  return <usize>load<u32>(LEAVES + ((unit >>> LEAF_BITS) << 2)) + ((unit & LEAF_MASK) << 1);
}

/** Makes sure the unit at arena offset `off` has a leaf. False when memory for it cannot be had. */
function ensureLeaf(off: usize): bool {
  const dir = LEAVES + ((off >>> (LARGE_CLASS + LEAF_BITS)) << 2);
  if (load<u32>(dir) != 0) return true;
  const leaf = takeLarge(LARGE_CLASS);
  if (leaf == NO_BLOCK) return false;
  memory.fill(ARENA + leaf, 0, SLAB_BYTES);
  store<u32>(dir, <u32>(ARENA + leaf));
  arenaLeaves++;
  return true;
}

function pushSmall(p: usize, k: i32): void {
  const head = FREE_HEADS + (<usize>k << 2);
  const next = <usize>load<u32>(head);
  store<u32>(p + S_NEXT, <u32>next);
  store<u32>(p + S_PREV, 0);
  if (next != 0) store<u32>(next + S_PREV, <u32>p);
  store<u32>(head, <u32>p);
}

function unlinkSmall(p: usize, k: i32): void {
  const next = <usize>load<u32>(p + S_NEXT);
  const prev = <usize>load<u32>(p + S_PREV);
  if (prev != 0) store<u32>(prev + S_NEXT, <u32>next);
  else store<u32>(FREE_HEADS + (<usize>k << 2), <u32>next);
  if (next != 0) store<u32>(next + S_PREV, <u32>prev);
}

/**
 * Cuts a slab for class k (its free list is empty): the first block is returned, the rest go onto
 * the free list. 0 when memory for the slab (or its leaf) cannot be had; nothing changes then.
 * The failure is recorded as the small block asked for when the slab could not be had (a small
 * request reads the same whichever of its own blocks failed); when its leaf could not be had,
 * as the leaf with the slab it held and gave back: the two 4 KiB blocks are what the request
 * needs, and reading it as the small block would make a cap with 4 KiB free look fragmented
 * and too little to raise.
 */
function cutSlab(k: i32): usize {
  const off = takeLarge(LARGE_CLASS);
  if (off == NO_BLOCK) {
    if (bestEffort == 0) failedBlock = <u64>1 << k;
    return 0;
  }
  if (!ensureLeaf(off)) {
    // slabs are not in bytesInUse: counted here as held when it failed, given back below
    if (bestEffort == 0) failedInUse += <u64>SLAB_BYTES;
    freeLarge(off, LARGE_CLASS);
    return 0;
  }
  store<u16>(entryAt(off), <u16>(E_SLAB | (<u32>(k - MIN_CLASS) << E_CLASS_SHIFT) | 1));
  smallHeld += <u64>SLAB_BYTES;
  const slab = ARENA + off;
  const blockSize = <usize>1 << k;
  let prev: usize = 0;
  for (let b = slab + blockSize; b < slab + SLAB_BYTES; b += blockSize) {
    store<u32>(b + S_NEXT, <u32>(b + blockSize < slab + SLAB_BYTES ? b + blockSize : 0));
    store<u32>(b + S_PREV, <u32>prev);
    prev = b;
  }
  store<u32>(FREE_HEADS + (<usize>k << 2), <u32>(slab + blockSize));
  return slab;
}

/** Gives an empty slab of class k back to the buddy system: its blocks off the free list, merged. */
function releaseSlab(slab: usize, k: i32): void {
  const blockSize = <usize>1 << k;
  for (let b = slab; b < slab + SLAB_BYTES; b += blockSize) unlinkSmall(b, k);
  store<u16>(entryAt(slab - ARENA), 0);
  smallHeld -= <u64>SLAB_BYTES;
  freeLarge(slab - ARENA, LARGE_CLASS);
}

/** Releases every class's cached empty slab. True when there was one. */
function releaseEmptySlabs(): bool {
  let any = false;
  for (let k = MIN_CLASS; k < LARGE_CLASS; k++) {
    const at = EMPTY_SLAB + (<usize>k << 2);
    const slab = <usize>load<u32>(at);
    if (slab == 0) continue;
    store<u32>(at, 0);
    releaseSlab(slab, k);
    any = true;
  }
  return any;
}

// ── the allocator ───────────────────────────────────────────────────────────────────────────

/**
 * Allocates `size` bytes (rounded up to a power of two, 16-byte aligned, contents undefined).
 * Returns 0 when the cap or the host refuses more memory; nothing changes then.
 */
export function halloc(size: usize): usize {
  if (size == 0) size = 1;
  if (size > (<usize>1 << MAX_CLASS)) {
    recordFailure(<u64>size, false);
    if (bestEffort == 0) failedTooLarge = true; // larger than any block: no piece could ever hold it
    return 0;
  }
  const k = classOf(size);
  if (!init()) {
    recordFailure(<u64>1 << k, true);
    return 0;
  }
  if (k >= LARGE_CLASS) {
    const off = takeLarge(k);
    if (off == NO_BLOCK) return 0;
    bytesInUse += <u64>1 << k;
    return ARENA + off;
  }
  const head = FREE_HEADS + (<usize>k << 2);
  let p = <usize>load<u32>(head);
  if (p == 0) {
    p = cutSlab(k);
    if (p == 0) return 0; // recorded by cutSlab
  } else {
    // Off the list, and one more in use in its slab (a few loads and stores on this path).
    const next = <usize>load<u32>(p + S_NEXT);
    store<u32>(head, <u32>next);
    if (next != 0) store<u32>(next + S_PREV, 0);
    const e = entryAt((p & ~SLAB_MASK) - ARENA);
    const v = <u32>load<u16>(e);
    assert((v & E_SLAB) != 0 && ((v >>> E_CLASS_SHIFT) & E_CLASS_MASK) == <u32>(k - MIN_CLASS)); // a block of this class
    if ((v & E_COUNT_MASK) == 0) {
      // only the cached slab stays empty: the class's cached empty slab is in use again
      assert(<usize>load<u32>(EMPTY_SLAB + (<usize>k << 2)) == (p & ~SLAB_MASK));
      store<u32>(EMPTY_SLAB + (<usize>k << 2), 0);
    }
    store<u16>(e, <u16>(v + 1));
  }
  bytesInUse += <u64>1 << k;
  smallInUse += <u64>1 << k;
  return p;
}

/** Allocates and zero-fills. Returns 0 on failure. */
export function hcalloc(size: usize): usize {
  const p = halloc(size);
  if (p != 0) memory.fill(p, 0, <usize>1 << classOf(size));
  return p;
}

/** Returns a block to its class. `size` must be the size passed to `halloc`. */
export function hfree(ptr: usize, size: usize): void {
  if (ptr == 0) return;
  const k = classOf(size == 0 ? 1 : size);
  bytesInUse -= <u64>1 << k;
  if (k >= LARGE_CLASS) {
    freeLarge(ptr - ARENA, k);
    return;
  }
  smallInUse -= <u64>1 << k;
  pushSmall(ptr, k);
  const slab = ptr & ~SLAB_MASK;
  const e = entryAt(slab - ARENA);
  const v = <u32>load<u16>(e) - 1;
  assert((v & E_SLAB) != 0 && ((v >>> E_CLASS_SHIFT) & E_CLASS_MASK) == <u32>(k - MIN_CLASS)); // freed with the size it was allocated with
  store<u16>(e, <u16>v);
  if ((v & E_COUNT_MASK) != 0) return;
  // The slab is empty: the class's cached one, or back to the buddy system when one is cached.
  const cached = EMPTY_SLAB + (<usize>k << 2);
  if (load<u32>(cached) == 0) store<u32>(cached, <u32>slab);
  else releaseSlab(slab, k);
}

/**
 * Gives back the part of block `ptr` (allocated for `size` bytes) past `smaller` bytes, keeping
 * its first `used` bytes (used ≤ smaller < size); afterwards it is freed with `smaller`. A block
 * of 4 KiB or more shrinks where it is, with no memory needed (its upper halves freed: each
 * one's buddy is the part kept, in use, so none merges away):
 *
 *   [kept ····· | ½ ·········· ]  →  [kept | ¼ | ½ ·········· ]     (to a quarter: ¼ and ½ free)
 *
 * a smaller one is moved to a new block, best effort. Returns where the kept bytes are now, or 0
 * when the new block could not be had (then nothing changed, and the failure is not recorded as
 * the caller's operation's: shrinking is never what an operation needs).
 */
export function moveToSmaller(ptr: usize, size: usize, smaller: usize, used: usize): usize {
  const k = classOf(size);
  const j = classOf(smaller == 0 ? 1 : smaller);
  if (j >= k) return ptr;
  if (j >= LARGE_CLASS) {
    const off = ptr - ARENA;
    for (let c = j; c < k; c++) freeLarge(off + (<usize>1 << c), c);
    bytesInUse -= (<u64>1 << k) - (<u64>1 << j);
    return ptr;
  }
  beginBestEffort();
  const p = halloc(smaller);
  endBestEffort();
  if (p == 0) return 0;
  memory.copy(p, ptr, used);
  hfree(ptr, size);
  return p;
}

/** Bytes a request of `size` actually occupies (its class size). */
export function hblock_size(size: usize): usize {
  return <usize>1 << classOf(size == 0 ? 1 : size);
}

// ── exported to the boundary ───────────────────────────────────────────────────────────────

/** Caps linear memory at `pages` × 64 KiB (never below what is already in use). */
export function heap_set_limit_pages(pages: i32): void {
  limitPages = pages < memory.size() ? memory.size() : pages;
}

export function heap_limit_pages(): i32 {
  return limitPages;
}

/** Bytes handed out and not yet freed (by class size). */
export function heap_bytes_in_use(): f64 {
  return <f64>bytesInUse;
}

/**
 * Bytes held free for small blocks: the free blocks of slabs that still hold a block in use, and
 * the cached empty slabs (at most one per class). A slab stays with its class while any of its
 * blocks is in use, so after many small indexes are destroyed in an order that leaves a few alive
 * in many slabs, this much is usable by small blocks only (what an out-of-memory message names).
 */
export function heap_small_bytes_free(): f64 {
  return <f64>(smallHeld - smallInUse);
}

/**
 * What the last operation that failed needed, in bytes (0 when none has failed): the blocks it
 * held when it failed and has given back since, plus the block it could not get (its class
 * size, or the request itself when larger than any block), or more when its caller recorded a
 * larger need (recordFailedNeed). Read right after the failing call, once it has given back what
 * it took: blocks taken since would count as given back.
 */
export function heap_failed_bytes(): f64 {
  if (failedBlock == 0) return 0;
  const given = failedInUse > bytesInUse ? failedInUse - bytesInUse : 0;
  const need = failedBlock + given;
  return <f64>(need > failedNeed ? need : failedNeed);
}

/** How many failures have been recorded (wrapping): unchanged means heap_failed_* still describe the same one. */
export function heap_failures(): u32 {
  return failures;
}

/** The block the last failure could not get (its class size, or the request when larger than any block); 0 when none. */
export function heap_failed_block(): f64 {
  return <f64>failedBlock;
}

/**
 * The largest free piece of 4 KiB or more when the last failure was recorded (0 when none): the
 * block that failed did not fit in it. With the blocks its operation held then, which it has
 * given back since, the pieces may be larger now.
 */
export function heap_failed_largest(): f64 {
  return <f64>failedLargest;
}

/**
 * The bytes free for blocks under 4 KiB only when the last failure was recorded: free blocks of
 * slabs that held a block in use (the cached empty slabs have gone back before a failure). For a
 * small block that failed, all of another size (its own had none free).
 */
export function heap_failed_small_free(): f64 {
  return <f64>failedSmallFree;
}

/**
 * The largest block of 4 KiB or more that could be had now in one piece: a free large block, or
 * one carved past the arena's top below the cap (aligned to its size); 0 when none. O(classes).
 */
function largestFree(): u64 {
  let largest: u64 = 0;
  for (let k = MAX_CLASS; k >= LARGE_CLASS; k--) {
    if (load<u32>(FREE_HEADS + (<usize>k << 2)) != 0) {
      largest = <u64>1 << k;
      break;
    }
  }
  const limit = <u64>limitPages << PAGE_BITS;
  const arena = <u64>(ARENA != 0 ? ARENA : arenaStart());
  for (let k = MAX_CLASS; k >= LARGE_CLASS; k--) {
    const size = <u64>1 << k;
    if (size <= largest) break;
    const start = (<u64>top + size - 1) & ~(size - 1);
    if (arena + start + size <= limit) {
      largest = size;
      break;
    }
  }
  return largest;
}

/**
 * Why the last operation failed (0 when none has): HEAP_FAIL_HOST when the host refused to grow
 * the memory; else HEAP_FAIL_FRAGMENTED when heap_bytes_free() (read at the same moment) holds
 * heap_failed_bytes() but no piece of it served, HEAP_FAIL_LIMIT when it does not. As
 * heap_failed_bytes, read right after the failing call.
 */
export function heap_failed_reason(): i32 {
  if (failedBlock == 0) return 0;
  if (failedHost) return HEAP_FAIL_HOST;
  if (failedTooLarge) return HEAP_FAIL_LIMIT;
  return <f64>freeBelowLimit() >= heap_failed_bytes() ? HEAP_FAIL_FRAGMENTED : HEAP_FAIL_LIMIT;
}

/**
 * Bytes free below the cap now: free blocks (small ones too) and room to grow. With
 * heap_bytes_in_use, it adds up to the cap less the heap's own bookkeeping (the static data, the
 * free-block bitmap and the slab leaves: everything below the arena, and the leaves taken from
 * it), as long as the cap is above that bookkeeping.
 */
export function heap_bytes_free(): f64 {
  return <f64>freeBelowLimit();
}

/**
 * Of heap_bytes_free(), the bytes in free pieces that can each hold blocks of `size` (a large
 * class): the free blocks of that class and above, and the room between the arena's top, aligned
 * up to it, and the cap. For the host's report of a failure whose blocks are of that size: the
 * rest is free but too small for them (a sparse index's growth leaves such pieces: its nodes
 * double, then split). O(free blocks of that class and above).
 */
export function heap_free_for_blocks(size: usize): f64 {
  const k = classOf(size);
  if (k < LARGE_CLASS) return <f64>freeBelowLimit();
  let sum: u64 = 0;
  for (let j = k; j <= MAX_CLASS; j++) {
    for (let p = <usize>load<u32>(FREE_HEADS + (<usize>j << 2)); p != 0; p = <usize>load<u32>(p + F_NEXT)) sum += <u64>1 << j;
  }
  const limit = <u64>limitPages << PAGE_BITS;
  const arena = <u64>(ARENA != 0 ? ARENA : arenaStart());
  const block = <u64>1 << k;
  const start = (<u64>top + block - 1) & ~(block - 1);
  if (arena + start < limit) sum += ((limit - arena - start) / block) * block;
  return <f64>sum;
}

/**
 * Re-derives the heap's invariants (header of this file) from the free lists, the bitmap and the
 * slab entries: 0 when they hold, else the number of the first that fails. O(arena / 4 KiB +
 * free blocks); for tests.
 */
export function heap_validate(): i32 {
  if (ARENA == 0) return 0;
  // Large free lists: aligned, inside the carved arena, marked, of their list's class, linked
  // both ways, and no free buddy of the same class.
  let freeLargeBlocks: u32 = 0;
  let freeLargeBytes: u64 = 0;
  for (let k = LARGE_CLASS; k <= MAX_CLASS; k++) {
    let prev: usize = 0;
    let p = <usize>load<u32>(FREE_HEADS + (<usize>k << 2));
    while (p != 0) {
      const off = p - ARENA;
      const size = <usize>1 << k;
      if (p < ARENA || (off & (size - 1)) != 0 || <u64>off + size > <u64>top) return 1;
      if (!isFreeStart(off) || <i32>load<u32>(p + F_CLASS) != k) return 2;
      if (<usize>load<u32>(p + F_PREV) != prev) return 3;
      const buddy = off ^ size;
      if (k < MAX_CLASS && buddy < top && isFreeStart(buddy) && <i32>load<u32>(ARENA + buddy + F_CLASS) == k) return 4;
      if (++freeLargeBlocks > <u32>(top >>> LARGE_CLASS)) return 5; // a cycle
      freeLargeBytes += <u64>size;
      prev = p;
      p = <usize>load<u32>(p + F_NEXT);
    }
  }
  // Bitmap: exactly one bit per free large block, none at or past top.
  let bits: u32 = 0;
  const units = top >>> LARGE_CLASS;
  for (let u: usize = 0; u < units; u += 8) bits += popcnt<u32>(<u32>load<u8>(BITMAP + (u >>> 3)));
  for (let u = units; u < ((units + 7) & ~<usize>7); u++) if (isFreeStart(u << LARGE_CLASS)) return 6;
  if (bits != freeLargeBlocks) return 6;
  // Slabs: entries only in units below top, counts summed per class; the empty ones are cached.
  let slabs: u64 = 0;
  let smallUsed: u64 = 0;
  const slabsOf = VALIDATE_FREE;
  memory.fill(slabsOf, 0, LARGE_CLASS * 4);
  let empties: u32 = 0;
  for (let i: usize = 0; i < LEAF_COUNT; i++) {
    const leaf = <usize>load<u32>(LEAVES + (i << 2));
    if (leaf == 0) continue;
    for (let j: usize = 0; j <= LEAF_MASK; j++) {
      const v = <u32>load<u16>(leaf + (j << 1));
      if (v == 0) continue;
      const off = ((i << LEAF_BITS) | j) << LARGE_CLASS;
      if ((v & E_SLAB) == 0 || off >= top || isFreeStart(off)) return 7;
      const k = <i32>((v >>> E_CLASS_SHIFT) & E_CLASS_MASK) + MIN_CLASS;
      const count = v & E_COUNT_MASK;
      const blocks = <u32>(SLAB_BYTES >>> k);
      if (count > blocks) return 7;
      if (count == 0) {
        if (<usize>load<u32>(EMPTY_SLAB + (<usize>k << 2)) != ARENA + off) return 8;
        empties++;
      }
      slabs++;
      smallUsed += <u64>count << k;
      const at = slabsOf + (<usize>k << 2);
      store<u32>(at, load<u32>(at) + blocks - count);
    }
  }
  let cached: u32 = 0;
  for (let k = MIN_CLASS; k < LARGE_CLASS; k++) if (load<u32>(EMPTY_SLAB + (<usize>k << 2)) != 0) cached++;
  if (empties != cached) return 8; // each empty slab is its class's cached one, and each cached one is empty
  // Small free lists: each block in a slab of its class, aligned to its size there, linked both
  // ways; as many as the entries promise.
  for (let k = MIN_CLASS; k < LARGE_CLASS; k++) {
    let prev: usize = 0;
    let n: u32 = 0;
    let p = <usize>load<u32>(FREE_HEADS + (<usize>k << 2));
    while (p != 0) {
      if (p < ARENA || p - ARENA >= top || (p & ((<usize>1 << k) - 1)) != 0) return 9;
      const v = <u32>load<u16>(entryAt((p & ~SLAB_MASK) - ARENA));
      if ((v & E_SLAB) == 0 || <i32>((v >>> E_CLASS_SHIFT) & E_CLASS_MASK) + MIN_CLASS != k) return 9;
      if (<usize>load<u32>(p + S_PREV) != prev) return 10;
      if (++n > load<u32>(slabsOf + (<usize>k << 2))) return 11; // more than promised, or a cycle
      prev = p;
      p = <usize>load<u32>(p + S_NEXT);
    }
    if (n != load<u32>(slabsOf + (<usize>k << 2))) return 11;
  }
  // Totals: the counters, and every carved byte accounted for exactly once.
  if (smallHeld != slabs << LARGE_CLASS || smallInUse != smallUsed) return 12;
  const leafBytes = <u64>arenaLeaves << LARGE_CLASS;
  if (freeLargeBytes + smallHeld + (bytesInUse - smallInUse) + leafBytes != <u64>top) return 13;
  return 0;
}

/** A raw buffer the host may fill (batch inputs, snapshot data). 0 when out of memory. */
export function buf_alloc(size: usize): usize {
  return halloc(size);
}

export function buf_free(ptr: usize, size: usize): void {
  hfree(ptr, size);
}
