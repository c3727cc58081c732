// Raw memory for the core: a size-class allocator over `memory.grow`, with an optional cap.
//
// The core runs with `--runtime stub`, whose managed allocations are never freed, so nothing on
// the hot path uses managed objects. Indexes and iterators take their memory from here instead.
//
//   class k holds blocks of exactly 2^k bytes (k = MIN_CLASS .. MAX_CLASS); callers free with the
//   size they allocated (sized free), so blocks carry no header.
//
//   ┌──────────── linear memory ─────────────────────────────────────────────┐
//   │ static data (scratch, free-list heads) │ blocks carved by bump ▸ │ free │
//   └────────────────────────────────────────┴─────────────────────────┴──────┘
//                                            ^ __heap_base (aligned)  ^ bump
//
// Invariant: a block is either on exactly one free list (its first word links the next block of
// its class) or owned by exactly one caller. Blocks are never split or merged: a freed block is
// only reused for the same class. Memory is never returned to the host (WebAssembly cannot shrink).
//
// The cap (`heap_set_limit_pages`) bounds `memory.grow`; when growing would pass it, or the host
// refuses, `halloc` returns 0 and the caller reports OUT_OF_MEMORY. No state changes on failure.

export const MIN_CLASS: i32 = 4; //  16 bytes
export const MAX_CLASS: i32 = 31; // 2 GiB
const PAGE_BITS: i32 = 16; //     64 KiB WebAssembly pages
/** Smallest growth step: 16 pages = 1 MiB. */
const MIN_GROW_PAGES: i32 = 16;

const FREE_HEADS: usize = memory.data(32 * 4, 16); // u32 head per class
let bump: usize = 0;
let limitPages: i32 = 65536; // 4 GiB: the wasm32 maximum
let bytesInUse: u64 = 0;

/** Size class of a request: the smallest k ≥ MIN_CLASS with 2^k ≥ size. */
// @inline
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

/**
 * Allocates `size` bytes (rounded up to a power of two, 16-byte aligned, contents undefined).
 * Returns 0 when the cap or the host refuses more memory; nothing changes then.
 */
export function halloc(size: usize): usize {
  if (size == 0) size = 1;
  if (size > (<usize>1 << MAX_CLASS)) return 0;
  const k = classOf(size);
  const head = FREE_HEADS + (<usize>k << 2);
  const p = <usize>load<u32>(head);
  if (p != 0) {
    store<u32>(head, load<u32>(p));
    bytesInUse += <u64>1 << k;
    return p;
  }
  if (bump == 0) bump = (__heap_base + 15) & ~<usize>15;
  const blockSize = <usize>1 << k;
  // 16-byte alignment is enough for every user (u64 words, v128 not used).
  const start = bump;
  const end = start + blockSize;
  if (end < start) return 0; // wraps the 32-bit space
  if (!grow(end)) return 0;
  bump = end;
  bytesInUse += <u64>blockSize;
  return start;
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
  const head = FREE_HEADS + (<usize>k << 2);
  store<u32>(ptr, load<u32>(head));
  store<u32>(head, <u32>ptr);
  bytesInUse -= <u64>1 << k;
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

/** A raw buffer the host may fill (batch inputs, snapshot data). 0 when out of memory. */
export function buf_alloc(size: usize): usize {
  return halloc(size);
}

export function buf_free(ptr: usize, size: usize): void {
  hfree(ptr, size);
}
