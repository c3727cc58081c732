// A full singles node split short of memory for two new nodes (splitInPlace, core-as/sparse-singles.ts)
// against a model: random /64 keys in one to four bulk-built nodes, one node filled to its split
// (the new key anywhere, or at either side of the cut), the split made with only some blocks free.
// Each split either succeeds with the same nodes as a split with memory to spare (a twin index)
// or answers OUT_OF_MEMORY with nothing changed; validate() 0, every key found, the count right,
// then after 3,000 sets and clears too.
import { describe, expect, it } from 'vitest';
import { core, KIND_SPARSE, NONE, OK, OUT_OF_MEMORY } from '../adapters/wasm.ts';
import { xorshift } from './helpers.ts';
import { byValue, expectHolds, hiOf, loOf, MAX_N, setMany, shapes, withFree } from './sparse-helpers.ts';

const NODE = 8 * 8192;

/** The singles nodes' sizes: the same nodes as a twin's are the same sizes, in the same order. */
const nodeSizes = (h: number): { slots: number; keys: number }[] => shapes(h).map(({ slots, keys }) => ({ slots, keys }));

const SPARES: number[][] = [
  [NODE, 4096],
  [NODE],
  [NODE, 4096, 4096],
  [NODE / 2, NODE / 2, 4096],
  [NODE, NODE, 4096, 4096],
  [NODE - 4096, 4096],
  [],
];

describe('sparse index: a full node split in place, against a model', () => {
  const seeds = Number(process.env.FUZZ_SEEDS ?? 40);
  let inPlace = 0;
  let refused = 0;
  const from = Number(process.env.FUZZ_FROM ?? 1);
  for (let seed = from; seed < from + seeds; seed++) {
    it(`seed ${seed}`, () => {
      const u32 = xorshift(seed * 7919);
      const r = (): number => u32() / 4294967296;
      const big = (): bigint => (BigInt(Math.floor(r() * 4294967296)) << 32n) | BigInt(Math.floor(r() * 4294967296));
      const h = core.index_new(KIND_SPARSE, hiOf(MAX_N), loOf(MAX_N));
      const twin = core.index_new(KIND_SPARSE, hiOf(MAX_N), loOf(MAX_N));
      try {
        const model = new Set<bigint>();
        const nodes = 1 + Math.floor(r() * 4);
        // bulk: nodes × 5734 keys, gaps ≥ 2 (no runs)
        const bulk = new Set<bigint>();
        const lowEdge = r() < 0.2 ? 0n : r() < 0.2 ? MAX_N - (1n << 40n) : 0n;
        const span = r() < 0.3 ? 1n << BigInt(20 + Math.floor(r() * 44)) : MAX_N - 2n;
        while (bulk.size < nodes * 5734) {
          const room = MAX_N - 2n - lowEdge < span ? MAX_N - 2n - lowEdge : span;
          bulk.add(((big() % room) + lowEdge) & ~1n); // even: no two adjacent
        }
        const sortedBulk = [...bulk].sort(byValue);
        setMany(h, sortedBulk);
        setMany(twin, sortedBulk);
        for (const x of sortedBulk) model.add(x);
        expectHolds(h, model, 'bulk');
        const sh = nodeSizes(h);
        // the target node: keys [lo, hi) of the bulk's node p
        const p = Math.floor(r() * sh.length);
        let before = 0;
        for (let q = 0; q < p; q++) before += sh[q]!.keys;
        const lo = p === 0 ? 0n : sortedBulk[before]!;
        const hi = p + 1 < sh.length ? sortedBulk[before + sh[p]!.keys]! : MAX_N - 1n;
        const bunch = r();
        let bLo = lo;
        let bHi = hi;
        if (bunch < 0.3) {
          // a window of the node's range
          const w = (hi - lo) / BigInt(2 + Math.floor(r() * 50));
          bLo = lo + ((hi - lo - w) * BigInt(Math.floor(r() * 1000))) / 1000n;
          bHi = bLo + w;
        }
        const draw = (): bigint => {
          for (let tries = 0; ; tries++) {
            if (tries > 10000) throw new Error('the window has no free key left to draw');
            const x = (bLo + (big() % (bHi - bLo))) | 1n; // odd: never a bulk key
            if (x < hi && x >= lo && !model.has(x) && !model.has(x - 1n) && !model.has(x + 1n) && x < MAX_N - 1n) return x;
          }
        };
        const target = () => nodeSizes(h).find((n) => n.slots === 8192 && n.keys === 6540);
        let guard = 0;
        while (target() === undefined) {
          const before = nodeSizes(h).length;
          const x = draw();
          expect(core.index_set(h, hiOf(x), loOf(x))).toBe(OK);
          expect(core.index_set(twin, hiOf(x), loOf(x))).toBe(OK);
          model.add(x);
          if (nodeSizes(h).length !== before && nodeSizes(h).every((n) => n.keys < 6000)) return; // cut in several nodes before it filled (bunched keys): no full node to split // split otherwise (bunched): skip
          if (++guard > 3000) return;
        }
        expectHolds(h, model, 'filled');
        let x = draw();
        const nodeKeys = [...model].filter((y) => y >= lo && y < hi).sort(byValue);
        const edge = r();
        if (edge < 0.4 && nodeKeys.length === 6540) {
          const i = edge < 0.1 ? 3269 : edge < 0.2 ? 3270 : edge < 0.3 ? 0 : 6539;
          const a = i === 0 ? lo : nodeKeys[i - 1]!;
          const b = i === 6539 ? hi : nodeKeys[i]!;
          const g = a + (i === 0 ? 0n : 2n);
          if (i === 6539) x = nodeKeys[6539]! + 2n < hi ? nodeKeys[6539]! + 2n : x;
          else if (g + 1n < b && !model.has(g)) x = g;
        }
        if (model.has(x)) x = draw();
        const spare = SPARES[Math.floor(r() * SPARES.length)]!;
        const nodesBefore = nodeSizes(h).length;
        const answer = withFree(spare, () => core.index_set(h, hiOf(x), loOf(x)));
        expect([OK, OUT_OF_MEMORY]).toContain(answer);
        if (answer === OK) {
          model.add(x);
          expect(nodeSizes(h).length).toBeGreaterThan(nodesBefore);
          if (spare.reduce((a, b) => a + b, 0) < 2 * NODE) inPlace++;
          expect(core.index_set(twin, hiOf(x), loOf(x))).toBe(OK);
          expect(nodeSizes(h), 'same nodes as a split with memory').toEqual(nodeSizes(twin));
        } else {
          refused++;
          expect(core.index_has(h, hiOf(x), loOf(x))).toBe(0);
          expect(nodeSizes(h).length).toBe(nodesBefore);
        }
        expectHolds(h, model, `after split (${answer}, spare ${spare})`);
        // go on: sets and clears, near and far
        const keys = [...model];
        for (let i = 0; i < 3000; i++) {
          if (r() < 0.45 && keys.length > 0) {
            const j = Math.floor(r() * keys.length);
            const y = keys[j]!;
            keys[j] = keys[keys.length - 1]!;
            keys.pop();
            if (!model.has(y)) continue;
            expect(core.index_clear(h, hiOf(y), loOf(y))).toBe(OK);
            model.delete(y);
          } else {
            const y = r() < 0.7 ? draw() : big() % (MAX_N - 1n);
            const want = model.has(y) ? NONE : OK;
            expect(core.index_set(h, hiOf(y), loOf(y)), `set ${y}`).toBe(want);
            model.add(y);
            keys.push(y);
          }
        }
        expectHolds(h, model, 'after churn');
        // walk all set offsets in order: same as the model
        const sortedModel = [...model].sort(byValue);
        expect(core.index_count(h)).toBe(sortedModel.length);
      } finally {
        core.index_free(h);
        core.index_free(twin);
      }
    });
  }
  it('the in-place split was taken', () => {
    expect(inPlace).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
