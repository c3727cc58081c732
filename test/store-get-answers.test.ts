// A store of your own whose get (its sync.getSync, or its cache's get) answers something that is
// neither a record nor none — false, 0, '', a number, text, an object without a string name —
// breaks the Store contract (docs/store.md). Every reader takes such an answer alike: an
// InvalidArgumentError quoting what came back, handled where each reader handles a get that
// throws. Before, `has` read `false` as "the record exists", a MetaAllocator's release of an
// address no range holds answered ErrMismatchedNetwork, reconcile judged `false` a record, and a
// ReferenceAllocator read a cache answering `false` as every address held (ErrFull).
import { describe, expect, it } from 'vitest';
import {
  Allocator,
  DualStackAllocator,
  ErrFull,
  InMemoryServiceCIDRs,
  InvalidArgumentError,
  type IPAddressRecord,
  MemoryStore,
  MetaAllocator,
  ReferenceAllocator,
  type Store,
  allocatorLabels,
  reconcile,
} from '../adapters/index.ts';
import { rejection } from './helpers.ts';

/** What a store in plain JavaScript may answer that is neither a record nor none, and how a message shows it. */
const NOT_RECORDS: [unknown, string][] = [
  [false, 'false (boolean)'],
  [0, '0 (number)'],
  ['', '""'],
  [7, '7 (number)'],
  ['10.0.0.5', '"10.0.0.5"'],
  [{ labels: {} }, 'a value of type object'],
];

/**
 * A MemoryStore's operations whose get (and, with `sync`, getSync) answers `answer` for every
 * name; its cache is the MemoryStore's, unless `cacheGet` answers for it.
 */
function storeAnswering(
  answer: unknown,
  sync: boolean,
  cacheGet?: (name: string) => unknown,
): { store: Store; inner: MemoryStore; deletes: string[] } {
  const inner = new MemoryStore();
  const deletes: string[] = [];
  const store: Store = {
    create: (r) => inner.create(r),
    delete: (n) => {
      deletes.push(n);
      return inner.delete(n);
    },
    get: () => Promise.resolve(answer as IPAddressRecord),
    cache:
      cacheGet === undefined
        ? inner.cache
        : {
            get: cacheGet as (name: string) => IPAddressRecord,
            list: (l) => inner.cache.list(l),
            hasSynced: () => true,
            subscribe: (w) => inner.cache.subscribe(w),
          },
    close: () => inner.close(),
    sync: sync
      ? {
          createSync: (r) => inner.createSync(r),
          deleteSync: (n) => {
            deletes.push(n);
            inner.deleteSync(n);
          },
          getSync: () => answer as IPAddressRecord,
        }
      : null,
  };
  return { store, inner, deletes };
}

const message = (read: string, name: string, shown: string) =>
  `the store's ${read}("${name}") must answer the record (an object with a string name) or undefined for none; it answered ${shown}`;

const lost = { group: '', resource: 'services', namespace: 'default', name: 'gone' };

describe.each([false, true])('a store whose get answers neither a record nor none (sync: %s)', (sync) => {
  const read = sync ? 'sync.getSync' : 'get';

  it.each(NOT_RECORDS)(
    'has() of Allocator, ReferenceAllocator and MetaAllocator rejects with InvalidArgumentError quoting %o',
    async (answer, shown) => {
      const { store } = storeAnswering(answer, sync);
      const cidrs = new InMemoryServiceCIDRs();
      cidrs.addServiceCIDR('a', ['10.0.0.0/24']);
      const allocators = [
        new Allocator('10.0.0.0/24', { store }),
        new MetaAllocator('IPv4', cidrs, { store }),
        ...(sync ? [] : [new ReferenceAllocator('10.0.0.0/24', { store })]), // it always calls get
      ];
      for (const a of allocators) {
        // an address of the range, and (MetaAllocator) one no range holds, which it asks itself
        for (const ip of a instanceof MetaAllocator ? ['10.0.0.5', '10.9.0.5'] : ['10.0.0.5']) {
          const e = await rejection(a.has(ip));
          expect(e).toBeInstanceOf(InvalidArgumentError);
          expect((e as Error).message).toBe(message(read, ip, shown));
        }
        a.destroy();
      }
    },
  );

  it.each(NOT_RECORDS)(
    "a MetaAllocator's release of an address no range holds tells %o to onDeleteError, as a get that throws, and deletes nothing",
    async (answer, shown) => {
      const { store, deletes } = storeAnswering(answer, sync);
      const cidrs = new InMemoryServiceCIDRs();
      cidrs.addServiceCIDR('a', ['10.0.0.0/24']);
      const meta = new MetaAllocator('IPv4', cidrs, { store });
      const told: unknown[] = [];
      await meta.release('10.9.0.5', (e) => {
        told.push(e);
      });
      expect(told).toHaveLength(1);
      expect(told[0]).toBeInstanceOf(InvalidArgumentError);
      expect((told[0] as Error).message).toBe(message(read, '10.9.0.5', shown));
      expect(deletes).toEqual([]);
      meta.destroy();
    },
  );

  it.each(NOT_RECORDS)('reconcile reports %o as the error of that leak and deletes nothing', async (answer, shown) => {
    const { store, inner, deletes } = storeAnswering(answer, sync);
    inner.createSync({ name: '10.0.0.5', labels: allocatorLabels('IPv4'), parentRef: lost });
    const result = await reconcile(store, [], { graceMs: 0, delete: true });
    expect(result.deleted).toEqual([]);
    expect(result.errors.map((e) => [e.name, e.error instanceof InvalidArgumentError, (e.error as Error).message])).toEqual([
      ['10.0.0.5', true, message(read, '10.0.0.5', shown)],
    ]);
    expect(deletes).toEqual([]);
    expect(inner.records().map((r) => r.name)).toEqual(['10.0.0.5']);
  });
});

describe("a store whose cache's get answers neither a record nor none", () => {
  it.each(NOT_RECORDS)(
    'ReferenceAllocator refuses %o with InvalidArgumentError, not as every address held (ErrFull)',
    async (answer, shown) => {
      const { store, inner } = storeAnswering(undefined, false, () => answer);
      const r = new ReferenceAllocator('10.0.0.0/29', { store });
      const e = await rejection(r.allocateNext());
      expect(e).not.toBeInstanceOf(ErrFull);
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as Error).message).toMatch(
        new RegExp(
          `^the store's cache\\.get\\("10\\.0\\.0\\.[1-6]"\\) must answer the record \\(an object with a string name\\) or undefined at once, from memory, as an informer's lister does; it answered ${shown.replace(/[().]/g, '\\$&')}$`,
        ),
      );
      expect(inner.records()).toEqual([]);
      r.destroy();
    },
  );
});

describe("an Allocator's failed create over a store whose cache cannot answer", () => {
  // Regression: the Allocator asks its cache whether it holds the name before clearing a failed
  // create's reservation; a cache that answered false (or threw) made the call reject with that
  // InvalidArgumentError, the store's own error lost, and the call's bookkeeping cut short.
  const broken: [string, () => unknown][] = [
    ['answers false', () => false],
    [
      'throws',
      () => {
        throw new Error('cache down');
      },
    ],
  ];
  it.each(broken)(
    "whose cache.get %s: allocate and allocateNext reject with the store's own error, the address kept until the cache tells",
    async (_, cacheGet) => {
      for (const syncOps of [true, false]) {
        const inner = new MemoryStore({ syncOps });
        const down = new Error('etcd down');
        const store: Store = {
          create: () => Promise.reject(down),
          delete: (n) => inner.delete(n),
          get: (n) => inner.get(n),
          cache: {
            get: cacheGet as (name: string) => IPAddressRecord,
            list: (l) => inner.cache.list(l),
            hasSynced: () => true,
            subscribe: (w) => inner.cache.subscribe(w),
          },
          close: () => inner.close(),
        };
        const a = new Allocator('10.0.0.0/29', { store });
        expect(await rejection(a.allocate('10.0.0.1'))).toBe(down);
        expect(await rejection(a.allocateNext())).toBe(down);
        await expect(a.has('10.0.0.1')).resolves.toBe(false);
        expect(inner.records()).toEqual([]);
        a.destroy();
      }
    },
  );
});

describe("a DualStackAllocator's rollback over such a store", () => {
  it.each(NOT_RECORDS)('gives the address back and reports %o to onRollbackError, as a get that throws', async (answer, shown) => {
    const { store, inner } = storeAnswering(answer, true);
    const v6 = new MemoryStore();
    const full = new Allocator('fd00::/126', { store: v6 }); // 3 addresses, all taken below
    for (let i = 0; i < 3; i++) await full.allocateNext();
    const reported: unknown[] = [];
    const pair = new DualStackAllocator(new Allocator('10.0.0.0/29', { store }), full, { onRollbackError: (e) => reported.push(e) });
    expect(await rejection(pair.allocateNext(null, ['IPv4', 'IPv6']))).toBeInstanceOf(ErrFull);
    expect(inner.records()).toEqual([]); // the IPv4 address was given back
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(InvalidArgumentError);
    expect((reported[0] as Error).message).toMatch(
      /^the store's sync\.getSync\("10\.0\.0\.[1-6]"\) must answer the record \(an object with a string name\) or undefined for none; it answered /,
    );
    expect((reported[0] as Error).message.endsWith(`it answered ${shown}`)).toBe(true);
    pair.destroy();
  });
});
