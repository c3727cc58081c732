// Wrong arguments to constructors and functions, as a careless caller passes them: each fails
// with InvalidArgumentError quoting what was wrong — never a TypeError from deep inside a later
// call — and leaves nothing behind. Rows found by the hostile pass over the public API.
import { describe, expect, it } from 'vitest';
import { formatAddr } from '../../adapters/address.ts';
import { Allocator } from '../../adapters/allocator.ts';
import { InvalidArgumentError } from '../../adapters/errors.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { MetaAllocator } from '../../adapters/meta-allocator.ts';
import { isNotContained } from '../../adapters/geometry.ts';
import { ownerKey, reconcile } from '../../adapters/reconcile.ts';
import { Range } from '../../adapters/range.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import { DualStackAllocator } from '../../adapters/dual-stack.ts';
import { coolDown } from '../../adapters/cool-down.ts';
import { allocatorLabels, type ParentRef } from '../../adapters/store.ts';
import { InMemoryServiceCIDRs } from '../../adapters/service-cidrs.ts';
import { memoryLimit, setMemoryLimit } from '../../adapters/wasm.ts';
import { failure } from '../helpers.ts';
import { quoteInput } from '../../adapters/quote.ts';

// biome-ignore lint/suspicious/noExplicitAny: the point is to pass what the types forbid
const anyValue = (v: unknown): any => v;

describe('constructors refuse options of the wrong kind with InvalidArgumentError', () => {
  const BAD_OPTIONS: [string, unknown][] = [
    ['null', null],
    ['a number', 5],
    ['an array', []],
    ['store: {}', { store: {} }],
    ['store: a number', { store: 5 }],
    [
      'store whose cache has no subscribe',
      { store: { create() {}, delete() {}, get() {}, cache: { get() {}, list() {}, hasSynced() {} } } },
    ],
    [
      'store whose cache.subscribe returns no function to unsubscribe',
      {
        store: {
          create() {},
          delete() {},
          get() {},
          cache: { get() {}, list: () => [], hasSynced: () => true, subscribe: () => undefined },
        },
      },
    ],
    [
      'store whose sync.createSync is an async function',
      {
        store: {
          create() {},
          delete() {},
          get() {},
          sync: { async createSync() {}, deleteSync() {}, getSync() {} },
          cache: { get() {}, list: () => [], hasSynced: () => true, subscribe: () => () => {} },
        },
      },
    ],
    // Found by an outside drop-in test: an async cache read answered a promise, read as a record
    // held (ReferenceAllocator: ErrFull on a free /29) or as "synced" (allocations before the sync)
    ...(['get', 'list', 'hasSynced'] as const).map((read): [string, unknown] => [
      `store whose cache.${read} is an async function`,
      {
        store: {
          create() {},
          delete() {},
          get() {},
          cache: { get() {}, list: () => [], hasSynced: () => true, subscribe: () => () => {}, [read]: async () => undefined },
        },
      },
    ]),
    [
      'store whose sync lacks getSync',
      {
        store: {
          create() {},
          delete() {},
          get() {},
          sync: { createSync() {}, deleteSync() {} },
          cache: { get() {}, list: () => [], hasSynced: () => true, subscribe: () => () => {} },
        },
      },
    ],
    ['random: 5', { random: 5 }],
    ['random without nextU32', { random: {} }],
  ];
  const MAKERS: [string, (options: unknown) => unknown][] = [
    ['Allocator', (o) => new Allocator('10.0.0.0/24', anyValue(o))],
    ['ReferenceAllocator', (o) => new ReferenceAllocator('10.0.0.0/24', anyValue(o))],
    ['MetaAllocator', (o) => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), anyValue(o))],
  ];
  for (const [maker, make] of MAKERS) {
    it.each(BAD_OPTIONS)(`${maker} with options %s`, async (_name, options) => {
      const e = await failure(() => make(options));
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as Error).message).toMatch(/options/);
    });
  }

  it('a cache whose hasSynced answers a promise (a plain function answering later) is refused when asked, not read as synced', async () => {
    const inner = new MemoryStore();
    const store = { ...inner, create: inner.create.bind(inner), delete: inner.delete.bind(inner), get: inner.get.bind(inner), close() {} };
    store.cache = {
      ...inner.cache,
      get: (n: string) => inner.cache.get(n),
      list: (l?: Record<string, string>) => inner.cache.list(l),
      subscribe: (w: never) => inner.cache.subscribe(w),
      hasSynced: () => Promise.resolve(false) as never,
    };
    for (const a of [new Allocator('10.0.0.0/29', anyValue({ store })), new ReferenceAllocator('10.0.0.0/29', anyValue({ store }))]) {
      expect(() => a.isReady()).toThrow(
        new InvalidArgumentError(
          "the store's cache.hasSynced() must answer true or false at once, as an informer's HasSynced does; it answered a Promise (a missing await?)",
        ),
      );
      expect(await failure(() => a.allocateNext())).toBeInstanceOf(InvalidArgumentError);
      expect(inner.cache.list()).toEqual([]); // nothing allocated
      a.destroy();
    }
  });

  it('a cache whose get or list answers a promise from a plain function (an async method compiled for ES2015) is refused when read, not read as held', async () => {
    // Found by an outside tester: ReferenceAllocator took the promise for a record held and
    // answered ErrFull with 5 of 6 addresses free; validate() and forEach threw a bare TypeError
    const answersLater = (which: 'get' | 'list') => {
      const inner = new MemoryStore({ syncOps: false });
      const cache = {
        get: (n: string) => (which === 'get' ? Promise.resolve(inner.cache.get(n)) : inner.cache.get(n)),
        list: (l?: Record<string, string>) => (which === 'list' ? Promise.resolve(inner.cache.list(l)) : inner.cache.list(l)),
        hasSynced: () => true,
        subscribe: (w: never) => inner.cache.subscribe(w),
        size: 0,
      };
      return {
        inner,
        store: {
          create: (r: never) => inner.create(r),
          delete: (n: string) => inner.delete(n),
          get: (n: string) => inner.get(n),
          cache,
          close() {},
        },
      };
    };
    {
      const { inner, store } = answersLater('get');
      const r = new ReferenceAllocator('10.0.0.0/29', anyValue({ store }));
      const e = await failure(() => r.allocateNext());
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as Error).message).toMatch(
        /^the store's cache\.get\("10\.0\.0\.[1-6]"\) must answer the record \(an object with a string name\) or undefined at once, from memory, as an informer's lister does; it answered a Promise \(a missing await\?\)$/,
      );
      expect(inner.cache.list()).toEqual([]);
      r.destroy();
    }
    {
      const { store } = answersLater('list');
      for (const a of [new Allocator('10.0.0.0/29', anyValue({ store })), new ReferenceAllocator('10.0.0.0/29', anyValue({ store }))]) {
        const message =
          "the store's cache.list() must answer an array of records at once, from memory, as an informer's lister does; it answered a Promise (a missing await?)";
        expect(() => a.forEach(() => {})).toThrow(new InvalidArgumentError(message));
        if (a instanceof Allocator) expect(() => a.validate()).toThrow(new InvalidArgumentError(message));
        a.destroy();
      }
    }
  });

  it('a cache.list() whose answer holds what is no record is refused by name, not met with a TypeError', () => {
    // Found by an outside tester: a list answering [null] made validate() (and forEach, and an
    // index rebuild) throw "Cannot read properties of null (reading 'name')".
    for (const bad of [null, 42, { nope: 1 }, { name: 7 }]) {
      const inner = new MemoryStore();
      const cache = {
        get: (n: string) => inner.cache.get(n),
        list: () => [...inner.cache.list(), bad],
        hasSynced: () => true,
        subscribe: (w: never) => inner.cache.subscribe(w),
      };
      const store = {
        create: (r: never) => inner.create(r),
        delete: (n: string) => inner.delete(n),
        get: (n: string) => inner.get(n),
        cache,
        close() {},
      };
      const a = new Allocator('10.0.0.0/29', anyValue({ store }));
      const message = `the store's cache.list() answered a list whose record 1 (of 1) is ${quoteInput(bad)}: a record must be an object with a string name`;
      expect(() => a.validate()).toThrow(new InvalidArgumentError(message));
      expect(() => a.forEach(() => {})).toThrow(new InvalidArgumentError(message));
      a.destroy();
    }
  });

  it('a MemoryStore with null options or a non-function onWatcherError', () => {
    expect(() => new MemoryStore(anyValue(null))).toThrow(InvalidArgumentError);
    expect(() => new MemoryStore(anyValue({ onWatcherError: 'log' }))).toThrow(InvalidArgumentError);
  });

  it('a MetaAllocator over a source that is not one, or with an onSkip that is not a function', () => {
    expect(() => new MetaAllocator('IPv4', anyValue(null))).toThrow(InvalidArgumentError);
    expect(() => new MetaAllocator('IPv4', anyValue({ subscribe: 5 }))).toThrow(InvalidArgumentError);
    expect(() => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), anyValue({ onSkip: 1 }))).toThrow(InvalidArgumentError);
  });

  it('an allocator given a valid store and no options still works (the refusals do not over-reach)', async () => {
    const store = new MemoryStore();
    const a = new Allocator('10.0.0.0/29', { store });
    const r = new ReferenceAllocator('10.0.0.0/29', undefined);
    expect(await a.allocateNext()).toMatch(/^10\.0\.0\.[1-6]$/);
    expect(await r.allocateNext()).toMatch(/^10\.0\.0\.[1-6]$/);
    a.destroy();
    r.destroy();
  });
});

describe('a misspelled or unknown option is refused, naming the options there are', () => {
  // Found by an outside drop-in test: `{ stroe: shared }` was ignored in silence, so each of two
  // replicas made a MemoryStore of its own and both handed out the same address.
  const shared = new MemoryStore();
  const ROWS: [string, () => unknown, RegExp][] = [
    [
      'Allocator { stroe }',
      () => new Allocator('10.0.0.0/24', anyValue({ stroe: shared })),
      /^Allocator has no option "stroe" \(did you mean "store"\?\); its options: store, random, metrics, index, strategy$/,
    ],
    [
      'Allocator { indexKind } (Range spells it so)',
      () => new Allocator('10.0.0.0/24', anyValue({ indexKind: 'sparse' })),
      /option "indexKind" \(did you mean "index"\?\)/,
    ],
    [
      'Range { index } (Allocator spells it so)',
      () => new Range('10.0.0.0/24', anyValue({ index: 'sparse' })),
      /^Range has no option "index" \(did you mean "indexKind"\?\)/,
    ],
    [
      'ReferenceAllocator { strategy } (the reference has none)',
      () => new ReferenceAllocator('10.0.0.0/24', anyValue({ strategy: 'sequential' })),
      /^ReferenceAllocator has no option "strategy"; its options: store, random, metrics$/,
    ],
    [
      // found by an outside test: the refusal named a field of the store ("authority") as an option
      'Allocator given the store itself where its options go',
      () => new Allocator('10.0.0.0/24', anyValue(shared)),
      /^Allocator options must be an object whose properties are the options, got a store \(create, delete, get and a cache\): pass it as \{ store \}$/,
    ],
    [
      'ReferenceAllocator given the store itself where its options go',
      () => new ReferenceAllocator('10.0.0.0/24', anyValue(shared)),
      /got a store \(create, delete, get and a cache\): pass it as \{ store \}$/,
    ],
    [
      'Range given a store (it keeps none)',
      () => new Range('10.0.0.0/24', anyValue(shared)),
      /^Range options must be an object whose properties are the options, got a store \(create, delete, get and a cache\): Range takes no store among its options$/,
    ],
    [
      // not "a InMemoryServiceCIDRs keeps no store"; reconcile, which takes a store as its target, was told it "keeps no store"
      'InMemoryServiceCIDRs given a store (none among its options)',
      () => new InMemoryServiceCIDRs(anyValue(shared)),
      /got a store \(create, delete, get and a cache\): InMemoryServiceCIDRs takes no store among its options$/,
    ],
    [
      'MetaAllocator { polciy }',
      () => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), anyValue({ polciy: 'ordered' })),
      /"polciy" \(did you mean "policy"\?\)/,
    ],
    [
      'DualStackAllocator { onRollbackErr }',
      () => new DualStackAllocator(new Allocator('10.0.0.0/24'), new Allocator('fd00::/120'), anyValue({ onRollbackErr: () => {} })),
      /"onRollbackErr" \(did you mean "onRollbackError"\?\)/,
    ],
    [
      "MetaAllocator('ipv4')",
      () => new MetaAllocator(anyValue('ipv4'), new InMemoryServiceCIDRs()),
      /^family must be "IPv4" or "IPv6", got "ipv4" \(did you mean "IPv4"\?\)$/,
    ],
    [
      'coolDown { ms, allocations }',
      () => coolDown('upstream', anyValue({ ms: 10, allocations: 2 })),
      /^coolDown needs exactly one of options.ms and options.allocations, got both \(ms 10 \(number\), allocations 2 \(number\)\)$/,
    ],
    [
      'coolDown {}',
      () => coolDown('upstream', anyValue({})),
      /^coolDown needs exactly one of options.ms and options.allocations, got neither$/,
    ],
    ['MemoryStore { syncOp }', () => new MemoryStore(anyValue({ syncOp: false })), /"syncOp" \(did you mean "syncOps"\?\)/],
    ['MemoryStore { syncOps: 0 }', () => new MemoryStore(anyValue({ syncOps: 0 })), /^options.syncOps must be a boolean, got 0/],
    ['InMemoryServiceCIDRs { onError }', () => new InMemoryServiceCIDRs(anyValue({ onError: () => {} })), /no option "onError"/],
    [
      'addServiceCIDR { Ready }',
      () => new InMemoryServiceCIDRs().addServiceCIDR('a', ['10.0.0.0/24'], anyValue({ Ready: false })),
      /"Ready" \(did you mean "ready"\?\)/,
    ],
  ];
  it.each(ROWS)('%s', (_name, make, message) => {
    expect(make).toThrow(InvalidArgumentError);
    expect(make).toThrow(message);
    expect(shared.watcherCount).toBe(0);
  });

  // Found by an outside drop-in test: a Map or a promise of the options (a missing await) was read
  // as no options at all, so two allocators "sharing" a store each made one of their own and both
  // handed out 10.0.0.1 and 10.0.0.2 of a /30.
  const NOT_PROPERTIES: [string, unknown, string][] = [
    ['a Map', new Map([['store', shared]]), 'a Map'],
    ['a promise of the options', Promise.resolve({ store: shared }), 'a Promise (a missing await?)'],
    ['a Date', new Date(0), 'a Date'],
    ['a typed array', new Uint8Array(2), 'a Uint8Array'],
    ['a boxed number', Object(1), 'a Number'],
  ];
  it.each(NOT_PROPERTIES)('options that are %s: refused, naming what was given', (_name, options, kind) => {
    const message = `Allocator options must be an object whose properties are the options, got ${kind}`;
    expect(() => new Allocator('10.0.0.0/30', anyValue(options))).toThrow(new InvalidArgumentError(message));
    expect(() => new Range('10.0.0.0/30', anyValue(options))).toThrow(InvalidArgumentError);
    expect(() => new MemoryStore(anyValue(options))).toThrow(InvalidArgumentError);
    expect(shared.watcherCount).toBe(0);
  });

  it('a misspelled key inherited from Object.create(defaults) is refused as an own one is', () => {
    // Found by an outside test: inherited options were read, inherited unknown keys not checked,
    // so two allocators built from Object.create({ stroe: shared }) each made a store of their own.
    expect(() => new Allocator('10.0.0.0/30', anyValue(Object.create({ stroe: shared })))).toThrow(
      /^Allocator has no option "stroe" \(did you mean "store"\?\)/,
    );
    expect(() => new Range('10.0.0.0/30', anyValue(Object.create({ indxKind: 'sparse' })))).toThrow(/no option "indxKind"/);
    expect(shared.watcherCount).toBe(0);
  });

  it('a typed array or an Error is named with its article', () => {
    expect(() => new Allocator('10.0.0.0/30', anyValue(new Int8Array(1)))).toThrow(/got an Int8Array$/);
    expect(() => new Allocator('10.0.0.0/30', anyValue(new Error('x')))).toThrow(/got an Error$/);
  });

  it('options given as an instance of a class or through Object.create are still read', async () => {
    class Options {
      store = shared;
    }
    for (const options of [new Options(), Object.create({ store: shared }) as object]) {
      const a = new Allocator('10.0.0.0/30', anyValue(options));
      expect(a.store).toBe(shared);
      a.destroy();
    }
  });

  it('reconcile { famliy }, { family: "ipv4" } and a now that is no clock: refused, nothing deleted', async () => {
    const store = new MemoryStore();
    store.createSync({ name: '10.0.0.9', labels: allocatorLabels('IPv4'), parentRef: null });
    for (const options of [{ famliy: 'IPv4' }, { family: 'ipv4' }, { now: 5 }, { now: () => 'x' }, { now: () => Number.NaN }]) {
      const e = await failure(() => reconcile(store, [], anyValue({ ...options, delete: true })));
      expect(e, JSON.stringify(options)).toBeInstanceOf(InvalidArgumentError);
    }
    expect(store.size).toBe(1);
    expect((await reconcile(store, [], { family: 'IPv4', graceMs: 0 })).leaks).toHaveLength(1);
  });

  it('coolDown { clock } (its option is now)', () => {
    expect(() => coolDown('upstream', anyValue({ ms: 10, clock: () => 0 }))).toThrow(
      /^coolDown has no option "clock"; its options: ms, allocations, now$/,
    );
  });

  it('a ServiceCIDR source whose subscribe returns no function: refused, the ranges its replay built freed', () => {
    const before = memoryLimit().inUse;
    const inner = new InMemoryServiceCIDRs();
    inner.addServiceCIDR('a', ['10.9.0.0/16']);
    const source = {
      subscribe: (w: Parameters<InMemoryServiceCIDRs['subscribe']>[0]) => {
        inner.subscribe(w);
        return undefined;
      },
    };
    expect(() => new MetaAllocator('IPv4', anyValue(source), { store: shared })).toThrow(
      /^source\.subscribe must return the function that unsubscribes, got undefined/,
    );
    expect(memoryLimit().inUse).toBe(before);
    expect(shared.watcherCount).toBe(0);
  });

  it('an option set to undefined is no mistake, whatever its name (a spread of optional settings)', async () => {
    const a = new Allocator('10.0.0.0/29', anyValue({ store: shared, extra: undefined }));
    expect(await a.allocateNext()).toMatch(/^10\.0\.0\./);
    a.destroy();
  });
});

describe('functions refuse wrong arguments with InvalidArgumentError', () => {
  const OWNER: ParentRef = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };

  it('reconcile without a store, without owners, or with a bad grace', async () => {
    const store = new MemoryStore();
    expect(await failure(() => reconcile(anyValue(null), []))).toBeInstanceOf(InvalidArgumentError);
    expect(await failure(() => reconcile(anyValue({ store: 5 }), []))).toBeInstanceOf(InvalidArgumentError);
    expect(await failure(() => reconcile(store, anyValue(null)))).toBeInstanceOf(InvalidArgumentError);
    expect(await failure(() => reconcile(store, [], anyValue(null)))).toBeInstanceOf(InvalidArgumentError);
    expect(await failure(() => reconcile(store, [], { graceMs: anyValue('60s') }))).toBeInstanceOf(InvalidArgumentError);
    expect(await failure(() => reconcile(store, [], { graceMs: -1 }))).toBeInstanceOf(InvalidArgumentError);
    expect((await reconcile(store, [OWNER])).leaks).toEqual([]);
  });

  // A known owner of the wrong shape matches no record: every record would read as a leak and be
  // deleted. Each is refused as allocateNext refuses it as its `owner`, named by its index.
  const NOT_OWNERS = 'knownOwners must be ParentRefs or a function, got';
  const NOT_AN_OBJECT = `Invalid value: null: must be an object {group?, resource, namespace?, name}, e.g. { group: '', resource: 'services', namespace: 'default', name: 'web' }`;
  const BAD_KNOWN_OWNERS: [string, unknown, string | { asAllocateNext: number }][] = [
    // [row, knownOwners, the message, or the index of the item allocateNext refuses with the same one]
    ['a number', 5, `${NOT_OWNERS} 5 (number)`],
    ['a string (iterable, but of characters)', 'web', `${NOT_OWNERS} "web"`],
    ['one owner, not in a list', OWNER, `${NOT_OWNERS} a value of type object`],
    ['an item missing resource', [OWNER, { namespace: 'ns', name: 'web' }], { asAllocateNext: 1 }],
    ['a misspelt key (nmae)', [{ resource: 'services', namespace: 'ns', nmae: 'web' }], { asAllocateNext: 0 }],
    ['a name that is a number', [{ resource: 'services', name: 42 }], { asAllocateNext: 0 }],
    ['a resource that is null', [{ resource: null, name: 'web' }], { asAllocateNext: 0 }],
    ['a group that is no DNS subdomain', [{ group: 'Apps', resource: 'services', name: 'web' }], { asAllocateNext: 0 }],
    ['an item that is a number', [42], { asAllocateNext: 0 }],
    ['an item that is a string', ['web'], { asAllocateNext: 0 }],
    ['an item that is an array', [['services', 'web']], { asAllocateNext: 0 }],
    ['an item that is null', [OWNER, null], `knownOwners[1]: ${NOT_AN_OBJECT}`],
    ['an item that is undefined', [undefined], `knownOwners[0]: ${NOT_AN_OBJECT.replace('null', 'undefined')}`],
    [
      'a Map of owners (iterates [key, owner] pairs)',
      new Map([['svc', OWNER]]),
      `knownOwners[0]: Invalid value: an array of 2 values: must be an object {group?, resource, namespace?, name}, e.g. { group: '', resource: 'services', namespace: 'default', name: 'web' }`,
    ],
  ];
  it.each(BAD_KNOWN_OWNERS)(
    'reconcile with knownOwners %s: refused as allocateNext refuses the owner, nothing deleted',
    async (_, bad, message) => {
      const store = new MemoryStore();
      const a = new Allocator('10.0.0.0/28', { store });
      for (const name of ['web', 'db']) await a.allocateNext({ ...OWNER, name });
      let expected = message;
      if (typeof expected !== 'string') {
        const i = expected.asAllocateNext;
        const refused = await failure(() => a.allocateNext(anyValue((bad as unknown[])[i])));
        expect(refused).toBeInstanceOf(InvalidArgumentError);
        expected = (refused as Error).message.replace(/(^|; )owner/g, `$1knownOwners[${i}]`);
      }
      const e = await failure(() => reconcile(a, anyValue(bad), { graceMs: 0, delete: true }));
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as Error).message).toBe(expected);
      expect(store.records().map((r) => r.parentRef?.name)).toEqual(['web', 'db']);
      a.destroy();
    },
  );

  it('reconcile with well-formed knownOwners: an absent group or namespace is the empty one, an instance is read by its fields', async () => {
    const store = new MemoryStore();
    const a = new Allocator('10.0.0.0/28', { store });
    await a.allocateNext({ resource: 'services', namespace: 'ns', name: 'web' });
    await a.allocateNext({ ...OWNER, name: 'db' });
    class Ref {
      constructor(
        readonly resource: string,
        readonly name: string,
        readonly namespace?: string,
      ) {}
    }
    const report = await reconcile(a, [{ ...OWNER, name: 'web' }, new Ref('services', 'db', 'ns')], { graceMs: 0, delete: true });
    expect(report.leaks).toEqual([]);
    expect(store.size).toBe(2);
    a.destroy();
  });

  it('ownerKey of something that is not an owner', () => {
    expect(() => ownerKey(anyValue(null))).toThrow(InvalidArgumentError);
    expect(ownerKey(OWNER)).toBe('/services/ns/svc');
  });

  it('isNotContained with prefixes that are not an array', () => {
    expect(() => isNotContained('10.0.0.0/24', anyValue(null))).toThrow(InvalidArgumentError);
    expect(isNotContained('10.0.0.0/24', ['10.0.0.0/16'])).toBe(false);
  });

  it('an index kind that is not one, and a dense index asked for a range larger than 2^31', async () => {
    for (const index of ['huh', 42, null, 'Dense']) {
      for (const [option, make] of [
        ['options.index', () => new Allocator('10.0.0.0/24', anyValue({ index }))],
        ['options.index', () => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), anyValue({ index }))],
        ['options.indexKind', () => new Range('10.0.0.0/24', anyValue({ indexKind: index }))],
      ] as const) {
        const e = await failure(make);
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as Error).message.startsWith(`${option} must be 'auto', 'dense' or 'sparse', got `)).toBe(true);
        // a misspelt kind is named
        expect((e as Error).message.endsWith('(did you mean "dense"?)')).toBe(index === 'Dense');
      }
    }
    // 2^32 − 2 and 2^32 − 1 addresses: beyond the dense index, though the offsets fit in 32 bits
    for (const cidr of ['0.0.0.0/0', 'fd00::/96']) {
      for (const make of [() => new Allocator(cidr, { index: 'dense' }), () => new Range(cidr, { indexKind: 'dense' })]) {
        const e = await failure(make);
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as Error).message).toMatch(/^a dense index holds at most 2\^31 addresses, not 4,294,967,29[45]: use 'sparse' or 'auto'$/);
      }
    }
    const a = new Allocator('fd00::/96', { index: 'sparse' }); // the same range in the index that holds it
    expect(a.prefix.size).toBe(2n ** 32n - 1n);
    a.destroy();
  });

  it('setMemoryLimit with text, and the limit stays as it was', () => {
    const before = memoryLimit().limit;
    expect(() => setMemoryLimit(anyValue('x'))).toThrow(InvalidArgumentError);
    expect(() => setMemoryLimit(-1)).toThrow(InvalidArgumentError);
    expect(memoryLimit().limit).toBe(before);
  });

  it('formatAddr without words', () => {
    expect(() => formatAddr(4, anyValue(null))).toThrow(InvalidArgumentError);
    expect(formatAddr(4, [0, 0, 0, 0x0a000001])).toBe('10.0.0.1');
  });

  it("a Range's allocate and allocateNext given an owner, as an Allocator's take one: refused, nothing allocated", () => {
    // TypeScript refuses the second argument; plain JavaScript would drop it without a word
    const r = new Range('10.0.0.0/29');
    for (const view of [anyValue(r), anyValue(r.dryRun())]) {
      expect(() => view.allocateNext(OWNER)).toThrow(
        /^a Range records no owner: allocateNext\(\) takes no argument, but was also given .*; to record each address with its owner, use an Allocator/,
      );
      expect(() => view.allocate('10.0.0.2', OWNER)).toThrow(
        /^a Range records no owner: allocate\(\) takes the address only, but was also given .*; to record each address with its owner, use an Allocator/,
      );
      expect(() => view.allocate('10.0.0.2', 'svc-a')).toThrow(InvalidArgumentError);
    }
    expect([r.used(), r.has('10.0.0.2')]).toEqual([0, false]);
    // null is "no owner" to an Allocator, and no owner here either; undefined is no argument
    anyValue(r).allocate('10.0.0.2', null);
    expect(anyValue(r).allocateNext(undefined)).toMatch(/^10\.0\.0\./);
    expect(r.used()).toBe(2);
    r.destroy();
  });

  it("a Range's allocateMany and loadMany given an owner too: refused before anything is taken or loaded", () => {
    const r = new Range('10.0.0.0/29');
    expect(() => anyValue(r).allocateMany(2, OWNER)).toThrow(
      /^a Range records no owner: allocateMany\(\) takes the count only, but was also given .*; to record each address with its owner, use an Allocator/,
    );
    expect(() => anyValue(r).loadMany(['10.0.0.3'], OWNER)).toThrow(
      /^a Range records no owner: loadMany\(\) takes the addresses only, but was also given .*; to record each address with its owner, use an Allocator/,
    );
    expect(() => anyValue(r).allocateMany(1, 'svc-a')).toThrow(InvalidArgumentError);
    expect([r.used(), r.has('10.0.0.3')]).toEqual([0, false]);
    // null and undefined are no owner, as for allocate (the load first: a random allocateMany
    // could take 10.0.0.3, and the load would then find it taken)
    expect(anyValue(r).loadMany(['10.0.0.3'], undefined)).toBe(1);
    expect(anyValue(r).allocateMany(1, null)).toHaveLength(1);
    expect(r.used()).toBe(2);
    r.destroy();
  });

  it('MemoryStore.get of a name that is not a string', async () => {
    expect(await failure(() => new MemoryStore().get(anyValue(5)))).toBeInstanceOf(InvalidArgumentError);
  });
});
