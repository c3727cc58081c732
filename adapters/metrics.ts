// The five upstream ClusterIP allocator metrics (pkg/registry/core/service/ipallocator/metrics.go)
// through prom-client, and the recorder the allocators call.
//
// An allocator holds a MetricsRecorder and calls it unconditionally: `NULL_RECORDER` (metrics
// disabled, the default) does nothing, so the hot path never asks "are metrics on?" (upstream's
// emptyMetricsRecorder). `recorderFor(registry)` (an allocator's `metrics` option or
// enableMetrics argument) registers the metrics in the registry (the prom-client default registry
// for `true` or none) and returns the real recorder; registering again in the same registry reuses
// the metrics already there.
//
// prom-client is an optional peer dependency, loaded only when metrics are enabled: this module
// imports its types only. The first recorder made loads it synchronously (the allocators enable
// metrics from their constructors) with the CommonJS loader that Node and Deno expose through
// `process.getBuiltinModule`, resolved from this package's location — so it is the app's own copy,
// whose default registry the app scrapes (prom-client is CommonJS: `require` and `import` share
// one instance). Where that loader is missing (a bundle, a browser, Deno without node_modules)
// the entry point `ipallocator/metrics` imports prom-client statically and hands it over here.
//
// Names, labels, help texts and buckets are upstream's (docs/semantics.md, "Metrics"):
//
//   kube_apiserver_clusterip_allocator_allocated_ips                 gauge     {cidr}
//   kube_apiserver_clusterip_allocator_available_ips                 gauge     {cidr}
//   kube_apiserver_clusterip_allocator_allocation_total              counter   {cidr, scope}
//   kube_apiserver_clusterip_allocator_allocation_errors_total       counter   {cidr, scope}
//   kube_apiserver_clusterip_allocator_allocation_duration_seconds   histogram {cidr}, DefBuckets
//
// Deliberate differences from upstream master: the allocators seed both gauges (used, free) when
// metrics are enabled — the open upstream fix (kubernetes/kubernetes#140615, kubernetes/kubernetes#141128); master leaves
// them absent until the first allocate/release. And a range's two gauge series leave the registry
// when the last allocator reporting them there is destroyed (a MetaAllocator range removed
// included) or moves to another registry: master keeps the last values of a range that is gone.
// The counters and the histogram stay (cumulative: their history is not the range's state).
//
// available_ips is a float64 gauge, as in Prometheus itself: free counts above 2^53 (IPv6
// prefixes of /75 and shorter) are reported as Number(free), rounded to the nearest double.
import { IPAllocatorError, InvalidArgumentError } from './errors.ts';
import { readMember } from './input.ts';
import { installOf, underDeno } from './peer-install.ts';
import { quoteInput, quoteText } from './quote.ts';
import type { MetricsRegistry } from './types.ts';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The parts of the prom-client module this file uses (any 14.x or 15.x copy has them). @internal */
export interface PromClient {
  readonly Counter: typeof Counter;
  readonly Gauge: typeof Gauge;
  readonly Histogram: typeof Histogram;
  readonly register: Registry;
}

let promClient: PromClient | undefined;

/**
 * Hands over the app's prom-client module, so metrics never load it by themselves. The entry
 * point `ipallocator/metrics` calls it; the first module given wins.
 * @internal
 */
export function usePromClient(module: PromClient): void {
  promClient ??= module;
}

interface CommonJSLoader {
  createRequire(from: string): (id: string) => unknown;
}

/** prom-client: the module handed over, or else the app's copy loaded now (see the header). */
function loadPromClient(): PromClient {
  return promClient ?? loadPromClientFrom(import.meta.url);
}

/**
 * The app's prom-client, required from `from` (this module's URL). A bundle in CommonJS leaves
 * `import.meta` empty: with no URL nothing can be required from here, and the error says to hand
 * prom-client over by importing 'ipallocator/metrics' (not to install it: it may well be); so
 * does a module loaded by URL (an https: one from JSR), which has no folder to require from.
 * Exported for the tests, which cannot load this file as such a bundle does.
 * @internal
 */
export function loadPromClientFrom(from: unknown): PromClient {
  // A module Deno loads by URL (from JSR) has no folder to require from, and installing cannot
  // change that: the entry point, which imports prom-client itself, is the one way.
  if (typeof from === 'string' && /^https?:/i.test(from))
    throw new IPAllocatorError(
      `metrics cannot load prom-client by themselves from ${from}, a module not on disk (from JSR or another URL): ` +
        "import ipallocator's metrics entry point once before enabling metrics (jsr:@ipallocator/ipallocator/metrics from JSR), " +
        'which imports prom-client (deno add npm:prom-client if your deno.json does not name it)',
    );
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const loader = host?.getBuiltinModule?.('node:module') as CommonJSLoader | undefined;
  let reason =
    loader === undefined
      ? 'this runtime has no process.getBuiltinModule (Node 20.16+, Deno 2)'
      : 'this module has no URL to load it from, as in a bundle in CommonJS';
  let notInstalled = false;
  if (loader !== undefined && typeof from === 'string') {
    try {
      promClient = loader.createRequire(from)('prom-client') as PromClient;
      return promClient;
    } catch (e) {
      reason = e instanceof Error ? e.message.split('\n')[0]! : String(e);
      // not found from here: importing 'ipallocator/metrics' would fail the same way
      notInstalled = (e as { code?: unknown } | null)?.code === 'MODULE_NOT_FOUND';
    }
  }
  throw new IPAllocatorError(
    loader === undefined || typeof from !== 'string'
      ? `metrics cannot load prom-client by themselves here (${reason}): import 'ipallocator/metrics' once before enabling metrics (and install prom-client if it is not)`
      : notInstalled
        ? `metrics need prom-client, an optional peer dependency: install it (${promClientInstall(from, host)}); it was not found (${reason}); in a bundle, which it cannot be loaded from by name, import 'ipallocator/metrics' once before enabling metrics`
        : `metrics need prom-client, an optional peer dependency: install it (${promClientInstall(from, host)}) ` +
          `or import 'ipallocator/metrics' before enabling metrics (${reason})`,
  );
}

/**
 * What installs prom-client where this copy of ipallocator loads it from (adapters/peer-install.ts):
 * npm's command under Node; under Deno, deno add where it runs (its npm cache) or in the folder
 * whose node_modules holds it (npm install there for a folder npm laid out).
 */
function promClientInstall(from: string, host: { getBuiltinModule?: (id: string) => unknown } | undefined): string {
  const install = installOf(from, underDeno());
  if (install.kind === 'deno-cache')
    return 'deno add npm:prom-client in the directory you run it in: Deno gives npm:ipallocator the packages its deno.json names';
  if (install.kind !== 'deno-folder') return 'npm install prom-client';
  const url = host?.getBuiltinModule?.('node:url') as { fileURLToPath?: (url: string) => string } | undefined;
  const folder =
    install.folder.startsWith('file:') && url?.fileURLToPath !== undefined ? url.fileURLToPath(install.folder) : install.folder;
  const add = install.laidOutBy === 'deno' ? 'deno add npm:prom-client' : 'npm install prom-client';
  return `${add} in ${quoteText(folder)}, whose node_modules folder holds ipallocator`;
}

export const METRIC_ALLOCATED_IPS = 'kube_apiserver_clusterip_allocator_allocated_ips';
export const METRIC_AVAILABLE_IPS = 'kube_apiserver_clusterip_allocator_available_ips';
export const METRIC_ALLOCATIONS = 'kube_apiserver_clusterip_allocator_allocation_total';
export const METRIC_ERRORS = 'kube_apiserver_clusterip_allocator_allocation_errors_total';
export const METRIC_DURATION = 'kube_apiserver_clusterip_allocator_allocation_duration_seconds';

/** Prometheus client_golang DefBuckets. */
export const DEF_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type Scope = 'static' | 'dynamic';

/** What a recorder needs to read from an allocator to set the gauges. @internal */
export interface GaugeSource {
  used(): number;
  free(): bigint;
  readonly size: bigint;
}

/**
 * The mark sizeLessUsed puts on a free() method, read at each allocation from whatever free() the
 * allocator has then (an instance may be given its own): a property of the function, since
 * looking it up in a WeakSet cost ≈ 10 ns more per allocation.
 */
const SIZE_LESS_USED: unique symbol = Symbol('sizeLessUsed');
type MarkedFree = (() => bigint) & { [SIZE_LESS_USED]?: true };

/**
 * Says that `free`, a class's own free method, answers `size − used()` (0 when used() is above
 * size) and nothing else: the gauges of an allocator whose free() is it read used() and size at
 * each allocation, and turn them into available_ips when it is read, rather than calling free()
 * (a BigInt made, subtracted and converted) each time. A subclass that overrides free() is not
 * it, and is called as before.
 * @internal
 */
export function sizeLessUsed(free: () => bigint): void {
  (free as MarkedFree)[SIZE_LESS_USED] = true;
}

/** The calls an allocator makes; all are no-ops in NULL_RECORDER. @internal */
export interface MetricsRecorder {
  /** A successful create: allocation_total{cidr, scope} + 1. */
  allocation(cidr: string, scope: Scope): void;
  /** A failed create or a failed allocation: allocation_errors_total{cidr, scope} + 1. */
  error(cidr: string, scope: Scope): void;
  /** allocated_ips{cidr} = used(), available_ips{cidr} = Number(free()). */
  gauges(cidr: string, source: GaugeSource): void;
  /**
   * `source` reports cidr's gauges here from now on (an allocator given this recorder): counted,
   * and the gauges seeded from it. Once per allocator and recorder, paired with `untrack`.
   */
  track(cidr: string, source: GaugeSource): void;
  /**
   * One source of cidr's gauges stopped reporting here (destroyed, or given another recorder):
   * when none is left, both gauge series of cidr are removed from the registry.
   */
  untrack(cidr: string): void;
  /** A start time for `observe` (0 in the null recorder: the clock is not even read). */
  start(): number;
  /** allocation_duration_seconds{cidr} observes the seconds since `start`. */
  observe(cidr: string, start: number): void;
}

/** Metrics disabled. @internal */
export const NULL_RECORDER: MetricsRecorder = Object.freeze({
  allocation(): void {},
  error(): void {},
  gauges(): void {},
  track(): void {},
  untrack(): void {},
  start(): number {
    return 0;
  },
  observe(): void {},
});

/** The five metrics as registered in one registry. */
export interface AllocatorMetrics {
  readonly allocated: Gauge<'cidr'>;
  readonly available: Gauge<'cidr'>;
  readonly allocations: Counter<'cidr' | 'scope'>;
  readonly errors: Counter<'cidr' | 'scope'>;
  readonly duration: Histogram<'cidr'>;
}

/**
 * Per allocated_ips gauge: cidr → allocators reporting its series, tracked and not yet untracked
 * (a count, not the allocators: an allocator left to the garbage collector must not be kept alive
 * by it). Kept by gauge rather than by recorder: a registry's metrics may outlive one recorder (a
 * new one is made when one of the five was removed from it, reusing the gauges still there).
 */
const gaugeSources = new WeakMap<object, Map<string, number>>();

// Why the allocation path does not call prom-client: each of its calls builds and hashes a label
// string and makes an object (≈ 250–500 ns; a histogram's observe ≈ 0.9 µs, its bucket found by
// turning each bound into a string, and the same through a `labels(cidr)` child), and an
// allocate-and-release made six of them (a counter, four gauge sets, the histogram), which
// tripled the cost of an allocation. So for the metrics made here (recorderEntry) the path keeps
// plain numbers by cidr, and each metric's `collect` — which prom-client runs before every read of
// it: a scrape, registry.metrics(), metric.get() — writes them through first. A read sees what it
// saw before: each gauge as the last create or delete that went through set it, every count made
// so far, every observation in its bucket. A metric of one of these names registered by someone
// else (reused) has no such collect and is written to at once.

/** Both gauges by cidr, as the recorder sets them from an allocator. */
interface CidrGauges {
  /** allocated_ips{cidr} = source.used(), available_ips{cidr} = Number(source.free()). */
  set(cidr: string, source: GaugeSource): void;
  /** Both series of cidr leave the registry. */
  remove(cidr: string): void;
}

/** One gauge by cidr, as the recorder writes it. */
interface CidrGauge {
  set(cidr: string, value: number): void;
  remove(cidr: string): void;
}

/** A counter by cidr and scope, as the recorder writes it. */
interface ScopedCounter {
  inc(cidr: string, scope: Scope): void;
}

/**
 * One cidr's gauge values as the last set left them. available_ips is `available`, or, when
 * `size` is set (the allocator's free() is size − used: sizeLessUsed), size − used turned into a
 * number when it is read: Number(free()) to the last bit, without a BigInt on the allocation path.
 */
class GaugeEntry {
  used = 0;
  available = 0;
  size: bigint | undefined = undefined;
  /** Whether allocated_ips, available_ips have a value their gauge has not written yet. */
  usedKept = false;
  availableKept = false;

  availableNow(): number {
    if (this.size === undefined) return this.available;
    const used = BigInt(this.used);
    return used > this.size ? 0 : Number(this.size - used);
  }
}

/**
 * The values of the two gauges made together (recorderEntry), by cidr: one entry per cidr, found
 * once per allocation and rewritten in place, read by each gauge's collect (its PendingGauge).
 */
class GaugeValues implements CidrGauges {
  readonly entries = new Map<string, GaugeEntry>();
  /** The gauges reading them, set as they are made. */
  allocated: PendingGauge | undefined;
  available: PendingGauge | undefined;

  set(cidr: string, source: GaugeSource): void {
    // all read before anything is kept: when one throws, nothing changes
    const used = source.used();
    let size: bigint | undefined;
    let available = 0;
    if ((source.free as MarkedFree)[SIZE_LESS_USED] === true) size = source.size;
    else available = Number(source.free());
    let entry = this.entries.get(cidr);
    if (entry === undefined) this.entries.set(cidr, (entry = new GaugeEntry()));
    entry.used = used;
    entry.available = available;
    entry.size = size;
    entry.usedKept = entry.availableKept = true;
  }

  remove(cidr: string): void {
    this.allocated!.remove(cidr);
    this.available!.remove(cidr);
  }
}

/** A gauge made here: one half of its GaugeValues, kept until it is read. */
class PendingGauge implements CidrGauge {
  /**
   * `own`: the gauge's set as prom-client made it, which flush writes with (the gauge's own `set`
   * first writes what is kept: writtenThrough); `gauge`: the gauge, whose remove is called as the
   * app may have it (its code runs there, as it did when every event was written at once).
   */
  constructor(
    readonly values: GaugeValues,
    readonly half: 'allocated' | 'available',
    private readonly own: Pick<Gauge<'cidr'>, 'set'>,
    private readonly gauge: Pick<Gauge<'cidr'>, 'remove'>,
  ) {
    values[half] = this;
  }
  /** Sets this half alone (the other gauge is not made here, or not with this one). */
  set(cidr: string, value: number): void {
    let entry = this.values.entries.get(cidr);
    if (entry === undefined) this.values.entries.set(cidr, (entry = new GaugeEntry()));
    if (this.half === 'allocated') {
      entry.used = value;
      entry.usedKept = true;
    } else {
      entry.available = value;
      entry.size = undefined;
      entry.availableKept = true;
    }
  }
  remove(cidr: string): void {
    const entry = this.values.entries.get(cidr);
    if (entry !== undefined) {
      this.forget(entry);
      if (!entry.usedKept && !entry.availableKept) this.values.entries.delete(cidr);
    }
    this.gauge.remove({ cidr });
  }
  /** Its collect: the values kept, written through. */
  flush(): void {
    for (const [cidr, entry] of this.values.entries) {
      if (this.half === 'allocated' ? entry.usedKept : entry.availableKept) {
        this.own.set({ cidr }, this.half === 'allocated' ? entry.used : entry.availableNow());
        this.forget(entry);
      }
    }
  }
  /** Its reset (registry.resetMetrics()): what is kept goes too. */
  drop(): void {
    for (const entry of this.values.entries.values()) this.forget(entry);
  }
  private forget(entry: GaugeEntry): void {
    if (this.half === 'allocated') entry.usedKept = false;
    else entry.availableKept = false;
  }
}

/** Two gauges not made together: each set through its own writer. */
class GaugesOneByOne implements CidrGauges {
  constructor(
    private readonly allocated: CidrGauge,
    private readonly available: CidrGauge,
  ) {}
  set(cidr: string, source: GaugeSource): void {
    const used = source.used();
    const available = Number(source.free());
    this.allocated.set(cidr, used);
    this.available.set(cidr, available);
  }
  remove(cidr: string): void {
    this.allocated.remove(cidr);
    this.available.remove(cidr);
  }
}

/** A counter made here: counts kept until it is read. */
class PendingCounter implements ScopedCounter {
  private readonly counts = new Map<string, { static: number; dynamic: number }>();
  /** `counter`: the counter's inc as prom-client made it (its own `inc` first writes what is kept: writtenThrough). */
  constructor(private readonly counter: Pick<Counter<'cidr' | 'scope'>, 'inc'>) {}
  inc(cidr: string, scope: Scope): void {
    const counts = this.counts.get(cidr);
    if (counts === undefined) this.counts.set(cidr, { static: scope === 'static' ? 1 : 0, dynamic: scope === 'dynamic' ? 1 : 0 });
    else counts[scope]++;
  }
  flush(): void {
    for (const [cidr, counts] of this.counts) {
      if (counts.static > 0) this.counter.inc({ cidr, scope: 'static' }, counts.static);
      if (counts.dynamic > 0) this.counter.inc({ cidr, scope: 'dynamic' }, counts.dynamic);
    }
    this.counts.clear();
  }
  drop(): void {
    this.counts.clear();
  }
}

/** A histogram by cidr, as the recorder writes it. */
interface CidrHistogram {
  observe(cidr: string, seconds: number): void;
}

/**
 * One series of a prom-client histogram, as prom-client 14 and 15 keep it (their `hashMap`'s
 * values): the non-cumulative count of each bucket by its upper bound, the sum and the count.
 */
interface HistogramSeries {
  labels: { cidr?: unknown };
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/** A prom-client histogram's inside, which PendingHistogram writes its batches into. */
interface HistogramInside {
  hashMap?: Record<string, HistogramSeries>;
  upperBounds?: readonly number[];
  zero(labels: { cidr: string }): void;
  remove(labels: { cidr: string }): void;
}

/** The observations of one cidr since they were last written. */
class Tally {
  /**
   * counts[i]: observations ≤ DEF_BUCKETS[i] and above the bound before; the last: above them all,
   * never written out (prom-client's +Inf bucket is its count), kept so observe needs no branch.
   */
  readonly counts: number[] = new Array<number>(DEF_BUCKETS.length + 1).fill(0);
  count = 0;
  /** Their sum, from 0. */
  added = 0;
  /**
   * The series' sum after them as one observe after another would have left it: `base` plus
   * each in turn. `base` and `baseCount`: the series as the last write left it (NaN: unknown).
   */
  sum = 0;
  base = Number.NaN;
  baseCount = Number.NaN;
}

/**
 * The histogram made here: observations kept as counts per bucket, their sum and count, until it
 * is read. prom-client has no call that adds a batch, so its collect adds them to the series
 * where prom-client keeps it (HistogramSeries); the sum is the one observe after observe would
 * have made, to the last bit, unless someone else observed into the series meanwhile (then the
 * batch's own sum is added).
 */
class PendingHistogram implements CidrHistogram {
  private readonly tallies = new Map<string, Tally>();
  /**
   * Whether prom-client keeps this histogram's series as flush writes them (14.x and 15.x do):
   * found out once, as it is made. When not, the recorder observes it at once instead.
   */
  readonly fits: boolean;
  /** `own`: the histogram's methods as prom-client made them (see writtenThrough). */
  constructor(private readonly own: Histogram<'cidr'> & HistogramInside) {
    this.fits = PendingHistogram.laidOutAsKnown(own);
  }

  /**
   * Whether `histogram`, just made and holding no series, keeps them as prom-client 14.x and 15.x
   * do: its bounds are DEF_BUCKETS, and zero() of a series puts into `hashMap`, a plain object, one
   * entry holding the series' labels, a count of 0 by each bound, sum 0 and count 0, which remove()
   * takes out again. Anything else (a Map, other fields, a method that throws) is not known.
   */
  private static laidOutAsKnown(histogram: HistogramInside): boolean {
    const empty = (map: unknown): boolean =>
      typeof map === 'object' && map !== null && Object.getPrototypeOf(map) === Object.prototype && Object.keys(map).length === 0;
    if (!Array.isArray(histogram.upperBounds) || histogram.upperBounds.join() !== DEF_BUCKETS.join() || !empty(histogram.hashMap))
      return false;
    const probe = { cidr: 'layout probe' };
    try {
      histogram.zero(probe);
      const series = Object.values(histogram.hashMap!);
      const s = series[0];
      const fits =
        series.length === 1 &&
        s?.labels?.cidr === probe.cidr &&
        s.sum === 0 &&
        s.count === 0 &&
        DEF_BUCKETS.every((bound) => s.bucketValues?.[bound] === 0);
      histogram.remove(probe);
      return fits && empty(histogram.hashMap);
    } catch {
      return false; // not a histogram this knows: it is observed at once
    }
  }

  observe(cidr: string, seconds: number): void {
    let tally = this.tallies.get(cidr);
    if (tally === undefined) this.tallies.set(cidr, (tally = new Tally()));
    let i = 0;
    while (i < DEF_BUCKETS.length && !(seconds <= DEF_BUCKETS[i]!)) i++; // prom-client's findBound
    tally.counts[i]!++;
    tally.count++;
    tally.added += seconds;
    tally.sum += seconds;
  }

  flush(): void {
    let series: Map<unknown, HistogramSeries> | undefined;
    for (const [cidr, tally] of this.tallies) {
      if (tally.count === 0) continue;
      series ??= this.series();
      let s = series.get(cidr);
      if (s === undefined) {
        this.own.zero({ cidr });
        s = this.series().get(cidr)!;
      }
      for (let i = 0; i < DEF_BUCKETS.length; i++) s.bucketValues[DEF_BUCKETS[i]!]! += tally.counts[i]!;
      s.sum = s.sum === tally.base && s.count === tally.baseCount ? tally.sum : s.sum + tally.added;
      s.count += tally.count;
      tally.counts.fill(0);
      tally.count = 0;
      tally.added = 0;
      tally.sum = tally.base = s.sum;
      tally.baseCount = s.count;
    }
  }

  /** The histogram's series by cidr. */
  private series(): Map<unknown, HistogramSeries> {
    const byCidr = new Map<unknown, HistogramSeries>();
    for (const s of Object.values(this.own.hashMap!)) byCidr.set(s.labels.cidr, s);
    return byCidr;
  }

  drop(): void {
    this.tallies.clear();
  }
}

/** The writer of each metric made here (recorderEntry), by metric. */
const pending = new WeakMap<object, PendingGauge | PendingCounter | PendingHistogram>();

/**
 * The writer of both gauges: their GaugeValues when they were made together here, else each
 * one's own (gaugeWriter).
 */
function gaugesWriter(allocated: Gauge<'cidr'>, available: Gauge<'cidr'>): CidrGauges {
  const used = pending.get(allocated);
  const free = pending.get(available);
  if (used instanceof PendingGauge && free instanceof PendingGauge && used.values === free.values && used.values.available === free)
    return used.values;
  return new GaugesOneByOne(gaugeWriter(allocated), gaugeWriter(available));
}

/** The writer of `gauge`: its PendingGauge when made here, else one that sets it at once. */
function gaugeWriter(gauge: Gauge<'cidr'>): CidrGauge {
  const made = pending.get(gauge);
  if (made instanceof PendingGauge) return made;
  return {
    set: (cidr, value) => gauge.set({ cidr }, value),
    remove: (cidr) => gauge.remove({ cidr }),
  };
}

/** The writer of `counter`: its PendingCounter when made here, else one that counts at once. */
function counterWriter(counter: Counter<'cidr' | 'scope'>): ScopedCounter {
  const made = pending.get(counter);
  if (made instanceof PendingCounter) return made;
  return { inc: (cidr, scope) => counter.inc({ cidr, scope }) };
}

/** The writer of `histogram`: its PendingHistogram when made here, else one that observes at once. */
function histogramWriter(histogram: Histogram<'cidr'>): CidrHistogram {
  const made = pending.get(histogram);
  if (made instanceof PendingHistogram && made.fits) return made;
  return { observe: (cidr, seconds) => histogram.observe({ cidr }, seconds) };
}

/**
 * A metric made here: `make` builds it given its `collect`, which writes what `writer`
 * (made for it, from the metric's own methods) kept through; its reset (as registry.resetMetrics()
 * calls it) drops what was kept, then resets it. Each of its `written` methods, which the app may
 * call on the metric registerMetrics gave it (remove a series, set a gauge), first writes what was
 * kept through: what the app then writes is what the next read sees, as when every event was
 * written at once, not a value kept from before it.
 */
function writtenThrough<M extends { reset(): void }>(
  make: (collect: () => void) => M,
  writer: (own: M, metric: M) => PendingGauge | PendingCounter | PendingHistogram,
  written: readonly (keyof M & string)[],
): M {
  let kept: PendingGauge | PendingCounter | PendingHistogram | undefined;
  const metric = make(() => kept?.flush());
  // the writer keeps the metric's own methods, so that its flush does not come back here
  const own = Object.create(metric) as M;
  for (const name of written) {
    const method = metric[name];
    if (typeof method === 'function') (own as Record<string, unknown>)[name] = method.bind(metric);
  }
  kept = writer(own, metric);
  pending.set(metric, kept);
  const wrap = (name: string, before: () => void): void => {
    const original = (metric as Record<string, unknown>)[name];
    if (typeof original !== 'function') return; // a method this prom-client lacks
    Object.defineProperty(metric, name, {
      value(this: M, ...args: unknown[]) {
        before();
        return original.apply(this, args);
      },
      configurable: true,
      writable: true,
    });
  };
  wrap('reset', () => kept?.drop());
  for (const name of written) wrap(name, () => kept?.flush());
  return metric;
}

class PromRecorder implements MetricsRecorder {
  private readonly sources: Map<string, number>;
  private readonly gaugeValues: CidrGauges;
  private readonly allocations: ScopedCounter;
  private readonly errors: ScopedCounter;
  private readonly duration: CidrHistogram;

  constructor(m: AllocatorMetrics) {
    let sources = gaugeSources.get(m.allocated);
    if (sources === undefined) gaugeSources.set(m.allocated, (sources = new Map()));
    this.sources = sources;
    this.gaugeValues = gaugesWriter(m.allocated, m.available);
    this.allocations = counterWriter(m.allocations);
    this.errors = counterWriter(m.errors);
    this.duration = histogramWriter(m.duration);
  }

  allocation(cidr: string, scope: Scope): void {
    this.allocations.inc(cidr, scope);
  }

  error(cidr: string, scope: Scope): void {
    this.errors.inc(cidr, scope);
  }

  gauges(cidr: string, source: GaugeSource): void {
    this.gaugeValues.set(cidr, source);
  }

  track(cidr: string, source: GaugeSource): void {
    this.gauges(cidr, source); // first: when used() or free() throws, nothing is counted
    this.sources.set(cidr, (this.sources.get(cidr) ?? 0) + 1);
  }

  untrack(cidr: string): void {
    const n = this.sources.get(cidr);
    if (n === undefined) return;
    if (n > 1) {
      this.sources.set(cidr, n - 1);
      return;
    }
    this.sources.delete(cidr);
    this.gaugeValues.remove(cidr);
  }

  // The two clock reads are most of what metrics cost an allocator (≈ 45 ns each in Node, ≈ 95 in
  // Deno), and no other clock does better in both: process.hrtime() is a little cheaper in Node
  // and dearer in Deno, process.hrtime.bigint() dearer in both, and Date.now() counts whole
  // milliseconds, too coarse beside the first bucket's 5 ms and for the sum. One read per call,
  // the last call's end taken as the next one's start, would count the time between calls.
  start(): number {
    return performance.now();
  }

  observe(cidr: string, start: number): void {
    this.duration.observe(cidr, (performance.now() - start) / 1000);
  }
}

const perRegistry = new WeakMap<MetricsRegistry, { metrics: AllocatorMetrics; recorder: MetricsRecorder }>();

/** An existing metric: what prom-client's Counter, Gauge and Histogram carry. */
interface ExistingMetric {
  type?: unknown;
  labelNames?: unknown;
}

/**
 * Throws InvalidArgumentError unless the metric named `name` in `registry` is absent or of
 * `type` with exactly `labelNames`: another one would make every recording throw after the
 * allocation it records, so it is refused before anything is registered or recorded.
 */
function checkReusable(registry: MetricsRegistry, name: string, type: string, labelNames: readonly string[]): void {
  const existing = registry.getSingleMetric(name) as unknown as ExistingMetric | null | undefined;
  if (existing == null) return;
  const kind = typeOf(existing);
  const labels = Array.isArray(existing.labelNames) ? (existing.labelNames as unknown[]).map(String).sort() : undefined;
  if (kind === type && labels !== undefined && labels.join(',') === [...labelNames].sort().join(',')) return;
  const has = `${kind ?? 'metric of unknown type'} with labels ${labels === undefined ? 'unknown' : labels.join(', ') || 'none'}`;
  throw new InvalidArgumentError(
    `the registry already holds ${name} as a ${has}, not upstream's ${type} with labels ${labelNames.join(', ')}: unregister it or pass another registry`,
  );
}

/**
 * 'counter', 'gauge', 'histogram', … : prom-client 15 says so in `type`; 14 has no such field,
 * and its classes are named after the type.
 */
function typeOf(metric: ExistingMetric): string | undefined {
  if (typeof metric.type === 'string') return metric.type;
  const name = (metric as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && /^(Counter|Gauge|Histogram|Summary)$/.test(name) ? name.toLowerCase() : undefined;
}

/**
 * Returns the existing metric of that name in `registry` (checked by checkReusable), or creates
 * it there, its name then added to `created`.
 */
function reuse<T>(registry: MetricsRegistry, name: string, make: () => T, created: string[]): T {
  const existing = registry.getSingleMetric(name);
  if (existing != null) return existing as unknown as T;
  const made = make();
  created.push(name);
  return made;
}

/**
 * Registers the five metrics in `registry` (default, or `true`: prom-client's global registry, as
 * enableMetrics takes it) and returns them. Idempotent per registry: a second call returns the same objects, and metrics of the same
 * names, types and labels registered earlier by someone else are reused instead of failing; one
 * of those names with another type or other labels is InvalidArgumentError, nothing registered.
 */
export function registerMetrics(registry?: MetricsRegistry | true): AllocatorMetrics {
  return recorderEntry(registryOf(registry, "registerMetrics's registry") ?? loadPromClient().register).metrics;
}

/** The recorder writing to `registry` (default: prom-client's global registry). */
function recorderOf(registry?: MetricsRegistry): MetricsRecorder {
  return recorderEntry(registry ?? loadPromClient().register).recorder;
}

function recorderEntry(registry: MetricsRegistry): { metrics: AllocatorMetrics; recorder: MetricsRecorder } {
  let entry = perRegistry.get(registry);
  // Still the registry's own metrics, unless it was cleared (registry.clear(), common between
  // tests) or one was removed: then they are looked up (and checked) again.
  if (entry !== undefined && registry.getSingleMetric(METRIC_ALLOCATED_IPS) === (entry.metrics.allocated as unknown)) {
    const m = entry.metrics;
    if (
      registry.getSingleMetric(METRIC_AVAILABLE_IPS) === (m.available as unknown) &&
      registry.getSingleMetric(METRIC_ALLOCATIONS) === (m.allocations as unknown) &&
      registry.getSingleMetric(METRIC_ERRORS) === (m.errors as unknown) &&
      registry.getSingleMetric(METRIC_DURATION) === (m.duration as unknown)
    )
      return entry;
  }
  const { Counter, Gauge, Histogram } = loadPromClient();
  checkReusable(registry, METRIC_ALLOCATED_IPS, 'gauge', ['cidr']);
  checkReusable(registry, METRIC_AVAILABLE_IPS, 'gauge', ['cidr']);
  checkReusable(registry, METRIC_ALLOCATIONS, 'counter', ['cidr', 'scope']);
  checkReusable(registry, METRIC_ERRORS, 'counter', ['cidr', 'scope']);
  checkReusable(registry, METRIC_DURATION, 'histogram', ['cidr']);
  // prom-client's constructors type `registers` as their own Registry class, which is what an app
  // passes (MetricsRegistry only describes it).
  const registers = [registry as Registry];
  const created: string[] = [];
  // Upstream's two gauges (labelled by cidr), two counters (by cidr and scope) and histogram (by
  // cidr), each one found in the registry (reuse) or made there, written through (writtenThrough);
  // the gauges made here keep their values together (GaugeValues).
  const gaugeValues = new GaugeValues();
  const gauge = (name: string, help: string, half: 'allocated' | 'available') =>
    reuse(
      registry,
      name,
      () =>
        writtenThrough<Gauge<'cidr'>>(
          (collect) => new Gauge({ name, help, labelNames: ['cidr'] as const, registers, collect }),
          (own, g) => new PendingGauge(gaugeValues, half, own, g),
          ['set', 'inc', 'dec', 'setToCurrentTime', 'remove'],
        ),
      created,
    );
  const counter = (name: string, help: string) =>
    reuse(
      registry,
      name,
      () =>
        writtenThrough<Counter<'cidr' | 'scope'>>(
          (collect) => new Counter({ name, help, labelNames: ['cidr', 'scope'] as const, registers, collect }),
          (own) => new PendingCounter(own),
          ['inc', 'remove'],
        ),
      created,
    );
  let metrics: AllocatorMetrics;
  try {
    metrics = {
      allocated: gauge(METRIC_ALLOCATED_IPS, 'Gauge measuring the number of allocated IPs for Services', 'allocated'),
      available: gauge(METRIC_AVAILABLE_IPS, 'Gauge measuring the number of available IPs for Services', 'available'),
      allocations: counter(METRIC_ALLOCATIONS, 'Number of Cluster IPs allocations'),
      errors: counter(METRIC_ERRORS, 'Number of errors trying to allocate Cluster IPs'),
      duration: reuse(
        registry,
        METRIC_DURATION,
        () =>
          writtenThrough<Histogram<'cidr'>>(
            (collect) =>
              new Histogram({
                name: METRIC_DURATION,
                help: 'Duration in seconds to allocate a Cluster IP by ServiceCIDR',
                labelNames: ['cidr'] as const,
                buckets: [...DEF_BUCKETS],
                registers,
                collect,
              }),
            (own) => new PendingHistogram(own as Histogram<'cidr'> & HistogramInside),
            ['observe', 'zero', 'remove'],
          ),
        created,
      ),
    };
  } catch (e) {
    // a registry that refused one part-way (its registerMetric threw): the ones made for it here
    // go again, so that a refused call leaves it as it was
    const removable = registry as { removeSingleMetric?: (name: string) => void };
    for (const name of created) {
      try {
        removable.removeSingleMetric?.(name);
      } catch {
        // best effort: the registry's own error is the one that explains the failure
      }
    }
    throw e;
  }
  entry = { metrics, recorder: new PromRecorder(metrics) };
  perRegistry.set(registry, entry);
  return entry;
}

/**
 * An allocator's enableMetrics(registry): the recorder for `registry`, which now reports cidr's
 * gauges (seeded from `source`) in place of `current` — whose registry the gauges leave, unless
 * another allocator reports them there (untrack). The same registry again: seeded again.
 * @internal
 */
export function switchRecorder(current: MetricsRecorder, registry: unknown, cidr: string, source: GaugeSource): MetricsRecorder {
  const next = recorderFor(registry, 'registry');
  if (next === current) {
    next.gauges(cidr, source);
    return next;
  }
  next.track(cidr, source); // seeded gauges: the open upstream fix (kubernetes/kubernetes#140615)
  current.untrack(cidr);
  return next;
}

/**
 * Turns the `metrics` option, or enableMetrics's `registry` (`what` names it, as the caller
 * wrote it), into a recorder.
 * @internal
 */
export function recorderFor(registry: unknown, what: 'options.metrics' | 'registry' = 'options.metrics'): MetricsRecorder {
  return recorderOf(registryOf(registry, what));
}

/**
 * A registry as the caller gave it (`what` names it): a prom-client Registry, or undefined for
 * prom-client's default registry (undefined or `true`); InvalidArgumentError for anything else.
 */
function registryOf(registry: unknown, what: string): MetricsRegistry | undefined {
  if (registry === undefined || registry === true) return undefined;
  if (typeof registry === 'object' && registry !== null && typeof readMember(registry, 'getSingleMetric', what) === 'function') {
    return registry as MetricsRegistry;
  }
  throw new InvalidArgumentError(`${what} must be true or a prom-client Registry, got ${quoteInput(registry)}`);
}
