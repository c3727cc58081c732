// An allocator refuses a KubernetesStore whose cache leaves out the IPAddresses it writes (a
// `family` or `labelSelector` that does not select them): it would never hear of its own
// addresses — used() stuck at 0, each one tried again at the server (409) by later calls.
import { afterEach, describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { KubernetesServiceCIDRs, KubernetesStore, type LabelSelector, parseLabelSelector } from '../adapters/kubernetes/index.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

const stores: KubernetesStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});
function storeWith(options: { family?: 'IPv4' | 'IPv6'; labelSelector?: string }): KubernetesStore {
  const store = new KubernetesStore(kubeConfigFor('http://127.0.0.1:1'), { start: false, ...options });
  stores.push(store);
  return store;
}
const makers = {
  Allocator: (store: KubernetesStore) => new Allocator('10.96.0.0/24', { store }),
  ReferenceAllocator: (store: KubernetesStore) => new ReferenceAllocator('10.96.0.0/24', { store }),
  MetaAllocator: (store: KubernetesStore) => {
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('kubernetes', ['10.96.0.0/24']);
    return new MetaAllocator('IPv4', cidrs, { store });
  },
};

describe.each(Object.entries(makers))('%s over a KubernetesStore whose cache is narrowed', (who, make) => {
  // Regression: the two stores of a dual-stack setup given the wrong way round allocated on the
  // server while used() stayed 0 and validate() passed
  it('refuses a store of the other family, saying what it selects and what it writes', () => {
    const store = storeWith({ family: 'IPv6' });
    expect(() => make(store)).toThrow(InvalidArgumentError);
    expect(() => make(store)).toThrow(
      `${who}: options.store's cache selects "ipaddress.kubernetes.io/ip-family=IPv6", which leaves out the IPAddresses an IPv4 allocator writes ` +
        '(ipaddress.kubernetes.io/ip-family=IPv4,ipaddress.kubernetes.io/managed-by=ipallocator.k8s.io): it would never see its own addresses ' +
        "(used() would stay 0, and each would be tried again at the server); give it a store whose cache holds them (family: 'IPv4', or no selector)",
    );
    expect(store.cache.list()).toEqual([]); // nothing subscribed, nothing asked
  });

  it('refuses a label selector that leaves out its labels, and takes one that holds them', () => {
    expect(() => make(storeWith({ labelSelector: 'team=a' }))).toThrow(/selects "team=a", which leaves out/);
    expect(() => make(storeWith({ labelSelector: 'ipaddress.kubernetes.io/managed-by!=ipallocator.k8s.io' }))).toThrow(
      InvalidArgumentError,
    );
    for (const options of [
      {},
      { family: 'IPv4' as const },
      { labelSelector: 'ipaddress.kubernetes.io/managed-by=ipallocator.k8s.io' },
      { family: 'IPv4' as const, labelSelector: 'ipaddress.kubernetes.io/managed-by in (ipallocator.k8s.io, other)' },
    ]) {
      const allocator = make(storeWith(options));
      expect(allocator.used()).toBe(0);
      allocator.destroy();
    }
  });
});

// Regression: the fields a store was made with could be assigned from JavaScript, silently: a
// `selector` assigned (or its text or requirements changed) fooled the allocator's check of what
// the cache leaves out, while the informer went on listing with the old one — or, the selector
// object changed in place, listed with the new text from its next re-list. They are read-only
// at run time, as an allocator's are (adapters/types.ts readOnlyFields), and a selector frozen.
describe('the fields a KubernetesStore or KubernetesServiceCIDRs was made with cannot be changed', () => {
  const kc = () => kubeConfigFor('http://127.0.0.1:1');
  it.each([
    ['KubernetesStore', () => new KubernetesStore(kc(), { start: false, family: 'IPv6', labelSelector: 'team in (a,b)' })],
    ['KubernetesServiceCIDRs', () => new KubernetesServiceCIDRs(kc(), { start: false, labelSelector: 'team in (a,b)' })],
  ] as const)('%s: apiVersion, path and selector are read-only and not redefinable; the selector is frozen', (_, make) => {
    const x = make() as unknown as Record<string, unknown> & { close(): void; selector: LabelSelector };
    try {
      for (const key of ['apiVersion', 'path', 'selector']) {
        const before = x[key];
        expect(() => {
          x[key] = undefined;
        }, key).toThrow(TypeError);
        expect(() => Object.defineProperty(x, key, { value: 1 }), key).toThrow(TypeError);
        expect(x[key], key).toBe(before);
      }
      const { selector } = x;
      const text = selector.text;
      expect(() => {
        (selector as { text: string }).text = 'team=c';
      }).toThrow(TypeError);
      expect(() => (selector.requirements as unknown[]).push({ op: 'exists', key: 'x' })).toThrow(TypeError);
      const inList = selector.requirements.find((r) => r.op === 'in') as unknown as { key: string; values: string[] };
      expect(() => inList.values.push('c')).toThrow(TypeError);
      expect(() => {
        inList.key = 'other';
      }).toThrow(TypeError);
      expect(selector.text).toBe(text);
    } finally {
      x.close();
    }
  });

  it('an allocator still refuses a store of the other family after its selector was tampered with', () => {
    const store = storeWith({ family: 'IPv6' });
    expect(() => {
      (store as { selector: unknown }).selector = undefined;
    }).toThrow(TypeError);
    expect(() => {
      (store.selector!.requirements as unknown[]).length = 0;
    }).toThrow(TypeError);
    expect(() => new Allocator('10.96.0.0/24', { store })).toThrow(InvalidArgumentError);
  });

  // Regression: stats handed out the informer's own counters, which an assignment changed
  it('stats is a frozen snapshot: assigning a counter throws and changes none', () => {
    const store = storeWith({});
    const stats = store.stats as { lists: number };
    expect(() => {
      stats.lists = 99;
    }).toThrow(TypeError);
    expect(store.stats).toEqual({ lists: 0, watches: 0, expired: 0, errors: 0 });
  });

  it('parseLabelSelector hands out a frozen selector', () => {
    const s = parseLabelSelector('a=b,c notin (d,e)');
    expect(Object.isFrozen(s) && Object.isFrozen(s.requirements) && s.requirements.every((r) => Object.isFrozen(r))).toBe(true);
  });
});
