// Exec credential plugins (kubeconfig users[].user.exec) run as kubectl runs them: what they are
// told in KUBERNETES_EXEC_INFO, what their stdin and stderr are by interactiveMode, one run at a
// time, and run again by the next request after an answer 401 Unauthorized, or an answer refused
// (adapters/kubernetes/exec-plugins.ts).
// Each plugin is a small shell script in a temporary folder that writes down how it was started.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isatty } from 'node:tty';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfig as KubeConfig1 } from 'client-node-1';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../adapters/errors.ts';
import {
  KubeconfigCredentialError,
  KubernetesApiError,
  KubernetesStore,
  type KubernetesStoreOptions,
} from '../adapters/kubernetes/index.ts';
import { terminalEchoLeftOut } from '../adapters/kubernetes/errors.ts';
import { superviseExecPlugins } from '../adapters/kubernetes/exec-plugins.ts';
import { openWatch } from '../adapters/kubernetes/watch-request.ts';
import { cli } from './cli-helpers.ts';
import { ApiServerDouble } from './k8s/apiserver-double.ts';
import { base64, SERVER_CERT, startTlsServer } from './k8s/tls.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';

/** The KubeConfig classes of the client-node majors the package supports: the installed one, and 1.x (devDependency client-node-1). */
const CLIENT_NODES = [
  ['2.x', KubeConfig],
  ['1.x', KubeConfig1 as unknown as typeof KubeConfig],
] as const;

/**
 * A plugin that writes down how it was started — KUBERNETES_EXEC_INFO in info.json, what its
 * stdin is in stdin ("terminal", "pipe" or "other", /dev/null being other), a line per run in
 * runs — runs `before` (shell), then prints an ExecCredential holding the token in the file
 * token, in the apiVersion KUBERNETES_EXEC_INFO names, else v1beta1, as Azure's kubelogin and
 * `aws eks get-token` choose it (or the one in the file version, when there is one).
 */
function writePlugin(dir: string, before = ''): string {
  const path = join(dir, 'plugin.sh');
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      'dir=$(dirname "$0")',
      `printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/info.json"`,
      'if [ -t 0 ]; then echo terminal; elif [ -p /dev/stdin ]; then echo pipe; else echo other; fi > "$dir/stdin"',
      'echo run >> "$dir/runs"',
      before,
      'case "$KUBERNETES_EXEC_INFO" in',
      `  *'"apiVersion":"${V1}"'*) version=${V1} ;;`,
      `  *) version=${V1BETA1} ;;`,
      'esac',
      'if [ -f "$dir/version" ]; then version=$(cat "$dir/version"); fi',
      `printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s"}}\\n' "$version" "$(cat "$dir/token")"`,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  writeFileSync(join(dir, 'token'), 'from-the-plugin');
  return path;
}

/** What the plugin in `dir` was told in KUBERNETES_EXEC_INFO, parsed. */
function execInfo(dir: string): unknown {
  return JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8'));
}

/** How many times the plugin in `dir` ran. */
function runs(dir: string): number {
  return existsSync(join(dir, 'runs')) ? readFileSync(join(dir, 'runs'), 'utf8').split('\n').length - 1 : 0;
}

describe.skipIf(process.platform === 'win32')('exec credential plugins run as kubectl runs them', () => {
  let d: ApiServerDouble;
  let dir: string;
  const stores: KubernetesStore[] = [];

  beforeEach(async () => {
    // over https: kubectl runs no exec plugin for an http:// server, and sends it no credential
    d = await ApiServerDouble.start({ tls: true });
    dir = mkdtempSync(join(tmpdir(), 'ipallocator-exec-plugin-'));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) s.close();
    await d.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A KubeConfig (of client-node `Kc`, by default the installed one) for the double whose user
   * "tester" runs `plugin` with this exec entry (apiVersion v1, interactiveMode Never unless given).
   */
  function kubeConfig(
    plugin: string,
    exec: Record<string, unknown> = {},
    cluster: Record<string, unknown> = {},
    Kc: typeof KubeConfig = KubeConfig,
  ): KubeConfig {
    const kc = new Kc();
    kc.loadFromOptions({
      clusters: [{ name: 'double', server: d.url, skipTLSVerify: true, ...cluster }],
      users: [{ name: 'tester', exec: { apiVersion: V1, interactiveMode: 'Never', command: plugin, ...exec } }],
      contexts: [{ name: 'double', cluster: 'double', user: 'tester' }],
      currentContext: 'double',
    });
    return kc;
  }

  function store(kc: KubeConfig, options: KubernetesStoreOptions = {}): KubernetesStore {
    const s = new KubernetesStore(kc, { start: false, ...options });
    stores.push(s);
    return s;
  }

  /** What a get through `kc` ends in: undefined (nothing found, as the double holds nothing) or the error. */
  async function getOutcome(kc: KubeConfig, options: KubernetesStoreOptions = {}): Promise<unknown> {
    return store(kc, options)
      .get('10.0.0.1')
      .then(
        (found) => found,
        (e: unknown) => e,
      );
  }

  describe('KUBERNETES_EXEC_INFO', () => {
    // Regression: it was never set, so such a plugin answered v1beta1, which an exec entry of v1
    // refuses (with a message saying that kubectl refuses it too, which kubectl, setting it, did not).
    it.each([V1, V1BETA1])('names the exec entry’s apiVersion (%s), so a plugin that answers in it is taken', async (apiVersion) => {
      const plugin = writePlugin(dir);
      expect(await getOutcome(kubeConfig(plugin, { apiVersion }))).toBeUndefined();
      expect(execInfo(dir)).toEqual({ kind: 'ExecCredential', apiVersion, spec: { interactive: false } });
      expect(d.requests.map((r) => r.authorization)).toEqual(['Bearer from-the-plugin']);
    });

    it('holds the cluster with provideClusterInfo: true (server, TLS server name, insecure-skip-tls-verify), and the exec entry’s env cannot replace it', async () => {
      const plugin = writePlugin(dir);
      const kc = kubeConfig(
        plugin,
        { provideClusterInfo: true, env: [{ name: 'KUBERNETES_EXEC_INFO', value: 'from-the-entry' }] },
        { tlsServerName: 'api.example' },
      );
      expect(await getOutcome(kc)).toBeUndefined();
      expect(execInfo(dir)).toEqual({
        kind: 'ExecCredential',
        apiVersion: V1,
        spec: { cluster: { server: d.url, 'tls-server-name': 'api.example', 'insecure-skip-tls-verify': true }, interactive: false },
      });
    });

    // A CA goes with a server whose certificate is checked (beside insecure-skip-tls-verify the
    // KubeConfig is refused, as kubectl refuses it): an HTTPS server, which the plugin is run for
    // before the request reaches it.
    it.each(['caData', 'caFile'])('holds the cluster’s CA as certificate-authority-data, given as %s', async (given) => {
      const tls = await startTlsServer();
      try {
        const plugin = writePlugin(dir);
        const caFile = join(dir, 'ca.pem');
        writeFileSync(caFile, SERVER_CERT);
        const ca = given === 'caData' ? { caData: base64(SERVER_CERT) } : { caFile };
        await getOutcome(kubeConfig(plugin, { provideClusterInfo: true }, { server: tls.url, skipTLSVerify: false, ...ca }));
        expect(execInfo(dir)).toEqual({
          kind: 'ExecCredential',
          apiVersion: V1,
          spec: { cluster: { server: tls.url, 'certificate-authority-data': base64(SERVER_CERT) }, interactive: false },
        });
      } finally {
        await tls.close();
      }
    });
  });

  // Regression: client-node passed an exec entry's fields on as they were, and spawn made text of
  // them: `args: [1.10, 0x1F]` ran the plugin with "1.1" and "31", a list as its items joined by
  // commas, `value: true` as "true", a null arg as "null". kubectl cannot decode such a kubeconfig,
  // and reads a null as an empty text.
  describe('args and env as kubectl reads them', () => {
    const said = (what: string) =>
      `the exec entry of user "tester" has ${what}, which kubectl cannot read either (what it holds is not shown)`;
    const quote = ': write it as text, quoted where YAML would read it as something else';
    const refusals: [Record<string, unknown>, string][] = [
      [{ args: ['a', 1.1] }, said('an args entry (number 2) that is a number, not text') + quote],
      [{ args: ['a', ['b', 'c']] }, said('an args entry (number 2) that is a list, not text') + quote],
      [{ args: 'a b' }, said('args that are a string, not a list of texts')],
      [{ env: { FOO: 'x' } }, said('env that is a mapping, not a list of name and value entries')],
      [{ env: ['FOO=x'] }, said('an env entry (number 1) that is a string, not a mapping of name and value')],
      [{ env: [{ name: 5, value: 'x' }] }, said('an env entry (number 1) whose name is a number, not text') + quote],
      [{ env: [{ name: 'FOO', value: true }] }, said('an env entry (number 1) whose value is true or false, not text') + quote],
      [{ command: 5 }, said('a command that is a number, not text') + quote],
      [{ provideClusterInfo: 'true' }, said('a provideClusterInfo that is a string, not true or false')],
    ];

    it.each(refusals)('%j is refused before the plugin runs, by the library and the command line', async (exec, message) => {
      const plugin = writePlugin(dir);
      const kc = kubeConfig(plugin, exec);
      const refused = message.replace('"tester"', '"tester" (context "double")');
      expect(() => store(kc)).toThrow(InvalidArgumentError);
      expect(() => store(kc)).toThrow(`KubernetesStore: ${refused}`);
      // as the kubeconfig is read: kubectl cannot read the file, whichever user is in use
      const path = join(dir, 'config');
      kc.addUser({ name: 'other', token: 't' });
      kc.addContext({ name: 'other', cluster: 'double', user: 'other' });
      kc.setCurrentContext('other');
      writeFileSync(path, kc.exportConfig());
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(path)}: ${message}\n`]);
      expect(runs(dir)).toBe(0);
      expect(d.requests).toEqual([]);
    });

    it('a null arg, and an env entry with a null or no value, are passed as empty texts', async () => {
      // printenv fails for a variable that is not set
      const printed = ['FOO', 'BAR'].map((name) => `"$(printenv ${name} || echo unset)"`).join(' ');
      const plugin = writePlugin(dir, `printf '[%s]' "$@" > "$dir/args"; printf '%s %s' ${printed} > "$dir/env"`);
      const env = [{ name: 'FOO', value: null }, { name: 'BAR' }];
      expect(await getOutcome(kubeConfig(plugin, { args: ['a', null, ''], env }))).toBeUndefined();
      expect(readFileSync(join(dir, 'args'), 'utf8')).toBe('[a][][]');
      expect(readFileSync(join(dir, 'env'), 'utf8')).toBe(' ');
      expect(d.requests.map((r) => r.authorization)).toEqual(['Bearer from-the-plugin']);
    });
  });

  describe('stdin and stderr, by interactiveMode', () => {
    // Regression: its stdin was a pipe nothing wrote to nor closed: a plugin reading it waited
    // until the request's deadline ("did not answer within …").
    it('a plugin that may not ask (interactiveMode Never) and reads stdin meets its end at once, and answers', async () => {
      const plugin = writePlugin(dir, 'cat > /dev/null');
      expect(await getOutcome(kubeConfig(plugin), { requestTimeoutMs: 20_000 })).toBeUndefined();
      expect(readFileSync(join(dir, 'stdin'), 'utf8')).toBe('other\n');
      expect(d.requests.map((r) => r.authorization)).toEqual(['Bearer from-the-plugin']);
    });

    it.skipIf(isatty(0))(
      'without a terminal on stdin: IfAvailable (and no interactiveMode) runs it without one, told so; Always is refused before it runs, naming the user',
      async () => {
        const plugin = writePlugin(dir, 'cat > /dev/null');
        for (const exec of [{ interactiveMode: 'IfAvailable' }, { apiVersion: V1BETA1, interactiveMode: undefined }]) {
          expect(await getOutcome(kubeConfig(plugin, exec), { requestTimeoutMs: 20_000 })).toBeUndefined();
          expect((execInfo(dir) as { spec: unknown }).spec).toEqual({ interactive: false });
          expect(readFileSync(join(dir, 'stdin'), 'utf8')).toBe('other\n');
        }
        expect(runs(dir)).toBe(2);

        const err = await getOutcome(kubeConfig(plugin, { interactiveMode: 'Always' }));
        expect(err).toBeInstanceOf(KubeconfigCredentialError);
        expect((err as KubeconfigCredentialError).user).toBe('tester');
        expect((err as Error).message).toBe(
          'the exec credential plugin of user "tester" was not run: its exec entry has interactiveMode "Always", and standard input is not a terminal ' +
            '(kubectl refuses it too: "exec plugin cannot support interactive mode: standard input is not a terminal"); ' +
            'run it from a terminal, or set interactiveMode IfAvailable or Never; the request was not sent',
        );
        expect(runs(dir)).toBe(2);
        expect(d.requests).toHaveLength(2);
      },
    );

    // Regression: a v1 entry without interactiveMode was run as IfAvailable, and an unknown mode
    // was refused only when the plugin was to run; kubectl refuses both as it loads the kubeconfig
    // (clientcmd validateAuthInfo).
    it.each([
      [
        'none, in an entry of v1',
        {},
        'has no interactiveMode, which an exec entry of apiVersion client.authentication.k8s.io/v1 must have, and kubectl refuses it too ' +
          '("interactiveMode must be specified for tester to use exec authentication plugin")',
      ],
      [
        'one kubectl does not take',
        { interactiveMode: 'Sometimes' },
        'has interactiveMode "Sometimes", which kubectl refuses too ("invalid interactiveMode for tester")',
      ],
    ])(
      'an interactiveMode that kubectl refuses (%s) is refused with the KubeConfig, naming the user; the plugin is not run',
      (_what, exec, has) => {
        const plugin = writePlugin(dir);
        const kc = kubeConfig(plugin, { interactiveMode: undefined, ...exec });
        expect(() => store(kc)).toThrow(InvalidArgumentError);
        expect(() => store(kc)).toThrow(
          `KubernetesStore: the exec entry of user "tester" (context "double") ${has}: ` +
            'set interactiveMode Never (a plugin that never asks the user: a service), IfAvailable or Always',
        );
        expect(runs(dir)).toBe(0);
        expect(d.requests).toEqual([]);
      },
    );

    it('an entry of v1beta1 without interactiveMode is taken as IfAvailable, as kubectl takes it', async () => {
      const plugin = writePlugin(dir);
      expect(await getOutcome(kubeConfig(plugin, { apiVersion: V1BETA1, interactiveMode: undefined }))).toBeUndefined();
      expect(runs(dir)).toBe(1);
    });

    // A store keeps the context it was made with (config.ts withContextAsMade): the user made
    // current after is not the store's, and its entry (one kubectl refuses) plays no part
    it('one made current after the store was made (another context set) is not the store’s: its own user’s plugin runs', async () => {
      const plugin = writePlugin(dir);
      const kc = kubeConfig(plugin);
      kc.addUser({ name: 'other', exec: { apiVersion: V1, interactiveMode: 'Sometimes', command: plugin } });
      kc.addContext({ name: 'other', cluster: 'double', user: 'other' });
      const s = store(kc);
      kc.setCurrentContext('other');
      expect(await s.get('10.0.0.1')).toBeUndefined();
      expect(runs(dir)).toBe(1);
      expect(d.requests).toHaveLength(1);
    });

    /**
     * Runs `body` with our stderr taken as a terminal or not (`terminal`), what is written to it
     * kept in `said` rather than shown: what a plugin writes there goes on to it.
     */
    async function withStderr(terminal: boolean, body: (said: string[]) => Promise<void>): Promise<void> {
      const said: string[] = [];
      const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        said.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return true;
      });
      const own = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
      Object.defineProperty(process.stderr, 'isTTY', { value: terminal, configurable: true, writable: true });
      try {
        await body(said);
      } finally {
        if (own === undefined) Reflect.deleteProperty(process.stderr, 'isTTY');
        else Object.defineProperty(process.stderr, 'isTTY', own);
        write.mockRestore();
      }
    }

    /** How many times `text` occurs in `all`. */
    const occurrences = (all: string, text: string) => all.split(text).length - 1;

    // Regression: what it wrote there was kept for messages only: a device-code login's
    // instructions never reached the user, who saw the request hang.
    it('what it writes on stderr goes on to our stderr; when that is no terminal, a failure names its first line too', async () => {
      await withStderr(false, async (said) => {
        const prompt = 'To sign in, open https://login.example/device and enter the code ABCD-1234';
        const plugin = writePlugin(dir, `echo '${prompt}' >&2`);
        expect(await getOutcome(kubeConfig(plugin))).toBeUndefined();
        expect(said.join('')).toContain(`${prompt}\n`);

        const failing = writePlugin(dir, "echo 'error: the login expired' >&2; exit 1");
        const err = await getOutcome(kubeConfig(failing));
        expect(err).toBeInstanceOf(KubernetesApiError);
        expect((err as Error).message).toContain('wrote on stderr: error: the login expired');
        expect(said.join('')).toContain('error: the login expired\n');
      });
    });

    // Regression: on a terminal the command line showed it twice, as it came and again in the
    // failure; and a library user's error, logged elsewhere, lost it.
    it.each([
      ['exits with a status other than 0', 'exit 1', 'failed: it exited with a status other than 0'],
      ['exits 0 printing nothing', 'exit 0', 'exited with status 0 but printed nothing'],
    ])(
      'a plugin that writes on stderr and %s: on a terminal, shown there once; the failure quotes it, and says it was passed on where shown on that terminal',
      async (_what, end, failed) => {
        await withStderr(true, async (said) => {
          const failing = writePlugin(dir, `echo 'error: the login expired' >&2; ${end}`);
          const err = await getOutcome(kubeConfig(failing));
          expect(err).toBeInstanceOf(KubernetesApiError);
          const message = (err as Error).message;
          expect(message).toContain(failed);
          expect(message).toContain('wrote on stderr: error: the login expired');
          const onTerminal = terminalEchoLeftOut(message);
          expect(onTerminal).toContain('wrote on stderr (passed on to the terminal as it came, not repeated here)');
          expect(onTerminal).not.toContain('login expired');
          expect(occurrences(said.join(''), 'error: the login expired')).toBe(1);
        });
      },
    );

    const hasScript = (() => {
      try {
        execFileSync('script', ['--version'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();

    /** What `ipallocator status` shows on a terminal (`script` gives it one) with `plugin` as its user's exec plugin (IfAvailable). */
    async function statusOnTerminal(plugin: string): Promise<string> {
      const path = join(dir, 'config');
      writeFileSync(path, kubeConfig(plugin, { interactiveMode: 'IfAvailable' }).exportConfig());
      const deno = join(ROOT, 'node_modules', '.bin', 'deno');
      const command = 'Deno' in globalThis ? [deno, 'run', '-A', 'cli/bin.ts'] : [process.execPath, '--import', 'tsx', 'cli/bin.ts'];
      const shell = [...command, 'status', '--kubeconfig', path].map((word) => `'${word}'`).join(' ');
      return await new Promise<string>((done) =>
        execFile('script', ['-qec', shell, '/dev/null'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } }, (_err, stdout) =>
          done(stdout),
        ),
      );
    }

    // The command line on a terminal, as an operator runs it.
    it.skipIf(!hasScript)(
      'on a terminal, IfAvailable hands the plugin the terminal, told so, and its stderr reaches the terminal (the command line)',
      async () => {
        const prompt = 'enter the code ABCD-1234 at https://login.example/device';
        const terminal = await statusOnTerminal(writePlugin(dir, `echo '${prompt}' >&2`));
        expect(execInfo(dir)).toEqual({ kind: 'ExecCredential', apiVersion: V1, spec: { interactive: true } });
        expect(readFileSync(join(dir, 'stdin'), 'utf8')).toBe('terminal\n');
        expect(terminal).toContain(prompt);
      },
      30_000,
    );

    it.skipIf(!hasScript)(
      'on a terminal, what a failing plugin wrote on stderr is shown once, and the failure says it was passed on (the command line)',
      async () => {
        const terminal = await statusOnTerminal(writePlugin(dir, "echo 'error: the login expired' >&2; exit 1"));
        expect(occurrences(terminal, 'error: the login expired')).toBe(1);
        expect(terminal.replace(/\s+/g, ' ')).toContain('wrote on stderr (passed on to the terminal as it came, not repeated here)');
      },
      30_000,
    );
  });

  describe.each(CLIENT_NODES)('runs, with client-node %s', (_major, Kc) => {
    // As client-go, which holds a mutex while its plugin runs: two plugins asking on one terminal at once.
    // Regression (1.x): each request that waited ran the plugin again.
    it('one at a time: requests sent together run the plugin once, and share what it printed', async () => {
      const plugin = writePlugin(dir);
      const s = store(kubeConfig(plugin, {}, {}, Kc));
      expect(await Promise.all([s.get('10.0.0.1'), s.get('10.0.0.2'), s.get('10.0.0.3')])).toEqual([undefined, undefined, undefined]);
      expect(runs(dir)).toBe(1);
      expect(d.requests.map((r) => r.authorization)).toEqual([
        'Bearer from-the-plugin',
        'Bearer from-the-plugin',
        'Bearer from-the-plugin',
      ]);
    });

    // As client-go, which keeps a credential without expiry until a 401. Regression (1.x): it read
    // the missing expirationTimestamp as one in the past, and ran the plugin for every request.
    it('an answer without expirationTimestamp is kept: later requests do not run the plugin again', async () => {
      const plugin = writePlugin(dir);
      const s = store(kubeConfig(plugin, {}, {}, Kc));
      for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) expect(await s.get(ip)).toBeUndefined();
      expect(runs(dir)).toBe(1);
      expect(d.requests).toHaveLength(3);
    });

    // Regression: client-node kept an answer without a token (one read while its source was
    // being rewritten), and every later request was refused with it without the plugin being asked again.
    it('again by the next request after printing an ExecCredential without a token', async () => {
      const plugin = writePlugin(dir);
      writeFileSync(join(dir, 'token'), '');
      const s = store(kubeConfig(plugin, {}, {}, Kc));
      await expect(s.get('10.0.0.1')).rejects.toBeInstanceOf(KubeconfigCredentialError);
      writeFileSync(join(dir, 'token'), 'from-the-plugin');
      expect(await s.get('10.0.0.1')).toBeUndefined();
      expect(runs(dir)).toBe(2);
      expect(d.requests.map((r) => r.authorization)).toEqual(['Bearer from-the-plugin']);
    });

    // Regression: client-node kept the refused answer, and every later request was refused with
    // it without the plugin being asked again.
    it('again by the next request after printing an ExecCredential of another version than its entry’s', async () => {
      const plugin = writePlugin(dir);
      writeFileSync(join(dir, 'version'), V1BETA1);
      const s = store(kubeConfig(plugin, {}, {}, Kc));
      await expect(s.get('10.0.0.1')).rejects.toBeInstanceOf(KubeconfigCredentialError);
      rmSync(join(dir, 'version'));
      expect(await s.get('10.0.0.1')).toBeUndefined();
      expect(runs(dir)).toBe(2);
      expect(d.requests.map((r) => r.authorization)).toEqual(['Bearer from-the-plugin']);
    });
  });

  // Regression: the refusal said that a line break at the token's end is left out; client-node
  // 1.x's node-fetch sends it as it is, and refuses it (kubectl refuses it too).
  it('with client-node 1.x, a token it prints ending in a line break is refused, saying that 1.x sends it as it is, never showing it', async () => {
    const plugin = writePlugin(dir);
    writeFileSync(join(dir, 'token'), 'SECRET-TOKEN\\n');
    const err = await getOutcome(kubeConfig(plugin, {}, {}, KubeConfig1 as unknown as typeof KubeConfig));
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as Error).message).toBe(
      'get ipaddresses.networking.k8s.io "10.0.0.1": the request was not sent: a header would hold a control character (a line break, a NUL, a DEL) ' +
        "or a character beyond U+00FF (not shown: it is the user's credential); the token, password or exec plugin credential of the kubeconfig's " +
        'user entry has one inside it (with @kubernetes/client-node 2.x a line break at its end is left out, as its fetch leaves it out of every ' +
        'header; 1.x sends it as it is): remove it',
    );
    expect(d.requests).toEqual([]);
  });

  // Regression: with source maps applied, client-node's frames name its TypeScript sources
  // (src/exec_auth.ts), and its exec failures were not told apart: said as client-node's own
  // message, a token among the args included.
  describe.skipIf('Deno' in globalThis)('in a process whose stacks are source-mapped (node --enable-source-maps)', () => {
    /** What a get through `exec` (an exec entry, interactiveMode Never) rejects with, in such a process. */
    async function refusedWithSourceMaps(exec: Record<string, unknown>): Promise<string> {
      const kubeconfig = join(dir, 'config');
      writeFileSync(kubeconfig, kubeConfig('', { ...exec, interactiveMode: 'Never' }).exportConfig());
      const code = [
        "import { KubeConfig } from '@kubernetes/client-node';",
        "import { KubernetesStore } from './adapters/kubernetes/index.ts';",
        'const kc = new KubeConfig();',
        `kc.loadFromFile(${JSON.stringify(kubeconfig)});`,
        'const s = new KubernetesStore(kc, { start: false });',
        "process.stdout.write(await s.get('10.0.0.1').then(() => 'answered', (e) => e.message));",
        's.close();',
      ].join('\n');
      return await new Promise<string>((done, fail) =>
        execFile(
          process.execPath,
          ['--enable-source-maps', '--import', 'tsx', '--input-type=module', '-e', code],
          { cwd: ROOT },
          (err, stdout) => (err ? fail(err) : done(stdout)),
        ),
      );
    }

    it('a plugin that exits with a status other than 0 is said to have failed, with the first line it wrote on stderr', async () => {
      const failing = writePlugin(dir, "echo 'error: the login expired' >&2; exit 1");
      expect(await refusedWithSourceMaps({ command: failing })).toContain(
        "the user's credentials could not be read: its exec plugin failed: it exited with a status other than 0 " +
          '(@kubernetes/client-node does not pass on which) and wrote on stderr: error: the login expired',
      );
    }, 20_000);

    it('an arg holding a NUL is said to be malformed, never shown', async () => {
      const message = await refusedWithSourceMaps({ command: writePlugin(dir), args: ['--token=SECRET\u0000123'] });
      expect(message).toContain('its exec entry in the kubeconfig is malformed');
      expect(message).not.toContain('SECRET');
    }, 20_000);
  });

  // Regression: the request that waited was said to have had its plugin not answer, and stopped;
  // none was started for it, and the other request's plugin ran on.
  it('a request whose deadline passes while it waits behind another request’s run of the plugin says so; that run goes on', async () => {
    const plugin = writePlugin(dir, 'while [ ! -f "$dir/go" ]; do sleep 0.05; done');
    const kc = kubeConfig(plugin);
    const running = store(kc).get('10.0.0.1');
    await vi.waitFor(() => expect(runs(dir)).toBe(1), { timeout: 20_000 });
    const err = await getOutcome(kc, { requestTimeoutMs: 200 });
    expect(err).toBeInstanceOf(KubernetesApiError);
    expect((err as KubernetesApiError).message).toBe(
      'get ipaddresses.networking.k8s.io "10.0.0.1": the request waited 200 ms (requestTimeoutMs) behind the exec credential plugin of user "tester", ' +
        'still running for another request (the plugins of a KubeConfig run one at a time, as kubectl runs them), and was not sent',
    );
    writeFileSync(join(dir, 'go'), '');
    expect(await running).toBeUndefined();
    expect(runs(dir)).toBe(1);
    expect(d.requests.map((r) => r.authorization)).toEqual(['Bearer from-the-plugin']);
  });

  describe('after an answer 401 Unauthorized', () => {
    // Regression: client-node keeps a plugin's credential without an expirationTimestamp for
    // ever: credentials rotated by the plugin were never asked for, and every request was refused.
    it.each(CLIENT_NODES)(
      'the next request runs the plugin again and sends what it prints now; one answered otherwise keeps it (client-node %s)',
      async (_major, Kc) => {
        const plugin = writePlugin(dir);
        writeFileSync(join(dir, 'token'), 'old');
        d.onlyToken = 'new';
        const s = store(kubeConfig(plugin, {}, {}, Kc));
        const err = await s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(KubernetesApiError);
        expect((err as KubernetesApiError).code).toBe(401);

        writeFileSync(join(dir, 'token'), 'new');
        expect(await s.get('10.0.0.1')).toBeUndefined();
        expect(await s.get('10.0.0.2')).toBeUndefined();
        // the double records the requests it authenticated
        expect(d.requests.map((r) => r.authorization)).toEqual(['Bearer new', 'Bearer new']);
        expect(runs(dir)).toBe(2);
      },
    );

    // Regression: a 401 from the host a redirect led to (a login page's) had the plugin run again
    // by the next request, though that host was never sent the credential (the watch kept it)
    it('a 401 from the host a redirect led to, sent no credential, keeps it', async () => {
      const plugin = writePlugin(dir);
      const other = createServer((_req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end('sign in'));
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = other.address() as AddressInfo;
        d.proxyAnswerNext('get', 'ipaddresses', '', { status: 307, headers: { location: `http://127.0.0.1:${port}/login` } });
        const s = store(kubeConfig(plugin));
        const err = await s.get('10.0.0.1').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((err as KubernetesApiError).code).toBe(401);
        expect((err as KubernetesApiError).message).toContain(`answered by http://127.0.0.1:${port}`);
        expect(await s.get('10.0.0.2')).toBeUndefined();
        expect(runs(dir)).toBe(1);
      } finally {
        other.close();
      }
    });

    it('a store refused (relisting, 401) syncs once the plugin gives the rotated credentials', async () => {
      const plugin = writePlugin(dir);
      writeFileSync(join(dir, 'token'), 'old');
      d.onlyToken = 'new';
      const s = new KubernetesStore(kubeConfig(plugin), { backoff: { initialMs: 2, maxMs: 50 } });
      stores.push(s);
      await vi.waitFor(() => expect((s.lastError as KubernetesApiError | undefined)?.code).toBe(401), { timeout: 20_000 });
      writeFileSync(join(dir, 'token'), 'new');
      await s.waitForSync({ timeoutMs: 20_000 });
      expect(s.state).toBe('synced');
    });

    it('a watch refused 401 has the next one run the plugin again', async () => {
      const plugin = writePlugin(dir);
      writeFileSync(join(dir, 'token'), 'old');
      d.onlyToken = 'new';
      const kc = kubeConfig(plugin);
      superviseExecPlugins(kc);
      const target = {
        resource: 'ipaddresses.networking.k8s.io',
        path: '/apis/networking.k8s.io/v1/ipaddresses',
        query: {},
        timerMs: 20_000,
      };
      const watch = () =>
        new Promise<unknown>((done) => {
          openWatch(kc, target, () => {}, done).then((abort) => {
            abort();
            done('answered');
          }, done);
        });
      expect(await watch()).toMatchObject({ statusCode: 401 });
      writeFileSync(join(dir, 'token'), 'new');
      expect(await watch()).toBe('answered');
      expect(runs(dir)).toBe(2);
    });
  });
});
