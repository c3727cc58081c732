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
//   * after the last address, NONE forever.
//
// Two deliberate differences from upstream's closure, both outside what the allocator reaches:
//   * first > last (an empty range) yields nothing; upstream yields `first` once.
//   * a range ending at the family's last address (ffff:…:ffff) wraps to first like any other;
//     upstream's Next() returns the invalid Addr there and its iterator stops early, skipping
//     [first, start).
//
// State lives in one heap block (core-as/heap.ts); the handle is its address.
//
//   byte  0 ┌ firstHi ┬ firstLo ┬ lastHi ┬ lastLo ┬ curHi ┬ curLo ┬ startHi ┬ startLo ┬ state ┐
//           └ u64 ×8 ────────────────────────────────────────────────────────────────┴ u32 ─┘
//   cur = the address the next call yields (meaningful while state = LIVE)

import { halloc, hfree } from './heap';
import { add128, cmp128, fitsWidth, hiOf, isWidth, loOf, putAddr, resHi, resLo } from './u128';
import { NONE, OK } from './status';

const FIRST_HI: usize = 0;
const FIRST_LO: usize = 8;
const LAST_HI: usize = 16;
const LAST_LO: usize = 24;
const CUR_HI: usize = 32;
const CUR_LO: usize = 40;
const START_HI: usize = 48;
const START_LO: usize = 56;
const STATE: usize = 64;
/** Bytes of an iterator block (the heap rounds it to its 128-byte class). */
export const ITER_BLOCK_SIZE: usize = 72;

const STATE_LIVE: u32 = 0;
const STATE_DONE: u32 = 1;

/**
 * Creates an iterator over the closed range [first, last] (addresses of the family of `width`,
 * 32 or 128) starting at first + (offHi, offLo), per the rules above. Returns the handle, or 0
 * when out of memory. Invalid input — a bad width, an address that does not fit it, first > last,
 * or a start beyond the family — gives an iterator that yields nothing. Free it with iter_free.
 */
export function iter_new(
  f0: u32, f1: u32, f2: u32, f3: u32, l0: u32, l1: u32, l2: u32, l3: u32,
  offHi: u32, offLo: u32, width: i32,
): usize {
  const h = halloc(ITER_BLOCK_SIZE);
  if (h == 0) return 0;
  const fHi = hiOf(f0, f1), fLo = loOf(f2, f3);
  const lHi = hiOf(l0, l1), lLo = loOf(l2, l3);
  store<u64>(h + FIRST_HI, fHi);
  store<u64>(h + FIRST_LO, fLo);
  store<u64>(h + LAST_HI, lHi);
  store<u64>(h + LAST_LO, lLo);
  store<u32>(h + STATE, STATE_DONE);
  if (!isWidth(width) || !fitsWidth(fHi, fLo, width) || !fitsWidth(lHi, lLo, width)) return h;
  if (cmp128(fHi, fLo, lHi, lLo) > 0) return h; // empty range
  if (!add128(fHi, fLo, hiOf(offHi, offLo), width)) return h; // start does not exist
  let sHi = resHi, sLo = resLo;
  if (cmp128(sHi, sLo, lHi, lLo) > 0) {
    sHi = fHi; // clamp, not modulo
    sLo = fLo;
  }
  store<u64>(h + START_HI, sHi);
  store<u64>(h + START_LO, sLo);
  store<u64>(h + CUR_HI, sHi);
  store<u64>(h + CUR_LO, sLo);
  store<u32>(h + STATE, STATE_LIVE);
  return h;
}

/**
 * The next address of the iterator: OK with it in scratch words 0..3, or NONE once every address
 * of [first, last] has been yielded (and on every call after that).
 */
export function iter_next(h: usize): i32 {
  if (load<u32>(h + STATE) != STATE_LIVE) return NONE;
  const cHi = load<u64>(h + CUR_HI), cLo = load<u64>(h + CUR_LO);
  putAddr(0, cHi, cLo);
  // Advance: after last comes first; cur < last cannot overflow, so +1 needs no width check.
  let nHi: u64, nLo: u64;
  if (cHi == load<u64>(h + LAST_HI) && cLo == load<u64>(h + LAST_LO)) {
    nHi = load<u64>(h + FIRST_HI);
    nLo = load<u64>(h + FIRST_LO);
  } else {
    nLo = cLo + 1;
    nHi = nLo == 0 ? cHi + 1 : cHi;
    assert(nHi != 0 || nLo != 0, 'iterator stepped past the last address'); // cur < last ≤ all-ones
  }
  if (nHi == load<u64>(h + START_HI) && nLo == load<u64>(h + START_LO)) {
    store<u32>(h + STATE, STATE_DONE); // back at the start: every address was yielded once
  } else {
    store<u64>(h + CUR_HI, nHi);
    store<u64>(h + CUR_LO, nLo);
  }
  return OK;
}

/** Frees an iterator made by iter_new (0 is ignored). The handle is invalid afterwards. */
export function iter_free(h: usize): void {
  hfree(h, ITER_BLOCK_SIZE);
}
