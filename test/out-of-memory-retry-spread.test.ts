// The README's recipe after an OutOfMemoryError ('limit'): the cap raised by `requested - free`,
// rounded up to 64 KiB, lets the same call through — here with one index alive, a /64 filled with
// random addresses under a cap kept at the memory's size. Its nodes, filled together, grow
// together: a call refused part-way grew some of them (kept, the same call needs them again) and
// the next addresses could cost many times what the index held per address so far, so an estimate
// from that average asked for too little and the same call was refused again. Found by an outside
// tester (a Range of 52,000 addresses, allocateMany(2000) refused, then refused again after the
// raise; a loadMany of 5,000 more at 270,000 refused twice with the same numbers). Its own file: a
// fresh process, whose memory starts small. Memory never shrinks, so each case loads a core of its
// own (a fresh module graph, a fresh WebAssembly instance): it runs the same alone, in any order,
// and after any other case.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../adapters/random.ts';
import { freshCore } from './fresh-core.ts';

/** Rounded up to the 64 KiB steps setMemoryLimit takes. */
const pagesUp = (bytes: number) => Math.ceil(Math.max(0, bytes) / 65536) * 65536;

/** A core of its own (freshCore), and followRecipe on it. */
async function freshCoreWithRecipe() {
  const fresh = await freshCore();
  const { memoryLimit, setMemoryLimit, OutOfMemoryError } = fresh;
  return { ...fresh, followRecipe };

  /**
   * Runs `call` until `done()`, under a cap set at the memory's size; each time it is refused, the
   * cap is raised as the README says, the same call must go through, and the cap is set at the
   * memory's size again. Returns the refusals.
   */
  function followRecipe(call: () => void, done: () => boolean): number {
    setMemoryLimit(memoryLimit().size);
    let refusals = 0;
    while (!done()) {
      let e: unknown;
      try {
        call();
        continue;
      } catch (thrown) {
        e = thrown;
      }
      expect(e).toBeInstanceOf(OutOfMemoryError);
      const { requested, free, limit } = e as InstanceType<typeof OutOfMemoryError>;
      refusals++;
      setMemoryLimit(limit! + pagesUp(requested! - free!));
      expect(() => call(), `refused again after ${refusals} refusals (${(e as Error).message})`).not.toThrow();
      setMemoryLimit(memoryLimit().size); // tight again: the next growth is refused too
    }
    return refusals;
  }
}

describe('a call on a /64 of random addresses refused under a cap, the only index alive', () => {
  it('allocateMany(2000) goes through once the cap is raised by requested - free, wherever it was refused', async () => {
    const { setMemoryLimit, Range, followRecipe } = await freshCoreWithRecipe();
    const range = new Range('fd08:1:1:1::/64', { random: seededRandom(1) });
    const refusals = followRecipe(
      () => range.allocateMany(2000),
      () => range.used() >= 160_000,
    );
    expect(refusals).toBeGreaterThanOrEqual(3);
    expect(range.validate().indexed).toBe(range.used());
    range.destroy();
    setMemoryLimit(Infinity);
  });

  it('loadMany of 5,000 more goes through once the cap is raised by requested - free, wherever it was refused', async () => {
    const { setMemoryLimit, Range, followRecipe } = await freshCoreWithRecipe();
    // drawn here, not by a Range: its memory would be free under the cap for the load
    const random = seededRandom(7);
    const group = () => ((random.nextU32() & 0xffff) | 0x1000).toString(16); // four digits: canonical
    const drawn = new Set<string>();
    while (drawn.size < 300_000) drawn.add(`fd08:1:1:2:${group()}:${group()}:${group()}:${group()}`);
    const pool = [...drawn];
    const range = new Range('fd08:1:1:2::/64');
    let at = 0;
    const refusals = followRecipe(
      () => {
        range.loadMany(pool.slice(at, at + 5000));
        at += 5000;
      },
      () => at >= pool.length,
    );
    expect(refusals).toBeGreaterThanOrEqual(3);
    expect(range.used()).toBe(300_000);
    range.destroy();
    setMemoryLimit(Infinity);
  });
});
