// Timing. Two drivers, one result shape:
//
//   sync  cases → the `benchmark` package (Benchmark.js 2.1.4) drives; each call of the case runs
//                 `inner` operations in a loop, so its 9–17 ns per-call overhead is spread thin.
//                 ns/op per sample = Benchmark's per-cycle mean / inner.
//   async cases → our own loop: a sample = N sequential awaits timed with process.hrtime.bigint();
//                 Benchmark's `defer: true` adds a timer turn and a deferred object per call,
//                 which would swamp sub-microsecond operations.
//
// Both first time a probe; when even the minimum number of samples would exceed the case's
// budget the case is not run and is reported as skipped with the budget and the estimate.
//
// Both return their raw samples (ns/op each), as go-seed's self-timed loop does, so that a case
// measured in rounds (measureInRounds) is summarised once, over every round's samples.
import Benchmark from 'benchmark';
import process from 'node:process';
import type { RoundGate } from './steady.ts';

export interface Measurement {
  /** Median ns per operation over the samples. */
  nsPerOp: number;
  /** Relative margin of error of the mean (%; Benchmark.js definition: t(0.975, df) · sem / mean). */
  rme: number;
  /** Robust spread: median absolute deviation / median (%). */
  spread: number;
  samples: number;
  /** Operations timed per sample. */
  opsPerSample: number;
}

export interface Skipped {
  skipped: string;
}

/** One stretch of timing, unsummarised: ns per operation of each sample. */
export interface Samples {
  nsPerOp: number[];
  /** Operations timed per sample. */
  opsPerSample: number;
}

export interface Budget {
  /** Time the case may take, ms. */
  budgetMs: number;
  /** Minimum samples worth reporting. */
  minSamples: number;
  /** Stop after this many samples (async). */
  maxSamples: number;
  /** Target duration of one async sample, ms. */
  sampleMs: number;
  /** Benchmark.js maxTime (s) for sync cases, and its minTime per cycle (s). */
  maxTime: number;
  minTime: number;
  /** Warm-up before sizing and timing, ms (see warmUp). */
  warmMs: number;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** Two-sided 95 % Student t quantiles for df = 1..30 (as Benchmark.js uses), then 1.96. */
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086,
  2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

export function summarize(nsSamples: readonly number[], opsPerSample: number): Measurement {
  const n = nsSamples.length;
  const med = median(nsSamples);
  const mean = nsSamples.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? nsSamples.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1) : 0;
  const sem = Math.sqrt(variance / n);
  const t = n > 1 ? (T95[n - 2] ?? 1.96) : 0;
  const mad = median(nsSamples.map((x) => Math.abs(x - med)));
  return {
    nsPerOp: med,
    rme: mean > 0 ? (t * sem * 100) / mean : 0,
    spread: med > 0 ? (mad * 100) / med : 0,
    samples: n,
    opsPerSample,
  };
}

/** Nanoseconds from an arbitrary start: the bench's clock (a test passes a clock of its own). */
export type Clock = () => bigint;

const hrtime: Clock = () => process.hrtime.bigint();

function fmtMs(ns: number): string {
  return ns >= 1e9 ? `${(ns / 1e9).toFixed(1)} s` : ns >= 1e6 ? `${(ns / 1e6).toFixed(1)} ms` : `${(ns / 1e3).toFixed(1)} µs`;
}

function overBudget(perOpNs: number, b: Budget): Skipped | undefined {
  const needMs = (perOpNs * b.minSamples) / 1e6;
  if (needMs > b.budgetMs) {
    return { skipped: `skipped (over budget): ~${fmtMs(perOpNs)}/op × ${b.minSamples} samples > budget ${b.budgetMs} ms` };
  }
  return undefined;
}

/**
 * Runs the case for the budget's warmMs in batches that double, so its code is
 * optimised before anything is sized or timed; returns the ns per operation of the last batch.
 * Why by time: a count sized from the first call (cold, often 100× the warm cost) warmed for a
 * fraction of 30 ms, and the first case of a process, or of an implementation after another, was
 * then timed on unoptimised code — and a sync case's inner loop sized for that cost.
 */
async function warmUp(run: (n: number) => Promise<void> | void, b: Budget, nowNs: Clock): Promise<number> {
  const warmNs = b.warmMs * 1e6;
  let spent = 0;
  let perOp = 0;
  for (let batch = 1; spent < warmNs; batch *= 2) {
    const t0 = nowNs();
    await run(batch);
    const took = Number(nowNs() - t0);
    spent += took;
    perOp = took / batch;
  }
  return perOp;
}

/**
 * The ns per operation of the case, warmed up, or why it is skipped. The first call is cold
 * (lazy compilation, a code path used for the first time): up to 100× the warm cost and often
 * over a millisecond, so it only rules out cases clearly over budget, and a second call decides
 * whether the case is slow enough (≥ 1 ms per operation) to be timed without a warm-up. Deciding
 * on the first call alone skipped the warm-up of cases that were merely cold and sized their
 * samples for the cold cost: an async case was then timed in a few milliseconds of unoptimised
 * code, 5–20× slower than the same code a second later (a few cases per run, different each time).
 * `decides` is false after a case's first round: the case was found to fit its budget then, and
 * a later round that probes slower (the machine in a slow phase) still runs.
 */
async function probe(run: (n: number) => Promise<void> | void, b: Budget, decides: boolean, nowNs: Clock): Promise<number | Skipped> {
  let t0 = nowNs();
  await run(1);
  let perOp = Number(nowNs() - t0);
  if (decides && perOp * b.minSamples > b.budgetMs * 1e6 * 4) return overBudget(perOp, b)!; // clearly over: do not even warm up
  if (perOp >= 1e6) {
    t0 = nowNs();
    await run(1);
    perOp = Number(nowNs() - t0);
  }
  if (perOp < 1e6) perOp = await warmUp(run, b, nowNs);
  return (decides && overBudget(perOp, b)) || perOp;
}

/**
 * Times `run(n)` (n operations per call, synchronous) with Benchmark.js. `run` must leave the
 * subject as it found it (e.g. allocate then release), so any number of calls measures the same state.
 */
export async function sampleSync(run: (n: number) => void, b: Budget, decides = true): Promise<Samples | Skipped> {
  const perOp = await probe(run, b, decides, hrtime);
  if (typeof perOp !== 'number') return perOp;
  // ≥ 2 µs per call keeps Benchmark's call overhead under 1 %.
  const inner = Math.max(1, Math.min(1 << 14, Math.ceil(2000 / Math.max(perOp, 0.1))));
  const fn = (): void => run(inner);
  const bench = new Benchmark(fn, {
    maxTime: Math.min(b.maxTime, b.budgetMs / 1000),
    minTime: b.minTime,
    minSamples: b.minSamples,
    initCount: 1,
  });
  bench.run();
  if (bench.error) throw bench.error;
  return { nsPerOp: bench.stats.sample.map((s: number) => (s * 1e9) / inner), opsPerSample: inner * bench.count };
}

/** Times `run(n)` (n sequential awaited operations) with our own loop of samples, on `nowNs`. */
export async function sampleAsync(
  run: (n: number) => Promise<void>,
  b: Budget,
  decides = true,
  nowNs: Clock = hrtime,
): Promise<Samples | Skipped> {
  const perOp = await probe(run, b, decides, nowNs);
  if (typeof perOp !== 'number') return perOp;
  const n = Math.max(1, Math.round((b.sampleMs * 1e6) / perOp));
  const deadline = Number(nowNs()) + b.budgetMs * 1e6;
  const samples: number[] = [];
  while (samples.length < b.maxSamples) {
    const s = nowNs();
    await run(n);
    const e = nowNs();
    samples.push(Number(e - s) / n);
    if (samples.length >= b.minSamples && Number(e) > deadline) break;
  }
  return { nsPerOp: samples, opsPerSample: n };
}

const summarized = (s: Samples | Skipped): Measurement | Skipped => ('skipped' in s ? s : summarize(s.nsPerOp, s.opsPerSample));

/** sampleSync in one stretch, summarised. */
export async function measureSync(run: (n: number) => void, b: Budget): Promise<Measurement | Skipped> {
  return summarized(await sampleSync(run, b));
}

/** sampleAsync in one stretch, summarised. */
export async function measureAsync(run: (n: number) => Promise<void>, b: Budget, nowNs: Clock = hrtime): Promise<Measurement | Skipped> {
  return summarized(await sampleAsync(run, b, true, nowNs));
}

/** The part of a case's budget one of `rounds` rounds gets: its time and its samples divided. */
export function roundShare(b: Budget, rounds: number): Budget {
  return {
    ...b,
    budgetMs: b.budgetMs / rounds,
    maxTime: b.maxTime / rounds,
    minSamples: Math.ceil(b.minSamples / rounds),
    maxSamples: Math.ceil(b.maxSamples / rounds),
  };
}

/** One implementation's part in a case that measureInRounds times. */
export interface Contender {
  /** The case's budget for this implementation; each round gets roundShare(budget, rounds). */
  budget: Budget;
  /** Times one round on `share`; `decides` on the first round only (see probe). */
  sample(share: Budget, decides: boolean): Promise<Samples | Skipped>;
}

/** A contender's result over its rounds; `slowRounds` counts rounds kept although the gate read slow around them. */
export type RoundsOutcome = (Measurement & { slowRounds: number }) | Skipped | { error: unknown };

/**
 * Times one case on every contender in `rounds` rounds, in alternating order (A B C, then C B A,
 * then A B C, …), each round on its share of the budget; a contender's result summarises the
 * samples of all its rounds. Machines with phases of minutes in which the same loop runs 2–3×
 * slower (shared and virtual ones) would otherwise make a ratio between two implementations
 * depend on which one was timed in which phase; interleaved, a slow phase hits them alike.
 * With a `gate` (bench/steady.ts), a round that slow readings bracket is timed again (steadyRound).
 * A contender skipped (over budget) on its first round, or one that throws, is not run again:
 * its outcome is the skip or `{ error }`, and the others go on.
 */
export async function measureInRounds(contenders: readonly Contender[], rounds: number, gate?: RoundGate): Promise<RoundsOutcome[]> {
  const samples: number[][] = contenders.map(() => []);
  const ops = contenders.map(() => 0);
  const slowRounds = contenders.map(() => 0);
  const settled: (Skipped | { error: unknown } | undefined)[] = contenders.map(() => undefined);
  for (let round = 0; round < rounds; round++) {
    const order = contenders.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      if (settled[i]) continue;
      const c = contenders[i];
      try {
        const { s, slow } = await steadyRound(c, roundShare(c.budget, rounds), round === 0, gate);
        if ('skipped' in s) settled[i] = rounds > 1 ? { skipped: `${s.skipped} per round, ${rounds} rounds` } : s;
        else {
          samples[i].push(...s.nsPerOp);
          ops[i] += s.opsPerSample * s.nsPerOp.length;
          if (slow) slowRounds[i]++;
        }
      } catch (error) {
        settled[i] = { error };
      }
    }
  }
  return contenders.map(
    (_, i) => settled[i] ?? { ...summarize(samples[i], Math.round(ops[i] / samples[i].length)), slowRounds: slowRounds[i] },
  );
}

/**
 * One round of `c`: waits for a usual reading of the gate, times the round, reads the gate again;
 * when either reading was slow, times the round again (its samples dropped), up to the gate's
 * maxRetries, then keeps it as `slow`. Without a gate, one round as it comes.
 */
async function steadyRound(
  c: Contender,
  share: Budget,
  decides: boolean,
  gate: RoundGate | undefined,
): Promise<{ s: Samples | Skipped; slow: boolean }> {
  for (let attempt = 0; ; attempt++) {
    const before = gate ? await gate.waitSteady() : true;
    const s = await c.sample(share, decides);
    if (!gate || 'skipped' in s) return { s, slow: false };
    const after = gate.steady();
    if (before && after) {
      gate.rounds++;
      return { s, slow: false };
    }
    if (attempt === gate.maxRetries) {
      gate.rounds++;
      gate.kept++;
      return { s, slow: true };
    }
    gate.retried++;
  }
}

/** Times a whole operation `once()` (e.g. a warm start) `reps` times; ns per unit = total / units. */
export async function measureRepeated(once: () => Promise<void> | void, units: number, reps: number): Promise<Measurement> {
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) {
    const s = hrtime();
    await once();
    samples.push(Number(hrtime() - s) / units);
  }
  return summarize(samples, units);
}
