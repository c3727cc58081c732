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

/** Starts `d` before each test of the calling file; after each, closes the stores made on it, then it. */
export function startDoubleForEachTest(): void {
  beforeEach(async () => {
    d = await ApiServerDouble.start();
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) s.close();
    await d.close();
  });
}

/**
 * A KubernetesStore on `d` (read by `Config`, default client-node 2.x's KubeConfig), closed after
 * the test; `start`, `requestTimeoutMs` and `readYourWrites` as the store takes them (its defaults
 * when left out).
 */
export function storeOnDouble(
  options: { start?: boolean; requestTimeoutMs?: number; readYourWrites?: boolean; Config?: typeof KubeConfig | undefined } = {},
): KubernetesStore {
  const { Config, ...storeOptions } = options;
  const s = new KubernetesStore(kubeConfigFor(d.url, undefined, { ...(Config && { Config }) }), storeOptions);
  stores.push(s);
  return s;
}
