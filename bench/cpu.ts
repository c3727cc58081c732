// Which CPU the bench runs on. The cores of a virtual machine need not be equally fast: a vCPU
// whose host core is shared with another guest can run at half the speed of its sibling, for
// minutes at a time, and then at full speed again. The scheduler moves a process between cores as
// it likes, and the go-seed child starts wherever there is room, so without pinning a side-by-side
// comparison can compare two cores instead of two implementations, and one implementation's cells
// can differ 2× between runs.
//
// On Linux with `taskset` (util-linux), the bench therefore times a short loop on each CPU it may
// use and pins its main thread to the fastest. Before each case it times the loop once more on
// that CPU; when the CPU has become slower than the fastest seen, it probes all of them again and
// moves. The Go child inherits the pin (children inherit the affinity of the thread that starts
// them); the runtime's helper threads (GC, compiler) stay free to use the other cores.
// `--cpu <n>` pins to n for the whole run; `--cpu any` leaves the scheduler alone. Elsewhere
// nothing is pinned and the results say so.
import { execFileSync } from 'node:child_process';
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

function taskset(args: string[]): string {
  return execFileSync('taskset', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
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
  /** The CPU the main thread is pinned to, or null when not pinned. */
  cpu: number | null = null;
  /** How the run chose, for the results' conditions line. */
  private how: string;
  /** The CPUs the main thread was allowed before pinning (a pin narrows `taskset -p`'s answer). */
  private readonly allowed: number[] = [];
  private readonly probing: boolean;
  /** The fastest loop time seen on any CPU, ms. */
  private bestMs = Number.POSITIVE_INFINITY;
  /** Cases started per CPU, and how often a slowed CPU was left. */
  private readonly casesOn = new Map<number, number>();
  private moves = 0;

  /**
   * Pins as `choice` asks: undefined = the fastest CPU of a probe, kept fast case by case;
   * "any" = no pinning; a number = that CPU for the whole run. Throws only for a `choice` that
   * names no CPU this process may use; without taskset or off Linux nothing is pinned.
   */
  constructor(choice: string | undefined) {
    this.probing = false;
    if (choice === 'any') {
      this.how = 'not pinned (--cpu any)';
      return;
    }
    if (process.platform !== 'linux') {
      this.how = `not pinned (${process.platform})`;
      return;
    }
    try {
      const line = taskset(['-p', '-c', String(process.pid)]); // "pid N's current affinity list: 0,1"
      this.allowed = parseCpuList(line.slice(line.lastIndexOf(':') + 1));
    } catch {
      this.how = 'not pinned (taskset not available)';
      return;
    }
    if (choice !== undefined) {
      const cpu = Number(choice);
      if (!Number.isInteger(cpu) || !this.allowed.includes(cpu)) {
        throw new Error(`--cpu ${choice}: expected "any" or one of the CPUs this process may use (${this.allowed.join(', ')})`);
      }
      this.pin(cpu);
      this.how = `pinned to CPU ${cpu} (--cpu)`;
      return;
    }
    if (this.allowed.length === 1) {
      this.cpu = this.allowed[0]!;
      this.how = `on CPU ${this.cpu} (the only one allowed)`;
      return;
    }
    this.probing = true;
    loopMs(); // compile the loop before any timing counts
    this.how = `pinned to the fastest CPU of a probe (${this.probe()})`;
  }

  /**
   * Before a case: when the pinned CPU has slowed down since it was chosen, probes every CPU
   * again and moves to the fastest. Returns a line for the progress log when it moved.
   */
  beforeCase(): string | undefined {
    if (!this.probing) return undefined;
    const ms = loopMs();
    let moved: string | undefined;
    if (ms > this.bestMs * SLOWED) {
      const from = this.cpu;
      const probe = this.probe();
      if (this.cpu !== from) {
        this.moves++;
        moved = `CPU ${from} slowed down (${(ms / this.bestMs).toFixed(2)}× the fastest seen): moved to CPU ${this.cpu} (${probe})`;
      }
    } else {
      this.bestMs = Math.min(this.bestMs, ms);
    }
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

  /** Times the loop on every allowed CPU (three interleaved rounds, best of each: one slow moment does not decide), pins the fastest, and says what it saw. */
  private probe(): string {
    const best = new Map<number, number>(this.allowed.map((c) => [c, Number.POSITIVE_INFINITY]));
    for (let round = 0; round < 3; round++) {
      for (const c of this.allowed) {
        this.pin(c);
        best.set(c, Math.min(best.get(c)!, loopMs()));
      }
    }
    const [cpu, ms] = [...best].reduce((a, b) => (b[1] < a[1] ? b : a));
    this.pin(cpu);
    this.bestMs = Math.min(this.bestMs, ms);
    return `time relative to the fastest: ${[...best].map(([c, t]) => `CPU ${c} ${(t / ms).toFixed(2)}`).join(', ')}`;
  }

  private pin(cpu: number): void {
    taskset(['-p', '-c', String(cpu), String(process.pid)]);
    this.cpu = cpu;
  }
}
