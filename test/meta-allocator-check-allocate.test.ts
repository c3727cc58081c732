// A DualStackAllocator checks both families before creating either record (CHECK_ALLOCATE): a
// MetaAllocator's check must refuse what its allocate(ip) would refuse before its store call,
// the range's own refusals included, or the pair creates the other family's record and deletes it
// again before answering.
import { describe, expect, it, onTestFinished } from 'vitest';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { DualStackAllocator } from '../adapters/dual-stack.ts';
import { ErrNotReady, InvalidArgumentError } from '../adapters/errors.ts';
import { STRATEGIES } from '../adapters/builtin-strategies.ts';
import type { AllocationStrategy } from '../adapters/strategy.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';
import { rejection, settle } from './helpers.ts';

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

// The pair checks an address on the first ready range in creation order holding it, while a
// MetaAllocator's allocate(ip) under the 'upstream' policy draws among the ready ranges holding
// it. Those ranges share the store, its cache, their readiness and the address; they differ only
// in a call made from inside one range's strategy, which that range refuses. The check asks what
// they answer alike, so its answer is the same whichever range allocate then draws: a call from
// inside a range's strategy is refused by allocate when it draws that range (the IPv4 address,
// taken synchronously, before any record exists) and taken otherwise (the IPv6 address is taken
// after an await, outside the strategy). Before, the check asked that range's own refusal too,
// and refused what allocate would have taken.
describe('DualStackAllocator over MetaAllocators with overlapping ranges, called from inside a range strategy', () => {
  const ranges = ['a', 'b'] as const;
  const cases = (['IPv4', 'IPv6'] as const).flatMap((family) =>
    ranges.flatMap((choosing) => ranges.map((drawn) => [family, choosing, drawn] as const)),
  );
  const DRAW = { a: 0, b: 0xffffffff }; // a nextU32 that makes uniformBelow(2) pick the range

  it.each(cases)(
    "from the strategy of the %s range of ServiceCIDR %s, allocate drawing %s's: the answer allocate gives there",
    async (family, choosing, drawn) => {
      const source = new InMemoryServiceCIDRs();
      source.addServiceCIDR('a', ['10.96.0.0/28', 'fd00::/124']);
      source.addServiceCIDR('b', ['10.96.0.0/24', 'fd00::/120']);
      let pending: Promise<unknown> | undefined;
      let armed = false;
      let pair: DualStackAllocator | undefined;
      const strategy: AllocationStrategy = {
        name: 'calls the pair once, as it chooses',
        forRange(view) {
          const inner = STRATEGIES['lowest-free'].forRange(view);
          return {
            choose(out) {
              if (armed) {
                armed = false;
                pending = settle(pair!.allocate(['10.96.0.5', 'fd00::5']));
              }
              return inner.choose(out);
            },
          };
        },
      };
      // the family's draws: allocateNext's first range (the one choosing), then allocate's range
      const draws = [DRAW[choosing], DRAW[drawn]];
      const random = { nextU32: () => draws.shift() ?? 0 };
      const store4 = new FaultyMemoryStore();
      const store6 = new FaultyMemoryStore();
      const options = (f: 'IPv4' | 'IPv6', store: FaultyMemoryStore) => (f === family ? { store, random, strategy } : { store });
      const meta4 = new MetaAllocator('IPv4', source, options('IPv4', store4));
      const meta6 = new MetaAllocator('IPv6', source, options('IPv6', store6));
      pair = new DualStackAllocator(meta4, meta6);
      onTestFinished(() => pair!.destroy());
      armed = true;
      const own = await (family === 'IPv4' ? meta4 : meta6).allocateNext();
      expect((family === 'IPv4' ? meta4 : meta6).rangeFor(own, false)).toBe(
        choosing === 'a' ? (family === 'IPv4' ? '10.96.0.0/28' : 'fd00::/124') : family === 'IPv4' ? '10.96.0.0/24' : 'fd00::/120',
      );
      expect(pending).toBeDefined();
      const answer = await pending!;
      const names = (s: FaultyMemoryStore) => s.records().map((r) => r.name);
      const taken = [names(store4).includes('10.96.0.5'), names(store6).includes('fd00::5')];
      // refused only by the IPv4 range whose strategy is running, drawn by allocate: nothing created
      const refused = family === 'IPv4' && drawn === choosing;
      if (refused) {
        expect(answer).toBeInstanceOf(InvalidArgumentError);
        expect(taken).toEqual([false, false]);
      } else {
        expect(answer).toEqual({ ips: ['10.96.0.5', 'fd00::5'], IPv4: '10.96.0.5', IPv6: 'fd00::5', families: ['IPv4', 'IPv6'] });
        expect(taken).toEqual([true, true]);
      }
      expect(store4.deleteCalls + store6.deleteCalls).toBe(0); // nothing taken was given back
    },
  );
});
