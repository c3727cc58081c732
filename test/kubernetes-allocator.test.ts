// Allocator and ReferenceAllocator on KubernetesStore, through client-node and real HTTP, against
// the API-server double (test/k8s/apiserver-double.ts):
// * the shared upstream cases (test/k8s/allocator-cases.ts: A1, A3–A6, A14, A15, record shape),
//   first as upstream's test entry points run them (nil parentRef, the double's 422 check off),
//   then the double-only cases: A17, A18 (injected 500), A19 (an object the cache has not seen),
//   the 422 for a nil parentRef and a real ParentRef with the check on;
// * faults while allocating: the informer restarting (dropped watch, compaction → 410 re-list)
//   with allocateNext calls in flight from two allocators, 5xx on create and on delete.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { seededRandom } from '../adapters/random.ts';
import { Allocator } from '../adapters/allocator.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { ErrFull } from '../adapters/errors.ts';
import { allocatorLabels, type ParentRef } from '../adapters/store.ts';
import type { IPAllocator } from '../adapters/types.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';
import { until } from './k8s/helpers.ts';
import { KINDS, at, defineSharedCases, inRange, makeAllocator, sub, type Kind, type Target } from './k8s/allocator-cases.ts';
import { rejection } from './helpers.ts';

const SEED = 24301;
const V4 = '192.168.1.0/24';
const V6 = '2001:db8:1::/120';

function svc(name: string): ParentRef {
  return { group: '', resource: 'services', namespace: 'default', name };
}

let d: ApiServerDouble;
const stores: KubernetesStore[] = [];
const allocators: IPAllocator[] = [];

beforeEach(async () => {
  d = await ApiServerDouble.start({ requireParentRef: false });
});
afterEach(async () => {
  for (const a of allocators.splice(0)) a.destroy();
  for (const s of stores.splice(0)) s.close();
  await d.close();
});

async function openStore(): Promise<KubernetesStore> {
  const s = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 2, maxMs: 20 } });
  stores.push(s);
  await s.waitForSync();
  return s;
}

async function open(kind: Kind, cidr: string, seed = SEED): Promise<{ a: IPAllocator; store: KubernetesStore }> {
  const store = await openStore();
  const a = makeAllocator(kind, cidr, { store, random: seededRandom(seed) });
  allocators.push(a);
  return { a, store };
}

/** Names of the objects the double holds. */
function serverNames(): string[] {
  return d.objects().map((o) => o.metadata.name);
}

const doubleTarget = (owner: ParentRef | undefined): Target => ({
  v4: V4,
  v6: V6,
  a14: 'fc::/112',
  outsideV4: ['192.168.2.10', '10.0.0.1'],
  owner,
  open,
  async insert(store, name, labels) {
    const out = d.insert({ metadata: { name, labels }, spec: { parentRef: { resource: 'services', namespace: 'other', name: 'x' } } });
    expect(out.metadata).toHaveProperty('uid');
    await until(() => store.cache.get(name) !== undefined, `cache has ${name}`);
  },
});

describe('upstream cases through the double, nil parentRef (the 422 check off, as upstream test entry points need)', () => {
  defineSharedCases(() => doubleTarget(undefined));
});

describe('upstream cases through the double with real ParentRefs (the 422 check on)', () => {
  beforeEach(() => {
    d.requireParentRef = true;
  });
  defineSharedCases(() => doubleTarget(svc('web')));
});

describe.each(KINDS)('%s: double-only cases', (kind) => {
  it('sends the exact upstream object for a real ParentRef, accepted with the check on', async () => {
    d.requireParentRef = true;
    const { a, store } = await open(kind, V4);
    const ip = await a.allocateNext(svc('web'));
    const body = d.requestsOf('create')[0]!.body;
    expect(body).toEqual({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IPAddress',
      metadata: { name: ip, labels: allocatorLabels('IPv4') },
      spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
    });
    expect(d.objects()[0]!.spec).toEqual({ parentRef: { resource: 'services', namespace: 'default', name: 'web' } });
    expect((await store.get(ip))?.parentRef).toEqual({ resource: 'services', namespace: 'default', name: 'web' });
  });

  it('a nil parentRef with the check on: the 422 surfaces from allocateNext after one create, nothing is left', async () => {
    d.requireParentRef = true;
    const { a } = await open(kind, V4);
    const e = (await rejection(a.allocateNext())) as KubernetesApiError;
    expect(e).toBeInstanceOf(KubernetesApiError);
    expect([e.code, e.reason]).toEqual([422, 'Invalid']);
    expect(e.message).toContain('spec.parentRef: Required value');
    expect(d.requestsOf('create').length).toBe(1);
    const e2 = (await rejection(a.allocate(at(V4, 3)))) as KubernetesApiError;
    expect(e2.code).toBe(422);
    expect(serverNames()).toEqual([]);
    expect(a.used()).toBe(0);
  });

  it('A17 used() ignores objects whose names are not addresses', async () => {
    const { a, store } = await open(kind, V4);
    for (const name of [at(V4, 10), 'invalid-ip-address']) d.insert({ metadata: { name, labels: allocatorLabels('IPv4') }, spec: {} });
    await until(() => store.cache.size === 2, 'cache has both');
    expect(a.used()).toBe(1);
  });

  it('A18 an injected 500 on create surfaces from allocateNext after one address’s create (read back, sent once more); nothing stays reserved', async () => {
    const { a, store } = await open(kind, sub(V4, 0, 28)); // 14 addresses, no static band
    d.failNext('create', 1000, 500, 'server error');
    const e = (await rejection(a.allocateNext())) as KubernetesApiError;
    expect(e).toBeInstanceOf(KubernetesApiError);
    expect([e.code, e.reason]).toEqual([500, 'InternalError']);
    expect(e.message).toContain('server error');
    const creates = d.requestsOf('create').map((r) => (r.body as { metadata: { name: string } }).metadata.name);
    expect([creates.length, new Set(creates).size]).toEqual([2, 1]);
    expect(serverNames()).toEqual([]);
    expect(store.cache.size).toBe(0);
    d.failNext('create', 0);
    const got = new Set<string>();
    while (a.free() > 0n) got.add(await a.allocateNext());
    expect(got.size).toBe(14);
    expect(serverNames().length).toBe(14);
  });

  it('A19 an object the cache has not seen yet: one collision (409), then the next address', async () => {
    // The first candidate is a function of the seed: learn it from the same allocator on a MemoryStore.
    const probe = makeAllocator(kind, V4, { random: seededRandom(SEED) });
    const predicted = await probe.allocateNext();
    probe.destroy();

    const { a, store } = await open(kind, V4);
    await until(() => d.openWatches() === 1, 'the watch is open'); // a watch opened later would replay the insert at once
    d.holdWatches(); // the watch queues the next events: the cache will not see the insert
    d.insert({ metadata: { name: predicted, labels: allocatorLabels('IPv4') }, spec: {} });
    expect(store.cache.get(predicted)).toBeUndefined();

    const ip = await a.allocateNext();
    expect(ip).not.toBe(predicted);
    expect(inRange(V4, ip)).toBe(true);
    const creates = d.requestsOf('create');
    expect(creates.length).toBe(2);
    expect((creates[0]!.body as { metadata: { name: string } }).metadata.name).toBe(predicted);
    expect(a.used()).toBe(1);

    d.releaseWatches();
    await until(() => store.cache.get(predicted) !== undefined, 'the cache catches up');
    expect(a.used()).toBe(2);
    expect(new Set(serverNames())).toEqual(new Set([predicted, ip]));
  });

  // Kubernetes puts no finalizer on IPAddresses, but another controller may. Upstream's lister
  // keeps an object marked for deletion, so its address stays taken until the object is gone.
  it('an address whose IPAddress a finalizer holds stays taken after release until the object is gone', async () => {
    const cidr = '192.168.1.0/30'; // two addresses: .1 and .2
    const { a, store } = await open(kind, cidr);
    const first = await a.allocateNext(svc('a'));
    const second = await a.allocateNext(svc('b'));
    d.modify(first, (o) => (o.metadata.finalizers = ['example.com/hold']));
    await until(() => store.cache.get(first)?.resourceVersion === d.resourceVersion, 'the finalizer in the cache');
    await a.release(first);
    expect(serverNames().sort()).toEqual([first, second].sort());
    expect(a.used()).toBe(2);
    const creates = d.requestsOf('create').length;
    expect(await rejection(a.allocateNext(svc('c')))).toBeInstanceOf(ErrFull);
    expect(d.requestsOf('create').length).toBe(creates); // nothing tried: the range is full
    d.modify(first, (o) => (o.metadata.finalizers = []));
    await until(() => a.used() === 1, 'the DELETED event');
    expect(await a.allocateNext(svc('c'))).toBe(first);
  });
});

// ---------------------------------------------------------------------------------------------
// Faults while allocating

describe.each(KINDS)('%s: faults while allocating', (kind) => {
  beforeEach(() => {
    d.requireParentRef = true;
  });

  /**
   * Two allocators (separate stores, like two API servers) each run `perAllocator` allocateNext
   * calls at once; `fault` is applied when `faultAfter` creates have reached the double.
   */
  async function raceWithFault(fault: () => void, perAllocator: number, faultAfter: number) {
    const sides = [await open(kind, V4, 1), await open(kind, V4, 2)];
    // past the first second of their watches: one ended sooner with no event is a failure that
    // re-lists (client-go's "very short watch"), which would hide the fault under test
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    d.setLatency(2, 'create'); // keeps creates in flight while the watch is cut
    let faulted = false;
    const check = setInterval(() => {
      if (!faulted && d.requestsOf('create').length >= faultAfter) {
        faulted = true;
        fault();
      }
    }, 1);
    try {
      const results = await Promise.all(
        sides.map(({ a }, i) => Promise.all(Array.from({ length: perAllocator }, () => a.allocateNext(svc(`svc-${i}`))))),
      );
      expect(faulted).toBe(true);
      return { sides, results };
    } finally {
      clearInterval(check);
      d.setLatency(0, 'create');
    }
  }

  /** No address twice; the double holds exactly what was returned, owned by who got it; every index converges. */
  async function expectConsistent(sides: { a: IPAllocator; store: KubernetesStore }[], results: string[][]) {
    const all = results.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(new Set(serverNames())).toEqual(new Set(all));
    const owners = new Map(d.objects().map((o) => [o.metadata.name, (o.spec!.parentRef as ParentRef).name]));
    results.forEach((ips, i) => ips.forEach((ip) => expect(owners.get(ip)).toBe(`svc-${i}`)));
    for (const { a, store } of sides) {
      await until(() => store.state === 'synced' && a.used() === all.length, 'used() == objects');
      expect(a.used()).toBe(d.objects().length);
      expect(a.free()).toBe(BigInt(254 - all.length));
      // the product re-derives its index and counts (the oracle keeps nothing to check)
      if (a instanceof Allocator) a.validate();
      else expect(a).toBeInstanceOf(ReferenceAllocator);
    }
    // And they keep allocating correctly afterwards: fill the rest of the range between them.
    const more: string[] = [];
    for (let i = 0; more.length + all.length < 254; i++) more.push(await sides[i % 2]!.a.allocateNext(svc(`svc-${i % 2}`)));
    expect(new Set([...all, ...more]).size).toBe(254);
    expect(serverNames().length).toBe(254);
    expect(await rejection(sides[0]!.a.allocateNext(svc('svc-0')))).toBeInstanceOf(ErrFull);
  }

  it('the watch drops with allocateNext calls in flight: no duplicates, the index converges', async () => {
    const { sides, results } = await raceWithFault(() => d.dropWatches(), 40, 20);
    // Each store watched again (after a re-list under Node; a clean resume under Deno, where a
    // dropped socket looks like a clean end).
    await until(() => d.requestsOf('watch').length >= 4, 'both stores watch again');
    await expectConsistent(sides, results);
  });

  it('compaction with the watch cut (410 Expired → re-list) while allocateNext calls are in flight', async () => {
    const { sides, results } = await raceWithFault(
      () => {
        d.holdWatches();
        // Two events the watches will never deliver (net: no object), so resuming is from a
        // resourceVersion below the compaction floor → ERROR 410 Expired → re-list.
        d.insert({ metadata: { name: '192.0.2.1', labels: {} }, spec: { parentRef: svc('other') } });
        d.remove('192.0.2.1');
        d.compact();
        d.closeWatches({ discardQueued: true });
      },
      40,
      20,
    );
    d.releaseWatches();
    await until(() => sides.every(({ store }) => store.stats.expired >= 1 && store.stats.lists >= 2), 'both re-listed');
    await expectConsistent(sides, results);
  });

  it('drop and compaction together, twice, under a lagging watch', async () => {
    d.setWatchLag(3);
    let n = 0;
    const { sides, results } = await raceWithFault(
      () => {
        n++;
        d.compact();
        d.dropWatches();
      },
      60,
      15,
    );
    // a second restart while the first re-list may still be running
    n++;
    d.compact();
    d.dropWatches();
    d.setWatchLag(0);
    expect(n).toBe(2);
    await expectConsistent(sides, results);
  });

  it('a 503 on one create among concurrent allocateNext calls: that create is read back and sent once more, all succeed, nothing leaks', async () => {
    const { a, store } = await open(kind, sub(V4, 0, 28)); // 14 addresses
    d.setLatency(2, 'create');
    d.failNext('create', 1, 503, 'etcd leader changed');
    const settled = await Promise.allSettled(Array.from({ length: 6 }, () => a.allocateNext(svc('web'))));
    d.setLatency(0, 'create');
    const ok = settled.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<string>).value);
    expect(new Set(ok).size).toBe(6);
    expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([7, 1]);
    expect(new Set(serverNames())).toEqual(new Set(ok));
    expect(a.used()).toBe(6);
    // the failed address was not left reserved: the range fills to 14
    while (a.free() > 0n) ok.push(await a.allocateNext(svc('web')));
    expect(new Set(ok).size).toBe(14);
    expect(store.cache.size).toBe(14);
  });

  it('a 500 on delete: read back, the object still there is deleted again on its uid, and the address is free', async () => {
    const { a, store } = await open(kind, V4);
    const ip = await a.allocateNext(svc('web'));
    const uid = store.cache.get(ip)!.uid;
    d.failNext('delete', 1, 500);
    await a.release(ip);
    expect(d.requestsOf('delete').map((r) => (r.body as { preconditions?: unknown } | undefined)?.preconditions ?? null)).toEqual([
      null,
      { uid },
    ]);
    expect(serverNames()).toEqual([]);
    expect(a.used()).toBe(0);
  });

  it('a 501 on delete: release ignores it like upstream, and the object stays (a leak left to the repair controller)', async () => {
    const { a, store } = await open(kind, V4);
    const ip = await a.allocateNext(svc('web'));
    d.failNext('delete', 1, 501); // Not Implemented: the server did nothing
    await a.release(ip); // resolves: upstream Release logs and returns nil
    expect([d.requestsOf('delete').length, d.requestsOf('get').length]).toEqual([1, 0]);
    expect(serverNames()).toEqual([ip]);
    expect(await a.has(ip)).toBe(true);
    expect(a.used()).toBe(1);
    expect(store.cache.get(ip)).toBeDefined();
    await a.release(ip); // a retry goes through
    expect(serverNames()).toEqual([]);
    expect(a.used()).toBe(0);
  });
});
