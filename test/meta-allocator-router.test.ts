// RecordRouter: the one store subscription of a MetaAllocator's ranges (adapters/taken-addresses.ts).
// What each range hears (its replay, then the events of its prefix), how the handlers' errors
// reach the store, and that a destroyed MetaAllocator keeps no record through it.
import { describe, expect, it } from 'vitest';
import { Prefix } from '../adapters/geometry.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { allocatorLabels, type IPAddressRecord, type StoreWatcher } from '../adapters/store.ts';
import { RecordRouter } from '../adapters/taken-addresses.ts';

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

  it('clear() forgets the records: a watcher subscribed after it is replayed none', () => {
    const router = new RecordRouter(4);
    router.onAdd(rec('10.0.0.5'), undefined);
    router.clear();
    const w = listener();
    router.subscribe(Prefix.parse('10.0.0.0/24'), w);
    expect(w.heard).toEqual([]);
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
});
