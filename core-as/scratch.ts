// The scratch window: one static 128-byte area through which results leave the core.
//
// Every exported function that produces more than one i32 writes its result here and returns a
// status code; the boundary module (adapters/wasm.ts) reads it through a Uint32Array view.
//
//   word  0..3   an address (w0 = bits 127..96, big-endian meaning; IPv4 uses w3 only)
//                or a u64 offset as (hi, lo) in words 0..1
//   word  4..31  extra results of a call (documented at the call)
//
// Nothing else lives here; a call overwrites what the previous call left.

export const SCRATCH_WORDS: i32 = 32;
export const SCRATCH: usize = memory.data(SCRATCH_WORDS * 4, 16);

/** Address of the scratch window in linear memory (constant for the life of the instance). */
export function scratch_ptr(): usize {
  return SCRATCH;
}

export function putU32(word: i32, v: u32): void {
  store<u32>(SCRATCH + (<usize>word << 2), v);
}

export function putU64(word: i32, v: u64): void {
  store<u32>(SCRATCH + (<usize>word << 2), <u32>(v >>> 32));
  store<u32>(SCRATCH + (<usize>(word + 1) << 2), <u32>v);
}

export function getU32(word: i32): u32 {
  return load<u32>(SCRATCH + (<usize>word << 2));
}
