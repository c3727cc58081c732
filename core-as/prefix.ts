// Prefix geometry: where a Service CIDR's addresses start and end, how many there are, and where
// the KEP-3070 static band ends. Mirrors NewIPAllocator, hostsPerNetwork, broadcastAddress and
// calculateRangeOffset of k8s.io/kubernetes/pkg/registry/core/service/ipallocator.
//
// The layout of a range (h = host bits = width − length):
//
//   network  first               offsetAddress                       last  broadcast
//      │       │                       │                               │       │
//      ▼       ▼                       ▼                               ▼       ▼
//      ┌───────┬───────────────────────┬───────────────────────────────┬───────┐
//      │ net   │ lower (static) band   │ upper (dynamic) band          │ bcast │  IPv4
//      └───────┴───────────────────────┴───────────────────────────────┴───────┘
//      ◂──────────── rangeOffset ─────▸◂──────── size − rangeOffset ──────────▸
//              (from first)
//   IPv6 has no broadcast: last = broadcast (the all-ones host part is allocatable).
//
//   first  = network + 1                   (upstream prefix.Masked().Addr().Next())
//   last   = broadcast − 1 (IPv4), broadcast (IPv6)
//   size   = hostsPerNetwork: IPv4 2^h − 2, IPv6 2^h − 1 (floored at 0), 2^64 − 1 when h ≥ 64
//   rangeOffset = calculateRangeOffset: 0 when 2^h ≤ 16, else min(max(16, 2^h / 16), 256),
//                 with k8s.io/utils RangeSize for 2^h: saturating at 2^63 − 1, and 0 for an
//                 IPv4 /0 or /1 and an IPv6 /0 or /1 (so no static band there)
//   offsetAddress = first + rangeOffset
//
// Degenerate prefixes, exactly as upstream:
//   /31, /32 (IPv4) and /128 (IPv6): first > last, the range is empty (size 0).
//   0.0.0.0/32: broadcast − 1 does not exist (netip Prev of 0.0.0.0 is the invalid Addr) → FLAG_NO_LAST.
//   255.255.255.255/32, ffff:…:ffff/128: network + 1 does not exist → FLAG_NO_FIRST; upstream
//   NewIPAllocator fails with `invalid address []` (addOffsetAddress of the invalid Addr).

import {
  add128, cmp128, fitsWidth, hiOf, isWidth, loOf, putAddr, resHi, resLo, sub128, U64_MAX, WIDTH_V4,
} from './u128';
import { putU32, putU64 } from './scratch';
import { NONE, OK, OUT_OF_RANGE } from './status';

// Scratch words written by prefix_geometry (mirrored by adapters/geometry.ts `GEO`):
//
//   word  0..3   network        address & mask
//   word  4..7   broadcast      network | host bits
//   word  8..11  first          network + 1                  zero words when FLAG_NO_FIRST
//   word 12..15  last           IPv4 broadcast − 1, IPv6 broadcast   zero when FLAG_NO_LAST
//   word 16..19  offsetAddress  first + rangeOffset          zero words when FLAG_NO_FIRST
//   word 20..21  size           hostsPerNetwork as (hi, lo)
//   word 22      rangeOffset
//   word 23      flags          FLAG_*
//   word 24..25  count          addresses in [first, last] as (hi, lo); 0 when empty,
//                               saturating at 2^64 − 1 (FLAG_COUNT_SATURATED)
export const GEO_NETWORK: i32 = 0;
export const GEO_BROADCAST: i32 = 4;
export const GEO_FIRST: i32 = 8;
export const GEO_LAST: i32 = 12;
export const GEO_OFFSET_ADDRESS: i32 = 16;
export const GEO_SIZE: i32 = 20;
export const GEO_RANGE_OFFSET: i32 = 22;
export const GEO_FLAGS: i32 = 23;
export const GEO_COUNT: i32 = 24;

/** network + 1 does not exist (the network is the family's all-ones address). */
export const FLAG_NO_FIRST: u32 = 1;
/** IPv4 broadcast − 1 does not exist (0.0.0.0/32). */
export const FLAG_NO_LAST: u32 = 2;
/** [first, last] holds 2^64 or more addresses (IPv6 shorter than /64); count reads 2^64 − 1. */
export const FLAG_COUNT_SATURATED: u32 = 4;

const RANGE_OFFSET_MIN: u64 = 16;
const RANGE_OFFSET_MAX: u64 = 256;
const RANGE_OFFSET_STEP: u64 = 16;
const MAX_INT64: u64 = 0x7fff_ffff_ffff_ffff;

/** hostsPerNetwork for h host bits: IPv4 2^h − 2, IPv6 2^h − 1, floored at 0, 2^64 − 1 when h ≥ 64. */
export function hostsPerNetwork(h: i32, width: i32): u64 {
  if (h >= 64) return U64_MAX;
  let max: u64 = (<u64>1 << <u64>h) - 1; // not the network address
  if (width == WIDTH_V4) {
    if (max == 0) return 0;
    max--; // not the IPv4 broadcast address
  }
  return max;
}

/**
 * calculateRangeOffset for h host bits of a `width`-bit family (KEP-3070), with k8s.io/utils
 * RangeSize: 2^h saturating at MaxInt64, and 0 for an IPv4 /0 or /1 and an IPv6 /0 or /1 (its
 * first test), so those have no static band.
 */
export function rangeOffsetOf(h: i32, width: i32): u32 {
  if (h >= width - 1) return 0;
  const cidrSize: u64 = h >= 63 ? MAX_INT64 : <u64>1 << <u64>h;
  if (cidrSize <= RANGE_OFFSET_MIN) return 0;
  let offset = cidrSize / RANGE_OFFSET_STEP;
  if (offset < RANGE_OFFSET_MIN) offset = RANGE_OFFSET_MIN;
  if (offset > RANGE_OFFSET_MAX) offset = RANGE_OFFSET_MAX;
  return <u32>offset;
}

function validPrefix(bits: i32, width: i32): bool {
  return isWidth(width) && bits >= 0 && bits <= width;
}

// ── exported to the boundary ───────────────────────────────────────────────────────────────

/**
 * Everything NewIPAllocator derives from a prefix, in one call. Takes an address w0..w3 (host bits
 * may be set: it is masked here, as netip.ParsePrefix(…).Masked() does), the prefix length `bits`
 * and the family width (32 or 128), and writes network, broadcast, first, last, offsetAddress,
 * size, rangeOffset, flags and count to scratch words 0..25 (layout above, constants GEO_*).
 * Returns OK; NONE when the first address does not exist (FLAG_NO_FIRST: 255.255.255.255/32,
 * ffff:…:ffff/128 — upstream's constructor error `invalid address []`), with every other word
 * still written; OUT_OF_RANGE when the width is not 32/128, bits is outside [0, width] or the
 * address does not fit the width (scratch untouched).
 */
export function prefix_geometry(w0: u32, w1: u32, w2: u32, w3: u32, bits: i32, width: i32): i32 {
  const hi = hiOf(w0, w1);
  const lo = loOf(w2, w3);
  if (!validPrefix(bits, width) || !fitsWidth(hi, lo, width)) return OUT_OF_RANGE;
  const h = width - bits;

  // Host mask: the low h bits of the 128-bit value.
  //   h = 0 → 0:0   h = 8 → 0:0xff   h = 64 → 0:~0   h = 72 → 0xff:~0   h = 128 → ~0:~0
  const hostLo: u64 = h >= 64 ? U64_MAX : h == 0 ? 0 : U64_MAX >> <u64>(64 - h);
  const hostHi: u64 = h <= 64 ? 0 : h == 128 ? U64_MAX : U64_MAX >> <u64>(128 - h);
  const netHi = hi & ~hostHi;
  const netLo = lo & ~hostLo;
  const bcHi = netHi | hostHi;
  const bcLo = netLo | hostLo;
  putAddr(GEO_NETWORK, netHi, netLo);
  putAddr(GEO_BROADCAST, bcHi, bcLo);

  let flags: u32 = 0;
  let firstHi: u64 = 0, firstLo: u64 = 0;
  if (add128(netHi, netLo, 1, width)) {
    firstHi = resHi;
    firstLo = resLo;
  } else {
    flags |= FLAG_NO_FIRST;
  }

  let lastHi = bcHi, lastLo = bcLo;
  if (width == WIDTH_V4) {
    if (bcLo == 0) {
      flags |= FLAG_NO_LAST;
      lastLo = 0;
    } else {
      lastLo = bcLo - 1;
    }
  }

  const size = hostsPerNetwork(h, width);
  const rangeOffset = rangeOffsetOf(h, width);
  let offHi: u64 = 0, offLo: u64 = 0;
  if ((flags & FLAG_NO_FIRST) == 0) {
    // Cannot fail: rangeOffset ≠ 0 only when h ≥ 5, and then first + 256 ≤ network + 2^h − 1.
    // The sum is a statement of its own: it must not hang on --noAssert keeping an assert's expression.
    const fits = add128(firstHi, firstLo, <u64>rangeOffset, width);
    assert(fits, 'first + rangeOffset left the family');
    offHi = resHi;
    offLo = resLo;
  }

  let count: u64 = 0;
  if ((flags & (FLAG_NO_FIRST | FLAG_NO_LAST)) == 0 && cmp128(firstHi, firstLo, lastHi, lastLo) <= 0) {
    sub128(lastHi, lastLo, firstHi, firstLo);
    if (resHi != 0 || resLo == U64_MAX) {
      flags |= FLAG_COUNT_SATURATED;
      count = U64_MAX;
    } else {
      count = resLo + 1;
    }
  }

  putAddr(GEO_FIRST, firstHi, firstLo);
  putAddr(GEO_LAST, lastHi, lastLo);
  putAddr(GEO_OFFSET_ADDRESS, offHi, offLo);
  putU64(GEO_SIZE, size);
  putU32(GEO_RANGE_OFFSET, rangeOffset);
  putU32(GEO_FLAGS, flags);
  putU64(GEO_COUNT, count);
  return (flags & FLAG_NO_FIRST) != 0 ? NONE : OK;
}

/**
 * hostsPerNetwork for a prefix of length `bits` in the family of `width` (32 or 128): OK with the
 * usable address count as a u64 (hi, lo) in scratch words 0..1 (IPv4 2^h − 2, IPv6 2^h − 1,
 * floored at 0, 2^64 − 1 when h ≥ 64); OUT_OF_RANGE on a bad width or length.
 */
export function prefix_hosts(bits: i32, width: i32): i32 {
  if (!validPrefix(bits, width)) return OUT_OF_RANGE;
  putU64(0, hostsPerNetwork(width - bits, width));
  return OK;
}

/**
 * calculateRangeOffset (KEP-3070) for a prefix of length `bits` in the family of `width`: the
 * size of the static band, 0 or 16..256, returned directly; OUT_OF_RANGE (−1) on a bad width or
 * length. Touches no scratch.
 */
export function prefix_range_offset(bits: i32, width: i32): i32 {
  if (!validPrefix(bits, width)) return OUT_OF_RANGE;
  return <i32>rangeOffsetOf(width - bits, width);
}
