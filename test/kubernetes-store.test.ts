// KubernetesStore through real HTTP and client-node against the API-server double.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkingV1Api } from '@kubernetes/client-node';
import {
  deleteServiceCIDR,
  KubernetesServiceCIDRs,
  KubernetesStore,
  KubernetesApiError,
  SyncBlockedError,
  SyncDeniedError,
  SyncTimeoutError,
  type KubernetesStoreOptions,
} from '../adapters/kubernetes/index.ts';
import { allocatorLabels, type IPAddressRecord } from '../adapters/store.ts';
import { reconcile } from '../adapters/reconcile.ts';
import {
  AlreadyExistsError,
  ErrDestroyed,
  IPAllocatorError,
  InvalidArgumentError,
  InvalidRecordError,
  NotFoundError,
} from '../adapters/errors.ts';
import { ApiServerDouble, type KubeObject } from './k8s/apiserver-double.ts';
import { kubeConfigFor, TEST_TOKEN, writeKubeconfig } from './k8s/kubeconfig.ts';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { Mirror, cacheNames, hangingPlugin, ipAddressEvent, ipAddressList, isRunning, keepingStderr, until } from './k8s/helpers.ts';
import { Informer, type ListerWatcher } from '../adapters/kubernetes/informer.ts';
import { matchesSelector, parseLabelSelector } from '../adapters/kubernetes/objects.ts';

const SVC = { group: '', resource: 'services', namespace: 'default', name: 'web' };

function rec(name: string, family: 'IPv4' | 'IPv6' = 'IPv4', parentRef: IPAddressRecord['parentRef'] = SVC): IPAddressRecord {
  return { name, labels: allocatorLabels(family), parentRef };
}

/** What another controller writes (not through the store under test). */
function foreign(name: string, labels: Record<string, string> = allocatorLabels('IPv4')): KubeObject {
  return { metadata: { name, labels }, spec: { parentRef: { resource: 'services', namespace: 'other', name: 'x' } } };
}

describe('KubernetesStore', () => {
  let d: ApiServerDouble;
  /** The same over https://, for the tests of the user's credentials: kubectl sends none to an http:// server. */
  let secure: ApiServerDouble;
  const stores: KubernetesStore[] = [];
  /** Marker objects written by watchCaughtUp in this test. */
  let markers = 0;

  function open(options: KubernetesStoreOptions = {}, on: ApiServerDouble = d): KubernetesStore {
    const s = new KubernetesStore(kubeConfigFor(on.url), { backoff: { initialMs: 2, maxMs: 20 }, ...options });
    stores.push(s);
    return s;
  }

  beforeEach(async () => {
    // an idle connection outlives any stall of a loaded machine between two requests of a test
    // (the connection-counting tests below count on it)
    d = await ApiServerDouble.start({ keepAliveTimeoutMs: 600_000 });
    secure = await ApiServerDouble.start({ tls: true });
    markers = 0;
  });

  /** A KubeConfig for the double whose user's exec plugin is `node -e script` (or `command`, given no args). */
  function execPluginKubeConfig(script: string, command = process.execPath): KubeConfig {
    const kc = new KubeConfig();
    const args = command === process.execPath ? ['-e', script] : [];
    kc.loadFromOptions({
      clusters: [{ name: 'double', server: secure.url, skipTLSVerify: true }],
      users: [{ name: 'tester', exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command, args } }],
      contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
      currentContext: 'double',
    });
    return kc;
  }

  /**
   * The error of a get through a kubeconfig whose user's exec plugin is `node -e script` (or
   * `command`, given no args); what the plugin writes on stderr is kept out of the test output.
   */
  async function execPluginGetError(script: string, command = process.execPath, options: KubernetesStoreOptions = {}): Promise<unknown> {
    const s = new KubernetesStore(execPluginKubeConfig(script, command), { start: false, ...options });
    try {
      const { value } = await keepingStderr(() =>
        s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
      return value;
    } finally {
      s.close();
    }
  }
  afterEach(async () => {
    for (const s of stores.splice(0)) s.close();
    await d.close();
    await secure.close();
  });

  /**
   * Writes a marker object as another client and waits until the store's cache shows it: every
   * watch event sent before it has then been applied (one watch stream delivers in order).
   */
  /** A synced store whose watch is open, and a Mirror subscribed to its cache. */
  async function watched(): Promise<{ s: KubernetesStore; m: Mirror }> {
    const s = open();
    await s.waitForSync();
    await until(() => d.openWatches() === 1);
    const m = new Mirror();
    s.cache.subscribe(m);
    return { s, m };
  }

  /**
   * Lets the open watch pass the first second: a watch ended sooner with no event is a failure
   * and re-lists (client-go's "very short watch"), which tests of resuming must not meet.
   */
  async function pastVeryShortWatch(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  }

  async function watchCaughtUp(store: KubernetesStore): Promise<void> {
    const name = `10.255.255.${++markers}`;
    d.insert(foreign(name));
    await until(() => store.cache.get(name) !== undefined, `marker ${name} in the cache`);
  }

  /** Server, cache and a subscriber agree on the set of names. */
  async function converged(store: KubernetesStore, mirror?: Mirror): Promise<void> {
    const server = () =>
      d
        .objects()
        .map((o) => o.metadata.name)
        .sort();
    await until(() => JSON.stringify(cacheNames(store.cache)) === JSON.stringify(server()), 'cache == server');
    expect(cacheNames(store.cache)).toEqual(server());
    if (mirror) {
      expect(mirror.names()).toEqual(server());
      expect(mirror.phantomDeletes).toEqual([]);
      // Records, not just names: the mirror holds what the cache holds.
      for (const r of store.cache.list()) expect(mirror.view.get(r.name)).toBe(r);
    }
  }

  describe('authority mapping', () => {
    it('creates the exact upstream object and returns the stored record', async () => {
      const s = open();
      const out = await s.create(rec('10.0.0.1'));
      expect(d.requestsOf('create')[0]!.path).toBe('/apis/networking.k8s.io/v1/ipaddresses');
      expect(d.requestsOf('create')[0]!.body).toEqual({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'IPAddress',
        metadata: {
          name: '10.0.0.1',
          labels: { 'ipaddress.kubernetes.io/ip-family': 'IPv4', 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' },
        },
        spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } }, // group "" omitted, like Go's omitempty
      });
      const stored = d.objects()[0]!;
      expect(out).toEqual({
        name: '10.0.0.1',
        labels: allocatorLabels('IPv4'),
        parentRef: { resource: 'services', namespace: 'default', name: 'web' },
        resourceVersion: stored.metadata.resourceVersion,
        uid: stored.metadata.uid,
        creationTimestamp: stored.metadata.creationTimestamp,
      });
    });

    it('sends `spec: {}` for a null parentRef and lets the server answer', async () => {
      const s = open();
      const err = await s.create(rec('10.0.0.1', 'IPv4', null)).catch((e: unknown) => e);
      expect(d.requestsOf('create')[0]!.body).toMatchObject({ metadata: { name: '10.0.0.1' }, spec: {} });
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as KubernetesApiError).code).toBe(422);
      expect((err as KubernetesApiError).reason).toBe('Invalid');
      expect((err as Error).message).toContain('spec.parentRef: Required value');

      d.requireParentRef = false; // the upstream test entry points' behaviour
      const ok = await s.create(rec('10.0.0.1', 'IPv4', null));
      expect(ok.parentRef).toBeNull();
      expect(await s.get('10.0.0.1')).toMatchObject({ name: '10.0.0.1', parentRef: null });
    });

    it('a credential the server refuses: KubernetesApiError 401 with reason Unauthorized', async () => {
      // Regression: client-node leaves a 401's Status unread, and `reason`
      // was undefined although kube-apiserver always answers reason Unauthorized.
      d.onlyToken = 'another token';
      const s = open({ start: false });
      for (const call of [() => s.get('10.0.0.1'), () => s.create(rec('10.0.0.1')), () => s.delete('10.0.0.1')]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(KubernetesApiError);
        expect(err).toMatchObject({ code: 401, reason: 'Unauthorized' });
        expect((err as Error).message).toMatch(/HTTP 401 Unauthorized/);
        expect((err as Error).message).not.toContain(TEST_TOKEN);
      }
    });

    it('maps 409 AlreadyExists to AlreadyExistsError with the upstream message', async () => {
      const s = open();
      await s.create(rec('2001:db8::1', 'IPv6'));
      const err = await s.create(rec('2001:db8::1', 'IPv6')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AlreadyExistsError);
      expect((err as Error).message).toBe('ipaddresses.networking.k8s.io "2001:db8::1" already exists');
    });

    it('gets from the authority: the record, or undefined on 404', async () => {
      const s = open();
      await s.create(rec('10.0.0.7'));
      expect((await s.get('10.0.0.7'))?.name).toBe('10.0.0.7');
      expect(await s.get('10.0.0.8')).toBeUndefined();
      expect(d.requestsOf('get').map((r) => r.path)).toEqual([
        '/apis/networking.k8s.io/v1/ipaddresses/10.0.0.7',
        '/apis/networking.k8s.io/v1/ipaddresses/10.0.0.8',
      ]);
    });

    it('deletes; a missing name is NotFoundError', async () => {
      const s = open();
      await s.create(rec('10.0.0.1'));
      await s.delete('10.0.0.1');
      expect(d.objects()).toEqual([]);
      const err = await s.delete('10.0.0.1').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NotFoundError);
      expect((err as Error).message).toBe('ipaddresses.networking.k8s.io "10.0.0.1" not found');
    });

    // Regression: a 429 (API Priority and Fairness turning a request away) failed the call at once;
    // client-go sends it again after the server's Retry-After.
    it('sends a throttled request (429) again after the wait the server asks for; close() ends the wait', async () => {
      const s = open();
      d.failNext('create', 2, 429); // TooManyRequests, retryAfterSeconds 1
      await s.create(rec('10.0.0.1'));
      expect(d.requestsOf('create').length).toBe(3);
      expect(d.objects().map((o) => o.metadata.name)).toEqual(['10.0.0.1']);
      d.failNext('delete', 1, 429);
      const deleting = s.delete('10.0.0.1').catch((e: unknown) => e);
      await until(() => d.requestsOf('delete').length === 1, 'the throttled delete');
      s.close();
      expect(await deleting).toBeInstanceOf(ErrDestroyed);
      await new Promise((r) => setTimeout(r, 1200)); // past the server's wait: nothing is sent again
      expect(d.requestsOf('delete').length).toBe(1);
    });

    it('passes 5xx through as KubernetesApiError with the address and status, never headers or the token', async () => {
      const s = open({}, secure);
      // answered 500 twice: read back after each (not there), sent once more, and the 500 stands
      secure.failNext('create', 2, 500, 'etcdserver: request timed out');
      const e1 = (await s.create(rec('10.0.0.1')).catch((e: unknown) => e)) as KubernetesApiError;
      expect(e1).toBeInstanceOf(KubernetesApiError);
      expect(e1).not.toBeInstanceOf(IPAllocatorError);
      expect(e1.code).toBe(500);
      expect(e1.reason).toBe('InternalError');
      expect(e1.message).toBe(
        'create ipaddresses.networking.k8s.io "10.0.0.1": HTTP 500 InternalError: Internal error occurred: etcdserver: request timed out',
      );
      secure.failNext('delete', 1, 503);
      secure.failNext('get', 1, 503); // the delete's read-back
      const e2 = (await s.delete('10.0.0.1').catch((e: unknown) => e)) as KubernetesApiError;
      expect([e2.code, e2.reason]).toEqual([503, 'ServiceUnavailable']);
      expect(e2.message).toContain('"10.0.0.1"');
      secure.failNext('get', 1, 502); // a 504 Timeout names a wait (Retry-After) and is sent again: test/kubernetes-retry.test.ts
      const e3 = (await s.get('10.0.0.1').catch((e: unknown) => e)) as KubernetesApiError;
      expect(e3.code).toBe(502);
      for (const e of [e1, e2, e3]) {
        const everything = `${e.message} ${e.stack} ${JSON.stringify(e)} ${String(e.cause)}`;
        expect(everything).not.toContain(TEST_TOKEN);
        expect(everything.toLowerCase()).not.toContain('headers');
      }
      // The token did reach the server.
      expect(secure.requests.every((r) => r.authorization === `Bearer ${TEST_TOKEN}`)).toBe(true);
    });

    it('reports a refused connection as KubernetesApiError without an HTTP code', async () => {
      const url = d.url;
      await d.close();
      const s = new KubernetesStore(kubeConfigFor(url), { start: false });
      stores.push(s);
      const err = (await s.create(rec('10.0.0.1')).catch((e: unknown) => e)) as KubernetesApiError;
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect(err.code).toBeUndefined();
      expect(err.message).toMatch(/^create ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": /);
      expect(err.message).not.toContain(TEST_TOKEN);
      d = await ApiServerDouble.start(); // for afterEach
    });

    it('talks v1beta1 when asked', async () => {
      const s = open({ apiVersion: 'v1beta1' });
      await s.waitForSync();
      await s.create(rec('10.0.0.1'));
      expect(d.requestsOf('create')[0]!.path).toBe('/apis/networking.k8s.io/v1beta1/ipaddresses');
      expect(d.requestsOf('create')[0]!.body).toMatchObject({ apiVersion: 'networking.k8s.io/v1beta1', kind: 'IPAddress' });
      expect(d.requestsOf('list')[0]!.path).toBe('/apis/networking.k8s.io/v1beta1/ipaddresses');
      await until(() => d.requestsOf('watch').length > 0);
      expect(d.requestsOf('watch')[0]!.path).toBe('/apis/networking.k8s.io/v1beta1/ipaddresses');
    });

    it('loads a kubeconfig file', async () => {
      const file = writeKubeconfig(d.url);
      try {
        const kc = new KubeConfig();
        kc.loadFromFile(file.path);
        const s = new KubernetesStore(kc, { start: false });
        stores.push(s);
        await s.create(rec('10.0.0.1'));
        expect(d.objects().map((o) => o.metadata.name)).toEqual(['10.0.0.1']);
      } finally {
        file.remove();
      }
    });
  });

  describe('cache', () => {
    it('syncs from a list, then replays existing records to late subscribers', async () => {
      d.insert(foreign('10.0.0.1'));
      d.insert(foreign('10.0.0.2', allocatorLabels('IPv6')));
      const s = open({ start: false });
      expect(s.cache.hasSynced()).toBe(false);
      expect(s.state).toBe('syncing');
      s.start();
      await s.waitForSync();
      expect(s.cache.hasSynced()).toBe(true);
      expect(s.state).toBe('synced');
      expect(cacheNames(s.cache)).toEqual(['10.0.0.1', '10.0.0.2']);
      expect(s.cache.size).toBe(2);
      expect(s.cache.list(allocatorLabels('IPv6')).map((r) => r.name)).toEqual(['10.0.0.2']);
      expect(s.cache.get('10.0.0.1')?.parentRef).toEqual({ resource: 'services', namespace: 'other', name: 'x' });
      const m = new Mirror();
      s.cache.subscribe(m);
      expect(m.log.sort()).toEqual(['+10.0.0.1', '+10.0.0.2']);
    });

    // Regression: a watcher that threw during its replay was reported (onWatcherError) and left
    // subscribed, where the StoreCache contract (and MemoryStore) leaves it unsubscribed and
    // hands the error to the caller
    it('a watcher whose replay throws is not subscribed; the error goes to the subscriber, as MemoryStore does', async () => {
      d.insert(foreign('10.0.0.1'));
      const reported: unknown[] = [];
      const s = open({ onWatcherError: (e: unknown) => reported.push(e) });
      await s.waitForSync();
      const refusal = new Error('not now');
      const heard: string[] = [];
      expect(() =>
        s.cache.subscribe({
          onAdd: (r) => {
            heard.push(r.name);
            throw refusal;
          },
          onDelete: () => {},
        }),
      ).toThrow(refusal);
      d.insert(foreign('10.0.0.2'));
      await until(() => s.cache.get('10.0.0.2') !== undefined);
      expect([heard, reported]).toEqual([['10.0.0.1'], []]);
      s.close();
    });

    // Regression: an onStateChange listener that threw was swallowed without a word (a health
    // check or metric of the user's failing unseen), where a store watcher that throws is
    // reported to onWatcherError.
    it('an onStateChange listener that throws is reported to onWatcherError, and the store goes on', async () => {
      const reported: unknown[] = [];
      const s = open({ start: false, onWatcherError: (e: unknown) => reported.push(e) });
      const boom = new Error('listener failed');
      const heard: string[] = [];
      s.onStateChange((state) => {
        heard.push(state);
        throw boom;
      });
      s.start();
      await s.waitForSync();
      expect([heard, reported]).toEqual([['synced'], [boom]]);
      d.insert(foreign('10.0.0.3'));
      await until(() => s.cache.get('10.0.0.3') !== undefined, 'the event after the listener threw');
      s.close();
      expect([heard, reported]).toEqual([
        ['synced', 'stopped'],
        [boom, boom],
      ]);
    });

    it('pages the initial list', async () => {
      for (let i = 1; i <= 5; i++) d.insert(foreign(`10.0.0.${i}`));
      const s = open({ pageSize: 2 });
      await s.waitForSync();
      expect(s.cache.size).toBe(5);
      const lists = d.requestsOf('list');
      expect(lists.map((r) => r.query.limit)).toEqual(['2', '2', '2']);
      expect(lists[1]!.query.continue).toBeTruthy();
    });

    // a broken server or proxy: a token it gave before, or empty pages each with a new token
    it.each([
      {
        name: 'whose continue token comes back',
        breakIt: (dbl: ApiServerDouble) => dbl.repeatContinue('ipaddresses'),
        says: 'the API server answered a continue token it had given before; the listing would never end',
        followed: 1,
      },
      {
        name: 'answered page after page with no items and a new continue token, after ten such pages',
        breakIt: (dbl: ApiServerDouble) => dbl.emptyPagesForEver('ipaddresses'),
        says: 'the API server answered 10 pages in a row without an item, each with a new continue token; the listing would never end',
        followed: 10,
      },
    ])('fails a listing $name (lastError says why) instead of paging for ever', async ({ breakIt, says, followed }) => {
      for (let i = 1; i <= 5; i++) d.insert(foreign(`10.0.0.${i}`));
      breakIt(d);
      const s = open({ pageSize: 2 });
      // the listing fails however long the machine takes to page through it; only then is the wait timed
      await until(() => s.lastError !== undefined, 'the listing to fail');
      const err = await s.waitForSync({ timeoutMs: 300 }).then(
        () => undefined,
        (e: unknown) => e as SyncTimeoutError,
      );
      expect(err).toBeInstanceOf(SyncTimeoutError);
      expect(err!.lastError?.message).toBe(`list ipaddresses.networking.k8s.io: ${says}`);
      const lists = d.requestsOf('list');
      // the tokens followed, then given up
      expect(lists.slice(0, followed + 1).map((r) => r.query.continue === undefined)).toEqual([true, ...Array(followed).fill(false)]);
      expect(lists[followed + 1]?.query.continue).toBeUndefined(); // the next listing (after the backoff) starts again
    });

    it('shows records created and deleted through another client, via the watch', async () => {
      const s = open();
      await s.waitForSync();
      const m = new Mirror();
      s.cache.subscribe(m);
      const other = kubeConfigFor(d.url).makeApiClient(NetworkingV1Api);
      await other.createIPAddress({ body: foreign('10.0.0.9') as never });
      await until(() => s.cache.get('10.0.0.9') !== undefined);
      expect(m.log).toEqual(['+10.0.0.9']);
      await other.deleteIPAddress({ name: '10.0.0.9' });
      await until(() => s.cache.get('10.0.0.9') === undefined);
      expect(m.log).toEqual(['+10.0.0.9', '-10.0.0.9']);
      d.insert(foreign('10.0.0.10'));
      d.modify('10.0.0.10', (o) => (o.metadata.labels = { ...o.metadata.labels, extra: '1' }));
      await until(() => s.cache.get('10.0.0.10')?.labels.extra === '1');
      expect(m.log.slice(2)).toEqual(['+10.0.0.10', '+10.0.0.10']); // an update is an add again
      await converged(s, m);
    });

    it('asks for bookmarks and resumes from them after a clean close, without re-listing', async () => {
      const s = open();
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      expect(d.requestsOf('watch')[0]!.query.allowWatchBookmarks).toBe('true');
      d.insert(foreign('10.0.0.1'));
      await until(() => s.cache.size === 1);
      d.bookmark();
      d.closeWatches();
      await until(() => d.requestsOf('watch').length === 2 && d.openWatches() === 1);
      expect(d.requestsOf('watch')[1]!.query.resourceVersion).toBe(d.resourceVersion);
      expect(s.stats.lists).toBe(1);
    });

    // Regression: an event reached a watcher that an earlier watcher unsubscribed during it
    // (MemoryStore's cache skips it: nothing reaches a watcher once its unsubscribe returned)
    it('a watcher unsubscribed by an earlier watcher during an event is not given that event', async () => {
      const { s } = await watched();
      const heard: string[] = [];
      const victim: string[] = [];
      let off: () => void = () => {};
      s.cache.subscribe({
        onAdd: (r) => {
          heard.push(r.name);
          off();
        },
        onDelete: () => {},
      });
      off = s.cache.subscribe({ onAdd: (r) => victim.push(r.name), onDelete: () => {} });
      d.insert(foreign('10.0.0.9'));
      await until(() => heard.length === 1);
      expect([heard, victim]).toEqual([['10.0.0.9'], []]);
      s.close();
    });

    // Regression: a watcher unsubscribed and subscribed again by an earlier watcher during an
    // event got that onAdd twice (its replay, then the event itself); and one watcher subscribed
    // twice was one subscription, where MemoryStore's cache counts two.
    it('a watcher subscribed again during an event gets it once, in its replay; one subscribed twice gets each change twice', async () => {
      const { s } = await watched();
      const heard: string[] = [];
      const again: string[] = [];
      const againWatcher = {
        onAdd: (r: { name: string }) => again.push(`+${r.name}`),
        onDelete: (r: { name: string }) => again.push(`-${r.name}`),
      };
      let off: () => void = () => {};
      s.cache.subscribe({
        onAdd: (r) => {
          heard.push(r.name);
          if (heard.length !== 1) return;
          off();
          off = s.cache.subscribe(againWatcher);
        },
        onDelete: (r) => heard.push(`-${r.name}`),
      });
      off = s.cache.subscribe(againWatcher);
      const twice: string[] = [];
      const twiceWatcher = {
        onAdd: (r: { name: string }) => twice.push(`+${r.name}`),
        onDelete: (r: { name: string }) => twice.push(`-${r.name}`),
      };
      const offFirst = s.cache.subscribe(twiceWatcher);
      s.cache.subscribe(twiceWatcher);
      d.insert(foreign('10.0.0.9'));
      await until(() => twice.length === 2);
      offFirst();
      d.remove('10.0.0.9');
      await until(() => heard.length === 2);
      expect([again, twice]).toEqual([
        ['+10.0.0.9', '-10.0.0.9'],
        ['+10.0.0.9', '+10.0.0.9', '-10.0.0.9'],
      ]);
      s.close();
    });

    // Regression: KubernetesStore.create's type required labels, which MemoryStore's does not
    // (labels are optional on an IPAddress): code written against one store did not compile
    // against the other
    it('creates a record without labels, as MemoryStore does: stored with none', async () => {
      const { s } = await watched();
      const created = await s.create({ name: '10.0.0.4', parentRef: SVC });
      expect(created.labels).toEqual({});
      expect(s.cache.get('10.0.0.4')?.labels).toEqual({});
      s.close();
    });

    it('applies its own writes at once (read your writes) and ignores the late watch events', async () => {
      const { s, m } = await watched();
      d.holdWatches();
      await s.create(rec('10.0.0.1'));
      expect(s.cache.get('10.0.0.1')).toBeDefined();
      await s.create(rec('10.0.0.2'));
      await s.delete('10.0.0.1');
      expect(s.cache.get('10.0.0.1')).toBeUndefined();
      expect(cacheNames(s.cache)).toEqual(['10.0.0.2']);
      d.releaseWatches(); // ADDED .1, ADDED .2, DELETED .1 arrive now, all stale
      await until(() => d.requestsOf('watch').length >= 1 && s.stats.watches >= 1);
      d.insert(foreign('10.0.0.3')); // a marker: once it shows, the stale events have been seen
      await until(() => s.cache.get('10.0.0.3') !== undefined);
      expect(m.log).toEqual(['+10.0.0.1', '+10.0.0.2', '-10.0.0.1', '+10.0.0.3']);
      await converged(s, m);
    });

    it('can leave its writes to the watch (readYourWrites: false)', async () => {
      const s = open({ readYourWrites: false });
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      d.holdWatches();
      await s.create(rec('10.0.0.1'));
      expect(s.cache.get('10.0.0.1')).toBeUndefined();
      d.releaseWatches();
      await until(() => s.cache.get('10.0.0.1') !== undefined);
    });

    it('filters by family / label selector on list and watch', async () => {
      d.insert(foreign('10.0.0.1'));
      d.insert(foreign('2001:db8::1', allocatorLabels('IPv6')));
      const s = open({ family: 'IPv6' });
      await s.waitForSync();
      expect(cacheNames(s.cache)).toEqual(['2001:db8::1']);
      expect(d.requestsOf('list')[0]!.query.labelSelector).toBe('ipaddress.kubernetes.io/ip-family=IPv6');
      await until(() => d.openWatches() === 1);
      expect(d.requestsOf('watch')[0]!.query.labelSelector).toBe('ipaddress.kubernetes.io/ip-family=IPv6');
      d.insert(foreign('10.0.0.2'));
      d.insert(foreign('2001:db8::2', allocatorLabels('IPv6')));
      await s.create(rec('10.0.0.3')); // our own write outside the selector stays out of the cache
      await until(() => s.cache.size === 2);
      expect(cacheNames(s.cache)).toEqual(['2001:db8::1', '2001:db8::2']);
    });

    it('a selector comparing integers (">", "<") is sent as written and kept on watch events too', async () => {
      const tier = (ip: string, t: string) => foreign(ip, { ...allocatorLabels('IPv4'), tier: t });
      d.insert(tier('10.0.0.1', '1'));
      d.insert(tier('10.0.0.2', '5'));
      d.insert(tier('10.0.0.3', 'gold')); // no integer: matches neither
      const s = open({ labelSelector: 'tier>2' });
      await s.waitForSync();
      expect(cacheNames(s.cache)).toEqual(['10.0.0.2']);
      expect(d.requestsOf('list')[0]!.query.labelSelector).toBe('tier>2');
      await until(() => d.openWatches() === 1);
      await s.create({ name: '10.0.0.4', labels: { ...allocatorLabels('IPv4'), tier: '2' }, parentRef: SVC }); // not > 2: stays out
      d.insert(tier('10.0.0.5', '10'));
      await until(() => s.cache.size === 2);
      expect(cacheNames(s.cache)).toEqual(['10.0.0.2', '10.0.0.5']);
    });
  });

  describe('recovery', () => {
    it('while a throttled list (429) waits to be sent again, lastError and SyncTimeoutError say so', async () => {
      // Regression: both said "no list answered yet" until the retries ran out.
      d.failNext('list', 1, 429); // TooManyRequests, retryAfterSeconds 1
      const retried = d.holdReply('list'); // the list sent again after that wait: answered when released below
      const s = open();
      // the 429 is heard however long the machine takes to answer it; only then is the wait timed
      await until(() => s.stats.errors >= 1, 'the 429 to be heard');
      const e = await s.waitForSync({ timeoutMs: 300 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(SyncTimeoutError);
      expect((e as SyncTimeoutError).lastError).toBeInstanceOf(KubernetesApiError);
      expect((e as SyncTimeoutError).lastError).toMatchObject({ code: 429 });
      expect((e as Error).message).toMatch(/last error: list ipaddresses\.networking\.k8s\.io: HTTP 429/);
      expect(s.state).toBe('syncing');
      retried.release();
      await s.waitForSync(); // the same list, sent again after the server's wait
      expect([d.requestsOf('list').length, s.stats.lists, s.lastError]).toEqual([2, 1, undefined]);
    });

    it('retries a failing first list with backoff and reports the error', async () => {
      d.failNext('list', 3, 503, 'apiserver starting');
      const states: string[] = [];
      const s = open({ start: false });
      s.onStateChange((st, err) => states.push(err ? `${st}:${(err as KubernetesApiError).code}` : st));
      s.start();
      await s.waitForSync();
      expect(d.requestsOf('list').length).toBe(4);
      expect(states).toEqual(['syncing:503', 'syncing:503', 'syncing:503', 'synced']);
      expect(s.stats.errors).toBe(3);
      expect(s.lastError).toBeUndefined();
    });

    it('converges after a dropped watch (changes made while it was away included)', async () => {
      for (let i = 1; i <= 3; i++) d.insert(foreign(`10.0.0.${i}`));
      const { s, m } = await watched();
      d.holdWatches(); // the events below are lost with the connection
      d.remove('10.0.0.1');
      d.insert(foreign('10.0.0.4'));
      d.dropWatches();
      await converged(s, m);
      await until(() => d.requestsOf('watch').length >= 2 && s.state === 'synced');
    });

    it('re-lists after compaction (410 Expired) and delivers the differences', async () => {
      for (let i = 1; i <= 3; i++) d.insert(foreign(`10.0.0.${i}`));
      const { s, m } = await watched();
      await pastVeryShortWatch();
      const states: string[] = [];
      s.onStateChange((st) => states.push(st));
      d.holdWatches();
      d.remove('10.0.0.2');
      d.insert(foreign('10.0.0.5'));
      d.modify('10.0.0.3', (o) => (o.metadata.labels = { ...o.metadata.labels, x: 'y' }));
      d.compact();
      d.closeWatches({ discardQueued: true }); // held events lost; resuming from the old resourceVersion → ERROR 410
      await converged(s, m);
      await until(() => s.state === 'synced' && s.stats.expired >= 1);
      expect(s.stats.lists).toBe(2);
      expect(states).toContain('relisting');
      expect(s.cache.get('10.0.0.3')?.labels.x).toBe('y');
      expect(m.log.slice(3).sort()).toEqual(['+10.0.0.3', '+10.0.0.5', '-10.0.0.2']);
    });

    it('after an etcd restore without --bump-revision (revisions went back) the re-list is the truth, and later events apply', async () => {
      // Regression: the re-list kept every cached record newer than the
      // list (all of them, after the revisions went back) and ignored later events for them.
      for (let i = 1; i <= 3; i++) d.insert(foreign(`10.0.0.${i}`));
      const { s, m } = await watched();
      const backup = d.backup();
      d.insert(foreign('10.0.0.4'));
      await s.create(rec('10.0.0.5')); // our own write, newer than the backup
      d.modify('10.0.0.2', (o) => (o.metadata.labels = { ...o.metadata.labels, x: 'after' }));
      await until(() => s.cache.get('10.0.0.4') !== undefined && s.cache.get('10.0.0.2')?.labels.x === 'after');
      d.restoreBackup(backup); // the watch ends; resuming past the backup's revision answers 504
      await converged(s, m);
      expect(s.cache.get('10.0.0.2')?.labels.x).toBeUndefined(); // the restored object, not the newer one held
      d.remove('10.0.0.1'); // events after the restore, at revisions below those held before it
      d.insert(foreign('10.0.0.9'));
      await converged(s, m);
      expect(cacheNames(s.cache)).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.9']);
    });

    it('re-lists when the watch request itself fails with a 5xx', async () => {
      const s = open();
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      d.failNext('watch', 2, 500);
      d.dropWatches();
      d.insert(foreign('10.0.0.1'));
      await converged(s);
      await until(() => d.openWatches() === 1);
      expect(s.stats.errors).toBeGreaterThanOrEqual(2);
    });

    // client-go's reflector sends a refused or throttled watch again from where it stopped
    // (isWatchErrorRetriable): an API server's restart must not make every client list everything.
    it('after the API server restarts, the watch resumes from where it stopped: no re-list, nothing missed', async () => {
      for (let i = 1; i <= 3; i++) d.insert(foreign(`10.0.0.${i}`));
      const { s, m } = await watched();
      await pastVeryShortWatch();
      const states: string[] = [];
      s.onStateChange((st) => states.push(st));
      await d.stopListening(); // the open watch is dropped; the next requests are refused
      await until(() => s.stats.errors >= 2 && s.state === 'relisting', 'refused watches');
      expect(s.lastError?.message).toMatch(/ECONNREFUSED/);
      d.remove('10.0.0.1'); // changes made while it was down (another API server, say)
      d.insert(foreign('10.0.0.4'));
      await d.listenAgain();
      await converged(s, m);
      await until(() => s.state === 'synced' && d.openWatches() === 1, 'the watch back');
      expect(s.stats.lists).toBe(1);
      expect(s.lastError).toBeUndefined();
      expect(d.requestsOf('watch').at(-1)!.query.resourceVersion).not.toBe('0');
      expect(states.filter((st, i) => st !== states[i - 1])).toEqual(['relisting', 'synced']); // told once per failure
      expect(m.log.slice(3).sort()).toEqual(['+10.0.0.4', '-10.0.0.1']);
    });

    it.each([
      [429, 'throttled'],
      [503, 'unavailable'],
      [502, 'behind a proxy answering Bad Gateway'],
    ])('a watch answered %i (%s) is asked again from where it stopped, without a re-list', async (code) => {
      const { s, m } = await watched();
      await pastVeryShortWatch();
      d.failNext('watch', 2, code);
      d.closeWatches(); // the server ends the watch; the next two requests to watch again are throttled
      d.insert(foreign('10.0.0.1'));
      await converged(s, m);
      await until(() => s.state === 'synced' && d.openWatches() === 1, 'the watch back');
      expect(d.requestsOf('watch').length).toBe(4);
      expect(s.stats.errors).toBe(2);
      expect(s.stats.lists).toBe(1);
      expect(s.lastError).toBeUndefined();
    });

    it('a watch the server ends (or cuts) within a second of its answer, with no event, is a failure: lastError, then a re-list', async () => {
      // Regression: such a watch was resumed for ever, the cache frozen while the state said
      // synced (client-go calls it a "very short watch" and re-lists).
      const s = open();
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      const states: string[] = [];
      s.onStateChange((st, err) => states.push(`${st}: ${err?.message ?? ''}`));
      d.holdWatches();
      d.insert(foreign('10.0.0.1')); // held, then lost with the connection: it arrives through the re-list
      d.dropWatches();
      await until(() => s.stats.lists >= 2 && s.cache.get('10.0.0.1') !== undefined, 'the re-list');
      expect(states[0]).toMatch(
        /^relisting: watch ipaddresses\.networking\.k8s\.io: very short watch: the API server \(or a proxy in front of it\) ended the watch within 1 s of its answer, with no event/,
      );
      await until(() => s.state === 'synced');
    });

    it('a quiet watch stays open past 30 s, so the bookmarks kube-apiserver sends each minute reach it', { timeout: 120_000 }, async () => {
      // Regression: client-node 2.x's Watch ended a watch quiet for 30 s, before the API
      // server's first bookmark: every quiet watch was re-opened from the same old resourceVersion.
      const s = open();
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      await new Promise((resolve) => setTimeout(resolve, 35_000)); // real time: client-node's own timer
      d.bookmark();
      expect([d.openWatches(), d.requestsOf('watch').length, s.stats.watches]).toEqual([1, 1, 1]);
      d.insert(foreign('10.0.0.1'));
      await until(() => s.cache.get('10.0.0.1') !== undefined, 'the event on the same watch');
      expect(d.requestsOf('watch').length).toBe(1);
    });

    it('a watch that loses its connection after the answer resumes from where it stopped', async () => {
      d.insert(foreign('10.0.0.1'));
      const { s, m } = await watched();
      await pastVeryShortWatch();
      d.holdWatches(); // the events below are lost with the connection…
      d.remove('10.0.0.1');
      d.insert(foreign('10.0.0.2'));
      d.dropWatches();
      await converged(s, m); // …and sent again to the watch resumed from the last resourceVersion
      expect(s.stats.lists).toBe(1);
      expect(s.state).toBe('synced');
    });

    it('catches up under a lagging watch', async () => {
      const s = open();
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      d.setWatchLag(15);
      for (let i = 1; i <= 10; i++) d.insert(foreign(`10.0.0.${i}`));
      // The authority has them before the cache does.
      expect(await s.get('10.0.0.10')).toBeDefined();
      const m = new Mirror();
      s.cache.subscribe(m);
      await converged(s, m);
      d.setWatchLag(0);
    });

    it('restarts in the middle of a stream of creates and deletes without losing or inventing records', async () => {
      const s = open();
      await s.waitForSync();
      const m = new Mirror();
      s.cache.subscribe(m);
      const other = kubeConfigFor(d.url).makeApiClient(NetworkingV1Api);
      for (let i = 1; i <= 60; i++) {
        if (i % 2 === 0) await s.create(rec(`10.1.0.${i}`));
        else await other.createIPAddress({ body: foreign(`10.1.0.${i}`) as never });
        if (i % 7 === 0) await s.delete(`10.1.0.${i - 1}`);
        if (i % 9 === 0) d.remove(`10.1.0.${i - 2}`);
        if (i === 15) d.dropWatches();
        if (i === 25) {
          d.holdWatches();
          d.compact();
        }
        if (i === 30) d.closeWatches();
        if (i === 31) d.releaseWatches();
        if (i === 40) d.failNext('watch', 1, 500);
        if (i === 41) d.dropWatches();
        if (i === 50) d.setWatchLag(5);
        if (i === 55) d.dropWatches();
      }
      d.setWatchLag(0);
      await converged(s, m);
      for (const r of s.cache.list()) {
        const o = d.objects().find((x) => x.metadata.name === r.name)!;
        expect(r.uid).toBe(o.metadata.uid);
        expect(r.resourceVersion).toBe(o.metadata.resourceVersion);
      }
    });

    it('close() stops the informer and leaves no watch open', async () => {
      const { s, m } = await watched();
      s.close();
      expect(s.state).toBe('stopped');
      await until(() => d.openWatches() === 0);
      d.insert(foreign('10.0.0.1'));
      expect(m.log).toEqual([]);
    });

    it('rejects waitForSync with ErrDestroyed when closed before the first list', async () => {
      d.setLatency(50, 'list');
      const s = open();
      const p = s.waitForSync();
      s.close();
      await expect(p).rejects.toThrow(ErrDestroyed);
      await expect(p).rejects.toThrow('KubernetesStore has been closed');
    });
  });

  describe('a reply racing the watch (read-your-writes never moves the cache backwards)', () => {
    it('a create reply arriving after the watch showed the object deleted does not bring it back', async () => {
      const { s, m } = await watched();
      const held = d.holdReply('create');
      const creating = s.create(rec('10.0.0.1'));
      await held.applied; // stored on the server, ADDED sent on the watch; the reply waits
      expect(d.remove('10.0.0.1')).toBe(true); // another client deletes it: DELETED follows
      await watchCaughtUp(s); // ADDED and DELETED applied
      expect(s.cache.get('10.0.0.1')).toBeUndefined();
      held.release();
      const created = await creating;
      expect(created.name).toBe('10.0.0.1'); // the caller still learns its create succeeded…
      expect(s.cache.get('10.0.0.1')).toBeUndefined(); // …but the cache stays where the watch left it
      await watchCaughtUp(s);
      expect(s.cache.get('10.0.0.1')).toBeUndefined();
      expect(m.log).toEqual(['+10.0.0.1', '-10.0.0.1', '+10.255.255.1', '+10.255.255.2']);
      await converged(s, m);
    });

    it('a create reply sent before an etcd restore and arriving after its re-list adds nothing the restored server lacks', async () => {
      const s = open();
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      const backup = d.backup();
      const held = d.holdReply('create');
      const creating = s.create(rec('10.0.0.7'));
      await held.applied; // stored on the server; the reply waits
      await until(() => s.cache.get('10.0.0.7') !== undefined); // the watch showed it (its revision)
      d.restoreBackup(backup); // …and the server goes back to before it
      await until(() => s.stats.lists >= 2 && s.state === 'synced' && s.cache.get('10.0.0.7') === undefined);
      held.release();
      expect((await creating).name).toBe('10.0.0.7'); // the caller learns what the server answered…
      expect(s.cache.get('10.0.0.7')).toBeUndefined(); // …but the cache follows the restored server
      await converged(s);
    });

    it('a delete reply sent before an etcd restore and arriving after its re-list removes nothing the restored server holds', async () => {
      const s = open();
      await s.waitForSync();
      await until(() => d.openWatches() === 1);
      await s.create(rec('10.0.0.8'));
      const backup = d.backup(); // holds 10.0.0.8
      const held = d.holdReply('delete');
      const deleting = s.delete('10.0.0.8');
      await held.applied; // deleted on the server; the reply waits
      await until(() => s.cache.get('10.0.0.8') === undefined); // the watch showed the delete
      d.restoreBackup(backup); // …and the server goes back to before it
      await until(() => s.stats.lists >= 2 && s.state === 'synced' && s.cache.get('10.0.0.8') !== undefined);
      held.release();
      await deleting; // the caller learns what the server answered…
      expect(s.cache.get('10.0.0.8')?.name).toBe('10.0.0.8'); // …but the cache follows the restored server
      await converged(s);
    });

    it('a create reply arriving before its watch event is applied at once, and the event is not delivered twice', async () => {
      const { s, m } = await watched();
      d.holdWatches();
      const created = await s.create(rec('10.0.0.1'));
      expect(s.cache.get('10.0.0.1')).toEqual(created);
      d.releaseWatches();
      await watchCaughtUp(s);
      expect(m.log).toEqual(['+10.0.0.1', '+10.255.255.1']);
      await converged(s, m);
    });

    // kube-apiserver's IPAddress registry answers a finished DELETE with a Status naming the uid.
    it('a delete reply arriving after the watch showed the name re-created keeps the new object and does not block it', async () => {
      const { s, m } = await watched();
      const mine = await s.create(rec('10.0.0.1'));
      const held = d.holdReply('delete');
      const deleting = s.delete('10.0.0.1');
      await held.applied; // deleted on the server, DELETED sent; the reply waits
      const again = d.insert(foreign('10.0.0.1')) as KubeObject; // another client re-creates the name
      await until(() => s.cache.get('10.0.0.1')?.uid === again.metadata.uid, 'the re-created object in the cache');
      held.release();
      await deleting;
      expect(s.cache.get('10.0.0.1')?.uid).toBe(again.metadata.uid);
      expect(s.cache.get('10.0.0.1')?.uid).not.toBe(mine.uid);
      await watchCaughtUp(s);
      expect(s.cache.get('10.0.0.1')?.uid).toBe(again.metadata.uid);
      // Not blocked either: a re-list (the watch ends, the next watch request fails) still shows it.
      d.failNext('watch', 1, 500);
      d.closeWatches();
      await until(() => s.stats.lists === 2 && s.state === 'synced', 'the re-list');
      expect(s.cache.get('10.0.0.1')?.uid).toBe(again.metadata.uid);
      expect(m.log.slice(0, 3)).toEqual(['+10.0.0.1', '-10.0.0.1', '+10.0.0.1']);
      await converged(s, m);
    });

    // Something in front of the API server (a proxy, a broken server) answers a DELETE with a
    // Status Success that no delete stands behind: the object is still there. The store takes the
    // answer, but a list sent afterwards — a consistent read, which would not show an object
    // deleted before it — shows the object again: the cache must take it back, not skip it for
    // ever as a list that predates the delete.
    it('a re-list sent after a delete answered Success shows the object again when the server still holds it', async () => {
      const { s, m } = await watched();
      const mine = await s.create(rec('10.0.0.1'));
      d.proxyAnswerNext('delete', 'ipaddresses', {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name: '10.0.0.1', uid: mine.uid },
      });
      await s.delete('10.0.0.1');
      expect(d.objects().map((o) => o.metadata.name)).toEqual(['10.0.0.1']); // never deleted
      d.failNext('watch', 1, 500);
      d.closeWatches();
      await until(() => s.stats.lists === 2 && s.state === 'synced', 'the re-list');
      expect(s.cache.get('10.0.0.1')?.uid).toBe(mine.uid);
      await converged(s, m);
    });

    it('a delete reply is applied at once when it arrives before the watch event', async () => {
      const { s, m } = await watched();
      await s.create(rec('10.0.0.1'));
      d.holdWatches();
      await s.delete('10.0.0.1');
      expect(s.cache.get('10.0.0.1')).toBeUndefined();
      d.releaseWatches();
      await watchCaughtUp(s);
      expect(m.log).toEqual(['+10.0.0.1', '-10.0.0.1', '+10.255.255.1']);
      await converged(s, m);
    });

    // Another controller's finalizer (Kubernetes puts none on IPAddresses) holds the object: the
    // server only marks it for deletion and answers with the object, not a Status. Upstream's
    // lister keeps such an object, so its address stays taken until it is really gone.
    it('a delete of an object a finalizer holds leaves it in the cache until the watch reports it gone', async () => {
      const { s, m } = await watched();
      await s.create(rec('10.0.0.1'));
      d.modify('10.0.0.1', (o) => (o.metadata.finalizers = ['example.com/hold']));
      await until(() => s.cache.get('10.0.0.1')?.resourceVersion === d.resourceVersion, 'the finalizer in the cache');
      await s.delete('10.0.0.1');
      expect(s.cache.get('10.0.0.1')?.name).toBe('10.0.0.1');
      await until(() => s.cache.get('10.0.0.1')?.resourceVersion === d.resourceVersion, 'the deletionTimestamp in the cache');
      await watchCaughtUp(s);
      expect(s.cache.get('10.0.0.1')?.name).toBe('10.0.0.1');
      d.modify('10.0.0.1', (o) => (o.metadata.finalizers = []));
      await until(() => s.cache.get('10.0.0.1') === undefined, 'the DELETED event');
      expect(m.log).toEqual(['+10.0.0.1', '+10.0.0.1', '+10.0.0.1', '+10.255.255.1', '-10.0.0.1']);
      await converged(s, m);
    });

    it('reconcile reports a leak a finalizer holds as held, not deleted: its address stays taken', async () => {
      const { s } = await watched();
      await s.create(rec('10.0.0.1'));
      await s.create(rec('10.0.0.2'));
      d.modify('10.0.0.1', (o) => (o.metadata.finalizers = ['example.com/hold']));
      await until(() => s.cache.get('10.0.0.1')?.resourceVersion === d.resourceVersion, 'the finalizer in the cache');
      const report = await reconcile(s, [], { graceMs: 0, delete: true });
      expect([report.leaks.map((r) => r.name).sort(), report.deleted, report.held]).toEqual([
        ['10.0.0.1', '10.0.0.2'],
        ['10.0.0.2'],
        ['10.0.0.1'],
      ]);
      expect(d.objects().map((o) => [o.metadata.name, typeof o.metadata.deletionTimestamp])).toEqual([['10.0.0.1', 'string']]);
    });
  });

  describe('wrong arguments: InvalidArgumentError / InvalidRecordError before any request', () => {
    it('reads ">" and "<" as apimachinery does: integers (int64) compared; a label that is no integer matches neither; a value that is none refused', () => {
      expect(matchesSelector(parseLabelSelector('x>1'), { x: '2' })).toBe(true);
      expect(matchesSelector(parseLabelSelector('x > 1'), { x: '1' })).toBe(false);
      expect(matchesSelector(parseLabelSelector('x<10'), { x: '9' })).toBe(true);
      expect(matchesSelector(parseLabelSelector('x<10'), { x: 'a' })).toBe(false);
      expect(matchesSelector(parseLabelSelector('x<10'), {})).toBe(false);
      expect(matchesSelector(parseLabelSelector('x>9007199254740992'), { x: '9007199254740993' })).toBe(true); // int64, not a double
      expect(() => parseLabelSelector('x>a')).toThrow(InvalidArgumentError);
      expect(() => parseLabelSelector('x>99999999999999999999')).toThrow(/for '>' and '<' the value must be an integer/);
    });

    it('reads an empty value in a set as apimachinery does: "x in (a,)" is {a, ""}, "x in ()" is {""}', () => {
      // Regression: the empty value was dropped ("x in (,)" refused, a record labelled x="" filtered out).
      expect(matchesSelector(parseLabelSelector('x in (a,)'), { x: '' })).toBe(true);
      expect(matchesSelector(parseLabelSelector('x in (,)'), { x: '' })).toBe(true);
      expect(matchesSelector(parseLabelSelector('x in (,)'), { x: 'a' })).toBe(false);
      expect(matchesSelector(parseLabelSelector('x notin (a,)'), { x: '' })).toBe(false);
      // "()" is {""} (apimachinery's parseValues), and the "(" may follow at once, as there
      expect(matchesSelector(parseLabelSelector('x in ()'), { x: '' })).toBe(true);
      expect(matchesSelector(parseLabelSelector('x in()'), { x: 'a' })).toBe(false);
      expect(matchesSelector(parseLabelSelector('x in(a)'), { x: 'a' })).toBe(true);
    });

    it('refuses a KubeConfig, options, apiVersion, family or labelSelector of the wrong kind', () => {
      const kc = kubeConfigFor(d.url);
      const rows: [string, () => unknown, string][] = [
        ['null KubeConfig', () => new KubernetesStore(null as never, { start: false }), 'kubeConfig must be a KubeConfig'],
        ['a path as KubeConfig', () => new KubernetesStore('/root/.kube/config' as never, { start: false }), '"/root/.kube/config"'],
        // Regression: kubeconfig text (or a token) given where its KubeConfig belongs was quoted whole
        [
          'kubeconfig text as KubeConfig',
          () => new KubernetesStore(`users:\n- name: u\n  user: {token: ${TEST_TOKEN}}\n` as never, { start: false }),
          `got a string of ${TEST_TOKEN.length + 35} characters (not shown: kubeconfig text or a token may be in it; load it with kc.loadFromString(text) and pass the KubeConfig)`,
        ],
        [
          'a token as KubeConfig',
          () => new KubernetesStore(TEST_TOKEN as never, { start: false }),
          `got a string of ${TEST_TOKEN.length} characters (not shown`,
        ],
        [
          'a kubeconfig file read as text, past a thousand characters',
          () => new KubernetesStore(`apiVersion: v1\n# ${'x'.repeat(1220)}\n` as never, { start: false }),
          'got a string of 1,238 characters (not shown',
        ],
        ['null options', () => new KubernetesStore(kc, null as never), 'options must be an object'],
        ['unknown apiVersion', () => new KubernetesStore(kc, { apiVersion: 'v2' as never, start: false }), '"v2"'],
        ['unknown family', () => new KubernetesStore(kc, { family: 'ipv4' as never, start: false }), '"ipv4"'],
        ['non-string labelSelector', () => new KubernetesStore(kc, { labelSelector: 42 as never, start: false }), '42 (number)'],
        [
          'readYourWrites as text',
          () => new KubernetesStore(kc, { readYourWrites: 'false' as never, start: false }),
          'readYourWrites must be true or false',
        ],
        ['an empty KubeConfig', () => new KubernetesStore(new KubeConfig(), { start: false }), 'the KubeConfig has no current cluster'],
        ['malformed labelSelector', () => new KubernetesStore(kc, { labelSelector: 'a=(b', start: false }), 'cannot parse requirement'],
        // Regressions: these were accepted, and the store then failed or misbehaved later
        [
          'a label value the API server refuses',
          () => new KubernetesStore(kc, { labelSelector: 'a in (x,-y)', start: false }),
          'value "-y" of key "a": a valid label must be an empty string or consist of alphanumeric characters',
        ],
        [
          'a label key the API server refuses',
          () => new KubernetesStore(kc, { labelSelector: 'x..y/a=b', start: false }),
          'key "x..y/a": prefix part a lowercase RFC 1123 subdomain must consist of',
        ],
        ['start as text', () => new KubernetesStore(kc, { start: 'false' as never }), 'start must be true or false, got "false"'],
        [
          'onWatcherError as text',
          () => new KubernetesStore(kc, { onWatcherError: 'log' as never, start: false }),
          'onWatcherError must be a function',
        ],
        [
          'client-node’s placeholder (loadFromDefault found no kubeconfig)',
          () => {
            const placeholder = new KubeConfig();
            placeholder.loadFromClusterAndUser(
              { name: 'cluster', server: 'http://localhost:8080', skipTLSVerify: false },
              { name: 'user' },
            );
            return new KubernetesStore(placeholder, { start: false });
          },
          "the KubeConfig is client-node's placeholder (server http://localhost:8080), which loadFromDefault() loads when it finds no kubeconfig",
        ],
        // Regression: fetch refused the URL with a message quoting it, password included, as the
        // store's lastError; a query got the API paths appended after it
        [
          'a server URL with a password',
          () => new KubernetesStore(kubeConfigFor(d.url.replace('http://', 'http://admin:hunter2@')), { start: false }),
          `KubernetesStore: the server URL of the KubeConfig's current cluster "double" (${d.url}) carries credentials`,
        ],
        [
          'a server URL with a query string',
          () => new KubernetesServiceCIDRs(kubeConfigFor(`${d.url}?token=hunter2`), { start: false }),
          `KubernetesServiceCIDRs: the server URL of the KubeConfig's current cluster "double" (${d.url}) has a query string`,
        ],
        // Regression: new URL() trims a space client-node refuses at every request; a number made
        // client-node's requests fail with its own TypeError
        [
          'a server URL with a space before it',
          () => new KubernetesStore(kubeConfigFor(` ${d.url}`), { start: false }),
          `KubernetesStore: the server URL of the KubeConfig's current cluster "double" (${d.url}) has a space or a control character before or after it, which kubeconfig does not allow: remove it`,
        ],
        [
          'a server URL with a newline after it',
          () => new KubernetesServiceCIDRs(kubeConfigFor(`${d.url}\n`), { start: false }),
          'has a space or a control character before or after it',
        ],
        [
          'a server that is a number',
          () => new KubernetesStore(kubeConfigFor(6443 as never), { start: false }),
          `KubernetesStore: the server URL of the KubeConfig's current cluster "double" (not shown) is a number, not text: a server URL is scheme://host:port with an optional path`,
        ],
        // a misspelled option was ignored: a 300 ms timeout waited 30 s, v1beta1 went to v1
        [
          'requestTimeoutMS',
          () => new KubernetesStore(kc, { requestTimeoutMS: 300, start: false } as never),
          '"requestTimeoutMS" (did you mean "requestTimeoutMs"?)',
        ],
        [
          'apiVerison',
          () => new KubernetesStore(kc, { apiVerison: 'v1beta1', start: false } as never),
          '"apiVerison" (did you mean "apiVersion"?)',
        ],
        // values the API server would refuse on every list or watch
        ['fractional pageSize', () => new KubernetesStore(kc, { pageSize: 1.5, start: false }), 'pageSize must be a whole number ≥ 0'],
        ['NaN pageSize', () => new KubernetesStore(kc, { pageSize: Number.NaN, start: false }), 'pageSize must be a whole number ≥ 0'],
        [
          'negative watchTimeoutSeconds',
          () => new KubernetesStore(kc, { watchTimeoutSeconds: -5, start: false }),
          'watchTimeoutSeconds must be',
        ],
        [
          'backoff jitter 5',
          () => new KubernetesStore(kc, { backoff: { jitter: 5 }, start: false }),
          'backoff.jitter must be a number from 0 to 1',
        ],
        [
          'backoff initialMs -1',
          () => new KubernetesStore(kc, { backoff: { initialMs: -1 }, start: false }),
          'backoff.initialMs and backoff.maxMs',
        ],
        [
          'backoff { initial }',
          () => new KubernetesStore(kc, { backoff: { initial: 5 }, start: false } as never),
          'KubernetesStore: options.backoff has no option "initial"',
        ],
        [
          'backoff 5',
          () => new KubernetesStore(kc, { backoff: 5, start: false } as never),
          'KubernetesStore: options.backoff must be an object whose properties are the options, got 5',
        ],
        // Regression: named options.initialMs, an option that does not exist, as if it sat in the options themselves
        [
          'backoff with a getter that throws',
          () =>
            new KubernetesServiceCIDRs(kc, {
              backoff: {
                get initialMs(): number {
                  throw new Error('boom');
                },
              },
              start: false,
            }),
          'options.backoff.initialMs could not be read: it threw',
        ],
        // Regression: a first delay above the cap was accepted (and silently cut to the cap). Started
        // (the default): refused before the informer sends anything.
        [
          'backoff initialMs above maxMs',
          () => new KubernetesStore(kc, { backoff: { initialMs: 10, maxMs: 5 } }),
          'KubernetesStore: backoff.initialMs must be at most backoff.maxMs (the first delay cannot exceed the cap), got 10 and 5',
        ],
        [
          'KubernetesServiceCIDRs backoff initialMs above maxMs',
          () => new KubernetesServiceCIDRs(kc, { backoff: { initialMs: 30_001, maxMs: 30_000 } }),
          'KubernetesServiceCIDRs: backoff.initialMs must be at most backoff.maxMs',
        ],
      ];
      for (const [what, make, quotes] of rows) {
        expect(make, what).toThrow(InvalidArgumentError);
        expect(make, what).toThrow(quotes);
      }
      expect(d.requests).toEqual([]);
    });

    it('with no KubeConfig given and none to be found, refuses the placeholder loadFromDefault() falls back to', () => {
      // Regression: the check ran only on a KubeConfig passed in; new KubernetesStore() synced for ever.
      const saved = { ...process.env };
      const home = mkdtempSync(join(tmpdir(), 'ipallocator-no-kubeconfig-'));
      try {
        delete process.env.KUBECONFIG;
        delete process.env.KUBERNETES_SERVICE_HOST;
        delete process.env.KUBERNETES_SERVICE_PORT;
        process.env.HOME = home;
        expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
          "KubernetesStore: the KubeConfig is client-node's placeholder (server http://localhost:8080)",
        );
      } finally {
        for (const k of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'HOME']) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
        rmSync(home, { recursive: true, force: true });
      }
    });

    it('with $KUBECONFIG set to "" and no kubeconfig to be found, says the variable is empty, as the command line does', () => {
      // Regression: the message said "$KUBECONFIG is not set" of a variable set to "" (read as not set, as kubectl reads it).
      const saved = { ...process.env };
      const home = mkdtempSync(join(tmpdir(), 'ipallocator-no-kubeconfig-'));
      try {
        process.env.KUBECONFIG = '';
        delete process.env.KUBERNETES_SERVICE_HOST;
        delete process.env.KUBERNETES_SERVICE_PORT;
        process.env.HOME = home;
        expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
          "KubernetesStore: the KubeConfig is client-node's placeholder (server http://localhost:8080), which loadFromDefault() loads " +
            'when it finds no kubeconfig: $KUBECONFIG is empty (read as not set, as kubectl reads it), ~/.kube/config does not exist, ' +
            'and this is not a pod with a service account; load one, e.g. kc.loadFromFile(path)',
        );
      } finally {
        for (const k of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'HOME']) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
        rmSync(home, { recursive: true, force: true });
      }
    });

    it('a token with a control character (CR, LF, NUL, DEL, VT) in it: the failure says so without the token, in its message or its cause', async () => {
      // Regression: fetch's "Headers.append: \"Bearer <token>\" is an invalid header value" was the message.
      // Regression: a character beyond U+00FF (a Unicode line separator) failed as a connection
      // error quoting undici's "Cannot convert argument to a ByteString … at index N"
      for (const token of [
        'SECRET-IN-HEADER\rX',
        'SECRET-IN-HEADER\nX',
        'SECRET-IN-HEADER\0X',
        'SECRET-IN-HEADER\u2028',
        'SECRET-IN-HEADER\u0100X',
        // Regression: these two failed as "fetch failed: invalid Authorization header", with the cause kept
        'SECRET-IN-HEADER\x7fX',
        'SECRET-IN-HEADER\vX',
      ]) {
        // a control character is refused with the KubeConfig (user-checks.ts tokenNoHeaderHolds):
        // given after it, as a token-file read again may give one, it meets fetch's refusal
        const kc = kubeConfigFor(secure.url);
        const s = new KubernetesStore(kc, { start: false });
        (kc.getCurrentUser() as { token?: string }).token = token;
        const err = await s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        );
        s.close();
        expect(err).toBeInstanceOf(KubernetesApiError);
        const { message, cause } = err as KubernetesApiError;
        expect(message).toContain(
          'the request was not sent: a header would hold a control character (a line break, a NUL, a DEL) or a character beyond U+00FF',
        );
        expect(message).toMatch(/^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the request was not sent: /);
        expect(message).not.toContain('ByteString');
        expect(message).not.toContain(secure.url); // nothing was sent to it
        expect(message).not.toContain('SECRET');
        expect(cause).toBeUndefined();
      }
      expect(secure.requests).toEqual([]);
    });

    it('a current context whose user is not in the KubeConfig is refused before any request, as kubectl refuses it', () => {
      // Regression: every request went out without credentials, and a 401 read as a refusal of them.
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'double', server: secure.url, skipTLSVerify: true }],
        users: [{ name: 'tester', token: TEST_TOKEN }],
        contexts: [{ name: 'double', cluster: 'double', user: 'missing-user' }],
        currentContext: 'double',
      });
      expect(() => new KubernetesStore(kc, { start: false })).toThrow(
        new InvalidArgumentError(
          'KubernetesStore: user "missing-user" was not found for context "double": add the user to the KubeConfig, or use another context',
        ),
      );
      expect(secure.requests).toEqual([]);
    });

    it('a token ending in a line break (saved with a Windows line ending) is sent without it, and works', async () => {
      // The README said such a token was refused: fetch strips it from the header value.
      secure.onlyToken = 'SECRET-AT-END';
      try {
        for (const token of ['SECRET-AT-END\r\n', 'SECRET-AT-END\n']) {
          const s = new KubernetesStore(kubeConfigFor(secure.url, token), { start: false });
          try {
            expect(await s.get('10.0.0.1')).toBeUndefined();
          } finally {
            s.close();
          }
        }
        expect(secure.requests.map((q) => q.authorization)).toEqual(['Bearer SECRET-AT-END', 'Bearer SECRET-AT-END']);
      } finally {
        secure.onlyToken = undefined;
      }
    });

    it('an exec credential plugin that prints its ExecCredential, then exits 1: said to have failed, without its output', async () => {
      // Regression: the message was "Error" (client-node's Error holding the plugin's empty stderr).
      const credential = { apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: TEST_TOKEN } };
      const err = await execPluginGetError(`console.log(${JSON.stringify(JSON.stringify(credential))}); process.exit(1)`);
      expect(err).toBeInstanceOf(KubernetesApiError);
      const { message } = err as KubernetesApiError;
      expect(message).toContain(
        "the user's credentials could not be read: its exec plugin failed: it exited with a status other than 0 (@kubernetes/client-node does not pass on which) and wrote nothing on stderr",
      );
      expect(message).not.toContain(TEST_TOKEN.slice(0, 8));
      expect(secure.requests).toEqual([]);
    });

    it('an exec credential plugin that never answers: said of the plugin and its user, not of the server; stopped at the deadline, and by close()', async () => {
      // Regression: said as "no answer from <server> within 1000 ms", and the plugin was left running.
      const dir = mkdtempSync(join(tmpdir(), 'ipallocator-exec-'));
      try {
        // long enough for the plugin to start and write its pid under a loaded machine (Deno starts slowly)
        const err = await execPluginGetError(hangingPlugin(join(dir, 'deadline.pid')), process.execPath, { requestTimeoutMs: 3000 });
        expect(err).toBeInstanceOf(KubernetesApiError);
        const e = err as KubernetesApiError;
        expect([e.message, e.timeoutMs, e.code]).toEqual([
          'get ipaddresses.networking.k8s.io "10.0.0.1": the exec credential plugin of user "tester" did not answer within 3000 ms (requestTimeoutMs): it was stopped, and the request was not sent',
          3000,
          undefined,
        ]);
        const stopped = Number(readFileSync(join(dir, 'deadline.pid'), 'utf8'));
        await until(() => !isRunning(stopped), 'the plugin to be stopped at the deadline');

        const s = new KubernetesStore(execPluginKubeConfig(hangingPlugin(join(dir, 'close.pid'))), { start: false });
        const pending = s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        );
        await until(() => existsSync(join(dir, 'close.pid')) && readFileSync(join(dir, 'close.pid'), 'utf8') !== '', 'the plugin to start');
        s.close();
        expect(await pending).toBeInstanceOf(ErrDestroyed);
        const closed = Number(readFileSync(join(dir, 'close.pid'), 'utf8'));
        await until(() => !isRunning(closed), 'the plugin to be stopped by close()');
        expect(secure.requests).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it.each([
      ['exits 1', 'process.exit(1)', process.execPath],
      ['prints nothing', '', process.execPath],
      ['prints a JSON string', `console.log('"x"')`, process.execPath],
      ['names a command that does not exist', '', '/nonexistent/plugin'],
    ])('an exec credential plugin that %s: the failure names no API server, as nothing was sent to one', async (_what, script, command) => {
      // Regression: each ended in "(the API server at http://127.0.0.1:…)".
      const err = await execPluginGetError(script, command);
      expect(err).toBeInstanceOf(KubernetesApiError);
      const { message } = err as KubernetesApiError;
      expect(message).toMatch(
        /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the user's credentials could not be read: its exec plugin /,
      );
      expect(message).not.toContain('API server');
      expect(message).not.toContain(secure.url);
      expect(secure.requests).toEqual([]);
    });

    it('an exec credential plugin that fails writing terminal escapes on stderr: they are escaped in the message', async () => {
      // Regression: the message held them raw ("\u001b[2J" clears the screen of whoever logs it).
      const err = await execPluginGetError('process.stderr.write("\\x1b[2J\\x1b[31mlogin expired\\x1b[0m\\r\\n"); process.exit(1)');
      expect(err).toBeInstanceOf(KubernetesApiError);
      const { message } = err as KubernetesApiError;
      expect(message).toContain('wrote on stderr: \\u001b[2J\\u001b[31mlogin expired\\u001b[0m');
      expect(message).not.toContain('\x1b');
    });

    it.skipIf(process.platform === 'win32')(
      'an exec credential plugin given up whose own child lives on: the process exits after close() all the same (the child is not stopped)',
      async () => {
        // Regression: the child held the plugin's stdout, our end of that pipe stayed open, and
        // the process did not exit after close() until the child ended.
        const { spawn } = await import('node:child_process');
        const dir = mkdtempSync(join(tmpdir(), 'ipallocator-exec-'));
        const childPid = join(dir, 'child.pid');
        const worker = join(import.meta.dirname, 'k8s', 'plugin-child-worker.ts');
        const script = `sleep 600 & echo $! > ${JSON.stringify(childPid)}; wait`;
        const args = 'Deno' in globalThis ? ['run', '-A', worker, script] : ['--import', 'tsx', worker, script];
        const p = spawn(process.execPath, args, { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        let closed: () => void = () => {};
        const saidClosed = new Promise<void>((resolve) => (closed = resolve));
        p.stdout!.on('data', (c: Buffer) => {
          out += c;
          if (out.endsWith('closed\n')) closed();
        });
        p.stderr!.on('data', (c: Buffer) => (err += c));
        const exited = new Promise<number | null>((resolve) => p.on('exit', resolve));
        try {
          // The worker's start (tsx or Deno compiling it) and the plugin's 1.5 s deadline take
          // what the machine gives them, so the clock starts at close(): from there the process
          // should end at once, and one held by the plugin's child lives as long as that child
          // (600 s), so 60 s tells the two apart however loaded the machine is.
          await Promise.race([saidClosed, exited]);
          const code = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 60_000))]);
          expect({ code, out, err }).toEqual({
            code: 0,
            out: 'refused: get ipaddresses.networking.k8s.io "10.0.0.1": the exec credential plugin of user "u" did not answer within 1500 ms (requestTimeoutMs): it was stopped, and the request was not sent\nclosed\n',
            err: '',
          });
          expect(isRunning(Number(readFileSync(childPid, 'utf8')))).toBe(true); // what the plugin started was left running
        } finally {
          if (p.exitCode === null) p.kill('SIGKILL');
          if (existsSync(childPid)) process.kill(Number(readFileSync(childPid, 'utf8')), 'SIGKILL');
          rmSync(dir, { recursive: true, force: true });
        }
      },
      // a child runtime started, a plugin given up at its deadline, and the 60 s above: work
      // that takes long on a loaded machine and is no sign of a fault
      180_000,
    );

    it('an exec credential plugin that prints a JSON string: said to print no ExecCredential, without its output', async () => {
      // Regression: the message was client-node's "Cannot read properties of undefined (reading 'clientCertificateData')".
      const err = await execPluginGetError(`console.log(${JSON.stringify(JSON.stringify(TEST_TOKEN))})`);
      expect(err).toBeInstanceOf(KubernetesApiError);
      const { message } = err as KubernetesApiError;
      expect(message).toContain(
        'its exec plugin printed no ExecCredential (JSON without a status object; not shown: it may be a credential)',
      );
      expect(message).not.toContain(TEST_TOKEN.slice(0, 8));
      expect(secure.requests).toEqual([]);
    });

    it.each([
      ['nothing', '', 'printed nothing (or only whitespace, or JSON cut short)'],
      [
        'a bare token',
        `console.log(${JSON.stringify(TEST_TOKEN)})`,
        'printed something that is not JSON (not shown: it may be a credential)',
      ],
    ])('an exec credential plugin that exits 0 printing %s: said of the plugin, without its output', async (_what, script, printed) => {
      // Regression: said as "a text that is not JSON", which read as the API server's answer.
      const err = await execPluginGetError(script);
      expect(err).toBeInstanceOf(KubernetesApiError);
      const { message } = err as KubernetesApiError;
      expect(message).toContain(
        `the user's credentials could not be read: its exec plugin exited with status 0 but ${printed}; an exec plugin must print an ExecCredential`,
      );
      expect(message).not.toContain(TEST_TOKEN.slice(0, 8));
      expect(secure.requests).toEqual([]);
    });

    it('an exec credential plugin that exits 0 writing only on stderr: said with its first stderr line', async () => {
      // Regression: said to print nothing, without what it wrote on stderr, which a failing plugin gets.
      const err = await execPluginGetError('console.error("error: login required");console.error("second line")');
      expect(err).toBeInstanceOf(KubernetesApiError);
      expect((err as KubernetesApiError).message).toContain(
        "the user's credentials could not be read: its exec plugin exited with status 0 but printed nothing (or only whitespace, or JSON cut short) and wrote on stderr: error: login required; an exec plugin must print an ExecCredential",
      );
      expect(secure.requests).toEqual([]);
    });

    it('an exec credential plugin whose command does not exist, or is a directory: said not to run, and why', async () => {
      // Regression: the message was spawn's ("spawn /nonexistent ENOENT"), not about credentials.
      const dir = mkdtempSync(join(tmpdir(), 'ipallocator-exec-'));
      try {
        for (const [command, why] of [
          [join(dir, 'missing'), 'could not be run: not found (ENOENT)'],
          [dir, 'could not be run: not permitted (EACCES: a directory, or a file without permission to execute it)'],
        ] as const) {
          const err = await execPluginGetError('', command);
          expect(err).toBeInstanceOf(KubernetesApiError);
          expect((err as KubernetesApiError).message).toContain(`the user's credentials could not be read: its exec plugin ${why}`);
        }
        expect(secure.requests).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    // Regression: client-node's refusal of it read as a plugin that exited with a failure; then,
    // as sent, it named neither the user nor the field. kubectl refuses it as it loads the
    // kubeconfig (clientcmd validateAuthInfo).
    it.each([
      ['empty', ''],
      ['absent', undefined],
    ])('an exec credential plugin whose command is %s: refused with the KubeConfig, naming the user and the command', (_what, command) => {
      const kc = execPluginKubeConfig('', process.execPath);
      (kc.getCurrentUser()!.exec as { command?: string }).command = command;
      expect(() => new KubernetesStore(kc, { start: false })).toThrow(InvalidArgumentError);
      expect(() => new KubernetesStore(kc, { start: false })).toThrow(
        'KubernetesStore: the exec entry of user "tester" (context "double") has no command, which kubectl refuses too ' +
          '("command must be specified for tester to use exec authentication plugin"): set command to the program that prints its ExecCredential',
      );
      expect(secure.requests).toEqual([]);
    });

    // Regression: the user's name, quoted and escaped at the start of the message, was repeated
    // raw inside kubectl's words: a line break or an escape sequence in it reached the message.
    it.each([
      [{}, '("command must be specified for u\\u001b[2J\\u000aok to use exec authentication plugin")'],
      [
        { command: 'x', env: [{ value: 'v' }] },
        '("env variable name must be specified for u\\u001b[2J\\u000aok to use exec authentication plugin")',
      ],
      [{ command: 'x', interactiveMode: 'Sometimes' }, '("invalid interactiveMode for u\\u001b[2J\\u000aok")'],
    ])('an exec entry refused as kubectl refuses it (%j): the user named in kubectl words is escaped too', (entry, said) => {
      const name = 'u\u001b[2J\nok';
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'double', server: secure.url, skipTLSVerify: true }],
        users: [{ name, exec: { apiVersion: 'client.authentication.k8s.io/v1', ...entry } } as unknown as User],
        contexts: [{ name: 'double', cluster: 'double', user: name }],
        currentContext: 'double',
      });
      const message = ((): string => {
        try {
          new KubernetesStore(kc, { start: false }).close();
          return '';
        } catch (e) {
          return (e as Error).message;
        }
      })();
      expect(message).toContain('the exec entry of user "u\\x1b[2J\\nok" (context "double")');
      expect(message).toContain(said);
      expect(message.includes('\u001b') || message.includes('\n')).toBe(false);
    });

    it('an exec credential plugin whose args are one text, or hold a NUL: refused, or said to be malformed, the args never in the message or its causes', async () => {
      // Regression: spawn's TypeError quoted the args ("Received type string ('--token=…')").
      const kc = new KubeConfig();
      const exec = { apiVersion: 'client.authentication.k8s.io/v1beta1', command: process.execPath, args: `--token=${TEST_TOKEN}` };
      kc.loadFromOptions({
        clusters: [{ name: 'double', server: secure.url, skipTLSVerify: true }],
        users: [{ name: 'tester', exec }],
        contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
        currentContext: 'double',
      });
      // a type kubectl cannot decode: refused with the KubeConfig
      expect(() => new KubernetesStore(kc, { start: false })).toThrow(
        'the exec entry of user "tester" (context "double") has args that are a string, not a list of texts, which kubectl cannot read either (what it holds is not shown)',
      );
      // what only spawn refuses: as the plugin is started
      (exec as { args: unknown }).args = [`--token=${TEST_TOKEN}\u0000`];
      const s = new KubernetesStore(kc, { start: false });
      try {
        const err = await s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(KubernetesApiError);
        expect((err as KubernetesApiError).message).toContain(
          "the user's credentials could not be read: its exec plugin could not be run: its exec entry in the kubeconfig is malformed",
        );
        // Node prints an uncaught error's causes with it
        for (let e: unknown = err; e instanceof Error; e = e.cause) expect(e.message).not.toContain(TEST_TOKEN.slice(0, 8));
        expect(secure.requests).toEqual([]);
      } finally {
        s.close();
      }
    });

    it('with no KubeConfig given and $KUBECONFIG naming no current-context: says so, not to load one', () => {
      // Regression: "the KubeConfig has no current cluster (context \"\"): load one first, e.g. kc.loadFromDefault()",
      // advice that does not apply to a kubeconfig the store loaded itself.
      const saved = process.env.KUBECONFIG;
      const dir = mkdtempSync(join(tmpdir(), 'ipallocator-no-current-context-'));
      try {
        const path = join(dir, 'config');
        writeFileSync(
          path,
          'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://10.0.0.1:6443"}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: t}\n',
        );
        process.env.KUBECONFIG = path;
        expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
          new InvalidArgumentError(
            'KubernetesStore: the default kubeconfig ($KUBECONFIG, else ~/.kube/config) names no current-context: set one (kubectl config use-context NAME), or pass a KubeConfig loaded yourself',
          ),
        );
      } finally {
        if (saved === undefined) delete process.env.KUBECONFIG;
        else process.env.KUBECONFIG = saved;
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('with no KubeConfig given and $KUBECONFIG or ~/.kube/config past 16 MiB: refused naming the file, not read whole', () => {
      // Regression: client-node's loadFromDefault reads the file whole: KUBECONFIG=/dev/zero never ended.
      const saved = { ...process.env };
      const home = mkdtempSync(join(tmpdir(), 'ipallocator-big-kubeconfig-'));
      const big = join(home, '.kube', 'config');
      try {
        mkdirSync(join(home, '.kube'));
        writeFileSync(big, '');
        truncateSync(big, 16 * 1024 * 1024 + 1); // sparse: nothing is written
        process.env.HOME = home;
        for (const kubeconfig of [big, undefined]) {
          if (kubeconfig === undefined) delete process.env.KUBECONFIG;
          else process.env.KUBECONFIG = kubeconfig;
          expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
            `KubernetesStore: cannot load the default kubeconfig ($KUBECONFIG, else ~/.kube/config): "${big}" is not a kubeconfig: it holds more than 16 MiB`,
          );
        }
      } finally {
        for (const k of ['KUBECONFIG', 'HOME']) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
        rmSync(home, { recursive: true, force: true });
      }
    });

    it.each([
      // the only file of the list: none exists (kubectl skips a missing file, and has no configuration when none exists)
      ['a missing file', (dir: string) => join(dir, 'missing'), /none of the files \$KUBECONFIG names exists: "[^"]*missing"/],
      ['a directory', (dir: string) => dir, /is not a kubeconfig: it is a directory, not a regular file/],
      [
        'malformed YAML',
        (dir: string) => {
          writeFileSync(join(dir, 'config'), 'apiVersion: v1\nclusters: [\n');
          return join(dir, 'config');
        },
        /./,
      ],
    ])(
      'with no KubeConfig given and $KUBECONFIG naming %s: InvalidArgumentError naming $KUBECONFIG, not client-node’s bare error',
      (_what, path, cause) => {
        const saved = process.env.KUBECONFIG;
        const dir = mkdtempSync(join(tmpdir(), 'ipallocator-bad-kubeconfig-'));
        try {
          process.env.KUBECONFIG = path(dir);
          for (const make of [
            () => new KubernetesStore(undefined, { start: false }),
            () => new KubernetesServiceCIDRs(undefined, { start: false }),
          ]) {
            let e: unknown;
            try {
              make();
            } catch (thrown) {
              e = thrown;
            }
            expect(e).toBeInstanceOf(InvalidArgumentError);
            expect((e as Error).message).toMatch(
              /^Kubernetes(Store|ServiceCIDRs): cannot load the default kubeconfig \(\$KUBECONFIG, else ~\/\.kube\/config\): /,
            );
            expect((e as Error).message).toMatch(cause);
          }
        } finally {
          if (saved === undefined) delete process.env.KUBECONFIG;
          else process.env.KUBECONFIG = saved;
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );

    // Regression: the message was js-yaml's, which quotes the lines up to the error: the token of
    // the user entry above a bad line was in the error (and on the terminal of whoever printed it).
    it('with no KubeConfig given and $KUBECONFIG malformed YAML below a token: its line, column and kind, never its text, in no message of the cause chain', () => {
      const saved = process.env.KUBECONFIG;
      const dir = mkdtempSync(join(tmpdir(), 'ipallocator-bad-kubeconfig-'));
      try {
        process.env.KUBECONFIG = join(dir, 'config');
        writeFileSync(
          process.env.KUBECONFIG,
          `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${TEST_TOKEN}\ncurrent-context: a: b\n`,
        );
        for (const [owner, make] of [
          ['KubernetesStore', () => new KubernetesStore(undefined, { start: false })],
          ['KubernetesServiceCIDRs', () => new KubernetesServiceCIDRs(undefined, { start: false })],
        ] as const) {
          let e: unknown;
          try {
            make();
          } catch (thrown) {
            e = thrown;
          }
          expect(e).toBeInstanceOf(InvalidArgumentError);
          expect((e as Error).message).toBe(
            `${owner}: cannot load the default kubeconfig ($KUBECONFIG, else ~/.kube/config): ${JSON.stringify(process.env.KUBECONFIG)}: its YAML is malformed at line 6, column 19: ` +
              'bad indentation of a mapping entry (the text is not shown: it may hold a credential); fix it, or pass a KubeConfig loaded yourself',
          );
          for (let c: unknown = e; c instanceof Error; c = c.cause) expect(c.message).not.toContain(TEST_TOKEN.slice(0, 8));
        }
      } finally {
        if (saved === undefined) delete process.env.KUBECONFIG;
        else process.env.KUBECONFIG = saved;
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('takes the same cluster and user built on purpose for kubectl proxy (skipTLSVerify set)', () => {
      const proxy = new KubeConfig();
      proxy.loadFromClusterAndUser({ name: 'cluster', server: 'http://localhost:8080', skipTLSVerify: true }, { name: 'user' });
      const s = new KubernetesStore(proxy, { start: false });
      expect(s.state).toBe('syncing');
      s.close();
    });

    it('waitForSync with a misspelled option rejects at once (it would wait for ever)', async () => {
      const s = open({ start: false });
      for (const options of [{ timeout: 100 }, { timeoutMS: 100 }]) {
        const e = await s.waitForSync(options as never).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as Error).message).toMatch(/did you mean "timeoutMs"\?/);
      }
    });

    it('refuses a watcher that is not one', () => {
      const s = open({ start: false });
      for (const w of [null, {}, { onAdd: () => {} }, { onAdd: () => {}, onDelete: 1 }]) {
        expect(() => s.cache.subscribe(w as never), JSON.stringify(w)).toThrow(InvalidArgumentError);
      }
    });

    it('refuses a malformed record at the door, as MemoryStore does; a null parentRef is left to the server', async () => {
      const s = open({ start: false });
      for (const bad of [
        { name: '010.0.0.1', labels: allocatorLabels('IPv4'), parentRef: SVC },
        { name: '10.0.0.1', labels: { x: 1 }, parentRef: SVC },
        { name: '10.0.0.1', labels: { 'bad key!': 'x' }, parentRef: SVC },
        { name: '10.0.0.1', labels: { team: 'has space' }, parentRef: SVC },
        { name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: { resource: 'services' } },
        { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, // kube-apiserver: spec.parentRef: Required value
        { name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: undefined },
        null,
      ]) {
        await expect(s.create(bad as never), JSON.stringify(bad)).rejects.toThrow(InvalidRecordError);
      }
      expect(d.requestsOf('create')).toEqual([]);
      await expect(s.create(rec('10.0.0.1', 'IPv4', null))).rejects.toMatchObject({ code: 422, reason: 'Invalid' });
    });
  });

  describe('connections', () => {
    // Regression: client-node 2.x made a new undici Agent for every request of a cluster with TLS
    // settings (insecure-skip-tls-verify here; a CA or client certificate on a real cluster): each
    // request opened a connection (over https, a TLS handshake) of its own, and left it open.
    it("the store's requests share their connections, as client-go's (transport/cache.go); close() closes them", async () => {
      const s = open({ start: false });
      for (let i = 0; i < 20; i++) await s.get(`10.0.0.${i}`);
      await Promise.all(Array.from({ length: 4 }, (_, i) => s.get(`10.0.1.${i}`)));
      s.start();
      await s.waitForSync();
      await s.create(rec('10.0.0.1'));
      await s.delete('10.0.0.1');
      // the sequential gets on one, the parallel ones on at most four, the watch on one more
      expect(d.connectionsAccepted).toBeLessThanOrEqual(5);
      s.close();
      await until(() => d.openConnections === 0, 'the connections closed with the store');
    });

    it('two stores do not share theirs (each closes its own)', async () => {
      const a = open({ start: false });
      const b = open({ start: false });
      await a.get('10.0.0.1');
      await b.get('10.0.0.1');
      expect(d.connectionsAccepted).toBe(2);
      a.close();
      await until(() => d.openConnections === 1, "a's connection closed");
      await b.get('10.0.0.2');
      expect(d.connectionsAccepted).toBe(2); // b's kept
    });

    // Regression: a watch that ended cleanly (the server's timeoutSeconds, or a proxy's) was
    // resumed at once, while undici gives a connection back to its pool only one event-loop turn
    // after the body's end: every resume opened a new one, over https with a TLS handshake of its
    // own. (The watch's abort after the end does not drop the connection.) client-go's resumes reuse it.
    it.each([
      ['http', false],
      ['https', true],
    ])('a watch that ends cleanly is resumed on the same kept-alive connection (%s)', async (_, tls) => {
      const server = tls ? await ApiServerDouble.start({ tls: true, keepAliveTimeoutMs: 600_000 }) : d;
      try {
        const s = open({}, server);
        await s.waitForSync();
        await until(() => server.openWatches() === 1, 'the first watch');
        const opened = server.connectionsAccepted;
        for (let i = 1; i <= 3; i++) {
          server.insert(foreign(`10.0.2.${i}`)); // an event: the watch is no very short one
          await until(() => s.cache.get(`10.0.2.${i}`) !== undefined, 'the event');
          server.closeWatches();
          await until(() => server.requestsOf('watch').length === i + 1 && server.openWatches() === 1, 'the watch resumed');
        }
        expect(s.stats).toMatchObject({ lists: 1, errors: 0 });
        expect(server.connectionsAccepted).toBe(opened);
      } finally {
        if (tls) {
          for (const s of stores.splice(0)) s.close();
          await server.close();
        }
      }
    });
  });

  describe('lifecycle', () => {
    it("after close() every method, the cache's included, throws or rejects ErrDestroyed; properties stay readable; close is idempotent", async () => {
      d.insert(foreign('10.0.0.9'));
      const s = open();
      await s.waitForSync();
      s.close();
      s.close();
      const calls: [string, () => unknown][] = [
        ['create', () => s.create(rec('10.0.0.1'))],
        ['delete', () => s.delete('10.0.0.9')],
        ['get', () => s.get('10.0.0.9')],
        ['waitForSync', () => s.waitForSync()],
        ['start', () => s.start()],
        ['onStateChange', () => s.onStateChange(() => {})],
        ['cache.subscribe', () => s.cache.subscribe(new Mirror())],
        ['cache.get', () => s.cache.get('10.0.0.9')],
        ['cache.list', () => s.cache.list()],
        ['cache.size', () => s.cache.size],
        ['cache.hasSynced', () => s.cache.hasSynced()],
      ];
      for (const [what, call] of calls) {
        const err = await (async () => call())().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, what).toBeInstanceOf(ErrDestroyed);
        expect((err as ErrDestroyed).code, what).toBe('ERR_DESTROYED');
        expect((err as Error).message, what).toBe('KubernetesStore has been closed');
      }
      expect(s.state).toBe('stopped');
      expect(s.stats.lists).toBe(1);
      expect(d.requestsOf('create')).toEqual([]); // nothing reached the server
      expect(d.requestsOf('delete')).toEqual([]);
      expect(d.requestsOf('get')).toEqual([]);
    });

    it('an unsubscribe function still works after close()', async () => {
      const s = open();
      await s.waitForSync();
      const unsubscribe = s.cache.subscribe(new Mirror());
      s.close();
      expect(() => unsubscribe()).not.toThrow();
    });

    it('`using` closes the store at the end of the block', async () => {
      let kept: KubernetesStore | undefined;
      {
        using s = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 2, maxMs: 20 } });
        kept = s;
        await s.waitForSync();
        await until(() => d.openWatches() === 1);
      }
      expect(kept.state).toBe('stopped');
      await until(() => d.openWatches() === 0);
    });

    describe('waitForSync({ timeoutMs, signal }) against a server that never answers', () => {
      let unreachable: string;
      beforeEach(async () => {
        const gone = await ApiServerDouble.start();
        unreachable = gone.url;
        await gone.close(); // nothing listens there now: every list is refused
      });
      function dead(): KubernetesStore {
        const s = new KubernetesStore(kubeConfigFor(unreachable), { backoff: { initialMs: 5, maxMs: 20 } });
        stores.push(s);
        return s;
      }

      it('rejects with SyncTimeoutError naming the timeout and the last failure', async () => {
        const s = dead();
        await until(() => s.stats.errors >= 1, 'a refused list');
        const err = (await s.waitForSync({ timeoutMs: 20 }).catch((e: unknown) => e)) as SyncTimeoutError;
        expect(err).toBeInstanceOf(SyncTimeoutError);
        expect(err).toBeInstanceOf(IPAllocatorError);
        expect(err.code).toBe('ERR_SYNC_TIMEOUT');
        expect(err.timeoutMs).toBe(20);
        expect(err.lastError).toBeInstanceOf(KubernetesApiError);
        expect(err.cause).toBe(err.lastError);
        // the server and why it did not answer, not only fetch's "fetch failed"
        const last = err.message.slice(err.message.indexOf(' (last error: '));
        expect(last).toMatch(/^ \(last error: list ipaddresses\.networking\.k8s\.io: fetch failed: .*ECONNREFUSED/);
        expect(last.endsWith(` (the API server at ${unreachable}))`)).toBe(true);
        expect(err.message).not.toContain(TEST_TOKEN);
        expect(s.state).toBe('syncing'); // it keeps trying
      });

      // Regression: with client-node 1.x, node-fetch's own words came through whole: "request to
      // http://127.0.0.1:<port>/apis/networking.k8s.io/v1/ipaddresses?labelSelector=…&limit=500
      // failed, reason: connect ECONNREFUSED …", the request's path and query in the message.
      it('with client-node 1.x the failure reads as with 2.x: no request path or query in it', async () => {
        const kc = new KubeConfig1();
        kc.loadFromString(readFileSync(writeKubeconfig(unreachable).path, 'utf8'));
        const s = new KubernetesStore(kc as unknown as KubeConfig, { labelSelector: 'team=a', backoff: { initialMs: 5, maxMs: 20 } });
        stores.push(s);
        await until(() => s.stats.errors >= 1, 'a refused list');
        const port = new URL(unreachable).port;
        expect(s.lastError?.message).toBe(
          `list ipaddresses.networking.k8s.io: fetch failed: connect ECONNREFUSED 127.0.0.1:${port} (the API server at ${unreachable})`,
        );
        const got = await s.get('10.0.0.1').catch((e: unknown) => e as Error);
        expect((got as Error).message).toBe(
          `get ipaddresses.networking.k8s.io "10.0.0.1": fetch failed: connect ECONNREFUSED 127.0.0.1:${port} (the API server at ${unreachable})`,
        );
      });

      // Regression: a server on a port fetch never connects to (the Fetch standard's "bad ports":
      // 6000, 10080, …) failed every list alike, and the store listed it again for ever, saying
      // only "fetch failed: bad port"; waitForSync() without a timeout never returned.
      it.each(['http://127.0.0.1:6000', 'https://127.0.0.1:10080', 'http://127.0.0.1:1'])(
        'a server on a port fetch never connects to (%s): waitForSync rejects at once with SyncBlockedError naming it, nothing is tried again',
        async (server) => {
          const s = new KubernetesStore(kubeConfigFor(server), { backoff: { initialMs: 1, maxMs: 1 } });
          stores.push(s);
          const port = new URL(server).port;
          const why =
            `fetch failed: bad port (the API server at ${server}): fetch never connects to port ${port}, one of the ` +
            `Fetch standard's "bad ports", so no request to this server can be sent; kubectl, which has no such list, ` +
            'reaches it: serve the API server on another port, or point the kubeconfig at one that forwards to it ' +
            '(`kubectl proxy` serves http://127.0.0.1:8001)';
          const err = (await s.waitForSync().catch((e: unknown) => e)) as SyncBlockedError;
          expect(err).toBeInstanceOf(SyncBlockedError);
          expect(err).toBeInstanceOf(IPAllocatorError);
          expect([err.name, err.code, err.target, err.server, err.port]).toEqual([
            'SyncBlockedError',
            'ERR_SYNC_BLOCKED',
            'KubernetesStore',
            server,
            port,
          ]);
          expect(err.message).toBe(
            `KubernetesStore: ipaddresses.networking.k8s.io not synced, and not listed again: list ipaddresses.networking.k8s.io: ${why}`,
          );
          expect(err.lastError).toBe(s.lastError);
          expect(err.cause).toBe(err.lastError);
          expect(err.message).not.toContain(TEST_TOKEN);
          // asked again: the same answer at once, with or without a timeout
          await expect(s.waitForSync()).rejects.toBeInstanceOf(SyncBlockedError);
          await expect(s.waitForSync({ timeoutMs: 600_000 })).rejects.toBeInstanceOf(SyncBlockedError);
          // many backoffs of 1 ms later, the one list is all there was
          await new Promise((r) => setTimeout(r, 50));
          expect(s.stats).toEqual({ lists: 1, watches: 0, expired: 0, errors: 1 });
          expect(s.state).toBe('syncing');
          // each request says why too
          const get = (await s.get('10.0.0.1').catch((e: unknown) => e)) as KubernetesApiError;
          expect(get).toBeInstanceOf(KubernetesApiError);
          expect(get.message).toBe(`get ipaddresses.networking.k8s.io "10.0.0.1": ${why}`);
        },
      );

      it('a bad port a redirect leads to is no bad port of the server: the store keeps listing', async () => {
        const port = new URL(unreachable).port;
        const lw: ListerWatcher = {
          server: `http://127.0.0.1:${port}`,
          list: async () => {
            throw new TypeError('fetch failed', { cause: new Error('bad port') });
          },
          watch: async () => () => {},
        };
        const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', backoff: { initialMs: 1, maxMs: 1 } });
        informer.start();
        try {
          await until(() => informer.stats.lists >= 3, 'lists after the failure');
          await expect(informer.waitForSync({ timeoutMs: 1 })).rejects.toBeInstanceOf(SyncTimeoutError);
        } finally {
          informer.stop();
        }
      });

      it("rejects with the signal's reason when it aborts, or at once when it already has", async () => {
        const s = dead();
        const ac = new AbortController();
        const waiting = s.waitForSync({ signal: ac.signal, timeoutMs: 600_000 });
        const reason = new Error('shutting down');
        ac.abort(reason);
        await expect(waiting).rejects.toBe(reason);
        await expect(s.waitForSync({ signal: ac.signal })).rejects.toBe(reason);
        await expect(s.waitForSync({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
      });

      it('rejects with ErrDestroyed when closed while waiting', async () => {
        const s = dead();
        const waiting = s.waitForSync({ timeoutMs: 600_000 });
        s.close();
        await expect(waiting).rejects.toThrow(ErrDestroyed);
      });

      it('refuses options of the wrong type with InvalidArgumentError', async () => {
        const s = dead();
        for (const timeoutMs of [-1, NaN, '100', 2 ** 31]) {
          await expect(s.waitForSync({ timeoutMs } as never), String(timeoutMs)).rejects.toThrow(InvalidArgumentError);
        }
        await expect(s.waitForSync({ signal: {} } as never)).rejects.toThrow(InvalidArgumentError);
      });
    });

    it('waitForSync with options resolves as soon as the first list is applied', async () => {
      d.setLatency(20, 'list');
      const s = open();
      const ac = new AbortController();
      await s.waitForSync({ timeoutMs: 600_000, signal: ac.signal });
      expect(s.cache.hasSynced()).toBe(true);
      ac.abort(); // nothing is listening any more: no unhandled rejection
      await s.waitForSync({ timeoutMs: 0 }); // synced: resolves even with no time to wait
    });
  });
});

describe('KubernetesStore on a cluster that does not serve the API version asked for', () => {
  it('says so on every call — get never reads the 404 as "no such address" — and on the list', async () => {
    const d = await ApiServerDouble.start({ versions: ['v1beta1'] }); // a cluster before Kubernetes 1.33
    const store = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 2, maxMs: 20 } });
    const parentRef = { group: '', resource: 'services', namespace: 'default', name: 'web' };
    const record = { name: '10.0.0.7', labels: allocatorLabels('IPv4'), parentRef };
    try {
      const notServed =
        /: HTTP 404: the API server does not serve ipaddresses\.networking\.k8s\.io at the API version asked for .*apiVersion: 'v1beta1'/;
      for (const call of [() => store.get('10.0.0.7'), () => store.delete('10.0.0.7'), () => store.create(record)]) {
        const e = await call().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(e).toBeInstanceOf(KubernetesApiError);
        expect((e as KubernetesApiError).code).toBe(404);
        expect((e as Error).message).toMatch(notServed);
      }
      await until(() => store.lastError !== undefined);
      expect(store.lastError?.message).toMatch(notServed);
      // the ServiceCIDR helpers too: a delete is not "there was no such range"
      const del = await deleteServiceCIDR(kubeConfigFor(d.url), 'extra').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(del).toBeInstanceOf(KubernetesApiError);
      expect((del as Error).message).toMatch(/servicecidrs\.networking\.k8s\.io.*HTTP 404: the API server does not serve/);
      expect(await deleteServiceCIDR(kubeConfigFor(d.url), 'extra', { apiVersion: 'v1beta1' })).toBe(false); // served: absent
      // the version it serves works, and a missing object there is still "absent"
      const beta = new KubernetesStore(kubeConfigFor(d.url), { apiVersion: 'v1beta1' });
      await beta.waitForSync();
      expect(await beta.get('10.0.0.7')).toBeUndefined();
      await beta.create(record);
      expect((await beta.get('10.0.0.7'))?.name).toBe('10.0.0.7');
      beta.close();
    } finally {
      store.close();
      await d.close();
    }
  });
});

// The informer alone, on a scripted list/watch: the answer shapes no HTTP server of ours sends.
describe('Informer: a delete answer that names no uid', () => {
  function scripted(listed: KubeObject[], rv: string) {
    let push!: (type: string, object: unknown) => void;
    const lw: ListerWatcher = {
      list: async () => ipAddressList(listed, { resourceVersion: rv }),
      watch: async (_o, onEvent) => {
        push = onEvent;
        return () => {};
      },
    };
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test' });
    return { informer, push: (type: string, object: KubeObject) => push(type, ipAddressEvent(object)) };
  }
  const obj = (name: string, uid: string, rv: string): KubeObject => ({
    metadata: { name, uid, resourceVersion: rv, labels: allocatorLabels('IPv4') },
    spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
  });

  it('drops the record held when the request was sent, and ignores its late ADDED', async () => {
    const { informer, push } = scripted([obj('10.0.0.1', 'u1', '5')], '5');
    informer.start();
    await informer.waitForSync();
    await until(() => informer.stats.watches === 1);
    const sent = informer.get('10.0.0.1');
    informer.appliedDelete('10.0.0.1', undefined, sent, informer.history);
    expect(informer.get('10.0.0.1')).toBeUndefined();
    push('MODIFIED', obj('10.0.0.1', 'u1', '5')); // a stale event of the deleted incarnation
    expect(informer.get('10.0.0.1')).toBeUndefined();
    informer.stop();
  });

  it('keeps a re-created object the watch delivered while the request was on its way', async () => {
    const { informer, push } = scripted([obj('10.0.0.1', 'u1', '5')], '5');
    informer.start();
    await informer.waitForSync();
    await until(() => informer.stats.watches === 1);
    const sent = informer.get('10.0.0.1');
    push('DELETED', obj('10.0.0.1', 'u1', '6'));
    push('ADDED', obj('10.0.0.1', 'u2', '7')); // another client re-creates the name
    informer.appliedDelete('10.0.0.1', undefined, sent, informer.history);
    expect(informer.get('10.0.0.1')?.uid).toBe('u2');
    push('MODIFIED', obj('10.0.0.1', 'u2', '8')); // u2 is not blocked
    expect(informer.get('10.0.0.1')?.resourceVersion).toBe('8');
    informer.stop();
  });
});

// The informer alone, on a server (or proxy) that pages for ever: no kube-apiserver does this.
describe('Informer: a listing whose continue tokens come back', () => {
  it.each([
    ['the same token again', ['A', 'A']],
    ['a cycle of tokens', ['A', 'B', 'A']],
  ])('%s: the list fails (lastError says why) and is retried after the backoff, not paged for ever', async (_what, tokens) => {
    let lists = 0;
    const lw: ListerWatcher = {
      list: async () => ipAddressList([], { resourceVersion: '5', continue: tokens[lists++ % tokens.length] }),
      watch: async () => () => {},
    };
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', backoff: { initialMs: 50, maxMs: 50 } });
    informer.start();
    const err = await informer.waitForSync({ timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e as SyncTimeoutError,
    );
    informer.stop();
    expect(err).toBeInstanceOf(SyncTimeoutError);
    expect(err!.lastError?.message).toBe(
      'list ipaddresses.networking.k8s.io: the API server answered a continue token it had given before; the listing would never end',
    );
    expect(lists).toBeLessThan(10 * tokens.length); // one listing per backoff, about six in 300 ms
  });
});

// Deno raises NotCapable (PermissionDenied before Deno 2) for a permission it denies, a few causes
// deep under fetch's "fetch failed": refused again on every retry until it is granted.
describe('Informer: a permission the runtime denies', () => {
  /**
   * fetch's failure as Deno raises it without `flag` (`name` NotCapable, or PermissionDenied before
   * Deno 2); `name` FetchError: node-fetch's (client-node 1.x), which keeps Deno's refusal only as
   * words in its message, no cause.
   */
  function denied(flag: string, what: string, name = 'NotCapable'): Error {
    const words = `Requires ${what}, run again with the ${flag} flag`;
    if (name === 'FetchError') {
      const url = 'https://10.0.0.1:6443/apis/networking.k8s.io/v1/ipaddresses?limit=500';
      const e = Object.assign(new Error(`request to ${url} failed, reason: ${words}`), { type: 'system' });
      Object.defineProperty(e, 'name', { value: 'FetchError' });
      return e;
    }
    const refusal = Object.assign(new Error(words), { name });
    return new TypeError('fetch failed', { cause: refusal });
  }

  it.each([
    ['NotCapable', '--allow-net', 'net access to "10.0.0.1:6443"'],
    ['PermissionDenied', '--allow-net', 'net access to "10.0.0.1:6443"'],
    ['NotCapable', '--allow-sys', 'sys access to "ca"'],
    // the flag is the one Deno's sentence names, not a look-alike inside the host it quotes
    ['NotCapable', '--allow-net', 'net access to "xn--allow-all.example:6443"'],
    // client-node 1.x: node-fetch's FetchError says Deno's refusal in its own message
    ['FetchError', '--allow-net', 'net access to "10.0.0.1:6443"'],
    ['FetchError', '--allow-sys', 'sys access to "osRelease"'],
  ])(
    '%s (%s): waitForSync without a timeout rejects with SyncDeniedError naming the flag; the list is retried and syncs once granted',
    async (name, flag, what) => {
      let granted = false;
      let lists = 0;
      const lw: ListerWatcher = {
        server: 'https://10.0.0.1:6443',
        list: async () => {
          lists++;
          if (!granted) throw denied(flag, what, name);
          return ipAddressList([], { resourceVersion: '5' });
        },
        watch: async () => () => {},
      };
      const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'KubernetesStore', backoff: { initialMs: 2, maxMs: 5 } });
      try {
        const waiting = informer.waitForSync().catch((e: unknown) => e); // before the first list fails
        informer.start();
        const err = (await waiting) as SyncDeniedError;
        expect(err).toBeInstanceOf(SyncDeniedError);
        expect(err).toBeInstanceOf(IPAllocatorError);
        expect([err.name, err.code, err.flag, err.target]).toEqual(['SyncDeniedError', 'ERR_SYNC_DENIED', flag, 'KubernetesStore']);
        const last = `list ipaddresses.networking.k8s.io: fetch failed: Requires ${what}, run again with the ${flag} flag (the API server at https://10.0.0.1:6443)`;
        expect(err.message).toBe(
          `KubernetesStore: ipaddresses.networking.k8s.io not synced: Deno denies the list a permission it needs, on every retry until it is granted: run with ${flag} (last error: ${last})`,
        );
        expect(err.lastError).toBe(informer.lastError);
        expect(err.cause).toBe(err.lastError);
        expect(informer.state).toBe('syncing');
        // asked again while it is still denied: the same answer at once
        await expect(informer.waitForSync()).rejects.toBeInstanceOf(SyncDeniedError);
        // the store keeps listing: a permission granted meanwhile (Deno.permissions.request) is used
        const before = lists;
        await until(() => lists > before, 'another list');
        granted = true;
        await until(() => informer.hasSynced(), 'the sync');
        await informer.waitForSync();
        expect(informer.lastError).toBeUndefined();
      } finally {
        informer.stop();
      }
    },
  );

  // What Deno itself raises: its fetch's refusal, under client-node's request
  it('under Deno without --allow-net, a KubernetesStore: waitForSync() without a timeout rejects with SyncDeniedError', async () => {
    const { execFile } = await import('node:child_process');
    const root = join(import.meta.dirname, '..');
    const deno = join(root, 'node_modules', '.bin', 'deno');
    const child = join(import.meta.dirname, 'k8s', 'wait-for-sync-child.ts');
    const server = 'http://127.0.0.1:6443'; // never connected to (a port fetch refuses, as 9, fails before Deno asks)
    const out = await new Promise<string>((done, fail) =>
      execFile(
        deno,
        ['run', '--allow-env', '--allow-read', '--allow-sys', child, server],
        { cwd: root, env: { ...process.env, NO_COLOR: '1' }, timeout: 50_000 },
        (err, stdout, stderr) => (err === null ? done(stdout) : fail(new Error(`${err.message}\n${stderr}`))),
      ),
    );
    expect(JSON.parse(out)).toEqual({
      name: 'SyncDeniedError',
      code: 'ERR_SYNC_DENIED',
      flag: '--allow-net',
      message:
        'KubernetesStore: ipaddresses.networking.k8s.io not synced: Deno denies the list a permission it needs, on every retry until it is granted: run with --allow-net ' +
        `(last error: list ipaddresses.networking.k8s.io: fetch failed: Requires net access to "${new URL(server).host}", run again with the --allow-net flag (the API server at ${server}))`,
    });
  });

  it('under Deno, a KubernetesStore on a port fetch never connects to: waitForSync() without a timeout rejects with SyncBlockedError', async () => {
    const { execFile } = await import('node:child_process');
    const root = join(import.meta.dirname, '..');
    const deno = join(root, 'node_modules', '.bin', 'deno');
    const child = join(import.meta.dirname, 'k8s', 'wait-for-sync-child.ts');
    const server = 'http://127.0.0.1:6000';
    const out = await new Promise<string>((done, fail) =>
      execFile(
        deno,
        ['run', '--allow-all', child, server],
        { cwd: root, env: { ...process.env, NO_COLOR: '1' }, timeout: 50_000 },
        (err, stdout, stderr) => (err === null ? done(stdout) : fail(new Error(`${err.message}\n${stderr}`))),
      ),
    );
    const said = JSON.parse(out) as { name: string; code: string; message: string };
    expect([said.name, said.code]).toEqual(['SyncBlockedError', 'ERR_SYNC_BLOCKED']);
    expect(said.message).toMatch(
      /^KubernetesStore: ipaddresses\.networking\.k8s\.io not synced, and not listed again: list ipaddresses\.networking\.k8s\.io: fetch failed: bad port \(the API server at http:\/\/127\.0\.0\.1:6000\): fetch never connects to port 6000, /,
    );
  });

  it('a failure that is no denial (a refused connection) keeps waitForSync waiting, as before', async () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' }),
    });
    const lw: ListerWatcher = {
      list: async () => {
        throw refused;
      },
      watch: async () => () => {},
    };
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', backoff: { initialMs: 2, maxMs: 5 } });
    informer.start();
    try {
      await until(() => informer.lastError !== undefined, 'the list to fail');
      const err = await informer.waitForSync({ timeoutMs: 50 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SyncTimeoutError);
    } finally {
      informer.stop();
    }
  });
});

describe('Informer: one large page', () => {
  it('takes a list of 200,000 objects in one page (pageSize 0, or a server that ignores limit)', async () => {
    // Regression: the page was appended with push(...items), past V8's argument limit (about
    // 125,000): every list failed with "Maximum call stack size exceeded" and it never synced.
    const items = Array.from({ length: 200_000 }, (_, i) => ({
      metadata: { name: `fd00::${i.toString(16)}`, uid: `u${i}`, resourceVersion: '5', labels: allocatorLabels('IPv6') },
      spec: { parentRef: null },
    }));
    const lw: ListerWatcher = {
      list: async () => ipAddressList(items, { resourceVersion: '5' }),
      watch: async () => () => {},
    };
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', pageSize: 0 });
    informer.start();
    await informer.waitForSync({ timeoutMs: 20_000 });
    expect([informer.list().length, informer.stats.errors]).toEqual([200_000, 0]);
    informer.stop();
  });
});

// The watch request runs one timer, as client-node's Watch does: first for the answer's headers,
// then for quiet between events, and reports both as a TimeoutError — the first before its
// watch() resolves.
describe('Informer: a watch that times out', () => {
  const obj = (name: string): KubeObject => ({
    metadata: { name, uid: `u-${name}`, resourceVersion: '5', labels: allocatorLabels('IPv4') },
    spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
  });
  const timeout = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

  /** A server listing one object, whose every watch is answered and ends `afterMs` later with `err`; it counts both. */
  function endingWatches(afterMs: number, err: () => unknown) {
    const count = { lists: 0, watches: 0 };
    const lw: ListerWatcher = {
      list: async () => {
        count.lists++;
        return ipAddressList([obj('10.0.0.1')], { resourceVersion: '5' });
      },
      watch: async (_o, _onEvent, onDone) => {
        count.watches++;
        setTimeout(() => onDone(err()), afterMs);
        return () => {};
      },
    };
    return { count, lw };
  }

  // Regression: a server (or proxy) that took the watch request and never answered was read as
  // a quiet watch: state synced, no lastError, and the cache frozen for good.
  it('before the server answered: a failure, reported, and the cache re-listed', async () => {
    let lists = 0;
    const lw: ListerWatcher = {
      // another controller deletes 10.0.0.1 after the first list
      list: async () => ipAddressList(lists++ === 0 ? [obj('10.0.0.1')] : [], { resourceVersion: '5' }),
      watch: async (_o, _onEvent, onDone) => {
        await new Promise((r) => setTimeout(r, 5));
        onDone(timeout()); // as client-node: done is called, then watch() returns
        return () => {};
      },
    };
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', backoff: { initialMs: 20, maxMs: 20 } });
    const told: string[] = [];
    informer.onStateChange((state, error) => told.push(`${state}: ${error?.message}`));
    informer.start();
    await informer.waitForSync();
    await until(() => informer.get('10.0.0.1') === undefined, 'the re-list to drop the deleted object');
    informer.stop();
    expect(told).toContain(
      'relisting: watch ipaddresses.networking.k8s.io: the API server accepted the watch request but sent no answer within 30 s: The operation was aborted due to timeout',
    );
    expect(informer.stats.errors).toBeGreaterThan(0);
  });

  // client-node 1.4's Watch has no timer at all: the informer's own deadline ends the wait.
  it('a watch request never answered nor timed out by the client: the informer’s own 30 s deadline makes it a failure', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let lists = 0;
      let watches = 0;
      const lw: ListerWatcher = {
        list: async () => ipAddressList(lists++ === 0 ? [obj('10.0.0.1')] : [], { resourceVersion: '5' }),
        watch: () => {
          watches++;
          return new Promise(() => {}); // no answer, no done, ever
        },
      };
      const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', backoff: { initialMs: 20, maxMs: 20 } });
      const told: string[] = [];
      informer.onStateChange((state, error) => told.push(`${state}: ${error?.message}`));
      informer.start();
      await informer.waitForSync();
      await vi.advanceTimersByTimeAsync(29_000);
      expect([lists, watches, told]).toEqual([1, 1, ['synced: undefined']]);
      await vi.advanceTimersByTimeAsync(1_100);
      expect(told).toContain(
        'relisting: watch ipaddresses.networking.k8s.io: the API server accepted the watch request but sent no answer within 30 s',
      );
      await vi.advanceTimersByTimeAsync(100);
      expect([lists, watches, informer.get('10.0.0.1')]).toEqual([2, 2, undefined]);
      informer.stop(); // the second unanswered watch: stop() ends the wait for it at once
      expect([informer.state, vi.getTimerCount()]).toEqual(['stopped', 0]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('after the server answered (no event for a while): the watch resumes, nothing failed', async () => {
    const { count, lw } = endingWatches(5, timeout);
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', backoff: { initialMs: 20, maxMs: 20 } });
    informer.start();
    await informer.waitForSync();
    await until(() => count.watches >= 4, 'a few watches');
    expect([count.lists, informer.stats.errors, informer.state]).toEqual([1, 0, 'synced']);
    informer.stop();
  });

  it('a watch asked to last 1 s (watchTimeoutSeconds: 1) that the server ends just under a second after its answer is resumed, not failed', async () => {
    // Regression: kube-apiserver starts its timer before it answers, so every such watch was a
    // "very short watch": an error and a re-list each time on a quiet cluster.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }); // the session's clock is performance.now()
    try {
      const { count, lw } = endingWatches(995, () => null); // the server's timeoutSeconds, counted from before its answer
      const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', watchTimeoutSeconds: 1 });
      informer.start();
      await informer.waitForSync();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(count.watches).toBeGreaterThanOrEqual(3);
      expect([count.lists, informer.stats.errors, informer.state]).toEqual([1, 0, 'synced']);
      informer.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  // Regression: the watch's age was read off the wall clock, so a clock set back during a watch
  // made any end of it, however late, a very short watch (an error and a re-list), and a clock set
  // forward let a watch cut at once pass for a long one. The fake clock moves performance.now()
  // and Date together; setSystemTime steps only the wall clock, as NTP or a restored VM does.
  it.each([
    { clock: 'set back an hour', step: -3_600_000, endsAfterMs: 2_000, errors: 0 },
    { clock: 'set forward an hour', step: 3_600_000, endsAfterMs: 200, errors: 1 },
  ])(
    'a wall clock $clock during a watch does not change whether it was very short (ends $endsAfterMs ms after its answer)',
    async ({ step, endsAfterMs, errors }) => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
      try {
        const { count, lw } = endingWatches(endsAfterMs, () => null);
        const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', {
          owner: 'test',
          backoff: { initialMs: 60_000, maxMs: 60_000 },
        });
        const told: string[] = [];
        informer.onStateChange((state, error) => told.push(`${state}: ${error?.message}`));
        informer.start();
        await informer.waitForSync();
        await vi.advanceTimersByTimeAsync(endsAfterMs / 2);
        expect(count.watches).toBe(1);
        vi.setSystemTime(Date.now() + step);
        await vi.advanceTimersByTimeAsync(endsAfterMs / 2 + 50); // the first watch has ended
        expect([count.lists, informer.stats.errors]).toEqual([1, errors]);
        if (errors === 0) {
          expect(told).toEqual(['synced: undefined']); // resumed: nothing failed
        } else {
          expect(told.at(-1)).toMatch(/^relisting: watch ipaddresses\.networking\.k8s\.io: very short watch: .* within 1 s of its answer/);
        }
        informer.stop();
      } finally {
        vi.useRealTimers();
      }
    },
  );

  it('an answered watch that hears nothing, bookmarks included, for 150 s is taken for a dead connection and resumed', async () => {
    // Regression: a connection that died without a word (under Deno not even seen by
    // client-node's timer) was trusted until timeoutSeconds + 60 s, up to 11 minutes.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let lists = 0;
      const aborted: number[] = [];
      const push: ((type: string, object: unknown) => void)[] = [];
      const lw: ListerWatcher = {
        list: async () => {
          lists++;
          return ipAddressList([obj('10.0.0.1')], { resourceVersion: '5' });
        },
        watch: async (_o, onEvent) => {
          const n = push.push(onEvent);
          return () => aborted.push(n);
        },
      };
      const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test', watchTimeoutSeconds: 3600 });
      informer.start();
      await informer.waitForSync();
      for (let minute = 0; minute < 5; minute++) {
        await vi.advanceTimersByTimeAsync(60_000);
        push[0]!('BOOKMARK', ipAddressEvent({ metadata: { resourceVersion: String(6 + minute) } })); // each minute, as kube-apiserver
      }
      expect([push.length, aborted]).toEqual([1, []]); // kept open while bookmarks come
      await vi.advanceTimersByTimeAsync(150_000); // then nothing
      expect([push.length, aborted, lists, informer.stats.errors, informer.state]).toEqual([2, [1], 1, 0, 'synced']);
      informer.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('Informer: a watcher that closes the store from its callback', () => {
  const obj = (name: string, uid: string): KubeObject => ({
    metadata: { name, uid, resourceVersion: '5', labels: allocatorLabels('IPv4') },
    spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
  });
  it('closing it during its own subscribe replay: ErrDestroyed, and the store keeps no subscriber', async () => {
    const lw: ListerWatcher = {
      list: async () => ipAddressList([obj('10.0.0.1', 'u1'), obj('10.0.0.2', 'u2')], { resourceVersion: '5' }),
      watch: async () => () => {},
    };
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test' });
    informer.start();
    await informer.waitForSync();
    const seen: string[] = [];
    const watcher = {
      onAdd: (r: IPAddressRecord) => {
        seen.push(r.name);
        informer.stop();
      },
      onDelete: () => {},
    };
    expect(() => informer.subscribe(watcher)).toThrow(ErrDestroyed);
    expect(seen).toEqual(['10.0.0.1']);
    expect((informer as unknown as { subscriptions: Set<unknown> }).subscriptions.size).toBe(0);
  });
  it('stops the delivery at once: later watchers hear nothing of that list', async () => {
    const lw: ListerWatcher = {
      list: async () => ipAddressList([obj('10.0.0.1', 'u1'), obj('10.0.0.2', 'u2')], { resourceVersion: '5' }),
      watch: async () => () => {},
    };
    const informer = new Informer(lw, 'ipaddresses.networking.k8s.io', { owner: 'test' });
    const first: string[] = [];
    const second: string[] = [];
    informer.subscribe({
      onAdd: (r) => {
        first.push(r.name);
        informer.stop();
      },
      onDelete: () => {},
    });
    informer.subscribe({ onAdd: (r) => second.push(r.name), onDelete: () => {} });
    informer.start();
    await until(() => informer.state === 'stopped');
    expect(first).toEqual(['10.0.0.1']);
    expect(second).toEqual([]);
  });
});
