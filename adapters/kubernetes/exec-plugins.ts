// Exec credential plugins that do not outlive the request that started them.
//
// client-node runs a kubeconfig user's exec plugin (`users[].user.exec`) with child_process.spawn
// as it authenticates each request, and waits for it to exit, with no timeout and no way to stop
// it: a plugin that never answers (waiting on a browser login, a hung network call) holds the
// request, and is still running after the request's deadline or close() gave up on it. The spawn
// is client-node's `execFn`, a field of the ExecAuth each KubeConfig holds: stopPluginsOnAbort
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
// A KubeConfig without that field (another client-node) is left as it is: the request still
// ends at its deadline, and the message still says that the plugin did not answer, but the
// plugin is not stopped.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { KubeConfig, User } from '@kubernetes/client-node';
import { quoteInput } from '../errors.ts';
import { rememberPluginStderr } from './errors.ts';
import { KubeconfigCredentialError } from './user-checks.ts';

/** The AbortSignal of the request whose authentication is running, where there is one. */
const requestSignal = new AsyncLocalStorage<AbortSignal>();

/** What the plugin started by the running getCredential wrote on stderr (at most STDERR_KEPT characters). */
const pluginRun = new AsyncLocalStorage<{ stderr: string }>();

/** How much of a plugin's stderr is kept: its first line is all a message shows. */
const STDERR_KEPT = 4096;

/** Marks an ExecAuth whose execFn is wrapped already (a KubeConfig shared by several owners). */
const WRAPPED = Symbol('ipallocator.execFnWrapped');

type Spawn = (command: string, args: readonly string[] | undefined, options: Record<string, unknown>) => unknown;

/**
 * Makes every exec credential plugin `kc` starts during withRequestSignal stop when that
 * request's signal aborts; whether it will (false for a KubeConfig without client-node's ExecAuth,
 * which is left as it is). Idempotent.
 */
export function stopPluginsOnAbort(kc: KubeConfig): boolean {
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
    const bounded: Spawn = (command, args, options) => {
      const signal = requestSignal.getStore();
      const child = spawn.call(auth, command, args, signal === undefined ? options : { ...options, signal, killSignal: 'SIGKILL' });
      if (signal !== undefined) {
        if (signal.aborted) letGo(child);
        else signal.addEventListener('abort', () => letGo(child), { once: true });
      }
      const run = pluginRun.getStore();
      const stderr = (child as { stderr?: { on?: unknown } } | null)?.stderr;
      if (run !== undefined && typeof stderr?.on === 'function') {
        (stderr as { on(event: 'data', listener: (chunk: unknown) => void): void }).on('data', (chunk) => {
          if (run.stderr.length < STDERR_KEPT) run.stderr += String(chunk);
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
      Reflect.set(auth, 'getCredential', async (user: unknown) => {
        const run = { stderr: '' };
        const credential = await pluginRun
          .run(run, () => get.call(auth, user))
          .catch((e: unknown) => {
            rememberPluginStderr(e, run.stderr);
            throw e;
          });
        // what it printed is checked as kubectl checks it (client-node takes any JSON object); JSON
        // that is no object fails in client-node as it reads its status (errors.ts NO_EXEC_CREDENTIAL)
        const object = typeof credential === 'object' && credential !== null && !Array.isArray(credential);
        const wrong = object ? notTheCredential(credential, user as User) : undefined;
        if (wrong !== undefined) throw new KubeconfigCredentialError(String((user as User).name), wrong);
        return credential;
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

/** Runs `call` (a request, its authentication included) so that exec plugins it starts stop when `signal` aborts. */
export function withRequestSignal<T>(signal: AbortSignal, call: () => T): T {
  return requestSignal.run(signal, call);
}

/**
 * The name of `kc`'s current user when client-node gets its credentials from an exec plugin
 * (ExecAuth.isAuthProvider: `exec`, or an auth-provider named exec or holding one), else undefined.
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

/** The command of `kc`'s current user's exec plugin as the kubeconfig names it (never its args), or undefined. */
export function execPluginCommand(kc: KubeConfig): string | undefined {
  const user = kc.getCurrentUser();
  const exec = (user?.exec ?? user?.authProvider?.config?.exec) as { command?: unknown } | undefined;
  return typeof exec?.command === 'string' && exec.command !== '' ? exec.command : undefined;
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
  const exec = (user.exec ?? (user.authProvider as { config?: { exec?: unknown } } | undefined)?.config?.exec) as
    | { apiVersion?: unknown }
    | undefined;
  const asked = exec?.apiVersion;
  if (typeof asked !== 'string' || apiVersion === asked) return undefined;
  return (
    `printed an ExecCredential of apiVersion ${quoteInput(apiVersion)}, but its exec entry asks for ${quoteInput(asked)} ` +
    '(kubectl refuses it too: "exec plugin is configured to use API version …, plugin returned version …"); make them agree'
  );
}
