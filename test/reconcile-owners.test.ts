// reconcile compares owners by ownerKey: which parentRefs name the same owner, and which none.
import { describe, expect, it } from 'vitest';
import { ownerKey, reconcile } from '../adapters/reconcile.ts';
import { allocatorLabels, type IPAddressRecord, type Store } from '../adapters/store.ts';
import type { ParentRef } from '../adapters/types.ts';

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
