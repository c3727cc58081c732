// A DualStackAllocator checks both families before creating either record (CHECK_ALLOCATE): a
// MetaAllocator's check must refuse what its allocate(ip) would refuse before its store call,
// the range's own refusals included, or the pair creates the other family's record and deletes it
// again before answering.
import { describe, expect, it, onTestFinished } from 'vitest';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { DualStackAllocator } from '../adapters/dual-stack.ts';
import { ErrNotReady } from '../adapters/errors.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';
import { rejection } from './helpers.ts';

describe('DualStackAllocator over two MetaAllocators', () => {
  it('allocate answers ErrNotReady without creating the IPv4 record when the IPv6 store has not synced', async () => {
    const source = new InMemoryServiceCIDRs();
    source.addServiceCIDR('kubernetes', ['10.96.0.0/28', 'fd00::/124']);
    const store4 = new FaultyMemoryStore();
    const store6 = new FaultyMemoryStore({ synced: false });
    const pair = new DualStackAllocator(
      new MetaAllocator('IPv4', source, { store: store4 }),
      new MetaAllocator('IPv6', source, { store: store6 }),
    );
    onTestFinished(() => pair.destroy());

    expect(await rejection(pair.allocate(['10.96.0.5', 'fd00::5']))).toBeInstanceOf(ErrNotReady);
    expect({ creates: store4.createCalls + store6.createCalls, deletes: store4.deleteCalls + store6.deleteCalls }).toEqual({
      creates: 0,
      deletes: 0,
    });
  });
});
