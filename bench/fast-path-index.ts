// FastPathIndex: a FreeIndex together with its core handle, and the dense index's u32 fast path
// (core dense_next_free32 / dense_take_free32) called directly — the one-call search the address
// space runs inside space_take (core-as/space.ts). The bench's `core` and `contiguous` floors
// search with it, and the index tests check the fast path against their model and edit an
// index's words behind its back. The product's FreeIndex keeps its handle to itself; this is
// built on the module API it is built on (wasm.ts's core, FreeIndex.borrow).
//
// `index` is a plain FreeIndex (a view of the index this object owns), not a subclass: a second
// class calling FreeIndex's methods in the bench's process would make their property loads
// polymorphic for the allocators measured beside it.
import { FreeIndex, freedExplicitly, freeWhenCollected, type IndexKind, indexRefused } from '../adapters/free-index.ts';
import { core, KIND_AUTO, KIND_DENSE, KIND_SPARSE } from '../adapters/wasm.ts';

const denseNextFree32 = core.dense_next_free32;
const denseTakeFree32 = core.dense_take_free32;

export class FastPathIndex {
  /** The index: every FreeIndex operation (its destroy() only detaches it: call this one's). */
  readonly index: FreeIndex;
  #handle: number;
  /** A dense index: the u32 fast path answers in one core call. */
  readonly #dense: boolean;

  /** An empty index over offsets [0, slots), as `new FreeIndex(slotsHi, slotsLo, kind)`. */
  constructor(slotsHi: number, slotsLo: number, kind: IndexKind = 'auto') {
    const k = kind === 'dense' ? KIND_DENSE : kind === 'sparse' ? KIND_SPARSE : KIND_AUTO;
    const h = core.index_new(k, slotsHi >>> 0, slotsLo >>> 0);
    if (h === 0) throw indexRefused(k, slotsHi, slotsLo, 'offsets');
    this.#handle = h;
    this.index = FreeIndex.borrow(h, slotsHi, slotsLo, this);
    this.#dense = core.index_kind(h) === KIND_DENSE;
    freeWhenCollected(this, core.index_free, h);
  }

  /** The core handle (for wasm.ts's index_* and dense_* functions); 0 after destroy(). */
  get handle(): number {
    return this.#handle;
  }

  /**
   * nextFree for u32 offsets, without the scratch round trip: the first free offset scanning
   * start..hi then lo..start−1 within the closed band [lo, hi] (hi ≥ slots is clamped, start
   * outside the band → lo), or −1 when the band has no free offset. Arguments are u32 values.
   * A dense index answers in one core call; other kinds go through nextFree (and also set
   * resultHi/resultLo).
   */
  nextFree32(start: number, lo: number, hi: number): number {
    if (this.#dense) return denseNextFree32(this.#handle, start, lo, hi);
    const ix = this.index;
    return ix.nextFree(0, start >>> 0, 0, lo >>> 0, 0, hi >>> 0) ? ix.resultLo : -1;
  }

  /**
   * nextFree32 that also marks the offset it finds taken (one core call). The
   * offset, or −1 when the band has no free offset (nothing changed).
   */
  takeFree32(start: number, lo: number, hi: number): number {
    if (this.#dense) return denseTakeFree32(this.#handle, start, lo, hi);
    const ix = this.index;
    return ix.takeFree(0, start >>> 0, 0, lo >>> 0, 0, hi >>> 0) ? ix.resultLo : -1;
  }

  /** Frees the index's WASM memory. Idempotent. */
  destroy(): void {
    if (this.#handle === 0) return;
    this.index.destroy(); // detaches the view
    freedExplicitly(this);
    core.index_free(this.#handle);
    this.#handle = 0;
  }
}
