// The strategy simulator: Service churn against one store shared by N API servers, on simulated
// time, deterministic by seed. It drives Range synchronously (one Range per server and range: the
// server's informer view), never the async Allocator, so 10^6 events take seconds.
//
//   arrivals ─▸ server s (uniform) ─▸ policy orders the ranges (as s sees them)
//                 │  allocateNext on s's Range  ──▸ store.create(ip)
//                 │        ▲                            │ AlreadyExists: a collision (one extra
//                 │        └──── retry: the strategy's  │ round trip); the candidate stays marked
//                 │              next choice ◂──────────┘ in s's view, as in the Allocator
//                 ▼
//   store events (add / delete) ─▸ every server's informer, each after its own lag, in store
//   order per server ─▸ Range.allocate / Range.release on that server's view
//
// A server learns of everything — its own creates and deletes included — through its informer,
// as an Allocator fed by a watch does; only the candidate it just chose is marked at once. A
// collision is therefore a create of an address the store holds but the server has not heard of.
//
// Static allocations: a share of the creates ask, by hand, for an address of a range's static
// band (KEP-3070: [first, first + rangeOffset)); they fail when the store holds it. "Intrusion" is
// a dynamic allocation landing in the static band, and the harm it does is a static request
// refused because a dynamic allocation holds the address.
//
// Several ServiceCIDRs: the MetaAllocator's range-selection policy is modelled here (not driven):
// 'upstream' a random order per create, 'ordered' first listed first, 'weighted' random weighted
// by free addresses as the server sees them; the next range only after ErrFull.
import { ErrFull } from '../../adapters/errors.ts';
import { Prefix } from '../../adapters/geometry.ts';
import { seededRandom, type Xoshiro128 } from '../../adapters/random.ts';
import { Range } from '../../adapters/range.ts';
import type { AllocationStrategy } from '../../adapters/strategy.ts';
import type { StrategyOption } from '../../adapters/builtin-strategies.ts';
import { coolDown } from '../../adapters/cool-down.ts';
import { runClock, setRunClock } from './clock.ts';

// ── inputs ──────────────────────────────────────────────────────────────────────────────────

/** A distribution of durations in milliseconds. */
export type Duration =
  | { kind: 'fixed'; ms: number }
  | { kind: 'exponential'; meanMs: number }
  | { kind: 'lognormal'; medianMs: number; sigma: number }
  /** Pareto with shape alpha > 1 (heavy tail), scaled to the given mean. */
  | { kind: 'pareto'; meanMs: number; alpha: number };

/** A deploy of `size` Services spread evenly over `spreadMs`, every `everyMs` (first at everyMs). */
export interface Burst {
  size: number;
  spreadMs: number;
  everyMs: number;
}

/** One scripted create (hand-checkable workloads): at `atMs` on `server`, living `lifeMs`. */
export interface ScriptedCreate {
  atMs: number;
  server: number;
  lifeMs: number;
  /** Ask for this address by hand (a static allocation) instead of allocateNext. */
  ip?: string;
}

export type Policy = 'upstream' | 'ordered' | 'weighted';

export interface Workload {
  name: string;
  /**
   * The offered load the arrival rate was set from: arrivals per second × mean lifetime ÷ the
   * addresses of all ranges (bursts come on top); reported in the measures as given.
   */
  load?: number;
  /** The ServiceCIDRs of one family, in creation order. */
  cidrs: string[];
  policy?: Policy;
  /** API servers sharing the store. */
  servers: number;
  /** Informer lag per event and server. */
  lag: Duration;
  /** Service lifetime. */
  lifetime: Duration;
  /** Mean arrivals per second outside bursts (ignored with a script). */
  ratePerS?: number;
  bursts?: Burst[];
  /** Share of creates that ask for a static-band address by hand (0..1). */
  staticShare?: number;
  /** Simulated creates (arrivals; bursts included), or a script. */
  creates?: number;
  /** Nothing is measured before this simulated time (the store filling up from empty); default 0. */
  warmupMs?: number;
  script?: ScriptedCreate[];
}

/** A strategy under test: a built-in's name, optionally with a time-based cool-down. */
export interface StrategySpec {
  label: string;
  strategy: StrategyOption;
  /** Wrap in coolDown({ ms }) on the simulated clock. */
  coolDownMs?: number;
}

// ── outputs ─────────────────────────────────────────────────────────────────────────────────

/** Reuse-delay histogram buckets: upper bounds in seconds (the last is +∞). */
export const REUSE_BUCKETS_S = [0.01, 0.1, 0.3, 1, 3, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 86400, Number.POSITIVE_INFINITY];

export interface Measures {
  workload: string;
  /** The workload's offered load (Workload.load), null when it gives none (a script). */
  load: number | null;
  /** The range-selection policy across the workload's ranges, null with one range. */
  policy: Policy | null;
  strategy: string;
  seed: number;
  /** Creates asked for by allocateNext / by hand. */
  dynamicCreates: number;
  staticCreates: number;
  /** Successful dynamic allocations. */
  allocations: number;
  /** Dynamic creates that found every range full. */
  full: number;
  /** Failed creates of an address the store held (each one extra round trip to the store). */
  collisions: number;
  collisionsPer1000: number;
  /** Round trips per successful dynamic allocation (1 = no collision). */
  roundTripsPerAllocation: number;
  /** The most attempts one create needed. */
  maxAttempts: number;
  /** Dynamic allocations of an address released earlier, and the delay since that release. */
  reuses: number;
  reuseMedianS: number | null;
  /** Shares of all dynamic allocations whose address was released less than 1 s / 10 s / 60 s before. */
  reuseUnder1s: number;
  reuseUnder10s: number;
  reuseUnder60s: number;
  /** Reuse delays per REUSE_BUCKETS_S bucket. */
  reuseHistogram: number[];
  /** Dynamic allocations placed in a static band, per 1,000. */
  intrusionPer1000: number;
  /** Static requests refused because a dynamic allocation held the address, per 1,000 static requests. */
  staticBlockedByDynamicPer1000: number;
  /** Static requests refused because another static allocation held it, per 1,000 (not the strategy's doing). */
  staticBlockedByStaticPer1000: number;
  /** Time-averaged fill of the store (all ranges), and its peak. */
  meanFill: number;
  peakFill: number;
  /** Per range: share of the dynamic allocations, time-averaged fill. */
  rangeShare: number[];
  rangeMeanFill: number[];
  /** Events processed: arrivals, departures, informer deliveries. */
  events: number;
  /** Wall time of the simulation (not part of the deterministic result). */
  wallMs: number;
}

// ── random draws on the seeded generator ───────────────────────────────────────────────────

class Draws {
  constructor(private readonly rng: Xoshiro128) {}

  /** Uniform in (0, 1). */
  unit(): number {
    return ((this.rng.nextU32() >>> 5) * 67108864 + (this.rng.nextU32() >>> 6) + 0.5) / 9007199254740992;
  }

  below(n: number): number {
    return Math.floor(this.unit() * n);
  }

  normal(): number {
    return Math.sqrt(-2 * Math.log(this.unit())) * Math.cos(2 * Math.PI * this.unit());
  }

  duration(d: Duration): number {
    switch (d.kind) {
      case 'fixed':
        return d.ms;
      case 'exponential':
        return -Math.log(this.unit()) * d.meanMs;
      case 'lognormal':
        return d.medianMs * Math.exp(d.sigma * this.normal());
      case 'pareto': {
        const xm = (d.meanMs * (d.alpha - 1)) / d.alpha;
        return xm / this.unit() ** (1 / d.alpha);
      }
    }
  }
}

/** The mean of a duration distribution in ms. */
export function meanOf(d: Duration): number {
  switch (d.kind) {
    case 'fixed':
      return d.ms;
    case 'exponential':
      return d.meanMs;
    case 'lognormal':
      return d.medianMs * Math.exp((d.sigma * d.sigma) / 2);
    case 'pareto':
      return d.meanMs;
  }
}

// ── the event queue: a binary heap ordered by (time, sequence) ─────────────────────────────

const ARRIVAL = 0;
const DEPARTURE = 1;

interface Ev {
  t: number;
  seq: number;
  kind: number;
  /** ARRIVAL: the script entry (or −1); DEPARTURE: range index. */
  a: number;
  ip: string;
}

class Heap {
  private readonly items: Ev[] = [];
  get size(): number {
    return this.items.length;
  }
  push(e: Ev): void {
    const h = this.items;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Ev {
    const h = this.items;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Ev, b: Ev): boolean {
  return a.t < b.t || (a.t === b.t && a.seq < b.seq);
}

// ── one server's informer: store events delivered in order after a lag ─────────────────────

class Informer {
  private readonly at: number[] = [];
  private readonly add: boolean[] = [];
  private readonly range: number[] = [];
  private readonly ip: string[] = [];
  private head = 0;
  private last = 0;

  constructor(private readonly views: Range[]) {}

  /** Queues a store event for delivery at t + lag (never before the previous one: store order). */
  publish(t: number, lag: number, add: boolean, range: number, ip: string): void {
    const when = Math.max(this.last, t + lag);
    this.last = when;
    this.at.push(when);
    this.add.push(add);
    this.range.push(range);
    this.ip.push(ip);
  }

  /** Applies every event due by `t`; returns how many. */
  deliver(t: number): number {
    let n = 0;
    while (this.head < this.at.length && this.at[this.head]! <= t) {
      const i = this.head++;
      const view = this.views[this.range[i]!]!;
      const ip = this.ip[i]!;
      if (this.add[i]) {
        if (!view.has(ip)) view.allocate(ip);
      } else {
        view.release(ip);
      }
      n++;
    }
    if (this.head > 4096 && this.head * 2 > this.at.length) {
      this.at.splice(0, this.head);
      this.add.splice(0, this.head);
      this.range.splice(0, this.head);
      this.ip.splice(0, this.head);
      this.head = 0;
    }
    return n;
  }
}

// ── the simulation ──────────────────────────────────────────────────────────────────────────

/** The most attempts one create makes before giving up (never reached in the shipped workloads). */
const MAX_ATTEMPTS = 1000;

/** Runs `workload` with `spec` from `seed`: every number but wallMs is a function of the three. */
export function simulate(workload: Workload, spec: StrategySpec, seed: number): Measures {
  const started = performance.now();
  const nServers = workload.servers;
  const prefixes = workload.cidrs.map((c) => Prefix.parse(c));
  const sizes = prefixes.map((p) => Number(p.size));
  const total = sizes.reduce((a, b) => a + b, 0);
  const staticSets = prefixes.map((p) => staticBand(p));
  const policy = workload.policy ?? 'upstream';

  let now = 0;
  setRunClock(now); // the clock of cool-downs, the built-ins' and yours (clock.ts)
  const strategy: StrategyOption =
    spec.coolDownMs !== undefined ? coolDown(spec.strategy, { ms: spec.coolDownMs, now: runClock }) : spec.strategy;

  const draws = new Draws(seededRandom(seed)); // arrivals, lifetimes, servers, static picks
  const lagDraws = new Draws(seededRandom(seed + 1));
  const policyDraws = new Draws(seededRandom(seed + 2));
  const views: Range[][] = [];
  const informers: Informer[] = [];
  for (let s = 0; s < nServers; s++) {
    const mine = workload.cidrs.map((c, r) => new Range(c, { strategy, random: seededRandom(seed * 1000 + 97 * s + r + 3) }));
    views.push(mine);
    informers.push(new Informer(mine));
  }

  // the store: address → 'd' (dynamic) or 's' (static), per range; and when each was last released
  const store = prefixes.map(() => new Map<string, 'd' | 's'>());
  const releasedAt = new Map<string, number>();
  let stored = 0;

  const m = emptyMeasures(workload, spec.label, seed);
  const reuseDelays: number[] = [];
  const rangeAllocs = new Array<number>(workload.cidrs.length).fill(0);
  const rangeFillArea = new Array<number>(workload.cidrs.length).fill(0);
  let fillArea = 0;
  let base: WarmupCounts | null = null;

  const heap = new Heap();
  let seq = 0;
  const script = workload.script;
  const creates = script ? script.length : (workload.creates ?? 0);
  // Arrivals: a script, or a Poisson stream plus bursts, generated up front (deterministic).
  // The run ends at the last arrival: the departures after it would only drain the store.
  let end = 0;
  if (script) {
    script.forEach((c, i) => heap.push({ t: c.atMs, seq: seq++, kind: ARRIVAL, a: i, ip: '' }));
    end = script.reduce((a, c) => Math.max(a, c.atMs), 0);
  } else {
    const times = arrivalTimes(workload, draws, creates);
    for (const t of times) heap.push({ t, seq: seq++, kind: ARRIVAL, a: -1, ip: '' });
    end = times.length > 0 ? times[times.length - 1]! : 0;
  }

  const publish = (t: number, add: boolean, r: number, ip: string): void => {
    for (let s = 0; s < nServers; s++) informers[s]!.publish(t, lagDraws.duration(workload.lag), add, r, ip);
  };

  const order = new Array<number>(workload.cidrs.length);
  const rangeOrder = (s: number): number[] => {
    const n = order.length;
    for (let i = 0; i < n; i++) order[i] = i;
    if (policy === 'ordered' || n === 1) return order;
    if (policy === 'upstream') {
      for (let i = n - 1; i > 0; i--) {
        const j = policyDraws.below(i + 1);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      return order;
    }
    // weighted: successive draws weighted by free addresses as server s sees them
    const left = order.slice();
    const out: number[] = [];
    while (left.length > 0) {
      const w = left.map((r) => sizes[r]! - views[s]![r]!.used());
      const sum = w.reduce((a, b) => a + b, 0);
      let pick = left.length - 1;
      if (sum > 0) {
        let u = policyDraws.unit() * sum;
        for (let i = 0; i < left.length; i++) {
          u -= w[i]!;
          if (u < 0) {
            pick = i;
            break;
          }
        }
      }
      out.push(left[pick]!);
      left.splice(pick, 1);
    }
    return out;
  };

  const warmup = workload.warmupMs ?? 0;
  let measuring = warmup <= 0;
  let lastFillT = warmup;
  while (heap.size > 0) {
    const e = heap.pop();
    if (e.t > end) break;
    if (!measuring && e.t >= warmup) {
      measuring = true;
      base = countsOf(m); // what the warm-up counted, subtracted at the end
    }
    // time-weighted fill from the end of the warm-up up to now
    if (measuring) {
      const dt = e.t - lastFillT;
      if (dt > 0) {
        fillArea += (stored / total) * dt;
        for (let r = 0; r < store.length; r++) rangeFillArea[r]! += (store[r]!.size / sizes[r]!) * dt;
        lastFillT = e.t;
      }
    }
    now = e.t;
    setRunClock(now);
    for (let s = 0; s < nServers; s++) m.events += informers[s]!.deliver(now);
    m.events++;
    if (e.kind === DEPARTURE) {
      store[e.a]!.delete(e.ip);
      stored--;
      releasedAt.set(e.ip, now);
      publish(now, false, e.a, e.ip);
      continue;
    }
    // an arrival
    const entry = e.a >= 0 ? script![e.a]! : null;
    const s = entry ? entry.server : draws.below(nServers);
    const life = entry ? entry.lifeMs : draws.duration(workload.lifetime);
    const wantsStatic = entry ? entry.ip !== undefined : draws.unit() < (workload.staticShare ?? 0);
    if (wantsStatic) {
      m.staticCreates++;
      const [r, ip] = entry ? [rangeOf(prefixes, entry.ip!), entry.ip!] : pickStatic(staticSets, draws);
      if (r < 0) continue; // no range has a static band
      const holder = store[r]!.get(ip);
      if (holder === 'd') m.staticBlockedByDynamicPer1000++;
      else if (holder === 's') m.staticBlockedByStaticPer1000++;
      else {
        store[r]!.set(ip, 's');
        stored++;
        if (measuring && stored / total > m.peakFill) m.peakFill = stored / total;
        publish(now, true, r, ip);
        heap.push({ t: now + life, seq: seq++, kind: DEPARTURE, a: r, ip });
      }
      continue;
    }
    m.dynamicCreates++;
    let attempts = 0;
    let placed = false;
    for (const r of rangeOrder(s)) {
      const view = views[s]![r]!;
      while (attempts < MAX_ATTEMPTS) {
        let ip: string;
        try {
          ip = view.allocateNext();
        } catch (err) {
          if (err instanceof ErrFull) break; // this range is full as s sees it: the next one
          throw err;
        }
        attempts++;
        if (store[r]!.has(ip)) {
          m.collisions++; // the create fails: AlreadyExists; the candidate stays marked in s's view
          continue;
        }
        store[r]!.set(ip, 'd');
        stored++;
        m.allocations++;
        if (measuring) rangeAllocs[r]!++;
        if (staticSets[r]!.has(ip)) m.intrusionPer1000++;
        const released = releasedAt.get(ip);
        if (released !== undefined && measuring) reuseDelays.push(now - released);
        publish(now, true, r, ip);
        heap.push({ t: now + life, seq: seq++, kind: DEPARTURE, a: r, ip });
        placed = true;
        break;
      }
      if (placed || attempts >= MAX_ATTEMPTS) break;
    }
    if (!placed) m.full++;
    if (!measuring) continue;
    if (attempts > m.maxAttempts) m.maxAttempts = attempts;
    if (stored / total > m.peakFill) m.peakFill = stored / total;
  }
  if (base !== null) {
    // drop what the warm-up counted
    m.dynamicCreates -= base.dynamicCreates;
    m.staticCreates -= base.staticCreates;
    m.allocations -= base.allocations;
    m.collisions -= base.collisions;
    m.full -= base.full;
    m.intrusionPer1000 -= base.intrusion;
    m.staticBlockedByDynamicPer1000 -= base.blockedByDynamic;
    m.staticBlockedByStaticPer1000 -= base.blockedByStatic;
  }
  for (const vs of views) for (const v of vs) v.destroy();

  const span = lastFillT > warmup ? lastFillT - warmup : 1;
  m.meanFill = fillArea / span;
  m.rangeMeanFill = rangeFillArea.map((a) => a / span);
  m.rangeShare = rangeAllocs.map((a) => (m.allocations > 0 ? a / m.allocations : 0));
  m.collisionsPer1000 = per1000(m.collisions, m.allocations);
  m.roundTripsPerAllocation = m.allocations > 0 ? (m.allocations + m.collisions) / m.allocations : 0;
  m.intrusionPer1000 = per1000(m.intrusionPer1000, m.allocations);
  m.staticBlockedByDynamicPer1000 = per1000(m.staticBlockedByDynamicPer1000, m.staticCreates);
  m.staticBlockedByStaticPer1000 = per1000(m.staticBlockedByStaticPer1000, m.staticCreates);
  m.reuses = reuseDelays.length;
  reuseDelays.sort((a, b) => a - b);
  m.reuseMedianS = reuseDelays.length > 0 ? reuseDelays[reuseDelays.length >> 1]! / 1000 : null;
  const under = (ms: number): number => (m.allocations > 0 ? countBelow(reuseDelays, ms) / m.allocations : 0);
  m.reuseUnder1s = under(1000);
  m.reuseUnder10s = under(10_000);
  m.reuseUnder60s = under(60_000);
  let from = 0;
  m.reuseHistogram = REUSE_BUCKETS_S.map((b) => {
    const upto = b === Number.POSITIVE_INFINITY ? reuseDelays.length : countBelow(reuseDelays, b * 1000);
    const n = upto - from;
    from = upto;
    return n;
  });
  m.wallMs = performance.now() - started;
  return m;
}

/** The counters as the warm-up left them (subtracted at the end). */
interface WarmupCounts {
  dynamicCreates: number;
  staticCreates: number;
  allocations: number;
  collisions: number;
  full: number;
  intrusion: number;
  blockedByDynamic: number;
  blockedByStatic: number;
}

function countsOf(m: Measures): WarmupCounts {
  return {
    dynamicCreates: m.dynamicCreates,
    staticCreates: m.staticCreates,
    allocations: m.allocations,
    collisions: m.collisions,
    full: m.full,
    intrusion: m.intrusionPer1000, // a count until the end turns it into a rate
    blockedByDynamic: m.staticBlockedByDynamicPer1000,
    blockedByStatic: m.staticBlockedByStaticPer1000,
  };
}

function per1000(n: number, of: number): number {
  return of > 0 ? (1000 * n) / of : 0;
}

/** Entries of the ascending `sorted` below `x`. */
function countBelow(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function emptyMeasures(workload: Workload, strategy: string, seed: number): Measures {
  const ranges = workload.cidrs.length;
  return {
    workload: workload.name,
    load: workload.load ?? null,
    policy: ranges > 1 ? (workload.policy ?? 'upstream') : null,
    strategy,
    seed,
    dynamicCreates: 0,
    staticCreates: 0,
    allocations: 0,
    full: 0,
    collisions: 0,
    collisionsPer1000: 0,
    roundTripsPerAllocation: 0,
    maxAttempts: 0,
    reuses: 0,
    reuseMedianS: null,
    reuseUnder1s: 0,
    reuseUnder10s: 0,
    reuseUnder60s: 0,
    reuseHistogram: [],
    intrusionPer1000: 0,
    staticBlockedByDynamicPer1000: 0,
    staticBlockedByStaticPer1000: 0,
    meanFill: 0,
    peakFill: 0,
    rangeShare: new Array(ranges).fill(0),
    rangeMeanFill: new Array(ranges).fill(0),
    events: 0,
    wallMs: 0,
  };
}

/** The canonical text of every address of a prefix's static band (at most 256). */
function staticBand(p: Prefix): Set<string> {
  const out = new Set<string>();
  if (p.rangeOffset === 0) return out;
  // a one-off strategy through the plug-in interface: the lowest free offset of the static band
  const lowestStatic: AllocationStrategy = {
    name: 'lowest static',
    forRange: (v) => ({
      choose(o) {
        if (!v.index.nextFree(0, 0, 0, 0, 0, v.rangeOffset - 1)) return false;
        o.hi = v.index.resultHi;
        o.lo = v.index.resultLo;
        return true;
      },
    }),
  };
  const r = new Range(p.cidr, { strategy: lowestStatic });
  for (const ip of r.allocateMany(p.rangeOffset)) out.add(ip);
  r.destroy();
  return out;
}

/** A uniform static-band address over all ranges' static bands: [range, ip], or [−1, ''] when none. */
function pickStatic(sets: Set<string>[], draws: Draws): [number, string] {
  const total = sets.reduce((a, s) => a + s.size, 0);
  if (total === 0) return [-1, ''];
  let k = draws.below(total);
  for (let r = 0; r < sets.length; r++) {
    const s = sets[r]!;
    if (k < s.size) {
      let i = 0;
      for (const ip of s) if (i++ === k) return [r, ip];
    }
    k -= s.size;
  }
  return [-1, ''];
}

function rangeOf(prefixes: Prefix[], ip: string): number {
  for (let r = 0; r < prefixes.length; r++) {
    const probe = new Range(prefixes[r]!.cidr);
    try {
      probe.checkInRange(ip);
      return r;
    } catch {
      // not this one
    } finally {
      probe.destroy();
    }
  }
  return -1;
}

/** Arrival times: a Poisson stream of rate ratePerS, plus bursts; the first `creates` in time order. */
function arrivalTimes(w: Workload, draws: Draws, creates: number): number[] {
  const rate = (w.ratePerS ?? 0) / 1000; // per ms
  const out: number[] = [];
  const bursts = w.bursts ?? [];
  // generate enough: stream and bursts up to the time the stream alone would reach `creates`
  let t = 0;
  if (rate > 0) {
    while (out.length < creates) {
      t += -Math.log(draws.unit()) / rate;
      out.push(t);
    }
  }
  const horizon = rate > 0 ? t : Number.POSITIVE_INFINITY;
  for (const b of bursts) {
    for (let start = b.everyMs; start <= horizon && out.length < 4 * creates + b.size; start += b.everyMs) {
      for (let i = 0; i < b.size; i++) out.push(start + (b.spreadMs * i) / b.size);
      if (horizon === Number.POSITIVE_INFINITY && out.length >= creates) break;
    }
  }
  out.sort((a, b) => a - b);
  return out.slice(0, creates);
}
