// `ipallocator map CIDR`: the range as a grid of cells in address order along a Hilbert curve
// (cli/hilbert.ts), each cell coloured by band and by how full it is; svg.ts draws it.
//
// Every address of the prefix has a place, network and broadcast included:
//
//   index  0        1 … rangeOffset       rangeOffset + 1 … count      count + 1 …  2^h − 1
//          network  static band           dynamic band                 IPv4 broadcast
//          └ reserved ┘                                                └──────── reserved ───────┘
//
// A prefix with h host bits has 2^h addresses; the grid has 2^min(h, MAX_CELL_BITS) cells, so a
// cell is one address up to a /18 (IPv4) or /114 (IPv6) and a block of 2^(h − 14) addresses
// beyond: 64 for a /12, 2^50 for a /64. An IPv6 prefix shorter than /64 never gets here: main.ts
// refuses it, given as a CIDR or as a snapshot's range, as a MetaAllocator skips such a range
// (and offsets past 2^64 would not count). A block takes the band most of its allocatable
// addresses are in and a shade by its fill (FILL_LEVELS).
import type { Prefix } from '../adapters/geometry.ts';

/** At most 2^14 = 16,384 cells (128 × 128): every one visible on a page, the SVG under 250 kB. */
export const MAX_CELL_BITS = 14;

export type Band = 'reserved' | 'static' | 'dynamic';

/**
 * Fill levels of a cell: 0 nothing used; 1–4 partly used: up to 25 %, up to 50 %, up to 75 %,
 * below 100 %; 5 every allocatable address used. A one-address cell is 0 or 5.
 */
export const FILL_LEVELS = 6;

export interface RangeMap {
  readonly prefix: Prefix;
  /** log2 of the number of cells. */
  readonly cellBits: number;
  /** log2 of the addresses per cell. */
  readonly blockBits: number;
  /** Band of each cell, by index along the curve. */
  readonly band: Band[];
  /** Allocatable addresses per cell (approximate past 2^53, which only shading reads). */
  readonly usable: Float64Array;
  /** Allocated addresses per cell. */
  readonly used: Float64Array;
  /** Address totals. */
  readonly totals: {
    size: bigint;
    used: number;
    staticSize: bigint;
    staticUsed: number;
    dynamicSize: bigint;
    dynamicUsed: number;
    /** Addresses of the prefix that are not allocatable. */
    reserved: bigint;
  };
}

/** The empty map of a prefix: geometry only, nothing allocated. */
export function emptyMap(prefix: Prefix, maxCellBits = MAX_CELL_BITS): RangeMap {
  const hostBits = prefix.width - prefix.length;
  const cellBits = Math.min(hostBits, maxCellBits);
  const blockBits = hostBits - cellBits;
  const cells = 2 ** cellBits;
  const B = 1n << BigInt(blockBits);
  const count = prefix.size;
  const staticSize = BigInt(Math.min(prefix.rangeOffset, Number(count)));
  const band: Band[] = new Array<Band>(cells);
  const usable = new Float64Array(cells);
  // Index ranges, closed: allocatable [1, count], static [1, staticSize], dynamic [staticSize + 1, count].
  const overlap = (lo: bigint, hi: bigint, a: bigint, b: bigint) => {
    const l = lo > a ? lo : a;
    const h = hi < b ? hi : b;
    return h >= l ? h - l + 1n : 0n;
  };
  for (let c = 0; c < cells; c++) {
    const lo = BigInt(c) * B;
    const hi = lo + B - 1n;
    const s = overlap(lo, hi, 1n, staticSize);
    const d = overlap(lo, hi, staticSize + 1n, count);
    usable[c] = Number(s + d);
    band[c] = s + d === 0n ? 'reserved' : s >= d ? 'static' : 'dynamic';
  }
  const total = 1n << BigInt(hostBits);
  return {
    prefix,
    cellBits,
    blockBits,
    band,
    usable,
    used: new Float64Array(cells),
    totals: { size: count, used: 0, staticSize, staticUsed: 0, dynamicSize: count - staticSize, dynamicUsed: 0, reserved: total - count },
  };
}

/** Counts one allocated address, given as its offset (hi, lo) from the range's first address. */
export function markAllocated(map: RangeMap, hi: number, lo: number): void {
  // The address's index in the prefix is offset + 1 (index 0 is the network address).
  let cell: number;
  if (hi < 0x200000) {
    const index = hi * 4294967296 + lo + 1; // exact below 2^53
    cell = Math.floor(index / 2 ** map.blockBits);
  } else {
    cell = Number(((BigInt(hi) << 32n) + BigInt(lo) + 1n) >> BigInt(map.blockBits));
  }
  map.used[cell]! += 1;
  const t = map.totals;
  t.used++;
  if (hi === 0 && lo < Number(t.staticSize)) t.staticUsed++;
  else t.dynamicUsed++;
}

/** The fill level (0..FILL_LEVELS − 1) of a cell. */
export function fillLevel(used: number, usable: number): number {
  if (used <= 0 || usable <= 0) return 0;
  if (used >= usable) return FILL_LEVELS - 1;
  return Math.max(1, Math.min(4, Math.ceil((4 * used) / usable)));
}

/** The colour class of a cell: "reserved", or band and fill level, e.g. "dynamic-3". */
export function cellClass(map: RangeMap, cell: number): string {
  const band = map.band[cell]!;
  return band === 'reserved' ? 'reserved' : `${band}-${fillLevel(map.used[cell]!, map.usable[cell]!)}`;
}
