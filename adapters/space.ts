// AddressSpace: a range's bands and its random draw, over the core's address space
// (core-as/space.ts: the index of taken offsets plus the geometry). Allocator and Range both
// allocate through it when no strategy is given. A strategy chooses through the strategy's view
// of the index instead (adapters/strategy.ts), where the 'upstream' chooser that coolDown and
// strategies of your own can wrap repeats this draw and scan over offsets: the same answers for
// the same draws, except that it does not know the range's addresses, so the one start whose
// address would leave the family (step 3 below, the last IPv6 /64 only) wraps to the band's
// first offset there.
//
//   first                        offsetAddress                                          last
//     │◂──── lower (static) ─────▸│◂──────────────── upper (dynamic) ───────────────────▸│
//     offset 0 … rangeOffset − 1   rangeOffset … count − 1
//
// allocateNext (upstream ipallocator.go allocateNextService, legacy bitmap.go the same way):
//   1. rangeSize = count − rangeOffset; 0 → "range is full", no draw.
//   2. d = rand.Int63n(rangeSize), or rand.Uint64() when rangeSize ≥ MaxInt64 (an IPv6 /64), with
//      master's overflow guard (d > MaxUint64 − rangeOffset → d − rangeOffset). The legacy
//      bitmap (draw 'bitmap', Range) always draws rand.Intn(rangeSize).
//      (drawScanStart, adapters/random.ts: the one copy of this draw.)
//   3. The first free address from offsetAddress + d, wrapping inside the upper band.
//   4. None: d = rand.Int63n(rangeOffset) and the same in the lower band (when it exists).
// Steps 3 and 4 are one core call each (space_take), which also marks the address taken and
// returns its words: one boundary crossing per candidate. A candidate the store refuses
// (AlreadyExists) stays marked while the caller goes on with takeAfter(), as upstream's iterator
// goes on to the next address.
//
// Addresses cross as four u32 words (IPv4: [0, 0, 0, v4]); the result of take/takeAfter is in
// `address` until the next call. All 128-bit math of the operations happens in the core (the
// constructor derives the band's size once, with BigInt).
import { type Family, formatAddr, formatIPv4 } from './address.ts';
import { InvalidArgumentError } from './errors.ts';
import { FreeIndex, freedExplicitly, freeWhenCollected, type IndexKind, indexRefused } from './free-index.ts';
import type { Prefix } from './geometry.ts';
import { drawBelow, drawScanStart, type RandomSource, type U64Out, type UpstreamDraw } from './random.ts';
import {
  BAND_LOWER,
  BAND_UPPER,
  core,
  inScratchSlices,
  KIND_AUTO,
  KIND_DENSE,
  KIND_SPARSE,
  memoryU32,
  NONE,
  OK,
  OUT_OF_MEMORY,
  OUT_OF_RANGE,
  scratch,
  wasmOutOfMemory,
} from './wasm.ts';

/** The bands' codes, for the modules that ask an AddressSpace for one. @internal */
export { BAND_LOWER, BAND_UPPER } from './wasm.ts';

const spaceTake = core.space_take;
const spaceSet = core.space_set;
const spaceClear = core.space_clear;
const spaceHas = core.space_has;

/** @internal */
export class AddressSpace {
  readonly prefix: Prefix;
  /** The taken offsets (count, validate, ordered walks, snapshots). Owned by the space. */
  readonly index: FreeIndex;
  /** The address of the last successful take/takeAfter, as four u32 words. */
  readonly address = new Uint32Array(4);
  /** Core handle; 0 after destroy(). */
  private h: number;
  private readonly version: Family;
  private readonly rangeOffset: number;
  /** rangeSize = count − rangeOffset, as (hi, lo); 0 means the upper (dynamic) band is empty. */
  private readonly rsHi: number;
  private readonly rsLo: number;
  private readonly draw: UpstreamDraw;
  private readonly d: U64Out = { hi: 0, lo: 0 };

  /**
   * The space of a non-empty prefix ([first, last] holds at least one address). Throws
   * InvalidArgumentError for an empty prefix or a kind that cannot hold it, OutOfMemoryError.
   */
  constructor(prefix: Prefix, kind: IndexKind = 'auto', draw: UpstreamDraw = 'ipallocator') {
    if (prefix.isEmpty) throw new InvalidArgumentError(`${prefix.cidr} has no usable address`);
    const k = kind === 'dense' ? KIND_DENSE : kind === 'sparse' ? KIND_SPARSE : KIND_AUTO;
    const f = prefix.first;
    const h = core.space_new(k, f[0]!, f[1]!, f[2]!, f[3]!, prefix.sizeHi, prefix.sizeLo, prefix.rangeOffset, prefix.width);
    if (h === 0) throw indexRefused(k, prefix.sizeHi, prefix.sizeLo, 'addresses');
    this.h = h;
    freeWhenCollected(this, core.space_free, h); // a space dropped without destroy(): free-index.ts
    this.prefix = prefix;
    this.version = prefix.version;
    this.index = FreeIndex.borrow(core.space_index(h), prefix.sizeHi, prefix.sizeLo, this);
    this.rangeOffset = prefix.rangeOffset;
    const rs = prefix.size - BigInt(prefix.rangeOffset);
    this.rsHi = Number(rs >> 32n);
    this.rsLo = Number(rs & 0xffffffffn);
    this.draw = draw;
  }

  /** The prefix's space, or null when [first, last] is empty (/31, /32, /128). */
  static of(prefix: Prefix, kind?: IndexKind, draw?: UpstreamDraw): AddressSpace | null {
    return prefix.isEmpty ? null : new AddressSpace(prefix, kind, draw);
  }

  get kind(): 'dense' | 'sparse' {
    return this.index.kind;
  }

  /** Taken addresses. */
  count(): number {
    return this.index.count();
  }

  // ── allocateNext's search ─────────────────────────────────────────────────────────────────

  /**
   * Steps 1–3: draws the start in the upper (dynamic) band as upstream does and takes the first
   * free address from there (into `address`). False when that band has nothing free — or does
   * not exist (rangeSize 0: then nothing was drawn either). Throws OutOfMemoryError (nothing taken).
   */
  takeUpper(random: RandomSource): boolean {
    if (this.rsHi === 0 && this.rsLo === 0) return false;
    const d = this.d;
    drawScanStart(random, this.draw, this.rsHi, this.rsLo, this.rangeOffset, d);
    return this.took(spaceTake(this.h, BAND_UPPER, d.hi, d.lo));
  }

  /** Whether allocateNext draws at all (rangeSize > 0: the dynamic band is not empty); when not, upstream answers ErrFull at once. */
  get hasUpperBand(): boolean {
    return this.rsHi !== 0 || this.rsLo !== 0;
  }

  /** Step 4: draws the start in the lower (static) band and takes from there. False when it has nothing free (or does not exist). */
  takeLower(random: RandomSource): boolean {
    const ro = this.rangeOffset;
    if (ro === 0) return false;
    drawBelow(random, 0, ro, this.d);
    return this.took(spaceTake(this.h, BAND_LOWER, 0, this.d.lo));
  }

  /**
   * Goes on after a candidate the caller could not use (it stays marked): the next free address
   * of the same band after address `w`, wrapping. False when the band has nothing free left.
   */
  takeAfter(band: number, w: ArrayLike<number>): boolean {
    return this.took(core.space_take_after(this.h, band, w[0]!, w[1]!, w[2]!, w[3]!));
  }

  /**
   * Takes offset (hi, lo) — a strategy's choice (adapters/strategy.ts) — into `address`: false
   * when it is taken already or past the range. Throws OutOfMemoryError (nothing taken).
   */
  takeAt(hi: number, lo: number): boolean {
    if (!this.index.set(hi, lo)) return false;
    return this.took(core.space_address(this.h, hi, lo));
  }

  private took(st: number): boolean {
    if (st === OK) {
      const s = scratch();
      const a = this.address;
      a[0] = s[0]!;
      a[1] = s[1]!;
      a[2] = s[2]!;
      a[3] = s[3]!;
      return true;
    }
    if (st === NONE) return false;
    if (st === OUT_OF_MEMORY) throw wasmOutOfMemory('marking an address taken');
    throw new InvalidArgumentError(`core space_take answered ${st}`); // a bad band: a bug here
  }

  /** Canonical text of `address` (the IPAddress name). */
  addressText(): string {
    const a = this.address;
    return this.version === 4 ? formatIPv4(a[3]!) : formatAddr(6, a);
  }

  // ── point operations by address (words of this prefix's family) ───────────────────────────

  /** Marks `w` taken: true if it was free; false if taken already or not in [first, last]. Throws OutOfMemoryError. */
  set(w: ArrayLike<number>): boolean {
    const st = spaceSet(this.h, w[0]!, w[1]!, w[2]!, w[3]!);
    if (st === OUT_OF_MEMORY) throw wasmOutOfMemory('marking an address taken');
    return st === OK;
  }

  /** Marks `w` free: true if it was taken. Throws OutOfMemoryError (a sparse run split; nothing changed). */
  clear(w: ArrayLike<number>): boolean {
    const st = spaceClear(this.h, w[0]!, w[1]!, w[2]!, w[3]!);
    if (st === OUT_OF_MEMORY) throw wasmOutOfMemory('marking an address free');
    return st === OK;
  }

  /** Whether `w` is in [first, last] and taken. */
  has(w: ArrayLike<number>): boolean {
    return spaceHas(this.h, w[0]!, w[1]!, w[2]!, w[3]!) === 1;
  }

  /** The offset of `w` from first into out[0..1] as (hi, lo): false when `w` is not in [first, last]. */
  offsetOf(w: ArrayLike<number>, out: Uint32Array): boolean {
    if (core.space_offset(this.h, w[0]!, w[1]!, w[2]!, w[3]!) !== OK) return false;
    const s = scratch();
    out[0] = s[0]!;
    out[1] = s[1]!;
    return true;
  }

  /** Canonical text of the address at offset (hi, lo). Throws InvalidArgumentError past the range. */
  textAt(hi: number, lo: number): string {
    if (core.space_address(this.h, hi, lo) !== OK) {
      throw new InvalidArgumentError(
        `offset ${(BigInt(hi) << 32n) | BigInt(lo)} is outside [0, ${this.prefix.size}) of ${this.prefix.cidr}`,
      );
    }
    const s = scratch();
    return this.version === 4 ? formatIPv4(s[3]!) : formatAddr(6, s);
  }

  /**
   * Marks `count` addresses taken in one core call; `words` holds four u32 words per address,
   * each in [first, last]. Returns how many were newly marked. Throws OutOfMemoryError, a sparse
   * index only (then nothing is marked: FreeIndex.setMany), or InvalidArgumentError for an
   * address outside (then nothing is marked either).
   */
  setMany(words: Uint32Array, count: number): number {
    if (count === 0) return 0;
    const bytes = count * 16;
    const ptr = core.buf_alloc(bytes);
    let r: number;
    if (ptr === 0) {
      if (this.kind !== 'dense') throw wasmOutOfMemory('loading addresses into an index');
      // every address checked first, as space_set_many checks the one batch: the slices before
      // one outside would otherwise stay marked
      for (let e = 0; e < count; e++) {
        const w = 4 * e;
        if (core.space_offset(this.h, words[w]!, words[w + 1]!, words[w + 2]!, words[w + 3]!) !== OK) {
          throw new InvalidArgumentError(`address at position ${e} is outside ${this.prefix.cidr}`);
        }
      }
      r = inScratchSlices(words, 4, count, (at, n) => core.space_set_many(this.h, at, n));
    } else {
      try {
        memoryU32().set(words.subarray(0, count * 4), ptr >>> 2);
        r = core.space_set_many(this.h, ptr, count);
      } finally {
        core.buf_free(ptr, bytes);
      }
    }
    // (the buffer given back first: the error counts it as needed, and as free)
    if (r === OUT_OF_MEMORY) throw wasmOutOfMemory('loading addresses into an index');
    if (r === OUT_OF_RANGE) throw new InvalidArgumentError(`address at position ${scratch()[0]} is outside ${this.prefix.cidr}`);
    return r;
  }

  /** Frees the WASM memory (index included). Idempotent; the space is unusable afterwards. */
  destroy(): void {
    if (this.h === 0) return;
    this.index.destroy();
    freedExplicitly(this);
    core.space_free(this.h);
    this.h = 0;
  }
}
