// The connection client-node's requests open through a SOCKS5 proxy is made as undici makes a
// connection of its own (core/connect.js): Nagle's algorithm off (setNoDelay), and 10 s to
// connect, handshake included, where the socks library waits 30 s. 2.x's is opened by
// proxy-dispatch.ts socksDispatcher, 1.x's by socks-proxy-agent (proxy-dispatch.ts
// markingSocksFailures).
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { startSocks5Proxy } from './doubles/socks5-proxy.ts';
import { addIPAddress } from './cli-helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { BOTH_CLIENT_NODES, kubeConfigFor, TEST_TOKEN } from './k8s/kubeconfig.ts';

/** setTimeout as it is before a test fakes it. */
const realSetTimeout = globalThis.setTimeout;

describe.each(BOTH_CLIENT_NODES)('the connection through a SOCKS5 proxy, with client-node %s', (_version, Config) => {
  const closing: (() => unknown)[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    for (const close of closing.splice(0)) await close();
  });

  // Regression: undici's connector turns Nagle's algorithm off on every connection it makes; the
  // SOCKS one to an http:// server kept it on, so a request written in parts could wait for the
  // ACK of the first
  it('to an http:// server: Nagle’s algorithm is off, as on the connections undici makes itself', async () => {
    const d = await ApiServerDouble.start();
    closing.push(() => d.close());
    addIPAddress(d, '10.96.0.10', { namespace: 'default', name: 'dns' });
    const socks = await startSocks5Proxy({ 'apiserver.test': '127.0.0.1' });
    closing.push(socks.close);
    const socksPort = Number(new URL(socks.url).port);
    const noDelay: boolean[] = [];
    const setNoDelay = net.Socket.prototype.setNoDelay;
    vi.spyOn(net.Socket.prototype, 'setNoDelay').mockImplementation(function (this: net.Socket, enable?: boolean) {
      if (this.remotePort === socksPort) noDelay.push(enable ?? true);
      return setNoDelay.call(this, enable);
    });
    const kc = kubeConfigFor(`http://apiserver.test:${new URL(d.url).port}`, TEST_TOKEN, { proxyUrl: socks.url, Config });
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
    closing.push(() => store.close());
    await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
    expect(noDelay).toEqual([true]);
  });

  // The 10 s are the connection's alone: socks-proxy-agent (1.x) gives the time it connects in to
  // the socket as an idle timeout too, and a watch quiet for that long would be cut
  it('to an http:// server: the connection made has no idle timeout; a watch may stay quiet', async () => {
    const d = await ApiServerDouble.start();
    closing.push(() => d.close());
    addIPAddress(d, '10.96.0.10', { namespace: 'default', name: 'dns' });
    const socks = await startSocks5Proxy({ 'apiserver.test': '127.0.0.1' });
    closing.push(socks.close);
    const socksPort = Number(new URL(socks.url).port);
    const toProxy: net.Socket[] = [];
    const setNoDelay = net.Socket.prototype.setNoDelay;
    vi.spyOn(net.Socket.prototype, 'setNoDelay').mockImplementation(function (this: net.Socket, enable?: boolean) {
      if (this.remotePort === socksPort) toProxy.push(this);
      return setNoDelay.call(this, enable);
    });
    const kc = kubeConfigFor(`http://apiserver.test:${new URL(d.url).port}`, TEST_TOKEN, { proxyUrl: socks.url, Config });
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
    closing.push(() => store.close());
    await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
    expect(toProxy).toHaveLength(1);
    expect(toProxy[0]!.timeout ?? 0).toBe(0);
  });

  // Regression: the socks library's own 30 s, where undici gives a connection 10 s
  it('to a proxy that never answers: given up after 10 s, as undici gives up a connection, said with the proxy and the time', async () => {
    const accepted: net.Socket[] = [];
    const silent = net.createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    closing.push(() => {
      for (const socket of accepted) socket.destroy();
      return new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const proxyUrl = `socks5://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const kc = kubeConfigFor('http://apiserver.test:8080', TEST_TOKEN, { proxyUrl, Config });
    // the store's own deadline far beyond the connection's
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 120_000 });
    closing.push(() => store.close());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const settled = store.get('10.96.0.10').catch((e: unknown) => e);
    // setImmediate is left real: I/O goes on between its turns
    while (accepted.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(9_999);
    let done = false;
    void settled.then(() => (done = true));
    await new Promise((resolve) => realSetTimeout(resolve, 200));
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await Promise.race([settled, new Promise((resolve) => realSetTimeout(() => resolve('not settled'), 5_000))]);
    expect((err as Error).message).toBe(
      'get ipaddresses.networking.k8s.io "10.96.0.10": the request to http://apiserver.test:8080 was not sent: ' +
        `the proxy at ${proxyUrl} (proxy-url of cluster "double" in the kubeconfig) did not connect to the API server within 10 s: ` +
        'it did not answer, or did not reach the API server, in that time',
    );
  });
});
