// Exec credential plugins run as kubectl runs them, and that do not outlive the request that
// started them.
//
// client-node runs a kubeconfig user's exec plugin (`users[].user.exec`) with child_process.spawn
// as it authenticates each request, and waits for it to exit, with no timeout and no way to stop
// it: a plugin that never answers (waiting on a browser login, a hung network call) holds the
// request, and is still running after the request's deadline or close() gave up on it. The spawn
// is client-node's `execFn`, a field of the ExecAuth each KubeConfig holds: superviseExecPlugins
// wraps it so that a plugin started while a request of ours runs (withRequestSignal, carried
// through client-node's promises by an AsyncLocalStorage) is given that request's AbortSignal:
// spawn kills it when the request ends unanswered, and our ends of its pipes are closed and the
// child unreferenced, so that nothing of a plugin given up keeps the process alive.
//
//   ApiRequests.run / a watch's send ──► withRequestSignal(signal, call)
//        └─► client-node authenticates ──► ExecAuth.execFn (wrapped) ──► spawn(…, { signal, killSignal })
//   deadline or close() ──► signal aborts ──► the plugin is killed (SIGKILL, as Go's exec.CommandContext)
//                                         └─► our ends of its stdin, stdout, stderr destroyed; the child unref()'d
//
// Only the plugin's own process is killed, not what it started itself (a `#!/bin/sh` plugin's
// `sleep`, a helper it forked): those keep running until they end. Killing its process group
// would need the plugin spawned `detached`, which on POSIX makes it the leader of a new session,
// without the terminal: a plugin that prompts on /dev/tty (a login, a PIN) could no longer. What
// they inherited of its pipes is no longer read: the process does not wait for them.
//
// The same wrapper keeps what the plugin writes on stderr (its first 4 KiB), and a wrapper of
// the ExecAuth's getCredential ties it to the failure the run ends in (errors.ts pluginStderrLine):
// client-node passes stderr on only for a plugin that exits with a status other than 0, and a
// plugin that exits 0 printing nothing says why only there (a login it could not do).
//
// The same wrapper starts the plugin as client-go's exec authenticator does
// (k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go, refreshCredsLocked and isInteractive),
// where client-node spawns it with only the exec entry's env and three pipes:
// - KUBERNETES_EXEC_INFO holds an ExecCredential of the exec entry's apiVersion whose spec says
//   whether the plugin may ask the user (`interactive`), and, with `provideClusterInfo: true`,
//   the cluster it authenticates to (`cluster`). Plugins answer in the apiVersion it names
//   (Azure's kubelogin, aws eks get-token): without it they fall back to v1beta1, which an exec
//   entry of v1 refuses.
// - stdin is the terminal when interactiveMode allows it (Never: never; IfAvailable, also taken
//   when a v1beta1 entry gives none, as kubectl's default: when stdin is a terminal; Always: stdin
//   must be one, or the plugin is not run), and otherwise
//   nothing: a plugin that reads it meets its end at once, where a pipe we never wrote to held
//   it until the request's deadline.
// - what it writes on stderr goes on to our stderr as it comes (a device-code login tells the
//   user there where to sign in), besides being kept for the messages; a failure quotes it only
//   when our stderr is no terminal (a log, a pipe), where the user would otherwise read it twice.
//
//   interactiveMode  stdin a terminal   spec.interactive   the plugin's stdin
//   Never            either             false              nothing (/dev/null)
//   IfAvailable      no                 false              nothing (/dev/null)
//   IfAvailable      yes                true               the terminal
//   Always           no                 —                  not run (KubeconfigCredentialError)
//   Always           yes                true               the terminal
//
// Plugins of one KubeConfig run one at a time, as client-go's Authenticator holds a mutex while
// its plugin runs: two asking on one terminal at once could not both be answered. Requests that
// come meanwhile wait, then take what that run left in client-node's cache.
//
// client-go keeps a credential without an expirationTimestamp until an answer 401 Unauthorized
// (below), as client-node 2.x keeps it (ExecAuth's tokenCache, by user name). client-node 1.x
// reads the missing timestamp as one in the past (Date.parse(undefined) is NaN) and runs the
// plugin again for every request, a browser login or a PIN each time, and for each of the
// requests that waited for a run: keptWithoutExpiry takes it from that cache first, for both.
//
// And client-go runs the plugin again after an answer 401 Unauthorized: client-node keeps what a
// plugin printed until its expirationTimestamp, or for ever without one, so credentials the
// plugin has since rotated were never asked for again.
// forgetRefusedCredential drops the one a refused request was sent with (when it is still the one
// kept: another request may have brought a newer one meanwhile), and the next request runs the
// plugin. An answer refused here (no ExecCredential of the entry's version, half a client key
// pair) is dropped too:
// kubectl runs the plugin again for the next request, where client-node would keep refusing it.
//
// A KubeConfig without that field (another client-node) is left as it is: the request still
// ends at its deadline, and the message still says that the plugin did not answer, but the
// plugin is not stopped, and runs as client-node starts it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { quoteInput } from '../quote.ts';
import { rememberPluginStderr } from './errors.ts';
import { execEntryOf } from './kubeconfig-shape.ts';
import { interactiveModeProblem, KubeconfigCredentialError } from './user-checks.ts';

/** The AbortSignal of the request whose authentication is running, where there is one. */
const requestSignal = new AsyncLocalStorage<AbortSignal>();

/**
 * The running getCredential: the user whose plugin it may start (how to start it), and what that
 * plugin wrote on stderr (at most STDERR_KEPT characters).
 */
const pluginRun = new AsyncLocalStorage<{ user: User; stderr: string; onTerminal: boolean }>();

/**
 * The credential each request was authenticated with, by the request's signal (withRequestSignal),
 * with the ExecAuth that keeps it: what forgetRefusedCredential drops.
 */
const credentialOfRequest = new WeakMap<AbortSignal, { auth: object; user: string; credential: object }>();

/**
 * The requests (by their signal, withRequestSignal) whose authentication waits for its turn: a
 * plugin of the same KubeConfig runs for another request meanwhile (one at a time).
 */
const waitingForItsTurn = new WeakSet<AbortSignal>();

/**
 * The answer without a credential (no token, no client certificate) each request's plugin run
 * gave, by the request's signal: not kept in client-node's cache, so that the next request asks
 * the plugin again, but given again to the same request when it authenticates twice.
 */
const emptyAnswerOfRequest = new WeakMap<AbortSignal, object>();

/** How much of a plugin's stderr is kept: its first line is all a message shows. */
const STDERR_KEPT = 4096;

/** Marks an ExecAuth whose execFn is wrapped already (a KubeConfig shared by several owners). */
const WRAPPED = Symbol('ipallocator.execFnWrapped');

type Spawn = (command: string, args: readonly string[] | undefined, options: Record<string, unknown>) => unknown;

/**
 * Makes every exec credential plugin `kc` starts run as client-go runs it (KUBERNETES_EXEC_INFO,
 * stdin by interactiveMode, stderr passed on), its output checked, and, when started during
 * withRequestSignal, stop when that request's signal aborts; whether it will (false for a
 * KubeConfig without client-node's ExecAuth, which is left as it is). Idempotent.
 * @internal
 */
export function superviseExecPlugins(kc: KubeConfig): boolean {
  const authenticators: unknown = Reflect.get(kc, 'authenticators');
  if (!Array.isArray(authenticators)) return false;
  let stops = false;
  for (const auth of authenticators as unknown[]) {
    if (typeof auth !== 'object' || auth === null) continue;
    if (Reflect.get(auth, WRAPPED) === true) {
      stops = true;
      continue;
    }
    const execFn: unknown = Reflect.get(auth, 'execFn');
    if (typeof execFn !== 'function') continue;
    const spawn = execFn as Spawn;
    const bounded: Spawn = (command, given, options) => {
      const signal = requestSignal.getStore();
      const run = pluginRun.getStore();
      const { args, env } = nullAsEmpty(given, (options as { env?: unknown }).env);
      // as client-go starts it (the file comment); throws, before anything is started, for an
      // interactiveMode that cannot be met, which client-node's getCredential rejects with
      const passed = env === undefined ? options : { ...options, env };
      const started = run === undefined ? passed : { ...passed, ...asClientGoStarts(run.user, kc, passed) };
      const child = spawn.call(auth, command, args, signal === undefined ? started : { ...started, signal, killSignal: 'SIGKILL' });
      if (signal !== undefined) {
        if (signal.aborted) letGo(child);
        else signal.addEventListener('abort', () => letGo(child), { once: true });
      }
      const stderr = (child as { stderr?: { on?: unknown } } | null)?.stderr;
      if (run !== undefined && typeof stderr?.on === 'function') {
        (stderr as { on(event: 'data', listener: (chunk: unknown) => void): void }).on('data', (chunk) => {
          if (run.stderr.length < STDERR_KEPT) run.stderr += String(chunk);
          if (passOnStderr(chunk)) run.onTerminal = true;
        });
      }
      return child;
    };
    stops = Reflect.set(auth, 'execFn', bounded) && Reflect.set(auth, WRAPPED, true);
    // client-node's getCredential runs the plugin (through execFn, above): what it wrote on
    // stderr is kept with the failure it ends in, and what it printed is checked
    const getCredential: unknown = Reflect.get(auth, 'getCredential');
    if (typeof getCredential === 'function') {
      const get = getCredential as (user: unknown) => Promise<unknown>;
      // One at a time, as client-go's Authenticator holds its mutex while its plugin runs: a
      // plugin may be asking the user on the terminal, and two would ask at once. A request that
      // comes meanwhile waits, then finds what that run left in client-node's cache. Each runs in
      // its own request's context (its signal stops the plugin it starts).
      let running: Promise<unknown> = Promise.resolve();
      const checked = async (user: unknown): Promise<unknown> => {
        const signal = requestSignal.getStore();
        if (signal?.aborted) throw signal.reason; // given up while it waited: nothing to run for
        const run = { user: user as User, stderr: '', onTerminal: false };
        const empty = signal === undefined ? undefined : emptyAnswerOfRequest.get(signal);
        if (empty !== undefined) return empty;
        const credential =
          keptWithoutExpiry(auth, user) ??
          (await pluginRun
            .run(run, () => get.call(auth, user))
            .catch((e: unknown) => {
              rememberPluginStderr(e, run.stderr, run.onTerminal);
              throw e;
            }));
        // what it printed is checked as kubectl checks it (client-node takes any JSON object); JSON
        // that is no object fails in client-node as it reads its status (errors.ts NO_EXEC_CREDENTIAL)
        const object = typeof credential === 'object' && credential !== null && !Array.isArray(credential);
        const wrong = object
          ? (notTheCredential(credential, user as User) ?? halfKeyPair(credential) ?? unreadableExpiry(credential))
          : undefined;
        const name = String((user as User).name);
        if (wrong !== undefined) {
          forget(auth, name, credential); // client-node has kept it: the next request runs the plugin again, as kubectl does
          throw new KubeconfigCredentialError(name, wrong);
        }
        // one that gives nothing to authenticate with is refused as the request is sent
        // (user-checks.ts withCredentialCheck, which authenticates it again: given the same);
        // client-go keeps none such, and asks the plugin again at the next request, where
        // client-node would keep it for ever (no expiry)
        if (object && !givesCredential(credential)) {
          forget(auth, name, credential);
          if (signal !== undefined) emptyAnswerOfRequest.set(signal, credential);
        }
        // kept (client-node's tokenCache holds this very object) for a 401 to the request to drop
        else if (signal !== undefined && object) credentialOfRequest.set(signal, { auth, user: name, credential });
        return credential;
      };
      Reflect.set(auth, 'getCredential', (user: unknown) => {
        const signal = requestSignal.getStore();
        if (signal !== undefined) waitingForItsTurn.add(signal);
        const turn = running.then(() => {
          if (signal !== undefined) waitingForItsTurn.delete(signal);
          return checked(user);
        });
        running = turn.catch(() => {});
        return turn;
      });
    }
  }
  return stops;
}

/**
 * Lets go of a plugin given up (spawn kills it on the same abort): a child it started holds the
 * plugin's stdout and stderr open after the plugin is gone, and our ends of them, open, would keep
 * the event loop alive until that child ends. client-node, which reads them, then sees them close
 * as the plugin's failure; its request has already been refused.
 */
function letGo(child: unknown): void {
  if (typeof child !== 'object' || child === null) return;
  for (const name of ['stdin', 'stdout', 'stderr']) {
    const stream: unknown = Reflect.get(child, name);
    const destroy: unknown = typeof stream === 'object' && stream !== null ? Reflect.get(stream, 'destroy') : undefined;
    if (typeof destroy === 'function') destroy.call(stream);
  }
  const unref: unknown = Reflect.get(child, 'unref');
  if (typeof unref === 'function') unref.call(child);
}

/**
 * Runs `call` (a request, its authentication included) so that exec plugins it starts stop when
 * `signal` aborts, and the exec credential it is sent with is known by `signal`
 * (forgetRefusedCredential).
 * @internal
 */
export function withRequestSignal<T>(signal: AbortSignal, call: () => T): T {
  return requestSignal.run(signal, call);
}

/**
 * Whether the request of `signal` (withRequestSignal) is still waiting for its turn to get its
 * exec credential, behind a plugin of the same KubeConfig that runs for another request: its
 * deadline passing then says so, rather than that its own plugin did not answer (none was started
 * for it, and the running one is not stopped: it is the other request's).
 * @internal
 */
export function waitsForAnotherRequestsPlugin(signal: AbortSignal): boolean {
  return waitingForItsTurn.has(signal);
}

/**
 * After the server answered 401 Unauthorized to the request of `signal` (withRequestSignal):
 * drops the exec credential it was sent with, if client-node still keeps it, so that the next
 * request runs the plugin again — client-go's roundTripper does so on a 401 (maybeRefreshCreds,
 * which also leaves alone a credential another request has rotated meanwhile). A request
 * authenticated otherwise (a token, a certificate) is left alone.
 * @internal
 */
export function forgetRefusedCredential(signal: AbortSignal): void {
  const used = credentialOfRequest.get(signal);
  if (used === undefined) return;
  credentialOfRequest.delete(signal);
  forget(used.auth, used.user, used.credential);
}

/** Whether an ExecCredential's status holds a token or a client certificate, what client-node authenticates with. */
function givesCredential(credential: object): boolean {
  const status: unknown = Reflect.get(credential, 'status');
  return (
    typeof status === 'object' && status !== null && Boolean(Reflect.get(status, 'token') || Reflect.get(status, 'clientCertificateData'))
  );
}

/**
 * Why an ExecCredential's status holds a client certificate without its key, or a key without its
 * certificate, as the end of a sentence starting "the exec credential plugin of user …";
 * undefined when it holds both or neither. client-node would connect without a client
 * certificate (and send the request anonymous, but for a token); kubectl refuses it (client-go
 * refreshCredsLocked). Neither is shown.
 */
function halfKeyPair(credential: object): string | undefined {
  const status: unknown = Reflect.get(credential, 'status');
  if (typeof status !== 'object' || status === null) return undefined;
  const cert = Boolean(Reflect.get(status, 'clientCertificateData'));
  if (cert === Boolean(Reflect.get(status, 'clientKeyData'))) return undefined;
  return (
    `returned ${cert ? 'a client certificate without its key (clientCertificateData, no clientKeyData)' : 'a client key without its certificate (clientKeyData, no clientCertificateData)'}, ` +
    'and no client certificate would be sent (kubectl refuses it too: "exec plugin returned only certificate or key, not both")'
  );
}

/** An RFC 3339 time, as Go's time.Parse(time.RFC3339, …) reads it (metav1.Time in JSON). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Why an ExecCredential's status.expirationTimestamp cannot be read as a time, as the end of a
 * sentence starting "the exec credential plugin of user …"; undefined when it is one, null or
 * absent. kubectl fails to decode such an answer (metav1.Time takes RFC 3339 only); client-node
 * would read no expiry from it ("") or one that never passes (NaN: "soon") and run the plugin for
 * every request, or keep the credential for ever.
 */
function unreadableExpiry(credential: object): string | undefined {
  const status: unknown = Reflect.get(credential, 'status');
  if (typeof status !== 'object' || status === null) return undefined;
  const expiry: unknown = Reflect.get(status, 'expirationTimestamp');
  if (expiry === undefined || expiry === null) return undefined;
  if (typeof expiry === 'string' && RFC3339.test(expiry) && !Number.isNaN(Date.parse(expiry))) return undefined;
  return (
    `returned an expirationTimestamp that is not an RFC 3339 time (${quoteInput(expiry)}, for one like "2030-01-02T15:04:05Z"), ` +
    'and when the credential expires could not be known (kubectl refuses it too: it cannot decode the answer)'
  );
}

/**
 * The credential client-node's cache of `auth` (an ExecAuth) keeps for `user` when it has no
 * expirationTimestamp, which client-go keeps until a 401 (forgetRefusedCredential drops it);
 * undefined otherwise, for client-node to decide (an expiry it checks, or no credential kept).
 */
function keptWithoutExpiry(auth: object, user: unknown): object | undefined {
  const cache: unknown = Reflect.get(auth, 'tokenCache');
  const name = (user as { name?: unknown } | null)?.name;
  if (typeof cache !== 'object' || cache === null || typeof name !== 'string') return undefined;
  const kept: unknown = Reflect.get(cache, name);
  if (typeof kept !== 'object' || kept === null) return undefined;
  const status: unknown = Reflect.get(kept, 'status');
  if (typeof status !== 'object' || status === null) return undefined;
  return Reflect.get(status, 'expirationTimestamp') ? undefined : kept;
}

/** Drops `credential` from client-node's cache of `auth` (an ExecAuth) for `user`, if it is still the one kept there. */
function forget(auth: object, user: string, credential: unknown): void {
  const cache: unknown = Reflect.get(auth, 'tokenCache');
  if (typeof cache !== 'object' || cache === null || Reflect.get(cache, user) !== credential) return;
  Reflect.set(cache, user, null); // as client-node drops an expired one
}

/**
 * An exec entry's args, and the env client-node made of its env entries, with a null arg, and an
 * env entry's null or absent value, as kubectl reads them: empty texts (a Go string decodes null
 * as ""). spawn would pass "null", or leave the variable out (and so unset one the process has).
 * Any other value that is no text was refused with the kubeconfig (kubeconfig-shape.ts execEntryNotRead).
 */
function nullAsEmpty(args: readonly string[] | undefined, env: unknown): { args: readonly string[] | undefined; env: unknown } {
  const asText = (value: unknown): unknown => (value === null || value === undefined ? '' : value);
  return {
    // client-node passes the entry's args as they are: no list was refused with the kubeconfig
    args: Array.isArray(args) ? (args.map(asText) as string[]) : args,
    env:
      typeof env === 'object' && env !== null ? Object.fromEntries(Object.entries(env).map(([name, value]) => [name, asText(value)])) : env,
  };
}

/**
 * The spawn options (env, stdio) that start `user`'s exec plugin as client-go starts it (see the
 * file comment), over client-node's `options` (the exec entry's env, when it has one). Throws
 * KubeconfigCredentialError when its interactiveMode cannot be met (Always, stdin no terminal) or
 * is none kubectl knows.
 */
function asClientGoStarts(user: User, kc: KubeConfig, options: { env?: unknown }): Record<string, unknown> {
  const exec = execEntryOf(user) as { apiVersion?: unknown; interactiveMode?: unknown; provideClusterInfo?: unknown } | undefined;
  if (typeof exec !== 'object' || exec === null) return {};
  const interactive = mayAsk(exec, String(user.name));
  const stdio = [interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'];
  if (typeof exec.apiVersion !== 'string') return { stdio };
  const cluster = exec.provideClusterInfo === true ? clusterInfo(kc.getCurrentCluster()) : undefined;
  const info = { kind: 'ExecCredential', apiVersion: exec.apiVersion, spec: { ...(cluster && { cluster }), interactive } };
  // after the exec entry's env, as client-go appends it: the entry cannot set it
  const env = { ...((options.env as NodeJS.ProcessEnv | undefined) ?? process.env), KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  return { env, stdio };
}

/**
 * Whether the plugin may ask the user, by its exec entry's interactiveMode (client-go
 * isInteractive; absent, IfAvailable, kubectl's default for v1beta1): stdin must be a terminal, as
 * client-go's term.IsTerminal(os.Stdin.Fd()). One kubectl refuses was refused with the KubeConfig
 * (user-checks.ts execEntryProblem), and is refused here again for a user that became current
 * after it (another context set since): the plugin is not run.
 */
function mayAsk(exec: { apiVersion?: unknown; interactiveMode?: unknown }, user: string): boolean {
  const refused = interactiveModeProblem(exec, user);
  if (refused !== undefined) throw new KubeconfigCredentialError(user, `was not run: its exec entry ${refused}`);
  const mode = exec.interactiveMode;
  if (mode === 'Never') return false;
  const terminal = isatty(0);
  if (mode === 'Always' && !terminal) {
    throw new KubeconfigCredentialError(
      user,
      'was not run: its exec entry has interactiveMode "Always", and standard input is not a terminal ' +
        '(kubectl refuses it too: "exec plugin cannot support interactive mode: standard input is not a terminal"); ' +
        'run it from a terminal, or set interactiveMode IfAvailable or Never',
    );
  }
  return terminal;
}

/**
 * The cluster as KUBERNETES_EXEC_INFO gives it to a plugin whose exec entry has
 * `provideClusterInfo: true` (client-go rest.ConfigToExecCluster, in the v1 and v1beta1 JSON
 * names): the CA as base64 PEM, read from certificate-authority when that is where it is. The
 * cluster's `client.authentication.k8s.io/exec` extension (`config`) is not given: client-node does
 * not keep a cluster's extensions.
 */
function clusterInfo(cluster: Cluster | null): Record<string, unknown> | undefined {
  if (cluster === null || typeof cluster !== 'object') return undefined;
  let ca = cluster.caData;
  if (ca === undefined && typeof cluster.caFile === 'string' && cluster.caFile !== '') {
    try {
      ca = readFileSync(cluster.caFile).toString('base64');
    } catch {
      // client-node has read it already for the request; the failure, if any, is said there
    }
  }
  return {
    server: cluster.server,
    ...(cluster.tlsServerName && { 'tls-server-name': cluster.tlsServerName }),
    ...(cluster.skipTLSVerify === true && { 'insecure-skip-tls-verify': true }),
    ...(ca && { 'certificate-authority-data': ca }),
    ...(cluster.proxyUrl && { 'proxy-url': cluster.proxyUrl }),
  };
}

/**
 * Writes what a plugin wrote on stderr to ours, as client-go's plugin writes to os.Stderr: a
 * device-code login tells the user there where to sign in; whether it went to a terminal, where
 * the user has read it (a failure then does not repeat it: errors.ts execPluginFailure). A stderr
 * that cannot take it (closed) loses it; the first 4 KiB are kept for the messages all the same.
 */
function passOnStderr(chunk: unknown): boolean {
  try {
    process.stderr.write(typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : String(chunk));
    return process.stderr.isTTY === true;
  } catch {
    return false; // nowhere to write it
  }
}

/**
 * The name of `kc`'s current user when client-node gets its credentials from an exec plugin
 * (ExecAuth.isAuthProvider: `exec`, or an auth-provider named exec or holding one), else undefined.
 * @internal
 */
export function execPluginUser(kc: KubeConfig): string | undefined {
  let user: User | null;
  try {
    user = kc.getCurrentUser();
  } catch {
    return undefined;
  }
  if (user === null || typeof user !== 'object') return undefined;
  const provider = user.authProvider as { name?: unknown; config?: { exec?: unknown } } | undefined;
  const exec = user.exec !== undefined && user.exec !== null ? user.exec : provider?.name === 'exec' ? true : provider?.config?.exec;
  return exec ? user.name : undefined;
}

/** The command of `kc`'s current user's exec plugin as the kubeconfig names it (never its args), or undefined. @internal */
export function execPluginCommand(kc: KubeConfig): string | undefined {
  const user = kc.getCurrentUser();
  const exec = execEntryOf(user) as { command?: unknown } | undefined;
  return typeof exec?.command === 'string' && exec.command !== '' ? exec.command : undefined;
}

/**
 * An ExecCredential's status field that JSON gives as something other than text (`"token": 12345`),
 * as notTheCredential says it; undefined when there is none. client-node sends such a token as
 * it is ("Bearer 12345"); kubectl cannot decode the ExecCredential (a Go string field). Its value
 * is not shown: it may be a credential.
 */
function notTextInStatus(credential: object): string | undefined {
  const status: unknown = (credential as { status?: unknown }).status;
  if (typeof status !== 'object' || status === null) return undefined;
  for (const field of ['token', 'clientCertificateData', 'clientKeyData']) {
    const value: unknown = Reflect.get(status, field);
    if (value === undefined || value === null || typeof value === 'string') continue;
    const kind = Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
    return `printed an ExecCredential whose status.${field} is ${kind}, not text (kubectl cannot decode it either); it was not used`;
  }
  return undefined;
}

/**
 * Why what an exec plugin printed (JSON, parsed by client-node) is not the ExecCredential its
 * exec entry asks for, as the end of a sentence starting "the exec credential plugin of user …";
 * undefined when it is. client-node reads `status` from any JSON object and sends the token in it
 * (`{"kind":"Pod","status":{"token":…}}`); kubectl decodes only an ExecCredential, of the
 * apiVersion the entry names (client-go: `exec plugin is configured to use API version …, plugin
 * returned version …`). Neither what it printed nor its token is shown: a kind and an apiVersion
 * are quoted cut (quoteInput).
 */
function notTheCredential(credential: object, user: User): string | undefined {
  const { kind, apiVersion } = credential as { kind?: unknown; apiVersion?: unknown };
  if (kind !== 'ExecCredential') {
    const printed = kind === undefined ? 'JSON without a kind' : `JSON of kind ${quoteInput(kind)}`;
    return `printed ${printed}, not an ExecCredential (kubectl refuses it too); its token, if any, was not used`;
  }
  const exec = execEntryOf(user) as { apiVersion?: unknown } | undefined;
  const asked = exec?.apiVersion;
  if (typeof asked !== 'string' || apiVersion === asked) return notTextInStatus(credential);
  return (
    `printed an ExecCredential of apiVersion ${quoteInput(apiVersion)}, but its exec entry asks for ${quoteInput(asked)} ` +
    '(kubectl refuses it too: "exec plugin is configured to use API version …, plugin returned version …"); make them agree'
  );
}
