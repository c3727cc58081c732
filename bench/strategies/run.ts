// npm run bench:strategies [-- --quick] [-- --out <prefix>] [-- --seed <n>] [-- --cpu fastest|<n>]
//                          [-- --strategy <module>]...
//
// Every allocation strategy on every workload of the simulator (sim.ts), plus the speed of each
// strategy's allocateNext on Range (the built-ins, and those of each --strategy module: own.ts), written as JSON, Markdown and three SVG charts to
// bench/results/strategies.* (--quick: a CI-sized run, and --seed another seed, into
// $TMPDIR/ipallocator-bench/; bench/strategies/args.ts reads the arguments).
//
// Workloads (workloads.ts; all deterministic by seed; times are simulated):
//   load sweep      one /22, 3 API servers, informer lag lognormal (median 100 ms, σ 1: p99 ≈ 1 s),
//                   exponential lifetimes (mean 10 min), 2 % static requests; offered load 0.3–0.99
//   deploy burst    one /20, heavy-tailed lifetimes (Pareto α 1.5, mean 1 h), base load 0.5, and a
//                   1,000-Service deploy over 10 s every 2 h
//   ServiceCIDRs    /24 + /24 + /23 under each MetaAllocator policy, load 0.8
//   IPv6 /64        20,000 live Services on a /64: where legacy-bitmap's 65,535 cap shows
// Speed (allocateNext + release on Range, fill held): a /20 at 50 / 90 / 99 %, a /64 holding
// 100,000 random addresses (not legacy-bitmap: its window holds almost none of them), and a /64
// holding the first 50,000 choices of the same strategy under the same seed (a process restarted
// with a fixed seed: random-free's draws then replay taken addresses and it counts and selects
// among the free ones on every call).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { STRATEGY_NAMES } from '../../adapters/builtin-strategies.ts';
import { coreTarget } from '../../adapters/wasm.ts';
import { conditions } from '../conditions.ts';
import { BenchCpu } from '../cpu.ts';
import { checkOutPrefix, HelpRequested, UsageError } from '../args.ts';
import { type StrategiesArgs, strategiesArgs } from './args.ts';
import { type LineStyle, lineChart, ownStyle, STRATEGY_STYLES, type Series } from './chart.ts';
import { type OwnStrategy, ownStrategies } from './own.ts';
import { markdown, type Results } from './report.ts';
import { speeds } from './speed.ts';
import { type Measures, REUSE_BUCKETS_S, type StrategySpec, simulate, type Workload } from './sim.ts';
import { workloads } from './workloads.ts';

/** Every built-in strategy, in STRATEGY_NAMES's order: a new one is simulated without a line here. */
const BUILTIN_SPECS: StrategySpec[] = STRATEGY_NAMES.map((name) => ({ label: name, strategy: name }));
const COOLED_SPECS: StrategySpec[] = [
  { label: 'upstream + cool-down 60 s', strategy: 'upstream', coolDownMs: 60_000 },
  { label: 'random-free + cool-down 60 s', strategy: 'random-free', coolDownMs: 60_000 },
];

/**
 * The run's settings, where it runs (bench/cpu.ts: a --cpu it cannot use is refused there), and
 * the strategies of --strategy (own.ts); a usage error is one line, exit 2, before anything is
 * simulated.
 */
const {
  quick,
  seed: SEED,
  out: OUT,
  benchCpu,
  own: OWN,
} = await (async (): Promise<StrategiesArgs & { benchCpu: BenchCpu; own: OwnStrategy[] }> => {
  try {
    const args = process.argv.slice(2);
    const settings = strategiesArgs(args);
    checkOutPrefix(
      settings.out,
      args.some((a) => a === '--out' || a.startsWith('--out=')),
    );
    let cpu: BenchCpu;
    try {
      cpu = new BenchCpu(settings.cpu);
    } catch (e) {
      // BenchCpu refuses only a --cpu given: its message names the value and what it takes
      if (settings.cpu === undefined) throw e;
      throw new UsageError(e instanceof Error ? e.message : String(e));
    }
    const own = await ownStrategies(
      settings.strategies,
      [...BUILTIN_SPECS, ...COOLED_SPECS].map((s) => s.label),
    );
    return { ...settings, benchCpu: cpu, own };
  } catch (e) {
    if (e instanceof HelpRequested) {
      process.stdout.write(`usage: npm run bench:strategies -- ${e.message}\n(docs/strategies.md says what each option does)\n`);
      process.exit(0);
    }
    if (!(e instanceof UsageError)) throw e;
    console.error(`bench:strategies: ${e.message}`);
    process.exit(2);
  }
})();

const OWN_SPECS: StrategySpec[] = OWN.map((o) => o.spec);
// legacy-bitmap only differs from upstream on IPv6 (its 65,535-address cap): on an IPv4 range a
// Range draws as the legacy bitmap does, so its lines would lie on upstream's.
const SPECS: StrategySpec[] = [...BUILTIN_SPECS.filter((s) => s.label !== 'legacy-bitmap'), ...COOLED_SPECS, ...OWN_SPECS];
const V6_SPECS: StrategySpec[] = [...BUILTIN_SPECS, ...OWN_SPECS];

/** The spec labelled `label` in `specs`: picked by name, as a list's order is only the report's. */
function specNamed(specs: readonly StrategySpec[], label: string): StrategySpec {
  const spec = specs.find((s) => s.label === label);
  if (spec === undefined) throw new Error(`no strategy spec labelled ${label}`);
  return spec;
}

const WORKLOADS = workloads(quick);

// ── run ─────────────────────────────────────────────────────────────────────────────────────

function main(): void {
  const started = performance.now();
  const cond = conditions(quick ? 'quick' : 'full', coreTarget, benchCpu.describe());
  let events = 0;
  let simMs = 0;
  const run = (w: Workload, specs: StrategySpec[]): Measures[] =>
    specs.map((s) => {
      const m = ownFailure(s, `the workload '${w.name}'`, () => simulate(w, s, SEED));
      events += m.events;
      simMs += m.wallMs;
      process.stderr.write(
        `${w.name.padEnd(24)} ${s.label.padEnd(30)} collisions/1000 ${m.collisionsPer1000.toFixed(2).padStart(7)}  fill ${m.meanFill.toFixed(3)}  ${m.events} events in ${m.wallMs.toFixed(0)} ms\n`,
      );
      return m;
    });
  const sweepResults = WORKLOADS.sweep.flatMap((w) => run(w, SPECS));
  const burstResults = run(WORKLOADS.burst, SPECS);
  const cidrResults = WORKLOADS.serviceCIDRs.flatMap((w) =>
    run(w, [...['upstream', 'random-free', 'lowest-free'].map((label) => specNamed(SPECS, label)), ...OWN_SPECS]),
  );
  const v6Results = run(WORKLOADS.ipv6, V6_SPECS);
  const ops = quick ? 20_000 : 200_000;
  const speedRows = speeds([...SPECS, specNamed(V6_SPECS, 'legacy-bitmap')], ops, undefined, ownFailure);
  const results: Results = {
    conditions: cond,
    seed: SEED,
    own: OWN.map(({ name, module }) => ({ name, module })),
    runTookS: (performance.now() - started) / 1000,
    eventsPerSecond: events / (simMs / 1000),
    sweep: sweepResults,
    burst: burstResults,
    serviceCIDRs: cidrResults,
    ipv6: v6Results,
    speed: speedRows,
  };
  mkdirSync(join(OUT, '..'), { recursive: true });
  writeFileSync(`${OUT}.json`, `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(`${OUT}.md`, markdown(results, OUT));
  writeFileSync(`${OUT}-collisions.svg`, collisionsChart(results));
  writeFileSync(`${OUT}-reuse.svg`, reuseChart(results));
  writeFileSync(`${OUT}-intrusion.svg`, intrusionChart(results));
  process.stderr.write(`wrote ${OUT}.{json,md} and ${OUT}-{collisions,reuse,intrusion}.svg in ${results.runTookS.toFixed(0)} s\n`);
}

/**
 * `f`'s answer; when it throws for a strategy of your own (`spec`, in `where`: a workload or a
 * speed case), the run ends there with one line naming its module, the strategy and where, exit 1
 * (nothing is written): the trial before the run (own.ts) cannot ask a strategy everything the
 * simulator and the speed cases will.
 */
function ownFailure<T>(spec: StrategySpec, where: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    const own = OWN.find((o) => o.spec === spec);
    if (own === undefined) throw e;
    const why = (e instanceof Error ? e.message : String(e)).split('\n')[0];
    process.stderr.write(`bench:strategies: --strategy ${own.module}: '${own.name}' failed on ${where}: ${why}\n`);
    process.exit(1);
  }
}

// ── charts ──────────────────────────────────────────────────────────────────────────────────

/** A strategy's line: a built-in's own, then those of your own in --strategy order. */
function style(label: string): LineStyle {
  const own = OWN_SPECS.findIndex((s) => s.label === label);
  const found = STRATEGY_STYLES[label] ?? (own >= 0 ? ownStyle(own) : undefined);
  if (found === undefined) throw new Error(`no line style for the strategy ${label}: neither a built-in's nor one of --strategy`);
  return found;
}

function subtitle(r: Results): string {
  return `simulated, seed ${r.seed}; one /22 (1,022 addresses), 3 API servers, informer lag lognormal median 100 ms; ${r.conditions.mode} run`;
}

/** One line per strategy across the load sweep: a point per workload, in ascending x. */
function sweepSeries(r: Results, point: (m: Measures) => [number, number]): Series[] {
  return SPECS.map((s) => ({
    name: s.label,
    ...style(s.label),
    points: r.sweep
      .filter((m) => m.strategy === s.label)
      .map(point)
      .sort((a, b) => a[0] - b[0]),
  }));
}

function collisionsChart(r: Results): string {
  const series = sweepSeries(r, (m) => [m.load!, Math.max(m.collisionsPer1000, 0.01)]);
  return lineChart({
    title: 'Collisions per 1,000 allocations against offered load (log scale)',
    subtitle: subtitle(r),
    xLabel: 'offered load (arrival rate × mean lifetime ÷ addresses)',
    yLabel: 'collisions per 1,000 allocations (0 drawn at 0.01)',
    yLog: true,
    yFloor: 0.01,
    xTicks: [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
    yTicks: [0.01, 0.1, 1, 10, 100, 1000],
    series,
  });
}

function reuseChart(r: Results): string {
  const loads = WORKLOADS.sweep.map((w) => w.load);
  const load = loads.includes(0.8) ? 0.8 : loads[Math.floor(loads.length / 2)];
  const at = `load ${load}`;
  const series: Series[] = SPECS.map((s) => {
    const m = r.sweep.find((x) => x.strategy === s.label && x.load === load)!;
    let acc = 0;
    const pts: [number, number][] = [];
    REUSE_BUCKETS_S.forEach((b, i) => {
      acc += m.reuseHistogram[i] ?? 0;
      if (Number.isFinite(b)) pts.push([b, m.allocations > 0 ? acc / m.allocations : 0]);
    });
    return { name: s.label, ...style(s.label), points: pts };
  });
  return lineChart({
    title: `Reuse delay: share of allocations whose address was released less than x ago (${at})`,
    subtitle: subtitle(r),
    xLabel: 'time since the address was released (s, log scale)',
    yLabel: 'share of dynamic allocations',
    xLog: true,
    xTicks: [0.01, 0.1, 1, 10, 60, 600, 3600, 86400],
    yTicks: [0, 0.2, 0.4, 0.6, 0.8, 1],
    fmtX: (v) => (v >= 3600 ? `${v / 3600} h` : v >= 60 ? `${v / 60} min` : `${v} s`),
    series,
  });
}

function intrusionChart(r: Results): string {
  const series = sweepSeries(r, (m) => [m.meanFill, Math.max(m.staticBlockedByDynamicPer1000, 0.1)]);
  return lineChart({
    title: 'Static requests refused because a dynamic allocation held the address, against fill',
    subtitle: subtitle(r),
    xLabel: 'mean fill of the range (measured)',
    yLabel: 'per 1,000 static requests (log; 0 drawn at 0.1)',
    yLog: true,
    yFloor: 0.1,
    xTicks: [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
    yTicks: [0.1, 1, 10, 100, 1000],
    series,
  });
}

main();
