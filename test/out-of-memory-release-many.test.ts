// A releaseMany refused under a memory cap, and the README's recipe after it: the cap raised by
// `requested - free`, rounded up to 64 KiB, lets the same call through. Releasing addresses from
// the middle of runs of taken ones needs memory (each clear leaves its neighbours as a run more,
// or as isolated addresses, which a sparse index holds one by one), and `requested` was the
// failing clear's block plus what the clears before it took: a cap raised by that was refused
// again a block further on, as many times as the call had blocks left to take. Found by an
// outside tester. Memory never shrinks, so each case loads a core of its own (a fresh module
// graph, a fresh WebAssembly instance, below), whose memory starts small: it runs the same alone,
// in any order, and after any other case.
import { beforeEach, describe, expect, it } from 'vitest';
import { type FreshCore, freshCore } from './fresh-core.ts';

type OutOfMemoryError = import('../adapters/errors.ts').OutOfMemoryError;

let { OutOfMemoryError, Range, memoryLimit, setMemoryLimit, capAt } = {} as FreshCore; // each case's own, loaded before it
beforeEach(async () => {
  ({ OutOfMemoryError, Range, memoryLimit, setMemoryLimit, capAt } = await freshCore());
});

const KiB = 1024;
/** The core's own bookkeeping below its blocks (docs/memory.md). */
const BOOKKEEPING = 192 * KiB;

/** Rounded up to the 64 KiB steps setMemoryLimit takes. */
const pagesUp = (bytes: number) => Math.ceil(Math.max(0, bytes) / 65536) * 65536;

/** The address `o` (0 ≤ o < 2^32) past fd09::, canonical. */
const v6 = (o: number) => `fd09::${o >>> 16 === 0 ? '' : `${(o >>> 16).toString(16)}:`}${(o & 0xffff).toString(16)}`;

describe('a releaseMany refused under a memory cap goes through once the cap is raised by requested - free', () => {
  it.each([
    // every other address of one run: each clear leaves an isolated address behind it
    ['every other address of one run of 200,000', Array.from({ length: 200_000 }, (_, i) => v6(i + 16)), (i: number) => i % 2 === 1],
    // the middle of runs of three: each clear leaves two isolated addresses (and a run fewer)
    [
      'the middles of 40,000 runs of three',
      Array.from({ length: 120_000 }, (_, i) => v6(5 * Math.floor(i / 3) + (i % 3) + 16)),
      (i: number) => i % 3 === 1,
    ],
    // the middle of runs of five: each clear leaves a run more
    [
      'the middles of 40,000 runs of five',
      Array.from({ length: 200_000 }, (_, i) => v6(7 * Math.floor(i / 5) + (i % 5) + 16)),
      (i: number) => i % 5 === 2,
    ],
    // two runs, the first's clears ascending, the second's descending: the nodes of isolated
    // addresses split from both ends, and hold more per address than one run cleared in order
    [
      'every other address of two runs of 100,000, the second cleared downwards',
      Array.from({ length: 200_000 }, (_, i) => v6(i < 100_000 ? i + 1 : 0xffffffff - (i - 100_000))),
      (i: number) => i % 2 === 1,
    ],
  ])('%s', (_what, held, released) => {
    const range = new Range('fd09::/64');
    range.loadMany(held);
    const lift = capAt(memoryLimit().inUse + BOOKKEEPING + 64 * KiB);
    const ips = held.filter((_, i) => released(i));
    let e: unknown;
    try {
      range.releaseMany(ips);
    } catch (thrown) {
      e = thrown;
    }
    expect(e).toBeInstanceOf(OutOfMemoryError);
    const { requested, free, limit } = e as OutOfMemoryError;
    expect(range.used()).toBe(held.length); // refused: nothing released
    // an estimate of the whole call, said to be one
    expect((e as Error).message).toMatch(
      /needs about [\d,]+ bytes .*\(an estimate: its clears leave [\d,]+ addresses isolated and [\d,]+ runs more/,
    );
    setMemoryLimit(limit! + pagesUp(requested! - free!));
    expect(() => range.releaseMany(ips), `refused again (${(e as Error).message})`).not.toThrow();
    expect(range.used()).toBe(held.length - ips.length);
    expect(range.validate().indexed).toBe(held.length - ips.length);
    range.destroy();
    lift();
  });
});
