// A kubeconfig whose TLS material or proxy is wrong: the request fails on it before anything is
// sent, and the KubernetesApiError says which field of the kubeconfig is wrong — not that the
// API server could not be reached.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { KubeconfigCredentialError, KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { transportProblem } from '../adapters/kubernetes/tls-material.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { cli } from './cli-helpers.ts';
import { closedPort, settledGet } from './k8s/helpers.ts';
import { base64, CLIENT_CERT, CLIENT_KEY, OTHER_KEY, SERVER_CERT, startTlsServer } from './k8s/tls.ts';

describe('a kubeconfig whose TLS material or proxy is wrong', () => {
  let server: { url: string; close: () => Promise<void> };
  beforeEach(async () => {
    server = await startTlsServer();
  });
  afterEach(async () => {
    await server.close();
  });

  /** What a get through the server with this cluster and user material settles with. */
  function getError(
    cluster: { caData?: string; caFile?: string; proxyUrl?: string },
    user: { certData?: string; keyData?: string },
  ): Promise<unknown> {
    return settledGet(
      { server: server.url, caData: base64(SERVER_CERT), ...cluster },
      { certData: base64(CLIENT_CERT), keyData: base64(CLIENT_KEY), ...user },
    );
  }

  // Regression: each was said as the request's own failure, e.g. "fetch failed:
  // error:1E08010C:DECODER routines::unsupported (ERR_OSSL_UNSUPPORTED) (the API server at …)",
  // or "fetch failed: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)" for a CA that holds none.
  it.each([
    [
      'certificate-authority-data that is no certificate',
      { caData: base64('not a certificate\n') },
      {},
      'the certificate-authority-data of cluster "prod" in the kubeconfig holds no certificate (PEM, -----BEGIN CERTIFICATE-----)',
    ],
    [
      'client-certificate-data that is no certificate',
      {},
      { certData: base64('not a certificate\n') },
      'the client-certificate-data of user "dev" in the kubeconfig is not a certificate (PEM)',
    ],
    [
      'client-key-data that is no key',
      {},
      { keyData: base64('not a key\n') },
      'the client-key-data of user "dev" in the kubeconfig is not a private key (PEM, unencrypted)',
    ],
    [
      'client-key-data that is not the certificate’s key',
      {},
      { keyData: base64(OTHER_KEY) },
      `the client-key-data of user "dev" in the kubeconfig does not match its client-certificate-data (the key is not the certificate's)`,
    ],
  ])('%s: said so, naming the field, not as the server out of reach', async (_what, cluster, user, said) => {
    // Regression: under Deno a key that does not parse was left out, and the request sent without
    // the client certificate
    const err = await getError(cluster, user);
    expect(err).toBeInstanceOf(KubernetesApiError);
    const e = err as KubernetesApiError;
    expect([e.message, e.code]).toEqual([
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: ${said}`,
      undefined,
    ]);
  });

  it('a proxy-url nothing listens at: said to be the proxy, with its URL (never its credentials), not the API server', async () => {
    // Regression: "fetch failed: connect ECONNREFUSED 127.0.0.1:<port> (the API server at …)".
    const port = await closedPort();
    const err = await getError({ proxyUrl: `http://user:proxy-secret@127.0.0.1:${port}` }, {});
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: cannot reach the proxy at http://127.0.0.1:${port} (proxy-url of cluster "prod" in the kubeconfig): connection refused (ECONNREFUSED)`,
    );
  });

  // Regression: a socks5:// proxy nothing listens at was said as the API server out of reach
  // ("fetch failed: connect ECONNREFUSED …"), a proxy-url without a scheme with undici's "Invalid
  // URL protocol: the URL must start with `http:` or `https:`.", and a certificate-authority file
  // that is not there with fs's "ENOENT: no such file or directory, open '…'".
  it('a socks5:// proxy-url nothing listens at, or that speaks no SOCKS; a proxy-url without a scheme; a missing certificate-authority file: each said naming the field', async () => {
    const port = await closedPort();
    const socks = await getError({ proxyUrl: `socks5://user:proxy-secret@127.0.0.1:${port}` }, {});
    expect(socks).toBeInstanceOf(KubernetesApiError);
    expect((socks as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: cannot reach the proxy at socks5://127.0.0.1:${port} (proxy-url of cluster "prod" in the kubeconfig): connection refused (ECONNREFUSED)`,
    );

    const mute = createServer((socket) => socket.destroy()); // accepts, then hangs up: no SOCKS answer
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const mutePort = (mute.address() as { port: number }).port;
    try {
      const refused = await getError({ proxyUrl: `socks5://127.0.0.1:${mutePort}` }, {});
      expect((refused as Error).message).toMatch(
        new RegExp(
          `^get ipaddresses\\.networking\\.k8s\\.io "10\\.0\\.0\\.1": the request to ${server.url.replaceAll('.', '\\.')} was not sent: the proxy at socks5://127\\.0\\.0\\.1:${mutePort} \\(proxy-url of cluster "prod" in the kubeconfig\\) did not connect to the API server: "[^"]+"$`,
        ),
      );
    } finally {
      await new Promise<void>((resolve) => mute.close(() => resolve()));
    }

    const noScheme = await getError({ proxyUrl: 'user:proxy-secret@proxy.corp:3128' }, {});
    expect((noScheme as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: the proxy-url of cluster "prod" in the kubeconfig does not start with http://, https://, socks5:// or socks5h:// (a proxy is named with its scheme, as in http://proxy.example:3128)`,
    );

    // one with no scheme that is no WHATWG URL either (Go parses it, with scheme "", and kubectl
    // refuses the scheme, not the parse: found in review) is said to lack the scheme
    for (const proxyUrl of ['proxy.corp', '10.0.0.1:3128']) {
      const bare = await getError({ proxyUrl }, {});
      expect((bare as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: the proxy-url of cluster "prod" in the kubeconfig does not start with http://, https://, socks5:// or socks5h:// (a proxy is named with its scheme, as in http://proxy.example:3128)`,
      );
    }

    // one that does not parse is said so, not as one without a scheme (it has one)
    const noURL = await getError({ proxyUrl: 'http://user:proxy-secret@[bad' }, {});
    expect((noURL as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: the proxy-url of cluster "prod" in the kubeconfig is no URL ` +
        '(it is not shown: a password may sit in it), which kubectl refuses too ("could not parse"): a proxy is named as in http://proxy.example:3128',
    );

    const missing = await getError({ caFile: '/nonexistent/ipallocator/ca.crt' }, {});
    expect((missing as Error).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${server.url} was not sent: cannot read the certificate-authority file of cluster "prod" in the kubeconfig ("/nonexistent/ipallocator/ca.crt"): no such file or directory (ENOENT)`,
    );
  });

  // Regression: a key file rewritten after the store was made (a rotation gone wrong) was read
  // for each request, left out by Deno over https://, and over http:// by every runtime: the
  // request went out without the client certificate
  // Regression: the SOCKS failure was recognised by its class name only, which an application
  // bundle that minifies node_modules renames: the socket's code then went unsaid.
  it('a SOCKS failure whose class a minifier renamed is still said as the proxy out of reach', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'prod', server: 'https://10.0.0.1:6443', proxyUrl: 'socks5://user:proxy-secret@127.0.0.1:1080' }],
      users: [{ name: 'dev' }],
      contexts: [{ name: 'prod', cluster: 'prod', user: 'dev' }],
      currentContext: 'prod',
    });
    // socks' SocksClientError, as a minifier leaves it: another class name, the same shape
    class a extends Error {
      constructor(
        message: string,
        readonly options: object,
      ) {
        super(message);
      }
    }
    const options = {
      proxy: { host: '127.0.0.1', port: 1080, type: 5 },
      destination: { host: '10.0.0.1', port: 6443 },
      command: 'connect',
    };
    const failed = new TypeError('fetch failed', { cause: new a('connect ECONNREFUSED 127.0.0.1:1080', options) });
    expect(transportProblem(kc, failed)).toBe(
      'cannot reach the proxy at socks5://127.0.0.1:1080 (proxy-url of cluster "prod" in the kubeconfig): connection refused (ECONNREFUSED)',
    );
    // an error of another library with an `options` property of another shape is not taken for it
    const other = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { options: { retries: 3 } }) });
    expect(transportProblem(kc, other)).toBeUndefined();
  });

  it('a client-key file rewritten with no key after the store was made: the next request is refused naming it, over http:// too', async () => {
    const double = await ApiServerDouble.start();
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-rotated-'));
    try {
      for (const url of [server.url, double.url]) {
        const keyFile = join(dir, 'client.key');
        writeFileSync(keyFile, CLIENT_KEY);
        const kc = new KubeConfig();
        kc.loadFromOptions({
          clusters: [{ name: 'prod', server: url, ...(url === server.url ? { caData: base64(SERVER_CERT) } : { skipTLSVerify: true }) }],
          users: [{ name: 'dev', certData: base64(CLIENT_CERT), keyFile }],
          contexts: [{ name: 'x', cluster: 'prod', user: 'dev' }],
          currentContext: 'x',
        });
        const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
        try {
          writeFileSync(keyFile, 'not a key\n');
          const err = await store.get('10.0.0.1').then(
            (value) => ({ resolved: value }),
            (e: unknown) => e,
          );
          expect(err, url).toBeInstanceOf(KubernetesApiError);
          expect((err as Error).message).toBe(
            `get ipaddresses.networking.k8s.io "10.0.0.1": the request to ${url} was not sent: the client-key of user "dev" in the kubeconfig is not a private key (PEM, unencrypted)`,
          );
        } finally {
          store.close();
        }
      }
      expect(double.requests).toEqual([]);
    } finally {
      await double.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('right material reaches the server; a CA that is a certificate, but not the server’s, is no malformed field', async () => {
    const answered = await getError({}, {});
    // the server's `{}` is no IPAddress: what matters is that it answered
    expect((answered as Error).message).toMatch(/^get ipaddresses\.networking\.k8s\.io "10\.0\.0\.1": the API server answered with /);
    // the server's certificate is what is not trusted (kubernetes-untrusted-certificate.test.ts)
    const untrusted = await getError({ caData: base64(CLIENT_CERT) }, {});
    expect((untrusted as Error).message).not.toContain('holds no certificate');
    expect((untrusted as Error).message).toContain(
      'the certificate-authority-data of cluster "prod" in the kubeconfig is not the certificate authority that issued it',
    );
  });

  it('an https:// server that answers in plain HTTP: said not to speak TLS, without OpenSSL’s internals', async () => {
    // Regression: "fetch failed: 80DC…:error:0A00010B:SSL routines:ssl3_get_record:wrong version
    // number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350: (ERR_SSL_WRONG_VERSION_NUMBER)".
    const plain = createHttpServer((_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as { port: number };
    try {
      const err = await settledGet({ server: `https://127.0.0.1:${port}`, skipTLSVerify: true }, { token: 't' });
      expect((err as Error).message).toBe(
        `get ipaddresses.networking.k8s.io "10.0.0.1": fetch failed: the server did not answer in TLS (ERR_SSL_WRONG_VERSION_NUMBER): a plain http:// server, or another protocol, on that port? (the API server at https://127.0.0.1:${port})`,
      );
    } finally {
      plain.closeAllConnections();
      plain.close();
    }
  });
});

// Regression: a cluster with a certificate-authority(-data) and insecure-skip-tls-verify: true
// was connected to without checking the server's certificate at all (client-node sets
// rejectUnauthorized: false and ignores the CA); kubectl refuses the kubeconfig.
describe('a cluster with a certificate-authority and insecure-skip-tls-verify: true', () => {
  let server: { url: string; close: () => Promise<void> };
  let folder: string;
  beforeEach(async () => {
    server = await startTlsServer();
    folder = mkdtempSync(join(tmpdir(), 'ipallocator-insecure-ca-'));
  });
  afterEach(async () => {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it.each([
    ['certificate-authority-data', (): Record<string, unknown> => ({ 'certificate-authority-data': base64(SERVER_CERT) })],
    [
      'certificate-authority',
      (): Record<string, unknown> => {
        writeFileSync(join(folder, 'ca.crt'), SERVER_CERT);
        return { 'certificate-authority': join(folder, 'ca.crt') };
      },
    ],
  ])('(%s) is refused naming the cluster, by the library and the command line, as kubectl refuses it', async (field, ca) => {
    const text = [
      'apiVersion: v1',
      'kind: Config',
      `clusters:\n- name: prod\n  cluster: ${JSON.stringify({ server: server.url, 'insecure-skip-tls-verify': true, ...ca() })}`,
      'users:\n- name: dev\n  user: {token: t}',
      'contexts:\n- name: x\n  context: {cluster: prod, user: dev}',
      'current-context: x',
      '',
    ].join('\n');
    const said =
      `the cluster "prod" has a ${field} and insecure-skip-tls-verify: true, which kubectl refuses too ("specifying a root certificates file ` +
      `with the insecure flag is not allowed"): the server's certificate would not be checked at all; remove one of them`;
    const kc = new KubeConfig();
    kc.loadFromString(text);
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(InvalidArgumentError);
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(
      `KubernetesStore: the KubeConfig's current cluster "prod" ${said.slice('the cluster "prod" '.length)}`,
    );
    const path = join(folder, 'config');
    writeFileSync(path, text);
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: ${said}\n`]);
  });

  it('either alone is taken: the CA checks the server, insecure-skip-tls-verify alone does not', async () => {
    for (const cluster of [{ caData: base64(SERVER_CERT) }, { skipTLSVerify: true }]) {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'prod', server: server.url, ...cluster }],
        users: [{ name: 'dev', token: 't' }],
        contexts: [{ name: 'x', cluster: 'prod', user: 'dev' }],
        currentContext: 'x',
      });
      new KubernetesStore(kc, { start: false }).close();
    }
  });
});

// Regression: the command line named the kubeconfig to correct (`cannot use context "x" of the
// kubeconfig "/path": …`), the library's store, loading the same file itself, did not
describe('a kubeconfig the store loads itself ($KUBECONFIG) that keeps a request from going out', () => {
  let server: { url: string; close: () => Promise<void> };
  let dir: string;
  const saved = process.env.KUBECONFIG;
  beforeEach(async () => {
    server = await startTlsServer();
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-named-'));
  });
  afterEach(async () => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  });

  /** The error a get settles with, through a store that loads `user` from a kubeconfig file of its own. */
  async function getError(user: string): Promise<{ file: string; err: unknown }> {
    const file = join(dir, 'config');
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: "${server.url}", certificate-authority-data: ${base64(SERVER_CERT)}}\n` +
        `users:\n- name: dev\n  user: ${user}\ncontexts:\n- name: x\n  context: {cluster: prod, user: dev}\ncurrent-context: x\n`,
    );
    process.env.KUBECONFIG = file;
    const store = new KubernetesStore(undefined, { start: false, requestTimeoutMs: 10_000 });
    try {
      return {
        file,
        err: await store.get('10.0.0.1').then(
          (value) => ({ resolved: value }),
          (err: unknown) => err,
        ),
      };
    } finally {
      store.close();
    }
  }

  it('TLS material that is wrong: the file and the context are named, as the command line names them', async () => {
    const { file, err } = await getError(`{client-certificate-data: ${base64(CLIENT_CERT)}, client-key-data: ${base64(OTHER_KEY)}}`);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": cannot use context "x" of the kubeconfig ${JSON.stringify(file)}: the request to ${server.url} was not sent: ` +
        `the client-key-data of user "dev" in the kubeconfig does not match its client-certificate-data (the key is not the certificate's)`,
    );
  });

  it('an exec credential plugin that cannot be run: the file and the context are named too', async () => {
    const missing = join(dir, 'no-such-plugin');
    const { file, err } = await getError(`{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: "${missing}"}}`);
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toBe(
      `get ipaddresses.networking.k8s.io "10.0.0.1": cannot use context "x" of the kubeconfig ${JSON.stringify(file)}: ` +
        "the user's credentials could not be read: its exec plugin could not be run: not found (ENOENT)",
    );
  });

  it('an exec credential plugin that gives no credential for the watch: its failure names the file and the context too', async () => {
    const double = await ApiServerDouble.start({ tls: true }); // kubectl runs no exec plugin for an http:// server
    const plugin = join(dir, 'plugin');
    // the first run's credential (the list's) has expired: the watch runs the plugin again, for nothing
    const credential = (status: string) =>
      `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":${status}}'`;
    writeFileSync(
      plugin,
      [
        '#!/bin/sh',
        'echo run >> "$(dirname "$0")/runs"',
        'if [ "$(wc -l < "$(dirname "$0")/runs")" -eq 1 ]; then',
        credential('{"token":"t","expirationTimestamp":"2000-01-01T00:00:00Z"}'),
        'else',
        credential('{}'),
        'fi',
        '',
      ].join('\n'),
    );
    chmodSync(plugin, 0o755);
    const file = join(dir, 'config');
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${double.url}", insecure-skip-tls-verify: true}\n` +
        `users:\n- name: dev\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: "${plugin}"}}\n` +
        'contexts:\n- name: x\n  context: {cluster: c, user: dev}\ncurrent-context: x\n',
    );
    process.env.KUBECONFIG = file;
    const store = new KubernetesStore(undefined, { requestTimeoutMs: 10_000 });
    const failures: string[] = [];
    store.onStateChange((_state, error) => {
      if (error !== undefined) failures.push(error.message);
    });
    try {
      await vi.waitFor(() => expect(failures.length).toBeGreaterThan(0), { timeout: 20_000 });
      expect(double.requestsOf('list').length).toBe(1);
      expect(failures[0]).toContain(
        `cannot use context "x" of the kubeconfig ${JSON.stringify(file)}: the exec credential plugin of user "dev" returned no credential`,
      );
    } finally {
      store.close();
      await double.close();
    }
  });

  // Regression: a plugin that answered with no credential failed with a KubeconfigCredentialError
  // naming the user alone, where the command line names the context and the file to correct
  it('an exec credential plugin that gives no credential: KubeconfigCredentialError names the file and the context too', async () => {
    const plugin = join(dir, 'no-credential');
    writeFileSync(
      plugin,
      '#!/bin/sh\necho \'{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{}}\'\n',
    );
    chmodSync(plugin, 0o755);
    const { file, err } = await getError(`{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: "${plugin}"}}`);
    expect(err).toBeInstanceOf(KubeconfigCredentialError);
    expect((err as KubeconfigCredentialError).kubeconfig).toBe(`context "x" of the kubeconfig ${JSON.stringify(file)}`);
    expect((err as KubeconfigCredentialError).message).toBe(
      `cannot use context "x" of the kubeconfig ${JSON.stringify(file)}: the exec credential plugin of user "dev" returned no credential: ` +
        "its ExecCredential's status holds no token and no client certificate, and the request would go out without credentials " +
        '(kubectl refuses it too: "exec plugin didn\'t return a token or cert/key pair"); the request was not sent',
    );
  });
});

// Regression: a context that names no user (no credentials, on purpose) had its cluster's TLS
// settings left unused with client-node 2.x: its insecure-skip-tls-verify, certificate-authority
// and tls-server-name are read only for a user, and every request failed with a certificate error
// blaming the server's certificate. kubectl uses them.
describe('a context without a user', () => {
  let d: ApiServerDouble;
  let folder: string;
  beforeEach(async () => {
    d = await ApiServerDouble.start({ tls: true });
    d.insert({ metadata: { name: 'kubernetes' }, spec: { cidrs: ['10.96.0.0/24'] } }, 'servicecidrs');
    folder = mkdtempSync(join(tmpdir(), 'ipallocator-no-user-'));
  });
  afterEach(async () => {
    await d.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it.each([
    ['insecure-skip-tls-verify', 'insecure-skip-tls-verify: true'],
    ['certificate-authority-data', `certificate-authority-data: ${base64(SERVER_CERT)}`],
  ])('uses its cluster’s %s, by the library (client-node 2.x and 1.x) and the command line, as kubectl does', async (_, tls) => {
    const text =
      `apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster: {server: "${d.url}", ${tls}}\n` +
      'contexts:\n- name: x\n  context: {cluster: prod}\ncurrent-context: x\n';
    for (const Config of [KubeConfig, KubeConfig1]) {
      const kc = new Config();
      kc.loadFromString(text);
      const store = new KubernetesStore(kc as KubeConfig, { start: false, requestTimeoutMs: 10_000 });
      try {
        expect(await store.get('10.96.0.1')).toBeUndefined();
      } finally {
        store.close();
      }
    }
    const path = join(folder, 'config');
    writeFileSync(path, text);
    const r = await cli(['status', '--json', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(d.requests.flatMap((request) => request.headers.filter(([name]) => name.toLowerCase() === 'authorization'))).toEqual([]);
  });
});
