// How a kubeconfig is found and read, compared with kubectl (client-go's clientcmd loading
// rules): the library's default kubeconfig, and the command line's, through the one loader both
// use (config.ts loadDefaultKubeconfig).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../adapters/errors.ts';
import { KubeconfigCredentialError, KubernetesStore } from '../adapters/kubernetes/index.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { authorizationsOfOneGet, until } from './k8s/helpers.ts';
import {
  KubeconfigFileError,
  kubeConfigOrDefault,
  loadDefaultKubeconfig,
  loadGivenKubeconfig,
  loadKubeconfigText,
} from '../adapters/kubernetes/config.ts';
import { openWatch } from '../adapters/kubernetes/watch-request.ts';
import { cli, refusedAsRead } from './cli-helpers.ts';
import { base64, CLIENT_CERT, CLIENT_KEY, OTHER_KEY } from './k8s/tls.ts';

/** A kubeconfig's text: clusters (name → server), users (name → token), contexts (name → [cluster, user]). */
function kubeconfigText(k: {
  clusters?: Record<string, string>;
  users?: Record<string, Record<string, unknown>>;
  contexts?: Record<string, [string, string]>;
  current?: string;
}): string {
  const lines = ['apiVersion: v1', 'kind: Config', 'clusters:'];
  for (const [name, server] of Object.entries(k.clusters ?? {})) {
    lines.push(`- name: ${name}`, '  cluster:', `    server: ${server}`, '    insecure-skip-tls-verify: true');
  }
  lines.push('users:');
  for (const [name, user] of Object.entries(k.users ?? {})) lines.push(`- name: ${name}`, `  user: ${JSON.stringify(user)}`);
  lines.push('contexts:');
  for (const [name, [cluster, user]] of Object.entries(k.contexts ?? {})) {
    lines.push(`- name: ${name}`, '  context:', `    cluster: ${cluster}`, `    user: ${user}`);
  }
  if (k.current !== undefined) lines.push(`current-context: ${k.current}`);
  return `${lines.join('\n')}\n`;
}

/** A kubeconfig whose one context `ctx` points at `server` as user `u`, written `user` (YAML flow text). */
function kubeconfigOfUser(server: string, user: string): string {
  return (
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${server}", insecure-skip-tls-verify: true}\n` +
    `users:\n- name: u\n  user: ${user}\ncontexts:\n- name: ctx\n  context: {cluster: c, user: u}\ncurrent-context: ctx\n`
  );
}

/** A describe's API server double and folder, new for each of its tests (doubleAndFolder). */
interface DoubleAndFolder {
  double: ApiServerDouble;
  folder: string;
}

/**
 * The describe's fixture: before each test, its fields are set to a new API server double and a
 * new folder (`prefix`…); after it, both are gone. Read them inside the tests, not at definition.
 * `tls: true` serves the double over https://, for the tests of what credentials the server is
 * sent: kubectl sends none to an http:// server.
 */
function doubleAndFolder(prefix: string, options: { tls?: boolean } = {}): DoubleAndFolder {
  const fixture = {} as DoubleAndFolder;
  beforeEach(async () => {
    fixture.double = await ApiServerDouble.start({ tls: options.tls ?? false });
    fixture.folder = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await fixture.double.close();
    rmSync(fixture.folder, { recursive: true, force: true });
  });
  return fixture;
}

/** Puts $KUBECONFIG back after each test of the describe block as it was when the block was defined. */
function keepKubeconfigVariable(): void {
  const saved = process.env.KUBECONFIG;
  afterEach(() => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  });
}

/**
 * A kubeconfig (`config`) whose user the library refuses (InvalidArgumentError: `said`) and the
 * command line too, naming the context and the file; nothing is sent. The command line's answer.
 */
async function expectRefusedBoth(fixture: DoubleAndFolder, config: string, said: string): Promise<{ code: number | null; stderr: string }> {
  const kc = new KubeConfig();
  kc.loadFromString(config);
  expect(() => new KubernetesStore(kc, { start: false })).toThrow(InvalidArgumentError);
  expect(() => new KubernetesStore(kc, { start: false })).toThrow(`KubernetesStore: ${said}`);
  const path = join(fixture.folder, 'config');
  writeFileSync(path, config);
  const r = await cli(['status', '--kubeconfig', path]);
  expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot use context "ctx" of the kubeconfig "${path}": ${said}\n`]);
  expect(fixture.double.requests).toEqual([]);
  return r;
}

describe('the default kubeconfig', () => {
  let dir: string;
  keepKubeconfigVariable();
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-loading-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const loaded = (): KubeConfig => {
    const kc = new KubeConfig();
    loadDefaultKubeconfig(kc);
    return kc;
  };
  const one = kubeconfigText({
    clusters: { c: 'https://127.0.0.1:1' },
    users: { u: { token: 'one' } },
    contexts: { ctx: ['c', 'u'] },
    current: 'ctx',
  });

  describe('$KUBECONFIG holding a list of files', () => {
    // Regression: client-node's loadFromDefault failed on the first file that does not exist
    // (a bare ENOENT); kubectl skips it.
    it('skips a file that does not exist, as kubectl does', () => {
      const good = file('good', one);
      process.env.KUBECONFIG = [join(dir, 'missing'), good, join(dir, 'missing-too')].join(delimiter);
      const kc = loaded();
      expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
      // the library too
      void new KubernetesStore(undefined, { start: false }).close();
    });

    it('fails when none of its files exists, naming each', () => {
      const a = join(dir, 'a');
      const b = join(dir, 'b');
      process.env.KUBECONFIG = [a, b].join(delimiter);
      expect(loaded).toThrow(KubeconfigFileError);
      expect(loaded).toThrow(`none of the files $KUBECONFIG names exists: ${JSON.stringify(a)}, ${JSON.stringify(b)}`);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`${JSON.stringify(a)}, ${JSON.stringify(b)}`);
    });

    // Regression: the paths were quoted with JSON.stringify, which shows a zero-width space or a
    // right-to-left mark as it is: a path that looks like another; quoted as every other message
    // quotes text (quoteText), they are escaped
    it('quotes each path with what a reader could not see escaped', () => {
      const a = join(dir, 'a\u200bconfig');
      const empty = file('e\u202eb', '');
      process.env.KUBECONFIG = [a, join(dir, 'b')].join(delimiter);
      const escapedA = JSON.stringify(a).replace('\u200b', '\\u200b');
      expect(loaded).toThrow(`none of the files $KUBECONFIG names exists: ${escapedA}, ${JSON.stringify(join(dir, 'b'))}`);
      process.env.KUBECONFIG = [a, empty].join(delimiter);
      expect(loaded).toThrow(`${escapedA} does not exist, ${JSON.stringify(empty).replace('\u202e', '\\u202e')} is empty`);
    });

    // Regression: an empty file in the list (one `touch` leaves) failed the load ("is not a
    // kubeconfig: it holds no YAML document"); kubectl reads it as an empty configuration.
    it('skips an empty file, as kubectl does; fails when no file is left, naming each and why', async () => {
      const good = file('good', one);
      const empty = file('empty', '');
      process.env.KUBECONFIG = [empty, good].join(delimiter);
      expect(loaded().getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
      void new KubernetesStore(undefined, { start: false }).close();
      const r = await cli(['status', '--request-timeout', '1s']);
      expect(r.stderr).not.toMatch(/not a kubeconfig|is empty/); // (the message names the files, the empty one's path too)
      expect(r.stderr).toContain('https://127.0.0.1:1');

      const missing = join(dir, 'missing');
      process.env.KUBECONFIG = [empty, missing].join(delimiter);
      const said = `none of the files $KUBECONFIG names holds a kubeconfig: ${JSON.stringify(empty)} is empty, ${JSON.stringify(missing)} does not exist`;
      expect(loaded).toThrow(said);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(said);
    });

    describe('in a pod with a service account (its variables and files under a folder of the test)', () => {
      const pod = {
        KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST,
        KUBERNETES_SERVICE_PORT: process.env.KUBERNETES_SERVICE_PORT,
      };
      let root: string;
      let token: string;
      beforeEach(() => {
        root = mkdtempSync(join(tmpdir(), 'ipallocator-pod-'));
        const account = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
        mkdirSync(account, { recursive: true });
        token = join(account, 'token');
        writeFileSync(token, 'service-account-token');
        writeFileSync(join(account, 'ca.crt'), '');
        writeFileSync(join(account, 'namespace'), 'kube-system');
        process.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
        process.env.KUBERNETES_SERVICE_PORT = '443';
      });
      afterEach(() => {
        for (const [k, v] of Object.entries(pod)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
        rmSync(root, { recursive: true, force: true });
      });
      const inPod = (): KubeConfig => {
        const kc = new KubeConfig();
        loadDefaultKubeconfig(kc, root);
        return kc;
      };
      const serviceAccount = (kc: KubeConfig) => [kc.getCurrentCluster()?.server, kc.getCurrentUser()?.authProvider?.config?.tokenFile];

      // Regression: refused ("none of the files $KUBECONFIG names exists"); kubectl's loading
      // rules skip the missing files, and the empty configuration left falls back to the pod's
      // service account (clientcmd DeferredLoadingClientConfig.ClientConfig)
      it('takes the service account when none of the files $KUBECONFIG names exists, or holds anything, as kubectl does', () => {
        for (const list of [[join(dir, 'a'), join(dir, 'b')], [file('empty', ''), join(dir, 'missing')], [`${delimiter}`]]) {
          process.env.KUBECONFIG = list.join(delimiter);
          expect(serviceAccount(inPod()), list.join(delimiter)).toEqual(['https://10.96.0.1:443', token]);
        }
        // a file that is there still wins
        process.env.KUBECONFIG = [join(dir, 'missing'), file('good', one)].join(delimiter);
        expect(inPod().getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
      });

      // Regression: a kubeconfig holding only preferences (or contexts, but no current-context) was
      // refused ("names no current-context"); kubectl reads it as an empty configuration
      // (clientcmd's ErrEmptyConfig) and takes the service account
      it('takes the service account when the files name no cluster to use, as kubectl does; not for a current-context it lacks', () => {
        const contexts = 'contexts:\n- name: ctx\n  context: {cluster: gone, user: u}\n';
        for (const text of [
          'apiVersion: v1\nkind: Config\npreferences: {colors: true}\n',
          kubeconfigText({ clusters: { c: 'https://127.0.0.1:1' }, users: { u: { token: 'one' } }, contexts: { ctx: ['c', 'u'] } }),
          `apiVersion: v1\nkind: Config\n${contexts}current-context: ctx\n`,
        ]) {
          process.env.KUBECONFIG = file('prefs', text);
          expect(serviceAccount(inPod()), text).toEqual(['https://10.96.0.1:443', token]);
        }
        // a current-context naming no context is kubectl's error, not an empty configuration
        process.env.KUBECONFIG = file('prefs', `apiVersion: v1\nkind: Config\n${contexts}current-context: other\n`);
        expect(inPod().getCurrentContext()).toBe('other');
        // outside a pod, refused as before
        delete process.env.KUBERNETES_SERVICE_HOST;
        process.env.KUBECONFIG = file('prefs', 'apiVersion: v1\nkind: Config\npreferences: {}\n');
        expect(inPod().getCurrentCluster()).toBeNull();
      });

      // Regression: a context whose cluster the files lack was read as no configuration, and the
      // service account taken, whatever its user was; clientcmd's ConfirmUsable reads it so only
      // when the missing cluster is all it finds wrong: a user validateAuthInfo refuses makes the
      // configuration invalid, an error, kubectl takes no service account
      it('keeps the files when the context without a cluster has a user kubectl refuses, as kubectl does', () => {
        const EXEC_V1BETA1 = 'client.authentication.k8s.io/v1beta1';
        const here = join(dir, 'here.pem'); // a file that can be opened
        writeFileSync(here, 'x');
        const refused = {
          'a client certificate without a key': '{client-certificate-data: Zm9v}',
          'a client certificate file that cannot be opened': `{client-certificate: ${join(dir, 'gone.crt')}, client-key: ${join(dir, 'gone.key')}}`,
          'an exec entry without apiVersion': '{exec: {command: token-helper}}',
          'a client certificate by file and by data': `{client-certificate: ${here}, client-certificate-data: Zm9v, client-key-data: Zm9v}`,
          'a client key by file and by data': `{client-certificate-data: Zm9v, client-key-data: Zm9v, client-key: ${here}}`,
          'an exec entry and an auth-provider': `{exec: {apiVersion: ${EXEC_V1BETA1}, command: token-helper}, auth-provider: {name: oidc}}`,
          'an exec env entry without a name': `{exec: {apiVersion: ${EXEC_V1BETA1}, command: token-helper, env: [{value: x}]}}`,
          'a token and a username and password': '{token: t, username: u, password: p}',
          'a token and a password alone': '{token: t, password: p}',
          'an as-groups without as': '{token: t, as-groups: [dev]}',
          'an as-uid without as': '{token: t, as-uid: "1000"}',
          'an as-user-extra key without as, even without values': '{token: t, as-user-extra: {team: []}}',
        };
        for (const [what, user] of Object.entries(refused)) {
          process.env.KUBECONFIG = file(
            'contexts',
            `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: ${user}\ncontexts:\n- name: ctx\n  context: {cluster: gone, user: u}\ncurrent-context: ctx\n`,
          );
          const kc = inPod();
          expect([kc.getCurrentContext(), kc.getCurrentCluster()], what).toEqual(['ctx', null]);
        }
        // a user kubectl takes: the configuration is empty, and the service account is taken; a
        // token-file beside a username is no token to kubectl, and groups with `as` are its own
        writeFileSync(join(dir, 'token'), 'from-file');
        for (const user of [
          '{token: t}',
          `{tokenFile: ${join(dir, 'token')}, username: u, password: p}`,
          '{token: t, as: x, as-groups: [dev]}',
        ]) {
          process.env.KUBECONFIG = file(
            'contexts',
            `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: ${user}\ncontexts:\n- name: ctx\n  context: {cluster: gone, user: u}\ncurrent-context: ctx\n`,
          );
          expect(serviceAccount(inPod()), user).toEqual(['https://10.96.0.1:443', token]);
        }
      });

      // Regression: the command line's --kubeconfig FILE naming no cluster to use (preferences
      // only) was refused inside a pod; kubectl's loading rules read an explicit file as they read
      // $KUBECONFIG's, and the empty configuration falls back to the service account
      it('takes the service account for an explicit file that names no cluster to use, as kubectl --kubeconfig does', () => {
        const prefs = file('prefs', 'apiVersion: v1\nkind: Config\npreferences: {colors: true}\n');
        const kc = new KubeConfig();
        loadGivenKubeconfig(kc, readFileSync(prefs, 'utf8'), prefs, root);
        expect(serviceAccount(kc)).toEqual(['https://10.96.0.1:443', token]);
        // a file naming a cluster to use is used
        const good = file(
          'good',
          kubeconfigText({
            clusters: { c: 'https://127.0.0.1:1' },
            users: { u: { token: 'one' } },
            contexts: { ctx: ['c', 'u'] },
            current: 'ctx',
          }),
        );
        const used = new KubeConfig();
        loadGivenKubeconfig(used, readFileSync(good, 'utf8'), good, root);
        expect(used.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
        // outside a pod, left as loaded, for the caller to say what it lacks
        delete process.env.KUBERNETES_SERVICE_HOST;
        const outside = new KubeConfig();
        loadGivenKubeconfig(outside, readFileSync(prefs, 'utf8'), prefs, root);
        expect(outside.getCurrentCluster()).toBeNull();
      });

      // Regression: with contexts but no current-context, the files were replaced by the service
      // account even for a context asked for by name (the command line's --context), which kubectl
      // uses (clientcmd's contextName: the cluster to use is that context's)
      it('keeps the files when the context asked for names one of their clusters', () => {
        process.env.KUBECONFIG = file(
          'contexts',
          kubeconfigText({ clusters: { c: 'https://127.0.0.1:1' }, users: { u: { token: 'one' } }, contexts: { ctx: ['c', 'u'] } }),
        );
        const kc = new KubeConfig();
        loadDefaultKubeconfig(kc, root, 'ctx');
        expect(kc.getContextObject('ctx')?.cluster).toBe('c');
        // a context whose cluster they lack names no cluster to use: the service account
        process.env.KUBECONFIG = file(
          'contexts',
          'apiVersion: v1\nkind: Config\ncontexts:\n- name: ctx\n  context: {cluster: gone, user: u}\n',
        );
        const pod = new KubeConfig();
        loadDefaultKubeconfig(pod, root, 'ctx');
        expect(serviceAccount(pod)).toEqual(['https://10.96.0.1:443', token]);
      });

      it('not without both service variables, nor with a folder where the token belongs, as kubectl: refused, saying so', () => {
        process.env.KUBECONFIG = join(dir, 'a');
        for (const unset of ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) {
          const kept = process.env[unset];
          process.env[unset] = '';
          expect(inPod, unset).toThrow(
            `none of the files $KUBECONFIG names exists: ${JSON.stringify(join(dir, 'a'))}, and this is not a pod with a service account`,
          );
          process.env[unset] = kept;
        }
        rmSync(token);
        mkdirSync(token);
        expect(inPod).toThrow('and this is not a pod with a service account');
      });
    });

    it('holding only separators (or nothing between them) names no file: refused, not read as ~/.kube/config', () => {
      process.env.KUBECONFIG = `${delimiter}${delimiter}`;
      expect(loaded).toThrow(`$KUBECONFIG (${JSON.stringify(`${delimiter}${delimiter}`)}) names no file: it holds only path separators`);
    });

    // Regression: client-node refused the load ("Duplicate cluster: c") when two files named the
    // same cluster, user or context; kubectl takes the first file's entry whole.
    it('lets the first file to name a cluster, user or context win, whole, as kubectl does', () => {
      const first = file('first', one);
      const second = file(
        'second',
        kubeconfigText({
          clusters: { c: 'https://two.example:6443', other: 'https://other.example' },
          users: { u: { token: 'two' }, v: { token: 'v' } },
          contexts: { ctx: ['other', 'v'], ctx2: ['other', 'v'] },
          current: 'ctx2',
        }),
      );
      process.env.KUBECONFIG = [first, second].join(delimiter);
      const kc = loaded();
      expect(kc.getCurrentContext()).toBe('ctx');
      expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
      expect(kc.getCurrentUser()?.token).toBe('one');
      // what only the second names is merged in
      expect(kc.getClusters().map((c) => c.name)).toEqual(['c', 'other']);
      expect(kc.getUsers().map((u) => u.name)).toEqual(['u', 'v']);
      expect(kc.getContexts().map((c) => c.name)).toEqual(['ctx', 'ctx2']);
    });

    // Regression: a file that named a context (or cluster, or user) twice was taken, its first
    // entry of that name used and the other ignored; kubectl refuses the file ("duplicate name").
    it.each([
      ['contexts', (t: string) => t.replace('contexts:\n', 'contexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\n')],
      ['clusters', (t: string) => t.replace('clusters:\n', 'clusters:\n- name: c\n  cluster: {server: "https://other.example"}\n')],
      ['users', (t: string) => t.replace('users:\n', 'users:\n- name: u\n  user: {token: other}\n')],
    ])('refuses a file whose %s list names an entry twice, naming the file, by the library and the command line', async (list, twice) => {
      const name = { contexts: 'ctx', clusters: 'c', users: 'u' }[list]!;
      const said = `its ${list} list names "${name}" twice, which kubectl refuses too (duplicate name "${name}" in list): only the first would be used; rename or remove one`;
      const dup = file('dup', twice(one));
      // first in the list, or after a good file: each file of $KUBECONFIG is refused for it, as kubectl refuses it
      for (const files of [[dup], [file('good', one), dup]]) {
        process.env.KUBECONFIG = files.join(delimiter);
        expect(loaded).toThrow(KubeconfigFileError);
        expect(loaded).toThrow(`${JSON.stringify(dup)}: ${said}`);
        expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`${JSON.stringify(dup)}: ${said}`);
      }
      const r = await cli(['status', '--kubeconfig', dup]);
      expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(dup)}: ${said}\n`]);
      // a KubeConfig the caller loaded with client-node, which takes the file
      const kc = new KubeConfig();
      kc.loadFromFile(dup);
      expect(() => new KubernetesStore(kc, { start: false })).toThrow(new InvalidArgumentError(`KubernetesStore: the KubeConfig: ${said}`));
    });

    // Regression: client-node's merge took the last file's current-context, not the first's.
    it('takes the current-context of the first file that sets one', () => {
      const none = file('none', kubeconfigText({ clusters: { a: 'https://a.example' }, contexts: { a: ['a', 'x'] } }));
      const second = file('second', one);
      const third = file('third', kubeconfigText({ clusters: { b: 'https://b.example' }, contexts: { b: ['b', 'x'] }, current: 'b' }));
      process.env.KUBECONFIG = [none, second, third].join(delimiter);
      expect(loaded().getCurrentContext()).toBe('ctx');
    });

    it('reads a file named twice once', () => {
      const good = file('good', one);
      process.env.KUBECONFIG = [good, good].join(delimiter);
      expect(loaded().getClusters()).toHaveLength(1);
    });

    // Regression: the error was js-yaml's place and kind, or client-node's, naming no file of the list.
    it.each([
      ['malformed YAML', 'clusters: [\n', 'its YAML is malformed at line 2'],
      // one without a server is set aside, as kubectl takes it (kubeconfig-context-in-use.test.ts)
      ['a cluster that is no mapping', 'clusters:\n- name: x\n  cluster: 5\n', 'clusters[0].cluster.server is missing'],
      [
        'a context name YAML reads as a number',
        'contexts:\n- name: 1.10\n  context: {cluster: c}\n',
        'the name of entry 1 of contexts is read by YAML as the number 1.1, not as text, which kubectl cannot read either: quote it (name: "…")',
      ],
    ])('names the file of the list that cannot be loaded (%s)', (_what, text, said) => {
      const good = file('good', one);
      const bad = file('bad', text);
      process.env.KUBECONFIG = [good, bad].join(delimiter);
      expect(loaded).toThrow(KubeconfigFileError);
      expect(loaded).toThrow(`${JSON.stringify(bad)}: ${said}`);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
        `KubernetesStore: cannot load the default kubeconfig ($KUBECONFIG, else ~/.kube/config): ${JSON.stringify(bad)}: ${said}`,
      );
    });

    it('the command line reads it as the library does', async () => {
      const good = file('good', one);
      process.env.KUBECONFIG = [join(dir, 'missing'), good, file('dup', one)].join(delimiter);
      // loaded (no "Duplicate cluster", no ENOENT): the request then fails to reach the server
      const r = await cli(['status', '--request-timeout', '1s']);
      expect(r.stderr).not.toMatch(/Duplicate|ENOENT|cannot read/);
      expect(r.stderr).toContain('https://127.0.0.1:1');
    });
  });

  // Regression: client-node reads a user's token-file as it parses the kubeconfig, from the
  // working directory: a kubeconfig beside its token failed (ENOENT), or read another file of
  // that name. kubectl resolves it, and an exec command with a path separator, against the
  // kubeconfig's folder, as client-node already does for certificate-authority, client-certificate
  // and client-key.
  describe('relative paths in a kubeconfig', () => {
    const withUser = (user: Record<string, unknown>): string =>
      kubeconfigText({ clusters: { c: 'https://127.0.0.1:1' }, users: { u: user }, contexts: { ctx: ['c', 'u'] }, current: 'ctx' });
    const authorization = async (kc: KubeConfig): Promise<unknown> => {
      const opts: { headers: Record<string, string> } = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      return opts.headers['Authorization'];
    };

    it.each(['$KUBECONFIG', 'loadKubeconfigText'])('a token-file is read from the kubeconfig’s folder (%s)', async (how) => {
      mkdirSync(join(dir, 'sub'));
      writeFileSync(join(dir, 'sub', 'token'), 'token-from-the-folder\n');
      const path = file('sub/config', withUser({ 'token-file': 'token' }));
      const kc = new KubeConfig();
      if (how === '$KUBECONFIG') {
        process.env.KUBECONFIG = path;
        loadDefaultKubeconfig(kc);
      } else loadKubeconfigText(kc, withUser({ 'token-file': 'token' }), path);
      // without the line break the file ends in, as client-go reads a token file (strings.TrimSpace):
      // client-node 1.x's node-fetch refused it in the header, and said so quoting the token
      expect(await authorization(kc)).toBe('Bearer token-from-the-folder');
      // the rest of the kubeconfig as client-node reads it
      expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
      expect(kc.getCurrentContext()).toBe('ctx');
    });

    // Regression: kubectl's own key for a token file, `tokenFile` (client-go's clientcmd v1
    // AuthInfo), was dropped by client-node, which reads only `token-file`: requests went out
    // without credentials.
    it.each(['$KUBECONFIG', 'loadKubeconfigText'])(
      'kubectl’s tokenFile is read as token-file is (%s); a token given beside it wins',
      async (how) => {
        mkdirSync(join(dir, 'sub'));
        writeFileSync(join(dir, 'sub', 'token'), 'token-from-tokenFile\n');
        const text = withUser({ tokenFile: 'token' });
        const path = file('sub/config', text);
        const kc = new KubeConfig();
        if (how === '$KUBECONFIG') {
          process.env.KUBECONFIG = path;
          loadDefaultKubeconfig(kc);
        } else loadKubeconfigText(kc, text, path);
        expect(await authorization(kc)).toBe('Bearer token-from-tokenFile');

        const given = new KubeConfig();
        loadKubeconfigText(given, withUser({ token: 'given', tokenFile: '/dev/zero' }), path);
        expect(await authorization(given)).toBe('Bearer given');
      },
    );

    it('a tokenFile that does not exist, or is no text, is said naming tokenFile and the user', () => {
      process.env.KUBECONFIG = file('config', withUser({ tokenFile: 'missing-token' }));
      expect(loaded).toThrow(
        `the tokenFile ${JSON.stringify(join(dir, 'missing-token'))} of user "u" cannot be read: no such file or directory (ENOENT)`,
      );
      process.env.KUBECONFIG = file('config', withUser({ tokenFile: 1 }));
      expect(loaded).toThrow('the tokenFile of user "u" is a number, not text, and is not read');
    });

    it('a token-file that does not exist beside the kubeconfig is said with its absolute path', () => {
      process.env.KUBECONFIG = file('config', withUser({ 'token-file': 'missing-token' }));
      expect(loaded).toThrow(
        `the token-file ${JSON.stringify(join(dir, 'missing-token'))} of user "u" cannot be read: no such file or directory (ENOENT)`,
      );
    });

    it('an exec command with a path separator is run from the kubeconfig’s folder; a bare name is left to the PATH', async () => {
      mkdirSync(join(dir, 'bin'));
      const credential = JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        status: { token: 'token-from-the-plugin' },
      });
      writeFileSync(join(dir, 'bin', 'cred'), `#!/bin/sh\necho '${credential}'\n`);
      chmodSync(join(dir, 'bin', 'cred'), 0o755);
      const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: join('bin', 'cred'), interactiveMode: 'Never' };
      process.env.KUBECONFIG = file('config', withUser({ exec }));
      const kc = loaded();
      expect(kc.getCurrentUser()?.exec.command).toBe(join(dir, 'bin', 'cred'));
      if (process.platform !== 'win32') expect(await authorization(kc)).toBe('Bearer token-from-the-plugin');
      process.env.KUBECONFIG = file('bare', withUser({ exec: { ...exec, command: 'kubectl' } }));
      expect(loaded().getCurrentUser()?.exec.command).toBe('kubectl');
    });

    it('certificate-authority, client-certificate and client-key are made absolute against the folder', () => {
      const text = kubeconfigText({ users: {}, contexts: {} }).replace(
        'clusters:\n',
        'clusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1", certificate-authority: ca.pem}\n',
      );
      const kc = new KubeConfig();
      loadKubeconfigText(
        kc,
        text.replace('users:\n', 'users:\n- name: u\n  user: {client-certificate: c.pem, client-key: k.pem}\n'),
        join('rel', 'config'),
      );
      expect(kc.getCluster('c')?.caFile).toBe(join(process.cwd(), 'rel', 'ca.pem'));
      expect(kc.getUser('u')?.certFile).toBe(join(process.cwd(), 'rel', 'c.pem'));
      expect(kc.getUser('u')?.keyFile).toBe(join(process.cwd(), 'rel', 'k.pem'));
    });

    it('a crafted file whose aliases repeat a token-file user exponentially is refused, not written out', () => {
      const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 8; i++)
        lines.push(
          `a${i}: &a${i} [${Array(10)
            .fill(`*a${i - 1}`)
            .join(', ')}]`,
        );
      const text = `${withUser({ 'token-file': 'token' })}${lines.join('\n')}\n`;
      writeFileSync(join(dir, 'token'), 't');
      process.env.KUBECONFIG = file('config', text);
      expect(loaded).toThrow('its YAML aliases repeat more of it than a kubeconfig holds');
    });
  });

  // Regression: client-node reads a user's token-file whole and synchronously as it parses the
  // kubeconfig: a token-file that was /dev/zero, or a named pipe nothing writes to, held the
  // command line and the library for ever (the event loop stopped: waitForSync's timeout never
  // fired), and a 20 MB one was read whole and sent, to fail as "cannot reach the API server".
  // A token-file is now read as a kubeconfig is: bounded, and only a regular file or a pipe.
  describe('a token-file that is no small regular file', () => {
    const withTokenFile = (path: string): string =>
      kubeconfigText({
        clusters: { c: 'https://127.0.0.1:1' },
        users: { u: { 'token-file': path } },
        contexts: { ctx: ['c', 'u'] },
        current: 'ctx',
      });

    it.each([
      ['/dev/zero', (): string => '/dev/zero', 'is not read: it is a character device, not a regular file'],
      ['a directory', (): string => dir, 'is not read: it is a directory, not a regular file'],
      [
        'past 1 MiB',
        (): string => {
          const big = join(dir, 'big');
          writeFileSync(big, '');
          truncateSync(big, 1024 * 1024 + 1); // sparse: nothing is written
          return big;
        },
        'is not read: it holds more than 1 MiB (a token is a few KiB)',
      ],
    ] as const)('is refused, naming it and the user (%s), by the library and the command line', async (what, make, reason) => {
      if (what === '/dev/zero' && process.platform === 'win32') return;
      const tokenFile = make();
      const said = `the token-file ${JSON.stringify(tokenFile)} of user "u" ${reason}`;
      const path = file('config', withTokenFile(tokenFile));
      process.env.KUBECONFIG = path;
      expect(loaded).toThrow(`${JSON.stringify(path)}: ${said}`);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(said);
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(path)}: ${said}\n`]);
    });

    // Regression: the token-file's path was quoted with JSON.stringify, and Node's own message
    // repeated it as it is: a zero-width space or a right-to-left mark was shown as it is, a path
    // that looks like another; both are now escaped, as every other message escapes them
    it('a token-file that cannot be read is named with what a reader could not see escaped', () => {
      const tokenFile = join(dir, 'tok\u200ben');
      process.env.KUBECONFIG = file('config', withTokenFile(tokenFile));
      const shown = JSON.stringify(tokenFile).slice(1, -1).replace('\u200b', '\\u200b');
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
        `the token-file "${shown}" of user "u" cannot be read: no such file or directory (ENOENT)`,
      );
    });

    // Regression: a token-file key spelled with an escape ("token\\x2dfile", which YAML reads as
    // token-file) was not seen by the loader: client-node read it itself, from the working directory
    // rather than the kubeconfig's folder, and every user's, the ones not in use too
    it('a token-file key spelled with an escape is read as the plain key is: from the kubeconfig folder, the user in use only', async () => {
      const text = (user: string) =>
        kubeconfigOfUser('https://127.0.0.1:1', user).replace('users:\n', 'users:\n- name: other\n  user: {"token\\x2dfile": "gone"}\n');
      writeFileSync(join(dir, 'token'), 'from-the-folder\n');
      process.env.KUBECONFIG = file('config', text('{"token\\x2dfile": "token"}'));
      expect(loaded().getCurrentUser()?.token).toBe('from-the-folder');
      const path = file('config', text('{"token\\x2dfile": "missing"}'));
      const said = `the token-file ${JSON.stringify(join(dir, 'missing'))} of user "u" cannot be read: no such file or directory (ENOENT)`;
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`${JSON.stringify(path)}: ${said}`);
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(path)}: ${said}\n`]);
    });

    // Regression: a NUL in a path was said with Node's message, which quotes the path again
    // ("… without null bytes. Received '/tmp/a\\x00b'"): the path was shown twice
    it('a path holding a NUL is said once, with why in words (a token-file, --kubeconfig)', async () => {
      const tokenFile = join(dir, 'a\0b');
      const why = 'a file name cannot hold a NUL character (\\x00) (ERR_INVALID_ARG_VALUE)';
      const path = file('config', withTokenFile(tokenFile));
      process.env.KUBECONFIG = path;
      const said = `the token-file ${JSON.stringify(tokenFile).replace('\\u0000', '\\x00')} of user "u" cannot be read: ${why}`;
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`${JSON.stringify(path)}: ${said};`);
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(path)}: ${said}\n`]);
      const given = await cli(['status', '--kubeconfig', tokenFile]);
      const shown = JSON.stringify(tokenFile).replace('\\u0000', '\\x00');
      expect([given.code, given.stderr]).toEqual([2, `ipallocator: cannot read the file --kubeconfig names (${shown}): ${why}\n`]);
    });

    it('a named pipe nothing writes to is waited for 5 s, not for ever', { timeout: 20_000 }, async () => {
      if (process.platform === 'win32') return;
      const fifo = join(dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      process.env.KUBECONFIG = file('config', withTokenFile(fifo));
      const r = await cli(['status']);
      expect([r.code, r.stderr]).toEqual([
        2,
        `ipallocator: cannot read the default kubeconfig ($KUBECONFIG or ~/.kube/config): ${JSON.stringify(join(dir, 'config'))}: ` +
          `the token-file ${JSON.stringify(fifo)} of user "u" is not read: it is a named pipe (FIFO) nothing wrote to within 5 s, not a regular file\n`,
      ]);
    });

    it('a token-file of a user with a token is not read, as client-node does not read it', () => {
      process.env.KUBECONFIG = file(
        'config',
        kubeconfigText({
          clusters: { c: 'https://127.0.0.1:1' },
          users: { u: { token: 'given', 'token-file': '/dev/zero' } },
          contexts: { ctx: ['c', 'u'] },
          current: 'ctx',
        }),
      );
      expect(loaded().getCurrentUser()?.token).toBe('given');
    });
  });

  // Regression: client-node reads an empty token-file into an empty token and then sends no
  // Authorization header: every request went out anonymous, without a word. kubectl refuses it
  // ("read empty token from file").
  describe('a user whose token-file yields nothing', () => {
    // absolute: client-node's own loadFromFile reads a relative one from the working directory
    const withTokenFile = (): string =>
      kubeconfigText({
        clusters: { c: 'https://127.0.0.1:1' },
        users: { u: { 'token-file': join(dir, 'token') } },
        contexts: { ctx: ['c', 'u'] },
        current: 'ctx',
      });
    const said =
      'the token of user "u" (context "ctx") is empty: its token-file holds nothing, or only whitespace, and every request would go out without credentials ' +
      '(kubectl refuses it too: "read empty token from file"); write the token into the file, or use another context';

    it.each([
      ['empty', ''],
      ['only whitespace', ' \n\t\n'],
    ])('is refused, naming the user (%s), by the library and the command line', async (_what, token) => {
      writeFileSync(join(dir, 'token'), token);
      const path = file('config', withTokenFile());
      process.env.KUBECONFIG = path;
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`KubernetesStore: ${said}`);
      // a KubeConfig loaded by the caller, with client-node's own loadFromFile
      const kc = new KubeConfig();
      kc.loadFromFile(path);
      expect(() => new KubernetesStore(kc, { start: false })).toThrow(`KubernetesStore: ${said}`);
      for (const argv of [['status'], ['status', '--kubeconfig', path]]) {
        const r = await cli(argv);
        expect(r.code).toBe(2);
        expect(r.stderr).toBe(`ipallocator: cannot use context "ctx" of the kubeconfig "${path}": ${said}\n`);
      }
    });

    it('a token given empty in the kubeconfig is no token (no credentials, on purpose), as for kubectl', () => {
      process.env.KUBECONFIG = file(
        'config',
        withTokenFile().replace(JSON.stringify({ 'token-file': join(dir, 'token') }), '{"token":""}'),
      );
      void new KubernetesStore(undefined, { start: false }).close();
    });
  });
});

// Regression: a user's token-file was read once, when the kubeconfig was loaded: once the file
// was rewritten with a new token (a projected service-account token, one vault-agent writes), a
// long-running store sent the old one, got 401 for ever and stayed relisting. client-go reads the
// file again once its token is 50 s old (transport/token_source.go, NewCachedFileTokenSource),
// and keeps the token read before when the file cannot be read. The clock is made to move on
// (performance.now(), which the token's age is taken from) instead of waiting a minute.
describe('a token-file rewritten while a store runs', () => {
  const fixture = doubleAndFolder('ipallocator-token-rotation-', { tls: true });
  keepKubeconfigVariable();
  /** How far the fake clock has moved past the real one, in ms. */
  let skew = 0;
  const opened: KubernetesStore[] = [];
  beforeEach(() => {
    skew = 0;
    const now = performance.now.bind(performance);
    vi.spyOn(performance, 'now').mockImplementation(() => now() + skew);
  });
  afterEach(() => {
    for (const s of opened.splice(0)) s.close();
    vi.restoreAllMocks();
  });
  /** A store on the double, loading $KUBECONFIG itself: one kubeconfig whose user has `tokenFile: token` holding `token`. */
  const storeWithTokenFile = (token: string): { store: KubernetesStore; tokenFile: string } => {
    const tokenFile = join(fixture.folder, 'token');
    writeFileSync(tokenFile, token);
    const config = join(fixture.folder, 'config');
    writeFileSync(config, kubeconfigOfUser(fixture.double.url, '{tokenFile: token}'));
    process.env.KUBECONFIG = config;
    const store = new KubernetesStore(undefined, { backoff: { initialMs: 2, maxMs: 20 } });
    opened.push(store);
    return { store, tokenFile };
  };
  const authorizations = (): (string | undefined)[] => fixture.double.requests.map((r) => r.authorization);

  it('the new token is sent once the one read before is 50 s old, and a store left relisting by 401s syncs again', async () => {
    fixture.double.onlyToken = 'one';
    const { store, tokenFile } = storeWithTokenFile('one');
    await store.waitForSync({ timeoutMs: 10_000 });
    writeFileSync(tokenFile, 'two');
    fixture.double.onlyToken = 'two';
    // within the 50 s, the token read before is sent, as by client-go: the server refuses it
    skew += 49_000;
    expect(await store.get('10.0.0.1').catch((e: unknown) => e)).toMatchObject({ code: 401, reason: 'Unauthorized' });
    fixture.double.closeWatches();
    await until(() => store.state === 'relisting' && (store.lastError as { code?: unknown } | undefined)?.code === 401, '401 relisting');
    skew += 1_000;
    await until(() => store.state === 'synced', 'synced again');
    expect(await store.get('10.0.0.1')).toBeUndefined();
    expect(authorizations().at(-1)).toBe('Bearer two');
  });

  it('a file that cannot be read again keeps the token read before, said once on the console; the next good read is taken', async () => {
    fixture.double.onlyToken = 'one';
    const { store, tokenFile } = storeWithTokenFile('one');
    const said = vi.spyOn(console, 'error').mockImplementation(() => {});
    await store.waitForSync({ timeoutMs: 10_000 });
    for (const [what, make] of [
      ['gone', () => rmSync(tokenFile)],
      ['empty', () => writeFileSync(tokenFile, '\n')],
    ] as const) {
      make();
      skew += 50_000;
      said.mockClear();
      expect(await store.get('10.0.0.1')).toBeUndefined();
      expect(await store.get('10.0.0.2')).toBeUndefined();
      expect(authorizations().slice(-2), what).toEqual(['Bearer one', 'Bearer one']);
      expect(said, what).toHaveBeenCalledTimes(1);
      const why =
        what === 'gone'
          ? 'cannot be read: no such file or directory (ENOENT)'
          : 'holds nothing, or only whitespace (client-go: "read empty token from file")';
      expect(said).toHaveBeenCalledWith(
        `ipallocator: the tokenFile ${JSON.stringify(tokenFile)} of user "u" ${why}; the token read from it before is still sent (as kubectl does), and the file is read again at the next request`,
      );
    }
    // read again at the next request, the clock not moved on: a failed read is tried again
    writeFileSync(tokenFile, 'three');
    fixture.double.onlyToken = 'three';
    expect(await store.get('10.0.0.3')).toBeUndefined();
    expect(authorizations().at(-1)).toBe('Bearer three');
  });
});

// Regression: a user's as-uid, as-groups and as-user-extra were dropped (client-node keeps only
// `as`): requests impersonated the user with its own groups, not the ones named, and so ran with
// other rights than kubectl's. kubectl sends Impersonate-Uid, Impersonate-Group and
// Impersonate-Extra-<key> (client-go's impersonatingRoundTripper, the key escaped as its
// headerKeyEscape does).
describe('a user who impersonates a uid, a group or extra', () => {
  const fixture = doubleAndFolder('ipallocator-impersonation-');
  keepKubeconfigVariable();
  const config = (user: string): string => {
    const path = join(fixture.folder, 'config');
    writeFileSync(path, kubeconfigOfUser(fixture.double.url, user));
    return path;
  };
  /** The impersonation headers of each request the double received, sorted. */
  const impersonation = (): [string, string][][] =>
    fixture.double.requests.map((r) => r.headers.filter(([name]) => name.startsWith('impersonate-')).sort());

  it('sends them as kubectl does, from the library and the command line', async () => {
    const path = config(
      '{token: t, as: alice, as-uid: "1234", as-groups: [dev, "ops, team"], as-user-extra: {"scopes.example.com/x y": [one, two], "a%b": [v], none: []}}',
    );
    // one line per group and per value, as kubectl sends them: the API server takes each line whole
    const sent: [string, string][] = [
      ['impersonate-extra-a%25b', 'v'],
      ['impersonate-extra-scopes.example.com%2fx%20y', 'one'],
      ['impersonate-extra-scopes.example.com%2fx%20y', 'two'],
      ['impersonate-group', 'dev'],
      ['impersonate-group', 'ops, team'],
      ['impersonate-uid', '1234'],
      ['impersonate-user', 'alice'],
    ];
    process.env.KUBECONFIG = path;
    const store = new KubernetesStore(undefined);
    try {
      await store.waitForSync({ timeoutMs: 10_000 });
      await until(() => fixture.double.requestsOf('watch').length > 0, 'the watch');
      expect(await store.get('10.0.0.1')).toBeUndefined();
    } finally {
      store.close();
    }
    // the list, the watch and the get alike
    expect(fixture.double.requests.map((r) => r.verb)).toEqual(['list', 'watch', 'get']);
    expect(impersonation()).toEqual([sent, sent, sent]);
    fixture.double.requests.length = 0;
    await cli(['status', '--kubeconfig', path]);
    expect(fixture.double.requests.length).toBeGreaterThan(0);
    for (const headers of impersonation()) expect(headers).toEqual(sent);
  });

  it.each([
    [
      'groups without `as`',
      '{token: t, as-groups: [dev]}',
      'has as-uid, as-groups or as-user-extra but no `as`, which kubectl refuses too ("requesting uid, groups or user-extra for "u" without impersonating a user"); ' +
        'name the user to impersonate as `as`, or remove them',
    ],
  ])('%s: refused naming the user, by the library and the command line; nothing is sent', async (_what, user, reason) => {
    const said = `the user "u" (context "ctx") ${reason}`;
    const path = config(user);
    process.env.KUBECONFIG = path;
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`KubernetesStore: ${said}`);
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot use context "ctx" of the kubeconfig ${JSON.stringify(path)}: ${said}\n`]);
    expect(fixture.double.requests).toEqual([]);
  });

  // Regression: with client-node 2.x the request failed as it was sent, saying that the token,
  // password or exec credential held the character; with 1.x node-fetch's refusal was garbled.
  it.each([
    ['{token: t, as: "alice\\n"}', 'the as'],
    ['{token: t, as: alice, as-uid: "12\\r34"}', 'the as-uid'],
    ['{token: t, as: alice, as-groups: [dev, "ops\\u0000"]}', 'a group in the as-groups'],
    ['{token: t, as: alice, as-user-extra: {scopes: [one, "two\\n"]}}', 'a value of the as-user-extra key "scopes"'],
  ])('%s: refused naming the user and the field, by the library and the command line; nothing is sent', async (user, field) => {
    const said = `${field} of user "u" (context "ctx") has a control character (a line break, a NUL, a DEL) inside it, which no HTTP header may hold (kubectl refuses it too: "net/http: invalid header field value"; it is not shown): remove it`;
    const path = config(user);
    process.env.KUBECONFIG = path;
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(InvalidArgumentError);
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`KubernetesStore: ${said}`);
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot use context "ctx" of the kubeconfig ${JSON.stringify(path)}: ${said}\n`]);
    expect(fixture.double.requests).toEqual([]);
  });

  it('an `as` with a control character in a KubeConfig of client-node 1.x is refused the same', () => {
    const kc = new KubeConfig1();
    kc.loadFromString(kubeconfigOfUser(fixture.double.url, '{token: t, as: "alice\\n"}'));
    expect(() => new KubernetesStore(kc as unknown as KubeConfig, { start: false })).toThrow(
      'KubernetesStore: the as of user "u" (context "ctx") has a control character (a line break, a NUL, a DEL) inside it',
    );
  });

  // Regression: they were decided for the context current when the KubeConfig was taken: a user
  // current since sent none, as client-node sends its own token and `as` for the current user.
  // A store keeps the context it was made with (config.ts withContextAsMade): a store for another
  // context is another store, with that context's user, checked as it is made
  it('go with the user of the context a store was made with, whatever context is made current after', async () => {
    const text =
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${fixture.double.url}", insecure-skip-tls-verify: true}\n` +
      'users:\n- name: plain\n  user: {token: t}\n- name: impersonating\n  user: {token: t, as: alice, as-groups: [dev]}\n' +
      '- name: malformed\n  user: {token: t, as: alice, as-groups: dev}\n' +
      'contexts:\n- name: plain\n  context: {cluster: c, user: plain}\n- name: impersonating\n  context: {cluster: c, user: impersonating}\n' +
      '- name: malformed\n  context: {cluster: c, user: malformed}\ncurrent-context: plain\n';
    const kc = new KubeConfig();
    loadKubeconfigText(kc, text, join(fixture.folder, 'config'));
    const plain = new KubernetesStore(kc, { start: false });
    try {
      kc.setCurrentContext('impersonating');
      expect(await plain.get('10.0.0.1')).toBeUndefined(); // still plain's
      const impersonating = new KubernetesStore(kc, { start: false });
      try {
        expect(await impersonating.get('10.0.0.1')).toBeUndefined();
      } finally {
        impersonating.close();
      }
      kc.setCurrentContext('malformed');
      expect(() => new KubernetesStore(kc, { start: false })).toThrow(
        'the as-groups of user "malformed" (context "malformed") is not a list of text (it is not shown), and kubectl cannot read it either; write it as a list of text',
      );
      expect(await plain.get('10.0.0.1')).toBeUndefined(); // still plain's
    } finally {
      plain.close();
    }
    expect(impersonation()).toEqual([
      [],
      [
        ['impersonate-group', 'dev'],
        ['impersonate-user', 'alice'],
      ],
      [],
    ]);
  });

  it.each([
    ['as-uid', '{token: t, as: alice, as-uid: 5}', 'text'],
    ['as-groups', '{token: t, as: alice, as-groups: dev}', 'a list of text'],
    ['as-user-extra', '{token: t, as: alice, as-user-extra: {scopes: one}}', 'a mapping of keys to lists of text'],
  ])('an %s of the wrong shape is refused, naming the user and the field, its value not shown', async (field, user, should) => {
    const said = `the ${field} of user "u" (context "ctx") is not ${should} (it is not shown), and kubectl cannot read it either; write it as ${should}`;
    process.env.KUBECONFIG = config(user);
    expect(() => new KubernetesStore(undefined, { start: false })).toThrow(`KubernetesStore: ${said}`);
  });
});

// Regression: client-node takes a user's fields as they are: `token: [a, b]` was sent as
// "Bearer a,b", `token: 12345` as "Bearer 12345", a list under `as` as an Impersonate-User header;
// kubectl cannot decode such a kubeconfig. They are refused, naming the user and the field,
// never showing the value.
describe('a user field that is no text', () => {
  const fixture = doubleAndFolder('ipallocator-not-text-');
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);

  it.each([
    ['{token: [a, b]}', 'token', 'a list'],
    ['{token: 12345}', 'token', 'a number'],
    ['{username: admin, password: 1234}', 'password', 'a number'],
    ['{token: t, as: [a, b]}', 'as', 'a list'],
    ['{client-certificate-data: {a: b}, client-key-data: a2V5}', 'client-certificate-data', 'a mapping'],
  ])('%s is refused, naming the user and the %s, by the library and the command line; nothing is sent', async (user, field, kind) => {
    const said =
      `the ${field} of user "u" (context "ctx") is ${kind}, not text (it is not shown), and would be used as it is ` +
      '(kubectl cannot read it either); write it as text, quoted where YAML would read it as something else';
    await expectRefusedBoth(fixture, text(user), said);
  });

  it('a token-file that is no text is refused, not read as a file descriptor', async () => {
    const path = join(fixture.folder, 'config');
    writeFileSync(path, text('{token-file: 1}'));
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([
      2,
      `ipallocator: cannot read ${JSON.stringify(path)}: the token-file of user "u" is a number, not text, and is not read\n`,
    ]);
    expect(fixture.double.requests).toEqual([]);
  });
});

// Regression: client-node reads a user whose `user` is no mapping (`user: [1]`, `user: 5`) as a
// user without credentials, and every request went out anonymous; kubectl cannot decode such a
// kubeconfig ("cannot unmarshal array into Go struct field NamedAuthInfo.users.user").
describe('a user whose entry is no mapping', () => {
  const fixture = doubleAndFolder('ipallocator-user-not-mapping-');
  keepKubeconfigVariable();

  it.each([
    ['[1]', 'a list'],
    ['5', 'a number'],
    ['"a-token"', 'a string'],
    ['true', 'true or false'],
    ['0', 'a number'],
  ])('user: %s is refused as the kubeconfig is read, by the library and the command line; nothing is sent', async (user, kind) => {
    const path = join(fixture.folder, 'config');
    writeFileSync(path, kubeconfigOfUser(fixture.double.url, user));
    const said =
      `the user field of user "u" is ${kind}, not a mapping (it is not shown), which kubectl cannot read either: ` +
      'write its credentials as a mapping (user: {token: …}), or user: {} for none';
    await refusedAsRead(path, said, 'a-token');
    expect(fixture.double.requests).toEqual([]);
  });

  it.each(['{}', 'null', ''])('user: %s is a user without credentials, as kubectl reads it', async (user) => {
    const path = join(fixture.folder, 'config');
    writeFileSync(path, kubeconfigOfUser(fixture.double.url, user));
    process.env.KUBECONFIG = path;
    expect(await authorizationsOfOneGet(undefined, fixture.double)).toEqual([undefined]);
  });
});

// Regression: client-node reads clusters, users or contexts that YAML reads as no list (a mapping
// of names, a text) as an empty list: the kubeconfig then seemed to lack the user its context names
// (`user "u" was not found for context "ctx"`). kubectl cannot decode it ("cannot unmarshal object
// into Go struct field Config.users of type []v1.NamedAuthInfo").
describe('a kubeconfig whose clusters, users or contexts are no list', () => {
  const fixture = doubleAndFolder('ipallocator-list-not-list-');
  keepKubeconfigVariable();
  const entry = {
    clusters: '- name: c, with cluster: {server: …} under it',
    users: '- name: u, with user: {…} under it',
    contexts: '- name: ctx, with context: {cluster: c, user: u} under it',
  };

  it.each([
    ['users', 'users:\n  u: {token: the-secret}\n', 'a mapping'],
    ['users', 'users: the-secret\n', 'a string'],
    ['clusters', 'clusters:\n  c: {server: "https://127.0.0.1:1"}\n', 'a mapping'],
    ['contexts', 'contexts: {}\n', 'a mapping'],
    ['contexts', 'contexts: 5\n', 'a number'],
  ] as const)(
    '%s written as %j is refused as the kubeconfig is read, naming the field, by the library and the command line',
    async (field, written, kind) => {
      const lines = kubeconfigOfUser(fixture.double.url, '{token: the-secret}').split('\n');
      // the field's own lines replaced by `written`
      const start = lines.indexOf(`${field}:`);
      lines.splice(start, 3, written.trimEnd());
      const path = join(fixture.folder, 'config');
      writeFileSync(path, lines.join('\n'));
      const said =
        `its ${field} field is ${kind}, not a list (what it holds is not shown), which kubectl cannot read either: ` +
        `write each entry as an item of the list (${entry[field]})`;
      await refusedAsRead(path, said, 'the-secret');
      expect(fixture.double.requests).toEqual([]);
    },
  );

  it.each(['users: null', 'users: []', 'users:'])('%s is a kubeconfig without users, as kubectl reads it', (written) => {
    const kc = new KubeConfig();
    loadKubeconfigText(kc, `apiVersion: v1\nkind: Config\n${written}\n`, join(fixture.folder, 'config'));
    expect(kc.users).toEqual([]);
  });
});

// Regression: client-node takes only true as true: `insecure-skip-tls-verify: "true"` (quoted), `yes`
// or `1` was read as false, the server's certificate checked where the file seemed to say not to,
// and an http:// server refused as needing `insecure-skip-tls-verify: true`. kubectl cannot decode a
// quoted "true" or a number ("cannot unmarshal string into Go struct field
// Cluster.clusters.cluster.insecure-skip-tls-verify of type bool"), and reads yes unquoted as true.
describe('an insecure-skip-tls-verify that is no true or false', () => {
  const fixture = doubleAndFolder('ipallocator-insecure-not-boolean-');
  keepKubeconfigVariable();

  it.each([
    ['"true"', 'the text "true"'],
    ['"false"', 'the text "false"'],
    ['yes', 'the text "yes"'],
    ['1', 'a number'],
    ['[true]', 'a list'],
  ])(
    '%s, in the cluster in use or another, is refused as the kubeconfig is read, by the library and the command line',
    async (value, what) => {
      const path = join(fixture.folder, 'config');
      const said = (cluster: string) =>
        `the insecure-skip-tls-verify of cluster "${cluster}" is ${what}, not true or false: @kubernetes/client-node would read it as ` +
        "false and check the server's certificate, where kubectl refuses the file (or reads yes, on and y, unquoted, as true); " +
        'write true or false, unquoted';
      const inUse = kubeconfigOfUser(fixture.double.url, '{token: t}').replace(
        'insecure-skip-tls-verify: true',
        `insecure-skip-tls-verify: ${value}`,
      );
      const other = kubeconfigOfUser(fixture.double.url, '{token: t}').replace(
        'users:',
        `- name: other\n  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: ${value}}\nusers:`,
      );
      for (const [text, cluster] of [
        [inUse, 'c'],
        [other, 'other'],
      ] as const) {
        writeFileSync(path, text);
        process.env.KUBECONFIG = path;
        expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
          `KubernetesStore: cannot load the default kubeconfig ($KUBECONFIG, else ~/.kube/config): ${JSON.stringify(path)}: ${said(cluster)}`,
        );
        const r = await cli(['status', '--kubeconfig', path]);
        expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(path)}: ${said(cluster)}\n`]);
      }
      expect(fixture.double.requests).toEqual([]);
    },
  );

  it.each(['true', 'True', 'false', 'null', ''])('insecure-skip-tls-verify: %s is taken, as kubectl takes it', (value) => {
    const kc = new KubeConfig();
    const text = kubeconfigOfUser('https://127.0.0.1:1', '{token: t}').replace(
      'insecure-skip-tls-verify: true',
      `insecure-skip-tls-verify: ${value}`,
    );
    loadKubeconfigText(kc, text, join(fixture.folder, 'config'));
    expect(kc.getCurrentCluster()?.skipTLSVerify).toBe(value === 'true' || value === 'True');
  });
});

// Regression: client-node keeps a user's auth-provider as YAML read it, and one that is no mapping
// (`auth-provider: text`), or whose name is no text (`{name: 5}`), is taken by none of its
// authenticators: every request went out without credentials. kubectl cannot decode such a
// kubeconfig ("cannot unmarshal string into Go struct field AuthInfo.users.user.auth-provider"),
// whichever user has it.
describe('an auth-provider kubectl cannot read', () => {
  const fixture = doubleAndFolder('ipallocator-auth-provider-not-read-');
  keepKubeconfigVariable();
  const tail = ', which kubectl cannot read either (what it holds is not shown)';
  const quote = `${tail}: write it as text, quoted where YAML would read it as something else`;
  const mapping = `${tail}: write it as a mapping of its name and config (auth-provider: {name: oidc, config: {…}})`;

  it.each([
    ['the-secret', `is a string, not a mapping${mapping}`],
    ['5', `is a number, not a mapping${mapping}`],
    ['[the-secret]', `is a list, not a mapping${mapping}`],
    ['{name: 5}', `has a name that is a number, not text${quote}`],
    ['{name: oidc, config: [the-secret]}', `has a config that is a list, not a mapping of texts${tail}`],
    ['{name: oidc, config: {id-token: 12345}}', `has a config entry "id-token" that is a number, not text${quote}`],
    ['{name: exec, config: {exec: {command: the-secret}}}', `has a config entry "exec" that is a mapping, not text${quote}`],
  ])(
    'auth-provider: %s, in use or not, is refused as the kubeconfig is read, by the library and the command line',
    async (provider, why) => {
      const path = join(fixture.folder, 'config');
      // the user in use (u), then another (u has a token): the file is refused either way
      const cases: [user: string, other: string, named: string][] = [
        [`{auth-provider: ${provider}}`, '{token: t}', '"u"'],
        ['{token: t}', `{auth-provider: ${provider}}`, '"other"'],
      ];
      for (const [user, other, named] of cases) {
        writeFileSync(path, kubeconfigOfUser(fixture.double.url, user).replace('contexts:', `- name: other\n  user: ${other}\ncontexts:`));
        const said = `the auth-provider of user ${named} ${why}`;
        await refusedAsRead(path, said, 'the-secret');
      }
      expect(fixture.double.requests).toEqual([]);
    },
  );
});

// Regression: client-node sends a request without credentials when none of its authenticators
// takes the user's auth-provider (`{name: foo}`, `{}`), or when the one that does finds nothing
// (`{name: exec}` without an exec entry, `oidc` without an id-token); kubectl refuses them ("no
// Auth Provider found for name "foo"", "No valid id-token, and cannot refresh without
// refresh-token").
describe('an auth-provider that gives client-node nothing to send', () => {
  const fixture = doubleAndFolder('ipallocator-auth-provider-nothing-', { tls: true });
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);
  const who = 'the auth-provider of user "u" (context "ctx")';
  const without = 'and every request would go out without credentials';
  const unknown = (name: string) =>
    `${who} is named "${name}", which none of the authenticators of @kubernetes/client-node takes, ${without} (kubectl refuses ` +
    `it too, saying no Auth Provider found for name "${name}"); name one they take (oidc, gcp, azure), or use an exec entry (exec: {…}) instead`;
  const oidc =
    `${who} is oidc without an id-token in its config, and @kubernetes/client-node sends none without one (it refreshes only an ` +
    `id-token it has), ${without} (kubectl refuses it too: "No valid id-token, and cannot refresh without refresh-token" ` +
    'when it has no refresh-token); log in again to write its id-token, or use an exec entry (exec: {…}) that gets one';

  it.each([
    ['{name: foo, config: {access-token: the-secret}}', unknown('foo')],
    ['{}', unknown('')],
    ['{name: ""}', unknown('')],
    [
      '{name: exec}',
      `${who} is named "exec" but holds no exec entry for @kubernetes/client-node to run, ${without} (kubectl refuses it too, ` +
        'saying no Auth Provider found for name "exec"); give the user an exec entry of its own (exec: {apiVersion: …, command: …})',
    ],
    ['{name: oidc}', oidc],
    ['{name: oidc, config: {idp-issuer-url: "https://issuer.example", client-id: k, refresh-token: the-secret}}', oidc],
  ])('auth-provider: %s is refused before any request, by the library and the command line', async (provider, said) => {
    const r = await expectRefusedBoth(fixture, text(`{auth-provider: ${provider}}`), said);
    expect(r.stderr).not.toContain('the-secret');
  });

  it('one that is no mapping, in a KubeConfig loaded by client-node, is refused by the library', () => {
    const kc = new KubeConfig();
    kc.loadFromString(text('{auth-provider: the-secret}'));
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(
      `KubernetesStore: ${who} is a string, not a mapping, which kubectl cannot read either (what it holds is not shown): ` +
        'write it as a mapping of its name and config (auth-provider: {name: oidc, config: {…}})',
    );
  });

  // Regression: `{name: 5}` was said to be named "", and kubectl to say no Auth Provider found for name ""
  it.each([
    ['{name: 5}', 'has a name that is a number, not text'],
    ['{name: [the-secret]}', 'has a name that is a list, not text'],
  ])('auth-provider: %s, in a KubeConfig loaded by client-node, is refused as the loader refuses it', (provider, why) => {
    const kc = new KubeConfig();
    kc.loadFromString(text(`{auth-provider: ${provider}}`));
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(
      `KubernetesStore: ${who} ${why}, which kubectl cannot read either (what it holds is not shown): ` +
        'write it as text, quoted where YAML would read it as something else',
    );
  });

  it('one an authenticator of the caller takes (kc.addAuthenticator) is sent with what it gives', async () => {
    const kc = new KubeConfig();
    kc.addAuthenticator({
      isAuthProvider: (user) => user.authProvider?.name === 'in-house',
      applyAuthentication: async (_user, opts) => {
        opts.headers = { ...opts.headers, Authorization: 'Bearer in-house' };
      },
    });
    kc.loadFromString(text('{auth-provider: {name: in-house}}'));
    expect(await authorizationsOfOneGet(kc, fixture.double)).toEqual(['Bearer in-house']);
  });

  it('oidc with an id-token is sent with it', async () => {
    const kc = new KubeConfig();
    // an unsigned JWT whose exp is far ahead: client-node sends it without refreshing it
    const jwt = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"exp":4102444800}').toString('base64url')}.`;
    kc.loadFromString(
      text(`{auth-provider: {name: oidc, config: {idp-issuer-url: "https://issuer.example", client-id: k, id-token: "${jwt}"}}}`),
    );
    expect(await authorizationsOfOneGet(kc, fixture.double)).toEqual([`Bearer ${jwt}`]);
  });
});

// kubectl sends a kubeconfig's token as it is, and Go's HTTP client refuses a header holding a
// control character. Regression: with client-node 1.x a token ending in a line break failed as
// each request was sent, with a message saying that fetch leaves such a line break out (node-fetch
// does not); one with a control character inside failed the same way with either version.
describe('a token that no HTTP header can hold', () => {
  const fixture = doubleAndFolder('ipallocator-token-header-', { tls: true });
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);
  const refusal = 'which no HTTP header may hold (kubectl refuses it too: "net/http: invalid header field value"; it is not shown)';

  it.each([
    ['2.x', KubeConfig],
    ['1.x', KubeConfig1 as unknown as typeof KubeConfig],
  ])(
    'one with a control character inside it is refused before any request, naming the user and the token (client-node %s)',
    async (_major, Kc) => {
      for (const user of ['{token: "ab\\ncd"}', '{token: "ab\\u0000cd"}', '{token: "ab\\u007fcd\\n"}']) {
        const kc = new Kc();
        kc.loadFromString(text(user));
        expect(() => new KubernetesStore(kc, { start: false })).toThrow(InvalidArgumentError);
        expect(() => new KubernetesStore(kc, { start: false })).toThrow(
          `KubernetesStore: the token of user "u" (context "ctx") has a control character (a line break, a NUL, a DEL) inside it, ${refusal}: remove it`,
        );
      }
      expect(fixture.double.requests).toEqual([]);
    },
  );

  it('the command line says it of the context', async () => {
    const path = join(fixture.folder, 'config');
    writeFileSync(path, text('{token: "ab\\ncd"}'));
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([
      2,
      `ipallocator: cannot use context "ctx" of the kubeconfig "${path}": the token of user "u" (context "ctx") has a control character (a line break, a NUL, a DEL) inside it, ${refusal}: remove it\n`,
    ]);
    expect(fixture.double.requests).toEqual([]);
  });

  it('with client-node 1.x, one ending in a line break is refused before any request, saying so', () => {
    const kc = new KubeConfig1();
    kc.loadFromString(text('{token: "abcd\\n"}'));
    expect(() => new KubernetesStore(kc as unknown as KubeConfig, { start: false })).toThrow(
      `KubernetesStore: the token of user "u" (context "ctx") ends in a line break, which @kubernetes/client-node 1.x sends as it is, and ${refusal}: ` +
        'remove it from the token, or from the token-file client-node read it from, or use @kubernetes/client-node 2.x, whose fetch leaves it out',
    );
    expect(fixture.double.requests).toEqual([]);
  });

  it('with client-node 2.x, one ending in a line break is sent without it (its fetch leaves it out)', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(text('{token: "abcd\\r\\n"}'));
    expect(await authorizationsOfOneGet(kc, fixture.double)).toEqual(['Bearer abcd']);
  });
});

// Regression: client-node builds basic authentication as `${username}:${password}`, and a user with
// a username and no password sent `Basic base64("admin:undefined")` (`admin:null` for `password:`
// left empty), which the server reads as the password "undefined"; kubectl sends `admin:`.
describe('a user with a username and no password', () => {
  const fixture = doubleAndFolder('ipallocator-username-alone-', { tls: true });
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);

  it.each([
    ['2.x', '{username: admin}', KubeConfig],
    ['2.x', '{username: admin, password: null}', KubeConfig],
    ['1.x', '{username: admin}', KubeConfig1 as unknown as typeof KubeConfig],
  ])(
    'sends it as username: with an empty password, as kubectl does: its list, watch and get (client-node %s, %s)',
    async (_major, user, Kc) => {
      const kc = new Kc();
      kc.loadFromString(text(user));
      const store = new KubernetesStore(kc);
      try {
        await store.waitForSync({ timeoutMs: 10_000 });
        await until(() => fixture.double.requestsOf('watch').length > 0, 'the watch');
        expect(await store.get('10.0.0.1')).toBeUndefined();
      } finally {
        store.close();
      }
      expect(fixture.double.requests.map((r) => [r.verb, r.authorization])).toEqual([
        ['list', `Basic ${base64('admin:')}`],
        ['watch', `Basic ${base64('admin:')}`],
        ['get', `Basic ${base64('admin:')}`],
      ]);
    },
  );

  it('the command line sends it so too', async () => {
    const path = join(fixture.folder, 'config');
    writeFileSync(path, text('{username: admin}'));
    await cli(['status', '--kubeconfig', path]);
    expect(fixture.double.requests.length).toBeGreaterThan(0);
    expect(new Set(fixture.double.requests.map((r) => r.authorization))).toEqual(new Set([`Basic ${base64('admin:')}`]));
  });
});

// Regression: a username holding a ":" was sent as it is (`Basic base64("admin:x:secret")`), which
// the server reads as the user "admin" with the password "x:secret" (RFC 7617 allows no ":" in a
// username); kubectl sends it so too, and it fails at the server as a wrong password.
describe('a user whose username holds a colon', () => {
  const fixture = doubleAndFolder('ipallocator-username-colon-', { tls: true });
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);

  it('is refused, naming the user, by the library and the command line; the username is not shown, nothing is sent', async () => {
    const said =
      'the username of user "u" (context "ctx") holds a ":", which HTTP basic authentication cannot carry (RFC 7617): the server ' +
      'would read the username only up to it, and the rest as part of the password (kubectl sends it so all the same; it is not ' +
      'shown); put the username alone in username, and the password in password';
    const r = await expectRefusedBoth(fixture, text('{username: "admin:hunter2", password: secret}'), said);
    expect(r.stderr).not.toContain('hunter2');
  });

  it('a password holding one is sent, as RFC 7617 allows', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(text('{username: admin, password: "a:b"}'));
    expect(await authorizationsOfOneGet(kc, fixture.double)).toEqual([`Basic ${base64('admin:a:b')}`]);
  });
});

// Regression: a current user with a token beside a username or password was taken, and
// client-node sent the token alone; kubectl refuses it ("more than one authentication method
// found"), as the loader already judged such a user when deciding whether to take a pod's service
// account
describe('a user with a token beside a username or password', () => {
  const fixture = doubleAndFolder('ipallocator-two-methods-', { tls: true });
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);
  const end =
    ', two ways to authenticate, which kubectl refuses too ("more than one authentication method found"; ' +
    '@kubernetes/client-node would send the token alone): keep one, or use another context';

  it.each([
    ['{token: t, username: admin, password: secret}', 'username'],
    ['{token: t, password: secret}', 'password'],
  ])('%s is refused, naming the user, by the library and the command line; nothing is sent', async (user, other) => {
    const said = `the user "u" (context "ctx") has a token and a ${other}${end}`;
    const r = await expectRefusedBoth(fixture, text(user), said);
    expect(r.stderr).not.toContain('secret');
  });

  // Regression: a token-file (read for client-node by the loader, kept as the user's token) beside
  // a username was taken and its token sent alone; kubectl's transport refuses the pair
  it('a token-file beside a username is refused by the command line, naming the user; nothing is sent', async () => {
    const token = join(fixture.folder, 'token');
    writeFileSync(token, 'from-file');
    const path = join(fixture.folder, 'config');
    writeFileSync(path, text(`{tokenFile: ${token}, username: admin}`));
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([
      2,
      `ipallocator: cannot use context "ctx" of the kubeconfig "${path}": the user "u" (context "ctx") has a token-file and a username, ` +
        'two ways to authenticate, which kubectl refuses too ("username/password or bearer token may be set, but not both"; ' +
        '@kubernetes/client-node would send the token alone): keep one, or use another context\n',
    ]);
    expect(fixture.double.requests).toEqual([]);
  });

  it("a token-file beside a username, under client-node's key, is refused by the library loading the kubeconfig; nothing is sent", () => {
    const token = join(fixture.folder, 'token');
    writeFileSync(token, 'from-file');
    const path = join(fixture.folder, 'config');
    writeFileSync(path, text(`{token-file: ${token}, username: admin}`));
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = path;
    try {
      expect(() => new KubernetesStore(undefined, { start: false })).toThrow(
        'KubernetesStore: the user "u" (context "ctx") has a token-file and a username, two ways to authenticate, which kubectl refuses too',
      );
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
    expect(fixture.double.requests).toEqual([]);
  });

  it('a token-file beside a password alone is no second method to kubectl: taken, and its token sent', async () => {
    const token = join(fixture.folder, 'token');
    writeFileSync(token, 'from-file');
    const path = join(fixture.folder, 'config');
    writeFileSync(path, text(`{tokenFile: ${token}, password: secret}`));
    await cli(['status', '--kubeconfig', path]);
    expect(fixture.double.requests.length).toBeGreaterThan(0);
    for (const request of fixture.double.requests) expect(request.authorization).toBe('Bearer from-file');
  });
});

// Regression: client-node connects without a client certificate when a user has one without its
// key (or a key without its certificate), and every request went out without credentials;
// kubectl refuses a certificate without a key.
describe('a user with half a client certificate', () => {
  const fixture = doubleAndFolder('ipallocator-half-cert-');
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);
  const certificateOnly =
    ' (kubectl refuses it too: "client-key-data or client-key must be specified"); add its key, or use another context';

  it.each([
    ['{client-certificate: /etc/client.crt}', 'a client-certificate but no client-key or client-key-data', certificateOnly],
    ['{client-certificate-data: Y2VydA==}', 'a client-certificate-data but no client-key or client-key-data', certificateOnly],
    [
      '{client-key: /etc/client.key}',
      'a client-key but no client-certificate or client-certificate-data',
      '; add its certificate, or use another context',
    ],
    [
      '{client-key-data: a2V5}',
      'a client-key-data but no client-certificate or client-certificate-data',
      '; add its certificate, or use another context',
    ],
  ])('%s is refused, naming the user, by the library and the command line; nothing is sent', async (user, has, end) => {
    const said = `the user "u" (context "ctx") has ${has}: no client certificate would be sent, and every request would go out without credentials${end}`;
    await expectRefusedBoth(fixture, text(user), said);
  });

  it('a certificate with its key, by file or data, is no half', () => {
    const kc = new KubeConfig();
    kc.loadFromString(text(`{client-certificate-data: ${base64(CLIENT_CERT)}, client-key: /etc/client.key, token: t}`));
    new KubernetesStore(kc, { start: false }).close();
  });
});

// Regression: for an http:// server (insecure-skip-tls-verify) a client certificate or key that
// does not parse was taken without a word, and every request went out without credentials (over
// https:// the request fails on it, naming the field). client-node fails every request on it over
// http:// too, so it is refused before any; kubectl, which reads it only for https://, takes it.
describe('a user whose client certificate or key cannot be used, for an http:// server', () => {
  const fixture = doubleAndFolder('ipallocator-bad-cert-');
  const text = (user: string): string => kubeconfigOfUser(fixture.double.url, user);
  const then =
    ': the server is http://, where no client certificate is sent, yet @kubernetes/client-node 2.x fails every request on it ' +
    '(kubectl, which reads it only for an https:// server, takes it); correct it, or use another context';

  it.each([
    [
      'a certificate that does not parse',
      `{client-certificate-data: ${base64('not a certificate')}, client-key-data: ${base64(CLIENT_KEY)}}`,
      'the client-certificate-data of user "u" in the kubeconfig is not a certificate (PEM)',
    ],
    [
      'a key that does not parse',
      `{client-certificate-data: ${base64(CLIENT_CERT)}, client-key-data: ${base64('not a key')}}`,
      'the client-key-data of user "u" in the kubeconfig is not a private key (PEM, unencrypted)',
    ],
    [
      'a key that is not the certificate’s',
      `{client-certificate-data: ${base64(CLIENT_CERT)}, client-key-data: ${base64(OTHER_KEY)}}`,
      `the client-key-data of user "u" in the kubeconfig does not match its client-certificate-data (the key is not the certificate's)`,
    ],
  ])('%s is refused, naming the field, by the library and the command line; nothing is sent', async (_what, user, problem) => {
    const kc = new KubeConfig();
    kc.loadFromString(text(user));
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(InvalidArgumentError);
    expect(() => new KubernetesStore(kc, { start: false })).toThrow(`KubernetesStore: ${problem}${then}`);
    const path = join(fixture.folder, 'config');
    writeFileSync(path, text(user));
    const r = await cli(['status', '--kubeconfig', path]);
    expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot use context "ctx" of the kubeconfig "${path}": ${problem}${then}\n`]);
    expect(fixture.double.requests).toEqual([]);
  });

  it('a certificate with its own key is taken', () => {
    const kc = new KubeConfig();
    kc.loadFromString(text(`{client-certificate-data: ${base64(CLIENT_CERT)}, client-key-data: ${base64(CLIENT_KEY)}}`));
    new KubernetesStore(kc, { start: false }).close();
  });

  // As over https://: client-node reads the files for each request, over http:// too, and the
  // request fails on the one it cannot read before anything is sent, naming it
  it('a certificate or key file that cannot be read: each request fails before it is sent, naming the file, as over https://', async () => {
    const missing = join(fixture.folder, 'missing');
    for (const [user, field] of [
      [`{client-certificate: ${missing}, client-key-data: ${base64(CLIENT_KEY)}}`, 'client-certificate'],
      [`{client-certificate-data: ${base64(CLIENT_CERT)}, client-key: ${missing}}`, 'client-key'],
    ]) {
      const said = `the request to ${fixture.double.url} was not sent: cannot read the ${field} file of user "u" in the kubeconfig ("${missing}"): no such file or directory (ENOENT)`;
      const kc = new KubeConfig();
      kc.loadFromString(text(user!));
      const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
      await expect(store.get('10.0.0.1')).rejects.toThrow(`get ipaddresses.networking.k8s.io "10.0.0.1": ${said}`);
      store.close();
      const path = join(fixture.folder, 'config');
      writeFileSync(path, text(user!));
      const r = await cli(['status', '--kubeconfig', path, '--request-timeout', '10s']);
      expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot use context "ctx" of the kubeconfig ${JSON.stringify(path)}: ${said}\n`]);
    }
    expect(fixture.double.requests).toEqual([]);
  });
});

// Regression: client-node sends a request anonymous when the exec credential plugin's
// ExecCredential has an empty status (no token, no client certificate); kubectl refuses it
// ("exec plugin didn't return a token or cert/key pair").
describe('an exec credential plugin that returns no credential', () => {
  const fixture = doubleAndFolder('ipallocator-exec-empty-', { tls: true });
  const plugin = (status: object, Kc: typeof KubeConfig = KubeConfig): KubeConfig => {
    const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status };
    const kc = new Kc();
    kc.loadFromOptions({
      clusters: [{ name: 'double', server: fixture.double.url, skipTLSVerify: true }],
      users: [
        {
          name: 'tester',
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            interactiveMode: 'Never',
            command: process.execPath,
            args: ['-e', `console.log(${JSON.stringify(JSON.stringify(credential))})`],
          },
        },
      ],
      contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
      currentContext: 'double',
    });
    return kc;
  };

  it('is refused with KubeconfigCredentialError naming the user, and nothing is sent', async () => {
    const s = new KubernetesStore(plugin({}), { start: false });
    try {
      const err = await s.get('10.0.0.1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KubeconfigCredentialError);
      expect((err as KubeconfigCredentialError).user).toBe('tester');
      expect((err as Error).message).toContain('the exec credential plugin of user "tester" returned no credential');
      expect(fixture.double.requests).toEqual([]);
    } finally {
      s.close();
    }
  });

  // Regression: a client certificate without its key was taken as a credential: client-node
  // connected without a certificate, and the request went out without credentials.
  it.each([
    [
      '2.x',
      'a certificate without its key',
      { clientCertificateData: 'Y2VydA==' },
      'a client certificate without its key (clientCertificateData, no clientKeyData)',
    ],
    [
      '1.x',
      'a certificate without its key',
      { clientCertificateData: 'Y2VydA==' },
      'a client certificate without its key (clientCertificateData, no clientKeyData)',
    ],
    [
      '2.x',
      'a key without its certificate, beside a token',
      { token: 't', clientKeyData: 'a2V5' },
      'a client key without its certificate (clientKeyData, no clientCertificateData)',
    ],
  ])(
    'client-node %s: one that returns %s is refused, naming the user, as kubectl refuses it; nothing is sent',
    async (major, _what, status, returned) => {
      const s = new KubernetesStore(plugin(status, major === '1.x' ? (KubeConfig1 as unknown as typeof KubeConfig) : KubeConfig), {
        start: false,
      });
      try {
        const err = await s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(KubeconfigCredentialError);
        expect((err as Error).message).toBe(
          `the exec credential plugin of user "tester" returned ${returned}, and no client certificate would be sent ` +
            '(kubectl refuses it too: "exec plugin returned only certificate or key, not both"); the request was not sent',
        );
        expect(fixture.double.requests).toEqual([]);
      } finally {
        s.close();
      }
    },
  );

  // Regression: an expirationTimestamp that is not a time gave client-node no expiry it could
  // compare ("soon": NaN, the plugin ran for every request) or none at all ("": kept for ever).
  it.each([
    ['2.x', 'soon', '"soon"'],
    ['1.x', 'soon', '"soon"'],
    ['2.x', '', '""'],
    ['2.x', '2030-01-02 15:04:05', '"2030-01-02 15:04:05"'],
  ])(
    'client-node %s: one whose expirationTimestamp is %j is refused, as kubectl cannot decode it; nothing is sent',
    async (major, expiry, quoted) => {
      const status = { token: 't', expirationTimestamp: expiry };
      const s = new KubernetesStore(plugin(status, major === '1.x' ? (KubeConfig1 as unknown as typeof KubeConfig) : KubeConfig), {
        start: false,
      });
      try {
        const err = await s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(KubeconfigCredentialError);
        expect((err as Error).message).toBe(
          `the exec credential plugin of user "tester" returned an expirationTimestamp that is not an RFC 3339 time (${quoted}, ` +
            'for one like "2030-01-02T15:04:05Z"), and when the credential expires could not be known (kubectl refuses it too: ' +
            'it cannot decode the answer); the request was not sent',
        );
        expect(fixture.double.requests).toEqual([]);
      } finally {
        s.close();
      }
    },
  );

  it('client-node 2.x: one whose expirationTimestamp is an RFC 3339 time in the future is taken', async () => {
    const status = { token: 't', expirationTimestamp: '2999-01-02T15:04:05.5+02:00' };
    const s = new KubernetesStore(plugin(status), { start: false });
    try {
      await s.get('10.0.0.1').catch(() => undefined);
      expect(fixture.double.requests.length).toBeGreaterThan(0);
    } finally {
      s.close();
    }
  });

  // Regression: client-node 1.x sends a watch with applyToFetchOptions' options, which were not
  // checked: the watch went out without credentials.
  it('is refused for a watch of client-node 1.x too, and nothing is sent', async () => {
    const kc = kubeConfigOrDefault(plugin({}, KubeConfig1 as unknown as typeof KubeConfig), 'KubernetesStore');
    const target = {
      resource: 'ipaddresses.networking.k8s.io',
      path: '/apis/networking.k8s.io/v1/ipaddresses',
      query: {},
      timerMs: 20_000,
    };
    const outcome = await new Promise<unknown>((done) => {
      openWatch(kc, target, () => {}, done).then((abort) => {
        abort();
        done('answered');
      }, done);
    });
    expect(outcome).toBeInstanceOf(KubeconfigCredentialError);
    expect((outcome as KubeconfigCredentialError).user).toBe('tester');
    expect(fixture.double.requests).toEqual([]);
  });

  // Regression: the check was decided for the user current when the KubeConfig was taken: a user
  // with such a plugin made current since sent his requests without credentials.
  // A store keeps the context it was made with (config.ts withContextAsMade): a user made current
  // after, or added and made current after, is not the store's; its plugin is never run
  it.each([
    ['made current', (kc: KubeConfig) => kc.setCurrentContext('double')],
    [
      'added and made current',
      (kc: KubeConfig) => {
        const added = plugin({});
        kc.addUser({ ...added.getUser('tester')!, name: 'tester2' });
        kc.addContext({ ...added.getContextObject('double')!, name: 'double2', user: 'tester2' });
        kc.setCurrentContext('double2');
      },
    ],
  ])('a user %s after the store was made is not used: the store keeps its own', async (_what, switchTo) => {
    const kc = plugin({});
    kc.addUser({ name: 'plain', token: 't' });
    kc.addContext({ name: 'plain', cluster: 'double', user: 'plain' });
    kc.setCurrentContext('plain');
    const s = new KubernetesStore(kc, { start: false });
    try {
      switchTo(kc);
      expect(await s.get('10.0.0.1')).toBeUndefined();
      expect(fixture.double.requests.map((r) => r.authorization)).toEqual(['Bearer t']);
    } finally {
      s.close();
    }
  });

  it('one that returns a token is used', async () => {
    const s = new KubernetesStore(plugin({ token: 'from-the-plugin' }), { start: false });
    try {
      expect(await s.get('10.0.0.1')).toBeUndefined();
      expect(fixture.double.requests.map((r) => r.authorization)).toEqual(['Bearer from-the-plugin']);
    } finally {
      s.close();
    }
  });

  it('the command line says it of the context, and sends nothing', async () => {
    const path = join(fixture.folder, 'config');
    const kc = plugin({});
    writeFileSync(path, kc.exportConfig());
    const r = await cli(['status', '--kubeconfig', path]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `cannot use context "double" of the kubeconfig ${JSON.stringify(path)}: the exec credential plugin of user "tester" returned no credential`,
    );
    expect(fixture.double.requests).toEqual([]);
  });
});

// Regression: client-node takes any JSON object an exec plugin prints and sends the token in its
// status: `{"kind":"Pod","status":{"token":…}}` was accepted, and so was an ExecCredential of
// another version than its exec entry asks for, or an exec entry without apiVersion. kubectl
// refuses all three (client-go: "exec plugin: invalid apiVersion", "exec plugin is configured to
// use API version …, plugin returned version …").
describe('an exec credential plugin that prints no ExecCredential of its version, or whose entry names none', () => {
  const fixture = doubleAndFolder('ipallocator-exec-kind-', { tls: true });
  const V1 = 'client.authentication.k8s.io/v1';
  const plugin = (printed: object, apiVersion: string | null = V1): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'double', server: fixture.double.url, skipTLSVerify: true }],
      users: [
        {
          name: 'tester',
          exec: {
            ...(apiVersion === null ? {} : { apiVersion }),
            interactiveMode: 'Never',
            command: process.execPath,
            args: ['-e', `console.log(${JSON.stringify(JSON.stringify(printed))})`],
          },
        },
      ],
      contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
      currentContext: 'double',
    });
    return kc;
  };
  const storeError = async (kc: KubeConfig): Promise<unknown> => {
    const s = new KubernetesStore(kc, { start: false });
    try {
      return await s.get('10.0.0.1').then(
        () => undefined,
        (e: unknown) => e,
      );
    } finally {
      s.close();
    }
  };

  it.each([
    [
      'JSON of another kind',
      { apiVersion: 'v1', kind: 'Pod', status: { token: 'from-a-pod' } },
      'printed JSON of kind "Pod", not an ExecCredential (kubectl refuses it too); its token, if any, was not used',
    ],
    [
      'JSON without a kind',
      { status: { token: 'from-nothing' } },
      'printed JSON without a kind, not an ExecCredential (kubectl refuses it too); its token, if any, was not used',
    ],
    [
      // found by an outside tester: sent as "Bearer 12345"
      'an ExecCredential whose token is a number',
      { apiVersion: V1, kind: 'ExecCredential', status: { token: 12345 } },
      'printed an ExecCredential whose status.token is a number, not text (kubectl cannot decode it either); it was not used',
    ],
    [
      'an ExecCredential of another version',
      { apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: 'from-v1beta1' } },
      `printed an ExecCredential of apiVersion "client.authentication.k8s.io/v1beta1", but its exec entry asks for "${V1}" (kubectl refuses it too: "exec plugin is configured to use API version …, plugin returned version …"); make them agree`,
    ],
  ])(
    '%s is refused with KubeconfigCredentialError naming the user, by the library and the command line; nothing is sent',
    async (_what, printed, reason) => {
      const said = `the exec credential plugin of user "tester" ${reason}; the request was not sent`;
      const err = await storeError(plugin(printed));
      expect(err).toBeInstanceOf(KubeconfigCredentialError);
      expect((err as KubeconfigCredentialError).user).toBe('tester');
      expect((err as Error).message).toBe(said);
      const path = join(fixture.folder, 'config');
      writeFileSync(path, plugin(printed).exportConfig());
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stderr]).toEqual([
        2,
        `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(path)}: ${said}\n`,
      ]);
      expect(fixture.double.requests).toEqual([]);
    },
  );

  it.each([
    ['without apiVersion', null, 'has no apiVersion'],
    [
      'of a version kubectl no longer takes',
      'client.authentication.k8s.io/v1alpha1',
      'has apiVersion "client.authentication.k8s.io/v1alpha1"',
    ],
  ])(
    'an exec entry %s is refused before any request, naming the user, by the library and the command line',
    async (_what, apiVersion, has) => {
      const credential = { apiVersion: V1, kind: 'ExecCredential', status: { token: 't' } };
      const said =
        `the exec entry of user "tester" (context "double") ${has}, which kubectl refuses too ("exec plugin: invalid apiVersion"): ` +
        `set it to the version of ExecCredential its plugin prints, ${V1} or client.authentication.k8s.io/v1beta1`;
      expect(() => new KubernetesStore(plugin(credential, apiVersion), { start: false })).toThrow(InvalidArgumentError);
      expect(() => new KubernetesStore(plugin(credential, apiVersion), { start: false })).toThrow(`KubernetesStore: ${said}`);
      const path = join(fixture.folder, 'config');
      writeFileSync(path, plugin(credential, apiVersion).exportConfig());
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stderr]).toEqual([
        2,
        `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(path)}: ${said}\n`,
      ]);
      expect(fixture.double.requests).toEqual([]);
    },
  );

  it('an ExecCredential of the version its entry asks for is used', async () => {
    const s = new KubernetesStore(plugin({ apiVersion: V1, kind: 'ExecCredential', status: { token: 'good' } }), { start: false });
    try {
      expect(await s.get('10.0.0.1')).toBeUndefined();
      expect(fixture.double.requests.map((r) => r.authorization)).toEqual(['Bearer good']);
    } finally {
      s.close();
    }
  });
});
