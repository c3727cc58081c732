// How a rebuild of the sparse index's singles (core-as/sparse-singles.ts) lays out its nodes, read
// through sparse_singles_node: after each kind of rebuild (a node grown past 4/5, a node whose
// tail filled with keys set past its last one, a full node cut in two, a node emptied below 1/16)
// the new nodes have the sizes core-as/DESIGN.md states, and each is fitted to its own first and
// last key: the last key's home is where the fit puts it, (key slots − tail) · m / (m + 1) of the
// way along. A rebuild that took the wrong key as the last still yields a valid index (every key
// found, validate() 0) but a worse fit; only these checks see it.
import { afterEach, describe, expect, it } from 'vitest';
import { core, KIND_SPARSE, OK } from '../adapters/wasm.ts';
import { xorshift } from './helpers.ts';
import { expectHolds, hiOf, loOf, MAX_N, type Shape, setMany, shape, shapes, sorted, withFree } from './sparse-helpers.ts';

// The numbers of core-as/sparse-singles.ts that the layout follows.
const MIN_SLOTS = 8;
const MAX_SLOTS = 8192;
const TAIL = 32;
/** The slots for m keys: the smallest power of two they fill to at most 7/10 (lgFor). */
function slotsFor(m: number): number {
  let s = MIN_SLOTS;
  while (s < MAX_SLOTS && m * 10 > 7 * s) s *= 2;
  return s;
}
/** Slots that hold keys: all of them below 128; above, the last ⌈slots / 512⌉ hold chunk counts. */
const keySlotsOf = (slots: number): number => (slots < 128 ? slots : slots - Math.ceil(slots / 512));

/**
 * The home slot of `last` in a node of `slots` slots fitted to m keys from `first` to `last`, as
 * the design states it: the span onto the first key slots − tail slots, the last key about one
 * average gap before them; integer arithmetic on (key − first) >> sh, as the core does it.
 */
function fittedLastHome(first: bigint, last: bigint, m: number, slots: number): number {
  const cap = keySlotsOf(slots);
  const tail = Math.min(slots / 8, TAIL);
  const width = last - first + 1n;
  const sh = width >> 32n !== 0n ? width.toString(2).length - 32 : 0;
  let mulf = m === 1 ? 0 : ((cap - tail) * m) / ((m + 1) * Number(width));
  mulf *= 2 ** (32 + sh);
  const mul = mulf >= 4294967295 ? 0xffffffff : Math.trunc(mulf);
  if (last <= first) return 0;
  const q = (last - first) >> BigInt(sh);
  if (q >> 32n !== 0n) return cap - 1;
  const h = Number((q * BigInt(mul)) >> 32n);
  return h < cap ? h : cap - 1;
}

/** Checks that node p, freshly built from the sorted keys `keys`, is sized and fitted as designed. */
function expectFitted(node: Shape, keys: bigint[], what: string): void {
  const m = keys.length;
  expect(node.keys, `${what}: keys`).toBe(m);
  expect(node.slots, `${what}: slots for ${m} keys`).toBe(slotsFor(m));
  expect(node.lastHome, `${what}: the last key's home`).toBe(fittedLastHome(keys[0]!, keys[m - 1]!, m, node.slots));
}

/** The node of 6,541 keys that a set split: two full-size nodes of its lower and upper halves, each fitted. */
function expectSplitInHalves(h: number, taken: Set<bigint>): void {
  const keys = sorted(taken);
  const nodes = shapes(h);
  expect(nodes.map((n) => [n.slots, n.keys])).toEqual([
    [MAX_SLOTS, 3271],
    [MAX_SLOTS, 3270],
  ]);
  expectFitted(nodes[0]!, keys.slice(0, 3271), 'lower half');
  expectFitted(nodes[1]!, keys.slice(3271), 'upper half');
  expectHolds(h, taken);
}

/** Keys far apart (2^40 + 7 between neighbours), so none joins another into a run. */
const STRIDE = (1n << 40n) + 7n;
const BASE = 1n << 20n;

let handles: number[] = [];
function sparse(): number {
  const h = core.index_new(KIND_SPARSE, hiOf(MAX_N), loOf(MAX_N));
  expect(h).not.toBe(0);
  handles.push(h);
  return h;
}
function set(h: number, taken: Set<bigint>, x: bigint): void {
  expect(core.index_set(h, hiOf(x), loOf(x)), `set ${x}`).toBe(OK);
  taken.add(x);
}
afterEach(() => {
  for (const h of handles) core.index_free(h);
  handles = [];
});

/** A node of 8,192 slots bulk-built with 5,734 keys 2·STRIDE apart (BUILD_KEYS: 7/10 of it). */
function bulkNode(h: number, taken: Set<bigint>): bigint[] {
  const xs = Array.from({ length: 5734 }, (_, i) => BASE + 2n * STRIDE * BigInt(i));
  setMany(h, xs);
  for (const x of xs) taken.add(x);
  expect(shapes(h).map((n) => [n.slots, n.keys])).toEqual([[MAX_SLOTS, 5734]]);
  return xs;
}
/** Keys between the bulk keys (one STRIDE past key i), spread over the node: i = 7k mod 5,733. */
const between = (k: number): bigint => BASE + 2n * STRIDE * BigInt((7 * k) % 5733) + STRIDE;

describe('sparse index: how a singles rebuild fits its nodes', () => {
  it('a node that passes 4/5 of its slots is rebuilt larger, fitted to all its keys, the new one included', () => {
    const h = sparse();
    const taken = new Set<bigint>();
    const u32 = xorshift(0x0ddba11);
    set(h, taken, 1n << 63n);
    let before = shape(h, 0);
    let grown = 0;
    for (let i = 1; i < 6000; i++) {
      set(h, taken, ((BigInt(u32()) << 32n) | BigInt(u32())) % (MAX_N - 1n));
      const all = shapes(h);
      expect(all).toHaveLength(1);
      const now = all[0]!;
      if (now.slots !== before.slots) {
        grown++;
        expectFitted(now, sorted(taken), `after ${taken.size} keys`);
      }
      before = now;
    }
    // 8 → 16 → … → 8,192 slots
    expect(grown).toBe(10);
    expectHolds(h, taken);
  });

  it('keys set in ascending order fill the tail after the last key, then the node is refitted to take the new last key', () => {
    const h = sparse();
    const taken = new Set<bigint>();
    let refits = 0;
    set(h, taken, BASE);
    let before = shape(h, 0);
    for (let i = 1n; i < 3000n; i++) {
      set(h, taken, BASE + STRIDE * i);
      const node = shape(h, 0);
      // a key set past the last one lands right of it; only a rebuild moves the last key left
      // (or into a node of another size)
      if (node.slots !== before.slots || node.lastSlot < before.lastSlot) {
        refits++;
        expectFitted(node, sorted(taken), `after ${taken.size} keys`);
      }
      before = node;
    }
    expect(refits).toBeGreaterThan(50);
    expectHolds(h, taken);
  });

  for (const row of [
    { name: 'the key that fills it belongs to the lower half', last: 0 },
    { name: 'the key that fills it belongs to the upper half', last: 5000 },
  ]) {
    it(`a full node of 8,192 slots is cut into two halves, each fitted to its own keys (${row.name})`, () => {
      const h = sparse();
      const taken = new Set<bigint>();
      bulkNode(h, taken);
      // 4/5 of 8,176 key slots: the 6,541st key splits the node; `row.last` is the index of the
      // bulk key that key follows
      const fill: bigint[] = [];
      for (let k = 0; fill.length < 6540 - 5734; k++) {
        const x = between(k);
        if (x !== BASE + 2n * STRIDE * BigInt(row.last) + STRIDE) fill.push(x);
      }
      for (const x of fill) set(h, taken, x);
      expect(shapes(h).map((n) => [n.slots, n.keys])).toEqual([[MAX_SLOTS, 6540]]);
      set(h, taken, BASE + 2n * STRIDE * BigInt(row.last) + STRIDE);
      expectSplitInHalves(h, taken);
    });
  }

  for (const row of [
    { name: 'the key that fills it in the lower half', last: 0 },
    { name: 'the key that fills it in the upper half', last: 5000 },
  ]) {
    it(`a full node of 8,192 slots splits with one such node of memory free: the lower half is laid out again in its own block (${row.name})`, () => {
      const h = sparse();
      const taken = new Set<bigint>();
      bulkNode(h, taken);
      const fills = BASE + 2n * STRIDE * BigInt(row.last) + STRIDE;
      for (let k = 0; taken.size < 6540; k++) if (between(k) !== fills) set(h, taken, between(k));
      const node = 8 * MAX_SLOTS;
      // one block of the node's size and one of 4 KiB (the builder's small blocks) kept aside,
      // then no growth and every other free block taken: the split has those two and no more
      withFree([node, 4096], () => {
        expect(core.heap_bytes_free()).toBeGreaterThanOrEqual(node + 4096);
        expect(core.heap_bytes_free()).toBeLessThan(2 * node);
        set(h, taken, fills);
      });
      // the same nodes as a split into two fresh ones
      expectSplitInHalves(h, taken);
    });
  }

  it('a node emptied below 1/16 of its slots is rebuilt smaller, fitted to the keys left', () => {
    const h = sparse();
    const taken = new Set<bigint>();
    const xs = bulkNode(h, taken);
    let shrunk = 0;
    let before = shape(h, 0);
    // clear from the top down and from the bottom up in turn, so the keys left span less each time
    for (let i = 0; taken.size > 3; i++) {
      const x = i % 2 === 0 ? xs.pop()! : xs.shift()!;
      expect(core.index_clear(h, hiOf(x), loOf(x))).toBe(OK);
      taken.delete(x);
      const now = shape(h, 0);
      if (now.slots !== before.slots) {
        shrunk++;
        expect(now.slots).toBeLessThan(before.slots);
        // rebuilt to 7/10 at most, far from the 4/5 that would grow it again
        expectFitted(now, sorted(taken), `after clears down to ${taken.size} keys`);
      }
      before = now;
    }
    // 8,192 slots → 1,024 (under 511 keys) → 128 (under 64) → 16 (under 8)
    expect(shrunk).toBe(3);
    expectHolds(h, taken);
  });
});
