// An Allocator whose index fell behind its store (writes of other writers it could not record
// under a WASM memory cap) rebuilds the index before its next allocation. Under the same cap, the
// rebuild must work again as soon as the index itself fits, not only once there is room for the
// index and a batch of all its addresses beside it (16 B and more per address).
//
// Its own file: vitest runs each file in its own fork, so the core's memory starts empty here and
// the cap below is the only room there is. Each case destroys its allocator (giving back all it
// took) and the next runs under the same cap.
import { afterAll, describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { seededRandom } from '../../adapters/random.ts';
import { OutOfMemoryError } from '../../adapters/errors.ts';
import { memoryLimit, setMemoryLimit } from '../../adapters/wasm.ts';
import { allocatorLabels } from '../../adapters/store.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

/**
 * 256 KiB more than the core's memory once its first index is made (set by the first case, kept
 * for the others): room for an index of some 60,000 to 80,000 addresses.
 */
let cap = 0;

describe('a rebuild under a memory cap', () => {
  // Where the index falls behind depends on the addresses the other writer draws (62,000 to
  // 80,000 records over writer seeds 5..25), and so does where it works again: several writers.
  it.each([5, 6, 7, 8, 9, 10, 11])(
    'works again once the store is a little smaller than where the index fell behind (writer seed %i)',
    async (seed) => {
      const store = new MemoryStore();
      const a = new Allocator('2001:db8::/64', { store, random: seededRandom(1) });
      if (cap === 0) cap = memoryLimit().size + 256 * 1024;
      setMemoryLimit(cap);
      try {
        const random = seededRandom(seed);
        const group = () => ((random.nextU32() & 0xffff) | 0x1000).toString(16);
        const labels = allocatorLabels('IPv6');
        // Another writer's records, one by one: the allocator's index follows until it runs out of
        // memory, then falls behind, and its next allocateNext cannot rebuild it.
        let failedAt = 0;
        for (let i = 0; failedAt === 0; i++) {
          store.createSync({ name: `2001:db8::${group()}:${group()}:${group()}:${group()}`, labels, parentRef: null });
          if (i % 1000 === 0) {
            try {
              await a.release(await a.allocateNext());
            } catch (e) {
              expect(e).toBeInstanceOf(OutOfMemoryError);
              failedAt = store.records().length;
            }
          }
        }
        // The store shrinks, 1,000 records at a time, until allocateNext works again.
        const names = store.records().map((r) => r.name);
        let worksAt = 0;
        while (worksAt === 0) {
          try {
            await a.release(await a.allocateNext());
            worksAt = store.records().length;
          } catch (e) {
            expect(e).toBeInstanceOf(OutOfMemoryError);
            for (const name of names.splice(0, 1000)) store.deleteSync(name);
          }
        }
        // An index loaded in one batch needed the store at about half the size where it fell behind.
        expect(worksAt).toBeGreaterThan(0.8 * failedAt);
        expect(a.validate().indexed).toBe(store.records().length);
      } finally {
        a.destroy();
        setMemoryLimit(original);
      }
    },
  );
});
