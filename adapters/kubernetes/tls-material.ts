// What is wrong with a kubeconfig's TLS material or proxy, for a request that failed on it.
//
// Node (OpenSSL, as undici loads the material for each connection) and undici report a
// certificate-authority-data that holds no certificate, a client key or certificate that does
// not parse, a key that does not match its certificate, and a proxy-url nothing answers at as the
// request's own failure — "fetch failed: error:1E08010C:DECODER routines::unsupported", "connect
// ECONNREFUSED 127.0.0.1:1" — which reads as the API server out of reach. kubectl (client-go)
// refuses the first ones before sending anything, naming them ("unable to load root
// certificates: unable to parse bytes as PEM block", "tls: private key does not match public
// key"), and says "proxyconnect" for the last. Here a failure that bears the mark of one (an
// OpenSSL or certificate error code; a connection failure while a proxy is set: every connection
// then goes to the proxy first) has the kubeconfig's material read again with node:crypto, as
// client-node reads it (a file before the data), to name the field that is wrong. So are a
// certificate or key file client-node could not read (fs's own ENOENT, naming only the path), a
// proxy of a scheme requests are not sent through (proxy-environment.ts), a connection to the
// proxy that failed otherwise (an https:// proxy that answers in plain HTTP: proxy-dispatch.ts
// marks it), a proxy that refused to open a tunnel or asked for credentials (407), and a SOCKS
// proxy that failed (the socks library's SocksClientError, which keeps the socket's code only in
// its message). So is an API server's certificate the TLS layer did not trust — "fetch failed:
// self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)" says neither why nor what to do, where
// kubectl says "x509: certificate signed by unknown authority" —: why (self-signed, an unknown
// issuer, expired, another name), and the field of the kubeconfig to set (certificate-authority,
// tls-server-name). Like every failure on the kubeconfig's TLS material, it is retried: the
// certificate-authority file is read again for each connection, and the server's certificate
// may be replaced meanwhile.
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync, type Stats, statSync } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { notRegularFile } from '../bounded-read.ts';
import { fsFailure } from '../fs-failure.ts';
import { underDeno } from '../peer-install.ts';
import { quoteText, showUnseen } from '../quote.ts';
import { cutMessage } from './bodies.ts';
import { causeChain, type ErrorLink, messages, redirectedTo } from './errors.ts';
import { checkServerIdentityAsKubectl } from './kubectl-name-check.ts';
import {
  failedAtProxy,
  ProxyAuthenticationRequired,
  SOCKS_CONNECT_TIMEOUT_MS,
  socksFailureCode,
  withoutProxyWords,
} from './proxy-dispatch.ts';
import { proxyOf, UnusableProxyError } from './proxy-environment.ts';

/**
 * The socks library's SocksClientError (`new SocksClientError(message, options)`, options naming
 * the proxy and the destination), told by that shape as well as by its class name: an
 * application bundle that minifies its dependencies renames the class, and the socket's code
 * would then go unsaid.
 */
function isSocksClientError(e: ErrorLink): boolean {
  if (e.constructor?.name === 'SocksClientError') return true;
  const options = (e as { options?: unknown }).options;
  if (!(e instanceof Error) || typeof options !== 'object' || options === null) return false;
  const { proxy } = options as { proxy?: unknown };
  return typeof proxy === 'object' && proxy !== null && 'destination' in options;
}

/** The socks library's words for a connection not made in its timeout (SOCKS_CONNECT_TIMEOUT_MS here). */
const SOCKS_TIMED_OUT = 'Proxy connection timed out';

/**
 * Whether `err` is a connection through a SOCKS proxy not made in SOCKS_CONNECT_TIMEOUT_MS: the
 * socks library's error (client-node 2.x), or node-fetch's, which keeps its words only, at the end
 * of its own ("request to … failed, reason: Proxy connection timed out": 1.x).
 */
function socksTimedOut(err: unknown): boolean {
  return causeChain(err).some((e) =>
    isSocksClientError(e)
      ? e.message === SOCKS_TIMED_OUT
      : e.name === 'FetchError' && String(e.message).endsWith(`, reason: ${SOCKS_TIMED_OUT}`),
  );
}

/**
 * What is wrong with `kc`'s TLS material or proxy when `err` (a request's failure, without an
 * HTTP status) comes from it: e.g. `the client-key-data of user "dev" in the kubeconfig is not a
 * private key (PEM)`, `cannot reach the proxy at http://10.0.0.9:3128 (proxy-url of cluster
 * "prod"): connection refused (ECONNREFUSED)`. Undefined when the failure is none of those.
 * @internal
 */
export function transportProblem(kc: KubeConfig, err: unknown): string | undefined {
  const unusable = causeChain(err).find((e) => e instanceof UnusableClientCertificate);
  if (unusable !== undefined) return String(unusable.message);
  const codes = errorCodes(err);
  let cluster: Cluster | null;
  let user: User | null;
  try {
    cluster = kc.getCurrentCluster();
    user = kc.getCurrentUser();
  } catch {
    return undefined;
  }
  const unread = unreadFile(err, cluster, user);
  if (unread !== undefined) return unread;
  // the cluster's proxy-url, else the environment's HTTPS_PROXY / HTTP_PROXY (proxy-environment.ts)
  const via = proxyOf(cluster);
  if (via !== undefined) {
    const { url: proxy, field } = via;
    // where the proxy was asked to connect: the API server, or the host a redirect led to
    const destination = redirectedTo(err) ?? 'the API server';
    // the value is never shown whole: it may hold credentials
    const unusable = causeChain(err).find((e) => e instanceof UnusableProxyError);
    if (unusable !== undefined) return String(unusable.message);
    if (causeChain(err).some((e) => e instanceof ProxyAuthenticationRequired)) {
      return (
        `the proxy at ${shownProxy(proxy)} (${field}) refused the request: it answered 407 Proxy Authentication Required ` +
        '(a proxy takes its user and password in its URL, as in http://user:password@proxy.example:3128)'
      );
    }
    // the connection to an http:// or https:// proxy (proxy-dispatch.ts)
    const atProxy = causeChain(err).find(failedAtProxy);
    const code = typeof atProxy?.code === 'string' ? atProxy.code : undefined;
    if (atProxy !== undefined && code === 'ERR_SSL_WRONG_VERSION_NUMBER') {
      return `the proxy at ${shownProxy(proxy)} (${field}) did not answer in TLS (${code}): a plain http:// proxy on that port?`;
    }
    if (atProxy !== undefined && code === 'ERR_TLS_CERT_ALTNAME_INVALID') return misnamedProxy(proxy, field, atProxy);
    if (atProxy !== undefined && code !== undefined && Object.hasOwn(UNTRUSTED_ISSUER, code)) {
      // client-node 1.x makes no dispatchers: its connections are node:https's
      const nodeHttps = typeof (kc as unknown as SendsWith).createDispatcher !== 'function';
      return untrustedProxy(`${shownProxy(proxy)} (${field})`, code, nodeHttps);
    }
    if (atProxy !== undefined && (code === undefined || !Object.hasOwn(CONNECT_FAILURES, code))) {
      return `the connection to the proxy at ${shownProxy(proxy)} (${field}) failed: ${messages(atProxy)}`;
    }
    // the proxy answered CONNECT with anything but 200: undici's ProxyAgent says it (client-node
    // 2.x), or hpagent's agent inside node-fetch's message (1.x)
    const tunnel = causeChain(err)
      .map((e) => (TUNNEL_REFUSED.exec(String(e.message)) ?? TUNNEL_REFUSED_1X.exec(String(e.message)))?.[1])
      .find((status) => status !== undefined);
    if (tunnel !== undefined) {
      return `the proxy at ${shownProxy(proxy)} (${field}) did not open a tunnel to ${destination}: it answered CONNECT with HTTP ${tunnel}`;
    }
    const failed = codes.find((code) => Object.hasOwn(CONNECT_FAILURES, code));
    if (failed !== undefined) return `cannot reach the proxy at ${shownProxy(proxy)} (${field}): ${CONNECT_FAILURES[failed]} (${failed})`;
    const login = socksLoginRefused(err, proxy);
    if (login !== undefined) return `the SOCKS5 proxy at ${shownProxy(proxy)} (${field}) ${login}`;
    if (socksTimedOut(err)) {
      return (
        `the proxy at ${shownProxy(proxy)} (${field}) did not connect to ${destination} within ${SOCKS_CONNECT_TIMEOUT_MS / 1000} s: ` +
        `it did not answer, or did not reach ${destination}, in that time`
      );
    }
    const socks = causeChain(err).find(isSocksClientError);
    if (socks !== undefined) {
      const code = socksFailureCode(String(socks.message));
      if (code !== undefined && Object.hasOwn(CONNECT_FAILURES, code)) {
        return `cannot reach the proxy at ${shownProxy(proxy)} (${field}): ${CONNECT_FAILURES[code]} (${code})`;
      }
      return `the proxy at ${shownProxy(proxy)} (${field}) did not connect to ${destination}: ${quoteText(String(socks.message))}`;
    }
    // client-node 1.x: node-fetch keeps only the socks library's message, inside its own (a
    // refused connection; refused credentials are said above)
    const refusal = causeChain(err)
      .map((e) => /Socks[45] proxy rejected connection - \w+/.exec(String(e.message))?.[0])
      .find((text) => text !== undefined);
    if (refusal !== undefined)
      return `the proxy at ${shownProxy(proxy)} (${field}) did not connect to ${destination}: ${quoteText(refusal)}`;
  }
  if (!codes.some((code) => TLS_CODE.test(code))) return undefined;
  if (cluster) {
    const ca = material(cluster.caFile, cluster.caData, 'certificate-authority');
    if (ca !== undefined && !holdsCertificate(ca.bytes)) {
      return `the ${ca.field} of cluster ${quoteText(cluster.name)} in the kubeconfig holds no certificate (PEM, -----BEGIN CERTIFICATE-----)`;
    }
    // the certificate of a host a redirect led to is that host's: the cluster's CA says nothing of it
    const untrusted = redirectedTo(err) === undefined ? untrustedCertificate(err, cluster) : undefined;
    if (untrusted !== undefined) return untrusted;
  }
  return user ? clientCertificateProblem(user) : undefined;
}

/**
 * The socks library's words for a SOCKS5 proxy that refused the user name and password it was
 * given (RFC 1929), and for one that took none of the ways to log in offered (RFC 1928: no login,
 * and a user name and password when the proxy URL holds them, as Go offers them).
 */
const SOCKS_LOGIN_FAILED = 'Socks5 Authentication failed';
const SOCKS_NO_ACCEPTED_LOGIN = 'Received invalid Socks5 initial handshake (no accepted authentication type)';

/**
 * What a SOCKS5 proxy (its URL, `proxy`) refused of the login, as the end of a sentence "the
 * SOCKS5 proxy at … (…) …", when `err` is that refusal, with client-node 2.x (the socks library's
 * error) or 1.x (its words inside node-fetch's): what the proxy URL should hold instead. Undefined
 * for any other failure.
 */
function socksLoginRefused(err: unknown, proxy: string): string | undefined {
  const said = causeChain(err).map((e) => String(e.message));
  const example = 'as in socks5://user:password@proxy.example:1080';
  if (said.some((text) => text.includes(SOCKS_LOGIN_FAILED))) {
    return `refused the user name and password in the proxy URL (RFC 1929): set the ones it takes there, ${example}`;
  }
  if (!said.some((text) => text.includes(SOCKS_NO_ACCEPTED_LOGIN))) return undefined;
  const url = parsed(() => new URL(proxy));
  if (url !== undefined && url.username === '' && url.password === '') {
    return `takes no connection without a login, and the proxy URL holds no user name: set one and its password there, ${example}`;
  }
  return (
    'takes neither a connection without a login nor the user name and password in the proxy URL (RFC 1929): it asks for ' +
    'another way to log in, which kubectl does not offer either'
  );
}

/**
 * Why the API server's (or an https:// proxy's) certificate failed the TLS layer's check, by the
 * code of the check (OpenSSL's names, which Node and Deno both give), as the end of a sentence
 * "the API server's certificate is not trusted: …": each says it was checked against no CA but the
 * runtime's when the cluster has no certificate-authority (kubectl fails alike, "x509: certificate
 * signed by unknown authority").
 */
const UNTRUSTED_ISSUER: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'it is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its chain ends in a self-signed certificate authority that is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its issuer is not a trusted certificate authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its chain leads to a certificate authority that is not trusted',
  // Node, a CA file of the intermediate alone (Deno's TLS trusts that chain)
  UNABLE_TO_GET_ISSUER_CERT: 'the certificate authority its chain leads to was found, but not the one that issued that',
};

/**
 * The codes of UNTRUSTED_ISSUER a right certificate-authority gives too, when the server leaves
 * out intermediate certificates between its own and the CA: all of them (no issuer found at all),
 * or some (the chain sent leads to a CA that is not trusted: the issuer of one it left out). What
 * it does not send and what to add, as the ends of "the server does not send …" and "add … to it".
 * A chain that ends in a self-signed CA (SELF_SIGNED_CERT_IN_CHAIN) is whole.
 */
const MISSING_INTERMEDIATES: Record<string, { notSent: string; add: string }> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { notSent: 'the intermediate certificates', add: 'the intermediate certificates' },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { notSent: 'all the intermediate certificates', add: 'the missing intermediate certificates' },
};

/** A certificate out of its dates, as the end of a sentence "the API server's certificate …": no CA makes it valid. */
const OUT_OF_DATES: Record<string, string> = {
  CERT_HAS_EXPIRED:
    'has expired (CERT_HAS_EXPIRED), or the clock here is wrong: it must be renewed on the server (no kubeconfig setting makes it valid)',
  CERT_NOT_YET_VALID: 'is not valid yet (CERT_NOT_YET_VALID): the clock here, or that of the machine that issued it, is wrong',
};

/**
 * What is said of a server certificate without a subject alternative name, which no setting makes
 * right: kubectl (Go's crypto/x509, since Go 1.15) checks the subject alternative names only, and
 * refuses it for any host ("x509: certificate relies on legacy Common Name field, use SANs
 * instead"); so does checkServerIdentityAsKubectl, where Node's tls.checkServerIdentity (Deno's
 * too) would take it for a host name equal to the common name of its subject.
 */
const NO_SUBJECT_ALT_NAME =
  'it has no subject alternative name, the only names kubectl checks a host against (never the common name of its subject): ' +
  'kubectl refuses it whatever the server and tls-server-name; it must be issued again, with the host name or address of the ' +
  'server as a subject alternative name';

/** The fields of Node's ERR_TLS_CERT_ALTNAME_INVALID (tls.checkServerIdentity) read here; Deno's has them too. */
interface AltnameMismatch {
  host?: unknown;
  cert?: { subjectaltname?: unknown };
}

/**
 * Why the TLS layer did not trust the API server's certificate, and what to set in the kubeconfig,
 * when `err` failed on that check: its issuer (UNTRUSTED_ISSUER: set the cluster's
 * certificate-authority to the cluster's CA; or, MISSING_INTERMEDIATES, the intermediate
 * certificates the server may leave out, to add to it or to have the server send), its dates
 * (OUT_OF_DATES: the server's to renew, or the clock), or its names (ERR_TLS_CERT_ALTNAME_INVALID:
 * the host asked for and the names it holds, and the cluster's tls-server-name to set). Undefined
 * for any other failure. insecure-skip-tls-verify is never suggested: it trusts whoever answers.
 */
function untrustedCertificate(err: unknown, cluster: Cluster): string | undefined {
  const name = quoteText(cluster.name);
  for (const e of causeChain(err)) {
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (code === undefined) continue;
    if (Object.hasOwn(OUT_OF_DATES, code)) return `the API server's certificate ${OUT_OF_DATES[code]}`;
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      const { host, cert } = e as AltnameMismatch;
      const words = typeof host === 'string' ? undefined : ALTNAME_WORDS.exec(String(e.message));
      const hostAsked = typeof host === 'string' ? host : words?.[1];
      const asked = hostAsked ? `${showUnseen(hostAsked)} ` : '';
      const names = typeof cert?.subjectaltname === 'string' ? cert.subjectaltname : (words?.[2] ?? '');
      const against = cluster.tlsServerName ? 'the tls-server-name' : 'the host of the server URL';
      const said = `the API server's certificate is not issued for ${asked}(${code}), ${against} of cluster ${name} in the kubeconfig`;
      if (names === '') return `${said}: ${NO_SUBJECT_ALT_NAME}`;
      // the server's own text: escaped, and cut short (a certificate may name hundreds of hosts)
      const holds = `it names ${showUnseen(cutMessage(names))}`;
      // a tls-server-name is a host name (TLS's SNI carries no address): it helps only a certificate that names one
      const namesHost = /(?:^|, )DNS:/.test(names);
      // URIs or e-mail addresses only (a SPIFFE certificate): kubectl checks a host against neither
      if (!namesHost && !/(?:^|, )IP Address:/.test(names)) {
        return (
          `${said}: ${holds}, neither a host name nor an address, the only names kubectl checks a host against: ` +
          'it must be issued again, with the host name or address of the server as a subject alternative name'
        );
      }
      if (cluster.tlsServerName) {
        if (namesHost) return `${said}: ${holds}; set the tls-server-name to a name it holds`;
        // addresses only: no tls-server-name can match them, the server URL's host can
        return (
          `${said}: ${holds}, no host name (a tls-server-name is one); ` +
          "remove the tls-server-name, so that it is checked against the server URL's host, and set the server to an address it names"
        );
      }
      const fix = namesHost
        ? "set the cluster's tls-server-name to a name it holds, or its server to an address it names"
        : 'set its server to an address it names';
      return `${said}: ${holds}; ${fix}`;
    }
    if (!Object.hasOwn(UNTRUSTED_ISSUER, code)) continue;
    const why = `the API server's certificate is not trusted: ${UNTRUSTED_ISSUER[code]} (${code})`;
    const orDates = denoDatesHint(code);
    const field = cluster.caFile ? 'certificate-authority' : cluster.caData ? 'certificate-authority-data' : undefined;
    if (field === undefined) {
      return (
        `${why}, and cluster ${name} in the kubeconfig has no certificate-authority to check it with (only the runtime's trusted CAs were): ` +
        `set its certificate-authority (a file) or certificate-authority-data (the file's content, base64) to the cluster's CA certificate${orDates}`
      );
    }
    // a right CA looks alike when the server leaves out intermediate certificates
    const missing = Object.hasOwn(MISSING_INTERMEDIATES, code) ? MISSING_INTERMEDIATES[code] : undefined;
    const fix =
      missing === undefined
        ? ": set it to the cluster's CA certificate"
        : `, or the server does not send ${missing.notSent} between the two: set it to the cluster's CA certificate; ` +
          `if it is that already, add ${missing.add} to it, or have the server send them after its own`;
    if (code === 'UNABLE_TO_GET_ISSUER_CERT') {
      return `${why}, and the ${field} of cluster ${name} in the kubeconfig holds an intermediate certificate authority without the root above it: add the cluster's root CA certificate to it`;
    }
    return `${why}, and the ${field} of cluster ${name} in the kubeconfig is not the certificate authority that issued it${fix}${orDates}`;
  }
  return undefined;
}

/**
 * Deno's TLS says a certificate out of its dates as one whose issuer is unknown, with a CA set or
 * not (one of a CA the runtime trusts too): the words to add to what is said of that code, under
 * Deno; empty otherwise.
 */
function denoDatesHint(code: string): string {
  return underDeno() && code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'
    ? ' (under Deno a certificate that has expired, or is not valid yet, is said in these words too: check its dates)'
    : '';
}

/**
 * Why the certificate of an https:// proxy (`proxy`: its URL and where it is set) failed the TLS
 * layer's check (`code`, one of UNTRUSTED_ISSUER's), and where to add the CA that issued it. The
 * connection to the proxy (proxy-dispatch.ts) is checked against the runtime's trusted CAs alone,
 * never with the cluster's certificate-authority, which kubectl applies to it too. Node adds to
 * them the PEM file NODE_EXTRA_CA_CERTS names, read as it starts; Deno the file given with --cert,
 * or named by DENO_CERT or NODE_EXTRA_CA_CERTS, but to the connections of node:https, which
 * client-node 1.x (`nodeHttps`) makes, that of NODE_EXTRA_CA_CERTS only. Deno does not take a
 * self-signed certificate marked as a CA (basicConstraints CA:TRUE) as its own authority, however
 * it is given.
 */
function untrustedProxy(proxy: string, code: string, nodeHttps: boolean): string {
  const self = code === 'DEPTH_ZERO_SELF_SIGNED_CERT';
  const ca = `the certificate of the CA that issued it${self ? ' (for a self-signed certificate, the certificate itself)' : ''}`;
  const selfSignedUnderDeno = self
    ? '; Deno takes a self-signed certificate as its own CA only when it is not marked a CA (basicConstraints CA:FALSE)'
    : '';
  const add = !underDeno()
    ? `add ${ca} to a PEM file named by the environment variable NODE_EXTRA_CA_CERTS, which Node reads as it starts`
    : nodeHttps
      ? `add ${ca} to a PEM file named by the environment variable NODE_EXTRA_CA_CERTS, which Deno reads as it starts ` +
        `(with client-node 1.x, whose connections Deno makes as Node's, neither --cert nor DENO_CERT is used for them)${selfSignedUnderDeno}`
      : `pass ${ca} to Deno with --cert <file>, or name that PEM file in DENO_CERT or NODE_EXTRA_CA_CERTS${selfSignedUnderDeno}`;
  return (
    `the certificate of the proxy at ${proxy} is not trusted: ${UNTRUSTED_ISSUER[code]} (${code}); a proxy's certificate is checked ` +
    `against the runtime's trusted CAs only, not with the cluster's certificate-authority, which kubectl checks it with: ${add}${denoDatesHint(code)}`
  );
}

/**
 * Why the names in an https:// proxy's certificate failed the check of its connection
 * (checkServerIdentityAsKubectl, against the host of the proxy URL), said of `proxy` (its URL)
 * set in `field`, from `e`, the failure: its names (the certificate's, or for client-node 1.x,
 * whose failure keeps its words alone, read back from its message), and what to change. A proxy
 * is reached by the host of its URL only: no tls-server-name applies to it.
 */
function misnamedProxy(proxy: string, field: string, e: ErrorLink): string {
  const url = parsed(() => new URL(proxy));
  const host = url === undefined ? '' : url.hostname.replace(/^\[|\]$/g, '');
  const { cert } = e as AltnameMismatch;
  const words = ALTNAME_WORDS.exec(withoutProxyWords(String(e.message)));
  const names = typeof cert?.subjectaltname === 'string' ? cert.subjectaltname : (words?.[2] ?? '');
  const said =
    `the certificate of the proxy at ${shownProxy(proxy)} (${field}) is not issued for ${showUnseen(host)} ` +
    '(ERR_TLS_CERT_ALTNAME_INVALID)';
  if (names === '') {
    return (
      `${said}: it has no subject alternative name, the only names kubectl checks a host against (never the common name of ` +
      "its subject): kubectl refuses it too; it must be issued again, with the proxy's host name or address as a subject " +
      'alternative name'
    );
  }
  return (
    `${said}: it names ${showUnseen(cutMessage(names))} (a host name is checked against its DNS names, an address against ` +
    'its IP addresses, as kubectl checks them): name the proxy in its URL by one of those, or have its certificate issued ' +
    'again for the host the URL names'
  );
}

/**
 * What is wrong with a kubeconfig user's client certificate and key, as the TLS layer would find
 * it: a certificate or key that does not parse, or a key that is not the certificate's (e.g. `the
 * client-certificate-data of user "dev" in the kubeconfig is not a certificate (PEM)`); undefined
 * when they are fine, absent, or a file cannot be read now. client-go refuses such a pair as its
 * TLS transport is built (tls.X509KeyPair), for an https:// server. Over https:// a request fails
 * on it, and transportProblem says this; for an http:// server, where client-node fails every
 * request on it all the same, the library and the command line refuse it before any request
 * (user-checks.ts plainHttpClientCertificate).
 * @internal
 */
export function clientCertificateProblem(user: User): string | undefined {
  const cert = material(user.certFile, user.certData, 'client-certificate');
  const key = material(user.keyFile, user.keyData, 'client-key');
  return pairProblem(cert, key, `user ${quoteText(user.name)} in the kubeconfig`);
}

/**
 * A client certificate or key that does not parse, or a key that is not the certificate's, found
 * as a connection was about to be made with it (withClientCertificateCheck); its message says
 * which, naming the field (clientCertificateProblem's words).
 * @internal
 */
export class UnusableClientCertificate extends Error {
  override name = 'UnusableClientCertificate';
}

/** How client-node 2.x makes the dispatcher of a request (absent in 1.x, which sends through an http.Agent). */
interface MakesDispatchers {
  createDispatcher?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;
}

/**
 * `kc` refusing to make a connection with a client certificate or key that does not parse, or a
 * key that is not the certificate's (UnusableClientCertificate), whatever the server's scheme and
 * the runtime, as client-go refuses such a pair (tls.X509KeyPair) before sending: Node's TLS
 * layer fails such a request over https://, but Deno's connects without the client certificate,
 * and over http:// none is read, so the request went out without credentials. The bytes checked
 * are those the connection would be made with (the kubeconfig's, read again for each request, or
 * an exec plugin's), so a file rewritten later is checked too. `kc` itself when it makes no
 * dispatchers (client-node 1.x); reused-connections.ts asks only for settings it has not seen.
 * @internal
 */
export function withClientCertificateCheck(kc: KubeConfig): KubeConfig {
  const make = (kc as unknown as MakesDispatchers).createDispatcher;
  if (typeof make !== 'function') return kc;
  const checking = Object.create(kc) as KubeConfig;
  (checking as unknown as MakesDispatchers).createDispatcher = function (this: unknown, cluster, agentOptions) {
    const { cert: certOption, key: keyOption } = agentOptions;
    const bytes = (value: unknown) =>
      value instanceof Uint8Array ? Buffer.from(value) : typeof value === 'string' ? Buffer.from(value) : undefined;
    const certBytes = bytes(certOption);
    const keyBytes = bytes(keyOption);
    if (certBytes !== undefined || keyBytes !== undefined) {
      const user = kc.getCurrentUser();
      // the kubeconfig's fields when it has them, else the exec plugin's ExecCredential
      const fromKubeconfig = user !== null && Boolean(user.certFile || user.certData || user.keyFile || user.keyData);
      const field = (file: string | undefined, name: string, plugin: string) => (fromKubeconfig ? (file ? name : `${name}-data`) : plugin);
      const problem = pairProblem(
        certBytes === undefined
          ? undefined
          : { bytes: certBytes, field: field(user?.certFile, 'client-certificate', 'clientCertificateData') },
        keyBytes === undefined ? undefined : { bytes: keyBytes, field: field(user?.keyFile, 'client-key', 'clientKeyData') },
        fromKubeconfig
          ? `user ${quoteText(user!.name)} in the kubeconfig`
          : `the ExecCredential of the exec plugin of user ${quoteText(user?.name ?? '')}`,
      );
      if (problem !== undefined) throw new UnusableClientCertificate(problem);
    }
    return make.call(this, cluster, agentOptions);
  };
  return checking;
}

/**
 * The host and the names of checkServerIdentityAsKubectl's error, read from its message: client-node
 * 1.x's failure (node-fetch's FetchError) keeps its message and code, not its `host` and `cert`.
 */
const ALTNAME_WORDS = /Hostname\/IP does not match certificate's altnames: Host: (.*?)\. is not in the cert's altnames: ([\s\S]*)$/;

/** What client-node makes a request's connections with: an undici Dispatcher (2.x) and its options, an http.Agent (1.x). */
interface SendsWith {
  createDispatcher?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;
  createDispatcherOptions?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => DispatcherOptions;
  createAgent?: (cluster: Cluster | null, agentOptions: Record<string, unknown>) => unknown;
}

/** client-node 2.x's createDispatcherOptions: what kind of dispatcher to make, with which TLS options. */
type DispatcherOptions =
  | { type: 'agent'; connect: Record<string, unknown> }
  | { type: 'proxy' | 'socks'; requestTls: Record<string, unknown>; [field: string]: unknown }
  | { type: 'none' };

/**
 * `kc` checking the names in the API server's certificate as kubectl checks them
 * (checkServerIdentityAsKubectl) on each TLS connection it makes to it: the TLS options client-node
 * makes a request's connections with (agentOptions) carry the check, for client-node 1.x's
 * http.Agent (createAgent) and 2.x's dispatcher (createDispatcher, and proxy-dispatch.ts for one
 * through a proxy). client-node 2.x keeps the options it knows only (createDispatcherOptions): the
 * check is put back there, and a request it would send with no options of its own, through
 * undici's global dispatcher, gets a dispatcher holding it. With insecure-skip-tls-verify nothing
 * is checked, names neither. `kc` itself when it makes no connections (not client-node's).
 * @internal
 */
export function withKubectlNameCheck(kc: KubeConfig): KubeConfig {
  const { createDispatcher, createDispatcherOptions, createAgent } = kc as unknown as SendsWith;
  if (typeof createDispatcher !== 'function' && typeof createAgent !== 'function') return kc;
  const checking = Object.create(kc) as KubeConfig;
  const sends = checking as unknown as SendsWith;
  const withCheck = (agentOptions: Record<string, unknown>) => ({ ...agentOptions, checkServerIdentity: checkServerIdentityAsKubectl });
  if (typeof createDispatcher === 'function') {
    sends.createDispatcher = function (this: unknown, cluster, agentOptions) {
      return createDispatcher.call(this, cluster, withCheck(agentOptions));
    };
  }
  if (typeof createDispatcherOptions === 'function') {
    sends.createDispatcherOptions = function (this: unknown, cluster, agentOptions) {
      const options = createDispatcherOptions.call(this, cluster, agentOptions);
      const { checkServerIdentity } = agentOptions as { checkServerIdentity?: unknown };
      if (checkServerIdentity === undefined) return options;
      const check = { checkServerIdentity };
      switch (options.type) {
        case 'agent':
          return { ...options, connect: { ...options.connect, ...check } };
        case 'proxy':
        case 'socks':
          return { ...options, requestTls: { ...options.requestTls, ...check } };
        case 'none':
          // client-node's keep-alive settings for an agent of its own
          return { type: 'agent', connect: { ...check, keepAlive: true, keepAliveInitialDelay: 30_000 } };
        default:
          return options;
      }
    };
  }
  if (typeof createAgent === 'function') {
    sends.createAgent = function (this: unknown, cluster, agentOptions) {
      return checkingTheHostConnectedTo(createAgent.call(this, cluster, withCheck(agentOptions)));
    };
  }
  return checking;
}

/** An agent of agent-base's (socks-proxy-agent's, client-node 1.x's for a SOCKS proxy): it opens each connection itself. */
interface OpensItsConnections {
  connect?: (req: unknown, options: { servername?: unknown; host?: unknown; [option: string]: unknown }) => unknown;
}

/**
 * The agents checkingTheHostConnectedTo checks: one handed out again (by a KubeConfig that keeps
 * one for its requests) is not wrapped again, which would add a wrapper for each request made.
 */
const checkingHosts = new WeakSet<object>();

/**
 * `agent`, client-node 1.x's http.Agent of one request, checking the names in a server's
 * certificate against the host it connects to (the tls-server-name when there is one), when it
 * is socks-proxy-agent's: that opens TLS over the proxy's connection with neither the host nor,
 * for an address, a server name, so Node's TLS (Deno's too) checked the certificate against the
 * name "localhost", and refused that of a server named by its address. Any other agent is
 * returned as it is.
 */
function checkingTheHostConnectedTo<A>(agent: A): A {
  const opens = agent as OpensItsConnections | null;
  const connect = opens?.connect;
  if (typeof connect !== 'function' || checkingHosts.has(opens!)) return agent;
  checkingHosts.add(opens!);
  opens!.connect = function (this: unknown, req, options) {
    const name = typeof options.servername === 'string' && options.servername !== '' ? options.servername : options.host;
    if (typeof name !== 'string') return connect.call(this, req, options);
    return connect.call(this, req, {
      ...options,
      checkServerIdentity: (_: string, cert: PeerCertificate) => checkServerIdentityAsKubectl(name, cert),
    });
  };
  return agent;
}

/** What is wrong with a client certificate and key (either may be absent), said of `owner`'s fields. */
function pairProblem(
  cert: { bytes: Buffer; field: string } | undefined,
  key: { bytes: Buffer; field: string } | undefined,
  owner: string,
): string | undefined {
  const certificate = cert === undefined ? undefined : parsed(() => new X509Certificate(cert.bytes));
  if (cert !== undefined && certificate === undefined) return `the ${cert.field} of ${owner} is not a certificate (PEM)`;
  const privateKey = key === undefined ? undefined : parsed<KeyObject>(() => createPrivateKey(key.bytes));
  if (key !== undefined && privateKey === undefined) return `the ${key.field} of ${owner} is not a private key (PEM, unencrypted)`;
  if (certificate !== undefined && privateKey !== undefined && parsed(() => certificate.checkPrivateKey(privateKey)) === false) {
    return `the ${key!.field} of ${owner} does not match its ${cert!.field} (the key is not the certificate's)`;
  }
  return undefined;
}

/**
 * Why a kubeconfig cluster's TLS settings cannot be used together, as the end of a sentence naming
 * the cluster; undefined when they can. A certificate-authority (or -data) beside
 * `insecure-skip-tls-verify: true` asks for the server's certificate to be checked against that CA
 * and not checked at all: client-node connects without checking it, and kubectl refuses the
 * kubeconfig (client-go's TLSConfigFor: "specifying a root certificates file with the insecure
 * flag is not allowed"). Refused here as kubectl does, before any request.
 * @internal
 */
export function insecureWithCA(cluster: Cluster): string | undefined {
  if (cluster.skipTLSVerify !== true) return undefined;
  const field = cluster.caFile ? 'certificate-authority' : cluster.caData ? 'certificate-authority-data' : undefined;
  if (field === undefined) return undefined;
  return (
    `has a ${field} and insecure-skip-tls-verify: true, which kubectl refuses too ("specifying a root certificates file ` +
    'with the insecure flag is not allowed"): the server\'s certificate would not be checked at all; remove one of them'
  );
}

/** undici's failure of a CONNECT the proxy answered with `(status)`, not 200. */
const TUNNEL_REFUSED = /^Proxy response \((\d+)\) !== 200 when HTTP Tunneling$/;
/** The same from hpagent's agent (client-node 1.x), as node-fetch words it. */
const TUNNEL_REFUSED_1X = /^request to \S+ failed, reason: Bad response: (\d+)$/;

/** Connection failures, in a few words: with a proxy set, each one is the proxy's. */
const CONNECT_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed for now',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
};

/**
 * An error code of OpenSSL's (ERR_OSSL_…, ERR_SSL_…: Deno reports a certificate or key it cannot
 * use as ERR_SSL_UNSUPPORTED_PROTOCOL), Node's TLS layer's, or a certificate check's
 * (DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_GET_ISSUER_CERT_LOCALLY, …). A request fails with one
 * before it is sent (requests.ts).
 * @internal
 */
export const TLS_CODE = /^ERR_OSSL_|^ERR_SSL_|^ERR_TLS_|CERT|^UNABLE_TO_/;

/** The string codes of an error and its causes. */
function errorCodes(err: unknown): string[] {
  return causeChain(err).flatMap((e) => (typeof e.code === 'string' ? [e.code] : []));
}

/**
 * Why a certificate or key file the current context names cannot be one, as the end of a sentence
 * (`the certificate-authority file of cluster "c" ("/dev/zero") is a character device, not a
 * file`); undefined when each is a regular file or missing (a request's failure then names it,
 * unreadFile). client-node reads these files whole and synchronously, as the connection is made:
 * a device such as /dev/zero has no end (the read fills memory and never returns, no timeout
 * can stop it), and a named pipe nothing writes to blocks the read for ever. A path that is no
 * text (YAML reads `certificate-authority: 12` as a number) is said too, not left to fs's TypeError.
 * @internal
 */
export function tlsFileProblem(kc: KubeConfig): string | undefined {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const files: [unknown, string][] = [
    [cluster?.caFile, `certificate-authority file of cluster ${quoteText(cluster?.name ?? '')}`],
    [user?.certFile, `client-certificate file of user ${quoteText(user?.name ?? '')}`],
    [user?.keyFile, `client-key file of user ${quoteText(user?.name ?? '')}`],
  ];
  for (const [file, what] of files) {
    if (file === undefined || file === null || file === '') continue;
    if (typeof file !== 'string') return `the ${what} is ${Array.isArray(file) ? 'a list' : `a ${typeof file}`}, not the text of a path`;
    let stats: Stats;
    try {
      stats = statSync(file);
    } catch {
      continue; // missing or unreadable: the request's failure names it (unreadFile)
    }
    if (!stats.isFile()) {
      return `the ${what} (${quoteText(file)}) is ${notRegularFile(stats)}, not a file: a certificate or key is read from a regular file`;
    }
  }
  return undefined;
}

/**
 * A certificate or key file of the kubeconfig's that client-node could not read (fs's error names
 * the path, not the field): e.g. `cannot read the certificate-authority file of cluster "prod" in
 * the kubeconfig ("/home/dev/.kube/ca.crt"): no such file or directory (ENOENT)`, as kubectl names it.
 */
function unreadFile(err: unknown, cluster: Cluster | null, user: User | null): string | undefined {
  const files: [string | undefined, string][] = [
    [cluster?.caFile, `certificate-authority file of cluster ${quoteText(cluster?.name ?? '')}`],
    [user?.certFile, `client-certificate file of user ${quoteText(user?.name ?? '')}`],
    [user?.keyFile, `client-key file of user ${quoteText(user?.name ?? '')}`],
  ];
  for (const e of causeChain(err)) {
    if (typeof e.code !== 'string' || typeof e.path !== 'string' || e.path === '') continue;
    const field = files.find(([file]) => file === e.path);
    if (field === undefined) continue;
    return `cannot read the ${field[1]} in the kubeconfig (${quoteText(e.path)}): ${fsFailure(e)}`;
  }
  return undefined;
}

/**
 * The bytes client-node gives the TLS layer for a field, and the field's name as the kubeconfig
 * writes it: the file when one is named (`client-key`), else the data (`client-key-data`);
 * undefined when neither is set, or the file cannot be read now.
 */
function material(file: string | undefined, data: string | undefined, field: string): { bytes: Buffer; field: string } | undefined {
  if (file) {
    const bytes = parsed(() => readFileSync(file));
    return bytes === undefined ? undefined : { bytes, field };
  }
  return data ? { bytes: Buffer.from(data, 'base64'), field: `${field}-data` } : undefined;
}

/** Whether a CA bundle holds at least one certificate Node can read. */
function holdsCertificate(bytes: Buffer): boolean {
  const pems = bytes.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return pems.some((pem) => parsed(() => new X509Certificate(pem)) !== undefined);
}

/** What `read` returns, or undefined when it throws. */
function parsed<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** A proxy URL as messages show it: scheme, host and port, never credentials or a path. */
function shownProxy(proxy: string): string {
  const url = parsed(() => new URL(proxy));
  return url === undefined ? 'not shown' : `${url.protocol}//${url.host}`;
}
