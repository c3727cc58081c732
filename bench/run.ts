// The benchmark suite: every implementation side by side on the same ranges, fills and seeds.
//
//   npm run bench                 full grid (≈ see bench/README.md for durations)
//   npm run bench:quick           reduced grid (< 2 min)
//   npm run bench:quick -- --smoke   the quick grid with minimal samples (CI: it must finish)
//   npm run bench:deno            the full grid under Deno
//   … -- --filter <regex>         only cases whose id matches, e.g. "allocator|reference", "/64",
//                                 "boundary", "allocateNext.*99.9" (id: "<impl> <family> <prefix> <op> <fill>")
//   … -- --out <path-prefix>      where to write <prefix>.{json,md,svg} and <prefix>.targets.md
//   … -- --cpu fastest|<n>        pin the timing threads (ours and Go's) to the fastest CPU of a
//                                 probe, checked before each case, or to CPU n (default: not
//                                 pinned, the CPUs' speeds stated; bench/cpu.ts says why)
//   … -- --baseline <git-ref>     add allocator@<ref>, store@<ref>, range@<ref>, core@<ref> columns:
//                                 that commit's implementation beside this one (bench/baseline.ts)
//
// A full run writes bench/results/latest.{json,md,svg} and latest.targets.md (the targets: the
// project's goals, kept out of latest.md, which ships; `npx tsx bench/render.ts` writes both .md
// files again from the .json); --quick/--smoke write to the OS temp directory unless --out is
// given, so a CI smoke run never overwrites the committed results.
//
// Per series (one range, one fill order) the harness grows the fill level by level: the MemoryStore
// of each implementation that reads one (`reference`, `allocator`, `store`) gets the new records,
// each synchronous implementation gets the new offsets, nothing of that timed; then each case runs
// on every implementation in interleaved rounds (bench/measure.ts measureInRounds), all of the
// level's runners alive at once. Progress goes to stderr, the table to stdout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { runBoundary, runStoreFloor } from './boundary.ts';
import { runPolicies } from './policies.ts';
import { conditions, getGc, liveJsBytes } from './conditions.ts';
import { checkOutPrefix, HelpRequested, readArgs, UsageError } from './args.ts';
import { BenchCpu } from './cpu.ts';
import { SteadyGate } from './steady.ts';
import { organicOrder, randomU64Pairs, uniformOrder, freeOffsets } from './fills.ts';
import { IMPL_NAMES, type Impl, type Runner, type Runners, type SeriesCtx, type SeriesImpl } from './impl.ts';
import { IMPLS } from './impls.ts';
import {
  measureInRounds,
  type RoundsOutcome,
  sampleAsync,
  sampleSync,
  summarize,
  type Budget,
  type Contender,
  type Measurement,
  type Skipped,
} from './measure.ts';
import { RANGES, offsetText, rangeById, type RangeSpec } from './ranges.ts';
import { OPS, caseKey, fillLabel, textTable, targetLines, writeMarkdown, type Results, type Row } from './report.ts';
import { GO_NOTE } from './go.ts';
import { chartSvg } from './svg.ts';
import { BASELINE_IMPLS, baselineCommit, prepareBaseline, type Baseline } from './baseline.ts';
import { Seeded } from './seeded.ts';
import { STOP_SIGNALS, type StopSignal, stopSignalOf } from './stop.ts';

type OpKey = 'nextRelease' | 'full' | 'allocRelease' | 'has' | 'warm';

interface Level {
  /** Addresses allocated at this level (prefix length of the series order). */
  count: number;
  fill: number | null;
  kind: Row['fillKind'];
  ops: OpKey[];
}

interface SeriesPlan {
  range: RangeSpec;
  order: 'uniform' | 'organic' | 'u64';
  levels: Level[];
  seed: number;
  /** Set when the series holds no MemoryStore (too many records for the bench's heap): why. */
  storeless?: string;
}

/** Implementations that read a MemoryStore (a --baseline's included). */
const readsStore = (name: string): boolean => /^(reference|allocator|store)(@|$)/.test(name);

// ---------------------------------------------------------------------------------------------
// Arguments and modes.

const USAGE = '[--quick | --smoke] [--filter <regex>] [--out <path-prefix>] [--cpu fastest|<n>] [--baseline <git-ref>]';
/** The arguments, or exit 2 with one line: a misspelt option must not start a full run. */
const { args, filterRe } = (() => {
  try {
    const args = readArgs(
      process.argv.slice(2),
      {
        quick: { type: 'boolean' },
        smoke: { type: 'boolean' },
        filter: { type: 'string' },
        out: { type: 'string' },
        cpu: { type: 'string' },
        baseline: { type: 'string' },
      },
      USAGE,
    );
    let filterRe: RegExp | undefined;
    try {
      filterRe = args.filter ? new RegExp(args.filter) : undefined;
    } catch (e) {
      throw new UsageError(`--filter ${args.filter}: ${e instanceof Error ? e.message : String(e)}`);
    }
    return { args, filterRe };
  } catch (e) {
    if (e instanceof HelpRequested) {
      process.stdout.write(`usage: npm run bench -- ${e.message}\n(bench/README.md says what each option does)\n`);
      process.exit(0);
    }
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`bench: ${e.message}\n`);
    process.exit(2);
  }
})();
const smoke = args.smoke === true;
const quick = args.quick === true || smoke;
const mode = smoke ? 'smoke' : quick ? 'quick' : 'full';
const filterText = args.filter;
const baselineRef = args.baseline;
const matches = (id: string): boolean => !filterRe || filterRe.test(id);
const here = path.dirname(fileURLToPath(import.meta.url));
const outPrefix =
  args.out ?? (mode === 'full' && !filterText ? path.join(here, 'results', 'latest') : path.join(os.tmpdir(), 'ipallocator-bench', mode));
try {
  checkOutPrefix(outPrefix, args.out !== undefined);
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  process.stderr.write(`bench: ${e.message}\n`);
  process.exit(2);
}

// Ctrl-C, a kill or a closed terminal ends the run through process.exit, so that the 'exit'
// handlers remove the temporary directories (the Go program's build and fill files, a --baseline's
// exported tree): Node's default for these signals ends the process without running them. The
// results are written at the end of a run only, so an interrupted run writes none.
function stopped(signal: StopSignal): never {
  process.stderr.write(`\nbench: stopped by ${signal}; no results written\n`);
  process.exit(128 + STOP_SIGNALS[signal]);
}
for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) process.once(signal, () => stopped(signal));

// A case's budget is per implementation and split into `rounds` interleaved rounds (measureInRounds).
const BUDGETS: Record<string, { sync: Budget; async: Budget; heavy: Budget; warmReps: number; rounds: number }> = {
  full: {
    sync: { budgetMs: 4000, minSamples: 5, maxSamples: 100, sampleMs: 0, maxTime: 0.8, minTime: 0.05, warmMs: 30 },
    async: { budgetMs: 2500, minSamples: 5, maxSamples: 40, sampleMs: 40, maxTime: 0, minTime: 0, warmMs: 30 },
    // "range is full" and the scans at 99.9 %: a single op may take a second for `reference`
    heavy: { budgetMs: 12000, minSamples: 3, maxSamples: 10, sampleMs: 40, maxTime: 1, minTime: 0.05, warmMs: 30 },
    warmReps: 3,
    rounds: 4,
  },
  quick: {
    sync: { budgetMs: 1500, minSamples: 5, maxSamples: 50, sampleMs: 0, maxTime: 0.2, minTime: 0.02, warmMs: 30 },
    async: { budgetMs: 600, minSamples: 3, maxSamples: 15, sampleMs: 20, maxTime: 0, minTime: 0, warmMs: 30 },
    heavy: { budgetMs: 3000, minSamples: 2, maxSamples: 4, sampleMs: 20, maxTime: 0.3, minTime: 0.02, warmMs: 30 },
    warmReps: 1,
    rounds: 2,
  },
  smoke: {
    sync: { budgetMs: 300, minSamples: 2, maxSamples: 3, sampleMs: 0, maxTime: 0.02, minTime: 0.002, warmMs: 2 },
    async: { budgetMs: 100, minSamples: 2, maxSamples: 3, sampleMs: 2, maxTime: 0, minTime: 0, warmMs: 2 },
    heavy: { budgetMs: 600, minSamples: 1, maxSamples: 2, sampleMs: 2, maxTime: 0.02, minTime: 0.002, warmMs: 2 },
    warmReps: 1,
    rounds: 2,
  },
};
const budgets = BUDGETS[mode];

function plan(): SeriesPlan[] {
  const pct = (fill: number, kind: Row['fillKind'], ops: OpKey[]): Omit<Level, 'count'> => ({ fill, kind, ops });
  const countOf = (r: RangeSpec, f: number): number => (f >= 1 ? r.size : Math.min(r.size - 1, Math.floor(f * r.size)));
  const series = (rangeId: string, order: 'uniform' | 'organic', levels: Omit<Level, 'count'>[], extra: Level[] = []): SeriesPlan => {
    const r = rangeById(rangeId);
    const ls = [...levels.map((l) => ({ ...l, count: countOf(r, l.fill!) })), ...extra].sort((a, b) => a.count - b.count);
    return { range: r, order, levels: ls, seed: 0x5eed0000 + RANGES.indexOf(r) * 16 + (order === 'organic' ? 1 : 0) };
  };
  const u64 = (counts: number[], full: boolean): SeriesPlan => ({
    range: rangeById('v6/64'),
    order: 'u64',
    seed: 0x5eed0064,
    levels: counts.map((c) => ({
      count: c,
      fill: null,
      kind: c === 0 ? 'none' : 'uniform',
      ops:
        c === 0 ? ['nextRelease'] : full ? ['nextRelease', 'allocRelease', 'has', 'warm'] : ['nextRelease', 'allocRelease', 'has', 'warm'],
    })),
  });
  const warm12 = (counts: number[]): Level[] =>
    counts.map((c) => ({ count: c, fill: c / rangeById('v4/12').size, kind: 'uniform', ops: ['warm'] }));
  const NR: OpKey[] = ['nextRelease'];
  const AT50: OpKey[] = ['nextRelease', 'allocRelease', 'has'];
  if (!quick) {
    const out: SeriesPlan[] = [];
    for (const id of ['v4/24', 'v4/16', 'v4/12', 'v6/112']) {
      out.push(
        series(
          id,
          'uniform',
          [
            pct(0, 'none', NR),
            pct(0.5, 'uniform', AT50),
            pct(0.9, 'uniform', NR),
            pct(0.99, 'uniform', NR),
            pct(0.999, 'uniform', NR),
            pct(1, 'full', ['full']),
          ],
          id === 'v4/12' ? warm12([1e5, 1e6]) : [],
        ),
      );
      out.push(
        series(id, 'organic', [pct(0.5, 'organic', NR), pct(0.9, 'organic', NR), pct(0.99, 'organic', NR), pct(0.999, 'organic', NR)]),
      );
    }
    out.push(u64([0, 1e5, 1e6], true));
    // the index at 10^7 random /64 addresses (same order: its first 10^6 are the series above);
    // a MemoryStore of 10^7 records (≈ 2 GB of JS heap) is left out
    out.push({
      range: rangeById('v6/64'),
      order: 'u64',
      seed: 0x5eed0064,
      levels: [{ count: 1e7, fill: null, kind: 'uniform', ops: ['nextRelease', 'has', 'warm'] }],
      storeless: 'no MemoryStore of 10^7 records in the bench (≈ 2 GB of JS heap); the index alone is measured',
    });
    return out;
  }
  // quick/smoke: the targets' cases that are cheap to set up (no 10^6-record store at /64, no full /12)
  return [
    series('v4/16', 'uniform', [
      pct(0, 'none', NR),
      pct(0.5, 'uniform', AT50),
      pct(0.99, 'uniform', NR),
      pct(0.999, 'uniform', NR),
      pct(1, 'full', ['full']),
    ]),
    series('v4/16', 'organic', [pct(0.5, 'organic', NR), pct(0.999, 'organic', NR)]),
    series('v4/12', 'uniform', [pct(0.5, 'uniform', NR), pct(0.999, 'uniform', NR)]),
    series('v6/112', 'uniform', [pct(0.5, 'uniform', AT50)]),
    u64([0, 1e5], false),
  ];
}

// ---------------------------------------------------------------------------------------------
// Output helpers.

const t0 = Date.now();
const elapsed = (): string => `${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s`;
function progress(s: string): void {
  process.stderr.write(`[${elapsed()}] ${s}\n`);
}

function baseRow(impl: string, r: RangeSpec, l: Level, op: string): Row {
  return {
    impl,
    family: r.family,
    prefix: r.prefix,
    cidr: r.cidr,
    fill: l.fill,
    fillCount: l.count,
    fillKind: l.kind,
    op,
    status: 'ok',
    nsPerOp: null,
    rme: null,
    spread: null,
    samples: null,
    bytesPerAllocation: null,
  };
}

function withMeasurement(row: Row, m: Measurement | Skipped): Row {
  if ('skipped' in m) return { ...row, status: 'skipped', note: m.skipped };
  return { ...row, nsPerOp: m.nsPerOp, rme: m.rme, spread: m.spread, samples: m.samples, opsPerSample: m.opsPerSample };
}

/** A cell some of whose rounds stayed in a slow stretch after every retry (bench/steady.ts) says how many. */
function withSlowRounds(row: Row, m: RoundsOutcome): Row {
  if (!('slowRounds' in m) || m.slowRounds === 0) return row;
  return { ...row, slowRounds: m.slowRounds, note: `${m.slowRounds} of ${budgets.rounds} rounds timed in a slow stretch of the machine` };
}

const OP_NAME: Record<OpKey, string> = {
  nextRelease: OPS.nextRelease,
  full: OPS.full,
  allocRelease: OPS.allocRelease,
  has: OPS.has,
  warm: OPS.warm,
};

function caseId(impl: string, r: RangeSpec, l: Level, op: OpKey): string {
  return `${impl} ${r.family} ${r.prefix} ${OP_NAME[op]} ${fillLabel({ fill: l.fill, fillCount: l.count, fillKind: l.kind })}`;
}

// ---------------------------------------------------------------------------------------------
// One series.

function makeCtx(p: SeriesPlan): { ctx: SeriesCtx; setCount(n: number): void; maxCount: number } {
  const r = p.range;
  const maxCount = Math.max(...p.levels.map((l) => l.count));
  let order: Uint32Array;
  if (p.order === 'u64') order = randomU64Pairs(maxCount, p.seed);
  else if (p.order === 'uniform') order = uniformOrder(r.size, maxCount, p.seed);
  else order = organicOrder(r.size, r.rangeOffset, maxCount, p.seed);
  const isPairs = p.order === 'u64';
  let count = 0;
  const cache = new Map<string, { pairs: Uint32Array; text: string[] }>();
  const toText = (pairs: Uint32Array): string[] => {
    const t: string[] = [];
    for (let i = 0; i < pairs.length; i += 2) t.push(offsetText(r, pairs[i], pairs[i + 1]));
    return t;
  };
  const pairsOf = (from: number, to: number): Uint32Array => {
    if (isPairs) return order.subarray(2 * from, 2 * to);
    const out = new Uint32Array(2 * (to - from));
    for (let i = from; i < to; i++) out[2 * (i - from) + 1] = order[i];
    return out;
  };
  const freePairs = (limit: number): Uint32Array => {
    if (isPairs) return randomU64Pairs(limit, p.seed ^ 0x0f4ee ^ count);
    const offs = freeOffsets(r.size, order, count, limit, p.seed ^ 0x0f4ee ^ count);
    const pairs = new Uint32Array(2 * offs.length);
    offs.forEach((o, i) => (pairs[2 * i + 1] = o));
    return pairs;
  };
  const freeQ = (): { pairs: Uint32Array; text: string[] } => {
    const key = `free:${count}`;
    if (!cache.has(key)) {
      const pairs = freePairs(1024);
      cache.set(key, { pairs, text: toText(pairs) });
    }
    return cache.get(key)!;
  };
  const hasQ = (): { pairs: Uint32Array; text: string[] } => {
    const key = `has:${count}`;
    if (!cache.has(key)) {
      const free = freeQ().pairs;
      const rng = new Seeded(p.seed ^ 0x4a5);
      const pairs = new Uint32Array(2048);
      for (let i = 0; i < 1024; i++) {
        if (i % 2 === 0 && count > 0) {
          const j = rng.intn(count);
          pairs.set(pairsOf(j, j + 1), 2 * i);
        } else {
          const j = rng.intn(Math.max(1, free.length >>> 1));
          pairs[2 * i] = free[2 * j] ?? 0;
          pairs[2 * i + 1] = free[2 * j + 1] ?? 0;
        }
      }
      cache.set(key, { pairs, text: toText(pairs) });
    }
    return cache.get(key)!;
  };
  const ctx: SeriesCtx = {
    range: r,
    // the implementations that read a store get a ctx with their own (runSeries)
    store: undefined,
    seed: p.seed,
    pairs: pairsOf,
    texts: (from, to) => toText(pairsOf(from, to)),
    freeQueries: freeQ,
    freePairs,
    hasQueries: hasQ,
  };
  return {
    ctx,
    setCount: (n) => {
      count = n;
      cache.clear();
    },
    maxCount,
  };
}

/**
 * A runner as one contender of a case timed in rounds. No full GC is forced before a round: one
 * deoptimised the hot functions of whatever had no live object of the shapes their code checks
 * for (an empty store's records: "weak objects" in --trace-deopt, every function on the
 * Allocator's path, at every forced GC), and functions idle for five GCs lose their bytecode
 * (V8's bytecode flushing) — with a GC before each of 9 implementations' rounds, each round began
 * on code compiled anew. An Allocator loop on an empty /16 timed in 100 ms stretches ran 2–2.8×
 * slower with a forced GC before each. The garbage one implementation leaves is collected where
 * it falls; the interleaved rounds spread that over the columns.
 */
function contender(runner: Runner, budget: Budget): Contender {
  return {
    budget,
    sample(share, decides) {
      if (runner.kind === 'self-timed') return runner.sample(share, decides);
      return runner.kind === 'sync' ? sampleSync(runner.run, share, decides) : sampleAsync(runner.run, share, decides);
    },
  };
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

let storeBytesPerRecord: number | null = null;
/** Where the timing thread runs (bench/cpu.ts): not pinned unless --cpu asks. */
let benchCpu: BenchCpu;
/** Keeps rounds out of the process's slow stretches (bench/steady.ts); none in a smoke run, whose numbers mean nothing. */
let gate: SteadyGate | undefined;

type Subject = { impl: Impl; why?: string; baseline?: Baseline };

/** A store one implementation reads, and how a level's records are added to it. */
interface OwnStore {
  store: unknown;
  /** A --baseline's store, of that commit's MemoryStore class. */
  baseline: boolean;
  load(texts: readonly string[]): void;
  close(): void;
}

async function runSeries(p: SeriesPlan, impls: Subject[], rows: Row[], counter: { done: number; total: number }): Promise<void> {
  const r = p.range;
  const wanted = (impl: string): boolean => p.levels.some((l) => l.ops.some((op) => matches(caseId(impl, r, l, op))));
  const active = impls.filter((x) => wanted(x.impl.name));
  if (active.length === 0) return;
  progress(
    `series ${r.cidr} ${p.order}: building the fill order (up to ${Math.max(...p.levels.map((l) => l.count)).toLocaleString('en-US')} addresses)`,
  );
  // what cannot run on this series, and why (x.why: the implementation is not available at all)
  const skip = (x: Subject): string | undefined => x.why ?? (p.storeless && readsStore(x.impl.name) ? p.storeless : x.impl.applicable(r));
  const { MemoryStore } = await import('../adapters/memory-store.ts');
  const { labelsFor } = await import('../adapters/records.ts').catch(() => ({ labelsFor: undefined }));
  const labels = labelsFor
    ? labelsFor(r.family)
    : Object.freeze({ 'ipaddress.kubernetes.io/ip-family': r.family, 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' });
  const { ctx, setCount } = makeCtx(p);
  // Every implementation that reads a store has one of its own, loaded with the same records
  // (a --baseline's of its own MemoryStore class): the level's runners are alive at once, and a
  // store hands every write to every allocator watching it, so on a shared store each allocator's
  // writes would also pay for the other allocators' handlers.
  const stores = new Map<string, OwnStore>();
  for (const x of active) {
    if (skip(x) || !readsStore(x.impl.name)) continue;
    if (x.baseline) {
      const b = x.baseline;
      const store = b.newStore();
      stores.set(x.impl.name, { store, baseline: true, load: (texts) => b.load(store, texts, r.family), close: () => store.close?.() });
    } else {
      const store = new MemoryStore();
      stores.set(x.impl.name, {
        store,
        baseline: false,
        load: (texts) => {
          for (const t of texts) store.createSync({ name: t, labels, parentRef: null });
        },
        close: () => store.close(),
      });
    }
  }
  const opened = new Map<string, SeriesImpl>();
  for (const x of active) {
    if (skip(x)) continue;
    const own = stores.get(x.impl.name);
    try {
      opened.set(x.impl.name, await x.impl.open(own ? { ...ctx, store: own.store } : ctx));
    } catch (e) {
      x.why = `failed to open: ${message(e)}`;
    }
  }
  let count = 0;
  for (const l of p.levels) {
    // grow every subject to l.count (untimed)
    if (l.count > count) {
      if (stores.size > 0) {
        const texts = ctx.texts(count, l.count);
        for (const own of stores.values()) {
          // this tree's MemoryStore's own cost per record (not a --baseline's), once, around the
          // first large load of one store
          const measureStore = !own.baseline && storeBytesPerRecord === null && l.count - count >= 100_000;
          const before = measureStore ? liveJsBytes() : 0;
          own.load(texts);
          if (measureStore) storeBytesPerRecord = (liveJsBytes() - before) / (l.count - count);
        }
        texts.length = 0;
      }
      for (const s of opened.values()) await s.fillTo(count, l.count);
      count = l.count;
      setCount(count);
    }
    await runLevel(l, active, skip, opened, rows, counter, r);
  }
  for (const s of opened.values()) s.close();
  for (const own of stores.values()) own.close();
}

/** The level's cases: each timed on every implementation in interleaved rounds, then warm starts. */
async function runLevel(
  l: Level,
  active: Subject[],
  skip: (x: Subject) => string | undefined,
  opened: Map<string, SeriesImpl>,
  rows: Row[],
  counter: { done: number; total: number },
  r: RangeSpec,
): Promise<void> {
  const emit = (row: Row): void => {
    counter.done++;
    rows.push(row);
    progress(
      `[${counter.done}/${counter.total}] ${caseKey(row)} · ${row.impl}: ${row.status === 'ok' ? `${fmt(row.nsPerOp)} ±${(row.spread ?? 0).toFixed(0)}% (${row.samples} samples)` : `${row.status}${row.note ? ` — ${row.note}` : ''}`}`,
    );
  };
  const live: { name: string; s: SeriesImpl; ops: OpKey[] }[] = [];
  for (const x of active) {
    const name = x.impl.name;
    const ops = l.ops.filter((op) => matches(caseId(name, r, l, op)));
    if (ops.length === 0) continue;
    const na = skip(x);
    if (na) {
      for (const op of ops) emit({ ...baseRow(name, r, l, OP_NAME[op]), status: x.why ? 'not available' : 'not applicable', note: na });
    } else live.push({ name, s: opened.get(name)!, ops });
  }
  // every implementation's runners at once, so that each case can alternate between them
  const runners = new Map<string, Runners | { error: unknown }>();
  for (const x of live) {
    if (!x.ops.some((op) => op !== 'warm')) continue;
    try {
      runners.set(x.name, await x.s.runners());
    } catch (error) {
      runners.set(x.name, { error });
    }
  }
  for (const op of l.ops) {
    if (op === 'warm') continue;
    const entrants = live.filter((x) => x.ops.includes(op));
    if (entrants.length === 0) continue;
    const moved = benchCpu.beforeCase();
    if (moved) progress(moved);
    const heavy = op === 'full' || (l.fill ?? 0) >= 0.99;
    const timed: { row: Row; contender: Contender }[] = [];
    const caseRows: Row[] = [];
    for (const x of entrants) {
      const row = baseRow(x.name, r, l, OP_NAME[op]);
      const rs = runners.get(x.name)!;
      const runner = 'error' in rs ? undefined : rs[op];
      if ('error' in rs) caseRows.push({ ...row, status: 'error', note: message(rs.error) });
      else if (!runner) caseRows.push({ ...row, status: 'not applicable', note: 'operation not offered' });
      else {
        const budget = heavy ? budgets.heavy : runner.kind === 'async' ? budgets.async : budgets.sync;
        timed.push({ row, contender: contender(runner, budget) });
        caseRows.push(row);
      }
    }
    const outcomes = await measureInRounds(
      timed.map((t) => t.contender),
      budgets.rounds,
      gate,
    );
    for (const row of caseRows) {
      const i = timed.findIndex((t) => t.row === row);
      if (i < 0) emit(row);
      else {
        const m = outcomes[i];
        emit('error' in m ? { ...row, status: 'error', note: message(m.error) } : withSlowRounds(withMeasurement(row, m), m));
      }
    }
  }
  for (const rs of runners.values()) if (!('error' in rs)) rs.close();
  // warm start last, after the level's runners are freed, one implementation at a time: two large
  // indexes alive at once distort each other's build time (see bench/README.md)
  for (const x of live) {
    if (!x.ops.includes('warm')) continue;
    getGc()?.();
    const moved = benchCpu.beforeCase();
    if (moved) progress(moved);
    const row = baseRow(x.name, r, l, OP_NAME.warm);
    try {
      emit(await warmStartRow(x.name, x.s, l, row));
    } catch (e) {
      emit({ ...row, status: 'error', note: message(e) });
    }
  }
}

/** Times warm starts of `s` at the level's count and measures the first one's memory. */
async function warmStartRow(name: string, s: SeriesImpl, l: Level, row: Row): Promise<Row> {
  if (name === 'contiguous') return { ...row, status: 'not applicable', note: 'same index and load path as core' };
  if (!s.warmStart) return { ...row, status: 'not applicable', note: 'no warm-start path' };
  // first load: timed and measured; then more reps for the timing
  s.prepareWarm?.(l.count);
  const before = liveJsBytes();
  const ts = process.hrtime.bigint();
  const h = await s.warmStart(l.count);
  const firstNs = Number(process.hrtime.bigint() - ts);
  const jsMeasured = liveJsBytes() - before;
  h.close();
  const samples = [firstNs / l.count];
  const wasm = h.wasmBytes;
  // more loads for the timing only, while they fit the budget
  for (let i = 1; i < budgets.warmReps && firstNs * (i + 1) < budgets.heavy.budgetMs * 1e6; i++) {
    s.prepareWarm?.(l.count);
    const ts2 = process.hrtime.bigint();
    const h2 = await s.warmStart(l.count);
    samples.push(Number(process.hrtime.bigint() - ts2) / l.count);
    h2.close();
  }
  const m = summarize(samples, l.count);
  // a JS structure of known size (the legacy bitmap) is counted exactly; the rest is the GC'd heap delta
  const js = Math.max(0, jsMeasured, h.jsBytes ?? 0);
  return {
    ...withMeasurement(row, m),
    jsBytesPerAllocation: js / l.count,
    wasmBytesPerAllocation: wasm === undefined ? null : wasm / l.count,
    bytesPerAllocation: (js + (wasm ?? 0)) / l.count,
    note: `${(firstNs / 1e6).toFixed(0)} ms for the first load${h.note ? `; ${h.note}` : ''}`,
  };
}

function fmt(ns: number | null): string {
  if (ns === null) return '—';
  return ns < 1000 ? `${ns.toFixed(1)} ns` : ns < 1e6 ? `${(ns / 1e3).toFixed(2)} µs` : `${(ns / 1e6).toFixed(2)} ms`;
}

// ---------------------------------------------------------------------------------------------

/**
 * The plans, once a --filter is known to match some case of them (this checkout's columns, a
 * --baseline's, or the boundary table); UsageError otherwise, naming a case of the grid: a filter
 * matching nothing would write an empty table over the mode's last results.
 */
function plansMatched(): SeriesPlan[] {
  const plans = plan();
  if (filterText === undefined || matches('boundary')) return plans;
  const columns = [...IMPL_NAMES, ...(baselineRef ? BASELINE_IMPLS.map((n) => `${n}@${baselineRef}`) : [])];
  const any = plans.some((p) => p.levels.some((l) => l.ops.some((op) => columns.some((i) => matches(caseId(i, p.range, l, op))))));
  if (any) return plans;
  const first = plans[0]!;
  const example = caseId('allocator', first.range, first.levels[0]!, first.levels[0]!.ops[0]!);
  throw new UsageError(`--filter ${filterText} matches no case of the ${mode} grid (case names look like "${example}", or "boundary")`);
}

async function main(): Promise<void> {
  const plans = plansMatched();
  if (baselineRef) baselineCommit(baselineRef, path.join(here, '..'));
  const { coreTarget } = await import('../adapters/wasm.ts');
  benchCpu = new BenchCpu(args.cpu);
  if (!smoke) gate = new SteadyGate();
  const cond = conditions(mode, coreTarget, benchCpu.describe(), budgets.rounds);
  progress(
    `ipallocator bench · ${mode} · ${cond.runtime.name} ${cond.runtime.version} · ${cond.cpu} × ${cond.cores} · ${cond.cpuPin} · gc ${getGc() ? 'on' : 'off'}${filterText ? ` · filter /${filterText}/` : ''}`,
  );
  const impls: Subject[] = [];
  for (const impl of IMPLS) {
    const why = await impl.available();
    impls.push({ impl, why });
    progress(`  ${impl.name.padEnd(14)} ${why ? `not available: ${why}` : 'ok'}`);
  }
  let baseline: Baseline | undefined;
  if (baselineRef) {
    baseline = await prepareBaseline(baselineRef, path.join(here, '..'), progress);
    for (const impl of baseline.impls) {
      const why = await impl.available();
      impls.push({ impl, why, baseline });
      progress(`  ${impl.name.padEnd(14)} ${why ? `not available: ${why}` : 'ok'}`);
    }
  }
  // each baseline column right after the implementation it is the previous version of
  const columns = IMPL_NAMES.flatMap((n) => [n, ...(baseline?.impls ?? []).map((i) => i.name).filter((b) => b.startsWith(`${n}@`))]);
  const rows: Row[] = [];
  const total = plans.reduce(
    (n, p) =>
      n +
      p.levels.reduce((m, l) => m + l.ops.reduce((k, op) => k + columns.filter((i) => matches(caseId(i, p.range, l, op))).length, 0), 0),
    0,
  );
  const counter = { done: 0, total };

  if (matches('boundary')) {
    const moved = benchCpu.beforeCase();
    if (moved) progress(moved);
    const floor = matches('boundary:store') ? await runStoreFloor(budgets.async) : [];
    const policies = matches('boundary:policies') ? await runPolicies(budgets.async, progress) : [];
    for (const b of [...(await runBoundary(budgets.sync, matches, progress)), ...floor, ...policies]) {
      const row: Row = {
        impl: 'boundary',
        family: b.family as Row['family'],
        prefix: '-',
        cidr: '-',
        fill: null,
        fillCount: null,
        fillKind: '-',
        op: b.op,
        status: 'ok',
        nsPerOp: null,
        rme: null,
        spread: null,
        samples: null,
        note: b.note,
      };
      if ('unavailable' in b.result) rows.push({ ...row, status: 'not available', note: b.result.unavailable });
      else rows.push(withMeasurement(row, b.result));
    }
  }
  for (const p of plans) await runSeries(p, impls, rows, counter);
  cond.cpuPin = benchCpu.describe();
  cond.roundGate = gate ? gate.describe() : 'none (smoke run)';

  const res: Results = {
    conditions: cond,
    durationSeconds: (Date.now() - t0) / 1000,
    storeBytesPerRecord,
    rows,
    ...(baseline ? { baseline: { ref: baseline.ref, commit: baseline.commit } } : {}),
  };
  const shown = columns.filter((i) => rows.some((r) => r.impl === i));
  process.stdout.write(`\n${textTable(rows, shown)}\n\ntargets\n${targetLines(rows).join('\n')}\n`);
  if (rows.some((r) => r.impl.startsWith('go-'))) process.stdout.write(`\n${GO_NOTE.replace(/`/g, '')}\n`);
  fs.mkdirSync(path.dirname(outPrefix), { recursive: true });
  const svgName = `${path.basename(outPrefix)}.svg`;
  fs.writeFileSync(`${outPrefix}.json`, JSON.stringify(res, null, 1) + '\n');
  writeMarkdown(outPrefix, res, shown, svgName);
  fs.writeFileSync(
    `${outPrefix}.svg`,
    chartSvg(
      rows,
      shown,
      `${cond.runtime.name} ${cond.runtime.version} · ${cond.cpu} × ${cond.cores} · ${cond.date.slice(0, 16)} · ${cond.git.commit.slice(0, 10)} · ${mode}`,
    ),
  );
  process.stdout.write(
    `\nwrote ${outPrefix}.{json,md,svg} and ${path.basename(outPrefix)}.targets.md in ${Math.round(res.durationSeconds)} s\n`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    // Ctrl-C at a terminal reaches the child processes too: one it ended is the interrupt
    const signal = stopSignalOf(e);
    if (signal !== undefined) stopped(signal);
    // a stop signal that arrived while a synchronous step ran (a --baseline's build) is handled
    // when the event loop next polls: give it that turn before telling a failure
    setTimeout(() => {
      if (e instanceof UsageError) {
        process.stderr.write(`bench: ${e.message}\n`);
        process.exit(2);
      }
      process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(1);
    }, 50);
  },
);
