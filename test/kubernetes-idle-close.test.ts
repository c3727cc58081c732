// A kept-alive connection that the server closes as idle just as the next request is written on it
// (kube-apiserver's, or a load balancer's, idle timeout racing the client). Nothing of the answer
// came: the server closed the connection before it read the request. client-go sends such a
// request again when it is idempotent — a get, a list page, a watch — and never sends a create or
// delete again on its own: here a lost create or delete is read back instead (docs/kubernetes.md).
// client-node 1.x opens a connection per request, so only 2.x meets the race; a read closed so on
// a new connection is sent once more with either.
import { afterEach, describe, expect, it } from 'vitest';
import { Allocator } from '../adapters/allocator.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { BOTH_CLIENT_NODES, kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';
import { until } from './k8s/helpers.ts';
import { WEB } from './k8s/lost-answers.ts';
import { rejection } from './helpers.ts';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/**
 * How long the double keeps an idle connection: 10 minutes. With Node's 5 s (undici keeps it 3 s)
 * a kept-alive test stalled that long between its two requests would send the second on a new
 * connection, which the double does not close.
 */
const KEPT_ALIVE_MS = 600_000;

/**
 * A double holding 10.0.0.7, and a store on it made with client-node `Config`; `start`: with its
 * informer started (its watch then keeps a connection of its own).
 */
async function setUp(
  start = false,
  Config: (typeof BOTH_CLIENT_NODES)[number][1] = BOTH_CLIENT_NODES[0][1],
): Promise<{ double: ApiServerDouble; store: KubernetesStore }> {
  // an idle connection outlives any stall of a loaded machine between two requests of a test
  const double = await ApiServerDouble.start({ keepAliveTimeoutMs: KEPT_ALIVE_MS });
  closing.push(() => double.close());
  double.insert({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IPAddress',
    metadata: { name: '10.0.0.7' },
    spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'web' } },
  });
  const store = new KubernetesStore(kubeConfigFor(double.url, undefined, { Config }), { start, requestTimeoutMs: 5000 });
  closing.push(() => store.close());
  return { double, store };
}

describe('a kept-alive connection the server closes as the next request arrives', () => {
  it('a get is sent once more, on a new connection, and resolves', async () => {
    const { double, store } = await setUp();
    expect(await store.get('10.0.0.7')).toMatchObject({ name: '10.0.0.7' });
    expect(double.connectionsAccepted).toBe(1);
    double.closeOnArrival('get');
    expect(await store.get('10.0.0.7')).toMatchObject({ name: '10.0.0.7' });
    expect(double.closedOnArrival).toBe(1);
    expect(double.connectionsAccepted).toBe(2);
  });

  it('a list page closed so twice fails saying so', async () => {
    const { double, store } = await setUp();
    const errors: string[] = [];
    store.onStateChange((_state, error) => {
      if (error !== undefined) errors.push(error.message);
    });
    double.closeOnArrival('list', 2, 'any');
    store.start();
    await until(() => errors.length > 0, 'the failed list');
    expect(double.closedOnArrival).toBe(2);
    expect(errors[0]).toMatch(
      /^list ipaddresses\.networking\.k8s\.io: sent twice, its connection closed before any answer both times: fetch failed: /,
    );
  });

  it('a list page is sent once more: the cache syncs with no failed list', async () => {
    const { double, store } = await setUp();
    await store.get('10.0.0.7'); // leaves a kept-alive connection idle for the list
    double.closeOnArrival('list');
    store.start();
    await store.waitForSync();
    expect(double.closedOnArrival).toBe(1);
    expect(store.stats.errors).toBe(0);
    expect(store.lastError).toBeUndefined();
    expect(store.cache.get('10.0.0.7')).toBeDefined();
  });

  it('a create is not sent again blindly: it is read back, found missing, and sent once more, as a lost create is', async () => {
    const { double, store } = await setUp(true);
    await store.waitForSync();
    const alloc = Allocator.create('10.0.0.0/28', { store });
    closing.push(() => alloc.destroy());
    await store.get('10.0.0.7'); // leaves a kept-alive connection idle for the create
    const before = double.requests.length;
    double.closeOnArrival('create');
    await alloc.allocate('10.0.0.5', WEB);
    expect(double.closedOnArrival).toBe(1);
    // the create closed unread, then its read back (nothing there), then its one send more
    expect(double.requests.slice(before).map((r) => [r.verb, r.path.split('/').pop()])).toEqual([
      ['get', '10.0.0.5'],
      ['create', 'ipaddresses'],
    ]);
  });
});

describe.each(BOTH_CLIENT_NODES)('a get whose connection is closed before any answer, client-node %s', (_, Config) => {
  it('is sent once more, and resolves', async () => {
    const { double, store } = await setUp(false, Config);
    double.closeOnArrival('get', 1, 'any');
    expect(await store.get('10.0.0.7')).toMatchObject({ name: '10.0.0.7' });
    expect(double.closedOnArrival).toBe(1);
  });

  it('is sent once more only: closed again, it fails saying so, with the network error', async () => {
    const { double, store } = await setUp(false, Config);
    double.closeOnArrival('get', 2, 'any');
    const err = (await rejection(store.get('10.0.0.7'))) as Error;
    expect(err.name).toBe('KubernetesApiError');
    expect(err.message).toMatch(
      /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.7": sent twice, its connection closed before any answer both times: fetch failed: .*(other side closed|socket hang up|ECONNRESET).* \(the API server at http:\/\/127\.0\.0\.1:\d+\)$/,
    );
    expect(double.closedOnArrival).toBe(2);
    expect(await store.get('10.0.0.7')).toBeDefined(); // the next get is a request of its own
  });

  // Regression: the error said only the second failure, as if the get had been sent once.
  it('sent once more and answered with a 5xx, it fails saying both', async () => {
    const { double, store } = await setUp(false, Config);
    double.closeOnArrival('get', 1, 'any');
    double.failNext('get', 1, 500, 'etcdserver: leader changed');
    const err = (await rejection(store.get('10.0.0.7'))) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect(err.code).toBe(500);
    expect(err.message).toMatch(
      /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.7": sent twice, its connection closed before any answer the first time \(.*(other side closed|socket hang up|ECONNRESET).*\); the second time: HTTP 500 InternalError: Internal error occurred: etcdserver: leader changed$/,
    );
    // the first send's failure is the cause: the answer, the second's, has none
    expect((err?.cause as Error | undefined)?.message).toMatch(/fetch failed|socket hang up|ECONNRESET/);
    expect(double.closedOnArrival).toBe(1);
  });

  it('sent once more to a server gone meanwhile (ECONNREFUSED), it fails saying both', async () => {
    // a server that closes the connection of the first request as it arrives, and stops listening
    const server = net.createServer((socket) => {
      socket.once('data', () => {
        socket.destroy();
        server.close();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = new KubernetesStore(kubeConfigFor(url, undefined, { Config }), { start: false, requestTimeoutMs: 5000 });
    closing.push(() => store.close());
    const err = (await rejection(store.get('10.0.0.7'))) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect(err.message).toMatch(
      /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.7": sent twice, its connection closed before any answer the first time \(.*(other side closed|socket hang up|ECONNRESET).*\); the second time: .*ECONNREFUSED.* \(the API server at http:\/\/127\.0\.0\.1:\d+\)$/,
    );
  });

  // Regression: a second send kept from going out by the kubeconfig (its TLS material, its proxy)
  // said only that, as if the get had been sent once.
  it('sent once more when the kubeconfig no longer lets it go out (a certificate-authority file gone), it fails saying both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-idle-close-'));
    closing.push(() => rmSync(dir, { recursive: true, force: true }));
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, 'not read: the server is plain HTTP\n');
    // a server that closes the connection of the first request as it arrives, the file removed meanwhile
    const server = net.createServer((socket) => {
      socket.once('data', () => {
        rmSync(caFile, { force: true });
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kc = new Config();
    kc.loadFromOptions({
      clusters: [{ name: 'double', server: url, caFile }],
      users: [{ name: 'tester', token: TEST_TOKEN }],
      contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
      currentContext: 'double',
    });
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 5000 });
    closing.push(() => store.close());
    const err = (await rejection(store.get('10.0.0.7'))) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect(err.message).toMatch(
      /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.7": its connection closed before any answer \(.*(other side closed|socket hang up|ECONNRESET).*\); the request to http:\/\/127\.0\.0\.1:\d+ was not sent again: cannot read the certificate-authority file of cluster "double" in the kubeconfig \(".*ca\.crt"\): no such file or directory \(ENOENT\)$/,
    );
  });
});

describe('a get sent once more after its connection closed before any answer, then failing on its own', () => {
  // Regression: a deadline, or the giving up after the waits the server asked for, made an error
  // that said only the second send, as if the get had been sent once.
  it('ends by its deadline saying both', async () => {
    const { double } = await setUp();
    const store = new KubernetesStore(kubeConfigFor(double.url), { start: false, requestTimeoutMs: 2000 });
    closing.push(() => store.close());
    double.closeOnArrival('get', 1, 'any');
    double.setLatency(KEPT_ALIVE_MS, 'get'); // the second send is never answered
    const err = (await rejection(store.get('10.0.0.7'))) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect(err.timeoutMs).toBe(2000);
    expect(err.message).toMatch(
      /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.7": sent twice, its connection closed before any answer the first time \(.*(other side closed|socket hang up|ECONNRESET).*\); the second time: no answer from http:\/\/127\.0\.0\.1:\d+ within 2000 ms \(requestTimeoutMs\)$/,
    );
    expect(double.closedOnArrival).toBe(1);
    expect(double.requestsOf('get')).toHaveLength(1); // the second send reached the server
  });

  // the request is sent 12 times: once, once more at once after the close, and again after each of the 10 waits
  it.each([
    ['closed on its first send, then throttled eleven times', 1],
    ['throttled ten times, then closed, then throttled again', 11],
  ])('%s: gives up counting every send and naming the one closed', async (_, closedSend) => {
    // a server that closes request `closedSend`'s connection as it arrives and asks every other
    // one for a wait (429, Retry-After: 0)
    let requests = 0;
    const server = http.createServer((req, res) => {
      if (++requests === closedSend) {
        req.socket.destroy();
        return;
      }
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'slow down', reason: 'TooManyRequests', code: 429 }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise((resolve) => server.close(resolve)));
    closing.push(() => server.closeAllConnections());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = new KubernetesStore(kubeConfigFor(url), { start: false, requestTimeoutMs: 60_000 });
    closing.push(() => store.close());
    const err = (await rejection(store.get('10.0.0.7'))) as KubernetesApiError;
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect(err.resends).toBe(11);
    expect(err.code).toBe(429);
    expect(err.message).toMatch(
      new RegExp(
        '^get ipaddresses\\.networking\\.k8s\\.io "10\\.0\\.0\\.7": gave up after 11 resends ' +
          '\\(the server throttled it \\(429\\) 10 times, each waited out as it asked; ' +
          `its connection closed before any answer on send ${closedSend} of 12 ` +
          '\\(.*(other side closed|socket hang up|ECONNRESET).*\\), and it was sent again at once\\); ' +
          'the last answer: HTTP 429 TooManyRequests: slow down$',
      ),
    );
    expect(requests).toBe(12);
  });
});

/** A synced store whose watch has had an event (a watch ended without any within a second is a failure: client-go's "very short watch"). */
async function watching(Config?: (typeof BOTH_CLIENT_NODES)[number][1]): Promise<{ double: ApiServerDouble; store: KubernetesStore }> {
  const { double, store } = await setUp(true, Config);
  await store.waitForSync();
  await until(() => store.stats.watches === 1 && double.openWatches() === 1, 'the first watch');
  double.insert({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IPAddress',
    metadata: { name: '10.0.0.8' },
    spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'web' } },
  });
  await until(() => store.cache.get('10.0.0.8') !== undefined, 'the event');
  return { double, store };
}

describe('a watch resumed on a kept-alive connection the server closes as it arrives', () => {
  it('is sent once more: resumed with no failure and no list again', async () => {
    const { double, store } = await watching();
    double.closeOnArrival('watch');
    double.closeWatches(); // a clean end, as the server's watch timeout: resumed on the watch's own connection
    await until(() => double.openWatches() === 1 && double.closedOnArrival === 1, 'the watch resumed');
    expect(store.stats).toMatchObject({ lists: 1, errors: 0 });
    expect(store.lastError).toBeUndefined();
  });
});

describe.each(BOTH_CLIENT_NODES)('a watch whose connection is closed before any answer, client-node %s', (_, Config) => {
  it('is sent once more: resumed with no failure and no list again', async () => {
    const { double, store } = await watching(Config);
    double.closeOnArrival('watch', 1, 'any');
    double.closeWatches();
    await until(() => double.openWatches() === 1 && double.closedOnArrival === 1, 'the watch resumed');
    expect(store.stats).toMatchObject({ lists: 1, errors: 0 });
    expect(store.lastError).toBeUndefined();
  });

  it('closed so again, it fails saying so, and the informer lists again', async () => {
    const { double, store } = await watching(Config);
    const errors: string[] = [];
    store.onStateChange((_state, error) => {
      if (error !== undefined) errors.push(error.message);
    });
    double.closeOnArrival('watch', 2, 'any');
    double.closeWatches();
    await until(() => double.closedOnArrival === 2 && store.stats.lists === 2, 'the list after the failed watch');
    expect(store.stats.errors).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^watch ipaddresses\.networking\.k8s\.io: sent twice, its connection closed before any answer both times: fetch failed: .*(other side closed|socket hang up|ECONNRESET)/,
    );
  });

  it('sent once more and answered with a 5xx, it fails saying both, and the informer lists again', async () => {
    const { double, store } = await watching(Config);
    const errors: string[] = [];
    store.onStateChange((_state, error) => {
      if (error !== undefined) errors.push(error.message);
    });
    double.closeOnArrival('watch', 1, 'any');
    double.failNext('watch', 1, 500, 'etcdserver: leader changed');
    double.closeWatches();
    await until(() => store.stats.lists === 2, 'the list after the failed watch');
    expect(double.closedOnArrival).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^watch ipaddresses\.networking\.k8s\.io: sent twice, its connection closed before any answer the first time \(.*(other side closed|socket hang up|ECONNRESET).*\); the second time: HTTP 500 InternalError: Internal error occurred: etcdserver: leader changed$/,
    );
  });
});
