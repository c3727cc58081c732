// Exec credential plugins that do not outlive the request that started them.
//
// client-node runs a kubeconfig user's exec plugin (`users[].user.exec`) with child_process.spawn
// as it authenticates each request, and waits for it to exit, with no timeout and no way to stop
// it: a plugin that never answers (waiting on a browser login, a hung network call) holds the
// request, and is still running after the request's deadline or close() gave up on it. The spawn
// is client-node's `execFn`, a field of the ExecAuth each KubeConfig holds: stopPluginsOnAbort
// wraps it so that a plugin started while a request of ours runs (withRequestSignal, carried
// through client-node's promises by an AsyncLocalStorage) is given that request's AbortSignal:
// spawn kills it when the request ends unanswered. Only the plugin's own process is killed, not
// what it started itself.
//
//   ApiRequests.run / a watch's send ──► withRequestSignal(signal, call)
//        └─► client-node authenticates ──► ExecAuth.execFn (wrapped) ──► spawn(…, { signal, killSignal })
//   deadline or close() ──► signal aborts ──► the plugin is killed (SIGKILL, as Go's exec.CommandContext)
//
// A KubeConfig without that field (another client-node) is left as it is: the request still
// ends at its deadline, and the message still says that the plugin did not answer, but the
// plugin is not stopped.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { KubeConfig, User } from '@kubernetes/client-node';

/** The AbortSignal of the request whose authentication is running, where there is one. */
const requestSignal = new AsyncLocalStorage<AbortSignal>();

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
      return spawn.call(auth, command, args, signal === undefined ? options : { ...options, signal, killSignal: 'SIGKILL' });
    };
    stops = Reflect.set(auth, 'execFn', bounded) && Reflect.set(auth, WRAPPED, true);
  }
  return stops;
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
