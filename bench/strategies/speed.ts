// The speed half of `npm run bench:strategies`: Range.allocateNext + release of each strategy with
// the fill held, on an IPv4 /20 and an IPv6 /64.
import process from 'node:process';
import { seededRandom } from '../../adapters/random.ts';
import { Range } from '../../adapters/range.ts';
import type { StrategyOption } from '../../adapters/builtin-strategies.ts';
import { coolDown } from '../../adapters/cool-down.ts';
import { ErrFull } from '../../adapters/errors.ts';
import { Prefix } from '../../adapters/geometry.ts';
import { summarize } from '../measure.ts';
import { runClock, setRunClock } from './clock.ts';
import { fillIsCount, type Speed, speedCaseName } from './report.ts';
import type { StrategySpec } from './sim.ts';

/**
 * ns per allocateNext + release of one strategy on `cidr` at `fill` (a share, or a count above 1).
 * restart: the fill is the strategy's own first `fill` choices under the same seed, loaded into a
 * fresh Range, so its first draws replay taken addresses (random-free then counts and selects
 * among the free ones on every call).
 */
function timeOnce(spec: StrategySpec, cidr: string, fill: number, ops: number, rep: number, restart = false): { ns: number; held: number } {
  let now = 0;
  setRunClock(now); // the clock of cool-downs, the built-ins' and yours (clock.ts)
  const strategy: StrategyOption = spec.coolDownMs !== undefined ? coolDownOf(spec, runClock) : spec.strategy;
  const r = new Range(cidr, { strategy, random: seededRandom(rep + 1) });
  try {
    const target = fillIsCount(fill) ? fill : Math.floor(Number(r.size) * fill);
    if (restart) {
      const before = new Range(cidr, { strategy, random: seededRandom(rep + 1) });
      const held: string[] = [];
      try {
        for (let i = 0; i < target; i++) held.push(before.allocateNext());
      } finally {
        before.destroy();
      }
      r.loadMany(held);
    } else {
      // the fill: random addresses drawn by the default strategy, loaded at once
      const filler = new Range(cidr, { random: seededRandom(99) });
      r.loadMany(filler.allocateMany(target));
      filler.destroy();
    }
    const held = r.used();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < ops; i++) {
      now += 1000; // one allocation a second: a 60 s cool-down holds about 60 addresses
      setRunClock(now);
      r.release(r.allocateNext());
    }
    return { ns: Number(process.hrtime.bigint() - t0) / ops, held };
  } finally {
    r.destroy();
  }
}

/** Why a strategy that answered ErrFull on a case, a range far from full, gets no time there. */
const FOUND_NOTHING = 'its allocateNext answered ErrFull (range is full): it found no address it would choose there';

/**
 * Why `spec` is not timed on a case, or undefined when it is. legacy-bitmap chooses among the
 * first 65,535 addresses of an IPv6 range only (upstream's cap); random addresses held on a larger
 * range almost never lie there, so it would time an empty window under a case that says what the
 * range holds. After a restart the held addresses are its own choices, inside its window: timed.
 */
function notApplicable(spec: StrategySpec, cidr: string, restart: boolean): string | undefined {
  if (spec.strategy !== 'legacy-bitmap' || restart) return undefined;
  const p = Prefix.parse(cidr);
  if (p.family !== 'IPv6' || p.size <= 65_535n) return undefined;
  return `it chooses among the first 65,535 addresses of an IPv6 range only (upstream's cap), where the random addresses held almost never lie: it would time an empty window`;
}

/**
 * A speed case: the range; its fill, a share of the range or a count of addresses above 1; whether
 * the fill is the strategy's own first choices under the timing's seed (a restart); and the share
 * of the run's operations it times.
 */
export type SpeedCase = readonly [cidr: string, fill: number, restart: boolean, share: number];

export const SPEED_CASES: readonly SpeedCase[] = [
  ['10.96.0.0/20', 0.5, false, 1],
  ['10.96.0.0/20', 0.9, false, 1],
  ['10.96.0.0/20', 0.99, false, 1],
  ['fd00:10:96::/64', 100_000, false, 1],
  ['fd00:10:96::/64', 50_000, true, 0.05],
];

/**
 * How the run takes what a strategy did on a case (`where`): `f`'s answer, or, when it throws, an
 * answer of the guard's own or no return at all (run.ts ends the run for a strategy of your own).
 */
export type SpeedGuard = <T>(spec: StrategySpec, where: string, f: () => T) => T;

/**
 * Every strategy on every case, interleaved (rep by rep, strategy by strategy) after one untimed
 * round, so that JIT warm-up and the machine's load fall on all strategies alike; medians of 5,
 * with their spread. A strategy a case does not apply to (notApplicable), or that answers ErrFull
 * on it (one of your own may find nothing it would choose), gets a row with the reason instead of
 * a time. Any other error passes through `guard`, with the case named as the report names it.
 */
export function speeds(
  specs: readonly StrategySpec[],
  ops: number,
  cases: readonly SpeedCase[] = SPEED_CASES,
  guard: SpeedGuard = (_spec, _where, f) => f(),
): Speed[] {
  const out: Speed[] = [];
  for (const [cidr, fill, restart, share] of cases) {
    const n = Math.ceil(ops * share);
    const where = `the speed case '${speedCaseName(cidr, fill, restart)}'`;
    const reasons = specs.map((spec) => notApplicable(spec, cidr, restart));
    /** One timing of specs[i], or undefined once it has answered ErrFull (its reason is then set). */
    const time = (i: number, count: number, rep: number): { ns: number; held: number } | undefined =>
      guard(specs[i]!, where, () => {
        try {
          return timeOnce(specs[i]!, cidr, fill, count, rep, restart);
        } catch (e) {
          if (!(e instanceof ErrFull)) throw e;
          reasons[i] = FOUND_NOTHING;
          return undefined;
        }
      });
    specs.forEach((_, i) => {
      if (reasons[i] === undefined) time(i, Math.ceil(n / 10), 0);
    });
    const samples = specs.map(() => [] as number[]);
    const held = specs.map(() => 0);
    for (let rep = 0; rep < 5; rep++) {
      specs.forEach((_, i) => {
        if (reasons[i] !== undefined) return;
        const t = time(i, n, rep);
        if (t === undefined) return;
        samples[i]!.push(t.ns);
        held[i] = t.held;
      });
    }
    specs.forEach((spec, i) => {
      const row = { strategy: spec.label, range: cidr, fill, held: held[i]!, ...(restart ? { restart } : {}) };
      const reason = reasons[i];
      if (reason !== undefined) {
        out.push({ ...row, held: heldBy(cidr, fill), notApplicable: reason });
        return;
      }
      const { nsPerOp, spread } = summarize(samples[i]!, n);
      out.push({ ...row, nsPerOp, spread });
    });
  }
  return out;
}

/** The addresses a case's range holds: `fill` as a count, or as a share of the range's usable ones. */
function heldBy(cidr: string, fill: number): number {
  return fill > 1 ? fill : Math.floor(Number(Prefix.parse(cidr).size) * fill);
}

function coolDownOf(spec: StrategySpec, now: () => number) {
  return coolDown(spec.strategy, { ms: spec.coolDownMs!, now });
}
