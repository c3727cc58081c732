// The workloads of `npm run bench:strategies` (bench/strategies/run.ts), as the simulator
// (sim.ts) takes them. Each is set by its offered load — arrivals per second × mean lifetime ÷
// the addresses of its ranges — from which its arrival rate follows; the load and, across several
// ServiceCIDRs, the policy are reported beside the measures as numbers and names, so a script
// reading the JSON need not parse a workload's name.
import { Prefix } from '../../adapters/geometry.ts';
import { type Duration, meanOf, type Policy, type Workload } from './sim.ts';

/** Every workload of a run, by section of the results. */
export interface Workloads {
  sweep: Workload[];
  burst: Workload;
  serviceCIDRs: Workload[];
  ipv6: Workload;
}

/** The ServiceCIDR policies compared on several ranges, in the results' order. */
export const POLICIES: readonly Policy[] = ['upstream', 'ordered', 'weighted'];

const LAG = { kind: 'lognormal', medianMs: 100, sigma: 1 } as const;

/** The workloads of a full run, or of a quick one (a tenth of the allocations, three loads). */
export function workloads(quick: boolean): Workloads {
  const scale = quick ? 0.1 : 1;
  const loads = quick ? [0.5, 0.9, 0.99] : [0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99];
  return {
    sweep: loads.map((load) => sweep(load, scale)),
    burst: burst(scale),
    serviceCIDRs: POLICIES.map((policy) => serviceCIDRs(policy, scale)),
    ipv6: ipv6(scale),
  };
}

/** The usable addresses of `cidrs`, together. */
function addressesOf(cidrs: readonly string[]): number {
  return cidrs.reduce((n, c) => n + Number(Prefix.parse(c).size), 0);
}

/** The arrival rate (per second) that offers `load` to `cidrs` with `lifetime`. */
function rateFor(load: number, cidrs: readonly string[], lifetime: Duration): number {
  return (load * addressesOf(cidrs)) / (meanOf(lifetime) / 1000);
}

/**
 * The warm-up: `lifetimes` mean lifetimes (the store near its steady state), but at most 30 % of
 * the run (`creates` at `ratePerS`; quick runs are short).
 */
function warmup(lifetime: Duration, lifetimes: number, creates: number, ratePerS: number): number {
  return Math.min(lifetimes * meanOf(lifetime), (0.3 * creates * 1000) / ratePerS);
}

function sweep(load: number, scale: number): Workload {
  const cidrs = ['10.96.0.0/22'];
  const lifetime = { kind: 'exponential', meanMs: 600_000 } as const;
  const ratePerS = rateFor(load, cidrs, lifetime);
  const creates = Math.round(30_000 * scale);
  return {
    name: `load ${load}`,
    load,
    cidrs,
    servers: 3,
    lag: LAG,
    lifetime,
    ratePerS,
    staticShare: 0.02,
    creates,
    warmupMs: warmup(lifetime, 3, creates, ratePerS),
  };
}

/** Base load 0.5 (the load field: the bursts come on top of it). */
function burst(scale: number): Workload {
  const cidrs = ['10.96.0.0/20'];
  const lifetime = { kind: 'pareto', meanMs: 3_600_000, alpha: 1.5 } as const;
  const ratePerS = rateFor(0.5, cidrs, lifetime);
  const creates = Math.round(40_000 * scale);
  return {
    name: 'deploy burst',
    load: 0.5,
    cidrs,
    servers: 3,
    lag: LAG,
    lifetime,
    ratePerS,
    bursts: [{ size: 1000, spreadMs: 10_000, everyMs: 7_200_000 }],
    staticShare: 0.02,
    creates,
    warmupMs: warmup(lifetime, 2, creates, ratePerS),
  };
}

function serviceCIDRs(policy: Policy, scale: number): Workload {
  const cidrs = ['10.96.0.0/24', '10.96.1.0/24', '10.100.0.0/23'];
  const lifetime = { kind: 'exponential', meanMs: 600_000 } as const;
  const ratePerS = rateFor(0.8, cidrs, lifetime);
  const creates = Math.round(30_000 * scale);
  return {
    name: `ServiceCIDRs ${policy}`,
    load: 0.8,
    cidrs,
    policy,
    servers: 3,
    lag: LAG,
    lifetime,
    ratePerS,
    staticShare: 0.02,
    creates,
    warmupMs: warmup(lifetime, 3, creates, ratePerS),
  };
}

/** 20,000 live Services on a /64: a load of about 10^−15, where legacy-bitmap's 65,535 cap shows. */
function ipv6(scale: number): Workload {
  const cidrs = ['fd00:10:96::/64'];
  const lifetime = { kind: 'exponential', meanMs: 600_000 } as const;
  const load = 20_000 / addressesOf(cidrs);
  const ratePerS = rateFor(load, cidrs, lifetime);
  const creates = Math.round(100_000 * scale);
  return {
    name: 'IPv6 /64, 20,000 live',
    load,
    cidrs,
    servers: 3,
    lag: LAG,
    lifetime,
    ratePerS,
    staticShare: 0,
    creates,
    warmupMs: warmup(lifetime, 2, creates, ratePerS),
  };
}
