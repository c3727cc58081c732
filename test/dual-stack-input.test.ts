// DualStackAllocator: what allocate checks before any store call, and the inputs release and
// allocate take or refuse.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { DualStackAllocator } from '../adapters/dual-stack.ts';
import { Allocator } from '../adapters/allocator.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import type { Store } from '../adapters/store.ts';
import type { IPAllocator } from '../adapters/types.ts';
import {
  ErrDestroyed,
  ErrFull,
  ErrMismatchedNetwork,
  ErrNotInRange,
  ErrNotReady,
  InvalidAddressError,
  InvalidArgumentError,
} from '../adapters/errors.ts';
import { METRIC_ALLOCATIONS, METRIC_ERRORS } from '../adapters/metrics.ts';
import { pairWithTwo } from './dual-stack-helpers.ts';
import { rejection } from './helpers.ts';

/** A store of your own over a MemoryStore that logs every create and delete it is asked for. */
function spyStore(): { store: Store; calls: string[] } {
  const inner = new MemoryStore();
  const calls: string[] = [];
  const store: Store = {
    create: (r) => {
      calls.push(`create ${r.name}`);
      return inner.create(r);
    },
    delete: (name) => {
      calls.push(`delete ${name}`);
      return inner.delete(name);
    },
    get: (name) => inner.get(name),
    cache: inner.cache,
    close: () => inner.close(),
  };
  return { store, calls };
}

/** Two Allocators (or ReferenceAllocators), each on a store that logs its calls. */
function unpaired(kind: typeof Allocator | typeof ReferenceAllocator = Allocator) {
  const s4 = spyStore();
  const s6 = spyStore();
  const v4 = new kind('10.96.0.0/28', { store: s4.store });
  const v6 = new kind('fd00::/124', { store: s6.store });
  return { v4, v6, calls: () => [...s4.calls, ...s6.calls] };
}

/** A pair of two Allocators, each on a store that logs its calls. */
function allocators() {
  const { v4, v6, calls } = unpaired();
  return { ds: new DualStackAllocator(v4, v6), v6, calls };
}

/** Two MetaAllocators of two ranges each (the second one's addresses are those of no dry run), each on a store that logs its calls. */
function metas() {
  const source = new InMemoryServiceCIDRs();
  source.addServiceCIDR('kubernetes', ['10.96.0.0/28', 'fd00::/124']);
  source.addServiceCIDR('extra', ['10.100.0.0/28', 'fd00:1::/124']);
  const s4 = spyStore();
  const s6 = spyStore();
  const v4 = new MetaAllocator('IPv4', source, { store: s4.store });
  const v6 = new MetaAllocator('IPv6', source, { store: s6.store });
  return { ds: new DualStackAllocator(v4, v6), v4, v6, calls: () => [...s4.calls, ...s6.calls] };
}

describe('DualStackAllocator.allocate: an address its allocator would refuse fails the call before any store call', () => {
  it.each([
    ['the IPv6 address out of its range, given first', ['fd00:9::1', '10.96.0.5'], ErrNotInRange, 'fd00:9::1'],
    ['the IPv6 address out of its range, given second', ['10.96.0.5', 'fd00:9::1'], ErrNotInRange, 'fd00:9::1'],
    ['the IPv4 address out of its range', ['10.97.0.5', 'fd00::5'], ErrNotInRange, '10.97.0.5'],
    ['the IPv4 broadcast address', ['10.96.0.15', 'fd00::5'], ErrNotInRange, '10.96.0.15'],
  ])('over Allocators: %s', async (_, ips, kind, named) => {
    const { ds, calls } = allocators();
    const error = await rejection(ds.allocate(ips));
    expect(error).toBeInstanceOf(kind);
    expect((error as Error).message).toContain(named);
    expect(calls()).toEqual([]);
    // nothing is left taken: both addresses of the family in range are free
    await ds.allocate(['10.96.0.5', 'fd00::5']);
    ds.destroy();
  });

  it('over ReferenceAllocators: the IPv6 address out of its range', async () => {
    const { v4, v6, calls } = unpaired(ReferenceAllocator);
    const ds = new DualStackAllocator(v4, v6);
    expect(await rejection(ds.allocate(['10.96.0.5', 'fd00:9::1']))).toBeInstanceOf(ErrNotInRange);
    expect(calls()).toEqual([]);
    ds.destroy();
  });

  it('over Allocators: the refused address counts one error in its range, as its allocate does, and the other range counts no allocation', async () => {
    const { ds, calls } = allocators();
    const reg = new Registry();
    ds.ipv4.enableMetrics(reg);
    ds.ipv6.enableMetrics(reg);
    expect(await rejection(ds.allocate(['10.96.0.5', 'fd00:9::1']))).toBeInstanceOf(ErrNotInRange);
    const count = async (name: string, cidr: string) => {
      const values = (await reg.getSingleMetric(name)?.get())?.values ?? [];
      return values.filter((v) => v.labels.cidr === cidr).reduce((sum, v) => sum + v.value, 0);
    };
    expect(await count(METRIC_ERRORS, 'fd00::/124')).toBe(1);
    expect(await count(METRIC_ERRORS, '10.96.0.0/28')).toBe(0);
    expect(await count(METRIC_ALLOCATIONS, '10.96.0.0/28')).toBe(0);
    expect(calls()).toEqual([]);
    ds.destroy();
  });

  it('over Allocators: an allocator that is not ready fails the call before the other family is created', async () => {
    const { ds, v6, calls } = allocators();
    v6.setReady(false);
    expect(await rejection(ds.allocate(['10.96.0.5', 'fd00::5']))).toBeInstanceOf(ErrNotReady);
    expect(calls()).toEqual([]);
    ds.destroy();
  });

  it.each([
    ['the IPv6 address in no range', ['10.100.0.5', 'fd00:9::1'], 'fd00:9::1'],
    ['the IPv4 address in no range', ['10.97.0.5', 'fd00:1::5'], '10.97.0.5'],
  ])('over MetaAllocators: %s', async (_, ips, named) => {
    const { ds, calls } = metas();
    const error = await rejection(ds.allocate(ips));
    expect(error).toBeInstanceOf(ErrMismatchedNetwork);
    expect((error as Error).message).toContain(named);
    expect(calls()).toEqual([]);
    ds.destroy();
  });

  it('over MetaAllocators: addresses of any of their ranges pass the check, not only those of the first', async () => {
    const { ds, calls } = metas();
    expect((await ds.allocate(['fd00:1::5', '10.100.0.5'])).ips).toEqual(['fd00:1::5', '10.100.0.5']);
    expect(calls()).toEqual(['create 10.100.0.5', 'create fd00:1::5']);
    ds.destroy();
  });

  it('an allocator of your own is called as before: its allocate decides, and what the other family took is given back', async () => {
    const { v4, v6, calls } = unpaired();
    const asked: string[] = [];
    const own: IPAllocator = Object.assign(Object.create(v6) as IPAllocator, {
      allocate(ip: string, owner?: unknown) {
        asked.push(ip);
        return v6.allocate(ip, owner as never);
      },
    });
    const ds = new DualStackAllocator(v4, own);
    expect(await rejection(ds.allocate(['10.96.0.5', 'fd00:9::1']))).toBeInstanceOf(ErrNotInRange);
    expect(asked).toEqual(['fd00:9::1']);
    expect(calls()).toEqual(['create 10.96.0.5', 'delete 10.96.0.5']);
    ds.destroy();
  });
});

describe('DualStackAllocator.allocateNext: an allocator that cannot allocate fails the call before the other family is created', () => {
  it.each([
    ['Allocators', Allocator],
    ['ReferenceAllocators', ReferenceAllocator],
  ] as const)('over %s: the IPv6 allocator not ready', async (_, kind) => {
    const { v4, v6, calls } = unpaired(kind);
    const ds = new DualStackAllocator(v4, v6);
    v6.setReady(false);
    expect(await rejection(ds.allocateNext())).toBeInstanceOf(ErrNotReady);
    expect(await rejection(ds.allocateNext(null, ['IPv6', 'IPv4']))).toBeInstanceOf(ErrNotReady);
    expect(calls()).toEqual([]);
    v6.setReady(true);
    expect((await ds.allocateNext()).families).toEqual(['IPv4', 'IPv6']);
    ds.destroy();
  });

  it.each([
    ['Allocators', Allocator],
    ['ReferenceAllocators', ReferenceAllocator],
  ] as const)('over %s: the IPv6 allocator destroyed under the pair', async (_, kind) => {
    const { v4, v6, calls } = unpaired(kind);
    const ds = new DualStackAllocator(v4, v6);
    v6.destroy();
    expect(await rejection(ds.allocateNext())).toBeInstanceOf(ErrDestroyed);
    expect(calls()).toEqual([]);
    expect(ds.ipv4.used()).toBe(0);
    ds.destroy();
  });

  it('over MetaAllocators: the IPv6 one destroyed under the pair', async () => {
    const { ds, v6, calls } = metas();
    v6.destroy();
    expect(await rejection(ds.allocateNext())).toBeInstanceOf(ErrDestroyed);
    expect(calls()).toEqual([]);
    expect(ds.ipv4.used()).toBe(0);
    ds.destroy();
  });

  it('a full IPv6 range is not checked first: IPv4 is taken, then given back when IPv6 answers ErrFull', async () => {
    const s4 = spyStore();
    const s6 = spyStore();
    const v6 = new Allocator('fd00::/126', { store: s6.store });
    const ds = new DualStackAllocator(new Allocator('10.96.0.0/28', { store: s4.store }), v6);
    while (v6.free() > 0n) await v6.allocateNext();
    expect(await rejection(ds.allocateNext())).toBeInstanceOf(ErrFull);
    expect(s4.calls).toHaveLength(2);
    expect(s4.calls[1]).toBe(s4.calls[0]!.replace('create', 'delete'));
    ds.destroy();
  });

  it('an allocator of your own is called as before: its allocateNext decides, and what the other family took is given back', async () => {
    const { v4, v6, calls } = unpaired();
    let asked = 0;
    const own: IPAllocator = Object.assign(Object.create(v6) as IPAllocator, {
      allocateNext(owner?: unknown) {
        asked++;
        return v6.allocateNext(owner as never);
      },
    });
    const ds = new DualStackAllocator(v4, own);
    v6.setReady(false);
    expect(await rejection(ds.allocateNext())).toBeInstanceOf(ErrNotReady);
    expect(asked).toBe(1);
    expect(calls()).toHaveLength(2); // IPv4's create, then its delete
    ds.destroy();
  });
});

describe('DualStackAllocator.release: an array is the addresses alone', () => {
  it.each([
    ['an answer field that names another address', { IPv6: 'fd00::2' }, '"IPv6"'],
    ['an answer field that agrees with the addresses', { IPv4: '10.0.0.1' }, '"IPv4"'],
    ['an ips field: two lists in one argument', { ips: ['10.0.0.2'] }, '"ips"'],
    ['a field of its own', { note: 'web' }, '"note"'],
    ['a field whose name is no index', { '-1': 'fd00::2' }, '"-1"'],
  ])('an array with %s is refused with InvalidArgumentError naming it, and nothing is released', async (_, extra, named) => {
    const { ds, a, held } = await pairWithTwo();
    const error = await rejection(ds.release(Object.assign([...a.ips], extra)));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe(
      `release: ips is an array with a field ${named} besides its addresses: pass an array of the addresses alone, or what allocate returned as it came`,
    );
    expect(await held()).toBe(true);
    ds.destroy();
  });

  it('an array whose extra field is undefined, or not enumerable, is the addresses: they are released', async () => {
    const { ds, a, b, freed } = await pairWithTwo();
    await ds.release(Object.assign([...a.ips], { IPv4: undefined }));
    const hidden = [...b.ips];
    Object.defineProperty(hidden, 'note', { value: 'web', enumerable: false });
    await ds.release(hidden);
    expect(await freed()).toBe(true);
    ds.destroy();
  });
});

describe('DualStackAllocator.allocate: an array is the addresses alone', () => {
  it.each([
    ["another family's address", { IPv6: 'fd00::5' }, '"IPv6"'],
    ['the address it holds, named', { IPv4: '10.0.0.5' }, '"IPv4"'],
    ['a field of its own', { note: 'web' }, '"note"'],
  ])('an array with %s is refused with InvalidArgumentError naming it, and nothing is allocated', async (_, extra, named) => {
    const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
    const error = await rejection(ds.allocate(Object.assign(['10.0.0.5'], extra)));
    expect(error).toEqual(
      new InvalidArgumentError(
        `allocate: ips is an array with a field ${named} besides its addresses: pass an array of the addresses alone`,
      ),
    );
    expect([ds.ipv4.used(), ds.ipv6.used()]).toEqual([0, 0]);
    ds.destroy();
  });

  it('an array whose extra field is undefined, or not enumerable, is the addresses: they are allocated', async () => {
    const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
    const hidden = ['fd00::6'];
    Object.defineProperty(hidden, 'note', { value: 'web', enumerable: false });
    expect((await ds.allocate(Object.assign(['10.0.0.5'], { IPv6: undefined }))).ips).toEqual(['10.0.0.5']);
    expect((await ds.allocate(hidden)).ips).toEqual(['fd00::6']);
    ds.destroy();
  });
});

describe('DualStackAllocator: a refused argument says what to pass instead, and nothing is allocated', () => {
  function pair() {
    return new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
  }

  it.each([
    ['a hole first', () => Object.assign([] as string[], { 1: 'fd00::2' }), 'ips[0]'],
    ['a hole second', () => Object.assign(['10.0.0.2'], { length: 2 }), 'ips[1]'],
    ['a number', () => ['10.0.0.2', 42], 'ips[1]'],
  ])('allocate: an element that is no address (%s) is named', async (_, ips, named) => {
    const ds = pair();
    const given = ips();
    expect(given).toHaveLength(2);
    const error = await rejection(ds.allocate(given as string[]));
    expect(error).toBeInstanceOf(InvalidAddressError);
    expect((error as Error).message).toContain(`(${named})`);
    expect([ds.ipv4.used(), ds.ipv6.used()]).toEqual([0, 0]);
    ds.destroy();
  });

  it('release: an element that is no address is named, in an array or in an answer', async () => {
    const ds = pair();
    await ds.allocate(['10.0.0.1']);
    expect((await rejection(ds.release(['10.0.0.1', undefined as never]))) as Error).toHaveProperty(
      'message',
      'ParseAddr(undefined): expected a string, got undefined (ips[1])',
    );
    const answer = { ips: [undefined as never], families: ['IPv4'] as const };
    expect(((await rejection(ds.release(answer))) as Error).message).toContain('(ips.ips[0])');
    expect(ds.ipv4.used()).toBe(1);
    ds.destroy();
  });

  it('allocate given what an earlier call returned: the message says to pass its .ips', async () => {
    const ds = pair();
    const earlier = await ds.allocate(['10.0.0.1', 'fd00::1']);
    await ds.release(earlier);
    const error = await rejection(ds.allocate(earlier as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('pass its .ips');
    expect([ds.ipv4.used(), ds.ipv6.used()]).toEqual([0, 0]);
    ds.destroy();
  });

  it('allocate given one address as text: the message says to wrap it in an array', async () => {
    const ds = pair();
    const error = await rejection(ds.allocate('10.0.0.1' as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('["10.0.0.1"]');
    expect(ds.ipv4.used()).toBe(0);
    ds.destroy();
  });

  it.each([
    ['a family', 'IPv6'],
    ['a list of families', ['IPv6']],
    ['both families', ['IPv6', 'IPv4']],
  ])('allocateNext given %s first: the message says families is the second argument', async (_, given) => {
    const ds = pair();
    const error = await rejection(ds.allocateNext(given as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('families are its second argument');
    expect((error as Error).message).toContain('allocateNext(null, ');
    expect([ds.ipv4.used(), ds.ipv6.used()]).toEqual([0, 0]);
    ds.destroy();
  });
});

describe('DualStackAllocator.release: an answer whose ips is no plain list', () => {
  it('an answer whose ips array has a field besides its addresses is refused, naming ips.ips and the field', async () => {
    const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
    const a = await ds.allocate(['10.0.0.1', 'fd00::1']);
    const edited = { ...a, ips: Object.assign([...a.ips], { IPv4: '10.0.0.2' }) };
    const error = await rejection(ds.release(edited));
    expect(error).toEqual(
      new InvalidArgumentError(
        'release: ips.ips is an array with a field "IPv4" besides its addresses: pass an array of the addresses alone, or what allocate returned as it came',
      ),
    );
    expect(await ds.ipv4.has('10.0.0.1')).toBe(true);
    ds.destroy();
  });
});

describe('DualStackAllocator.release: what is neither an array nor an answer', () => {
  it.each([
    ['a String object', () => new String('10.0.0.1'), 'a String'],
    ['a typed array', () => new Uint8Array(2), 'a Uint8Array'],
    ['an array-like object', () => ({ 0: '10.0.0.1', length: 1 }), 'a value of type object'],
  ])('%s is refused as neither, not as an answer with a field "0"', async (_, given, shown) => {
    const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
    await ds.allocate(['10.0.0.1']);
    const error = await rejection(ds.release(given() as never));
    expect(error).toEqual(
      new InvalidArgumentError(
        `release needs the addresses: an array, or what allocate returned; got ${shown}, which has elements but is no array`,
      ),
    );
    expect(await ds.ipv4.has('10.0.0.1')).toBe(true);
    ds.destroy();
  });
});

describe('DualStackAllocator.release: refusals that say what is wrong first', () => {
  it('an array of three addresses with a field besides them is refused for its length, before its fields are read', async () => {
    const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
    await ds.allocate(['10.0.0.1']);
    const listed: string[] = [];
    const given = new Proxy(Object.assign(['10.0.0.1', 'fd00::1', '10.0.0.2'], { IPv4: '10.0.0.3' }), {
      ownKeys(target) {
        listed.push('ownKeys');
        return Reflect.ownKeys(target);
      },
    });
    const error = await rejection(ds.release(given as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('a Service has one or two ClusterIPs');
    expect(listed).toEqual([]);
    expect(await ds.ipv4.has('10.0.0.1')).toBe(true);
    ds.destroy();
  });

  it('an answer given a field "0" is refused as an answer with that field, not as something with elements', async () => {
    const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
    const a = await ds.allocate(['10.0.0.1']);
    const error = await rejection(ds.release({ ...a, 0: '10.0.0.2' } as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('"0"');
    expect((error as Error).message).not.toContain('no array');
    expect(await ds.ipv4.has('10.0.0.1')).toBe(true);
    ds.destroy();
  });

  it('one address as text: the message shows it in an array', async () => {
    const ds = new DualStackAllocator(Allocator.create('10.0.0.0/24'), Allocator.create('fd00::/120'));
    await ds.allocate(['10.0.0.1']);
    const error = await rejection(ds.release('10.0.0.1' as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toContain('such as ["10.0.0.1"]');
    expect(await ds.ipv4.has('10.0.0.1')).toBe(true);
    ds.destroy();
  });
});
