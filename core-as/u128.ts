// 128-bit address arithmetic: the one place where addresses are added, subtracted and compared.
//
// An address is an unsigned 128-bit number with big-endian meaning, as in Go's net/netip:
//
//   2001:db8::1  =  0x2001_0db8_0000_0000 : 0x0000_0000_0000_0001
//                   └──────── hi ───────┘   └──────── lo ───────┘
//   boundary words:  w0 = 0x2001_0db8   w1 = 0   w2 = 0   w3 = 1      (w0 = bits 127..96)
//
// Inside the core an address is two u64 halves (hi = w0<<32 | w1, lo = w2<<32 | w3); at the
// boundary it is four u32 words. An IPv4 address a.b.c.d is [0, 0, 0, a<<24|b<<16|c<<8|d] with
// width 32: the family is carried by `width` (32 or 128), never guessed from the value, so
// 0.0.0.1 (width 32) and ::1 (width 128) have the same words and different widths.
//
// A u64 offset crosses the boundary as a (hi, lo) pair of u32. Results leave through the scratch
// window (core-as/scratch.ts): an address in words 0..3, a u64 in words 0..1.
//
// Arithmetic is checked against the family width: IPv4 results must stay below 2^32 and IPv6
// results below 2^128, like netip.Addr.Next()/Prev() which return the invalid Addr instead of
// wrapping. Nothing here allocates.

import { putU64 } from './scratch';
import { NONE, OK, OUT_OF_RANGE, TOO_FAR } from './status';

export const WIDTH_V4: i32 = 32;
export const WIDTH_V6: i32 = 128;
/** The largest IPv4 address, 255.255.255.255, as a `lo` half. */
export const V4_MAX: u64 = 0xffff_ffff;
export const U64_MAX: u64 = 0xffff_ffff_ffff_ffff;

// ── internal helpers (not exported to the host) ─────────────────────────────────────────────
//
// Helpers that produce a 128-bit value leave it in these two result registers (plain globals,
// so no managed object is ever created); the caller reads them right after the call.

/** High half of the last 128-bit result of a helper. */
export let resHi: u64 = 0;
/** Low half of the last 128-bit result of a helper. */
export let resLo: u64 = 0;

export function hiOf(w0: u32, w1: u32): u64 {
  return (<u64>w0 << 32) | <u64>w1;
}

export function loOf(w2: u32, w3: u32): u64 {
  return (<u64>w2 << 32) | <u64>w3;
}

/** Writes the address (hi, lo) to scratch words word..word+3. */
export function putAddr(word: i32, hi: u64, lo: u64): void {
  putU64(word, hi);
  putU64(word + 2, lo);
}

/** Whether `width` names a family: 32 (IPv4) or 128 (IPv6). */
export function isWidth(width: i32): bool {
  return width == WIDTH_V4 || width == WIDTH_V6;
}

/** Whether (hi, lo) is an address of the family of `width` (IPv4: below 2^32). */
export function fitsWidth(hi: u64, lo: u64, width: i32): bool {
  return width == WIDTH_V6 || (hi == 0 && lo <= V4_MAX);
}

/** −1, 0 or 1 as a <, ==, > b (unsigned 128-bit). */
export function cmp128(aHi: u64, aLo: u64, bHi: u64, bLo: u64): i32 {
  if (aHi != bHi) return aHi < bHi ? -1 : 1;
  if (aLo != bLo) return aLo < bLo ? -1 : 1;
  return 0;
}

/**
 * res = (hi, lo) + off. False, with res undefined, when the sum leaves the family width
 * (IPv4: ≥ 2^32; IPv6: ≥ 2^128). The input must fit the width.
 */
export function add128(hi: u64, lo: u64, off: u64, width: i32): bool {
  const sumLo = lo + off;
  const carry: u64 = sumLo < lo ? 1 : 0;
  if (width == WIDTH_V4) {
    //  lo ≤ 2^32−1 and off < 2^64: a carry out of the low half or a sum above 2^32−1 both
    //  mean the IPv4 result does not exist.
    if (carry != 0 || sumLo > V4_MAX) return false;
    resHi = 0;
    resLo = sumLo;
    return true;
  }
  const sumHi = hi + carry;
  if (sumHi < hi) return false; // carried out of bit 127: hi was all ones
  resHi = sumHi;
  resLo = sumLo;
  return true;
}

/** res = a − b as 128 bits. The caller guarantees a ≥ b. */
export function sub128(aHi: u64, aLo: u64, bHi: u64, bLo: u64): void {
  const borrow: u64 = aLo < bLo ? 1 : 0;
  resLo = aLo - bLo;
  resHi = aHi - bHi - borrow;
}

// ── exported to the boundary ───────────────────────────────────────────────────────────────

/**
 * Adds the u64 offset (offHi, offLo) to the address w0..w3 of the family of `width` (32 or 128):
 * upstream addOffsetAddress. Returns OK with the sum in scratch words 0..3; NONE when the sum
 * does not exist in the family (IPv4 ≥ 2^32, IPv6 ≥ 2^128) — upstream's `invalid address […]`
 * error; OUT_OF_RANGE when `width` is neither 32 nor 128 or the address does not fit it. The
 * offset is unsigned over its whole range (2^63 and above included, unlike the seed's int64
 * cast, bug #134193). The scratch window is untouched unless the result is OK.
 */
export function u128_add(w0: u32, w1: u32, w2: u32, w3: u32, offHi: u32, offLo: u32, width: i32): i32 {
  const hi = hiOf(w0, w1);
  const lo = loOf(w2, w3);
  if (!isWidth(width) || !fitsWidth(hi, lo, width)) return OUT_OF_RANGE;
  if (!add128(hi, lo, hiOf(offHi, offLo), width)) return NONE;
  putAddr(0, resHi, resLo);
  return OK;
}

/**
 * The distance a − b between two addresses (of one family; widths do not matter here). Returns
 * OK with the difference as a u64 (hi, lo) in scratch words 0..1; NONE when a < b; TOO_FAR when
 * the difference is 2^64 or more (only possible inside IPv6 prefixes shorter than /64). This is
 * the address → offset conversion: offset = sub(addr, first).
 */
export function u128_sub(a0: u32, a1: u32, a2: u32, a3: u32, b0: u32, b1: u32, b2: u32, b3: u32): i32 {
  const aHi = hiOf(a0, a1);
  const aLo = loOf(a2, a3);
  const bHi = hiOf(b0, b1);
  const bLo = loOf(b2, b3);
  if (cmp128(aHi, aLo, bHi, bLo) < 0) return NONE;
  sub128(aHi, aLo, bHi, bLo);
  if (resHi != 0) return TOO_FAR;
  putU64(0, resLo);
  return OK;
}

/**
 * Compares two addresses as unsigned 128-bit numbers: −1 when a < b, 0 when equal, 1 when a > b
 * (netip.Addr.Compare within one family). Touches no scratch.
 */
export function u128_cmp(a0: u32, a1: u32, a2: u32, a3: u32, b0: u32, b1: u32, b2: u32, b3: u32): i32 {
  return cmp128(hiOf(a0, a1), loOf(a2, a3), hiOf(b0, b1), loOf(b2, b3));
}

/**
 * The address after w0..w3 (netip.Addr.Next): OK with it in scratch words 0..3, NONE when the
 * address is the family's last (255.255.255.255, ffff:…:ffff), OUT_OF_RANGE on a bad width or
 * an address that does not fit it.
 */
export function u128_next(w0: u32, w1: u32, w2: u32, w3: u32, width: i32): i32 {
  return u128_add(w0, w1, w2, w3, 0, 1, width);
}

/**
 * The address before w0..w3 (netip.Addr.Prev): OK with it in scratch words 0..3, NONE when the
 * address is 0.0.0.0 or ::, OUT_OF_RANGE on a bad width or an address that does not fit it.
 */
export function u128_prev(w0: u32, w1: u32, w2: u32, w3: u32, width: i32): i32 {
  const hi = hiOf(w0, w1);
  const lo = loOf(w2, w3);
  if (!isWidth(width) || !fitsWidth(hi, lo, width)) return OUT_OF_RANGE;
  if (hi == 0 && lo == 0) return NONE;
  sub128(hi, lo, 0, 1);
  putAddr(0, resHi, resLo);
  return OK;
}
