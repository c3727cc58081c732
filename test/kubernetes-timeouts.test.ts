// KubernetesStore and KubernetesServiceCIDRs against a server that accepts connections and never
// answers (test/k8s/silent-server.ts): every request settles — with a KubernetesApiError naming
// the operation, the server and the timeout once `requestTimeoutMs` has passed, or with
// ErrDestroyed when the owner is closed meanwhile — and its connection is dropped. The tests use
// a short timeout so they end quickly; they assert what each call settles with, never how long it
// took.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import {
  KubernetesApiError,
  KubernetesServiceCIDRs,
  KubernetesStore,
  SyncTimeoutError,
  createServiceCIDR,
  deleteServiceCIDR,
  type KubernetesStoreOptions,
} from '../adapters/kubernetes/index.ts';
import { allocatorLabels } from '../adapters/store.ts';
import { ErrDestroyed, InvalidArgumentError } from '../adapters/errors.ts';
import { BOTH_CLIENT_NODES, kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';
import { until } from './k8s/helpers.ts';
import { SilentServer } from './k8s/silent-server.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { outcome, record, WEB } from './k8s/lost-answers.ts';
import { clientNodeListerWatcher } from '../adapters/kubernetes/lister-watcher.ts';
import { ApiRequests } from '../adapters/kubernetes/requests.ts';
import { WatchSession } from '../adapters/kubernetes/watch-session.ts';

const IPADDRESSES = 'ipaddresses.networking.k8s.io';
const RECORD = record('10.96.0.10');

/**
 * Makes a request that is answered (with client-node 2.x, or `Config`'s major), so that the ones
 * made next do not spend their deadline on what the first request of a process loads and compiles
 * (client-node's API classes, the fetch underneath, the store's own paths).
 */
async function firstRequestAnswered(Config?: typeof KubeConfig): Promise<void> {
  const double = await ApiServerDouble.start();
  const s = new KubernetesStore(kubeConfigFor(double.url, undefined, { Config }), { start: false });
  try {
    await outcome(s.get('10.96.0.10'));
  } finally {
    s.close();
    await double.close();
  }
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

  function store(options: KubernetesStoreOptions = {}, Config?: typeof KubeConfig): KubernetesStore {
    const s = new KubernetesStore(kubeConfigFor(silent.url, undefined, { Config }), { start: false, ...options });
    closers.push(() => s.close());
    return s;
  }

  function expectTimedOut(err: unknown, verb: string, target: string, timeoutMs: number, more = ''): void {
    expect(err).toBeInstanceOf(KubernetesApiError);
    const e = err as KubernetesApiError;
    expect(e.message).toBe(`${verb} ${target}: no answer from ${silent.url} within ${timeoutMs} ms (requestTimeoutMs)${more}`);
    expect(e.verb).toBe(verb);
    expect(e.timeoutMs).toBe(timeoutMs);
    expect(e.code).toBeUndefined();
    expect(e.message).not.toContain(TEST_TOKEN);
  }

  it.each(BOTH_CLIENT_NODES)(
    'client-node %s: get, create and delete reject with a KubernetesApiError naming the operation, the server and the timeout; the connections are dropped at once',
    async (_, Config) => {
      // Long enough for the first connections to be made under Deno on a busy machine (at 50 ms
      // they sometimes were not, and no request reached the server), once what a process's first
      // request loads is loaded: with four test files in parallel on two cores that took longer
      // than the deadline, which then passed before a request went out.
      await firstRequestAnswered(Config);
      const s = store({ requestTimeoutMs: 500 }, Config);
      const [got, created, deleted] = await Promise.all([
        outcome(s.get('10.96.0.10')),
        outcome(s.create(RECORD)),
        outcome(s.delete('10.96.0.11')),
      ]);
      expectTimedOut(got, 'get', `${IPADDRESSES} "10.96.0.10"`, 500);
      // the create went out: it may have stored the object, which it then reads back, in vain
      const unanswered = `no answer from ${silent.url} within 500 ms (requestTimeoutMs)`;
      expectTimedOut(
        created,
        'create',
        `${IPADDRESSES} "10.96.0.10"`,
        500,
        `; the object may have been created, and reading it back failed: ${unanswered}`,
      );
      // so may the delete have removed it: read back too, in vain
      expectTimedOut(
        deleted,
        'delete',
        `${IPADDRESSES} "10.96.0.11"`,
        500,
        `; the object may have been deleted, and reading it back failed: ${unanswered}`,
      );
      expect(silent.requests).toBe(5); // each request reached the server before it ran out, the read-backs too
      // Dropped as each request ran out, not left idle in the pool (where undici's keep-alive timer
      // would end them 4 s later). The connections undici 7 opens in place of the aborted ones, on
      // which nothing is sent, are not counted: they stay until that timer or close().
      await until(() => silent.openConnectionsThatCarriedARequest() === 0, 'the client to drop its connections', 2000);
      expect(s.cache.size).toBe(0); // the failed create left nothing behind
      s.close();
      await until(() => silent.openConnections() === 0, 'close() to drop the connections left idle', 2000);
    },
  );

  it('close() settles the calls in flight with ErrDestroyed and drops their connections', async () => {
    const s = store({ requestTimeoutMs: Infinity });
    const got = outcome(s.get('10.96.0.10'));
    const created = outcome(s.create(RECORD));
    await until(() => silent.requests === 2, 'both requests at the server');
    s.close();
    for (const err of [await got, await created]) {
      expect(err).toBeInstanceOf(ErrDestroyed);
      expect((err as ErrDestroyed).message).toBe('KubernetesStore has been closed');
    }
    await until(() => silent.openConnections() === 0, 'the client to drop its connections');
  });

  // Found by a second-pass attack: a watch the informer had given up on (stopped, or unanswered
  // for 30 s) kept its request open until the 90 s timer; a re-list then opened another beside it.
  it('a watch stopped before its answer lets go of its connection at once, and ends once', async () => {
    const lw = clientNodeListerWatcher(
      kubeConfigFor(silent.url),
      new ApiRequests(silent.url, 10_000),
      IPADDRESSES,
      '/apis/networking.k8s.io/v1/ipaddresses',
      async () => ({}),
    );
    const request = { resourceVersion: '1', allowWatchBookmarks: true, timeoutSeconds: 300 };
    const session = new WatchSession(lw, request, { apply: () => undefined, answered: () => {} });
    session.open();
    await until(() => silent.requests === 1 && silent.openConnections() === 1, 'the watch request');
    session.stop();
    expect(await session.outcome).toEqual({ kind: 'closed', events: 0 });
    await until(() => silent.openConnections() === 0, 'the connection let go');

    // the same through the ListerWatcher's signal: onDone hears the abort, once
    const controller = new AbortController();
    const ends: unknown[] = [];
    void lw.watch(
      { ...request, signal: controller.signal },
      () => {},
      (err) => ends.push(err),
    );
    await until(() => silent.requests === 2 && silent.openConnections() === 1, 'the second watch request');
    controller.abort();
    await until(() => silent.openConnections() === 0 && ends.length === 1, 'the second connection let go');
    expect(ends[0]).toBeInstanceOf(Error);
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
      // its answer lost, it was sent once more (the first send may have stored it)
      '; sent a second time, it failed the same way: the first send may have stored the object',
    );
    expectTimedOut(
      await outcome(deleteServiceCIDR(kc, 'extra', { requestTimeoutMs: 40 })),
      'delete',
      'servicecidrs.networking.k8s.io "extra"',
      40,
      // its answer lost, it was read back (the first send may have deleted it), and that timed out too
      `; the object may have been deleted, and reading it back failed: no answer from ${silent.url} within 40 ms (requestTimeoutMs)`,
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

// kube-apiserver's own throttling (API Priority and Fairness) answers 429 with a text body and
// the wait in a Retry-After header, as client-go reads it.
describe('a server that throttles (429)', () => {
  /** Answers creates: `throttle(n)` decides the nth one's 429 headers (undefined: 201 Created, the object echoed). */
  async function throttlingServer(throttle: (n: number) => Record<string, string> | undefined) {
    const { createServer } = await import('node:http');
    const arrivals: number[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        arrivals.push(Date.now());
        const headers = throttle(arrivals.length);
        if (headers !== undefined) {
          res.writeHead(429, { 'Content-Type': 'text/plain', ...headers });
          res.end('Too many requests, please try again later.\n');
          return;
        }
        const obj = JSON.parse(body) as { metadata: Record<string, unknown> };
        obj.metadata = { ...obj.metadata, uid: 'u1', resourceVersion: '7' };
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(obj));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    return { url, arrivals, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it('sends the request again after the Retry-After header’s wait, not before', async () => {
    const server = await throttlingServer((n) => (n === 1 ? { 'Retry-After': '2' } : undefined));
    const s = new KubernetesStore(kubeConfigFor(server.url), { start: false });
    try {
      await s.create(RECORD);
      expect(server.arrivals.length).toBe(2);
      expect(server.arrivals[1]! - server.arrivals[0]!).toBeGreaterThanOrEqual(1900);
    } finally {
      s.close();
      await server.close();
    }
  });

  it('a 429 naming no wait is not sent again (client-go’s rule); the deadline covers the waits', async () => {
    const bare = await throttlingServer(() => ({}));
    const s1 = new KubernetesStore(kubeConfigFor(bare.url), { start: false });
    const e1 = await outcome(s1.create(RECORD));
    expect([e1, (e1 as KubernetesApiError).code, bare.arrivals.length]).toEqual([expect.any(KubernetesApiError), 429, 1]);
    s1.close();
    await bare.close();

    // a deadline long enough for the 429 to arrive on a loaded machine, and shorter than the wait it asks for
    const slow = await throttlingServer(() => ({ 'Retry-After': '60' }));
    const s2 = new KubernetesStore(kubeConfigFor(slow.url), { start: false, requestTimeoutMs: 2000 });
    const e2 = (await outcome(s2.create(RECORD))) as KubernetesApiError;
    expect(e2).toBeInstanceOf(KubernetesApiError);
    expect(e2.message).toBe(
      `create ${IPADDRESSES} "10.96.0.10": no answer from ${slow.url} within 2000 ms (requestTimeoutMs; the server throttled it (429) once meanwhile)`,
    );
    expect(slow.arrivals.length).toBe(1);
    s2.close();
    await slow.close();
  });
});

// A connection that fails once the answer has begun — reset, or closed before the body is
// complete — fails the request at once with the network error, whatever the runtime; it is
// never waited out as a request without an answer. The request timeout is longer than the test's
// own, so a request that waited for it would fail the test.
describe('a connection cut part-way through an answer', () => {
  const LONGER_THAN_THE_TEST = 600_000;
  let d: ApiServerDouble;
  const closers: (() => void)[] = [];

  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    await d.close();
  });

  function store(): KubernetesStore {
    const s = new KubernetesStore(kubeConfigFor(d.url), {
      start: false,
      requestTimeoutMs: LONGER_THAN_THE_TEST,
      backoff: { initialMs: 2, maxMs: 20 },
    });
    closers.push(() => s.close());
    return s;
  }

  const rows = [
    { how: 'reset', network: 'ECONNRESET' },
    { how: 'close', network: 'UND_ERR_SOCKET' },
  ] as const;

  for (const { how, network } of rows) {
    it(`${how}: a get rejects with the network error (${network}), not the request timeout`, async () => {
      d.cutMidBody('get', how);
      const err = await outcome(store().get('10.96.0.10'));
      expect(err).toBeInstanceOf(KubernetesApiError);
      const e = err as KubernetesApiError;
      // fetch's "terminated", then what its cause says (its code), then the server
      expect(e.message).toMatch(new RegExp(`^get ${IPADDRESSES.replaceAll('.', '\\.')} "10\\.96\\.0\\.10": terminated: .*${network}`));
      expect(e.message.endsWith(` (the API server at ${d.url})`)).toBe(true);
      expect([e.timeoutMs, e.code]).toEqual([undefined, undefined]);
    });

    it(`${how}: a list that fails so is a failed list, named in lastError, and listed again`, async () => {
      d.cutMidBody('list', how);
      const s = store();
      const errors: string[] = [];
      s.onStateChange((_state, error) => {
        if (error !== undefined) errors.push(error.message);
      });
      s.start();
      await s.waitForSync();
      expect(errors[0]).toMatch(new RegExp(`^list ${IPADDRESSES.replaceAll('.', '\\.')}: terminated: .*${network}`));
      expect(errors[0]!.endsWith(` (the API server at ${d.url})`)).toBe(true);
    });
  }
});

// Regression: a request whose answer began (its status and headers came, and part of its body)
// and then stalled was said as "no answer from <server> within N ms" — for a create answered 201,
// the object made, read as a request that may never have reached the server.
describe('an answer that begins and then stalls', () => {
  let server: Server;
  let url: string;
  const closers: (() => void)[] = [];

  beforeEach(async () => {
    // the status, the headers and the first bytes of the body, and then nothing
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.write('{"kind":"IPAddress",');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  /** The same kubeconfig, loaded by client-node 1.x (which sends its requests with node-fetch). */
  function kubeConfig1For(server: string): KubeConfig {
    const kc = new KubeConfig1();
    kc.loadFromString(kubeConfigFor(server).exportConfig());
    return kc as unknown as KubeConfig;
  }

  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(['2.x', '1.x'])(
    'a create and a get reject saying the answer began, with its status, and did not end in time (client-node %s)',
    async (version) => {
      const kc = version === '2.x' ? kubeConfigFor(url) : kubeConfig1For(url);
      // a deadline long enough for the status and headers to arrive on a loaded machine: the body never ends
      const s = new KubernetesStore(kc, { start: false, requestTimeoutMs: 2000 });
      closers.push(() => s.close());
      const [created, got] = await Promise.all([outcome(s.create(RECORD)), outcome(s.get('10.96.0.10'))]);
      const began = (status: string) => `the answer from ${url} (${status}) began but did not end within 2000 ms (requestTimeoutMs)`;
      for (const [err, verb, said] of [
        // the create's answer was lost: it reads the object back, which stalls the same way; the
        // 201 said the object was made
        [
          created,
          'create',
          `${began('HTTP 201')}; the object was created (the API server answered 201) but its body was lost, and reading it back failed: ${began('HTTP 200')}`,
        ],
        [got, 'get', began('HTTP 200')],
      ] as const) {
        expect(err).toBeInstanceOf(KubernetesApiError);
        const e = err as KubernetesApiError;
        expect(e.message).toBe(`${verb} ${IPADDRESSES} "10.96.0.10": ${said}`);
        expect([e.timeoutMs, e.code]).toEqual([2000, undefined]);
      }
    },
  );
});

// A watch whose connection is cut mid-stream — reset, or closed without the body's last chunk —
// ends at once with the fetch's error, whatever the runtime, and is resumed; it is never left to
// the idle timers (90 s without data, 150 s without an event). The clock is fake (setTimeout, Date and performance; the network is
// real) and moves at most 2 s in all, so no idle timer can end the watch: only the cut can.
describe('a watch whose connection is cut mid-stream is ended by the cut, not by its idle timers (fake clock)', () => {
  const MOVED_AT_MOST_MS = 2_000;
  let d: ApiServerDouble;
  let s: KubernetesStore | undefined;
  beforeEach(async () => {
    d = await ApiServerDouble.start();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  });
  afterEach(async () => {
    s?.close();
    s = undefined;
    vi.useRealTimers();
    await d.close();
  });

  /** Lets the real network work (setImmediate is not faked) and the fake clock move, 10 ms at a time, until `cond` holds. */
  async function until2s(cond: () => boolean, what: string): Promise<void> {
    for (let moved = 0; !cond(); moved += 10) {
      if (moved > MOVED_AT_MOST_MS) throw new Error(`gave up waiting for ${what}`);
      for (let i = 0; i < 50 && !cond(); i++) await new Promise((r) => setImmediate(r));
      await vi.advanceTimersByTimeAsync(10);
    }
  }
  function newStore(): KubernetesStore {
    s = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 1, maxMs: 5, jitter: 0 }, watchTimeoutSeconds: 300 });
    return s;
  }
  const watches = () => d.requestsOf('watch');

  const NETWORK = { reset: 'ECONNRESET', close: 'UND_ERR_SOCKET' } as const;

  for (const how of ['reset', 'close'] as const) {
    it(`${how} after an event: the watch is resumed from where it stopped, nothing failed`, async () => {
      const st = newStore();
      await until2s(() => st.state === 'synced' && d.openWatches() === 1, 'synced and watching');
      d.insert({ metadata: { name: '10.0.0.1', labels: allocatorLabels('IPv4') }, spec: { parentRef: WEB } }); // another client
      await until2s(() => st.cache.get('10.0.0.1') !== undefined, 'the event'); // the watch brought one: its end is resumed at once
      d.dropWatches(how);
      await until2s(() => watches().length === 2 && d.openWatches() === 1, 'the watch resumed');
      expect(watches()[1]!.query.resourceVersion).toBe(d.resourceVersion); // the event's
      expect([d.requestsOf('list').length, st.stats.errors, st.lastError, st.state]).toEqual([1, 0, undefined, 'synced']);
    });

    it(`${how}: the watch request ends at once with the fetch's error (${NETWORK[how]})`, async () => {
      const lw = clientNodeListerWatcher(
        kubeConfigFor(d.url),
        new ApiRequests(d.url, 10_000),
        IPADDRESSES,
        '/apis/networking.k8s.io/v1/ipaddresses',
        async () => ({}),
      );
      const ends: unknown[] = [];
      const answered = lw.watch(
        { resourceVersion: d.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300 },
        () => {},
        (err) => ends.push(err),
      );
      let abort: (() => void) | undefined;
      void answered.then((a) => (abort = a));
      await until2s(() => abort !== undefined, 'the answer'); // its headers read: the cut falls in its body
      d.dropWatches(how);
      await until2s(() => ends.length === 1, 'the watch’s end');
      const err = ends[0] as Error & { cause?: { code?: unknown } };
      expect([err.name, err.message, err.cause?.code]).toEqual(['TypeError', 'terminated', NETWORK[how]]);
    });
  }
});
