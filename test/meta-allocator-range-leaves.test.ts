// A MetaAllocator's range whose ServiceCIDR is deleted, or marked for deletion, while a call of
// the MetaAllocator is at work in it: during the create that takes the address (the address is
// allocated, as upstream's, and stays until released), during a create that collides (the range
// stops: the call goes on to the next range), during its strategy's choice in a dry run (a dry
// run chooses nothing), and a strategy's own error thrown as it takes its range out of allocation.
import { describe, expect, it, onTestFinished } from 'vitest';
import { MetaAllocator, RANGE_POLICIES } from '../adapters/meta-allocator.ts';
import { STRATEGIES } from '../adapters/builtin-strategies.ts';
import type { AllocationStrategy } from '../adapters/strategy.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { ErrFull, ErrNotReady } from '../adapters/errors.ts';
import type { IPAddressRecord } from '../adapters/store.ts';
import { FaultyMemoryStore, HookedStore } from './doubles/memory-store-faults.ts';
import { GatedStore, quiesce } from './doubles/gated-store.ts';
import { hostOf, rejection } from './helpers.ts';

type Change = 'deleted' | 'marked for deletion';
const CHANGES = ['deleted', 'marked for deletion'] as const;

/** ServiceCIDRs `names`, the i-th listing 10.(96+i).0.0/28. */
function sourceOf(names: string[]): InMemoryServiceCIDRs {
  const source = new InMemoryServiceCIDRs();
  names.forEach((name, i) => source.addServiceCIDR(name, [`10.9${6 + i}.0.0/28`]));
  return source;
}

function change(source: InMemoryServiceCIDRs, what: Change, name: string): void {
  if (what === 'deleted') source.deleteServiceCIDR(name);
  else source.markDeleting(name);
}

describe("MetaAllocator: a create in flight when its range's ServiceCIDR is deleted or marked for deletion", () => {
  const calls = ['allocateNext', 'allocate'] as const;
  const cases = CHANGES.flatMap((what) => calls.map((call) => [what, call] as const));

  /** The call's address once it resolves, and what the MetaAllocator says of it then. */
  async function afterwards(meta: MetaAllocator, store: { records(): IPAddressRecord[] } | null, ip: string, what: Change) {
    expect(hostOf('10.96.0.0/28', ip)).toBe(true);
    if (store !== null) expect(store.records().map((r) => r.name)).toEqual([ip]);
    expect(await meta.has(ip)).toBe(true);
    expect(meta.used()).toBe(1);
    const listed: string[] = [];
    meta.forEach((a) => listed.push(a));
    expect(listed).toEqual([ip]);
    expect(meta.ranges().map((r) => [r.cidr, r.ready])).toEqual(what === 'deleted' ? [] : [['10.96.0.0/28', false]]);
    // the range takes nothing more, and the address goes with a release
    expect(await rejection(meta.allocateNext())).toBeInstanceOf(what === 'deleted' ? ErrFull : ErrNotReady);
    await meta.release(ip);
    expect(await meta.has(ip)).toBe(false);
    expect(meta.used()).toBe(0);
  }

  it.each(cases)('%s during a synchronous create of %s: the address is allocated, and stays until released', async (what, call) => {
    const source = sourceOf(['a']);
    const store = new HookedStore();
    const meta = new MetaAllocator('IPv4', source, { store });
    onTestFinished(() => meta.destroy());
    store.onCreate = () => change(source, what, 'a');
    const ip = await (call === 'allocateNext' ? meta.allocateNext() : meta.allocate('10.96.0.5').then(() => '10.96.0.5'));
    await afterwards(meta, store, ip, what);
  });

  it.each(cases)('%s while a create of %s waits for the store: the address is allocated, and stays until released', async (what, call) => {
    const source = sourceOf(['a']);
    const store = new GatedStore();
    const meta = new MetaAllocator('IPv4', source, { store });
    onTestFinished(() => meta.destroy());
    const pending = call === 'allocateNext' ? meta.allocateNext() : meta.allocate('10.96.0.5').then(() => '10.96.0.5');
    await quiesce();
    expect(store.waiting).toHaveLength(1);
    change(source, what, 'a');
    store.open(0); // the request
    await quiesce();
    store.open(0); // the reply
    const ip = await pending;
    // the release's delete waits at the gates too: opened as they come
    const opening = setInterval(() => {
      if (store.waiting.length > 0) store.open(0);
    }, 1);
    try {
      await afterwards(meta, null, ip, what);
    } finally {
      clearInterval(opening);
    }
  });
});

describe("MetaAllocator.allocateNext: a create that collides while its range's ServiceCIDR is deleted or marked for deletion", () => {
  const cases = CHANGES.flatMap((what) => [true, false].map((syncOps) => [what, syncOps] as const));

  function setup(what: Change, syncOps: boolean, names: string[]) {
    const source = sourceOf(names);
    const store = new HookedStore({ syncOps });
    // 'ordered': a first
    const meta = new MetaAllocator('IPv4', source, { store, policy: 'ordered' });
    onTestFinished(() => meta.destroy());
    store.collideCreates(1);
    store.onCreate = () => change(source, what, 'a');
    return { store, meta };
  }

  it.each(cases)('%s (synchronous store operations %s): the address comes from the next range', async (what, syncOps) => {
    const { store, meta } = setup(what, syncOps, ['a', 'b']);
    const ip = await meta.allocateNext();
    expect(hostOf('10.97.0.0/28', ip)).toBe(true);
    expect(store.createCalls).toBe(2);
    expect(store.records().map((r) => r.name)).toEqual([ip]);
  });

  it.each(cases)('%s (synchronous store operations %s), the only range: nothing more is tried', async (what, syncOps) => {
    const { store, meta } = setup(what, syncOps, ['a']);
    const err = await rejection(meta.allocateNext());
    // deleted: no range is left (upstream's ErrFull); marked: the range is there, not ready
    expect(err).toBeInstanceOf(what === 'deleted' ? ErrFull : ErrNotReady);
    expect(store.createCalls).toBe(1);
    expect(store.records()).toEqual([]);
  });
});

/** 'lowest-free', running `act` once, when armed, as the first of forRange, choose or taken is called. */
function acting(act: () => void): { strategy: AllocationStrategy; arm: () => void; ran: () => boolean } {
  let armed = false;
  let ran = false;
  const once = () => {
    if (!armed) return;
    armed = false;
    ran = true;
    act();
  };
  const strategy: AllocationStrategy = {
    name: 'acting as it chooses',
    forRange(view) {
      once();
      const inner = STRATEGIES['lowest-free'].forRange(view);
      return {
        choose(out) {
          once();
          return inner.choose(out);
        },
        taken(hi, lo) {
          once();
          inner.taken?.(hi, lo);
        },
      };
    },
  };
  return { strategy, arm: () => (armed = true), ran: () => ran };
}

describe("MetaAllocator's dry run and a strategy that deletes its own ServiceCIDR, or marks it for deletion, as it chooses", () => {
  const cases = CHANGES.flatMap((what) =>
    RANGE_POLICIES.flatMap((policy) => [true, false].map((syncOps) => [what, policy, syncOps] as const)),
  );

  it.each(cases)(
    '%s (policy %s, synchronous store operations %s): the dry run chooses nothing, so its strategy is not called and the range stays',
    async (what, policy, syncOps) => {
      const source = sourceOf(['a', 'b']);
      const { strategy, arm, ran } = acting(() => change(source, what, 'a'));
      const store = new FaultyMemoryStore({ syncOps });
      const meta = new MetaAllocator('IPv4', source, { store, policy, strategy, random: { nextU32: () => 0 } });
      onTestFinished(() => meta.destroy());
      const dry = meta.dryRun();
      arm();
      expect(await dry.allocateNext()).toBe('10.96.0.0'); // upstream's dry run: the network address of the range
      await dry.allocate('10.96.0.5');
      expect(ran()).toBe(false);
      expect(store.createCalls).toBe(0);
      expect(meta.ranges().map((r) => [r.cidr, r.ready])).toEqual([
        ['10.96.0.0/28', true],
        ['10.97.0.0/28', true],
      ]);
      // the real call then meets the strategy's change, and goes on to b
      expect(hostOf('10.97.0.0/28', await meta.allocateNext())).toBe(true);
      expect(ran()).toBe(true);
    },
  );
});

// On a store with synchronous operations a range answers "not ready" with null, never with a
// thrown ErrNotReady: one thrown there is someone else's (here its strategy's), and the call's answer.
describe('MetaAllocator.allocateNext on synchronous store operations: a strategy that takes its own range out of allocation, then throws an error of its own', () => {
  it.each(CHANGES)('%s, then its choose throws ErrNotReady of its own: that error is the answer, no other range tried', async (what) => {
    const source = sourceOf(['a', 'b']);
    const own = new ErrNotReady('the strategy could not ask its own backend');
    let made = 0;
    const strategy: AllocationStrategy = {
      name: 'changes a, then throws',
      forRange(view) {
        const inner = STRATEGIES['lowest-free'].forRange(view);
        let first = made++ === 0; // a's range is made first
        return {
          choose(out) {
            if (first) {
              first = false;
              change(source, what, 'a');
              throw own;
            }
            return inner.choose(out);
          },
        };
      },
    };
    const store = new FaultyMemoryStore();
    const meta = new MetaAllocator('IPv4', source, { store, policy: 'ordered', strategy });
    onTestFinished(() => meta.destroy());
    expect(await rejection(meta.allocateNext())).toBe(own);
    expect(store.createCalls).toBe(0);
  });
});
