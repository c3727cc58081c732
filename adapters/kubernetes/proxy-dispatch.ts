// How a request goes through an http:// or https:// proxy under client-node 2.x, as Go's
// net/http sends it (transport.go: connectMethod, dialConn, persistConn.roundTrip):
//
//   API server   through the proxy
//   http://      the request itself, in absolute form: `GET http://host:port/path?query`, with
//                a Proxy-Authorization header when the proxy URL holds a user
//   https://     `CONNECT host:port`, then TLS with the API server through the tunnel
//
// client-node sends both through undici's ProxyAgent, which opens a CONNECT tunnel for an
// http:// server too: a proxy that allows CONNECT only to port 443 (Squid's default
// configuration, `http_access deny CONNECT !SSL_ports`) refused every request kubectl sends
// through it.
//
// Through a SOCKS5 proxy the server's name (or address) is handed to the proxy, as Go hands it,
// with the socks library client-node uses, and the proxy URL's user and password (which
// client-node's own connector left out); TLS with an https:// server is then opened over that
// connection by undici's own connector, as for a server reached directly: its certificate checked
// against the tls-server-name when there is one, else the server's host, and no address given as
// the TLS server name. client-node's own SOCKS connector gave TLS the host, an address included,
// in place of the tls-server-name: Node warned (DEP0123), and Deno threw it as an uncaught error
// ("options.servername must not be an IP address") while the request waited for its deadline.
//
// The connection to the proxy itself: to an https:// proxy named by an IP address, TLS is opened
// without a server name (SNI takes names only, RFC 6066 3; Go leaves it out too), where undici
// gives Node the address and Node warns (DEP0123) on the process's stderr. The names in an
// https:// proxy's certificate are checked as kubectl checks them, as the API server's are
// (kubectl-name-check.ts): Node's check (Deno's too) takes the common name of a certificate
// without a subject alternative name, which kubectl refuses. A failure on that
// connection — refused, not TLS, a certificate — is marked as the proxy's (`failedAtProxy`), so
// that the message names the proxy instead of the API server (tls-material.ts); so is one on the
// connection client-node 1.x's agent opens to the proxy (`markingProxyFailures`). client-node
// 1.x's agent (hpagent's) checks an https:// proxy's names as Node does: they are checked as
// kubectl checks them there too (`tlsToProxyAsKubectl`); it looked a proxy named by an IPv6
// address up as a host name, brackets and all, and gives TLS the address of an https:// proxy
// named by one as the server name (Node warns, Deno refuses it): such a proxy is connected to at
// its address, without a name (`proxyByAddress`). Its agent for a SOCKS proxy
// (socks-proxy-agent's) did the same lookup: it is given the address (`socksProxyByAddress`);
// and the failures of its connection to the proxy, whose code the socks library drops, are given
// the one their message names (`markingSocksFailures`).
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { requireFromClientNode } from './client-node-check.ts';
import { basicAuthorization } from './header-values.ts';
import { checkServerIdentityAsKubectl } from './kubectl-name-check.ts';
import { isPlainHttp } from './plain-http.ts';

/** What undici's connector calls back with. */
type ConnectCallback = (err: Error | null, socket: unknown) => void;
/** An undici connector: opens the socket (TLS for https:) a Client sends on. */
type Connector = (options: ConnectOptions, callback: ConnectCallback) => void;
/** What a Client asks its connector for (the field read here, and the rest passed on). */
interface ConnectOptions {
  servername?: unknown;
  [field: string]: unknown;
}

/** One request as an undici dispatcher takes it (the fields read here). */
interface DispatchOptions {
  origin?: string | URL;
  path?: string;
  headers?: unknown;
  [field: string]: unknown;
}
type Dispatch = (options: DispatchOptions, handler: unknown) => boolean;

/** The parts of undici used here. */
interface Undici {
  Agent: new (options: { connect: Connector }) => unknown;
  Pool: new (origin: string, options: { connect: Connector }) => { compose(interceptor: (dispatch: Dispatch) => Dispatch): unknown };
  ProxyAgent: new (options: Record<string, unknown>) => unknown;
  buildConnector(options: Record<string, unknown>): Connector;
}

/** The part of the socks library used here (SocksClient.createConnection, callback form). */
interface Socks {
  SocksClient: {
    createConnection(
      options: {
        proxy: { host: string; port: number; type: 5; userId?: string; password?: string };
        command: 'connect';
        destination: { host: string; port: number };
        timeout: number;
      },
      callback: (
        err: Error | null,
        info?: { socket: { setNoDelay(enable: boolean): unknown; setKeepAlive(enable: boolean, delay: number): unknown } },
      ) => void,
    ): unknown;
  };
}

/** Marks an error as the failure of the connection to the proxy. */
const AT_PROXY = Symbol('ipallocator.failedAtProxy');

/**
 * Whether `err` (one link of a cause chain) is the failure of the connection to the proxy: marked
 * so, or node-fetch's FetchError of one (client-node 1.x, markingProxyFailures). @internal
 */
export function failedAtProxy(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { [AT_PROXY]?: boolean })[AT_PROXY] === true) return true;
  const { name, message } = err as { name?: unknown; message?: unknown };
  return name === 'FetchError' && typeof message === 'string' && message.endsWith(` ${AT_PROXY_WORDS}`);
}

/**
 * The undici dispatcher a request to `server` is sent with through `proxy`, an http://, https://,
 * socks5:// or socks5h:// proxy (undefined for another: left to client-node). `agentOptions` are
 * client-node's TLS options for the API server (its KubeConfig's CA, client certificate, …),
 * applied as client-node applies them.
 * @internal
 */
export function proxyDispatcher(server: string, proxy: URL, agentOptions: Record<string, unknown>): unknown {
  if (proxy.protocol === 'socks5:' || proxy.protocol === 'socks5h:') return socksDispatcher(proxy, agentOptions);
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') return undefined;
  const u = undici();
  const toProxy = proxyConnector(u);
  if (isPlainHttp(server)) return absoluteForm(u, proxy, toProxy);
  const authorization = proxyAuthorization(proxy);
  return new u.ProxyAgent({
    // the proxy's scheme, host and port alone, as Go dials it: undici refuses a URL with a path
    // ("invalid url", said as the API server's failure), and a value that is no URL as written is
    // read as Go reads it, with http:// in front (http://[bad: host "http", path "//[bad");
    // its user and password are sent as the token below
    uri: proxy.origin,
    // undici sends credentials on CONNECT only when the URL holds a password too; Go sends a
    // user without one ("ops:"), as it does in absolute form
    ...(authorization === undefined ? {} : { token: authorization }),
    requestTls: serverTls(agentOptions),
    clientFactory: (origin: string) => new u.Pool(origin, { connect: toProxy }),
  });
}

/**
 * How long the connection through a SOCKS5 proxy may take, from the TCP connection to the proxy to
 * its answer that it connected to the server: undici's connect timeout for a connection of its
 * own (buildConnector), where the socks library waits 30 s. The socks library's failure then is
 * "Proxy connection timed out". @internal
 */
export const SOCKS_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Requests sent through the SOCKS5 proxy `proxy`: a connection to the server's host and port
 * through it (the host handed to the proxy as written, a name for the proxy to resolve), and,
 * for an https:// server, TLS over it with `agentOptions` as undici's connector opens it to a
 * server reached directly.
 */
function socksDispatcher(proxy: URL, agentOptions: Record<string, unknown>): unknown {
  const u = undici();
  const { SocksClient } = socks();
  const tls = u.buildConnector(serverTls(agentOptions));
  // the URL's user and password, when it names a user, sent as Go sends them (RFC 1929)
  const given = proxyLogin(proxy);
  const login = given === undefined ? {} : { userId: given.user, password: given.password };
  const socksProxy = { host: proxy.hostname.replace(/^\[|\]$/g, ''), port: Number(proxy.port || 1080), type: 5 as const, ...login };
  return new u.Agent({
    connect: (options, callback) => {
      // the host as undici gives it: an IPv6 address without its brackets
      const { hostname, port: serverPort, protocol } = options as { hostname: string; port: string; protocol: string };
      const destination = { host: hostname, port: Number(serverPort || (protocol === 'https:' ? 443 : 80)) };
      const request = { proxy: socksProxy, command: 'connect' as const, destination, timeout: SOCKS_CONNECT_TIMEOUT_MS };
      SocksClient.createConnection(request, (err, info) => {
        if (err !== null) return callback(withoutPassword(err), null);
        // as undici's connector sets its own connections (core/connect.js), and client-node's
        // (and client-go's) keep-alive probe delay
        info!.socket.setNoDelay(true);
        info!.socket.setKeepAlive(true, 30_000);
        if (protocol !== 'https:') return callback(null, info!.socket);
        tls({ ...options, httpSocket: info!.socket }, callback);
      });
    },
  });
}

/**
 * A failure of the socks library, the proxy's password taken out of the options it carries (its
 * SocksClientError holds those it was given): the error is kept in the cause chain of the
 * request's, which an application may log whole.
 */
function withoutPassword(err: Error): Error {
  const options = (err as { options?: { proxy?: { password?: unknown } } }).options;
  if (options?.proxy?.password !== undefined) options.proxy = { ...options.proxy, password: '(not shown)' };
  return err;
}

/**
 * Requests to an http:// server sent to the proxy as they are, in absolute form, over kept-alive
 * connections to the proxy.
 */
function absoluteForm(u: Undici, proxy: URL, toProxy: Connector): unknown {
  const authorization = proxyAuthorization(proxy);
  return new u.Pool(proxy.origin, { connect: toProxy }).compose((dispatch) => (options, handler) => {
    const origin = new URL(String(options.origin)).origin;
    const headers = headerRecord(options.headers);
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'host')) headers.host = new URL(origin).host;
    if (authorization !== undefined) headers['proxy-authorization'] = authorization;
    // the TLS server name of an https:// proxy is the proxy's, never the API server's (which
    // undici would take from the Host header)
    return dispatch(
      { ...options, path: `${origin}${options.path ?? '/'}`, headers, servername: proxy.hostname },
      refusingProxyAuthentication(handler),
    );
  });
}

/**
 * A proxy's 407 to a request sent to it in absolute form. fetch turns a 407 into a bare "fetch
 * failed" with no cause (it has no one to ask for the proxy's credentials): this failure, marked
 * as the proxy's, is its cause instead, for the message to say which proxy wanted credentials.
 * @internal
 */
export class ProxyAuthenticationRequired extends Error {
  constructor() {
    super('the proxy answered 407 Proxy Authentication Required');
    this.name = 'ProxyAuthenticationRequired';
    Object.defineProperty(this, AT_PROXY, { value: true });
  }
}

/** A dispatch handler, either of undici's two interfaces (the callbacks used here). */
interface Handler {
  onConnect?(abort: (err: Error) => void, ...rest: unknown[]): unknown;
  onHeaders?(status: number, ...rest: unknown[]): unknown;
  onResponseStart?(controller: { abort(err: Error): void }, status: number, ...rest: unknown[]): unknown;
  [name: string]: unknown;
}

/** `handler`, but a 407 answer fails the request with ProxyAuthenticationRequired. */
function refusingProxyAuthentication(handler: unknown): Handler {
  const target = handler as Handler;
  let abort: ((err: Error) => void) | undefined;
  const wrapped: Partial<Handler> = {
    onConnect: (abortRequest, ...rest) => {
      abort = abortRequest;
      return target.onConnect?.(abortRequest, ...rest);
    },
    onHeaders: (status, ...rest) => {
      if (status !== 407 || abort === undefined) return target.onHeaders?.(status, ...rest);
      abort(new ProxyAuthenticationRequired());
      return false;
    },
    onResponseStart: (controller, status, ...rest) => {
      if (status !== 407) return target.onResponseStart?.(controller, status, ...rest);
      controller.abort(new ProxyAuthenticationRequired());
    },
  };
  return new Proxy(target, {
    get(t, name) {
      if (typeof name === 'string' && Object.hasOwn(wrapped, name) && typeof t[name] === 'function') return wrapped[name];
      const value: unknown = Reflect.get(t, name);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

/**
 * The connector of connections to the proxy: undici's own, without an IP address as the TLS
 * server name, the names in an https:// proxy's certificate checked as kubectl checks them
 * (checkServerIdentityAsKubectl), its failures marked as the proxy's.
 */
function proxyConnector(u: Undici): Connector {
  const connect = u.buildConnector({ checkServerIdentity: checkServerIdentityAsKubectl });
  return (options, callback) => {
    const name = typeof options.servername === 'string' ? options.servername : undefined;
    const servername = name === undefined || isIP(name.replace(/^\[|\]$/g, '')) !== 0 ? undefined : name;
    connect({ ...options, servername }, (err, socket) => {
      if (err !== null) Object.defineProperty(err, AT_PROXY, { value: true });
      callback(err, socket);
    });
  };
}

/** What an http.Agent is asked here: to open a connection, calling back with it or with why not. */
interface OpensConnections {
  createConnection?: (options: unknown, callback: (err: Error | null, socket: unknown) => void) => unknown;
}

/**
 * The agents markingProxyFailures marks the failures of, those markingSocksFailures gives a code,
 * and those proxyByAddress opens the connection of: an agent handed out again (by a KubeConfig
 * that keeps one for its requests) is not wrapped again, which would say the failure's words once
 * more, and add a wrapper, for each request made before; nor is its connection replaced again,
 * which would drop the marking of its failures.
 */
const markingAtProxy = new WeakSet<object>();
const givingSocksCodes = new WeakSet<object>();
const connectingByAddress = new WeakSet<object>();

/**
 * The words that end the message of a failure of client-node 1.x's connection to the proxy
 * (markingProxyFailures): node-fetch keeps an error's message and code only, not the error.
 */
const AT_PROXY_WORDS = '(on the connection to the proxy)';

/** `message` without the words markingProxyFailures ends it with. @internal */
export function withoutProxyWords(message: string): string {
  return message.endsWith(` ${AT_PROXY_WORDS}`) ? message.slice(0, -AT_PROXY_WORDS.length - 1) : message;
}

/**
 * `agent`, client-node 1.x's http.Agent of one request, with the failures of its connection to
 * an http:// or https:// proxy marked as the proxy's, as proxyConnector marks 2.x's. 1.x sends
 * through such a proxy with hpagent's agents, whose createConnection opens the connection to the
 * proxy (TLS to an https:// one) and the CONNECT tunnel through it, and calls back with the
 * failure of either; a tunnel the proxy refused ("Bad response: 403") is its answer, not a failed
 * connection, and is passed on as it is. node-fetch turns the failure into a FetchError that
 * keeps its code and the words of its message only, not the error: the failure is passed on with
 * its code, its message ending in AT_PROXY_WORDS, which failedAtProxy reads. An agent without
 * createConnection (a SOCKS one) is returned as it is.
 * @internal
 */
export function markingProxyFailures<A>(agent: A): A {
  const opens = agent as OpensConnections | null;
  const create = opens?.createConnection;
  if (typeof create !== 'function' || markingAtProxy.has(opens!)) return agent;
  markingAtProxy.add(opens!);
  opens!.createConnection = function (this: unknown, options, callback) {
    return create.call(this, options, (err, socket) => {
      if (err === null || /^Bad response: \d+$/.test(err.message)) return callback(err, socket);
      const atProxy = new Error(`${err.message} ${AT_PROXY_WORDS}`, { cause: err });
      Object.defineProperties(atProxy, { code: { value: (err as { code?: unknown }).code }, [AT_PROXY]: { value: true } });
      callback(atProxy, socket);
    });
  };
  return agent;
}

/**
 * The system error code (ECONNREFUSED, ENOTFOUND, …) in the message of a failure of the socks
 * library's connection to the proxy ("connect ECONNREFUSED 127.0.0.1:1080"): it keeps the words
 * of the socket's error, not its code. Undefined for a message without one (the proxy's answer,
 * "Socks5 proxy rejected connection - HostUnreachable").
 * @internal
 */
export function socksFailureCode(message: string): string | undefined {
  return /\b(E[A-Z_]+)\b/.exec(message)?.[1];
}

/** What agent-base's agents (socks-proxy-agent's, client-node 1.x's for a SOCKS proxy) do: open a request's connection themselves. */
interface ConnectsItself {
  connect?: (req: unknown, options: unknown) => Promise<unknown>;
  /** socks-proxy-agent's: how long its connection may take, and then how long it may stay idle (null: no limit). */
  timeout?: number | null;
}

/**
 * `agent`, client-node 1.x's http.Agent of one request, with its connections through a SOCKS
 * proxy made as 2.x's are (socksDispatcher): given SOCKS_CONNECT_TIMEOUT_MS to connect, where the
 * socks library waits 30 s, and Nagle's algorithm off. A failure of that connection is given the
 * code its message names (socksFailureCode), which node-fetch keeps beside its words, so that it
 * is said as the proxy out of reach (tls-material.ts), as 2.x's is: 1.x's agent for a SOCKS proxy
 * (socks-proxy-agent's) throws the socks library's error, which carries the words of the socket's
 * failure only. Any other agent is returned as it is.
 * @internal
 */
export function markingSocksFailures<A>(agent: A): A {
  const opens = agent as ConnectsItself | null;
  const connect = opens?.connect;
  if (typeof connect !== 'function' || givingSocksCodes.has(opens!)) return agent;
  givingSocksCodes.add(opens!);
  opens!.connect = async function (this: ConnectsItself, req, options) {
    // socks-proxy-agent reads its timeout as connect starts, for the socks library's connection,
    // and gives it to the connected socket as an idle timeout after which it is destroyed: a watch
    // quiet for 10 s would be cut. The socket is given back the agent's own (none by default).
    const idle = this.timeout ?? null;
    this.timeout = SOCKS_CONNECT_TIMEOUT_MS;
    let connecting: Promise<unknown>;
    try {
      connecting = connect.call(this, req, options);
    } finally {
      this.timeout = idle;
    }
    try {
      const connected = (await connecting) as ProxiedSocket;
      // to an https:// server, the TLS socket over the proxy's: its _parent (Node's)
      const socket = connected._parent ?? connected;
      socket.setTimeout(idle ?? 0);
      // without an idle timeout, the agent's listener for one (which destroys the socket) goes
      // too. Removing every 'timeout' listener removes only that one: the socket is the agent's
      // own, fresh from its connect, and nothing else has had it yet — Node's request adds its
      // listeners once the agent hands the socket over, after this returns.
      if (idle === null) socket.removeAllListeners('timeout');
      socket.setNoDelay(true);
      return connected;
    } catch (err) {
      const code = err instanceof Error && (err as { code?: unknown }).code === undefined ? socksFailureCode(err.message) : undefined;
      if (code !== undefined) Object.defineProperty(err, 'code', { value: code, configurable: true });
      throw err;
    }
  };
  return agent;
}

/** The socket socks-proxy-agent's connect gives back: the one to the proxy, or a TLS one over it (its _parent). */
interface ProxiedSocket {
  _parent?: ProxiedSocket;
  setTimeout(ms: number): unknown;
  setNoDelay(enable: boolean): unknown;
  removeAllListeners(event: string): unknown;
}

/** What hpagent's agents (client-node 1.x's, for an http:// or https:// proxy) hold: the proxy's URL, whether connections are kept alive, and options of their own for the CONNECT request. */
interface ProxyAgent1x extends OpensConnections {
  proxy?: unknown;
  keepAlive?: boolean;
  proxyRequestOptions?: { headers?: Record<string, string>; [option: string]: unknown };
}

/**
 * `agent`, client-node 1.x's http.Agent of one request, with the names in an https:// proxy's
 * certificate checked as kubectl checks them (checkServerIdentityAsKubectl): 1.x's agent for a
 * proxy (hpagent's) left them to Node's check, which takes the common name of a certificate
 * without a subject alternative name. Any other agent is returned as it is.
 * @internal
 */
export function tlsToProxyAsKubectl<A>(agent: A): A {
  const hp = agent as ProxyAgent1x | null;
  const proxy = hp?.proxy;
  if (!(proxy instanceof URL) || proxy.protocol !== 'https:' || typeof hp!.createConnection !== 'function') return agent;
  // hpagent passes these on to the https.request of its CONNECT, and so to TLS (proxyByAddress too)
  hp!.proxyRequestOptions = { ...hp!.proxyRequestOptions, checkServerIdentity: checkServerIdentityAsKubectl };
  return agent;
}

/**
 * `agent`, client-node 1.x's http.Agent of one request, connecting to an http:// or https://
 * proxy named by an IP address at that address, and to an https:// one without a TLS server name,
 * the certificate checked against that address (SNI takes names only, RFC 6066 3; Go leaves it
 * out too). 1.x's agent for a proxy (hpagent's) gives the URL's host as it is: an IPv6 address in
 * its brackets, looked up as a host name ("[::1]": ENOTFOUND), so no request went through such a
 * proxy; and, to TLS, the address as the server name: Node warns (DEP0123) on the process's
 * stderr, and Deno refuses it ("options.servername must not be an IP address"). Its connection is
 * opened here as hpagent opens it (a CONNECT to the server's host and port with its
 * proxyRequestOptions, the proxy URL's credentials as Proxy-Authorization, TLS with an https://
 * server over the tunnel as 1.x's https.Agent opens it), but for the host and the server name.
 * Any other agent is returned as it is.
 * @internal
 */
export function proxyByAddress<A>(agent: A): A {
  const hp = agent as ProxyAgent1x | null;
  const proxy = hp?.proxy;
  if (!(proxy instanceof URL) || typeof hp!.createConnection !== 'function') return agent;
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') return agent;
  const host = proxy.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) === 0 || connectingByAddress.has(hp!)) return agent;
  connectingByAddress.add(hp!);
  const authorization = proxyAuthorization(proxy);
  const overTls = proxy.protocol === 'https:';
  hp!.createConnection = (options, callback) => {
    const { host: serverHost, port, timeout } = options as { host: string; port: string | number; timeout?: number };
    const requestOptions = {
      ...hp!.proxyRequestOptions,
      method: 'CONNECT',
      host,
      port: proxy.port,
      path: `${serverHost}:${port}`,
      setHost: false,
      headers: {
        ...hp!.proxyRequestOptions?.headers,
        connection: hp!.keepAlive ? 'keep-alive' : 'close',
        host: `${serverHost}:${port}`,
        ...(authorization === undefined ? {} : { 'proxy-authorization': authorization }),
      },
      agent: false,
      timeout: timeout || 0,
    };
    // none: the certificate is checked against `host`
    const request = overTls ? https.request({ ...requestOptions, servername: '' }) : http.request(requestOptions);
    request.once('connect', (response, socket) => {
      request.removeAllListeners();
      socket.removeAllListeners();
      if (response.statusCode !== 200) {
        socket.destroy();
        return callback(new Error(`Bad response: ${response.statusCode}`), null);
      }
      // an https:// server: TLS over the tunnel, as the https.Agent hpagent's agent is
      callback(null, agent instanceof https.Agent ? tlsOverTunnel(agent, { ...(options as object), socket }) : socket);
    });
    request.once('timeout', () => request.destroy(new Error('Proxy timeout')));
    request.once('error', (err) => {
      request.removeAllListeners();
      callback(err, null);
    });
    request.end();
  };
  return agent;
}

/**
 * `agent`, client-node 1.x's http.Agent of one request, connecting to a SOCKS proxy named by an
 * IPv6 address (socks5://[::1]:1080) at that address: 1.x's agent for a SOCKS proxy
 * (socks-proxy-agent's) keeps the URL's brackets around it, so every request failed looking up
 * the host name "[::1]" (ENOTFOUND). Any other agent is returned as it is.
 * @internal
 */
export function socksProxyByAddress<A>(agent: A): A {
  const proxy = (agent as { proxy?: { host?: unknown } } | null)?.proxy;
  if (proxy instanceof URL || typeof proxy?.host !== 'string' || !proxy.host.startsWith('[')) return agent;
  proxy.host = proxy.host.replace(/^\[|\]$/g, '');
  return agent;
}

/** https.Agent's own createConnection (tls.connect with the agent's options, a TLS session kept), on `agent`. */
function tlsOverTunnel(agent: https.Agent, options: object): unknown {
  const create = (https.Agent.prototype as unknown as { createConnection: (this: https.Agent, options: object) => unknown })
    .createConnection;
  return create.call(agent, options);
}

/** Go's proxyAuth: Basic with the proxy URL's user and password, when it names a user. */
function proxyAuthorization(proxy: URL): string | undefined {
  const login = proxyLogin(proxy);
  return login === undefined ? undefined : basicAuthorization(`${login.user}:${login.password}`);
}

/**
 * The user and password a proxy URL names, percent-decoded (usableProxy has refused a URL whose
 * do not decode); undefined when it names neither.
 */
function proxyLogin(proxy: URL): { user: string; password: string } | undefined {
  if (proxy.username === '' && proxy.password === '') return undefined;
  return { user: decodeURIComponent(proxy.username), password: decodeURIComponent(proxy.password) };
}

/** A request's headers by name (the two set here named). */
interface RequestHeaders {
  host?: string;
  'proxy-authorization'?: string;
  [name: string]: string | undefined;
}

/** A request's headers as a record: undici's fetch gives them as a flat [name, value, …] array. */
function headerRecord(headers: unknown): RequestHeaders {
  const record: RequestHeaders = {};
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) record[String(headers[i])] = String(headers[i + 1]);
  } else if (typeof headers === 'object' && headers !== null) {
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) record[name] = String(value);
  }
  return record;
}

/** The TLS options for the API server that client-node gives its own ProxyAgent (createDispatcherOptions). */
function serverTls(agentOptions: Record<string, unknown>): Record<string, unknown> {
  const tls: Record<string, unknown> = {};
  // and the check of its names (tls-material.ts withKubectlNameCheck)
  for (const field of ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'checkServerIdentity']) {
    if (agentOptions[field] !== undefined) tls[field] = agentOptions[field];
  }
  return tls;
}

let loadedSocks: Socks | undefined;

/** The socks library client-node 2.x sends through a SOCKS proxy with, loaded from client-node's own folder. */
function socks(): Socks {
  loadedSocks ??= requireFromClientNode('socks', 'a request through a SOCKS proxy is sent with it', import.meta.url) as Socks;
  return loadedSocks;
}

let loaded: Undici | undefined;

/** The undici client-node 2.x sends with, loaded from client-node's own folder. */
function undici(): Undici {
  loaded ??= requireFromClientNode('undici', 'a request through an http:// or https:// proxy is sent with it', import.meta.url) as Undici;
  return loaded;
}
