// A MetaAllocator's allocateNext whose store stops being ready during a create that collides, and
// one whose strategy throws an ErrNotReady of its own: the answer is the same on both store paths
// (synchronous operations, or promises only). And a range destroyed by its store's cache as the
// search asks it again, after a collision, whether it has synced.
import { describe, expect, it, onTestFinished } from 'vitest';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { STRATEGIES } from '../adapters/builtin-strategies.ts';
import type { AllocationStrategy } from '../adapters/strategy.ts';
import { Allocator } from '../adapters/allocator.ts';
import { ErrDestroyed, ErrFull, ErrNotReady, NOT_READY_WHY } from '../adapters/errors.ts';
import { FaultyMemoryStore, HookedStore } from './doubles/memory-store-faults.ts';
import { rejection } from './helpers.ts';

/** ServiceCIDRs `names`, the i-th listing 10.(96+i).0.0/28. */
function sourceOf(names: string[]): InMemoryServiceCIDRs {
  const source = new InMemoryServiceCIDRs();
  names.forEach((name, i) => source.addServiceCIDR(name, [`10.9${6 + i}.0.0/28`]));
  return source;
}

describe("MetaAllocator.allocateNext: the store's cache stops being synced during a create that collides", () => {
  const cases = [['a'], ['a', 'b']].flatMap((names) => [true, false].map((syncOps) => [names.length, syncOps, names] as const));

  it.each(cases)('%i range(s), synchronous store operations %s: ErrNotReady, not ErrFull, nothing created', async (_n, syncOps, names) => {
    const store = new HookedStore({ syncOps });
    const meta = new MetaAllocator('IPv4', sourceOf([...names]), { store, policy: 'ordered' });
    onTestFinished(() => meta.destroy());
    store.collideCreates(1);
    store.onCreate = () => store.setSynced(false);
    const err = await rejection(meta.allocateNext());
    expect(err).toBeInstanceOf(ErrNotReady); // a /28 with 14 free addresses is not full
    expect((err as Error).message).toContain(NOT_READY_WHY.noRangeReady);
    expect(store.createCalls).toBe(1);
    expect(store.records()).toEqual([]);
  });

  it.each([true, false])('synchronous store operations %s, the range before it full: ErrFull, as with a range full', async (syncOps) => {
    const store = new HookedStore({ syncOps });
    const meta = new MetaAllocator('IPv4', sourceOf(['a', 'b']), { store, policy: 'ordered' });
    onTestFinished(() => meta.destroy());
    for (let i = 0; i < 14; i++) await meta.allocateNext(); // a's 14 addresses
    store.collideCreates(1);
    store.onCreate = () => store.setSynced(false);
    const err = await rejection(meta.allocateNext());
    expect(err).toBeInstanceOf(ErrFull);
    expect(store.records()).toHaveLength(14);
  });
});

describe('MetaAllocator.allocateNext: a strategy that throws an ErrNotReady of its own, its range left as it was', () => {
  it.each([true, false])('synchronous store operations %s: that error is the answer, no other range tried', async (syncOps) => {
    const source = sourceOf(['a', 'b']);
    const own = new ErrNotReady('the strategy could not ask its own backend');
    let made = 0;
    const strategy: AllocationStrategy = {
      name: 'throws its own',
      forRange(view) {
        const inner = STRATEGIES['lowest-free'].forRange(view);
        let first = made++ === 0; // a's range is made first
        return {
          choose(out) {
            if (first) {
              first = false;
              throw own;
            }
            return inner.choose(out);
          },
        };
      },
    };
    const store = new FaultyMemoryStore({ syncOps });
    const meta = new MetaAllocator('IPv4', source, { store, policy: 'ordered', strategy });
    onTestFinished(() => meta.destroy());
    expect(await rejection(meta.allocateNext())).toBe(own);
    expect(store.createCalls).toBe(0);
  });
});

describe('MetaAllocator.allocateNext: a strategy that throws an ErrFull of its own', () => {
  /** A strategy whose first choice in the first range made throws `own`. */
  function throwingOnce(own: Error): AllocationStrategy {
    let made = 0;
    return {
      name: 'throws its own',
      forRange(view) {
        const inner = STRATEGIES['lowest-free'].forRange(view);
        let first = made++ === 0;
        return {
          choose(out) {
            if (first) {
              first = false;
              throw own;
            }
            return inner.choose(out);
          },
        };
      },
    };
  }

  it.each([true, false])('ErrFull (synchronous store operations %s): that error is the answer, no other range tried', async (syncOps) => {
    const source = sourceOf(['a', 'b']);
    const own = new ErrFull('the strategy says so');
    const strategy = throwingOnce(own);
    const store = new FaultyMemoryStore({ syncOps });
    const meta = new MetaAllocator('IPv4', source, { store, policy: 'ordered', strategy });
    onTestFinished(() => meta.destroy());
    expect(await rejection(meta.allocateNext())).toBe(own);
    expect(store.createCalls).toBe(0);
  });
});

/**
 * A FaultyMemoryStore whose next create collides, and whose cache's hasSynced() runs `act` once,
 * the first time it is asked after that create (the search's question after the collision), then
 * answers as before (synced).
 */
function destroyingOnSynced(syncOps: boolean, act: () => void): FaultyMemoryStore {
  const store = new HookedStore({ syncOps });
  let armed = false;
  const cache = store.cache as { hasSynced(): boolean };
  const asked = cache.hasSynced.bind(cache);
  cache.hasSynced = () => {
    if (armed) {
      armed = false;
      act();
    }
    return asked();
  };
  store.collideCreates(1);
  store.onCreate = () => {
    armed = true;
  };
  return store;
}

describe("allocateNext: the store's cache.hasSynced(), asked after a collision, destroys the range and answers true", () => {
  it.each([true, false])('Allocator (synchronous store operations %s): ErrDestroyed, nothing created', async (syncOps) => {
    let alloc: Allocator | undefined;
    const store = destroyingOnSynced(syncOps, () => alloc!.destroy());
    alloc = new Allocator('10.96.0.0/28', { store });
    onTestFinished(() => alloc!.destroy());
    expect(await rejection(alloc.allocateNext())).toBeInstanceOf(ErrDestroyed);
    expect(store.records()).toEqual([]);
  });

  it.each([true, false])(
    'MetaAllocator (synchronous store operations %s): its ServiceCIDR deleted there, the next range answers',
    async (syncOps) => {
      const source = sourceOf(['a', 'b']);
      const store = destroyingOnSynced(syncOps, () => source.deleteServiceCIDR('a'));
      const meta = new MetaAllocator('IPv4', source, { store, policy: 'ordered' });
      onTestFinished(() => meta.destroy());
      const ip = await meta.allocateNext();
      expect(ip.startsWith('10.97.0.')).toBe(true);
      expect(store.records().map((r) => r.name)).toEqual([ip]);
    },
  );
});
