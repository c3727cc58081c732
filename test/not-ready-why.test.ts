// ErrNotReady keeps upstream's text, "allocator not ready", and says after it what the allocator
// waits for; a MetaAllocator with no range of its family says so after upstream's "range is full".
import { describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { ErrFull, ErrNotReady } from '../adapters/errors.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { InMemoryServiceCIDRs, type ServiceCIDRSource } from '../adapters/service-cidrs.ts';
import type { IPAllocator } from '../adapters/types.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';

const OWNER = { group: '', resource: 'services', namespace: 'default', name: 'web' };
const NO_RANGE_READY =
  'allocator not ready: no range is ready (a ServiceCIDR without its Ready condition yet, or being deleted, or a store that has not synced)';

async function rejection(call: () => Promise<unknown>): Promise<Error> {
  const e = await call().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(Error);
  return e as Error;
}

describe.each([
  ['Allocator', (store: FaultyMemoryStore) => new Allocator('10.0.0.0/24', { store })],
  ['ReferenceAllocator', (store: FaultyMemoryStore) => new ReferenceAllocator('10.0.0.0/24', { store })],
] as const)('%s: ErrNotReady says what it waits for', (_name, make) => {
  it("the store's cache has not synced: every allocation and the dry run's, naming waitForSync", async () => {
    const store = new FaultyMemoryStore({ synced: false });
    const a: IPAllocator & { setReady(ready: boolean): void; destroy(): void } = make(store);
    // Regression: a KubernetesStore that never can sync (a server on a port fetch never connects
    // to) had every allocation say only that waitForSync "resolves when it has"
    const said =
      "allocator not ready: its store's cache has not synced yet (a KubernetesStore's waitForSync() resolves when it has, or rejects saying why it cannot)";
    for (const call of [
      () => a.allocateNext(OWNER),
      () => a.allocate('10.0.0.7', OWNER),
      () => a.dryRun().allocateNext(),
      () => a.dryRun().allocate('10.0.0.7'),
    ]) {
      const e = await rejection(call);
      expect(e).toBeInstanceOf(ErrNotReady);
      expect(e.message).toBe(said);
    }
    expect(store.records()).toEqual([]);
    a.destroy();
  });

  it('setReady(false): says so, synced or not', async () => {
    for (const synced of [true, false]) {
      const a = make(new FaultyMemoryStore({ synced }));
      a.setReady(false);
      const e = await rejection(() => a.allocateNext());
      expect(e).toBeInstanceOf(ErrNotReady);
      expect(e.message).toBe('allocator not ready: setReady(false) holds it');
      a.destroy();
    }
  });
});

describe('MetaAllocator: what it waits for, or that it has no range', () => {
  /** An InMemoryServiceCIDRs that has not synced yet. */
  function unsynced(): ServiceCIDRSource {
    const source = new InMemoryServiceCIDRs();
    return { subscribe: (w) => source.subscribe(w), list: () => source.list(), hasSynced: () => false } as ServiceCIDRSource;
  }

  it('its ServiceCIDRs have not synced: allocateNext, allocate and the dry run say so', async () => {
    // Regression: the dry run said no range was ready, naming a Ready condition or a store's sync
    const meta = new MetaAllocator('IPv4', unsynced(), { store: new FaultyMemoryStore() });
    for (const call of [
      () => meta.allocateNext(),
      () => meta.allocate('10.0.0.7'),
      () => meta.dryRun().allocateNext(),
      () => meta.dryRun().allocate('10.0.0.7'),
    ]) {
      const e = await rejection(call);
      expect(e).toBeInstanceOf(ErrNotReady);
      expect(e.message).toMatch(/^allocator not ready: the ServiceCIDRs have not synced yet \(a KubernetesServiceCIDRs' waitForSync\(\)/);
    }
    meta.destroy();
  });

  it('no range ready (a ServiceCIDR without its Ready condition yet): allocateNext and the dry run say so', async () => {
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/24'], { ready: false });
    const meta = new MetaAllocator('IPv4', cidrs, { store: new FaultyMemoryStore() });
    for (const call of [() => meta.allocateNext(), () => meta.dryRun().allocateNext()]) {
      const e = await rejection(call);
      expect(e).toBeInstanceOf(ErrNotReady);
      expect(e.message).toBe(NO_RANGE_READY);
    }
    meta.destroy();
  });

  // Regression: the only range's ServiceCIDR being deleted (its finalizer pending) said only "a
  // ServiceCIDR without its Ready condition yet, or a store that has not synced", neither of which
  // an operator who had just deleted it would find
  it('no range ready (the only ServiceCIDR being deleted): allocateNext and the dry run say it may be', async () => {
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/24']);
    const meta = new MetaAllocator('IPv4', cidrs, { store: new FaultyMemoryStore() });
    cidrs.markDeleting('kubernetes');
    for (const call of [() => meta.allocateNext(), () => meta.dryRun().allocateNext()]) {
      const e = await rejection(call);
      expect(e).toBeInstanceOf(ErrNotReady);
      expect(e.message).toBe(NO_RANGE_READY);
    }
    meta.destroy();
  });

  it("no range of its family at all: upstream's ErrFull, saying so; the dry run's ErrNotReady (upstream's) says the same", async () => {
    // Regression: the dry run said no range was ready, naming a Ready condition or a store's sync
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('v4-only', ['10.0.0.0/24']);
    const meta = new MetaAllocator('IPv6', cidrs, { store: new FaultyMemoryStore() });
    const e = await rejection(() => meta.allocateNext());
    expect(e).toBeInstanceOf(ErrFull);
    expect(e.message).toBe('range is full: this MetaAllocator has no IPv6 range to allocate from');
    for (const call of [() => meta.dryRun().allocateNext(), () => meta.dryRun().allocate('fd00::7')]) {
      const dry = await rejection(call);
      expect(dry).toBeInstanceOf(ErrNotReady);
      expect(dry.message).toBe('allocator not ready: this MetaAllocator has no IPv6 range to allocate from');
    }
    meta.destroy();
  });
});
