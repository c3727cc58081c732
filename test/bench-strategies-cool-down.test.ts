// A cool-down by time in a strategy of your own, run by npm run bench:strategies: the simulator's
// time is simulated, so such a cool-down must read the run's clock (bench/strategies/clock.ts),
// as the built-in cool-downs of the run do, to hold an address for its time and no longer.
import { describe, expect, it } from 'vitest';
import { coolDown } from '../adapters/index.ts';
import { runClock } from '../bench/strategies/clock.ts';
import { type Measures, simulate } from '../bench/strategies/sim.ts';
import { workloads } from '../bench/strategies/workloads.ts';

/** The measures that depend on the strategy's choices only (not its label, nor the wall time). */
const choices = ({ strategy: _s, wallMs: _w, ...rest }: Measures) => rest;

describe('bench:strategies: a cool-down of your own on the run clock', () => {
  // Regression: only the built-ins' cool-downs read the simulated time; one of yours read
  // performance.now(), on which a whole run lasts a few seconds, so a "30 s" hold lasted the run.
  it('chooses as the built-in cool-down of the same length does, on the load sweep', () => {
    const load = workloads(true).sweep[1]!;
    const builtin = simulate(load, { label: 'upstream + cool-down 60 s', strategy: 'upstream', coolDownMs: 60_000 }, 7);
    const mine = simulate(load, { label: 'mine', strategy: { ...coolDown('upstream', { ms: 60_000, now: runClock }), name: 'mine' } }, 7);
    expect(builtin.reuses).toBeGreaterThan(0);
    expect(choices(mine)).toEqual(choices(builtin));
  });
});
