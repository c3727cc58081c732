// An answer the package hands out whose type says readonly is frozen too, as DualStackIPs is: a
// caller's change to it throws (the test file is a module: strict mode) instead of leaving an
// answer that no longer says what the package answered. One describe per answer; each tries a
// change of every part a caller could reach.
import { describe, expect, it } from 'vitest';
import { allocatorLabels, InMemoryServiceCIDRs, MemoryStore, MetaAllocator, reconcile } from '../adapters/index.ts';
import type { IPAddressRecord, Store } from '../adapters/index.ts';

/** Each change must throw a TypeError, and `value` and every object in `parts` are frozen. */
function expectFrozen(value: object, parts: object[], changes: Record<string, () => void>): void {
  for (const [name, change] of Object.entries(changes)) expect(change, name).toThrow(TypeError);
  expect([value, ...parts].map((p) => Object.isFrozen(p))).toEqual([value, ...parts].map(() => true));
}

describe('reconcile answers frozen', () => {
  it('its answer, each list in it and each entry of errors', async () => {
    const old = '2020-01-01T00:00:00Z';
    const records: IPAddressRecord[] = [
      { name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: null, creationTimestamp: old },
      { name: '10.0.0.2', labels: allocatorLabels('IPv4'), parentRef: null, creationTimestamp: old },
      { name: '10.0.0.3', labels: allocatorLabels('IPv4'), parentRef: null, creationTimestamp: new Date().toISOString() },
    ];
    let held = [...records];
    // a store of the caller's own: deletes 10.0.0.1, refuses to delete 10.0.0.2
    const store: Store = {
      create: () => Promise.reject(new Error('not used')),
      delete: async (name) => {
        if (name === '10.0.0.2') throw new Error('refused');
        held = held.filter((r) => r.name !== name);
      },
      get: async (name) => held.find((r) => r.name === name) ?? null,
      cache: { get: () => undefined, list: () => records, size: records.length, hasSynced: () => true, subscribe: () => () => {} },
      close: () => {},
    };
    const answer = await reconcile(store, [], { delete: true });
    expect([answer.leaks.length, answer.young.length, answer.deleted, answer.held, answer.errors.map((e) => e.name)]).toEqual([
      2,
      1,
      ['10.0.0.1'],
      [],
      ['10.0.0.2'],
    ]);
    const lists = [answer.leaks, answer.young, answer.deleted, answer.held, answer.errors] as unknown[][];
    expectFrozen(answer, [...lists, ...answer.errors], {
      'replace leaks': () => ((answer as { leaks: unknown }).leaks = []),
      'push onto leaks': () => lists[0]!.push(records[2]),
      'empty young': () => lists[1]!.splice(0),
      'rename a deleted one': () => ((lists[2] as string[])[0] = '10.0.0.9'),
      'add to held': () => lists[3]!.push('10.0.0.2'),
      'drop an error': () => lists[4]!.pop(),
      "rename an error's record": () => ((answer.errors[0] as { name: string }).name = '10.0.0.9'),
    });
  });
});

describe("a MetaAllocator's ranges() answers each range frozen", () => {
  it('a change to a range or to its list of ServiceCIDRs throws, and the next answer is unchanged', () => {
    const source = new InMemoryServiceCIDRs();
    const meta = new MetaAllocator('IPv4', source, { store: new MemoryStore() });
    source.addServiceCIDR('a', ['10.0.0.0/28']);
    source.addServiceCIDR('b', ['10.0.0.0/28']);
    const [range] = meta.ranges();
    expectFrozen(range!, [range!.serviceCIDRs], {
      'mark it not ready': () => ((range as { ready: boolean }).ready = false),
      'raise its free count': () => ((range as { free: bigint }).free = 1000n),
      'drop a ServiceCIDR': () => (range!.serviceCIDRs as string[]).pop(),
      'rename a ServiceCIDR': () => ((range!.serviceCIDRs as string[])[0] = 'c'),
    });
    expect(meta.ranges()).toEqual([{ cidr: '10.0.0.0/28', ready: true, serviceCIDRs: ['a', 'b'], size: 14n, used: 0, free: 14n }]);
    meta.destroy();
  });
});
