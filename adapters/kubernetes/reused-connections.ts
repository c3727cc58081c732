// Requests that share their connections, as kubectl's do.
//
// client-node 2.x builds the undici dispatcher of each request anew (KubeConfig.createDispatcher,
// called by applySecurityAuthentication): a new Agent whenever the cluster has any TLS setting —
// a certificate-authority, a client certificate, insecure-skip-tls-verify, a tls-server-name — or
// a proxy, which is every real cluster. Each request then opens a connection of its own (a TCP
// connect and, over https, a full TLS handshake), and the Agent is never closed: its idle
// connection stays open until undici's keep-alive timeout (4 s idle) ends it. Under load that is
// most of a request's cost, and as many open connections as requests in the last 4 s.
//
// client-go keeps one transport per TLS configuration (k8s.io/client-go/transport/cache.go,
// tlsTransportCache, keyed by the CA, client certificate and key, server name and insecure flag),
// so every client built from the same kubeconfig shares its keep-alive connections. Here the
// KubeConfig every request is sent with (config.ts kubeConfigAsSent) hands out one dispatcher per
// setting it was asked for: the same server, proxy and TLS options give the same dispatcher.
// Options that change — a client certificate file rewritten, a context switched — give a new one,
// and the one before stays for the requests still using it. The owner (a store, the ServiceCIDR
// source, the command line) closes them all when it is closed (closeReusedConnections). The
// dispatcher a request goes through when client-node set none (undici's global one) is said here
// too (sentThrough), for the wrappers that see each request on its way.
import { createHash } from 'node:crypto';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';

/** What is asked of an undici dispatcher here: to be let go of. */
interface Closable {
  destroy(): Promise<void> | void;
}

/** What undici's fetch asks of the dispatcher a request is sent through (client-node 2.x). */
export interface Dispatcher {
  dispatch(options: { origin?: unknown; headers?: unknown }, handler: unknown): boolean;
}

/** Where undici keeps the dispatcher fetch uses when none is given (its getGlobalDispatcher). */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * The dispatcher a request set with `given` is sent through: `given`, or, when client-node set
 * none (a cluster without TLS settings or proxy), undici's global one, which fetch then uses.
 * For the wrappers that see each request on its way (impersonation.ts, requests.ts).
 */
export function sentThrough(given: Dispatcher | undefined): Dispatcher {
  return given ?? ((globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] as Dispatcher);
}

/** How client-node 2.x makes the dispatcher of a request (absent in 1.x, which sends through an http.Agent). */
interface MakesDispatchers {
  createDispatcher?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;
}

/** The dispatchers a KubeConfig of withReusedConnections handed out, by setting (dispatcherKey). */
const handedOut = new WeakMap<object, Map<string, unknown>>();

/**
 * `kc` with one dispatcher per setting: an object that reads everything from `kc` (its
 * prototype) and whose createDispatcher gives the dispatcher it made before for the same server,
 * proxy and TLS options. `kc` itself when it makes no dispatchers (client-node 1.x).
 */
export function withReusedConnections(kc: KubeConfig): KubeConfig {
  const make = (kc as unknown as MakesDispatchers).createDispatcher;
  if (typeof make !== 'function') return kc;
  const made = new Map<string, unknown>();
  const reusing = Object.create(kc) as KubeConfig;
  (reusing as unknown as MakesDispatchers).createDispatcher = function (this: unknown, cluster, agentOptions) {
    const key = dispatcherKey(cluster, agentOptions);
    const known = made.get(key);
    if (known !== undefined) return known;
    const dispatcher = make.call(this, cluster, agentOptions);
    // undefined: undici's global dispatcher, which keeps its connections itself
    if (dispatcher !== undefined) made.set(key, dispatcher);
    return dispatcher;
  };
  handedOut.set(reusing, made);
  return reusing;
}

/**
 * Closes the connections of every dispatcher `kc` (a KubeConfig of withReusedConnections, or one
 * made from it) handed out, the requests still on them ended; a later request gets new ones.
 * Nothing for any other KubeConfig.
 */
export function closeReusedConnections(kc: KubeConfig): void {
  for (let o: object | null = kc; o !== null; o = Object.getPrototypeOf(o)) {
    const made = handedOut.get(o);
    if (made === undefined) continue;
    for (const dispatcher of made.values()) {
      try {
        // its requests were aborted by their owner already: what rejects here has been reported
        void Promise.resolve((dispatcher as Closable).destroy()).catch(() => {});
      } catch {
        // not an undici dispatcher (a caller's own createDispatcher): left to the caller
      }
    }
    made.clear();
    return;
  }
}

/**
 * What makes two requests' dispatchers interchangeable: the server (its scheme decides how a
 * proxy is asked), the proxy, and every TLS option client-node passes (CA, client certificate and
 * key, passphrase, server name, verification). Hashed, so that the key material is not held a
 * second time in the map's keys. Each part goes in with its length: a separator alone could be
 * inside a value (a NUL byte in a key file), and two different settings would then hash the same.
 */
function dispatcherKey(cluster: Cluster | null, agentOptions: Record<string, unknown>): string {
  const hash = createHash('sha256');
  const part = (tag: string, content: Uint8Array | string) => {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    hash.update(`${tag}${bytes.byteLength}:`).update(bytes);
  };
  const add = (name: string, value: unknown) => {
    part('n', name);
    if (value === undefined || value === null) hash.update('-');
    else if (value instanceof Uint8Array) part('b', value);
    else if (Array.isArray(value)) {
      hash.update(`a${value.length}:`);
      for (const [i, v] of value.entries()) add(`${name}[${i}]`, v);
    } else if (typeof value === 'object') part('o', JSON.stringify(value));
    else part(typeof value, String(value));
  };
  add('server', cluster?.server);
  add('proxy', cluster?.proxyUrl);
  for (const name of Object.keys(agentOptions).sort()) add(name, agentOptions[name]);
  return hash.digest('base64');
}
