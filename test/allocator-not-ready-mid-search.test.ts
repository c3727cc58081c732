// An allocateNext whose range stops being ready while it searches — switched off (setReady(false),
// as a MetaAllocator does when the range's ServiceCIDRs are marked for deletion) or its store's
// cache no longer synced — during a create that collides: the search stops there and answers
// ErrNotReady, as a call that starts on a range not ready does, instead of trying the next address.
import { describe, expect, it, onTestFinished } from 'vitest';
import { Registry } from 'prom-client';
import { Allocator } from '../adapters/allocator.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { seededRandom } from '../adapters/random.ts';
import type { IPAllocator } from '../adapters/types.ts';
import { ErrNotReady, NOT_READY_WHY } from '../adapters/errors.ts';
import { HookedStore } from './doubles/memory-store-faults.ts';
import { rejection } from './helpers.ts';

type Why = 'switched off' | 'store no longer synced';

const cases = (['switched off', 'store no longer synced'] as const).flatMap((why) =>
  [true, false].map((syncOps) => [why, syncOps] as const),
);

describe('Allocator.allocateNext: the range stops being ready during a create that collides', () => {
  function setup(why: Why, syncOps: boolean) {
    const store = new HookedStore({ syncOps });
    const alloc = new Allocator('10.96.0.0/28', { store, strategy: 'lowest-free' });
    onTestFinished(() => alloc.destroy());
    store.collideCreates(1);
    store.onCreate = () => (why === 'switched off' ? alloc.setReady(false) : store.setSynced(false));
    return { store, alloc };
  }

  it.each(cases)('%s (synchronous store operations %s): ErrNotReady, no other address tried', async (why, syncOps) => {
    const { store, alloc } = setup(why, syncOps);
    const err = await rejection(alloc.allocateNext());
    expect(err).toBeInstanceOf(ErrNotReady);
    expect((err as Error).message).toBe(
      `allocator not ready: ${why === 'switched off' ? NOT_READY_WHY.switchedOff : NOT_READY_WHY.storeUnsynced}`,
    );
    expect(store.createCalls).toBe(1);
    expect(store.records()).toEqual([]);
    expect(alloc.used()).toBe(0);
    alloc.validate();
  });

  it.each(cases)('%s (synchronous store operations %s): ready again, the next call takes the address', async (why, syncOps) => {
    const { store, alloc } = setup(why, syncOps);
    await rejection(alloc.allocateNext());
    if (why === 'switched off') alloc.setReady(true);
    else store.setSynced(true);
    expect(await alloc.allocateNext()).toBe('10.96.0.1'); // the collision left nothing marked
  });
});

describe('ReferenceAllocator answers as the Allocator does when the range stops being ready during a create that collides', () => {
  /** The call's outcome as text: the address, or the error's class and message. */
  async function outcome(p: Promise<string>): Promise<string> {
    try {
      return `ok ${await p}`;
    } catch (e) {
      return `${(e as Error).constructor.name}: ${(e as Error).message}`;
    }
  }

  it.each(cases)('%s (synchronous store operations %s): the same answer, records, metrics and next address', async (why, syncOps) => {
    const run = async (make: (store: HookedStore, registry: Registry) => IPAllocator & { setReady(r: boolean): void; destroy(): void }) => {
      const store = new HookedStore({ syncOps });
      const registry = new Registry();
      const a = make(store, registry);
      onTestFinished(() => a.destroy());
      store.collideCreates(1);
      store.onCreate = () => (why === 'switched off' ? a.setReady(false) : store.setSynced(false));
      const first = await outcome(a.allocateNext());
      const calls = store.createCalls;
      if (why === 'switched off') a.setReady(true);
      else store.setSynced(true);
      const counted = (await registry.metrics()).split('\n').filter((line) => !line.includes('_seconds_sum')); // timings differ
      return [first, calls, await outcome(a.allocateNext()), store.records().length, counted];
    };
    const ours = await run((store, metrics) => new Allocator('10.96.0.0/28', { store, metrics, random: seededRandom(5) }));
    const reference = await run((store, metrics) => new ReferenceAllocator('10.96.0.0/28', { store, metrics, random: seededRandom(5) }));
    expect(ours[0]).toMatch(/^ErrNotReady: /);
    expect(reference).toEqual(ours);
  });
});
