// used() is kept in O(1) from the cache's events; an update of a record (onAdd with a previous
// version) must move it only when the allocator labels appear or disappear.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { seededRandom } from '../adapters/random.ts';

const kinds = [
  { name: 'Allocator', make: (store: MemoryStore) => new Allocator('10.2.0.0/24', { store, random: seededRandom(1) }) },
  { name: 'ReferenceAllocator', make: (store: MemoryStore) => new ReferenceAllocator('10.2.0.0/24', { store, random: seededRandom(1) }) },
];

describe.each(kinds)('$name: used() across record updates', ({ make }) => {
  it('re-adding, relabelling and unlabelling a record moves used() exactly', async () => {
    const store = new MemoryStore();
    const a = make(store);
    const labels = allocatorLabels('IPv4');
    store.inject('10.2.0.5', labels);
    expect(a.used()).toBe(1);
    store.inject('10.2.0.5', labels); // an update with the same labels
    store.inject('10.2.0.5', { ...labels, extra: 'x' });
    expect(a.used()).toBe(1);
    store.inject('10.2.0.5', { other: 'controller' }); // labels dropped: no longer counted
    expect(a.used()).toBe(0);
    expect(await a.has('10.2.0.5')).toBe(true); // still a record: still taken
    store.inject('10.2.0.5', labels); // labels back
    expect(a.used()).toBe(1);
    await a.release('10.2.0.5');
    expect(a.used()).toBe(0);
    store.inject('10.2.0.6', { other: 'controller' });
    await a.release('10.2.0.6'); // an unlabelled record's delete does not move used()
    expect(a.used()).toBe(0);
    if (a instanceof Allocator) expect(a.__validate()).toMatchObject({ taken: 0, counted: 0, takenCount: 0 });
    a.destroy();
  });

  it('an unlabelled record is skipped by allocateNext but never counted', async () => {
    const store = new MemoryStore();
    const a = make(store);
    for (let i = 1; i <= 254; i++) if (i !== 77) store.inject(`10.2.0.${i}`, i % 2 ? allocatorLabels('IPv4') : {});
    expect(a.used()).toBe(126); // odd i in 1..253 (127 of them) minus 77
    expect(await a.allocateNext()).toBe('10.2.0.77');
    expect(a.used()).toBe(127);
    if (a instanceof Allocator) expect(a.__validate()).toMatchObject({ taken: 0, counted: 0 });
    a.destroy();
  });
});
