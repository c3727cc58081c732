// used() is kept in O(1) from the cache's events; an update of a record (onAdd with a previous
// version) must move it only when the allocator labels appear or disappear.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { seededRandom } from '../adapters/random.ts';

const kinds = [
  { name: 'Allocator', make: (store: FaultyMemoryStore) => new Allocator('10.2.0.0/24', { store, random: seededRandom(1) }) },
  {
    name: 'ReferenceAllocator',
    make: (store: FaultyMemoryStore) => new ReferenceAllocator('10.2.0.0/24', { store, random: seededRandom(1) }),
  },
];

describe.each(kinds)('$name: used() across record updates', ({ make }) => {
  it('re-adding, relabelling and unlabelling a record moves used() exactly', async () => {
    const store = new FaultyMemoryStore();
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
    if (a instanceof Allocator) expect(a.validate().indexed).toBe(0);
    a.destroy();
  });

  it('an unlabelled record is skipped by allocateNext but never counted', async () => {
    const store = new FaultyMemoryStore();
    const a = make(store);
    for (let i = 1; i <= 254; i++) if (i !== 77) store.inject(`10.2.0.${i}`, i % 2 ? allocatorLabels('IPv4') : {});
    expect(a.used()).toBe(126); // odd i in 1..253 (127 of them) minus 77
    expect(await a.allocateNext()).toBe('10.2.0.77');
    expect(a.used()).toBe(127);
    if (a instanceof Allocator) a.validate();
    a.destroy();
  });
});

describe('Allocator warm start (the records already in the store, loaded in one bulk call)', () => {
  it.each([
    ['10.20.0.0/20', 3000, '10.20.15.255'], // the IPv4 broadcast: counted, no offset
    ['2001:db8:7:8::/64', 5000, '2001:db8:7:8:0::77'], // a non-canonical spelling: counted, no offset
  ])('%s (%i records): the same index, counts and choices as an allocator that saw them one by one', async (cidr, n, noOffset) => {
    const store = new FaultyMemoryStore();
    const early = new Allocator(cidr, { store, random: seededRandom(5) }); // hears every add as it happens
    const filler = new Allocator(cidr, { store, random: seededRandom(9) });
    const labels = allocatorLabels(cidr.includes(':') ? 'IPv6' : 'IPv4');
    // first, records an allocator must count without an offset (the network address, noOffset),
    // hold without counting (unlabelled) or ignore (not an address); then n allocations
    store.inject(cidr.split('/')[0]!, labels);
    store.inject(noOffset, labels);
    store.inject(cidr.includes(':') ? '2001:db8:7:8:ffff::99' : '10.20.15.99', { other: 'controller' });
    store.inject('not-an-address', labels);
    for (let i = 0; i < n; i++) await filler.allocateNext();
    filler.destroy();
    const late = new Allocator(cidr, { store, random: seededRandom(5) }); // warm start
    expect(late.validate()).toEqual(early.validate());
    late.validate();
    expect(late.used()).toBe(early.used());
    expect(late.used()).toBe(n + 2); // + the network address and noOffset
    expect(late.free()).toBe(early.free());
    // the same draws find the same free addresses
    for (let i = 0; i < 50; i++) {
      const a = await early.allocateNext();
      await early.release(a);
      expect(await late.allocateNext()).toBe(a);
      await late.release(a);
    }
    early.destroy();
    late.destroy();
  });
});
