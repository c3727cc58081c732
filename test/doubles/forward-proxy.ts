// A forward HTTP proxy, as Squid or tinyproxy behave: an absolute-form request (`GET
// http://host:port/path HTTP/1.1`) is forwarded to that host; `CONNECT host:port` opens a tunnel
// to it. Like Squid's default configuration (`http_access deny CONNECT !SSL_ports`) it can refuse
// CONNECT to any port but 443, with 403. Served over TLS (an https:// proxy) when given a
// certificate and key.
//
// Names are resolved by the double's own table (e.g. apiserver.test → 127.0.0.1), as a proxy
// resolves them with its own DNS: a name outside it is answered 502, as Squid answers a lookup
// failure.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ForwardProxyOptions {
  /** The proxy's own name table: host → address. */
  hosts: Record<string, string>;
  /** Refuse CONNECT to a port other than 443 (Squid's default), with 403. */
  connectOnlyTo443?: boolean;
  /** Serve the proxy over TLS with this certificate and key (an https:// proxy). */
  tls?: { cert: string; key: string };
  /** Answer 407 to a request or CONNECT whose Proxy-Authorization is not this, as a proxy asking for a login. */
  proxyAuthorization?: string;
  /** The address to listen on: 127.0.0.1 unless given (e.g. ::1). */
  listen?: string;
}

/** One request the proxy got: `GET http://apiserver.test:1234/api` or `CONNECT apiserver.test:1234`, with its headers. */
export interface ProxiedRequest {
  line: string;
  headers: http.IncomingHttpHeaders;
}

export interface ForwardProxy {
  /** e.g. http://127.0.0.1:40123, https://[::1]:40123 */
  url: string;
  seen: ProxiedRequest[];
  close(): Promise<void>;
}

export async function startForwardProxy(options: ForwardProxyOptions): Promise<ForwardProxy> {
  const seen: ProxiedRequest[] = [];
  const sockets = new Set<net.Socket>();
  const authorized = (req: http.IncomingMessage): boolean =>
    options.proxyAuthorization === undefined || req.headers['proxy-authorization'] === options.proxyAuthorization;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    seen.push({ line: `${req.method} ${req.url}`, headers: req.headers });
    if (!authorized(req)) return void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"' }).end();
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      // origin-form: this is a proxy, not the server
      return void res.writeHead(400).end('a proxy takes absolute-form requests');
    }
    const address = options.hosts[target.hostname];
    if (target.protocol !== 'http:' || address === undefined) return void res.writeHead(502).end();
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = http.request(
      { host: address, port: target.port || 80, method: req.method, path: target.pathname + target.search, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server = options.tls === undefined ? http.createServer(onRequest) : https.createServer(options.tls, onRequest);
  server.on(options.tls === undefined ? 'connection' : 'secureConnection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.push({ line: `CONNECT ${req.url}`, headers: req.headers });
    if (!authorized(req))
      return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="proxy"\r\n\r\n');
    const colon = (req.url ?? '').lastIndexOf(':');
    const host = (req.url ?? '').slice(0, colon);
    const port = Number((req.url ?? '').slice(colon + 1));
    if (options.connectOnlyTo443 === true && port !== 443) return void client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    const address = options.hosts[host];
    if (address === undefined) return void client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    const upstream = net.connect(port, address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const listen = options.listen ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, listen, resolve));
  const host = listen.includes(':') ? `[${listen}]` : listen;
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${host}:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
