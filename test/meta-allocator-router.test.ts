// RecordRouter: the one store subscription of a MetaAllocator's ranges (adapters/taken-addresses.ts).
// What each range hears (its replay, then the events of its prefix), how the handlers' errors
// reach the store, and that a destroyed MetaAllocator keeps no record through it.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Family } from '../adapters/address.ts';
import { Prefix } from '../adapters/geometry.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { formatAddr, parseAddr } from '../adapters/address.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { allocatorLabels, type IPAddressRecord, type StoreWatcher } from '../adapters/store.ts';
import { RecordRouter } from '../adapters/record-router.ts';
import type { AllocationStrategy } from '../adapters/strategy.ts';
import { STRATEGIES } from '../adapters/builtin-strategies.ts';

const rec = (name: string): IPAddressRecord => ({ name, labels: allocatorLabels(name.includes(':') ? 'IPv6' : 'IPv4'), parentRef: null });

/** A watcher that notes the names it hears, and throws `error` from every handler when given. */
function listener(error?: unknown): StoreWatcher & { heard: string[] } {
  const heard: string[] = [];
  const fail = () => {
    if (error !== undefined) throw error;
  };
  return {
    heard,
    onAdd: (r) => {
      heard.push(`+${r.name}`);
      fail();
    },
    onDelete: (r) => {
      heard.push(`-${r.name}`);
      fail();
    },
    onResync: fail,
  };
}

describe('RecordRouter', () => {
  it.each([4, 6] as const)(
    'a new IPv%s watcher is replayed exactly the records its prefix holds, network and broadcast included, as events left them',
    (family) => {
      // addresses near a few bases, so that prefixes hold some of them; interleaved events and
      // subscriptions take both ways a replay reads the records (a pass, and the sorted copy)
      const base = family === 4 ? [0, 0, 0, 0x0a000000] : [0xfd000000, 0, 0, 0];
      const address = fc
        .tuple(fc.nat({ max: 3 }), fc.nat({ max: 0xff }))
        .map(([hi, lo]) => formatAddr(family, family === 4 ? [0, 0, 0, base[3]! + hi * 256 + lo] : [base[0]!, 0, hi, lo]));
      const prefix = fc
        .tuple(address, fc.nat({ max: 10 }))
        .map(([a, bits]) => Prefix.from(family, parseAddr(a).words, (family === 4 ? 22 : 118) + bits));
      // a delete takes one of the records held (by its index), so that deletes do happen; runs
      // of the full length, so that a delete often falls between two replays of the sorted copy
      const step = fc.oneof(fc.record({ add: address }), fc.record({ del: fc.nat() }), fc.record({ sub: prefix }));
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 60, size: 'max' }), (steps) => {
          const router = new RecordRouter(family as Family);
          const held = new Map<string, IPAddressRecord>();
          for (const s of steps) {
            if ('add' in s) {
              const r = rec(s.add);
              router.onAdd(r, held.get(s.add));
              held.set(s.add, r);
            } else if ('del' in s) {
              if (held.size === 0) continue;
              const r = [...held.values()][s.del % held.size]!;
              router.onDelete(r);
              held.delete(r.name);
            } else {
              const w = listener();
              router.subscribe(s.sub, w);
              const want = [...held.keys()].filter((n) => s.sub.contains(family as Family, parseAddr(n).words)).map((n) => `+${n}`);
              expect(w.heard.sort()).toEqual(want.sort());
            }
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  it('a replay gives the records as they are: an update since the last replay is the version replayed', () => {
    const router = new RecordRouter(4);
    router.onAdd(rec('10.0.0.5'), undefined);
    router.subscribe(Prefix.parse('10.0.0.0/24'), listener());
    router.subscribe(Prefix.parse('10.0.0.0/25'), listener()); // the second replay in a row: the sorted copy
    const updated = { ...rec('10.0.0.5'), parentRef: { group: '', resource: 'services', namespace: 'ns', name: 'web' } };
    router.onAdd(updated, rec('10.0.0.5'));
    for (let i = 0; i < 2; i++) {
      const got: IPAddressRecord[] = [];
      router.subscribe(Prefix.parse('10.0.0.0/26'), { onAdd: (r) => got.push(r), onDelete: () => {} });
      expect(got).toEqual([updated]);
    }
  });

  it('ranges built two at a time between events read the records as they are: the sorted copy is made only once the passes have cost about a sort', () => {
    const router = new RecordRouter(4);
    for (let i = 0; i < 1000; i++) router.onAdd(rec(formatAddr(4, [0, 0, 0, 0x0a000000 + i * 7])), undefined);
    const sorted = () => (router as unknown as { sorted: object | null }).sorted !== null; // held by no public member
    const build = (cidr: string) => {
      const w = listener();
      router.subscribe(Prefix.parse(cidr), w);
      return w.heard.length;
    };
    // two ranges per event, as a ServiceCIDR of two CIDRs of the family, or two waiting on memory
    for (let round = 0; round < 3; round++) {
      expect([build('10.0.0.0/24'), build('10.0.1.0/24')]).toEqual([37, 37]);
      expect(sorted()).toBe(false);
      router.onAdd(rec(`10.9.0.${round}`), undefined);
    }
    // many in a row, as a source's first replay: a pass each until they have cost most of a
    // sort of 1,000 records (log2(1000) / 3: the fourth replay), then the sorted copy
    const passes = [];
    for (let i = 0; i < 8; i++) {
      build(`10.0.${i}.0/24`);
      passes.push(sorted());
    }
    expect(passes).toEqual([false, false, false, true, true, true, true, true]);
  });

  it("several ranges' handlers that throw on one event: every range hears it, and the store is told of every error in one AggregateError", () => {
    const router = new RecordRouter(4);
    const [e16, e24] = [new Error('boom'), new Error('bang')];
    const wide = listener();
    const throwing16 = listener(e16);
    const throwing24 = listener(e24);
    router.subscribe(Prefix.parse('10.0.0.0/8'), wide);
    router.subscribe(Prefix.parse('10.0.0.0/16'), throwing16);
    router.subscribe(Prefix.parse('10.0.0.0/24'), throwing24);
    const reports: unknown[] = [];
    const store = new MemoryStore({ onWatcherError: (e) => reports.push(e) });
    store.cache.subscribe({ onAdd: (r, p) => router.onAdd(r, p), onDelete: (r) => router.onDelete(r), onResync: () => router.onResync() });

    store.createSync(rec('10.0.0.5'));
    store.deleteSync('10.0.0.5');
    expect([wide.heard, throwing16.heard, throwing24.heard]).toEqual([
      ['+10.0.0.5', '-10.0.0.5'],
      ['+10.0.0.5', '-10.0.0.5'],
      ['+10.0.0.5', '-10.0.0.5'],
    ]);
    expect(reports).toHaveLength(2);
    for (const [i, what] of ['add', 'delete'].entries()) {
      const e = reports[i] as AggregateError;
      expect(e).toBeInstanceOf(AggregateError);
      expect(e.errors).toEqual([e16, e24]); // shortest prefix first, as they were delivered
      expect(e.message).toBe(`the handlers of 2 ranges threw on the ${what} of 10.0.0.5 (10.0.0.0/16: boom; 10.0.0.0/24: bang)`);
    }
    // one range only: its own error, unchanged, as a cache reports any watcher's
    store.createSync(rec('10.0.1.5'));
    expect(reports[2]).toBe(e16);
    expect(() => router.onResync()).toThrow(AggregateError);
    store.close();
  });

  it("a subscriber's own write goes to it alone only while it is the only subscriber: one subscribed since, or one alone that is not the writer, hears what its prefix holds", () => {
    const router = new RecordRouter(4);
    let writing: string | null = null; // the name of the wide one's synchronous store call running
    const wide = listener();
    const unsubscribeWide = router.subscribe(Prefix.parse('10.0.0.0/16'), wide, () => writing);
    writing = '10.0.0.5';
    router.onAdd(rec('10.0.0.5'), undefined);
    // subscribed while that write runs (a store watcher added a ServiceCIDR during its event)
    const narrow = listener();
    const unsubscribeNarrow = router.subscribe(Prefix.parse('10.0.0.0/24'), narrow);
    router.onDelete(rec('10.0.0.5'));
    writing = null;
    expect([wide.heard, narrow.heard]).toEqual([
      ['+10.0.0.5', '-10.0.0.5'],
      ['+10.0.0.5', '-10.0.0.5'], // its replay, then the delete
    ]);
    // the writer gone, another one alone: a write the gone one was making is routed by address
    unsubscribeWide();
    unsubscribeNarrow();
    const other = listener();
    router.subscribe(Prefix.parse('10.1.0.0/24'), other, () => null);
    writing = '10.0.0.7';
    router.onAdd(rec('10.0.0.7'), undefined);
    router.onAdd(rec('10.1.0.7'), undefined);
    expect(other.heard).toEqual(['+10.1.0.7']);
  });

  it("a range made during the event of the only range's own write hears that event too: its allocation and its release count there", async () => {
    const store = new MemoryStore();
    const source = new InMemoryServiceCIDRs();
    source.addServiceCIDR('a', ['10.0.0.0/16']);
    // subscribed before the MetaAllocator, so it hears each event first: on the first add, a
    // ServiceCIDR inside the range (the router has not heard that add yet)
    let added = false;
    store.cache.subscribe({
      onAdd: () => {
        if (added) return;
        added = true;
        source.addServiceCIDR('b', ['10.0.0.0/24']);
      },
      onDelete: () => {},
    });
    const meta = new MetaAllocator('IPv4', source, { store });
    const used = () => meta.ranges().map((r) => `${r.cidr} ${r.used}`);
    await meta.allocate('10.0.0.5');
    expect(used()).toEqual(['10.0.0.0/16 1', '10.0.0.0/24 1']);
    await meta.release('10.0.0.5');
    expect(used()).toEqual(['10.0.0.0/16 0', '10.0.0.0/24 0']);
    meta.destroy();
  });

  it('close() forgets the records and keeps none of a later event: a watcher subscribed after it is replayed none', () => {
    const router = new RecordRouter(4);
    router.onAdd(rec('10.0.0.5'), undefined);
    router.close();
    router.onAdd(rec('10.0.0.6'), undefined);
    const w = listener();
    router.subscribe(Prefix.parse('10.0.0.0/24'), w);
    expect(w.heard).toEqual([]);
  });

  // Regression: close() stopped adds only; a watcher still held (a range whose destroy waits for
  // its strategy to return) went on hearing deletes and re-lists after it.
  it('close(): a watcher still held hears no event after it, neither an add, a delete nor a re-list', () => {
    const router = new RecordRouter(4);
    const heard: string[] = [];
    router.subscribe(Prefix.parse('10.0.0.0/24'), {
      onAdd: (r) => heard.push(`+${r.name}`),
      onDelete: (r) => heard.push(`-${r.name}`),
      onResync: () => heard.push('resync'),
    });
    router.onAdd(rec('10.0.0.5'), undefined);
    router.close();
    router.onAdd(rec('10.0.0.6'), undefined);
    router.onDelete(rec('10.0.0.5'));
    router.onResync();
    expect(heard).toEqual(['+10.0.0.5']);
  });

  it('a destroyed MetaAllocator keeps no record alive through its router', async () => {
    const store = new MemoryStore();
    const source = new InMemoryServiceCIDRs();
    source.addServiceCIDR('a', ['10.0.0.0/24']);
    const meta = new MetaAllocator('IPv4', source, { store });
    await meta.allocateNext();
    const { router } = meta as unknown as { router: RecordRouter }; // held by no public member
    const before = listener();
    router.subscribe(Prefix.parse('10.0.0.0/24'), before);
    expect(before.heard).toHaveLength(1);
    meta.destroy();
    const after = listener();
    router.subscribe(Prefix.parse('10.0.0.0/24'), after);
    expect(after.heard).toEqual([]);
  });

  it('a destroyed MetaAllocator keeps no record of the events a store whose unsubscribe threw still delivers', async () => {
    const store = new MemoryStore();
    const cache = store.cache;
    const subscribe = cache.subscribe.bind(cache);
    const failure = new Error('unsubscribe: connection reset');
    // a store of your own that cannot let go of the MetaAllocator's watcher
    cache.subscribe = (w) => {
      subscribe(w);
      return () => {
        throw failure;
      };
    };
    const source = new InMemoryServiceCIDRs();
    source.addServiceCIDR('a', ['10.0.0.0/24']);
    const meta = new MetaAllocator('IPv4', source, { store });
    const { router } = meta as unknown as { router: RecordRouter }; // held by no public member
    expect(() => meta.destroy()).toThrow(failure);
    for (let i = 1; i <= 3; i++) await store.create(rec(`10.0.0.${i}`));
    const after = listener();
    router.subscribe(Prefix.parse('10.0.0.0/24'), after);
    expect(after.heard).toEqual([]);
  });
});

describe('the ranges of a MetaAllocator and the routing of its events', () => {
  // Regression: routing had a table of its own. A range removed from inside its own strategy
  // (its allocator refuses destroy() until the strategy returns) left the MetaAllocator's ranges
  // but stayed in routing, and went on hearing the store's events.
  it.each([true, false])(
    'a range removed from inside its own strategy hears no store event from then on, though its destroy() waits for the strategy to return (syncOps %s)',
    async (syncOps) => {
      const store = new MemoryStore({ syncOps });
      const source = new InMemoryServiceCIDRs();
      source.addServiceCIDR('a', ['10.0.0.0/24']);
      source.addServiceCIDR('b', ['10.1.0.0/24']);
      let armed = false;
      let counts: number[] = [];
      const strategy: AllocationStrategy = {
        name: 'removes-its-range',
        forRange(view) {
          const inner = STRATEGIES['lowest-free'].forRange(view);
          return {
            choose(o) {
              if (armed) {
                armed = false;
                source.deleteServiceCIDR('a'); // range a leaves the MetaAllocator
                const before = view.index.count();
                store.createSync(rec('10.0.0.200')); // another writer's record, inside a's prefix
                counts = [before, view.index.count()];
              }
              return inner.choose(o);
            },
          };
        },
      };
      const meta = new MetaAllocator('IPv4', source, { store, strategy, policy: 'ordered' });
      armed = true;
      await meta.allocateNext();
      expect(counts).toEqual([0, 0]);
      expect(meta.ranges().map((r) => r.cidr)).toEqual(['10.1.0.0/24']);
      meta.destroy();
    },
  );

  it.each([true, false])(
    'over many ranges, an allocateNext and its release look their address up once, and so do an allocate and its release (syncOps %s)',
    async (syncOps) => {
      const source = new InMemoryServiceCIDRs();
      for (let i = 0; i < 8; i++) source.addServiceCIDR(`r${i}`, [`10.0.${i}.0/24`]);
      const meta = new MetaAllocator('IPv4', source, { store: new MemoryStore({ syncOps }) });
      // the look-ups of its router's table (held by no public member) that were not answered from its memo
      const { router } = meta as unknown as { router: RecordRouter };
      const start = router.lookUps;
      await meta.release(await meta.allocateNext()); // the add event, the release, the delete event
      const next = router.lookUps;
      await meta.allocate('10.0.5.7'); // the allocate, the add event, the release, the delete event
      await meta.release('10.0.5.7');
      expect([next - start, router.lookUps - next]).toEqual([1, 1]);
      expect(meta.used()).toBe(0);
      meta.destroy();
    },
  );

  it.each([true, false])(
    'over many ranges, has asks the store, which every range shares, and looks up no range (syncOps %s)',
    async (syncOps) => {
      const source = new InMemoryServiceCIDRs();
      for (let i = 0; i < 8; i++) source.addServiceCIDR(`r${i}`, [`10.0.${i}.0/24`]);
      source.addServiceCIDR('off', ['10.0.8.0/24'], { ready: false });
      const store = new MemoryStore({ syncOps });
      const meta = new MetaAllocator('IPv4', source, { store });
      const { router } = meta as unknown as { router: RecordRouter };
      const ip = await meta.allocateNext();
      store.createSync(rec('10.0.8.3')); // in a range not ready
      store.createSync(rec('10.9.0.1')); // in no range: its ServiceCIDR deleted since, say
      const start = router.lookUps;
      const asked = ['10.0.3.9', '10.0.3.0', '10.0.8.3', '10.9.0.1', '10.9.0.2', 'fd00::1'];
      const answers = [await meta.has(ip)];
      for (const a of asked) answers.push(await meta.has(a));
      expect(answers).toEqual([true, false, false, true, true, false, false]);
      expect(router.lookUps).toBe(start);
      meta.destroy();
    },
  );
});
