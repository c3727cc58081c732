// The speed half of `npm run bench:strategies`: Range.allocateNext + release of each strategy with
// the fill held, on an IPv4 /20 and an IPv6 /64.
import process from 'node:process';
import { seededRandom } from '../../adapters/random.ts';
import { Range } from '../../adapters/range.ts';
import type { StrategyOption } from '../../adapters/builtin-strategies.ts';
import { coolDown } from '../../adapters/cool-down.ts';
import { summarize } from '../measure.ts';
import type { Speed } from './report.ts';
import type { StrategySpec } from './sim.ts';

/**
 * ns per allocateNext + release of one strategy on `cidr` at `fill` (a share, or a count above 1).
 * restart: the fill is the strategy's own first `fill` choices under the same seed, loaded into a
 * fresh Range, so its first draws replay taken addresses (random-free then counts and selects
 * among the free ones on every call).
 */
function timeOnce(spec: StrategySpec, cidr: string, fill: number, ops: number, rep: number, restart = false): { ns: number; held: number } {
  let now = 0;
  const strategy: StrategyOption = spec.coolDownMs !== undefined ? coolDownOf(spec, () => now) : spec.strategy;
  const r = new Range(cidr, { strategy, random: seededRandom(rep + 1) });
  const target = fill > 1 ? fill : Math.floor(Number(r.size) * fill);
  if (restart) {
    const before = new Range(cidr, { strategy, random: seededRandom(rep + 1) });
    const held: string[] = [];
    for (let i = 0; i < target; i++) held.push(before.allocateNext());
    before.destroy();
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
    r.release(r.allocateNext());
  }
  const ns = Number(process.hrtime.bigint() - t0) / ops;
  r.destroy();
  return { ns, held };
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
 * Every strategy on every case, interleaved (rep by rep, strategy by strategy) after one untimed
 * round, so that JIT warm-up and the machine's load fall on all strategies alike; medians of 5,
 * with their spread.
 */
export function speeds(specs: readonly StrategySpec[], ops: number, cases: readonly SpeedCase[] = SPEED_CASES): Speed[] {
  const out: Speed[] = [];
  for (const [cidr, fill, restart, share] of cases) {
    const n = Math.ceil(ops * share);
    for (const spec of specs) timeOnce(spec, cidr, fill, Math.ceil(n / 10), 0, restart);
    const samples = specs.map(() => [] as number[]);
    const held = specs.map(() => 0);
    for (let rep = 0; rep < 5; rep++) {
      specs.forEach((spec, i) => {
        const t = timeOnce(spec, cidr, fill, n, rep, restart);
        samples[i]!.push(t.ns);
        held[i] = t.held;
      });
    }
    specs.forEach((spec, i) => {
      const { nsPerOp, spread } = summarize(samples[i]!, n);
      out.push({ strategy: spec.label, range: cidr, fill, held: held[i]!, ...(restart ? { restart } : {}), nsPerOp, spread });
    });
  }
  return out;
}

function coolDownOf(spec: StrategySpec, now: () => number) {
  return coolDown(spec.strategy, { ms: spec.coolDownMs!, now });
}
