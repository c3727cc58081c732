// Small helpers for the Kubernetes store tests.
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesStore } from '../../adapters/kubernetes/index.ts';
import type { IPAddressRecord, StoreCache, StoreWatcher } from '../../adapters/store.ts';
import { kubeConfigFor } from './kubeconfig.ts';
import { createServer } from 'node:net';
import { vi } from 'vitest';

/**
 * The Authorization headers `double` received for one get, by a KubernetesStore of `kc` (undefined:
 * the default kubeconfig) that starts no watch, of a name the double does not hold.
 */
export async function authorizationsOfOneGet(
  kc: ConstructorParameters<typeof KubernetesStore>[0],
  double: { readonly requests: readonly { authorization?: string }[] },
): Promise<unknown[]> {
  const store = new KubernetesStore(kc, { start: false });
  try {
    const answer = await store.get('10.0.0.1');
    if (answer !== undefined) throw new Error(`the double holds 10.0.0.1: ${JSON.stringify(answer)}`);
  } finally {
    store.close();
  }
  return double.requests.map((r) => r.authorization);
}

/**
 * What a get('10.0.0.1') settles with — its error, or `{ resolved }` — by a KubernetesStore that
 * starts no watch, over a kubeconfig (read by `Config`, default client-node 2.x's) whose one
 * context is `cluster` (named "prod", as messages say it) and `user`.
 */
export async function settledGet(
  cluster: { server: string; caData?: string; caFile?: string; tlsServerName?: string; proxyUrl?: string; skipTLSVerify?: boolean },
  user: { token?: string; certData?: string; keyData?: string },
  Config: typeof KubeConfig = KubeConfig,
): Promise<unknown> {
  const kc = new Config();
  kc.loadFromOptions({
    clusters: [{ name: 'prod', ...cluster }],
    users: [{ name: 'dev', ...user }],
    contexts: [{ name: 'x', cluster: 'prod', user: 'dev' }],
    currentContext: 'x',
  });
  const store = new KubernetesStore(kc, { start: false, requestTimeoutMs: 10_000 });
  try {
    return await store.get('10.0.0.1').then(
      (value) => ({ resolved: value }),
      (e: unknown) => e,
    );
  } finally {
    store.close();
  }
}

/**
 * Waits until `cond()` holds, checking after each turn of the event loop (and every few ms).
 * Asserts nothing about how long it took; the test timeout bounds it. With `withinMs`, gives up
 * once that long has passed: for what must happen at once, not only in the end (a connection
 * dropped now, not when a keep-alive timer of some seconds runs out) — give a bound well above
 * a busy machine's delay and well below the later time it tells apart.
 */
export async function until(cond: () => boolean, what = 'condition', withinMs = Infinity): Promise<void> {
  const start = performance.now();
  for (let i = 0; ; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, i < 50 ? 1 : 10));
    if (i > 20_000) throw new Error(`gave up waiting for ${what}`);
    if (performance.now() - start > withinMs && !cond()) throw new Error(`gave up waiting for ${what} after ${withinMs} ms`);
  }
}

/**
 * Runs `call` with what is written on this process's stderr meanwhile kept off it (an exec
 * plugin's stderr is passed on there, as kubectl passes it on), so that it does not end up in the
 * test run's own output: what `call` resolved to, and that text.
 */
export async function keepingStderr<T>(call: () => Promise<T>): Promise<{ value: T; stderr: string }> {
  let stderr = '';
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  });
  try {
    const value = await call();
    return { value, stderr };
  } finally {
    write.mockRestore();
  }
}

/** Whether a process with this pid is running (signal 0 only asks): for an exec plugin that must have been stopped. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `node -e` source for an exec credential plugin that writes its pid to `pidFile`, then never
 * answers (a plugin waiting on a login that never comes). Under Deno the same argv runs as
 * `deno eval`, which has neither `require` nor dynamic import: the file is written with Deno's own API.
 */
export function hangingPlugin(pidFile: string): string {
  const file = JSON.stringify(pidFile);
  return (
    `if (typeof Deno === 'object') Deno.writeTextFileSync(${file}, String(process.pid)); ` +
    `else require('node:fs').writeFileSync(${file}, String(process.pid)); ` +
    'setInterval(() => {}, 1000)'
  );
}

/** A subscriber that mirrors the cache from onAdd/onDelete, and logs every call. */
export class Mirror implements StoreWatcher {
  readonly view = new Map<string, IPAddressRecord>();
  readonly log: string[] = [];
  /** Deletes of names the mirror did not hold (would be an invented delete). */
  readonly phantomDeletes: string[] = [];

  onAdd(r: IPAddressRecord): void {
    this.view.set(r.name, r);
    this.log.push(`+${r.name}`);
  }

  onDelete(r: IPAddressRecord): void {
    if (!this.view.delete(r.name)) this.phantomDeletes.push(r.name);
    this.log.push(`-${r.name}`);
  }

  names(): string[] {
    return [...this.view.keys()].sort();
  }
}

export function cacheNames(cache: StoreCache): string[] {
  return cache
    .list()
    .map((r) => r.name)
    .sort();
}

/**
 * A KubernetesStore on the API server at `url`, not started, that retries after a few ms; the
 * message of each error its state changes carry lands in `errors`. It is added to `opened`, for
 * the test to close.
 */
export function openStore(url: string, opened: { close(): void }[]): { store: KubernetesStore; errors: string[] } {
  const store = new KubernetesStore(kubeConfigFor(url), { backoff: { initialMs: 2, maxMs: 20 }, start: false });
  opened.push(store);
  const errors: string[] = [];
  store.onStateChange((_state, error) => {
    if (error !== undefined) errors.push(error.message);
  });
  return { store, errors };
}

/**
 * An IPAddress list page as kube-apiserver writes one, for a scripted ListerWatcher: kind and
 * apiVersion on the list (its items go without them, as the server's do).
 */
export function ipAddressList(items: unknown[], metadata: { resourceVersion: string; continue?: string | undefined }) {
  return { kind: 'IPAddressList', apiVersion: 'networking.k8s.io/v1', metadata, items };
}

/** A watch event's object as kube-apiserver writes it, with kind and apiVersion (IPAddress, networking.k8s.io/v1). */
export function ipAddressEvent(object: object): object {
  return { kind: 'IPAddress', apiVersion: 'networking.k8s.io/v1', ...object };
}

/**
 * A port on 127.0.0.1 that nothing listens on (a server's, closed): a connection is refused, and
 * every request fails, for ever. Not port 1, which fetch refuses to use at all (a "bad port": the
 * store then stops at once with SyncBlockedError instead of retrying).
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
