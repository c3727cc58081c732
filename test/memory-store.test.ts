import { describe, expect, it } from 'vitest';
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
});
