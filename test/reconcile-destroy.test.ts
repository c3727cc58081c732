// reconcile when its allocator is destroyed (or its store closed) while it runs: the run ends with
// ErrDestroyed and makes no store call after the destroy. Every place where other code gets to run
// during a reconcile is a row: the caller's predicate (while listing, at the re-read), the store's
// watchers (told of a delete inside it), and other tasks while each store call is awaited.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { ErrDestroyed } from '../adapters/errors.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { reconcile } from '../adapters/reconcile.ts';
import type { IPAddressRecord, ParentRef, Store } from '../adapters/index.ts';
import { rejection, settle } from './helpers.ts';

const LEAKS = ['10.7.0.1', '10.7.0.2', '10.7.0.3'];

/** An allocator on `store` holding LEAKS, none of them with a known owner. */
async function withLeaks(store: Store): Promise<Allocator> {
  const alloc = new Allocator('10.7.0.0/24', { store });
  for (const ip of LEAKS) await alloc.allocate(ip);
  return alloc;
}

/** The names a MemoryStore holds. */
function names(store: MemoryStore): string[] {
  return store.records().map((r) => r.name);
}

describe('reconcile of an allocator destroyed while it runs', () => {
  for (const syncOps of [true, false]) {
    const path = syncOps ? 'synchronous operations' : 'promises';

    it(`destroyed by a store watcher told of its first delete: rejects with ErrDestroyed and deletes no other leak (${path})`, async () => {
      const store = new MemoryStore({ syncOps });
      const alloc = await withLeaks(store);
      store.cache.subscribe({ onAdd: () => {}, onDelete: () => alloc.destroy() });
      expect(await rejection(reconcile(alloc, [], { graceMs: 0, delete: true }))).toBeInstanceOf(ErrDestroyed);
      expect(names(store)).toEqual(LEAKS.slice(1));
    });

    it(`destroyed by the predicate at the re-read of the first leak: rejects with ErrDestroyed and deletes nothing (${path})`, async () => {
      const store = new MemoryStore({ syncOps });
      const alloc = await withLeaks(store);
      let calls = 0;
      const known = (): boolean => {
        if (++calls === LEAKS.length + 1) alloc.destroy(); // the listing asked once per leak; this is the re-read
        return false;
      };
      expect(await rejection(reconcile(alloc, known, { graceMs: 0, delete: true }))).toBeInstanceOf(ErrDestroyed);
      expect(names(store)).toEqual(LEAKS);
    });

    for (const del of [false, true]) {
      it(`destroyed by the predicate while listing: rejects with ErrDestroyed${del ? ' and deletes nothing' : ', also when only reporting'} (${path})`, async () => {
        const store = new MemoryStore({ syncOps });
        const alloc = await withLeaks(store);
        const known = (_owner: ParentRef | null, r: IPAddressRecord): boolean => {
          if (r.name === LEAKS[0]) alloc.destroy();
          return false;
        };
        expect(await rejection(reconcile(alloc, known, { graceMs: 0, delete: del }))).toBeInstanceOf(ErrDestroyed);
        expect(names(store)).toEqual(LEAKS);
      });
    }
  }

  it('destroyed by the clock it was given: rejects with ErrDestroyed and deletes nothing', async () => {
    const store = new MemoryStore();
    const alloc = await withLeaks(store);
    const now = (): number => {
      alloc.destroy();
      return Date.now();
    };
    expect(await rejection(reconcile(alloc, [], { graceMs: 0, delete: true, now }))).toBeInstanceOf(ErrDestroyed);
    expect(names(store)).toEqual(LEAKS);
  });

  // A store whose get and delete each wait until the test opens them: the allocator is destroyed
  // by the test (another task) while one of them waits.
  const waits = [
    { name: 'the re-read of the first leak', at: [`get ${LEAKS[0]}`], left: LEAKS },
    { name: 'the delete of the first leak', at: [`get ${LEAKS[0]}`, `delete ${LEAKS[0]}`], left: LEAKS.slice(1) },
    {
      name: 'the reading back of the first leak',
      at: [`get ${LEAKS[0]}`, `delete ${LEAKS[0]}`, `get ${LEAKS[0]}`],
      left: LEAKS.slice(1),
    },
    {
      name: 'the reading back of the last leak',
      at: LEAKS.flatMap((ip) => [`get ${ip}`, `delete ${ip}`, `get ${ip}`]),
      left: [],
    },
  ];
  for (const row of waits) {
    it(`destroyed by another task during ${row.name}: rejects with ErrDestroyed and calls the store no more`, async () => {
      const gated = gatedStore();
      const alloc = await withLeaks(gated.store);
      const run = reconcile(alloc, [], { graceMs: 0, delete: true });
      for (let i = 0; i < row.at.length; i++) {
        expect(await gated.next()).toBe(row.at[i]);
        if (i === row.at.length - 1) alloc.destroy();
        gated.open();
      }
      // every store call after the destroy is recorded, and let through so the run ends
      let settled = false;
      const outcome = settle(run).finally(() => {
        settled = true;
      });
      const after: string[] = [];
      for (let i = 0; i < 100 && !settled; i++) {
        await new Promise((r) => setTimeout(r, 0));
        while (gated.waiting.length > 0) {
          after.push(gated.waiting[0]!);
          gated.open();
        }
      }
      expect([await outcome, after]).toEqual([expect.any(ErrDestroyed), []]);
      expect(names(gated.inner)).toEqual(row.left);
    });
  }
});

describe('reconcile of a store closed while it runs', () => {
  for (const syncOps of [true, false]) {
    it(`rejects with ErrDestroyed rather than reporting every later leak as an error (${syncOps ? 'synchronous operations' : 'promises'})`, async () => {
      const store = new MemoryStore({ syncOps });
      const alloc = await withLeaks(store);
      alloc.destroy();
      store.cache.subscribe({ onAdd: () => {}, onDelete: () => store.close() });
      expect(await rejection(reconcile(store, [], { graceMs: 0, delete: true }))).toBeInstanceOf(ErrDestroyed);
    });
  }
});

/** A MemoryStore (its cache, authority and errors) whose get and delete wait at a gate the test opens. */
function gatedStore(): { inner: MemoryStore; store: Store; readonly waiting: string[]; next(): Promise<string>; open(): void } {
  const inner = new MemoryStore({ syncOps: false });
  const gates: { label: string; open: () => void }[] = [];
  const gate = (label: string): Promise<void> => new Promise((resolve) => gates.push({ label, open: resolve }));
  const store: Store = {
    sync: null,
    cache: inner.cache,
    create: (r) => inner.create(r),
    delete: async (n) => {
      await gate(`delete ${n}`);
      return inner.delete(n);
    },
    get: async (n) => {
      await gate(`get ${n}`);
      return inner.get(n);
    },
    close: () => inner.close(),
  };
  return {
    inner,
    store,
    get waiting() {
      return gates.map((g) => g.label);
    },
    /** The label of the first gate to wait, once one waits. */
    async next() {
      for (let i = 0; i < 100 && gates.length === 0; i++) await new Promise((r) => setTimeout(r, 0));
      expect(gates.length).toBe(1);
      return gates[0]!.label;
    },
    open() {
      gates.shift()!.open();
    },
  };
}
