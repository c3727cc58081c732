// Loading many addresses into an index under a memory cap. One core call takes a whole batch
// (FreeIndex.setMany, AddressSpace.setMany), but needs room for it beside the index: the batch's
// entries copied into a block rounded up to a power of two (8 B per offset, 16 B per address),
// then, for a sparse index, their sorted copies. Under setMemoryLimit an index that fits may not
// fit with them; the same entries loaded in slices need only a slice's room each.

import { OutOfMemoryError } from './errors.ts';

/** Entries per slice when one batch does not fit (64 KiB of address words). */
export const LOAD_SLICE = 4096;

/**
 * Loads entries [0, n) with `load(from, count)`, a core call that returns how many it newly
 * marked and changes nothing when it throws: as one batch, `load(0, n)`, or, when that runs out
 * of memory, in consecutive slices of LOAD_SLICE. Returns what the calls added up to. A slice
 * that runs out too throws its OutOfMemoryError with the slices before it loaded: a caller that
 * must change nothing then (a load into a live index) counts the entries each call loaded and
 * takes them back; one loading a new index drops it.
 */
export function loadInSlices(n: number, load: (from: number, count: number) => number): number {
  try {
    return load(0, n);
  } catch (e) {
    if (!(e instanceof OutOfMemoryError) || n <= LOAD_SLICE) throw e;
  }
  return loadSlices(n, load);
}

/**
 * Loads entries [0, n) with `load(from, count)` in consecutive slices of LOAD_SLICE, without
 * trying them as one batch first: for a caller whose one batch ran out already (loadInSlices's
 * second step). Returns what the calls added up to; a slice that runs out throws, as there.
 */
export function loadSlices(n: number, load: (from: number, count: number) => number): number {
  let added = 0;
  for (let from = 0; from < n; from += LOAD_SLICE) added += load(from, Math.min(LOAD_SLICE, n - from));
  return added;
}
