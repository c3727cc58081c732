// PLACEHOLDER: the dense bitmap index is being written (see the contract in core-as/freeindex.ts).
import { NONE } from './status';
export function dense_new(n: u32): usize { return 0; }
export function dense_free(h: usize): void {}
export function dense_set(h: usize, i: u32): i32 { return NONE; }
export function dense_clear(h: usize, i: u32): i32 { return NONE; }
export function dense_has(h: usize, i: u32): i32 { return 0; }
export function dense_count(h: usize): u32 { return 0; }
export function dense_next_free(h: usize, start: u32, lo: u32, hi: u32): i32 { return NONE; }
export function dense_next_set(h: usize, from: u32): i32 { return NONE; }
export function dense_bytes(h: usize): usize { return 0; }
export function dense_validate(h: usize): i32 { return 0; }
export function dense_set_many(h: usize, ptr: usize, count: u32): i32 { return 0; }
