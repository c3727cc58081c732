// The dry-run views answer the calls their classes have: a Range's dry run tryAllocateNext(), an
// Allocator's canAllocateNow and tryAllocateNextNow(). Each answers as the view's allocateNext()
// does (the network address, nothing reserved), with null where the real call answers null
// rather than rejecting, and the real call's refusals.
import { describe, expect, it } from 'vitest';
import {
  Allocator,
  type DryRunAllocator,
  ErrDestroyed,
  ErrNotReady,
  InMemoryServiceCIDRs,
  InvalidArgumentError,
  MemoryStore,
  MetaAllocator,
  Range,
  ReferenceAllocator,
} from '../adapters/index.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';
import { rejection } from './helpers.ts';

const OWNER = { group: '', resource: 'services', namespace: 'ns', name: 'svc' };

describe("a Range's dry run: tryAllocateNext()", () => {
  it.each([
    ['10.0.0.0/29', '10.0.0.0'],
    ['fd00::/125', 'fd00::'],
  ])('%s: the network address, as its allocateNext(), empty or full, nothing reserved', (cidr, network) => {
    const range = new Range(cidr);
    const dry = range.dryRun();
    expect(dry.tryAllocateNext()).toBe(dry.allocateNext());
    expect(dry.tryAllocateNext()).toBe(network);
    expect(range.used()).toBe(0);
    while (range.tryAllocateNext() !== null);
    const full = range.snapshot();
    expect(dry.tryAllocateNext()).toBe(network); // allocateNext() here never finds the range full either
    expect([BigInt(range.used()), range.snapshot()]).toEqual([range.size, full]);
    range.destroy();
  });

  it('refuses an owner and a destroyed range, as the Range does', () => {
    const range = new Range('10.0.0.0/29');
    const dry = range.dryRun();
    const withOwner = dry.tryAllocateNext as (this: unknown, owner: unknown) => string | null;
    expect(() => withOwner.call(dry, OWNER)).toThrow(InvalidArgumentError);
    expect(() => withOwner.call(dry, OWNER)).toThrow(/a Range records no owner: tryAllocateNext\(\) takes no argument/);
    range.destroy();
    expect(() => dry.tryAllocateNext()).toThrow(ErrDestroyed);
  });
});

describe("an Allocator's dry run: canAllocateNow and tryAllocateNextNow()", () => {
  it('on a store with synchronous operations: true, and the network address as its allocateNext(), nothing reserved', async () => {
    const store = new MemoryStore();
    const alloc = new Allocator('10.0.0.0/29', { store });
    await alloc.allocate('10.0.0.1');
    const dry = alloc.dryRun();
    expect(dry.canAllocateNow).toBe(alloc.canAllocateNow);
    expect(dry.canAllocateNow).toBe(true);
    expect(dry.tryAllocateNextNow(OWNER)).toBe(await dry.allocateNext(OWNER));
    expect(dry.tryAllocateNextNow()).toBe('10.0.0.0');
    expect([alloc.used(), store.records().map((r) => r.name)]).toEqual([1, ['10.0.0.1']]);
    alloc.destroy();
  });

  it('null where its allocateNext() rejects with ErrNotReady, as the Allocator answers', async () => {
    const alloc = new Allocator('10.0.0.0/29', { store: new MemoryStore() });
    const dry = alloc.dryRun();
    alloc.setReady(false);
    expect(await rejection(dry.allocateNext())).toBeInstanceOf(ErrNotReady);
    expect(alloc.tryAllocateNextNow()).toBeNull();
    expect(dry.tryAllocateNextNow()).toBeNull();
    alloc.destroy();
  });

  it("refuses what the Allocator's refuses: a malformed owner, a store without synchronous operations, a destroyed allocator", () => {
    const alloc = new Allocator('10.0.0.0/29', { store: new MemoryStore() });
    const dry = alloc.dryRun();
    expect(() => dry.tryAllocateNextNow({ name: 'no resource' } as never)).toThrow(InvalidArgumentError);
    const remote = new Allocator('10.0.0.0/29', { store: new FaultyMemoryStore({ syncOps: false }) });
    expect([remote.dryRun().canAllocateNow, remote.canAllocateNow]).toEqual([false, false]);
    expect(() => remote.dryRun().tryAllocateNextNow()).toThrow(InvalidArgumentError);
    expect(() => remote.dryRun().tryAllocateNextNow()).toThrow(
      'tryAllocateNextNow needs a store with synchronous operations (10.0.0.0/29)',
    );
    alloc.destroy();
    expect(() => dry.canAllocateNow).toThrow(ErrDestroyed);
    expect(() => dry.tryAllocateNextNow()).toThrow(ErrDestroyed);
    remote.destroy();
  });

  it("a ReferenceAllocator's dry run (the same class): canAllocateNow false, and tryAllocateNextNow() refused, saying why", () => {
    const reference = new ReferenceAllocator('10.0.0.0/29', { store: new MemoryStore() });
    const dry = reference.dryRun() as DryRunAllocator; // typed IPAllocator: a ReferenceAllocator has no tryAllocateNextNow
    expect(dry.canAllocateNow).toBe(false);
    expect(() => dry.tryAllocateNextNow()).toThrow(InvalidArgumentError);
    expect(() => dry.tryAllocateNextNow()).toThrow(/ReferenceAllocator.*allocateNext\(\)/);
    reference.destroy();
  });
});

describe("a MetaAllocator's dry run while none of its ranges is ready: canAllocateNow and tryAllocateNextNow(), as a ready one's", () => {
  /** A MetaAllocator on `store` whose ServiceCIDR source lists no range: its dry run views no range. */
  const notReady = (store: MemoryStore) => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store });

  it("on a store with synchronous operations: canAllocateNow true, as a ready MetaAllocator's dry run says; tryAllocateNextNow() null where allocateNext() rejects with ErrNotReady, as a not-ready Allocator's", async () => {
    const store = new MemoryStore();
    const meta = notReady(store);
    const dry = meta.dryRun() as DryRunAllocator; // typed IPAllocator, as a ready MetaAllocator's
    expect(await rejection(dry.allocateNext(OWNER))).toBeInstanceOf(ErrNotReady);
    expect(dry.canAllocateNow).toBe(true);
    expect(dry.tryAllocateNextNow(OWNER)).toBeNull();
    expect(dry.tryAllocateNextNow()).toBeNull();
    // what a ready MetaAllocator's dry run (its range's) and a not-ready Allocator answer on that store
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('kubernetes', ['10.0.0.0/29']);
    const ready = new MetaAllocator('IPv4', cidrs, { store });
    expect((ready.dryRun() as DryRunAllocator).canAllocateNow).toBe(true);
    const alloc = new Allocator('10.1.0.0/29', { store });
    alloc.setReady(false);
    expect([alloc.canAllocateNow, alloc.tryAllocateNextNow()]).toEqual([true, null]);
    expect(store.records()).toEqual([]); // nothing reserved
    for (const a of [meta, ready, alloc]) a.destroy();
  });

  it('refuses what a ready one refuses: a malformed owner, a store without synchronous operations, a destroyed MetaAllocator', () => {
    const meta = notReady(new MemoryStore());
    const dry = meta.dryRun() as DryRunAllocator;
    expect(() => dry.tryAllocateNextNow({ name: 'no resource' } as never)).toThrow(InvalidArgumentError);
    const remote = new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store: new FaultyMemoryStore({ syncOps: false }) });
    const remoteDry = remote.dryRun() as DryRunAllocator;
    expect(remoteDry.canAllocateNow).toBe(false);
    expect(() => remoteDry.tryAllocateNextNow()).toThrow(InvalidArgumentError);
    expect(() => remoteDry.tryAllocateNextNow()).toThrow(
      'tryAllocateNextNow needs a store with synchronous operations (MetaAllocator IPv4)',
    );
    meta.destroy();
    expect(() => dry.canAllocateNow).toThrow(ErrDestroyed);
    expect(() => dry.tryAllocateNextNow()).toThrow(ErrDestroyed);
    remote.destroy();
  });
});
