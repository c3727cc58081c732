// Store faults at seeded random points (FaultStore, test/reliability/fault-store.ts): creates that
// fail, creates whose reply is lost, deletes that fail or lose their reply, cache events dropped,
// the informer going unsynced and re-listing; MemoryStore's lagging cache; for KubernetesStore
// also the API-server double's switches (5xx on create/delete, dropped and compacted watches, and
// creates and deletes whose answer the server lost — after the write or before —, which must
// leave no object behind).
//
// Several allocators (Allocator and ReferenceAllocator, overlapping prefixes) share one store and
// run seeded random operation batches concurrently. Every allocation call has its own owner
// (a ParentRef). At the end, with faults off and the caches re-listed:
//   • no address is held by two owners (checked on every resolve, too);
//   • every allocate/allocateNext that resolved and was not released is backed by exactly one
//     record, with its owner;
//   • every record whose owner is not held belongs to a call that rejected, or to a release whose
//     delete failed: reconcile() reports exactly those as leaks, deletes them, and afterwards the
//     store holds exactly the held addresses;
//   • each allocator's index equals the store: used() = labelled in-prefix records, forEach = the
//     store's labelled records of the family, index invariants hold.
import { afterAll, describe, expect, it } from 'vitest';
import { Allocator } from '../../adapters/allocator.ts';
import { ReferenceAllocator } from '../../adapters/reference-allocator.ts';
import { FaultyMemoryStore } from '../doubles/memory-store-faults.ts';
import { MemoryStore } from '../../adapters/memory-store.ts';
import { seededRandom } from '../../adapters/random.ts';
import { canonicalAddr } from '../../adapters/address.ts';
import { ErrAllocated, ErrFull, ErrNotInRange, ErrNotReady } from '../../adapters/errors.ts';
import { reconcile, ownerKey } from '../../adapters/reconcile.ts';
import {
  allocatorLabels,
  CONTROLLER_NAME,
  LABEL_IP_FAMILY,
  LABEL_MANAGED_BY,
  type IPAddressRecord,
  type StoreWatcher,
  type ParentRef,
} from '../../adapters/store.ts';
import { KubernetesStore, KubernetesApiError } from '../../adapters/kubernetes/index.ts';
import { ApiServerDouble } from '../k8s/apiserver-double.ts';
import { kubeConfigFor } from '../k8s/kubeconfig.ts';
import { until } from '../k8s/helpers.ts';
import { Driver, FAULT_OPS, baseSeed, scaledTimeout } from './driver.ts';
import { FaultStore, InjectedFault, type FaultRates } from './fault-store.ts';
import { addressValue, bigGeometry, inRange } from './addresses.ts';

const TIMEOUT = scaledTimeout(FAULT_OPS, 3_000, 120_000);

/** Totals over every run, printed at the end (figures for test/RELIABILITY.md). */
const totals = { runs: 0, ops: 0, faults: 0, leaks: 0, duplicates: 0, losses: 0, staleBits: 0 };
afterAll(() => {
  console.log(`[reliability] store faults totals: ${JSON.stringify(totals)}`);
});

interface Setup {
  /** The store the allocators use (a FaultStore around `inner`). */
  store: FaultStore;
  /** The authority's records (after the run). */
  records(): Promise<IPAddressRecord[]>;
  /** Turn the inner store's own faults on/off (MemoryStore lag, the double's switches). */
  disturb(d: Driver): void;
  /** Faults off, caches converged. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** Errors a call may reject with here; anything else fails the run. */
function expected(e: unknown): boolean {
  return (
    e instanceof InjectedFault ||
    e instanceof ErrFull ||
    e instanceof ErrAllocated ||
    e instanceof ErrNotReady ||
    e instanceof ErrNotInRange ||
    e instanceof KubernetesApiError
  );
}

interface RunResult {
  ops: number;
  faults: number;
  leaks: number;
}

/**
 * One run: `allocators` over `setup.store`, `n` operations in concurrent batches of 1–8.
 * Returns the figures; throws (via expect) on a duplicate, a loss or an unexplained record.
 */
async function run(setup: Setup, cidrs: string[], kinds: ('alloc' | 'ref')[], seed: number, n: number): Promise<RunResult> {
  const d = new Driver(seed);
  const store = setup.store;
  const allocators: (Allocator | ReferenceAllocator)[] = cidrs.map((cidr, i) =>
    kinds[i] === 'alloc'
      ? new Allocator(cidr, { store, random: seededRandom(seed + i) })
      : new ReferenceAllocator(cidr, { store, random: seededRandom(seed + i) }),
  );
  const geos = cidrs.map((c) => bigGeometry(c));
  /** ip → owner key, for allocations that resolved and were not released. */
  const held = new Map<string, string>();
  const heldOwners = new Map<string, ParentRef>();
  /** Owners whose call rejected, or whose address was released (their record may remain). */
  const gone = new Set<string>();
  let owners = 0;
  let ops = 0;
  const duplicates: string[] = [];

  const claim = (ip: string, owner: ParentRef) => {
    const key = ownerKey(owner);
    const other = held.get(ip);
    if (other !== undefined) duplicates.push(`${ip} held by ${other} and ${key}`);
    held.set(ip, key);
    heldOwners.set(key, owner);
  };

  const one = async (): Promise<void> => {
    ops++;
    const i = d.below(allocators.length);
    const a = allocators[i]!;
    const roll = d.below(100);
    if (roll < 45) {
      const owner: ParentRef = { group: '', resource: 'services', namespace: 'ns', name: `svc-${owners++}` };
      try {
        claim(await a.allocateNext(owner), owner);
      } catch (e) {
        if (!expected(e)) throw e;
        gone.add(ownerKey(owner));
      }
    } else if (roll < 60) {
      const g = geos[i]!;
      const size = g.last - g.first + 1n;
      const count = size > 1n << 20n ? 1 << 20 : Number(size);
      const ip = formatFirstPlus(g, d.below(count));
      const owner: ParentRef = { group: '', resource: 'services', namespace: 'ns', name: `svc-${owners++}` };
      try {
        await a.allocate(ip, owner);
        claim(canonicalAddr(ip), owner);
      } catch (e) {
        if (!expected(e)) throw e;
        gone.add(ownerKey(owner));
      }
    } else if (roll < 95) {
      if (held.size === 0) return;
      const ips = [...held.keys()];
      const ip = ips[d.below(ips.length)]!;
      const key = held.get(ip)!;
      held.delete(ip); // the caller forgets the owner first (a Service deleted)
      heldOwners.delete(key);
      gone.add(key);
      // release through an allocator whose prefix holds it (any would do: a delete by name)
      const via = allocators.find((_, j) => inRange(geos[j]!, ip)) ?? a;
      await via.release(ip);
    } else {
      setup.disturb(d);
      store.maybeUnsync();
      if (d.percent(30)) store.relist();
    }
  };

  for (let done = 0; done < n; ) {
    const k = Math.min(d.between(1, 8), n - done);
    await Promise.all(Array.from({ length: k }, one));
    done += k;
  }

  // ── settle: faults off, caches converged ──
  store.enabled = false;
  await setup.settle();
  store.relist();

  expect(duplicates, 'addresses held by two owners').toEqual([]);
  let records = await setup.records();
  const byName = new Map(records.map((r) => [r.name, r]));
  const losses: string[] = [];
  for (const [ip, key] of held) {
    const r = byName.get(ip);
    if (r === undefined || r.parentRef === null || ownerKey(r.parentRef) !== key)
      losses.push(`${ip} (${key}) → ${r === undefined ? 'no record' : JSON.stringify(r.parentRef)}`);
  }
  expect(losses, 'resolved allocations without their record').toEqual([]);
  const unexplained = records.filter((r) => !held.has(r.name) && !(r.parentRef !== null && gone.has(ownerKey(r.parentRef))));
  expect(
    unexplained.map((r) => r.name),
    'records of owners that never asked',
  ).toEqual([]);

  // reconcile: the leaks are exactly the records whose owner is not held
  const leaksExpected = records
    .filter((r) => !held.has(r.name))
    .map((r) => r.name)
    .sort();
  const rec = await reconcile(store, heldOwners.values(), { delete: true, graceMs: 0 });
  expect(rec.leaks.map((r) => r.name).sort()).toEqual(leaksExpected);
  expect(rec.errors).toEqual([]);
  await setup.settle();
  store.relist();
  records = await setup.records();
  expect(records.map((r) => r.name).sort()).toEqual([...held.keys()].sort());

  // every allocator's index equals the store
  for (let j = 0; j < allocators.length; j++) {
    const a = allocators[j]!;
    const g = geos[j]!;
    const fam = a.ipFamily;
    const labelled = records.filter((r) => r.labels[LABEL_IP_FAMILY] === fam && r.labels[LABEL_MANAGED_BY] === CONTROLLER_NAME);
    // upstream Used(): labelled records anywhere in the prefix (network and broadcast included)
    const inPrefix = labelled.filter((r) => inPrefixOf(g, r.name));
    expect(a.used(), `${a.cidr} used()`).toBe(inPrefix.length);
    const seen: string[] = [];
    a.forEach((ip) => seen.push(ip));
    expect(seen.sort(), `${a.cidr} forEach`).toEqual(labelled.map((r) => r.name).sort());
    if (a instanceof Allocator) {
      const v = a.validate();
      // taken = every cached in-range name, plus stale self-marks: a create whose add event the
      // cache never delivered (dropped, then the record deleted before the re-list) keeps its bit
      // — the open problem pinned by the KNOWN BUG row below. Safe (never a duplicate), but the
      // address is lost to this allocator until it is recreated and deleted again.
      const backed = records.filter((r) => inRange(g, r.name)).length;
      expect(v.indexed, `${a.cidr} taken bits`).toBeGreaterThanOrEqual(backed);
      expect(v.indexed - backed, `${a.cidr} stale bits ≤ dropped events`).toBeLessThanOrEqual(store.injected['drop-event']);
      totals.staleBits += v.indexed - backed;
    }
  }
  for (const a of allocators) a.destroy();
  totals.runs++;
  totals.ops += ops;
  totals.faults += store.totalInjected;
  totals.leaks += rec.leaks.length;
  return { ops, faults: store.totalInjected, leaks: rec.leaks.length };
}

function inPrefixOf(g: ReturnType<typeof bigGeometry>, ip: string): boolean {
  const { width, v } = addressValue(ip);
  return width === g.width && v >= g.network && v <= g.broadcast;
}

function formatFirstPlus(g: ReturnType<typeof bigGeometry>, k: number): string {
  const v = g.first + BigInt(k);
  if (g.width === 32) return [24, 16, 8, 0].map((s) => Number((v >> BigInt(s)) & 255n)).join('.');
  const groups: string[] = [];
  for (let s = 112; s >= 0; s -= 16) groups.push(Number((v >> BigInt(s)) & 0xffffn).toString(16));
  return groups.join(':'); // non-canonical (no ::) on purpose: the allocators canonicalise
}

// ── MemoryStore ────────────────────────────────────────────────────────────────────────────

const RATES: FaultRates = {
  'create-fails': 4,
  'create-lost-reply': 4,
  'delete-fails': 4,
  'delete-lost-reply': 4,
  'drop-event': 3,
  unsynced: 10,
};

function memorySetup(seed: number, rates: FaultRates): Setup {
  const inner = new FaultyMemoryStore();
  const store = new FaultStore(inner, new Driver(seed ^ 0xfa17), rates);
  return {
    store,
    records: async () => inner.records(),
    disturb(d) {
      // the informer falls behind for a while, then catches up
      if (d.percent(50)) inner.lagCache('manual');
      else inner.syncCache();
    },
    async settle() {
      inner.syncCache();
    },
    async close() {
      inner.close();
      store.close();
    },
  };
}

const SEED = baseSeed(0xfa_0175);

describe(`store faults on MemoryStore, ${FAULT_OPS} operations per run (IPALLOCATOR_FAULT_OPS)`, () => {
  const cases: [string, string[], ('alloc' | 'ref')[]][] = [
    ['IPv4 /24 ×3 (2 Allocator + 1 Reference)', ['10.0.0.0/24', '10.0.0.0/24', '10.0.0.0/24'], ['alloc', 'alloc', 'ref']],
    ['IPv4 /27 full and churning, overlapping /28', ['10.0.1.0/27', '10.0.1.0/27', '10.0.1.16/28'], ['alloc', 'ref', 'alloc']],
    ['IPv6 /120 ×2 and /64', ['fd00:2::/120', 'fd00:2::/120', 'fd00:2::/64'], ['alloc', 'alloc', 'alloc']],
  ];
  it.each(cases.map((c, i) => [...c, i] as const))(
    '%s',
    async (_name, cidrs, kinds, i) => {
      const setup = memorySetup(SEED + i, RATES);
      try {
        const r = await run(setup, cidrs, kinds, SEED + i, FAULT_OPS);
        expect(r.faults).toBeGreaterThan(0);
      } finally {
        await setup.close();
      }
    },
    TIMEOUT,
  );

  it('regression row: a create whose reply is lost leaves a record that reconcile reports and deletes', async () => {
    const setup = memorySetup(1, { 'create-lost-reply': 100 });
    const a = new Allocator('10.0.3.0/29', { store: setup.store, random: seededRandom(1) });
    const owner: ParentRef = { resource: 'services', namespace: 'ns', name: 'lost' };
    await expect(a.allocateNext(owner)).rejects.toBeInstanceOf(InjectedFault);
    setup.store.enabled = false;
    expect(a.used()).toBe(1); // the address is taken (the record exists): never handed out twice
    const young = await reconcile(setup.store, []);
    expect(young.leaks).toEqual([]); // inside upstream's 60 s grace
    expect(young.young.length).toBe(1);
    const rec = await reconcile(setup.store, [], { delete: true, graceMs: 0 });
    expect(rec.deleted.length).toBe(1);
    expect(a.used()).toBe(0);
    a.destroy();
    await setup.close();
  });

  it('regression row: a dropped delete event keeps the address taken until the re-list, then it is free again', async () => {
    const setup = memorySetup(2, {});
    const a = new Allocator('10.0.4.0/30', { store: setup.store, random: seededRandom(2) });
    const ip = await a.allocateNext();
    setup.store.rates = { 'drop-event': 100 };
    await a.release(ip);
    setup.store.rates = {};
    expect(a.used()).toBe(1); // stale view: still counted
    await a.allocateNext(); // the other address
    await expect(a.allocateNext()).rejects.toBeInstanceOf(ErrFull);
    setup.store.relist();
    expect(await a.allocateNext()).toBe(ip);
    a.destroy();
    await setup.close();
  });
});

// ── KubernetesStore through the API-server double ──────────────────────────────────────────

describe('FaultStore, a StoreCache as the interface says', () => {
  // Regression: it kept its watchers in a Set, so the same watcher subscribed twice was one
  // subscription that either function ended, and a watcher unsubscribed by an earlier one during
  // an event was given that event all the same
  it('keeps each subscribe() on its own, and gives an event to no subscription ended during it', async () => {
    const inner = new MemoryStore();
    const store = new FaultStore(inner, new Driver(1), {});
    const seen: string[] = [];
    const twice: StoreWatcher = { onAdd: (r) => seen.push(`twice ${r.name}`), onDelete: () => {} };
    const first = store.cache.subscribe(twice);
    store.cache.subscribe(twice);
    let endLater: () => void = () => {};
    store.cache.subscribe({ onAdd: () => endLater(), onDelete: () => {} });
    const later: StoreWatcher = { onAdd: (r) => seen.push(`later ${r.name}`), onDelete: () => {} };
    endLater = store.cache.subscribe(later);
    await inner.create({ name: '10.0.0.1', labels: allocatorLabels('IPv4'), parentRef: null });
    expect(seen).toEqual(['twice 10.0.0.1', 'twice 10.0.0.1']);
    first();
    await inner.create({ name: '10.0.0.2', labels: allocatorLabels('IPv4'), parentRef: null });
    expect(seen.slice(2)).toEqual(['twice 10.0.0.2']);
  });
});

describe('regressions', () => {
  // Found by this suite: Allocator marks its own successful create in the index when the cache
  // has not reported it yet. If that add event is lost and the record is then released, the
  // cache never reports a delete either (it never held the name), so the bit stayed and the
  // address was never handed out again. release() now clears the bit itself when the cache does
  // not hold the name. (Still open: a record of ours deleted by someone else during a watch gap.)
  it('a create whose add event was dropped, released by another allocator, is free again after the re-list (regression)', async () => {
    const setup = memorySetup(3, { 'drop-event': 100 });
    const a = new Allocator('10.0.7.0/30', { store: setup.store, random: seededRandom(3) });
    const b = new Allocator('10.0.7.0/30', { store: setup.store, random: seededRandom(4) });
    const ip = await a.allocateNext(); // the add event is dropped: `a` marks the address itself
    setup.store.rates = {};
    await b.release(ip); // a foreign delete: the cache never held it, so no delete event either
    setup.store.relist(); // nothing differs, but the cache says it re-listed (onResync)
    await a.allocateNext(); // the other address
    try {
      expect(await a.allocateNext()).toBe(ip);
      expect(a.validate().indexed).toBe(2);
    } finally {
      a.destroy();
      b.destroy();
      await setup.close();
    }
  });

  it('a create whose add event was dropped is free again after its release (regression)', async () => {
    const setup = memorySetup(3, { 'drop-event': 100 });
    const a = new Allocator('10.0.6.0/30', { store: setup.store, random: seededRandom(3) });
    const ip = await a.allocateNext(); // the add event is dropped: the Allocator marks it itself
    setup.store.rates = {};
    await a.release(ip); // the cache never held it: no delete event
    setup.store.relist(); // nothing differs between the view and the store
    await a.allocateNext(); // the other address
    try {
      expect(await a.allocateNext()).toBe(ip); // ReferenceAllocator returns it; Allocator: ErrFull
    } finally {
      a.destroy();
      await setup.close();
    }
  });
});

describe('store faults on KubernetesStore (API-server double: 5xx, dropped and compacted watches)', () => {
  /**
   * A setup of one KubernetesStore on the double `d`, the allocators' FaultStore around it with
   * `rates`, and `disturb` arming the double's switches.
   */
  async function kubernetesSetup(
    d: ApiServerDouble,
    rates: FaultRates,
    disturb: (dr: Driver) => void,
    requestTimeoutMs?: number,
  ): Promise<Setup> {
    const k = new KubernetesStore(kubeConfigFor(d.url), { backoff: { initialMs: 2, maxMs: 20 }, requestTimeoutMs });
    await k.waitForSync();
    const fault = new FaultStore(k, new Driver(SEED ^ 0x4b8), rates);
    return {
      store: fault,
      records: async () =>
        d.objects().map((o) => ({
          name: o.metadata.name,
          labels: o.metadata.labels ?? {},
          parentRef: (o.spec?.parentRef as ParentRef | undefined) ?? null,
        })),
      disturb,
      async settle() {
        d.failNext('create', 0);
        d.failNext('delete', 0);
        const want = () =>
          d
            .objects()
            .map((o) => o.metadata.name)
            .sort()
            .join(',');
        const have = () =>
          k.cache
            .list()
            .map((r) => r.name)
            .sort()
            .join(',');
        await until(() => have() === want(), 'the cache converges with the server');
      },
      async close() {
        fault.close();
        k.close();
        await d.close();
      },
    };
  }

  it(
    'creates whose answer the server lost after storing them (or before), with nothing else faulted: 0 leaks',
    async () => {
      const d = await ApiServerDouble.start({ requireParentRef: false });
      let switches = 0;
      // the double's ways to lose a create's answer, and a 500 that stores nothing, between watch drops
      const setup = await kubernetesSetup(
        d,
        { 'drop-event': 2 },
        (dr) => {
          switches++;
          const k = dr.below(5);
          if (k === 0) d.dropAfterCommit('create');
          else if (k === 1) d.timeOutAfterCommit('create');
          else if (k === 2) d.dropBeforeCommit('create');
          else if (k === 3) d.failNext('create', 1, 500);
          else d.dropWatches();
        },
        // a drop an undici client under Deno does not see ends at this deadline
        2_000,
      );
      try {
        const n = Math.max(200, Math.floor(FAULT_OPS / 6));
        const r = await run(setup, ['10.0.8.0/26', '10.0.8.0/26', '10.0.8.0/27'], ['alloc', 'ref', 'alloc'], SEED + 98, n);
        totals.faults += switches;
        expect(switches).toBeGreaterThan(0);
        expect(d.requestsOf('get').length, 'creates read back').toBeGreaterThan(0);
        expect(r.leaks, 'objects left behind by creates whose answer was lost').toBe(0);
      } finally {
        await setup.close();
      }
    },
    TIMEOUT,
  );

  it(
    'deletes whose answer was lost (after the server deleted the object, or before) or came as a 5xx naming no wait: 0 leaks',
    async () => {
      const d = await ApiServerDouble.start({ requireParentRef: false });
      let switches = 0;
      // the double's ways to lose a delete's answer, and 5xx answers that delete nothing or come
      // after the delete, between watch drops
      const setup = await kubernetesSetup(
        d,
        { 'drop-event': 2 },
        (dr) => {
          switches++;
          const k = dr.below(6);
          if (k === 0) d.dropAfterCommit('delete');
          else if (k === 1) d.timeOutAfterCommit('delete');
          else if (k === 2) d.dropBeforeCommit('delete');
          else if (k === 3) d.failNext('delete', 1, 502);
          else if (k === 4) d.failAfterCommit('delete', 503);
          else d.dropWatches();
        },
        // a drop an undici client under Deno does not see ends at this deadline
        2_000,
      );
      try {
        const n = Math.max(200, Math.floor(FAULT_OPS / 6));
        const r = await run(setup, ['10.0.9.0/26', '10.0.9.0/26', '10.0.9.0/27'], ['alloc', 'ref', 'alloc'], SEED + 97, n);
        totals.faults += switches;
        expect(switches).toBeGreaterThan(0);
        expect(d.requestsOf('get').length, 'deletes read back').toBeGreaterThan(0);
        expect(r.leaks, 'objects left behind by deletes whose answer was lost').toBe(0);
      } finally {
        await setup.close();
      }
    },
    TIMEOUT,
  );

  it(
    'one KubernetesStore, three allocators (overlapping prefixes), faults on both sides of the wire',
    async () => {
      const d = await ApiServerDouble.start({ requireParentRef: false });
      let switches = 0;
      const setup = await kubernetesSetup(
        d,
        { 'create-lost-reply': 5, 'create-fails': 3, 'delete-fails': 3, 'delete-lost-reply': 3, 'drop-event': 2 },
        (dr) => {
          switches++;
          const k = dr.below(5);
          if (k === 0) d.failNext('create', 1, 500);
          else if (k === 1) d.failNext('delete', 1, 503);
          else if (k === 2) d.dropWatches();
          else if (k === 3) {
            d.compact();
            d.dropWatches();
          } else d.closeWatches();
        },
      );
      try {
        const n = Math.max(200, Math.floor(FAULT_OPS / 6));
        const r = await run(setup, ['10.0.5.0/26', '10.0.5.0/26', '10.0.5.0/27'], ['alloc', 'ref', 'alloc'], SEED + 99, n);
        totals.faults += switches;
        expect(r.faults + switches).toBeGreaterThan(0);
      } finally {
        await setup.close();
      }
    },
    TIMEOUT,
  );
});
