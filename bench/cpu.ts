// Which CPU the bench runs on. The cores of a virtual machine need not be equally fast: a vCPU
// whose host core is shared with another guest can run at half the speed of its sibling, and for
// minutes at a time. The scheduler moves a process between cores as it likes, and the go-seed child
// starts wherever there is room, so without pinning a side-by-side comparison can compare two cores
// instead of two implementations, and one implementation's cells can differ 2× between runs.
//
// On Linux with `taskset` (util-linux), the bench therefore times a short loop on each CPU it may
// use, pins its main thread to the fastest, and keeps it there: the Go child inherits the pin
// (children inherit the affinity of the thread that starts them), and the runtime's helper threads
// (GC, compiler) stay free to use the other cores. `--cpu <n>` pins to n without probing;
// `--cpu any` leaves the scheduler alone. Elsewhere nothing is pinned and the results say so.
import { execFileSync } from 'node:child_process';
import process from 'node:process';

export interface CpuPin {
  /** The CPU the main thread was pinned to, or null when not pinned. */
  cpu: number | null;
  /** How the choice was made, for the results' conditions line. */
  how: string;
  /** The probe's best time per CPU, relative to the fastest (1 = fastest); empty when not probed. */
  probe: { cpu: number; relative: number }[];
}

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

let allowed: number[] | undefined;
/**
 * The CPUs the main thread was allowed before the bench pinned it, from `taskset -p -c`
 * ("pid N's current affinity list: 0,1"): read once, since a pin narrows the list.
 */
function allowedCpus(): number[] {
  if (!allowed) {
    const line = taskset(['-p', '-c', String(process.pid)]);
    allowed = parseCpuList(line.slice(line.lastIndexOf(':') + 1));
  }
  return allowed;
}

function pin(cpu: number): void {
  taskset(['-p', '-c', String(cpu), String(process.pid)]);
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

/**
 * Pins the bench's main thread as `choice` asks: undefined = probe and take the fastest CPU,
 * "any" = no pinning, a number = that CPU. Never throws: a bench without pinning still runs.
 */
export function pinBenchCpu(choice: string | undefined): CpuPin {
  if (choice === 'any') return { cpu: null, how: 'not pinned (--cpu any)', probe: [] };
  if (process.platform !== 'linux') return { cpu: null, how: `not pinned (${process.platform})`, probe: [] };
  let cpus: number[];
  try {
    cpus = allowedCpus();
  } catch {
    return { cpu: null, how: 'not pinned (taskset not available)', probe: [] };
  }
  if (choice !== undefined) {
    const cpu = Number(choice);
    if (!Number.isInteger(cpu) || !cpus.includes(cpu)) {
      throw new Error(`--cpu ${choice}: expected "any" or one of the CPUs this process may use (${cpus.join(', ')})`);
    }
    pin(cpu);
    return { cpu, how: `pinned to CPU ${cpu} (--cpu)`, probe: [] };
  }
  if (cpus.length === 1) return { cpu: cpus[0]!, how: `on CPU ${cpus[0]} (the only one allowed)`, probe: [] };
  // three rounds, CPUs interleaved, best of each: one slow moment does not decide
  const best = new Map<number, number>(cpus.map((c) => [c, Number.POSITIVE_INFINITY]));
  loopMs(); // compile the loop before any round counts
  for (let round = 0; round < 3; round++) {
    for (const c of cpus) {
      pin(c);
      best.set(c, Math.min(best.get(c)!, loopMs()));
    }
  }
  const fastest = [...best].reduce((a, b) => (b[1] < a[1] ? b : a));
  pin(fastest[0]);
  const probe = [...best].map(([cpu, ms]) => ({ cpu, relative: Math.round((ms / fastest[1]) * 100) / 100 }));
  return { cpu: fastest[0], how: `pinned to CPU ${fastest[0]}, the fastest of a probe`, probe };
}

/** The pin as the results' conditions line states it. */
export function describePin(p: CpuPin): string {
  const probe =
    p.probe.length > 1 ? ` (probe, time relative to the fastest: ${p.probe.map((x) => `CPU ${x.cpu} ${x.relative}`).join(', ')})` : '';
  return `${p.how}${probe}`;
}
