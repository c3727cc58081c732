// The setup the tests of creates and deletes whose answer was lost share
// (kubernetes-create-lost, kubernetes-delete-lost, kubernetes-create-resent): an API-server double
// started before each test, stores on it closed after it, records for two Services, and how a
// call settled.
import type { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach } from 'vitest';
import { KubernetesStore } from '../../adapters/kubernetes/index.ts';
import { allocatorLabels, type IPAddressRecord, type ParentRef } from '../../adapters/store.ts';
import { ApiServerDouble } from './apiserver-double.ts';
import { kubeConfigFor } from './kubeconfig.ts';

export const WEB: ParentRef = { group: '', resource: 'services', namespace: 'default', name: 'web' };
export const DB: ParentRef = { ...WEB, name: 'db' };

/** An IPv4 record of the allocator's labels for `parentRef` (default WEB). */
export const record = (name: string, parentRef: ParentRef = WEB): IPAddressRecord => ({ name, labels: allocatorLabels('IPv4'), parentRef });

/**
 * The deadline of each request: a drop that an undici client under Deno does not see ends here,
 * as a deadline passed after the request went out.
 */
export const REQUEST_TIMEOUT_MS = 1500;

/** What a promise settled with (its rejection, or the value it resolved to). */
export async function outcome(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => ({ resolved: value }),
    (err: unknown) => err,
  );
}

/**
 * The API-server double of the test running: started by the hooks startDoubleForEachTest
 * registers, before each test of the file that calls it (read it inside a test or a hook).
 */
export let d: ApiServerDouble;

/** The stores made by storeOnDouble during the test running, closed after it. */
const stores: KubernetesStore[] = [];

/**
 * The calls made on those stores during the test, each with how it was called
 * (`delete("10.0.0.1")`). No handler is put on them before the test ends: a rejection the test
 * leaves unawaited stays unhandled, and vitest reports it.
 */
const inFlight = new Map<Promise<unknown>, string>();

/**
 * How long the calls still in flight when a test ends may take to settle once their stores are
 * closed (close() rejects them with ErrDestroyed at once; the bound is generous for a loaded machine).
 */
const SETTLE_MS = 10_000;

/**
 * Starts `d` before each test of the calling file; after each, closes the stores made on it, waits
 * (at most SETTLE_MS) for the calls made on them to settle, then closes `d`. A call still unsettled
 * then fails the test that made it, named — not the next test, which it would otherwise reach
 * (its rejection unhandled, or its requests on a double closed under it).
 */
export function startDoubleForEachTest(): void {
  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) s.close();
    const calls = [...inFlight.keys()];
    for (const p of calls) void Promise.allSettled([p]).then(() => inFlight.delete(p));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled(calls), new Promise((done) => (timer = setTimeout(done, SETTLE_MS)))]);
    clearTimeout(timer);
    const hung = [...inFlight.values()];
    inFlight.clear();
    await d.close();
    if (hung.length > 0) {
      throw new Error(`still unsettled ${SETTLE_MS} ms after its store was closed: ${hung.join(', ')}`);
    }
  });
}

/** `s` with its calls (create, delete, get, waitForSync) kept in inFlight. */
function tracked(s: KubernetesStore): KubernetesStore {
  for (const method of ['create', 'delete', 'get', 'waitForSync'] as const) {
    const call = s[method] as (...args: unknown[]) => Promise<unknown>;
    const track = (...args: unknown[]): Promise<unknown> => {
      const p = call.apply(s, args);
      const shown = args.map((a) => JSON.stringify(typeof a === 'object' && a !== null && 'name' in a ? a.name : a)).join(', ');
      inFlight.set(p, `${method}(${shown})`);
      return p;
    };
    Object.defineProperty(s, method, { value: track, configurable: true, writable: true });
  }
  return s;
}

/**
 * A KubernetesStore on `d` (read by `Config`, default client-node 2.x's KubeConfig), closed after
 * the test, which waits for its calls to settle; `start`, `requestTimeoutMs` and `readYourWrites` as the store takes them (its defaults
 * when left out).
 */
export function storeOnDouble(
  options: { start?: boolean; requestTimeoutMs?: number; readYourWrites?: boolean; Config?: typeof KubeConfig | undefined } = {},
): KubernetesStore {
  const { Config, ...storeOptions } = options;
  const s = tracked(new KubernetesStore(kubeConfigFor(d.url, undefined, { ...(Config && { Config }) }), storeOptions));
  stores.push(s);
  return s;
}
