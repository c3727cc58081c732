// Loading many addresses into an index under a memory cap. One core call takes a whole batch
// (FreeIndex.setMany, AddressSpace.setMany), but needs room for it beside the index: the batch's
// entries copied into a block rounded up to a power of two (8 B per offset, 16 B per address),
// then, for a sparse index, their sorted copies. Under setMemoryLimit an index that fits may not
// fit with them; the same entries loaded in slices need only a slice's room each. (A dense index
// needs none: where no block for its batch can be had, it takes the entries a few at a time
// through the core's scratch window, FreeIndex.setMany.)
//
// The order of the slices (inLoadOrder) follows what the entries are. Addresses spread apart
// (a random /64 fill) are shuffled one by one, so that each slice is a sample of the whole and
// the index's pages grow as they would with addresses in random order: consecutive slices of
// sorted entries (a snapshot's offsets, a sorted listing) would each land after the last, in the
// index's last pages, which fill and split in halves (about 21 B per /64 address, where one batch
// packs them in about 12; shuffled one by one, 10.5–19 B: the nodes, filled together, split
// together near 105,000 addresses and each doubling of that, 19 B just past, 10.5 B just before
// the next, 17 B at 10^6; sorted slices in random order, 16.2 B at 10^5). A run of neighbouring addresses (a range filled
// by lowest-free or sequential, its snapshot or a listing, also in name order) is kept together:
// shuffled one by one, it would be held as isolated addresses until their neighbours came (about
// 6 MB for a run of 10^6, whose index is a few KB). The choice is made for each stretch of
// entries, not once for the whole load: a listing can hold runs and spread addresses side by
// side, and one choice for all of them would break the runs where spread addresses are the more,
// or load the spread addresses as sorted slices where runs are.

import { OutOfMemoryError } from './errors.ts';
import { seededRandom } from './random.ts';
import { remeasured } from './wasm.ts';

/** Entries per slice when one batch does not fit (64 KiB of address words). @internal */
export const LOAD_SLICE = 4096;

/**
 * Loads `entries` (`width` u32 words each) with `load(batch)`, a core call that returns how many
 * it newly marked and changes nothing when it throws: as one batch, or, when that runs out of
 * memory, in slices of LOAD_SLICE (loadSlices over inLoadOrder). Returns
 * what the calls added up to. A slice that runs out too throws its OutOfMemoryError with the
 * slices before it loaded: a caller that must change nothing then (a load into a live index)
 * counts the entries each call loaded and takes them back; one loading a new index drops it.
 * @internal
 */
export function loadInSlices(entries: Uint32Array, width: number, load: (batch: Uint32Array) => number): number {
  try {
    return load(entries);
  } catch (e) {
    if (!(e instanceof OutOfMemoryError) || entries.length <= LOAD_SLICE * width) throw e;
  }
  return loadSlices(inLoadOrder(entries, width), width, load);
}

/**
 * The most bytes per address a sparse index is counted to need, for the estimate of a load that
 * ran out: a node of isolated addresses (8-byte slots) doubles when 4/5 full, so one just grown
 * holds 2/5 of its slots, 20 B per address; a run takes 16 B per run of two or more. Loaded in
 * slices, 10^6 random /64 addresses take about 17 B each, but late in a load, as many nodes grow
 * at once, an address can cost far more than the average so far: the estimate counts every
 * address of the load at this, so that a cap raised by `requested - free` is enough.
 * @internal
 */
export const SPARSE_BYTES_PER_ADDRESS = 20;

/**
 * Loads `entries` (`width` u32 words each) into a new index with `load(batch)`, as loadInSlices
 * does. When it runs out, drops the index (`drop`) and throws the OutOfMemoryError measured
 * again (remeasured), its `requested` the whole index's need: for a sparse index, what the load
 * reached (the index as it stood, given back, and the block it could not get) plus, for each
 * entry it had not loaded, what the index held per entry loaded (SPARSE_BYTES_PER_ADDRESS at
 * least), and at least SPARSE_BYTES_PER_ADDRESS for every entry — an estimate, not the last
 * piece only, so that raising the cap by `requested - free` is enough. A dense index holds all
 * of its bits from its creation, and its load needs no more room (FreeIndex.setMany): it cannot
 * run out.
 * @internal
 */
export function loadNewIndex(
  kind: 'dense' | 'sparse',
  entries: Uint32Array,
  width: number,
  load: (batch: Uint32Array) => number,
  drop: () => void,
): number {
  let loaded = 0;
  try {
    return loadInSlices(entries, width, (batch) => {
      const added = load(batch);
      loaded += batch.length / width;
      return added;
    });
  } catch (e) {
    drop();
    const left = entries.length / width - loaded;
    throw kind === 'sparse' ? remeasured(e, { loaded, left, perAddress: SPARSE_BYTES_PER_ADDRESS }) : remeasured(e);
  }
}

/**
 * Loads `entries` (`width` u32 words each) with `load(batch)` in consecutive slices of
 * LOAD_SLICE, without trying them as one batch first: for a caller whose one batch ran out
 * already, with its entries inLoadOrder. Returns what the calls added up to; a slice that runs out
 * throws, as loadInSlices says.
 * @internal
 */
export function loadSlices(entries: Uint32Array, width: number, load: (batch: Uint32Array) => number): number {
  const step = LOAD_SLICE * width;
  let added = 0;
  for (let from = 0; from < entries.length; from += step) added += load(entries.subarray(from, from + step));
  return added;
}

/** The shuffle's seed: any fixed one, so that a load under a cap is the same on every run. */
const SHUFFLE_SEED = 1;

/**
 * A copy of `entries` (`width` u32 words each) in the order to load them in slices: its pieces
 * in a random order (Fisher–Yates, seeded), each piece as it was. The entries are looked at in
 * stretches of LOAD_SLICE: a stretch where more than 3/4 of the entries follow their neighbour
 * (followsNeighbour) is one piece; in any other stretch each run of entries that follow one
 * another is a piece, and an entry spread apart is a piece of its own.
 * @internal
 */
export function inLoadOrder(entries: Uint32Array, width: number): Uint32Array {
  const n = entries.length / width;
  const starts = new Uint32Array(n + 1); // the entry each piece begins at, then n
  let pieces = 0;
  for (let from = 0; from < n; from += LOAD_SLICE) {
    const to = Math.min(n, from + LOAD_SLICE);
    let follow = 0;
    for (let i = from + 1; i < to; i++) if (followsNeighbour(entries, width, i)) follow++;
    // a stretch of a run listed in name order (1:1000, 1:1001, …, 1:100f, 1:101, 1:1010, …) is
    // cut every 16 entries or so: kept whole, the run is complete when the stretch has loaded
    if (4 * follow > 3 * (to - from)) starts[pieces++] = from;
    else for (let i = from; i < to; i++) if (i === from || !followsNeighbour(entries, width, i)) starts[pieces++] = i;
  }
  starts[pieces] = n;
  const order = new Uint32Array(pieces);
  for (let i = 0; i < pieces; i++) order[i] = i;
  const random = seededRandom(SHUFFLE_SEED);
  for (let i = pieces - 1; i > 0; i--) {
    const j = random.nextU32() % (i + 1); // (the slight bias of % changes no address loaded)
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  const out = new Uint32Array(entries.length);
  let at = 0;
  for (let k = 0; k < pieces; k++) {
    // a loop, not out.set(subarray): spread addresses are pieces of one entry, a view each
    const piece = order[k]!;
    for (let i = starts[piece]! * width, end = starts[piece + 1]! * width; i < end; i++) out[at++] = entries[i]!;
  }
  return out;
}

/**
 * Whether entry `i` of `entries` (`width` u32 words each) is the address after entry i − 1: its
 * last word one more, the others equal.
 */
function followsNeighbour(entries: Uint32Array, width: number, i: number): boolean {
  if (i === 0) return false;
  const at = i * width;
  if (entries[at + width - 1] !== entries[at - 1]! + 1) return false;
  for (let w = 0; w < width - 1; w++) if (entries[at + w] !== entries[at - width + w]) return false;
  return true;
}
