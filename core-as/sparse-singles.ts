// The isolated taken offsets of a sparse index (core-as/sparse.ts): an ordered set of u64 keys
// whose point operations cost about one cache miss, like a hash set, and which still walks in
// ascending order.
//
// The keys are cut by value into nodes; a node is a gapped sorted array ("ordered linear
// probing"): each key has a home slot computed from its value by a monotone interpolation fitted
// to the node's keys when it was built, and sits at its home or a little to the right of it. For
// keys spread evenly (random allocation in a /64) a lookup lands on the right cache line at once.
// A router indexed by a key's top bits names the node, so no search of the directory is needed.
//
//   header (32 B)                  router (2^bits + 1 u32)      directory (dirCap × 32 B)
//   ┌──────────────────────┐       ┌────┬────┬────┬─────┐       ┌─────────┬────────┬─────────┬────────┬───────┬─────┬────┐
//   │ u32 nodes            │  ┌──▸ │ p0 │ p1 │ p2 │ ··· │  ──▸  │u64 fence│u64 base│ u32 mul │u32 slot│u16 cnt│u8 lg│u8 sh│ node 0
//   │ u32 dirCap           │  │    └────┴────┴────┴─────┘       ├─────────┴────────┴─────────┴───┬────┴───────┴─────┴────┤
//   │ u32 dir  ────────────┼──┼──────────────────────────────▸  │ … nodes entries, fences rising  │                        │
//   │ u32 route ───────────┼──┘                                 └─────────────────────────────────┼────────────────────────┘
//   │ u64 count            │                                                                      ▼
//   │ u32 bits             │        node slots (2^lg × u64, one block): keys ascending, EMPTY in the gaps
//   └──────────────────────┘        ┌──────┬──────┬──────┬──────┬──────┬──────┬──────┬──────┐
//                                   │  k0  │EMPTY │  k1  │  k2  │EMPTY │EMPTY │  k3  │ …    │
//                                   └──────┴──────┴──────┴──────┴──────┴──────┴──────┴──────┘
//   a node of 2^lg ≥ 128 slots keeps keys in all but its last ⌈2^lg / 512⌉ slots; those hold one
//   u8 per 64 slots, the keys in them (≤ 128 bytes), so a rank or select in the node reads the
//   counts and one chunk of 64 slots, not the node:
//   ┌────────── chunk 0 ──────────┬────────── chunk 1 ──────────┬ ··· ┬──────────────────┐
//   │ k0 ·· k1 k2 ·· ·· k3 ···    │ k9 ·· ·· k10 ···            │ ··· │ 7 │ 5 │ ··· │ ← u8 counts
//   └─────────────────────────────┴─────────────────────────────┴ ··· ┴──────────────────┘
//   home(k) = ⌊((k − base) >> sh) · mul / 2^32⌋ clamped to [0, key slots − 1]   (0 when k ≤ base)
//   route[b] = the node holding key b · 2^(64 − bits); every key with top bits b is in a node
//   numbered route[b] .. route[b + 1]
//   u32 block (bytes 28..31 of the entries 0, 64, 128, …) = Σ cnt of that entry and the 63 after
//   it: the keys below a node are nodes / 64 block words and at most 63 counts away (rank)
//
// Invariants (checked by singles_validate):
//   S1 fences strictly rise, fence of node 0 = 0; node p holds only keys in [fence_p, fence_p+1).
//   S2 in a node, the occupied slots hold strictly rising keys; a key never equals EMPTY
//      (2^64 − 1 is never an offset: n ≤ 2^64 − 1).
//   S3 a key k at slot j has home(k) ≤ j, and every slot in [home(k), j] is occupied — so a
//      search walks right from home(k) over keys < k and stops at k, at a larger key or at EMPTY.
//   S4 every node holds 1..2^lg keys, except a lone node of the smallest size, which may be
//      empty; cnt = its occupied slots; count = Σ cnt.
//   S5 route[b] is the last node whose fence ≤ b · 2^(64 − bits), route[2^bits] the last node;
//      no router (bits = 0) when there is at most one node.
//   S6 the block word of entry 64·b = Σ cnt of nodes 64·b .. 64·b + 63 (those in use).
//   S7 in a node of ≥ 128 slots, chunk count c = the occupied slots of its key slots 64·c .. 64·c + 63
//      (a set adds one to the chunk of the gap its shift filled, a clear takes one from the chunk of
//      the slot its backward shift emptied: one byte each).
// home() is monotone (integer shift, multiplication and clamp never reverse order), which is what
// lets S2 and S3 hold together: a key larger than k never sits left of home(k).
//
// Inserting shifts the keys between the insertion point and the next gap one slot right; when
// the walk from home passes WALK_LIMIT slots, the shift passes SHIFT_LIMIT, or the node would
// pass MAX_LOAD, the node is rebuilt (refitted, grown, or cut into several nodes), read from its
// own slots: the rebuild holds the old node and the new ones at its peak, no copy of the keys
// (a full node split short of memory for two new nodes lays its lower half out again in its own
// block, splitInPlace: the old node and one new one at the peak).
// A node is fitted so that its keys fill all but its last TAIL slots: keys later set past its
// last key go there instead of running off the end. Deleting shifts the following keys left
// while they sit right of their home (backward-shift deletion); it needs no memory (a node left
// under 1/16 full is rebuilt smaller when memory allows, else kept; the last node, once of the
// smallest size, stays when it empties, so taking and releasing offsets in an empty index
// allocates nothing). After a rebuild the router refills the rebuilt node's buckets and shifts
// the later ones when the node count changed (routeReplace); resizing it is best effort.
import { beginBestEffort, endBestEffort, halloc, hfree, hblock_size, moveToSmaller } from './heap';
import { putU32 } from './scratch';
import { OK, NONE, OUT_OF_MEMORY } from './status';

/** The gap marker. Never an offset (offsets are < n ≤ 2^64 − 1). */
const EMPTY: u64 = 0xffffffffffffffff;
/** lastGap when the remembered key was not just inserted. */
const NO_GAP: u32 = 0xffffffff;

// ── header ─────────────────────────────────────────────────────────────────────────────────
const T_NODES: usize = 0; //  u32 nodes in use (≤ dirCap)
const T_DIRCAP: usize = 4; // u32 directory capacity in entries (0 exactly when dir = 0)
const T_DIR: usize = 8; //    u32 directory block
const T_ROUTE: usize = 12; // u32 router block: 2^bits + 1 u32 node numbers, or 0 (no router)
const T_COUNT: usize = 16; // u64 keys in all nodes
const T_RBITS: usize = 24; // u32 router bits (0 exactly when route = 0)
const HEADER_SIZE: usize = 32;

// ── directory entries (one per node) ───────────────────────────────────────────────────────
const ENTRY_BITS: usize = 5; // 32 bytes
const N_FENCE: usize = 0; //  u64 smallest key the node may hold (node 0: 0)
const N_BASE: usize = 8; //   u64 interpolation origin (the node's smallest key when it was built)
const N_MUL: usize = 16; //  u32 slots per unit of (key − base) >> sh, times 2^32
const N_SLOTS: usize = 20; // u32 slot block: 2^lg u64
const N_COUNT: usize = 24; // u16 keys in the node
const N_LG: usize = 26; //    u8 log2 of its slot count
const N_SH: usize = 27; //    u8 right shift of (key − base) before the multiplication
const N_BLOCK: usize = 28; // u32 in entry 64·b only: Σ cnt of nodes 64·b .. 64·b + 63
/**
 * The slots a node of 2^lg slots holds keys in: all of them up to 2^(CHUNKED_LG − 1); in larger
 * nodes the last ⌈2^lg / 512⌉ hold instead one count per CHUNK_SLOTS slots (S7), a u8 each.
 */
// @ts-ignore: decorator
@inline function keySlotsFor(lg: u32): u32 {
  const all: u32 = 1 << lg;
  return lg < CHUNKED_LG ? all : all - ((all + 511) >>> 9);
}
/** Slots per chunk of a chunked node, and the log2 of the smallest node that keeps chunk counts. */
const CHUNK_BITS: u32 = 6;
const CHUNK_SLOTS: u32 = 1 << CHUNK_BITS;
const CHUNKED_LG: u32 = 7;
/** Nodes per block of the block sums (S6). */
const BLOCK_BITS: u32 = 6;
const DIR_MIN_CAP: u32 = 4;
/** The router never has more than 2^ROUTE_MAX_BITS buckets (256 KiB). */
const ROUTE_MAX_BITS: u32 = 16;

// ── node sizes ─────────────────────────────────────────────────────────────────────────────
const MIN_LG: u32 = 3; //   8 slots
const MAX_LG: u32 = 13; //  8,192 slots = 64 KiB
/** The block of a node of the largest size, in bytes. */
export const SINGLES_LARGEST_BLOCK: usize = <usize>8 << MAX_LG;
/** A node is rebuilt before it holds more than 4/5 of its slots. */
const MAX_LOAD_NUM: u32 = 4;
const MAX_LOAD_DEN: u32 = 5;
/** Built nodes hold at most 7/10 of their slots: the keys a full-size node takes in a bulk build. */
const BUILD_KEYS: u32 = ((<u32>1 << MAX_LG) * 7) / 10; // 5,734
/** A node with fewer keys than 1/SHRINK_BELOW of its slots is rebuilt smaller. */
const SHRINK_BELOW: u32 = 16;
/** Longest walk from a home slot before the node is rebuilt instead. */
const WALK_LIMIT: u32 = 64;
/**
 * Longest shift of an insert (slots moved right to the next gap) before the node is rebuilt
 * instead. Larger than WALK_LIMIT: a shift moves keys only one slot each, and a rebuild of the
 * same keys would lay the same cluster out again (measured: with the shift bound at 64, one set
 * in a thousand rebuilt a whole node at 10^6 random keys).
 */
const SHIFT_LIMIT: u32 = 1024;
/** Slots left after the last key of a freshly built node (at most 1/8 of the node). */
const TAIL: u32 = 32;

// ── validate() codes (the caller adds its own offset) ─────────────────────────────────────
/** 1: a fence out of order, or node 0's fence is not 0. */
export const SINGLES_BAD_FENCE: i32 = 1;
/** 2: keys out of order in a node, or a key outside its node's fences. */
export const SINGLES_UNSORTED: i32 = 2;
/** 3: a key left of its home slot, or a gap between its home and its slot. */
export const SINGLES_BAD_PLACE: i32 = 3;
/** 4: a node's count differs from its occupied slots, a node is empty, or the total is wrong. */
export const SINGLES_BAD_COUNT: i32 = 4;
/** 5: a router bucket names a node that does not hold the bucket's first key. */
export const SINGLES_BAD_ROUTER: i32 = 5;
/** 6: a block sum differs from the sum of its nodes' counts (S6). */
export const SINGLES_BAD_BLOCK_SUM: i32 = 6;
/** 7: a chunk count differs from the keys in its chunk's slots (S7). */
export const SINGLES_BAD_CHUNK_COUNT: i32 = 7;

// ── field access ───────────────────────────────────────────────────────────────────────────
// @ts-ignore: decorator
@inline function nodesOf(t: usize): u32 { return load<u32>(t + T_NODES); }
// @ts-ignore: decorator
@inline function dirOf(t: usize): usize { return <usize>load<u32>(t + T_DIR); }
// @ts-ignore: decorator
@inline function entry(t: usize, p: u32): usize { return dirOf(t) + (<usize>p << ENTRY_BITS); }
// @ts-ignore: decorator
@inline function slotsOf(e: usize): usize { return <usize>load<u32>(e + N_SLOTS); }
// @ts-ignore: decorator
@inline function blockSlotsOf(e: usize): u32 { return <u32>1 << <u32>load<u8>(e + N_LG); }
// @ts-ignore: decorator
@inline function capOf(e: usize): u32 { return keySlotsFor(<u32>load<u8>(e + N_LG)); }
// @ts-ignore: decorator
@inline function chunkedNode(e: usize): bool { return <u32>load<u8>(e + N_LG) >= CHUNKED_LG; }
/** A chunked node's chunk counts: u8 per CHUNK_SLOTS slots, after its key slots. */
// @ts-ignore: decorator
@inline function chunksOf(e: usize): usize { return slotsOf(e) + (<usize>capOf(e) << 3); }
// @ts-ignore: decorator
@inline function cntOf(e: usize): u32 { return <u32>load<u16>(e + N_COUNT); }
// @ts-ignore: decorator
@inline function slot(s: usize, i: u32): u64 { return load<u64>(s + (<usize>i << 3)); }
// @ts-ignore: decorator
@inline function blockAt(t: usize, p: u32): usize { return entry(t, p & ~((<u32>1 << BLOCK_BITS) - 1)) + N_BLOCK; }

/** Sums the blocks again from the one holding node p (after nodes from p on moved or changed). */
function resumBlocks(t: usize, p: u32): void {
  const nodes = nodesOf(t);
  const size: u32 = 1 << BLOCK_BITS;
  for (let b = p & ~(size - 1); b < nodes; b += size) {
    const end = b + size < nodes ? b + size : nodes;
    let c: u32 = 0;
    for (let q = b; q < end; q++) c += cntOf(entry(t, q));
    store<u32>(entry(t, b) + N_BLOCK, c);
  }
}

/**
 * The home slot of x in a node of `cap` slots fitted with (base, mul, sh): ⌊((x − base) >> sh) ·
 * mul / 2^32⌋, clamped to [0, cap − 1]. Integer arithmetic (q < 2^32 and mul < 2^32, so the
 * product fits u64), monotone in x.
 */
// @ts-ignore: decorator
@inline function homeOf(x: u64, base: u64, mul: u32, sh: u32, cap: u32): u32 {
  if (x <= base) return 0;
  const q = (x - base) >>> <u64>sh;
  if (q >>> 32 != 0) return cap - 1;
  const h = <u32>((q * <u64>mul) >>> 32);
  return h < cap ? h : cap - 1;
}

// @ts-ignore: decorator
@inline function home(e: usize, x: u64): u32 {
  return homeOf(x, load<u64>(e + N_BASE), load<u32>(e + N_MUL), <u32>load<u8>(e + N_SH), capOf(e));
}

/**
 * The last node whose fence ≤ x (node 0 has fence 0, so any x has one). The router narrows it
 * to the nodes that overlap x's bucket (one or two for evenly spread keys), then a branch-free
 * search of those.
 */
// @ts-ignore: decorator
@inline function findNode(t: usize, x: u64): u32 {
  const base = dirOf(t);
  const route = <usize>load<u32>(t + T_ROUTE);
  let first: u32 = 0;
  let last = nodesOf(t) - 1;
  if (route != 0) {
    const at = route + (<usize>(x >>> (64 - <u64>load<u32>(t + T_RBITS))) << 2);
    first = load<u32>(at);
    last = load<u32>(at, 4);
  }
  let at = base + (<usize>first << ENTRY_BITS);
  let len = last - first + 1;
  while (len > 1) {
    const half = len >>> 1;
    const mid = at + (<usize>half << ENTRY_BITS);
    at = select<usize>(mid, at, load<u64>(mid + N_FENCE) <= x);
    len -= half;
  }
  return <u32>((at - base) >>> ENTRY_BITS);
}

// Result of `seek`: the slot where x is or would go (the first slot ≥ home(x) holding a key ≥ x
// or EMPTY; = cap when the walk ran off the end).
let seekAt: u32 = 0;

/** Walks from home(x) over smaller keys (S3); true when x is at seekAt. */
// @ts-ignore: decorator
@inline function seek(e: usize, x: u64): bool {
  const s = slotsOf(e);
  const cap = capOf(e);
  let i = home(e, x);
  let k = slot(s, i);
  while (k < x) { //  EMPTY > every key: a gap ends the walk
    if (++i == cap) break;
    k = slot(s, i);
  }
  seekAt = i;
  return k == x;
}

// The last key looked up or inserted (module globals): where it is or would go, so that the next
// operation on that same key skips findNode and seek. A take is nextFree's lookup and then a set
// of the same offset, and a release often clears the offset just taken: each would otherwise
// repeat the lookup the operation before it made. Only insertAt changes the set and keeps it
// (the key it inserts is then at its slot); every other change (a remove, a rebuild, a bulk
// build, freeing) forgets it first, since keys or nodes may have moved.
let lastSet: usize = 0; // 0: nothing remembered
let lastKey: u64 = 0;
let lastNode: u32 = 0;
let lastSlot: u32 = 0;
let lastFound = false;
// When the remembered key is the one insertAt just put: the gap its shift filled (the keys it
// found at lastSlot .. lastGap − 1 moved one slot right), so that removing that key again (a
// release of the offset just taken) moves them back without asking each key for its home.
// NO_GAP otherwise.
let lastGap: u32 = NO_GAP;

// @ts-ignore: decorator
@inline function forget(): void {
  lastSet = 0;
}

// @ts-ignore: decorator
@inline function remember(t: usize, x: u64, p: u32, i: u32, found: bool): void {
  lastGap = NO_GAP;
  lastSet = t;
  lastKey = x;
  lastNode = p;
  lastSlot = i;
  lastFound = found;
}

// Result of `locate`: the node x belongs in.
let locatedNode: u32 = 0;

/**
 * findNode and seek, or their answer for the last key looked up or inserted: x's node into
 * locatedNode, its slot (or where it would go) into seekAt; true when x is a key. The set has
 * a node.
 */
// @ts-ignore: decorator
@inline function locate(t: usize, x: u64): bool {
  if (lastSet == t && lastKey == x) {
    //  (a debug check that looks x up again: --noAssert keeps an assert's expression when it writes a global, as seek does)
    if (!ASC_NO_ASSERT) assert(findNode(t, x) == lastNode && seek(entry(t, lastNode), x) == lastFound && seekAt == lastSlot, 'singles: a remembered place is stale');
    locatedNode = lastNode;
    seekAt = lastSlot;
    return lastFound;
  }
  const p = findNode(t, x);
  const found = seek(entry(t, p), x);
  locatedNode = p;
  remember(t, x, p, seekAt, found);
  return found;
}

// ── the set's contract (used by core-as/sparse.ts) ─────────────────────────────────────────

/** An empty set. 0 when out of memory. */
export function singles_new(): usize {
  const t = halloc(HEADER_SIZE);
  if (t == 0) return 0;
  memory.fill(t, 0, HEADER_SIZE);
  return t;
}

/** Returns every block. */
export function singles_free(t: usize): void {
  freeNodes(t);
  hfree(t, HEADER_SIZE);
}

function freeNodes(t: usize): void {
  forget();
  const nodes = nodesOf(t);
  for (let p: u32 = 0; p < nodes; p++) {
    const e = entry(t, p);
    hfree(slotsOf(e), <usize>blockSlotsOf(e) << 3);
  }
  const cap = load<u32>(t + T_DIRCAP);
  if (cap != 0) hfree(dirOf(t), <usize>cap << ENTRY_BITS);
  store<u32>(t + T_NODES, 0);
  store<u32>(t + T_DIRCAP, 0);
  store<u32>(t + T_DIR, 0);
  store<u64>(t + T_COUNT, 0);
  dropRouter(t);
}

// ── the router ─────────────────────────────────────────────────────────────────────────────
//
//   bucket b = the top `bits` bits of a key;  route[b] = the node holding key b·2^(64−bits),
//   route[b + 1] = the node holding the first key of the next bucket (route[2^bits] = last node):
//   every key of bucket b lies in a node numbered route[b] .. route[b + 1].
//
//   keys    0 ───────── 2^62 ───────── 2^63 ───────── 3·2^62 ────────── 2^64
//   nodes   [ 0 ][ 1 ][ 2 ][ 3 ][ 4  ][ 5 ][ 6 ][  7  ][ 8 ][ 9 ][ 10 ][11]
//   route   0              3              6               8               11
//
// After a node is rebuilt, cut or dropped, only the buckets that named it are refilled, and the
// later ones renumbered when the node count changed (routeReplace): a refill of the whole router
// after every rebuild made fills of many small clusters (hundreds of nodes, each rebuilt as it
// grows) ten times slower. Its size follows the node count (2 buckets per node); resizing is
// best effort: a router of any size is right, a small one only costs a longer search, so an
// index never fails for want of router memory.

function dropRouter(t: usize): void {
  const bits = load<u32>(t + T_RBITS);
  if (bits != 0) hfree(<usize>load<u32>(t + T_ROUTE), routeBytes(bits));
  store<u32>(t + T_ROUTE, 0);
  store<u32>(t + T_RBITS, 0);
}

// @ts-ignore: decorator
@inline function routeBytes(bits: u32): usize {
  return ((<usize>1 << bits) + 1) << 2;
}

/** The router size for `nodes` nodes: 2 buckets per node (⌈log2 nodes⌉ + 1 bits), none for one. */
// @ts-ignore: decorator
@inline function routeBitsFor(nodes: u32): u32 {
  const want: u32 = nodes <= 1 ? 0 : 33 - clz<u32>(nodes - 1);
  return want > ROUTE_MAX_BITS ? ROUTE_MAX_BITS : want;
}

/** Whether a router of `bits` should be resized for `want`: grow at once, shrink only when 4× too big (no flapping). */
// @ts-ignore: decorator
@inline function routeResize(bits: u32, want: u32): bool {
  return want > bits || want + 1 < bits;
}

/**
 * After node p was replaced by q nodes (q = 0: dropped; `fence` = the fence node p had): the
 * buckets that named p are refilled from the new nodes, the ones after it move by q − 1. Only
 * those buckets are touched, and none after p's when the count did not change (a node grown or
 * refitted in place), so a rebuild costs the router O(its node's buckets) then. A router of the
 * wrong size for the new count is resized and refilled whole instead.
 */
function routeReplace(t: usize, p: u32, q: u32, fence: u64): void {
  const nodes = nodesOf(t);
  const bits = load<u32>(t + T_RBITS);
  if (nodes == q || routeResize(bits, routeBitsFor(nodes))) {
    routeUpdate(t); //  the first nodes, or a resize
    return;
  }
  if (bits == 0) return;
  const route = <usize>load<u32>(t + T_ROUTE);
  const buckets: u32 = 1 << bits;
  const shift = <u64>(64 - bits);
  //  buckets before the one holding p's fence named nodes before p: unchanged
  for (let b = <u32>(fence >>> shift); b < buckets; b++) {
    const at = route + (<usize>b << 2);
    const old = load<u32>(at);
    if (old < p) continue;
    if (old > p) {
      if (q == 1) break; //  same count: nothing after p moves
      store<u32>(at, old + q - 1);
      continue;
    }
    //  the bucket's first key lay in node p: now in the last new node whose fence ≤ it, or, p
    //  dropped, in the node before p (node 0, which takes fence 0, when p was node 0)
    const low = <u64>b << shift;
    let r: u32 = p > 0 ? p - 1 : 0;
    if (q > 0) {
      r = p;
      while (r + 1 < p + q && load<u64>(entry(t, r + 1) + N_FENCE) <= low) r++;
    }
    store<u32>(at, r);
  }
  store<u32>(route + (<usize>buckets << 2), nodes - 1);
}

/** Resizes (best effort) and refills the router for the current directory. */
function routeUpdate(t: usize): void {
  const nodes = nodesOf(t);
  let bits = load<u32>(t + T_RBITS);
  const want = routeBitsFor(nodes);
  if (routeResize(bits, want)) {
    if (want == 0) dropRouter(t);
    else {
      beginBestEffort();
      const r = halloc(routeBytes(want));
      endBestEffort();
      if (r != 0) {
        dropRouter(t);
        store<u32>(t + T_ROUTE, <u32>r);
        store<u32>(t + T_RBITS, want);
      }
    }
    bits = load<u32>(t + T_RBITS);
  }
  if (bits == 0) return;
  const route = <usize>load<u32>(t + T_ROUTE);
  const buckets: u32 = 1 << bits;
  const shift = <u64>(64 - bits);
  let p: u32 = 0;
  for (let b: u32 = 0; b < buckets; b++) {
    const low = <u64>b << shift;
    while (p + 1 < nodes && load<u64>(entry(t, p + 1) + N_FENCE) <= low) p++;
    store<u32>(route + (<usize>b << 2), p);
  }
  store<u32>(route + (<usize>buckets << 2), nodes - 1);
}

/** Whether the router agrees with the directory (for singles_validate). */
function routeValid(t: usize): bool {
  const bits = load<u32>(t + T_RBITS);
  if ((bits != 0) != (load<u32>(t + T_ROUTE) != 0) || bits > ROUTE_MAX_BITS) return false;
  if (bits == 0) return true;
  const nodes = nodesOf(t);
  const route = <usize>load<u32>(t + T_ROUTE);
  const buckets: u32 = 1 << bits;
  for (let b: u32 = 0; b <= buckets; b++) {
    const p = load<u32>(route + (<usize>b << 2));
    if (p >= nodes) return false;
    if (b == buckets) {
      if (p != nodes - 1) return false;
      continue;
    }
    //  node p holds key b·2^(64−bits): its fence ≤ that key < the next node's fence
    const low = <u64>b << <u64>(64 - bits);
    if (load<u64>(entry(t, p) + N_FENCE) > low) return false;
    if (p + 1 < nodes && load<u64>(entry(t, p + 1) + N_FENCE) <= low) return false;
  }
  return true;
}

export function singles_count(t: usize): u64 {
  return load<u64>(t + T_COUNT);
}

/** Bytes owned: header, router, directory and slot blocks, each at its class size. */
export function singles_bytes(t: usize): usize {
  let b = hblock_size(HEADER_SIZE);
  const cap = load<u32>(t + T_DIRCAP);
  if (cap != 0) b += hblock_size(<usize>cap << ENTRY_BITS);
  const bits = load<u32>(t + T_RBITS);
  if (bits != 0) b += hblock_size(routeBytes(bits));
  const nodes = nodesOf(t);
  for (let p: u32 = 0; p < nodes; p++) b += <usize>blockSlotsOf(entry(t, p)) << 3;
  return b;
}

export function singles_has(t: usize, x: u64): bool {
  if (nodesOf(t) == 0 || x == EMPTY) return false;
  return locate(t, x);
}

/** Adds x. OK, NONE (already there), or OUT_OF_MEMORY with nothing changed. */
export function singles_insert(t: usize, x: u64): i32 {
  if (nodesOf(t) == 0) return rebuild(t, 0, x, true);
  if (locate(t, x)) return NONE;
  const p = locatedNode;
  return insertAt(t, p, entry(t, p), seekAt, x);
}

// Where singles_near left x (for singles_insert_near): its node and slot.
let nearNode: u32 = 0;
let nearSlot: u32 = 0;
/** Set by singles_near: x − 1 / x + 1 is a key. */
export let nearPrev = false;
export let nearNext = false;

/** Whether the node holding keys ≥ fence_p … contains x (one node's search). */
// @ts-ignore: decorator
@inline function inNode(t: usize, p: u32, x: u64): bool {
  return seek(entry(t, p), x);
}

/**
 * Looks x up once and answers for its neighbours too: true when x is a key; otherwise nearPrev /
 * nearNext say whether x − 1 / x + 1 are keys, and singles_insert_near may follow (nothing may
 * change the set in between). x < 2^64 − 1.
 */
export function singles_near(t: usize, x: u64): bool {
  nearPrev = false;
  nearNext = false;
  const nodes = nodesOf(t);
  if (nodes == 0) return false;
  if (locate(t, x)) return true;
  const p = locatedNode;
  const e = entry(t, p);
  const i = seekAt;
  nearNode = p;
  nearSlot = i;
  const s = slotsOf(e);
  const cap = capOf(e);
  // x + 1: the first key ≥ x sits at i; past a gap it could still sit further right only if its
  // home lies beyond i (S3); in the next node when it reaches that node's fence.
  const y = x + 1;
  if (y != EMPTY) {
    if (p + 1 < nodes && y >= load<u64>(entry(t, p + 1) + N_FENCE)) nearNext = inNode(t, p + 1, y);
    else if (i < cap) {
      const k = slot(s, i);
      nearNext = k == y || (k == EMPTY && home(e, y) > i && seek(e, y));
    }
  }
  // x − 1: the largest key < x is the nearest one left of i (keys are sorted), or in node p − 1
  if (x != 0) {
    const w = x - 1;
    if (w < load<u64>(e + N_FENCE)) nearPrev = inNode(t, p - 1, w);
    else {
      let j = i;
      let steps: u32 = 0;
      while (j > 0 && steps < WALK_LIMIT) {
        const k = slot(s, --j);
        if (k != EMPTY) {
          nearPrev = k == w;
          return false;
        }
        steps++;
      }
      //  a long gap: look w up from its home instead
      if (j > 0) nearPrev = seek(e, w);
    }
  }
  return false;
}

/** Adds x where singles_near(t, x) found its place (it returned false). OK or OUT_OF_MEMORY. */
export function singles_insert_near(t: usize, x: u64): i32 {
  if (nodesOf(t) == 0) return rebuild(t, 0, x, true);
  return insertAt(t, nearNode, entry(t, nearNode), nearSlot, x);
}

/** Inserts x at slot i of node p (the first slot ≥ home(x) holding a key > x, EMPTY, or cap). */
function insertAt(t: usize, p: u32, e: usize, i: u32, x: u64): i32 {
  const cap = capOf(e);
  const cnt = cntOf(e);
  if ((cnt + 1) * MAX_LOAD_DEN > cap * MAX_LOAD_NUM || i == cap || i - home(e, x) > WALK_LIMIT) {
    return rebuild(t, p, x, true);
  }
  //  i                j                         i                j
  //  [k5][k6][k7][k8][··]   insert x (< k5)  →  [x ][k5][k6][k7][k8]
  const s = slotsOf(e);
  let j = i;
  while (slot(s, j) != EMPTY) {
    if (++j == cap || j - i > SHIFT_LIMIT) return rebuild(t, p, x, true);
  }
  //  a loop, not memory.copy: the shift is a few slots to the next gap (none in a sparse node),
  //  and memory.copy is a call out of the module, ≈ 5 ns even for no bytes
  for (let k = j; k > i; k--) store<u64>(s + (<usize>k << 3), slot(s, k - 1));
  store<u64>(s + (<usize>i << 3), x);
  store<u16>(e + N_COUNT, <u16>(cnt + 1));
  remember(t, x, p, i, true); //  keys moved right of i only: x's own place is known
  lastGap = j;
  if (chunkedNode(e)) {
    const c = chunksOf(e) + (<usize>j >>> CHUNK_BITS); //  slots i..j − 1 were taken: j is the one newly taken
    store<u8>(c, load<u8>(c) + 1);
  }
  const b = blockAt(t, p);
  store<u32>(b, load<u32>(b) + 1);
  store<u64>(t + T_COUNT, load<u64>(t + T_COUNT) + 1);
  return OK;
}

/** Removes x; false when it was not there. Never allocates. */
export function singles_remove(t: usize, x: u64): bool {
  if (nodesOf(t) == 0 || x == EMPTY) return false;
  if (!locate(t, x)) return false;
  const gap = lastGap; //  (read before forget: a locate that found x by memory left it as it was)
  forget();
  const p = locatedNode;
  const e = entry(t, p);
  const s = slotsOf(e);
  const cap = capOf(e);
  //  backward shift: a following key moves left while that keeps it at or right of its home (S3)
  //  [x ][k5][k6][··]  →  [k5][k6][··][··]     (k5, k6 displaced)
  let k = seekAt;
  if (gap != NO_GAP) {
    //  x is the key insertAt just put: the shift stops where that insert's shift began, at its gap
    //  (each key it moved sits right of its home; the key past the gap, if any, sat beside an empty
    //  slot, so it is at its home, S3), so the moved keys go back as they came
    assert(gap + 1 >= cap || slot(s, gap + 1) == EMPTY || home(e, slot(s, gap + 1)) > gap, 'singles: a remembered gap is stale');
    for (; k < gap; k++) store<u64>(s + (<usize>k << 3), slot(s, k + 1));
  } else {
    const base = load<u64>(e + N_BASE);
    const mul = load<u32>(e + N_MUL);
    const sh = <u32>load<u8>(e + N_SH);
    while (k + 1 < cap) {
      const y = slot(s, k + 1);
      if (y == EMPTY || homeOf(y, base, mul, sh, cap) > k) break;
      store<u64>(s + (<usize>k << 3), y);
      k++;
    }
  }
  store<u64>(s + (<usize>k << 3), EMPTY);
  if (chunkedNode(e)) {
    const c = chunksOf(e) + (<usize>k >>> CHUNK_BITS); //  the keys moved left: slot k is the one freed
    store<u8>(c, load<u8>(c) - 1);
  }
  store<u64>(t + T_COUNT, load<u64>(t + T_COUNT) - 1);
  const cnt = cntOf(e) - 1;
  const nodes = nodesOf(t);
  //  the last node, once small, stays even when empty: a set and clear of one offset in an
  //  empty index then allocate nothing
  if (cnt > 0 || (nodes == 1 && cap == <u32>1 << MIN_LG)) {
    store<u16>(e + N_COUNT, <u16>cnt);
    const b = blockAt(t, p);
    store<u32>(b, load<u32>(b) - 1);
    //  a node emptied to under 1/16 is rebuilt smaller (to 7/10 at most: far from the 4/5 that
    //  grows it again), so memory follows what is taken; best effort, and nothing changes when
    //  its memory cannot be had. One key left counts too (it is under 1/16 of any larger node
    //  but one of 16 slots): a lone node then reaches the smallest size before it empties
    if ((cnt * SHRINK_BELOW < cap || cnt == 1) && cap > <u32>1 << MIN_LG) {
      beginBestEffort();
      rebuild(t, p, 0, false);
      endBestEffort();
    }
    return true;
  }
  // the node is empty: drop it; the next node's fence becomes 0 when it becomes node 0 (S1)
  const fence = load<u64>(e + N_FENCE);
  hfree(s, <usize>blockSlotsOf(e) << 3);
  memory.copy(e, e + (1 << ENTRY_BITS), <usize>(nodes - p - 1) << ENTRY_BITS);
  store<u32>(t + T_NODES, nodes - 1);
  if (nodes == 1) {
    hfree(dirOf(t), <usize>load<u32>(t + T_DIRCAP) << ENTRY_BITS);
    store<u32>(t + T_DIR, 0);
    store<u32>(t + T_DIRCAP, 0);
  } else if (p == 0) {
    store<u64>(entry(t, 0) + N_FENCE, 0);
  }
  resumBlocks(t, p);
  routeReplace(t, p, 0, fence);
  return true;
}

/** The smallest key ≥ from, into `nextKey`; false when there is none. */
export let nextKey: u64 = 0;
export function singles_next(t: usize, from: u64): bool {
  const nodes = nodesOf(t);
  if (nodes == 0) return false;
  let p = findNode(t, from);
  let e = entry(t, p);
  // keys ≥ from sit at or right of home(from) (S3 and monotone home)
  let i = home(e, from);
  while (true) {
    const s = slotsOf(e);
    const cap = capOf(e);
    for (; i < cap; i++) {
      const k = slot(s, i);
      if (k != EMPTY && k >= from) {
        nextKey = k;
        return true;
      }
    }
    if (++p == nodes) break;
    e = entry(t, p);
    i = 0;
  }
  return false;
}

/** Writes every key in ascending order at dst (count × u64). */
export function singles_copy_sorted(t: usize, dst: usize): void {
  const nodes = nodesOf(t);
  for (let p: u32 = 0; p < nodes; p++) {
    const e = entry(t, p);
    const s = slotsOf(e);
    const cap = capOf(e);
    for (let i: u32 = 0; i < cap; i++) {
      const k = slot(s, i);
      if (k != EMPTY) {
        store<u64>(dst, k);
        dst += 8;
      }
    }
  }
}

/** Re-derives S1–S4; 0 or a SINGLES_* code. */
export function singles_validate(t: usize): i32 {
  const nodes = nodesOf(t);
  const dcap = load<u32>(t + T_DIRCAP);
  if (nodes > dcap || (dcap != 0) != (dirOf(t) != 0)) return SINGLES_BAD_COUNT;
  let total: u64 = 0;
  for (let p: u32 = 0; p < nodes; p++) {
    const e = entry(t, p);
    const fence = load<u64>(e + N_FENCE);
    if (p == 0 ? fence != 0 : fence <= load<u64>(entry(t, p - 1) + N_FENCE)) return SINGLES_BAD_FENCE;
    const hasNext = p + 1 < nodes;
    const limit = hasNext ? load<u64>(entry(t, p + 1) + N_FENCE) : 0;
    const s = slotsOf(e);
    const cap = capOf(e);
    let cnt: u32 = 0;
    let have = false;
    let last: u64 = 0;
    let run: u32 = 0; //  occupied slots ending at i (for S3)
    for (let i: u32 = 0; i < cap; i++) {
      const k = slot(s, i);
      if (k == EMPTY) {
        run = 0;
        continue;
      }
      run++;
      if ((have && k <= last) || k < fence || (hasNext && k >= limit)) return SINGLES_UNSORTED;
      const h = home(e, k);
      if (h > i || i - h >= run) return SINGLES_BAD_PLACE;
      have = true;
      last = k;
      cnt++;
    }
    //  only a lone smallest node may be empty
    if ((cnt == 0 && (nodes != 1 || cap != <u32>1 << MIN_LG)) || cnt != cntOf(e)) return SINGLES_BAD_COUNT;
    total += cnt;
    if (chunkedNode(e)) {
      const chunks = chunksOf(e);
      for (let c: u32 = 0; c << CHUNK_BITS < cap; c++) {
        const from = c << CHUNK_BITS;
        const to = from + CHUNK_SLOTS < cap ? from + CHUNK_SLOTS : cap;
        if (<u32>load<u8>(chunks + c) != occupied(s, from, to)) return SINGLES_BAD_CHUNK_COUNT;
      }
    }
  }
  if (total != load<u64>(t + T_COUNT)) return SINGLES_BAD_COUNT;
  if (!routeValid(t)) return SINGLES_BAD_ROUTER;
  const size: u32 = 1 << BLOCK_BITS;
  for (let b: u32 = 0; b < nodes; b += size) {
    let c: u32 = 0;
    for (let q = b; q < b + size && q < nodes; q++) c += cntOf(entry(t, q));
    if (load<u32>(entry(t, b) + N_BLOCK) != c) return SINGLES_BAD_BLOCK_SUM;
  }
  return 0;
}

// ── rank (uniform picks: core-as/sparse.ts) ────────────────────────────────────────────────

export function singles_nodes(t: usize): u32 {
  return nodesOf(t);
}

/** Keys in nodes 0 .. p − 1: the block words before p's block, then the counts before p in it. */
export function singles_before_node(t: usize, p: u32): u64 {
  const size: u32 = 1 << BLOCK_BITS;
  const first = p & ~(size - 1);
  let c: u64 = 0;
  for (let b: u32 = 0; b < first; b += size) c += <u64>load<u32>(entry(t, b) + N_BLOCK);
  for (let q = first; q < p; q++) c += <u64>cntOf(entry(t, q));
  return c;
}

/** Occupied slots in [from, to) of a node's slots. */
function occupied(s: usize, from: u32, to: u32): u32 {
  let c: u32 = 0;
  for (let i = from; i < to; i++) c += <u32>(slot(s, i) != EMPTY);
  return c;
}

/** Σ of the n u8 chunk counts at p (8-aligned): eight at a time, in four 16-bit lanes. */
function sumCounts(p: usize, n: u32): u32 {
  let sum: u64 = 0;
  let i: u32 = 0;
  for (; i + 8 <= n; i += 8) {
    const w = load<u64>(p + <usize>i);
    //  counts ≤ 64: byte pairs ≤ 128 per 16-bit lane, and the four lanes ≤ 512 in the top one
    const pairs = (w & 0x00ff00ff00ff00ff) + ((w >>> 8) & 0x00ff00ff00ff00ff);
    sum += (pairs * 0x0001000100010001) >>> 48;
  }
  for (; i < n; i++) sum += <u64>load<u8>(p + <usize>i);
  return <u32>sum;
}

/** Keys of node e in slots [0, i): the counts of the chunks before i's, then i's chunk up to i. */
function keysBelowSlot(e: usize, i: u32): u32 {
  const s = slotsOf(e);
  if (!chunkedNode(e)) return occupied(s, 0, i);
  const c = i >>> CHUNK_BITS;
  return sumCounts(chunksOf(e), c) + occupied(s, c << CHUNK_BITS, i);
}

/**
 * Keys below x. O(nodes / 64 + 64) for the nodes before x's, then the chunk counts of x's node
 * before x's chunk (at most 128 bytes) and that chunk's slots left of where x is or would go
 * (S3: none ≥ x sits there).
 */
export function singles_rank(t: usize, x: u64): u64 {
  if (load<u64>(t + T_COUNT) == 0) return 0;
  const p = findNode(t, x);
  const e = entry(t, p);
  seek(e, x);
  return singles_before_node(t, p) + <u64>keysBelowSlot(e, seekAt);
}

/** Node p's chunks: 2^lg / CHUNK_SLOTS when it keeps chunk counts, else 1 (all its slots). */
export function singles_node_chunks(t: usize, p: u32): u32 {
  const e = entry(t, p);
  return chunkedNode(e) ? blockSlotsOf(e) >>> CHUNK_BITS : 1;
}

/** Set by singles_chunk_first: the key, its slot and its index in the node. */
export let chunkKey: u64 = 0;
export let chunkSlot: u32 = 0;
export let chunkIndex: u32 = 0;

/**
 * The first key of node p at or after the first slot of chunk c, into chunkKey / chunkSlot, and
 * its in-node index (the keys of the chunks before c) into chunkIndex; false when there is none.
 * Reads the chunk counts before c and the slots from c's first to that key.
 */
export function singles_chunk_first(t: usize, p: u32, c: u32): bool {
  const e = entry(t, p);
  const s = slotsOf(e);
  const cap = capOf(e);
  chunkIndex = c == 0 ? 0 : sumCounts(chunksOf(e), c);
  for (let i = c << CHUNK_BITS; i < cap; i++) {
    const k = slot(s, i);
    if (k != EMPTY) {
      chunkKey = k;
      chunkSlot = i;
      return true;
    }
  }
  return false;
}

/** Node p's key count. */
export function singles_node_count(t: usize, p: u32): u32 {
  return cntOf(entry(t, p));
}

/**
 * Node p's shape, for tests that check how a rebuild laid it out: scratch words 0..5 = the node
 * count, its slots (2^lg), its key slots, its keys, the slot of its last key and that key's home
 * slot under the node's fit (both 0 when it holds none). false when p ≥ the node count.
 */
export function singles_node_shape(t: usize, p: u32): bool {
  const nodes = nodesOf(t);
  if (p >= nodes) return false;
  const e = entry(t, p);
  const s = slotsOf(e);
  let last = capOf(e);
  while (last > 0 && slot(s, last - 1) == EMPTY) last--;
  putU32(0, nodes);
  putU32(1, blockSlotsOf(e));
  putU32(2, capOf(e));
  putU32(3, cntOf(e));
  putU32(4, last > 0 ? last - 1 : 0);
  putU32(5, last > 0 ? home(e, slot(s, last - 1)) : 0);
  return true;
}

/** Set by singles_node_walk: the slot of the first key it wrote (where a later walk may start). */
export let walkSlot: u32 = 0;

/**
 * From slot `from` of node p (a key's slot, or 0), skips `skip` keys, then writes the next keys in
 * ascending order to dst, at most max of them; returns how many. Reads only the slots up to the
 * last key written.
 */
export function singles_node_walk(t: usize, p: u32, from: u32, skip: u32, max: u32, dst: usize): u32 {
  const e = entry(t, p);
  const s = slotsOf(e);
  const cap = capOf(e);
  let w: u32 = 0;
  for (let i = from; i < cap && w < max; i++) {
    const k = slot(s, i);
    if (k == EMPTY) continue;
    if (skip != 0) {
      skip--;
      continue;
    }
    if (w == 0) walkSlot = i;
    store<u64>(dst + (<usize>w << 3), k);
    w++;
  }
  return w;
}

// ── building nodes ─────────────────────────────────────────────────────────────────────────

/** The slot count for m keys: the smallest power of two they fill to at most 7/10. */
function lgFor(m: u32): u32 {
  let lg = MIN_LG;
  while (lg < MAX_LG && <u64>m * 10 > (<u64>7 << lg)) lg++;
  return lg;
}

// The directory being built (module globals: no closures). bFailed: an allocation failed.
let bDir: usize = 0;
let bCap: u32 = 0;
let bNodes: u32 = 0;
let bFailed = false;

// The keys being built from (module globals): slots [0, srcCap) of srcSlots in order, EMPTY
// skipped, and srcX merged in where it belongs while curX. A rebuild reads the old node's own
// slots: a sorted copy beside the old node and the new ones took a block as large as the node.
// srcChunks: the old node's chunk counts (S7), 0 when it keeps none. A bulk build reads its
// sorted keys, a block with no gaps (srcDense). The cursor: curSlot, the next slot to read, and
// curX, whether srcX is still to come.
let srcSlots: usize = 0;
let srcCap: u32 = 0;
let srcChunks: usize = 0;
let srcDense = false;
let srcX: u64 = 0;
let curSlot: u32 = 0;
let curX = false;

/** The next key of the source (there is one: callers read no more keys than it holds). */
// @ts-ignore: decorator
@inline function srcNext(): u64 {
  let i = curSlot;
  let k: u64 = EMPTY;
  while (i < srcCap) {
    k = slot(srcSlots, i);
    if (k != EMPTY) break;
    i++;
  }
  //  k: the next slot's key, or EMPTY (> every key) when the slots ran out
  if (curX && srcX < k) {
    curX = false;
    return srcX;
  }
  curSlot = i + 1;
  return k;
}

/**
 * The slot of the n-th occupied slot from the cursor (n ≥ 1), srcX not counted; srcCap when
 * fewer are left. With chunk counts it passes 64 slots per count byte, so finding the last key
 * of a chunk to build reads the counts and at most two chunks of slots, not all of them.
 */
function nthSlot(n: u32): u32 {
  let i = curSlot;
  let left = n; //  occupied slots still to pass, the n-th included
  if (srcChunks != 0 && i < srcCap) {
    let c = i >>> CHUNK_BITS;
    let end = (c + 1) << CHUNK_BITS;
    //  the cursor's own chunk from the cursor on, then whole chunks by their counts
    let inChunk = occupied(srcSlots, i, end < srcCap ? end : srcCap);
    while (inChunk < left) {
      left -= inChunk;
      i = ++c << CHUNK_BITS;
      if (i >= srcCap) return srcCap;
      inChunk = <u32>load<u8>(srcChunks + <usize>c);
    }
  }
  for (; i < srcCap; i++) {
    if (slot(srcSlots, i) != EMPTY && --left == 0) return i;
  }
  return srcCap;
}

/** The n-th key of the source from the cursor (1 ≤ n ≤ the keys left), the cursor left where it was. */
function srcKey(n: u32): u64 {
  if (srcDense) return slot(srcSlots, curSlot + n - 1);
  const i = nthSlot(n);
  const k = i < srcCap ? slot(srcSlots, i) : EMPTY;
  if (!curX || k < srcX) return k;
  //  srcX is among the first n keys, so the n-th is srcX or the (n − 1)-th slot key, the larger
  if (n == 1) return srcX;
  let j = i - 1; //  n − 1 ≥ 1 occupied slots lie in [curSlot, i)
  while (slot(srcSlots, j) == EMPTY) j--;
  const before = slot(srcSlots, j);
  return before > srcX ? before : srcX;
}

// The fit computed by fitTo (module globals: no tuples): home(k) = ⌊((k − base) >> fitSh) ·
// fitMul / 2^32⌋.
let fitMul: u32 = 0;
let fitSh: u32 = 0;

/**
 * Fits m keys from base to last to a node of 2^lg slots: their span onto the first key slots −
 * tail slots, so the last key lands about one average gap before them, and the tail takes the
 * keys later set past it without running off the end.
 */
function fitTo(m: u32, lg: u32, base: u64, last: u64): void {
  const blockSlots = <u32>1 << lg;
  const cap = keySlotsFor(lg);
  const tail = blockSlots >>> 3 < TAIL ? blockSlots >>> 3 : TAIL;
  const width = last - base + 1; //  ≤ 2^64 − 1: keys are < 2^64 − 1
  const sh: u32 = width >>> 32 != 0 ? 32 - <u32>clz<u64>(width) : 0; //  (width − 1) >> sh < 2^32
  let mulf = m == 1 ? 0.0 : (<f64>(cap - tail) * <f64>m) / ((<f64>m + 1.0) * <f64>width);
  //  per unit of (key − base) >> sh, times 2^32: 2^32 · 2^sh as two factors, since sh reaches 32
  //  (a span of 2^63 or more) and a u64 shift by 64 is a shift by 0
  mulf *= 4294967296.0 * <f64>(<u64>1 << <u64>sh);
  //  (more than one slot per unit is never needed: keys are distinct integers)
  fitMul = mulf >= 4294967295.0 ? 0xffffffff : <u32>mulf;
  fitSh = sh;
}

/**
 * Places the next m keys of the source, the last of them `last`, into a fresh node of 2^lg slots
 * fitted to them, appended to the directory being built; the first gets `fence`, or its own
 * value when firstFence is false. false when the keys are too bunched for one node (a walk would
 * pass WALK_LIMIT, or the last key would fall off the end); sets bFailed when memory ran out.
 * The cursor has moved past the m keys when it returns true; otherwise it is anywhere (the
 * caller puts it back).
 */
function buildNode(m: u32, lg: u32, last: u64, fence: u64, firstFence: bool): bool {
  const blockSlots = <u32>1 << lg;
  const cap = keySlotsFor(lg);
  const base = srcNext();
  fitTo(m, lg, base, last);
  const mul = fitMul;
  const sh = fitSh;
  const s = halloc(<usize>blockSlots << 3);
  if (s == 0) {
    bFailed = true;
    return false;
  }
  memory.fill(s, 0xff, <usize>cap << 3);
  const chunks = s + (<usize>cap << 3); //  (chunked nodes only)
  if (lg >= CHUNKED_LG) memory.fill(chunks, 0, <usize>(blockSlots - cap) << 3);
  let next: u32 = 0; // first slot not yet used
  for (let i: u32 = 0; i < m; i++) {
    const k = i == 0 ? base : srcNext();
    const h = homeOf(k, base, mul, sh, cap);
    const at = h > next ? h : next;
    if (at >= cap || at - h > WALK_LIMIT) {
      hfree(s, <usize>blockSlots << 3);
      return false;
    }
    store<u64>(s + (<usize>at << 3), k);
    if (lg >= CHUNKED_LG) {
      const c = chunks + (<usize>at >>> CHUNK_BITS);
      store<u8>(c, load<u8>(c) + 1);
    }
    next = at + 1;
  }
  if (bNodes == bCap) {
    const ncap = bCap < DIR_MIN_CAP ? DIR_MIN_CAP : bCap << 1;
    const nd = halloc(<usize>ncap << ENTRY_BITS);
    if (nd == 0) {
      hfree(s, <usize>blockSlots << 3);
      bFailed = true;
      return false;
    }
    if (bDir != 0) {
      memory.copy(nd, bDir, <usize>bNodes << ENTRY_BITS);
      hfree(bDir, <usize>bCap << ENTRY_BITS);
    }
    bDir = nd;
    bCap = ncap;
  }
  const e = bDir + (<usize>bNodes << ENTRY_BITS);
  store<u64>(e + N_FENCE, firstFence ? fence : base);
  store<u64>(e + N_BASE, base);
  store<u32>(e + N_MUL, mul);
  store<u8>(e + N_SH, <u8>sh);
  store<u32>(e + N_SLOTS, <u32>s);
  store<u16>(e + N_COUNT, <u16>m);
  store<u8>(e + N_LG, <u8>lg);
  bNodes++;
  return true;
}

/**
 * Builds nodes for the m keys of the source (sorted, distinct) into the directory being built:
 * chunks of at most BUILD_KEYS, each halved until it fits one node (bunched keys end up in small
 * nodes). The first node gets `fence`, the others their first key. false when memory ran out.
 */
function buildAll(m: u32, fence: u64): bool {
  let a: u32 = 0;
  while (a < m) {
    const left = m - a;
    const chunks = (left + BUILD_KEYS - 1) / BUILD_KEYS;
    let size = (left + chunks - 1) / chunks;
    const at = curSlot;
    const x = curX;
    while (!buildNode(size, lgFor(size), srcKey(size), fence, a == 0)) {
      if (bFailed) return false;
      //  a single key always fits (home 0), so this ends
      if (size > 1) size >>>= 1;
      curSlot = at;
      curX = x;
    }
    a += size;
  }
  return true;
}

/** Frees what the builder made so far (after a failure). */
function dropBuilt(): void {
  for (let p: u32 = 0; p < bNodes; p++) {
    const e = bDir + (<usize>p << ENTRY_BITS);
    hfree(slotsOf(e), <usize>blockSlotsOf(e) << 3);
  }
  if (bDir != 0) hfree(bDir, <usize>bCap << ENTRY_BITS);
}

/**
 * An empty directory to build into, from `cap` slots at `slots` (dense: no EMPTY among them;
 * chunks: their chunk counts, or 0), with x merged in when withX.
 */
// @ts-ignore: decorator
@inline function startBuild(slots: usize, cap: u32, chunks: usize, dense: bool, x: u64, withX: bool): void {
  bDir = 0;
  bCap = 0;
  bNodes = 0;
  bFailed = false;
  srcSlots = slots;
  srcCap = cap;
  srcChunks = chunks;
  srcDense = dense;
  srcX = x;
  curSlot = 0;
  curX = withX;
}

/**
 * Replaces node p by nodes built from its keys plus x (withX), refitted and sized for them.
 * With no nodes at all, builds the first node from x. OK, or OUT_OF_MEMORY with nothing changed.
 * At its peak it holds the old node and the new ones, nothing else of their size.
 */
function rebuild(t: usize, p: u32, x: u64, withX: bool): i32 {
  forget();
  const nodes = nodesOf(t);
  let m: u32 = withX ? 1 : 0;
  let e: usize = 0;
  if (nodes != 0) {
    e = entry(t, p);
    m += cntOf(e);
  }
  //  the old node's slots are read as they are (the keys ascend, S2) until the new nodes are in
  if (e != 0) startBuild(slotsOf(e), capOf(e), chunkedNode(e) ? chunksOf(e) : 0, false, x, withX);
  else startBuild(0, 0, 0, false, x, withX);
  const fence: u64 = e != 0 ? load<u64>(e + N_FENCE) : 0;
  if (!buildAll(m, fence)) {
    dropBuilt();
    //  a full node of the largest size, cut in two halves of that size, needs two new nodes
    //  this way; without the memory for them the lower half is laid out again in the old
    //  node's block, which needs one (slower: only when memory is short)
    if (e != 0 && <u32>load<u8>(e + N_LG) == MAX_LG && m > BUILD_KEYS && lgFor((m + 1) >>> 1) == MAX_LG) {
      const r = splitInPlace(t, p, x, withX, m);
      if (r != SPLIT_NOT_IN_PLACE) return r;
    }
    return OUT_OF_MEMORY;
  }
  // room for the extra entries in the directory, before anything changes
  const need = nodes - (nodes != 0 ? 1 : 0) + bNodes;
  const dcap = load<u32>(t + T_DIRCAP);
  if (need > dcap) {
    let ncap = dcap < DIR_MIN_CAP ? DIR_MIN_CAP : dcap;
    while (ncap < need) ncap <<= 1;
    const nd = halloc(<usize>ncap << ENTRY_BITS);
    if (nd == 0) {
      dropBuilt();
      return OUT_OF_MEMORY;
    }
    if (dcap != 0) {
      memory.copy(nd, dirOf(t), <usize>nodes << ENTRY_BITS);
      hfree(dirOf(t), <usize>dcap << ENTRY_BITS);
    }
    store<u32>(t + T_DIR, <u32>nd);
    store<u32>(t + T_DIRCAP, ncap);
  }
  //  node p  →  bNodes new nodes in its place:  [… p−1][p][p+1 …]  →  [… p−1][q0][q1]…[p+1 …]
  if (nodes != 0) {
    const old = entry(t, p);
    hfree(slotsOf(old), <usize>blockSlotsOf(old) << 3);
    memory.copy(old + (<usize>bNodes << ENTRY_BITS), old + (1 << ENTRY_BITS), <usize>(nodes - p - 1) << ENTRY_BITS);
  }
  memory.copy(entry(t, p), bDir, <usize>bNodes << ENTRY_BITS);
  hfree(bDir, <usize>bCap << ENTRY_BITS);
  store<u32>(t + T_NODES, need);
  if (withX) store<u64>(t + T_COUNT, load<u64>(t + T_COUNT) + 1);
  //  one node for one: only its block changed; otherwise the later nodes moved too
  if (bNodes == 1 && nodes != 0) {
    const first = p & ~((<u32>1 << BLOCK_BITS) - 1);
    let c: u32 = 0;
    for (let q = first; q < first + (<u32>1 << BLOCK_BITS) && q < need; q++) c += cntOf(entry(t, q));
    store<u32>(entry(t, first) + N_BLOCK, c);
  } else resumBlocks(t, p);
  routeReplace(t, p, bNodes, fence);
  return OK;
}

/** splitInPlace's answer when the lower half is too bunched to be laid out in place. */
const SPLIT_NOT_IN_PLACE: i32 = -1;

/**
 * Cuts node p, a node of the largest size with m − 1 keys, plus x (withX), in two: the upper
 * ⌊m / 2⌋ keys go to a new node (or several, when bunched), the lower ⌈m / 2⌉ stay in p's block,
 * refitted to themselves and laid out again there. At its peak it holds the old node and the new
 * one, where a split into two fresh nodes holds the old one and two of its size; it makes the
 * same nodes, but with three passes over the lower half instead of one (a split took 1.33–1.37
 * times as long), so rebuild() takes this way only when the two fresh nodes cannot be had. OK,
 * OUT_OF_MEMORY with nothing changed, or SPLIT_NOT_IN_PLACE (nothing changed) when the lower
 * half does not fit a node (a walk would pass WALK_LIMIT).
 *
 *   key slots of p            lower keys ■, upper keys □ (already copied to the new node),
 *                             · empty or left over
 *   ■ ■ · ■ ■ ■ · · ■ □ □ · □ □ □ · □      p's keys as they were
 *   · · · · · · · · · · · · ■ ■ ■ ■ ■ ■    1. the lower keys moved to the end, in order (each
 *                                              moves right: nothing unread is overwritten)
 *   ■ · ■ · ■ · ■ · ■ · ■ · · · · · · ·    2. each placed at its new home or the first free
 *                                              slot after, left to right: the i-th of M keys
 *                                              lands at most at slot cap − M + i, where it was
 *                                              read from in step 1 (or, x, just before it)
 */
function splitInPlace(t: usize, p: u32, x: u64, withX: bool, m: u32): i32 {
  const nodes = nodesOf(t);
  const e = entry(t, p);
  const s = slotsOf(e);
  const cap = capOf(e);
  const chunks = chunksOf(e); //  read now: e points into the directory, which may move below
  const lowM = (m + 1) >>> 1;
  startBuild(s, cap, chunks, false, x, withX);
  //  the lower half's fit, and a dry run of its layout (nothing written yet)
  const lowLast = srcKey(lowM);
  const base = srcNext();
  fitTo(lowM, MAX_LG, base, lowLast);
  const mul = fitMul;
  const sh = fitSh;
  let next: u32 = 0;
  for (let i: u32 = 0; i < lowM; i++) {
    const k = i == 0 ? base : srcNext();
    const h = homeOf(k, base, mul, sh, cap);
    const at = h > next ? h : next;
    if (at >= cap || at - h > WALK_LIMIT) return SPLIT_NOT_IN_PLACE;
    next = at + 1;
  }
  //  the cursor now stands on the upper half: the lower keys of p are its slots before lowEnd,
  //  plus x when the dry run took it
  const lowEnd = curSlot;
  const xLow = withX && !curX;
  if (!buildAll(m - lowM, srcKey(1))) {
    dropBuilt();
    return OUT_OF_MEMORY;
  }
  const need = nodes + bNodes;
  const dcap = load<u32>(t + T_DIRCAP);
  if (need > dcap) {
    let ncap = dcap;
    while (ncap < need) ncap <<= 1;
    const nd = halloc(<usize>ncap << ENTRY_BITS);
    if (nd == 0) {
      dropBuilt();
      return OUT_OF_MEMORY;
    }
    memory.copy(nd, dirOf(t), <usize>nodes << ENTRY_BITS);
    hfree(dirOf(t), <usize>dcap << ENTRY_BITS);
    store<u32>(t + T_DIR, <u32>nd);
    store<u32>(t + T_DIRCAP, ncap);
  }
  //  nothing can fail from here on. 1. the lower keys to the end of the key slots, in order
  let r = cap;
  for (let i = lowEnd; i > 0; i--) {
    const k = slot(s, i - 1);
    if (k != EMPTY) store<u64>(s + (<usize>--r << 3), k);
  }
  //  2. each to its place under the new fit, left to right, the gaps emptied
  memory.fill(chunks, 0, <usize>((<u32>1 << MAX_LG) - cap) << 3);
  //  (the cursor set by hand: startBuild would forget the new nodes)
  srcChunks = 0;
  srcX = x;
  curX = xLow;
  curSlot = r;
  next = 0;
  for (let i: u32 = 0; i < lowM; i++) {
    const k = srcNext();
    const h = homeOf(k, base, mul, sh, cap);
    const at = h > next ? h : next;
    //  gaps of a slot or two: stores, not a memory.fill call each
    for (; next < at; next++) store<u64>(s + (<usize>next << 3), EMPTY);
    store<u64>(s + (<usize>at << 3), k);
    const c = chunks + (<usize>at >>> CHUNK_BITS);
    store<u8>(c, load<u8>(c) + 1);
    next = at + 1;
  }
  memory.fill(s + (<usize>next << 3), 0xff, <usize>(cap - next) << 3);
  const e2 = entry(t, p); //  the directory may have moved
  store<u64>(e2 + N_BASE, base);
  store<u32>(e2 + N_MUL, mul);
  store<u8>(e2 + N_SH, <u8>sh);
  store<u16>(e2 + N_COUNT, <u16>lowM);
  //  the new nodes after p:  [… p][p+1 …]  →  [… p][q0]…[p+1 …]
  const after = entry(t, p + 1);
  memory.copy(after + (<usize>bNodes << ENTRY_BITS), after, <usize>(nodes - p - 1) << ENTRY_BITS);
  memory.copy(after, bDir, <usize>bNodes << ENTRY_BITS);
  hfree(bDir, <usize>bCap << ENTRY_BITS);
  store<u32>(t + T_NODES, need);
  if (withX) store<u64>(t + T_COUNT, load<u64>(t + T_COUNT) + 1);
  resumBlocks(t, p);
  routeReplace(t, p, bNodes + 1, load<u64>(e2 + N_FENCE));
  return OK;
}

/**
 * Replaces the contents by the m sorted distinct keys at `keys` (a bulk build: nodes filled to
 * 7/10). true, or false when memory ran out (then nothing changed).
 */
export function singles_build(t: usize, keys: usize, m: u32): bool {
  startBuild(keys, m, 0, true, 0, false);
  if (m != 0 && !buildAll(m, 0)) {
    dropBuilt();
    return false;
  }
  freeNodes(t);
  store<u32>(t + T_DIR, <u32>bDir);
  store<u32>(t + T_DIRCAP, bCap);
  store<u32>(t + T_NODES, bNodes);
  store<u64>(t + T_COUNT, <u64>m);
  resumBlocks(t, 0);
  routeUpdate(t);
  return true;
}

// ── compaction (after a batch of inserts was undone) ───────────────────────────────────────
//
// Inserts split nodes as they fill; removals only drop a node once it is empty, and rebuild it
// smaller below 1/16 full. A batch of inserts undone (a load refused under a memory cap) leaves
// the nodes it split holding the keys from before it, each a fraction of its block: compaction
// gives that memory back. Merging needs no memory, since it runs when none is free: a group of
// neighbouring nodes whose keys fit one node at build load is laid out again in the largest
// block among them (as splitInPlace lays out a half), and the others' blocks are freed.

/**
 * Merges neighbouring nodes whose keys fit one node at build load (BUILD_KEYS), in place; then,
 * best effort, rebuilds nodes far larger than their keys smaller, and shrinks the router and the
 * directory to the node count. Never fails: what cannot be merged or had stays as it was.
 */
export function singles_compact(t: usize): void {
  forget();
  let merged = false;
  for (let p: u32 = 0; p + 1 < nodesOf(t); p++) {
    //  the group p .. q − 1: as many nodes as fit, their largest block able to hold the keys
    const nodes = nodesOf(t);
    let m = cntOf(entry(t, p));
    let q = p + 1;
    while (q < nodes && m + cntOf(entry(t, q)) <= BUILD_KEYS) m += cntOf(entry(t, q++));
    //  r: the first of the largest blocks among them, found again only when the node dropped is
    //  r (its lg then falls each time, so at most MAX_LG − MIN_LG times): a search per node
    //  dropped made a run of small nodes cost the cube of their number
    let r = largestBlock(t, p, q);
    while (q - p >= 2) {
      if (lgFor(m) <= <u32>load<u8>(entry(t, r) + N_LG) && mergeInto(t, p, q, r, m)) {
        merged = true;
        break;
      }
      m -= cntOf(entry(t, --q)); //  too many for the blocks there, or too bunched: one fewer
      if (r == q) r = largestBlock(t, p, q);
    }
  }
  if (merged) {
    resumBlocks(t, 0);
    routeUpdate(t);
  }
  //  nodes left far larger than their keys, rebuilt to the size a build gives them
  beginBestEffort();
  for (let p: u32 = 0; p < nodesOf(t); p++) {
    const e = entry(t, p);
    const lg = <u32>load<u8>(e + N_LG);
    if (lg <= MIN_LG || lgFor(cntOf(e)) >= lg) continue;
    const before = nodesOf(t);
    if (rebuild(t, p, 0, false) == OK) p += nodesOf(t) - before; //  bunched keys may need several
  }
  endBestEffort();
  shrinkDirectory(t);
}

/**
 * Lays out the m keys of nodes p .. q − 1 (q − p ≥ 2) in the block of node r among them, fitted to
 * them, as node p; frees the others' blocks and drops their entries. false (nothing changed) when
 * the keys are too bunched for that block (a walk would pass WALK_LIMIT, or a key fall off its
 * end). Leaves the block sums and the router to the caller.
 *
 *   key slots of r           its keys ■, the others' □ (before r's: ▲, after: ▼)
 *   · ■ · · ■ ■ · · · ■ ·    r's keys as they were
 *   ■ ■ ■ ■ · · · · · · ·    1. left to the start, in order (each moves left)
 *   · · · ▲ ▲ ■ ■ ■ ■ ▼ ▼    2. right to where they stand among all m keys at the end (each moves
 *                               right), the others' keys copied in around them
 *   ▲ · ▲ · ■ ■ · ■ ■ ▼ ▼    3. each to its new home or the first free slot after, left to right:
 *                               the i-th of m keys lands at most at slot cap − m + i, where it
 *                               stands after step 2
 */
function mergeInto(t: usize, p: u32, q: u32, r: u32, m: u32): bool {
  const er = entry(t, r);
  const lg = <u32>load<u8>(er + N_LG);
  const s = slotsOf(er);
  const cap = capOf(er);
  //  the fit, and a dry run of the layout (nothing written yet)
  const base = firstKeyOf(entry(t, p));
  fitTo(m, lg, base, lastKeyOf(entry(t, q - 1)));
  const mul = fitMul;
  const sh = fitSh;
  let next: u32 = 0;
  for (let n = p; n < q; n++) {
    const e = entry(t, n);
    const ns = slotsOf(e);
    const nc = capOf(e);
    for (let i: u32 = 0; i < nc; i++) {
      const k = slot(ns, i);
      if (k == EMPTY) continue;
      const h = homeOf(k, base, mul, sh, cap);
      const at = h > next ? h : next;
      if (at >= cap || at - h > WALK_LIMIT) return false;
      next = at + 1;
    }
  }
  //  nothing can fail from here on. 1. r's keys to the start
  const cr = cntOf(er);
  let w: u32 = 0;
  for (let i: u32 = 0; i < cap; i++) {
    const k = slot(s, i);
    if (k != EMPTY) store<u64>(s + (<usize>(w++) << 3), k);
  }
  //  2. to their place among all m at the end of the key slots, the others' keys around them
  const first = cap - m;
  let before: u32 = 0;
  for (let n = p; n < r; n++) before += cntOf(entry(t, n));
  for (let i = cr; i > 0; i--) store<u64>(s + (<usize>(first + before + i - 1) << 3), slot(s, i - 1));
  w = first;
  for (let n = p; n < q; n++) {
    if (n == r) {
      w += cr;
      continue;
    }
    const e = entry(t, n);
    const ns = slotsOf(e);
    const nc = capOf(e);
    for (let i: u32 = 0; i < nc; i++) {
      const k = slot(ns, i);
      if (k != EMPTY) store<u64>(s + (<usize>(w++) << 3), k);
    }
  }
  //  3. each to its place under the new fit, left to right, the gaps emptied
  const chunked = lg >= CHUNKED_LG;
  const chunks = s + (<usize>cap << 3);
  if (chunked) memory.fill(chunks, 0, <usize>((<u32>1 << lg) - cap) << 3);
  next = 0;
  for (let i: u32 = 0; i < m; i++) {
    const k = slot(s, first + i);
    const h = homeOf(k, base, mul, sh, cap);
    const at = h > next ? h : next;
    for (; next < at; next++) store<u64>(s + (<usize>next << 3), EMPTY);
    store<u64>(s + (<usize>at << 3), k);
    if (chunked) {
      const c = chunks + (<usize>at >>> CHUNK_BITS);
      store<u8>(c, load<u8>(c) + 1);
    }
    next = at + 1;
  }
  memory.fill(s + (<usize>next << 3), 0xff, <usize>(cap - next) << 3);
  //  the others' blocks freed; r's entry, refitted, becomes node p with p's fence
  const fence = load<u64>(entry(t, p) + N_FENCE);
  for (let n = p; n < q; n++) {
    if (n == r) continue;
    const e = entry(t, n);
    hfree(slotsOf(e), <usize>blockSlotsOf(e) << 3);
  }
  if (r != p) memory.copy(entry(t, p), entry(t, r), 1 << ENTRY_BITS);
  const e = entry(t, p);
  store<u64>(e + N_FENCE, fence);
  store<u64>(e + N_BASE, base);
  store<u32>(e + N_MUL, mul);
  store<u8>(e + N_SH, <u8>sh);
  store<u16>(e + N_COUNT, <u16>m);
  //  [… p][p+1 … q−1][q …]  →  [… p][q …]
  const nodes = nodesOf(t);
  memory.copy(entry(t, p + 1), entry(t, q), <usize>(nodes - q) << ENTRY_BITS);
  store<u32>(t + T_NODES, nodes - (q - p - 1));
  return true;
}

/** The first of the nodes p .. q − 1 whose block is the largest among them. */
function largestBlock(t: usize, p: u32, q: u32): u32 {
  let r = p;
  for (let n = p + 1; n < q; n++) if (load<u8>(entry(t, n) + N_LG) > load<u8>(entry(t, r) + N_LG)) r = n;
  return r;
}

/** The smallest key of a node that holds one. */
function firstKeyOf(e: usize): u64 {
  const s = slotsOf(e);
  let i: u32 = 0;
  while (slot(s, i) == EMPTY) i++;
  return slot(s, i);
}

/** The largest key of a node that holds one. */
function lastKeyOf(e: usize): u64 {
  const s = slotsOf(e);
  let i = capOf(e) - 1;
  while (slot(s, i) == EMPTY) i--;
  return slot(s, i);
}

/**
 * A directory with room for 4 times its nodes or more shrinks to room for twice as many (best
 * effort: it stays as it is when a smaller block cannot be had).
 */
function shrinkDirectory(t: usize): void {
  const dcap = load<u32>(t + T_DIRCAP);
  const nodes = nodesOf(t);
  if (dcap <= DIR_MIN_CAP || nodes * 4 > dcap) return;
  let ncap = DIR_MIN_CAP;
  while (ncap < nodes * 2) ncap <<= 1;
  const nd = moveToSmaller(dirOf(t), <usize>dcap << ENTRY_BITS, <usize>ncap << ENTRY_BITS, <usize>nodes << ENTRY_BITS);
  if (nd == 0) return;
  store<u32>(t + T_DIR, <u32>nd);
  store<u32>(t + T_DIRCAP, ncap);
}

// ── what a load of spread keys may need ────────────────────────────────────────────────────
// Keys spread over the whole key space (a random fill, random addresses loaded) reach each node in
// proportion to the keys it holds, so nodes filled together reach 4/5 together: the next keys can
// rebuild many nodes at once, and their cost is far from the bytes per key the index held so far.

/** Standard deviations above the keys a node is expected to receive that it is counted to receive. */
const SPREAD_SIGMAS: f64 = 4;

/**
 * Bytes the nodes may grow by when k more keys, spread as the keys already there are, are
 * inserted: each node counted to receive its share of k (k · its keys / all keys) plus
 * SPREAD_SIGMAS standard deviations and one, grown to the nodes that hold them (one node of the
 * size a rebuild gives it, or largest nodes holding at least half of 4/5 each), the directory grown
 * for the nodes added, and one largest node's block, which a rebuild holds beside the old node.
 * 0 for k = 0 or an index without keys (nothing to say where keys go). Reads only the directory.
 */
export function singles_growth_bound(t: usize, k: u64): f64 {
  const nodes = nodesOf(t);
  const all = load<u64>(t + T_COUNT);
  if (k == 0 || nodes == 0 || all == 0) return 0;
  const fullMax: u32 = (keySlotsFor(MAX_LG) * MAX_LOAD_NUM) / MAX_LOAD_DEN; //  the most a largest node holds
  const halfMax: u32 = fullMax >>> 1; //  the least each half of a split largest node holds
  let grow: f64 = 0;
  let added: u32 = 0;
  for (let p: u32 = 0; p < nodes; p++) {
    const e = entry(t, p);
    const c = cntOf(e);
    const share = (<f64>k * <f64>c) / <f64>all;
    const f = <f64>c + Math.ceil(share + SPREAD_SIGMAS * Math.sqrt(share) + 1);
    if (f * MAX_LOAD_DEN <= <f64>capOf(e) * MAX_LOAD_NUM) continue;
    const old = <f64>(<u32>blockSlotsOf(e) << 3);
    if (f <= <f64>BUILD_KEYS) {
      const lg = lgFor(<u32>f);
      grow += Math.max(0, <f64>(<u32>1 << (lg + 3)) - old);
    } else {
      const parts = Math.max(2, Math.floor(f / <f64>halfMax));
      grow += parts * <f64>SINGLES_LARGEST_BLOCK - old;
      added += <u32>parts - 1;
    }
  }
  const dcap = load<u32>(t + T_DIRCAP);
  if (nodes + added > dcap) {
    let ncap = dcap < DIR_MIN_CAP ? DIR_MIN_CAP : dcap;
    while (ncap < nodes + added) ncap <<= 1;
    grow += <f64>(<usize>ncap << ENTRY_BITS); //  held beside the old directory while it is copied
  }
  return grow + <f64>SINGLES_LARGEST_BLOCK;
}
