// PLACEHOLDER: the sparse run index is being written (see the contract in core-as/freeindex.ts).
import { NONE } from './status';
export function sparse_new(n: u64): usize { return 0; }
export function sparse_free(h: usize): void {}
export function sparse_set(h: usize, i: u64): i32 { return NONE; }
export function sparse_clear(h: usize, i: u64): i32 { return NONE; }
export function sparse_has(h: usize, i: u64): i32 { return 0; }
export function sparse_count(h: usize): u64 { return 0; }
export function sparse_next_free(h: usize, start: u64, lo: u64, hi: u64): i32 { return NONE; }
export function sparse_next_set(h: usize, from: u64): i32 { return NONE; }
export function sparse_bytes(h: usize): usize { return 0; }
export function sparse_validate(h: usize): i32 { return 0; }
export function sparse_set_many(h: usize, ptr: usize, count: u32): i32 { return 0; }
