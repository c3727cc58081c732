import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../adapters/memory-store.ts';
import { Allocator } from '../adapters/allocator.ts';
import { AlreadyExistsError, ErrDestroyed, InvalidArgumentError, InvalidRecordError, NotFoundError } from '../adapters/errors.ts';
import { allocatorLabels, allocatorWatcher, type IPAddressRecord, type StoreWatcher, type ParentRef } from '../adapters/store.ts';
import { validateRecord } from '../adapters/records.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';
import { homeOf, NameTable, tagOf } from '../adapters/name-table.ts';
import { seededRandom } from '../adapters/random.ts';
import { SENDS_TO_ANOTHER_THREAD } from './helpers.ts';

const labels = allocatorLabels('IPv4');
const rec = (name: string, extra: Partial<IPAddressRecord> = {}): IPAddressRecord => ({ name, labels, parentRef: null, ...extra });

/** A watcher that writes down what it is told, as `+name` / `-name`, prefixed with its tag. */
function recorder(tag = ''): StoreWatcher & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    onAdd: (r: IPAddressRecord) => events.push(`${tag}+${r.name}`),
    onDelete: (r: IPAddressRecord) => events.push(`${tag}-${r.name}`),
  };
}

describe('MemoryStore', () => {
  it('creates if absent, rejects a duplicate with AlreadyExistsError, deletes, gets', async () => {
    const s = new MemoryStore();
    const r = await s.create(rec('10.0.0.1'));
    expect(r.name).toBe('10.0.0.1');
    await expect(s.create(rec('10.0.0.1'))).rejects.toBeInstanceOf(AlreadyExistsError);
    expect((await s.get('10.0.0.1'))?.labels).toEqual(labels);
    await s.delete('10.0.0.1');
    expect(await s.get('10.0.0.1')).toBeUndefined();
    await expect(s.delete('10.0.0.1')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('keeps its own frozen copy of the labels and parentRef', async () => {
    const s = new MemoryStore();
    const mine = { a: 'b' };
    const ref = { resource: 'services', name: 'x', namespace: 'ns', group: '' };
    const stored = await s.create({ name: '10.0.0.2', labels: mine, parentRef: ref });
    mine.a = 'changed';
    ref.name = 'changed';
    const got = await s.get('10.0.0.2');
    expect(got?.labels).toEqual({ a: 'b' });
    expect(got?.parentRef?.name).toBe('x');
    expect(Object.isFrozen(stored.labels) && Object.isFrozen(stored.parentRef)).toBe(true);
    expect(() => {
      (stored.labels as Record<string, string>).a = 'changed';
    }).toThrow(TypeError);
  });

  it('reads each field of a record once: what it checks is what it stores and shows to watchers, getters included', () => {
    const s = new MemoryStore();
    const seen: IPAddressRecord[] = [];
    s.cache.subscribe({ onAdd: (r) => seen.push(r), onDelete() {} });
    const drifting = (first: string, then: unknown) => {
      let reads = 0;
      return () => (reads++ === 0 ? first : then);
    };
    const labels = Object.defineProperty({}, 'team', { enumerable: true, get: drifting('web', 42) });
    const frozen = Object.freeze(Object.defineProperty({}, 'team', { enumerable: true, get: drifting('db', { not: 'a string' }) }));
    const ref = Object.defineProperty({ resource: 'services', namespace: 'ns' }, 'name', { enumerable: true, get: drifting('web', '') });
    const record = Object.defineProperty({ labels: {}, parentRef: null }, 'name', {
      enumerable: true,
      get: drifting('10.0.0.3', '10.0.0.999'),
    });
    s.createSync({ name: '10.0.0.1', labels, parentRef: ref as ParentRef });
    s.createSync({ name: '10.0.0.2', labels: frozen, parentRef: null });
    s.createSync(record as IPAddressRecord);
    for (const r of seen) validateRecord(r); // nothing invalid reached a watcher
    expect(seen.map((r) => [r.name, r.labels, r.parentRef?.name])).toEqual([
      ['10.0.0.1', { team: 'web' }, 'web'],
      ['10.0.0.2', { team: 'db' }, undefined],
      ['10.0.0.3', {}, undefined],
    ]);
    expect(s.getSync('10.0.0.1')!.labels.team).toBe('web'); // still: the store's copy, not the getter
    expect(s.getSync('10.0.0.2')!.labels.team).toBe('db');
    s.validate();
  });

  /** The JSON a stored record of `rec(…)` shows without a creationTimestamp. */
  const kubernetesJson = (r: IPAddressRecord) => ({
    name: r.name,
    labels,
    parentRef: null,
    resourceVersion: r.resourceVersion,
    uid: r.uid,
  });

  it('gives each version a resourceVersion and a uid, and no creationTimestamp unless asked', () => {
    const s = new MemoryStore();
    const a = s.createSync(rec('10.0.0.1'));
    const b = s.createSync(rec('10.0.0.2'));
    expect(Number(b.resourceVersion)).toBeGreaterThan(Number(a.resourceVersion));
    expect(a.uid).not.toBe(b.uid);
    expect([a.resourceVersion, a.uid]).toEqual(['1', 'memory-1']);
    // an allocator's watcher is given the record before it is first handed out (frozen): the
    // same text before and after
    let seen: IPAddressRecord | undefined;
    let before: unknown[] = [];
    s.cache.subscribe(
      allocatorWatcher({
        onAdd: (r) => {
          seen = r;
          before = [Object.isFrozen(r), r.resourceVersion, r.uid];
        },
        onDelete: () => {},
      }),
    );
    expect(s.createSync(rec('10.0.0.3'))).toBe(seen);
    expect(before).toEqual([false, '3', 'memory-3']);
    expect([Object.isFrozen(seen), seen!.resourceVersion, seen!.uid]).toEqual([true, '3', 'memory-3']);
    expect(a.creationTimestamp).toBeUndefined();
    expect(JSON.parse(JSON.stringify(a))).toEqual(kubernetesJson(a));
    expect(() => new MemoryStore({ timestamps: 'yes' as unknown as boolean })).toThrow(InvalidArgumentError);
  });

  it("an allocator's watcher checks what a cache of your own delivers; a MemoryStore gives its handlers its records directly", () => {
    const added: IPAddressRecord[] = [];
    const deleted: IPAddressRecord[] = [];
    const watcher = allocatorWatcher({ onAdd: (r) => added.push(r), onDelete: (r) => deleted.push(r) });
    // called as any cache calls it: a record that breaks the cache's contract is refused before the handler
    for (const bad of [null, 'x', { name: 5, labels: {} }]) {
      expect(() => watcher.onAdd(bad as unknown as IPAddressRecord)).toThrow(/a record must be an object with a string name/);
      expect(() => watcher.onDelete(bad as unknown as IPAddressRecord)).toThrow(/a record must be an object with a string name/);
    }
    expect(() => watcher.onAdd(rec('10.0.0.1'), 7 as unknown as IPAddressRecord)).toThrow(/as the previous version of "10.0.0.1"/);
    expect([added, deleted]).toEqual([[], []]);
    // a MemoryStore's own records, validated at the door, reach the handlers as they are
    const s = new MemoryStore();
    s.cache.subscribe(watcher);
    const stored = s.createSync(rec('10.0.0.2'));
    s.deleteSync('10.0.0.2');
    expect(added).toEqual([stored]);
    expect(deleted).toEqual([stored]);
    expect(added[0]).toBe(deleted[0]);
  });

  it('get, cache.get and delete of a name that is not a string: InvalidArgumentError, nothing changed', async () => {
    const s = new MemoryStore();
    s.createSync(rec('10.0.0.1'));
    const notNames: unknown[] = [5, null, undefined, {}, ['10.0.0.1'], Symbol('x'), { length: 1e12, charCodeAt: () => 48 }];
    for (const bad of notNames) {
      expect(() => s.deleteSync(bad as string)).toThrow(InvalidArgumentError);
      await expect(s.delete(bad as string)).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(() => s.getSync(bad as string)).toThrow(InvalidArgumentError);
      expect(() => s.cache.get(bad as string)).toThrow(InvalidArgumentError);
    }
    expect(s.records().map((r) => r.name)).toEqual(['10.0.0.1']);
    expect(s.validate().records).toBe(1);
  });

  it('with timestamps: true, gives each version a creationTimestamp too, also in its JSON', () => {
    const s = new MemoryStore({ timestamps: true });
    const before = Math.floor(Date.now() / 1000) * 1000;
    const a = s.createSync(rec('10.0.0.1'));
    const after = Date.now();
    expect(a.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const t = Date.parse(a.creationTimestamp!);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(after);
    expect(JSON.parse(JSON.stringify(a))).toEqual({ ...kubernetesJson(a), creationTimestamp: a.creationTimestamp });
  });

  it('stamps each record with the time of its write (a new second, a new creationTimestamp)', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.UTC(2026, 0, 1, 0, 0, 0, 900));
      const s = new MemoryStore({ timestamps: true });
      const first = s.createSync(rec('10.0.0.1')).creationTimestamp;
      vi.setSystemTime(Date.UTC(2026, 0, 1, 0, 0, 1, 100));
      const second = s.createSync(rec('10.0.0.2')).creationTimestamp;
      expect([first, second]).toEqual(['2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('updates the cache synchronously and tells watchers before create() returns', () => {
    const s = new MemoryStore();
    const w = recorder();
    s.cache.subscribe(w);
    void s.create(rec('10.0.0.1'));
    expect(s.cache.get('10.0.0.1')?.name).toBe('10.0.0.1');
    expect(w.events).toEqual(['+10.0.0.1']);
    void s.delete('10.0.0.1');
    expect(s.cache.get('10.0.0.1')).toBeUndefined();
    expect(w.events).toEqual(['+10.0.0.1', '-10.0.0.1']);
  });

  it('replays the cache to a late subscriber and stops after unsubscribe', async () => {
    const s = new MemoryStore();
    await s.create(rec('10.0.0.1'));
    await s.create(rec('10.0.0.2', { labels: {} }));
    const w = recorder();
    const off = s.cache.subscribe(w);
    expect(w.events.sort()).toEqual(['+10.0.0.1', '+10.0.0.2']);
    expect(s.watcherCount).toBe(1);
    off();
    off(); // twice: no effect
    expect(s.watcherCount).toBe(0);
    await s.create(rec('10.0.0.3'));
    expect(w.events).toHaveLength(2);
  });

  it('lists by labels and counts', async () => {
    const s = new MemoryStore();
    await s.create(rec('10.0.0.1'));
    await s.create(rec('10.0.0.2', { labels: { other: 'x' } }));
    expect(s.cache.list(labels).map((r) => r.name)).toEqual(['10.0.0.1']);
    expect(
      s.cache
        .list()
        .map((r) => r.name)
        .sort(),
    ).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(s.cache.size).toBe(2);
    expect(s.size).toBe(2);
    expect(
      s
        .records()
        .map((r) => r.name)
        .sort(),
    ).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('createSync/deleteSync/getSync answer as create/delete/get do, synchronously', () => {
    const s = new MemoryStore();
    expect(s.sync).toBe(s);
    expect(new MemoryStore({ syncOps: false }).sync).toBeNull();
    const w = recorder();
    s.cache.subscribe(w);
    const r = s.createSync(rec('10.0.0.9'));
    expect(w.events).toEqual(['+10.0.0.9']); // told before createSync returned
    expect(s.getSync('10.0.0.9')).toBe(r);
    expect(() => s.createSync(rec('10.0.0.9'))).toThrow(AlreadyExistsError);
    s.deleteSync('10.0.0.9');
    expect(w.events).toEqual(['+10.0.0.9', '-10.0.0.9']);
    expect(s.getSync('10.0.0.9')).toBeUndefined();
    expect(() => s.deleteSync('10.0.0.9')).toThrow(NotFoundError);
  });

  it('the allocators call createSync when the store offers it, create otherwise: spy on the one in use', async () => {
    const { Allocator } = await import('../adapters/allocator.ts');
    const store = new MemoryStore();
    const createSync = vi.spyOn(store, 'createSync');
    const a = Allocator.create('10.9.1.0/29', { store });
    const ip = await a.allocateNext();
    expect(createSync.mock.calls.map((c) => c[0].name)).toEqual([ip]);
    a.destroy();

    const remote = new MemoryStore({ syncOps: false });
    const create = vi.spyOn(remote, 'create');
    const b = Allocator.create('10.9.1.0/29', { store: remote });
    const ip2 = await b.allocateNext();
    expect(create.mock.calls.map((c) => c[0].name)).toEqual([ip2]);
    b.destroy();
  });

  it('a wrapper made with Object.create(store) that wraps the synchronous operations sees the allocators call them', async () => {
    // store.sync was the store itself, read through the wrapper too: the allocators wrote to the
    // store past the wrapper's createSync and deleteSync, so the wrapper heard nothing
    const store = new MemoryStore();
    const wrapper = Object.create(store) as MemoryStore;
    const createSync = vi.spyOn(wrapper, 'createSync');
    const getSync = vi.spyOn(wrapper, 'getSync');
    const deleteSync = vi.spyOn(wrapper, 'deleteSync');
    const a = Allocator.create('10.9.2.0/29', { store: wrapper });
    const ip = await a.allocateNext();
    const other = ip === '10.9.2.1' ? '10.9.2.2' : '10.9.2.1'; // allocateNext draws at random
    await a.allocate(other);
    expect(await a.has(ip)).toBe(true);
    await a.release(ip);
    expect(createSync.mock.calls.map((c) => c[0].name)).toEqual([ip, other]);
    expect(getSync.mock.calls.map((c) => c[0])).toEqual([ip]);
    expect(deleteSync.mock.calls.map((c) => c[0])).toEqual([ip]);
    expect(store.records().map((r) => r.name)).toEqual([other]); // the store itself holds them
    a.destroy();
  });

  it("its cache reads the store's own table: a record is there, the same object, as soon as createSync returns, and it is always synced", () => {
    const s = new MemoryStore();
    const r = s.createSync(rec('10.0.0.9'));
    expect(s.cache.get('10.0.0.9')).toBe(r); // no event needed: one table
    expect(s.cache.hasSynced()).toBe(true);
  });
});

describe('MemoryStore validates every record at the door, as kube-apiserver validates an IPAddress', () => {
  const refused: [string, unknown, RegExp][] = [
    ['a number as name', { name: 5, labels, parentRef: null }, /metadata\.name: Invalid value: 5 \(number\): must be a string/],
    ['an empty name', { name: '', labels, parentRef: null }, /metadata\.name: Required value/],
    ['no name', { labels, parentRef: null }, /metadata\.name: Required value/],
    // an IPAddress object as kubectl prints it: the API server's text alone would name the very
    // fields it was given (metadata.name, spec.parentRef), so the message says where they go
    [
      "an IPAddress object's shape",
      { metadata: { name: '10.0.0.1', labels }, spec: { parentRef: null } },
      /metadata\.name: Required value: a record is \{ name, labels, parentRef \}, not an IPAddress object: .*metadata\.name.* in name/,
    ],
    // kube-apiserver's ValidateIPAddress: a nil parentRef is `spec.parentRef: Required value`
    ['no parentRef at all', { name: '10.0.0.1', labels }, /spec\.parentRef: Required value/],
    ['a parentRef left undefined', { name: '10.0.0.1', labels, parentRef: undefined }, /spec\.parentRef: Required value/],
    ['a leading zero', rec('010.0.0.1'), /"010\.0\.0\.1": must be a valid IP address/],
    ['upper-case IPv6', rec('2001:DB8::1'), /must be in canonical form \("2001:db8::1"\)/],
    ['uncompressed IPv6', rec('2001:db8:0:0:0:0:0:1'), /must be in canonical form \("2001:db8::1"\)/],
    ['a compressed single zero group', rec('2001:db8::1:2:3:4:5'), /must be in canonical form \("2001:db8:0:1:2:3:4:5"\)/],
    ['IPv4-mapped IPv6 (dotted)', rec('::ffff:10.0.0.1'), /must not be an IPv4-mapped IPv6 address/],
    ['IPv4-mapped IPv6 (hex)', rec('::ffff:a00:1'), /must not be an IPv4-mapped IPv6 address/],
    ['a CIDR', rec('10.0.0.0/24'), /must be a valid IP address/],
    ['a zone', rec('fe80::1%eth0'), /must be a valid IP address/],
    ['not an address', rec('invalid-ip-address'), /must be a valid IP address/],
    [
      'a label that is not a string',
      rec('10.0.0.1', { labels: { a: 1 } as never }),
      /metadata\.labels\["a"\]: Invalid value: 1 \(number\)/,
    ],
    // kube-apiserver's label rule (ValidateLabels): these were stored, and a KubernetesStore's server refuses them
    [
      'a label key with a space',
      rec('10.0.0.1', { labels: { 'bad key!': 'x' } }),
      /metadata\.labels: Invalid value: "bad key!": name part must consist/,
    ],
    [
      'a label value of 64 characters',
      rec('10.0.0.1', { labels: { ...labels, team: 'x'.repeat(64) } }),
      /metadata\.labels\["team"\]: Invalid value: "x{64}": must be no more than 63 characters/,
    ],
    [
      'a label value with a space',
      rec('10.0.0.1', { labels: { team: 'has space' } }),
      /metadata\.labels\["team"\]: Invalid value: "has space": a valid label/,
    ],
    ['labels as an array', rec('10.0.0.1', { labels: [] as never }), /metadata\.labels: Invalid value/],
    ['labels as a string', rec('10.0.0.1', { labels: 'x' as never }), /metadata\.labels: Invalid value/],
    // a copy of these would be {}: they must reach the check as given, as validateRecord refuses them
    ['labels as a Map', rec('10.0.0.1', { labels: new Map([['team', 'a']]) as never }), /metadata\.labels: Invalid value/],
    ['labels as a Date', rec('10.0.0.1', { labels: new Date(0) as never }), /metadata\.labels: Invalid value/],
    ['a parentRef as a class instance', rec('10.0.0.1', { parentRef: new (class Ref {})() as never }), /spec\.parentRef: Invalid value/],
    ['a parentRef that is text', rec('10.0.0.1', { parentRef: 'web' as never }), /spec\.parentRef: Invalid value: "web"/],
    ['a parentRef without resource', rec('10.0.0.1', { parentRef: { name: 'web' } as never }), /spec\.parentRef\.resource: Required value/],
    [
      'a parentRef with an empty name',
      rec('10.0.0.1', { parentRef: { resource: 'services', name: '' } }),
      /spec\.parentRef\.name: Required value/,
    ],
    [
      'a parentRef with a number',
      rec('10.0.0.1', { parentRef: { resource: 'services', name: 7 } as never }),
      /spec\.parentRef\.name: Invalid value: 7/,
    ],
    [
      'a parentRef with an unknown field',
      rec('10.0.0.1', { parentRef: { resource: 'services', name: 'web', uid: 'u' } as never }),
      /spec\.parentRef\.uid: Unknown field/,
    ],
    [
      'a parentRef name with a slash',
      rec('10.0.0.1', { parentRef: { resource: 'services', name: 'a/b' } }),
      /spec\.parentRef\.name: Invalid value: "a\/b": may not contain '\/'/,
    ],
    [
      'an upper-case group',
      rec('10.0.0.1', { parentRef: { group: 'Core', resource: 'services', name: 'web' } }),
      /spec\.parentRef\.group: Invalid value: "Core"/,
    ],
    ['null', null, /a record must be an object/],
    ['an array', [], /a record must be an object/],
    ['text', '10.0.0.1', /a record must be an object/],
  ];

  it.each(refused)('refuses %s with InvalidRecordError; nothing is stored, no watcher hears of it', async (_, record, message) => {
    const s = new MemoryStore();
    s.createSync(rec('10.0.0.200'));
    const w = recorder();
    s.cache.subscribe(w);
    const thrown = (() => {
      try {
        s.createSync(record as IPAddressRecord);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(InvalidRecordError);
    expect((thrown as InvalidRecordError).code).toBe('ERR_INVALID_RECORD');
    expect((thrown as Error).message).toMatch(message);
    await expect(s.create(record as IPAddressRecord)).rejects.toBeInstanceOf(InvalidRecordError);
    expect(s.size).toBe(1);
    expect(s.records().map((r) => r.name)).toEqual(['10.0.0.200']);
    expect(w.events).toEqual(['+10.0.0.200']);
  });

  it('lists every problem of a record in one error', () => {
    const s = new MemoryStore();
    let err: InvalidRecordError | undefined;
    try {
      s.createSync({ name: '010.1.1.1', labels: { a: 2 } as never, parentRef: { resource: '', name: '' } });
    } catch (e) {
      err = e as InvalidRecordError;
    }
    expect(err?.causes).toHaveLength(4);
    expect(err?.resourceName).toBe('010.1.1.1');
  });

  it.each([
    ['an IPv4 record of the allocators', rec('10.0.0.1')],
    ['a canonical IPv6 name', { name: '2001:db8::1', labels: allocatorLabels('IPv6'), parentRef: null }],
    ['the all-zero IPv6 address', { name: '::', labels: {}, parentRef: null }],
    ['an owner', rec('10.0.0.1', { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'web' } })],
    ['an owner without group and namespace', rec('10.0.0.1', { parentRef: { resource: 'services', name: 'web' } })],
    ['labels of its own: a prefixed key, an empty value', rec('10.0.0.1', { labels: { 'example.com/team': 'web', tier: '' } })],
    ['no labels at all (stored as none)', { name: '10.0.0.9', parentRef: null }],
  ])('accepts %s', (_, record) => {
    const s = new MemoryStore();
    const stored = s.createSync(record as IPAddressRecord);
    expect(stored.name).toBe((record as IPAddressRecord).name);
    expect(stored.labels).toEqual((record as IPAddressRecord).labels ?? {});
    expect(stored.parentRef).toEqual((record as IPAddressRecord).parentRef ?? null);
  });

  it('takes what kube-apiserver takes, and its types say so: labels optional, parentRef required (null: no owner)', () => {
    // tsc checks this file: the first call type-checks only while labels are optional, the
    // second fails to only while parentRef is required
    const s = new MemoryStore();
    expect(s.createSync({ name: '10.0.0.9', parentRef: null }).labels).toEqual({});
    // @ts-expect-error parentRef left out
    expect(() => s.createSync({ name: '10.0.0.8', labels })).toThrow(
      /^IPAddress "10\.0\.0\.8" is invalid: spec\.parentRef: Required value$/,
    );
    expect(() => validateRecord({ name: '10.0.0.8', labels })).toThrow(InvalidRecordError);
    expect(s.records().map((r) => r.name)).toEqual(['10.0.0.9']);
  });

  it('a record without labels no longer breaks the allocators on that store (it is stored with none)', async () => {
    const { Allocator } = await import('../adapters/allocator.ts');
    const s = new MemoryStore();
    const early = Allocator.create('10.0.0.0/24', { store: s });
    await s.create({ name: '10.0.0.9', parentRef: null } as unknown as IPAddressRecord);
    expect(s.getSync('10.0.0.9')?.labels).toEqual({});
    const late = Allocator.create('10.0.0.0/24', { store: s }); // used to throw in its constructor
    expect([early.used(), late.used()]).toEqual([0, 0]);
    early.destroy();
    late.destroy();
  });
});

describe('MemoryStore delivers events in store order, re-entrant writes included', () => {
  it('a watcher that deletes from inside onAdd: every watcher sees add X before delete X', () => {
    const s = new MemoryStore();
    const first = recorder('1');
    const deleter: StoreWatcher = {
      onAdd: (r) => {
        first.events.push(`1+${r.name}`);
        s.deleteSync(r.name); // re-entrant
        first.events.push(`1 deleted ${r.name}`);
      },
      onDelete: (r) => first.events.push(`1-${r.name}`),
    };
    const later = recorder('2');
    s.cache.subscribe(deleter);
    s.cache.subscribe(later);
    s.createSync(rec('10.0.0.1'));
    expect(first.events).toEqual(['1+10.0.0.1', '1 deleted 10.0.0.1', '1-10.0.0.1']);
    expect(later.events).toEqual(['2+10.0.0.1', '2-10.0.0.1']);
    expect(s.size).toBe(0);
  });

  it('a re-entrant write returns before its event is delivered, and its event is delivered before the outermost write returns', () => {
    const s = new MemoryStore();
    const log: string[] = [];
    let nested = false;
    s.cache.subscribe({
      onAdd: (r) => {
        log.push(`A+${r.name}`);
        if (!nested) {
          nested = true;
          s.createSync(rec('10.0.0.2'));
          log.push('inner createSync returned');
        }
      },
      onDelete: () => {},
    });
    s.cache.subscribe({ onAdd: (r) => log.push(`B+${r.name}`), onDelete: () => {} });
    s.createSync(rec('10.0.0.1'));
    log.push('outer createSync returned');
    expect(log).toEqual(['A+10.0.0.1', 'inner createSync returned', 'B+10.0.0.1', 'A+10.0.0.2', 'B+10.0.0.2', 'outer createSync returned']);
  });

  it('on a /30, an allocator after a watcher that deletes every record it sees keeps nothing marked: never "range is full"', async () => {
    const { Allocator } = await import('../adapters/allocator.ts');
    const s = new MemoryStore();
    s.cache.subscribe({ onAdd: (r) => s.deleteSync(r.name), onDelete: () => {} });
    const a = Allocator.create('10.0.0.0/30', { store: s });
    for (let i = 0; i < 6; i++) await a.allocateNext(); // the /30 has 2 addresses: would be full after 2
    expect(s.size).toBe(0);
    expect(a.used()).toBe(0);
    a.destroy();
  });

  it('an allocator first, then a watcher that deletes: the allocator still ends with nothing marked', async () => {
    const { Allocator } = await import('../adapters/allocator.ts');
    const s = new MemoryStore();
    const a = Allocator.create('10.0.0.0/30', { store: s });
    s.cache.subscribe({ onAdd: (r) => s.deleteSync(r.name), onDelete: () => {} });
    for (let i = 0; i < 6; i++) await a.allocateNext();
    expect([s.size, a.used()]).toEqual([0, 0]);
    await expect(a.allocate('10.0.0.1')).resolves.toBeUndefined();
    expect(a.used()).toBe(0);
    a.destroy();
  });

  it('a watcher subscribed from inside a delivery gets the replay, then only later events, once each', () => {
    const s = new MemoryStore();
    const late = recorder('L');
    let subscribed = false;
    s.cache.subscribe({
      onAdd: (r) => {
        if (subscribed) return;
        subscribed = true;
        s.createSync(rec('10.0.0.2')); // queued behind 10.0.0.1's delivery
        s.cache.subscribe(late); // replays 10.0.0.1 and 10.0.0.2: both are in the cache
        s.createSync(rec('10.0.0.3')); // after the subscribe: the late watcher gets it
        void r;
      },
      onDelete: () => {},
    });
    s.createSync(rec('10.0.0.1'));
    expect(late.events.slice(0, 2).sort()).toEqual(['L+10.0.0.1', 'L+10.0.0.2']);
    expect(late.events.slice(2)).toEqual(['L+10.0.0.3']);
  });

  it('a write a watcher makes during its own replay reaches it after the replay', () => {
    const s = new MemoryStore();
    s.createSync(rec('10.0.0.1'));
    const events: string[] = [];
    s.cache.subscribe({
      onAdd: (r) => {
        events.push(`+${r.name}`);
        if (r.name === '10.0.0.1') s.deleteSync('10.0.0.1');
      },
      onDelete: (r) => events.push(`-${r.name}`),
    });
    expect(events).toEqual(['+10.0.0.1', '-10.0.0.1']);
  });

  it('watchers subscribed and unsubscribed between writes, in any order, hear each write in subscription order while subscribed', () => {
    // a seeded walk: subscribe a new watcher, unsubscribe one (oldest, newest or between), or write
    const s = new MemoryStore();
    const log: string[] = [];
    const subscribed: { tag: string; off: () => void }[] = []; // the model: subscription order
    const random = seededRandom(7);
    const next = (n: number) => random.nextU32() % n;
    let made = 0;
    for (let step = 0; step < 400; step++) {
      const want: string[] = [];
      const choice = next(4);
      if (choice === 0 || subscribed.length === 0) {
        const tag = `w${made++}`;
        const replayed: string[] = [];
        const off = s.cache.subscribe({
          onAdd: (r) => (subscribed.some((w) => w.tag === tag) ? log.push(`${tag}+${r.name}`) : replayed.push(r.name)),
          onDelete: (r) => log.push(`${tag}-${r.name}`),
        });
        expect(replayed.length).toBe(s.size); // the replay: every record, once
        subscribed.push({ tag, off });
      } else if (choice === 1) {
        const [w] = subscribed.splice(next(subscribed.length), 1);
        w!.off();
      } else {
        const name = `10.0.0.${next(8) + 1}`;
        const add = s.cache.get(name) === undefined;
        if (add) s.createSync(rec(name));
        else s.deleteSync(name);
        for (const w of subscribed) want.push(`${w.tag}${add ? '+' : '-'}${name}`);
      }
      expect(log.splice(0)).toEqual(want);
    }
    expect(s.watcherCount).toBe(subscribed.length);
  });

  it('a watcher unsubscribed by an earlier watcher during a delivery hears nothing more', () => {
    const s = new MemoryStore();
    const victim = recorder('V');
    let off: () => void = () => {};
    s.cache.subscribe({ onAdd: () => off(), onDelete: () => {} });
    off = s.cache.subscribe(victim);
    s.createSync(rec('10.0.0.1'));
    s.createSync(rec('10.0.0.2'));
    expect(victim.events).toEqual([]);
  });
});

describe('MemoryStore: a watcher that throws fails neither the write nor the other watchers', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('reports the error to onWatcherError with the watcher and the event; the write stays committed', async () => {
    const reports: [unknown, StoreWatcher, string][] = [];
    const s = new MemoryStore({ onWatcherError: (e, w, ev) => reports.push([e, w, `${ev.kind} ${ev.record.name}`]) });
    const before = recorder('B');
    const boom = new Error('watcher failed');
    const thrower: StoreWatcher = {
      onAdd: () => {
        throw boom;
      },
      onDelete: () => {
        throw boom;
      },
    };
    const after = recorder('A');
    s.cache.subscribe(before);
    s.cache.subscribe(thrower);
    s.cache.subscribe(after);
    await expect(s.create(rec('10.0.0.1'))).resolves.toMatchObject({ name: '10.0.0.1' });
    expect(() => s.deleteSync('10.0.0.1')).not.toThrow();
    expect(before.events).toEqual(['B+10.0.0.1', 'B-10.0.0.1']);
    expect(after.events).toEqual(['A+10.0.0.1', 'A-10.0.0.1']);
    expect(reports).toEqual([
      [boom, thrower, 'add 10.0.0.1'],
      [boom, thrower, 'delete 10.0.0.1'],
    ]);
    expect(s.size).toBe(0);
  });

  it('by default rethrows the error asynchronously (not into the write)', () => {
    const queued: (() => void)[] = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((fn) => void queued.push(fn));
    const s = new MemoryStore();
    const boom = new Error('watcher failed');
    s.cache.subscribe({
      onAdd: () => {
        throw boom;
      },
      onDelete: () => {},
    });
    expect(() => s.createSync(rec('10.0.0.1'))).not.toThrow();
    expect(s.getSync('10.0.0.1')).toBeDefined();
    const thrown: unknown[] = [];
    for (const fn of queued) {
      try {
        fn();
      } catch (e) {
        thrown.push(e);
      }
    }
    expect(thrown).toEqual([boom]);
  });

  it('an onWatcherError that throws has its own error rethrown asynchronously', () => {
    const queued: (() => void)[] = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((fn) => void queued.push(fn));
    const second = new Error('handler failed');
    const s = new MemoryStore({
      onWatcherError: () => {
        throw second;
      },
    });
    const other = recorder();
    s.cache.subscribe({
      onAdd: () => {
        throw new Error('watcher failed');
      },
      onDelete: () => {},
    });
    s.cache.subscribe(other);
    expect(() => s.createSync(rec('10.0.0.1'))).not.toThrow();
    expect(other.events).toEqual(['+10.0.0.1']);
    const thrown: unknown[] = [];
    for (const fn of queued) {
      try {
        fn();
      } catch (e) {
        thrown.push(e);
      }
    }
    expect(thrown).toEqual([second]);
  });

  it('refuses something that is not a watcher with InvalidArgumentError, subscribing nothing', () => {
    const s = new MemoryStore();
    for (const w of [
      null,
      undefined,
      'w',
      {},
      { onAdd: () => {} },
      { onAdd: () => {}, onDelete: 1 },
      { onAdd: () => {}, onDelete: () => {}, onResync: 'x' },
    ]) {
      expect(() => s.cache.subscribe(w as never), JSON.stringify(w)).toThrow(InvalidArgumentError);
    }
    expect(s.watcherCount).toBe(0);
    s.createSync(rec('10.0.0.1')); // no broken watcher left behind to fail a delivery
  });

  it('a watcher whose replay throws is not subscribed; the error goes to the subscriber', () => {
    const s = new MemoryStore();
    s.createSync(rec('10.0.0.1'));
    const boom = new Error('replay failed');
    expect(() =>
      s.cache.subscribe({
        onAdd: () => {
          throw boom;
        },
        onDelete: () => {},
      }),
    ).toThrow(boom);
    expect(s.watcherCount).toBe(0);
  });
});

describe('MemoryStore.close()', () => {
  it('afterwards every method throws or rejects with ErrDestroyed saying the store is closed; close is idempotent; watchers hear nothing', async () => {
    const s = new MemoryStore();
    s.createSync(rec('10.0.0.1'));
    const w = recorder();
    const off = s.cache.subscribe(w);
    s.close();
    s.close();
    s[Symbol.dispose]();
    const sync: [string, () => unknown][] = [
      ['createSync', () => s.createSync(rec('10.0.0.2'))],
      ['deleteSync', () => s.deleteSync('10.0.0.1')],
      ['getSync', () => s.getSync('10.0.0.1')],
      ['records', () => s.records()],
      ['size', () => s.size],
      ['watcherCount', () => s.watcherCount],
      ['validate', () => s.validate()],
      ['cache.get', () => s.cache.get('10.0.0.1')],
      ['cache.list', () => s.cache.list()],
      ['cache.size', () => s.cache.size],
      ['cache.hasSynced', () => s.cache.hasSynced()],
      ['cache.subscribe', () => s.cache.subscribe(recorder())],
    ];
    for (const [name, call] of sync) {
      let thrown: unknown;
      try {
        call();
      } catch (e) {
        thrown = e;
      }
      expect(thrown, name).toBeInstanceOf(ErrDestroyed);
      expect((thrown as ErrDestroyed).message, name).toBe('MemoryStore has been closed'); // the word of the call made
      expect((thrown as ErrDestroyed).target, name).toBe('MemoryStore');
    }
    await expect(s.create(rec('10.0.0.2'))).rejects.toThrow(new ErrDestroyed('MemoryStore', 'has been closed'));
    await expect(s.delete('10.0.0.1')).rejects.toBeInstanceOf(ErrDestroyed);
    await expect(s.get('10.0.0.1')).rejects.toBeInstanceOf(ErrDestroyed);
    expect(() => off()).not.toThrow(); // unsubscribing after close is harmless
    expect(w.events).toEqual(['+10.0.0.1']);
  });

  it('[Symbol.dispose] closes the store', () => {
    const s = new MemoryStore();
    s[Symbol.dispose]();
    expect(() => s.getSync('10.0.0.1')).toThrow(ErrDestroyed);
  });

  it('a watcher that closes the store stops the delivery of the events still queued', () => {
    const s = new MemoryStore();
    const later = recorder();
    s.cache.subscribe({
      onAdd: (r) => {
        if (r.name === '10.0.0.1') {
          s.createSync(rec('10.0.0.2'));
          s.close();
        }
      },
      onDelete: () => {},
    });
    s.cache.subscribe(later);
    s.createSync(rec('10.0.0.1'));
    expect(later.events).toEqual([]);
  });
});

describe('MemoryStore cannot be sent to another thread', () => {
  for (const [how, send] of SENDS_TO_ANOTHER_THREAD) {
    it(`${how} of a store, its cache or an Allocator on it throws a DataCloneError saying it stays in its thread, not naming an internal function; the store is unchanged`, async () => {
      const s = new MemoryStore();
      const a = new Allocator('10.0.0.0/29', { store: s });
      const w = recorder();
      s.cache.subscribe(w);
      await a.allocate('10.0.0.1');
      for (const [what, value] of [
        ['store', s],
        ['store.cache', s.cache],
        ['allocator', a],
      ] as const) {
        let thrown: unknown;
        try {
          send(value);
        } catch (e) {
          thrown = e;
        }
        expect(thrown, what).toBeInstanceOf(Error);
        expect((thrown as Error).name, what).toBe('DataCloneError');
        expect((thrown as Error).message, what).toMatch(
          /^Symbol\(ipallocator: .*cannot be sent to another thread.*\) could not be cloned\.$/,
        );
        expect((thrown as Error).message, what).not.toContain('rethrowLater');
      }
      expect(s.records().map((r) => r.name)).toEqual(['10.0.0.1']);
      await a.allocate('10.0.0.2');
      expect(w.events).toEqual(['+10.0.0.1', '+10.0.0.2']);
      a.destroy();
      s.close();
    });
  }
});

describe('MemoryStore name table (open addressing)', () => {
  it('grows at half full and shrinks below an eighth, and every record stays findable', () => {
    const s = new MemoryStore();
    const name = (i: number) => `10.1.${i >> 8}.${i & 255}`;
    expect(s.validate()).toEqual({ records: 0, slots: 16 });
    for (let i = 0; i < 3000; i++) s.createSync(rec(name(i)));
    expect(s.validate()).toEqual({ records: 3000, slots: 8192 });
    for (let i = 0; i < 2000; i++) s.deleteSync(name(i));
    expect(s.validate()).toEqual({ records: 1000, slots: 4096 });
    for (let i = 2000; i < 3000; i++) s.deleteSync(name(i));
    expect(s.validate()).toEqual({ records: 0, slots: 16 });
    for (let i = 0; i < 3000; i++) expect(s.getSync(name(i))).toBeUndefined();
    s.createSync(rec(name(7)));
    expect(s.records().map((r) => r.name)).toEqual([name(7)]);
    expect(s.size).toBe(1);
    expect(s.cache.size).toBe(1);
  });

  it('lists records in the order they were created, also after deletes squeezed out the holes', () => {
    const s = new MemoryStore();
    const name = (i: number) => `10.5.${i >> 8}.${i & 255}`;
    for (let i = 0; i < 3000; i++) s.createSync(rec(name(i)));
    const kept: string[] = [];
    for (let i = 0; i < 3000; i++) {
      if (i % 3 === 1) kept.push(name(i));
      else s.deleteSync(name(i)); // 2,000 holes; the table shrinks on the way, squeezing them out
    }
    for (let i = 3000; i < 3010; i++) {
      s.createSync(rec(name(i)));
      kept.push(name(i));
    }
    s.deleteSync(name(3005));
    kept.splice(kept.indexOf(name(3005)), 1);
    expect(s.records().map((r) => r.name)).toEqual(kept);
    expect(s.cache.list().map((r) => r.name)).toEqual(kept);
    expect(s.validate().records).toBe(kept.length);
    for (const n of kept) expect(s.getSync(n)?.name).toBe(n);
  });

  it('a record stored again under its name keeps its place in the listing', () => {
    const t = new NameTable(7);
    const r = (name: string, v: number) => ({ ...rec(name), resourceVersion: String(v) });
    for (const n of ['10.6.0.1', '10.6.0.2', '10.6.0.3']) t.set(n, r(n, 1));
    t.set('10.6.0.2', r('10.6.0.2', 2));
    expect(t.values().map((x) => `${x.name}@${x.resourceVersion}`)).toEqual(['10.6.0.1@1', '10.6.0.2@2', '10.6.0.3@1']);
    expect(t.validate()).toEqual({ records: 3, slots: 16 });
  });

  it('stays exact through churn against a Set model (its order included): fresh names, recurring names, growth and shrinking', () => {
    const s = new MemoryStore();
    const live = new Set<string>();
    let fresh = 0;
    let x = 777;
    const rand = (n: number) => {
      x = (x * 1103515245 + 12345) >>> 0;
      return x % n;
    };
    for (let phase = 0; phase < 6; phase++) {
      // even phases: names never seen before; odd phases: 300 names over and over. The number
      // of records swings between 0 and 1,500 so that the table both grows and shrinks.
      const keep = phase % 3 === 2 ? 20 : 1500;
      for (let step = 0; step < 12_000; step++) {
        const name = phase % 2 === 0 ? `fd00::2:${(fresh++).toString(16)}` : `fd00::1:${rand(300).toString(16)}`;
        if (live.has(name)) {
          expect(s.getSync(name)?.name).toBe(name);
          s.deleteSync(name);
          live.delete(name);
          expect(s.getSync(name)).toBeUndefined();
        } else {
          expect(s.getSync(name)).toBeUndefined();
          s.createSync(rec(name));
          live.add(name);
          while (live.size > keep) {
            const victim = live.values().next().value!;
            s.deleteSync(victim);
            live.delete(victim);
          }
        }
        if (step % 1999 === 0) expect(s.validate().records).toBe(live.size);
      }
      expect(s.validate().records).toBe(live.size);
      // a Set keeps insertion order as the table does: holes squeezed out, a name created again goes last
      expect(s.records().map((r) => r.name)).toEqual([...live]);
      for (const name of live) expect(s.getSync(name)?.name).toBe(name);
    }
  });

  it('a name checked and then created after other writes moved records is stored once, where lookups find it', () => {
    const s = new MemoryStore();
    const names = Array.from({ length: 7 }, (_, i) => `10.3.0.${i + 1}`);
    for (const n of names) s.createSync(rec(n));
    // the check of a free name, then deletes (records shift back into freed slots), then the create
    expect(s.getSync('10.3.0.99')).toBeUndefined();
    s.deleteSync(names[0]!);
    s.deleteSync(names[3]!);
    s.createSync(rec('10.3.0.99'));
    expect(() => s.createSync(rec('10.3.0.99'))).toThrow(AlreadyExistsError);
    expect(s.validate().records).toBe(6);
    expect(s.getSync('10.3.0.99')?.name).toBe('10.3.0.99');
    for (const n of [names[1], names[2], names[4], names[5], names[6]]) expect(s.getSync(n!)?.name).toBe(n);
  });

  it('names that share a home slot: deletes shift the run back, and a checked name is stored where lookups find it', () => {
    const seed = 42;
    const t = new NameTable(seed);
    // five names whose first probe is the same slot of the 16-slot table, and one just after
    const home = homeOf(tagOf('10.4.0.0', seed), 15);
    const same: string[] = [];
    let after = '';
    for (let i = 1; same.length < 5 || after === ''; i++) {
      const n = `10.4.${i >> 8}.${i & 255}`;
      const h = homeOf(tagOf(n, seed), 15);
      if (h === home && same.length < 5) same.push(n);
      else if (h === ((home + 1) & 15) && after === '') after = n;
    }
    const put = (n: string) => t.set(n, { name: n, labels: {}, parentRef: null });
    put(same[0]!);
    put(same[1]!);
    put(after); // sits behind the run of its own home's neighbours
    put(same[2]!);
    expect(t.validate()).toEqual({ records: 4, slots: 16 });
    // checked (free), then a delete at the head of the run moves the others back, then stored
    expect(t.get(same[3]!)).toBeUndefined();
    expect(t.delete(same[0]!)?.name).toBe(same[0]);
    put(same[3]!);
    expect(t.validate()).toEqual({ records: 4, slots: 16 });
    for (const n of [same[1]!, same[2]!, same[3]!, after]) expect(t.get(n)?.name).toBe(n);
    expect(t.get(same[0]!)).toBeUndefined();
    // deleting from the middle of the run keeps the rest findable, the neighbour's record included
    expect(t.delete(same[2]!)?.name).toBe(same[2]);
    expect(t.delete(same[4]!)).toBeUndefined();
    expect(t.validate()).toEqual({ records: 3, slots: 16 });
    for (const n of [same[1]!, same[3]!, after]) expect(t.get(n)?.name).toBe(n);
    expect(new Set(t.values().map((r) => r.name))).toEqual(new Set([same[1], same[3], after]));
  });

  it('stays exact and bounded through heavy churn over many names', () => {
    const s = new MemoryStore();
    const name = (i: number) => `10.2.${(i >> 8) & 255}.${i & 255}`;
    const live = new Set<number>();
    let x = 12345;
    for (let step = 0; step < 40_000; step++) {
      x = (x * 1103515245 + 12345) >>> 0;
      const i = x % 6000;
      if (live.has(i)) {
        s.deleteSync(name(i));
        live.delete(i);
      } else {
        s.createSync(rec(name(i)));
        live.add(i);
      }
      if (step % 997 === 0) expect(s.validate().records).toBe(live.size); // throws if a record became unreachable
    }
    expect(new Set(s.records().map((r) => r.name))).toEqual(new Set([...live].map(name)));
  });
});

describe('FaultyMemoryStore (test double): the faults tests inject', () => {
  it('failCreates: the next creates reject with the given error and store nothing', async () => {
    const s = new FaultyMemoryStore();
    const boom = new Error('server error');
    s.failCreates(boom, 2);
    await expect(s.create(rec('10.0.0.1'))).rejects.toBe(boom);
    expect(() => s.createSync(rec('10.0.0.1'))).toThrow(boom);
    expect(await s.get('10.0.0.1')).toBeUndefined();
    await s.create(rec('10.0.0.1'));
    expect([s.createCalls, s.getCalls]).toEqual([3, 1]);
  });

  it('collideCreates: AlreadyExists for a name that neither the cache nor the authority holds', async () => {
    const s = new FaultyMemoryStore();
    s.collideCreates(1);
    await expect(s.create(rec('10.0.0.1'))).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(s.cache.get('10.0.0.1')).toBeUndefined();
    await s.create(rec('10.0.0.1'));
    await expect(s.create(rec('10.0.0.1'))).rejects.toBeInstanceOf(AlreadyExistsError);
    expect([s.alreadyExistsAnswers, s.createCalls]).toEqual([2, 3]);
  });

  it('lagCache(): events wait for flushCache() and are delivered in order', async () => {
    const s = new FaultyMemoryStore({ cache: 'manual' });
    const w = recorder();
    s.cache.subscribe(w);
    await s.create(rec('10.0.0.1'));
    await s.delete('10.0.0.1');
    await s.create(rec('10.0.0.2'));
    expect(s.cache.get('10.0.0.2')).toBeUndefined();
    expect(await s.get('10.0.0.2')).toBeDefined();
    expect(s.pendingEvents).toBe(3);
    expect(s.flushCache()).toBe(3);
    expect(w.events).toEqual(['+10.0.0.1', '-10.0.0.1', '+10.0.0.2']);
    expect(s.cache.get('10.0.0.2')?.name).toBe('10.0.0.2');
    s.syncCache();
    await s.create(rec('10.0.0.3'));
    expect(s.cache.get('10.0.0.3')?.name).toBe('10.0.0.3');
  });

  it('lagCache() mid-run: the cache keeps what it was told before and falls behind from then on', () => {
    const s = new FaultyMemoryStore();
    const w = recorder();
    s.cache.subscribe(w);
    s.createSync(rec('10.0.0.1'));
    s.lagCache('manual');
    s.createSync(rec('10.0.0.2'));
    s.deleteSync('10.0.0.1');
    expect(s.cache.list().map((r) => r.name)).toEqual(['10.0.0.1']);
    expect(s.records().map((r) => r.name)).toEqual(['10.0.0.2']);
    expect(s.flushCache()).toBe(2);
    expect(s.cache.list().map((r) => r.name)).toEqual(['10.0.0.2']);
    expect(w.events).toEqual(['+10.0.0.1', '+10.0.0.2', '-10.0.0.1']);
  });

  it('lagCache(ms): queued events arrive by themselves', async () => {
    const s = new FaultyMemoryStore({ cache: 5 });
    await s.create(rec('10.0.0.1'));
    expect(s.cache.get('10.0.0.1')).toBeUndefined();
    await vi.waitFor(() => expect(s.cache.get('10.0.0.1')?.name).toBe('10.0.0.1'), { timeout: 2000, interval: 5 });
    s.close();
  });

  it('setSynced and the synced option drive cache.hasSynced()', () => {
    const s = new FaultyMemoryStore({ synced: false });
    expect(s.cache.hasSynced()).toBe(false);
    s.setSynced(true);
    expect(s.cache.hasSynced()).toBe(true);
  });

  it('inject writes any name, an update arrives as onAdd again; injectAuthorityOnly bypasses the cache', async () => {
    const s = new FaultyMemoryStore();
    const w = recorder();
    s.cache.subscribe(w);
    s.inject('invalid-ip-address', labels);
    s.inject('invalid-ip-address', {});
    expect(w.events).toEqual(['+invalid-ip-address', '+invalid-ip-address']);
    expect(s.cache.get('invalid-ip-address')?.labels).toEqual({});
    s.injectAuthorityOnly('10.0.0.9', labels);
    expect(s.cache.get('10.0.0.9')).toBeUndefined();
    await expect(s.create(rec('10.0.0.9'))).rejects.toBeInstanceOf(AlreadyExistsError);
    // deleting a record the cache never saw tells nobody
    await s.delete('10.0.0.9');
    expect(w.events).toHaveLength(2);
  });
});

describe('a store of your own that lacks a member', () => {
  it('is refused when the allocator is made, naming each missing member', () => {
    const cache = { get() {}, list: () => [], hasSynced: () => true, subscribe: () => () => {} };
    const cases: [unknown, string][] = [
      [{ create() {}, delete() {}, get() {}, cache: { ...cache, get: undefined } }, 'cache.get'],
      [{ create() {}, get() {}, cache: { ...cache, subscribe: 1 } }, 'delete, cache.subscribe'],
      [{ create() {}, delete() {}, get() {} }, 'cache'],
    ];
    for (const [store, lacks] of cases) {
      let error: unknown;
      try {
        new Allocator('10.0.0.0/28', { store: store as never });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(new RegExp(`^options\\.store must be a Store \\(.*\\); it lacks ${lacks}: got `));
    }
  });

  it('the class itself, without new: the error names the class, not its source', () => {
    let error: unknown;
    try {
      new Allocator('10.0.0.0/28', { store: MemoryStore as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/: got the class "MemoryStore" \(a missing `new`\?\)$/);
  });
});
