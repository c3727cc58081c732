// Misuse of every public object the way a careless or hostile caller would: every method called
// after destroy()/close() fails with ErrDestroyed (a rejected promise for async methods, a throw
// for synchronous ones) and a second destroy()/close() is harmless; every method called without
// its object fails with InvalidArgumentError, the same way. One table over every class.
import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { Registry } from 'prom-client';
import { Allocator } from '../../adapters/allocator.ts';
import { coolDown } from '../../adapters/cool-down.ts';
import type { Cooling } from '../../adapters/cooling.ts';
import { DualStackAllocator } from '../../adapters/dual-stack.ts';
import { ErrDestroyed, InvalidArgumentError } from '../../adapters/errors.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { MetaAllocator } from '../../adapters/meta-allocator.ts';
import { seededRandom } from '../../adapters/random.ts';
import { Range } from '../../adapters/range.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import { InMemoryServiceCIDRs } from '../../adapters/service-cidrs.ts';
import { KubernetesServiceCIDRs, KubernetesStore } from '../../adapters/kubernetes/index.ts';
import { allocatorLabels, type ParentRef } from '../../adapters/store.ts';
import type { IPAllocator } from '../../adapters/types.ts';
import { quoteInput } from '../../adapters/quote.ts';
import { memoryLimit } from '../../adapters/wasm.ts';
import { failure } from '../helpers.ts';
import { kubeConfigFor } from '../k8s/kubeconfig.ts';

const OWNER = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };
/** A record a MemoryStore takes. */
const RECORD = { name: '10.0.0.7', labels: allocatorLabels('IPv4'), parentRef: OWNER };

/** The IPAllocator methods, each called with valid arguments. */
const ALLOCATOR_CALLS: [string, (a: IPAllocator) => unknown][] = [
  ['allocate', (a) => a.allocate('10.0.0.9', OWNER)],
  ['allocateNext', (a) => a.allocateNext(OWNER)],
  ['release', (a) => a.release('10.0.0.1')],
  ['has', (a) => a.has('10.0.0.1')],
  ['forEach', (a) => a.forEach(() => {})],
  ['used', (a) => a.used()],
  ['free', (a) => a.free()],
  ['dryRun', (a) => a.dryRun()],
];

function metaOn(store: MemoryStore): MetaAllocator {
  const cidrs = new InMemoryServiceCIDRs();
  cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/24']);
  return new MetaAllocator('IPv4', cidrs, { store, random: seededRandom(1) });
}

const ALLOCATORS: [string, (store: MemoryStore) => IPAllocator][] = [
  ['Allocator', (store) => new Allocator('10.0.0.0/24', { store, random: seededRandom(1) })],
  ['ReferenceAllocator', (store) => new ReferenceAllocator('10.0.0.0/24', { store, random: seededRandom(1) })],
  ['MetaAllocator', metaOn],
];

describe.each(ALLOCATORS)('%s after destroy()', (_name, make) => {
  it.each(ALLOCATOR_CALLS)('%s → ErrDestroyed, the store untouched', async (_method, call) => {
    const store = new MemoryStore();
    const a = make(store);
    await a.allocate('10.0.0.1', OWNER);
    a.destroy();
    const before = store.cache.list().map((r) => r.name);
    expect(await failure(() => call(a))).toBeInstanceOf(ErrDestroyed);
    expect(store.cache.list().map((r) => r.name)).toEqual(before);
  });
  it('a dry run taken before destroy() fails too; destroy() twice is harmless', async () => {
    const a = make(new MemoryStore());
    const dry = a.dryRun();
    a.destroy();
    expect(() => a.destroy()).not.toThrow();
    expect(await failure(() => dry.allocate('10.0.0.9', OWNER))).toBeInstanceOf(ErrDestroyed);
    expect(await failure(() => dry.allocateNext(OWNER))).toBeInstanceOf(ErrDestroyed);
  });
});

describe('DualStackAllocator after destroy()', () => {
  it('every method → ErrDestroyed', async () => {
    const store = new MemoryStore();
    const ds = new DualStackAllocator(new Allocator('10.0.0.0/24', { store }), new Allocator('fd00::/120', { store }));
    const ips = await ds.allocateNext(OWNER);
    ds.destroy();
    for (const call of [
      () => ds.allocateNext(OWNER),
      () => ds.allocate(['10.0.0.7'], OWNER),
      () => ds.release(ips),
      () => ds.allocator('IPv4'),
    ]) {
      expect(await failure(call)).toBeInstanceOf(ErrDestroyed);
    }
    expect(store.cache.list()).toHaveLength(2);
  });
});

describe('Range after destroy()', () => {
  it('every method → ErrDestroyed (the full list is in test/range.test.ts)', async () => {
    const r = new Range('10.0.0.0/24');
    r.destroy();
    for (const call of [() => r.allocateNext(), () => r.allocateMany(3), () => r.snapshot(), () => r.has('10.0.0.1')]) {
      expect(await failure(call)).toBeInstanceOf(ErrDestroyed);
    }
  });
});

describe('MemoryStore after close()', () => {
  const record = { name: '10.0.0.5', labels: allocatorLabels('IPv4'), parentRef: OWNER };
  it.each([
    ['create', (s: MemoryStore) => s.create(record)],
    ['delete', (s: MemoryStore) => s.delete('10.0.0.1')],
    ['get', (s: MemoryStore) => s.get('10.0.0.1')],
    ['cache.list', (s: MemoryStore) => s.cache.list()],
    ['cache.get', (s: MemoryStore) => s.cache.get('10.0.0.1')],
    ['cache.subscribe', (s: MemoryStore) => s.cache.subscribe({ onAdd: () => {}, onDelete: () => {} })],
  ] as const)('%s → ErrDestroyed', async (_name, call) => {
    const s = new MemoryStore();
    await s.create({ ...record, name: '10.0.0.1' });
    s.close();
    expect(() => s.close()).not.toThrow();
    expect(await failure(() => call(s))).toBeInstanceOf(ErrDestroyed);
  });
  it('closed through an object made from it (Object.create(store)): the store itself is closed, not only its cache', async () => {
    // a wrapper overriding one method (as a test double does) reads every field from the store;
    // close() wrote `closed` onto the wrapper and closed the shared cache, leaving the store open
    // over a closed cache: its writes went through, its cache refused them all
    const s = new MemoryStore();
    await s.create({ ...record, name: '10.0.0.1' });
    const wrapper = Object.create(s) as MemoryStore;
    wrapper.close();
    expect(Object.keys(wrapper)).toEqual([]);
    expect(await failure(() => s.create(record))).toBeInstanceOf(ErrDestroyed);
    expect(await failure(() => wrapper.create(record))).toBeInstanceOf(ErrDestroyed);
    expect(await failure(() => s.cache.list())).toBeInstanceOf(ErrDestroyed);
    expect(() => wrapper.close()).not.toThrow();
  });
  it('written through an object made from it (Object.create(store)): each record still gets a uid and resourceVersion of its own', () => {
    // the write counter was written onto the wrapper, which then counted on its own from the
    // store's value: the store's next record got the uid the wrapper had just given one
    const s = new MemoryStore();
    const wrapper = Object.create(s) as MemoryStore;
    const made = [
      s.createSync({ ...record, name: '10.0.0.1' }),
      wrapper.createSync({ ...record, name: '10.0.0.2' }),
      s.createSync({ ...record, name: '10.0.0.3' }),
      wrapper.createSync({ ...record, name: '10.0.0.4' }),
    ];
    expect(new Set(made.map((r) => r.uid)).size).toBe(4);
    expect(made.map((r) => r.resourceVersion)).toEqual(['1', '2', '3', '4']);
    expect(Object.keys(wrapper)).toEqual([]);
  });
  it('its cache subscribed to through an object made from it (Object.create(store.cache)) from inside a delivery: the watcher hears every later write', () => {
    // (a store of your own may reuse a MemoryStore's cache so.) The subscription list and the
    // delivery flag were fields of the cache: subscribing through the wrapper while an event was
    // delivered gave the wrapper a list of its own, which the store never delivers to
    const s = new MemoryStore();
    const wrapper = Object.create(s.cache) as MemoryStore['cache'];
    const heard: string[] = [];
    let subscribed = false;
    s.cache.subscribe({
      onAdd: () => {
        if (subscribed) return;
        subscribed = true;
        wrapper.subscribe({ onAdd: (r) => heard.push(r.name), onDelete: (r) => heard.push(`-${r.name}`) });
      },
      onDelete: () => {},
    });
    s.createSync({ ...record, name: '10.0.0.1' });
    s.createSync({ ...record, name: '10.0.0.2' });
    s.deleteSync('10.0.0.1');
    expect(heard).toEqual(['10.0.0.1', '10.0.0.2', '-10.0.0.1']);
    expect(s.watcherCount).toBe(2);
    expect(Object.keys(wrapper)).toEqual([]);
  });
  it('frozen (Object.freeze): it stores, deletes and closes as before, and an allocator over it allocates', async () => {
    const s = Object.freeze(new MemoryStore());
    const a = new Allocator('10.0.0.0/28', { store: s });
    const ip = await a.allocateNext(OWNER);
    expect(s.records().map((r) => r.name)).toEqual([ip]);
    await a.release(ip);
    expect(s.size).toBe(0);
    a.destroy();
    s.close();
    expect(await failure(() => s.create(record))).toBeInstanceOf(ErrDestroyed);
  });
  it('its cache frozen (Object.freeze(store.cache)): close() closes the store and its cache, and its watchers hear nothing more', async () => {
    // the cache's `closed` was a field: close() marked the store closed, then threw a TypeError
    // writing it, leaving the cache open (hasSynced true, its watchers subscribed)
    const s = new MemoryStore();
    await s.create({ ...record, name: '10.0.0.1' });
    const heard: string[] = [];
    s.cache.subscribe({ onAdd: (r) => heard.push(r.name), onDelete: (r) => heard.push(`-${r.name}`) });
    Object.freeze(s.cache);
    expect(() => s.close()).not.toThrow();
    expect(() => s.cache.hasSynced()).toThrow(ErrDestroyed);
    expect(() => s.cache.list()).toThrow(ErrDestroyed);
    expect(await failure(() => s.create(record))).toBeInstanceOf(ErrDestroyed);
    expect(heard).toEqual(['10.0.0.1']);
  });
  it('an allocator on a closed store fails with ErrDestroyed, never allocates', async () => {
    const s = new MemoryStore();
    const a = new Allocator('10.0.0.0/24', { store: s });
    s.close();
    expect(await failure(() => a.allocateNext(OWNER))).toBeInstanceOf(ErrDestroyed);
  });
});

describe('MetaAllocator frozen (Object.freeze)', () => {
  it('follows the store and its ServiceCIDRs, counts and allocates as before', async () => {
    // its count of labelled records, its ServiceCIDR sequence and its source's sync check were
    // fields of its own: each store event and each ServiceCIDR change threw a TypeError into the
    // watcher, which the store and the source rethrow (an uncaught exception), the count left behind
    const errors: unknown[] = [];
    const store = new MemoryStore({ onWatcherError: (e) => errors.push(e) });
    const cidrs = new InMemoryServiceCIDRs({ onWatcherError: (e) => errors.push(e) });
    cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
    const meta = Object.freeze(new MetaAllocator('IPv4', cidrs, { store }));
    const ip = await meta.allocateNext(OWNER);
    store.createSync({ ...RECORD, name: '10.0.0.200' }); // another writer's record, in no range
    cidrs.addServiceCIDR('b', ['10.0.1.0/28']);
    await meta.allocate('10.0.1.3', OWNER);
    expect(errors).toEqual([]);
    expect(meta.used()).toBe(3);
    expect(meta.ranges().map((r) => [r.cidr, r.used])).toEqual([
      ['10.0.0.0/28', 1],
      ['10.0.1.0/28', 1],
    ]);
    await meta.release(ip);
    expect(meta.used()).toBe(2);
    meta.destroy();
  });
});

describe('Range frozen (Object.freeze)', () => {
  // Regression: its count, index, metrics and destroyed flag were fields of its own: frozen, every
  // change threw a TypeError ("Cannot assign to read only property 'allocated'"), some after the
  // index had marked the address (used() behind the index), and destroy() never freed the index.
  it.each([
    ['IPv4', '10.0.0.0/24', undefined],
    ['IPv6', 'fd00::/120', undefined],
    ['IPv4 with a cool-down', '10.0.0.0/24', coolDown('lowest-free', { allocations: 2 })],
  ] as const)(
    '%s: it allocates, releases, restores, counts and reports as before, and destroy() frees its index',
    (_name, cidr, strategy) => {
      const inUse = memoryLimit().inUse;
      const r = Object.freeze(new Range(cidr, { random: seededRandom(1), strategy }));
      const at = (n: number) => (cidr.startsWith('fd00') ? `fd00::${n}` : `10.0.0.${n}`);
      r.allocate(at(5));
      const next = r.allocateNext();
      expect(r.tryAllocateNext()).not.toBeNull();
      expect(r.allocateMany(3)).toHaveLength(3);
      expect(r.loadMany([at(7), at(8)])).toBe(2);
      expect([r.has(at(5)), r.has(next), r.used()]).toEqual([true, true, 8]);
      r.release(at(5));
      expect(r.releaseMany([at(7), next])).toBe(2);
      expect([r.has(at(5)), r.used()]).toEqual([false, 5]);
      const snap = r.snapshot();
      r.allocate(at(5));
      r.restore(snap.range, snap.data);
      expect([r.has(at(5)), r.used(), r.snapshot()]).toEqual([false, 5, snap]);
      r.enableMetrics(new Registry());
      r.allocateNext();
      expect(r.used()).toBe(6);
      r.validate();
      r.destroy();
      r.destroy();
      expect(() => r.used()).toThrow(ErrDestroyed);
      expect(memoryLimit().inUse).toBe(inUse);
    },
  );
});

describe('InMemoryServiceCIDRs frozen (Object.freeze), or changed through an object made from it (Object.create)', () => {
  // Regression: its creation clock and its delivery flag were fields of its own. Frozen, every
  // addServiceCIDR threw a TypeError ("Cannot assign to read only property 'clock'"); through a
  // wrapper, both were written onto the wrapper, which then counted and delivered on its own.
  it('frozen: it adds, updates, deletes and delivers as before', () => {
    const cidrs = Object.freeze(new InMemoryServiceCIDRs());
    const heard: string[] = [];
    cidrs.subscribe({ onAdd: (sc) => heard.push(`+${sc.name}`), onDelete: (sc) => heard.push(`-${sc.name}`) });
    cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
    cidrs.addServiceCIDR('b', ['10.0.1.0/28']);
    cidrs.setReady('a', false);
    cidrs.markDeleting('b');
    cidrs.deleteServiceCIDR('b');
    expect(heard).toEqual(['+a', '+b', '+a', '+b', '-b']);
    expect(cidrs.list().map((sc) => [sc.name, sc.ready])).toEqual([['a', false]]);
  });
  it('through a wrapper: each ServiceCIDR still gets a creation time of its own, in the order made', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-01-01T00:00:00Z')); // all in one millisecond
    try {
      const cidrs = new InMemoryServiceCIDRs();
      const wrapper = Object.create(cidrs) as InMemoryServiceCIDRs;
      cidrs.addServiceCIDR('a', ['10.0.0.0/28']);
      wrapper.addServiceCIDR('b', ['10.0.1.0/28']);
      cidrs.addServiceCIDR('c', ['10.0.2.0/28']);
      const times = cidrs.list().map((sc) => sc.creationTimestamp);
      expect(new Set(times).size).toBe(3);
      expect([...times].sort()).toEqual(times);
      expect(Object.keys(wrapper)).toEqual([]);
    } finally {
      now.mockRestore();
    }
  });
  it('through a wrapper: a change made on the source during a delivery the wrapper started waits for that delivery', () => {
    const cidrs = new InMemoryServiceCIDRs();
    const wrapper = Object.create(cidrs) as InMemoryServiceCIDRs;
    const first: string[] = [];
    const second: string[] = [];
    cidrs.subscribe({
      onAdd: (sc) => {
        first.push(`+${sc.name}`);
        if (sc.name === 'a') cidrs.addServiceCIDR('b', ['10.0.1.0/28']); // queued behind the add of a
      },
      onDelete: () => {},
    });
    cidrs.subscribe({ onAdd: (sc) => second.push(`+${sc.name}`), onDelete: () => {} });
    wrapper.addServiceCIDR('a', ['10.0.0.0/28']);
    expect(first).toEqual(['+a', '+b']);
    expect(second).toEqual(['+a', '+b']);
    expect(Object.keys(wrapper)).toEqual([]);
  });
});

// ── a method called without its object ─────────────────────────────────────────────────────
// `ips.map(allocator.release)`, `const { allocateNext } = allocator`, `setTimeout(allocator.destroy)`:
// `this` is undefined (or the timer). Every class answers as WebIDL has promise-returning
// operations answer a wrong `this`: a promise method rejects, a synchronous one throws — with
// InvalidArgumentError naming the method and how to call it, and nothing changed.

/** A public method: its name, whether it returns a promise, and arguments that are valid when it is bound. */
type MethodCall = [method: string, returnsPromise: boolean, args: unknown[]];

const IP_ALLOCATOR_METHODS: MethodCall[] = [
  ['allocate', true, ['10.0.0.9', OWNER]],
  ['allocateNext', true, [OWNER]],
  ['release', true, ['10.0.0.1']],
  ['has', true, ['10.0.0.1']],
  ['forEach', false, [() => {}]],
  ['used', false, []],
  ['free', false, []],
  ['dryRun', false, []],
  ['enableMetrics', false, [true]],
  ['destroy', false, []],
];

/** A cluster nothing answers at: the Kubernetes classes are made with `start: false`, and no call here reaches it. */
const unreachableCluster = () => kubeConfigFor('http://127.0.0.1:9');

/** The Cooling a coolDown chooser shows a strategy (what it holds), taken from a Range's chooser. */
function cooling(): Cooling {
  let seen: Cooling | undefined;
  const range = new Range('10.0.0.0/29', {
    strategy: {
      name: 'seeing',
      forRange(view) {
        const chooser = coolDown('lowest-free', { allocations: 1 }).forRange(view);
        seen = chooser.cooling;
        return chooser;
      },
    },
  });
  range.destroy();
  return seen!;
}

/** An InMemoryServiceCIDRs holding `kubernetes`, which its methods that take a name find. */
function serviceCIDRs(): InMemoryServiceCIDRs {
  const cidrs = new InMemoryServiceCIDRs();
  cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/24']);
  return cidrs;
}

const UNBOUND_CASES: [string, (store: MemoryStore) => object, MethodCall[]][] = [
  [
    'Allocator',
    (store) => new Allocator('10.0.0.0/24', { store, random: seededRandom(1) }),
    [
      ...IP_ALLOCATOR_METHODS,
      ['setReady', false, [true]],
      ['isReady', false, []],
      ['tryAllocateNextNow', false, [OWNER]],
      ['validate', false, []],
    ],
  ],
  [
    'ReferenceAllocator',
    (store) => new ReferenceAllocator('10.0.0.0/24', { store, random: seededRandom(1) }),
    [...IP_ALLOCATOR_METHODS, ['setReady', false, [true]], ['isReady', false, []]],
  ],
  ['MetaAllocator', metaOn, [...IP_ALLOCATOR_METHODS, ['rangeFor', false, ['10.0.0.1']], ['ranges', false, []], ['skipped', false, []]]],
  [
    'DryRunAllocator',
    (store) => new Allocator('10.0.0.0/24', { store }).dryRun(),
    [...IP_ALLOCATOR_METHODS, ['tryAllocateNextNow', false, [OWNER]]],
  ],
  // named in messages as the view of a ready MetaAllocator is, the type users see
  [
    'DryRunAllocator (NotReadyDryRun, a dry run of a MetaAllocator not ready)',
    (store) => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store }).dryRun(),
    [...IP_ALLOCATOR_METHODS, ['tryAllocateNextNow', false, [OWNER]]],
  ],
  [
    'DualStackAllocator',
    (store) => new DualStackAllocator(new Allocator('10.0.0.0/24', { store }), new Allocator('fd00::/120', { store })),
    [
      ['allocateNext', true, [OWNER]],
      ['allocate', true, [['10.0.0.9'], OWNER]],
      ['release', true, [['10.0.0.1']]],
      ['allocator', false, ['IPv4']],
      ['destroy', false, []],
    ],
  ],
  [
    'Range',
    () => new Range('10.0.0.0/24'),
    [
      ['allocate', false, ['10.0.0.9']],
      ['allocateNext', false, []],
      ['tryAllocateNext', false, []],
      ['release', false, ['10.0.0.1']],
      ['has', false, ['10.0.0.1']],
      ['forEach', false, [() => {}]],
      ['used', false, []],
      ['free', false, []],
      ['allocateMany', false, [2]],
      ['releaseMany', false, [['10.0.0.1']]],
      ['loadMany', false, [['10.0.0.7']]],
      ['dryRun', false, []],
      ['snapshot', false, []],
      ['restore', false, ['10.0.0.0/24', new Uint8Array(0)]],
      ['enableMetrics', false, [true]],
      ['validate', false, []],
      ['indexBytes', false, []],
      ['destroy', false, []],
    ],
  ],
  [
    'RangeView (DryRunRange, a dry run of a Range)',
    () => new Range('10.0.0.0/24').dryRun(),
    [
      ['allocate', false, ['10.0.0.9']],
      ['allocateNext', false, []],
      ['tryAllocateNext', false, []],
      ['release', false, ['10.0.0.1']],
      ['has', false, ['10.0.0.1']],
      ['forEach', false, [() => {}]],
      ['used', false, []],
      ['free', false, []],
      ['dryRun', false, []],
    ],
  ],
  [
    'MemoryStore',
    (store) => store,
    [
      ['create', true, [RECORD]],
      ['delete', true, ['10.0.0.1']],
      ['get', true, ['10.0.0.1']],
      ['createSync', false, [RECORD]],
      ['deleteSync', false, ['10.0.0.1']],
      ['getSync', false, ['10.0.0.1']],
      ['records', false, []],
      ['validate', false, []],
      ['close', false, []],
    ],
  ],
  [
    'MemoryStore.cache',
    (store) => store.cache,
    [
      ['get', false, ['10.0.0.1']],
      ['list', false, []],
      ['hasSynced', false, []],
      ['subscribe', false, [{ onAdd() {}, onDelete() {} }]],
    ],
  ],
  [
    'InMemoryServiceCIDRs',
    serviceCIDRs,
    [
      ['addServiceCIDR', false, ['other', ['10.1.0.0/24']]],
      ['setReady', false, ['kubernetes', false]],
      ['markDeleting', false, ['kubernetes']],
      ['deleteServiceCIDR', false, ['kubernetes']],
      ['get', false, ['kubernetes']],
      ['list', false, []],
      ['hasSynced', false, []],
      ['subscribe', false, [{ onAdd() {}, onDelete() {} }]],
    ],
  ],
  [
    'KubernetesStore',
    () => new KubernetesStore(unreachableCluster(), { start: false }),
    [
      ['create', true, [RECORD]],
      ['delete', true, ['10.0.0.1']],
      ['get', true, ['10.0.0.1']],
    ],
  ],
  [
    'KubernetesStore.cache',
    () => new KubernetesStore(unreachableCluster(), { start: false }).cache,
    [
      ['get', false, ['10.0.0.1']],
      ['list', false, []],
      ['hasSynced', false, []],
      ['subscribe', false, [{ onAdd() {}, onDelete() {} }]],
    ],
  ],
  [
    'KubernetesServiceCIDRs',
    () => new KubernetesServiceCIDRs(unreachableCluster(), { start: false }),
    [
      ['subscribe', false, [{ onAdd() {}, onDelete() {} }]],
      ['hasSynced', false, []],
      ['list', false, []],
      ['get', false, ['kubernetes']],
    ],
  ],
  // the generator of the `random` option, seededRandom's
  ['Xoshiro128', () => seededRandom(1), [['nextU32', false, []]]],
  // what a coolDown chooser holds, as a strategy of yours sees it
  ['Cooling', cooling, [['holds', false, [0, 0]]]],
];

describe.each(UNBOUND_CASES)('%s: a method called without its object', (className, make, methods) => {
  // undefined: a method taken off the object, or passed as a callback; {}: setTimeout's timer, or another object
  const selves: [string, unknown][] = [
    ['undefined', undefined],
    ['another object', {}],
  ];
  it.each(
    methods.flatMap(([method, returnsPromise, args]) =>
      selves.map(([label, self]) => [method, label, returnsPromise, args, self] as const),
    ),
  )(
    '%s, this %s → InvalidArgumentError naming it and how to call it, nothing changed',
    async (method, _label, returnsPromise, args, self) => {
      const store = new MemoryStore();
      const target = make(store) as Record<string, (...a: unknown[]) => unknown>;
      if ('allocate' in target && !(target instanceof Range) && !className.includes('DryRun') && className !== 'DualStackAllocator') {
        await (target as unknown as IPAllocator).allocate('10.0.0.1', OWNER);
      }
      const before = store.records();
      const fn = target[method]!;
      let answer: unknown;
      let thrown: unknown;
      try {
        answer = fn.apply(self, args);
      } catch (e) {
        thrown = e;
      }
      const error = returnsPromise ? await failure(() => answer) : thrown;
      if (returnsPromise) expect(thrown).toBeUndefined(); // rejects, never throws
      expect(error).toBeInstanceOf(InvalidArgumentError);
      const shown = className.split(' ')[0]; // the class a user knows it as
      expect((error as Error).message).toContain(`${shown}.${method}() was called without its ${shown}`);
      expect((error as Error).message).toMatch(/arrow function, \(…\) => \w+\./);
      expect(store.records()).toEqual(before);
      // and the object still answers when called on it
      if (typeof target.used === 'function') expect(target.used()).toBe(before.length);
    },
  );
});

// A subclass of MemoryStore (a store that loads records, a test double) calls its protected
// members: put, changed and isClosed. Taken off the store (`const { put } = this`, a callback),
// they answer as its public methods do: InvalidArgumentError naming the member, nothing changed —
// not the TypeError of their first read of a private field, nor (isClosed read with another
// object) undefined, as if the store were open.
describe('MemoryStore: a protected member called without its store', () => {
  /** A subclass that hands out its protected members as a subclass author could take them. */
  class Loading extends MemoryStore {
    members() {
      const isClosed = Object.getOwnPropertyDescriptor(MemoryStore.prototype, 'isClosed')!.get!;
      return {
        put: (self: unknown) => this.put.call(self as object, { ...RECORD, name: '10.0.0.8' }, undefined, true),
        changed: (self: unknown) => this.changed.call(self as object, true, RECORD, undefined),
        isClosed: (self: unknown) => isClosed.call(self),
      };
    }
  }
  it.each([
    ['put', '()'],
    ['changed', '()'],
    ['isClosed', ''],
  ] as const)('%s, this undefined or another object → InvalidArgumentError naming it, the store unchanged', async (member, call) => {
    const store = new Loading();
    await store.create(RECORD);
    const heard: string[] = [];
    store.cache.subscribe({ onAdd: (r) => heard.push(`add ${r.name}`), onDelete: (r) => heard.push(`delete ${r.name}`) });
    heard.length = 0;
    for (const self of [undefined, {}]) {
      let thrown: unknown;
      try {
        store.members()[member](self);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, `${member}, this ${quoteInput(self)}`).toBeInstanceOf(InvalidArgumentError);
      expect((thrown as Error).message).toMatch(
        new RegExp(
          `^MemoryStore\\.${member}${call.replace(/[()]/g, '\\$&')} was (called|read) without its MemoryStore \\(this was (undefined|a value of type object)\\)`,
        ),
      );
    }
    expect([store.records().map((r) => r.name), heard]).toEqual([['10.0.0.7'], []]);
    // and on the store itself they answer as before
    store.members().put(store);
    expect(store.members().isClosed(store)).toBe(false);
    expect(store.records().map((r) => r.name)).toEqual(['10.0.0.7', '10.0.0.8']);
  });
});

describe('the idioms that lose `this`', () => {
  it("a random option of a generator's nextU32 taken off it is refused by the first draw, naming it, nothing taken", async () => {
    const rng = seededRandom(1);
    const store = new MemoryStore();
    const a = new Allocator('10.0.0.0/24', { store, random: { nextU32: rng.nextU32 } });
    const r = new Range('10.0.0.0/24', { random: { nextU32: rng.nextU32 } });
    const said = /^Xoshiro128\.nextU32\(\) was called without its Xoshiro128 /;
    const refused = await failure(() => a.allocateNext(OWNER));
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as Error).message).toMatch(said);
    expect(() => r.allocateNext()).toThrow(said);
    expect([a.used(), r.used(), store.records()]).toEqual([0, 0, []]);
  });

  it('ips.map(allocator.release), a destructured allocateNext and setTimeout(allocator.destroy) are refused, not half done', async () => {
    const store = new MemoryStore();
    const a = new Allocator('10.0.0.0/24', { store, random: seededRandom(1) });
    const ips = [await a.allocateNext(OWNER), await a.allocateNext(OWNER)];
    // (the cast: the type check refuses map's index as onDeleteError; it cannot see the lost
    // `this` here, as map's callback type declares none)
    const released = ips.map(a.release as (ip: string) => Promise<void>);
    for (const p of released) expect(await failure(() => p)).toBeInstanceOf(InvalidArgumentError);
    const { allocateNext } = a;
    // @ts-expect-error a method taken off its object: `this` is void
    expect(await failure(() => allocateNext(OWNER))).toBeInstanceOf(InvalidArgumentError);
    const timerError = await new Promise<unknown>((resolve) => {
      const timer = setTimeout(() => {
        try {
          a.destroy.call(timer); // as setTimeout(a.destroy) calls it: `this` is the timer
          resolve(undefined);
        } catch (e) {
          resolve(e);
        }
      }, 0);
    });
    expect(timerError).toBeInstanceOf(InvalidArgumentError);
    expect(a.used()).toBe(2); // nothing released, nothing destroyed
    expect(store.size).toBe(2);
  });
  it('what a bound call throws passes unchanged, however it failed: only a missing object is named', async () => {
    const a = new Allocator('10.0.0.0/24', { store: new MemoryStore() });
    const bug = new TypeError('a callback of yours');
    expect(() =>
      a.forEach(() => {
        throw bug;
      }),
    ).not.toThrow(); // no allocation: the callback is not called
    await a.allocate('10.0.0.1', OWNER);
    expect(() =>
      a.forEach(() => {
        throw bug;
      }),
    ).toThrow(bug);
  });
  it('a wrapper made with Object.create(allocator) is the allocator for its methods, and its overrides call them', async () => {
    const store = new MemoryStore();
    for (const a of [
      new Allocator('10.0.0.0/24', { store, random: seededRandom(1) }),
      new ReferenceAllocator('10.0.1.0/24', { store, random: seededRandom(1) }),
    ]) {
      const calls: string[] = [];
      const wrapper = Object.create(a) as IPAllocator;
      wrapper.allocateNext = function (this: IPAllocator, owner) {
        calls.push('allocateNext');
        return Object.getPrototypeOf(this).allocateNext.call(this, owner);
      };
      const ip = await wrapper.allocateNext(OWNER);
      expect(calls).toEqual(['allocateNext']);
      expect(await wrapper.has(ip)).toBe(true);
      await wrapper.release(ip);
      expect(wrapper.used()).toBe(0);
      wrapper.destroy();
      expect(() => a.used()).toThrow(ErrDestroyed);
    }
    // the pair and the MetaAllocator, as docs/api.md describes them
    const meta = metaOn(store);
    const metaWrapper = Object.create(meta) as MetaAllocator;
    expect(metaWrapper.rangeFor(await metaWrapper.allocateNext(OWNER))).toBe('10.0.0.0/24');
    const pair = new DualStackAllocator(new Allocator('10.1.0.0/24', { store }), new Allocator('fd00::/120', { store }));
    const pairWrapper = Object.create(pair) as DualStackAllocator;
    await pairWrapper.release(await pairWrapper.allocateNext(OWNER));
    pairWrapper.destroy();
    expect(() => pair.allocator('IPv4')).toThrow(ErrDestroyed);
    meta.destroy();
  });
  it('a wrapper made with Object.create(range) reads the Range, and every change through it is refused, the Range unchanged', () => {
    // Regression: the wrapper's changes were written on the wrapper: its allocations left the
    // range's used() behind (negative after a release on the range), and its destroy() freed the
    // index the range still used (the range then answered "core space_take answered -1").
    const range = new Range('10.0.0.0/24');
    range.allocate('10.0.0.1');
    const before = range.snapshot();
    const wrapper = Object.create(range) as Range;
    expect([wrapper.has('10.0.0.1'), wrapper.used(), wrapper.snapshot()]).toEqual([true, 1, before]);
    const changes: [string, () => unknown][] = [
      ['allocate', () => wrapper.allocate('10.0.0.2')],
      ['allocateNext', () => wrapper.allocateNext()],
      ['release', () => wrapper.release('10.0.0.1')],
      ['allocateMany', () => wrapper.allocateMany(2)],
      ['releaseMany', () => wrapper.releaseMany(['10.0.0.1'])],
      ['loadMany', () => wrapper.loadMany(['10.0.0.3'])],
      ['restore', () => wrapper.restore(before.range, before.data)],
      ['enableMetrics', () => wrapper.enableMetrics(new Registry())],
      ['destroy', () => wrapper.destroy()],
    ];
    for (const [name, change] of changes) {
      expect(change, name).toThrow(InvalidArgumentError);
      expect(change, name).toThrow(/only on itself, not on an object made from it with Object\.create/);
    }
    expect([range.used(), range.snapshot(), Object.keys(wrapper)]).toEqual([1, before, []]);
    expect(range.allocateNext()).toMatch(/^10\.0\.0\./); // its index alive
    range.destroy();
  });
  it('a Proxy of a Range (a tracing wrapper) reads the Range, and every change through it is refused naming the Proxy, the Range unchanged', () => {
    const range = new Range('10.0.0.0/24');
    range.allocate('10.0.0.1');
    const before = range.snapshot();
    const traced: string[] = [];
    const proxy = new Proxy(range, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return function (this: unknown, ...args: unknown[]) {
          traced.push(String(key));
          return Reflect.apply(value, this, args);
        };
      },
    });
    expect([proxy.has('10.0.0.1'), proxy.used(), proxy.snapshot()]).toEqual([true, 1, before]);
    for (const [name, change] of [
      ['allocateNext', () => proxy.allocateNext()],
      ['release', () => proxy.release('10.0.0.1')],
      ['destroy', () => proxy.destroy()],
      ['[Symbol.dispose]', () => proxy[Symbol.dispose]()],
    ] as const) {
      expect(change, name).toThrow(InvalidArgumentError);
      expect(change, name).toThrow(/nor on a Proxy of it: to override or trace a method, extend Range/);
    }
    expect(traced).toContain('allocateNext');
    expect([range.used(), range.snapshot()]).toEqual([1, before]);
    range.destroy();
  });
  it('a Proxy whose get binds the methods to the Range calls them on the Range: its changes go through, one count', () => {
    const range = new Range('10.0.0.0/24');
    const traced: string[] = [];
    const proxy = new Proxy(range, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        traced.push(String(key));
        return value.bind(target);
      },
    });
    const ip = proxy.allocateNext();
    proxy.allocate('10.0.0.1');
    expect([range.has(ip), range.has('10.0.0.1'), range.used(), proxy.used()]).toEqual([true, true, 2, 2]);
    proxy.release(ip);
    expect([range.has(ip), range.used()]).toEqual([false, 1]);
    expect(traced).toEqual(expect.arrayContaining(['allocateNext', 'allocate', 'release']));
    range.validate();
    proxy.destroy();
    expect(() => range.used()).toThrow(ErrDestroyed);
  });
  it('an IPAllocator of your own needs no `this` parameter to type-check', () => {
    // The interface's `this: object` refuses calls without an object; a class without the
    // parameter still implements it (tsc checks this file).
    class Fixed implements IPAllocator {
      readonly cidr = '10.0.0.0/32';
      readonly ipFamily = 'IPv4' as const;
      readonly size = 0n;
      allocate(_ip: string, _owner?: ParentRef): Promise<void> {
        return Promise.resolve();
      }
      allocateNext(_owner?: ParentRef): Promise<string> {
        return Promise.resolve('10.0.0.0');
      }
      release(_ip: string): Promise<void> {
        return Promise.resolve();
      }
      has(_ip: string): Promise<boolean> {
        return Promise.resolve(false);
      }
      forEach(_fn: (ip: string) => void): void {}
      used(): number {
        return 0;
      }
      free(): bigint {
        return 0n;
      }
      dryRun(): IPAllocator {
        return this;
      }
      enableMetrics(): void {}
      destroy(): void {}
    }
    const mine: IPAllocator = new Fixed();
    expect(mine.used()).toBe(0);
    // a union of the classes calls their methods as any one of them
    const either: Allocator | ReferenceAllocator | MetaAllocator = new Allocator('10.0.0.0/30');
    expect(either.used()).toBe(0);
    either.destroy();
  });
  it('a store or a ServiceCIDR source: a method taken off it is refused by the types too, and a union of the classes calls them', async () => {
    const memory = new MemoryStore();
    const kubernetes = new KubernetesStore(unreachableCluster(), { start: false });
    const { get, close } = kubernetes;
    // @ts-expect-error a method taken off its object: `this` is void
    expect(await failure(() => get('10.0.0.1'))).toBeInstanceOf(InvalidArgumentError);
    // @ts-expect-error a method taken off its object: `this` is void
    expect(() => close()).toThrow(InvalidArgumentError);
    const cidrs = serviceCIDRs();
    const { list } = cidrs;
    // @ts-expect-error a method taken off its object: `this` is void
    expect(() => list()).toThrow(InvalidArgumentError);
    const source = new KubernetesServiceCIDRs(unreachableCluster(), { start: false });
    const { start } = source;
    // @ts-expect-error a method taken off its object: `this` is void
    expect(() => start()).toThrow(InvalidArgumentError);
    // a union of the classes calls their methods as any one of them (tsc checks these lines)
    for (const store of [memory, kubernetes] as (MemoryStore | KubernetesStore)[]) {
      expect(await failure(() => store.delete(5 as unknown as string))).toBeInstanceOf(InvalidArgumentError);
      store.close();
    }
    const sources: (InMemoryServiceCIDRs | KubernetesServiceCIDRs)[] = [cidrs, source];
    expect(sources.map((each) => [each.hasSynced(), each.list().length])).toEqual([
      [true, 1],
      [false, 0],
    ]);
    source.close();
  });
});

// A getter read with another `this` — `Object.getOwnPropertyDescriptor(Range.prototype,
// 'indexKind').get.call(other)`, or a Proxy of the object whose get trap passes the Proxy on —
// answers as a method called without its object does: InvalidArgumentError naming the getter,
// not the TypeError of its first read of a field ("Cannot read properties of undefined").
const UNBOUND_GETTERS: [string, (store: MemoryStore) => object, string[]][] = [
  ['Range', () => new Range('10.0.0.0/24'), ['indexKind']],
  ['RangeView (DryRunRange, a dry run of a Range)', () => new Range('10.0.0.0/24').dryRun(), ['cidr', 'ipFamily', 'size']],
  ['MetaAllocator', metaOn, ['size']],
  [
    'DryRunAllocator (NotReadyDryRun, a dry run of a MetaAllocator not ready)',
    (store) => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store }).dryRun(),
    ['ipFamily', 'size', 'canAllocateNow'],
  ],
  ['DryRunAllocator', (store) => new Allocator('10.0.0.0/24', { store }).dryRun(), ['cidr', 'ipFamily', 'size', 'canAllocateNow']],
  ['ReferenceAllocator', (store) => new ReferenceAllocator('10.0.0.0/24', { store }), ['size']],
  ['Allocator', (store) => new Allocator('10.0.0.0/24', { store }), ['size', 'canAllocateNow']],
  ['MemoryStore', (store) => store, ['size', 'watcherCount']],
  ['MemoryStore.cache', (store) => store.cache, ['size', 'watcherCount']],
  ['KubernetesStore', () => new KubernetesStore(unreachableCluster(), { start: false }), ['cache']],
  ['KubernetesStore.cache', () => new KubernetesStore(unreachableCluster(), { start: false }).cache, ['size']],
];

describe.each(UNBOUND_GETTERS)('%s: a getter read without its object', (className, make, getters) => {
  const selves: [string, unknown][] = [
    ['undefined', undefined],
    ['another object', {}],
  ];
  it.each(getters.flatMap((getter) => selves.map(([label, self]) => [getter, label, self] as const)))(
    '%s, this %s → InvalidArgumentError naming it and how to read it',
    (getter, _label, self) => {
      const target = make(new MemoryStore());
      let proto: object | null = target;
      let descriptor: PropertyDescriptor | undefined;
      while (descriptor === undefined && proto !== null) {
        descriptor = Object.getOwnPropertyDescriptor(proto, getter);
        proto = Object.getPrototypeOf(proto);
      }
      expect(typeof descriptor?.get).toBe('function');
      const expected = Reflect.get(target, getter);
      let thrown: unknown;
      try {
        descriptor!.get!.call(self);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      const shown = className.split(' ')[0];
      const object = shown.charAt(0).toLowerCase() + shown.slice(1);
      expect((thrown as Error).message).toBe(
        `${shown}.${getter} was read without its ${shown} (this was ${self === undefined ? 'undefined' : 'a value of type object'}): read it on the object, ${object}.${getter}`,
      );
      // on its object, and on a wrapper made from it with Object.create, it answers as before
      expect(Reflect.get(target, getter)).toBe(expected);
      expect(Reflect.get(Object.create(target) as object, getter)).toBe(expected);
    },
  );
});

it('Cooling: size read without its object → InvalidArgumentError naming it, as the other getters', () => {
  const target = cooling();
  const size = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(target), 'size')!.get!;
  for (const self of [undefined, {}]) {
    expect(() => size.call(self)).toThrow(InvalidArgumentError);
    expect(() => size.call(self)).toThrow(
      /^Cooling\.size was read without its Cooling \(this was (undefined|a value of type object)\): read it on the object, cooling\.size$/,
    );
  }
  expect(target.size).toBe(0);
});

it('Cooling: size and holds() on an object made from it (Object.create) or a Proxy of it → InvalidArgumentError saying a wrapper cannot reach what it holds', () => {
  // its queue is a #field, which neither has: no answer to read through. Said as Range says it of
  // a wrapper, not as a read without the object (the wrapper is an instance of Cooling)
  const target = cooling();
  for (const [label, wrapper] of [
    ['Object.create', Object.create(target) as Cooling],
    ['a Proxy', new Proxy(target, {})],
  ] as const) {
    expect(() => wrapper.size, label).toThrow(InvalidArgumentError);
    expect(() => wrapper.size, label).toThrow(
      /^Cooling\.size is read only on the Cooling itself, not on an object made from it with Object\.create, nor on a Proxy of it: neither reaches the addresses the cool-down holds$/,
    );
    expect(() => wrapper.holds(0, 0), label).toThrow(InvalidArgumentError);
    expect(() => wrapper.holds(0, 0), label).toThrow(
      /^Cooling\.holds\(\) is called only on the Cooling itself, not on an object made from it with Object\.create, nor on a Proxy of it: neither reaches the addresses the cool-down holds$/,
    );
  }
  expect([target.size, target.holds(0, 0)]).toEqual([0, false]);
});

// The members keyed by a symbol, `[Symbol.dispose]` (what `using` calls) and the inspect method
// (Symbol.for('nodejs.util.inspect.custom'), what console.log calls), taken off the object
// (`const dispose = range[Symbol.dispose]`) answer as the named methods do: InvalidArgumentError
// naming the member and how to call it, nothing destroyed — not the TypeError of their first
// read of `this`.
const INSPECT = Symbol.for('nodejs.util.inspect.custom');
/** [the class a user knows (and why, in brackets), how to make one, whether it has [Symbol.dispose]] */
const UNBOUND_SYMBOL_MEMBERS: [string, (store: MemoryStore) => object, boolean][] = [
  ['Range', () => new Range('10.0.0.0/24'), true],
  ['Allocator', (store) => new Allocator('10.0.0.0/24', { store }), true],
  ['ReferenceAllocator', (store) => new ReferenceAllocator('10.0.0.0/24', { store }), true],
  ['MetaAllocator', metaOn, true],
  [
    'DualStackAllocator',
    (store) => new DualStackAllocator(new Allocator('10.0.0.0/24', { store }), new Allocator('fd00::/120', { store })),
    true,
  ],
  ['MemoryStore', (store) => store, true],
  // the dry-run views: the inspect method only (a view holds nothing to dispose of)
  ['DryRunRange (a dry run of a Range)', () => new Range('10.0.0.0/24').dryRun(), false],
  ['DryRunAllocator (a dry run of an Allocator)', (store) => new Allocator('10.0.0.0/24', { store }).dryRun(), false],
  ['DryRunAllocator (a dry run of a ReferenceAllocator)', (store) => new ReferenceAllocator('10.0.0.0/24', { store }).dryRun(), false],
  [
    'DryRunAllocator (NotReadyDryRun, a dry run of a MetaAllocator not ready)',
    (store) => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store }).dryRun(),
    false,
  ],
];

describe.each(UNBOUND_SYMBOL_MEMBERS)(
  '%s: [Symbol.dispose] and the inspect method called without their object',
  (label, make, disposable) => {
    const className = label.split(' ')[0]!;
    const object = className.charAt(0).toLowerCase() + className.slice(1);
    const members = [
      ['[Symbol.dispose]', 'undefined', Symbol.dispose, undefined],
      ['[Symbol.dispose]', 'another object', Symbol.dispose, {}],
      ["[Symbol.for('nodejs.util.inspect.custom')]", 'undefined', INSPECT, undefined],
      ["[Symbol.for('nodejs.util.inspect.custom')]", 'another object', INSPECT, {}],
    ] as const;
    it.each(members.filter(([, , key]) => disposable || key !== Symbol.dispose))(
      '%s, this %s → InvalidArgumentError naming it, the object alive',
      (member, _label, key, self) => {
        const store = new MemoryStore();
        const target = make(store) as Record<symbol, (...args: unknown[]) => unknown>;
        const shown = inspect(target);
        let thrown: unknown;
        try {
          target[key]!.call(self, 2, {}, inspect);
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(InvalidArgumentError);
        expect((thrown as Error).message).toBe(
          `${className}${member}() was called without its ${className} (this was ${self === undefined ? 'undefined' : 'a value of type object'}): call it on the object, ${object}${member}(…); where a function is passed (a callback, a method taken off the object), pass an arrow function, (…) => ${object}${member}(…)`,
        );
        expect(inspect(target)).toBe(shown); // not destroyed nor closed
        expect(shown).not.toMatch(/destroyed|closed/);
        expect(Symbol.dispose in target).toBe(disposable);
        if (disposable) {
          target[Symbol.dispose]!.call(target);
          expect(inspect(target)).toMatch(/destroyed: true|closed: true/);
        }
      },
    );
  },
);

// The informer and the API requests a KubernetesStore or a KubernetesServiceCIDRs holds are left
// out of the published declarations: a subclass of yours cannot see them, so it may name a member
// of its own `informer` or `requests` (a class field is defined on the object after the base
// constructor ran), which must not replace them.
describe('KubernetesStore and KubernetesServiceCIDRs: a subclass with fields of its own named informer and requests', () => {
  /** What a class field `informer = …` does: defined on the object once the base constructor returned. */
  function ownFields<T extends object>(target: T): T {
    for (const key of ['informer', 'requests']) {
      Object.defineProperty(target, key, { value: `my own ${key}`, writable: true, enumerable: true, configurable: true });
    }
    return target;
  }
  it.each([
    ['KubernetesStore', () => ownFields(new KubernetesStore(unreachableCluster(), { start: false }))],
    ['KubernetesServiceCIDRs', () => ownFields(new KubernetesServiceCIDRs(unreachableCluster(), { start: false }))],
  ] as const)('%s: its state, cache and lifecycle work as before, and the fields keep their values', async (_name, make) => {
    const target = make();
    expect(target.state).toBe('syncing');
    expect(target.stats.lists).toBe(0);
    const changes: string[] = [];
    target.onStateChange((state) => changes.push(state));
    if (target instanceof KubernetesStore) expect(target.cache.hasSynced()).toBe(false);
    else expect([target.hasSynced(), target.list()]).toEqual([false, []]);
    target.close();
    expect([target.state, changes]).toEqual(['stopped', ['stopped']]);
    expect(await failure(() => target.waitForSync())).toBeInstanceOf(ErrDestroyed);
    expect(Object.entries(target).filter(([key]) => key === 'informer' || key === 'requests')).toEqual([
      ['informer', 'my own informer'],
      ['requests', 'my own requests'],
    ]);
  });
});

describe('KubernetesStore and KubernetesServiceCIDRs: a method of their lifecycle called without its object', () => {
  const kc = () => kubeConfigFor('http://127.0.0.1:9');
  it.each([
    ['KubernetesStore', () => new KubernetesStore(kc(), { start: false })],
    ['KubernetesServiceCIDRs', () => new KubernetesServiceCIDRs(kc(), { start: false })],
  ] as const)(
    '%s: close, [Symbol.dispose], start, onStateChange, waitForSync → InvalidArgumentError, the object open',
    async (_name, make) => {
      const target = make();
      const calls: [string, (self: unknown) => unknown][] = [
        // (`as object`: the types refuse a call without an object, which is what is tried here)
        ['close', (self) => target.close.call(self as object)],
        ['[Symbol.dispose]', (self) => target[Symbol.dispose].call(self as object)],
        ['start', (self) => target.start.call(self as object)],
        ['onStateChange', (self) => target.onStateChange.call(self as object, () => {})],
        ['waitForSync', (self) => target.waitForSync.call(self as object)],
      ];
      for (const [member, call] of calls) {
        for (const self of [undefined, {}]) {
          const error = await failure(() => call(self));
          expect(error, member).toBeInstanceOf(InvalidArgumentError);
          expect((error as Error).message, member).toMatch(
            new RegExp(
              `^KubernetesStore or KubernetesServiceCIDRs: ${member.replace(/[[\]().]/g, '\\$&')}\\(\\) was called without its object \\(this was (undefined|a value of type object)\\): call it on the object`,
            ),
          );
        }
      }
      expect(target.state).toBe('syncing'); // neither started nor stopped
      target[Symbol.dispose]();
      expect(target.state).toBe('stopped');
    },
  );
  it.each([
    ['KubernetesStore', () => new KubernetesStore(kc(), { start: false })],
    ['KubernetesServiceCIDRs', () => new KubernetesServiceCIDRs(kc(), { start: false })],
  ] as const)('%s: frozen (Object.freeze), or closed through an object made from it, it closes for good', async (_name, make) => {
    // `closed` was a field of the object: frozen, close() threw a TypeError before stopping
    // anything (the informer went on listing and watching); through a wrapper it was written
    // onto the wrapper
    const frozen = Object.freeze(make());
    expect(() => frozen.close()).not.toThrow();
    expect(frozen.state).toBe('stopped');
    expect(await failure(() => frozen.waitForSync())).toBeInstanceOf(ErrDestroyed);
    const target = make();
    const wrapper = Object.create(target) as typeof target;
    wrapper.close();
    expect(Object.keys(wrapper)).toEqual([]);
    expect(target.state).toBe('stopped');
    expect(await failure(() => target.waitForSync())).toBeInstanceOf(ErrDestroyed);
    expect(() => target.start()).toThrow(ErrDestroyed);
  });
  it.each([
    ['KubernetesStore', () => new KubernetesStore(kc(), { start: false })],
    ['KubernetesServiceCIDRs', () => new KubernetesServiceCIDRs(kc(), { start: false })],
  ] as const)('%s: a member of a subclass named `closed` does not reopen it for start() or waitForSync()', async (_name, make) => {
    // close() wrote the flag of its own, start() and waitForSync() read the protected `closed`
    // getter, which a plain-JavaScript subclass's field of that name shadows
    const target = make();
    Object.defineProperty(target, 'closed', { value: false, writable: true });
    target.close();
    expect(() => target.start()).toThrow(ErrDestroyed);
    expect(await failure(() => target.waitForSync())).toBeInstanceOf(ErrDestroyed);
  });
  it.each([
    ['KubernetesStore', () => new KubernetesStore(kc(), { start: false })],
    ['KubernetesServiceCIDRs', () => new KubernetesServiceCIDRs(kc(), { start: false })],
  ] as const)('%s: state, stats and lastError read without their object → InvalidArgumentError', (_name, make) => {
    const target = make();
    for (const getter of ['state', 'stats', 'lastError']) {
      let proto: object | null = target;
      let descriptor: PropertyDescriptor | undefined;
      while (descriptor === undefined && proto !== null) {
        descriptor = Object.getOwnPropertyDescriptor(proto, getter);
        proto = Object.getPrototypeOf(proto);
      }
      for (const self of [undefined, {}]) {
        expect(() => descriptor!.get!.call(self), getter).toThrow(InvalidArgumentError);
        expect(() => descriptor!.get!.call(self), getter).toThrow(
          new RegExp(
            `^KubernetesStore or KubernetesServiceCIDRs: ${getter} was read without its object \\(this was (undefined|a value of type object)\\): read it on the object, store\\.${getter}$`,
          ),
        );
      }
      expect(() => Reflect.get(target, getter), getter).not.toThrow(); // on its object, as before
    }
    target.close();
  });
});
