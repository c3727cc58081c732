// The shared upstream cases (test/k8s/allocator-cases.ts: A1, A3–A6, A14, A15, record shape)
// against a REAL API server, for Allocator and ReferenceAllocator on KubernetesStore.
//
// Opt-in, because it writes to a cluster:
//   KUBECONFIG=$HOME/.kube/config IPALLOCATOR_CLUSTER_TESTS=1 npx vitest run test/kubernetes-cluster.test.ts
// Requirements: Kubernetes ≥ 1.33 (networking.k8s.io/v1 IPAddress; for 1.31–1.32 with the
// MultiCIDRServiceAllocator gate on, set IPALLOCATOR_CLUSTER_API_VERSION=v1beta1), and RBAC
// get/list/watch/create/delete on ipaddresses.networking.k8s.io.
//
// Addresses come from documentation ranges, configurable:
//   IPALLOCATOR_CLUSTER_IPV4_PREFIX  an IPv4 /24   (default 198.51.100.0/24, TEST-NET-2)
//   IPALLOCATOR_CLUSTER_IPV6_PREFIX  an IPv6 /120  (default 2001:db8:ca7::/120, RFC 3849)
// A15's two "outside the prefix" objects are in the other TEST-NETs (192.0.2.0/24, 203.0.113.0/24).
// Every object gets a real ParentRef (group "", resource services, namespace default, name
// ipallocator-conformance; the Service need not exist).
//
// Safety and cleanup: before anything, the run refuses to start if any IPAddress already exists
// inside the test prefixes (it never deletes what it did not create). After each test, every
// object inside the test prefixes carrying the allocator labels is deleted (a label-selector
// sweep restricted to the prefixes: the cluster's own ClusterIP objects carry the same labels);
// afterAll deletes every name the run saw created, by name, then sweeps once more.
// Note: kube-apiserver's repair controller deletes IPAddresses whose parent Service does not
// exist once they are 60 s old; each case finishes well within that on a healthy cluster.
import { afterAll, afterEach, beforeAll, describe, expect, vi } from 'vitest';
import { KubeConfig, NetworkingV1Api, NetworkingV1beta1Api } from '@kubernetes/client-node';
import { KubernetesStore, type ApiVersion } from '../adapters/kubernetes/index.ts';
import { CONTROLLER_NAME, LABEL_MANAGED_BY, type ParentRef } from '../adapters/store.ts';
import type { IPAllocator } from '../adapters/types.ts';
import { parsePrefix } from '../adapters/address.ts';
import { until } from './k8s/helpers.ts';
import { contains, defineSharedCases, makeAllocator, type Kind, type Target } from './k8s/allocator-cases.ts';

const ENABLED = !!process.env.KUBECONFIG && process.env.IPALLOCATOR_CLUSTER_TESTS === '1';
const V4 = process.env.IPALLOCATOR_CLUSTER_IPV4_PREFIX || '198.51.100.0/24';
const V6 = process.env.IPALLOCATOR_CLUSTER_IPV6_PREFIX || '2001:db8:ca7::/120';
const API_VERSION = (process.env.IPALLOCATOR_CLUSTER_API_VERSION || 'v1') as ApiVersion;
const OUTSIDE_V4 = ['192.0.2.10', '203.0.113.1'].filter((ip) => !contains(V4, ip));
const OWNER: ParentRef = { group: '', resource: 'services', namespace: 'default', name: 'ipallocator-conformance' };
/** Everything this file may create lives in here. */
const TEST_PREFIXES = [V4, V6, ...OUTSIDE_V4.map((ip) => `${ip}/32`)];

interface IPAddressApi {
  createIPAddress(p: { body: unknown }): Promise<unknown>;
  deleteIPAddress(p: { name: string }): Promise<unknown>;
  listIPAddress(p: { labelSelector?: string }): Promise<{ items: { metadata?: { name?: string } }[] }>;
}

function checkPrefix(cidr: string, family: 4 | 6, bits: number, variable: string): void {
  const p = parsePrefix(cidr);
  if (p.family !== family || p.bits !== bits) throw new Error(`${variable} must be an IPv${family} /${bits}, got ${cidr}`);
}

describe.skipIf(!ENABLED)(`a real API server${ENABLED ? '' : ' (set KUBECONFIG and IPALLOCATOR_CLUSTER_TESTS=1)'}`, () => {
  let kc: KubeConfig;
  let api: IPAddressApi;
  const stores: KubernetesStore[] = [];
  const allocators: IPAllocator[] = [];
  /** Every name in the test prefixes any store of this run saw, for the final delete by name. */
  const seen = new Set<string>();
  /** Set once the prefixes were found empty: only then may anything be deleted. */
  let owned = false;

  const inTestPrefixes = (name: string) => TEST_PREFIXES.some((p) => contains(p, name));

  async function namesInPrefixes(labelSelector?: string): Promise<string[]> {
    const list = await api.listIPAddress(labelSelector === undefined ? {} : { labelSelector });
    return list.items.map((o) => o.metadata?.name ?? '').filter(inTestPrefixes);
  }

  async function deleteQuietly(name: string): Promise<void> {
    try {
      await api.deleteIPAddress({ name });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
    }
  }

  /** Deletes every allocator-labelled object inside the test prefixes. */
  async function sweep(): Promise<void> {
    for (const name of await namesInPrefixes(`${LABEL_MANAGED_BY}=${CONTROLLER_NAME}`)) await deleteQuietly(name);
  }

  beforeAll(async () => {
    vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });
    checkPrefix(V4, 4, 24, 'IPALLOCATOR_CLUSTER_IPV4_PREFIX');
    checkPrefix(V6, 6, 120, 'IPALLOCATOR_CLUSTER_IPV6_PREFIX');
    kc = new KubeConfig();
    kc.loadFromDefault();
    api = (API_VERSION === 'v1beta1'
      ? kc.makeApiClient(NetworkingV1beta1Api)
      : kc.makeApiClient(NetworkingV1Api)) as unknown as IPAddressApi;
    const existing = await namesInPrefixes();
    if (existing.length > 0) {
      throw new Error(
        `refusing to run: IPAddress objects already exist in the test prefixes (${existing.slice(0, 5).join(', ')}…); ` +
          'choose other prefixes with IPALLOCATOR_CLUSTER_IPV4_PREFIX / IPALLOCATOR_CLUSTER_IPV6_PREFIX or delete them',
      );
    }
    owned = true;
  });

  afterEach(async () => {
    for (const a of allocators.splice(0)) a.destroy();
    for (const s of stores.splice(0)) s.close();
    if (owned) await sweep();
  });

  afterAll(async () => {
    for (const a of allocators.splice(0)) a.destroy();
    for (const s of stores.splice(0)) s.close();
    if (!owned) return;
    for (const name of seen) await deleteQuietly(name);
    await sweep();
    expect(await namesInPrefixes()).toEqual([]);
  });

  async function open(kind: Kind, cidr: string): Promise<{ a: IPAllocator; store: KubernetesStore }> {
    const store = new KubernetesStore(kc, { apiVersion: API_VERSION });
    stores.push(store);
    store.cache.subscribe({
      onAdd: (r) => {
        if (inTestPrefixes(r.name)) seen.add(r.name);
      },
      onDelete: () => {},
    });
    await store.waitForSync({ timeoutMs: 30_000 }); // an unreachable cluster fails the test with its last error instead of hanging
    const a = makeAllocator(kind, cidr, { store });
    allocators.push(a);
    return { a, store };
  }

  const target: Target = {
    v4: V4,
    v6: V6,
    a14: V6,
    outsideV4: OUTSIDE_V4,
    owner: OWNER,
    open,
    async insert(store, name, labels) {
      seen.add(name);
      await api.createIPAddress({
        body: {
          apiVersion: `networking.k8s.io/${API_VERSION}`,
          kind: 'IPAddress',
          metadata: { name, labels },
          spec: { parentRef: { resource: 'services', namespace: 'default', name: 'ipallocator-conformance-other' } },
        },
      });
      await until(() => store.cache.get(name) !== undefined, `cache has ${name}`);
    },
  };

  defineSharedCases(() => target);
});
