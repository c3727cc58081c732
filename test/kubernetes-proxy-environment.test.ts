// HTTPS_PROXY / HTTP_PROXY / NO_PROXY (and their lowercase forms), honoured as kubectl honours
// them (Go's golang.org/x/net/http/httpproxy: FromEnvironment, parseProxy, config.useProxy) for a
// cluster without a proxy-url of its own. Before, they were ignored: behind a proxy, a server
// name only the proxy can resolve failed with ENOTFOUND where kubectl worked.
//
// The API server double is reached as http://apiserver.test:<port>, a name no resolver knows
// (.test is reserved, RFC 2606): only the proxy below, which takes it for 127.0.0.1, reaches it.
import { KubeConfig as KubeConfigNow } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubernetesStore, SyncBlockedError } from '../adapters/kubernetes/index.ts';
import { KubernetesApiError } from '../adapters/kubernetes/errors.ts';
import { proxyFromEnvironment, UnusableProxyError } from '../adapters/kubernetes/proxy-environment.ts';
import { addIPAddress, addServiceCIDR, cli } from './cli-helpers.ts';
import { type ForwardProxy, startForwardProxy } from './doubles/forward-proxy.ts';
import { startSocks5Proxy } from './doubles/socks5-proxy.ts';
import { closedPort, settledGet, until } from './k8s/helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { BOTH_CLIENT_NODES, kubeConfigFor, TEST_TOKEN, writeKubeconfig } from './k8s/kubeconfig.ts';
import https from 'node:https';
import net from 'node:net';
import { inspect } from 'node:util';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { base64, CLIENT_CERT, CLIENT_KEY, SERVER_CERT, SERVER_KEY, startTlsServer } from './k8s/tls.ts';
import { CA_CERT, ISSUED_CERT, ISSUED_KEY, OTHER_NAME_CERT, startServerWith } from './k8s/untrusted-tls.ts';

describe('the proxy the environment names for a server, as Go reads it', () => {
  const P = 'http://proxy.corp:3128';
  it.each<[string, Record<string, string>, string, string | undefined]>([
    ['https server: HTTPS_PROXY', { HTTPS_PROXY: P }, 'https://k8s.example:6443', 'HTTPS_PROXY'],
    ['https server: not HTTP_PROXY', { HTTP_PROXY: P }, 'https://k8s.example:6443', undefined],
    ['http server: HTTP_PROXY', { HTTP_PROXY: P, HTTPS_PROXY: 'http://other:1' }, 'http://k8s.example:8080', 'HTTP_PROXY'],
    ['the lowercase name when the uppercase is unset', { https_proxy: P }, 'https://k8s.example', 'https_proxy'],
    ['the uppercase name first', { HTTPS_PROXY: P, https_proxy: 'http://other:1' }, 'https://k8s.example', 'HTTPS_PROXY'],
    ['the lowercase name when the uppercase is empty', { HTTPS_PROXY: '', https_proxy: P }, 'https://k8s.example', 'https_proxy'],
    ['never for localhost', { HTTPS_PROXY: P }, 'https://localhost:6443', undefined],
    ['never for a loopback IPv4 address', { HTTPS_PROXY: P }, 'https://127.1.2.3:6443', undefined],
    ['never for ::1', { HTTPS_PROXY: P }, 'https://[::1]:6443', undefined],
    ['for ::2, not a loopback address', { HTTPS_PROXY: P }, 'https://[::2]:6443', 'HTTPS_PROXY'],
    ['NO_PROXY *', { HTTPS_PROXY: P, NO_PROXY: '*' }, 'https://k8s.example', undefined],
    ['NO_PROXY a domain: itself', { HTTPS_PROXY: P, NO_PROXY: 'example' }, 'https://example', undefined],
    ['NO_PROXY a domain: its subdomains', { HTTPS_PROXY: P, NO_PROXY: 'foo, example' }, 'https://k8s.example', undefined],
    ['NO_PROXY a domain: not a name ending in it', { HTTPS_PROXY: P, NO_PROXY: 'example' }, 'https://k8sexample', 'HTTPS_PROXY'],
    ['NO_PROXY a leading dot: subdomains only', { HTTPS_PROXY: P, NO_PROXY: '.example' }, 'https://example', 'HTTPS_PROXY'],
    ['NO_PROXY a leading dot: a subdomain', { HTTPS_PROXY: P, NO_PROXY: '.example' }, 'https://a.b.example', undefined],
    ['NO_PROXY a leading *.', { HTTPS_PROXY: P, NO_PROXY: '*.example' }, 'https://k8s.example', undefined],
    ['NO_PROXY in upper case', { HTTPS_PROXY: P, NO_PROXY: 'K8S.Example' }, 'https://k8s.example', undefined],
    ['no_proxy, lowercase', { HTTPS_PROXY: P, no_proxy: 'k8s.example' }, 'https://k8s.example', undefined],
    ['NO_PROXY a domain with the port', { HTTPS_PROXY: P, NO_PROXY: 'k8s.example:6443' }, 'https://k8s.example:6443', undefined],
    ['NO_PROXY a domain with another port', { HTTPS_PROXY: P, NO_PROXY: 'k8s.example:6443' }, 'https://k8s.example', 'HTTPS_PROXY'],
    ['NO_PROXY a port against the default 443', { HTTPS_PROXY: P, NO_PROXY: 'k8s.example:443' }, 'https://k8s.example', undefined],
    ['NO_PROXY an address', { HTTPS_PROXY: P, NO_PROXY: '10.0.0.1' }, 'https://10.0.0.1:6443', undefined],
    ['NO_PROXY an address and its port', { HTTPS_PROXY: P, NO_PROXY: '10.0.0.1:6443' }, 'https://10.0.0.1:6443', undefined],
    ['NO_PROXY an address and another port', { HTTPS_PROXY: P, NO_PROXY: '10.0.0.1:443' }, 'https://10.0.0.1:6443', 'HTTPS_PROXY'],
    ['NO_PROXY an IPv6 address', { HTTPS_PROXY: P, NO_PROXY: 'fd00::1' }, 'https://[fd00::1]:6443', undefined],
    ['NO_PROXY an IPv6 address and its port', { HTTPS_PROXY: P, NO_PROXY: '[fd00::1]:6443' }, 'https://[fd00::1]:6443', undefined],
    ['NO_PROXY a CIDR holding the server', { HTTPS_PROXY: P, NO_PROXY: '10.0.0.0/8' }, 'https://10.200.3.4:6443', undefined],
    ['NO_PROXY a CIDR not holding it', { HTTPS_PROXY: P, NO_PROXY: '10.0.0.0/8' }, 'https://11.0.0.1:6443', 'HTTPS_PROXY'],
    ['NO_PROXY an IPv6 CIDR', { HTTPS_PROXY: P, NO_PROXY: 'fd00::/64' }, 'https://[fd00::abcd]:6443', undefined],
    ['NO_PROXY a CIDR does not exempt a name', { HTTPS_PROXY: P, NO_PROXY: '10.0.0.0/8' }, 'https://k8s.example', 'HTTPS_PROXY'],
    [
      'NO_PROXY entries that are not read are skipped',
      { HTTPS_PROXY: P, NO_PROXY: ',:6443, ,k8s.example' },
      'https://k8s.example',
      undefined,
    ],
  ])('%s', (_name, env, server, variable) => {
    expect(proxyFromEnvironment(server, env)?.variable).toBe(variable);
  });

  it.each([
    ['a URL as it is', 'http://proxy.corp:3128', 'http://proxy.corp:3128'],
    ['an https:// proxy', 'https://proxy.corp', 'https://proxy.corp'],
    ['a socks5:// proxy', 'socks5://proxy.corp:1080', 'socks5://proxy.corp:1080'],
    ['a socks5h:// proxy', 'socks5h://proxy.corp:1080', 'socks5h://proxy.corp:1080'],
    // Go reads it as http://socks4:/…, the host "socks4": kept as it is, to be refused when used
    ['a URL of another scheme, as it is', 'socks4://proxy.corp:1080', 'socks4://proxy.corp:1080'],
    ['host:port, read as http://', 'proxy.corp:3128', 'http://proxy.corp:3128'],
    ['a bare host, read as http://', 'proxy.corp', 'http://proxy.corp'],
    ['an address and port, read as http://', '10.0.0.9:3128', 'http://10.0.0.9:3128'],
  ])('the proxy: %s', (_name, value, url) => {
    expect(proxyFromEnvironment('https://k8s.example', { HTTPS_PROXY: value })?.url).toBe(url);
  });
});

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

describe('requests to a cluster without a proxy-url go through the proxy the environment names', () => {
  let d: ApiServerDouble;
  let proxy: ForwardProxy;
  let server: string;
  const saved = new Map<string, string | undefined>();
  const opened: { close(): void }[] = [];
  beforeEach(async () => {
    for (const name of PROXY_VARIABLES) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
    d = await ApiServerDouble.start();
    proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
    server = `http://apiserver.test:${new URL(d.url).port}`;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(d, '10.96.0.10', { namespace: 'default', name: 'dns' });
  });
  afterEach(async () => {
    for (const o of opened.splice(0)) o.close();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await proxy.close();
    await d.close();
  });

  it('KubernetesStore: the list and the watch through HTTP_PROXY', async () => {
    process.env.HTTP_PROXY = proxy.url;
    const store = new KubernetesStore(kubeConfigFor(server), { requestTimeoutMs: 10_000 });
    opened.push(store);
    await store.waitForSync({ timeoutMs: 10_000 });
    expect(store.cache.get('10.96.0.10')).toMatchObject({ name: '10.96.0.10' });
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(proxy.seen.every((s) => s.line.includes(`apiserver.test:${new URL(d.url).port}`))).toBe(true);
  });

  it('ipallocator status through http_proxy given as host:port (read as http://), as kubectl reads it', async () => {
    process.env.http_proxy = proxy.url.slice('http://'.length);
    const kc = writeKubeconfig(server);
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout).toContain('1 of 254 used');
      expect(proxy.seen.length).toBeGreaterThan(0);
    } finally {
      kc.remove();
    }
  });

  it('NO_PROXY naming the server: sent directly, not through the proxy (and so not reached here)', async () => {
    process.env.HTTP_PROXY = proxy.url;
    process.env.NO_PROXY = 'localhost,.example,apiserver.test';
    const kc = writeKubeconfig(server);
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('ENOTFOUND');
      expect(proxy.seen).toEqual([]);
    } finally {
      kc.remove();
    }
  });

  // Found by an outside test: refused directly, but sent (the token in clear) through the proxy.
  // Now sent both ways, as kubectl sends it, and without the token either way (plain-http.ts).
  it('a plain http:// server without insecure-skip-tls-verify is sent through HTTP_PROXY as without it, without the token', async () => {
    process.env.HTTP_PROXY = proxy.url;
    const kc = kubeConfigFor(server);
    kc.clusters = kc.clusters.map((c) => ({ ...c, skipTLSVerify: false }));
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
    opened.push(store);
    await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(proxy.seen.map((s) => s.headers.authorization)).toEqual(proxy.seen.map(() => undefined));
    expect(JSON.stringify(d.requests)).not.toContain(TEST_TOKEN);
  });

  it("a plain http:// server without insecure-skip-tls-verify is sent through the cluster's own proxy-url too, without the token", async () => {
    const kc = kubeConfigFor(server);
    kc.clusters = kc.clusters.map((c) => ({ ...c, skipTLSVerify: false, proxyUrl: proxy.url }));
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
    opened.push(store);
    await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(JSON.stringify(d.requests)).not.toContain(TEST_TOKEN);
  });

  it("a cluster's own proxy-url wins over the environment's", async () => {
    process.env.HTTP_PROXY = 'http://127.0.0.1:9'; // nothing listens there
    const kc = kubeConfigFor(server);
    kc.clusters = kc.clusters.map((c) => ({ ...c, proxyUrl: proxy.url }));
    const store = new KubernetesStore(kc, { requestTimeoutMs: 10_000 });
    opened.push(store);
    await store.waitForSync({ timeoutMs: 10_000 });
    expect(store.cache.get('10.96.0.10')).toMatchObject({ name: '10.96.0.10' });
    expect(proxy.seen.length).toBeGreaterThan(0);
  });

  it('a proxy from the environment that cannot be reached is named by its variable, exit 2', async () => {
    process.env.HTTP_PROXY = 'http://127.0.0.1:9'; // nothing listens there
    const kc = writeKubeconfig(server);
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(kc.path)}: the request to ${server} was not sent: cannot reach the proxy at http://127.0.0.1:9 (environment variable HTTP_PROXY): connection refused (ECONNREFUSED)\n`,
      );
    } finally {
      kc.remove();
    }
  });
});

describe("requests go through a proxy as Go's net/http sends them (a proxy-url or the environment's)", () => {
  let d: ApiServerDouble;
  let server: string;
  let port: string;
  const saved = new Map<string, string | undefined>();
  const opened: { close(): void }[] = [];
  const closing: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    for (const name of PROXY_VARIABLES) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
    d = await ApiServerDouble.start();
    port = new URL(d.url).port;
    server = `http://apiserver.test:${port}`;
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24'], true);
    addIPAddress(d, '10.96.0.10', { namespace: 'default', name: 'dns' });
  });
  afterEach(async () => {
    for (const o of opened.splice(0)) o.close();
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    for (const close of closing.splice(0)) await close();
    await d.close();
  });

  /** A store for `kc`'s server through `proxy`, named in `where`: HTTP_PROXY, or the cluster's proxy-url. */
  function storeThrough(proxy: string, where: 'HTTP_PROXY' | 'proxy-url', at = server): KubernetesStore {
    const kc = kubeConfigFor(at);
    if (where === 'HTTP_PROXY') process.env.HTTP_PROXY = proxy;
    else kc.clusters = kc.clusters.map((c) => ({ ...c, proxyUrl: proxy }));
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
    opened.push(store);
    return store;
  }

  it.each(['HTTP_PROXY', 'proxy-url'] as const)(
    'an http:// server through %s: each request, the watch too, in absolute form (GET http://host:port/path), never CONNECT, which Squid refuses but to port 443',
    async (where) => {
      const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' }, connectOnlyTo443: true });
      closing.push(proxy.close);
      const kc = kubeConfigFor(server);
      if (where === 'HTTP_PROXY') process.env.HTTP_PROXY = proxy.url;
      else kc.clusters = kc.clusters.map((c) => ({ ...c, proxyUrl: proxy.url }));
      const store = new KubernetesStore(kc, { requestTimeoutMs: 10_000 });
      opened.push(store);
      await store.waitForSync({ timeoutMs: 10_000 });
      addIPAddress(d, '10.96.0.11', { namespace: 'default', name: 'web' });
      await until(() => store.cache.get('10.96.0.11') !== undefined, 'the watch event through the proxy');
      const lines = proxy.seen.map((r) => r.line);
      expect(lines.filter((line) => !line.startsWith(`GET http://apiserver.test:${port}/apis/networking.k8s.io/`))).toEqual([]);
      expect(lines.some((line) => line.includes('watch=true'))).toBe(true);
      // the request is the API server's, with its own Host; the user's token goes to no http://
      // server, nor to the proxy on the way, as kubectl sends it (plain-http.ts)
      expect(proxy.seen[0]!.headers.host).toBe(`apiserver.test:${port}`);
      expect(proxy.seen.filter((r) => r.headers.authorization !== undefined)).toEqual([]);
    },
  );

  it('the user and password of an http:// proxy are sent as Proxy-Authorization, as Go sends them', async () => {
    const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
    closing.push(proxy.close);
    const store = storeThrough(proxy.url.replace('http://', 'http://ops:s%40cret@'), 'proxy-url');
    await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
    expect(proxy.seen.map((r) => r.headers['proxy-authorization'])).toEqual([`Basic ${Buffer.from('ops:s@cret').toString('base64')}`]);
  });
  it('a proxy that asks for credentials (407) to an http:// server is named, with its answer', async () => {
    const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' }, proxyAuthorization: 'Basic b3BzOnM=' });
    closing.push(proxy.close);
    const error = await storeThrough(proxy.url, 'HTTP_PROXY')
      .get('10.96.0.10')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect((error as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.96.0.10": the request to ${server} was not sent: the proxy at ${proxy.url} (environment variable HTTP_PROXY) ` +
        'refused the request: it answered 407 Proxy Authentication Required ' +
        '(a proxy takes its user and password in its URL, as in http://user:password@proxy.example:3128)',
    );
    expect(proxy.seen.map((r) => r.line)).toEqual([`GET ${server}/apis/networking.k8s.io/v1/ipaddresses/10.96.0.10`]);
  });

  it('a proxy user without a password is sent as Proxy-Authorization on CONNECT too, as Go sends it', async () => {
    const tls = await startTlsServer();
    closing.push(tls.close);
    const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
    closing.push(proxy.close);
    const store = storeThrough(proxy.url.replace('http://', 'http://ops@'), 'proxy-url', `https://apiserver.test:${new URL(tls.url).port}`);
    await expect(store.get('10.96.0.10')).rejects.toThrow('the API server answered with an object without metadata');
    expect(proxy.seen.map((r) => [r.line.split(' ')[0], r.headers['proxy-authorization']])).toEqual([
      ['CONNECT', `Basic ${Buffer.from('ops:').toString('base64')}`],
    ]);
  });
  it('an https:// proxy that answers in plain HTTP is named as the failure, and Node warns of nothing', async () => {
    const plain = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
    closing.push(plain.close);
    const proxy = plain.url.replace('http://', 'https://');
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const error = await storeThrough(proxy, 'HTTP_PROXY')
        .get('10.96.0.10')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubernetesApiError);
      expect((error as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.96.0.10": the request to ${server} was not sent: the proxy at ${proxy} (environment variable HTTP_PROXY) ` +
          'did not answer in TLS (ERR_SSL_WRONG_VERSION_NUMBER): a plain http:// proxy on that port?',
      );
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
      expect(warnings.map((w) => `${w.name} ${(w as { code?: string }).code}`)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("an https:// server through HTTPS_PROXY: a CONNECT tunnel, and TLS inside it with the kubeconfig's settings", async () => {
    const tls = await startTlsServer(); // self-signed: reached only with insecure-skip-tls-verify, which kubeConfigFor sets
    closing.push(tls.close);
    const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
    closing.push(proxy.close);
    const tlsPort = new URL(tls.url).port;
    process.env.HTTPS_PROXY = proxy.url;
    const store = new KubernetesStore(kubeConfigFor(`https://apiserver.test:${tlsPort}`), { start: false, requestTimeoutMs: 10_000 });
    opened.push(store);
    // the double answers {} to everything: an answer, read through the tunnel
    await expect(store.get('10.96.0.10')).rejects.toThrow('the API server answered with an object without metadata');
    expect(proxy.seen.map((r) => r.line)).toEqual([`CONNECT apiserver.test:${tlsPort}`]);
  });

  // Regression: with client-node 2.x a proxy URL with a path failed every request to an https://
  // server with undici's "invalid url", said as the API server's failure; Go sends to the proxy's
  // host and port alone. A value that is no URL as written, HTTPS_PROXY='http://[bad', is read as
  // Go reads it, with http:// in front (the proxy at host "http", path "//[bad"), and so failed
  // the same way without naming the variable.
  it.each(['HTTPS_PROXY', 'https_proxy', 'proxy-url'] as const)(
    'an https:// server through a proxy URL with a path in %s: tunnelled through the proxy, the path left out as Go leaves it out',
    async (where) => {
      const tls = await startTlsServer();
      closing.push(tls.close);
      const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
      closing.push(proxy.close);
      const tlsPort = new URL(tls.url).port;
      const kc = kubeConfigFor(`https://apiserver.test:${tlsPort}`);
      if (where === 'proxy-url') kc.clusters = kc.clusters.map((c) => ({ ...c, proxyUrl: `${proxy.url}/corp/proxy` }));
      else process.env[where] = `${proxy.url}/corp/proxy`;
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(store);
      await expect(store.get('10.96.0.10')).rejects.toThrow('the API server answered with an object without metadata');
      expect(proxy.seen.map((r) => r.line)).toEqual([`CONNECT apiserver.test:${tlsPort}`]);
    },
  );

  it.each([
    ['HTTPS_PROXY', 'https'],
    ['https_proxy', 'https'],
    ['HTTP_PROXY', 'http'],
    ['http_proxy', 'http'],
  ] as const)(
    '%s=http://[bad, no URL as written: the failure names the variable, by the library (client-node 2.x and 1.x) and the command line',
    async (variable, scheme) => {
      process.env[variable] = 'http://[bad';
      const at = `${scheme}://apiserver.test:${port}`;
      // read as kubectl reads it: the proxy at host "http" (kubectl: "proxyconnect tcp: dial tcp: lookup http: no such host")
      const said = `the request to ${at} was not sent: cannot reach the proxy at http://http (environment variable ${variable}): `;
      for (const Config of [KubeConfigNow, KubeConfig1]) {
        const kc = kubeConfigFor(at, TEST_TOKEN, { Config: Config as unknown as typeof KubeConfigNow });
        const store = new KubernetesStore(kc as KubeConfigNow, { start: false, requestTimeoutMs: 10_000 });
        opened.push(store);
        const error = await store.get('10.96.0.10').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(KubernetesApiError);
        expect((error as Error).message).toContain(`get ipaddresses.networking.k8s.io "10.96.0.10": ${said}`);
      }
      const kc = writeKubeconfig(at);
      try {
        const r = await cli(['status', '--kubeconfig', kc.path]);
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toContain(
          `: the request to ${at} was not sent: cannot reach the proxy at http://http (environment variable ${variable}): `,
        );
      } finally {
        kc.remove();
      }
    },
  );

  describe("through a CONNECT tunnel, the API server's certificate is checked against the kubeconfig's CA", () => {
    /** An https:// API server with SERVER_CERT (for 127.0.0.1) that asks for a client certificate and records who asked what. */
    async function checkedServer(): Promise<{ port: number; seen: { client: string | undefined; authorization: string | undefined }[] }> {
      const seen: { client: string | undefined; authorization: string | undefined }[] = [];
      const server = https.createServer(
        { cert: SERVER_CERT, key: SERVER_KEY, requestCert: true, rejectUnauthorized: false },
        (req, res) => {
          const client = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
          seen.push({ client: typeof client === 'string' ? client : undefined, authorization: req.headers.authorization });
          res.setHeader('content-type', 'application/json');
          res.end('{}');
        },
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      closing.push(async () => {
        server.closeAllConnections();
        server.close();
      });
      return { port: (server.address() as AddressInfo).port, seen };
    }

    /** A store for `at` through `proxy` (its proxy-url), verifying with SERVER_CERT as its CA, user with CLIENT_CERT. */
    function verifyingStore(at: string, proxy: string): KubernetesStore {
      const kc = kubeConfigFor(at);
      kc.clusters = kc.clusters.map((c) => ({ ...c, skipTLSVerify: false, caData: base64(SERVER_CERT), proxyUrl: proxy }));
      kc.users = kc.users.map((u) => ({ ...u, certData: base64(CLIENT_CERT), keyData: base64(CLIENT_KEY) }));
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(store);
      return store;
    }

    it('a certificate the CA signed for the name: answered, the client certificate shown to the server, no credential to the proxy', async () => {
      const api = await checkedServer();
      const proxy = await startForwardProxy({ hosts: { '127.0.0.1': '127.0.0.1' } });
      closing.push(proxy.close);
      await expect(verifyingStore(`https://127.0.0.1:${api.port}`, proxy.url).get('10.96.0.10')).rejects.toThrow(
        'the API server answered with an object without metadata',
      );
      expect(api.seen).toEqual([{ client: 'tester', authorization: `Bearer ${TEST_TOKEN}` }]);
      expect(proxy.seen.map((r) => [r.line, r.headers.authorization])).toEqual([[`CONNECT 127.0.0.1:${api.port}`, undefined]]);
    });

    it('a certificate for another name: refused before the request (and its token) is sent', async () => {
      const api = await checkedServer();
      const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
      closing.push(proxy.close);
      const error = await verifyingStore(`https://apiserver.test:${api.port}`, proxy.url)
        .get('10.96.0.10')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubernetesApiError);
      expect((error as Error).message).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
      expect(api.seen).toEqual([]);
    });
  });

  it('a proxy that refuses to open a tunnel to an https:// server is named, with its answer', async () => {
    const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' }, connectOnlyTo443: true });
    closing.push(proxy.close);
    const error = await storeThrough(proxy.url, 'proxy-url', `https://apiserver.test:${port}`)
      .get('10.96.0.10')
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.96.0.10": the request to https://apiserver.test:${port} was not sent: the proxy at ${proxy.url} ` +
        '(proxy-url of cluster "double" in the kubeconfig) did not open a tunnel to the API server: it answered CONNECT with HTTP 403',
    );
    expect(proxy.seen.map((r) => r.line)).toEqual([`CONNECT apiserver.test:${port}`]);
  });
  // Regression: said as node-fetch's failure, "fetch failed: Bad response: 403 (the API server at …)"
  it('with client-node 1.x too, a proxy that refuses to open a tunnel is named, with its answer', async () => {
    const api = await startServerWith(ISSUED_CERT);
    const proxy = await startForwardProxy({ hosts: { '127.0.0.1': '127.0.0.1' }, connectOnlyTo443: true });
    closing.push(proxy.close);
    try {
      const err = await settledGet(
        { server: api.url, caData: base64(CA_CERT), proxyUrl: proxy.url },
        { token: 't' },
        KubeConfig1 as unknown as typeof KubeConfigNow,
      );
      expect((err as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${api.url} was not sent: the proxy at ${proxy.url} ` +
          '(proxy-url of cluster "prod" in the kubeconfig) did not open a tunnel to the API server: it answered CONNECT with HTTP 403',
      );
      expect(proxy.seen.map((r) => r.line)).toEqual([`CONNECT ${new URL(api.url).host}`]);
    } finally {
      api.close();
    }
  });

  // Regression: a KubeConfig handing out one agent for every request (one that keeps client-node
  // 1.x's connections alive) had it wrapped again for each: the failure of its connection to the
  // proxy was said with "(on the connection to the proxy)" once per request made before
  it.each(['localhost', '127.0.0.1'])(
    'with client-node 1.x, an agent handed out again is not wrapped again: a failure at the proxy %s is said the same each time',
    async (host) => {
      const resetting = net.createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
      closing.push(() => new Promise<void>((resolve) => resetting.close(() => resolve())));
      // by name (hpagent's connection) and by address (proxyByAddress's)
      const proxyUrl = `http://${host}:${(resetting.address() as AddressInfo).port}`;
      let agent: unknown;
      const createAgent = (KubeConfig1.prototype as unknown as { createAgent: (...args: unknown[]) => unknown }).createAgent;
      class OneAgent extends KubeConfig1 {}
      Object.defineProperty(OneAgent.prototype, 'createAgent', {
        writable: true,
        value(this: unknown, ...args: unknown[]) {
          agent ??= createAgent.apply(this, args);
          return agent;
        },
      });
      const kc = kubeConfigFor(server, TEST_TOKEN, { proxyUrl, Config: OneAgent as unknown as typeof KubeConfigNow });
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(store);
      const said: string[] = [];
      for (let i = 0; i < 3; i++) said.push(((await store.get('10.96.0.10').catch((e: unknown) => e)) as Error).message);
      expect(said[0]).toContain(`the connection to the proxy at ${proxyUrl} (proxy-url of cluster "double" in the kubeconfig) failed: `);
      expect(said[0]!.split('(on the connection to the proxy)').length).toBe(2);
      expect(said).toEqual([said[0], said[0], said[0]]);
    },
  );

  it.each([
    ['HTTP_PROXY', 'socks4://127.0.0.1:1080', 'environment variable HTTP_PROXY'],
    ['HTTP_PROXY', 'ftp://127.0.0.1:21', 'environment variable HTTP_PROXY'],
    ['proxy-url', 'socks4://127.0.0.1:1080', 'proxy-url of cluster "double" in the kubeconfig'],
  ] as const)('a proxy in %s of a scheme Go does not send through (%s) is refused, naming where it is set', async (where, url, field) => {
    const error = await storeThrough(url, where)
      .get('10.96.0.10')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect((error as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.96.0.10": the request to ${server} was not sent: the ${field} does not start with ` +
        'http://, https://, socks5:// or socks5h:// (a proxy is named with its scheme, as in http://proxy.example:3128)',
    );
    expect((error as Error).cause).toBeInstanceOf(UnusableProxyError);
  });

  // Regression: the user or password was decoded only as the request was sent, and a "%" not
  // followed by two hex digits failed it with "URI malformed", said as the API server's failure
  it.each([
    ['HTTP_PROXY', 'http://ops:50%off@127.0.0.1:3128', 'environment variable HTTP_PROXY', KubeConfigNow],
    ['proxy-url', 'socks5://ops:50%off@127.0.0.1:1080', 'proxy-url of cluster "double" in the kubeconfig', KubeConfigNow],
    ['proxy-url', 'https://o%zzps:pw@127.0.0.1:3128', 'proxy-url of cluster "double" in the kubeconfig', KubeConfigNow],
    ['proxy-url', 'http://ops:p%ffw@127.0.0.1:3128', 'proxy-url of cluster "double" in the kubeconfig', KubeConfigNow],
    ['proxy-url', 'http://ops:50%off@127.0.0.1:3128', 'proxy-url of cluster "double" in the kubeconfig', KubeConfig1],
  ] as const)(
    'a proxy in %s whose user or password does not percent-decode (%s) is refused, naming where it is set, the password not shown',
    async (where, url, field, Config) => {
      const kc = kubeConfigFor(server, TEST_TOKEN, {
        proxyUrl: where === 'proxy-url' ? url : undefined,
        Config: Config as unknown as typeof KubeConfigNow,
      });
      if (where === 'HTTP_PROXY') process.env.HTTP_PROXY = url;
      const store = new KubernetesStore(kc as KubeConfigNow, { start: false, requestTimeoutMs: 10_000 });
      opened.push(store);
      const error = await store.get('10.96.0.10').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubernetesApiError);
      expect((error as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.96.0.10": the request to ${server} was not sent: the ${field} has a user or ` +
          'password that does not percent-decode (it is not shown: a password may sit in it): each "%" there starts the escape ' +
          'of UTF-8 text, as %25 for "%" itself (kubectl refuses a "%" not followed by two hex digits too: "invalid URL escape")',
      );
      expect((error as Error).cause).toBeInstanceOf(UnusableProxyError);
      expect(inspect(error, { depth: 20 })).not.toMatch(/50%off|p%ffw/);
    },
  );

  // Regression: the list was refused the same way after every backoff, for ever, and waitForSync()
  // without a timeout never returned
  it.each([
    ['HTTP_PROXY', 'socks4://127.0.0.1:1080'],
    ['proxy-url', 'socks4://127.0.0.1:1080'],
    ['proxy-url', 'http://[bad'],
  ] as const)(
    'a proxy in %s no request can go through (%s): waitForSync rejects at once with SyncBlockedError, nothing listed again',
    async (where, url) => {
      const store = storeThrough(url, where);
      store.start();
      const err = (await store.waitForSync().catch((e: unknown) => e)) as SyncBlockedError;
      expect(err).toBeInstanceOf(SyncBlockedError);
      expect([err.code, err.port, err.server]).toEqual(['ERR_SYNC_BLOCKED', undefined, server]);
      expect(err.message).toMatch(
        /^KubernetesStore: ipaddresses\.networking\.k8s\.io not synced, and not listed again: list ipaddresses\.networking\.k8s\.io: the request to http:\/\/apiserver\.test:\d+ was not sent: the (environment variable HTTP_PROXY|proxy-url of cluster "double" in the kubeconfig) (does not start with|is no URL)/,
      );
      expect(err.message).not.toContain('[bad');
      await expect(store.waitForSync({ timeoutMs: 600_000 })).rejects.toBeInstanceOf(SyncBlockedError);
      // many backoffs later (the default's first is 200 ms), the one list is all there was
      await new Promise((r) => setTimeout(r, 600));
      expect(store.stats).toMatchObject({ lists: 1, errors: 1 });
    },
  );

  it.each([
    ['socks5', 'HTTP_PROXY'],
    ['socks5h', 'HTTP_PROXY'],
    ['socks5', 'proxy-url'],
    ['socks5h', 'proxy-url'],
    // a scheme is case-insensitive (RFC 3986); Go's url.Parse lowercases it
    ['SOCKS5', 'HTTP_PROXY'],
    ['SOCKS5H', 'proxy-url'],
  ] as const)("a %s:// proxy in %s is given the API server's name to resolve, as Go gives it", async (scheme, where) => {
    const socks = await startSocks5Proxy({ 'apiserver.test': '127.0.0.1' });
    closing.push(socks.close);
    const store = storeThrough(socks.url.replace('socks5:', `${scheme}:`), where);
    await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
    expect(socks.seen).toEqual([{ kind: 'domain', host: 'apiserver.test', port: Number(port) }]);
  });

  // Regression: client-node 2.x gave TLS the server's address as its name through a SOCKS proxy:
  // Node warned (DEP0123) on stderr, and Deno threw it as an unhandled error, the request left
  // to hang until its deadline. Its tls-server-name was dropped on the way, too.
  it('an https:// server named by its address, through a SOCKS5 proxy: answered, its certificate checked against the address or the tls-server-name, no warning, by client-node 2.x and 1.x', async () => {
    const socks = await startSocks5Proxy({});
    closing.push(socks.close);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      // Regression: with client-node 1.x, the certificate of a server named by its address was
      // checked against the name "localhost" (socks-proxy-agent gives TLS neither a name nor the host)
      for (const [cert, tlsServerName, Config] of [
        [ISSUED_CERT, undefined, KubeConfigNow],
        [OTHER_NAME_CERT, 'api.cluster.example', KubeConfigNow],
        [ISSUED_CERT, undefined, KubeConfig1 as unknown as typeof KubeConfigNow],
        [OTHER_NAME_CERT, 'api.cluster.example', KubeConfig1 as unknown as typeof KubeConfigNow],
      ] as const) {
        const api = await startServerWith(cert);
        try {
          const cluster = { server: api.url, caData: base64(CA_CERT), proxyUrl: socks.url, ...(tlsServerName && { tlsServerName }) };
          const err = await settledGet(cluster, { token: 't' }, Config);
          const what = `${cert === ISSUED_CERT ? 'by its address' : 'by tls-server-name'}, client-node ${Config === KubeConfigNow ? '2.x' : '1.x'}`;
          // the server's `{}` is no IPAddress: what matters is that it answered
          expect((err as Error).message, what).toMatch(
            /^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /,
          );
          expect(socks.seen.at(-1)).toEqual({ kind: 'ipv4', host: '127.0.0.1', port: Number(new URL(api.url).port) });
        } finally {
          api.close();
        }
      }
      // and one not issued for that address is refused, said with the address
      for (const Config of [KubeConfigNow, KubeConfig1 as unknown as typeof KubeConfigNow]) {
        const api = await startServerWith(OTHER_NAME_CERT);
        try {
          const err = await settledGet({ server: api.url, caData: base64(CA_CERT), proxyUrl: socks.url }, { token: 't' }, Config);
          expect((err as Error).message).toContain(
            "was not sent: the API server's certificate is not issued for 127.0.0.1 (ERR_TLS_CERT_ALTNAME_INVALID), the host of the server URL",
          );
        } finally {
          api.close();
        }
      }
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
      expect(warnings.map((w) => `${w.name} ${(w as { code?: string }).code}`)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  // Regression: with client-node 2.x the user and password of a socks5:// URL were never sent:
  // a proxy that asks for them refused every request
  it.each(BOTH_CLIENT_NODES)(
    'with client-node %s, the user and password of a SOCKS5 proxy URL are sent to it (RFC 1929), as Go sends them',
    async (_version, Config) => {
      const socks = await startSocks5Proxy({ 'apiserver.test': '127.0.0.1' }, { login: { user: 'ops', password: 's@cret' } });
      closing.push(socks.close);
      const at = `http://apiserver.test:${port}`;
      const kc = kubeConfigFor(at, TEST_TOKEN, { proxyUrl: socks.url.replace('socks5://', 'socks5://ops:s%40cret@'), Config });
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(store);
      await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
      expect(socks.logins).toEqual([{ user: 'ops', password: 's@cret' }]);
      // a password the proxy refuses: said to be the proxy's failure (with 1.x too: said as the API
      // server's before), the password nowhere in the error, which an application may log whole
      kc.clusters = kc.clusters.map((c) => ({ ...c, proxyUrl: socks.url.replace('socks5://', 'socks5://ops:wr0ng-pw@') }));
      const refusing = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(refusing);
      const err = await refusing.get('10.96.0.10').catch((e: unknown) => e);
      // Regression: said as the socks library's words, `did not connect to the API server: "Socks5 Authentication failed"`
      expect((err as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.96.0.10": the request to ${at} was not sent: the SOCKS5 proxy at ${socks.url} ` +
          '(proxy-url of cluster "double" in the kubeconfig) refused the user name and password in the proxy URL (RFC 1929): ' +
          'set the ones it takes there, as in socks5://user:password@proxy.example:1080',
      );
      expect(inspect(err, { depth: 20 })).not.toContain('wr0ng-pw');
      // none at all, to a proxy that asks for them: said so (before, as the socks library's words,
      // "Received invalid Socks5 initial handshake (no accepted authentication type)")
      kc.clusters = kc.clusters.map((c) => ({ ...c, proxyUrl: socks.url }));
      const anonymous = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(anonymous);
      expect(((await anonymous.get('10.96.0.10').catch((e: unknown) => e)) as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.96.0.10": the request to ${at} was not sent: the SOCKS5 proxy at ${socks.url} ` +
          '(proxy-url of cluster "double" in the kubeconfig) takes no connection without a login, and the proxy URL holds no ' +
          'user name: set one and its password there, as in socks5://user:password@proxy.example:1080',
      );
    },
  );

  // Regression: with client-node 1.x, a SOCKS5 proxy named by an IPv6 address was looked up as the
  // host name "[::1]" (socks-proxy-agent keeps the URL's brackets): every request failed with
  // "getaddrinfo ENOTFOUND [::1]", said as the API server's failure
  it.each(BOTH_CLIENT_NODES)(
    'with client-node %s, a SOCKS5 proxy named by an IPv6 address (socks5://[::1]:port) is connected to',
    async (_version, Config) => {
      const socks = await startSocks5Proxy({ 'apiserver.test': '127.0.0.1' }, { listen: '::1' });
      closing.push(socks.close);
      const at = `http://apiserver.test:${port}`;
      const kc = kubeConfigFor(at, TEST_TOKEN, { proxyUrl: socks.url, Config });
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(store);
      await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
      expect(socks.seen).toEqual([{ kind: 'domain', host: 'apiserver.test', port: Number(port) }]);
    },
  );

  // Regression: with client-node 1.x, an http:// proxy named by an IPv6 address was looked up as
  // the host name "[::1]" (hpagent passes the URL's brackets on): every request failed with
  // "cannot reach the proxy at http://[::1]:port (…): host not found (ENOTFOUND)"
  it.each(BOTH_CLIENT_NODES)(
    'with client-node %s, an http:// proxy named by an IPv6 address (http://[::1]:port) is connected to',
    async (_version, Config) => {
      const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' }, listen: '::1' });
      closing.push(proxy.close);
      const kc = kubeConfigFor(server, TEST_TOKEN, { proxyUrl: proxy.url, Config });
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      opened.push(store);
      await expect(store.get('10.96.0.10')).resolves.toMatchObject({ name: '10.96.0.10' });
      expect(proxy.seen.length).toBe(1);
    },
  );

  // Regression: with client-node 1.x, such a proxy was said as the API server out of reach
  // ("fetch failed: connect ECONNREFUSED 127.0.0.1:9 (the API server at …)"): the socks library
  // keeps the words of the failure only, not its code
  it.each(BOTH_CLIENT_NODES)(
    'with client-node %s, a SOCKS5 proxy nothing listens at, or that cannot be found, is said to be out of reach, naming it',
    async (_version, Config) => {
      const port = await closedPort();
      for (const [proxyUrl, shown, why] of [
        [`socks5://ops:proxy-secret@127.0.0.1:${port}`, `socks5://127.0.0.1:${port}`, 'connection refused (ECONNREFUSED)'],
        [`socks5://[::1]:${port}`, `socks5://[::1]:${port}`, 'connection refused (ECONNREFUSED)'],
        ['socks5://socks.invalid:1080', 'socks5://socks.invalid:1080', 'host not found (ENOTFOUND)'],
      ] as const) {
        const err = await settledGet({ server: 'https://10.0.0.1:6443', skipTLSVerify: true, proxyUrl }, { token: 't' }, Config);
        expect((err as Error).message).toBe(
          'get ipaddresses.networking.k8s.io "10.0.0.1": the request to https://10.0.0.1:6443 was not sent: ' +
            `cannot reach the proxy at ${shown} (proxy-url of cluster "prod" in the kubeconfig): ${why}`,
        );
        expect(inspect(err, { depth: 20 })).not.toContain('proxy-secret');
      }
    },
  );

  it("a name the SOCKS5 proxy cannot resolve is said to be the proxy's answer, not a proxy out of reach", async () => {
    const socks = await startSocks5Proxy({ 'apiserver.test': '127.0.0.1' });
    closing.push(socks.close);
    const error = await storeThrough(socks.url, 'HTTP_PROXY', `http://elsewhere.test:${port}`)
      .get('10.96.0.10')
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.96.0.10": the request to http://elsewhere.test:${port} was not sent: the proxy at ${socks.url} (environment variable HTTP_PROXY) ` +
        'did not connect to the API server: "Socks5 proxy rejected connection - HostUnreachable"',
    );
  });
});

// Regression: a proxy that did not reach the host a redirect led to was said not to open a tunnel
// (or connect) "to the API server", which it had reached
describe('a proxy that does not reach the host the API server redirected the request to', () => {
  // the API server by name, as the proxies resolve it: Deno's TLS takes no address as a server name
  let api: https.Server;
  let url: string;
  const hosts = { 'api.cluster.example': '127.0.0.1' };
  const closing: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    api = https.createServer({ cert: OTHER_NAME_CERT, key: ISSUED_KEY }, (_req, res) =>
      res.writeHead(302, { location: 'https://sso.test:8443/login' }).end(),
    );
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    url = `https://api.cluster.example:${(api.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
    api.closeAllConnections();
    api.close();
  });

  it('an http:// proxy that refuses the tunnel: said to be a tunnel to that host', async () => {
    const proxy = await startForwardProxy({ hosts });
    closing.push(proxy.close);
    const err = await settledGet({ server: url, caData: base64(CA_CERT), proxyUrl: proxy.url }, { token: 't' });
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to https://sso.test:8443 (where ${url} redirected the request) was not sent: ` +
        `the proxy at ${proxy.url} (proxy-url of cluster "prod" in the kubeconfig) did not open a tunnel to https://sso.test:8443: ` +
        'it answered CONNECT with HTTP 502',
    );
    expect(proxy.seen.map((r) => r.line)).toEqual([`CONNECT ${new URL(url).host}`, 'CONNECT sso.test:8443']);
  });

  it('a SOCKS5 proxy that cannot resolve its name: said not to connect to that host', async () => {
    const socks = await startSocks5Proxy(hosts);
    closing.push(socks.close);
    const err = await settledGet({ server: url, caData: base64(CA_CERT), proxyUrl: socks.url }, { token: 't' });
    expect((err as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to https://sso.test:8443 (where ${url} redirected the request) was not sent: ` +
        `the proxy at ${socks.url} (proxy-url of cluster "prod" in the kubeconfig) did not connect to https://sso.test:8443: ` +
        '"Socks5 proxy rejected connection - HostUnreachable"',
    );
    expect(socks.seen.map(({ host }) => host)).toEqual(['api.cluster.example', 'sso.test']);
  });
});
