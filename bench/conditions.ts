// The conditions a run was measured under, written into every result file: a number without its
// CPU, runtime and commit is not a result.
import os from 'node:os';
import process from 'node:process';
import v8 from 'node:v8';
import vm from 'node:vm';
import { execFileSync } from 'node:child_process';

export interface Conditions {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  runtime: { name: 'node' | 'deno'; version: string; v8: string };
  date: string;
  git: { commit: string; dirty: boolean };
  coreBuild: string;
  gcExposed: boolean;
  /** 1-, 5-, 15-minute load averages when the run started (other processes on the machine skew timings). */
  loadAverage: number[];
  mode: string;
  args: string[];
  /** The CPUs' speeds at the start, and where the main thread was pinned if it was (bench/cpu.ts). */
  cpuPin: string;
  /** Rounds each case is timed in, interleaved across implementations (bench/measure.ts measureInRounds). */
  rounds: number;
  /** How the rounds were kept out of slow stretches (bench/steady.ts), filled in at the end of the run. */
  roundGate: string;
}

const deno = (globalThis as { Deno?: { version: { deno: string; v8: string } } }).Deno;

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

let gcFn: (() => void) | undefined | null = null;
/** A way to force a full GC: --expose-gc if given, else the flag set at runtime (Node and Deno both allow it). */
export function getGc(): (() => void) | undefined {
  if (gcFn !== null) return gcFn;
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return (gcFn = g);
  try {
    v8.setFlagsFromString('--expose-gc');
    const f = vm.runInNewContext('gc') as unknown;
    gcFn = typeof f === 'function' ? (f as () => void) : undefined;
  } catch {
    gcFn = undefined;
  }
  return gcFn;
}

export function conditions(mode: string, coreBuild: string, cpuPin: string, rounds = 1): Conditions {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() || 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    runtime: deno
      ? { name: 'deno', version: deno.version.deno, v8: deno.version.v8 }
      : { name: 'node', version: process.versions.node, v8: process.versions.v8 },
    date: new Date().toISOString(),
    git: {
      commit: git(['rev-parse', 'HEAD']) || 'unknown',
      dirty: git(['status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results']) !== '',
    },
    coreBuild,
    gcExposed: getGc() !== undefined,
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
    mode,
    args: process.argv.slice(2),
    cpuPin,
    rounds,
    roundGate: '',
  };
}

/** Live JS bytes (heap + ArrayBuffers) after a full GC (two passes; weak refs settle). */
export function liveJsBytes(): number {
  const gc = getGc();
  if (gc) {
    gc();
    gc();
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
