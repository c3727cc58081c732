// The proxy the environment names — HTTPS_PROXY, HTTP_PROXY, NO_PROXY, or their lowercase forms —
// for a cluster without a proxy-url of its own, as kubectl takes it.
//
// client-go sends through the cluster's proxy-url when it has one, and otherwise through Go's
// http.ProxyFromEnvironment (golang.org/x/net/http/httpproxy, FromEnvironment and
// config.useProxy); client-node reads only the proxy-url, so behind a corporate proxy kubectl
// worked where we failed to resolve the API server's name (ENOTFOUND). Go's rules, kept here:
//
//   which variable   HTTPS_PROXY for an https:// server, HTTP_PROXY for an http:// one; the
//                    uppercase name first, the lowercase one when the uppercase is unset or
//                    empty (getEnvAny)
//   the value        a URL (http://, https://, socks5:// or socks5h://), or "host[:port]", read
//                    as http:// (parseProxy); a URL of another scheme (socks4://) is refused
//                    when a request would go through it, where Go would read its scheme as a
//                    host name ("http://socks4"); a value that is none of those is ignored, as
//                    Go ignores it
//   never proxied    the host "localhost" and loopback addresses (127.0.0.0/8, ::1), whatever
//                    NO_PROXY says (useProxy)
//   NO_PROXY         a comma-separated list, each entry trimmed and lowercased: "*" (nothing is
//                    proxied); an IP prefix in CIDR notation (10.0.0.0/8); an IP address,
//                    optionally with a port (10.0.0.1, 10.0.0.1:6443, [::1]:6443); a domain
//                    name, optionally with a port, matching itself and every subdomain
//                    (example.com), a leading "." or "*." matching subdomains only
//                    (.example.com); a port in an entry must be the server's (its URL's, else
//                    443 for https, 80 for http)
//
// Go also refuses HTTP_PROXY inside a CGI handler (REQUEST_METHOD set); that case is not ours.
//
// `withEnvironmentProxy` applies it where a cluster's proxy-url is read: the KubeConfig every
// request is sent with answers getCurrentCluster() with the environment's proxy as the cluster's
// proxyUrl, so that client-node sends through it as through a proxy-url (1.x and 2.x alike).
// Either proxy is then sent through as Go's net/http sends (proxy-dispatch.ts), and one of a
// scheme Go does not send through is refused, naming where it was set (UnusableProxyError).
// `proxyOf` tells a failure's message which of the two a proxy came from (tls-material.ts).
import { domainToASCII } from 'node:url';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { type Family, parseAddr, parsePrefix } from '../address.ts';
import { InvalidArgumentError, nameErrorClasses } from '../errors.ts';
import { quoteText } from '../quote.ts';
import { isPlainHttp } from './plain-http.ts';
import {
  markingProxyFailures,
  markingSocksFailures,
  proxyByAddress,
  proxyDispatcher,
  socksProxyByAddress,
  tlsToProxyAsKubectl,
} from './proxy-dispatch.ts';

/** The environment's proxy for a server: its URL, and the variable it was read from (e.g. "https_proxy"). @internal */
export interface EnvironmentProxy {
  url: string;
  variable: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The proxy the environment names for requests to `server` (a URL), or undefined when it names
 * none, names one Go would not use, or NO_PROXY (or localhost, or a loopback address) exempts
 * the server.
 * @internal
 */
export function proxyFromEnvironment(server: string, env: Environment = process.env): EnvironmentProxy | undefined {
  return environmentProxies(env)(server);
}

/**
 * The environment read once (as Go's ProxyFromEnvironment reads it once per process, for the
 * function's life here), as a function from a server URL to its proxy.
 */
function environmentProxies(env: Environment): (server: string) => EnvironmentProxy | undefined {
  const https = firstSet(env, 'HTTPS_PROXY', 'https_proxy');
  const http = firstSet(env, 'HTTP_PROXY', 'http_proxy');
  const httpsUrl = https === undefined ? undefined : proxyURL(https.value);
  const httpUrl = http === undefined ? undefined : proxyURL(http.value);
  const exempt = noProxy(firstSet(env, 'NO_PROXY', 'no_proxy')?.value ?? '');
  return (server) => {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      return undefined;
    }
    const [proxy, variable] = url.protocol === 'https:' ? [httpsUrl, https?.name] : url.protocol === 'http:' ? [httpUrl, http?.name] : [];
    if (proxy === undefined || variable === undefined) return undefined;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
    return useProxy(host.toLowerCase(), port, exempt) ? { url: proxy, variable } : undefined;
  };
}

/** The first of `names` set to a non-empty value in `env` (Go's getEnvAny), with its name. */
function firstSet(env: Environment, ...names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}

/** The schemes of a proxy Go's net/http sends through (transport.go), as URL.protocol gives them. */
const PROXY_SCHEMES = new Set(['http:', 'https:', 'socks5:', 'socks5h:']);

/**
 * A proxy variable's value as Go's parseProxy reads it: a URL whose scheme is http, https,
 * socks5 or socks5h as it is; "host:port" or a bare host (which parses with "host" as its
 * scheme, or not at all) with "http://" put in front, when that parses. A URL of another scheme
 * ("socks4://proxy:1080") is kept as it is, to be refused when used (Go reads it as the host
 * "socks4", which no request reaches). Undefined for a value that is none of those: Go ignores it.
 */
function proxyURL(value: string): string | undefined {
  const asIs = parsed(value);
  if (asIs !== undefined && (PROXY_SCHEMES.has(asIs.protocol) || /^[a-z][a-z0-9+.-]*:\/\//i.test(value))) return value;
  return parsed(`http://${value}`) !== undefined ? `http://${value}` : undefined;
}

/**
 * A proxy named with a scheme that requests are not sent through: anything but http://,
 * https://, socks5:// and socks5h://, which are the ones Go's net/http takes (a proxy-url
 * without a scheme, "proxy.corp:3128", is one: kubectl refuses it too); with `notURL`, a
 * proxy-url that is no URL at all ("http://[bad": kubectl refuses it, "could not parse"; the
 * environment's variables are read as Go reads them, never so); with `badEscape`, a proxy whose
 * user or password does not percent-decode to text, which no request could send: a "%" not
 * followed by two hex digits ("http://ops:50%off@proxy:3128", which Go's url.Parse refuses too,
 * "invalid URL escape"), or escaped bytes that are not UTF-8. Thrown when a request would go
 * through it; its message names where the proxy was set, never the value, where a password may
 * sit.
 * @internal
 */
export class UnusableProxyError extends InvalidArgumentError {
  constructor(field: string, problem: 'scheme' | 'notURL' | 'badEscape' = 'scheme') {
    super(
      problem === 'notURL'
        ? `the ${field} is no URL (it is not shown: a password may sit in it), which kubectl refuses too ("could not parse"): ` +
            'a proxy is named as in http://proxy.example:3128'
        : problem === 'badEscape'
          ? `the ${field} has a user or password that does not percent-decode (it is not shown: a password may sit in it): ` +
            'each "%" there starts the escape of UTF-8 text, as %25 for "%" itself (kubectl refuses a "%" not followed by ' +
            'two hex digits too: "invalid URL escape")'
          : `the ${field} does not start with http://, https://, socks5:// or socks5h:// ` +
            '(a proxy is named with its scheme, as in http://proxy.example:3128)',
    );
  }
}
nameErrorClasses({ UnusableProxyError });

/** A URL's scheme and its colon as Go's url.Parse reads one (getScheme): a letter, then letters, digits, "+", "-" or ".". */
const GO_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function parsed(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Whether `text` percent-decodes: every "%" followed by two hex digits, the bytes UTF-8 (decodeURIComponent takes it). */
function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** An entry of NO_PROXY. */
type Exemption =
  | { kind: 'all' }
  | { kind: 'prefix'; family: Family; words: Uint32Array; bits: number }
  | { kind: 'address'; family: Family; words: Uint32Array; port: string }
  | { kind: 'domain'; suffix: string; matchesItself: boolean; port: string };

/** NO_PROXY's entries, as Go's config.init reads them; an entry it cannot read is skipped. */
function noProxy(list: string): Exemption[] {
  const exemptions: Exemption[] = [];
  for (const raw of list.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return [{ kind: 'all' }];
    const prefix = attempt(() => parsePrefix(entry));
    if (prefix !== undefined) {
      exemptions.push({ kind: 'prefix', ...prefix });
      continue;
    }
    let [host, port] = splitHostPort(entry) ?? [entry, ''];
    if (host === '') continue;
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    const address = attempt(() => parseAddr(host));
    if (address !== undefined) {
      exemptions.push({ kind: 'address', ...address, port });
      continue;
    }
    if (host.startsWith('*.')) host = host.slice(1);
    const matchesItself = !host.startsWith('.');
    const bare = matchesItself ? host : host.slice(1);
    // a name outside ASCII as the server's URL holds it: in punycode (Go's idnaASCII)
    const ascii = [...bare].every((ch) => ch.charCodeAt(0) < 0x80) ? bare : domainToASCII(bare) || bare;
    exemptions.push({ kind: 'domain', suffix: `.${ascii}`, matchesItself, port });
  }
  return exemptions;
}

/**
 * "host:port" or "[v6]:port" split as Go's net.SplitHostPort splits it, the brackets kept on the
 * host (as Go's config.init then strips them); undefined without a port (no colon, or an IPv6
 * address without brackets).
 */
function splitHostPort(text: string): [string, string] | undefined {
  const colon = text.lastIndexOf(':');
  if (colon < 0) return undefined;
  const host = text.slice(0, colon);
  if (host.includes(':') && !(host.startsWith('[') && host.endsWith(']'))) return undefined;
  return [host, text.slice(colon + 1)];
}

/** Go's config.useProxy: whether requests to host:port go through the proxy. */
function useProxy(host: string, port: string, exemptions: readonly Exemption[]): boolean {
  if (host === 'localhost') return false;
  const ip = attempt(() => parseAddr(host));
  if (ip !== undefined && isLoopback(ip.family, ip.words)) return false;
  for (const e of exemptions) {
    switch (e.kind) {
      case 'all':
        return false;
      case 'prefix':
        if (ip !== undefined && ip.family === e.family && samePrefix(ip.words, e.words, e.family === 4 ? 96 + e.bits : e.bits))
          return false;
        break;
      case 'address':
        if (ip !== undefined && ip.family === e.family && samePrefix(ip.words, e.words, 128) && (e.port === '' || e.port === port))
          return false;
        break;
      case 'domain':
        if ((host.endsWith(e.suffix) || (e.matchesItself && host === e.suffix.slice(1))) && (e.port === '' || e.port === port))
          return false;
        break;
    }
  }
  return true;
}

/** 127.0.0.0/8 (and its IPv4-mapped form, which parseAddr reads as IPv4) or ::1, as Go's IP.IsLoopback. */
function isLoopback(family: Family, words: Uint32Array): boolean {
  if (family === 4) return words[3]! >>> 24 === 127;
  return words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 1;
}

/** Whether the first `bits` bits of two addresses (four words each, IPv4 in the last) agree. */
function samePrefix(a: Uint32Array, b: Uint32Array, bits: number): boolean {
  for (let i = 0; i < 4 && bits > 0; i++, bits -= 32) {
    const mask = bits >= 32 ? 0xffffffff : ~(0xffffffff >>> bits);
    if (((a[i]! ^ b[i]!) & mask) !== 0) return false;
  }
  return true;
}

function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** Where a proxy of a cluster `withEnvironmentProxy` gave out was set, and its URL as set. */
const proxySources = new WeakMap<object, { url: string; field: string }>();

/**
 * `kc` as requests are sent with it: an object that reads everything from `kc` (its prototype)
 * but whose current cluster, when it has no proxy-url of its own and the environment's proxy
 * applies to its server, carries that proxy as its proxyUrl (the environment is read now, once),
 * and whose requests go through a proxy as Go's net/http sends them (proxy-dispatch.ts).
 *
 * A plain http:// server without insecure-skip-tls-verify, which client-node refuses to send to
 * directly ("HTTP protocol is not allowed when skipTLSVerify is not set or false"), is sent to as
 * kubectl sends to it (a `kubectl proxy` kubeconfig has no such flag), through a proxy as without
 * one: client-node is told the flag is set where it makes the request's dispatcher or agent
 * (plainHttpAsSent), and nothing else. The TLS options it was given are kept (only an http://
 * request reaches that check, which has no TLS), so a redirect to an https:// host has its
 * certificate checked as before; no credentials are sent to an http:// server (plain-http.ts).
 * @internal
 */
export function withEnvironmentProxy(kc: KubeConfig, env: Environment = process.env): KubeConfig {
  if (typeof kc.getCurrentCluster !== 'function') return kc; // not a KubeConfig: refused by the caller
  const proxyFor =
    firstSet(env, 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy') === undefined ? undefined : environmentProxies(env);
  const wrapped = Object.create(kc) as KubeConfig;
  wrapped.getCurrentCluster = () => {
    const cluster = kc.getCurrentCluster();
    if (cluster === null || typeof cluster.server !== 'string') return cluster;
    const own = typeof cluster.proxyUrl === 'string' && cluster.proxyUrl !== '';
    let source: { url: string; field: string };
    if (own) {
      source = { url: cluster.proxyUrl!, field: `proxy-url of cluster ${quoteText(cluster.name)} in the kubeconfig` };
    } else {
      const proxy = proxyFor?.(cluster.server);
      if (proxy === undefined) return cluster;
      source = { url: proxy.url, field: `environment variable ${proxy.variable}` };
    }
    // Go's net/http hands the server's name to a SOCKS5 proxy to resolve, for socks5:// as for
    // socks5h:// (transport.go dials through socksNewDialer with the host:port); client-node 1.x
    // resolves it itself for socks5://, where only the proxy may know it. The scheme is
    // lowercased first, as Go's url.Parse does: client-node tells a SOCKS proxy by "socks" in
    // lowercase and would send through "SOCKS5H://" as if it were an HTTP proxy.
    const scheme = GO_SCHEME.exec(source.url)?.[0] ?? '';
    const proxyUrl = (scheme.toLowerCase() + source.url.slice(scheme.length)).replace(/^socks5:/, 'socks5h:');
    const proxied: Cluster = { ...cluster, proxyUrl };
    proxySources.set(proxied, source);
    return proxied;
  };
  const sendsWith = kc as unknown as SendsWith;
  const proxied = wrapped as unknown as SendsWith;
  // the proxy a request to `cluster` goes through (undefined: none); one of a scheme no request
  // goes through is refused here, before anything is sent
  const usableProxy = (cluster: Cluster | null): URL | undefined => {
    const source = cluster === null ? undefined : proxySources.get(cluster);
    if (source === undefined) return undefined;
    const proxy = parsed(cluster!.proxyUrl!);
    // one without a scheme is said so whether or not it parses: Go parses "proxy.corp" (scheme
    // "") and kubectl refuses its scheme, not its parse
    if (proxy === undefined || !PROXY_SCHEMES.has(proxy.protocol)) {
      throw new UnusableProxyError(source.field, proxy === undefined && GO_SCHEME.test(cluster!.proxyUrl!) ? 'notURL' : 'scheme');
    }
    // the user and password are sent decoded (proxy-dispatch.ts, and client-node 1.x's agents)
    if (!decodes(proxy.username) || !decodes(proxy.password)) throw new UnusableProxyError(source.field, 'badEscape');
    return proxy;
  };
  if (typeof sendsWith.createDispatcher === 'function') {
    // client-node 2.x: the undici dispatcher of each request
    const clientNodeDispatcher = sendsWith.createDispatcher;
    proxied.createDispatcher = function (this: unknown, cluster, agentOptions) {
      const proxy = usableProxy(cluster);
      return (
        (proxy && proxyDispatcher(cluster!.server, proxy, agentOptions)) ??
        clientNodeDispatcher.call(this, plainHttpAsSent(cluster), agentOptions)
      );
    };
  }
  if (typeof sendsWith.createAgent === 'function') {
    // client-node 1.x: the http.Agent of each request, made by client-node itself
    const clientNodeAgent = sendsWith.createAgent;
    proxied.createAgent = function (this: unknown, cluster, agentOptions) {
      const proxy = usableProxy(cluster);
      const agent = clientNodeAgent.call(this, plainHttpAsSent(cluster), agentOptions);
      if (proxy?.protocol === 'http:' || proxy?.protocol === 'https:')
        return markingProxyFailures(proxyByAddress(tlsToProxyAsKubectl(agent)));
      return proxy === undefined ? agent : markingSocksFailures(socksProxyByAddress(agent));
    };
  }
  return wrapped;
}

/**
 * `cluster` as client-node is given it to make a request's dispatcher or agent: an http:// server
 * (the scheme in lower case, as client-node compares it) with insecure-skip-tls-verify set, which
 * is all client-node asks of it before sending to it; any other cluster as it is. Only whether to
 * send is read from the flag there: the TLS options (agentOptions) were made from the cluster as
 * the kubeconfig gives it.
 */
function plainHttpAsSent(cluster: Cluster | null): Cluster | null {
  if (cluster === null || cluster.skipTLSVerify === true || !isPlainHttp(cluster.server)) return cluster;
  return { ...cluster, skipTLSVerify: true };
}

/** How client-node makes what a request is sent with: an undici Dispatcher (2.x), an http.Agent (1.x). */
interface SendsWith {
  createDispatcher?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;
  createAgent?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;
}

/**
 * The proxy requests to `cluster` go through, and where it is set, for a message: the cluster's
 * proxy-url (`proxy-url of cluster "prod" in the kubeconfig`), else the environment's
 * (`environment variable HTTPS_PROXY`); undefined when there is none.
 * @internal
 */
export function proxyOf(cluster: Cluster | null, env: Environment = process.env): { url: string; field: string } | undefined {
  if (cluster === null) return undefined;
  const given = proxySources.get(cluster);
  if (given !== undefined) return given;
  if (typeof cluster.proxyUrl === 'string' && cluster.proxyUrl !== '') {
    return { url: cluster.proxyUrl, field: `proxy-url of cluster ${quoteText(cluster.name)} in the kubeconfig` };
  }
  const proxy = typeof cluster.server === 'string' ? proxyFromEnvironment(cluster.server, env) : undefined;
  return proxy === undefined ? undefined : { url: proxy.url, field: `environment variable ${proxy.variable}` };
}
