// What docs/benchmarks.md states of a load that does not fit in one batch under a cap: it
// loads in slices, and the index holds 10.5–19 B per random /64 address — its nodes, filled
// together, split together, near 105,000 addresses and each doubling of that, and just past such
// a split it holds about 19 B — so a cap of 256 KiB (192 of the core's bookkeeping, 64 of working
// room) plus 1.75 times the index one batch builds takes it at any count. Found by an outside tester: at 110,000 addresses, 192 KiB plus 1.5 times
// was refused. Its own file: a fresh process, whose memory starts small.
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../adapters/random.ts';
import { Range } from '../adapters/range.ts';
import { memoryLimit, setMemoryLimit } from '../adapters/wasm.ts';
import { capAt } from './sparse-helpers.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

const KiB = 1024;
/** The core's own bookkeeping below its blocks (docs/memory.md). */
const BOOKKEEPING = 192 * KiB;
/** What a load needs beside the index it builds (docs/benchmarks.md): one 64 KiB node. */
const WORKING_ROOM = 64 * KiB;
const pagesUp = (bytes: number) => Math.ceil(bytes / (64 * KiB)) * 64 * KiB;

/** `count` distinct random addresses of fd09:1:1:1::/64, canonical, seeded. */
function randomV6(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const group = () => ((random.nextU32() & 0xffff) | 0x1000).toString(16); // four digits: canonical
  const out = new Set<string>();
  while (out.size < count) out.add(`fd09:1:1:1:${group()}:${group()}:${group()}:${group()}`);
  return [...out];
}

describe('a load of random /64 addresses into a new Range that does not fit in one batch under the cap', () => {
  // just past the nodes' splits (the worst case measured), far from them, and a small load, which
  // needs the 64 KiB of working room (found by an outside tester: 5,000 addresses were refused
  // under 192 KiB plus 1.75 times)
  it.each([5_000, 110_000, 220_000, 300_000])(
    'of %i addresses goes through under 256 KiB plus 1.75 times the index one batch builds, at most 19.5 B per address',
    (n) => {
      const ips = randomV6(n, n);
      setMemoryLimit(Infinity);
      const whole = new Range('fd09:1:1:1::/64');
      whole.loadMany(ips);
      const oneBatch = whole.indexBytes();
      whole.destroy();
      const cap = pagesUp(BOOKKEEPING + WORKING_ROOM + 1.75 * oneBatch);
      const lift = capAt(cap);
      const range = new Range('fd09:1:1:1::/64');
      try {
        expect(range.loadMany(ips)).toBe(n);
        expect(range.indexBytes() / n).toBeLessThanOrEqual(19.5);
        // the large loads in slices (one batch did not fit), as one at a time; the small one fits
        if (n > 100_000) expect(range.indexBytes()).toBeGreaterThan(oneBatch);
      } finally {
        range.destroy();
        lift();
      }
    },
  );
});
