// A sparse index's compaction (FreeIndex.compact(), run after a refused load's undo) merges
// neighbouring singles nodes in place and rebuilds oversized ones: checked against a model of the
// taken offsets — every offset kept, none added, the next free offsets and the invariants as
// before — with memory to spare and with none free at all (the merge must need none), and then
// as the index goes on taking and releasing offsets.
import { afterAll, describe, expect, it } from 'vitest';
import { FreeIndex } from '../adapters/free-index.ts';
import { seededRandom } from '../adapters/random.ts';
import { core, memoryLimit, setMemoryLimit } from '../adapters/wasm.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

/** Every block the core can still hand out, held (sizes from 64 KiB down to 16 bytes). */
function exhaust(): Array<[number, number]> {
  setMemoryLimit(memoryLimit().size);
  const held: Array<[number, number]> = [];
  // every size down to the smallest: blocks of a size have slabs of their own
  for (let size = 64 * 1024; size >= 16; size >>= 1) {
    for (let p = core.buf_alloc(size); p !== 0; p = core.buf_alloc(size)) held.push([p, size]);
  }
  return held;
}

const TWO32 = 2 ** 32;
const hiOf = (k: number) => Math.floor(k / TWO32);
const loOf = (k: number) => k >>> 0;

function check(idx: FreeIndex, model: Set<number>, gone: number[]) {
  expect(idx.validate()).toBe(0);
  expect(idx.count()).toBe(model.size);
  const sorted = [...model].sort((a, b) => a - b);
  const walked: number[] = [];
  let from = 0;
  while (idx.nextSet(hiOf(from), loOf(from))) {
    const k = idx.resultHi * TWO32 + idx.resultLo;
    walked.push(k);
    from = k + 1;
  }
  expect(walked.length).toBe(sorted.length);
  for (let i = 0; i < sorted.length; i++) if (walked[i] !== sorted[i]) expect(walked[i]).toBe(sorted[i]);
  for (const k of sorted) if (!idx.has(hiOf(k), loOf(k))) expect(k).toBe('has');
  for (const k of gone) if (!model.has(k) && idx.has(hiOf(k), loOf(k))) expect(k).toBe('not has');
  for (const k of sorted.slice(0, 2000)) {
    let want = k;
    while (model.has(want)) want++;
    expect(idx.nextFree(hiOf(k), loOf(k), 0, 0, 0xffff, 0xffffffff)).toBe(true);
    const got = idx.resultHi * TWO32 + idx.resultLo;
    if (got !== want) expect(got).toBe(want);
  }
}

describe('a sparse index compacted after a batch of sets was undone', () => {
  for (let seed = 1; seed <= 8; seed++) {
    it(`keeps every offset and gives memory back (seed ${seed})`, () => {
      const rnd = seededRandom(seed);
      const r = (n: number) => Math.floor((rnd.nextU32() / TWO32) * n);
      const N = 2 ** 48;
      const idx = new FreeIndex(0x10000, 0, 'sparse');
      const model = new Set<number>();
      const span = [N, 2 ** 24, 2 ** 18, 60000][seed % 4]!;
      const origin = r(N - span);
      const n0 = [100, 3000, 20000, 6000][r(4)]!;
      // an eighth bunched at the start of the span: nodes too bunched to merge, or rebuilt as several
      const key = () => (rnd.nextU32() % 8 === 0 ? origin + r(Math.min(span, 4096)) : origin + r(span));
      for (let i = 0; i < n0; i++) {
        const k = key();
        if (idx.set(hiOf(k), loOf(k))) model.add(k);
      }
      for (let round = 0; round < 3; round++) {
        const batch: number[] = [];
        const m = [10000, 50000, 120000][r(3)]!;
        for (let i = 0; i < m; i++) {
          const k = origin + r(span);
          if (idx.set(hiOf(k), loOf(k))) batch.push(k);
        }
        for (const k of batch) idx.clear(hiOf(k), loOf(k));
        // some of the old keys go too
        const drop = [...model].filter(() => rnd.nextU32() % 5 === 0);
        for (const k of drop) {
          idx.clear(hiOf(k), loOf(k));
          model.delete(k);
        }
        const before = idx.bytes();
        const tight = (seed + round) % 2 === 0;
        const held = tight ? exhaust() : [];
        idx.compact();
        expect(core.heap_validate()).toBe(0); // a directory shrunk in place, with no memory free
        for (const [p, size] of held) core.buf_free(p, size);
        setMemoryLimit(Infinity);
        expect(idx.bytes()).toBeLessThanOrEqual(before);
        // with memory to rebuild, no more than a freshly built index would hold, give or take
        if (!tight) expect(idx.bytes()).toBeLessThan(4096 + 32 * model.size);
        check(idx, model, batch.slice(0, 5000).concat(drop));
        idx.compact();
        check(idx, model, []);
        // life goes on after compaction
        for (let i = 0; i < 5000; i++) {
          const k = key();
          if (rnd.nextU32() & 1) {
            if (idx.set(hiOf(k), loOf(k))) model.add(k);
          } else if (model.size > 0) {
            const [first] = model;
            const x = rnd.nextU32() & 2 ? k : first!;
            idx.clear(hiOf(x), loOf(x));
            model.delete(x);
          }
        }
        check(idx, model, []);
      }
      idx.destroy();
    }, 120_000);
  }
});

describe('run pages compacted after a batch of sets was undone', () => {
  it('the pages the batch split are merged in place, with no memory free: every run kept, the heap consistent', () => {
    setMemoryLimit(Infinity);
    const idx = new FreeIndex(0x10000, 0, 'sparse');
    const model = new Set<number>();
    const set = (k: number) => {
      expect(idx.set(hiOf(k), loOf(k))).toBe(true);
      model.add(k);
    };
    // 30,000 runs of two, ten offsets apart, set in ascending order: full pages of 256 runs
    for (let i = 0; i < 30_000; i++) {
      set(10 * i);
      set(10 * i + 1);
    }
    const before = idx.bytes();
    // a run of two between each two, in a random order: pages split in halves as they fill
    const rnd = seededRandom(9);
    const batch = Array.from({ length: 30_000 }, (_, i) => 10 * i + 5);
    for (let i = batch.length - 1; i > 0; i--) {
      const j = rnd.nextU32() % (i + 1);
      [batch[i], batch[j]] = [batch[j]!, batch[i]!];
    }
    for (const k of batch) {
      expect(idx.set(hiOf(k), loOf(k))).toBe(true);
      expect(idx.set(hiOf(k + 1), loOf(k + 1))).toBe(true);
    }
    const grown = idx.bytes();
    // undone, last first
    for (let i = batch.length - 1; i >= 0; i--) {
      idx.clear(hiOf(batch[i]! + 1), loOf(batch[i]! + 1));
      idx.clear(hiOf(batch[i]!), loOf(batch[i]!));
    }
    const held = exhaust();
    idx.compact();
    expect(core.heap_validate()).toBe(0);
    for (const [p, size] of held) core.buf_free(p, size);
    setMemoryLimit(Infinity);
    // as full as a bulk build's pages (224 runs where these held 256): 134 pages, not the ~230 split
    expect(grown - before).toBeGreaterThan(300 * 1024);
    expect(idx.bytes()).toBeLessThanOrEqual(Math.ceil(30_000 / 224) * 4096 + 16 * 1024); // and the directory
    check(idx, model, batch);
    idx.destroy();
  });
});
