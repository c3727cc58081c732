// The cost of the MetaAllocator's range-selection policies (README "Several ranges and both families"): one
// allocateNext+release through a MetaAllocator over four IPv4 /24 ServiceCIDRs, per policy, next to
// a single Allocator on one /24 at the same fill (the cost without any selection).
//
//   spread  every range 50 % full: each policy finds room in the first range it tries
//   skewed  three ranges full, one 50 % full: 'ordered' tries the full ones first (each answers
//           ErrFull from its counter), 'upstream' and 'weighted' on average fewer
//
// Fills are seeded and loaded through the store (untimed); the fill is held by releasing what
// allocateNext returned. Rows land in the boundary table as "policy · …".
//
// Many ranges: a MetaAllocator over 1,000 and over 10,000 IPv4 /24 ServiceCIDRs (as a large
// cluster, or a study of the policies, holds), one ServiceCIDR added and deleted again — what each
// change of the ServiceCIDRs costs the range bookkeeping, where a pass over every range at each
// change once made adding n of them O(n³) — and allocateNext+release among them, which does no
// work per range (a store event reaches only the ranges containing its address) but grows all the
// same: each call draws another range, whose state thousands of ranges push out of the caches.
import type { BoundaryResult } from './boundary.ts';
import type { Budget } from './measure.ts';
import { measureAsync } from './measure.ts';
import { Seeded } from './seeded.ts';

const RANGES = ['10.0.0.0/24', '10.0.1.0/24', '10.0.2.0/24', '10.0.3.0/24'];

export async function runPolicies(budget: Budget, progress: (s: string) => void): Promise<BoundaryResult[]> {
  const { Allocator, MemoryStore, MetaAllocator, InMemoryServiceCIDRs, RANGE_POLICIES, allocatorLabels, seededRandom } = await import(
    '../adapters/index.ts'
  );
  const labels = allocatorLabels('IPv4');
  const out: BoundaryResult[] = [];

  /** Loads `fills[i]` of the 254 addresses of range i (a seeded choice) into a fresh store. */
  function filledStore(fills: number[]): InstanceType<typeof MemoryStore> {
    const store = new MemoryStore();
    const rng = new Seeded(0x9011c1e5);
    fills.forEach((count, i) => {
      const hosts = Array.from({ length: 254 }, (_, k) => k + 1);
      for (let k = hosts.length - 1; k > 0; k--) {
        const j = rng.intn(k + 1);
        [hosts[k], hosts[j]] = [hosts[j]!, hosts[k]!];
      }
      for (const h of hosts.slice(0, count)) store.createSync({ name: `10.0.${i}.${h}`, labels, parentRef: null });
    });
    return store;
  }

  const scenarios = [
    { name: 'spread: 4 × /24, each 50 %', fills: [127, 127, 127, 127] },
    { name: 'skewed: 3 × /24 full, 1 × /24 50 %', fills: [254, 254, 254, 127] },
  ];
  for (const sc of scenarios) {
    for (const policy of RANGE_POLICIES) {
      const op = `policy ${policy} · MetaAllocator allocateNext+release · ${sc.name}`;
      progress(`boundary · ${op}`);
      const store = filledStore(sc.fills);
      const cidrs = new InMemoryServiceCIDRs();
      RANGES.forEach((cidr, i) => cidrs.addServiceCIDR(`range-${i}`, [cidr]));
      const meta = new MetaAllocator('IPv4', cidrs, { store, policy, random: seededRandom(7) });
      const result = await measureAsync(async (n) => {
        for (let i = 0; i < n; i++) await meta.release(await meta.allocateNext());
      }, budget);
      meta.destroy();
      out.push({ op, family: 'IPv4', result });
    }
  }
  for (const many of MANY) out.push(...(await manyRanges(budget, progress, many)));
  const op = 'policy (none) · Allocator allocateNext+release · 1 × /24 50 %';
  progress(`boundary · ${op}`);
  const store = filledStore([127]);
  const one = new Allocator('10.0.0.0/24', { store, random: seededRandom(7) });
  const result = await measureAsync(async (n) => {
    for (let i = 0; i < n; i++) await one.release(await one.allocateNext());
  }, budget);
  one.destroy();
  out.push({ op, family: 'IPv4', result, note: 'the same work without range selection' });
  return out;
}

const MANY = [1000, 10000];

/** The rows of a MetaAllocator over `many` /24 ServiceCIDRs (10.x.y.0/24), built untimed. */
async function manyRanges(budget: Budget, progress: (s: string) => void, many: number): Promise<BoundaryResult[]> {
  const { MemoryStore, MetaAllocator, InMemoryServiceCIDRs, seededRandom } = await import('../adapters/index.ts');
  const cidrs = new InMemoryServiceCIDRs();
  for (let i = 0; i < many; i++) cidrs.addServiceCIDR(`range-${i}`, [`10.${i >> 8}.${i & 255}.0/24`]);
  const meta = new MetaAllocator('IPv4', cidrs, { store: new MemoryStore(), random: seededRandom(7) });
  const out: BoundaryResult[] = [];
  const scenario = `${many.toLocaleString('en-US')} × /24, empty`;
  let op = `policy upstream · MetaAllocator + 1 ServiceCIDR (add, delete) · ${scenario}`;
  progress(`boundary · ${op}`);
  let result = await measureAsync(async (n) => {
    for (let i = 0; i < n; i++) {
      cidrs.addServiceCIDR('one-more', ['10.255.0.0/24']);
      cidrs.deleteServiceCIDR('one-more');
    }
  }, budget);
  out.push({ op, family: 'IPv4', result, note: 'the bookkeeping of a change of the ServiceCIDRs' });
  op = `policy upstream · MetaAllocator allocateNext+release · ${scenario}`;
  progress(`boundary · ${op}`);
  result = await measureAsync(async (n) => {
    for (let i = 0; i < n; i++) await meta.release(await meta.allocateNext());
  }, budget);
  out.push({ op, family: 'IPv4', result });
  meta.destroy();
  return out;
}
