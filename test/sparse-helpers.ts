// What the sparse index's tests share: offsets of a 2^64 − 1 domain as the (hi, lo) words the
// core takes, a bulk set through a raw handle, the shapes of its singles nodes
// (core-as/sparse-singles.ts, read through sparse_singles_node), a run with only some blocks of
// memory free (withFree), random IPv4 addresses (randomV4), and a memory cap that leaves a known
// amount free (capAt).
import { expect } from 'vitest';
import { seededRandom } from '../adapters/random.ts';
import { core, memoryLimit, NONE, OK, scratch, setMemoryLimit } from '../adapters/wasm.ts';

export const MAX_N = (1n << 64n) - 1n;
export const hiOf = (x: bigint): number => Number(x >> 32n);
export const loOf = (x: bigint): number => Number(x & 0xffffffffn);

export const byValue = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
export const sorted = (xs: Iterable<bigint>): bigint[] => [...xs].sort(byValue);

/** The offsets as the (hi, lo) pairs FreeIndex.setMany and index_set_many take. */
export function pairsOf(xs: bigint[]): Uint32Array {
  const p = new Uint32Array(xs.length * 2);
  xs.forEach((x, i) => {
    p[2 * i] = hiOf(x);
    p[2 * i + 1] = loOf(x);
  });
  return p;
}

/** Sets every offset of `xs` in the raw index `h` with one index_set_many, which must set them all. */
export function setMany(h: number, xs: bigint[]): void {
  const p = core.buf_alloc(8 * xs.length);
  new Uint32Array(core.memory.buffer, p, 2 * xs.length).set(pairsOf(xs));
  expect(core.index_set_many(h, p, xs.length)).toBe(xs.length);
  core.buf_free(p, 8 * xs.length);
}

/** The raw index `h` holds exactly `taken`: validate() 0, its count, and each key found. */
export function expectHolds(h: number, taken: Set<bigint>, what = 'the index'): void {
  expect(core.index_validate(h), what).toBe(0);
  expect(core.index_count(h), what).toBe(taken.size);
  for (const x of taken) if (core.index_has(h, hiOf(x), loOf(x)) !== 1) expect.fail(`${what}: lost ${x}`);
}

/** One singles node as sparse_singles_node describes it (nodes: how many the index has). */
export interface Shape {
  nodes: number;
  slots: number;
  keySlots: number;
  keys: number;
  lastSlot: number;
  lastHome: number;
}
/** Node p of the raw index `h`, which must have one. */
export function shape(h: number, p: number): Shape {
  // expect() only on a wrong answer: the model tests read the shapes after most of their steps
  const answer = core.sparse_singles_node(h, p);
  if (answer !== OK) expect(answer, `node ${p}`).toBe(OK);
  const s = scratch();
  return { nodes: s[0]!, slots: s[1]!, keySlots: s[2]!, keys: s[3]!, lastSlot: s[4]!, lastHome: s[5]! };
}
/** Every singles node of the raw index `h`, in key order; there is none past the count node 0 gives. */
export function shapes(h: number): Shape[] {
  const first = shape(h, 0);
  const all = [first];
  for (let p = 1; p < first.nodes; p++) all.push(shape(h, p));
  const past = core.sparse_singles_node(h, first.nodes);
  if (past !== NONE) expect(past, `node ${first.nodes}, past the last`).toBe(NONE);
  return all;
}

/**
 * Runs f with only blocks of the `spare` sizes free and no growth: the blocks are set aside, the
 * heap limited to its current pages, every other free block taken, then the spare ones freed.
 */
export function withFree<T>(spare: number[], f: () => T): T {
  const mine = spare.map((s) => [core.buf_alloc(s), s] as const);
  for (const [p] of mine) if (p === 0) throw new Error('no memory for the spare blocks');
  const limit = core.heap_limit_pages();
  const held: Array<[number, number]> = [];
  try {
    core.heap_set_limit_pages(0);
    for (let size = 1 << 22; size >= 16; size >>= 1) {
      for (let p = core.buf_alloc(size); p !== 0; p = core.buf_alloc(size)) held.push([p, size]);
    }
    for (const [p, s] of mine) core.buf_free(p, s);
    return f();
  } finally {
    for (const [p, s] of held) core.buf_free(p, s);
    core.heap_set_limit_pages(limit);
  }
}

/** `count` distinct random addresses of 10.0.0.0/8 (none its first or last), seeded. */
export function randomV4(count: number, seed: number, not = new Set<string>()): string[] {
  const random = seededRandom(seed);
  const out = new Set<string>();
  while (out.size < count) {
    const x = 1 + (random.nextU32() % (2 ** 24 - 2));
    const a = `10.${x >>> 16}.${(x >>> 8) & 255}.${x & 255}`;
    if (!not.has(a)) out.add(a);
  }
  return [...out];
}

/**
 * The free WASM memory a cap of `cap` bytes leaves beside what is in use now, even where the case
 * grew the memory past `cap` before (the addresses it holds, an index it built to measure and
 * destroyed: memory never shrinks, and a cap cannot go below its size): the cap at `cap` rounded
 * up to 64 KiB, or at the memory's size, and raw core blocks of 64 KiB held aside (counted in use)
 * until no more is free than `cap` less the core's 192 KiB of bookkeeping (docs/memory.md) and
 * what was in use. Most files that use it load a core of their own for each case, whose memory
 * starts small; what it holds aside is then only what that case grew. Returns a function that
 * gives the blocks back and lifts the cap.
 */
export function capAt(cap: number): () => void {
  setMemoryLimit(Math.max(Math.ceil(cap / 65536) * 65536, memoryLimit().size));
  const left = cap - 192 * 1024 - memoryLimit().inUse;
  const held: number[] = [];
  for (let p = 1; p !== 0 && core.heap_bytes_free() > left; ) {
    p = core.buf_alloc(64 * 1024);
    if (p !== 0) held.push(p);
  }
  return () => {
    for (const p of held) core.buf_free(p, 64 * 1024);
    setMemoryLimit(Infinity);
  };
}
