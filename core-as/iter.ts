// The wraparound iterator over a closed address range [first, last]: upstream ipIterator.
//
// It starts at first + offset and walks up to last, wraps to first and stops just before the
// start, so each address of [first, last] comes out exactly once:
//
//   first        start = first + offset          last
//     │  ⑥ ⑦ ⑧     │  ① ② ③ ④ ⑤                  │
//     ▼            ▼                               ▼
//     [ . . . . . . S . . . . . . . . . . . . . . . ]      yields S … last, first … S−1
//
//   * first + offset beyond the family width → yields nothing (upstream: addOffsetAddress error).
//   * first + offset > last → start = first: a clamp, not a modulo (offset 10 over a 2-address
//     range starts at first).
//   * after the last address, nothing forever.
//
// Two deliberate differences from upstream's closure, both outside what the allocator reaches:
//   * first > last (an empty range) yields nothing; upstream yields `first` once.
//   * a range ending at the family's last address (ffff:…:ffff) wraps to first like any other;
//     upstream's Next() returns the invalid Addr there and its iterator stops early, skipping
//     [first, start).
//
// Stateless, as upstream's closure holds nothing but its captured values: the host keeps the
// iterator's four addresses (first, last, start and the current one) in its own closure and asks
// iter_start once, then iter_step for each address after the first. No linear memory is held,
// so an iterator dropped half-way costs nothing here and needs no free.

import { add128, cmp128, fitsWidth, hiOf, isWidth, loOf, putAddr, resHi, resLo } from './u128';
import { NONE, OK } from './status';

/**
 * The first address of the iterator over the closed range [first, last] (addresses of the family
 * of `width`, 32 or 128) with offset (offHi, offLo), per the rules above: OK with it in scratch
 * words 0..3 — the start, which iter_step stops before — or NONE when the iterator yields
 * nothing: a bad width, an address that does not fit it, first > last, or a start beyond the
 * family. The scratch window is untouched unless the result is OK.
 */
export function iter_start(
  f0: u32, f1: u32, f2: u32, f3: u32, l0: u32, l1: u32, l2: u32, l3: u32,
  offHi: u32, offLo: u32, width: i32,
): i32 {
  const fHi = hiOf(f0, f1), fLo = loOf(f2, f3);
  const lHi = hiOf(l0, l1), lLo = loOf(l2, l3);
  if (!isWidth(width) || !fitsWidth(fHi, fLo, width) || !fitsWidth(lHi, lLo, width)) return NONE;
  if (cmp128(fHi, fLo, lHi, lLo) > 0) return NONE; // empty range
  if (!add128(fHi, fLo, hiOf(offHi, offLo), width)) return NONE; // start does not exist
  if (cmp128(resHi, resLo, lHi, lLo) > 0) putAddr(0, fHi, fLo); // clamp, not modulo
  else putAddr(0, resHi, resLo);
  return OK;
}

/**
 * The address after `cur` in the iterator over [first, last] that started at `start` (what
 * iter_start gave): OK with it in scratch words 0..3 — cur + 1, or first after last — or NONE
 * when that address is the start, so every address of [first, last] has been yielded once.
 * `cur` is an address the iterator yielded, so first ≤ cur ≤ last; any cur ≥ last steps to
 * first, so no input can step past the family's last address. The scratch window is untouched
 * unless the result is OK.
 */
export function iter_step(
  c0: u32, c1: u32, c2: u32, c3: u32, f0: u32, f1: u32, f2: u32, f3: u32,
  l0: u32, l1: u32, l2: u32, l3: u32, s0: u32, s1: u32, s2: u32, s3: u32,
): i32 {
  const cHi = hiOf(c0, c1), cLo = loOf(c2, c3);
  let nHi: u64, nLo: u64;
  if (cmp128(cHi, cLo, hiOf(l0, l1), loOf(l2, l3)) >= 0) {
    nHi = hiOf(f0, f1); // after last comes first
    nLo = loOf(f2, f3);
  } else {
    nLo = cLo + 1; // cur < last ≤ all-ones: +1 cannot leave the family
    nHi = nLo == 0 ? cHi + 1 : cHi;
  }
  if (nHi == hiOf(s0, s1) && nLo == loOf(s2, s3)) return NONE; // back at the start
  putAddr(0, nHi, nLo);
  return OK;
}
