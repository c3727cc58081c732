// An Allocator's warm start loads every address its store holds into a new index in one batch.
// Under a WASM memory cap the batch may not fit beside the index (its words in a block rounded
// up to a power of two, then its sorted offsets) where the index alone does: the warm start must
// then load in slices, not fail.
//
// Its own file: vitest runs each file in its own fork, so the core's memory starts empty here and
// the cap below is the only room there is.
import { afterAll, describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { seededRandom } from '../../adapters/random.ts';
import { formatIPv6 } from '../../adapters/address.ts';
import { memoryLimit, setMemoryLimit } from '../../adapters/wasm.ts';
import { allocatorLabels } from '../../adapters/store.ts';

const original = memoryLimit().limit;
afterAll(() => setMemoryLimit(original));

describe('a warm start under a memory cap', () => {
  it('loads in slices where one batch does not fit beside the index', async () => {
    const n = 200_000;
    const store = new MemoryStore();
    const random = seededRandom(3);
    const labels = allocatorLabels('IPv6');
    for (let made = 0; made < n; ) {
      const name = formatIPv6(0x20010db8, 0, random.nextU32(), random.nextU32());
      if (store.getSync(name) !== undefined) continue;
      store.createSync({ name, labels, parentRef: null });
      made++;
    }
    // One batch: 3.2 MB of words (a 4 MiB block), 1.6 MB of sorted offsets (2 MiB) and the
    // index (about 2.3 MB): more than 5 MiB. The index alone, loaded in slices: about 3 MB.
    setMemoryLimit(memoryLimit().size + 5 * 1024 * 1024);
    const a = new Allocator('2001:db8::/64', { store, random: seededRandom(4) });
    expect(a.used()).toBe(n);
    expect(a.validate().indexed).toBe(n);
    const ip = await a.allocateNext();
    expect(store.getSync(ip)).toBeDefined();
    a.destroy();
  });
});
