// The dense index: one bit per offset of [0, n) (n ≤ 2^31) plus two summary hierarchies, so that
// "next free" and "next taken" cost O(log64 n) word reads (ctz on a word per level) at any fill.
//
// ╒══════════════ Levels of a dense index (n = 2^16 − 2, a /16) ═══════════════╕
//
//   FULL summaries (bit = child word has no free bit)      ANY summaries (bit = child word ≠ 0)
//   ┌──┐ F2: 1 word                                        ┌──┐ A2: 1 word
//   └┬─┘  bit j ◄── F1 word j == ALL                       └┬─┘  bit j ◄── A1 word j ≠ 0
//   ┌┴─────────┐ F1: 16 words                              ┌┴─────────┐ A1: 16 words
//   └┬─────────┘  bit j ◄── (L0 word j | pad) == ALL       └┬─────────┘  bit j ◄── L0 word j ≠ 0
//    │                                                     │
//   ┌┴────────────────────────────────────────────────────┴───────────────────────────┐
//   │ L0: 1024 words, bit (i & 63) of word (i >> 6) set ⇔ offset i is taken            │
//   └─────────────────────────────────────────────────────────────────────────────────┘
//
//   words(0) = ceil(n / 64), words(k+1) = ceil(words(k) / 64), until a level has one word
//   (at most MAX_LEVELS = 6 levels for n ≤ 2^31).
//
//   COUNT summaries (beside FULL and ANY, one u32 per summary word below the top): C_k[q] = taken
//   offsets under word q of level k, 1 ≤ k ≤ levels − 2 (its 64^(k+1) offsets); the top word's
//   count is the header's count. They make rank and select O(64 · levels) word reads:
//   dense_select_free (the k-th free offset of a band, for uniform picks) descends along them as
//   find() descends along FULL bits. They are kept only once asked for: the first rank or select
//   on an index derives them (O(n / 64)) and sets the COUNTED flag; from then on a set or clear
//   adds ±1 to levels − 2 of them. Indexes that never pick uniformly skip that work (3–11 ns per
//   set + clear measured at 2^16–2^24 offsets) on the allocation path.
//
// Padding (the bits of a last word that have no offset / no child behind them):
//   L0:          zero (bits ≥ n are never set; snapshots read L0 directly)
//   FULL levels: one (a missing child counts as full, so searches never descend into it)
//   ANY levels:  zero (a missing child counts as empty)
//   `pad0` holds the L0 padding as ones, so "L0 word j is full" is (word | pad(j)) == ALL.
//
// ╒═════ Memory ═════╕ one header block: [header (HEADER_BYTES) | F1..F(L−1) | A1..A(L−1) |
// C1..C(L−2) (u32, padded to 8 bytes)] and
// L0 in a block of its own, unless one block of the summed size fits the same heap class budget
// (then L0 follows the summaries in the same block). For n = 2^h − 2 (a service range) L0 fills
// its class exactly: 1 bit per offset, plus ≈ 2/63 for the summaries rounded up to their class
// (measured 1.0625 bits per offset for 2^16 − 2 … 2^24). Other n round L0 up to a power of two.
//
// Searches (find): look in the start word; if nothing there, climb: at level k look for the next
// non-full (or non-empty) child after the current one in the same word; once found, descend with
// ctz to level 0. Every level reads one word up and one word down: ≤ 2·MAX_LEVELS reads.
//
// Invariants (checked by dense_validate, codes in brackets):
//   [7] header: kind == KIND_DENSE, level word counts follow from n
//   [1] count == popcount(L0)
//   [2] L0 padding bits (≥ n) are zero
//   [3] FULL bit (k, j) ⇔ child word j of level k−1 is full     [4] FULL padding bits are one
//   [5] ANY bit (k, j)  ⇔ child word j of level k−1 is non-zero [6] ANY padding bits are zero
//   [8] COUNTED ⇒ COUNT (k, q) = the taken offsets under word q of level k ≤ levels − 2
import { hcalloc, hfree, hblock_size, recordFailedNeed } from './heap';
import { putU32 } from './scratch';
import { OK, NONE, OUT_OF_RANGE } from './status';

/** = KIND_DENSE of freeindex.ts (kept local: freeindex.ts imports this file). */
const KIND: u32 = 1;

export const WORD_BITS: u32 = 64;
export const WORD_SHIFT: u32 = 6;
export const WORD_MASK: u32 = WORD_BITS - 1;
/** L0 ≤ 2^25 words → 2^19 → 2^13 → 2^7 → 2 → 1. */
export const MAX_LEVELS: u32 = 6;
/** A word with every bit set: a full L0 word, or a FULL-level word whose children are all full. */
// @ts-ignore: decorator
@inline const ALL: u64 = 0xffffffffffffffff;

// ╒════════ Header (byte offsets into the handle block) ════════╕
//    0 kind u32 │ 4 n u32 │ 8 count u32 │ 12 levels u32
//   16 L0 pointer u32 │ 20 L0 block size (0 = L0 inside this block) │ 24 this block's size
//   28 C1 pointer u32 | COUNTED (bit 0: the COUNT summaries are kept; C_k follows C_(k−1), its
//      offset from C1 is half F_k's from F1)
//   32 pad0 u64 (L0 padding bits of the last word, as ones)
//   40 words(k) u32 × MAX_LEVELS
//   64 FULL level pointers u32 × MAX_LEVELS (k = 0 → L0)
//   88 ANY level pointers u32 × MAX_LEVELS  (k = 0 → L0)
// @ts-ignore: decorator
@inline const H_KIND: usize = 0;
// @ts-ignore: decorator
@inline const H_N: usize = 4;
// @ts-ignore: decorator
@inline const H_COUNT: usize = 8;
// @ts-ignore: decorator
@inline const H_LEVELS: usize = 12;
// @ts-ignore: decorator
@inline const H_L0: usize = 16;
// @ts-ignore: decorator
@inline const H_L0_BYTES: usize = 20;
// @ts-ignore: decorator
@inline const H_BLOCK_BYTES: usize = 24;
// @ts-ignore: decorator
@inline const H_PAD0: usize = 32;
// @ts-ignore: decorator
@inline const H_WORDS: usize = 40;
// @ts-ignore: decorator
@inline const H_FULL: usize = 64;
// @ts-ignore: decorator
@inline const H_ANY: usize = 88;
// @ts-ignore: decorator
@inline const H_CNT: usize = 28;
// @ts-ignore: decorator
@inline const HEADER_BYTES: usize = 112;

// @ts-ignore: decorator
@inline function wordsAt(h: usize, k: u32): u32 {
  return load<u32>(h + H_WORDS + (<usize>k << 2));
}

/** Pointer to level k of a hierarchy (base = H_FULL or H_ANY); level 0 is L0 in both. */
// @ts-ignore: decorator
@inline function levelPtr(h: usize, base: usize, k: u32): usize {
  return <usize>load<u32>(h + base + (<usize>k << 2));
}

// @ts-ignore: decorator
@inline function wordPtr(level: usize, j: u32): usize {
  return level + (<usize>j << 3);
}

// @ts-ignore: decorator
@inline function bitOf(i: u32): u64 {
  return <u64>1 << <u64>(i & WORD_MASK);
}

/**
 * Pointer to the COUNT array of level k, 1 ≤ k ≤ levels − 2 (u32 per word of that level). The
 * arrays sit in level order like the FULL levels, at half their byte offsets (4 vs 8 per word).
 */
// @ts-ignore: decorator
@inline function countPtr(h: usize, k: u32): usize {
  return <usize>(load<u32>(h + H_CNT) & ~1) + ((levelPtr(h, H_FULL, k) - (h + HEADER_BYTES)) >>> 1);
}

/** Whether the COUNT summaries are kept (bit 0 of the C1 pointer word). */
// @ts-ignore: decorator
@inline function counted(h: usize): bool {
  return (load<u32>(h + H_CNT) & 1) != 0;
}

/** The word of level k ≥ 1 that covers offset i: i >> 6(k+1) (a shift of 32 or more gives 0). */
// @ts-ignore: decorator
@inline function wordOfOffset(i: u32, k: u32): u32 {
  return <u32>(<u64>i >> <u64>(WORD_SHIFT * (k + 1)));
}

/**
 * Adds `delta` (±1) to the COUNT of every summary word above offset i but the top one. Not
 * inlined: set and clear stay as small as without counts when none are kept.
 */
function addCounts(h: usize, i: u32, levels: u32, delta: u32): void {
  for (let k: u32 = 1; k + 1 < levels; k++) {
    const p = countPtr(h, k) + (<usize>wordOfOffset(i, k) << 2);
    store<u32>(p, load<u32>(p) + delta);
  }
}

/** The L0 padding of word j as ones (non-zero only for the last word when 64 ∤ n). */
// @ts-ignore: decorator
@inline function padOf(h: usize, j: u32): u64 {
  return j == wordsAt(h, 0) - 1 ? load<u64>(h + H_PAD0) : 0;
}

/** Scratch for dense_validate: the derived (FULL, ANY) pair of one summary word. */
const VALIDATE_TMP: usize = memory.data(16, 8);

// ── construction ───────────────────────────────────────────────────────────────────────────

/**
 * Creates an empty index over [0, n), n ≤ 2^31. Returns the handle (its block starts with
 * KIND_DENSE), or 0 when out of memory.
 */
export function dense_new(n: u32): usize {
  if (n > 0x80000000) return 0;
  const w0: u32 = n == 0 ? 1 : (n + WORD_MASK) >>> WORD_SHIFT;
  let levels: u32 = 1;
  let sumWords: u32 = 0;
  let w = w0;
  while (w > 1) {
    w = (w + WORD_MASK) >>> WORD_SHIFT;
    sumWords += w;
    levels++;
  }
  assert(levels <= MAX_LEVELS); // n ≤ 2^31
  // COUNT summaries for every summary word but the top one (its count is the header's), rounded
  // up so that L0 stays 8-aligned. Levels ≤ 2 (n ≤ 4096) have none: the header stays one class.
  const countBytes = sumWords > 1 ? ((<usize>(sumWords - 1) << 2) + 7) & ~(<usize>7) : 0;
  const hdrBytes = HEADER_BYTES + (<usize>sumWords << 4) + countBytes; // FULL + ANY + COUNT summaries
  const l0Bytes = <usize>w0 << 3;
  const single = hblock_size(hdrBytes + l0Bytes) <= hblock_size(hdrBytes) + hblock_size(l0Bytes);
  let h: usize;
  let l0: usize;
  if (single) {
    h = hcalloc(hdrBytes + l0Bytes);
    if (h == 0) return 0;
    l0 = h + hdrBytes;
    store<u32>(h + H_L0_BYTES, 0);
    store<u32>(h + H_BLOCK_BYTES, <u32>(hdrBytes + l0Bytes));
  } else {
    // The larger block (L0) first: a buddy block lies at a multiple of its size, so taken after
    // the header, in memory that holds both exactly (a cap raised by what an error asked for),
    // L0 found the header in the aligned place it needed and no room after it. (A failure is
    // reported as needing both blocks: what raising the cap must make room for; when the second
    // fails, the first, given back, counts by itself: heap_failed_bytes.)
    l0 = hcalloc(l0Bytes);
    if (l0 == 0) {
      recordFailedNeed(<u64>hblock_size(hdrBytes) + hblock_size(l0Bytes));
      return 0;
    }
    h = hcalloc(hdrBytes);
    if (h == 0) {
      hfree(l0, l0Bytes);
      return 0;
    }
    store<u32>(h + H_L0_BYTES, <u32>l0Bytes);
    store<u32>(h + H_BLOCK_BYTES, <u32>hdrBytes);
  }
  store<u32>(h + H_KIND, KIND);
  store<u32>(h + H_N, n);
  store<u32>(h + H_COUNT, 0);
  store<u32>(h + H_LEVELS, levels);
  store<u32>(h + H_L0, <u32>l0);
  const valid = n - ((w0 - 1) << WORD_SHIFT); // offsets in the last L0 word: 1..64 (0 when n = 0)
  store<u64>(h + H_PAD0, valid >= WORD_BITS ? 0 : ALL << <u64>valid);
  // Level geometry; FULL levels first, then ANY levels, then COUNT levels, after the header.
  let full = h + HEADER_BYTES;
  let any = full + (<usize>sumWords << 3);
  store<u32>(h + H_CNT, <u32>(any + (<usize>sumWords << 3)));
  store<u32>(h + H_WORDS, w0);
  store<u32>(h + H_FULL, <u32>l0);
  store<u32>(h + H_ANY, <u32>l0);
  w = w0;
  for (let k: u32 = 1; k < levels; k++) {
    const children = w;
    w = (w + WORD_MASK) >>> WORD_SHIFT;
    store<u32>(h + H_WORDS + (<usize>k << 2), w);
    store<u32>(h + H_FULL + (<usize>k << 2), <u32>full);
    store<u32>(h + H_ANY + (<usize>k << 2), <u32>any);
    const used = children & WORD_MASK;
    if (used != 0) store<u64>(wordPtr(full, w - 1), ALL << <u64>used); // missing children are full
    full += <usize>w << 3;
    any += <usize>w << 3;
  }
  return h;
}

/** Frees the index (both blocks). */
export function dense_free(h: usize): void {
  const l0Bytes = <usize>load<u32>(h + H_L0_BYTES);
  if (l0Bytes != 0) hfree(<usize>load<u32>(h + H_L0), l0Bytes);
  hfree(h, <usize>load<u32>(h + H_BLOCK_BYTES));
}

// ── summary maintenance (one child changed state; climb while the parent word changes state) ──

// Each takes the word j of level k0−1 that changed state and walks up from level k0.

/** Word j became full: set its FULL bits upwards while words become full. */
function markFull(h: usize, j: u32, k0: u32): void {
  const levels = load<u32>(h + H_LEVELS);
  for (let k = k0; k < levels; k++) {
    const p = wordPtr(levelPtr(h, H_FULL, k), j >>> WORD_SHIFT);
    const w = load<u64>(p) | bitOf(j);
    store<u64>(p, w);
    if (w != ALL) return;
    j >>>= WORD_SHIFT;
  }
}

/** Word j was full and is not any more: clear its FULL bits upwards while words were full. */
function unmarkFull(h: usize, j: u32, k0: u32): void {
  const levels = load<u32>(h + H_LEVELS);
  for (let k = k0; k < levels; k++) {
    const p = wordPtr(levelPtr(h, H_FULL, k), j >>> WORD_SHIFT);
    const w = load<u64>(p);
    store<u64>(p, w & ~bitOf(j));
    if (w != ALL) return;
    j >>>= WORD_SHIFT;
  }
}

/** Word j became non-zero: set its ANY bits upwards while words were zero. */
function markAny(h: usize, j: u32, k0: u32): void {
  const levels = load<u32>(h + H_LEVELS);
  for (let k = k0; k < levels; k++) {
    const p = wordPtr(levelPtr(h, H_ANY, k), j >>> WORD_SHIFT);
    const w = load<u64>(p);
    store<u64>(p, w | bitOf(j));
    if (w != 0) return;
    j >>>= WORD_SHIFT;
  }
}

/** Word j became zero: clear its ANY bits upwards while words become zero. */
function unmarkAny(h: usize, j: u32, k0: u32): void {
  const levels = load<u32>(h + H_LEVELS);
  for (let k = k0; k < levels; k++) {
    const p = wordPtr(levelPtr(h, H_ANY, k), j >>> WORD_SHIFT);
    const w = load<u64>(p) & ~bitOf(j);
    store<u64>(p, w);
    if (w != 0) return;
    j >>>= WORD_SHIFT;
  }
}

/**
 * Derives summary word q of level k (k ≥ 1) from its children at level k−1. Writes the FULL
 * word (padding one) and the ANY word (padding zero) to the given addresses.
 */
function deriveWord(h: usize, k: u32, q: u32, fullOut: usize, anyOut: usize): void {
  const children = wordsAt(h, k - 1);
  const c0 = q << WORD_SHIFT;
  const cEnd = children - c0 < WORD_BITS ? children : c0 + WORD_BITS;
  let full: u64 = cEnd - c0 < WORD_BITS ? ALL << <u64>(cEnd - c0) : 0;
  let any: u64 = 0;
  if (k == 1) {
    const l0 = <usize>load<u32>(h + H_L0);
    const last = children - 1;
    const pad0 = load<u64>(h + H_PAD0);
    for (let c = c0; c < cEnd; c++) {
      const w = load<u64>(wordPtr(l0, c));
      const b = <u64>(c - c0);
      full |= <u64>((w | (c == last ? pad0 : 0)) == ALL) << b;
      any |= <u64>(w != 0) << b;
    }
  } else {
    const fc = levelPtr(h, H_FULL, k - 1);
    const ac = levelPtr(h, H_ANY, k - 1);
    for (let c = c0; c < cEnd; c++) {
      const b = <u64>(c - c0);
      full |= <u64>(load<u64>(wordPtr(fc, c)) == ALL) << b;
      any |= <u64>(load<u64>(wordPtr(ac, c)) != 0) << b;
    }
  }
  store<u64>(fullOut, full);
  store<u64>(anyOut, any);
}

/** The COUNT of summary word q of level k ≥ 1, derived from its children (popcounts at k = 1). */
function deriveCount(h: usize, k: u32, q: u32): u32 {
  const children = wordsAt(h, k - 1);
  const c0 = q << WORD_SHIFT;
  const cEnd = children - c0 < WORD_BITS ? children : c0 + WORD_BITS;
  let c: u32 = 0;
  if (k == 1) {
    const l0 = <usize>load<u32>(h + H_L0);
    for (let j = c0; j < cEnd; j++) c += <u32>popcnt<u64>(load<u64>(wordPtr(l0, j)));
  } else {
    const below = countPtr(h, k - 1);
    for (let j = c0; j < cEnd; j++) c += load<u32>(below + (<usize>j << 2));
  }
  return c;
}

/** Recomputes every summary word (FULL, ANY, COUNT) above the L0 words [a, b] (inclusive). */
function refreshSummaries(h: usize, a: u32, b: u32): void {
  const levels = load<u32>(h + H_LEVELS);
  for (let k: u32 = 1; k < levels; k++) {
    a >>>= WORD_SHIFT;
    b >>>= WORD_SHIFT;
    const fk = levelPtr(h, H_FULL, k);
    const ak = levelPtr(h, H_ANY, k);
    const withCount = k + 1 < levels && counted(h); // the top word's count is the header's
    const ck = withCount ? countPtr(h, k) : 0;
    for (let q = a; q <= b; q++) {
      deriveWord(h, k, q, wordPtr(fk, q), wordPtr(ak, q));
      if (withCount) store<u32>(ck + (<usize>q << 2), deriveCount(h, k, q));
    }
  }
}

// ── point operations ───────────────────────────────────────────────────────────────────────

/** Marks offset i taken: OK if it was free, NONE if already taken, OUT_OF_RANGE if i ≥ n. */
export function dense_set(h: usize, i: u32): i32 {
  if (i >= load<u32>(h + H_N)) return OUT_OF_RANGE;
  const j = i >>> WORD_SHIFT;
  const p = wordPtr(<usize>load<u32>(h + H_L0), j);
  const w = load<u64>(p);
  const bit = bitOf(i);
  if ((w & bit) != 0) return NONE;
  const nw = w | bit;
  store<u64>(p, nw);
  store<u32>(h + H_COUNT, load<u32>(h + H_COUNT) + 1);
  const levels = load<u32>(h + H_LEVELS);
  if (levels > 1) {
    if (counted(h)) addCounts(h, i, levels, 1);
    // Level 1 without data-dependent branches (at high fill "did the word fill up?" is a coin
    // flip): FULL gets the word's new fullness, ANY gets its bit unconditionally.
    const q = j >>> WORD_SHIFT;
    const fp = wordPtr(levelPtr(h, H_FULL, 1), q);
    const f = load<u64>(fp) | (<u64>((nw | padOf(h, j)) == ALL) << <u64>(j & WORD_MASK));
    store<u64>(fp, f);
    const ap = wordPtr(levelPtr(h, H_ANY, 1), q);
    const a = load<u64>(ap);
    store<u64>(ap, a | bitOf(j));
    if (f == ALL) markFull(h, q, 2); // rare: 64 words full (idempotent if it already was)
    if (a == 0) markAny(h, q, 2); // rare: the first taken offset under this level-1 word
  }
  return OK;
}

/** Marks offset i free: OK if it was taken, NONE if already free, OUT_OF_RANGE if i ≥ n. */
export function dense_clear(h: usize, i: u32): i32 {
  if (i >= load<u32>(h + H_N)) return OUT_OF_RANGE;
  const j = i >>> WORD_SHIFT;
  const p = wordPtr(<usize>load<u32>(h + H_L0), j);
  const w = load<u64>(p);
  const bit = bitOf(i);
  if ((w & bit) == 0) return NONE;
  const nw = w & ~bit;
  store<u64>(p, nw);
  store<u32>(h + H_COUNT, load<u32>(h + H_COUNT) - 1);
  const levels = load<u32>(h + H_LEVELS);
  if (levels > 1) {
    if (counted(h)) addCounts(h, i, levels, <u32>-1);
    // Level 1 without data-dependent branches: a word that lost a bit is never full, and it is
    // empty exactly when nw == 0.
    const q = j >>> WORD_SHIFT;
    const fp = wordPtr(levelPtr(h, H_FULL, 1), q);
    const f = load<u64>(fp);
    store<u64>(fp, f & ~bitOf(j));
    const ap = wordPtr(levelPtr(h, H_ANY, 1), q);
    const a = load<u64>(ap) & ~(<u64>(nw == 0) << <u64>(j & WORD_MASK));
    store<u64>(ap, a);
    if (f == ALL) unmarkFull(h, q, 2); // rare: the level-1 word was full
    if (a == 0) unmarkAny(h, q, 2); // rare: nothing taken under this level-1 word any more
  }
  return OK;
}

/** 1 if offset i is taken, 0 if free or i ≥ n. */
export function dense_has(h: usize, i: u32): i32 {
  if (i >= load<u32>(h + H_N)) return 0;
  const w = load<u64>(wordPtr(<usize>load<u32>(h + H_L0), i >>> WORD_SHIFT));
  return <i32>((w >>> <u64>(i & WORD_MASK)) & 1);
}

/** Number of taken offsets. */
export function dense_count(h: usize): u32 {
  return load<u32>(h + H_COUNT);
}

// ── searches ───────────────────────────────────────────────────────────────────────────────

/**
 * The smallest offset in [a, b] (a ≤ b < n) whose L0 bit, XORed with `flip`, is one — a free
 * offset with flip = ALL over the FULL hierarchy, a taken one with flip = 0 over the ANY
 * hierarchy. −1 when there is none.
 *
 *   level k:   … │ j │ p → → → │      look right of the current child in its word,
 *                ▲             │      else climb to the word's parent (p = q + 1 one level up)
 *   level 0:   [a ▸ … bits of the start word …]
 */
function find(h: usize, a: u32, b: u32, base: usize, flip: u64): i32 {
  const l0 = <usize>load<u32>(h + H_L0);
  let q = a >>> WORD_SHIFT;
  let w = (load<u64>(wordPtr(l0, q)) ^ flip) & (ALL << <u64>(a & WORD_MASK));
  if (w != 0) {
    const r = (q << WORD_SHIFT) + <u32>ctz<u64>(w);
    return r <= b ? <i32>r : -1;
  }
  const levels = load<u32>(h + H_LEVELS);
  let p = q + 1; // the next child (word of level k−1) to look at, in level k's bits
  let k: u32 = 1;
  while (true) {
    if (k >= levels) return -1; // the top word had nothing right of the start
    if (p >= wordsAt(h, k - 1)) return -1; // past the last child
    if ((<u64>p << <u64>(k * WORD_SHIFT)) > <u64>b) return -1; // child p starts beyond b
    q = p >>> WORD_SHIFT;
    w = (load<u64>(wordPtr(levelPtr(h, base, k), q)) ^ flip) & (ALL << <u64>(p & WORD_MASK));
    if (w != 0) {
      p = (q << WORD_SHIFT) + <u32>ctz<u64>(w);
      break;
    }
    p = q + 1;
    k++;
  }
  // p is a word of level k−1 with a wanted bit: descend along the first wanted bit per level.
  while (k > 0) {
    k--;
    const x = load<u64>(wordPtr(levelPtr(h, base, k), p)) ^ flip;
    assert(x != 0); // its summary bit promised a free (or taken) bit in this word
    p = (p << WORD_SHIFT) + <u32>ctz<u64>(x);
  }
  return p <= b ? <i32>p : -1;
}

/**
 * The first free offset scanning start..hi, then lo..start−1, in the closed band [lo, hi]
 * (hi ≥ n is clamped to n−1; start outside [lo, hi] → lo). The offset (< 2^31), or −1 when the
 * band is full or empty (lo > hi, lo ≥ n).
 */
export function dense_next_free32(h: usize, start: u32, lo: u32, hi: u32): i32 {
  const n = load<u32>(h + H_N);
  if (lo >= n || load<u32>(h + H_COUNT) == n) return -1;
  if (hi >= n) hi = n - 1;
  if (lo > hi) return -1;
  if (start < lo || start > hi) start = lo;
  const r = find(h, start, hi, H_FULL, ALL);
  if (r >= 0 || start == lo) return r;
  return find(h, lo, start - 1, H_FULL, ALL);
}

/**
 * dense_next_free32 and, when it finds one, marks that offset taken: one boundary crossing per
 * allocation instead of two. The offset, or −1 (nothing changed).
 */
export function dense_take_free32(h: usize, start: u32, lo: u32, hi: u32): i32 {
  const r = dense_next_free32(h, start, lo, hi);
  if (r >= 0) dense_set(h, <u32>r);
  return r;
}

/** index_next_free for a dense index: OK with (0, offset) in scratch 0..1, or NONE. */
export function dense_next_free(h: usize, start: u32, lo: u32, hi: u32): i32 {
  const r = dense_next_free32(h, start, lo, hi);
  if (r < 0) return NONE;
  putU32(0, 0);
  putU32(1, <u32>r);
  return OK;
}

/** The smallest taken offset ≥ from: OK with (0, offset) in scratch 0..1, or NONE. */
export function dense_next_set(h: usize, from: u32): i32 {
  const n = load<u32>(h + H_N);
  if (from >= n || load<u32>(h + H_COUNT) == 0) return NONE;
  const r = find(h, from, n - 1, H_ANY, 0);
  if (r < 0) return NONE;
  putU32(0, 0);
  putU32(1, <u32>r);
  return OK;
}

// ── rank and select (uniform picks among free offsets) ─────────────────────────────────────

/** Offsets of [0, n) under word q of level k (64^(k+1), fewer for the last word). */
// @ts-ignore: decorator
@inline function spanOf(n: u32, k: u32, q: u32): u32 {
  const shift = <u64>(WORD_SHIFT * (k + 1));
  const start = <u64>q << shift;
  const end = (<u64>(q + 1)) << shift;
  return <u32>((end < <u64>n ? end : <u64>n) - start);
}

/** Derives the COUNT summaries, bottom level first, and keeps them from now on (COUNTED). */
function keepCounts(h: usize): void {
  if (counted(h)) return;
  const levels = load<u32>(h + H_LEVELS);
  for (let k: u32 = 1; k + 1 < levels; k++) {
    const ck = countPtr(h, k);
    const wk = wordsAt(h, k);
    for (let q: u32 = 0; q < wk; q++) store<u32>(ck + (<usize>q << 2), deriveCount(h, k, q));
  }
  store<u32>(h + H_CNT, load<u32>(h + H_CNT) | 1);
}

/**
 * Taken offsets in [0, x), x ≤ n (COUNTED): the COUNTs of the words left of x's path, level by level from
 * the top, then a popcount of x's L0 word below x. O(64 · levels) reads.
 */
function takenBelow(h: usize, x: u32): u32 {
  const n = load<u32>(h + H_N);
  if (x >= n) return load<u32>(h + H_COUNT);
  const levels = load<u32>(h + H_LEVELS);
  let r: u32 = 0;
  // Children of level-k word wordOfOffset(x, k) are level-(k−1) words; sum those left of x's.
  for (let k = levels - 1; k >= 2; k--) {
    const first = wordOfOffset(x, k) << WORD_SHIFT;
    const mine = wordOfOffset(x, k - 1);
    const cp = countPtr(h, k - 1);
    for (let c = first; c < mine; c++) r += load<u32>(cp + (<usize>c << 2));
  }
  const l0 = <usize>load<u32>(h + H_L0);
  const j = x >>> WORD_SHIFT;
  for (let c = (j >>> WORD_SHIFT) << WORD_SHIFT; c < j; c++) r += <u32>popcnt<u64>(load<u64>(wordPtr(l0, c)));
  const below = (<u64>1 << <u64>(x & WORD_MASK)) - 1;
  return r + <u32>popcnt<u64>(load<u64>(wordPtr(l0, j)) & below);
}

/**
 * The offset of the r-th free offset of [0, n) (0-based), or −1 when fewer than r + 1 are free.
 * Descends from the top word: at each level, skip children whose free count (span − COUNT) is
 * at most r, then pick the bit in the L0 word.
 */
function selectFreeFrom0(h: usize, r: u32): i32 {
  const n = load<u32>(h + H_N);
  const count = load<u32>(h + H_COUNT);
  if (r >= n - count) return -1;
  const levels = load<u32>(h + H_LEVELS);
  let q: u32 = 0; // the word of level k we are in
  for (let k = levels - 1; k >= 1; k--) {
    const children = wordsAt(h, k - 1);
    let c = q << WORD_SHIFT;
    const cEnd = children - c < WORD_BITS ? children : c + WORD_BITS;
    if (k >= 2) {
      const cp = countPtr(h, k - 1);
      for (; c < cEnd; c++) {
        const free = spanOf(n, k - 1, c) - load<u32>(cp + (<usize>c << 2));
        if (r < free) break;
        r -= free;
      }
    } else {
      const l0 = <usize>load<u32>(h + H_L0);
      for (; c < cEnd; c++) {
        const free = WORD_BITS - <u32>popcnt<u64>(load<u64>(wordPtr(l0, c)) | padOf(h, c));
        if (r < free) break;
        r -= free;
      }
    }
    assert(c < cEnd); // the counts above promised r + 1 free offsets under word q
    q = c;
  }
  // q is now an L0 word with more than r free bits: drop the r lowest free bits, take the next.
  let free = ~(load<u64>(wordPtr(<usize>load<u32>(h + H_L0), q)) | padOf(h, q));
  for (let i: u32 = 0; i < r; i++) free &= free - 1;
  assert(free != 0);
  return <i32>((q << WORD_SHIFT) + <u32>ctz<u64>(free));
}

/**
 * The k-th free offset (0-based, ascending) of the closed band [lo, hi] (hi ≥ n is clamped to
 * n − 1), or −1 when the band holds k or fewer free offsets. rank(lo) + k, selected from the top:
 * O(64 · levels) word reads whatever the fill (the first call on an index also derives its
 * COUNT summaries, O(n / 64)).
 */
export function dense_select_free(h: usize, k: u32, lo: u32, hi: u32): i32 {
  const n = load<u32>(h + H_N);
  if (lo >= n) return -1;
  if (hi >= n) hi = n - 1;
  if (lo > hi || k > hi - lo) return -1;
  keepCounts(h);
  const r = selectFreeFrom0(h, lo - takenBelow(h, lo) + k);
  return r >= 0 && <u32>r <= hi ? r : -1;
}

/** Free offsets in the closed band [lo, hi] (hi ≥ n clamped; 0 for an empty band). O(64 · levels). */
export function dense_count_free(h: usize, lo: u32, hi: u32): u32 {
  const n = load<u32>(h + H_N);
  if (lo >= n) return 0;
  if (hi >= n) hi = n - 1;
  if (lo > hi) return 0;
  keepCounts(h);
  return hi - lo + 1 - (takenBelow(h, hi + 1) - takenBelow(h, lo));
}

// ── batch, bulk and introspection ──────────────────────────────────────────────────────────

/**
 * Sets `count` offsets given as (hi, lo) u32 pairs at ptr: the L0 bits first, then the touched
 * summaries once. Returns how many were newly set, or OUT_OF_RANGE with the failing entry's
 * position in scratch word 0 (the entries before it stay set, summaries and count consistent).
 */
export function dense_set_many(h: usize, ptr: usize, count: u32): i32 {
  const n = load<u32>(h + H_N);
  const l0 = <usize>load<u32>(h + H_L0);
  let added: u32 = 0;
  let minJ: u32 = 0xffffffff;
  let maxJ: u32 = 0;
  let status: i32 = 0;
  for (let e: u32 = 0; e < count; e++) {
    const at = ptr + (<usize>e << 3);
    const hi = load<u32>(at);
    const i = load<u32>(at, 4);
    if (hi != 0 || i >= n) {
      putU32(0, e);
      status = OUT_OF_RANGE;
      break;
    }
    const j = i >>> WORD_SHIFT;
    const p = wordPtr(l0, j);
    const w = load<u64>(p);
    const bit = bitOf(i);
    store<u64>(p, w | bit);
    added += <u32>((w & bit) == 0);
    if (j < minJ) minJ = j;
    if (j > maxJ) maxJ = j;
  }
  store<u32>(h + H_COUNT, load<u32>(h + H_COUNT) + added);
  if (minJ <= maxJ) refreshSummaries(h, minJ, maxJ);
  return status != 0 ? status : <i32>added;
}

/** Bytes of linear memory the index owns (at heap class sizes). */
export function dense_bytes(h: usize): usize {
  const l0Bytes = <usize>load<u32>(h + H_L0_BYTES);
  const own = hblock_size(<usize>load<u32>(h + H_BLOCK_BYTES));
  return l0Bytes != 0 ? own + hblock_size(l0Bytes) : own;
}

/** Address of the L0 words (u64, little-endian: bit i of the index = bit i & 7 of byte i >> 3). */
export function dense_words_ptr(h: usize): usize {
  return <usize>load<u32>(h + H_L0);
}

/** Number of L0 words: ceil(n / 64) (1 when n = 0). */
export function dense_word_count(h: usize): u32 {
  return wordsAt(h, 0);
}

/**
 * After the host wrote L0 words directly: clears the bits ≥ n, recomputes every summary and the
 * count. Returns the count.
 */
export function dense_rebuild(h: usize): u32 {
  const l0 = <usize>load<u32>(h + H_L0);
  const w0 = wordsAt(h, 0);
  const lastP = wordPtr(l0, w0 - 1);
  store<u64>(lastP, load<u64>(lastP) & ~load<u64>(h + H_PAD0));
  let c: u32 = 0;
  for (let j: u32 = 0; j < w0; j++) c += <u32>popcnt<u64>(load<u64>(wordPtr(l0, j)));
  store<u32>(h + H_COUNT, c);
  refreshSummaries(h, 0, w0 - 1);
  return c;
}

/**
 * Re-derives the count and every summary bit from L0. 0 when consistent, else the code of the
 * first broken invariant found (see the list at the top of this file): 7 header, 1 count,
 * 2 L0 padding, 3 FULL bit, 4 FULL padding, 5 ANY bit, 6 ANY padding, 8 COUNT.
 */
export function dense_validate(h: usize): i32 {
  if (load<u32>(h + H_KIND) != KIND) return 7;
  const n = load<u32>(h + H_N);
  const levels = load<u32>(h + H_LEVELS);
  let w: u32 = n == 0 ? 1 : (n + WORD_MASK) >>> WORD_SHIFT;
  for (let k: u32 = 0; k < levels; k++) {
    if (wordsAt(h, k) != w) return 7;
    if ((w == 1) != (k == levels - 1)) return 7;
    w = (w + WORD_MASK) >>> WORD_SHIFT;
  }
  const l0 = <usize>load<u32>(h + H_L0);
  const w0 = wordsAt(h, 0);
  let c: u32 = 0;
  for (let j: u32 = 0; j < w0; j++) c += <u32>popcnt<u64>(load<u64>(wordPtr(l0, j)));
  if (c != load<u32>(h + H_COUNT)) return 1;
  if ((load<u64>(wordPtr(l0, w0 - 1)) & load<u64>(h + H_PAD0)) != 0) return 2;
  const tmp = VALIDATE_TMP;
  for (let k: u32 = 1; k < levels; k++) {
    const fk = levelPtr(h, H_FULL, k);
    const ak = levelPtr(h, H_ANY, k);
    const children = wordsAt(h, k - 1);
    const wk = wordsAt(h, k);
    for (let q: u32 = 0; q < wk; q++) {
      deriveWord(h, k, q, tmp, tmp + 8);
      const n0 = children - (q << WORD_SHIFT);
      const real: u64 = n0 >= WORD_BITS ? ALL : ~(ALL << <u64>n0); // bits with a child behind
      const f = load<u64>(wordPtr(fk, q));
      const a = load<u64>(wordPtr(ak, q));
      if (((f ^ load<u64>(tmp)) & real) != 0) return 3;
      if ((f | real) != ALL) return 4;
      if (((a ^ load<u64>(tmp, 8)) & real) != 0) return 5;
      if ((a & ~real) != 0) return 6;
      if (k + 1 < levels && counted(h) && load<u32>(countPtr(h, k) + (<usize>q << 2)) != deriveCount(h, k, q)) return 8;
    }
  }
  return 0;
}
