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
// through it. An https:// server, and SOCKS proxies, stay client-node's.
import { createRequire } from 'node:module';

/** What undici's connector calls back with. */
type ConnectCallback = (err: Error | null, socket: unknown) => void;
/** An undici connector: opens the socket (TLS for https:) a Client sends on. */
type Connector = (options: Record<string, unknown>, callback: ConnectCallback) => void;

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
  Pool: new (origin: string, options: { connect: Connector }) => { compose(interceptor: (dispatch: Dispatch) => Dispatch): unknown };
  buildConnector(options: Record<string, unknown>): Connector;
}

/**
 * The undici dispatcher a request to `server` is sent with through `proxy`: for an http://
 * server through an http:// or https:// proxy; undefined otherwise (left to client-node).
 */
export function proxyDispatcher(server: string, proxy: URL): unknown {
  if ((proxy.protocol !== 'http:' && proxy.protocol !== 'https:') || !/^http:/i.test(server)) return undefined;
  const u = undici();
  return absoluteForm(u, proxy, u.buildConnector({}));
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
    return dispatch({ ...options, path: `${origin}${options.path ?? '/'}`, headers, servername: proxy.hostname }, handler);
  });
}

/** Go's proxyAuth: Basic with the proxy URL's user and password, when it names a user. */
function proxyAuthorization(proxy: URL): string | undefined {
  if (proxy.username === '' && proxy.password === '') return undefined;
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(credentials).toString('base64')}`;
}

/** A request's headers as a record: undici's fetch gives them as a flat [name, value, …] array. */
function headerRecord(headers: unknown): Record<string, string> {
  const record: Record<string, string> = {};
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) record[String(headers[i])] = String(headers[i + 1]);
  } else if (typeof headers === 'object' && headers !== null) {
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) record[name] = String(value);
  }
  return record;
}

let loaded: Undici | undefined;

/** The undici client-node 2.x sends with, resolved from client-node's own folder. */
function undici(): Undici {
  if (loaded === undefined) {
    const require = createRequire(import.meta.url);
    const clientNode = require.resolve('@kubernetes/client-node/package.json');
    loaded = createRequire(clientNode)('undici') as Undici;
  }
  return loaded;
}
