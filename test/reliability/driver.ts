// The shared seeded driver of the reliability suite (test/reliability/*.test.ts): one generator,
// the load knobs, operation lists as plain data, a replayer contract and a shrinker.
//
//   seed ──► Driver (xoshiro128**, adapters/random.ts) ──► Op[] (data, no state captured)
//                                                             │
//                              replay(ops) → null | "what went wrong"  ◄─┘
//                                                             │ on failure
//                              shrink(ops, replay) → a minimal Op[] that still fails
//
// An operation refers to state only through small integers resolved at replay time ("release
// the k-th held address, k mod the number held"), so any sub-list of a failing list can be
// replayed on its own: that is what makes shrinking work. A failure message always carries the
// seed and the shrunk list, ready to paste as a named regression row.
//
// Load knobs (environment; CI uses the defaults):
//   IPALLOCATOR_FUZZ_OPS      operations per differential fuzz case (default 10000)
//   IPALLOCATOR_FAULT_OPS     operations per store-fault run (default 3000)
//   IPALLOCATOR_LOAD_OPS      operations of the MemoryStore load test (default 100000)
//   IPALLOCATOR_K8S_LOAD_OPS  operations of the KubernetesStore load test (default 1600)
//   IPALLOCATOR_SEED          base seed (default: each test's fixed seed); a failure prints it
import { drawBelow, seededRandom, type RandomSource, type U64Out } from '../../adapters/random.ts';

const env: Record<string, string | undefined> =
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};

/** A positive integer from the environment, or `fallback`. */
export function knob(name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** IPALLOCATOR_SEED mixed into a test's own seed (unset: the test's seed unchanged). */
export function baseSeed(own: number): number {
  const raw = env.IPALLOCATOR_SEED;
  if (raw === undefined || raw === '') return own;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`IPALLOCATOR_SEED must be an integer, got ${JSON.stringify(raw)}`);
  return (own ^ n) >>> 0;
}

export const FUZZ_OPS = knob('IPALLOCATOR_FUZZ_OPS', 10_000);
export const FAULT_OPS = knob('IPALLOCATOR_FAULT_OPS', 3_000);
export const LOAD_OPS = knob('IPALLOCATOR_LOAD_OPS', 100_000);
export const K8S_LOAD_OPS = knob('IPALLOCATOR_K8S_LOAD_OPS', 1_600);

/** A test timeout that grows with a load knob: `base` ms at the CI default, proportionally more above it. */
export function scaledTimeout(ops: number, ciDefault: number, base = 60_000): number {
  return ops <= ciDefault ? base : Math.ceil((base * ops) / ciDefault) * 2;
}

/** Seeded choices. Same seed ⇒ same sequence in Node and Deno. */
export class Driver {
  readonly seed: number;
  readonly rng: RandomSource;
  private readonly out: U64Out = { hi: 0, lo: 0 };

  constructor(seed: number) {
    this.seed = seed;
    this.rng = seededRandom(seed);
  }

  /** Uniform integer in [0, n), n ≥ 1 and < 2^32. */
  below(n: number): number {
    drawBelow(this.rng, 0, n, this.out);
    return this.out.lo;
  }

  /** Uniform integer in [lo, hi] (closed). */
  between(lo: number, hi: number): number {
    return lo + this.below(hi - lo + 1);
  }

  /** True with probability p/100. */
  percent(p: number): boolean {
    return this.below(100) < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.below(xs.length)]!;
  }

  /** Index by weight: weighted([5, 1]) returns 0 five times as often as 1. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.below(total);
    for (let i = 0; i < weights.length; i++) {
      if (r < weights[i]!) return i;
      r -= weights[i]!;
    }
    return weights.length - 1;
  }

  /** A uniform u32. */
  u32(): number {
    return this.rng.nextU32();
  }
}

/** Removes x from an array in O(1) (order not kept). */
export function swapRemove<T>(xs: T[], i: number): T {
  const v = xs[i]!;
  xs[i] = xs[xs.length - 1]!;
  xs.pop();
  return v;
}

/**
 * Delta-debugging shrinker (ddmin over contiguous chunks, then single ops): the smallest list it
 * can find for which `fails` still answers a message. `fails` must be deterministic. Bounded by
 * `budget` replays so a slow replay cannot hang a failing test.
 */
export async function shrink<Op>(
  ops: readonly Op[],
  fails: (ops: readonly Op[]) => Promise<string | null> | string | null,
  budget = 2_000,
): Promise<{ ops: Op[]; message: string }> {
  let cur = [...ops];
  let message = (await fails(cur)) ?? 'did not fail on replay (non-deterministic?)';
  let replays = 1;
  let chunk = Math.max(1, cur.length >> 1);
  while (chunk >= 1 && replays < budget) {
    let removed = false;
    for (let start = 0; start < cur.length && replays < budget; ) {
      const cand = cur.slice(0, start).concat(cur.slice(start + chunk));
      const m = await fails(cand);
      replays++;
      if (m !== null) {
        cur = cand;
        message = m;
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (!removed) chunk >>= 1;
    else if (chunk > cur.length) chunk = Math.max(1, cur.length >> 1);
  }
  return { ops: cur, message };
}

/** A failure report: the seed, the first message, the shrunk list as JSON (a regression row). */
export function report(what: string, seed: number, message: string, shrunk: { ops: unknown[]; message: string }): string {
  return [
    `${what} failed with seed ${seed}: ${message}`,
    `minimal repro (${shrunk.ops.length} ops): ${shrunk.message}`,
    `  ops: ${JSON.stringify(shrunk.ops)}`,
    `add it as a named row to the regression table of the test.`,
  ].join('\n');
}

/** `Class: message` of a thrown value (the observable outcome of a failed call). */
export function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.constructor.name}: ${e.message}`;
  return `non-Error thrown: ${String(e)}`;
}

/** Settles `p` into a comparable string: `ok <value>` or `Class: message`. */
export async function outcome(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    const v = typeof p === 'function' ? p() : await p;
    return v === undefined ? 'ok' : `ok ${String(v)}`;
  } catch (e) {
    return errorText(e);
  }
}

/** Prints a throughput line (never asserted). */
export function reportThroughput(label: string, ops: number, ms: number): string {
  const line = `${label}: ${ops} ops in ${ms.toFixed(0)} ms = ${Math.round((ops / ms) * 1000)} ops/s`;
  console.log(`[reliability] ${line}`);
  return line;
}

/** A set of strings with O(1) add, delete and pick-by-index (the addresses a test holds). */
export class Held {
  readonly list: string[] = [];
  private readonly pos = new Map<string, number>();

  get size(): number {
    return this.list.length;
  }

  has(x: string): boolean {
    return this.pos.has(x);
  }

  /** false when already present. */
  add(x: string): boolean {
    if (this.pos.has(x)) return false;
    this.pos.set(x, this.list.length);
    this.list.push(x);
    return true;
  }

  delete(x: string): boolean {
    const i = this.pos.get(x);
    if (i === undefined) return false;
    const last = this.list.pop()!;
    if (last !== x) {
      this.list[i] = last;
      this.pos.set(last, i);
    }
    this.pos.delete(x);
    return true;
  }

  at(k: number): string {
    return this.list[k % this.list.length]!;
  }
}
