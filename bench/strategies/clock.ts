// The clock of `npm run bench:strategies`, in ms, for a cool-down by time in a strategy of your
// own: `coolDown(strategy, { ms: 30_000, now: runClock })`. The simulator's time is simulated (a
// run covers hours of churn in seconds), while a cool-down reads performance.now() unless given a
// clock, so a hold by `ms` on the real clock would outlast the whole run. The simulator (sim.ts)
// moves this clock with its simulated time, the speed cases (speed.ts) one second per allocation,
// as they move the built-ins' cool-downs.

let current = 0;

/** The run's time in ms: simulated time in a simulation, one second per allocation in a speed case. */
export function runClock(): number {
  return current;
}

/** Sets the run's time (sim.ts, speed.ts); each simulation and speed case starts it at 0. */
export function setRunClock(ms: number): void {
  current = ms;
}
