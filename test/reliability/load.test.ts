// Load: 8 allocators sharing one store, mixed operations in flight in batches (Promise.all).
//   MemoryStore: IPALLOCATOR_LOAD_OPS operations (default 10^5) on an IPv4 /16, its cache lagging
//   behind (flushed every few batches) so the allocators collide mid-air as API servers do.
//   KubernetesStore: 8 allocators, each with its own store (8 API servers) on one API-server
//   double, IPALLOCATOR_K8S_LOAD_OPS operations (default 1,600) on a /24.
// Asserted: zero duplicates (no address resolved to two holders at once), zero lost allocations
// (every held address has its record with its owner, and nothing else is in the store). The
// throughput is printed (and recorded by hand in test/RELIABILITY.md), never asserted.
import { describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import { FaultyMemoryStore } from '../doubles/memory-store-faults.ts';
import { seededRandom } from '../../adapters/random.ts';
import { ErrAllocated, ErrFull } from '../../adapters/errors.ts';
import { ownerKey } from '../../adapters/reconcile.ts';
import { KubernetesStore } from '../../adapters/kubernetes/index.ts';
import type { IPAllocator } from '../../adapters/types.ts';
import type { ParentRef, IPAddressRecord } from '../../adapters/store.ts';
import { ApiServerDouble } from '../k8s/apiserver-double.ts';
import { kubeConfigFor } from '../k8s/kubeconfig.ts';
import { until } from '../k8s/helpers.ts';
import { Driver, K8S_LOAD_OPS, LOAD_OPS, baseSeed, reportThroughput, scaledTimeout } from './driver.ts';

const SEED = baseSeed(0x10ad);

interface Figures {
  ops: number;
  allocations: number;
  releases: number;
  full: number;
  collisions: number;
  duplicates: string[];
  ms: number;
}

/**
 * Drives `allocators` with `n` mixed operations in batches of `batch` (all in flight together).
 * `between()` runs between batches (cache flushes). Returns the figures and the held map.
 */
async function drive(
  allocators: IPAllocator[],
  n: number,
  batch: number,
  seed: number,
  capacity: number,
  between: (i: number) => void,
): Promise<{ f: Figures; held: Map<string, string> }> {
  const d = new Driver(seed);
  const held = new Map<string, string>(); // ip → owner key
  const f: Figures = { ops: 0, allocations: 0, releases: 0, full: 0, collisions: 0, duplicates: [], ms: 0 };
  let owners = 0;
  const hold = (ip: string, owner: ParentRef) => {
    const k = ownerKey(owner);
    const other = held.get(ip);
    if (other !== undefined) f.duplicates.push(`${ip}: ${other} and ${k}`);
    held.set(ip, k);
    f.allocations++;
  };
  const t0 = performance.now();
  for (let b = 0; f.ops < n; b++) {
    const calls: Promise<void>[] = [];
    // pick the releases of this batch up front so no address is released twice in one batch
    const ips = [...held.keys()];
    const releasing = new Set<string>();
    for (let j = 0; j < batch && f.ops < n; j++, f.ops++) {
      const a = allocators[d.below(allocators.length)]!;
      // allocation-heavy until the range is 3/4 full, then release-heavy: a full /16 would make
      // the scan-based ReferenceAllocator walk 65,534 addresses per call
      const roll = held.size * 4 > capacity * 3 ? 30 + d.below(70) : d.below(100);
      const owner: ParentRef = { group: '', resource: 'services', namespace: 'load', name: `svc-${owners++}` };
      if (roll < 55 || ips.length === 0) {
        calls.push(
          a.allocateNext(owner).then(
            (ip) => hold(ip, owner),
            (e) => {
              if (!(e instanceof ErrFull)) throw e;
              f.full++;
            },
          ),
        );
      } else if (roll < 65) {
        const ip = ips[d.below(ips.length)]!; // most are taken: ErrAllocated expected then
        calls.push(
          a.allocate(ip, owner).then(
            () => hold(ip, owner),
            (e) => {
              if (!(e instanceof ErrAllocated)) throw e;
              f.collisions++;
            },
          ),
        );
      } else {
        const ip = ips[d.below(ips.length)]!;
        if (releasing.has(ip)) continue;
        releasing.add(ip);
        held.delete(ip); // forgotten before the delete is sent (the Service is gone)
        f.releases++;
        calls.push(a.release(ip));
      }
    }
    await Promise.all(calls);
    between(b);
  }
  f.ms = performance.now() - t0;
  return { f, held };
}

/** Every held address has exactly its record; nothing else is stored. */
function checkStore(records: IPAddressRecord[], held: Map<string, string>): string[] {
  const problems: string[] = [];
  const byName = new Map(records.map((r) => [r.name, r]));
  for (const [ip, k] of held) {
    const r = byName.get(ip);
    if (r === undefined) problems.push(`lost: ${ip} (${k}) has no record`);
    else if (r.parentRef === null || ownerKey(r.parentRef) !== k)
      problems.push(`lost: ${ip} held by ${k}, record says ${JSON.stringify(r.parentRef)}`);
  }
  for (const r of records) if (!held.has(r.name)) problems.push(`stray record ${r.name} (${JSON.stringify(r.parentRef)})`);
  return problems;
}

describe('load: 8 allocators, one store', () => {
  it(
    `MemoryStore, IPv4 /16, ${LOAD_OPS} mixed operations in batches of 256, lagging cache`,
    async () => {
      const store = new FaultyMemoryStore({ cache: 'manual' });
      const allocators: IPAllocator[] = [];
      for (let i = 0; i < 8; i++) {
        const opts = { store, random: seededRandom(SEED + i) };
        // one ReferenceAllocator among them: the upstream algorithm under the same load
        allocators.push(i === 7 ? new ReferenceAllocator('10.64.0.0/16', opts) : new Allocator('10.64.0.0/16', opts));
      }
      const { f, held } = await drive(allocators, LOAD_OPS, 256, SEED, 65534, (b) => {
        if (b % 3 === 2) store.flushCache();
      });
      store.syncCache();
      expect(f.duplicates).toEqual([]);
      expect(checkStore(store.records(), held)).toEqual([]);
      for (const a of allocators) expect(a.used()).toBe(held.size);
      expect(f.allocations).toBeGreaterThan(LOAD_OPS / 3);
      reportThroughput(
        `MemoryStore 8 allocators /16 (${f.allocations} allocations, ${f.releases} releases, ${f.collisions} ErrAllocated, ${f.full} ErrFull, ${store.alreadyExistsAnswers} AlreadyExists answers)`,
        f.ops,
        f.ms,
      );
      for (const a of allocators) a.destroy();
    },
    scaledTimeout(LOAD_OPS, 100_000),
  );

  it(
    `KubernetesStore ×8 on one API-server double, /24, ${K8S_LOAD_OPS} mixed operations in batches of 32`,
    async () => {
      const d = await ApiServerDouble.start({ requireParentRef: true });
      const stores: KubernetesStore[] = [];
      const allocators: IPAllocator[] = [];
      try {
        for (let i = 0; i < 8; i++) {
          const s = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 2, maxMs: 20 } });
          stores.push(s);
          allocators.push(new Allocator('10.65.0.0/24', { store: s, random: seededRandom(SEED + 100 + i) }));
        }
        await Promise.all(stores.map((s) => s.waitForSync()));
        const { f, held } = await drive(allocators, K8S_LOAD_OPS, 32, SEED + 1, 1 << 30, () => {});
        expect(f.duplicates).toEqual([]);
        const records = (): IPAddressRecord[] =>
          d
            .objects()
            .map((o) => ({ name: o.metadata.name, labels: o.metadata.labels ?? {}, parentRef: (o.spec?.parentRef as ParentRef) ?? null }));
        expect(checkStore(records(), held)).toEqual([]);
        await until(() => allocators.every((a) => a.used() === held.size), 'every informer caught up');
        reportThroughput(
          `KubernetesStore 8 API servers /24 (${f.allocations} allocations, ${f.releases} releases, ${f.full} ErrFull)`,
          f.ops,
          f.ms,
        );
      } finally {
        for (const a of allocators) a.destroy();
        for (const s of stores) s.close();
        await d.close();
      }
    },
    scaledTimeout(K8S_LOAD_OPS, 1_600),
  );
});
