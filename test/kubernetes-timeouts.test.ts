// KubernetesStore and KubernetesServiceCIDRs against a server that accepts connections and never
// answers (test/k8s/silent-server.ts): every request settles — with a KubernetesApiError naming
// the operation, the server and the timeout once `requestTimeoutMs` has passed, or with
// ErrDestroyed when the owner is closed meanwhile — and its connection is dropped. The tests use
// a short timeout so they end quickly; they assert what each call settles with, never how long it
// took.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  KubernetesApiError,
  KubernetesServiceCIDRs,
  KubernetesStore,
  SyncTimeoutError,
  createServiceCIDR,
  deleteServiceCIDR,
  type KubernetesStoreOptions,
} from '../adapters/kubernetes/index.ts';
import { allocatorLabels, type IPAddressRecord } from '../adapters/store.ts';
import { ErrDestroyed, InvalidArgumentError } from '../adapters/errors.ts';
import { kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';
import { until } from './k8s/helpers.ts';
import { SilentServer } from './k8s/silent-server.ts';

const IPADDRESSES = 'ipaddresses.networking.k8s.io';
const SVC = { group: '', resource: 'services', namespace: 'default', name: 'web' };
const RECORD: IPAddressRecord = { name: '10.96.0.10', labels: allocatorLabels('IPv4'), parentRef: SVC };

/** What a promise settled with (its rejection, or the value it resolved to). */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => ({ resolved: value }),
    (err: unknown) => err,
  );
}

describe('a server that accepts and never answers', () => {
  let silent: SilentServer;
  const closers: (() => void)[] = [];

  beforeEach(async () => {
    silent = await SilentServer.start();
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    await silent.close();
  });

  function store(options: KubernetesStoreOptions = {}): KubernetesStore {
    const s = new KubernetesStore(kubeConfigFor(silent.url), { start: false, ...options });
    closers.push(() => s.close());
    return s;
  }

  function expectTimedOut(err: unknown, verb: string, target: string, timeoutMs: number): void {
    expect(err).toBeInstanceOf(KubernetesApiError);
    const e = err as KubernetesApiError;
    expect(e.message).toBe(`${verb} ${target}: no answer from ${silent.url} within ${timeoutMs} ms (requestTimeoutMs)`);
    expect(e.verb).toBe(verb);
    expect(e.timeoutMs).toBe(timeoutMs);
    expect(e.code).toBeUndefined();
    expect(e.message).not.toContain(TEST_TOKEN);
  }

  it('get, create and delete reject with a KubernetesApiError naming the operation, the server and the timeout; the connections are dropped', async () => {
    const s = store({ requestTimeoutMs: 50 });
    const [got, created, deleted] = await Promise.all([
      outcome(s.get('10.96.0.10')),
      outcome(s.create(RECORD)),
      outcome(s.delete('10.96.0.11')),
    ]);
    expectTimedOut(got, 'get', `${IPADDRESSES} "10.96.0.10"`, 50);
    expectTimedOut(created, 'create', `${IPADDRESSES} "10.96.0.10"`, 50);
    expectTimedOut(deleted, 'delete', `${IPADDRESSES} "10.96.0.11"`, 50);
    expect(silent.requests).toBe(3); // each request reached the server before it ran out
    await until(() => silent.openConnections() === 0, 'the client to drop its connections');
    expect(s.cache.size).toBe(0); // the failed create left nothing behind
  });

  it('close() settles the calls in flight with ErrDestroyed and drops their connections', async () => {
    const s = store({ requestTimeoutMs: Infinity });
    const got = outcome(s.get('10.96.0.10'));
    const created = outcome(s.create(RECORD));
    await until(() => silent.requests === 2, 'both requests at the server');
    s.close();
    for (const err of [await got, await created]) {
      expect(err).toBeInstanceOf(ErrDestroyed);
      expect((err as ErrDestroyed).message).toBe('KubernetesStore has been destroyed');
    }
    await until(() => silent.openConnections() === 0, 'the client to drop its connections');
  });

  it('a list that gets no answer is a failed list: retried with backoff, named in waitForSync’s SyncTimeoutError', async () => {
    const s = store({ requestTimeoutMs: 30, backoff: { initialMs: 1, maxMs: 5 } });
    s.start();
    await until(() => s.stats.errors >= 2, 'two timed-out lists');
    expectTimedOut(s.lastError, 'list', IPADDRESSES, 30);
    const err = await outcome(s.waitForSync({ timeoutMs: 0 }));
    expect(err).toBeInstanceOf(SyncTimeoutError);
    expect((err as SyncTimeoutError).lastError).toBeInstanceOf(KubernetesApiError);
    expect(s.state).toBe('syncing');
    s.close();
    await until(() => silent.openConnections() === 0, 'the client to drop its connections');
  });

  it('KubernetesServiceCIDRs: a list without an answer fails with the timeout; close() aborts the one in flight', async () => {
    const source = new KubernetesServiceCIDRs(kubeConfigFor(silent.url), { requestTimeoutMs: 30, backoff: { initialMs: 1, maxMs: 5 } });
    closers.push(() => source.close());
    await until(() => source.stats.errors >= 1, 'a timed-out list');
    expectTimedOut(source.lastError, 'list', 'servicecidrs.networking.k8s.io', 30);
    const waiting = outcome(source.waitForSync());
    source.close();
    expect(await waiting).toBeInstanceOf(ErrDestroyed);
    await until(() => silent.openConnections() === 0, 'the client to drop its connections');
  });

  it('createServiceCIDR and deleteServiceCIDR reject with the timeout', async () => {
    const kc = kubeConfigFor(silent.url);
    expectTimedOut(
      await outcome(createServiceCIDR(kc, 'extra', ['10.97.0.0/24'], { requestTimeoutMs: 40 })),
      'create',
      'servicecidrs.networking.k8s.io "extra"',
      40,
    );
    expectTimedOut(
      await outcome(deleteServiceCIDR(kc, 'extra', { requestTimeoutMs: 40 })),
      'delete',
      'servicecidrs.networking.k8s.io "extra"',
      40,
    );
  });

  it('refuses a requestTimeoutMs that is not a positive number of milliseconds, before any request', async () => {
    for (const requestTimeoutMs of [0, -1, NaN, '100', 2 ** 31, null]) {
      expect(() => new KubernetesStore(kubeConfigFor(silent.url), { requestTimeoutMs } as never), String(requestTimeoutMs)).toThrow(
        InvalidArgumentError,
      );
      expect(() => new KubernetesServiceCIDRs(kubeConfigFor(silent.url), { requestTimeoutMs } as never)).toThrow(InvalidArgumentError);
    }
    await expect(createServiceCIDR(kubeConfigFor(silent.url), 'x', ['10.97.0.0/24'], { requestTimeoutMs: 0 })).rejects.toThrow(
      InvalidArgumentError,
    );
    expect(silent.requests).toBe(0);
  });
});
