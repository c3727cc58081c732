// A kubeconfig's users compared with kubectl 1.32: an auth-provider or exec entry kubectl refuses
// for the user in use, a token it cannot read, which @kubernetes/client-node sends (another token,
// or none) or fails on with a TypeError; and a KubeConfig the caller loaded, checked as the loader
// checks a file. The library and the command line refuse each before any request, in kubectl's words.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { KubernetesApiError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { cli, refusedAsRead } from './cli-helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { authorizationsOfOneGet } from './k8s/helpers.ts';

const EXEC_V1BETA1 = 'client.authentication.k8s.io/v1beta1';

/** An unsigned JWT with these claims (an id-token as an OIDC issuer writes it, but for the signature). */
function jwt(claims: object): string {
  return `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
}

/** An id-token valid until 2100. */
const VALID_ID_TOKEN = jwt({ exp: 4102444800, sub: 'dev' });
/** The fields of an oidc config kubectl asks for but the id-token. */
const ISSUER = 'idp-issuer-url: "https://issuer.example", client-id: k';
/** The fields of an oidc config kubectl takes (YAML flow text). */
const OIDC = `${ISSUER}, id-token: "${VALID_ID_TOKEN}"`;

let double: ApiServerDouble;
let folder: string;
beforeEach(async () => {
  double = await ApiServerDouble.start({ tls: true }); // https: an http:// server is sent no credentials
  folder = mkdtempSync(join(tmpdir(), 'ipallocator-kubectl-parity-'));
});
afterEach(async () => {
  await double.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A kubeconfig whose one context `ctx` points at the double as user `u`, written `user` (YAML flow text). */
function kubeconfigOfUser(user: string): string {
  return (
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${double.url}", insecure-skip-tls-verify: true}\n` +
    `users:\n- name: u\n  user: ${user}\ncontexts:\n- name: ctx\n  context: {cluster: c, user: u}\ncurrent-context: ctx\n`
  );
}

/**
 * The kubeconfig of user `user` is refused before any request, saying `said`: by the library, given
 * a KubeConfig client-node loaded (InvalidArgumentError), and by the command line given the file
 * (one line, exit 2, naming the context and the file); `secret` is never shown.
 */
async function refusedBoth(user: string, said: string, secret = 'the-secret'): Promise<void> {
  const config = kubeconfigOfUser(user);
  const kc = new KubeConfig();
  kc.loadFromString(config);
  expect(() => new KubernetesStore(kc, { start: false })).toThrow(InvalidArgumentError);
  expect(() => new KubernetesStore(kc, { start: false })).toThrow(`KubernetesStore: ${said}`);
  const path = join(folder, 'config');
  writeFileSync(path, config);
  const r = await cli(['status', '--kubeconfig', path]);
  expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot use context "ctx" of the kubeconfig "${path}": ${said}\n`]);
  expect(r.stderr).not.toContain(secret);
  expect(double.requests).toEqual([]);
}

const WHO = 'the auth-provider of user "u" (context "ctx")';

// Regression: client-node runs the exec plugin of a user that has an auth-provider too, and leaves
// the auth-provider unused; kubectl refuses the user ("authProvider cannot be provided in
// combination with an exec plugin for u")
describe('a user with an exec entry and an auth-provider', () => {
  it('is refused before any request, by the library and the command line, as kubectl refuses it', async () => {
    await refusedBoth(
      `{exec: {apiVersion: ${EXEC_V1BETA1}, command: token-helper}, auth-provider: {name: oidc, config: {${OIDC}, refresh-token: the-secret}}}`,
      'the user "u" (context "ctx") has an exec entry and an auth-provider, two ways to authenticate, which kubectl refuses too ' +
        '("authProvider cannot be provided in combination with an exec plugin for u"; @kubernetes/client-node would run the exec ' +
        'plugin alone): keep one, or use another context',
    );
  });

  it('is no matter when it is not the user in use, as for kubectl', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      `${kubeconfigOfUser('{token: t}')}`.replace(
        'users:\n',
        `users:\n- name: other\n  user: {exec: {apiVersion: ${EXEC_V1BETA1}, command: token-helper}, auth-provider: {name: oidc}}\n`,
      ),
    );
    expect(await authorizationsOfOneGet(kc, double)).toEqual(['Bearer t']);
  });
});

// Regression: client-node's FileAuth takes any auth-provider whose config has a tokenFile, whatever
// its name, reads the file whole and synchronously (a named pipe nothing writes to stopped the
// command line for ever, --request-timeout and all) and sends it as the token; kubectl has no such
// field, and refuses a name it does not know ("no Auth Provider found for name "foo"")
describe('a tokenFile in an auth-provider config', () => {
  const said = (kubectl: string) =>
    `${WHO} has a tokenFile in its config, which @kubernetes/client-node reads whole, holding up the process until it is read, ` +
    `and sends as the token, whatever the auth-provider's name (${kubectl}): give the user a token-file of its own ` +
    '(user: {tokenFile: …}), which is read as kubectl reads it, instead of the auth-provider';
  const unknown = said('kubectl reads no tokenFile there, and refuses the auth-provider: no Auth Provider found for name "foo"');

  it('is refused before any request, by the library and the command line, the file not read', async () => {
    const path = join(folder, 'token');
    writeFileSync(path, 'the-secret');
    await refusedBoth(`{auth-provider: {name: foo, config: {tokenFile: "${path}"}}}`, unknown);
    await refusedBoth(
      `{auth-provider: {name: oidc, config: {${OIDC}, tokenFile: "${path}"}}}`,
      said('kubectl reads no tokenFile there, and sends the id-token'),
    );
  });

  it('is refused, not read, when it is a named pipe nothing writes to', async () => {
    const path = join(folder, 'pipe');
    execFileSync('mkfifo', [path]);
    await refusedBoth(`{auth-provider: {name: foo, config: {tokenFile: "${path}"}}}`, unknown);
  });
});

// Regression: an oidc auth-provider kubectl refuses — without an idp-issuer-url or a client-id
// ("Must provide idp-issuer-url"), with an id-token that is no JWT ("ID Token is not a valid JWT"),
// or one expired without a refresh-token ("No valid id-token, and cannot refresh without
// refresh-token") — was sent with its id-token by client-node, or, for the last two, without
// any credentials (client-node takes a token it cannot read as expired, and cannot refresh it)
describe('an oidc auth-provider kubectl refuses', () => {
  const must = (field: string, article: string) =>
    `${WHO} is oidc without ${article} ${field} in its config, which kubectl refuses ("Must provide ${field}"), and ` +
    '@kubernetes/client-node could not refresh its id-token without it; log in again to write the config whole, or use an exec ' +
    'entry (exec: {…}) that gets a token';
  const without = 'and every request would go out without credentials';

  it.each([
    ['without an idp-issuer-url', `{id-token: "${VALID_ID_TOKEN}", client-id: k}`, must('idp-issuer-url', 'an')],
    ['without a client-id', `{id-token: "${VALID_ID_TOKEN}", idp-issuer-url: "https://issuer.example"}`, must('client-id', 'a')],
    [
      'with an id-token that is no JWT, a refresh-token or not',
      `{${ISSUER}, id-token: the-secret, refresh-token: r}`,
      `${WHO} is oidc with an id-token that is no JWT (three base64url parts, its claims JSON; it is not shown), which kubectl ` +
        `refuses ("ID Token is not a valid JWT") and @kubernetes/client-node sends no token for, ${without}; log in again to write its id-token`,
    ],
    [
      'with an expired id-token and no refresh-token',
      `{${ISSUER}, id-token: "${jwt({ exp: 1000 })}"}`,
      `${WHO} is oidc with an id-token that has expired and no refresh-token, which kubectl refuses ("No valid id-token, and ` +
        `cannot refresh without refresh-token") and @kubernetes/client-node sends no token for, ${without}; log in again to write a new id-token`,
    ],
    [
      'with an id-token without exp and no refresh-token',
      `{${ISSUER}, id-token: "${jwt({ sub: 'dev' })}"}`,
      `${WHO} is oidc with an id-token that has no expiry (exp) and no refresh-token, which kubectl refuses ("No valid id-token, ` +
        'and cannot refresh without refresh-token"); log in again to write a new id-token',
    ],
  ])('one %s is refused before any request, by the library and the command line', async (_, config, said) => {
    // the id-token is never shown
    await refusedBoth(`{auth-provider: {name: oidc, config: ${config}}}`, said, /id-token: "?([^",}]+)/.exec(config)![1]);
  });

  it('one kubectl takes is sent with its id-token', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigOfUser(`{auth-provider: {name: oidc, config: {${OIDC}}}}`));
    expect(await authorizationsOfOneGet(kc, double)).toEqual([`Bearer ${VALID_ID_TOKEN}`]);
  });

  // Regression: such a user was taken, and every request failed with openid-client's TypeError
  // ('"server" must be an instance of URL'): client-node 1.x and 2.0 give the idp-issuer-url to its
  // discovery() as text, which takes only a URL, so no refresh can work
  const unrefreshed =
    `${WHO} is oidc with an id-token that has expired, which this @kubernetes/client-node cannot refresh: it gives the ` +
    'idp-issuer-url to openid-client as text, which takes only a URL, and every request would fail with ' +
    `its '"server" must be an instance of URL'; kubectl refreshes it, and writes the new id-token into the kubeconfig: run a ` +
    'kubectl command with this context, or log in again, or use an exec entry (exec: {…}) that gets a token';
  const expiredWithRefresh = `{auth-provider: {name: oidc, config: {${ISSUER}, id-token: "${jwt({ exp: 1000 })}", refresh-token: the-secret}}}`;

  it('an expired id-token with a refresh-token client-node cannot refresh is refused, by the library and the command line', async () => {
    await refusedBoth(expiredWithRefresh, unrefreshed);
  });

  it('an expired id-token with a refresh-token is refused with client-node 1.x too', () => {
    const kc = new KubeConfig1();
    kc.loadFromString(kubeconfigOfUser(expiredWithRefresh));
    expect(() => new KubernetesStore(kc as unknown as KubeConfig, { start: false })).toThrow(`KubernetesStore: ${unrefreshed}`);
  });

  // Regression: an id-token that expired after the store was made failed each request with
  // openid-client's bare TypeError ('"server" must be an instance of URL'), said as the API server's
  it('an id-token that expires after the store was made: each request fails, said of the user, nothing sent (client-node 2.x and 1.x)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      for (const Config of [KubeConfig, KubeConfig1]) {
        vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
        const exp = Date.parse('2030-01-01T01:00:00Z') / 1000;
        const kc = new Config();
        kc.loadFromString(
          kubeconfigOfUser(`{auth-provider: {name: oidc, config: {${ISSUER}, id-token: "${jwt({ exp })}", refresh-token: the-secret}}}`),
        );
        const store = new KubernetesStore(kc as KubeConfig, { start: false });
        try {
          vi.setSystemTime(new Date('2030-01-01T02:00:00Z'));
          const error = await store.get('10.96.0.10').catch((e: unknown) => e);
          expect(error).toBeInstanceOf(KubernetesApiError);
          expect((error as Error).message).toBe(
            `get ipaddresses.networking.k8s.io "10.96.0.10": the user's credentials could not be read: the id-token of its oidc ` +
              `auth-provider has expired, which this @kubernetes/client-node cannot refresh: it gives the idp-issuer-url to ` +
              `openid-client as text, which takes only a URL, and every request fails with its '"server" must be an instance of URL'; ` +
              'kubectl refreshes it, and writes the new id-token into the kubeconfig: run a kubectl command with this context, or log ' +
              'in again, or use an exec entry (exec: {…}) that gets a token',
          );
          expect(double.requests).toEqual([]);
        } finally {
          store.close();
        }
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('an expired id-token with a refresh-token is left to be refreshed by a client-node that gives openid-client a URL', () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigOfUser(expiredWithRefresh));
    // client-node as it would be with the issuer read as a URL before discovery
    const authenticators = (kc as unknown as { authenticators: { isAuthProvider(u: unknown): boolean; getClient?: unknown }[] })
      .authenticators;
    const i = authenticators.findIndex((a) => a.isAuthProvider({ authProvider: { name: 'oidc' } }));
    const oidc = authenticators[i] as unknown as {
      getClient(user: { authProvider: { config: Record<string, unknown> } }): Promise<unknown>;
    };
    const fixed = Object.create(oidc) as typeof oidc;
    fixed.getClient = (user) => {
      const config = user.authProvider.config;
      const issuer = new URL(String(config['idp-issuer-url']));
      return oidc.getClient.call(fixed, {
        ...user,
        authProvider: { ...user.authProvider, config: { ...config, 'idp-issuer-url': issuer } },
      });
    };
    authenticators[i] = fixed as unknown as (typeof authenticators)[number];
    new KubernetesStore(kc, { start: false }).close();
  });
});

// Regression: client-node's gcp and azure authenticators read the config's access-token, or run
// its cmd-path for one; without a config they failed every request with a TypeError naming no
// field ("Cannot read properties of undefined (reading 'access-token')"), without either with
// "Token is expired!". kubectl 1.26 and later runs neither ("The gcp auth plugin has been removed").
describe('a gcp or azure auth-provider client-node gets no token from', () => {
  const said = (name: string, what: string, plugin: string) =>
    `${WHO} is ${name} ${what}, which @kubernetes/client-node gets no token from and fails on at every request (kubectl no ` +
    `longer runs the ${name} auth-provider at all: "The ${name} auth plugin has been removed"); use an exec entry (exec: {…}) ` +
    `that runs ${plugin} instead`;

  it.each([
    ['{name: gcp}', said('gcp', 'without a config', 'gke-gcloud-auth-plugin')],
    ['{name: azure}', said('azure', 'without a config', 'kubelogin')],
    [
      '{name: gcp, config: {expiry: "2020-01-01T00:00:00Z", token-key: "{.token}"}}',
      said('gcp', 'without an access-token or a cmd-path in its config', 'gke-gcloud-auth-plugin'),
    ],
  ])('auth-provider: %s is refused before any request, by the library and the command line', async (provider, message) => {
    await refusedBoth(`{auth-provider: ${provider}}`, message);
  });

  it('one with an access-token is sent with it', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigOfUser('{auth-provider: {name: gcp, config: {access-token: ya29.token}}}'));
    expect(await authorizationsOfOneGet(kc, double)).toEqual(['Bearer ya29.token']);
  });
});

// Regression: a KubeConfig the caller loaded with client-node was checked for names given twice
// alone of what the loader refuses in a file: an auth-provider config value that is no text
// (`id-token: 12345` failed every request with client-node's "token.split is not a function"), an
// exec arg that is no text on another user, a name that is no text, a proxy-url that is no text
// ("cluster.proxyUrl.startsWith is not a function") were taken
describe('a KubeConfig the caller loaded, with a field kubectl cannot read', () => {
  const tail = 'which kubectl cannot read either (what it holds is not shown)';
  const quote = `${tail}: write it as text, quoted where YAML would read it as something else`;

  it.each([
    [
      'an auth-provider config value that is a number, on the user in use',
      `users:\n- name: u\n  user: {auth-provider: {name: oidc, config: {${ISSUER}, id-token: 12345}}}\n`,
      `the auth-provider of user "u" (context "ctx") has a config entry "id-token" that is a number, not text, ${quote}`,
    ],
    [
      'an auth-provider config value that is a number, on a user not in use',
      `users:\n- name: u\n  user: {token: t}\n- name: o\n  user: {auth-provider: {name: oidc, config: {${ISSUER}, id-token: 12345}}}\n`,
      `the KubeConfig: the auth-provider of user "o" has a config entry "id-token" that is a number, not text, ${quote}`,
    ],
    [
      'an exec arg that is a number, on a user not in use',
      `users:\n- name: u\n  user: {token: t}\n- name: o\n  user: {exec: {apiVersion: ${EXEC_V1BETA1}, command: x, args: [--port, 8080]}}\n`,
      `the KubeConfig: the exec entry of user "o" has an args entry (number 2) that is a number, not text, ${quote}`,
    ],
    [
      'a user name that is a number',
      'users:\n- name: u\n  user: {token: t}\n- name: 1.10\n  user: {token: t}\n',
      'the KubeConfig: the name of entry 2 of users is read by YAML as the number 1.1, not as text, which kubectl cannot read either: quote it (name: "…")',
    ],
  ])('%s is refused by the library as the loader refuses it in a file', (_, users, said) => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigOfUser('{token: t}').replace(/users:\n- name: u\n {2}user: \{token: t\}\n/, users));
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(InvalidArgumentError);
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(`KubernetesStore: ${said}`);
    expect(() => new KubernetesStore(kc, { start: false })).not.toThrow('12345');
  });

  it('a user without a name, not in use, is taken, as kubectl reads it (named "")', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: double.url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }, { token: 'x' } as { name: string; token: string }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    expect(await authorizationsOfOneGet(kc, double)).toEqual(['Bearer t']);
  });

  it('two users without a name are two named "", as kubectl reads them, and refused so', () => {
    const kc = new KubeConfig();
    const nameless = { token: 'x' } as { name: string; token: string };
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: double.url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }, nameless, { ...nameless }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(
      'KubernetesStore: the KubeConfig: its users list names "" twice, which kubectl refuses too (duplicate name "" in list)',
    );
  });

  it('a proxy-url that is a number is refused by the library as the loader refuses it in a file', () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      kubeconfigOfUser('{token: t}').replace('insecure-skip-tls-verify: true', 'insecure-skip-tls-verify: true, proxy-url: 8080'),
    );
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(
      'KubernetesStore: the KubeConfig: the proxy-url of cluster "c" is a number, not text, which kubectl cannot read either',
    );
  });
});

// Regression: client-node takes a user's token only when it is truthy: `token: 0`, `token: false`
// or `token: .nan`, which YAML reads as no text and kubectl cannot read, was read as no token, and
// every request went out without credentials (the command line then said the server "refused the
// credentials" of the context)
describe('a token YAML reads as a falsy value', () => {
  const saved = process.env.KUBECONFIG;
  afterEach(() => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  });

  it.each([
    ['0', 'a number'],
    ['false', 'true or false'],
    ['.nan', 'a number'],
  ])('token: %s is refused as the kubeconfig is read, whichever user has it, by the library and the command line', async (token, kind) => {
    const said =
      `the token of user "o" is ${kind}, not text (it is not shown), which kubectl cannot read either, and @kubernetes/client-node ` +
      'would read as no token at all, sending every request without credentials: write it as text, quoted ("…")';
    const path = join(folder, 'config');
    writeFileSync(path, kubeconfigOfUser('{token: t}').replace('users:\n', `users:\n- name: o\n  user: {token: ${token}}\n`));
    await refusedAsRead(path, said);
    expect(double.requests).toEqual([]);
  });
});

// Regression: client-node 2.x's YAML reader (YAML 1.2) reads a merge key `<<: *anchor` as a field
// named "<<", so a user written with one lost the token it merged in, and every request went out
// without it; kubectl (YAML 1.1) merges it. Refused as the file is read, naming the entry.
describe('a YAML merge key (<<) in a kubeconfig entry', () => {
  it('is refused as the kubeconfig is read, by the library and the command line, naming the entry', async () => {
    const path = join(folder, 'config');
    writeFileSync(
      path,
      kubeconfigOfUser('{token: t}').replace(
        'users:\n- name: u\n  user: {token: t}\n',
        'users:\n- name: base\n  user: &creds {token: the-secret}\n- name: u\n  user:\n    <<: *creds\n    as: bob\n',
      ),
    );
    const said =
      'the user "u" holds a YAML merge key (<<), which @kubernetes/client-node 2.x reads as a field named "<<", ' +
      'leaving out what it merges in (kubectl merges it): write those fields out in the entry';
    await refusedAsRead(path, said, 'the-secret');
    expect(double.requests).toEqual([]);
  });
});
