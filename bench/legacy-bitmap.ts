// The legacy Kubernetes ClusterIP allocator, ported for comparison: ipallocator.Range (bitmap.go)
// over allocator.AllocationBitmap with randomScanStrategyWithOffset
// (pkg/registry/core/service/ipallocator/bitmap.go, pkg/registry/core/service/allocator/bitmap.go).
//
//   offset:  0            rangeOffset                                   max−1
//            ├── lower ────┼──────────── upper ("dynamic") ──────────────┤
//            │ static-     │ AllocateNext starts at a random offset here │
//            │ preferred   │ and scans upward bit by bit, wrapping;      │
//            │ (2nd pass)  │ only when it finds nothing, the lower band. │
//
// Offset 0 is the address network + 1. Sizes, as upstream:
//   max = RangeSize(cidr) = 2^h;  IPv6: max = min(max, 65536)  (the legacy cap: 2^16)
//   IPv4: max−− (broadcast);  then max−− (network);  clamp ≥ 0
//   ⇒ IPv4 2^h − 2, IPv6 min(2^h, 65536) − 1  (a /64 still holds only 65535 addresses)
//   rangeOffset = calculateRangeOffset(cidr) on the raw CIDR size (KEP-3070).
//
// The port is faithful in what costs time: one bit tested per candidate (Go's big.Int.Bit is
// O(1) per bit, so is `words[at >>> 5]`), the count-based early exit when full, the two passes.
// It works on offsets, not on net.IP: the ip ↔ offset arithmetic upstream does around it
// (big.Int add/sub) is left out, and results are status codes instead of Go error values
// (a thrown Error costs ≈ 3.4 µs in V8, a Go error return costs nothing).

/** The random source the strategy draws from (upstream: math/rand `Intn`). */
export interface IntSource {
  /** A uniform integer in [0, n), n ≥ 1. */
  intn(n: number): number;
}

/** Result of `allocate(offset)`, mirroring upstream's (ok, err) pairs. */
export const ALLOCATED_OK = 1;
export const ALREADY_ALLOCATED = 0;
export const NOT_IN_RANGE = -1;

/** KEP-3070 `calculateRangeOffset` from the raw CIDR size 2^hostBits. */
export function calculateRangeOffset(hostBits: number): number {
  const min = 16;
  const max = 256;
  const step = 16;
  const cidrSize = hostBits >= 63 ? Number.MAX_SAFE_INTEGER : 2 ** hostBits; // saturating like RangeSize
  if (cidrSize <= min) return 0;
  const offset = Math.floor(cidrSize / step);
  if (offset < min) return min;
  if (offset > max) return max;
  return offset;
}

/** Legacy `New(cidr)` size: usable addresses of the bitmap. */
export function legacyMax(family: 'IPv4' | 'IPv6', prefixBits: number): number {
  const hostBits = (family === 'IPv4' ? 32 : 128) - prefixBits;
  let max = hostBits >= 63 ? Number.MAX_SAFE_INTEGER : 2 ** hostBits;
  if (family === 'IPv6') max = Math.min(max, 65536);
  else max--; // broadcast
  max--; // network
  return Math.max(max, 0);
}

export class LegacyBitmapRange {
  /** Number of offsets the bitmap covers: [0, max). */
  readonly max: number;
  /** First offset of the upper band (0 when the range is too small to split). */
  readonly rangeOffset: number;
  /** Bit `i` of the map is word i >>> 5, bit i & 31; set = allocated. */
  private readonly words: Uint32Array;
  /** Number of set bits (AllocationBitmap.count): kept exact by allocate/allocateNext/release. */
  private count = 0;
  private readonly rand: IntSource;

  constructor(family: 'IPv4' | 'IPv6', prefixBits: number, rand: IntSource) {
    this.max = legacyMax(family, prefixBits);
    this.rangeOffset = calculateRangeOffset((family === 'IPv4' ? 32 : 128) - prefixBits);
    this.words = new Uint32Array(Math.ceil(this.max / 32));
    this.rand = rand;
  }

  /**
   * Range.Allocate on an offset: NOT_IN_RANGE outside [0, max) (ErrNotInRange upstream),
   * ALREADY_ALLOCATED when taken (ErrAllocated), else ALLOCATED_OK.
   */
  allocate(offset: number): number {
    if (!(offset >= 0 && offset < this.max)) return NOT_IN_RANGE;
    const w = offset >>> 5;
    const m = 1 << (offset & 31);
    if ((this.words[w] & m) !== 0) return ALREADY_ALLOCATED;
    this.words[w] |= m;
    this.count++;
    return ALLOCATED_OK;
  }

  /** Range.AllocateNext: the allocated offset, or −1 for ErrFull. */
  allocateNext(): number {
    const next = this.allocateBit();
    if (next < 0) return -1;
    this.words[next >>> 5] |= 1 << (next & 31);
    this.count++;
    return next;
  }

  /** Range.Release: clears the offset if set; out-of-range and free offsets are ignored. */
  release(offset: number): void {
    if (!(offset >= 0 && offset < this.max)) return;
    const w = offset >>> 5;
    const m = 1 << (offset & 31);
    if ((this.words[w] & m) === 0) return;
    this.words[w] &= ~m;
    this.count--;
  }

  has(offset: number): boolean {
    if (!(offset >= 0 && offset < this.max)) return false;
    return (this.words[offset >>> 5] & (1 << (offset & 31))) !== 0;
  }

  used(): number {
    return this.count;
  }

  free(): number {
    return this.max - this.count;
  }

  /** Bytes of the bitmap itself (upstream keeps a big.Int of ⌈max/64⌉ words). */
  bytes(): number {
    return this.words.byteLength;
  }

  /** randomScanStrategyWithOffset.AllocateBit: the free offset to take, or −1. */
  private allocateBit(): number {
    const max = this.max;
    const offset = this.rangeOffset;
    const words = this.words;
    if (this.count >= max) return -1;
    // upper band: at = offset + (start + i) % sub
    const sub = max - offset;
    let start = this.rand.intn(sub);
    for (let i = 0; i < sub; i++) {
      const at = offset + ((start + i) % sub);
      if ((words[at >>> 5] & (1 << (at & 31))) === 0) return at;
    }
    // lower band: at = (start + i) % offset (offset > 0 here: count < max and the upper band is full)
    start = this.rand.intn(offset);
    for (let i = 0; i < offset; i++) {
      const at = (start + i) % offset;
      if ((words[at >>> 5] & (1 << (at & 31))) === 0) return at;
    }
    return -1;
  }
}
