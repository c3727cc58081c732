// A refused or undone bulk operation on a sparse index gives back the run pages it grew into, as
// it gives back singles nodes (test/out-of-memory-refused-load.test.ts): a loadMany refused under
// a memory cap on a sparse IPv4 range or on a /64 holding runs, and a releaseMany whose clears
// split runs until the memory ran out, then were taken back. Each leaves the Range as it was —
// has, used, forEach and validate agree with the addresses it held — and its memory about as it
// was. Memory never shrinks, so each case loads a core of its own (a fresh module graph, a fresh
// WebAssembly instance, below), whose memory starts small: it runs the same alone, in any order,
// and after any other case.
import { beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../adapters/random.ts';
import { type FreshCore, freshCore } from './fresh-core.ts';

type OutOfMemoryError = import('../adapters/errors.ts').OutOfMemoryError;
type Range = import('../adapters/range.ts').Range;

let { OutOfMemoryError, Range, memoryLimit, capAt, randomV4 } = {} as FreshCore; // each case's own, loaded before it
beforeEach(async () => {
  ({ OutOfMemoryError, Range, memoryLimit, capAt, randomV4 } = await freshCore());
});

const KiB = 1024;
const MiB = 1024 * KiB;

/** The core's own bookkeeping below its blocks (docs/memory.md). */
const BOOKKEEPING = 192 * KiB;

/** What `call` threw: an OutOfMemoryError (anything else, or no error, fails the test). */
function refusal(call: () => unknown): OutOfMemoryError {
  try {
    call();
  } catch (e) {
    expect(e).toBeInstanceOf(OutOfMemoryError);
    return e as OutOfMemoryError;
  }
  throw new Error('the call was not refused');
}

/** The Range holds exactly `held`: validate, used, forEach (in any order) and has of each. */
function expectHolds(range: Range, held: readonly string[]): void {
  expect(range.validate().indexed).toBe(held.length);
  expect(range.used()).toBe(held.length);
  const listed: string[] = [];
  range.forEach((ip) => listed.push(ip));
  expect(listed.length).toBe(held.length);
  const want = new Set(held);
  for (const ip of listed) if (!want.has(ip)) expect.fail(`${ip} listed, not held`);
  for (const ip of held) if (!range.has(ip)) expect.fail(`${ip} held, has() says free`);
}

/** The address `o` (1 ≤ o < 2^32) past fd07:2::, canonical (as forEach lists it). */
const v6 = (o: number) => `fd07:2::${o >>> 16 === 0 ? '' : `${(o >>> 16).toString(16)}:`}${(o & 0xffff).toString(16)}`;

describe('a bulk operation refused under a memory cap gives back the run pages it grew into', () => {
  it('a loadMany into a sparse IPv4 /8: the pages its runs split are merged again', () => {
    const range = new Range('10.0.0.0/8', { indexKind: 'sparse' });
    const held = randomV4(1_000_000, 3);
    range.loadMany(held);
    const load = randomV4(1_000_000, 4, new Set(held));
    const lift = capAt(memoryLimit().inUse + BOOKKEEPING + 2 * MiB);
    const inUse = memoryLimit().inUse; // the blocks held aside included
    // 2,000,000 of 2^24 addresses: one in four has a neighbour taken, so runs split pages
    const e = refusal(() => range.loadMany(load));
    expectHolds(range, held);
    expect(memoryLimit().inUse - inUse).toBeLessThan(128 * KiB);
    expect(e.inUse).toBe(memoryLimit().inUse);
    lift();
    range.destroy();
  });

  it('a loadMany into a /64 holding runs: the pages the new runs split are merged again', () => {
    const range = new Range('fd07:2::/64');
    // 150,000 runs of two, ten offsets apart: 670 pages of runs as a bulk load packs them
    const held = Array.from({ length: 300_000 }, (_, i) => v6(10 * (i >>> 1) + (i & 1) + 1));
    range.loadMany(held);
    const lift = capAt(memoryLimit().inUse + BOOKKEEPING + 2 * MiB);
    const inUse = memoryLimit().inUse; // the blocks held aside included
    // a run of two between each two: every page gains runs, and splits
    const load = Array.from({ length: 300_000 }, (_, i) => v6(10 * (i >>> 1) + (i & 1) + 5));
    const e = refusal(() => range.loadMany(load));
    expectHolds(range, held);
    expect(memoryLimit().inUse - inUse).toBeLessThan(128 * KiB);
    expect(e.inUse).toBe(memoryLimit().inUse);
    lift();
    expect(range.loadMany(load)).toBe(300_000); // and with memory, the same load goes through
    range.validate();
    range.destroy();
  });

  it('a releaseMany whose clears split runs until the memory ran out, taken back: the pages they split are merged again', () => {
    const range = new Range('fd07:2::/64');
    // 60,000 runs of five, seven offsets apart: clearing each one's middle splits it in two
    const held = Array.from({ length: 300_000 }, (_, i) => v6(7 * Math.floor(i / 5) + (i % 5) + 1));
    range.loadMany(held);
    const lift = capAt(memoryLimit().inUse + BOOKKEEPING + 512 * KiB);
    const inUse = memoryLimit().inUse; // the blocks held aside included
    const middles = held.filter((_, i) => i % 5 === 2);
    const e = refusal(() => range.releaseMany(middles));
    expect(e.message).not.toMatch(/could not be taken back/);
    expectHolds(range, held);
    expect(memoryLimit().inUse - inUse).toBeLessThan(64 * KiB);
    expect(e.inUse).toBe(memoryLimit().inUse);
    lift();
    expect(range.releaseMany(middles)).toBe(60_000);
    range.validate();
    range.destroy();
  });

  /** A /64 holding 60,000 runs of three set in a random order (pages split as they fill, left about 70 % full), their starts, and an address of it. */
  function halfPackedRange() {
    const range = new Range('fd07:3::/64');
    const random = seededRandom(5);
    const starts = Array.from({ length: 60_000 }, (_, i) => 10 * i + 1);
    for (let i = starts.length - 1; i > 0; i--) {
      const j = random.nextU32() % (i + 1);
      [starts[i], starts[j]] = [starts[j]!, starts[i]!];
    }
    const at = (o: number) => v6(o).replace('fd07:2::', 'fd07:3::');
    for (const s of starts) range.loadMany([at(s), at(s + 1), at(s + 2)]);
    return { range, starts, at };
  }

  it.each(['loadMany', 'allocateMany'])(
    'a refused %s does not count as reached what the compaction packed of the pages it found',
    (method) => {
      const { range, starts, at } = halfPackedRange();
      const lift = capAt(memoryLimit().inUse + BOOKKEEPING + 64 * KiB);
      const inUse = memoryLimit().inUse;
      const e = refusal(() =>
        method === 'loadMany' ? range.loadMany(starts.slice(0, 20_000).map((s) => at(s + 5))) : range.allocateMany(20_000),
      );
      expect(inUse - memoryLimit().inUse).toBeGreaterThan(128 * KiB); // the compaction packed them
      const reached = Number(/the ([\d,]+) bytes \([^)]*\) it reached/.exec(e.message)?.[1]?.replaceAll(',', ''));
      expect(reached).toBeLessThan(64 * KiB + 4 * KiB);
      // 16 bytes or so for each address not reached, not what the packed pages held per address reached
      expect(e.requested!).toBeLessThan(reached + 64 * 20_000);
      expect(e.inUse).toBe(memoryLimit().inUse);
      lift();
      range.destroy();
    },
  );

  it('a refused releaseMany does not count as needed what the compaction packed of the pages it found', () => {
    const { range, starts, at } = halfPackedRange();
    const lift = capAt(memoryLimit().inUse + BOOKKEEPING + 64 * KiB);
    const inUse = memoryLimit().inUse;
    // each middle cleared splits its run: a run more, and a page more for a full page
    const e = refusal(() => range.releaseMany(starts.map((s) => at(s + 1))));
    // compaction packed the pages it found: memory in use went down by far more than the call took
    expect(inUse - memoryLimit().inUse).toBeGreaterThan(128 * KiB);
    // what its clears leave (two isolated addresses each, at most 32 bytes each, and a node of
    // 64 KiB rebuilt), with nothing of the packed pages on top
    expect(e.message).toContain('its clears leave 120,000 addresses isolated and 0 runs more');
    expect(e.requested!).toBeLessThan(120_000 * 32 + 64 * KiB + 64 * KiB);
    expect(e.inUse).toBe(memoryLimit().inUse);
    lift();
    range.destroy();
  });
});
