// The command line's expected failures: a server that cannot be reached or never answers, an
// identity without the RBAC a command needs (403, named verb and resource), bad flags — each one
// message on stderr, exit code 2, no stack trace, no token. One run goes through the real executable (cli/bin.ts in
// a child process) to check the process's own exit code and output.
import { execFile, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statusFailure } from './k8s/apiserver-double.ts';
import { TEST_TOKEN, writeKubeconfig } from './k8s/kubeconfig.ts';
import { SilentServer } from './k8s/silent-server.ts';
import { base64, CLIENT_CERT, CLIENT_KEY, OTHER_KEY, SERVER_CERT, startTlsServer } from './k8s/tls.ts';
import { NO_WASM } from './helpers.ts';
import { hangingPlugin, isRunning, keepingStderr, until } from './k8s/helpers.ts';
import { clientNodeMissing } from '../cli/main.ts';
import { unreadableFile } from '../cli/errors.ts';
import { addServiceCIDR, cli, controls, startCluster, type Cluster, type RunResult } from './cli-helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** This runtime (node or deno) run with `args` from the checkout's root: its exit code and output. */
function runtimeWith(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}
const STACK = /\n\s+at /;
/**
 * The library's message without WebAssembly as the command says it: after the command's own
 * `ipallocator: `, not a second "ipallocator" (which the library's message starts with).
 */
const CLI_NO_WASM = NO_WASM.replace(/^ipallocator needs /, 'this command needs ');

describe('ipallocator: failures', () => {
  let c: Cluster;
  /** The same over https://, for the failures of a user's credentials: kubectl sends none to an http:// server. */
  let secure: Cluster;
  beforeEach(async () => {
    c = await startCluster();
    addServiceCIDR(c.double, 'kubernetes', ['10.96.0.0/24']);
    secure = await startCluster({ tls: true });
    addServiceCIDR(secure.double, 'kubernetes', ['10.96.0.0/24']);
  });
  afterEach(async () => {
    await c.close();
    await secure.close();
  });

  const denials = [
    { command: 'status', verb: 'list', resource: 'servicecidrs', group: 'API group "networking.k8s.io"' },
    { command: 'status', verb: 'list', resource: 'ipaddresses', group: 'API group "networking.k8s.io"' },
    { command: 'check', verb: 'list', resource: 'services', group: 'the core API group' },
    { command: 'map', verb: 'list', resource: 'ipaddresses', group: 'API group "networking.k8s.io"' },
  ] as const;
  for (const d of denials) {
    it(`${d.command} without RBAC "${d.verb}" on ${d.resource}: says which verb and resource are missing, exit 2`, async () => {
      c.double.denyAccess(d.verb, d.resource);
      const args = d.command === 'map' ? ['map', '10.96.0.0/24', '--out', '/dev/null'] : [d.command];
      const r = await cli([...args, '--kubeconfig', c.kubeconfig]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(
        `ipallocator: permission denied: context "double" may not ${d.verb} ${d.resource} (${d.group}); grant RBAC verb "${d.verb}" on resource "${d.resource}"`,
      );
      expect(r.stderr).toContain(`cannot ${d.verb} resource "${d.resource}"`); // the server's own words
      expect(r.stderr.split('\n')).toHaveLength(2); // one line (and its newline), no escaped line break in it
      expect(r.stderr).not.toContain('\\u000a');
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).not.toContain(TEST_TOKEN);
    });
  }

  it.each([
    ['reset', 'connection reset (ECONNRESET)'],
    ['close', 'connection closed by the other side (UND_ERR_SOCKET)'],
  ] as const)(
    'a connection %s part-way through an answer: said to be lost while the server answered, not that it cannot be reached, exit 2',
    async (how, why) => {
      // Regression: "cannot reach the API server at … : connection reset (ECONNRESET)", though it had answered.
      c.double.cutMidBody('list', how, 1);
      const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: the API server at ${c.double.url} (context "double") began to answer list servicecidrs.networking.k8s.io, then the connection was lost: ${why}\n`,
      );
    },
  );

  it('a refused listing whose Status has a message that is a number and a reason that is an object: said as a 403, no internal error, exit 2', async () => {
    // Regression: "internal error: TypeError: text.charCodeAt is not a function", with a stack trace.
    c.double.proxyAnswerNext(
      'list',
      'servicecidrs',
      { kind: 'Status', status: 'Failure', message: 42, reason: { a: 1 }, code: 403 },
      { status: 403 },
    );
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      'ipallocator: permission denied: context "double" may not list servicecidrs (API group "networking.k8s.io"); grant RBAC verb "list" on resource "servicecidrs"; the answer: HTTP 403 Forbidden\n',
    );
  });

  it('a refused listing whose Status message runs to 5,000 characters: the message cut at 1,000, as the library cuts it', async () => {
    // Regression: the whole message was printed.
    const message = `ipaddresses is forbidden: ${'x'.repeat(5000)}`;
    for (const command of ['status', 'check']) {
      c.double.proxyAnswerNext('list', 'ipaddresses', statusFailure(403, 'Forbidden', message), { status: 403 });
      const r = await cli([command, '--kubeconfig', c.kubeconfig]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toMatch(/; the server said: ipaddresses is forbidden: x{974}… \(4,026 more characters\)\n$/);
      expect(r.stderr.length).toBeLessThan(1300);
    }
  });

  it('an unreachable server: names the server and the context, exit 2, no stack trace', async () => {
    const url = c.double.url;
    await c.double.close();
    for (const command of ['status', 'check']) {
      const r = await cli([command, '--kubeconfig', c.kubeconfig]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`ipallocator: cannot reach the API server at ${url} (context "double"): connection refused (ECONNREFUSED)\n`);
    }
  });

  // Regression: the context was quoted by hand ("${context}"): a context named `ctx "q" ` read as
  // (context "ctx "q" "), and a control character in its name went to the terminal as it was.
  // It is quoted as every other name in the reports is (quoteText).
  it('a context name with quotes or a control character is quoted and escaped in every message', async () => {
    const name = 'ctx "q" \u001b[31m';
    const quoted = '"ctx \\"q\\" \\x1b[31m"';
    const text = readFileSync(c.kubeconfig, 'utf8')
      .replace('- name: double\n  context:', `- name: ${JSON.stringify(name)}\n  context:`)
      .replace('current-context: double', `current-context: ${JSON.stringify(name)}`);
    writeFileSync(c.kubeconfig, text);
    c.double.proxyAnswerNext('list', 'servicecidrs', { kind: 'Status', status: 'Failure', code: 401 }, { status: 401 });
    let r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(r.stderr).toBe(
      `ipallocator: the API server at ${c.double.url} refused the requests of context ${quoted} (401 Unauthorized): no credentials are sent to an http:// server (kubectl sends none either); use its https:// address\n`,
    );
    const url = c.double.url;
    await c.double.close();
    r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect([r.code, r.stderr]).toEqual([
      2,
      `ipallocator: cannot reach the API server at ${url} (context ${quoted}): connection refused (ECONNREFUSED)\n`,
    ]);
  });

  // Regression: a context named with a YAML number (`name: 7`, which client-node keeps as a
  // number) made quoting it throw ("internal error: TypeError: text.replace is not a function"),
  // and `--context 1.10` found no context spelled `name: 1.10` in the file (YAML reads it as the
  // number 1.1, 0x1F as 31, 1e3 as 1000). kubectl cannot read such a kubeconfig ("cannot unmarshal
  // number into Go struct field NamedContext.contexts.name of type string"): refused as the
  // kubeconfig is read, saying to quote it; quoted, it is text, and --context selects it.
  it.each([
    ['7', 'the number 7'],
    ['1.10', 'the number 1.1'],
    ['0x1F', 'the number 31'],
    ['1e3', 'the number 1000'],
    ['true', 'true'],
  ])('a context named %s, which YAML reads as no text, is refused until it is quoted, then selected by --context', async (name, read) => {
    const kubeconfig = readFileSync(c.kubeconfig, 'utf8');
    const named = (spelled: string) =>
      kubeconfig.replace('contexts:\n', `contexts:\n- name: ${spelled}\n  context: {cluster: double, user: tester}\n`);
    writeFileSync(c.kubeconfig, named(name));
    const refused = `ipallocator: cannot read ${JSON.stringify(c.kubeconfig)}: the name of entry 1 of contexts is read by YAML as ${read}, not as text, which kubectl cannot read either: quote it (name: "…")\n`;
    for (const command of ['status', 'check']) {
      const r = await cli([command, '--kubeconfig', c.kubeconfig, '--context', name]);
      expect([r.code, r.stderr]).toEqual([2, refused]);
    }
    writeFileSync(c.kubeconfig, named(JSON.stringify(name)));
    for (const command of ['status', 'check']) {
      const ok = await cli([command, '--kubeconfig', c.kubeconfig, '--context', name]);
      expect([ok.code, ok.stderr]).toEqual([0, '']);
      expect(ok.stdout).toMatch(new RegExp(`\\bcontext ${name.replace('.', '\\.')}\\b`));
    }
  });

  it.each([
    [
      'current-context: 7',
      'current-context: double',
      'the current-context is read by YAML as the number 7, not as text, which kubectl cannot read either: quote it (current-context: "…")',
    ],
    [
      'cluster: 1.10',
      '    cluster: double',
      'the cluster of context "double" is read by YAML as the number 1.1, not as text, which kubectl cannot read either: quote it (cluster: "…")',
    ],
    [
      'namespace: 5',
      '    user: tester',
      'the namespace of context "double" is read by YAML as the number 5, not as text, which kubectl cannot read either: quote it (namespace: "…")',
    ],
    [
      '- name: 2',
      '- name: tester',
      'the name of entry 1 of users is read by YAML as the number 2, not as text, which kubectl cannot read either: quote it (name: "…")',
    ],
  ])('a kubeconfig whose %s is refused as it is read, naming it, as kubectl cannot read it', async (entry, replaced, said) => {
    const kubeconfig = readFileSync(c.kubeconfig, 'utf8');
    const line = entry.startsWith('namespace') ? `${replaced}\n    ${entry}` : entry.startsWith('cluster') ? `    ${entry}` : entry;
    writeFileSync(c.kubeconfig, kubeconfig.replace(replaced, line));
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect([r.code, r.stderr]).toEqual([2, `ipallocator: cannot read ${JSON.stringify(c.kubeconfig)}: ${said}\n`]);
    expect(c.double.requests).toEqual([]);
  });

  // Regression: the path was shown bare, where every other message quotes it: "cannot read /tmp/a b
  // c: …" read as a path that ends anywhere, and a line break in it started a line of its own
  it('quotes the kubeconfig path it cannot read, a space or a line break in it shown as part of it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    try {
      const path = join(dir, 'a b\nc');
      writeFileSync(path, 'clusters: [\n');
      const r = await cli(['status', '--kubeconfig', path]);
      expect(r.stderr).toMatch(/^ipallocator: cannot read "[^"\n]*\/a b\\nc": its YAML is malformed at line \d+, column \d+/);
      expect(r.code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: every failure without an HTTP status read "cannot reach the API server", also an
  // answer it could not read and a request client-node refused to send.
  it('an answer that is not JSON: says the server answered with a malformed body, exit 2', async () => {
    c.double.garbleNext('list');
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    // not "a text that is not JSON (not quoted: it may hold a credential)", the words for an exec
    // credential plugin's output
    expect(r.stderr).toBe(
      `ipallocator: the API server at ${c.double.url} (context "double") answered list servicecidrs.networking.k8s.io with a malformed body (content type application/json): not JSON\n`,
    );
  });

  // It was refused, as client-node refuses it ("HTTP protocol is not allowed when skipTLSVerify is
  // not set or false"); kubectl takes it (a `kubectl proxy` kubeconfig has no such flag), and no
  // credentials are sent to an http:// server
  it('an http:// server without insecure-skip-tls-verify: used as kubectl uses it, without the token', async () => {
    const kc = writeKubeconfig(c.double.url, TEST_TOKEN, { skipTLSVerify: false });
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout.split('\n')[0]).toBe(`context double (${c.double.url}): 1 ServiceCIDR, 0 IPAddresses`);
      expect(c.double.requests.map((r) => r.authorization)).toEqual(c.double.requests.map(() => undefined));
    } finally {
      kc.remove();
    }
  });

  // Regression: client-node compares the server URL with "http://" and "https://" as written, so
  // HTTP://host (which kubectl takes: a scheme is case-insensitive) was "not sent, @kubernetes/
  // client-node refused it: You need to define an absolute base url for the server".
  it('a server URL whose scheme is in capitals (HTTP://, Http://) is used as its lower-case form, as kubectl uses it', async () => {
    for (const scheme of ['HTTP://', 'Http://']) {
      const kc = writeKubeconfig(c.double.url.replace('http://', scheme));
      try {
        const r = await cli(['status', '--kubeconfig', kc.path]);
        expect([r.code, r.stderr]).toEqual([0, '']);
        expect(r.stdout.split('\n')[0]).toBe(`context double (${c.double.url}): 1 ServiceCIDR, 0 IPAddresses`);
      } finally {
        kc.remove();
      }
    }
    // without insecure-skip-tls-verify too, as for http://
    const kc = writeKubeconfig(c.double.url.replace('http://', 'HTTP://'), TEST_TOKEN, { skipTLSVerify: false });
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stderr]).toEqual([0, '']);
    } finally {
      kc.remove();
    }
  });

  // Regression: client-node's fetch refused a URL with userinfo quoting it whole, so the password
  // was printed twice; a query string had the API paths appended after it and was read as "serves
  // no servicecidrs".
  const shownURL = '(http://)?127\\.0\\.0\\.1:\\d+/?';
  const secretServers = [
    {
      server: (url: string) => url.replace('http://', 'http://admin:hunter2@'),
      shown: shownURL,
      problem: 'carries credentials[^\\n]*user entry',
    },
    {
      server: (url: string) => url.replace('http://', 'http://admin:p%40ss@word@'),
      shown: shownURL,
      problem: 'carries credentials[^\\n]*user entry',
    },
    { server: (url: string) => `${url}?token=hunter2`, shown: shownURL, problem: 'has a query string[^\\n]*user entry' },
    { server: (url: string) => `${url}/#hunter2`, shown: shownURL, problem: 'has a fragment[^\\n]*user entry' },
    // no URL at all (no scheme; a password with an unescaped / or ? breaks the parse): none of it is quoted
    {
      server: (url: string) => `admin:hunter2@${url.slice('http://'.length)}`,
      shown: 'not shown',
      problem: 'is no http:// or https:// URL',
    },
    {
      server: (url: string) => url.replace('http://', 'http://admin:hun/ter2hunter2@'),
      shown: 'not shown',
      problem: 'is no http:// or https:// URL',
    },
    {
      server: (url: string) => url.replace('http://', 'http://admin:hun?ter2hunter2@'),
      shown: 'not shown',
      problem: 'is no http:// or https:// URL',
    },
  ];
  for (const { server, shown, problem } of secretServers) {
    it(`a server URL ${server('http://h')}: a kubeconfig problem, said without quoting it, nothing sent, exit 2`, async () => {
      const kc = writeKubeconfig(server(c.double.url));
      try {
        const r = await cli(['status', '--kubeconfig', kc.path]);
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toMatch(
          new RegExp(
            `^ipallocator: cannot use context "double" of the kubeconfig "[^"]+": the server URL of cluster "double" \\(${shown}\\) ${problem}[^\\n]*\\n$`,
          ),
        );
        expect(r.stderr).not.toContain('admin');
        expect(r.stderr).not.toContain('hunter2');
        expect(r.stderr).not.toContain(TEST_TOKEN);
        expect(c.double.requests).toEqual([]);
      } finally {
        kc.remove();
      }
    });
  }

  // Regression: new URL() trims the spaces that client-node refuses ("You need to define an
  // absolute base url", "Invalid URL"), so the URL shown looked right; a number failed
  // client-node's load with its internals ("elt.cluster.server.replace is not a function")
  it.each([
    ['a space before it', (url: string) => JSON.stringify(` ${url}`), 'has a space or a control character before or after it'],
    ['a space after it', (url: string) => JSON.stringify(`${url} `), 'has a space or a control character before or after it'],
    ['a tab before it', (url: string) => JSON.stringify(`\t${url}`), 'has a space or a control character before or after it'],
  ])('a server URL with %s: a kubeconfig problem said as such, nothing sent, exit 2', async (_what, server, problem) => {
    const kc = writeKubeconfig(server(c.double.url));
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(kc.path)}: the server URL of cluster "double" (${c.double.url}) ${problem}, which kubeconfig does not allow: remove it\n`,
      );
      expect(c.double.requests).toEqual([]);
    } finally {
      kc.remove();
    }
  });

  it('a server that is a number (server: 6443): said to be no text, not client-node’s TypeError, exit 2', async () => {
    const kc = writeKubeconfig('6443');
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot read ${JSON.stringify(kc.path)}: a cluster's server is not text (a number, as in server: 6443, true, a list): a server URL is scheme://host:port with an optional path\n`,
      );
    } finally {
      kc.remove();
    }
  });

  /** A kubeconfig in a new temporary folder whose user's exec plugin prints `output` (one line). */
  function execPluginKubeconfig(server: string, output: string): { dir: string; path: string } {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const path = join(dir, 'config');
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: process.execPath,
      args: ['-e', `console.log(${JSON.stringify(output)})`],
    };
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { exec } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    return { dir, path };
  }

  /**
   * `ipallocator status` on an execPluginKubeconfig (its plugin printing nothing) whose exec entry
   * `edit` changed: the command's result and the kubeconfig's path (its folder removed after).
   */
  async function statusWithExecEntry(edit: (exec: Record<string, unknown>) => void): Promise<{ r: RunResult; path: string }> {
    const { dir, path } = execPluginKubeconfig(secure.double.url, '');
    try {
      const config = JSON.parse(readFileSync(path, 'utf8'));
      edit(config.users[0].user.exec);
      writeFileSync(path, JSON.stringify(config));
      return { r: await cli(['status', '--kubeconfig', path]), path };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // Regression: an exec credential plugin printing a bare token instead of an ExecCredential had
  // the token printed, quoted by JSON.parse's message ("Unexpected token 'e', "eyJ…" is not valid JSON").
  // Regression: one that printed nothing was said to print "something that is not JSON".
  it.each([
    ['a bare token', TEST_TOKEN, 'printed something that is not JSON (not shown: it may be a credential)'],
    ['nothing but a line break', '', 'printed nothing (or only whitespace, or JSON cut short)'],
  ])(
    'an exec credential plugin whose output is %s: said so, its output never printed, nothing sent, exit 2',
    async (_what, output, printed) => {
      const { dir, path } = execPluginKubeconfig(secure.double.url, output);
      try {
        const r = await cli(['status', '--kubeconfig', path]);
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toBe(
          `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent: the exec credential plugin of its user "u" (command ${JSON.stringify(process.execPath)}) exited with status 0 but ${printed}; an exec plugin must print an ExecCredential\n`,
        );
        expect(r.stderr).not.toContain(TEST_TOKEN.slice(0, 8));
        expect(secure.double.requests).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  // Regression: a plugin that exits 0 writing only on stderr (a login it could not do) was said to
  // print nothing, through client-node's words, without its command or what it wrote on stderr,
  // which a plugin that fails gets.
  it('an exec credential plugin that exits 0 writing only on stderr: said with its command and its first stderr line, as a failing one', async () => {
    const { dir, path } = execPluginKubeconfig(secure.double.url, '');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    config.users[0].user.exec.args = ['-e', 'console.error("\\nerror: login required \\u001b[31m");console.error("second line")'];
    writeFileSync(path, JSON.stringify(config));
    try {
      // what the plugin writes on stderr goes on to the process's own, kept here out of the test output
      const { value: r, stderr: passedOn } = await keepingStderr(() => cli(['status', '--kubeconfig', path]));
      expect(passedOn).toContain('second line\n');
      expect([r.code, r.stdout, r.stderr]).toEqual([
        2,
        '',
        `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent: the exec credential plugin of its user "u" (command ${JSON.stringify(process.execPath)}) exited with status 0 but printed nothing (or only whitespace, or JSON cut short) and wrote on stderr: error: login required \\u001b[31m; an exec plugin must print an ExecCredential\n`,
      ]);
      expect(secure.double.requests).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a plugin printing JSON that is no object with a status (a JSON string) was said
  // with client-node's TypeError, "Cannot read properties of undefined (reading 'clientCertificateData')".
  it.each([
    ['a JSON string', JSON.stringify(TEST_TOKEN)],
    ['a number', '42'],
  ])('an exec credential plugin that prints %s: said to print no ExecCredential, never printed, exit 2', async (_what, output) => {
    const { dir, path } = execPluginKubeconfig(secure.double.url, output);
    try {
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent, @kubernetes/client-node refused it: the user's credentials could not be read: its exec plugin printed no ExecCredential (JSON without a status object; not shown: it may be a credential); an exec plugin must print an ExecCredential\n`,
      );
      expect(r.stderr).not.toContain(TEST_TOKEN.slice(0, 8));
      expect(secure.double.requests).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a plugin that exited with a failure and wrote nothing on stderr (/bin/false), or
  // that printed a valid ExecCredential and then exited 1, was said as "… refused it: Error".
  it.each([
    ['writes nothing and exits 1', 'process.exit(1)', 'wrote nothing on stderr'],
    [
      'prints an ExecCredential, then exits 1',
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: ${JSON.stringify(TEST_TOKEN)} } })); process.exit(1)`,
      'wrote nothing on stderr',
    ],
    ['writes a reason on stderr and exits 3', "console.error('\\nlogin expired\\n'); process.exit(3)", 'wrote on stderr: login expired'],
  ])(
    'an exec credential plugin that %s: said to have failed, naming its command, its output never printed, exit 2',
    async (_what, script, stderr) => {
      const { dir, path } = execPluginKubeconfig(secure.double.url, '');
      const config = JSON.parse(readFileSync(path, 'utf8'));
      config.users[0].user.exec.args = ['-e', script];
      writeFileSync(path, JSON.stringify(config));
      try {
        // what the plugin writes on stderr goes on to the process's own, kept here out of the test output
        const { value: r } = await keepingStderr(() => cli(['status', '--kubeconfig', path]));
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toBe(
          `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent: the exec credential plugin of its user "u" (command ${JSON.stringify(process.execPath)}) failed: it exited with a status other than 0 (@kubernetes/client-node does not pass on which) and ${stderr}\n`,
        );
        expect(r.stderr).not.toContain(TEST_TOKEN.slice(0, 8));
        expect(secure.double.requests).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  // Regression: a plugin whose command could not be started was said in spawn's words, as a
  // refusal of client-node's ("… refused it: spawn /nonexistent ENOENT"). What each case gives is
  // spawn's error event as client-node passes it on (code ENOENT or EACCES, syscall "spawn
  // <command>"), or its throw (ENOTDIR, syscall "spawn"), the same under Node and Deno.
  it.each([
    ['a file that does not exist', (dir: string) => join(dir, 'missing'), 'not found (ENOENT)'],
    ['a name found nowhere on the PATH', () => 'ipallocator-no-such-plugin', 'not found on the PATH (ENOENT)'],
    [
      'a path through a file',
      (dir: string) => join(dir, 'config', 'plugin'),
      'not found (ENOTDIR: a part of its path is a file, not a directory)',
    ],
    [
      'a file without permission to execute it',
      (dir: string) => {
        writeFileSync(join(dir, 'plugin'), '#!/bin/sh\necho {}\n', { mode: 0o644 });
        return join(dir, 'plugin');
      },
      'not permitted (EACCES: a directory, or a file without permission to execute it)',
    ],
    ['a directory', (dir: string) => dir, 'not permitted (EACCES: a directory, or a file without permission to execute it)'],
  ])('an exec credential plugin whose command is %s: said not to run, naming its command and why, exit 2', async (_what, command, why) => {
    const { dir, path } = execPluginKubeconfig(secure.double.url, '');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    config.users[0].user.exec.command = command(dir);
    config.users[0].user.exec.args = ['--token=SECRET_IN_ARGS'];
    writeFileSync(path, JSON.stringify(config));
    try {
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent: the exec credential plugin of its user "u" (command ${JSON.stringify(command(dir))}) could not be run: ${why}\n`,
      );
      expect(secure.double.requests).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a plugin that never answered was said as the API server not answering ("the API
  // server at … did not answer within 1s"), and was left running after the command had ended.
  it('an exec credential plugin that never answers: said so, naming the user and the command (not its args), stopped, nothing sent, exit 2', async () => {
    const { dir, path } = execPluginKubeconfig(secure.double.url, '');
    const pidFile = join(dir, 'plugin.pid');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    config.users[0].user.exec.args = ['-e', hangingPlugin(pidFile), '--', '--token=SECRET_IN_ARGS'];
    writeFileSync(path, JSON.stringify(config));
    try {
      // long enough for the plugin to start and write its pid under a loaded machine (Deno starts slowly)
      const r = await cli(['status', '--kubeconfig', path, '--request-timeout', '3s']);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent: the exec credential plugin of its user "u" (command ${JSON.stringify(process.execPath)}) did not answer within 3s and was stopped (list servicecidrs.networking.k8s.io); to wait longer, pass --request-timeout\n`,
      );
      expect(r.stderr).not.toContain('SECRET_IN_ARGS');
      expect(secure.double.requests).toEqual([]);
      const pid = Number(readFileSync(pidFile, 'utf8'));
      await until(() => !isRunning(pid), 'the plugin to be stopped');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: each was said as the API server out of reach ("list … failed without an answer
  // from the API server at …: fetch failed: error:1E08010C:DECODER routines::unsupported", "cannot
  // reach the API server at …: connection refused" for the proxy).
  it.each([
    [
      'client-key-data that is no key',
      { 'client-key-data': base64('not a key\n') },
      {},
      'the client-key-data of user "u" in the kubeconfig is not a private key (PEM, unencrypted)',
    ],
    [
      'a client key that is not the certificate’s',
      { 'client-key-data': base64(OTHER_KEY) },
      {},
      `the client-key-data of user "u" in the kubeconfig does not match its client-certificate-data (the key is not the certificate's)`,
    ],
    [
      'a proxy-url nothing listens at',
      {},
      { 'proxy-url': 'http://127.0.0.1:9' },
      'cannot reach the proxy at http://127.0.0.1:9 (proxy-url of cluster "c" in the kubeconfig): connection refused (ECONNREFUSED)',
    ],
    // said as "failed without an answer from the API server at …: fetch failed: connect ECONNREFUSED 127.0.0.1:9"
    [
      'a socks5:// proxy-url nothing listens at',
      {},
      { 'proxy-url': 'socks5://127.0.0.1:9' },
      'cannot reach the proxy at socks5://127.0.0.1:9 (proxy-url of cluster "c" in the kubeconfig): connection refused (ECONNREFUSED)',
    ],
    // said as "@kubernetes/client-node refused it: Invalid URL protocol: the URL must start with `http:` or `https:`."
    [
      'a proxy-url without a scheme',
      {},
      { 'proxy-url': 'proxy.corp:3128' },
      'the proxy-url of cluster "c" in the kubeconfig does not start with http://, https://, socks5:// or socks5h:// (a proxy is named with its scheme, as in http://proxy.example:3128)',
    ],
    // Regression: said to "not start with http://, …", which it does (kubectl: "invalid 'proxy-url'
    // "http://[bad" for cluster "c": could not parse")
    [
      'a proxy-url that is no URL',
      {},
      { 'proxy-url': 'http://user:proxy-secret@[bad' },
      'the proxy-url of cluster "c" in the kubeconfig is no URL (it is not shown: a password may sit in it), which kubectl refuses ' +
        'too ("could not parse"): a proxy is named as in http://proxy.example:3128',
    ],
    // said as "@kubernetes/client-node refused it: ENOENT: no such file or directory, open '…'"
    [
      'a certificate-authority file that is not there',
      {},
      { 'certificate-authority': '/nonexistent/ipallocator/ca.crt' },
      'cannot read the certificate-authority file of cluster "c" in the kubeconfig ("/nonexistent/ipallocator/ca.crt"): no such file or directory (ENOENT)',
    ],
  ])('a kubeconfig with %s: said to be the kubeconfig’s, naming the field, exit 2', async (what, user, cluster, said) => {
    // Deno sends a request without the client certificate when its key does not parse: nothing fails
    if (what === 'client-key-data that is no key' && 'Deno' in globalThis) return;
    const tls = await startTlsServer();
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const path = join(dir, 'config');
    writeFileSync(
      path,
      JSON.stringify({
        clusters: [{ name: 'c', cluster: { server: tls.url, 'certificate-authority-data': base64(SERVER_CERT), ...cluster } }],
        users: [{ name: 'u', user: { 'client-certificate-data': base64(CLIENT_CERT), 'client-key-data': base64(CLIENT_KEY), ...user } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    try {
      const r = await cli(['status', '--kubeconfig', path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${tls.url} was not sent: ${said}\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await tls.close();
    }
  });

  // Regression: an exec entry without a command was said as a plugin that had run and failed
  // ("(command \"\") failed: it exited with a status other than 0 … and wrote on stderr: No
  // command was specified for exec authProvider!"), client-node's refusal of it. It is refused as
  // the kubeconfig is read, as kubectl refuses it.
  it.each([
    ['empty', ''],
    ['absent', undefined],
  ])('an exec credential plugin whose command is %s: said to name no command, exit 2', async (_what, command) => {
    const { r, path } = await statusWithExecEntry((exec) => {
      exec.command = command;
    });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the exec entry of user "u" (context "x") has no command, which kubectl refuses too ` +
        '("command must be specified for u to use exec authentication plugin"): set command to the program that prints its ExecCredential\n',
    );
    expect(secure.double.requests).toEqual([]);
  });

  // Regression: an env entry without a name ran the plugin with the variable "undefined" set (a
  // null entry failed as the request was sent, said to be malformed); kubectl refuses both.
  it.each([
    ['a value alone', { value: 'SECRET_IN_ENV' }],
    ['an empty name', { name: '', value: 'SECRET_IN_ENV' }],
    ['null', null],
  ])('an exec credential plugin with an env entry of %s: said to name no variable, exit 2', async (_what, entry) => {
    const { r, path } = await statusWithExecEntry((exec) => {
      exec.env = [{ name: 'A', value: 'b' }, entry];
    });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the exec entry of user "u" (context "x") has an env entry (number 2) without a name, ` +
        'which kubectl refuses too ("env variable name must be specified for u to use exec authentication plugin"): name the variable, or remove the entry\n',
    );
    expect(secure.double.requests).toEqual([]);
  });

  // Regression: an exec entry with a field of the wrong type was said in spawn's or client-node's
  // words, which quote the value: args given as one text printed the token in it ("Received type
  // string ('--token=…')"); env given as a mapping was "exec.env.forEach is not a function".
  // A field of the wrong type is refused as the kubeconfig is read (kubectl cannot decode it); what
  // spawn alone refuses, a NUL, as the plugin is started.
  it.each([
    ['args that are one text, not a list', { args: '--token=SECRET_IN_ARGS' }, 'has args that are a string, not a list of texts'],
    [
      'env that is a mapping, not a list',
      { env: { TOKEN: 'SECRET_IN_ARGS' } },
      'has env that is a mapping, not a list of name and value entries',
    ],
    ['a command that is a number', { command: 42 }, 'has a command that is a number, not text'],
  ])(
    'an exec credential plugin whose entry has %s: refused as the kubeconfig is read, its values never printed, exit 2',
    async (_what, entry, said) => {
      const { r, path } = await statusWithExecEntry((exec) => Object.assign(exec, entry));
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toMatch(
        `ipallocator: cannot read ${JSON.stringify(path)}: the exec entry of user "u" ${said}, which kubectl cannot read either (what it holds is not shown)`,
      );
      expect(r.stderr).not.toContain('SECRET');
      expect(secure.double.requests).toEqual([]);
    },
  );

  it.each([
    ['an arg holding a NUL', { args: ['--token=SECRET_IN_ARGS\u0000'] }],
    ['an env value holding a NUL', { env: [{ name: 'TOKEN', value: 'SECRET_IN_ARGS\u0000' }] }],
  ])('an exec credential plugin whose entry has %s: said to be malformed, its values never printed, exit 2', async (_what, entry) => {
    const { r, path } = await statusWithExecEntry((exec) => Object.assign(exec, entry)); // the command stays node's
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent: the exec credential plugin of its user "u" (command ${JSON.stringify(process.execPath)}) could not be run: its exec entry in the kubeconfig is malformed (command must be text, args a list of texts, env a list of name and value texts, none holding a NUL; not shown: it may hold a credential)\n`,
    );
    expect(r.stderr).not.toContain('SECRET');
    expect(secure.double.requests).toEqual([]);
  });

  // Regression: client-node's failure quoted the command line, cmd-args included ("Failed to
  // refresh token: Error: Command failed: \"/…/missing\" --secret …"), twice.
  it('a gcp auth-provider whose command fails: said so, its args never printed, exit 2', async () => {
    const { dir, path } = execPluginKubeconfig(secure.double.url, '');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    // a command that runs and fails without a word: a missing one would have the shell say so on
    // the test run's own stderr (client-node runs it with execSync, whose stderr is the process's)
    const command = join(dir, 'fails');
    writeFileSync(command, `#!/bin/sh\n: > ${JSON.stringify(join(dir, 'ran'))}\nexit 1\n`, { mode: 0o755 });
    config.users[0].user = {
      'auth-provider': { name: 'gcp', config: { 'cmd-path': command, 'cmd-args': '--token=SECRET_IN_ARGS' } },
    };
    writeFileSync(path, JSON.stringify(config));
    try {
      const r = await cli(['status', '--kubeconfig', path]);
      expect(existsSync(join(dir, 'ran'))).toBe(true);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent, @kubernetes/client-node refused it: the user's credentials could not be read: the command of its auth-provider (cmd-path) could not be run or failed (its args are not shown: they may hold a credential)\n`,
      );
      expect(secure.double.requests).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: client-node reads a user's token-file as it loads the kubeconfig, and its ENOENT
  // was said as the kubeconfig's ("cannot read <kubeconfig>: ENOENT: … open '/…/missing'").
  // over https://: kubectl reads no token-file for an http:// server, and nor does the command line
  it('a user whose token-file cannot be read: said to be the token-file, with the user, read from the kubeconfig’s folder, exit 2', async () => {
    const { dir, path } = execPluginKubeconfig(secure.double.url, '');
    const config = JSON.parse(readFileSync(path, 'utf8'));
    try {
      for (const [tokenFile, said] of [
        [join(dir, 'missing'), 'no such file or directory (ENOENT)'],
        // relative: read from the kubeconfig's folder, as kubectl reads it, and said with that path
        ['ipallocator-missing-token', 'no such file or directory (ENOENT)'],
      ]) {
        config.users[0].user = { 'token-file': tokenFile };
        writeFileSync(path, JSON.stringify(config));
        const r = await cli(['status', '--kubeconfig', path]);
        expect([r.code, r.stdout]).toEqual([2, '']);
        const file = tokenFile.startsWith(dir) ? tokenFile : join(dir, tokenFile);
        expect(r.stderr).toBe(
          `ipallocator: cannot read ${JSON.stringify(path)}: the token-file ${JSON.stringify(file)} of user ${JSON.stringify(config.users[0].name)} cannot be read: ${said}\n`,
        );
      }
      expect(secure.double.requests).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: said only "list servicecidrs.networking.k8s.io failed without an answer from the
  // API server at http://127.0.0.1:6000 (context "double"): fetch failed: bad port", no word of why
  // kubectl reaches the same server.
  it.each(['http://127.0.0.1:6000', 'http://127.0.0.1:1'])(
    'a server on a port fetch never connects to (%s): the request was not sent, said why and what to do',
    async (server) => {
      const kc = writeKubeconfig(server);
      try {
        const r = await cli(['status', '--kubeconfig', kc.path]);
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toBe(
          `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(kc.path)}: the request to ${server} was not sent: ` +
            `fetch never connects to port ${new URL(server).port}, one of the Fetch standard's "bad ports", so no request to this server can be sent; ` +
            'kubectl, which has no such list, reaches it: serve the API server on another port, or point the kubeconfig at one that forwards to it ' +
            '(`kubectl proxy` serves http://127.0.0.1:8001)\n',
        );
      } finally {
        kc.remove();
      }
    },
  );

  // Regression: a redirect to such a port was said as "list servicecidrs.networking.k8s.io failed
  // without an answer from the API server at … : fetch failed: bad port", naming neither the
  // redirect nor why, and then without where it led; the API server's own port is fine.
  it('a redirect to a port fetch never connects to: said to be the answer of the API server, a redirect, and why no request follows it', async () => {
    c.double.proxyAnswerNext('list', 'servicecidrs', '', { status: 302, headers: { location: 'http://127.0.0.1:1/login' } });
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `ipallocator: list servicecidrs.networking.k8s.io failed: the API server at ${c.double.url} (context "double") answered with a redirect ` +
        `to http://127.0.0.1:1/login, on port 1, a port fetch never connects to, one of the Fetch standard's "bad ports"; ` +
        'kube-apiserver does not redirect API requests: something in front of it does (a proxy, a login page), or the kubeconfig names another server\n',
    );
  });

  // Deno without --allow-net: its refusal lies a few causes deep under "fetch failed".
  /** `ipallocator status` under Deno with only the permissions given. */
  function statusUnderDeno(
    permissions: string[],
    kubeconfig = c.kubeconfig,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const deno = join(ROOT, 'node_modules', '.bin', 'deno');
    return new Promise((done) => {
      execFile(
        deno,
        ['run', ...permissions, 'cli/bin.ts', 'status', '--kubeconfig', kubeconfig],
        { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
        (err, stdout, stderr) => done({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), stdout, stderr }),
      );
    });
  }

  it('under Deno without --allow-net: says what Deno refused and which flag it needs, exit 2', async () => {
    const r = await statusUnderDeno(['--allow-read', '--allow-env']);
    const host = new URL(c.double.url).host;
    expect(r.stderr).toBe(
      `ipallocator: cannot reach the API server at ${c.double.url} (context "double"): Requires net access to "${host}", run again with the --allow-net flag\n`,
    );
    expect([r.code, r.stdout]).toEqual([2, '']);
  });

  it('under Deno, a server on a port fetch never connects to: the request was not sent, said why, exit 2', async () => {
    const kc = writeKubeconfig('http://127.0.0.1:6000');
    try {
      const r = await statusUnderDeno(['--allow-all'], kc.path);
      expect(r.stderr).toMatch(
        /^ipallocator: cannot use context "double" of the kubeconfig "[^"]+": the request to http:\/\/127\.0\.0\.1:6000 was not sent: fetch never connects to port 6000, one of the Fetch standard's "bad ports", /,
      );
      expect([r.code, r.stdout]).toEqual([2, '']);
    } finally {
      kc.remove();
    }
  });

  // Regression: said as a failure to reach the server ("cannot reach the API server at …:
  // Requires run access to …"), while nothing was sent
  it('under Deno without --allow-run, a user with an exec credential plugin: its plugin said not to run, and the flag, exit 2', async () => {
    const { dir, path } = execPluginKubeconfig(secure.double.url, '');
    try {
      const r = await statusUnderDeno(['--allow-read', '--allow-env', '--allow-net', '--allow-sys'], path);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "x" of the kubeconfig ${JSON.stringify(path)}: the request to ${secure.double.url} was not sent: the exec credential plugin of its user "u" (command ${JSON.stringify(process.execPath)}) could not be run: Requires run access to "${process.execPath}", run again with the --allow-run flag\n`,
      );
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(secure.double.requests).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: without --allow-env, client-node's dependencies fail as they load, and the
  // command printed "internal error" with Deno's stack trace.
  it('under Deno without --allow-env: says what Deno refused and which flag it needs, exit 2, no stack trace', async () => {
    const r = await statusUnderDeno(['--allow-read', '--allow-net']);
    expect(r.stderr).toBe(
      'ipallocator: Deno denied a permission the command needs: Requires env access, run again with the --allow-env flag\n',
    );
    expect([r.code, r.stdout]).toEqual([2, '']);
  });

  // Found by an outside tester: --version printed "unknown" and exit 0 (it reads package.json)
  it('--version under Deno without --allow-read: says what Deno refused and which flag it needs, exit 2', async () => {
    const deno = join(ROOT, 'node_modules', '.bin', 'deno');
    const run = (permissions: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        execFile(
          deno,
          ['run', ...permissions, 'cli/bin.ts', '--version'],
          { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
          (err, stdout, stderr) => done({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), stdout, stderr }),
        );
      });
    const denied = await run([]);
    expect([denied.code, denied.stdout]).toEqual([2, '']);
    expect(denied.stderr).toMatch(
      /^ipallocator: Deno denied a permission the command needs: Requires read access to .*--allow-read flag\n$/,
    );
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    expect(await run(['--allow-read'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  // Regression: installed (npm install, deno add), --version under Deno without --allow-read said
  // "Deno denied a permission the command needs: Requires read access to …", for a version that
  // ships with the package. Deno lets an npm package load its own files without the flag.
  it('--version of the installed package under Deno, with no permission: the version', () => {
    const app = mkdtempSync(join(tmpdir(), 'ipallocator-version-'));
    try {
      const installed = join(app, 'node_modules', 'ipallocator');
      mkdirSync(installed, { recursive: true });
      cpSync(join(ROOT, 'dist'), join(installed, 'dist'), { recursive: true });
      cpSync(join(ROOT, 'package.json'), join(installed, 'package.json'));
      writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true }\n');
      const deno = join(ROOT, 'node_modules', '.bin', 'deno');
      const out = execFileSync(deno, ['run', join(installed, 'dist', 'cli', 'bin.js'), '--version'], {
        cwd: app,
        env: { ...process.env, NO_COLOR: '1' },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(out).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('a server that accepts and never answers: one line naming the server, the context and the timeout, exit 2', async () => {
    const silent = await SilentServer.start();
    const kc = writeKubeconfig(silent.url);
    try {
      for (const [command, timeout, shown] of [
        ['status', '150ms', '150ms'],
        ['check', '1', '1s'], // a bare whole number is seconds, as with kubectl
        ['status', '0m0.25s', '250ms'], // a Go duration, as kubectl reads it (1m30s)
        ['status', '+.15s', '150ms'], // Go's sign and a fraction without a leading digit
        ['status', '2.007s', '2007ms'], // not 2008ms: 2.007 × 1000 is 2007.0000000000002 in floating point
        ['check', '+1', '1s'], // a sign on a whole number, as client-go's ParseInt takes it
        ['check', '200000\u00b5s', '200ms'], // Go's microseconds
      ] as const) {
        const r = await cli([command, '--kubeconfig', kc.path, '--request-timeout', timeout]);
        expect(r.code).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toBe(
          `ipallocator: the API server at ${silent.url} (context "double") did not answer within ${shown} (list servicecidrs.networking.k8s.io); to wait longer, pass --request-timeout\n`,
        );
      }
      await until(() => silent.openConnections() === 0, 'the command to drop its connections');
    } finally {
      kc.remove();
      await silent.close();
    }
  });

  // Regression: a server that answered at once and then sent its body a byte at a time was said
  // to have "not answered within 1s", which sent the operator looking for a server that is down.
  it('a server that answers and then trickles its body past the timeout: says it answered and its body did not end in time, exit 2', async () => {
    const trickle = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"ServiceCIDRList","apiVersion":"networking.k8s.io/v1","metadata":{},"items":[');
      const drip = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => trickle.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}`;
    const kc = writeKubeconfig(url);
    try {
      // a timeout long enough for the status and headers to arrive on a loaded machine: the body never ends
      const r = await cli(['status', '--kubeconfig', kc.path, '--request-timeout', '2s']);
      expect(r).toEqual({
        code: 2,
        stdout: '',
        stderr:
          `ipallocator: the API server at ${url} (context "double") answered list servicecidrs.networking.k8s.io (HTTP 200), ` +
          'but its answer did not end within 2s (a slow network, or a server or proxy sending slowly); to wait longer, pass --request-timeout\n',
      });
    } finally {
      kc.remove();
      trickle.closeAllConnections();
      await new Promise<void>((resolve) => trickle.close(() => resolve()));
    }
  });

  // Regression: it said the server "did not answer within 1500ms" although it answered 429 each time.
  it('a server that throttles (429) every attempt until the timeout: says it was throttled, not silent, exit 2', async () => {
    c.double.failNext('list', 100, 429); // TooManyRequests, retryAfterSeconds 1
    // a timeout long enough for the first 429 to arrive on a loaded machine
    const r = await cli(['status', '--kubeconfig', c.kubeconfig, '--request-timeout', '3s']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(
      new RegExp(
        `^ipallocator: the API server at ${c.double.url.replace(/\./g, '\\.')} \\(context "double"\\) kept turning the request away as too busy ` +
          '\\(429 Too Many Requests, (?:once|\\d+ times), each waited out as it asked\\) until the 3s request timeout passed ' +
          '\\(list servicecidrs\\.networking\\.k8s\\.io\\); it is overloaded: try again later, or pass a longer --request-timeout\n$',
      ),
    );
  });

  it('a server that answers 504 with a Retry-After every attempt until the timeout: says so, not "too busy", exit 2', async () => {
    c.double.failNext('list', 100, 504); // Timeout, retryAfterSeconds 1 (and so Retry-After: 1): sent again, as kubectl does
    // a timeout long enough for the first 504 to arrive on a loaded machine
    const r = await cli(['status', '--kubeconfig', c.kubeconfig, '--request-timeout', '3s']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(
      new RegExp(
        `^ipallocator: the API server at ${c.double.url.replace(/\./g, '\\.')} \\(context "double"\\) kept answering HTTP 504 with a Retry-After ` +
          '\\((?:once|\\d+ times), each waited out as it asked\\) until the 3s request timeout passed ' +
          '\\(list servicecidrs\\.networking\\.k8s\\.io\\); try again later, or pass a longer --request-timeout\n$',
      ),
    );
  });

  // Regression: after 10 waits the eleventh 504 was printed as a single failure ("failed: HTTP 504 …").
  it('a server that asks to wait more often than kubectl waits (10 times): says it gave up after 10 resends and quotes the last answer, exit 2', async () => {
    c.double.failNext('list', 11, 504, 'etcd is slow'); // Timeout, retryAfterSeconds 1 (and so Retry-After: 1)
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `ipallocator: the API server at ${c.double.url} (context "double") kept asking to come back later: ` +
        'list servicecidrs.networking.k8s.io: gave up after 10 resends (the server answered 504 10 times with a Retry-After, each waited out as it asked); ' +
        'the last answer: HTTP 504 Timeout: etcd is slow; try again later\n',
    );
    expect(c.double.requestsOf('list')).toHaveLength(11);
  }, 30_000);

  // Regression: a proxy's error page in front of the API server was reported as a bare "HTTP 502".
  it('an answer from a proxy instead of the API server (an HTML 502 page): its reason phrase and the page described, exit 2', async () => {
    const page = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\u001b[2J</body>\r\n</html>\r\n';
    const proxy = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(502, { 'Content-Type': 'text/html' });
        res.end(page);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const kc = writeKubeconfig(url);
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: list servicecidrs.networking.k8s.io failed: the API server at ${url} (context "double") answered HTTP 502 Bad Gateway with a body of ${page.length} bytes (text/html), ` +
          'not a Kubernetes Status (a proxy in front of the API server?): "502 Bad Gateway"\n',
      );
    } finally {
      kc.remove();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('a server error: the verb, the resource, the server and its context, and the status, exit 2', async () => {
    // Regression: which server answered was not said (every other failure names it)
    c.double.failNext('list', 1, 503, 'etcd is unhappy');
    const r = await cli(['status', '--kubeconfig', c.kubeconfig]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `ipallocator: list servicecidrs.networking.k8s.io failed: the API server at ${c.double.url} (context "double") answered HTTP 503 etcd is unhappy\n`,
    );
  });

  // Regression: said as Node's "cannot read /nonexistent/kubeconfig: ENOENT: no such file or
  // directory, open '/nonexistent/kubeconfig'", where a missing file of $KUBECONFIG is said in words
  it('a kubeconfig that does not exist is said in words, naming the option, as a missing file of $KUBECONFIG: exit 2', async () => {
    const missing = await cli(['status', '--kubeconfig', '/nonexistent/kubeconfig']);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      'ipallocator: the file --kubeconfig names does not exist: "/nonexistent/kubeconfig"\n',
    ]);
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = '/nonexistent/kubeconfig';
    try {
      const listed = await cli(['status']);
      expect(listed.stderr).toMatch(/^ipallocator: .*none of the files \$KUBECONFIG names exists: "\/nonexistent\/kubeconfig"/);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  // (inside a pod with a service account, client-node would use that instead: nothing to test)
  it.skipIf(existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token'))(
    'no kubeconfig anywhere: says so, instead of a refused connection to a server nobody named',
    async () => {
      const home = mkdtempSync(join(tmpdir(), 'ipallocator-home-')); // no .kube/config in it
      const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
      process.env.HOME = home;
      delete process.env.KUBECONFIG;
      try {
        const r = await cli(['status']);
        expect(r.code).toBe(2);
        expect(r.stderr).toBe(
          'ipallocator: found no kubeconfig: $KUBECONFIG is not set, ~/.kube/config does not exist, and this is not a pod with a service account; pass --kubeconfig FILE\n',
        );
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  // kubectl (clientcmd) reads KUBECONFIG="" as not set: ~/.kube/config, else no kubeconfig at all.
  // Regression: with none there, the message said "$KUBECONFIG is not set" of a variable set to "".
  it.skipIf(existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token'))(
    'KUBECONFIG set but empty reads ~/.kube/config, as kubectl does, and says it is empty when there is none',
    async () => {
      const home = mkdtempSync(join(tmpdir(), 'ipallocator-home-'));
      const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
      process.env.HOME = home;
      process.env.KUBECONFIG = '';
      try {
        expect(await cli(['status'])).toEqual({
          code: 2,
          stdout: '',
          stderr:
            'ipallocator: found no kubeconfig: $KUBECONFIG is empty (read as not set, as kubectl reads it), ~/.kube/config does not exist, ' +
            'and this is not a pod with a service account; pass --kubeconfig FILE\n',
        });
        // ~/.kube/config is the one read: the double's kubeconfig there, status answers as with it named
        mkdirSync(join(home, '.kube'));
        writeFileSync(join(home, '.kube', 'config'), readFileSync(c.kubeconfig));
        const named = await cli(['status', '--json', '--kubeconfig', c.kubeconfig]);
        expect(named.code).toBe(0);
        expect(await cli(['status', '--json'])).toEqual(named);
        delete process.env.KUBECONFIG;
        expect(await cli(['status', '--json'])).toEqual(named);
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  // kubectl (clientcmd's loading rules) splits KUBECONFIG with filepath.SplitList and skips the
  // empty entries: ":" names no file, so it reads none — not ~/.kube/config — and, outside a pod
  // with a service account (whose config it would take), has no configuration.
  // Regression: "cannot read the default kubeconfig ($KUBECONFIG or ~/.kube/config): …", of a
  // ~/.kube/config never looked at.
  it.skipIf(existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token'))(
    'KUBECONFIG of path separators only names no file: ~/.kube/config is not read, as kubectl; no kubeconfig outside a pod',
    async () => {
      const home = mkdtempSync(join(tmpdir(), 'ipallocator-home-'));
      const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
      process.env.HOME = home;
      try {
        mkdirSync(join(home, '.kube'));
        writeFileSync(join(home, '.kube', 'config'), readFileSync(c.kubeconfig));
        for (const list of [delimiter, delimiter.repeat(3)]) {
          process.env.KUBECONFIG = list;
          expect(await cli(['status'])).toEqual({
            code: 2,
            stdout: '',
            stderr: `ipallocator: found no kubeconfig: $KUBECONFIG (${JSON.stringify(list)}) names no file: it holds only path separators, and this is not a pod with a service account; pass --kubeconfig FILE\n`,
          });
          // --kubeconfig is read as ever, and map has no kubeconfig file to keep its --out off
          expect((await cli(['status', '--json', '--kubeconfig', c.kubeconfig])).code).toBe(0);
        }
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  /**
   * `status` over a kubeconfig written in `dir`: cluster "c" and user "u" (a token), `entry` (YAML
   * flow text, e.g. `proxy-url: 8080`) added to the cluster's fields or the user's.
   */
  async function statusWith(dir: string, where: 'cluster' | 'user', entry: string) {
    const path = join(dir, 'config');
    writeFileSync(
      path,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"${where === 'cluster' ? `, ${entry}` : ''}}}]\n` +
        `users: [{name: u, user: {token: t${where === 'user' ? `, ${entry}` : ''}}}]\ncontexts: [{name: a, context: {cluster: c, user: u}}]\ncurrent-context: a\n`,
    );
    return { path, r: await cli(['status', '--kubeconfig', path]) };
  }

  // Found by an outside tester: client-node reads these files whole and synchronously as it
  // connects; /dev/zero filled memory (GBs in seconds) and a FIFO blocked for ever, no timeout
  // reaching either, and a directory came out as fs's raw error (EISDIR)
  it.each([
    ['certificate-authority', '/dev/zero', 'the certificate-authority file of cluster "c" ("/dev/zero") is a character device, not a file'],
    ['certificate-authority', 'FIFO', 'the certificate-authority file of cluster "c" ("FIFO") is a named pipe (FIFO), not a file'],
    ['certificate-authority', 'DIR', 'the certificate-authority file of cluster "c" ("DIR") is a directory, not a file'],
    ['client-certificate', '/dev/zero', 'the client-certificate file of user "u" ("/dev/zero") is a character device, not a file'],
  ])('a kubeconfig whose %s is %s is refused before anything reads it', async (field, given, said) => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const value = given === 'FIFO' ? fifo : given === 'DIR' ? dir : given;
    const entry = `${JSON.stringify(field)}: ${JSON.stringify(value)}`;
    try {
      const { r } =
        field === 'certificate-authority'
          ? await statusWith(dir, 'cluster', entry)
          : await statusWith(dir, 'user', `${entry}, "client-key": ${JSON.stringify(fifo)}`); // a pair: not half a certificate
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(said.replace('"FIFO"', JSON.stringify(fifo)).replace('"DIR"', JSON.stringify(dir)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Found by an outside tester: each ended in a TypeError of fs, Buffer or client-node naming no field
  it.each([
    ['certificate-authority: 12', 'cluster', 'the certificate-authority of cluster "c" is a number, not text'],
    ['certificate-authority-data: 12', 'cluster', 'the certificate-authority-data of cluster "c" is a number, not text'],
    ['proxy-url: 8080', 'cluster', 'the proxy-url of cluster "c" is a number, not text'],
    ['proxy-url: true', 'cluster', 'the proxy-url of cluster "c" is true or false, not text'],
    ['client-certificate: [a]', 'user', 'the client-certificate of user "u" is a list, not text'],
  ])('a kubeconfig whose %s is refused at load, naming the field', async (entry, where, said) => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    try {
      const { r, path } = await statusWith(dir, where as 'cluster' | 'user', entry);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`ipallocator: cannot read ${JSON.stringify(path)}: ${said}, which kubectl cannot read either\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // each names what the kubeconfig lacks; names from the file are escaped like any text from elsewhere
  const selectsNothing: [string, string, string[], string][] = [
    ['no current-context', 'contexts: []', [], 'names no current-context: choose one with --context (contexts: none)'],
    [
      'no current-context, among more than a thousand contexts (counted as the command counts)',
      `contexts: [${Array.from({ length: 1_012 }, (_, i) => `{name: k${i}, context: {cluster: c, user: u}}`).join(', ')}]`,
      [],
      '(contexts: "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9" and 1,002 more)',
    ],
    [
      'a current-context that is not a context',
      'contexts: [{name: a, context: {cluster: c, user: u}}]\ncurrent-context: gone',
      [],
      'the current-context "gone" is not in the kubeconfig',
    ],
    [
      'a context whose cluster is missing',
      'contexts: [{name: a, context: {cluster: nope, user: u}}]\ncurrent-context: a',
      [],
      'context "a" names the cluster "nope", which is not in the kubeconfig',
    ],
    [
      // Regression: every request went out without credentials, and a 401 read as their refusal.
      'a context whose user is missing, as kubectl says it',
      'contexts: [{name: a, context: {cluster: c, user: nobody}}]\ncurrent-context: a',
      [],
      'user "nobody" was not found for context "a"',
    ],
    [
      '--context naming none, among hostile names',
      'contexts: [{name: "x\\u001b[2J\\nFAKE", context: {cluster: c, user: u}}]\ncurrent-context: a',
      ['--context', 'y\u001b]0;t\u0007'],
      'context "y\\x1b]0;t\\a" is not in the kubeconfig',
    ],
  ];
  it.each(selectsNothing)('a kubeconfig that selects no cluster (%s) says what it lacks', async (_name, yaml, flags, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const path = join(dir, 'config');
    writeFileSync(
      path,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\n${yaml}\n`,
    );
    try {
      const r = await cli(['status', '--kubeconfig', path, ...flags]);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n')[0]).toContain(message); // on one line
      for (const raw of ['\u001b', '\u0007']) expect(r.stderr).not.toContain(raw); // nothing raw for the terminal
      expect(r.stderr).not.toContain('pass --kubeconfig');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a context whose user is not in the kubeconfig is refused before any request, exit 2', async () => {
    const kc = writeKubeconfig(c.double.url);
    writeFileSync(kc.path, readFileSync(kc.path, 'utf8').replace('    user: tester', '    user: missing-user'));
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(kc.path)}: user "missing-user" was not found for context "double"\n`,
      );
      expect(c.double.requests).toEqual([]);
    } finally {
      kc.remove();
    }
  });

  // Regression: a named pipe nothing wrote to held the command for ever (opening it waited for a
  // writer; --request-timeout does not apply to reading a file), and /dev/zero was read up to the
  // bound. Only a regular file is read as a kubeconfig: anything else is said to be what it is.
  it('a kubeconfig that is neither a file nor a pipe (a device, a directory), or a named pipe nothing writes to, is refused by what it is, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const saved = process.env.KUBECONFIG;
    try {
      for (const [path, what, both] of [
        // waited for (5 s) once: by --kubeconfig
        [fifo, 'a named pipe (FIFO) nothing wrote to within 5 s', false],
        ['/dev/zero', 'a character device', true],
        [dir, 'a directory', true],
      ] as const) {
        for (const given of both ? [true, false] : [true]) {
          if (given) delete process.env.KUBECONFIG;
          else process.env.KUBECONFIG = path;
          const r = await cli(given ? ['status', '--kubeconfig', path] : ['status']);
          expect([r.code, r.stdout, r.stderr]).toEqual([
            2,
            '',
            `ipallocator: "${path}" is not a kubeconfig: it is ${what}, not a regular file\n`,
          ]);
        }
      }
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a kubeconfig given as a pipe (--kubeconfig <(…)) was read a second time for the
  // message, found empty, and said to hold no YAML document; then, refused as no regular file.
  it('a kubeconfig given as a pipe is read once: what it holds is said as for a file, and a good one is used', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    // the writer is another process (the command reads the pipe synchronously), which opens the
    // pipe when it is ready; resolves when it is done
    const feed = (text: string) =>
      new Promise((resolve) =>
        execFile(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(fifo)}, ${JSON.stringify(text)})`], resolve),
      );
    try {
      for (const [text, said] of [
        ['null\n', 'its YAML is null'],
        ['hello\n', 'its YAML is a single string (5 characters)'],
      ] as const) {
        const written = feed(text);
        const r = await cli(['status', '--kubeconfig', fifo]);
        await written;
        expect([r.code, r.stderr]).toEqual([
          2,
          `ipallocator: "${fifo}" is not a kubeconfig: ${said}, not a mapping of clusters, contexts, users and current-context\n`,
        ]);
      }
      const written = feed(readFileSync(c.kubeconfig, 'utf8'));
      const r = await cli(['status', '--kubeconfig', fifo]);
      await written;
      expect([r.code, r.stderr]).toEqual([0, '']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a token with a CR, LF or NUL (or another control character) in it was printed whole: fetch refuses the
  // Authorization header with a message quoting it. Such a token is now refused as the kubeconfig is
  // read, naming the user and the field, as kubectl refuses it (over https://: no token is sent to
  // an http:// server, by kubectl or the command line).
  it.each([
    ['a CR', '"SECRET-IN-HEADER\\rX"'],
    ['a LF', '"SECRET-IN-HEADER\\nX"'],
    ['a NUL', '"SECRET-IN-HEADER\\0X"'],
    // Regression: these two were said as a failure to reach the server, "fetch failed: invalid Authorization header"
    ['a DEL', '"SECRET-IN-HEADER\\x7fX"'],
    ['a vertical tab', '"SECRET-IN-HEADER\\vX"'],
  ])('a token with %s in it: refused naming the user and the token, never printed, no request sent, exit 2', async (_what, token) => {
    const kc = writeKubeconfig(secure.double.url, token);
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toBe(
        `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(kc.path)}: the token of user "tester" (context "double") has a control character (a line break, a NUL, a DEL) inside it, which no HTTP header may hold (kubectl refuses it too: "net/http: invalid header field value"; it is not shown): remove it\n`,
      );
      expect(secure.double.requests).toEqual([]);
    } finally {
      kc.remove();
    }
  });

  // Regression: a character no header may hold was said as a connection failure, with its index
  it.each([['a Unicode line separator', '"SECRET-IN-HEADER\\u2028"']])(
    "a token with %s in it: said to be the user's credential, never printed, no request sent, exit 2",
    async (_what, token) => {
      const kc = writeKubeconfig(secure.double.url, token);
      try {
        const r = await cli(['status', '--kubeconfig', kc.path]);
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toBe(
          `ipallocator: cannot use context "double" of the kubeconfig ${JSON.stringify(kc.path)}: the request to ${secure.double.url} was not sent: the credential of its user "tester" (a token, a password, or an exec plugin's) has a control character (a line break, a NUL, a DEL) or a character beyond U+00FF inside it, which no HTTP header may hold (it is not shown; with @kubernetes/client-node 2.x a line break at its end is left out, as its fetch leaves it out of every header; 1.x sends it as it is); remove it\n`,
        );
        expect(secure.double.requests).toEqual([]);
      } finally {
        kc.remove();
      }
    },
  );

  // The message above said a line ending saved with a token was the cause, and the README that
  // such a token was refused: fetch strips it from the header, and the token works.
  it.each([
    ['CR LF', '"SECRET-AT-END\\r\\n"'],
    ['LF', '"SECRET-AT-END\\n"'],
  ])('a token ending in %s (a line ending saved with it) is sent without it and accepted, exit 0', async (_what, token) => {
    const kc = writeKubeconfig(secure.double.url, token);
    secure.double.onlyToken = 'SECRET-AT-END';
    try {
      const r = await cli(['status', '--kubeconfig', kc.path]);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(secure.double.requests.map((q) => q.authorization)).toContain('Bearer SECRET-AT-END');
    } finally {
      kc.remove();
    }
  });

  // Regression: the kubeconfig was read whole with no bound: --kubeconfig /dev/zero (or
  // $KUBECONFIG naming it) never ended and took memory until the process died. A device is no
  // longer read at all (above); a large regular file is refused by its size, unread.
  it('a kubeconfig file past 16 MiB is refused without reading it or quoting it, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const big = join(dir, 'big');
    writeFileSync(big, '');
    truncateSync(big, 16 * 1024 * 1024 + 1); // sparse: nothing is written
    const said = 'is not a kubeconfig: it holds more than 16 MiB (a kubeconfig is a few KiB)';
    const saved = process.env.KUBECONFIG;
    try {
      for (const given of [true, false]) {
        if (given) delete process.env.KUBECONFIG;
        else process.env.KUBECONFIG = big;
        const r = await cli(given ? ['status', '--kubeconfig', big] : ['status']);
        expect([r.code, r.stderr]).toEqual([2, `ipallocator: "${big}" ${said}\n`]);
      }
      // a pipe has no size to go by: it is refused at the bound, read no further
      const fifo = join(dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      // a writer that would go on for 32 MiB; it ends when the reader closes the pipe
      const written = new Promise((resolve) =>
        execFile(
          process.execPath,
          ['-e', `try{require('fs').writeFileSync(${JSON.stringify(fifo)}, 'x'.repeat(32*1024*1024))}catch{}`],
          resolve,
        ),
      );
      const r = await cli(['status', '--kubeconfig', fifo]);
      await written;
      expect([r.code, r.stderr]).toEqual([2, `ipallocator: "${fifo}" ${said}\n`]);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a kubeconfig whose YAML is malformed was said with js-yaml's message, which
  // quotes the lines up to the error: the token of the user entry above a bad line was printed.
  const malformed: [name: string, text: string, said: string][] = [
    [
      'a bad line below a token',
      `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${TEST_TOKEN}\ncurrent-context: a: b\n`,
      'its YAML is malformed at line 6, column 19: bad indentation of a mapping entry',
    ],
    ['an unknown tag', `!${TEST_TOKEN} x\n`, 'its YAML is malformed at line 1, column 1: unknown scalar tag'],
    ['an alias never defined', `*${TEST_TOKEN}\n`, 'its YAML is malformed at line 1, column '],
    ['two documents', 'a: 1\n---\nb: 2\n', 'its YAML is malformed: expected a single document in the stream, but found more'],
    // Regression: the reasons that quote the text were cut at the quote, leaving a fragment
    // ("cannot resolve a node with", "there is a previously declared suffix for")
    [
      'a value its explicit tag cannot read',
      `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: !!int ${TEST_TOKEN}\n`,
      'its YAML is malformed at line 5, column 12: cannot resolve a node with its explicit tag (the text',
    ],
    [
      'a tag handle declared twice',
      `%TAG ! tag:${TEST_TOKEN}\n%TAG ! tag:x\n---\na: 1\n`,
      'its YAML is malformed at line 3, column 1: a %TAG directive declares a tag handle declared before (the text',
    ],
    ['an undeclared tag handle', `a: !${TEST_TOKEN}! x\n`, 'its YAML is malformed at line 1, column '],
  ];
  it.each(malformed)('a kubeconfig whose YAML is malformed (%s): its place and kind, never its text, exit 2', async (_name, text, said) => {
    const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
    const path = join(dir, 'config');
    writeFileSync(path, text);
    try {
      const r = await cli(['status', '--kubeconfig', path]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^ipallocator: cannot read [^\n]*: [^\n]*\(the text is not shown: it may hold a credential\)\n$/);
      expect(r.stderr).toContain(`cannot read ${JSON.stringify(path)}: ${said}`);
      expect(r.stderr).not.toContain(TEST_TOKEN);
      expect(r.stderr).not.toContain('apiVersion');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Regression: a file holding just `hello` (or a list) said it "names no current-context", as if
  // it were a kubeconfig lacking one: client-node reads a YAML that is no mapping as empty.
  const notKubeconfigs: [name: string, text: string, flags: string[], said: string][] = [
    [
      'a scalar',
      'hello\n',
      [],
      'its YAML is a single string (5 characters), not a mapping of clusters, contexts, users and current-context',
    ],
    ['a scalar, with --context', 'hello\n', ['--context', 'a'], 'its YAML is a single string (5 characters), not a mapping'],
    ['a number', '42\n', [], 'its YAML is a single number, not a mapping'],
    // a token file given as the kubeconfig by mistake: said to be one string, never quoted
    [
      'a token',
      'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.SIGNATURE_SECRET\n',
      [],
      'its YAML is a single string (53 characters), not a mapping',
    ],
    // a service account token is often past a thousand characters: counted as the command counts
    [
      'a long token',
      `eyJhbGciOiJSUzI1NiJ9.${'e'.repeat(1_200)}.SIGNATURE_SECRET\n`,
      [],
      'its YAML is a single string (1,238 characters), not a mapping',
    ],
    ['a one-character string', 'x\n', [], 'its YAML is a single string (1 character), not a mapping'],
    ['a list', '- apiVersion: v1\n  kind: Config\n', [], 'its YAML is a list, not a mapping'],
    // the scalars client-node's load read as a kubeconfig holding nothing, or failed on with its
    // own message ("Cannot read properties of null (reading 'clusters')")
    ['null', 'null\n', [], 'its YAML is null, not a mapping'],
    ['null written ~', '~\n', [], 'its YAML is null, not a mapping'],
    ['null, with --context', 'null\n', ['--context', 'a'], 'its YAML is null, not a mapping'],
    ['false', 'false\n', [], 'its YAML is a single boolean, not a mapping'],
    ['0', '0\n', [], 'its YAML is a single number, not a mapping'],
    ['0, with --context', '0\n', ['--context', 'a'], 'its YAML is a single number, not a mapping'],
    ['an empty string', '""\n', [], 'its YAML is a single string (0 characters), not a mapping'],
    // no document at all: js-yaml's "expected a document, but the input is empty" before
    ['an empty file', '', [], 'it holds no YAML document (it is empty, or only whitespace and comments)'],
    ['only whitespace', '   \n\n  \n', [], 'it holds no YAML document (it is empty, or only whitespace and comments)'],
    ['only comments', '# token: SECRET_IN_A_COMMENT\n', [], 'it holds no YAML document (it is empty, or only whitespace and comments)'],
  ];
  it.each(notKubeconfigs)(
    'a kubeconfig file whose YAML is no mapping (%s) is said not to be a kubeconfig, exit 2',
    async (_name, text, flags, said) => {
      const dir = mkdtempSync(join(tmpdir(), 'ipallocator-kubeconfig-'));
      const path = join(dir, 'config');
      writeFileSync(path, text);
      const saved = process.env.KUBECONFIG;
      try {
        const given = await cli(['status', '--kubeconfig', path, ...flags]);
        expect(given.code).toBe(2);
        expect(given.stderr).toMatch(/^ipallocator: "[^\n]*" is not a kubeconfig: [^\n]*\n$/);
        expect(given.stderr).toContain(`"${path}" is not a kubeconfig: ${said}`);
        // what the file says is never shown (a word as short as null or 0 may be in the message itself)
        if (text.trim().length > 5) expect(given.stderr).not.toContain(text.trim());
        // found through $KUBECONFIG, the second of two files, after one that holds nothing
        writeFileSync(join(dir, 'empty'), 'apiVersion: v1\nkind: Config\n');
        process.env.KUBECONFIG = [join(dir, 'empty'), path].join(delimiter);
        const found = await cli(['status', ...flags]);
        expect(found.code).toBe(2);
        expect(found.stderr).toContain(`"${path}" is not a kubeconfig: ${said}`);
      } finally {
        if (saved === undefined) delete process.env.KUBECONFIG;
        else process.env.KUBECONFIG = saved;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  // Regression: `ipallocator -- status` was refused as '"--" is an option: options come after the command'
  it('`--` before the command ends the options: the word after it is the command, never an option', async () => {
    const plain = await cli(['status', '--kubeconfig', c.kubeconfig, '--json']);
    expect(plain.code).toBe(0);
    expect(await cli(['--', 'status', '--kubeconfig', c.kubeconfig, '--json'])).toEqual(plain);
    expect(await cli(['--', 'help', 'map'])).toEqual(await cli(['map', '--help']));
    expect(await cli(['--'])).toEqual(await cli([])); // no command: the help, as a usage error
    // a word with a dash after -- is read as a command, and no command has one
    expect(await cli(['--', '--version'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ipallocator: unknown command "--version" (after --, which ends the options, the next word is the command)\n' +
        "Run 'ipallocator --help' for usage.\n",
    });
  });

  const usage: [string[], string][] = [
    [['frobnicate'], 'unknown command "frobnicate"'],
    // Regression: a long argument (a file pasted in) was repeated whole in the message
    [['status', 'x'.repeat(5000)], 'ipallocator: unexpected argument "xxxxxxxx'],
    [['status', 'x'.repeat(5000)], '"… (5,000 characters)\n'],
    // Regression: kubectl's habit, options before the verb, was said as 'unknown command "--kubeconfig"'
    [
      ['--kubeconfig', 'kc.yaml', 'status'],
      'ipallocator: "--kubeconfig" is an option: options come after the command (ipallocator status --kubeconfig …)\n',
    ],
    [['--context=dev'], 'ipallocator: "--context" is an option: a command comes first (status, check, map), its options after it\n'],
    // Regression: the option was shown with its value, a secret for --token=…
    [['--token=s3cr3t', 'status'], 'ipallocator: "--token" is an option: options come after the command (ipallocator status --token …)\n'],
    [['status', '--frob'], "unknown option '--frob'"],
    // Regression: no "did you mean", and "Unknown" in capitals beside "unknown command"
    [['status', '--jsn'], "ipallocator: unknown option '--jsn' (did you mean --json?)\n"],
    [['check', '--gracee=5'], "ipallocator: unknown option '--gracee' (did you mean --grace?)\n"],
    // Regression: kubectl's -o json / --output json (the command is a kubectl plugin) had no hint
    [['status', '-o', 'json'], "ipallocator: unknown option '-o' (for JSON output, use --json)\n"],
    [['check', '--output', 'json'], "ipallocator: unknown option '--output' (for JSON output, use --json)\n"],
    [['status', '--output=json'], "ipallocator: unknown option '--output' (for JSON output, use --json)\n"],
    [['status', '-ojson'], "ipallocator: unknown option '-o' (for JSON output, use --json)\n"],
    // kubectl's namespace flags: every command reads the whole cluster
    [['status', '-n', 'shop'], "ipallocator: unknown option '-n' (a command reads the whole cluster: there is no namespace to choose)\n"],
    [
      ['check', '--namespace', 'shop'],
      "ipallocator: unknown option '--namespace' (a command reads the whole cluster: there is no namespace to choose)\n",
    ],
    [
      ['check', '--namespace=shop'],
      "ipallocator: unknown option '--namespace' (a command reads the whole cluster: there is no namespace to choose)\n",
    ],
    [['status', '-A'], "ipallocator: unknown option '-A' (a command reads the whole cluster: there is no namespace to choose)\n"],
    [
      ['map', '10.96.0.0/24', '--all-namespaces'],
      "ipallocator: unknown option '--all-namespaces' (a command reads the whole cluster: there is no namespace to choose)\n",
    ],
    [['map', '10.96.0.0/24', '--output', 'a.svg'], "ipallocator: unknown option '--output' (did you mean --out?)\n"],
    [['map', '10.96.0.0/24', '-o', 'a.svg'], "ipallocator: unknown option '-o' (did you mean --out?)\n"],
    // kubectl's --dry-run: check changes nothing unless given --fix
    [['check', '--fix', '--dry-run'], "ipallocator: unknown option '--dry-run' (check without --fix changes nothing: it only reports)\n"],
    [['check', '--dry-run=client'], "ipallocator: unknown option '--dry-run' (check without --fix changes nothing: it only reports)\n"],
    [['stauts'], 'ipallocator: unknown command "stauts" (did you mean status?)\n'],
    [['status', '--top', 'many'], '--top takes a whole number from 0 to 1,000,000,000, got "many"'],
    // Regression: "takes a whole number" of -5, which is one
    [
      ['check', '--grace=-5'],
      'ipallocator: --grace takes a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days), got "-5"\n',
    ],
    // a grace past a year holds back every orphan; this one printed as 99999999999999980000 s
    [
      ['check', '--grace', '99999999999999999999'],
      '--grace takes a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days), got "99999999999999999999"',
    ],
    [
      ['check', '--grace', '31536001'],
      'ipallocator: --grace takes a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days), got "31536001"\n',
    ],
    // Regression: --top took 99999999999999999999 (read as 1e20) and refused 1e3: one rule for
    // every whole-number option, decimal digits up to a largest value, said in every refusal
    [
      ['status', '--top', '99999999999999999999'],
      'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "99999999999999999999"\n',
    ],
    [['check', '--top', '1000000001'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "1000000001"\n'],
    [['status', '--top', '1e3'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "1e3"\n'],
    [
      ['check', '--grace', '6e1'],
      'ipallocator: --grace takes a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days), got "6e1"\n',
    ],
    [['status', '--top', '+3'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "+3"\n'],
    [['status', '--top', '3.0'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "3.0"\n'],
    [['status', '--top', '0x10'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "0x10"\n'],
    [['status', '--top', ' 3'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got " 3"\n'],
    // Regression: a value starting with a dash was refused in Node's parser's words ("argument
    // is ambiguous. Did you forget…"): a number option says what it takes, another how to give it
    [['status', '--top', '-1'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "-1"\n'],
    [
      ['check', '--grace', '-1'],
      'ipallocator: --grace takes a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days), got "-1"\n',
    ],
    // Regression: given twice, the message quoted the first, valid occurrence ("got \"3\"")
    [['status', '--top', '3', '--top', '-1'], 'ipallocator: --top takes a whole number from 0 to 1,000,000,000, got "-1"\n'],
    [
      ['status', '--context', 'good', '--context', '-x'],
      'ipallocator: --context is followed by "-x", which starts with a dash: to give it as the value, write --context=-x\n',
    ],
    [
      ['status', '--context', '-dev'],
      'ipallocator: --context is followed by "-dev", which starts with a dash: to give it as the value, write --context=-dev\n',
    ],
    // in double quotes as Go's %q writes it (\x7f), as docs/cli.md says; shown bare, as \u007f
    [
      ['status', '--context', '-dev\u007f'],
      'ipallocator: --context is followed by "-dev\\x7f", which starts with a dash: to give it as the value, write --context=-dev\\u007f\n',
    ],
    // Regression: an option that takes a value, given none, was said in Node's parser's words
    // ("Option '--top <value>' argument missing"); followed by another option, the option was
    // taken as its value ("--top takes a whole number from 0 to 1,000,000,000, got \"--json\"")
    [['status', '--top'], 'ipallocator: --top needs a value: a whole number from 0 to 1,000,000,000\n'],
    [
      ['check', '--grace'],
      'ipallocator: --grace needs a value: a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days)\n',
    ],
    [
      ['check', '-y', '--fix', '--grace'],
      'ipallocator: --grace needs a value: a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days)\n',
    ],
    [['status', '--top', '3', '--top'], 'ipallocator: --top needs a value: a whole number from 0 to 1,000,000,000\n'],
    [['status', '--kubeconfig'], 'ipallocator: --kubeconfig needs a value: a kubeconfig file\n'],
    [['check', '--context'], 'ipallocator: --context needs a value: a context of the kubeconfig\n'],
    [
      ['status', '--request-timeout'],
      'ipallocator: --request-timeout needs a value: a duration such as 500ms, 30s, 2m or 1m30s (0 for no limit)\n',
    ],
    [['map', '10.96.0.0/24', '--out'], 'ipallocator: --out needs a value: the file to write the SVG to (- for standard output)\n'],
    [['map', '--snapshot'], 'ipallocator: --snapshot needs a value: a Range snapshot file (- for standard input)\n'],
    // Regression: an empty one was tried as a file: "cannot read : ENOENT: no such file or directory, open ''"
    [['map', '10.96.0.0/24', '--out='], 'ipallocator: --out takes the file to write the SVG to (- for standard output), got ""\n'],
    [['map', '--snapshot', ''], 'ipallocator: --snapshot takes a Range snapshot file (- for standard input), got ""\n'],
    [
      ['status', '--top', '--json'],
      'ipallocator: --top needs a value: a whole number from 0 to 1,000,000,000 (it is followed by the option --json)\n',
    ],
    [
      ['check', '--grace', '--top=3'],
      'ipallocator: --grace needs a value: a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days) (it is followed by the option --top=3)\n',
    ],
    [
      ['status', '--top', '--'],
      'ipallocator: --top needs a value: a whole number from 0 to 1,000,000,000 (it is followed by --, the end of the options)\n',
    ],
    [
      ['status', '--context', '-h'],
      'ipallocator: --context needs a value: a context of the kubeconfig (it is followed by the option -h; to give "-h" as the value, write --context=-h)\n',
    ],
    // Regression: a flag given a value was said in Node's parser's words ("Option '-h, --help'
    // does not take an argument")
    [['status', '--json=1'], 'ipallocator: --json takes no value, got "1"\n'],
    [['check', '--fix=false'], 'ipallocator: --fix takes no value, got "false"\n'],
    [['map', '--help='], 'ipallocator: --help takes no value, got ""\n'],
    [['check', '--top', '3', '--yes=no', '--fix'], 'ipallocator: --yes takes no value, got "no"\n'],
    // Regression: Node reads -y=1 as the group -y -= -1, and "unknown option '-='" was said
    [['check', '--fix', '-y=1'], 'ipallocator: -y takes no value, got "1"\n'],
    [['status', '-h='], 'ipallocator: -h takes no value, got ""\n'],
    // Regression: a group of short flags given a value (-yh=1, Node's -y -h -= -1) still said "unknown option '-='"
    [['check', '--fix', '-yh=1'], 'ipallocator: -h takes no value, got "1"\n'],
    [['check', '--fix', '-hy=x=2'], 'ipallocator: -y takes no value, got "x=2"\n'],
    // Regression: said in Node's parser's words ("Unexpected argument 'extra'. This command does
    // not take positional arguments") where map's second argument was said in the CLI's
    [['status', 'extra'], 'ipallocator: unexpected argument "extra"\n'],
    [['check', '--', '--fix'], 'ipallocator: unexpected argument "--fix"\n'],
    [['map', '10.96.0.0/24', 'extra'], 'ipallocator: unexpected argument "extra"\n'],
    [['status', '-x'], "ipallocator: unknown option '-x'\n"],
    // Regression: Node's parser keeps the last value of an option given twice: only b.svg was written
    [['map', '10.96.0.0/24', '--out', 'a.svg', '--out=b.svg'], 'ipallocator: --out is given more than once: it takes one value\n'],
    [['status', '--context', 'a', '--json', '--context', 'a'], 'ipallocator: --context is given more than once: it takes one value\n'],
    [
      ['status', '--request-timeout', 'soon'],
      '--request-timeout takes a duration such as 500ms, 30s, 2m or 1m30s (0 for no limit), got "soon"',
    ],
    [['status', '--request-timeout', '1m30'], 'got "1m30"'], // a Go duration needs a unit on every number
    [['status', '--request-timeout', '0.2'], 'got "0.2"'], // a bare number must be whole (client-go's ParseTimeout)
    [['map', '10.96.0.0/24', '--request-timeout=-5'], 'got "-5"'], // a negative whole number (client-go refuses it; -5s waits for ever)
    [['status', '--request-timeout', '597h'], '--request-timeout may be at most 596h31m23.647s (2^31 − 1 ms), got "597h"'],
    // --grace reads durations as --request-timeout does, but none is negative, and none past a year
    [
      ['check', '--grace', '1m30'],
      '--grace takes a duration such as 90s, 2m or 1h30m, or a whole number of seconds, from 0 to 8760h (365 days), got "1m30"',
    ],
    [['check', '--grace', '0.5'], 'got "0.5"'], // a bare number must be whole, as for --request-timeout
    [['check', '--grace', 'soon'], 'got "soon"'],
    [['check', '--grace', '-1s'], 'got "-1s"'],
    [['check', '--grace=-1m'], 'got "-1m"'],
    [['check', '--grace', '8760h1ms'], 'got "8760h1ms"'],
  ];
  for (const [argv, message] of usage) {
    it(`usage error for "${argv.join(' ')}": the problem and a pointer to --help, exit 2`, async () => {
      const r = await cli(argv);
      expect(r.code).toBe(2);
      expect(message.startsWith('ipallocator: ') ? r.stderr : r.stderr.toLowerCase()).toContain(
        message.startsWith('ipallocator: ') ? message : message.toLowerCase(),
      );
      // the command's own help, which lists its options
      const help = ['status', 'check', 'map'].includes(argv[0]!) ? `ipallocator ${argv[0]} --help` : 'ipallocator --help';
      expect(r.stderr).toContain(`Run '${help}' for usage.`);
      expect(r.stdout).toBe('');
    });
  }

  // Regression: Node's parser quotes an unknown option as given, and the usage error printed it
  // raw: an argument carrying a terminal escape sequence (a script passing a name it was given)
  // reached the terminal.
  it('a usage error quoting an argument prints its control characters escaped', async () => {
    for (const argv of [
      ['status', '--\u001b[2Jx'],
      ['status', '--top', '\u001b[31m'],
      ['status', '--\u0007'],
    ]) {
      const r = await cli(argv);
      expect([argv, r.code]).toEqual([argv, 2]);
      expect(controls(r.stderr)).toEqual([]);
    }
  });

  it('--request-timeout of 0 or a negative duration waits for ever, as kubectl (Go http.Client) does', async () => {
    for (const timeout of ['0', '-0', '0s', '-1s']) {
      const r = await cli(['status', `--request-timeout=${timeout}`, '--kubeconfig', c.kubeconfig]);
      expect([timeout, r.code, r.stderr]).toEqual([timeout, 0, '']);
    }
  });

  it('an empty --request-timeout is ignored, as kubectl ignores it: the default applies', async () => {
    for (const args of [['--request-timeout='], ['--request-timeout', '']]) {
      const r = await cli(['status', ...args, '--kubeconfig', c.kubeconfig]);
      expect([args, r.code, r.stderr]).toEqual([args, 0, '']);
    }
  });

  // Regression: --kubeconfig= read a file named "" ("cannot read : ENOENT") and --context= asked
  // for a context named "", where kubectl reads the default kubeconfig and its current-context.
  it('an empty --kubeconfig or --context is ignored, as kubectl ignores it: the default applies', async () => {
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = c.kubeconfig;
    try {
      for (const args of [['--kubeconfig='], ['--kubeconfig', ''], ['--context='], ['--context', '', '--kubeconfig=']]) {
        const r = await cli(['status', ...args]);
        expect([args, r.code, r.stderr]).toEqual([args, 0, '']);
        expect(r.stdout).toMatch(/^context double /);
      }
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  it('--help on every command, and the kubectl plugin name in help', async () => {
    for (const command of ['status', 'check', 'map']) {
      const r = await cli([command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: ipallocator ${command}`);
      // `help status`, as git and kubectl take it (it printed the top-level help)
      expect(await cli(['help', command])).toEqual(r);
    }
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/status[\s\S]*check[\s\S]*map CIDR/);
    expect(top.stdout).toContain('with --from FILE a saved\nlisting'); // status and check without a cluster
    const bare = await cli([]); // no command: the same help, on stderr, as a usage error
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toBe(top.stdout);
    const { run } = await import('../cli/main.ts');
    const { Readable } = await import('node:stream');
    let out = '';
    await run(['check', '--help'], {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: () => true },
      stdin: Readable.from([]),
      prog: 'kubectl ipallocator',
    });
    expect(out).toContain('Usage: kubectl ipallocator check');
  });

  // Regression: `help stauts` printed the main help and exited 0, where `stauts` is a usage error.
  it('`help` of a command there is not is the usage error that command is; `help help` and `help version` the main help', async () => {
    expect(await cli(['help', 'stauts'])).toEqual(await cli(['stauts']));
    expect(await cli(['help', 'stauts'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ipallocator: unknown command "stauts" (did you mean status?)\n' + "Run 'ipallocator --help' for usage.\n",
    });
    expect(await cli(['help', 'frobnicate'])).toEqual(await cli(['frobnicate']));
    const top = await cli(['--help']);
    for (const topic of ['help', '--help', '-h', 'version', '--version']) expect(await cli(['help', topic])).toEqual(top);
  });

  // Regression: `--help status` printed the main help, where `help status` prints status's.
  it("`--help COMMAND` and `-h COMMAND` are `help COMMAND`: that command's help; of a command there is not, its usage error", async () => {
    for (const command of ['status', 'check', 'map']) {
      const own = await cli([command, '--help']);
      expect(own.stdout).toContain(`Usage: ipallocator ${command}`);
      expect(await cli(['--help', command])).toEqual(own);
      expect(await cli(['-h', command])).toEqual(own);
    }
    expect(await cli(['--help', 'stauts'])).toEqual(await cli(['stauts']));
    expect(await cli(['--help', '--version'])).toEqual(await cli(['--help']));
  });

  // Regression: `help --token=…` quoted the whole word, value and all, as an unknown command.
  it('`help` of an option is the usage error that option is, naming it without its value', async () => {
    const asked = await cli(['help', '--token=SECRET_IN_ARGS']);
    expect(asked).toEqual(await cli(['--token=SECRET_IN_ARGS']));
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('"--token" is an option');
    expect(asked.stderr).not.toContain('SECRET_IN_ARGS');
  });

  // Regression: map's usage line said `--out FILE.svg`, its option list `--out FILE`.
  it("each command's help lists every option with the value its usage line names, and the parser takes each as listed", async () => {
    for (const command of ['status', 'check', 'map']) {
      const { stdout } = await cli([command, '--help']);
      const listed = new Map([...stdout.matchAll(/^ {2}(?:-\w, )?--([\w-]+)(?: (\S+))?/gm)].map((m) => [m[1]!, m[2]] as const));
      expect(listed.has('kubeconfig')).toBe(true);
      const usage = stdout.slice(0, stdout.indexOf('\n\n'));
      for (const [, name, value] of usage.matchAll(/--([\w-]+) (\S+)/g)) expect([name, listed.get(name!)]).toEqual([name, value]);
      for (const [name, value] of listed) {
        const r = await cli([command, value === undefined ? `--${name}=1` : `--${name}`]);
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(
          new RegExp(`^ipallocator: --${name} ${value === undefined ? 'takes no value, got "1"' : 'needs a value: '}`),
        );
      }
    }
  });

  it('--version prints the package version', async () => {
    const { run } = await import('../cli/main.ts');
    const { Readable } = await import('node:stream');
    const { readFileSync } = await import('node:fs');
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const args of [['--version'], ['version']]) {
      let out = '';
      const code = await run(args, {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: () => true },
        stdin: Readable.from([]),
      });
      expect({ code, out }).toEqual({ code: 0, out: `${version}\n` });
    }
    // stray words are refused, as after a command (an option by its name only: its value may be a secret)
    expect(await cli(['--version', 'extra'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: unexpected argument "extra"\nRun 'ipallocator --help' for usage.\n`,
    });
    expect(await cli(['version', '--token=s3cret'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: version takes no options, got "--token"\nRun 'ipallocator --help' for usage.\n`,
    });
    // `--` ends the options, as after every command: alone it is the version, what follows it an argument
    expect(await cli(['version', '--'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(await cli(['--version', '--', '-x'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: unexpected argument "-x"\nRun 'ipallocator --help' for usage.\n`,
    });
  });

  it('the kubectl-ipallocator executable names itself kubectl ipallocator when run by its own path', async () => {
    // Found by an outside test: Deno (`deno run -A npm:ipallocator/kubectl-ipallocator`, and the
    // script `deno install -g` writes for it) runs a bin by the path of the file package.json names,
    // as npm's Windows shims do, so the name it was installed under is nowhere in process.argv. Both
    // bins named one file, and the plugin's help and errors said "ipallocator".
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const source = (bin: string) => bin.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts');
    const run = (bin: string, args: string[]) =>
      runtimeWith('Deno' in globalThis ? ['run', '-A', source(bin), ...args] : ['--import', 'tsx', source(bin), ...args]);
    const usage = (prog: string) => ({
      code: 2,
      stdout: '',
      stderr: `${prog}: unknown command "stauts" (did you mean status?)\nRun '${prog} --help' for usage.\n`,
    });
    expect(await run(pkg.bin['kubectl-ipallocator']!, ['stauts'])).toEqual(usage('kubectl ipallocator'));
    expect(await run(pkg.bin.ipallocator!, ['stauts'])).toEqual(usage('ipallocator'));
    const help = await run(pkg.bin['kubectl-ipallocator']!, ['check', '--help']);
    expect(help.stdout).toContain('Usage: kubectl ipallocator check');
  });

  it('the executable: a reader gone before the output (| head) ends it quietly, with its own exit code', async () => {
    // Regression: `map … | head -c 100` crashed with "write EPIPE".
    const { spawn } = await import('node:child_process');
    const junk = join(mkdtempSync(join(tmpdir(), 'ipallocator-cli-')), 'junk.json');
    writeFileSync(junk, 'not json');
    const ended = async (args: string[], closed: 'stdout' | 'stderr') => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'cli/bin.ts', ...args], { cwd: ROOT });
      child[closed].destroy(); // the reader goes away before anything is written
      let other = '';
      child[closed === 'stdout' ? 'stderr' : 'stdout'].on('data', (d: Buffer) => (other += d));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      return { code, other };
    };
    expect(await ended(['map', '--snapshot', 'docs/map-example.json'], 'stdout')).toEqual({ code: 0, other: '' });
    expect(await ended(['map', '--snapshot', junk], 'stderr')).toEqual({ code: 2, other: '' }); // its error went nowhere, its code stays
    rmSync(dirname(junk), { recursive: true, force: true });
  });

  it.skipIf(!existsSync('/dev/full'))('the executable: output it cannot write (a full disk) is one line on stderr and exit 2', async () => {
    const { spawn } = await import('node:child_process');
    const { openSync, closeSync } = await import('node:fs');
    const full = openSync('/dev/full', 'w'); // every write fails with ENOSPC
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/bin.ts', 'map', '--snapshot', 'docs/map-example.json'], {
      cwd: ROOT,
      stdio: ['ignore', full, 'pipe'],
    });
    closeSync(full);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: expect.stringMatching(/^ipallocator: cannot write the output: [^\n]*(ENOSPC|No space left)[^\n]*\n$/),
    });
  });

  it('the executable without WebAssembly (--no-expose-wasm, as --jitless): one line saying so and exit 2, no stack trace', async () => {
    // Regression: the library's IPAllocatorError escaped as an uncaught error with its stack
    // Regression: then its line read "ipallocator: ipallocator needs WebAssembly, …", the prefix twice
    const args =
      'Deno' in globalThis
        ? ['run', '-A', '--v8-flags=--jitless', 'cli/bin.ts', 'status'] // Deno's V8 has no --no-expose-wasm
        : ['--no-expose-wasm', '--import', 'tsx', 'cli/bin.ts', 'status'];
    const result = await runtimeWith(args);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: ${CLI_NO_WASM}\n`,
    });
  });

  it('the executable when the engine refuses the core its memory (ulimit -v): one line saying what to do and exit 2, no stack trace', async () => {
    // Found by an outside test: the command printed "internal error: RangeError: …" and a stack trace
    const refused = join(ROOT, 'test', 'doubles', 'wasm-memory-refused.ts');
    const args =
      'Deno' in globalThis
        ? ['run', '-A', `--preload=${refused}`, 'cli/bin.ts', 'map', '--snapshot', 'docs/map-example.json']
        : ['--import', 'tsx', '--import', pathToFileURL(refused).href, 'cli/bin.ts', 'map', '--snapshot', 'docs/map-example.json'];
    const result = await runtimeWith(args);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'ipallocator: this command cannot start its WebAssembly core: the JavaScript engine refused it its memory (RangeError: WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance). ' +
        'A limit on virtual memory (ulimit -v) below about 11 GiB does that in Node, whose WebAssembly memories each reserve 10 GiB of address space: raise or lift the limit, or start node with --disable-wasm-trap-handler, which reserves none\n',
    });
  });

  // Regression: under --jitless, --version and --help failed with that line too, though neither
  // needs WebAssembly (main.ts loaded the core as it loaded)
  it('the executable without WebAssembly: the version, the help and usage errors answer; a command that needs the core says so in one line', async () => {
    const withoutWasm = (argv: string[]) =>
      runtimeWith(
        'Deno' in globalThis
          ? ['run', '-A', '--v8-flags=--jitless', 'cli/bin.ts', ...argv]
          : ['--no-expose-wasm', '--import', 'tsx', 'cli/bin.ts', ...argv],
      );
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const [versionRun, help, checkHelp, usage, map] = await Promise.all([
      withoutWasm(['--version']),
      withoutWasm(['--help']),
      withoutWasm(['check', '--help']),
      withoutWasm(['status', '--top', 'x']),
      withoutWasm(['map', '--snapshot', 'docs/map-example.json']),
    ]);
    expect(versionRun).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(help).toEqual({ code: 0, stdout: (await cli(['--help'])).stdout, stderr: '' });
    expect(checkHelp).toEqual({ code: 0, stdout: (await cli(['check', '--help'])).stdout, stderr: '' });
    expect(usage).toEqual({ code: 2, stdout: '', stderr: (await cli(['status', '--top', 'x'])).stderr });
    expect(map).toEqual({
      code: 2,
      stdout: '',
      stderr: `ipallocator: ${CLI_NO_WASM}\n`,
    });
  });

  it('the executable: exit code 2 and one line on stderr for a file that is not a snapshot', async () => {
    // map --snapshot loads no cluster code, so the child process starts quickly under tsx.
    const file = join(mkdtempSync(join(tmpdir(), 'ipallocator-cli-')), 'junk.json');
    writeFileSync(file, 'not json');
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'cli/bin.ts', 'map', '--snapshot', file], { cwd: ROOT }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
      });
    });
    rmSync(dirname(file), { recursive: true, force: true });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^ipallocator: ".*junk\.json" is not a snapshot file: not JSON [^\n]*\n$/);
  });
});

describe('ipallocator without @kubernetes/client-node', () => {
  // Regression: the command said "npm install @kubernetes/client-node" wherever it was installed;
  // an ipallocator installed with -g, or the one npx runs from its cache, resolves client-node from
  // its own folder, so that install, in the working directory, changed nothing.
  it('says where to install it: the project, -g for a global ipallocator, with npx for the copy npx runs', () => {
    const need = 'talking to a cluster needs the package @kubernetes/client-node (a peer dependency), installed next to ipallocator';
    for (const url of [
      'file:///srv/app/node_modules/ipallocator/dist/cli/main.js',
      'file:///usr/local/lib/node_modules/ipallocator/dist/cli/main.js',
    ]) {
      expect(clientNodeMissing(url, { deno: false })).toBe(
        `${need}: npm install @kubernetes/client-node in the project that has ipallocator, ` +
          'or npm install -g @kubernetes/client-node for an ipallocator installed with -g',
      );
    }
    for (const url of [
      'file:///home/me/.npm/_npx/214b350902a22ce5/node_modules/ipallocator/dist/cli/main.js',
      'file:///C:/Users/me/AppData/Local/npm-cache/_npx/214b350902a22ce5/node_modules/ipallocator/dist/cli/main.js',
    ]) {
      expect(clientNodeMissing(url, { deno: false })).toBe(
        `${need}, which npx runs from its own cache: npx -p ipallocator -p @kubernetes/client-node ipallocator …, ` +
          'or npm install ipallocator @kubernetes/client-node in your project and run npx ipallocator there',
      );
    }
  });

  // Regression: under Deno the command gave npm's advice, which changes nothing for the copy Deno
  // runs from its own cache (deno run -A npm:ipallocator), and -g has no meaning there.
  it('under Deno: deno add, in the directory it is run from, or in the folder whose node_modules holds ipallocator', () => {
    const need = 'talking to a cluster needs the package @kubernetes/client-node (a peer dependency)';
    // `deno run -A npm:ipallocator` with no node_modules folder: Deno's npm cache (any registry), or
    // the cache of `deno x ipallocator`; Deno finds the peer through the deno.json where it runs
    for (const url of [
      'file:///home/me/.cache/deno/npm/registry.npmjs.org/ipallocator/0.1.0/dist/cli/main.js',
      'file:///Users/me/Library/Caches/deno/npm/npm.example.com/ipallocator/0.1.0/dist/cli/main.js',
      'file:///C:/Users/me/AppData/Local/deno/npm/registry.npmjs.org/ipallocator/0.1.0/dist/cli/main.js',
      'file:///home/me/.cache/deno/deno_x_cache/npm-ipallocator/node_modules/.deno/ipallocator@0.1.0/node_modules/ipallocator/dist/cli/main.js',
      // Regression: a DENO_DIR inside a node_modules folder (a CI cache kept there) was taken for that
      // folder's install, and the advice named the project's npm install or deno add, which Deno's
      // cache never reads
      'file:///srv/app/node_modules/.cache/deno/npm/registry.npmjs.org/ipallocator/0.1.0/dist/cli/main.js',
      'file:///srv/app/node_modules/.deno-dir/npm/registry.npmjs.org/ipallocator/0.1.0/dist/cli/main.js',
      // Regression: a registry with a path (NPM_CONFIG_REGISTRY=https://nexus.example.com/repository/npm/)
      // puts it in the cache's folder name, and its cache was taken for a checkout: npm's advice
      'file:///home/me/.cache/deno/npm/nexus.example.com/repository/npm-group/ipallocator/0.1.0/dist/cli/main.js',
      'file:///home/me/.cache/deno/npm/gitlab.example.com/api/v4/projects/12/packages/npm/ipallocator/0.1.0_1/dist/cli/main.js',
    ]) {
      expect(clientNodeMissing(url, { deno: true })).toBe(
        `${need}, which Deno finds for npm:ipallocator through the deno.json of the directory it runs in: ` +
          'deno add npm:@kubernetes/client-node in that directory, then run deno run -A npm:ipallocator … there',
      );
    }
    // a node_modules folder laid out by Deno (a project's, or the hidden one of deno install -g), or by npm
    for (const [url, folder, install] of [
      ['file:///srv/app/node_modules/.deno/ipallocator@0.1.0/node_modules/ipallocator/dist/cli/main.js', '/srv/app', 'deno add npm:'],
      [
        'file:///home/me/.deno/bin/.ipallocator/node_modules/.deno/ipallocator@0.1.0/node_modules/ipallocator/dist/cli/main.js',
        '/home/me/.deno/bin/.ipallocator',
        'deno add npm:',
      ],
      ['file:///srv/my%20app/node_modules/ipallocator/dist/cli/main.js', '/srv/my app', 'npm install '],
      // a project inside a folder that is itself named node_modules: the node_modules holding the package counts
      [
        'file:///srv/node_modules/app/node_modules/.deno/ipallocator@0.1.0/node_modules/ipallocator/dist/cli/main.js',
        '/srv/node_modules/app',
        'deno add npm:',
      ],
      ['file:///srv/node_modules/app/node_modules/ipallocator/dist/cli/main.js', '/srv/node_modules/app', 'npm install '],
    ] as const) {
      expect(clientNodeMissing(url, { deno: true })).toBe(
        `${need}, installed next to ipallocator, which Deno loads from the node_modules folder of "${folder}": ${install}@kubernetes/client-node in that folder`,
      );
    }
  });

  it("under Deno, a checkout (no node_modules, not Deno's cache) gets the project's npm install", () => {
    // (a checkout in a folder named npm two levels up is no cache either: no version follows its name)
    for (const url of ['file:///work/ipallocator/cli/main.ts', 'file:///home/me/npm/src/ipallocator/cli/main.ts'])
      expect(clientNodeMissing(url, { deno: true })).toBe(
        'talking to a cluster needs the package @kubernetes/client-node (a peer dependency), installed next to ipallocator: ' +
          'npm install @kubernetes/client-node in the project that has ipallocator, or npm install -g @kubernetes/client-node for an ipallocator installed with -g',
      );
  });

  it('tells Deno from Node by the runtime it runs in', async () => {
    const url = 'file:///srv/app/node_modules/.deno/ipallocator@0.1.0/node_modules/ipallocator/dist/cli/main.js';
    const script = `import { clientNodeMissing } from './cli/main.ts'; console.log(clientNodeMissing(${JSON.stringify(url)}));`;
    const said = (file: string, args: string[]) =>
      new Promise<string>((done, fail) =>
        execFile(file, args, { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout) => (err ? fail(err) : done(stdout))),
      );
    const [underNode, underDeno] = await Promise.all([
      said('node', ['--import', 'tsx', '--input-type=module', '--eval', script]),
      said(join(ROOT, 'node_modules', '.bin', 'deno'), ['eval', '--ext=ts', script]),
    ]);
    expect(underNode).toBe(`${clientNodeMissing(url, { deno: false })}\n`);
    expect(underNode).toContain(': npm install @kubernetes/client-node in the project');
    expect(underDeno).toBe(`${clientNodeMissing(url, { deno: true })}\n`);
    expect(underDeno).toContain(': deno add npm:@kubernetes/client-node in that folder');
  });
});

describe('a file an option names that cannot be read, for a reason that is no fs failure', () => {
  it('is said with the reason\'s message, not as "Error: …"', () => {
    // Regression: a failure without a code was printed with String(e), its class name first
    expect(unreadableFile('--snapshot', '/srv/s.json', new Error('the read was stopped')).message).toBe(
      'cannot read the file --snapshot names ("/srv/s.json"): the read was stopped',
    );
    expect(unreadableFile('--snapshot', '/srv/s.json', new RangeError('too large')).message).toBe(
      'cannot read the file --snapshot names ("/srv/s.json"): too large',
    );
    // something thrown that is no Error is said as it is
    expect(unreadableFile('--kubeconfig', 'k', 'stopped').message).toBe('cannot read the file --kubeconfig names ("k"): stopped');
  });
});
