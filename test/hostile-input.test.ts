// Input whose reading throws — a revoked Proxy, a getter that throws — at each entry point that
// reads an object of the caller's (options, owners, snapshots, address arrays): the package's
// InvalidArgumentError naming what could not be read, never the input's own TypeError, and what
// was called (or what the failed constructor was given) works on as before.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import {
  Allocator,
  allocatorLabels,
  DualStackAllocator,
  InMemoryServiceCIDRs,
  InvalidArgumentError,
  InvalidRecordError,
  MemoryStore,
  MetaAllocator,
  Range,
  ReferenceAllocator,
  coolDown,
  ownerKey,
  reconcile,
  seededRandom,
  serviceCIDRAllocatable,
  validateRecord,
  validateServiceCIDRSpec,
} from '../adapters/index.ts';
import {
  KubernetesServiceCIDRs,
  KubernetesStore,
  createServiceCIDR,
  deleteServiceCIDR,
  parseLabelSelector,
  readyCondition,
  toObject,
  toRecord,
  toServiceCIDR,
} from '../adapters/kubernetes/index.ts';
import { failure } from './helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';
import { closedPort } from './k8s/helpers.ts';

const OWNER = { group: '', resource: 'services', namespace: 'default', name: 'web' };

/** A revoked Proxy: every read of it (a property, Array.isArray, Object.keys, `in`) throws TypeError. */
function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

const GETTER_ERROR = new Error('getter failed');

/** `fields` with the enumerable own `key` a getter that throws GETTER_ERROR. */
function throwingAt<T extends object>(fields: T, key: PropertyKey): T {
  return Object.defineProperty(fields, key, {
    enumerable: true,
    get() {
      throw GETTER_ERROR;
    },
  });
}

interface Fixture {
  /** The entry point, given `input` in the place under test. */
  call(input: unknown): unknown;
  /** Throws unless everything the call was given or made on still works, unchanged. */
  works(): void | Promise<void>;
}

interface Row {
  name: string;
  fixture: () => Fixture;
  /** The input with a throwing getter at one field. */
  getter: () => unknown;
  /** What the message names for the revoked Proxy, and for the throwing getter. */
  revokedNamed: string;
  getterNamed: string;
}

/** A fresh store, and a check that an allocator over it allocates (and nothing else is in it). */
function storeFixture(call: (input: unknown, store: MemoryStore) => unknown): Fixture {
  const store = new MemoryStore();
  return {
    call: (input) => call(input, store),
    async works() {
      expect(store.records()).toEqual([]);
      using a = new Allocator('10.0.0.0/29', { store });
      await a.allocate('10.0.0.2', OWNER);
      expect(a.validate().indexed).toBe(1);
    },
  };
}

/** An Allocator whose call with an owner is under test: afterwards nothing is held and an allocate works. */
function ownerFixture(call: (a: Allocator, owner: unknown) => unknown): Fixture {
  const store = new MemoryStore();
  const a = new Allocator('10.0.0.0/29', { store });
  return {
    call: (input) => call(a, input),
    async works() {
      expect(a.used()).toBe(0);
      expect(a.validate().indexed).toBe(0);
      await a.allocate('10.0.0.2', OWNER);
      expect(store.records().map((r) => r.parentRef)).toEqual([OWNER]);
      a.destroy();
    },
  };
}

/** A Range holding 10.0.0.2: afterwards still that one. */
function rangeFixture(call: (r: Range, input: unknown) => unknown): Fixture {
  const r = new Range('10.0.0.0/29', { random: seededRandom(1) });
  r.allocate('10.0.0.2');
  return {
    call: (input) => call(r, input),
    works() {
      expect(r.validate().indexed).toBe(1);
      expect(r.has('10.0.0.2')).toBe(true);
      expect(r.releaseMany(['10.0.0.2'])).toBe(1);
      expect(r.loadMany(['10.0.0.3'])).toBe(1);
      r.destroy();
    },
  };
}

/** A DualStackAllocator with nothing held: afterwards still nothing, and a pair of addresses can be had. */
function dualStackFixture(call: (pair: DualStackAllocator, input: unknown) => unknown): Fixture {
  const pair = new DualStackAllocator(new Allocator('10.0.0.0/29'), new Allocator('fd00::/125'));
  return {
    call: (input) => call(pair, input),
    async works() {
      expect([pair.ipv4.used(), pair.ipv6.used()]).toEqual([0, 0]);
      await pair.allocate(['10.0.0.2', 'fd00::2'], OWNER);
      expect([pair.ipv4.used(), pair.ipv6.used()]).toEqual([1, 1]);
      pair.destroy();
    },
  };
}

/** An empty InMemoryServiceCIDRs: afterwards still empty, and a ServiceCIDR can be added. */
function serviceCIDRsFixture(call: (source: InMemoryServiceCIDRs, input: unknown) => unknown): Fixture {
  const source = new InMemoryServiceCIDRs();
  return {
    call: (input) => call(source, input),
    works() {
      expect(source.list()).toEqual([]);
      source.addServiceCIDR('services', ['10.0.0.0/29']);
      expect(source.list().map((sc) => sc.cidrs)).toEqual([['10.0.0.0/29']]);
    },
  };
}

/** A KubeConfig for a server nobody listens on: afterwards a KubernetesStore is made over it, without a request. */
function kubeConfigFixture(call: (input: unknown) => unknown): Fixture {
  return {
    call,
    works() {
      const kc = kubeConfigFor('http://127.0.0.1:1');
      const store = new KubernetesStore(kc, { start: false });
      expect(store.cache.list()).toEqual([]);
      store.close();
    },
  };
}

function metaFixture(): { source: InMemoryServiceCIDRs; meta: MetaAllocator; store: MemoryStore } {
  const source = new InMemoryServiceCIDRs();
  source.addServiceCIDR('services', ['10.0.0.0/29']);
  const store = new MemoryStore();
  return { source, store, meta: new MetaAllocator('IPv4', source, { store }) };
}

const ROWS: Row[] = [
  // ── options objects ─────────────────────────────────────────────────────────────────────────
  {
    name: 'Allocator options',
    fixture: () => storeFixture((input) => new Allocator('10.0.0.0/29', input as never)),
    getter: () => throwingAt({}, 'store'),
    revokedNamed: 'options',
    getterNamed: 'options.store',
  },
  {
    name: 'ReferenceAllocator options',
    fixture: () => storeFixture((input) => new ReferenceAllocator('10.0.0.0/29', input as never)),
    getter: () => throwingAt({}, 'random'),
    revokedNamed: 'options',
    getterNamed: 'options.random',
  },
  {
    name: 'Range options',
    fixture: () => rangeFixture((_r, input) => new Range('10.0.0.0/29', input as never)),
    getter: () => throwingAt({}, 'indexKind'),
    revokedNamed: 'options',
    getterNamed: 'options.indexKind',
  },
  {
    name: 'MetaAllocator options',
    fixture: () => {
      const { source, store, meta } = metaFixture();
      return {
        call: (input) => new MetaAllocator('IPv4', source, input as never),
        async works() {
          expect(await meta.allocateNext(OWNER)).toMatch(/^10\.0\.0\./);
          expect(store.records()).toHaveLength(1);
          meta.destroy();
        },
      };
    },
    getter: () => throwingAt({}, 'policy'),
    revokedNamed: 'options',
    getterNamed: 'options.policy',
  },
  {
    name: 'DualStackAllocator options',
    fixture: () => {
      const ipv4 = new Allocator('10.0.0.0/29');
      const ipv6 = new Allocator('fd00::/125');
      return {
        call: (input) => new DualStackAllocator(ipv4, ipv6, input as never),
        async works() {
          using pair = new DualStackAllocator(ipv4, ipv6);
          const ips = await pair.allocateNext(OWNER);
          expect([ipv4.used(), ipv6.used()]).toEqual([1, 1]);
          expect(ips.IPv4).toMatch(/^10\.0\.0\./);
        },
      };
    },
    getter: () => throwingAt({}, 'onRollbackError'),
    revokedNamed: 'options',
    getterNamed: 'options.onRollbackError',
  },
  {
    name: 'MemoryStore options',
    fixture: () => storeFixture((input) => new MemoryStore(input as never)),
    getter: () => throwingAt({}, 'syncOps'),
    revokedNamed: 'options',
    getterNamed: 'options.syncOps',
  },
  {
    name: 'coolDown options',
    fixture: () => storeFixture((input) => coolDown('random-free', input as never)),
    getter: () => throwingAt({}, 'ms'),
    revokedNamed: 'options',
    getterNamed: 'options.ms',
  },
  {
    name: 'reconcile options',
    fixture: () => ownerFixture((a, input) => reconcile(a, [], input as never)),
    getter: () => throwingAt({}, 'delete'),
    revokedNamed: 'options',
    getterNamed: 'options.delete',
  },
  {
    name: 'InMemoryServiceCIDRs options',
    fixture: () => storeFixture((input) => new InMemoryServiceCIDRs(input as never)),
    getter: () => throwingAt({}, 'onWatcherError'),
    revokedNamed: 'options',
    getterNamed: 'options.onWatcherError',
  },
  {
    name: 'addServiceCIDR options',
    fixture: () => {
      const source = new InMemoryServiceCIDRs();
      return {
        call: (input) => source.addServiceCIDR('services', ['10.0.0.0/29'], input as never),
        works() {
          expect(source.list()).toEqual([]);
          source.addServiceCIDR('services', ['10.0.0.0/29']);
          expect(source.list().map((sc) => sc.name)).toEqual(['services']);
        },
      };
    },
    getter: () => throwingAt({}, 'ready'),
    revokedNamed: 'options',
    getterNamed: 'options.ready',
  },
  // ── option values read at construction ──────────────────────────────────────────────────
  {
    name: 'the store option',
    fixture: () => storeFixture((input) => new Allocator('10.0.0.0/29', { store: input as never })),
    getter: () => throwingAt({ create() {}, delete() {}, get() {} }, 'cache'),
    revokedNamed: 'options.store',
    getterNamed: 'options.store',
  },
  {
    name: "the store option's sync",
    fixture: () => storeFixture((input) => new Allocator('10.0.0.0/29', { store: Object.assign(new MemoryStore(), { sync: input }) })),
    getter: () => throwingAt({}, 'createSync'),
    revokedNamed: 'options.store.sync.createSync',
    getterNamed: 'options.store.sync.createSync',
  },
  {
    name: 'the random option',
    fixture: () => storeFixture((input) => new Allocator('10.0.0.0/29', { random: input as never })),
    getter: () => throwingAt({}, 'nextU32'),
    revokedNamed: 'options.random.nextU32',
    getterNamed: 'options.random.nextU32',
  },
  {
    name: 'the strategy option',
    fixture: () => rangeFixture((_r, input) => new Range('10.0.0.0/29', { strategy: input as never })),
    getter: () => throwingAt({ name: 'mine' }, 'forRange'),
    revokedNamed: 'options.strategy.name',
    getterNamed: 'options.strategy.forRange',
  },
  {
    name: "coolDown's strategy",
    fixture: () => storeFixture((input) => coolDown(input as never, { ms: 1 })),
    getter: () => throwingAt({}, 'name'),
    revokedNamed: 'strategy.name',
    getterNamed: 'strategy.name',
  },
  {
    name: 'the metrics option',
    fixture: () => storeFixture((input) => new Allocator('10.0.0.0/29', { metrics: input as never })),
    getter: () => throwingAt({}, 'getSingleMetric'),
    revokedNamed: 'options.metrics.getSingleMetric',
    getterNamed: 'options.metrics.getSingleMetric',
  },
  // ── owners ──────────────────────────────────────────────────────────────────────────────────
  {
    name: 'Allocator.allocate owner',
    fixture: () => ownerFixture((a, owner) => a.allocate('10.0.0.2', owner as never)),
    getter: () => throwingAt({ resource: 'services' }, 'name'),
    revokedNamed: 'owner',
    getterNamed: 'owner.name',
  },
  {
    name: 'Allocator.allocateNext owner',
    fixture: () => ownerFixture((a, owner) => a.allocateNext(owner as never)),
    getter: () => throwingAt({ resource: 'services' }, 'namespace'),
    revokedNamed: 'owner',
    getterNamed: 'owner.namespace',
  },
  {
    name: 'Allocator.dryRun().allocate owner',
    fixture: () => ownerFixture((a, owner) => a.dryRun().allocate('10.0.0.2', owner as never)),
    getter: () => throwingAt({ resource: 'services' }, 'name'),
    revokedNamed: 'owner',
    getterNamed: 'owner.name',
  },
  {
    name: 'an owner field whose key is not a plain name',
    fixture: () => ownerFixture((a, owner) => a.allocate('10.0.0.2', owner as never)),
    getter: () => throwingAt({ resource: 'services' }, 'spec\u200bname'),
    revokedNamed: 'owner',
    getterNamed: 'owner["spec\\u200bname"]',
  },
  {
    name: 'ReferenceAllocator.allocateNext owner',
    fixture: () => {
      const store = new MemoryStore();
      const a = new ReferenceAllocator('10.0.0.0/29', { store });
      return {
        call: (owner) => a.allocateNext(owner as never),
        async works() {
          expect(a.used()).toBe(0);
          await a.allocate('10.0.0.2', OWNER);
          expect(store.records().map((r) => r.name)).toEqual(['10.0.0.2']);
          a.destroy();
        },
      };
    },
    getter: () => throwingAt({ resource: 'services' }, 'name'),
    revokedNamed: 'owner',
    getterNamed: 'owner.name',
  },
  {
    name: 'MetaAllocator.allocate owner',
    fixture: () => {
      const { store, meta } = metaFixture();
      return {
        call: (owner) => meta.allocate('10.0.0.2', owner as never),
        async works() {
          expect(store.records()).toEqual([]);
          await meta.allocate('10.0.0.2', OWNER);
          expect(store.records().map((r) => r.name)).toEqual(['10.0.0.2']);
          meta.destroy();
        },
      };
    },
    getter: () => throwingAt({ resource: 'services' }, 'name'),
    revokedNamed: 'owner',
    getterNamed: 'owner.name',
  },
  {
    name: 'DualStackAllocator.allocateNext owner',
    fixture: () => {
      const pair = new DualStackAllocator(new Allocator('10.0.0.0/29'), new Allocator('fd00::/125'));
      return {
        call: (owner) => pair.allocateNext(owner as never),
        async works() {
          expect([pair.ipv4.used(), pair.ipv6.used()]).toEqual([0, 0]);
          await pair.allocateNext(OWNER);
          expect([pair.ipv4.used(), pair.ipv6.used()]).toEqual([1, 1]);
          pair.destroy();
        },
      };
    },
    getter: () => throwingAt({ resource: 'services' }, 'name'),
    revokedNamed: 'owner',
    getterNamed: 'owner.name',
  },
  // ── snapshots and address arrays ────────────────────────────────────────────────────────────
  {
    name: 'Range.fromSnapshot snapshot',
    fixture: () => rangeFixture((_r, input) => Range.fromSnapshot(input as never)),
    getter: () => {
      const source = new Range('10.0.0.0/29');
      const snap = source.snapshot();
      source.destroy();
      return throwingAt({ ...snap }, 'data');
    },
    revokedNamed: 'snapshot.range',
    getterNamed: 'snapshot.data',
  },
  {
    name: 'Range.releaseMany addresses',
    fixture: () => rangeFixture((r, input) => r.releaseMany(input as never)),
    getter: () => throwingAt(['10.0.0.2', '10.0.0.3'], 1),
    revokedNamed: 'ips',
    getterNamed: 'ips[1]',
  },
  {
    name: 'Range.loadMany addresses',
    fixture: () => rangeFixture((r, input) => r.loadMany(input as never)),
    getter: () => throwingAt(['10.0.0.3', '10.0.0.4'], 1),
    revokedNamed: 'ips',
    getterNamed: 'ips[1]',
  },
  // ── DualStackAllocator's arguments ──────────────────────────────────────────────────────────
  {
    name: 'DualStackAllocator allocators',
    fixture: () => {
      const ipv6 = new Allocator('fd00::/125');
      return {
        call: (input) => new DualStackAllocator(input as never, ipv6),
        async works() {
          using pair = new DualStackAllocator(new Allocator('10.0.0.0/29'), ipv6);
          await pair.allocateNext(OWNER);
          expect(ipv6.used()).toBe(1);
        },
      };
    },
    getter: () => throwingAt({}, 'ipFamily'),
    revokedNamed: 'ipv4.ipFamily',
    getterNamed: 'ipv4.ipFamily',
  },
  {
    name: 'DualStackAllocator.allocate ips',
    fixture: () => dualStackFixture((pair, input) => pair.allocate(input as never, OWNER)),
    getter: () => throwingAt(['10.0.0.2', 'fd00::2'], 1),
    revokedNamed: 'ips',
    getterNamed: 'ips[1]',
  },
  {
    name: 'DualStackAllocator.release ips',
    fixture: () => dualStackFixture((pair, input) => pair.release(input as never)),
    getter: () => throwingAt({}, 'ips'),
    revokedNamed: 'ips',
    getterNamed: 'ips.ips',
  },
  {
    name: "DualStackAllocator.release ips' ips",
    fixture: () => dualStackFixture((pair, input) => pair.release({ ips: input } as never)),
    getter: () => throwingAt(['10.0.0.2', 'fd00::2'], 1),
    revokedNamed: 'ips.ips',
    getterNamed: 'ips.ips[1]',
  },
  {
    name: 'DualStackAllocator.allocateNext families',
    fixture: () => dualStackFixture((pair, input) => pair.allocateNext(OWNER, input as never)),
    getter: () => throwingAt(['IPv4', 'IPv6'], 0),
    revokedNamed: 'families',
    getterNamed: 'families[0]',
  },
  // ── ServiceCIDR specs ───────────────────────────────────────────────────────────────────────
  {
    name: 'addServiceCIDR cidrs',
    fixture: () => serviceCIDRsFixture((source, input) => source.addServiceCIDR('services', input as never)),
    getter: () => throwingAt(['10.0.0.0/29', 'fd00::/125'], 1),
    revokedNamed: 'spec.cidrs',
    getterNamed: 'spec.cidrs[1]',
  },
  {
    name: 'addServiceCIDR cidrs, unvalidated',
    fixture: () => serviceCIDRsFixture((source, input) => source.addServiceCIDR('services', input as never, { unvalidated: true })),
    getter: () => throwingAt(['10.0.0.0/29', 'fd00::/125', '10.1.0.0/29'], 2),
    revokedNamed: 'spec.cidrs',
    getterNamed: 'spec.cidrs[2]',
  },
  {
    name: 'validateServiceCIDRSpec cidrs',
    fixture: () => serviceCIDRsFixture((_source, input) => validateServiceCIDRSpec(input as never)),
    getter: () => throwingAt(['10.0.0.0/29'], 0),
    revokedNamed: 'spec.cidrs',
    getterNamed: 'spec.cidrs[0]',
  },
  // ── watchers ────────────────────────────────────────────────────────────────────────────────
  {
    name: 'InMemoryServiceCIDRs.subscribe watcher',
    fixture: () => {
      const source = new InMemoryServiceCIDRs();
      source.addServiceCIDR('services', ['10.0.0.0/29']);
      return {
        call: (input) => source.subscribe(input as never),
        works() {
          const seen: string[] = [];
          source.subscribe({ onAdd: (sc) => seen.push(sc.name), onDelete() {} });
          source.addServiceCIDR('more', ['10.1.0.0/29']);
          expect(seen).toEqual(['services', 'more']);
        },
      };
    },
    getter: () => throwingAt({ onAdd() {} }, 'onDelete'),
    revokedNamed: 'watcher.onAdd',
    getterNamed: 'watcher.onDelete',
  },
  {
    name: 'MemoryStore.cache.subscribe watcher',
    fixture: () => {
      const store = new MemoryStore();
      return {
        call: (input) => store.cache.subscribe(input as never),
        async works() {
          expect(store.watcherCount).toBe(0);
          const seen: string[] = [];
          store.cache.subscribe({ onAdd: (r) => seen.push(r.name), onDelete() {} });
          using a = new Allocator('10.0.0.0/29', { store });
          await a.allocate('10.0.0.2', OWNER);
          expect(seen).toEqual(['10.0.0.2']);
        },
      };
    },
    getter: () => throwingAt({ onAdd() {}, onDelete() {} }, 'onResync'),
    revokedNamed: 'watcher.onAdd',
    getterNamed: 'watcher.onResync',
  },
  {
    name: 'KubernetesStore.cache.subscribe watcher',
    fixture: () => {
      const store = new KubernetesStore(kubeConfigFor('http://127.0.0.1:1'), { start: false });
      return {
        call: (input) => store.cache.subscribe(input as never),
        works() {
          expect(store.cache.list()).toEqual([]);
          store.cache.subscribe({ onAdd() {}, onDelete() {} })();
          store.close();
        },
      };
    },
    getter: () => throwingAt({}, 'onAdd'),
    revokedNamed: 'watcher.onAdd',
    getterNamed: 'watcher.onAdd',
  },
  {
    name: 'KubernetesServiceCIDRs.subscribe watcher',
    fixture: () => {
      const source = new KubernetesServiceCIDRs(kubeConfigFor('http://127.0.0.1:1'), { start: false });
      return {
        call: (input) => source.subscribe(input as never),
        works() {
          expect(source.list()).toEqual([]);
          source.subscribe({ onAdd() {}, onDelete() {} })();
          source.close();
        },
      };
    },
    getter: () => throwingAt({ onAdd() {} }, 'onDelete'),
    revokedNamed: 'watcher.onAdd',
    getterNamed: 'watcher.onDelete',
  },
  // ── MetaAllocator's source ─────────────────────────────────────────────────────────────────
  {
    name: 'MetaAllocator source',
    fixture: () => {
      const { source, store } = metaFixture();
      return {
        call: (input) => new MetaAllocator('IPv4', input as never, { store }),
        async works() {
          expect(store.records()).toEqual([]);
          using meta = new MetaAllocator('IPv4', source, { store });
          expect(await meta.allocateNext(OWNER)).toMatch(/^10\.0\.0\./);
        },
      };
    },
    getter: () => throwingAt({}, 'subscribe'),
    revokedNamed: 'source.subscribe',
    getterNamed: 'source.subscribe',
  },
  // ── the Kubernetes adapters' KubeConfig ────────────────────────────────────────────────────
  {
    name: 'KubernetesStore kubeConfig',
    fixture: () => kubeConfigFixture((input) => new KubernetesStore(input as never, { start: false })),
    // shaped like a KubeConfig (makeApiClient) but throwing on the next read
    getter: () => throwingAt({ makeApiClient() {} }, 'getCurrentCluster'),
    revokedNamed: 'kubeConfig.makeApiClient',
    getterNamed: 'kubeConfig.getCurrentCluster',
  },
  {
    name: 'KubernetesServiceCIDRs kubeConfig',
    fixture: () => kubeConfigFixture((input) => new KubernetesServiceCIDRs(input as never, { start: false })),
    getter: () => throwingAt({}, 'makeApiClient'),
    revokedNamed: 'kubeConfig.makeApiClient',
    getterNamed: 'kubeConfig.makeApiClient',
  },
  {
    name: 'createServiceCIDR kubeConfig',
    fixture: () => kubeConfigFixture((input) => createServiceCIDR(input as never, 'services', ['10.0.0.0/29'])),
    getter: () => throwingAt({}, 'makeApiClient'),
    revokedNamed: 'kubeConfig.makeApiClient',
    getterNamed: 'kubeConfig.makeApiClient',
  },
  {
    name: 'deleteServiceCIDR kubeConfig',
    fixture: () => kubeConfigFixture((input) => deleteServiceCIDR(input as never, 'services')),
    getter: () => throwingAt({ makeApiClient() {} }, 'getCurrentCluster'),
    revokedNamed: 'kubeConfig.makeApiClient',
    getterNamed: 'kubeConfig.getCurrentCluster',
  },
  {
    name: 'waitForSync signal',
    fixture: () => {
      const store = new KubernetesStore(kubeConfigFor('http://127.0.0.1:1'), { start: false });
      return {
        call: (input) => store.waitForSync({ timeoutMs: 1, signal: input as never }),
        async works() {
          await expect(store.waitForSync({ timeoutMs: 1 })).rejects.toMatchObject({ code: 'ERR_SYNC_TIMEOUT' });
          store.close();
        },
      };
    },
    getter: () => throwingAt({}, 'addEventListener'),
    revokedNamed: 'options.signal.addEventListener',
    getterNamed: 'options.signal.addEventListener',
  },
  // ── reconcile's other arguments ─────────────────────────────────────────────────────────────
  {
    name: 'reconcile target',
    fixture: () => ownerFixture((_a, input) => reconcile(input as never, [])),
    getter: () => throwingAt({}, 'store'),
    revokedNamed: 'target',
    getterNamed: 'target',
  },
  {
    name: 'reconcile target.store',
    fixture: () => ownerFixture((_a, input) => reconcile({ store: input } as never, [])),
    getter: () => throwingAt({}, 'delete'),
    revokedNamed: 'target.store',
    getterNamed: 'target.store',
  },
  {
    name: 'reconcile knownOwners',
    fixture: () => ownerFixture((a, input) => reconcile(a, input as never)),
    getter: () => [throwingAt({ resource: 'services' }, 'name')],
    revokedNamed: 'knownOwners',
    getterNamed: 'knownOwners[0].name', // each item is read as allocate() reads its owner
  },
];

/** A record to store, with `field` replaced by `value`. */
function recordWith(field: 'labels' | 'parentRef', value: unknown): object {
  return { name: '10.0.0.9', labels: { team: 'a' }, parentRef: { ...OWNER }, [field]: value };
}

// A store answers a malformed record with InvalidRecordError, and one whose reading throws is
// malformed in the same way: the same class, naming the field as the other causes do.
const RECORDS: { name: string; record: () => unknown; named: string; quoted: string; fromGetter: boolean }[] = [
  { name: 'a revoked Proxy as the record', record: revoked, named: 'record', quoted: 'a value of type object', fromGetter: false },
  {
    name: "a record whose name's getter throws",
    record: () => throwingAt({ labels: {}, parentRef: null }, 'name'),
    named: 'metadata.name',
    quoted: 'a value of type object',
    fromGetter: true,
  },
  {
    name: 'a revoked Proxy as labels',
    record: () => recordWith('labels', revoked()),
    named: 'metadata.labels',
    quoted: '"10.0.0.9"',
    fromGetter: false,
  },
  {
    name: 'labels with a getter that throws',
    record: () => recordWith('labels', throwingAt({ team: 'a' }, 'tier')),
    named: 'metadata.labels',
    quoted: '"10.0.0.9"',
    fromGetter: true,
  },
  {
    name: 'a revoked Proxy as parentRef',
    record: () => recordWith('parentRef', revoked()),
    named: 'spec.parentRef',
    quoted: '"10.0.0.9"',
    fromGetter: false,
  },
  {
    name: 'a parentRef with a getter that throws',
    record: () => recordWith('parentRef', throwingAt({ resource: 'services' }, 'name')),
    named: 'spec.parentRef',
    quoted: '"10.0.0.9"',
    fromGetter: true,
  },
];

describe('a record whose reading throws is refused with InvalidRecordError naming the field, and nothing is stored', () => {
  const calls: { via: string; call: (store: MemoryStore, record: unknown) => unknown }[] = [
    { via: 'MemoryStore.createSync', call: (store, record) => store.createSync(record as never) },
    { via: 'MemoryStore.create', call: (store, record) => store.create(record as never) },
    { via: 'validateRecord', call: (_store, record) => validateRecord(record) },
  ];
  const cases = calls.flatMap((c) => RECORDS.map((r) => ({ ...c, ...r, name: `${c.via}: ${r.name}` })));
  it.each(cases)('$name', async ({ call, record, named, quoted, fromGetter }) => {
    const store = new MemoryStore();
    let thrown: unknown;
    try {
      await call(store, record());
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidRecordError);
    expect((thrown as Error).message).toContain(`IPAddress ${quoted} is invalid: ${named} could not be read: it threw `);
    if (fromGetter) expect((thrown as Error).cause).toBe(GETTER_ERROR);
    expect(store.records()).toEqual([]);
    using a = new Allocator('10.0.0.0/29', { store });
    await a.allocate('10.0.0.2', OWNER);
    expect(store.records().map((r) => r.name)).toEqual(['10.0.0.2']);
  });
});

describe('input whose reading throws is refused with InvalidArgumentError naming it, and changes nothing', () => {
  const cases = ROWS.flatMap((row) => [
    { name: `${row.name}: a revoked Proxy`, row, input: revoked, named: row.revokedNamed },
    { name: `${row.name}: a throwing getter`, row, input: row.getter, named: row.getterNamed },
  ]);
  it.each(cases)('$name', async ({ row, input, named }) => {
    const fixture = row.fixture();
    let thrown: unknown;
    try {
      await fixture.call(input());
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    // named as the caller writes it, from the parameter's name (readMember): nothing glued before it
    expect((thrown as Error).message).toMatch(
      new RegExp(`(^|: )${named.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} could not be read: it threw `),
    );
    if (input !== revoked) expect((thrown as Error).cause).toBe(GETTER_ERROR);
    await fixture.works();
  });

  it.each([
    ['KubernetesStore', (server: string, backoff: object) => new KubernetesStore(kubeConfigFor(server), { backoff })],
    ['KubernetesServiceCIDRs', (server: string, backoff: object) => new KubernetesServiceCIDRs(kubeConfigFor(server), { backoff })],
  ] as const)('%s reads its backoff option once: revoked after the constructor, it is not read at the failures', async (_name, make) => {
    const { proxy, revoke } = Proxy.revocable({ initialMs: 1, maxMs: 2 }, {});
    const informer = make(`http://127.0.0.1:${await closedPort()}`, proxy);
    revoke();
    try {
      // nobody listens: every list fails, and each failure waits out the backoff as checked
      await vi.waitFor(() => expect(informer.stats.errors).toBeGreaterThanOrEqual(3), { timeout: 5000 });
    } finally {
      informer.close();
    }
  });

  // Regression: a KubeConfig whose users (clusters, contexts, current context) could not be read
  // let the getter's own error out of the constructor, not the InvalidArgumentError the other
  // kubeconfig problems get
  it.each(['users', 'clusters', 'contexts', 'currentContext'])(
    "a KubeConfig whose %s getter throws: InvalidArgumentError naming it, the getter's error its cause, by each entry point",
    async (field) => {
      const entries: [string, (kc: KubeConfig) => unknown][] = [
        ['KubernetesStore', (kc) => new KubernetesStore(kc, { start: false })],
        ['KubernetesServiceCIDRs', (kc) => new KubernetesServiceCIDRs(kc, { start: false })],
        ['createServiceCIDR', (kc) => createServiceCIDR(kc, 'services', ['10.0.0.0/29'])],
        ['deleteServiceCIDR', (kc) => deleteServiceCIDR(kc, 'services')],
      ];
      for (const [owner, call] of entries) {
        const kc = throwingAt(kubeConfigFor('http://127.0.0.1:1'), field);
        let thrown: unknown;
        try {
          await call(kc);
        } catch (e) {
          thrown = e;
        }
        expect(thrown, owner).toBeInstanceOf(InvalidArgumentError);
        expect((thrown as Error).message, owner).toBe(`kubeConfig.${field} could not be read: it threw Error: getter failed`);
        expect((thrown as Error).cause, owner).toBe(GETTER_ERROR);
      }
    },
  );

  // Regression: deleteServiceCIDR(5) and setReady() said "servicecidrs.networking.k8s.io 5 (number)
  // not found", as if a lookup had missed, where addServiceCIDR says the name must be a string.
  it('an InMemoryServiceCIDRs name that is not a string is refused as one, quoted by its type, not read (a revoked Proxy)', () => {
    const source = new InMemoryServiceCIDRs();
    source.addServiceCIDR('services', ['10.0.0.0/29']);
    for (const call of [
      (name: never) => source.get(name),
      (name: never) => source.setReady(name, true),
      (name: never) => source.markDeleting(name),
      (name: never) => source.deleteServiceCIDR(name),
    ]) {
      expect(() => call(revoked() as never)).toThrow(
        new InvalidArgumentError('ServiceCIDR metadata.name: Invalid value: a value of type object: must be a string'),
      );
      expect(() => call(5 as never)).toThrow(
        new InvalidArgumentError('ServiceCIDR metadata.name: Invalid value: 5 (number): must be a string'),
      );
      expect(() => call(undefined as never)).toThrow(
        new InvalidArgumentError('ServiceCIDR metadata.name: Invalid value: undefined: must be a string'),
      );
    }
    expect(source.list().map((sc) => [sc.name, sc.ready])).toEqual([['services', undefined]]);
  });

  it('what a getter threw is shown with its unseen characters escaped, and a thrown non-Error by its type', () => {
    const odd = Object.defineProperty({}, 'store', {
      get() {
        throw new Error('bad\u001b[2Jthing');
      },
    });
    expect(() => new Allocator('10.0.0.0/29', odd)).toThrow('options.store could not be read: it threw Error: bad\\u001b[2Jthing');
    const proxy = revoked();
    const throwsProxy = Object.defineProperty({}, 'store', {
      get() {
        throw proxy;
      },
    });
    expect(() => new Allocator('10.0.0.0/29', throwsProxy)).toThrow('options.store could not be read: it threw a value of type object');
  });

  it('a getter that calls back into a destroyed allocator gets that answer (ErrDestroyed), not a wrapped one', async () => {
    const a = new Allocator('10.0.0.0/29');
    a.destroy();
    const owner = {
      resource: 'services',
      get name() {
        return a.used(); // throws ErrDestroyed
      },
    };
    const b = new Allocator('10.0.0.0/29');
    await expect(b.allocate('10.0.0.2', owner as never)).rejects.toMatchObject({ code: 'ERR_DESTROYED' });
    expect(b.used()).toBe(0);
    b.destroy();
  });
});

describe('an owner is read once per call, however many allocators the call goes through', () => {
  /** An owner whose name reads differently each time: `svc-0`, `svc-1`, … */
  function shifting(): { owner: typeof OWNER; reads: () => number } {
    let n = 0;
    const owner = Object.defineProperty({ ...OWNER }, 'name', { enumerable: true, get: () => `svc-${n++}` });
    return { owner, reads: () => n };
  }

  it('DualStackAllocator: both families get the owner as it was checked', async () => {
    const store = new MemoryStore();
    const v4 = new Allocator('10.0.0.0/24', { store, random: seededRandom(1) });
    const v6 = new Allocator('fd00::/120', { store, random: seededRandom(2) });
    const ds = new DualStackAllocator(v4, v6);
    const next = shifting();
    await ds.allocateNext(next.owner);
    const given = shifting();
    await ds.allocate(['10.0.0.9', 'fd00::9'], given.owner);
    expect([next.reads(), given.reads()]).toEqual([1, 1]);
    expect(store.records().map((r) => r.parentRef?.name)).toEqual(['svc-0', 'svc-0', 'svc-0', 'svc-0']);
    ds.destroy();
  });

  it('MetaAllocator: the range gets the owner as it was checked', async () => {
    const store = new MemoryStore();
    const source = new InMemoryServiceCIDRs();
    source.addServiceCIDR('a', ['10.0.0.0/24']);
    const meta = new MetaAllocator('IPv4', source, { store, random: seededRandom(3) });
    const next = shifting();
    await meta.allocateNext(next.owner);
    const given = shifting();
    await meta.allocate('10.0.0.9', given.owner);
    expect([next.reads(), given.reads()]).toEqual([1, 1]);
    expect(store.records().map((r) => r.parentRef?.name)).toEqual(['svc-0', 'svc-0']);
    meta.destroy();
  });
});

describe('a MetaAllocator whose source fails to subscribe leaves nothing behind', () => {
  it('the store subscriptions of the MetaAllocator and of the ranges its replay built are let go', () => {
    const store = new MemoryStore();
    let active = 0;
    const subscribe = store.cache.subscribe.bind(store.cache);
    vi.spyOn(store.cache, 'subscribe').mockImplementation((w) => {
      active++;
      const unsubscribe = subscribe(w);
      return () => {
        active--;
        unsubscribe();
      };
    });
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('a', ['10.0.0.0/24']);
    const failing = {
      hasSynced: () => cidrs.hasSynced(),
      list: () => cidrs.list(),
      subscribe(w: Parameters<InMemoryServiceCIDRs['subscribe']>[0]) {
        cidrs.subscribe(w)(); // the replay builds a range, then the source fails
        throw new Error('source went away');
      },
    };
    expect(() => new MetaAllocator('IPv4', failing, { store })).toThrow('source went away');
    expect(active).toBe(0);
  });
});

describe('KubernetesStore.create reads the record once', () => {
  it('a record whose name reads differently the second time is sent as it was checked', async () => {
    const store = new KubernetesStore(kubeConfigFor('http://127.0.0.1:1'), { start: false });
    let reads = 0;
    const record = Object.defineProperty({ labels: {}, parentRef: OWNER }, 'name', {
      enumerable: true,
      get: () => {
        if (reads++ > 0) throw new Error('read twice');
        return '10.0.0.5';
      },
    }) as unknown as Parameters<KubernetesStore['create']>[0];
    const error = await store.create(record).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(reads).toBe(1);
    expect(error?.message).not.toContain('read twice'); // the request was made (nobody listens there)
    expect(error?.message).toContain('10.0.0.5');
    await store.close();
  });
});

describe('the Kubernetes adapters refuse input that is not what they take, or whose reading throws, with a typed error', () => {
  const offline = () => new KubernetesStore(kubeConfigFor('http://127.0.0.1:1'), { start: false });

  it.each([
    ['a revoked Proxy', revoked, 'a value of type object'],
    ['a number', () => 42, '42 (number)'],
    ['null', () => null, 'null'],
  ])('KubernetesStore.delete(%s): InvalidArgumentError, no request made', async (_name, input, quoted) => {
    const store = offline();
    const error = await failure(() => store.delete(input() as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe(`KubernetesStore.delete: a record name must be a string, got ${quoted}`);
    expect(store.stats.errors).toBe(0);
    store.close();
  });

  it.each([
    ['a revoked Proxy', revoked, 'KubernetesStore.cache.list labels could not be read: it threw TypeError'],
    [
      'labels with a getter that throws',
      () => throwingAt({ team: 'a' }, 'tier'),
      'KubernetesStore.cache.list labels.tier could not be read: it threw Error: getter failed',
    ],
    ['a string', () => 'team=a', 'KubernetesStore.cache.list: labels must be a plain object of strings, got "team=a"'],
    ['a label value that is a number', () => ({ team: 7 }), 'KubernetesStore.cache.list: the label "team" must be a string, got 7'],
  ])('KubernetesStore.cache.list(%s): InvalidArgumentError, the cache unchanged', (_name, input, says) => {
    const store = offline();
    let thrown: unknown;
    try {
      store.cache.list(input() as never);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect((thrown as Error).message).toContain(says);
    expect(store.cache.list({ team: 'a' })).toEqual([]);
    store.close();
  });

  it('serviceCIDRAllocatable and ownerKey: a revoked Proxy, a throwing getter or a field of the wrong type is InvalidArgumentError', () => {
    const cases: [() => unknown, string][] = [
      [() => serviceCIDRAllocatable(revoked() as never), 'ServiceCIDR.deletionTimestamp could not be read: it threw TypeError'],
      [
        () => serviceCIDRAllocatable(throwingAt({ name: 'a', cidrs: [] }, 'ready') as never),
        'ServiceCIDR.ready could not be read: it threw Error: getter failed',
      ],
      [() => ownerKey(revoked() as never), 'owner.group could not be read: it threw TypeError'],
      [() => ownerKey(throwingAt({ ...OWNER }, 'name')), 'owner.name could not be read: it threw Error: getter failed'],
      [() => ownerKey({ ...OWNER, name: Symbol('web') } as never), 'owner.name must be a string, got Symbol(web)'],
    ];
    for (const [call, says] of cases) {
      expect(call).toThrow(InvalidArgumentError);
      expect(call).toThrow(says);
    }
    expect(serviceCIDRAllocatable({ name: 'a', cidrs: [], ready: true })).toBe(true);
    expect(ownerKey(OWNER)).toBe('/services/default/web');
  });

  it('toObject: a record whose reading throws is InvalidRecordError naming the field; an unknown version InvalidArgumentError', () => {
    expect(() => toObject(revoked() as never, 'v1')).toThrow(InvalidRecordError);
    expect(() => toObject(revoked() as never, 'v1')).toThrow('record could not be read: it threw TypeError');
    for (const [field, value, named] of [
      ['labels', revoked(), 'metadata.labels'],
      ['labels', throwingAt({ team: 'a' }, 'tier'), 'metadata.labels'],
      ['parentRef', revoked(), 'spec.parentRef'],
      ['parentRef', throwingAt({ resource: 'services' }, 'name'), 'spec.parentRef'],
    ] as const) {
      const call = () => toObject(recordWith(field, value) as never, 'v1');
      expect(call).toThrow(InvalidRecordError);
      expect(call).toThrow(`IPAddress "10.0.0.9" is invalid: ${named} could not be read: it threw `);
    }
    expect(() => toObject(recordWith('labels', {}) as never, 'v2' as never)).toThrow(
      new InvalidArgumentError('apiVersion must be "v1" or "v1beta1", got "v2"'),
    );
    expect(toObject(recordWith('labels', { team: 'a' }) as never, 'v1beta1')).toEqual({
      apiVersion: 'networking.k8s.io/v1beta1',
      kind: 'IPAddress',
      metadata: { name: '10.0.0.9', labels: { team: 'a' } },
      spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
    });
  });

  it.each([
    ['toRecord', (o: unknown) => toRecord(o as never), 'IPAddress', 'an IPAddress'],
    ['toServiceCIDR', (o: unknown) => toServiceCIDR(o as never), 'ServiceCIDR', 'a ServiceCIDR'],
    ['readyCondition', (o: unknown) => readyCondition(o as never), 'ServiceCIDR', 'a ServiceCIDR'],
  ])('%s: anything but an object, or one whose reading throws, is InvalidArgumentError', (what, convert, kind, aKind) => {
    for (const [input, says] of [
      [revoked(), `${what}: the ${kind} could not be read: it threw TypeError`],
      [
        { metadata: throwingAt({}, 'name'), status: throwingAt({}, 'conditions') },
        `${what}: the ${kind} could not be read: it threw Error: getter failed`,
      ],
      [null, `${what}: expected ${aKind} object, got null`],
      [[], `${what}: expected ${aKind} object, got an array`],
    ] as const) {
      const error = (() => {
        try {
          convert(input);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toContain(says);
    }
  });

  it('parseLabelSelector: a key that is the operator `in` or `notin` is refused, as the API server refuses it; a value may be one', () => {
    // Regression: "in=b", "notin", "!in" were taken, for every list to fail at the server.
    for (const [selector, key] of [
      ['in=b', 'in'],
      ['notin', 'notin'],
      ['in', 'in'],
      ['!in', 'in'],
      ['notin in (a)', 'notin'],
      ['a=b,in', 'in'],
    ]) {
      expect(() => parseLabelSelector(selector!)).toThrow(
        new InvalidArgumentError(
          `invalid label selector "${selector}": key "${key}": found '${key}', expected: identifier (the selector parser reads it as the operator)`,
        ),
      );
    }
    expect(parseLabelSelector('a=in,b in (notin),example.com/in').requirements).toEqual([
      { op: 'eq', key: 'a', value: 'in' },
      { op: 'in', key: 'b', values: ['notin'] },
      { op: 'exists', key: 'example.com/in' },
    ]);
  });

  it('parseLabelSelector: anything but a string is InvalidArgumentError, not read', () => {
    for (const [input, quoted] of [
      [revoked(), 'a value of type object'],
      [42, '42 (number)'],
    ] as const) {
      expect(() => parseLabelSelector(input as never)).toThrow(InvalidArgumentError);
      expect(() => parseLabelSelector(input as never)).toThrow(`a label selector must be a string, got ${quoted}`);
    }
    expect(parseLabelSelector('a=b').requirements).toEqual([{ op: 'eq', key: 'a', value: 'b' }]);
  });

  it('parseLabelSelector: spaces are the ASCII ones apimachinery skips; a Unicode space is refused, not read as nothing', () => {
    // Regression: trim() and \\s took them, so x=\\u00a0 selected records whose x is empty
    expect(parseLabelSelector(' x = v ,\ty in ( a , b )\n').requirements).toEqual([
      { op: 'eq', key: 'x', value: 'v' },
      { op: 'in', key: 'y', values: ['a', 'b'] },
    ]);
    for (const text of ['x=\u00a0', 'x=\ufeff', 'x!=\u3000', 'x in (a,\u2028)', '\u00a0x=v']) {
      expect(() => parseLabelSelector(text)).toThrow(InvalidArgumentError);
    }
  });

  it('parseLabelSelector: what it refuses is quoted with the characters a reader cannot see escaped', () => {
    // Regression: quoted by JSON.stringify, a right-to-left override reached the message raw
    for (const text of ['x=v\u202e', 'x\u202e=v', 'x in (a,b\u202e)', '\u202e']) {
      let message = '';
      try {
        parseLabelSelector(text);
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        message = (e as Error).message;
      }
      expect([text, message]).toEqual([text, expect.stringContaining('\\u202e')]);
      expect(message).not.toContain('\u202e');
    }
  });

  const entryPoints: [string, (kc: unknown) => unknown][] = [
    ['KubernetesStore', (kc) => new KubernetesStore(kc as never, { start: false })],
    ['KubernetesServiceCIDRs', (kc) => new KubernetesServiceCIDRs(kc as never, { start: false })],
    ['createServiceCIDR', (kc) => createServiceCIDR(kc as never, 'services', ['10.0.0.0/29'])],
    ['deleteServiceCIDR', (kc) => deleteServiceCIDR(kc as never, 'services')],
  ];

  it.each(entryPoints)(
    '%s: an object shaped like a KubeConfig without a method every entry point calls is refused, naming it',
    async (owner, call) => {
      const kc = kubeConfigFor('http://127.0.0.1:1');
      const methods = {
        makeApiClient: kc.makeApiClient.bind(kc),
        getCurrentCluster: kc.getCurrentCluster.bind(kc),
        applySecurityAuthentication: kc.applySecurityAuthentication.bind(kc),
      };
      for (const missing of Object.keys(methods)) {
        const shaped = { ...methods, [missing]: undefined };
        const error = await failure(() => call(shaped));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toBe(
          `${owner}: kubeConfig must be a KubeConfig from @kubernetes/client-node or undefined, got a value of type object (it has no method ${missing})`,
        );
      }
    },
  );

  it.each(entryPoints)('%s: a KubeConfig whose getCurrentCluster throws when called passes its own error through', async (_owner, call) => {
    const own = new Error('no cluster for you');
    class Failing extends KubeConfig {
      override getCurrentCluster(): never {
        throw own;
      }
    }
    const kc = new Failing();
    kc.loadFromOptions({
      clusters: [{ name: 'double', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'tester', token: 't' }],
      contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
      currentContext: 'double',
    });
    expect(await failure(() => call(kc))).toBe(own);
  });
});
describe('KubernetesStore.create sends the labels and parentRef it checked, read once', () => {
  let d: ApiServerDouble;
  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    await d.close();
  });

  it('labels and a parentRef whose getters answer differently on a second read are sent as first read', async () => {
    const store = new KubernetesStore(kubeConfigFor(d.url), { start: false });
    let labelReads = 0;
    let nameReads = 0;
    const labels = Object.defineProperty({}, 'team', { enumerable: true, get: () => (labelReads++ === 0 ? 'a' : 'b') });
    const parentRef = Object.defineProperty({ resource: 'services', namespace: 'default' }, 'name', {
      enumerable: true,
      get: () => (nameReads++ === 0 ? 'web' : 'other'),
    });
    const created = await store.create({ name: '10.0.0.5', labels, parentRef } as never);
    expect([labelReads, nameReads]).toEqual([1, 1]);
    expect(d.requestsOf('create').map((r) => r.body)).toEqual([
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'IPAddress',
        metadata: { name: '10.0.0.5', labels: { team: 'a' } },
        spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
      },
    ]);
    expect(created).toMatchObject({ labels: { team: 'a' }, parentRef: { name: 'web' } });
    store.close();
  });
});

describe('caller input is read once, and only its reading is refused as unreadable', () => {
  /** `values` behind a Proxy counting the reads of each index; each index answers its values in turn, then the last. */
  function counted(values: readonly (readonly string[])[]): { list: string[]; reads: number[] } {
    const reads = values.map(() => 0);
    const list = new Proxy(
      values.map((v) => v[0]!),
      {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) {
            const i = Number(key);
            const answers = values[i]!;
            return answers[Math.min(reads[i]++, answers.length - 1)];
          }
          return Reflect.get(target, key, receiver);
        },
      },
    );
    return { list, reads };
  }

  it('DualStackAllocator.allocateNext: the families allocated are the families checked and reported', async () => {
    using pair = new DualStackAllocator(new Allocator('10.0.0.0/29'), new Allocator('fd00::/125'));
    // read again, the families would come back swapped
    const { list, reads } = counted([
      ['IPv4', 'IPv6'],
      ['IPv6', 'IPv4'],
    ]);
    const ips = await pair.allocateNext(OWNER, list as never);
    expect(reads).toEqual([1, 1]);
    expect(ips.families).toEqual(['IPv4', 'IPv6']);
    expect(ips.ips).toEqual([ips.IPv4, ips.IPv6]);
    expect(ips.IPv4).toMatch(/^10\.0\.0\./);
    expect([pair.ipv4.used(), pair.ipv6.used()]).toEqual([1, 1]);
  });

  it('an owner that is an array is refused by its shape, without reading its prototype (a trap that throws there is not the answer)', async () => {
    using a = new Allocator('10.0.0.0/29');
    const array = new Proxy([], {
      getPrototypeOf() {
        throw GETTER_ERROR;
      },
    });
    await expect(a.allocate('10.0.0.2', array as never)).rejects.toThrow(
      new InvalidArgumentError(
        "owner: Invalid value: an array of 0 values: must be an object {group?, resource, namespace?, name}, e.g. { group: '', resource: 'services', namespace: 'default', name: 'web' }",
      ),
    );
    expect(a.used()).toBe(0);
  });

  it('reconcile reads all of knownOwners before checking them: an iterator that throws is the answer, whatever it yielded first', async () => {
    using a = new Allocator('10.0.0.0/29');
    function* owners(): Generator<unknown> {
      yield { resource: 'services' }; // no name: refused, once read
      throw GETTER_ERROR;
    }
    const thrown = await reconcile(a, owners() as never).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect(thrown?.message).toBe('knownOwners could not be read: it threw Error: getter failed');
    expect(thrown?.cause).toBe(GETTER_ERROR);
  });
});

describe('Allocator takes two arguments: a third is ignored, as JavaScript ignores an extra argument', () => {
  // Not even an object shaped as the internal feed of a MetaAllocator's ranges: the allocator
  // still hears the store's cache itself.
  it.each<[string, unknown]>([
    ['an empty object', {}],
    ['a number', 5],
    ['an object with subscribe()', { subscribe: () => () => {} }],
  ])('%s', async (_, third) => {
    const store = new MemoryStore();
    await store.create({ name: '10.0.0.5', labels: allocatorLabels('IPv4'), parentRef: null });
    const made = [Allocator.create('10.0.0.0/24', { store }, third as never), new Allocator('10.0.0.0/24', { store }, third as never)];
    await store.create({ name: '10.0.0.6', labels: allocatorLabels('IPv4'), parentRef: null });
    for (const a of made) {
      expect(a.used()).toBe(2);
      a.destroy();
    }
  });
});
