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
//
// One dispatcher is kept per server and proxy (a route) and user: a context switched to another
// user and back finds the one it had, and users whose requests carry the same options (tokens, no
// client certificate) share one. Options that change for a user on a route — a client
// certificate file rewritten by its rotation — give a new one, and the one before is retired:
// closed as undici closes a dispatcher, once the requests it carries have ended (a watch
// included). client-go, on a rotated certificate
// (transport/cert_rotation.go), closes every connection made with the old one at once, requests
// on them included; here those are let finish. So a client certificate rotated every hour does
// not leave a dispatcher behind per hour until the owner is closed. A request handed the retired dispatcher that had not sent yet (it was authenticating
// when the options changed) is sent on a dispatcher of its own, made with the options it was
// authenticated with, closed once it has ended: never on the new options' connections, never
// refused.
//
// The owner (a store, the ServiceCIDR source, a ServiceCIDR helper, the command line) closes them
// all when it is closed (closeReusedConnections), and from then on the KubeConfig opens nothing:
// a request still authenticating then (an exec credential plugin that answers after close()) fails
// with the owner's error instead of opening a connection no one would close. The dispatcher a
// request goes through when client-node set none (undici's global one) is said here too
// (sentThrough), for the wrappers that see each request on its way.
import { createHash } from 'node:crypto';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';

/** What is asked of an undici dispatcher here: to carry requests, and to be let go of. */
interface Closable {
  dispatch?: Dispatcher['dispatch'];
  /** Closes once the requests it carries have ended (undici's graceful close). */
  close?: () => Promise<void> | void;
  /** Closes now, the requests on it ended. */
  destroy?: () => Promise<void> | void;
}

/** What undici's fetch asks of the dispatcher a request is sent through (client-node 2.x). @internal */
export interface Dispatcher {
  dispatch(options: { origin?: unknown; method?: unknown; headers?: unknown }, handler: unknown): boolean;
}

/** Where undici keeps the dispatcher fetch uses when none is given (its getGlobalDispatcher). */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * The dispatcher a request set with `given` is sent through: `given`, or, when client-node set
 * none (a cluster without TLS settings or proxy), undici's global one, which fetch then uses.
 * For the wrappers that see each request on its way (impersonation.ts, requests.ts).
 * @internal
 */
export function sentThrough(given: Dispatcher | undefined): Dispatcher {
  return given ?? ((globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] as Dispatcher);
}

/**
 * Has the request of `context` (a client-node 2.x RequestContext, which carries an undici
 * dispatcher) leave its connection open for the next request when it sends a body with a method
 * that expects none: a delete's DeleteOptions (the uid precondition of `check --fix`, the store's
 * deletes). undici closes such a connection once the answer is in, as a guard against servers
 * that would misread the body (client-h1.js: "Sending a payload body on a request that does not
 * expect it … Do not re-use the connection"); kube-apiserver reads it as it reads every
 * DeleteOptions, and client-go sends its deletes on kept-alive connections. Without this each
 * delete cost a new connection, and over https a TLS handshake. Nothing for a RequestContext of
 * 1.x, whose http.Agent keeps such a connection.
 * @internal
 */
export function keepingConnection(context: unknown): void {
  const { getDispatcher, setDispatcher } = context as {
    getDispatcher?: () => Dispatcher | undefined;
    setDispatcher?: (d: Dispatcher) => void;
  };
  if (typeof getDispatcher !== 'function' || typeof setDispatcher !== 'function') return;
  const inner = getDispatcher.call(context);
  setDispatcher.call(context, {
    dispatch(options, handler) {
      const { body, reset } = options as { body?: unknown; reset?: unknown };
      const keep = body !== undefined && body !== null && reset === undefined && options.method === 'DELETE';
      return sentThrough(inner).dispatch(keep ? ({ ...options, reset: false } as typeof options) : options, handler);
    },
  });
}

/** How client-node 2.x makes the dispatcher of a request (absent in 1.x, which sends through an http.Agent). */
interface MakesDispatchers {
  createDispatcher?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;
}

/**
 * The dispatcher of one setting (dispatcherKey) on its route, and what every request given that
 * setting is handed: `handedOut`, which sends through `dispatcher` while it is the route's, and
 * afterwards (retired) through a dispatcher of its own made by `remake`.
 */
interface Setting {
  readonly key: string;
  readonly dispatcher: Closable;
  readonly handedOut: Dispatcher;
  retired: boolean;
}

/** The dispatchers of one KubeConfig of withReusedConnections. */
class Connections {
  /**
   * The settings in use on each route (server and proxy, routeKey), by the user each was asked
   * for (userKey): users whose requests carry the same options share one.
   */
  readonly current = new Map<string, Map<string, Setting>>();
  /** Dispatchers retired or made for one request, until they have closed. */
  readonly closing = new Set<Closable>();
  /** Set by closeReusedConnections: the error of any request that would open a connection. */
  closedWith: (() => Error) | undefined;

  /** Lets `dispatcher` close once its requests have ended; destroyed by closeAll before that. */
  retire(dispatcher: Closable): void {
    if (typeof dispatcher.close !== 'function') return; // not an undici dispatcher: left to its maker
    this.closing.add(dispatcher);
    void Promise.resolve()
      .then(() => dispatcher.close!())
      .catch(() => {}) // a request on it failed: its caller has been told
      .finally(() => this.closing.delete(dispatcher));
  }

  /** Closes every dispatcher now, the requests still on them ended; nothing is opened afterwards. */
  closeAll(reason: () => Error): void {
    this.closedWith ??= reason;
    const inUse = new Set([...this.current.values()].flatMap((byUser) => [...byUser.values()].map((s) => s.dispatcher)));
    const all = [...inUse, ...this.closing];
    this.current.clear();
    this.closing.clear();
    for (const dispatcher of all) {
      try {
        // its requests were aborted by their owner already: what rejects here has been reported
        void Promise.resolve(dispatcher.destroy?.()).catch(() => {});
      } catch {
        // not an undici dispatcher (a caller's own createDispatcher): left to the caller
      }
    }
  }
}

/** The connections of each KubeConfig of withReusedConnections. */
const connectionsOf = new WeakMap<object, Connections>();

/**
 * `kc` with one dispatcher per route and setting: an object that reads everything from `kc` (its
 * prototype) and whose createDispatcher gives the dispatcher it made before for the same server,
 * proxy and TLS options, and retires the route's previous one when they change. `kc` itself when
 * it makes no dispatchers (client-node 1.x).
 * @internal
 */
export function withReusedConnections(kc: KubeConfig): KubeConfig {
  const make = (kc as unknown as MakesDispatchers).createDispatcher;
  if (typeof make !== 'function') return kc;
  const connections = new Connections();
  const reusing = Object.create(kc) as KubeConfig;
  (reusing as unknown as MakesDispatchers).createDispatcher = function (this: unknown, cluster, agentOptions) {
    if (connections.closedWith !== undefined) throw connections.closedWith();
    const key = dispatcherKey(cluster, agentOptions);
    let byUser = connections.current.get(routeKey(cluster));
    if (byUser === undefined) connections.current.set(routeKey(cluster), (byUser = new Map()));
    const user = userKey(this);
    const known = byUser.get(user);
    if (known?.key === key) return known.handedOut;
    // the user's options changed (a client certificate rotated): its setting before is let go,
    // unless another user of the route still sends with it
    const leave = (): void => {
      if (known === undefined) return;
      byUser.delete(user);
      if ([...byUser.values()].includes(known)) return;
      known.retired = true;
      connections.retire(known.dispatcher);
    };
    const same = [...byUser.values()].find((s) => s.key === key);
    if (same !== undefined) {
      leave();
      byUser.set(user, same);
      return same.handedOut;
    }
    const remake = () => make.call(this, cluster, agentOptions) as Closable | undefined;
    const dispatcher = remake();
    leave();
    // undefined: undici's global dispatcher, which keeps its connections itself
    if (dispatcher === undefined) return undefined;
    if (typeof dispatcher.dispatch !== 'function') {
      // not an undici dispatcher (a caller's own createDispatcher): handed out as it is
      const setting: Setting = { key, dispatcher, handedOut: dispatcher as unknown as Dispatcher, retired: false };
      byUser.set(user, setting);
      return dispatcher;
    }
    const setting: Setting = {
      key,
      dispatcher,
      retired: false,
      handedOut: {
        dispatch(options, handler) {
          if (connections.closedWith !== undefined) throw connections.closedWith();
          if (!setting.retired) return dispatcher.dispatch!(options, handler);
          // handed out before the route's options changed, sent after: on connections of its own
          const own = remake()!;
          connections.retire(own); // closes once this request has ended
          return own.dispatch!(options, handler);
        },
      },
    };
    byUser.set(user, setting);
    return setting.handedOut;
  };
  connectionsOf.set(reusing, connections);
  return reusing;
}

/**
 * Closes the connections of every dispatcher `kc` (a KubeConfig of withReusedConnections, or one
 * made from it) handed out, the requests still on them ended. From then on it opens none: a
 * request that would (one whose exec credential plugin answers only now) fails with `reason()`,
 * the owner's error (ErrDestroyed). Nothing for any other KubeConfig.
 * @internal
 */
export function closeReusedConnections(kc: KubeConfig, reason: () => Error): void {
  for (let o: object | null = kc; o !== null; o = Object.getPrototypeOf(o)) {
    const connections = connectionsOf.get(o);
    if (connections === undefined) continue;
    connections.closeAll(reason);
    return;
  }
}

/**
 * The user a request is authenticated as, by the KubeConfig that asks for its dispatcher: the
 * current context's user's name ("" for none). A context switched back and forth between two
 * users keeps a dispatcher for each, as client-go's transport cache keeps one per TLS
 * configuration; only a user's own options changing retire its dispatcher before.
 */
function userKey(kc: unknown): string {
  const getCurrentUser = (kc as Partial<KubeConfig> | null)?.getCurrentUser;
  if (typeof getCurrentUser !== 'function') return '';
  const name: unknown = getCurrentUser.call(kc)?.name;
  return typeof name === 'string' ? name : '';
}

/** The route of a request: its server (the scheme decides how a proxy is asked) and its proxy. */
function routeKey(cluster: Cluster | null): string {
  return JSON.stringify([cluster?.server ?? null, cluster?.proxyUrl ?? null]);
}

/**
 * What makes two requests' dispatchers interchangeable: the server (its scheme decides how a
 * proxy is asked), the proxy, and every TLS option client-node passes (CA, client certificate and
 * key, passphrase, server name, verification; a function, as the check of the server's names, by
 * its identity, as two closures of one source text may check differently). Hashed, so that the
 * key material is not held a second time in the map's keys. Each part goes in with its length: a
 * separator alone could be inside a value (a NUL byte in a key file), and two different settings
 * would then hash the same.
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
    } else if (typeof value === 'function') part('f', String(functionId(value)));
    else if (typeof value === 'object') part('o', JSON.stringify(value));
    else part(typeof value, String(value));
  };
  add('server', cluster?.server);
  add('proxy', cluster?.proxyUrl);
  for (const name of Object.keys(agentOptions).sort()) add(name, agentOptions[name]);
  return hash.digest('base64');
}

/** A number for each function met among the options (dispatcherKey), given as it is first met. */
const functionIds = new WeakMap<object, number>();
let functionsMet = 0;

/** The number of `f` in functionIds, given now when it has none. */
function functionId(f: object): number {
  let id = functionIds.get(f);
  if (id === undefined) functionIds.set(f, (id = functionsMet++));
  return id;
}
