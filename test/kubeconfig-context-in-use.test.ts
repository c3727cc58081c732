// A kubeconfig is judged as kubectl judges it (client-go's clientcmd ConfirmUsable): what the
// context in use needs is checked, and entries no one uses may be incomplete. A context without
// a cluster is what `kubectl config set-context dev --namespace=x` writes, a cluster without a
// server what `kubectl config set-cluster foo` writes; kubectl takes a file holding them, and
// refuses only the context in use when it is one of them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { KubernetesStore } from '../adapters/kubernetes/index.ts';
import { cli } from './cli-helpers.ts';
import { startForwardProxy } from './doubles/forward-proxy.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';

/** A double (https:// with `tls`: credentials are sent only there) and a folder, new for each test. */
function doubleAndFolder(options: { tls?: boolean } = {}): { double: ApiServerDouble; folder: string } {
  const fixture = {} as { double: ApiServerDouble; folder: string };
  const saved = process.env.KUBECONFIG;
  beforeEach(async () => {
    fixture.double = await ApiServerDouble.start({ tls: options.tls ?? false });
    fixture.folder = mkdtempSync(join(tmpdir(), 'ipallocator-in-use-'));
  });
  afterEach(async () => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    await fixture.double.close();
    rmSync(fixture.folder, { recursive: true, force: true });
  });
  return fixture;
}

/** Writes `text` as `name` in `folder`; its path. */
function write(folder: string, name: string, text: string): string {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
}

/** A kubeconfig: the cluster `c` at `server`, the user `u` (YAML flow text), the context `main` using both, and `extra` lines under each list. */
function kubeconfig(
  server: string,
  options: { user?: string; clusters?: string; users?: string; contexts?: string; current?: string } = {},
): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    ...(options.clusters === undefined ? [] : [options.clusters]),
    `- name: c\n  cluster: {server: "${server}", insecure-skip-tls-verify: true}`,
    'users:',
    ...(options.users === undefined ? [] : [options.users]),
    `- name: u\n  user: ${options.user ?? '{token: t}'}`,
    'contexts:',
    ...(options.contexts === undefined ? [] : [options.contexts]),
    '- name: main\n  context: {cluster: c, user: u}',
    `current-context: ${options.current ?? 'main'}`,
    '',
  ].join('\n');
}

/** The store syncs through the kubeconfig at `path` ($KUBECONFIG), and the command line reads it too. */
async function usedByBoth(path: string, double: ApiServerDouble): Promise<void> {
  process.env.KUBECONFIG = path;
  const store = new KubernetesStore(undefined);
  try {
    await store.waitForSync({ timeoutMs: 10_000 });
  } finally {
    store.close();
  }
  const r = await cli(['status', '--kubeconfig', path]);
  expect(r.stderr).not.toContain('cannot read');
  expect(r.stderr).not.toContain('is missing');
  expect(double.requests.length).toBeGreaterThan(1);
}

describe('entries no context in use needs may be incomplete, as kubectl takes them', () => {
  const fixture = doubleAndFolder();

  it('a context without a cluster (kubectl config set-context dev --namespace=x), not in use', async () => {
    const path = write(fixture.folder, 'config', kubeconfig(fixture.double.url, { contexts: '- name: dev\n  context: {namespace: x}' }));
    await usedByBoth(path, fixture.double);
  });

  it('a cluster without a server (kubectl config set-cluster foo), not in use, and one without a cluster entry', async () => {
    const clusters = '- name: foo\n  cluster: {}\n- name: bare';
    const path = write(fixture.folder, 'config', kubeconfig(fixture.double.url, { clusters }));
    await usedByBoth(path, fixture.double);
  });

  it('a context whose cluster has no server, neither in use', async () => {
    const path = write(
      fixture.folder,
      'config',
      kubeconfig(fixture.double.url, {
        clusters: '- name: foo\n  cluster: {}',
        contexts: '- name: dev\n  context: {cluster: foo, user: u}',
      }),
    );
    await usedByBoth(path, fixture.double);
  });

  it('the users after one without a name keep their own impersonation', async () => {
    const path = write(
      fixture.folder,
      'config',
      kubeconfig(fixture.double.url, { user: '{as: alice, as-groups: [dev]}', users: '- user: {as: bob, as-groups: [ops]}' }),
    );
    await usedByBoth(path, fixture.double);
    const groups = fixture.double.requests.map((r) => r.headers.filter(([name]) => name === 'impersonate-group').map(([, v]) => v));
    expect(new Set(groups.flat())).toEqual(new Set(['dev']));
  });

  it('a field kubectl cannot read is named by the entry it is in, after an incomplete one', async () => {
    const clusters = '- name: foo\n  cluster: {}\n- name: odd\n  cluster: {server: "https://odd.example", insecure-skip-tls-verify: "yes"}';
    const path = write(fixture.folder, 'config', kubeconfig(fixture.double.url, { clusters }));
    process.env.KUBECONFIG = path;
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
      'the insecure-skip-tls-verify of cluster "odd" is the text "yes"',
    );
  });

  it('a name given twice is refused when one of them is incomplete too', async () => {
    const path = write(fixture.folder, 'config', kubeconfig(fixture.double.url, { contexts: '- name: main\n  context: {namespace: x}' }));
    process.env.KUBECONFIG = path;
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow('its contexts list names "main" twice');
  });
});

describe('the context in use, incomplete, is refused naming it', () => {
  const fixture = doubleAndFolder();

  it.each([
    [
      'the current context has no cluster',
      { contexts: '- name: dev\n  context: {namespace: x}', current: 'dev' },
      [],
      'its current-context "dev" names no cluster',
      'context "dev" names no cluster',
    ],
    [
      'the cluster of the current context has no server',
      {
        clusters: '- name: foo\n  cluster: {insecure-skip-tls-verify: true}',
        contexts: '- name: dev\n  context: {cluster: foo}',
        current: 'dev',
      },
      [],
      'the cluster "foo" of its current-context "dev" has no server',
      'the cluster "foo" of context "dev" has no server',
    ],
    [
      '--context names a context without a cluster',
      { contexts: '- name: dev\n  context: {namespace: x}' },
      ['--context', 'dev'],
      undefined,
      'context "dev" names no cluster',
    ],
  ] as const)('%s', async (_what, options, flags, library, commandLine) => {
    const path = write(fixture.folder, 'config', kubeconfig(fixture.double.url, options));
    if (library !== undefined) {
      process.env.KUBECONFIG = path;
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(library);
    }
    const r = await cli(['status', '--kubeconfig', path, ...flags]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(commandLine);
    expect(r.stderr).toContain(`in the kubeconfig ${JSON.stringify(path)}`);
    expect(r.stderr).not.toContain('is missing');
    expect(fixture.double.requests).toEqual([]);
  });

  it('of merged files the first to name an entry wins, incomplete or not, as kubectl merges them', async () => {
    const first = write(
      fixture.folder,
      'first',
      kubeconfig(fixture.double.url, { contexts: '- name: dev\n  context: {namespace: x}', current: 'dev' }),
    );
    const second = write(
      fixture.folder,
      'second',
      kubeconfig(fixture.double.url, { contexts: '- name: dev\n  context: {cluster: c, user: u}' }),
    );
    process.env.KUBECONFIG = [first, second].join(delimiter);
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow('its current-context "dev" names no cluster');
  });
});

// Regression: every user's token-file was read as the kubeconfig loaded, and one that could not be
// read failed the load, whoever used it. kubectl reads the token-file of the user in use alone, and
// none for an http:// server (client-go merges credentials only for https://).
describe('the token-file of the user in use alone is read, and none for an http:// server', () => {
  const tls = doubleAndFolder({ tls: true });

  it('a user no context in use names, whose token-file does not exist: the file loads, by the library and the command line', async () => {
    const users = '- name: other\n  user: {tokenFile: missing-token}\n- name: another\n  user: {token-file: /nonexistent/token}';
    const path = write(
      tls.folder,
      'config',
      kubeconfig(tls.double.url, { users, contexts: '- name: dev\n  context: {cluster: c, user: other}' }),
    );
    await usedByBoth(path, tls.double);
    expect(new Set(tls.double.requests.map((r) => r.authorization))).toEqual(new Set(['Bearer t']));
  });

  it('the user in use, over https://, is refused as before when its token-file cannot be read; --context too', async () => {
    const missing = join(tls.folder, 'missing-token');
    const said = `the tokenFile ${JSON.stringify(missing)} of user "other" cannot be read: no such file or directory (ENOENT)`;
    const users = '- name: other\n  user: {tokenFile: missing-token}';
    const contexts = '- name: dev\n  context: {cluster: c, user: other}';
    const path = write(tls.folder, 'config', kubeconfig(tls.double.url, { users, contexts, current: 'dev' }));
    process.env.KUBECONFIG = path;
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(said);
    expect(await cli(['status', '--kubeconfig', path])).toMatchObject({
      code: 2,
      stderr: `ipallocator: cannot read ${JSON.stringify(path)}: ${said}\n`,
    });
    const other = write(tls.folder, 'other', kubeconfig(tls.double.url, { users, contexts }));
    expect(await cli(['status', '--kubeconfig', other, '--context', 'dev'])).toMatchObject({
      code: 2,
      stderr: `ipallocator: cannot read ${JSON.stringify(other)}: ${said}\n`,
    });
    expect(tls.double.requests).toEqual([]);
  });
});

describe('no token-file is read for an http:// server', () => {
  const fixture = doubleAndFolder();

  it.each([
    ['does not exist', '{tokenFile: missing-token}'],
    ['holds nothing', '{tokenFile: empty-token}'],
  ])('the user in use has a token-file that %s: taken, and nothing is sent as a credential', async (_what, user) => {
    writeFileSync(join(fixture.folder, 'empty-token'), '');
    const path = write(fixture.folder, 'config', kubeconfig(fixture.double.url, { user }));
    await usedByBoth(path, fixture.double);
    expect(fixture.double.requests.map((r) => r.authorization).filter((a) => a !== undefined)).toEqual([]);
  });
});

// Regression: an http:// server without `insecure-skip-tls-verify: true` was refused, as
// client-node refuses it ("HTTP protocol is not allowed when skipTLSVerify is not set or false"),
// where kubectl takes it: a `kubectl proxy` kubeconfig (server: http://127.0.0.1:8001) has no such
// flag. No credentials are sent to an http:// server, so the refusal protected nothing.
describe('an http:// server without insecure-skip-tls-verify, as kubectl takes it', () => {
  const fixture = doubleAndFolder();
  const proxyVariables = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
  const savedProxies = new Map<string, string | undefined>();
  const closing: (() => Promise<void>)[] = [];
  beforeEach(() => {
    for (const name of proxyVariables) {
      savedProxies.set(name, process.env[name]);
      delete process.env[name];
    }
  });
  afterEach(async () => {
    for (const [name, value] of savedProxies) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    for (const close of closing.splice(0)) await close();
  });
  /** A kubeconfig of `server` without insecure-skip-tls-verify, as `kubectl proxy` users write it. */
  const plain = (server: string, extra = ''): string =>
    `apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster:\n    server: ${server}\n${extra}users:\n- name: u\n  user: {}\n` +
    'contexts:\n- name: local\n  context: {cluster: proxy, user: u}\ncurrent-context: local\n';

  it('read from a file: the store syncs and the command line answers', async () => {
    const path = write(fixture.folder, 'config', plain(fixture.double.url));
    await usedByBoth(path, fixture.double);
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([0, '']);
  });

  it('in a KubeConfig loaded yourself, with @kubernetes/client-node 2.x and 1.x', async () => {
    for (const kc of [new KubeConfig(), new KubeConfig1()]) {
      kc.loadFromString(plain(fixture.double.url));
      const store = new KubernetesStore(kc as KubeConfig, { start: false, requestTimeoutMs: 10_000 });
      try {
        await expect(store.get('10.96.0.10')).resolves.toBeUndefined();
      } finally {
        store.close();
      }
    }
  });

  it.each(['HTTP_PROXY', 'proxy-url'])('through a proxy (%s), as without one', async (where) => {
    const proxy = await startForwardProxy({ hosts: { 'apiserver.test': '127.0.0.1' } });
    closing.push(proxy.close);
    const server = `http://apiserver.test:${new URL(fixture.double.url).port}`;
    if (where === 'HTTP_PROXY') process.env.HTTP_PROXY = proxy.url;
    const path = write(fixture.folder, 'config', plain(server, where === 'proxy-url' ? `    proxy-url: ${proxy.url}\n` : ''));
    process.env.KUBECONFIG = path;
    const store = new KubernetesStore(undefined, { start: false, requestTimeoutMs: 10_000 });
    try {
      await expect(store.get('10.96.0.10')).resolves.toBeUndefined();
    } finally {
      store.close();
    }
    expect(proxy.seen.map((s) => s.line)).toContain(`GET ${server}/apis/networking.k8s.io/v1/ipaddresses/10.96.0.10`);
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([0, '']);
  });

  it('a redirect to an https:// host still has its certificate checked', async () => {
    const tls = await ApiServerDouble.start({ tls: true });
    closing.push(() => tls.close());
    fixture.double.proxyAnswerNext('get', 'ipaddresses', '', {
      status: 307,
      headers: { location: `${tls.url}/apis/networking.k8s.io/v1/ipaddresses/10.96.0.10` },
    });
    const kc = new KubeConfig();
    kc.loadFromString(plain(fixture.double.url));
    const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
    try {
      await expect(store.get('10.96.0.10')).rejects.toThrow(/certificate/);
    } finally {
      store.close();
    }
    expect(tls.requests).toEqual([]);
  });
});

// Regression: a store follows the context current when it was made. client-node's API clients keep
// the server they were made for, but read the user anew for each request, and the watch reads the
// cluster anew: once the KubeConfig's context was switched, the store sent the other context's
// token to the first cluster, listed one cluster and watched the other, and none of the user
// checks made when the store was made applied to the user it now sent.
describe('a KubeConfig whose current context is switched after the store was made', () => {
  it.each([
    ['client-node 2.x', () => new KubeConfig()],
    ['client-node 1.x', () => new KubeConfig1() as unknown as KubeConfig],
  ])('%s: the store keeps the cluster and the user of the context it was made with', async (_v, make) => {
    const first = await ApiServerDouble.start({ tls: true });
    const second = await ApiServerDouble.start({ tls: true });
    try {
      const kc = make();
      kc.loadFromOptions({
        clusters: [
          { name: 'a', server: first.url, skipTLSVerify: true },
          { name: 'b', server: second.url, skipTLSVerify: true },
        ],
        users: [
          { name: 'ua', token: 'token-of-a' },
          { name: 'ub', token: 'token-of-b' },
        ],
        contexts: [
          { name: 'ctx-a', cluster: 'a', user: 'ua' },
          { name: 'ctx-b', cluster: 'b', user: 'ub' },
        ],
        currentContext: 'ctx-a',
      });
      const store = new KubernetesStore(kc, { requestTimeoutMs: 10_000 });
      try {
        await store.waitForSync({ timeoutMs: 10_000 });
        kc.setCurrentContext('ctx-b');
        expect(await store.get('10.0.0.1')).toBeUndefined();
        await store.create({
          name: '10.0.0.2',
          labels: {},
          parentRef: { group: '', resource: 'services', namespace: 'default', name: 'web' },
        });
      } finally {
        store.close();
      }
      expect(second.requests).toEqual([]);
      expect(new Set(first.requests.map((r) => r.authorization))).toEqual(new Set(['Bearer token-of-a']));
      expect(first.requests.length).toBeGreaterThanOrEqual(3); // the list, a watch, the get, the create
    } finally {
      await first.close();
      await second.close();
    }
  });
});

// Regression: a server URL's scheme is case-insensitive, and kubectl (and the command line) read
// HTTPS://host as https://host; client-node compares the text with "https://" and "http://", and
// the store's every request failed ("You need to define an absolute base url"), for ever.
describe('a server URL whose scheme is written in capitals', () => {
  it.each([
    ['a KubeConfig you load, client-node 2.x', () => new KubeConfig()],
    ['a KubeConfig you load, client-node 1.x', () => new KubeConfig1() as unknown as KubeConfig],
  ])('%s: the store reaches the server, as kubectl does', async (_v, make) => {
    const double = await ApiServerDouble.start({ tls: true });
    try {
      const kc = make();
      kc.loadFromOptions({
        clusters: [{ name: 'a', server: double.url.replace(/^https/, 'HTTPS'), skipTLSVerify: true }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'ctx', cluster: 'a', user: 'u' }],
        currentContext: 'ctx',
      });
      const store = new KubernetesStore(kc, { requestTimeoutMs: 10_000 });
      try {
        await store.waitForSync({ timeoutMs: 10_000 });
        expect(await store.get('10.0.0.1')).toBeUndefined();
      } finally {
        store.close();
      }
      expect(kc.getCurrentCluster()?.server.startsWith('HTTPS://')).toBe(true); // the caller's object is left as it was
      expect(double.requests.map((r) => r.authorization)).toContain('Bearer t');
    } finally {
      await double.close();
    }
  });
});
