// Which CPU the bench runs on. The cores of a virtual machine need not be equally fast: a vCPU
// whose host core is shared with another guest can run at half the speed of its sibling, for
// minutes at a time, and then at full speed again. The scheduler moves a process between cores as
// it likes, and the go-seed child starts wherever there is room, so a side-by-side comparison can
// compare two cores instead of two implementations, and one implementation's cells can differ 2×
// between runs.
//
// On Linux with `taskset` (util-linux) every run times a short loop on each CPU it may use and
// states the speeds in the results. Pinning is asked for: `--cpu fastest` pins the harness's main
// thread to the fastest CPU and, before each case, times the loop there again — when that CPU has
// slowed down against the fastest time seen, it probes every CPU again and moves; `--cpu <n>` pins
// to n for the whole run. Every other thread of the process (the garbage collector's and the
// compiler's) is moved to the other CPUs, again before each case for threads started meanwhile:
// the timing thread cannot leave its CPU, so nothing else may take it. The go-seed program is
// started with every allowed CPU (so the Go runtime sizes itself as it would unpinned) and does
// the same with its own threads (`pin`, in bench/go-seed/pin_linux.go). Not the default: a full
// run pinned this way was no steadier than an unpinned one (bench/README.md, "CPUs of unequal
// speed"); the slow stretches that remained did not show in the probe loop (bench/steady.ts
// watches for them with a loop that does, around every round).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import process from 'node:process';

/** The CPUs of a Linux CPU list ("0-3,6,8-9"), in order; throws on anything else. */
export function parseCpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`not a CPU list: ${JSON.stringify(text)}`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`not a CPU list: ${JSON.stringify(text)}`);
    for (let c = from; c <= to; c++) out.push(c);
  }
  return out;
}

/** Milliseconds for a fixed integer loop (≈ 10 ms on a fast core once compiled). */
function loopMs(): number {
  const t = process.hrtime.bigint();
  let x = 1;
  for (let i = 0; i < 10_000_000; i++) x = (Math.imul(x, 31) + i) | 0;
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  // reading x keeps the compiler from dropping the loop (x ends at −745145535, never 7)
  return x === 7 ? Number.NaN : ms;
}

/** A CPU counts as slowed when the loop takes this much longer on it than the fastest time seen. */
const SLOWED = 1.15;

export class BenchCpu {
  /** The instance that pinned the run, if one did: the go-seed driver pins its loop to the same CPU. */
  static active: BenchCpu | undefined;
  /** The CPU the main thread is pinned to, or null when not pinned. */
  cpu: number | null = null;
  /** The CPUs the main thread was allowed at the start (a pin narrows `taskset -p`'s answer). */
  readonly allowed: number[] = [];
  /** How the run chose, for the results' conditions line. */
  private how: string;
  private readonly probing: boolean;
  /** The fastest loop time seen on any CPU, ms. */
  private bestMs = Number.POSITIVE_INFINITY;
  /** Cases started per CPU, and how often a slowed CPU was left. */
  private readonly casesOn = new Map<number, number>();
  private moves = 0;

  /**
   * `choice`: undefined = not pinned (the CPUs' speeds are probed and stated); "fastest" = the
   * fastest CPU of a probe, kept fast case by case; a number = that CPU for the whole run.
   * Throws for a `choice` that names no CPU this process may use, and for any `choice` where
   * pinning is impossible (off Linux, no taskset); unasked, nothing is probed or pinned there.
   */
  constructor(
    choice: string | undefined,
    /** The taskset program (tests name one that is not there). */
    private readonly tasksetPath = 'taskset',
  ) {
    this.probing = false;
    const asked = choice === undefined ? undefined : `--cpu ${choice}: pinning needs Linux with taskset (util-linux)`;
    if (process.platform !== 'linux') {
      if (asked) throw new Error(`${asked}; this is ${process.platform}`);
      this.how = `not pinned (${process.platform})`;
      return;
    }
    try {
      const line = this.taskset(['-p', '-c', String(process.pid)]); // "pid N's current affinity list: 0,1"
      this.allowed = parseCpuList(line.slice(line.lastIndexOf(':') + 1));
    } catch (e) {
      if (asked) throw new Error(`${asked}: ${e instanceof Error ? e.message : String(e)}`);
      this.how = 'not pinned (taskset not available)';
      return;
    }
    loopMs(); // compile the loop before any timing counts
    if (choice === undefined) {
      if (this.allowed.length === 1) {
        this.how = `on CPU ${this.allowed[0]} (the only one allowed)`;
        return;
      }
      const speeds = this.probe();
      this.taskset(['-p', '-c', this.allowed.join(','), String(process.pid)]); // unpinned again
      this.cpu = null;
      this.how = `not pinned; CPU speeds at the start (${speeds})`;
      return;
    }
    if (choice !== 'fastest') {
      const cpu = Number(choice);
      if (!/^\d+$/.test(choice) || !this.allowed.includes(cpu)) {
        throw new Error(`--cpu ${choice}: expected "fastest" or one of the CPUs this process may use (${this.allowed.join(', ')})`);
      }
      this.pin(cpu);
      this.placeHelpers();
      this.how = `pinned to CPU ${cpu} (--cpu)`;
      BenchCpu.active = this;
      return;
    }
    this.probing = true;
    this.how = `pinned to the fastest CPU of a probe (${this.probe()}), the other threads off it`;
    this.placeHelpers();
    BenchCpu.active = this;
  }

  /**
   * Before a case: when the pinned CPU has slowed down since it was chosen, probes every CPU
   * again and moves to the fastest. Returns a line for the progress log when it moved.
   */
  beforeCase(): string | undefined {
    this.placeHelpers();
    if (!this.probing) return undefined;
    // Best of up to three: one slow loop is often a moment's interruption, not a slower CPU (single
    // loops read 1.4–2.7× slow at the /12 where a probe right after found every CPU as fast as ever).
    let ms = loopMs();
    for (let again = 0; again < 2 && ms > this.bestMs * SLOWED; again++) ms = Math.min(ms, loopMs());
    let moved: string | undefined;
    if (ms > this.bestMs * SLOWED) {
      const from = this.cpu;
      const slowed = (ms / this.bestMs).toFixed(2);
      const probe = this.probe();
      if (this.cpu !== from) {
        this.moves++;
        moved = `CPU ${from} slowed down (${slowed}× the fastest seen): moved to CPU ${this.cpu} (${probe})`;
      }
    } else {
      this.bestMs = Math.min(this.bestMs, ms);
    }
    this.placeHelpers(); // after a move: off the new CPU
    this.casesOn.set(this.cpu!, (this.casesOn.get(this.cpu!) ?? 0) + 1);
    return moved;
  }

  /** Where the run ran, for the results' conditions line. */
  describe(): string {
    if (!this.probing || this.casesOn.size === 0) return this.how;
    const tally = [...this.casesOn]
      .sort((a, b) => a[0] - b[0])
      .map(([cpu, n]) => `CPU ${cpu} for ${n}`)
      .join(', ');
    return `${this.how}; cases: ${tally}; moved ${this.moves} time${this.moves === 1 ? '' : 's'} off a CPU that had slowed by more than ${Math.round((SLOWED - 1) * 100)} %`;
  }

  /**
   * Times the loop on every allowed CPU (three interleaved rounds, best of each: one slow moment
   * does not decide), pins the fastest (or stays, when the current CPU is as fast again), and
   * says what it saw.
   */
  private probe(): string {
    const best = new Map<number, number>(this.allowed.map((c) => [c, Number.POSITIVE_INFINITY]));
    for (let round = 0; round < 3; round++) {
      for (const c of this.allowed) {
        this.pin(c);
        best.set(c, Math.min(best.get(c)!, loopMs()));
      }
    }
    const [fastest, ms] = [...best].reduce((a, b) => (b[1] < a[1] ? b : a));
    // stay where the run was when that CPU is as fast as any again (a move costs warm caches)
    const stay = this.cpu !== null && best.get(this.cpu)! <= ms * SLOWED;
    this.pin(stay ? this.cpu! : fastest);
    this.bestMs = Math.min(this.bestMs, ms);
    return `time relative to the fastest: ${[...best].map(([c, t]) => `CPU ${c} ${(t / ms).toFixed(2)}`).join(', ')}`;
  }

  private pin(cpu: number): void {
    this.taskset(['-p', '-c', String(cpu), String(process.pid)]);
    this.cpu = cpu;
  }

  /** The threads last moved off the timing CPU, as a sorted list of ids. */
  private helpersPlaced = '';

  /**
   * Moves every thread of the process but the main one to the CPUs other than the pinned one:
   * the collector's and compiler's threads then never take the timing thread's CPU, which it
   * cannot leave. Threads the main thread starts later inherit its pin, so this runs again
   * before each case when the set of threads has changed.
   */
  private placeHelpers(): void {
    if (this.cpu === null || this.allowed.length < 2) return;
    let tids: string[];
    try {
      tids = fs.readdirSync('/proc/self/task').filter((t) => t !== String(process.pid));
    } catch {
      return; // no /proc: the helpers stay where the scheduler puts them
    }
    const key = `${this.cpu}:${tids.sort().join(',')}`;
    if (key === this.helpersPlaced) return;
    const others = this.allowed.filter((c) => c !== this.cpu).join(',');
    for (const tid of tids) {
      try {
        this.taskset(['-p', '-c', others, tid]);
      } catch {
        // the thread has ended meanwhile
      }
    }
    this.helpersPlaced = key;
  }

  private taskset(args: string[]): string {
    return execFileSync(this.tasksetPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }
}
