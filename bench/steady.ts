// Whether this process runs at its usual speed right now. On shared and virtual machines the
// bench's JavaScript runs 2× slower for seconds at a time, now and then, and then at full speed
// again: a Range allocateNext+release loop read 175 ns and 380 ns in alternating stretches of
// one process, the same code on the same CPU, while a loop of integer multiplies beside it did not
// move (≤ 1.1×). So a cell timed in such a stretch was 2× off, and since the go-seed child runs in
// another process it was not slowed with it: a full run could show one case's JS columns all 2×
// slower than the same case run alone, against an unchanged Go column.
//
// The calibration loop below does in small what the bench's JS does (short strings built and
// read, a typed array written) and slows down with it. measureInRounds (bench/measure.ts) asks
// the gate before and after each round of each implementation, Go's included: a round that a
// slow reading brackets is timed again, up to MAX_RETRIES times, after waiting for the loop to run
// at its usual speed again. Rounds still bracketed by slow readings are kept and counted in the
// row's note, so a cell that had to be measured in a slow stretch says so. "Usual" is the median
// of the recent readings, not the fastest ever: a stretch that lasts minutes becomes the usual
// speed after a few readings, so it costs a few retries instead of one per round (a run of hours).
// What the gate catches is a round timed in other conditions than the rounds around it, which the
// interleaving assumes they share.
import process from 'node:process';

/** A reading counts as slow above this multiple of the usual one (the median of the last RECENT readings). */
export const SLOW = 1.3;
/** Times a round is timed again when slow readings bracket it. */
export const MAX_RETRIES = 3;
/** Readings the usual speed is the median of. */
const RECENT = 15;
/** How long waitSteady waits for a usual reading before a round anyway, ms. */
const WAIT_MS = 3000;

const codes = new Int32Array(64);
let sink = 0;

/** ns per iteration of the calibration loop (≈ 1 ms in all once compiled). */
export function calibrationNs(): number {
  const t = process.hrtime.bigint();
  for (let i = 0; i < 8000; i++) {
    const x = Math.imul(i, 2654435761) >>> 0;
    const s = `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
    codes[i & 63] = s.charCodeAt(s.length - 1) + s.length;
    sink += codes[(i * 7) & 63]! & 1;
  }
  const ns = Number(process.hrtime.bigint() - t) / 8000;
  return sink === -1 ? Number.NaN : ns; // reading sink keeps the compiler from dropping the loop
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The gate measureInRounds asks around each round. */
export interface RoundGate {
  /** Waits (up to a few seconds) until a reading is usual; whether it got one. */
  waitSteady(): Promise<boolean>;
  /** One reading now: whether it is usual. */
  steady(): boolean;
  /** Times a round is timed again when slow readings bracket it. */
  readonly maxRetries: number;
  /** Rounds taken, rounds timed again, and rounds kept although slow readings bracketed them (measureInRounds counts). */
  rounds: number;
  retried: number;
  kept: number;
}

export class SteadyGate implements RoundGate {
  /** The last RECENT readings, ns per iteration: their median is the usual speed. */
  private readonly recent: number[] = [];
  rounds = 0;
  retried = 0;
  kept = 0;
  readonly maxRetries = MAX_RETRIES;

  constructor(
    /** The calibration (tests give a scripted one). */
    private readonly reading: () => number = calibrationNs,
    private readonly wait: (ms: number) => Promise<void> = pause,
    private readonly waitMs = WAIT_MS,
  ) {
    for (let i = 0; i < 5; i++) this.read(); // compiled before it counts
    this.recent.length = 0;
    for (let i = 0; i < RECENT; i++) this.read();
  }

  /**
   * A reading within SLOW of the usual one (the median of the recent readings); a slow one is
   * read again once (one slow moment is often an interruption). The usual speed follows the
   * machine: a slow stretch that outlasts half of RECENT readings becomes the usual speed, so a
   * long one costs a few retries, not one per round; what the gate catches is a round timed in
   * other conditions than the rounds around it, which interleaving assumes they share.
   */
  steady(): boolean {
    return this.check(true);
  }

  /** steady(); its readings join the recent ones only when `record`. */
  private check(record: boolean): boolean {
    let ns = this.read(record);
    if (ns > this.usual() * SLOW) ns = Math.min(ns, this.read(record));
    return ns <= this.usual() * SLOW;
  }

  private read(record = true): number {
    const ns = this.reading();
    if (record) {
      this.recent.push(ns);
      if (this.recent.length > RECENT) this.recent.shift();
    }
    return ns;
  }

  private usual(): number {
    const s = [...this.recent].sort((a, b) => a - b);
    return s[(s.length - 1) >> 1]!;
  }

  async waitSteady(): Promise<boolean> {
    for (let waited = 0; ; waited += 50) {
      // The readings of the wait do not move the usual speed, but for the last: two a check,
      // they would make a slow stretch the usual speed within a few checks (~150 ms), and the
      // wait would end inside it. A stretch that outlasts the wait still becomes usual, over
      // the readings around a few rounds.
      const last = waited >= this.waitMs;
      if (this.check(last)) return true;
      if (last) return false;
      await this.wait(50); // idle: the process's own background work (GC, compiler) may be what slows it
    }
  }

  /** For the results' conditions line. */
  describe(): string {
    return `a round was timed again when the calibration loop (bench/steady.ts) read over ${SLOW}× its usual time (the median of its last ${RECENT} readings) before or after it: ${this.retried} time${this.retried === 1 ? '' : 's'} over ${this.rounds} rounds; ${this.kept} kept slow after ${MAX_RETRIES} tries`;
  }
}
