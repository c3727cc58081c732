// A loadMany refused under a memory cap leaves the Range as it was — its addresses, and its memory:
// the nodes its slices split, left mostly empty by the undo, are merged and given back. And what
// OutOfMemoryDetails.requested promises: the cap raised by `requested - free`, rounded up to
// 64 KiB, lets the same load through — on the first refusal and on a later one — and it counts
// every address of the load, not only what the index held per address when it stopped. Found by an
// outside tester (a /64 holding 50,000 random addresses, a 400,000-address load under 4 MiB kept
// about 3.3 MB until destroy()). Memory never shrinks, so each case loads a core of its own (a
// fresh module graph, a fresh WebAssembly instance, below), whose memory starts small: it runs the
// same alone, in any order, and after any other case.
import { beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../adapters/random.ts';
import { type FreshCore, freshCore } from './fresh-core.ts';

type OutOfMemoryError = import('../adapters/errors.ts').OutOfMemoryError;
type Range = import('../adapters/range.ts').Range;

let { OutOfMemoryError, Range, memoryLimit, setMemoryLimit, capAt, randomV4 } = {} as FreshCore; // each case's own, loaded before it
beforeEach(async () => {
  ({ OutOfMemoryError, Range, memoryLimit, setMemoryLimit, capAt, randomV4 } = await freshCore());
});

const KiB = 1024;
const MiB = 1024 * KiB;
/** Rounded up to the 64 KiB steps setMemoryLimit takes. */
const pagesUp = (bytes: number) => Math.ceil(Math.max(0, bytes) / (64 * KiB)) * 64 * KiB;

/** `count` distinct random addresses of the /64 `net` (its four groups, none 0), canonical, seeded. */
function randomV6(net: string, count: number, seed: number, not = new Set<string>()): string[] {
  const random = seededRandom(seed);
  const group = () => ((random.nextU32() & 0xffff) | 0x1000).toString(16); // four digits: canonical as written
  const out = new Set<string>();
  while (out.size < count) {
    const a = `${net}:${group()}:${group()}:${group()}:${group()}`;
    if (!not.has(a)) out.add(a);
  }
  return [...out];
}

/** What loadMany threw: an OutOfMemoryError (anything else, or no error, fails the test). */
function refused(range: Range, ips: string[]): OutOfMemoryError {
  try {
    range.loadMany(ips);
  } catch (e) {
    expect(e).toBeInstanceOf(OutOfMemoryError);
    return e as OutOfMemoryError;
  }
  throw new Error('loadMany was not refused');
}

const families = [
  {
    name: 'IPv6 /64',
    cidr: 'fd07:1:1:1::/64',
    addresses: (n: number, seed: number, not?: Set<string>) => randomV6('fd07:1:1:1', n, seed, not),
  },
  {
    name: 'IPv4 /8, sparse',
    cidr: '10.0.0.0/8',
    addresses: (n: number, seed: number, not?: Set<string>) => randomV4(n, seed, not), // this case's randomV4, loaded below
  },
];

describe('a loadMany refused under a memory cap', () => {
  it('gives back the memory its slices grew the index into: the index holds what it held before', () => {
    const range = new Range('fd07:1:1:1::/64');
    const held = randomV6('fd07:1:1:1', 50_000, 1);
    range.loadMany(held);
    const before = range.snapshot();
    const lift = capAt(4 * MiB); // the load before it may have grown the memory past 4 MiB
    const inUse = memoryLimit().inUse; // the blocks held aside counted before, as after
    const e = refused(range, randomV6('fd07:1:1:1', 400_000, 2, new Set(held)));
    expect(range.snapshot().data).toEqual(before.data); // all or nothing
    expect(range.validate().indexed).toBe(50_000);
    // the split nodes merged and freed: about what the 50,000 addresses held before the load
    expect(memoryLimit().inUse - inUse).toBeLessThan(128 * KiB);
    expect(e.inUse).toBe(memoryLimit().inUse);
    expect(e.message).not.toContain('keeps');
    range.destroy();
    lift();
  });
});

describe('an allocateMany refused under a memory cap', () => {
  it('gives back the memory its takes grew the index into: the index holds what it held before', () => {
    const range = new Range('fd07:1:1:2::/64');
    range.loadMany(randomV6('fd07:1:1:2', 50_000, 5));
    const before = range.snapshot();
    const lift = capAt(4 * MiB); // the load before it may have grown the memory past 4 MiB
    const inUse = memoryLimit().inUse; // the blocks held aside counted before, as after
    let e: unknown;
    try {
      range.allocateMany(1_000_000);
    } catch (thrown) {
      e = thrown;
    }
    expect(e).toBeInstanceOf(OutOfMemoryError);
    expect(range.snapshot().data).toEqual(before.data); // all or nothing
    expect(range.used()).toBe(50_000);
    // the split nodes merged and freed: about what the 50,000 addresses held before the call
    expect(memoryLimit().inUse - inUse).toBeLessThan(128 * KiB);
    expect((e as OutOfMemoryError).inUse).toBe(memoryLimit().inUse);
    range.destroy();
    lift();
  });
});

/**
 * What docs/memory.md promises of `requested` for a load into a sparse index refused part-way: at
 * least 20 bytes for every address of the load, less what the index grew into and keeps (in use
 * already, `inUse` past `inUseBefore`). What the index held per address when the load stopped
 * half-way is well below that: an estimate from it alone still let these loads through, so the
 * recipe below cannot tell.
 */
function expectWholeLoadCounted(e: OutOfMemoryError, addresses: number, inUseBefore: number): void {
  const kept = Math.max(0, e.inUse! - inUseBefore);
  expect(e.requested! + kept, e.message).toBeGreaterThanOrEqual(20 * addresses);
}

describe.each(families)('a loadMany refused under a memory cap ($name)', ({ cidr, addresses }) => {
  it('counts 20 bytes for every address of the load, and needs no more than requested - free, rounded up to 64 KiB, more cap to go through: refused once, or refused again', () => {
    for (const again of [false, true]) {
      const range = new Range(cidr, { indexKind: 'sparse' });
      const held = addresses(50_000, 3);
      range.loadMany(held);
      const load = addresses(400_000, 4, new Set(held));
      const lift = capAt(4 * MiB); // the load before it may have grown the memory past 4 MiB
      const inUse = memoryLimit().inUse;
      let e = refused(range, load);
      expectWholeLoadCounted(e, load.length, inUse);
      if (again) {
        // a cap raised by 64 KiB only: refused again, and the second answer must hold too
        setMemoryLimit(memoryLimit().limit + 64 * KiB);
        e = refused(range, load);
        expectWholeLoadCounted(e, load.length, inUse);
      }
      setMemoryLimit(memoryLimit().limit + pagesUp(e.requested! - e.free!));
      expect(range.loadMany(load)).toBe(400_000);
      expect(range.validate().indexed).toBe(450_000);
      range.destroy();
      lift();
    }
  });
});
