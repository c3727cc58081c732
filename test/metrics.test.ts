// Metrics: upstream's TestIPAllocatorClusterIPMetrics and TestIPAllocatorClusterIPAllocatedMetrics
// (pkg/registry/core/service/ipallocator/ipallocator_test.go; bitmap_test.go has the same script as
// TestClusterIPMetrics / TestClusterIPAllocatedMetrics) and bitmap_test.go's TestMetricsDisabled,
// in the seeded-gauge variant (the gauges show the current used/available as soon as metrics are
// enabled — the open upstream fix, kubernetes PRs #140615/#141128; master shows no series until the
// first allocate/release); plus the exact increments of ipallocator.go (docs/semantics.md,
// "Metrics"), the registration rules, how prom-client is found, and the gauges leaving the
// registry with their range (destroyed, removed from a MetaAllocator, moved to another registry).
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { Counter, Gauge, Histogram, Registry, register as defaultRegistry } from 'prom-client';
import * as promClient15 from 'prom-client';
import * as promClient14 from 'prom-client-14';
import { Allocator } from '../adapters/allocator.ts';
import { MemoryStore } from '../adapters/memory-store.ts';
import { ReferenceAllocator } from '../adapters/reference-allocator.ts';
import { Range } from '../adapters/range.ts';
import { MetaAllocator } from '../adapters/meta-allocator.ts';
import { InMemoryServiceCIDRs } from '../adapters/service-cidrs.ts';
import type { AllocatorOptions } from '../adapters/types.ts';
import { FaultyMemoryStore } from './doubles/memory-store-faults.ts';
import { seededRandom } from '../adapters/random.ts';
import { ErrAllocated, ErrFull, InvalidAddressError, InvalidArgumentError } from '../adapters/errors.ts';
import { quoteInput } from '../adapters/quote.ts';
import {
  DEF_BUCKETS,
  METRIC_ALLOCATED_IPS,
  METRIC_ALLOCATIONS,
  METRIC_AVAILABLE_IPS,
  METRIC_DURATION,
  METRIC_ERRORS,
  NULL_RECORDER,
  type PromClient,
  recorderFor,
  registerMetrics,
} from '../adapters/metrics.ts';
import type { IPAllocator, MetricsRegistry } from '../adapters/types.ts';
import { settle } from './helpers.ts';

type Factory = (cidr: string, options?: AllocatorOptions) => IPAllocator;
const IMPLS: [string, Factory][] = [
  ['ReferenceAllocator', (cidr, o) => new ReferenceAllocator(cidr, o)],
  ['Allocator', (cidr, o) => Allocator.create(cidr, o)],
];

async function value(reg: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const m = reg.getSingleMetric(name);
  if (m === undefined) return 0;
  const data = await m.get();
  let sum = 0;
  for (const v of data.values) {
    const l = v.labels as Record<string, string | number>;
    if (Object.entries(labels).every(([k, x]) => l[k] === x)) sum += v.value;
  }
  return sum;
}

/** The count of allocation_duration_seconds{cidr} in `reg`: the observations a read sees. */
async function histogramCount(reg: Registry, cidr: string): Promise<number> {
  const m = reg.getSingleMetric(METRIC_DURATION);
  const values = m === undefined ? [] : (await m.get()).values;
  const count = values.find((v) => (v as { metricName?: string }).metricName === `${METRIC_DURATION}_count` && v.labels.cidr === cidr);
  return count?.value ?? 0;
}

/** The cidr labels of the series of metric `name` in `reg`, sorted. */
async function cidrsOf(reg: Registry, name: string): Promise<string[]> {
  const m = reg.getSingleMetric(name);
  if (m === undefined) return [];
  return (await m.get()).values.map((v) => String((v.labels as Record<string, unknown>).cidr)).sort();
}

/** The cidrs of both gauges, which must agree. */
async function gaugeCidrs(reg: Registry): Promise<string[]> {
  const used = await cidrsOf(reg, METRIC_ALLOCATED_IPS);
  expect(await cidrsOf(reg, METRIC_AVAILABLE_IPS)).toEqual(used);
  return used;
}

/** upstream expectMetrics: free, used, allocated (static+dynamic), errors (static+dynamic). */
async function metricsOf(reg: Registry, cidr: string) {
  return {
    free: await value(reg, METRIC_AVAILABLE_IPS, { cidr }),
    used: await value(reg, METRIC_ALLOCATED_IPS, { cidr }),
    allocated: await value(reg, METRIC_ALLOCATIONS, { cidr }),
    errors: await value(reg, METRIC_ERRORS, { cidr }),
  };
}

describe.each(IMPLS)('%s metrics', (_name, impl) => {
  const make = (cidr: string, reg?: Registry, seed = 7): IPAllocator => {
    const a = impl(cidr, { store: new FaultyMemoryStore(), random: seededRandom(seed) });
    if (reg !== undefined) a.enableMetrics(reg);
    return a;
  };

  // ipallocator_test.go TestIPAllocatorClusterIPMetrics / bitmap_test.go TestClusterIPMetrics (seeded variant)
  it('TestIPAllocatorClusterIPMetrics: the upstream script', async () => {
    const reg = new Registry();
    const a = make('10.0.0.0/24', reg);
    const b = make('2001:db8::/112', reg);
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 254, used: 0, allocated: 0, errors: 0 });
    expect(await metricsOf(reg, '2001:db8::/112')).toEqual({ free: 65535, used: 0, allocated: 0, errors: 0 });

    const ips = [await a.allocateNext(), await a.allocateNext()];
    expect(ips[0]).not.toBe(ips[1]);
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 252, used: 2, allocated: 2, errors: 0 });

    for (const ip of ips) expect(await settle(a.allocate(ip))).toBeInstanceOf(ErrAllocated);
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 252, used: 2, allocated: 2, errors: 2 });

    for (const ip of ips) await a.release(ip);
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 254, used: 0, allocated: 2, errors: 2 });

    for (let i = 0; i < 264; i++) {
      await settle(a.allocateNext());
      await settle(b.allocateNext());
    }
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 0, used: 254, allocated: 256, errors: 12 });
    expect(await metricsOf(reg, '2001:db8::/112')).toEqual({ free: 65271, used: 264, allocated: 264, errors: 0 });
  });

  // ipallocator_test.go TestIPAllocatorClusterIPAllocatedMetrics / bitmap_test.go TestClusterIPAllocatedMetrics (seeded variant)
  it('TestIPAllocatorClusterIPAllocatedMetrics: allocation_total{dynamic} and allocation_errors_total{static}', async () => {
    const reg = new Registry();
    const a = make('10.0.0.0/25', reg);
    expect(await metricsOf(reg, '10.0.0.0/25')).toEqual({ free: 126, used: 0, allocated: 0, errors: 0 });
    const ips = [await a.allocateNext(), await a.allocateNext()];
    expect(ips[0]).not.toBe(ips[1]);
    expect(await value(reg, METRIC_ALLOCATIONS, { cidr: '10.0.0.0/25', scope: 'dynamic' })).toBe(2);
    for (const ip of ips) expect(await settle(a.allocate(ip))).toBeInstanceOf(ErrAllocated);
    expect(await value(reg, METRIC_ERRORS, { cidr: '10.0.0.0/25', scope: 'static' })).toBe(2);
    expect(await value(reg, METRIC_ERRORS, { cidr: '10.0.0.0/25', scope: 'dynamic' })).toBe(0);
  });

  // bitmap_test.go TestMetricsDisabled (seeded variant)
  it('TestMetricsDisabled: an allocator without metrics leaves them alone', async () => {
    const reg = new Registry();
    const a = make('10.0.0.0/24', reg);
    const b = make('10.0.0.0/24');
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 254, used: 0, allocated: 0, errors: 0 });
    for (let i = 0; i < 100; i++) await a.allocateNext();
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 154, used: 100, allocated: 100, errors: 0 });
    for (let i = 0; i < 200; i++) await b.allocateNext();
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 154, used: 100, allocated: 100, errors: 0 });
  });

  it('allocateNext: an aborting store error counts twice; each collision once; the /32 early ErrFull not at all', async () => {
    const reg = new Registry();
    const store = new FaultyMemoryStore();
    const a = impl('10.0.0.0/24', { store, random: seededRandom(3), metrics: reg });
    store.failCreates(new Error('server error'), 1);
    await settle(a.allocateNext());
    expect(await value(reg, METRIC_ERRORS, { cidr: '10.0.0.0/24', scope: 'dynamic' })).toBe(2);
    store.collideCreates(2);
    await a.allocateNext();
    expect(await value(reg, METRIC_ERRORS, { cidr: '10.0.0.0/24', scope: 'dynamic' })).toBe(4);
    expect(await value(reg, METRIC_ALLOCATIONS, { cidr: '10.0.0.0/24', scope: 'dynamic' })).toBe(1);

    const tiny = impl('10.0.0.0/32', { random: seededRandom(3), metrics: reg });
    expect(await settle(tiny.allocateNext())).toBeInstanceOf(ErrFull);
    expect(await metricsOf(reg, '10.0.0.0/32')).toEqual({ free: 0, used: 0, allocated: 0, errors: 0 });
  });

  it('allocate: not-in-range counts a static error, except in dry run; the histogram sees successes only', async () => {
    const reg = new Registry();
    const a = make('10.0.0.0/24', reg);
    await settle(a.allocate('10.0.1.1'));
    await settle(a.dryRun().allocate('10.0.1.1'));
    await a.dryRun().allocateNext();
    expect(await value(reg, METRIC_ERRORS, { cidr: '10.0.0.0/24', scope: 'static' })).toBe(1);
    await a.allocate('10.0.0.1');
    await a.allocateNext();
    await settle(a.allocate('10.0.0.1'));
    const h = await reg.getSingleMetric(METRIC_DURATION)!.get();
    const count = h.values.find((v) => (v as { metricName?: string }).metricName === `${METRIC_DURATION}_count`);
    expect(count?.value).toBe(2);
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 252, used: 2, allocated: 2, errors: 2 });
  });

  it("another replica's writes show in the gauges at the next allocation or release, not at a call that fails", async () => {
    const reg = new Registry();
    const store = new FaultyMemoryStore();
    const a = impl('10.0.0.0/29', { store, random: seededRandom(1), metrics: reg });
    const b = impl('10.0.0.0/29', { store, random: seededRandom(2) });
    for (let i = 0; i < 6; i++) await b.allocateNext();
    expect(a.used()).toBe(6);
    expect(await settle(a.allocateNext())).toBeInstanceOf(ErrFull);
    expect(await settle(a.allocate('10.0.0.1'))).toBeInstanceOf(ErrAllocated);
    await a.release('10.0.0.7'); // the broadcast address: never allocated, its delete fails
    expect(await metricsOf(reg, '10.0.0.0/29')).toEqual({ free: 6, used: 0, allocated: 0, errors: 2 });
    await a.release('10.0.0.1');
    expect(await metricsOf(reg, '10.0.0.0/29')).toEqual({ free: 1, used: 5, allocated: 0, errors: 2 });
  });

  it('release sets the gauges and never counts; failed releases change nothing', async () => {
    const reg = new Registry();
    const a = make('10.0.0.0/24', reg);
    await a.allocate('10.0.0.9');
    await a.release('10.0.0.9');
    await a.release('10.0.0.9');
    await expect(a.release('junk')).rejects.toBeInstanceOf(InvalidAddressError); // rejected before any store call
    expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 254, used: 0, allocated: 1, errors: 0 });
  });

  it('a create the store answers after destroy() ends as the store answered: the call resolves, its record stays', async () => {
    // Regression: the gauges read used(), which threw ErrDestroyed, so the call rejected while
    // its record stayed in the store (an address lost; a MetaAllocator moved on to another range).
    for (const call of ['allocateNext', 'allocate'] as const) {
      const store = new FaultyMemoryStore({ syncOps: false });
      const a = impl('10.0.0.0/29', { store, metrics: new Registry() });
      const p = call === 'allocateNext' ? a.allocateNext() : a.allocate('10.0.0.3').then(() => '10.0.0.3');
      a.destroy();
      const ip = await p;
      expect([call, store.records().map((r) => r.name)]).toEqual([call, [ip]]);
    }
  });

  it('a release the store answers after destroy() resolves', async () => {
    const store = new FaultyMemoryStore({ syncOps: false });
    const a = impl('10.0.0.0/29', { store, metrics: new Registry() });
    await a.allocate('10.0.0.3');
    const p = a.release('10.0.0.3');
    a.destroy();
    await p;
    expect(store.records()).toEqual([]);
  });

  // Regression: a destroyed allocator's gauges kept their last values in the registry, so a
  // scrape still showed a range nothing allocated from any more.
  it('destroy() takes its gauges out of the registry, unless another allocator reports them there; the counters stay', async () => {
    const reg = new Registry();
    const a = make('10.0.0.0/29', reg);
    const b = make('10.0.0.0/29', reg); // the same range (another API server's allocator, say)
    const c = make('10.1.0.0/29', reg);
    await a.allocateNext();
    expect(await gaugeCidrs(reg)).toEqual(['10.0.0.0/29', '10.1.0.0/29']);
    a.destroy();
    expect(await gaugeCidrs(reg)).toEqual(['10.0.0.0/29', '10.1.0.0/29']); // b reports it still
    b.destroy();
    expect(await gaugeCidrs(reg)).toEqual(['10.1.0.0/29']);
    a.destroy(); // idempotent: counted once
    expect(await gaugeCidrs(reg)).toEqual(['10.1.0.0/29']);
    expect(await value(reg, METRIC_ALLOCATIONS, { cidr: '10.0.0.0/29' })).toBe(1); // cumulative: kept
    c.destroy();
    expect(await gaugeCidrs(reg)).toEqual([]);
  });

  it('a call the store answers after destroy() does not bring the gauges back', async () => {
    const reg = new Registry();
    const a = impl('10.0.0.0/29', { store: new FaultyMemoryStore({ syncOps: false }), metrics: reg });
    const p = a.allocateNext();
    a.destroy();
    await p;
    expect(await gaugeCidrs(reg)).toEqual([]);
  });

  it('enableMetrics with another registry takes the gauges out of the first one', async () => {
    const [one, two] = [new Registry(), new Registry()];
    const a = make('10.0.0.0/29', one);
    a.enableMetrics(one); // the same registry again: still there
    expect(await gaugeCidrs(one)).toEqual(['10.0.0.0/29']);
    a.enableMetrics(two);
    expect([await gaugeCidrs(one), await gaugeCidrs(two)]).toEqual([[], ['10.0.0.0/29']]);
    a.destroy();
    expect(await gaugeCidrs(two)).toEqual([]);
  });

  // Regression: the count of allocators reporting a CIDR was kept per recorder, and a recorder is
  // made anew when one of the five metrics was removed from the registry, over the same gauges.
  it('a metric removed from the registry meanwhile: the gauges stay while any allocator of the CIDR reports them', async () => {
    const reg = new Registry();
    const a = make('10.0.0.0/29', reg);
    reg.removeSingleMetric(METRIC_DURATION); // an app that drops the histogram it does not want
    const b = make('10.0.0.0/29', reg); // same CIDR (a second API server), a new recorder
    a.destroy();
    expect(await gaugeCidrs(reg)).toEqual(['10.0.0.0/29']); // b reports it still
    reg.removeSingleMetric(METRIC_DURATION);
    b.enableMetrics(reg); // the same registry, through a new recorder again
    expect(await gaugeCidrs(reg)).toEqual(['10.0.0.0/29']);
    b.destroy();
    expect(await gaugeCidrs(reg)).toEqual([]);
  });

  it('available_ips of a /64 is Number(free) (2^64 − 1 rounds to 2^64)', async () => {
    const reg = new Registry();
    make('2001:db8::/64', reg);
    expect(await value(reg, METRIC_AVAILABLE_IPS, { cidr: '2001:db8::/64' })).toBe(2 ** 64);
  });
});

describe('Range metrics', () => {
  it('destroy() and enableMetrics with another registry take its gauges out of the registry', async () => {
    const [one, two] = [new Registry(), new Registry()];
    const r = new Range('10.0.0.0/29', { metrics: one });
    const other = new Range('10.0.0.0/29', { metrics: one });
    r.allocateNext();
    other.destroy();
    expect(await gaugeCidrs(one)).toEqual(['10.0.0.0/29']); // r reports it still
    r.enableMetrics(two);
    expect([await gaugeCidrs(one), await gaugeCidrs(two)]).toEqual([[], ['10.0.0.0/29']]);
    r.destroy();
    expect(await gaugeCidrs(two)).toEqual([]);
    expect(await value(two, METRIC_ALLOCATIONS, { cidr: '10.0.0.0/29' })).toBe(0);
    expect(await value(one, METRIC_ALLOCATIONS, { cidr: '10.0.0.0/29' })).toBe(1); // cumulative: kept
  });

  it('a warm start (loadMany, restore, fromSnapshot) sets the gauges and counts no allocation', async () => {
    const source = new Range('10.0.0.0/24', { random: seededRandom(1) });
    const ips = source.allocateMany(100);
    const snap = source.snapshot();
    source.destroy();
    const loads: ((reg: Registry) => Range)[] = [
      (reg) => {
        const r = new Range('10.0.0.0/24', { metrics: reg });
        r.loadMany(ips);
        return r;
      },
      (reg) => {
        const r = new Range('10.0.0.0/24', { metrics: reg }); // the bitmap copied in
        r.restore(snap.range, snap.data);
        return r;
      },
      (reg) => {
        const r = new Range('10.0.0.0/24', { metrics: reg, indexKind: 'sparse' }); // a new index swapped in
        r.restore(snap.range, snap.data);
        return r;
      },
      (reg) => Range.fromSnapshot(snap, { metrics: reg }),
    ];
    for (const load of loads) {
      const reg = new Registry();
      const r = load(reg);
      expect(r.used()).toBe(100);
      expect(await metricsOf(reg, '10.0.0.0/24')).toEqual({ free: 154, used: 100, allocated: 0, errors: 0 });
      r.destroy();
    }
  });

  // Found by an outside tester: allocateMany counted its ErrFull when the count said fewer were
  // free, but not when the strategy could take no more ('legacy-bitmap' past its 65,535 IPv6
  // addresses), where allocateNext counts the same ErrFull.
  it("allocateMany's ErrFull counts one dynamic error, also when the strategy ran out", async () => {
    const reg = new Registry();
    const r = new Range('2001:db8::/64', { metrics: reg, strategy: 'legacy-bitmap', random: seededRandom(2) });
    r.allocateMany(65_525);
    expect(() => r.allocateMany(20)).toThrow(ErrFull);
    expect(r.used()).toBe(65_525);
    expect(await metricsOf(reg, '2001:db8::/64')).toMatchObject({ used: 65_525, allocated: 65_525, errors: 1 });
    r.allocateMany(10);
    expect(() => r.allocateNext()).toThrow(ErrFull);
    expect(await value(reg, METRIC_ERRORS, { scope: 'dynamic' })).toBe(2);
    r.destroy();
  });
});

describe('MetaAllocator metrics', () => {
  // Regression: the range of a deleted ServiceCIDR kept its last used/available values in the
  // registry, as if it could still allocate.
  it('a range removed takes its gauges out of the registry; destroy() takes every range’s', async () => {
    const reg = new Registry();
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('one', ['10.0.0.0/29']);
    cidrs.addServiceCIDR('two', ['10.1.0.0/29']);
    cidrs.addServiceCIDR('two-again', ['10.1.0.0/29']);
    const m = new MetaAllocator('IPv4', cidrs, { store: new FaultyMemoryStore(), policy: 'ordered', metrics: reg });
    await m.allocateNext();
    expect(await gaugeCidrs(reg)).toEqual(['10.0.0.0/29', '10.1.0.0/29']);
    cidrs.deleteServiceCIDR('one');
    cidrs.deleteServiceCIDR('two'); // 10.1.0.0/29 stays: two-again lists it
    expect(await gaugeCidrs(reg)).toEqual(['10.1.0.0/29']);
    expect(await value(reg, METRIC_ALLOCATIONS, { cidr: '10.0.0.0/29' })).toBe(1); // cumulative: kept
    m.destroy();
    expect(await gaugeCidrs(reg)).toEqual([]);
  });

  it('a range deleted while its create is in flight: the call ends with that address, and no second record', async () => {
    // Regression: the inner allocator's gauges threw ErrDestroyed after the create succeeded, the
    // MetaAllocator took that for "try the next range", and the first record was left behind.
    const store = new FaultyMemoryStore({ syncOps: false });
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('one', ['10.0.0.0/29']);
    cidrs.addServiceCIDR('two', ['10.1.0.0/29']);
    const m = new MetaAllocator('IPv4', cidrs, { store, policy: 'ordered', metrics: new Registry() });
    const p = m.allocateNext();
    cidrs.deleteServiceCIDR('one');
    const ip = await p;
    expect(ip.startsWith('10.0.0.')).toBe(true);
    expect(store.records().map((r) => r.name)).toEqual([ip]);
    m.destroy();
  });
});

describe('registration', () => {
  it('uses the upstream names, types, help texts, labels and DefBuckets', async () => {
    const reg = new Registry();
    registerMetrics(reg);
    const json = await reg.getMetricsAsJSON();
    const byName = new Map(json.map((m) => [m.name, m]));
    expect(byName.get(METRIC_ALLOCATED_IPS)).toMatchObject({
      type: 'gauge',
      help: 'Gauge measuring the number of allocated IPs for Services',
    });
    expect(byName.get(METRIC_AVAILABLE_IPS)).toMatchObject({
      type: 'gauge',
      help: 'Gauge measuring the number of available IPs for Services',
    });
    expect(byName.get(METRIC_ALLOCATIONS)).toMatchObject({ type: 'counter', help: 'Number of Cluster IPs allocations' });
    expect(byName.get(METRIC_ERRORS)).toMatchObject({ type: 'counter', help: 'Number of errors trying to allocate Cluster IPs' });
    expect(byName.get(METRIC_DURATION)).toMatchObject({
      type: 'histogram',
      help: 'Duration in seconds to allocate a Cluster IP by ServiceCIDR',
    });
    expect(DEF_BUCKETS).toEqual([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
    const m = registerMetrics(reg);
    m.duration.observe({ cidr: 'x' }, 0.001);
    const les = (await m.duration.get()).values
      .map((v) => (v.labels as Record<string, string | number>).le)
      .filter((le) => le !== undefined && le !== '+Inf');
    expect(les).toEqual([...DEF_BUCKETS]);
    m.allocations.inc({ cidr: 'x', scope: 'static' });
    expect(() => m.allocations.inc({ cidr: 'x', scope: 'static', other: 'y' } as never)).toThrow();
  });

  it('registerMetrics refuses what is no registry as enableMetrics does, and takes true as the default registry', () => {
    // Found by an outside tester: these reached prom-client's code as a registry (a TypeError from
    // inside: registry.getSingleMetric is not a function), and null meant the default registry
    for (const bad of [{}, 'registry', 5, new Map(), null]) {
      expect(() => registerMetrics(bad as never)).toThrow(
        new InvalidArgumentError(`registerMetrics's registry must be true or a prom-client Registry, got ${quoteInput(bad)}`),
      );
    }
    expect(registerMetrics(true)).toBe(registerMetrics());
  });

  it('registering twice in one registry reuses the metrics; two allocators share them', async () => {
    const reg = new Registry();
    expect(registerMetrics(reg)).toBe(registerMetrics(reg));
    expect(recorderFor(reg)).toBe(recorderFor(reg));
    const a = Allocator.create('10.0.0.0/24', { metrics: reg });
    const b = new ReferenceAllocator('10.0.1.0/24', { metrics: reg });
    a.enableMetrics(reg);
    await a.allocateNext();
    await b.allocateNext();
    expect(await value(reg, METRIC_ALLOCATIONS, {})).toBe(2);
    expect(reg.getMetricsAsArray()).toHaveLength(5);
  });

  it('reuses metrics of the same names registered earlier by someone else', () => {
    const reg = new Registry();
    // someone registered the five metrics in a fresh registry (e.g. another copy of this package)
    const first = registerMetrics(reg);
    const other = new Registry();
    for (const name of [METRIC_ALLOCATED_IPS, METRIC_AVAILABLE_IPS, METRIC_ALLOCATIONS, METRIC_ERRORS, METRIC_DURATION]) {
      other.registerMetric(reg.getSingleMetric(name)!);
    }
    expect(registerMetrics(other).allocations).toBe(first.allocations);
  });

  it("enableMetrics() without a registry uses the default registry of the app's own prom-client", async () => {
    // metrics.ts never imports prom-client itself: it loads it on first use, resolved from the
    // package; `defaultRegistry` here is the one this test file imported.
    const a = Allocator.create('10.9.0.0/24');
    a.enableMetrics();
    await a.allocateNext();
    expect(await value(defaultRegistry, METRIC_ALLOCATIONS, { cidr: '10.9.0.0/24' })).toBe(1);
    a.destroy();
  });

  it('enableMetrics(true) is the default registry too, as the metrics option true is, and its type says so', async () => {
    // every enableMetrics takes what recorderFor takes: a Registry, true, or nothing
    expectTypeOf<Parameters<IPAllocator['enableMetrics']>[0]>().toEqualTypeOf<MetricsRegistry | true | undefined>();
    expectTypeOf<Parameters<Range['enableMetrics']>[0]>().toEqualTypeOf<MetricsRegistry | true | undefined>();
    expectTypeOf<Parameters<MetaAllocator['enableMetrics']>[0]>().toEqualTypeOf<MetricsRegistry | true | undefined>();
    const cidrs = new InMemoryServiceCIDRs();
    cidrs.addServiceCIDR('meta', ['10.12.3.0/24']);
    const subjects = [
      Allocator.create('10.12.0.0/24'),
      new ReferenceAllocator('10.12.1.0/24'),
      new Range('10.12.2.0/24'),
      new MetaAllocator('IPv4', cidrs, { store: new MemoryStore() }),
    ];
    for (const [i, s] of subjects.entries()) {
      s.enableMetrics(true);
      await s.allocateNext();
      expect(await value(defaultRegistry, METRIC_ALLOCATIONS, { cidr: `10.12.${i}.0/24` })).toBe(1);
      s.destroy();
    }
    // false is not a registry: the option's false means none, enableMetrics has nothing to turn off
    const a = Allocator.create('10.12.4.0/24');
    expect(() => a.enableMetrics(false as never)).toThrow('registry must be true or a prom-client Registry, got false');
    a.destroy();
  });

  it('enableMetrics(registry) after enableMetrics(true): the gauges leave the default registry, the cumulative counters stay there', async () => {
    const cidr = '10.12.5.0/24';
    const a = Allocator.create(cidr);
    a.enableMetrics(true);
    await a.allocateNext();
    const reg = new Registry();
    a.enableMetrics(reg);
    await a.allocateNext();
    expect(await cidrsOf(defaultRegistry, METRIC_ALLOCATED_IPS)).not.toContain(cidr);
    expect(await cidrsOf(defaultRegistry, METRIC_AVAILABLE_IPS)).not.toContain(cidr);
    expect(await metricsOf(reg, cidr)).toMatchObject({ used: 2, allocated: 1 }); // counted here from the move
    expect(await value(defaultRegistry, METRIC_ALLOCATIONS, { cidr })).toBe(1); // what it counted there stays
    a.destroy();
  });

  it('the ipallocator/metrics entry serves the same metrics as the allocators record into', async () => {
    const entry = await import('../adapters/prometheus.ts');
    const reg = new Registry();
    const a = Allocator.create('10.10.0.0/24', { metrics: reg });
    expect(entry.registerMetrics(reg)).toBe(registerMetrics(reg));
    expect(entry.METRIC_ALLOCATED_IPS).toBe(METRIC_ALLOCATED_IPS);
    a.destroy();
  });

  it('a metrics option that is not a prom-client Registry is refused, quoting it', () => {
    for (const bad of ['yes', 42, {}, null]) {
      expect(() => Allocator.create('10.11.0.0/24', { metrics: bad as never })).toThrow(InvalidArgumentError);
    }
    expect(() => Allocator.create('10.11.0.0/24', { metrics: 'yes' as never })).toThrow(/got "yes"/);
  });

  it('the null recorder does nothing and does not read the clock', () => {
    expect(NULL_RECORDER.start()).toBe(0);
    NULL_RECORDER.allocation('x', 'static');
    NULL_RECORDER.observe('x', 0);
  });
});

describe('a registry already holding one of the names as another metric', () => {
  // Found by an outside drop-in test: a counter of the same name with other labels was "reused",
  // and every allocation then created its record and threw prom-client's label error, until the
  // range was drained with nothing handed out.
  const clashing = (): Registry => {
    const registry = new Registry();
    new Counter({ name: METRIC_ALLOCATIONS, help: 'an app of its own', labelNames: ['cidr'], registers: [registry] });
    return registry;
  };

  it.each([
    ['Allocator', (store: FaultyMemoryStore, metrics: Registry) => new Allocator('10.6.0.0/29', { store, metrics })],
    ['ReferenceAllocator', (store: FaultyMemoryStore, metrics: Registry) => new ReferenceAllocator('10.6.0.0/29', { store, metrics })],
  ] as const)('%s: the metrics option is InvalidArgumentError, nothing subscribed or registered', (_name, make) => {
    const store = new FaultyMemoryStore();
    const registry = clashing();
    expect(() => make(store, registry)).toThrow(InvalidArgumentError);
    expect(() => make(store, registry)).toThrow(
      `the registry already holds ${METRIC_ALLOCATIONS} as a counter with labels cidr, not upstream's counter with labels cidr, scope: unregister it or pass another registry`,
    );
    expect(store.watcherCount).toBe(0);
    expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual([METRIC_ALLOCATIONS]);
  });

  it('enableMetrics is InvalidArgumentError and the allocators, Range and MetaAllocator go on without metrics', async () => {
    const store = new FaultyMemoryStore();
    const registry = clashing();
    const a = new Allocator('10.6.0.0/29', { store, random: seededRandom(1) });
    const r = new ReferenceAllocator('10.6.0.0/29', { store, random: seededRandom(2) });
    const range = new Range('10.6.1.0/29');
    const meta = new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store });
    for (const target of [a, r, range, meta]) expect(() => target.enableMetrics(registry)).toThrow(InvalidArgumentError);
    expect(() => new Range('10.6.2.0/29', { metrics: registry })).toThrow(InvalidArgumentError);
    expect(() => new MetaAllocator('IPv4', new InMemoryServiceCIDRs(), { store, metrics: registry })).toThrow(InvalidArgumentError);
    // every allocation is handed out, none left behind in the store
    const got = new Set<string>();
    for (let i = 0; i < 3; i++) got.add(await a.allocateNext());
    for (let i = 0; i < 3; i++) got.add(await r.allocateNext());
    expect(got.size).toBe(6);
    expect(store.size).toBe(6);
    expect(range.allocateNext()).toMatch(/^10\.6\.1\./);
    expect(range.used()).toBe(1);
    for (const x of [a, r, range, meta]) x.destroy();
  });
});

describe('registries as apps and tests use them', () => {
  // Found by an outside test of the up-front check: prom-client 14's metrics (no `type` field)
  // were refused, a registry cleared between tests never exported the metrics again, and a
  // registry answering null for a missing metric threw a TypeError.
  it("prom-client 14's metrics, which carry no type field, are reused when their class and labels are upstream's", () => {
    class Counter {
      readonly labelNames = ['scope', 'cidr'];
      inc(): void {}
    }
    const real = new Registry();
    const v14 = new Counter();
    const registry = Object.assign(Object.create(real) as Registry, {
      getSingleMetric: (name: string) => (name === METRIC_ALLOCATIONS ? v14 : real.getSingleMetric(name)),
    });
    expect(registerMetrics(registry).allocations).toBe(v14);
  });

  it('a registry cleared between uses gets the metrics registered again, and the check runs again', () => {
    const registry = new Registry();
    const a = new Allocator('10.8.0.0/29', { metrics: registry });
    a.destroy();
    registry.clear();
    const b = new Allocator('10.8.0.0/29', { metrics: registry });
    expect(registry.getSingleMetric(METRIC_ALLOCATED_IPS)).toBeDefined();
    b.destroy();
    registry.clear();
    new Counter({ name: METRIC_ALLOCATIONS, help: 'another', labelNames: ['cidr'], registers: [registry] });
    expect(() => new Allocator('10.8.0.0/29', { metrics: registry })).toThrow(InvalidArgumentError);
  });

  it('a registry answering null for a metric it does not hold', () => {
    const real = new Registry();
    const registry = Object.assign(Object.create(real) as Registry, {
      getSingleMetric: (name: string) => real.getSingleMetric(name) ?? null,
    });
    expect(() => registerMetrics(registry)).not.toThrow();
    expect(real.getSingleMetric(METRIC_DURATION)).toBeDefined();
  });
});

describe('a registry whose counter calls back into what it counts', () => {
  // Found by a second-pass attack: the allocation counter ran between marking the address and
  // reading its text back (Range), or after the op that held it went back for reuse (Allocator
  // through promises); a counter that allocated from there got the same address.
  // The counters this package makes are written at the next read, not during the allocation (see
  // adapters/metrics.ts); a counter registered by the app before it is reused and counted at once,
  // so the app's code can still run there: each case registers its own.
  const NAME = 'kube_apiserver_clusterip_allocator_allocation_total';
  function appRegistry(): Registry {
    const registry = new Registry();
    new Counter({ name: NAME, help: "the app's own", labelNames: ['cidr', 'scope'], registers: [registry] });
    return registry;
  }
  function reenterOnce(registry: Registry, call: () => unknown): void {
    const counter = registry.getSingleMetric(NAME) as unknown as { inc(...args: unknown[]): void };
    const inc = counter.inc.bind(counter);
    let armed = true;
    counter.inc = (...args: unknown[]) => {
      if (armed) {
        armed = false;
        call();
      }
      inc(...args);
    };
  }

  it.each([undefined, 'sequential'] as const)('Range (strategy %s): each address is handed out once', (strategy) => {
    const registry = appRegistry();
    const r = new Range('10.0.0.0/28', { metrics: registry, random: seededRandom(1), ...(strategy ? { strategy } : {}) });
    let inner = '';
    reenterOnce(registry, () => {
      inner = r.allocateNext();
    });
    const outer = r.allocateNext();
    expect(inner).not.toBe('');
    expect(outer).not.toBe(inner);
    expect(r.used()).toBe(2);
    r.destroy();
  });

  it.each([true, false])('Allocator (syncOps %s): each address is handed out once', async (syncOps) => {
    const registry = appRegistry();
    const store = new MemoryStore({ syncOps });
    const a = new Allocator('10.0.0.0/28', { store, metrics: registry, random: seededRandom(1) });
    let inner: Promise<string> | undefined;
    reenterOnce(registry, () => {
      inner = a.allocateNext();
    });
    const outer = await a.allocateNext();
    expect(inner).toBeDefined();
    const second = await inner!;
    expect(outer).not.toBe(second);
    expect(
      store
        .records()
        .map((r) => r.name)
        .sort(),
    ).toEqual([outer, second].sort());
    a.destroy();
  });
});

// Regression: a registry whose registerMetric threw part-way kept the metrics registered before it
describe('enableMetrics with a registry that refuses a metric part-way', () => {
  it('throws its error and leaves it as it was; the same registry, mended, takes them all', async () => {
    const registry = new Registry();
    const register = registry.registerMetric.bind(registry);
    let calls = 0;
    registry.registerMetric = (metric) => {
      if (++calls === 3) throw new Error('registry refuses');
      register(metric);
    };
    const a = new Allocator('10.0.0.0/24', { store: new MemoryStore() });
    expect(() => a.enableMetrics(registry)).toThrow('registry refuses');
    expect(registry.getMetricsAsArray()).toEqual([]);
    await a.allocateNext(); // the allocator works on, reporting nowhere
    registry.registerMetric = register;
    a.enableMetrics(registry);
    expect(
      registry
        .getMetricsAsArray()
        .map((m) => m.name)
        .sort(),
    ).toEqual([
      'kube_apiserver_clusterip_allocator_allocated_ips',
      'kube_apiserver_clusterip_allocator_allocation_duration_seconds',
      'kube_apiserver_clusterip_allocator_allocation_errors_total',
      'kube_apiserver_clusterip_allocator_allocation_total',
      'kube_apiserver_clusterip_allocator_available_ips',
    ]);
    a.destroy();
  });
});

// The counters and gauges this package makes keep what the allocation path records until they
// are read (adapters/metrics.ts): every way of reading them sees all of it, and what drops or
// removes a series drops what was kept for it too.
describe('counters and gauges made here are written when they are read', () => {
  async function allocatedTwice(registry: Registry): Promise<Allocator> {
    const a = new Allocator('10.1.0.0/29', { store: new MemoryStore(), metrics: registry, random: seededRandom(3) });
    await a.release(await a.allocateNext());
    await a.allocateNext();
    return a;
  }

  it('registry.metrics(), getMetricsAsJSON() and metric.get() each see every count and the gauges as last set', async () => {
    const registry = new Registry();
    const a = await allocatedTwice(registry);
    const text = await registry.metrics();
    expect(text).toContain(`${METRIC_ALLOCATIONS}{cidr="10.1.0.0/29",scope="dynamic"} 2`);
    expect(text).toContain(`${METRIC_ALLOCATED_IPS}{cidr="10.1.0.0/29"} ${a.used()}`);
    await a.allocateNext();
    const json = await registry.getMetricsAsJSON();
    const allocated = json.find((m) => m.name === METRIC_ALLOCATED_IPS)!;
    expect(allocated.values.map((v) => v.value)).toEqual([a.used()]);
    expect(await metricsOf(registry, '10.1.0.0/29')).toEqual({ free: 6 - a.used(), used: a.used(), allocated: a.used() + 1, errors: 0 });
    a.destroy();
  });

  it('registry.resetMetrics() drops what was recorded before it, read or not', async () => {
    const registry = new Registry();
    const a = await allocatedTwice(registry);
    registry.resetMetrics();
    expect(await value(registry, METRIC_ALLOCATIONS, { cidr: '10.1.0.0/29' })).toBe(0);
    expect(await histogramCount(registry, '10.1.0.0/29')).toBe(0);
    expect(await gaugeCidrs(registry)).toEqual([]);
    await a.allocateNext();
    expect(await value(registry, METRIC_ALLOCATIONS, { cidr: '10.1.0.0/29' })).toBe(1);
    expect(await histogramCount(registry, '10.1.0.0/29')).toBe(1);
    expect(await value(registry, METRIC_ALLOCATED_IPS, { cidr: '10.1.0.0/29' })).toBe(a.used());
    a.destroy();
  });

  it('destroyed before any read: its gauge series are gone, its counts stay', async () => {
    const registry = new Registry();
    const a = await allocatedTwice(registry);
    a.destroy();
    expect(await gaugeCidrs(registry)).toEqual([]);
    expect(await value(registry, METRIC_ALLOCATIONS, { cidr: '10.1.0.0/29' })).toBe(2);
  });

  it('the histogram made here is written when it is read: an allocation makes no prom-client call', async () => {
    const registry = new Registry();
    const { duration } = registerMetrics(registry);
    const calls: string[] = [];
    for (const method of ['observe', 'labels', 'zero'] as const) {
      const original = duration[method].bind(duration) as (...args: unknown[]) => unknown;
      duration[method] = ((...args: unknown[]) => {
        calls.push(method);
        return original(...args);
      }) as never;
    }
    const a = await allocatedTwice(registry);
    expect(calls).toEqual([]);
    expect(await histogramCount(registry, '10.1.0.0/29')).toBe(2);
    a.destroy();
  });

  it('a histogram registered by the app before is observed at once, as it is called', async () => {
    const registry = new Registry();
    const theirs = new Histogram({ name: METRIC_DURATION, help: "the app's own", labelNames: ['cidr'], registers: [registry] });
    const calls: unknown[] = [];
    const observe = theirs.observe.bind(theirs);
    theirs.observe = ((labels: unknown, v: number) => {
      calls.push(labels);
      observe(labels as never, v);
    }) as typeof theirs.observe;
    const a = await allocatedTwice(registry);
    expect(calls).toEqual([{ cidr: '10.1.0.0/29' }, { cidr: '10.1.0.0/29' }]);
    expect(await histogramCount(registry, '10.1.0.0/29')).toBe(2);
    a.destroy();
  });

  it('a counter registered by the app before is counted at once, as it is called', async () => {
    const registry = new Registry();
    const theirs = new Counter({ name: METRIC_ALLOCATIONS, help: "the app's own", labelNames: ['cidr', 'scope'], registers: [registry] });
    const calls: unknown[] = [];
    const inc = theirs.inc.bind(theirs);
    theirs.inc = ((labels: unknown, n?: number) => {
      calls.push(labels);
      inc(labels as never, n);
    }) as typeof theirs.inc;
    const a = await allocatedTwice(registry);
    expect(calls).toEqual([
      { cidr: '10.1.0.0/29', scope: 'dynamic' },
      { cidr: '10.1.0.0/29', scope: 'dynamic' },
    ]);
    a.destroy();
  });
});

// registerMetrics hands the app these very metrics: what the app writes to them itself (remove a
// series, set a gauge) is what a read sees, as when every event was written at once — not undone
// by the values kept since the last read.
describe('counters and gauges made here, written to by the app itself', () => {
  const CIDR = '10.2.0.0/29';
  it('a series the app removes stays removed at the next read', async () => {
    const registry = new Registry();
    const a = new Allocator(CIDR, { store: new MemoryStore(), metrics: registry, random: seededRandom(5) });
    await a.allocateNext();
    const { allocated, available, allocations } = registerMetrics(registry);
    allocated.remove({ cidr: CIDR });
    available.remove(CIDR);
    allocations.remove({ cidr: CIDR, scope: 'dynamic' });
    expect(await gaugeCidrs(registry)).toEqual([]);
    expect(await value(registry, METRIC_ALLOCATIONS, { cidr: CIDR })).toBe(0);
    await a.allocateNext(); // the next event sets the gauges and counts again, as before
    expect(await value(registry, METRIC_ALLOCATED_IPS, { cidr: CIDR })).toBe(2);
    expect(await value(registry, METRIC_ALLOCATIONS, { cidr: CIDR })).toBe(1);
    a.destroy();
  });

  it('a histogram series the app removes or zeroes reads as it left it; what the app observes adds to what is kept', async () => {
    const registry = new Registry();
    const a = new Allocator(CIDR, { store: new MemoryStore(), metrics: registry, random: seededRandom(5) });
    await a.allocateNext();
    const { duration } = registerMetrics(registry);
    duration.remove(CIDR);
    expect(await histogramCount(registry, CIDR)).toBe(0);
    expect((await duration.get()).values).toEqual([]);
    await a.allocateNext();
    duration.observe({ cidr: CIDR }, 20);
    duration.labels(CIDR).observe(30);
    await a.allocateNext();
    const h = await duration.get();
    const bucket = (le: number | string) =>
      h.values.find((v) => v.metricName === `${METRIC_DURATION}_bucket` && (v.labels as { le?: unknown }).le === le)?.value;
    expect([bucket(10), bucket('+Inf'), await histogramCount(registry, CIDR)]).toEqual([2, 4, 4]);
    expect(h.values.find((v) => v.metricName === `${METRIC_DURATION}_sum`)!.value).toBeGreaterThanOrEqual(50);
    await a.allocateNext();
    duration.zero({ cidr: CIDR });
    expect(await histogramCount(registry, CIDR)).toBe(0);
    a.destroy();
  });

  it('a gauge the app sets, increments or decrements reads as it left it', async () => {
    const registry = new Registry();
    const a = new Allocator(CIDR, { store: new MemoryStore(), metrics: registry, random: seededRandom(5) });
    await a.allocateNext();
    const { allocated, available } = registerMetrics(registry);
    allocated.set({ cidr: CIDR }, 42);
    available.labels(CIDR).inc(10);
    expect(await value(registry, METRIC_ALLOCATED_IPS, { cidr: CIDR })).toBe(42);
    expect(await value(registry, METRIC_AVAILABLE_IPS, { cidr: CIDR })).toBe(Number(a.free()) + 10);
    a.destroy();
  });
});

describe('Range metrics when the WASM memory runs out', () => {
  // Found by an outside tester: under setMemoryLimit, a Range's allocate and allocateNext that
  // failed with OutOfMemoryError left allocation_errors_total unchanged, so a dashboard watching
  // it saw no failures while every allocation failed. Upstream's bitmap Range counts an error of
  // its allocator as an allocation error (bitmap.go: `if err != nil`). The memory cap is the
  // process's and never shrinks, so the case loads a core of its own.
  it('an allocate, allocateNext or allocateMany that runs out counts one allocation error, nothing else', async () => {
    vi.resetModules();
    const wasm = await import('../adapters/wasm.ts');
    const { Range: FreshRange } = await import('../adapters/range.ts');
    wasm.setMemoryLimit(320 * 1024);
    const reg = new Registry();
    const r = new FreshRange('fd00::/64', { metrics: reg, random: seededRandom(4) });
    const random = seededRandom(5);
    const group = () => (random.nextU32() & 0xffff).toString(16);
    const failure = (call: () => unknown): unknown => {
      try {
        call();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    let e: unknown;
    let taken = 0;
    while ((e = failure(() => r.allocate(`fd00::${group()}:${group()}:${group()}:${group()}`))) === undefined) taken++;
    expect((e as { code?: unknown }).code).toBe('ERR_OUT_OF_MEMORY');
    while ((e = failure(() => r.allocateNext())) === undefined) taken++;
    expect((e as { code?: unknown }).code).toBe('ERR_OUT_OF_MEMORY');
    expect((failure(() => r.allocateMany(10_000)) as { code?: unknown }).code).toBe('ERR_OUT_OF_MEMORY');
    expect(r.used()).toBe(taken);
    expect(await value(reg, METRIC_ERRORS, { scope: 'static' })).toBe(1);
    expect(await value(reg, METRIC_ERRORS, { scope: 'dynamic' })).toBe(2);
    expect(await metricsOf(reg, 'fd00::/64')).toMatchObject({ used: taken, allocated: taken });
    r.destroy();
  });
});

describe('Allocator metrics when the WASM memory runs out', () => {
  // As a Range's (above): an allocation the index could not make for want of memory failed, and a
  // dashboard watching allocation_errors_total must see it, on either store path. Nothing else
  // counts: no allocation, no histogram sample, the gauges as the store holds.
  for (const path of ['synchronous', 'promise'] as const) {
    it(`an allocate or allocateNext that runs out counts one allocation error of its scope (${path} store path)`, async () => {
      vi.resetModules();
      const wasm = await import('../adapters/wasm.ts');
      const { Allocator: FreshAllocator } = await import('../adapters/allocator.ts');
      const { MemoryStore: FreshStore } = await import('../adapters/memory-store.ts');
      wasm.setMemoryLimit(320 * 1024);
      const mem = new FreshStore();
      const store =
        path === 'synchronous'
          ? mem
          : {
              sync: null,
              cache: mem.cache,
              create: (r: Parameters<typeof mem.create>[0]) => mem.create(r),
              delete: (n: string) => mem.delete(n),
              get: (n: string) => mem.get(n),
              close: () => mem.close(),
            };
      const reg = new Registry();
      const a = new FreshAllocator('fd00::/64', { store, metrics: reg, random: seededRandom(4) });
      const random = seededRandom(5);
      const group = () => (random.nextU32() & 0xffff).toString(16);
      const failure = async (call: () => Promise<unknown>): Promise<unknown> => {
        try {
          await call();
        } catch (e) {
          return e;
        }
        return undefined;
      };
      let e: unknown;
      let taken = 0;
      while ((e = await failure(() => a.allocate(`fd00::${group()}:${group()}:${group()}:${group()}`))) === undefined) taken++;
      expect((e as { code?: unknown }).code).toBe('ERR_OUT_OF_MEMORY');
      while ((e = await failure(() => a.allocateNext())) === undefined) taken++;
      expect((e as { code?: unknown }).code).toBe('ERR_OUT_OF_MEMORY');
      expect(mem.size).toBe(taken);
      expect(await value(reg, METRIC_ERRORS, { scope: 'static' })).toBe(1);
      expect(await value(reg, METRIC_ERRORS, { scope: 'dynamic' })).toBe(1);
      expect(
        (await value(reg, METRIC_ALLOCATIONS, { scope: 'static' })) + (await value(reg, METRIC_ALLOCATIONS, { scope: 'dynamic' })),
      ).toBe(taken);
      a.destroy();
    });
  }
});

// What the two gauges read is each allocator's used() and Number(free()) as the last allocation or
// release that went through left them, whatever happened since: a change of what a subclass's own
// free() or size answers, the allocator destroyed while another one reports the range.
describe('the gauges read used() and free() as the last set left them', () => {
  const CIDR = '10.4.0.0/29'; // 6 usable addresses

  class ShortRange extends Range {
    held: bigint | undefined; // read by the constructor, which seeds the gauges, before it is set
    override free(): bigint {
      return super.free() - (this.held ?? 0n);
    }
  }
  class ShortAllocator extends Allocator {
    held: bigint | undefined; // read by the constructor, which seeds the gauges, before it is set
    override free(): bigint {
      return super.free() - (this.held ?? 0n);
    }
  }
  class SizedAllocator extends Allocator {
    forced: bigint | undefined;
    override get size(): bigint {
      return this.forced ?? super.size;
    }
  }

  it("a Range subclass's own free(): available_ips is what it answered at the last allocation", async () => {
    const registry = new Registry();
    const r = new ShortRange(CIDR, { metrics: registry, random: seededRandom(1) });
    r.held = 2n;
    r.allocateNext();
    r.held = 4n; // changed after the allocation: not read until the next one
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 1, free: 3 });
    r.allocateNext();
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 2, free: 0 });
    r.destroy();
  });

  it("an Allocator subclass's own free() and size: available_ips is what they answered at the last allocation", async () => {
    const registry = new Registry();
    const a = new ShortAllocator(CIDR, { store: new MemoryStore(), metrics: registry, random: seededRandom(1) });
    a.held = 1n;
    await a.allocateNext();
    a.held = 3n;
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 1, free: 4 });
    a.destroy();
    const b = new SizedAllocator(CIDR, { store: new MemoryStore(), metrics: registry, random: seededRandom(1) });
    b.forced = 4n;
    await b.allocateNext();
    b.forced = 100n;
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 1, free: 3 });
    await b.allocateNext();
    b.forced = 1n; // below used(): free() answers 0
    await b.release(await b.allocateNext());
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 2, free: 0 });
    b.destroy();
  });

  it('an allocator destroyed while another reports the range: the values it set last', async () => {
    const registry = new Registry();
    const store = new MemoryStore();
    const a = new Allocator(CIDR, { store, metrics: registry, random: seededRandom(1) });
    const b = new Allocator(CIDR, { store, metrics: registry, random: seededRandom(2) });
    await a.allocateNext();
    await a.allocateNext();
    a.destroy();
    const c = new Allocator(CIDR, { store, random: seededRandom(3) }); // another replica, without metrics
    await c.allocateNext(); // a change b sees as a store event, which sets no gauge
    c.destroy();
    expect(b.used()).toBe(3);
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 2, free: 4 });
    b.destroy();
  });

  it('available_ips is Number(free()) exactly, also where Number(size) − used() would round otherwise', async () => {
    const registry = new Registry();
    const r = new Range('2001:db8::/74', { metrics: registry, random: seededRandom(1) }); // 2^54 − 1 usable
    r.allocateNext();
    expect(r.free()).toBe(2n ** 54n - 2n);
    expect(Number(r.size) - r.used()).not.toBe(2 ** 54 - 2);
    expect(await value(registry, METRIC_AVAILABLE_IPS, { cidr: '2001:db8::/74' })).toBe(2 ** 54 - 2);
    r.destroy();
  });

  // Cost, not timing: free() made a BigInt, subtracted and converted it at every allocation and
  // release (about half of what enabling metrics cost a Range); available_ips is now computed
  // from used() and size when it is read, for the classes' own free().
  it("a Range's or an Allocator's allocateNext and release make no BigInt for the gauges", async () => {
    const r = new Range('10.0.0.0/24', { metrics: new Registry(), random: seededRandom(1) });
    const registry = new Registry();
    const a = new Allocator('2001:db8::/64', { store: new MemoryStore(), metrics: registry, random: seededRandom(1) });
    const bigInt = vi.spyOn(globalThis, 'BigInt');
    try {
      for (let i = 0; i < 10; i++) r.release(r.allocateNext());
      for (let i = 0; i < 10; i++) await a.release(await a.allocateNext());
      expect(bigInt).not.toHaveBeenCalled();
    } finally {
      bigInt.mockRestore();
    }
    await a.allocateNext();
    expect(await metricsOf(registry, '2001:db8::/64')).toMatchObject({ used: 1, free: Number(a.free()) });
    r.destroy();
    a.destroy();
  });

  // Whether free() is the class's own is asked at each set, not once per allocator: an instance
  // may be given a free() of its own at any time.
  it('an instance given its own free() after metrics were enabled: available_ips is what that one answers', async () => {
    const registry = new Registry();
    const r = new Range(CIDR, { metrics: registry, random: seededRandom(1) });
    r.allocateNext();
    r.free = () => 100n;
    r.allocateNext();
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 2, free: 100 });
    r.destroy();
  });

  it('an available_ips gauge the app registered first is set at each allocation, the allocated_ips made here at the read', async () => {
    const registry = new Registry();
    const theirs = new Gauge({ name: METRIC_AVAILABLE_IPS, help: "the app's own", labelNames: ['cidr'], registers: [registry] });
    const sets: unknown[] = [];
    const set = theirs.set.bind(theirs);
    theirs.set = ((labels: unknown, v: number) => {
      sets.push(v);
      set(labels as never, v);
    }) as typeof theirs.set;
    const r = new Range(CIDR, { metrics: registry, random: seededRandom(1) });
    r.allocateNext();
    r.allocateNext();
    expect(sets).toEqual([6, 5, 4]); // seeded, then each allocation
    expect(await metricsOf(registry, CIDR)).toMatchObject({ used: 2, free: 4 });
    r.destroy();
    expect(await gaugeCidrs(registry)).toEqual([]);
  });
});

/** A prom-client module: the classes the metrics are made with, and its Registry. */
type PromClientCopy = PromClient & { readonly Registry: new () => unknown };

/**
 * A histogram whose inside is not prom-client 14's or 15's, as a later prom-client's might be: it
 * keeps its series in a Map, where those keep them in an object (`hashMap`). Everything else is a
 * prom-client 15 Histogram's, which it holds: what it reads is what that one's observe() made.
 */
class MapHistogram {
  readonly type = 'histogram';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly upperBounds: readonly number[];
  readonly collect: (() => unknown) | undefined;
  private readonly inner: Histogram<string>;

  constructor(config: ConstructorParameters<typeof Histogram<string>>[0]) {
    this.inner = new Histogram({ ...config, registers: [], collect: undefined });
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames ?? [];
    this.upperBounds = (this.inner as unknown as { upperBounds: readonly number[] }).upperBounds;
    this.collect = config.collect as (() => unknown) | undefined;
    for (const registry of config.registers ?? []) registry.registerMetric(this as unknown as Histogram<string>);
  }

  get hashMap(): unknown {
    return this.seriesAs((this.inner as unknown as { hashMap: Record<string, HistogramSeries> }).hashMap);
  }
  /** Its series as it shows them: prom-client's, in a Map. */
  protected seriesAs(series: Record<string, HistogramSeries>): unknown {
    return new Map(Object.entries(series));
  }

  observe(labels: Record<string, string>, value: number): void {
    this.inner.observe(labels, value);
  }
  zero(labels: Record<string, string>): void {
    this.inner.zero(labels);
  }
  remove(...args: Parameters<Histogram<string>['remove']>): void {
    this.inner.remove(...(args as [Record<string, string>]));
  }
  reset(): void {
    this.inner.reset();
  }
  labels(...values: string[]) {
    return this.inner.labels(...values);
  }
  async get() {
    await this.collect?.();
    return this.inner.get();
  }
}

interface HistogramSeries {
  labels: Record<string, string>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/** A histogram keeping its series in an object, as prom-client does, but each one's buckets in an array. */
class ArrayBucketsHistogram extends MapHistogram {
  protected override seriesAs(series: Record<string, HistogramSeries>): unknown {
    const shown: Record<string, unknown> = {};
    for (const [hash, { labels, bucketValues, sum, count }] of Object.entries(series))
      shown[hash] = { labels, buckets: Object.values(bucketValues), sum, count };
    return shown;
  }
}

// What a scrape reads after a known sequence, the clock made to step by known amounts: the text
// prom-client serves, line for line, for every allocator that observes the histogram, with each
// prom-client major the package takes (14.x, 15.x: the dev dependency prom-client-14 is 14.2.0) and
// with a histogram whose inside is neither's. The histogram made here writes its batches into
// prom-client's own series when it is read, once it found them laid out as 14.x and 15.x lay them
// out; any other histogram is observed at once. Either way a scrape must read exactly this: what
// one observe() after another would have left.
describe.each([
  ['prom-client 15', promClient15 as PromClientCopy, 'kept until read'],
  ['prom-client 14', promClient14 as unknown as PromClientCopy, 'kept until read'],
  [
    'a histogram keeping its series in a Map',
    { ...promClient15, Histogram: MapHistogram } as unknown as PromClientCopy,
    'observed at once',
  ],
  [
    'a histogram keeping its buckets in an array',
    { ...promClient15, Histogram: ArrayBucketsHistogram } as unknown as PromClientCopy,
    'observed at once',
  ],
] as [string, PromClientCopy, 'kept until read' | 'observed at once'][])(
  'what a scrape reads after a known sequence, %s',
  (_copy, promClient, recording) => {
    const CIDR = '10.3.0.0/29';
    /** performance.now() answers these (ms) in turn: each allocation reads it at its start and end. */
    function steppedClock(times: number[]) {
      let i = 0;
      return vi.spyOn(performance, 'now').mockImplementation(() => {
        if (i >= times.length) throw new Error(`the clock was read more than the ${times.length} times expected`);
        return times[i++]!;
      });
    }
    /** The lines of `registry`'s text about metric `name`, its # HELP and # TYPE left out. */
    async function lines(registry: Registry, name: string): Promise<string[]> {
      return (await registry.metrics()).split('\n').filter((l) => l.startsWith(name));
    }
    const bucketLines = (counts: number[], inf: number) => [
      ...DEF_BUCKETS.map((le, i) => `${METRIC_DURATION}_bucket{le="${le}",cidr="${CIDR}"} ${counts[i]}`),
      `${METRIC_DURATION}_bucket{le="+Inf",cidr="${CIDR}"} ${inf}`,
    ];
    /** The package loaded afresh, its metrics made with this prom-client's classes. */
    async function fresh() {
      vi.resetModules();
      const metrics = await import('../adapters/metrics.ts');
      metrics.usePromClient(promClient);
      const [{ Allocator }, { ReferenceAllocator }, { MemoryStore }, { ErrNotInRange }] = await Promise.all([
        import('../adapters/allocator.ts'),
        import('../adapters/reference-allocator.ts'),
        import('../adapters/memory-store.ts'),
        import('../adapters/errors.ts'),
      ]);
      const impls: Record<string, Factory> = {
        ReferenceAllocator: (cidr, o) => new ReferenceAllocator(cidr, o),
        Allocator: (cidr, o) => Allocator.create(cidr, o),
      };
      return { impls, MemoryStore, ErrNotInRange, registerMetrics: metrics.registerMetrics };
    }

    it.each(IMPLS.map(([name]) => name))(
      '%s: the histogram, counters and gauges after allocations, a scrape, more allocations and a failure',
      async (name) => {
        const { impls, MemoryStore, ErrNotInRange, registerMetrics } = await fresh();
        const registry = new promClient.Registry() as Registry;
        // the histogram's own observe() calls, as the recorder makes them
        const { duration } = registerMetrics(registry);
        let observed = 0;
        const observe = duration.observe.bind(duration);
        duration.observe = ((...args: Parameters<typeof observe>) => {
          observed++;
          observe(...args);
        }) as typeof duration.observe;
        const a = impls[name]!(CIDR, { store: new MemoryStore(), random: seededRandom(9), metrics: registry });
        // each allocation's duration in ms (5: on the 0.005 s bound, counted in it); their sum in
        // seconds, one observe after another, is not the first scrape's sum plus the rest's (rounding)
        const ms = [3, 5, 12000, 7, 13, 200];
        const clock = steppedClock(ms.flatMap((d, i) => [1000 * (i + 1), 1000 * (i + 1) + d]));
        const seconds = (from: number, to: number) => ms.slice(from, to).reduce((sum, d) => sum + d / 1000, 0);
        try {
          await a.allocate('10.3.0.1');
          await a.allocateNext();
          await a.allocateNext();
          expect(await lines(registry, METRIC_DURATION)).toEqual([
            ...bucketLines([2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], 3),
            `${METRIC_DURATION}_sum{cidr="${CIDR}"} ${seconds(0, 3)}`,
            `${METRIC_DURATION}_count{cidr="${CIDR}"} 3`,
          ]);
          await a.allocateNext();
          await a.release('10.3.0.1');
          expect(await settle(a.allocate('10.9.9.9'))).toBeInstanceOf(ErrNotInRange); // no clock read
          await a.allocate('10.3.0.1');
          await a.allocateNext();
          expect(clock).toHaveBeenCalledTimes(12);
          expect([seconds(0, 6), seconds(0, 3) + seconds(3, 6)]).toEqual([12.227999999999998, 12.228]);
          expect(await lines(registry, METRIC_DURATION)).toEqual([
            ...bucketLines([2, 3, 4, 4, 4, 5, 5, 5, 5, 5, 5], 6),
            `${METRIC_DURATION}_sum{cidr="${CIDR}"} ${seconds(0, 6)}`,
            `${METRIC_DURATION}_count{cidr="${CIDR}"} 6`,
          ]);
        } finally {
          clock.mockRestore();
        }
        expect(observed).toBe(recording === 'observed at once' ? 6 : 0);
        const counted = [METRIC_ALLOCATED_IPS, METRIC_AVAILABLE_IPS, METRIC_ALLOCATIONS, METRIC_ERRORS];
        expect(
          (await lines(registry, 'kube_apiserver_clusterip_allocator_')).filter((l) => counted.some((n) => l.startsWith(`${n}{`))),
        ).toEqual([
          `${METRIC_ALLOCATED_IPS}{cidr="${CIDR}"} 5`,
          `${METRIC_AVAILABLE_IPS}{cidr="${CIDR}"} 1`,
          `${METRIC_ALLOCATIONS}{cidr="${CIDR}",scope="static"} 2`,
          `${METRIC_ALLOCATIONS}{cidr="${CIDR}",scope="dynamic"} 4`,
          `${METRIC_ERRORS}{cidr="${CIDR}",scope="static"} 1`,
        ]);
        a.destroy();
      },
    );
  },
);
