// Raw memory for the core: a buddy allocator for blocks of 4 KiB and more, size-class free lists
// for smaller blocks, over `memory.grow`, with an optional cap.
//
// The core runs with `--runtime stub`, whose managed allocations are never freed, so nothing on
// the hot path uses managed objects. Indexes and iterators take their memory from here instead.
//
//   class k holds blocks of exactly 2^k bytes (k = MIN_CLASS .. MAX_CLASS); callers free with the
//   size they allocated (sized free), so blocks carry no header while in use.
//
//   ┌──────────── linear memory ───────────────────────────────────────────────────────────┐
//   │ static data │ free-block bitmap (128 KiB) │ arena: blocks ▸            │ not carved   │
//   └─────────────┴─────────────────────────────┴────────────────────────────┴──────────────┘
//                 ^ __heap_base (aligned)       ^ ARENA (64 KiB aligned)     ^ ARENA + top
//
// Large classes (k ≥ LARGE_CLASS, 4 KiB): a buddy system over the arena. A block of class k starts
// at an arena offset that is a multiple of 2^k; its buddy is the block at offset ^ 2^k. A large
// allocation takes the smallest free block of class ≥ k and splits it, halving; a large free
// merges the block with its buddy while the buddy is free and whole, so memory freed by one
// index can hold an index of another size (a Range destroyed under a memory cap leaves room for
// a different one). The arena is carved at `top`, aligned up to the class; the gap that alignment
// skips becomes free blocks.
//
// Small classes (k < LARGE_CLASS): a 4 KiB large block is cut into blocks of one class, all onto
// that class's free list; small blocks are reused only for their class and never merged (they
// are headers, iterators and small directories: little memory, whatever their churn).
//
// Invariants: a block is either owned by exactly one caller or on exactly one free list. A free
// large block has its bit set in the bitmap (one bit per 4 KiB of arena, at its first unit) and
// holds [next, prev, class] in its first words; every other unit's bit is clear. No two free large
// blocks of one class are buddies (they would have been merged).
//
// The cap (`heap_set_limit_pages`) bounds `memory.grow`; when growing would pass it, or the host
// refuses, `halloc` returns 0 and the caller reports OUT_OF_MEMORY. No state changes on failure.
// Memory is never returned to the host (WebAssembly cannot shrink).

export const MIN_CLASS: i32 = 4; //  16 bytes
export const MAX_CLASS: i32 = 31; // 2 GiB
/** The smallest class the buddy system manages: 4 KiB, the unit of the bitmap. */
const LARGE_CLASS: i32 = 12;
const PAGE_BITS: i32 = 16; //     64 KiB WebAssembly pages
/** Smallest growth step: 16 pages = 1 MiB. */
const MIN_GROW_PAGES: i32 = 16;
/** One bit per 4 KiB unit of a 4 GiB arena. */
const BITMAP_BYTES: usize = (<usize>1 << (32 - LARGE_CLASS)) >>> 3;

// A free large block's first words.
const F_NEXT: usize = 0;
const F_PREV: usize = 4;
const F_CLASS: usize = 8;

const FREE_HEADS: usize = memory.data(32 * 4, 16); // u32 head per class: absolute address, 0 = none
let BITMAP: usize = 0; // set by init(); 0 until the first allocation
let ARENA: usize = 0;
/** Arena bytes carved so far: everything below ARENA + top is a block, owned or free. */
let top: usize = 0;
let limitPages: i32 = 65536; // 4 GiB: the wasm32 maximum
let bytesInUse: u64 = 0;
/** Bytes of the 4 KiB blocks cut for small classes, and of the small blocks handed out of them. */
let smallHeld: u64 = 0;
let smallInUse: u64 = 0;

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
  if (size + need > limitPages) return false;
  let step = max(need, max(size >> 2, MIN_GROW_PAGES));
  if (size + step > limitPages) step = limitPages - size;
  if (memory.grow(step) >= 0) return true;
  return memory.grow(need) >= 0; // the host refused the larger step: try the exact need
}

/** Places the bitmap and the arena (once). False when memory for the bitmap cannot be had. */
function init(): bool {
  if (ARENA != 0) return true;
  const bitmap = (__heap_base + 15) & ~<usize>15;
  const arena = (bitmap + BITMAP_BYTES + 0xffff) & ~<usize>0xffff;
  if (!grow(arena)) return false; // fresh memory is zero: every bit clear
  BITMAP = bitmap;
  ARENA = arena;
  return true;
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
  // The smallest free block that fits, halved down to the class: the upper halves go free.
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
  // None free: carve at `top`, aligned up to the class; the gap becomes free blocks.
  const size = <u64>1 << k;
  const start = (<u64>top + size - 1) & ~(size - 1);
  const end = <u64>ARENA + start + size;
  if (end > 0xffffffff) return NO_BLOCK; // past the 32-bit space
  if (!grow(<usize>end)) return NO_BLOCK;
  while (<u64>top < start) {
    // the largest aligned block at top that stays below start: its class is top's lowest set bit
    const gap = top;
    const c = <i32>ctz<u32>(<u32>gap);
    top += <usize>1 << c;
    freeLarge(gap, c); // merged with its buddy below when that is free
  }
  top = <usize>(start + size);
  return <usize>start;
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

// ── the allocator ───────────────────────────────────────────────────────────────────────────

/**
 * Allocates `size` bytes (rounded up to a power of two, 16-byte aligned, contents undefined).
 * Returns 0 when the cap or the host refuses more memory; nothing changes then.
 */
export function halloc(size: usize): usize {
  if (size == 0) size = 1;
  if (size > (<usize>1 << MAX_CLASS)) return 0;
  if (!init()) return 0;
  const k = classOf(size);
  if (k >= LARGE_CLASS) {
    const off = takeLarge(k);
    if (off == NO_BLOCK) return 0;
    bytesInUse += <u64>1 << k;
    return ARENA + off;
  }
  const head = FREE_HEADS + (<usize>k << 2);
  let p = <usize>load<u32>(head);
  if (p == 0) {
    // Cut a 4 KiB block into blocks of this class: the first is returned, the rest go free.
    const off = takeLarge(LARGE_CLASS);
    if (off == NO_BLOCK) return 0;
    smallHeld += <u64>1 << LARGE_CLASS;
    const slab = ARENA + off;
    const blockSize = <usize>1 << k;
    let next: usize = 0;
    for (let b = slab + (<usize>1 << LARGE_CLASS) - blockSize; b > slab; b -= blockSize) {
      store<u32>(b, <u32>next);
      next = b;
    }
    store<u32>(head, <u32>next);
    p = slab;
  } else {
    store<u32>(head, load<u32>(p));
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
  const head = FREE_HEADS + (<usize>k << 2);
  store<u32>(ptr, load<u32>(head));
  store<u32>(head, <u32>ptr);
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
 * Bytes held free for small blocks: the 4 KiB blocks cut for small classes never go back to the
 * buddy system, so after many small indexes are destroyed this much stays usable by small
 * blocks only (what an out-of-memory message names).
 */
export function heap_small_bytes_free(): f64 {
  return <f64>(smallHeld - smallInUse);
}

/** A raw buffer the host may fill (batch inputs, snapshot data). 0 when out of memory. */
export function buf_alloc(size: usize): usize {
  return halloc(size);
}

export function buf_free(ptr: usize, size: usize): void {
  hfree(ptr, size);
}
