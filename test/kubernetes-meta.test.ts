// MetaAllocator over Kubernetes: ranges from KubernetesServiceCIDRs (list + watch of ServiceCIDRs),
// addresses in KubernetesStore (IPAddress objects), both through client-node and real HTTP against
// the API-server double. Upstream's cidrallocator_test.go cases that mean something over an API
// server (all but the pure helper tests, which run in
// meta-allocator.test.ts), then ServiceCIDRs appearing, being deleted (with and
// without a finalizer) and the ServiceCIDR watch being dropped or compacted while allocating.
// Conditions are awaited by polling the allocator's state with a bound, never by fixed sleeps.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MetaAllocator, RANGE_POLICIES, type RangePolicy } from '../adapters/meta-allocator.ts';
import {
  KubernetesApiError,
  KubernetesServiceCIDRs,
  KubernetesStore,
  createServiceCIDR,
  deleteServiceCIDR,
  toServiceCIDR,
  type KubernetesServiceCIDRsOptions,
  type ServiceCIDRRecord,
} from '../adapters/kubernetes/index.ts';
import { ErrAllocated, ErrDestroyed, ErrFull, ErrMismatchedNetwork, InvalidArgumentError } from '../adapters/errors.ts';
import { Registry } from 'prom-client';
import { seededRandom } from '../adapters/random.ts';
import { Prefix } from '../adapters/geometry.ts';
import type { ServiceCIDR, ServiceCIDRWatcher } from '../adapters/service-cidrs.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { drain, hostOf, rejection } from './helpers.ts';

const SC = 'servicecidrs';
const FINALIZER = 'networking.k8s.io/service-cidr-finalizer';
const SVC = { group: '', resource: 'services', namespace: 'default', name: 'web' };

/** Polls `cond` until it holds; fails after `limitMs` (a bound, not an assertion about speed). */
async function eventually(cond: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Records every delivery as `+name[:ready][:deleting]` / `-name`. */
class Log implements ServiceCIDRWatcher {
  readonly lines: string[] = [];
  readonly view = new Map<string, ServiceCIDR>();
  onAdd(sc: ServiceCIDR): void {
    this.view.set(sc.name, sc);
    this.lines.push(`+${sc.name}:${String(sc.ready)}${sc.deletionTimestamp ? ':deleting' : ''}`);
  }
  onDelete(sc: ServiceCIDR): void {
    this.view.delete(sc.name);
    this.lines.push(`-${sc.name}`);
  }
}

describe('KubernetesServiceCIDRs with a MetaAllocator against the API-server double', () => {
  let d: ApiServerDouble;
  let kc: KubeConfig;
  const cleanups: (() => void)[] = [];

  beforeEach(async () => {
    // The upstream entry points allocate without an owner (nil parentRef), as in the store tests.
    d = await ApiServerDouble.start({ requireParentRef: false });
    kc = kubeConfigFor(d.url);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) c();
    await d.close();
  });

  function source(options: KubernetesServiceCIDRsOptions = {}): KubernetesServiceCIDRs {
    const s = new KubernetesServiceCIDRs(kc, { backoff: { initialMs: 2, maxMs: 20 }, ...options });
    cleanups.push(() => s.close());
    return s;
  }

  async function open(policy: RangePolicy = 'upstream', seed = 1) {
    const store = new KubernetesStore(kc, { backoff: { initialMs: 2, maxMs: 20 } });
    cleanups.push(() => store.close());
    const cidrs = source();
    await Promise.all([store.waitForSync(), cidrs.waitForSync()]);
    const meta = new MetaAllocator('IPv4', cidrs, { store, policy, random: seededRandom(seed) });
    cleanups.push(() => meta.destroy());
    return { store, cidrs, meta };
  }

  /** Sets (or, with undefined, removes) the Ready condition, as kube-controller-manager would. */
  function setReady(name: string, status: 'True' | 'False' | 'Unknown' | undefined): void {
    const ok = d.modify(
      name,
      (o) => {
        o.status =
          status === undefined
            ? {}
            : { conditions: [{ type: 'Ready', status, reason: '', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' }] };
      },
      SC,
    );
    expect(ok).toBe(true);
  }

  /**
   * upstream newServiceCIDR (Ready=True), then waits until the source holds it with Ready True
   * (not just the creation: no Ready condition already counts as ready) and the allocator has
   * every CIDR of it as a ready range.
   */
  async function addReady(env: { meta: MetaAllocator; cidrs: KubernetesServiceCIDRs }, name: string, cidrs: string[]): Promise<void> {
    await createServiceCIDR(kc, name, cidrs);
    setReady(name, 'True');
    const want = cidrs.map((c) => Prefix.parse(c).cidr);
    await eventually(
      () =>
        env.cidrs.get(name)?.ready === true &&
        want.every((c) => env.meta.ranges().some((r) => r.cidr === c && r.ready && r.serviceCIDRs.includes(name))),
      `${name} ready in the allocator`,
    );
  }

  const cidrsOf = (meta: MetaAllocator) =>
    meta
      .ranges()
      .map((r) => r.cidr)
      .sort();

  describe('objects and helpers', () => {
    // Regression: each call sent its requests through dispatchers of its own that nothing closed:
    // their connections stayed open until undici's idle timeout, one per call.
    it('createServiceCIDR and deleteServiceCIDR close the connections they opened, whatever the outcome', async () => {
      const made: { destroyed: boolean }[] = [];
      const clientNode = (kc as unknown as { createDispatcher: (...a: unknown[]) => unknown }).createDispatcher;
      Object.assign(kc, {
        createDispatcher(this: unknown, ...args: unknown[]) {
          const dispatcher = clientNode.apply(this, args) as { destroyed: boolean } | undefined;
          if (dispatcher !== undefined) made.push(dispatcher);
          return dispatcher;
        },
      });
      await createServiceCIDR(kc, 'closing', ['10.103.0.0/24']);
      await createServiceCIDR(kc, 'closing', ['10.103.0.0/24']); // 409, read back
      expect(await deleteServiceCIDR(kc, 'closing')).toBe(true);
      expect(await deleteServiceCIDR(kc, 'closing')).toBe(false); // 404
      d.failNext('create', 1, 400);
      await rejection(createServiceCIDR(kc, 'refused', ['10.104.0.0/24']));
      expect(made.length).toBeGreaterThanOrEqual(5);
      expect(made.filter((m) => !m.destroyed)).toEqual([]);
    });

    it('maps spec.cidrs, the Ready condition, deletion and creation timestamps', () => {
      const base = {
        metadata: { name: 'a', uid: 'u', resourceVersion: '7', creationTimestamp: '2025-01-02T03:04:05Z' },
        spec: { cidrs: ['10.0.0.0/24', 'fd00::/108'] },
      };
      const rows: [string, object, boolean | undefined][] = [
        ['no status', {}, undefined],
        ['no Ready condition', { status: { conditions: [{ type: 'Other', status: 'False' }] } }, undefined],
        ['Ready True', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, true],
        ['Ready False', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }, false],
        ['Ready Unknown (upstream: only True is ready)', { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }, false],
      ];
      for (const [what, extra, ready] of rows) {
        const r = toServiceCIDR({ ...base, ...extra });
        expect(r.ready, what).toBe(ready);
        expect(r).toMatchObject({
          name: 'a',
          uid: 'u',
          resourceVersion: '7',
          cidrs: ['10.0.0.0/24', 'fd00::/108'],
          deletionTimestamp: null,
          creationTimestamp: '2025-01-02T03:04:05Z',
        });
        expect(Object.isFrozen(r)).toBe(true);
      }
      // client-node's typed list decodes timestamps as Date
      const fromList = toServiceCIDR({
        metadata: { name: 'b', creationTimestamp: new Date('2025-01-02T03:04:05Z'), deletionTimestamp: new Date('2025-01-02T03:04:06Z') },
        spec: { cidrs: ['10.0.0.0/24'] },
      });
      expect(fromList.creationTimestamp).toBe('2025-01-02T03:04:05Z');
      expect(fromList.deletionTimestamp).toBe('2025-01-02T03:04:06Z');
      // an empty deletionTimestamp is no deletion, as an IPAddress's is read
      const blank = toServiceCIDR({
        metadata: { name: 'c', creationTimestamp: '', deletionTimestamp: '' },
        spec: { cidrs: ['10.0.0.0/24'] },
      });
      expect(blank.deletionTimestamp).toBeNull();
      expect(blank.creationTimestamp).toBeUndefined();
    });

    it('createServiceCIDR sends the object, deleteServiceCIDR removes it; errors are header-free KubernetesApiErrors', async () => {
      const created = await createServiceCIDR(kc, 'extra', ['10.100.0.0/24', 'fd00:100::/112'], { labels: { team: 'a' } });
      const req = d.requestsOf('create')[0]!;
      expect(req.path).toBe('/apis/networking.k8s.io/v1/servicecidrs');
      expect(req.body).toEqual({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'ServiceCIDR',
        metadata: { name: 'extra', labels: { team: 'a' } },
        spec: { cidrs: ['10.100.0.0/24', 'fd00:100::/112'] },
      });
      expect(created).toMatchObject({
        name: 'extra',
        cidrs: ['10.100.0.0/24', 'fd00:100::/112'],
        ready: undefined,
        deletionTimestamp: null,
      });
      expect(created.uid).toBe(d.objects(SC)[0]!.metadata.uid);

      const dup = await rejection(createServiceCIDR(kc, 'extra', ['10.101.0.0/24']));
      expect(dup).toBeInstanceOf(KubernetesApiError);
      expect((dup as KubernetesApiError).code).toBe(409);
      expect((dup as KubernetesApiError).reason).toBe('AlreadyExists');
      expect((dup as Error).message).toContain('"extra"');
      expect((dup as Error).message).not.toContain(TEST_TOKEN);

      // the API server's spec validation, checked before sending
      const before = d.requests.length;
      expect(await rejection(createServiceCIDR(kc, 'two-v4', ['10.0.0.0/24', '10.1.0.0/24']))).toBeInstanceOf(InvalidArgumentError);
      expect(await rejection(createServiceCIDR(kc, 'none', []))).toBeInstanceOf(InvalidArgumentError);
      expect(d.requests.length).toBe(before);

      expect(await deleteServiceCIDR(kc, 'extra')).toBe(true);
      expect(d.objects(SC)).toEqual([]);
      expect(await deleteServiceCIDR(kc, 'extra')).toBe(false);

      // a 503 with nothing deleted: read back, still there, and not deleted again
      d.failNext('delete', 1, 503);
      await createServiceCIDR(kc, 'again', ['10.102.0.0/24']);
      const e = await rejection(deleteServiceCIDR(kc, 'again'));
      expect(e).toBeInstanceOf(KubernetesApiError);
      expect((e as KubernetesApiError).code).toBe(503);
      expect((e as KubernetesApiError).resourceName).toBe('again');
      expect(d.objects(SC).map((o) => o.metadata.name)).toEqual(['again']);

      // A delete the server applied but answered with a ServerTimeout (500, Retry-After) is not
      // sent again: a second one would delete a ServiceCIDR created under that name meanwhile.
      // Read back, it is gone: deleted.
      d.timeOutAfterCommit('delete');
      expect(await deleteServiceCIDR(kc, 'again')).toBe(true);
      expect(d.requestsOf('delete').filter((r) => r.path.endsWith('/again')).length).toBe(2); // the 503 above, and this one
    });

    describe('createServiceCIDR whose answer was lost, the object stored (create-or-get, as kubectl apply leaves an object already as wanted)', () => {
      // Regression: called again, it met its own earlier create as 409 AlreadyExists and failed,
      // although the ServiceCIDR it asked for was there. Then the first call failed with the
      // network error; it now sends the create once more itself.
      it('its connection dropped: sent once more, meets the object its first send stored, and resolves to it', async () => {
        d.dropAfterCommit('create');
        const created = await createServiceCIDR(kc, 'extra', ['10.100.0.0/24'], { labels: { team: 'a' }, requestTimeoutMs: 2000 });
        expect(created).toMatchObject({ name: 'extra', cidrs: ['10.100.0.0/24'], labels: { team: 'a' }, deletionTimestamp: null });
        expect(created.uid).toBe(d.objects(SC)[0]!.metadata.uid);
        expect(d.requestsOf('create').length).toBe(2);
        expect(d.requestsOf('get').map((r) => r.path)).toEqual(['/apis/networking.k8s.io/v1/servicecidrs/extra']);
      });

      it('answered 502 naming no wait after it was stored: sent once more, and resolves to it', async () => {
        d.failAfterCommit('create', 502);
        const created = await createServiceCIDR(kc, 'extra', ['10.100.0.0/24']);
        expect(created.uid).toBe(d.objects(SC)[0]!.metadata.uid);
        expect(d.requestsOf('create').length).toBe(2);
      });

      it('dropped before it was stored: sent once more, and resolves to the object that send stored', async () => {
        d.dropBeforeCommit('create');
        const created = await createServiceCIDR(kc, 'extra', ['10.100.0.0/24'], { requestTimeoutMs: 2000 });
        expect(created.uid).toBe(d.objects(SC)[0]!.metadata.uid);
        expect([d.requestsOf('create').length, d.requestsOf('get').length]).toEqual([2, 0]);
      });

      it('sent again by itself after a ServerTimeout (500, Retry-After) the server answered after storing it: resolves', async () => {
        d.timeOutAfterCommit('create');
        const created = await createServiceCIDR(kc, 'extra', ['10.100.0.0/24', 'fd00:100::/112']);
        expect(created).toMatchObject({ name: 'extra', cidrs: ['10.100.0.0/24', 'fd00:100::/112'] });
        expect(created.uid).toBe(d.objects(SC)[0]!.metadata.uid);
        expect(d.requestsOf('create').length).toBe(2);
      });

      it('a ServiceCIDR of that name with other cidrs or labels, or being deleted, is no success: a 409 that says how it differs', async () => {
        const rows: { name: string; make: () => void; cidrs: string[]; labels?: Record<string, string>; says: string }[] = [
          {
            name: 'other cidrs',
            make: () => void d.insert({ metadata: { name: 'x1' }, spec: { cidrs: ['10.100.0.0/24'] } }, SC),
            cidrs: ['10.101.0.0/24'],
            says: 'create servicecidrs.networking.k8s.io "x1": it already exists with spec.cidrs ["10.100.0.0/24"], not ["10.101.0.0/24"]',
          },
          {
            name: 'a label asked for missing or different',
            make: () => void d.insert({ metadata: { name: 'x2', labels: { team: 'b' } }, spec: { cidrs: ['10.102.0.0/24'] } }, SC),
            cidrs: ['10.102.0.0/24'],
            labels: { team: 'a' },
            says: 'create servicecidrs.networking.k8s.io "x2": it already exists with the label team="b", not team="a"',
          },
          {
            // a label key that is also the name of an Object.prototype member
            name: 'a label asked for missing, named like an inherited property',
            make: () => void d.insert({ metadata: { name: 'x3' }, spec: { cidrs: ['10.104.0.0/24'] } }, SC),
            cidrs: ['10.104.0.0/24'],
            labels: { constructor: 'b' },
            says: 'create servicecidrs.networking.k8s.io "x3": it already exists with no label constructor, not constructor="b"',
          },
          {
            name: 'being deleted (its finalizer pending)',
            make: () => {
              d.insert(
                { metadata: { name: 'x4', finalizers: ['networking.k8s.io/service-cidr-finalizer'] }, spec: { cidrs: ['10.103.0.0/24'] } },
                SC,
              );
              d.remove('x4', SC);
            },
            cidrs: ['10.103.0.0/24'],
            says: 'create servicecidrs.networking.k8s.io "x4": it already exists and is being deleted (deletionTimestamp ',
          },
        ];
        for (const row of rows) {
          row.make();
          const err = await rejection(
            createServiceCIDR(kc, `x${rows.indexOf(row) + 1}`, row.cidrs, row.labels ? { labels: row.labels } : {}),
          );
          expect(err, row.name).toBeInstanceOf(KubernetesApiError);
          expect([(err as KubernetesApiError).code, (err as KubernetesApiError).reason], row.name).toEqual([409, 'AlreadyExists']);
          expect((err as Error).message, row.name).toContain(row.says);
        }
      });
    });

    it('v1beta1 is selectable for the source and the helpers', async () => {
      await createServiceCIDR(kc, 'beta', ['10.0.0.0/24'], { apiVersion: 'v1beta1' });
      expect(d.requestsOf('create')[0]!.path).toBe('/apis/networking.k8s.io/v1beta1/servicecidrs');
      const s = source({ apiVersion: 'v1beta1' });
      expect(s.path).toBe('/apis/networking.k8s.io/v1beta1/servicecidrs');
      await s.waitForSync();
      expect(s.list().map((x) => x.name)).toEqual(['beta']);
      await eventually(() => d.openWatches(SC) > 0, 'the watch');
      expect(d.requestsOf('watch').every((r) => r.path === '/apis/networking.k8s.io/v1beta1/servicecidrs')).toBe(true);
      expect(await deleteServiceCIDR(kc, 'beta', { apiVersion: 'v1beta1' })).toBe(true);
      await eventually(() => s.list().length === 0, 'the delete seen');
    });
  });

  describe('the source', () => {
    it('syncs after the first list, replays on subscribe, then delivers adds, updates and deletes in order', async () => {
      await createServiceCIDR(kc, 'a', ['10.0.0.0/24']);
      d.failNext('list', 2, 503); // the first list fails twice: not synced until one succeeds
      const s = source();
      expect(s.hasSynced()).toBe(false);
      await s.waitForSync();
      expect(s.hasSynced()).toBe(true);
      expect(s.stats.lists).toBe(3);

      const log = new Log();
      s.subscribe(log);
      expect(log.lines).toEqual(['+a:undefined']);

      await createServiceCIDR(kc, 'b', ['10.1.0.0/24']);
      setReady('b', 'False');
      setReady('b', 'True');
      await deleteServiceCIDR(kc, 'a');
      await eventually(() => log.lines.length === 5, 'four changes');
      expect(log.lines).toEqual(['+a:undefined', '+b:undefined', '+b:false', '+b:true', '-a']);
      expect(s.list().map((x) => x.name)).toEqual(['b']);
      expect(s.get('b')?.ready).toBe(true);
    });

    // Regression: a watcher unsubscribed by an earlier watcher during an event was still given
    // that event (InMemoryServiceCIDRs skips it): nothing reaches a watcher once its unsubscribe returned.
    it('a watcher unsubscribed by an earlier one during an event is not given that event', async () => {
      const s = source();
      await s.waitForSync();
      const late = new Log();
      let unsubscribeLate = (): void => {};
      const early = new Log();
      s.subscribe({
        onAdd: (sc) => {
          early.onAdd(sc);
          unsubscribeLate();
        },
        onDelete: (sc) => early.onDelete(sc),
      });
      unsubscribeLate = s.subscribe(late);
      await createServiceCIDR(kc, 'b', ['10.1.0.0/24']);
      await eventually(() => early.lines.length === 1, 'the add');
      expect([early.lines, late.lines]).toEqual([['+b:undefined'], []]);
      s.close();
    });

    // Regression: a watcher unsubscribed and subscribed again by an earlier watcher during an
    // event got that onAdd twice (its replay, then the event itself); and one watcher subscribed
    // twice was one subscription, where MemoryStore's cache counts two.
    it('a watcher subscribed again during an event gets it once, in its replay; one subscribed twice gets each change twice', async () => {
      const s = source();
      await s.waitForSync();
      const again = new Log();
      let offAgain = (): void => {};
      const early = new Log();
      s.subscribe({
        onAdd: (sc) => {
          early.onAdd(sc);
          if (early.lines.length !== 1) return;
          offAgain();
          offAgain = s.subscribe(again);
        },
        onDelete: (sc) => early.onDelete(sc),
      });
      offAgain = s.subscribe(again);
      const twice = new Log();
      const offFirst = s.subscribe(twice);
      s.subscribe(twice);
      await createServiceCIDR(kc, 'b', ['10.1.0.0/24']);
      await eventually(() => twice.lines.length === 2, 'the add, twice');
      offFirst();
      await deleteServiceCIDR(kc, 'b');
      await eventually(() => early.lines.length === 2, 'the delete');
      expect([again.lines, twice.lines]).toEqual([
        ['+b:undefined', '-b'],
        ['+b:undefined', '+b:undefined', '-b'],
      ]);
      s.close();
    });

    it('lists ServiceCIDRs made in the same second by name, as a MetaAllocator orders its ranges, whatever their arrival', async () => {
      const s = source();
      await s.waitForSync();
      for (let attempt = 0; ; attempt++) {
        // whole seconds: both land in one second unless the clock ticks between them (then again)
        await createServiceCIDR(kc, `zz${attempt}`, [`10.${2 * attempt}.0.0/24`]);
        await createServiceCIDR(kc, `aa${attempt}`, [`10.${2 * attempt + 1}.0.0/24`]);
        await eventually(() => s.list().length === 2, 'both seen');
        const [x, y] = s.list();
        if (x!.creationTimestamp !== y!.creationTimestamp && attempt < 5) {
          await deleteServiceCIDR(kc, `zz${attempt}`);
          await deleteServiceCIDR(kc, `aa${attempt}`);
          await eventually(() => s.list().length === 0, 'both deleted');
          continue;
        }
        expect(s.list().map((r) => r.name)).toEqual([`aa${attempt}`, `zz${attempt}`]);
        break;
      }
      s.close();
    });

    it('a finalizer keeps a deleting object: onAdd with deletionTimestamp, onDelete once it is removed', async () => {
      await createServiceCIDR(kc, 'a', ['10.0.0.0/24']);
      d.modify('a', (o) => (o.metadata.finalizers = [FINALIZER]), SC);
      const s = source();
      await s.waitForSync();
      const log = new Log();
      s.subscribe(log);
      expect(await deleteServiceCIDR(kc, 'a')).toBe(true);
      await eventually(() => log.lines.length === 2, 'the deletion mark');
      expect(log.lines[1]).toBe('+a:undefined:deleting');
      expect(d.objects(SC)).toHaveLength(1);
      d.modify('a', (o) => (o.metadata.finalizers = []), SC); // kube-controller-manager's part
      await eventually(() => log.lines.length === 3, 'the delete');
      expect(log.lines[2]).toBe('-a');
      expect(d.objects(SC)).toEqual([]);
    });

    // Found in review: once the source was closed, an address no range holds (and allocateNext
    // with no range) was answered with the source's ErrDestroyed, said of a MetaAllocator that
    // was not destroyed, where closing the source leaves it serving the ranges it last heard of
    it('closing the synced source: the MetaAllocator answers as before, never with the source ErrDestroyed', async () => {
      const empty = await open('ordered'); // synced, with no ServiceCIDR
      empty.cidrs.close();
      expect(await rejection(empty.meta.allocateNext())).toBeInstanceOf(ErrFull);
      await createServiceCIDR(kc, 'a', ['10.0.0.0/24']);
      const env = await open('ordered');
      await env.meta.allocate('10.0.0.5');
      env.cidrs.close();
      await env.meta.allocate('10.0.0.6');
      expect(await rejection(env.meta.allocate('10.9.0.1'))).toBeInstanceOf(ErrMismatchedNetwork);
    });

    it('close() stops the watch and the deliveries', async () => {
      const s = source();
      await s.waitForSync();
      await eventually(() => d.openWatches(SC) === 1, 'the watch');
      const log = new Log();
      s.subscribe(log);
      s.close();
      expect(s.state).toBe('stopped');
      await eventually(() => d.openWatches(SC) === 0, 'the watch closed');
      await createServiceCIDR(kc, 'late', ['10.0.0.0/24']);
      expect(log.lines).toEqual([]);
    });

    it('a subscriber that throws during the replay is reported (onWatcherError) and still subscribed', async () => {
      // Regression: the throw escaped subscribe() after the first object, unreported, and the
      // subscriber never heard of later changes.
      await createServiceCIDR(kc, 'a', ['10.0.0.0/24']);
      await createServiceCIDR(kc, 'b', ['10.1.0.0/24']);
      const reported: unknown[] = [];
      const s = source({ onWatcherError: (e) => reported.push(e) });
      await s.waitForSync();
      const seen: string[] = [];
      s.subscribe({
        onAdd: (sc) => {
          seen.push(`+${sc.name}`);
          throw new Error(`cannot take ${sc.name}`);
        },
        onDelete: (sc) => seen.push(`-${sc.name}`),
      });
      expect(seen).toEqual(['+a', '+b']);
      expect(reported.map((e) => (e as Error).message)).toEqual(['cannot take a', 'cannot take b']);
      d.remove('a', SC);
      await eventually(() => seen.includes('-a'), 'the delete delivered');
      s.close();
    });

    it('a subscriber that closes the source during the replay: subscribe throws ErrDestroyed and keeps nothing', async () => {
      await createServiceCIDR(kc, 'a', ['10.0.0.0/24']);
      await createServiceCIDR(kc, 'b', ['10.1.0.0/24']);
      const s = source();
      await s.waitForSync();
      const seen: string[] = [];
      expect(() =>
        s.subscribe({
          onAdd: (sc) => {
            seen.push(sc.name);
            s.close();
          },
          onDelete: () => {},
        }),
      ).toThrow(ErrDestroyed);
      expect(seen).toEqual(['a']);
    });

    it('after close() every method throws or rejects ErrDestroyed; `using` closes it', async () => {
      await createServiceCIDR(kc, 'a', ['10.0.0.0/24']);
      let kept: KubernetesServiceCIDRs;
      {
        using s = source();
        kept = s;
        await s.waitForSync();
      }
      const s = kept;
      expect(s.state).toBe('stopped');
      s.close(); // idempotent
      const calls: [string, () => unknown][] = [
        ['subscribe', () => s.subscribe(new Log())],
        ['hasSynced', () => s.hasSynced()],
        ['list', () => s.list()],
        ['get', () => s.get('a')],
        ['start', () => s.start()],
        ['onStateChange', () => s.onStateChange(() => {})],
        ['waitForSync', () => s.waitForSync()],
      ];
      for (const [what, call] of calls) {
        const err = await (async () => call())().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, what).toBeInstanceOf(ErrDestroyed);
        expect((err as Error).message, what).toBe('KubernetesServiceCIDRs has been closed');
      }
    });

    it('refuses wrong arguments with InvalidArgumentError before any request', async () => {
      const before = d.requests.length;
      expect(() => new KubernetesServiceCIDRs(null as never)).toThrow(InvalidArgumentError);
      expect(() => new KubernetesServiceCIDRs(kc, null as never)).toThrow(InvalidArgumentError);
      expect(() => new KubernetesServiceCIDRs(kc, { apiVersion: 'v1alpha1' as never })).toThrow('"v1alpha1"');
      expect(() => new KubernetesServiceCIDRs(kc, { labelSelector: {} as never })).toThrow(InvalidArgumentError);
      const s = source({ start: false });
      expect(() => s.subscribe(null as never)).toThrow(InvalidArgumentError);
      await expect(createServiceCIDR(kc, '' as never, ['10.0.0.0/24'])).rejects.toThrow(InvalidArgumentError);
      // Regression: these were sent, for the API server to refuse (or, '..', to reach another path)
      const notSubdomain =
        "createServiceCIDR: a ServiceCIDR name must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters), got";
      await expect(createServiceCIDR(kc, '..', ['10.0.0.0/24'])).rejects.toThrow(`${notSubdomain} ".."`);
      // Regression: names the API server refuses (InMemoryServiceCIDRs too) were sent; `a/b` is no name at all
      for (const name of ['A', 'a_b', 'a/b', 'a'.repeat(254), '-a', 'a.']) {
        await expect(createServiceCIDR(kc, name, ['10.0.0.0/24'])).rejects.toThrow(`${notSubdomain} "${name.slice(0, 64)}`);
      }
      await expect(createServiceCIDR(kc, 'x', ['10.0.0.0/24'], { labels: { a: 1 } as never })).rejects.toThrow(
        'createServiceCIDR: metadata.labels["a"]: Invalid value: 1 (number): must be a string',
      );
      // Regression: a Map or a Date was read as {}, the ServiceCIDR created without the labels asked
      // for; a getter, a Proxy trap that threw and a revoked Proxy escaped as their own errors.
      const revoked = Proxy.revocable({}, {});
      revoked.revoke();
      const unreadable = [
        Object.defineProperty({}, 'team', {
          enumerable: true,
          get: () => {
            throw new Error('getter failed');
          },
        }),
        new Proxy(
          { team: 'a' },
          {
            ownKeys: () => {
              throw new Error('trap failed');
            },
          },
        ),
        revoked.proxy,
        // Regression: no plain object, read again to be named: its prototype's descriptor trap threw there, raw
        new Proxy(
          {},
          {
            getPrototypeOf: () =>
              new Proxy(
                {},
                {
                  getOwnPropertyDescriptor: () => {
                    throw new Error('trap failed');
                  },
                },
              ),
          },
        ),
      ];
      for (const labels of unreadable) {
        const e = await rejection(createServiceCIDR(kc, 'x', ['10.0.0.0/24'], { labels }));
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as Error).message).toMatch(
          /^createServiceCIDR: options\.labels could not be read: it threw (Error: (getter|trap) failed|TypeError: )/,
        );
      }
      for (const [labels, kind] of [
        [new Map([['team', 'a']]), 'Map'],
        [new Date(0), 'Date'],
      ] as const) {
        await expect(createServiceCIDR(kc, 'x', ['10.0.0.0/24'], { labels: labels as never })).rejects.toThrow(
          `createServiceCIDR: metadata.labels: Invalid value: a ${kind}: must be a plain object of string values (an object literal): only a plain object's own fields are copied`,
        );
      }
      await expect(createServiceCIDR(kc, 'x', ['10.0.0.0/24'], { labels: { 'bad key!': 'v' } })).rejects.toThrow(
        `createServiceCIDR: metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.'`,
      );
      await expect(createServiceCIDR(kc, 'x', ['10.0.0.0/24'], { labels: { team: 'x'.repeat(64) } })).rejects.toThrow(
        `createServiceCIDR: metadata.labels["team"]: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`,
      );
      await expect(createServiceCIDR(kc, 'x', ['10.0.0.0/24'], { apiVersion: 'v2' as never })).rejects.toThrow(InvalidArgumentError);
      await expect(deleteServiceCIDR(null as never, 'x')).rejects.toThrow(InvalidArgumentError);
      // Regression: "", "." and ".." sent DELETE …/servicecidrs — kube-apiserver's deletecollection
      for (const name of ['', '.', '..', undefined]) {
        await expect(deleteServiceCIDR(kc, name as never)).rejects.toThrow(
          `deleteServiceCIDR: a ServiceCIDR needs a name, got ${name === undefined ? 'undefined' : `"${name}"`}`,
        );
      }
      expect(d.requests.length).toBe(before);
      await createServiceCIDR(kc, 'a'.repeat(253), ['10.0.0.0/24']); // the longest name is taken
    });
  });

  describe.each(RANGE_POLICIES)('upstream D cases, policy %s', (policy) => {
    it('D1 TestCIDRAllocateMultiple: ranges added later are used, each address once', async () => {
      const env = await open(policy);
      const { meta } = env;
      expect(meta.free()).toBe(0n);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);

      await addReady(env, 'test', ['192.168.0.0/28']);
      const found = new Set<string>();
      await drain(meta, found);
      expect(found.size).toBe(14);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);

      await addReady(env, 'test2', ['10.0.0.0/28']);
      await meta.allocate('10.0.0.11');
      found.add('10.0.0.11');
      await drain(meta, found);
      expect(found.size).toBe(28);
      expect([...found].filter((ip) => hostOf('10.0.0.0/28', ip))).toHaveLength(14);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
      expect(
        d
          .objects()
          .map((o) => o.metadata.name)
          .sort(),
      ).toEqual([...found].sort());
    });

    it('D2 TestCIDRAllocateShadow: a network address is served by a larger overlapping range', async () => {
      const env = await open(policy);
      const { meta } = env;
      await addReady(env, 'test', ['192.168.1.0/24']);
      expect(await rejection(meta.allocate('192.168.1.0'))).toBeInstanceOf(ErrMismatchedNetwork);
      expect(meta.used()).toBe(0);
      await addReady(env, 'test2', ['192.168.0.0/16']);
      await meta.allocate('192.168.1.0');
      expect(meta.used()).toBe(1);
      expect(meta.rangeFor('192.168.1.0')).toBe('192.168.0.0/16');
      expect(d.objects().map((o) => o.metadata.name)).toEqual(['192.168.1.0']);
    });

    it('D3 TestCIDRAllocateGrow: an overlapping larger range adds only its new addresses', async () => {
      const env = await open(policy);
      const { meta } = env;
      await addReady(env, 'test', ['192.168.0.0/28']);
      const found = new Set<string>();
      await drain(meta, found);
      expect(found.size).toBe(14);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
      await addReady(env, 'test2', ['192.168.0.0/24']);
      expect(meta.free()).toBe(254n - 14n);
      await drain(meta, found);
      expect(found.size).toBe(254);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
      expect(d.objects()).toHaveLength(254);
    });

    it('D4 TestCIDRAllocateShrink: after the big range is deleted, only the small one allocates', async () => {
      const env = await open(policy);
      const { meta } = env;
      await addReady(env, 'test', ['192.168.0.0/24']);
      const found = new Set<string>();
      await drain(meta, found);
      expect(found.size).toBe(254);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
      for (const ip of found) await meta.release(ip);
      expect(meta.used()).toBe(0);
      expect(d.objects()).toEqual([]);

      await addReady(env, 'cidr2', ['192.168.0.0/28']);
      await deleteServiceCIDR(kc, 'test');
      await eventually(() => {
        try {
          meta.rangeFor('192.168.0.253');
          return false;
        } catch (e) {
          return e instanceof ErrMismatchedNetwork;
        }
      }, 'no ready range for 192.168.0.253');
      expect(meta.rangeFor('192.168.0.1')).toBe('192.168.0.0/28');
      const after = new Set<string>();
      await drain(meta, after);
      expect(after.size).toBe(14);
      for (const ip of after) expect(hostOf('192.168.0.0/28', ip)).toBe(true);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
    });

    it('D7 TestCIDRAllocateNextStopOnError: a 5xx on create stops the search after one address (its create read back, sent once more)', async () => {
      const env = await open(policy);
      const { meta } = env;
      await addReady(env, 'a', ['192.168.0.0/24']);
      await addReady(env, 'b', ['192.168.1.0/24']);
      d.failNext('create', 1_000, 500, 'server error');
      const e = await rejection(meta.allocateNext());
      expect(e).toBeInstanceOf(KubernetesApiError);
      expect((e as KubernetesApiError).code).toBe(500);
      expect((e as Error).message).toContain('server error');
      const creates = d
        .requestsOf('create')
        .filter((r) => r.path.endsWith('/ipaddresses'))
        .map((r) => (r.body as { metadata: { name: string } }).metadata.name);
      expect([creates.length, new Set(creates).size]).toEqual([2, 1]);
    });

    it('D8 TestCIDRAllocateNextDontStopOnNotReady: a range whose Ready condition is False is passed over', async () => {
      const env = await open(policy);
      const { meta } = env;
      await addReady(env, 'a', ['192.168.0.0/24']);
      await addReady(env, 'b', ['192.168.1.0/24']);
      setReady('a', 'False');
      await eventually(() => meta.ranges().find((r) => r.cidr === '192.168.0.0/24')?.ready === false, 'a not ready');
      for (let i = 0; i < 200; i++) expect(hostOf('192.168.1.0/24', await meta.allocateNext())).toBe(true);
      setReady('a', undefined); // no Ready condition: ready again (upstream: "kcm not running")
      await eventually(() => meta.ranges().every((r) => r.ready), 'a ready again');
      await meta.allocate('192.168.0.7');
      expect(meta.rangeFor('192.168.0.7')).toBe('192.168.0.0/24');
    });
  });

  describe.each(RANGE_POLICIES)('upstream D cases D6, D9*, D10*, policy %s', (policy) => {
    async function openFamily(family: 'IPv4' | 'IPv6') {
      const store = new KubernetesStore(kc, { backoff: { initialMs: 2, maxMs: 20 } });
      cleanups.push(() => store.close());
      const cidrs = source();
      await Promise.all([store.waitForSync(), cidrs.waitForSync()]);
      const meta = new MetaAllocator(family, cidrs, { store, policy, random: seededRandom(3) });
      cleanups.push(() => meta.destroy());
      return { store, cidrs, meta };
    }
    async function metric(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
      const m = registry.getSingleMetric(name);
      if (!m) return 0;
      const v = (await m.get()).values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
      return v?.value ?? 0;
    }
    const P = 'kube_apiserver_clusterip_allocator_';

    it('D6 TestCIDRAllocatorClusterIPAllocatedMetrics (seeded gauges), ranges added after enableMetrics', async () => {
      const env = await openFamily('IPv4');
      const { meta } = env;
      const registry = new Registry();
      meta.enableMetrics(registry);
      await addReady(env, 'test1', ['192.168.1.0/30']);
      expect(await metric(registry, P + 'available_ips', { cidr: '192.168.1.0/30' })).toBe(2);
      const found = new Set<string>();
      for (let i = 0; i < 2; i++) found.add(await meta.allocateNext());
      expect(found.size).toBe(2);
      expect(await metric(registry, P + 'allocation_total', { cidr: '192.168.1.0/30', scope: 'dynamic' })).toBe(2);
      await addReady(env, 'test2', ['10.0.0.0/29']);
      expect(await metric(registry, P + 'available_ips', { cidr: '10.0.0.0/29' })).toBe(6);
      for (let i = 0; i < 6; i++) found.add(await meta.allocateNext());
      expect(found.size).toBe(8);
      expect(await metric(registry, P + 'allocation_total', { cidr: '10.0.0.0/29', scope: 'dynamic' })).toBe(6);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
      for (const ip of found) expect(await rejection(meta.allocate(ip))).toBeInstanceOf(ErrAllocated);
      expect(await metric(registry, P + 'allocation_errors_total', { cidr: '192.168.1.0/30', scope: 'static' })).toBe(2);
      expect(await metric(registry, P + 'allocation_errors_total', { cidr: '10.0.0.0/29', scope: 'static' })).toBe(6);
      expect(
        d
          .objects()
          .map((o) => o.metadata.name)
          .sort(),
      ).toEqual([...found].sort());
    });

    it('D9* TestCIDRAllocateIPv6: an IPv6 range allocates every address once, then releases them', async () => {
      const env = await openFamily('IPv6');
      const { meta } = env;
      expect(meta.free()).toBe(0n);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
      await addReady(env, 'v6', ['fd00:1:2:3::/120']);
      const found = new Set<string>();
      await drain(meta, found);
      expect(found.size).toBe(255);
      for (const ip of found) expect(hostOf('fd00:1:2:3::/120', ip)).toBe(true);
      expect(await rejection(meta.allocateNext())).toBeInstanceOf(ErrFull);
      expect(d.objects()).toHaveLength(255);
      for (const ip of found) await meta.release(ip);
      await eventually(() => meta.used() === 0, 'used() back to 0');
      expect(d.objects()).toHaveLength(0);
    });

    it('D10* TestCIDRAllocateDualStack: an IPv6 MetaAllocator ignores the IPv4 CIDR of a dual-stack ServiceCIDR', async () => {
      const env = await openFamily('IPv6');
      const { meta } = env;
      await createServiceCIDR(kc, 'dual', ['192.168.0.0/24', 'fd00:1:2:3::/120']);
      await eventually(() => meta.ranges().some((r) => r.cidr === 'fd00:1:2:3::/120'), 'the IPv6 range');
      expect(() => meta.rangeFor('192.168.0.1', false)).toThrow(ErrMismatchedNetwork);
      expect(hostOf('fd00:1:2:3::/120', await meta.allocateNext())).toBe(true);
      expect(meta.ranges().map((r) => r.cidr)).toEqual(['fd00:1:2:3::/120']);
      expect(meta.skipped()).toEqual([]);
    });
  });

  describe('ranges change at run time', () => {
    it('a ServiceCIDR created while running becomes allocatable without a restart', async () => {
      const env = await open('ordered');
      const { meta } = env;
      await addReady(env, 'small', ['10.0.0.0/30']);
      await meta.allocateNext(SVC);
      await meta.allocateNext(SVC);
      expect(await rejection(meta.allocateNext(SVC))).toBeInstanceOf(ErrFull);
      await createServiceCIDR(kc, 'more', ['10.1.0.0/29']); // no Ready condition yet: counts as ready
      await eventually(() => meta.ranges().some((r) => r.cidr === '10.1.0.0/29'), 'the new range');
      expect(hostOf('10.1.0.0/29', await meta.allocateNext(SVC))).toBe(true);
      expect(d.objects()).toHaveLength(3);
    });

    it('deleting a ServiceCIDR stops new allocations from it; its addresses stay until released', async () => {
      const env = await open('ordered');
      const { meta } = env;
      // (created in the same second, as the double stamps whole seconds like Kubernetes: by name)
      await addReady(env, 'first', ['10.0.0.0/29']);
      await addReady(env, 'second', ['10.1.0.0/29']);
      const kept = await meta.allocateNext(SVC);
      expect(hostOf('10.0.0.0/29', kept)).toBe(true);
      // kube-controller-manager protects ServiceCIDRs with a finalizer
      d.modify('first', (o) => (o.metadata.finalizers = [FINALIZER]), SC);
      await deleteServiceCIDR(kc, 'first');
      await eventually(() => meta.ranges().find((r) => r.cidr === '10.0.0.0/29')?.ready === false, 'first not ready');

      for (let i = 0; i < 6; i++) expect(hostOf('10.1.0.0/29', await meta.allocateNext(SVC))).toBe(true);
      expect(await rejection(meta.allocateNext(SVC))).toBeInstanceOf(ErrFull);
      expect(await rejection(meta.allocate('10.0.0.5', SVC))).toBeInstanceOf(ErrMismatchedNetwork);
      expect(d.objects().map((o) => o.metadata.name)).toContain(kept); // the address stays
      expect(meta.used()).toBe(7);

      await meta.release(kept); // release needs no ready range
      expect(d.objects().map((o) => o.metadata.name)).not.toContain(kept);
      d.modify('first', (o) => (o.metadata.finalizers = []), SC); // nothing left in it: kcm lets it go
      await eventually(() => !meta.ranges().some((r) => r.cidr === '10.0.0.0/29'), 'first range gone');
      expect(cidrsOf(meta)).toEqual(['10.1.0.0/29']);
    });

    it('without a finalizer the range goes at once; an address left in it is still released through the MetaAllocator (upstream: not)', async () => {
      const env = await open('ordered');
      const { meta } = env;
      await addReady(env, 'gone', ['10.0.0.0/29']);
      const ip = await meta.allocateNext(SVC);
      await deleteServiceCIDR(kc, 'gone');
      await eventually(() => meta.ranges().length === 0, 'the range gone');
      await meta.release(ip); // upstream answers getAllocator's error and leaves the IPAddress to the repair controller
      await eventually(() => meta.used() === 0, 'the IPAddress deleted');
      expect(await rejection(meta.release('10.0.0.3'))).toBeInstanceOf(ErrMismatchedNetwork); // no record of ours
    });
  });

  describe('the ServiceCIDR watch fails', () => {
    it('a dropped watch is re-established and changes made meanwhile arrive', async () => {
      const env = await open('ordered');
      const { meta, cidrs } = env;
      await addReady(env, 'a', ['10.0.0.0/24']);
      await eventually(() => d.openWatches(SC) === 1, 'the watch');
      const watchesBefore = cidrs.stats.watches;
      d.failNext('list', 2, 503);
      d.dropWatches();
      await createServiceCIDR(kc, 'b', ['10.1.0.0/24']);
      d.remove('a', SC);
      await eventually(() => JSON.stringify(cidrsOf(meta)) === JSON.stringify(['10.1.0.0/24']), 'ranges == [b]');
      expect(cidrs.stats.watches).toBeGreaterThan(watchesBefore);
      expect(hostOf('10.1.0.0/24', await meta.allocateNext())).toBe(true);
    });

    it('after an etcd restore without --bump-revision, a ServiceCIDR created since the backup stops serving', async () => {
      const env = await open('ordered');
      const { meta } = env;
      await addReady(env, 'a', ['10.0.0.0/30']);
      await eventually(() => d.openWatches(SC) === 1, 'the watch');
      const backup = d.backup();
      await createServiceCIDR(kc, 'b', ['10.1.0.0/24']);
      await eventually(() => cidrsOf(meta).includes('10.1.0.0/24'), 'b served');
      d.restoreBackup(backup); // b never existed as far as the cluster now knows
      await eventually(() => JSON.stringify(cidrsOf(meta)) === JSON.stringify(['10.0.0.0/30']), 'ranges == [a]');
      await meta.allocateNext(SVC);
      await meta.allocateNext(SVC);
      expect(await rejection(meta.allocateNext(SVC))).toBeInstanceOf(ErrFull); // nothing from b
    });

    it('a compacted history (410 Expired) re-lists and delivers the differences', async () => {
      const env = await open('ordered');
      const { meta, cidrs } = env;
      await addReady(env, 'a', ['10.0.0.0/24']);
      await addReady(env, 'b', ['10.1.0.0/24']);
      await eventually(() => d.openWatches(SC) === 1, 'the watch');
      const log = new Log();
      cidrs.subscribe(log);
      const listsBefore = cidrs.stats.lists;

      d.holdWatches(); // the next changes never reach the open watch
      await createServiceCIDR(kc, 'c', ['10.2.0.0/24']);
      d.remove('a', SC);
      setReady('b', 'False');
      d.compact();
      d.closeWatches({ discardQueued: true }); // resume from the old resourceVersion → 410
      d.releaseWatches();

      await eventually(() => JSON.stringify(cidrsOf(meta)) === JSON.stringify(['10.1.0.0/24', '10.2.0.0/24']), 'ranges == [b, c]');
      await eventually(() => meta.ranges().find((r) => r.cidr === '10.1.0.0/24')?.ready === false, 'b not ready');
      expect(cidrs.stats.expired).toBeGreaterThan(0);
      expect(cidrs.stats.lists).toBeGreaterThan(listsBefore);
      // only the differences: a removed, b updated, c added — nothing re-added that did not change
      expect(log.lines.slice(2).sort()).toEqual(['+b:false', '+c:undefined', '-a']);
      expect(hostOf('10.2.0.0/24', await meta.allocateNext())).toBe(true);
    });
  });

  it('README example: add a range to a live cluster and allocate from it', async () => {
    // kc: a KubeConfig for the cluster (here the double; in real use kc.loadFromDefault())
    await createServiceCIDR(kc, 'extra-v4', ['10.100.0.0/24']);
    const store = new KubernetesStore(kc);
    const serviceCIDRs = new KubernetesServiceCIDRs(kc);
    await Promise.all([store.waitForSync(), serviceCIDRs.waitForSync()]);
    const meta = new MetaAllocator('IPv4', serviceCIDRs, { store });
    const owner = { group: '', resource: 'services', namespace: 'default', name: 'web' };
    const ip = await meta.allocateNext(owner);
    await meta.allocate('10.100.0.10', owner);
    expect(meta.rangeFor(ip)).toBe('10.100.0.0/24');
    expect(
      d
        .objects()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual([ip, '10.100.0.10'].sort());
    // it leaves the cluster as it found it, so it can run again
    await meta.release(ip);
    await meta.release('10.100.0.10');
    meta.destroy();
    serviceCIDRs.close();
    store.close();
    expect(await deleteServiceCIDR(kc, 'extra-v4')).toBe(true);
    expect(d.objects()).toEqual([]);
    expect((await createServiceCIDR(kc, 'extra-v4', ['10.100.0.0/24'])).name).toBe('extra-v4');
  });

  it('records carry the informer identity', async () => {
    const created: ServiceCIDRRecord = await createServiceCIDR(kc, 'x', ['10.0.0.0/24']);
    const s = source();
    await s.waitForSync();
    expect(s.get('x')).toEqual(created);
  });
});
