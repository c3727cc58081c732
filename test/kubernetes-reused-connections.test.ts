// withReusedConnections (adapters/kubernetes/reused-connections.ts): which requests share a
// dispatcher. Two settings that differ in any TLS option must never share one, as client-go's
// transport cache (k8s.io/client-go/transport/cache.go, tlsTransportCache) keys its transports by
// the whole TLS configuration: a connection made with one client certificate would otherwise
// carry the requests of another.
import { type Cluster, KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrDestroyed } from '../adapters/errors.ts';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { closeReusedConnections, type Dispatcher, withReusedConnections } from '../adapters/kubernetes/reused-connections.ts';
import { type CheckReport, FIX_CONCURRENCY } from '../cli/check.ts';
import { addIPAddress, addServiceCIDR, cli, startCluster } from './cli-helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { until } from './k8s/helpers.ts';
import { kubeConfigFor } from './k8s/kubeconfig.ts';

type MakeDispatcher = (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;

/** A KubeConfig as far as withReusedConnections reads it: one whose every dispatcher is new. */
function makingNew(): { createDispatcher: MakeDispatcher } {
  return { createDispatcher: () => ({ destroy() {} }) };
}

const cluster = { name: 'c', server: 'https://10.0.0.1:6443', skipTLSVerify: false } as Cluster;

function dispatcherFor(kc: KubeConfig, agentOptions: Record<string, unknown>): unknown {
  return (kc as unknown as { createDispatcher: MakeDispatcher }).createDispatcher(cluster, agentOptions);
}

describe('withReusedConnections', () => {
  it('the same server and TLS options give the same dispatcher; another CA or client certificate another', () => {
    const kc = withReusedConnections(makingNew() as unknown as KubeConfig);
    const first = dispatcherFor(kc, { ca: Buffer.from('ca-1'), cert: Buffer.from('c'), key: Buffer.from('k') });
    expect(dispatcherFor(kc, { ca: Buffer.from('ca-1'), cert: Buffer.from('c'), key: Buffer.from('k') })).toBe(first);
    expect(dispatcherFor(kc, { ca: Buffer.from('ca-2'), cert: Buffer.from('c'), key: Buffer.from('k') })).not.toBe(first);
    expect(dispatcherFor(kc, { ca: Buffer.from('ca-1'), cert: Buffer.from('c2'), key: Buffer.from('k') })).not.toBe(first);
  });

  it('two certificate/key pairs whose bytes hold the separators of the other never share a dispatcher', () => {
    // the same bytes laid end to end, cut in two places: cert "C", key "K\0key\0bZ" against cert
    // "C\0key\0bK", key "Z"
    const kc = withReusedConnections(makingNew() as unknown as KubeConfig);
    const one = dispatcherFor(kc, { cert: Buffer.from('C'), key: Buffer.from('K\0key\0bZ') });
    const other = dispatcherFor(kc, { cert: Buffer.from('C\0key\0bK'), key: Buffer.from('Z') });
    expect(other).not.toBe(one);
    // and as text (a passphrase, a server name)
    const a = dispatcherFor(kc, { passphrase: 'p', servername: 'x\0servername\0string:y' });
    const b = dispatcherFor(kc, { passphrase: 'p\0servername\0string:x', servername: 'y' });
    expect(b).not.toBe(a);
  });

  // Regression: a function was told by its source text, so two closures of one source (a check
  // of the server's certificate pinned to another key, say) shared the first one's dispatcher
  it('a function among the options is told by its identity: two closures of one source never share a dispatcher', () => {
    const kc = withReusedConnections(makingNew() as unknown as KubeConfig);
    const pinnedTo = (key: string) => (_host: string, cert: { pubkey?: string }) =>
      cert.pubkey === key ? undefined : new Error('not pinned');
    const one = pinnedTo('a');
    const first = dispatcherFor(kc, { checkServerIdentity: one });
    expect(dispatcherFor(kc, { checkServerIdentity: one })).toBe(first);
    expect(String(pinnedTo('b'))).toBe(String(one));
    expect(dispatcherFor(kc, { checkServerIdentity: pinnedTo('b') })).not.toBe(first);
  });
});

/** A dispatcher as undici's, that records what is asked of it. */
class RecordingDispatcher {
  readonly sent: string[] = [];
  closed = false;
  destroyed = false;
  constructor(readonly cert: string) {}
  dispatch(options: { origin?: unknown }): boolean {
    this.sent.push(String(options.origin));
    return true;
  }
  close(): void {
    this.closed = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

/**
 * A KubeConfig as far as withReusedConnections reads it, whose dispatchers are RecordingDispatchers,
 * all kept in `made`; `user`, when given, is its current user (switched by setting its name).
 */
function recording(user?: { name: string }): { kc: KubeConfig; made: RecordingDispatcher[] } {
  const made: RecordingDispatcher[] = [];
  const kc = {
    ...(user === undefined ? {} : { getCurrentUser: () => user }),
    createDispatcher: (_cluster: Cluster | null, { cert }: Record<string, unknown>) => {
      const d = new RecordingDispatcher(String(cert));
      made.push(d);
      return d;
    },
  };
  return { kc: withReusedConnections(kc as unknown as KubeConfig), made };
}

/** What a request is handed for its client certificate `cert`, as client-node asks for it. */
function handedFor(kc: KubeConfig, cert: string): Dispatcher {
  return dispatcherFor(kc, { cert: Buffer.from(cert), key: Buffer.from('k') }) as Dispatcher;
}

/** Lets the retired dispatchers' close run (it is asked for on a later microtask). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a client certificate that changes (its file rotated)', () => {
  // Regression: every certificate a KubeConfig had sent kept its dispatcher, and its idle
  // connections, until the owner was closed: one more per rotation.
  it("retires the route's previous dispatcher: closed once its requests have ended, never destroyed under them", async () => {
    const { kc, made } = recording();
    for (let i = 0; i < 10; i++) handedFor(kc, `cert-${i}`).dispatch({ origin: cluster.server }, {});
    await settled();
    expect(made.map((d) => d.cert)).toEqual([...Array(10).keys()].map((i) => `cert-${i}`));
    expect(made.map((d) => d.closed)).toEqual([...Array(9).fill(true), false]);
    expect(made.some((d) => d.destroyed)).toBe(false);
    // the same certificate again: the same dispatcher, nothing new made
    handedFor(kc, 'cert-9').dispatch({ origin: cluster.server }, {});
    expect(made).toHaveLength(10);
    expect(made[9]!.sent).toHaveLength(2);
  });

  it('a request handed the old dispatcher that sends after the change goes out with its own certificate, on connections of its own', async () => {
    const { kc, made } = recording();
    const old = handedFor(kc, 'old'); // authenticated with the old certificate, not sent yet
    handedFor(kc, 'new').dispatch({ origin: cluster.server }, {});
    old.dispatch({ origin: cluster.server }, {});
    await settled();
    expect(made.map((d) => [d.cert, d.sent.length, d.closed])).toEqual([
      ['old', 0, true],
      ['new', 1, false],
      ['old', 1, true], // made for that request, closed once it has ended
    ]);
  });

  it('another server keeps its own dispatcher', async () => {
    const { kc, made } = recording();
    handedFor(kc, 'a');
    const other = { ...cluster, server: 'https://10.0.0.2:6443' } as Cluster;
    (kc as unknown as { createDispatcher: MakeDispatcher }).createDispatcher(other, { cert: Buffer.from('b') });
    await settled();
    expect(made.map((d) => d.closed)).toEqual([false, false]);
  });
});

describe('a context switched between users', () => {
  // Regression: each switch retired the dispatcher of the user switched from, and switching back
  // made a new one (and new connections), as if its certificate had rotated
  it("keeps each user's dispatcher: switching back finds it, and nothing is closed", async () => {
    const user = { name: 'alice' };
    const { kc, made } = recording(user);
    const alice = handedFor(kc, 'alice-cert');
    user.name = 'bob';
    const bob = handedFor(kc, 'bob-cert');
    for (let i = 0; i < 3; i++) {
      user.name = 'alice';
      expect(handedFor(kc, 'alice-cert')).toBe(alice);
      user.name = 'bob';
      expect(handedFor(kc, 'bob-cert')).toBe(bob);
    }
    await settled();
    expect(made.map((d) => [d.cert, d.closed])).toEqual([
      ['alice-cert', false],
      ['bob-cert', false],
    ]);
  });

  it("a user's own certificate rotated still retires its dispatcher before, and only that one", async () => {
    const user = { name: 'alice' };
    const { kc, made } = recording(user);
    handedFor(kc, 'alice-cert');
    user.name = 'bob';
    handedFor(kc, 'bob-cert');
    handedFor(kc, 'bob-cert-rotated');
    await settled();
    expect(made.map((d) => [d.cert, d.closed])).toEqual([
      ['alice-cert', false],
      ['bob-cert', true],
      ['bob-cert-rotated', false],
    ]);
  });

  it('users whose requests carry the same options share one, kept while either still uses it', async () => {
    const user = { name: 'alice' };
    const { kc, made } = recording(user);
    const shared = handedFor(kc, 'same');
    user.name = 'bob';
    expect(handedFor(kc, 'same')).toBe(shared);
    // bob's options change: the one alice still uses stays open
    handedFor(kc, 'bob-own');
    await settled();
    expect(made.map((d) => [d.cert, d.closed])).toEqual([
      ['same', false],
      ['bob-own', false],
    ]);
  });
});

describe('after closeReusedConnections', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('every dispatcher is destroyed, and nothing is opened again: a request fails with the reason given', async () => {
    const { kc, made } = recording();
    const handed = handedFor(kc, 'a');
    handedFor(kc, 'b'); // 'a' retired, closing
    closeReusedConnections(kc, () => new ErrDestroyed('KubernetesStore'));
    expect(made.map((d) => d.destroyed)).toEqual([true, true]);
    expect(() => handedFor(kc, 'c')).toThrow(ErrDestroyed);
    expect(() => handed.dispatch({ origin: cluster.server }, {})).toThrow('KubernetesStore has been destroyed');
    expect(made).toHaveLength(2);
  });

  // Regression: a request whose credentials came only after close() (an exec credential plugin
  // still running) had client-node make a dispatcher for it, kept open by no one.
  it('a request still authenticating when its store is closed opens nothing, and fails with ErrDestroyed', async () => {
    const double = await ApiServerDouble.start({ tls: true }); // an http:// server is asked with no authenticator
    try {
      const kc = kubeConfigFor(double.url);
      let release = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      let asked = 0;
      kc.addAuthenticator({
        isAuthProvider: () => true,
        applyAuthentication: async () => {
          asked++;
          await gate;
        },
      });
      const proto = KubeConfig.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
      // before the store wraps it: the wrappers take client-node's createDispatcher when made
      const made = vi.spyOn(proto, 'createDispatcher');
      const authenticated = vi.spyOn(proto, 'applySecurityAuthentication');
      const store = new KubernetesStore(kc, { start: false });
      const get = store.get('10.96.0.10');
      await until(() => asked === 1, 'the authentication to start');
      store.close();
      await expect(get).rejects.toBeInstanceOf(ErrDestroyed);
      release();
      await expect(authenticated.mock.results[0]!.value).rejects.toThrow('KubernetesStore has been closed');
      expect(made).not.toHaveBeenCalled();
    } finally {
      await double.close();
    }
  });
});

describe('check --fix on one connection', () => {
  // Regression: each leak cost a new TLS connection: undici closes the connection of a request
  // with a body whose method expects none (the delete's DeleteOptions), and gives the connection of
  // an answer back to its pool one event-loop turn after the answer's end, when the next request
  // (the Service read again) had already opened another.
  it('fixing 40 leaks over https opens no connection per leak: each request goes on one already open', async () => {
    const c = await startCluster({ tls: true, keepAliveTimeoutMs: 600_000 }); // an idle connection outlives a loaded machine's stalls
    try {
      addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24'], true);
      const leaks = [...Array(40).keys()].map((i) => `10.96.0.${10 + i}`);
      for (const ip of leaks) addIPAddress(c.double, ip, { namespace: 'default', name: 'gone' });
      const r = await cli(['check', '--fix', '--yes', '--json', '--kubeconfig', c.kubeconfig], { now: () => Date.now() + 61_000 });
      expect((JSON.parse(r.stdout) as CheckReport).fixed!.deleted).toEqual(leaks);
      expect(c.double.requests).toHaveLength(3 + 3 * leaks.length); // three lists, then a read, a Service read and a delete per leak
      // one connection per leak under way at most (FIX_CONCURRENCY), not one per leak or per request
      expect(c.double.connectionsAccepted).toBeLessThanOrEqual(FIX_CONCURRENCY);
    } finally {
      await c.close();
    }
  });
});
