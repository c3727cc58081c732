// FreeIndex: the TypeScript handle on one index of taken offsets in the WASM core
// (core-as/freeindex.ts). Offsets are u64 values passed as (hi, lo) u32 pairs; results of
// `nextFree`/`nextSet` land in `resultHi`/`resultLo` so the hot path allocates nothing.
//
// Offsets are relative to the range's first usable address: offset 0 = network + 1.
import { InvalidArgumentError } from './errors.ts';
import { formatCount, quoteInput } from './quote.ts';
import { didYouMean } from './input.ts';
import {
  core,
  coreConstant,
  inScratchSlices,
  scratch,
  memoryU32,
  memoryU8,
  KIND_AUTO,
  KIND_DENSE,
  KIND_SPARSE,
  OK,
  OUT_OF_MEMORY,
  OUT_OF_RANGE,
  wasmOutOfMemory,
} from './wasm.ts';

export type IndexKind = 'auto' | 'dense' | 'sparse';
const INDEX_KINDS: readonly IndexKind[] = ['auto', 'dense', 'sparse'];

/** The most offsets for which kind 'auto' makes a dense index (core-as/freeindex.ts): 2^24. @internal */
export const DENSE_AUTO_MAX_OFFSETS = coreConstant('DENSE_MAX_SLOTS');

/** The most offsets a dense index holds (core-as/freeindex.ts). */
const DENSE_MAX_OFFSETS = BigInt(coreConstant('DENSE_MAX_OFFSETS'));

/** The index kind an option asks for (undefined: 'auto'); InvalidArgumentError naming `option` for anything else. @internal */
export function indexKindOption(kind: unknown, option: string): IndexKind {
  if (kind === undefined) return 'auto';
  if (kind === 'auto' || kind === 'dense' || kind === 'sparse') return kind;
  throw new InvalidArgumentError(`${option} must be 'auto', 'dense' or 'sparse', got ${quoteInput(kind)}${didYouMean(kind, INDEX_KINDS)}`);
}

/**
 * Why the core made no index of `kind` over (hi, lo) offsets: InvalidArgumentError for a dense
 * index beyond 2^31 of them, else out of memory.
 * @internal
 */
export function indexRefused(kind: number, hi: number, lo: number, what: string): Error {
  const n = (BigInt(hi) << 32n) | BigInt(lo);
  if (kind === KIND_DENSE && n > DENSE_MAX_OFFSETS) {
    return new InvalidArgumentError(`a dense index holds at most 2^31 ${what}, not ${formatCount(n)}: use 'sparse' or 'auto'`);
  }
  return wasmOutOfMemory(`creating an index of ${formatCount(n)} ${what}`);
}

// ── the safety net for forgotten indexes ─────────────────────────────────────────────────────
// destroy() frees an index's WASM memory at once. The memory of one whose owner never calls it (a
// Range or an Allocator dropped without destroy()) is freed when the garbage collector collects
// the owner. A collector sees only the small JS object, not the WASM memory behind it, so this
// can come late or, in a short-lived process, never: destroy() (or `using`) is the way to free
// memory on time. The registry holds the handle and the function that frees it, never the owner.
const reclaim = new FinalizationRegistry<readonly [free: (handle: number) => void, handle: number]>(([free, handle]) => free(handle));

/** Frees `handle` with `free` once `owner` is garbage-collected, unless `freedExplicitly(owner)` came first. @internal */
export function freeWhenCollected(owner: object, free: (handle: number) => void, handle: number): void {
  reclaim.register(owner, [free, handle], owner);
}

/** `owner` has freed its memory itself (destroy()): nothing is left for the collector to free. @internal */
export function freedExplicitly(owner: object): void {
  reclaim.unregister(owner);
}

/** Each borrowed view's lender: a WeakMap keeps the value alive for as long as its key lives. */
const LENDERS = new WeakMap<FreeIndex, object>();

export class FreeIndex {
  /** WASM handle; 0 after destroy(). */
  private h: number;
  /** Number of offsets covered, as (hi, lo). */
  readonly slotsHi: number;
  readonly slotsLo: number;
  /** The result of the last successful nextFree/nextSet. */
  resultHi = 0;
  resultLo = 0;

  /** False for a view of an index another object owns (borrow): destroy() then only detaches. */
  private readonly owned: boolean;

  /** An empty index over offsets [0, slots). slots = slotsHi·2^32 + slotsLo ≤ 2^64 − 1. */
  constructor(slotsHi: number, slotsLo: number, kind: IndexKind = 'auto', borrowed = 0) {
    const k = kind === 'dense' ? KIND_DENSE : kind === 'sparse' ? KIND_SPARSE : KIND_AUTO;
    this.owned = borrowed === 0;
    const h = borrowed !== 0 ? borrowed : core.index_new(k, slotsHi >>> 0, slotsLo >>> 0);
    if (h === 0) throw indexRefused(k, slotsHi, slotsLo, 'offsets');
    this.h = h;
    if (this.owned) freeWhenCollected(this, core.index_free, h);
    this.slotsHi = slotsHi >>> 0;
    this.slotsLo = slotsLo >>> 0;
  }

  /**
   * A view of an index that another core object owns (an address space, core-as/space.ts): the
   * same operations; destroy() only detaches the view. `lender`, the JS object whose collection
   * frees that core object, is kept reachable as long as the view is: a view kept alone (by a
   * strategy of your own) must not read memory the collector freed and gave to another range.
   */
  static borrow(handle: number, slotsHi: number, slotsLo: number, lender: object): FreeIndex {
    const index = new FreeIndex(slotsHi, slotsLo, 'auto', handle);
    LENDERS.set(index, lender);
    return index;
  }

  /** True after destroy() (for a borrowed view: once its lender detached it). */
  get isDestroyed(): boolean {
    return this.h === 0;
  }

  get kind(): 'dense' | 'sparse' {
    return core.index_kind(this.h) === KIND_DENSE ? 'dense' : 'sparse';
  }

  /** Marks taken. true if it was free, false if already taken. Throws OutOfMemoryError; out-of-range → false. */
  set(hi: number, lo: number): boolean {
    const r = core.index_set(this.h, hi, lo);
    if (r === OUT_OF_MEMORY) throw wasmOutOfMemory('marking an address taken');
    return r === OK;
  }

  /** Marks free. true if it was taken. */
  clear(hi: number, lo: number): boolean {
    const r = core.index_clear(this.h, hi, lo);
    if (r === OUT_OF_MEMORY) throw wasmOutOfMemory('marking an address free');
    return r === OK;
  }

  has(hi: number, lo: number): boolean {
    return core.index_has(this.h, hi, lo) === 1;
  }

  /** Number of taken offsets. */
  count(): number {
    return core.index_count(this.h);
  }

  /**
   * First free offset scanning start..hi then lo..start−1 within the closed band [lo, hi]
   * (start outside the band is clamped to lo). true with the offset in resultHi/resultLo, or false
   * when the band has no free offset.
   */
  nextFree(sHi: number, sLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number): boolean {
    if (core.index_next_free(this.h, sHi, sLo, loHi, loLo, hiHi, hiLo) !== OK) return false;
    const s = scratch();
    this.resultHi = s[0]!;
    this.resultLo = s[1]!;
    return true;
  }

  /**
   * nextFree, and the offset it finds marked taken, in one core call (the address space's take,
   * on offsets): true with the offset in resultHi/resultLo, or false when the band has no free
   * offset. Throws OutOfMemoryError (nothing marked).
   */
  takeFree(sHi: number, sLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number): boolean {
    const r = core.index_take_free(this.h, sHi, sLo, loHi, loLo, hiHi, hiLo);
    if (r !== OK) {
      if (r === OUT_OF_MEMORY) throw wasmOutOfMemory('marking an address taken');
      return false;
    }
    const s = scratch();
    this.resultHi = s[0]!;
    this.resultLo = s[1]!;
    return true;
  }

  /** Smallest taken offset ≥ from: true with it in resultHi/resultLo, or false. */
  nextSet(fromHi: number, fromLo: number): boolean {
    if (core.index_next_set(this.h, fromHi, fromLo) !== OK) return false;
    const s = scratch();
    this.resultHi = s[0]!;
    this.resultLo = s[1]!;
    return true;
  }

  /**
   * The k-th free offset (0-based, ascending) of the closed band [lo, hi] (hi past the index is
   * clamped): true with it in resultHi/resultLo, or false when the band holds k or fewer free
   * offsets. Dense: O(64 · levels) word reads at any fill (the index's COUNT summaries). Sparse:
   * sums of the per-64 block words of its run pages and singles nodes, then one page and one
   * node: O(pages / 64 + nodes / 64 + one node), microseconds at millions of runs.
   */
  selectFree(kHi: number, kLo: number, loHi: number, loLo: number, hiHi: number, hiLo: number): boolean {
    if (this.slotsHi === 0 && this.slotsLo === 0) return false;
    if (this.pastSlots(hiHi, hiLo)) {
      hiHi = this.lastHi;
      hiLo = this.lastLo;
    }
    if (core.index_select_free(this.h, kHi, kLo, loHi, loLo, hiHi, hiLo) !== OK) return false;
    const s = scratch();
    this.resultHi = s[0]!;
    this.resultLo = s[1]!;
    return true;
  }

  /**
   * The number of free offsets in the closed band [lo, hi] (hi past the index is clamped), as
   * (resultHi, resultLo). Same costs as selectFree.
   */
  countFree(loHi: number, loLo: number, hiHi: number, hiLo: number): void {
    if (this.slotsHi === 0 && this.slotsLo === 0) {
      this.resultHi = 0;
      this.resultLo = 0;
      return;
    }
    if (this.pastSlots(hiHi, hiLo)) {
      hiHi = this.lastHi;
      hiLo = this.lastLo;
    }
    core.index_count_free(this.h, loHi, loLo, hiHi, hiLo);
    const s = scratch();
    this.resultHi = s[0]!;
    this.resultLo = s[1]!;
  }

  /** The last offset, slots − 1, as (hi, lo) (slots ≥ 1). */
  private get lastHi(): number {
    return this.slotsLo === 0 ? this.slotsHi - 1 : this.slotsHi;
  }
  private get lastLo(): number {
    return (this.slotsLo - 1) >>> 0;
  }

  /** Whether (hi, lo) ≥ slots. */
  private pastSlots(hi: number, lo: number): boolean {
    return hi > this.slotsHi || (hi === this.slotsHi && lo >= this.slotsLo);
  }

  /** Bytes of WASM memory this index owns. */
  bytes(): number {
    return core.index_bytes(this.h);
  }

  /**
   * Gives back memory a sparse index grew into and no longer holds offsets in (after a batch of
   * sets was undone): never fails, never changes the offsets.
   */
  compact(): void {
    core.index_compact(this.h);
  }

  /**
   * Bytes a sparse index may grow by when `count` more offsets, spread as those it holds are,
   * are set (its nodes, filled together, can grow together); 0 for a dense index or one with no
   * isolated offsets. For the estimate of a refused load.
   */
  growthBound(count: number): number {
    return core.sparse_growth_bound(this.h, count);
  }

  /** Re-derives every counter and summary from the raw data; 0 when consistent, else an invariant code. */
  validate(): number {
    return core.index_validate(this.h);
  }

  /**
   * Marks many offsets taken in one call. `pairs` holds (hi, lo) per offset. Returns how many were
   * newly set. Throws OutOfMemoryError, and then nothing is set: a sparse index only, as a dense
   * one needs no memory to mark offsets — without room for the batch they go in a few at a time
   * (inScratchSlices).
   */
  setMany(pairs: Uint32Array, count = pairs.length >>> 1): number {
    if (count === 0) return 0;
    const bytes = count * 8;
    const ptr = core.buf_alloc(bytes);
    let r: number;
    if (ptr === 0) {
      if (this.kind !== 'dense') throw wasmOutOfMemory('loading addresses into an index');
      r = inScratchSlices(pairs, 2, count, (at, n) => core.index_set_many(this.h, at, n));
    } else {
      try {
        memoryU32().set(pairs.subarray(0, count * 2), ptr >>> 2);
        r = core.index_set_many(this.h, ptr, count);
      } finally {
        core.buf_free(ptr, bytes);
      }
    }
    // (the buffer given back first: the error counts it as needed, and as free)
    if (r === OUT_OF_MEMORY) throw wasmOutOfMemory('loading addresses into an index');
    if (r === OUT_OF_RANGE) throw new InvalidArgumentError(`offset at position ${scratch()[0]} is outside the index`);
    return r;
  }

  // ── legacy bitmap snapshot ──────────────────────────────────────────────────────────────

  private requireDense(what: string): void {
    if (core.index_kind(this.h) !== KIND_DENSE)
      throw new InvalidArgumentError(`${what}: the legacy bitmap snapshot needs a dense index, this one is ${this.kind}`);
  }

  /**
   * The legacy bitmap snapshot (upstream AllocationBitmap.Snapshot): the big-endian bytes of the
   * number whose bit i is set when offset i is taken, minimal (no leading zero byte); all free →
   * an empty array. Dense indexes only (InvalidArgumentError otherwise).
   */
  snapshotBits(): Uint8Array {
    this.requireDense('snapshotBits');
    const ptr = core.dense_words_ptr(this.h);
    const end = ptr + core.dense_word_count(this.h) * 8;
    const mem = memoryU8();
    // The level-0 words are little-endian u64s: byte k holds offsets 8k..8k+7, so the number's
    // little-endian bytes are memory itself; trim the zero top and reverse.
    let top = end;
    const u32 = memoryU32();
    while (top > ptr && u32[(top - 4) >>> 2] === 0) top -= 4;
    while (top > ptr && mem[top - 1] === 0) top--;
    const out = mem.slice(ptr, top);
    out.reverse();
    return out;
  }

  /**
   * InvalidArgumentError, naming the index as `of` says, when the legacy bitmap snapshot `data`
   * sets a bit at or beyond the index's size: the padding bits of its last partial byte, or any
   * byte past it. The message names the lowest such offset, as the offsets format's check does.
   * A caller that must do other work before restoreBits (which checks again) checks first.
   */
  checkBits(data: Uint8Array, of = `an index of ${formatCount(this.slotsLo)} offsets`): void {
    const slots = this.slotsLo;
    // bit i is bit i % 8 of data[data.length - 1 - i / 8]: from the byte holding offset `slots` up
    for (let k = slots >>> 3, mask = (0xff << (slots & 7)) & 0xff; k < data.length; k++, mask = 0xff) {
      const past = data[data.length - 1 - k]! & mask;
      if (past !== 0) {
        throw new InvalidArgumentError(`snapshot offset ${k * 8 + 31 - Math.clz32(past & -past)} is outside ${of}`);
      }
    }
  }

  /**
   * Replaces the contents with a legacy bitmap snapshot (see snapshotBits; leading zero bytes are
   * ignored, as big.Int.SetBytes does). A set bit at or beyond the index's size throws
   * InvalidArgumentError (see checkBits) and leaves the index unchanged. Dense indexes only.
   */
  restoreBits(data: Uint8Array, of = `an index of ${formatCount(this.slotsLo)} offsets`): void {
    this.requireDense('restoreBits');
    this.checkBits(data, of);
    let first = 0;
    while (first < data.length && data[first] === 0) first++;
    const significant = data.length - first;
    const ptr = core.dense_words_ptr(this.h);
    const mem = memoryU8();
    mem.fill(0, ptr, ptr + core.dense_word_count(this.h) * 8);
    const dst = mem.subarray(ptr, ptr + significant);
    dst.set(data.subarray(first));
    dst.reverse();
    core.dense_rebuild(this.h);
  }

  /** Frees the WASM memory now (else the collector does, late). The index is unusable afterwards. */
  destroy(): void {
    if (this.h !== 0 && this.owned) {
      freedExplicitly(this);
      core.index_free(this.h);
    }
    this.h = 0;
  }
}
