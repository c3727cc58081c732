// No credentials to an http:// server, as kubectl sends none. client-go reads a kubeconfig user's
// token, token-file, username and password, client certificate, auth-provider and exec plugin only
// for a server reached over TLS (tools/clientcmd/client_config.go, DirectClientConfig.ClientConfig:
// "only try to read the auth information if we are secure", restclient.IsConfigTransportTLS); it
// takes the impersonation (`as`, `as-groups`, …) before that, whatever the scheme. So `kubectl
// proxy` on http://127.0.0.1:8001, which adds its own credentials on the way to the cluster, or a
// test server, is sent no secret, and no plugin or provider command is run for it.
// Regression: each was sent in clear text (the exec plugin and gcp's cmd-path run for it).
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KubeConfig, KubeConfig as KubeConfigNow } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { addServiceCIDR, cli } from './cli-helpers.ts';
import { ApiServerDouble, type ReceivedRequest } from './k8s/apiserver-double.ts';
import { until } from './k8s/helpers.ts';

/** What must not leave the host: each kind of credential below holds it. */
const SECRET = 'secret-that-stays-on-this-host-0123456789';

/** An unsigned JWT holding SECRET, whose exp is far ahead: client-node sends it as it is, unrefreshed. */
const ID_TOKEN = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(`{"exp":4102444800,"sub":"${SECRET}"}`).toString('base64url')}.`;

/**
 * A kubeconfig user of each kind of credential (YAML flow text; `dir` is the test's folder, where
 * the token-file and the plugin are): each would send SECRET, or run a command that leaves `ran`.
 */
const USERS: readonly (readonly [kind: string, user: (dir: string) => string])[] = [
  ['a token', () => `{token: ${SECRET}}`],
  ['a token-file', (dir) => `{tokenFile: "${join(dir, 'token')}"}`],
  ['a username and password', () => `{username: admin, password: ${SECRET}}`],
  [
    'an exec plugin',
    (dir) => `{exec: {apiVersion: client.authentication.k8s.io/v1, command: "${join(dir, 'plugin')}", interactiveMode: Never}}`,
  ],
  [
    'an oidc auth-provider',
    () => `{auth-provider: {name: oidc, config: {idp-issuer-url: "https://issuer.example", client-id: c, id-token: "${ID_TOKEN}"}}}`,
  ],
  [
    'a gcp auth-provider whose cmd-path gives the token',
    (dir) =>
      `{auth-provider: {name: gcp, config: {cmd-path: "${join(dir, 'gcloud')}", token-key: "{.access_token}", expiry-key: "{.token_expiry}"}}}`,
  ],
  ['a token, impersonating a user and a group', () => `{token: ${SECRET}, as: admin, as-groups: [dev]}`],
];

describe.skipIf(process.platform === 'win32')('an http:// server is sent no credentials, as kubectl sends none', () => {
  let d: ApiServerDouble;
  let dir: string;
  const saved = process.env.KUBECONFIG;
  beforeEach(async () => {
    d = await ApiServerDouble.start();
    addServiceCIDR(d, 'kubernetes', ['10.96.0.0/24']);
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-plain-http-'));
    writeFileSync(join(dir, 'token'), SECRET); // no line break: client-node 1.x would send it, and it is refused
    // each leaves `ran` behind if it is run, and prints SECRET as its token
    const ran = `echo ran >> "${join(dir, 'ran')}"`;
    const credential = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${SECRET}"}}`;
    writeFileSync(join(dir, 'plugin'), `#!/bin/sh\n${ran}\necho '${credential}'\n`);
    writeFileSync(join(dir, 'gcloud'), `#!/bin/sh\n${ran}\necho '{"access_token":"${SECRET}","token_expiry":"2100-01-01T00:00:00Z"}'\n`);
    chmodSync(join(dir, 'plugin'), 0o755);
    chmodSync(join(dir, 'gcloud'), 0o755);
  });
  afterEach(async () => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    await d.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A kubeconfig for the double (http://) whose one user is `user`, written in the test's folder; its path. */
  function kubeconfig(user: string): string {
    const path = join(dir, 'config');
    writeFileSync(
      path,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${d.url}", insecure-skip-tls-verify: true}\n` +
        `users:\n- name: u\n  user: ${user}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`,
    );
    return path;
  }

  /** A store on `kc` (undefined: $KUBECONFIG) synced, its watch open, and one get answered: every kind of request sent. */
  async function listWatchAndGet(kc: KubeConfig | undefined): Promise<void> {
    const store = new KubernetesStore(kc, { requestTimeoutMs: 10_000 });
    try {
      await store.waitForSync({ timeoutMs: 10_000 });
      await until(() => d.requestsOf('watch').length > 0, 'the watch');
      expect(await store.get('10.0.0.1')).toBeUndefined();
    } finally {
      store.close();
    }
  }

  /** What the double received holds no credential: no Authorization, SECRET in no header; no plugin or provider command was run. */
  function expectNoCredentialSent(kind: string): void {
    expect(d.requests.length, kind).toBeGreaterThan(0);
    expect(
      d.requests.filter((r) => r.authorization !== undefined || r.headers.some(([, value]) => value.includes(SECRET))),
      kind,
    ).toEqual([]);
    expect(existsSync(join(dir, 'ran')), `${kind}: a command was run`).toBe(false);
  }

  /** The impersonation headers of each request, as `name: value` lines. */
  function impersonation(requests: readonly ReceivedRequest[]): string[][] {
    return requests.map((r) => r.headers.filter(([name]) => name.startsWith('impersonate-')).map(([name, value]) => `${name}: ${value}`));
  }

  it.each(USERS)('%s: the library sends its list, watch and get without it, and they are answered', async (kind, user) => {
    process.env.KUBECONFIG = kubeconfig(user(dir));
    await listWatchAndGet(undefined);
    expectNoCredentialSent(kind);
  });

  // client-node 1.x sends its watch through applyToFetchOptions (node-fetch), its other requests
  // through applySecurityAuthentication; it reads a token-file itself, as it parses the text
  it.each(USERS)('%s: with a KubeConfig of client-node 1.x too', async (kind, user) => {
    const kc = new KubeConfig1();
    kc.loadFromString(readFileSync(kubeconfig(user(dir).replace('tokenFile:', 'token-file:')), 'utf8'));
    await listWatchAndGet(kc as unknown as KubeConfig);
    expectNoCredentialSent(kind);
  });

  it.each(USERS)('%s: the command line sends none either, and its command works', async (kind, user) => {
    const r = await cli(['status', '--kubeconfig', kubeconfig(user(dir))]);
    expect([r.code, r.stderr], kind).toEqual([0, '']);
    expectNoCredentialSent(kind);
  });

  // kubectl reads these only for an https:// server, where it refuses them (its oidc, gcp and
  // azure plugins, the auth-provider's lookup by name, the header, basic authentication's ":");
  // for an http:// server it reads none of them, and sends the request without credentials
  const READ_ONLY_OVER_TLS: readonly (readonly [kind: string, user: string])[] = [
    ['an oidc auth-provider without an idp-issuer-url', `{auth-provider: {name: oidc, config: {client-id: c, id-token: "${ID_TOKEN}"}}}`],
    ['a gcp auth-provider without a token or a cmd-path', '{auth-provider: {name: gcp, config: {}}}'],
    ['an auth-provider no authenticator takes', '{auth-provider: {name: foo}}'],
    ['an auth-provider with a tokenFile in its config', '{auth-provider: {name: oidc, config: {tokenFile: /dev/null}}}'],
    ['a token with a line break inside', `{token: "${SECRET}\\nmore"}`],
    ['a username holding a ":"', `{username: "admin:${SECRET}", password: p}`],
  ];

  it.each(READ_ONLY_OVER_TLS)('%s, which kubectl reads only over https://: taken, and nothing of it sent', async (kind, user) => {
    process.env.KUBECONFIG = kubeconfig(user);
    await listWatchAndGet(undefined);
    expectNoCredentialSent(kind);
  });

  it('an exec entry beside an auth-provider is refused all the same: kubectl refuses the pair whatever the scheme', () => {
    process.env.KUBECONFIG = kubeconfig(
      `{exec: {apiVersion: client.authentication.k8s.io/v1, command: "${join(dir, 'plugin')}", interactiveMode: Never}, auth-provider: {name: oidc, config: {}}}`,
    );
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(/has an exec entry and an auth-provider/);
    expect(d.requests).toEqual([]);
  });

  it('the impersonation is sent all the same, as kubectl sends it: it names whom to act as, no secret', async () => {
    process.env.KUBECONFIG = kubeconfig(`{token: ${SECRET}, as: admin, as-groups: [dev, ops]}`);
    await listWatchAndGet(undefined);
    expectNoCredentialSent('impersonation');
    expect(new Set(impersonation(d.requests).map((lines) => lines.join('; ')))).toEqual(
      new Set(['impersonate-user: admin; impersonate-group: dev; impersonate-group: ops']),
    );
  });

  it('an authenticator added with kc.addAuthenticator, which takes any user, is not asked either', async () => {
    const kc = new KubeConfigNow();
    kc.addAuthenticator({
      isAuthProvider: () => true,
      applyAuthentication: async (_user, opts) => {
        opts.headers = { ...opts.headers, Authorization: `Bearer ${SECRET}` };
      },
    });
    kc.loadFromString(readFileSync(kubeconfig('{}'), 'utf8'));
    await listWatchAndGet(kc);
    expectNoCredentialSent('a caller’s authenticator');
  });

  it('a 401 from an http:// server is said by the command line as no credentials sent, not as credentials refused', async () => {
    const secure = await ApiServerDouble.start({ tls: true });
    try {
      for (const double of [d, secure]) {
        double.onlyToken = 'another';
        const path = kubeconfig(`{token: ${SECRET}}`).replace('config', `config-${double === d ? 'http' : 'https'}`);
        writeFileSync(path, readFileSync(join(dir, 'config'), 'utf8').replace(d.url, double.url));
        const r = await cli(['status', '--kubeconfig', path]);
        expect(r.code).toBe(2);
        expect(r.stderr).toBe(
          double === d
            ? `ipallocator: the API server at ${d.url} refused the requests of context "x" (401 Unauthorized): no credentials are sent to an http:// server (kubectl sends none either); use its https:// address\n`
            : `ipallocator: the API server at ${secure.url} refused the credentials of context "x" (401 Unauthorized)\n`,
        );
      }
    } finally {
      await secure.close();
    }
  });

  it('a context made current after the store was made: a request to the http:// server it was made for is sent none', async () => {
    const secure = await ApiServerDouble.start({ tls: true });
    try {
      const kc = new KubeConfigNow();
      kc.loadFromString(readFileSync(kubeconfig(`{token: ${SECRET}}`), 'utf8'));
      kc.addCluster({ name: 'tls', server: secure.url, skipTLSVerify: true });
      kc.addContext({ name: 'y', cluster: 'tls', user: 'u' });
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      try {
        expect(await store.get('10.0.0.1')).toBeUndefined();
        kc.setCurrentContext('y');
        expect(await store.get('10.0.0.1')).toBeUndefined();
      } finally {
        store.close();
      }
      // client-node's API client keeps the server it was made for: both gets went to the http:// one
      expect([d.requests.map((r) => r.authorization), secure.requests]).toEqual([[undefined, undefined], []]);
    } finally {
      await secure.close();
    }
  });
});
