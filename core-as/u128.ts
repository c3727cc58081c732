// PLACEHOLDER: 128-bit address math is being written.
import { putU32 } from './scratch';
/** Adds a u64 offset to an address of `bits` (32 or 128) width. OK + result in scratch 0..3, or NONE on overflow. */
export function u128_add(w0: u32, w1: u32, w2: u32, w3: u32, offHi: u32, offLo: u32, bits: i32): i32 {
  putU32(3, w3 + offLo);
  return 1;
}
