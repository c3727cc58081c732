import { describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../adapters/memory-store.ts';
import { AlreadyExistsError, NotFoundError } from '../adapters/errors.ts';
import { allocatorLabels, type IPAddressRecord, type StoreWatcher } from '../adapters/store.ts';

const labels = allocatorLabels('IPv4');

function recorder(): StoreWatcher & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    onAdd: (r: IPAddressRecord) => events.push(`+${r.name}`),
    onDelete: (r: IPAddressRecord) => events.push(`-${r.name}`),
  };
}

describe('MemoryStore', () => {
  it('creates if absent, rejects a duplicate with AlreadyExistsError, deletes, gets', async () => {
    const s = new MemoryStore();
    const r = await s.create({ name: '10.0.0.1', labels, parentRef: null });
    expect(r.name).toBe('10.0.0.1');
    expect(r.resourceVersion).toBeDefined();
    expect(r.uid).toBeDefined();
    await expect(s.create({ name: '10.0.0.1', labels, parentRef: null })).rejects.toBeInstanceOf(AlreadyExistsError);
    expect((await s.get('10.0.0.1'))?.labels).toEqual(labels);
    await s.delete('10.0.0.1');
    expect(await s.get('10.0.0.1')).toBeUndefined();
    await expect(s.delete('10.0.0.1')).rejects.toBeInstanceOf(NotFoundError);
    expect(s.createCalls).toBe(2);
    expect(s.alreadyExistsAnswers).toBe(1);
    expect(s.deleteCalls).toBe(2);
  });

  it('keeps its own copy of the labels and parentRef', async () => {
    const s = new MemoryStore();
    const mine = { a: 'b' };
    const ref = { resource: 'services', name: 'x', namespace: 'ns', group: '' };
    await s.create({ name: 'n', labels: mine, parentRef: ref });
    mine.a = 'changed';
    ref.name = 'changed';
    const got = await s.get('n');
    expect(got?.labels).toEqual({ a: 'b' });
    expect(got?.parentRef?.name).toBe('x');
  });

  it('updates the cache synchronously by default and tells watchers before create() returns', () => {
    const s = new MemoryStore();
    const w = recorder();
    s.cache.subscribe(w);
    void s.create({ name: '10.0.0.1', labels, parentRef: null });
    expect(s.cache.get('10.0.0.1')?.name).toBe('10.0.0.1');
    expect(w.events).toEqual(['+10.0.0.1']);
    void s.delete('10.0.0.1');
    expect(s.cache.get('10.0.0.1')).toBeUndefined();
    expect(w.events).toEqual(['+10.0.0.1', '-10.0.0.1']);
  });

  it('replays the cache to a late subscriber and stops after unsubscribe', async () => {
    const s = new MemoryStore();
    await s.create({ name: 'a', labels, parentRef: null });
    await s.create({ name: 'b', labels: {}, parentRef: null });
    const w = recorder();
    const off = s.cache.subscribe(w);
    expect(w.events.sort()).toEqual(['+a', '+b']);
    off();
    await s.create({ name: 'c', labels, parentRef: null });
    expect(w.events).toHaveLength(2);
  });

  it('lists by labels and counts', async () => {
    const s = new MemoryStore();
    await s.create({ name: 'a', labels, parentRef: null });
    await s.create({ name: 'b', labels: { other: 'x' }, parentRef: null });
    expect(s.cache.list(labels).map((r) => r.name)).toEqual(['a']);
    expect(s.cache.list().map((r) => r.name).sort()).toEqual(['a', 'b']);
    expect(s.cache.size).toBe(2);
    expect(s.size).toBe(2);
  });

  it('failCreates: the next creates reject with the given error and store nothing', async () => {
    const s = new MemoryStore();
    const boom = new Error('server error');
    s.failCreates(boom, 2);
    await expect(s.create({ name: 'a', labels, parentRef: null })).rejects.toBe(boom);
    await expect(s.create({ name: 'a', labels, parentRef: null })).rejects.toBe(boom);
    expect(await s.get('a')).toBeUndefined();
    await s.create({ name: 'a', labels, parentRef: null });
    expect(s.createCalls).toBe(3);
  });

  it('collideCreates: AlreadyExists for a name that neither the cache nor the authority holds', async () => {
    const s = new MemoryStore();
    s.collideCreates(1);
    await expect(s.create({ name: 'a', labels, parentRef: null })).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(s.cache.get('a')).toBeUndefined();
    expect(await s.get('a')).toBeUndefined();
    await s.create({ name: 'a', labels, parentRef: null });
    expect(s.alreadyExistsAnswers).toBe(1);
  });

  it('lagCache(): events wait for flushCache() and are delivered in order', async () => {
    const s = new MemoryStore({ cache: 'manual' });
    const w = recorder();
    s.cache.subscribe(w);
    await s.create({ name: 'a', labels, parentRef: null });
    await s.delete('a');
    await s.create({ name: 'b', labels, parentRef: null });
    expect(s.cache.get('b')).toBeUndefined();
    expect(await s.get('b')).toBeDefined();
    expect(s.pendingEvents).toBe(3);
    expect(s.flushCache()).toBe(3);
    expect(w.events).toEqual(['+a', '-a', '+b']);
    expect(s.cache.get('b')?.name).toBe('b');
    s.syncCache();
    await s.create({ name: 'c', labels, parentRef: null });
    expect(s.cache.get('c')?.name).toBe('c');
  });

  it('lagCache(ms): queued events arrive by themselves', async () => {
    const s = new MemoryStore({ cache: 5 });
    await s.create({ name: 'a', labels, parentRef: null });
    expect(s.cache.get('a')).toBeUndefined();
    await new Promise((r) => setTimeout(r, 30));
    expect(s.cache.get('a')?.name).toBe('a');
    s.close();
  });

  it('setSynced and the synced option drive cache.hasSynced()', () => {
    const s = new MemoryStore({ synced: false });
    expect(s.cache.hasSynced()).toBe(false);
    s.setSynced(true);
    expect(s.cache.hasSynced()).toBe(true);
  });

  it('inject writes any name, an update arrives as onAdd again; injectAuthorityOnly bypasses the cache', async () => {
    const s = new MemoryStore();
    const w = recorder();
    s.cache.subscribe(w);
    s.inject('invalid-ip-address', labels);
    s.inject('invalid-ip-address', {});
    expect(w.events).toEqual(['+invalid-ip-address', '+invalid-ip-address']);
    expect(s.cache.get('invalid-ip-address')?.labels).toEqual({});
    s.injectAuthorityOnly('10.0.0.9', labels);
    expect(s.cache.get('10.0.0.9')).toBeUndefined();
    await expect(s.create({ name: '10.0.0.9', labels, parentRef: null })).rejects.toBeInstanceOf(AlreadyExistsError);
    // deleting a record the cache never saw tells nobody
    await s.delete('10.0.0.9');
    expect(w.events).toHaveLength(2);
  });

  it('stays exact through heavy create/delete churn (tombstones and compaction)', async () => {
    const s = new MemoryStore();
    for (let i = 0; i < 3000; i++) await s.create({ name: `n${i}`, labels, parentRef: null });
    for (let i = 0; i < 2500; i++) await s.delete(`n${i}`);
    expect(s.size).toBe(500);
    expect(s.cache.size).toBe(500);
    expect(s.cache.list().length).toBe(500);
    expect(s.cache.get('n10')).toBeUndefined();
    expect(s.cache.get('n2999')?.name).toBe('n2999');
    for (let i = 0; i < 100; i++) await s.create({ name: `n${i}`, labels, parentRef: null });
    expect(s.size).toBe(600);
    expect(s.records().map((r) => r.name).sort()).toEqual(
      [...Array.from({ length: 100 }, (_, i) => `n${i}`), ...Array.from({ length: 500 }, (_, i) => `n${2500 + i}`)].sort(),
    );
    await expect(s.delete('n50')).resolves.toBeUndefined();
    await expect(s.delete('n50')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('createSync/deleteSync/getSync answer as create/delete/get do, synchronously', () => {
    const s = new MemoryStore();
    expect(s.sync).toBe(s);
    const w = recorder();
    s.cache.subscribe(w);
    const r = s.createSync({ name: '10.0.0.9', labels, parentRef: null });
    expect(r.name).toBe('10.0.0.9');
    expect(w.events).toEqual(['+10.0.0.9']); // told before createSync returned
    expect(s.getSync('10.0.0.9')).toBe(r);
    expect(() => s.createSync({ name: '10.0.0.9', labels, parentRef: null })).toThrow(AlreadyExistsError);
    s.deleteSync('10.0.0.9');
    expect(w.events).toEqual(['+10.0.0.9', '-10.0.0.9']);
    expect(s.getSync('10.0.0.9')).toBeUndefined();
    expect(() => s.deleteSync('10.0.0.9')).toThrow(NotFoundError);
    const boom = new Error('boom');
    s.failCreates(boom);
    expect(() => s.createSync({ name: '10.0.0.10', labels, parentRef: null })).toThrow(boom);
    expect(s.size).toBe(0);
    expect([s.createCalls, s.alreadyExistsAnswers, s.deleteCalls]).toEqual([3, 1, 2]);
  });

  it('offers no synchronous operations with syncOps: false, or when a subclass overrides create/delete/get', async () => {
    expect(new MemoryStore({ syncOps: false }).sync).toBeNull();
    const seen: string[] = [];
    class Slow extends MemoryStore {
      override async create(record: IPAddressRecord): Promise<IPAddressRecord> {
        seen.push(record.name);
        return super.create(record);
      }
    }
    const slow = new Slow();
    expect(slow.sync).toBeNull();
    // an allocator on it goes through the override
    const { Allocator } = await import('../adapters/allocator.ts');
    const a = Allocator.create('10.9.0.0/30', { store: slow });
    const ip = await a.allocateNext();
    expect(seen).toEqual([ip]);
    a.destroy();
  });

  it('a create/delete/get replaced on the instance later (a test spy) turns the synchronous operations off', async () => {
    const store = new MemoryStore();
    const { Allocator } = await import('../adapters/allocator.ts');
    const a = Allocator.create('10.9.1.0/29', { store });
    expect(a.canAllocateNow).toBe(true);
    const seen: string[] = [];
    const original = store.create;
    store.create = (record) => {
      seen.push(record.name);
      return original.call(store, record);
    };
    expect(store.sync).toBeNull();
    expect(a.canAllocateNow).toBe(false);
    const ip = await a.allocateNext();
    expect(seen).toEqual([ip]);
    store.create = original; // own method back: synchronous again
    expect(store.sync).toBe(store);
    expect(a.canAllocateNow).toBe(true);
    await a.release(ip);
    expect(a.validate().indexed).toBe(0);
    a.destroy();
  });

  it('a deleted name that comes back reuses its entry; tombstones are counted exactly', () => {
    const s = new MemoryStore();
    // churn over a few names, far more deletes than live records: no compaction may lose one
    for (let i = 0; i < 5000; i++) {
      s.createSync({ name: `m${i % 7}`, labels, parentRef: null });
      if (i % 7 !== 6) continue;
      for (let k = 0; k < 7; k++) s.deleteSync(`m${k}`);
    }
    s.createSync({ name: 'keep', labels, parentRef: null });
    expect(s.size).toBe(1 + (5000 % 7));
    expect(s.cache.list().map((r) => r.name).sort()).toEqual(['keep', ...Array.from({ length: 5000 % 7 }, (_, k) => `m${k}`)].sort());
    for (let k = 0; k < 5000 % 7; k++) expect(s.getSync(`m${k}`)?.name).toBe(`m${k}`);
    expect(s.getSync('m6')).toBeUndefined();
  });

  it('stamps creationTimestamp in whole seconds (RFC 3339, as Kubernetes), close to now', () => {
    const s = new MemoryStore();
    const before = Math.floor(Date.now() / 1000) * 1000;
    const r = s.createSync({ name: 't', labels, parentRef: null });
    const after = Date.now();
    expect(r.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const t = Date.parse(r.creationTimestamp!);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(after);
  });

  it('a new second gives a new creationTimestamp (the cached text expires)', () => {
    // The clock is moved, not waited for: 200 ms apart, across a second boundary.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.UTC(2026, 0, 1, 0, 0, 0, 900));
      const s = new MemoryStore();
      const first = s.createSync({ name: 'a', labels, parentRef: null }).creationTimestamp!;
      vi.setSystemTime(Date.UTC(2026, 0, 1, 0, 0, 1, 100));
      const second = s.createSync({ name: 'b', labels, parentRef: null }).creationTimestamp!;
      expect([first, second]).toEqual(['2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z']);
    } finally {
      vi.useRealTimers();
    }
  });
});
