// Misuse of every public object the way a careless or hostile caller would: every method called
// after destroy()/close() fails with ErrDestroyed (a rejected promise for async methods, a throw
// for synchronous ones) and a second destroy()/close() is harmless. One table over every class.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { DualStackAllocator } from '../../adapters/dual-stack.ts';
import { ErrDestroyed } from '../../adapters/errors.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { MetaAllocator } from '../../adapters/meta-allocator.ts';
import { seededRandom } from '../../adapters/random.ts';
import { Range } from '../../adapters/range.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import { InMemoryServiceCIDRs } from '../../adapters/service-cidrs.ts';
import { allocatorLabels } from '../../adapters/store.ts';
import type { IPAllocator } from '../../adapters/types.ts';
import { failure } from '../helpers.ts';

const OWNER = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };

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
  it('an allocator on a closed store fails with ErrDestroyed, never allocates', async () => {
    const s = new MemoryStore();
    const a = new Allocator('10.0.0.0/24', { store: s });
    s.close();
    expect(await failure(() => a.allocateNext(OWNER))).toBeInstanceOf(ErrDestroyed);
  });
});
