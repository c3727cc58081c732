// reconcile compares owners by ownerKey: which parentRefs name the same owner, and which none.
import { describe, expect, it } from 'vitest';
import { ownerKey, reconcile } from '../adapters/reconcile.ts';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { allocatorLabels, type IPAddressRecord, type Store, type ParentRef } from '../adapters/store.ts';

/** A store of the caller's own whose cache holds `records` as given (no validation at its door). */
function storeHolding(records: IPAddressRecord[]): Store {
  return {
    create: () => Promise.reject(new Error('not used')),
    delete: () => Promise.resolve(),
    get: () => Promise.resolve(undefined),
    cache: { get: () => undefined, list: () => records, size: records.length, hasSynced: () => true, subscribe: () => () => {} },
    close: () => {},
  };
}

describe('ownerKey', () => {
  it('writes an absent field (undefined or null) as "", as Kubernetes reads a field left out, never as text', () => {
    const rows: [string, Partial<ParentRef> | Record<string, unknown>, string][] = [
      ['every field', { group: 'apps', resource: 'services', namespace: 'default', name: 'web' }, 'apps/services/default/web'],
      ['no group, no namespace', { resource: 'services', name: 'web' }, '/services//web'],
      ['no name', { resource: 'services', namespace: 'default' }, '/services/default/'],
      ['a null name', { resource: 'services', namespace: 'default', name: null }, '/services/default/'],
      ['no resource', { namespace: 'default', name: 'web' }, '//default/web'],
      ['nothing', {}, '///'],
    ];
    for (const [row, ref, key] of rows) expect(ownerKey(ref as ParentRef), row).toBe(key);
  });

  it('a record whose parentRef has no name is a leak, not owned by a Service named "undefined"', async () => {
    const nameless = { group: '', resource: 'services', namespace: 'default' } as unknown as ParentRef;
    const record: IPAddressRecord = { name: '10.0.0.7', labels: allocatorLabels('IPv4'), parentRef: nameless };
    const known = [{ group: '', resource: 'services', namespace: 'default', name: 'undefined' }];
    const result = await reconcile(storeHolding([record]), known, { graceMs: 0 });
    expect(result.leaks.map((r) => r.name)).toEqual(['10.0.0.7']);
  });
});

describe('a knownOwners predicate answers true or false at once', () => {
  // Found by an outside drop-in test: an async predicate (asking the cluster whether a Service
  // exists) answered a promise, truthy, and every record read as known: no leak found, none
  // deleted, no error. A predicate missing its return answered undefined: every record a leak.
  const record: IPAddressRecord = { name: '10.0.0.7', labels: allocatorLabels('IPv4'), parentRef: null };
  // the advice fits the cause: how to ask the cluster only for a promise (it was given for every answer)
  it.each([
    [
      'an async predicate',
      async () => false,
      'a Promise (a missing await?): to ask the cluster, read its owners first and pass them (ParentRefs, or a predicate over what you read)',
    ],
    ['a predicate missing its return', () => undefined, 'undefined (a missing return?)'],
    ['a predicate answering a number', () => 1, '1 (number)'],
  ])('%s is refused before anything is deleted', async (_name, predicate, said) => {
    const deleted: string[] = [];
    const store = { ...storeHolding([record]), delete: (n: string) => Promise.resolve(void deleted.push(n)) };
    await expect(reconcile(store, predicate as never, { graceMs: 0, delete: true })).rejects.toThrow(
      new InvalidArgumentError(`knownOwners must answer true or false at once; for "10.0.0.7" it answered ${said}`),
    );
    expect(deleted).toEqual([]);
  });
  it('true and false are taken as they are', async () => {
    expect((await reconcile(storeHolding([record]), () => true, { graceMs: 0 })).leaks).toEqual([]);
    expect((await reconcile(storeHolding([record]), () => false, { graceMs: 0 })).leaks).toEqual([record]);
  });
});
