// The arguments of `npm run bench:strategies` (bench/strategies/run.ts), read before anything is
// simulated: a run takes a minute or more, and its default output is the committed results.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readArgs, UsageError } from '../args.ts';

/** The seed of the committed results (bench/results/strategies.*). */
export const DEFAULT_SEED = 20240601;

/** A run's settings, from its arguments. */
export interface StrategiesArgs {
  /** The reduced run: a tenth of the allocations, three loads. */
  readonly quick: boolean;
  readonly seed: number;
  /** The path prefix of the files written (`<out>.json`, `<out>.md`, `<out>-*.svg`). */
  readonly out: string;
  /** `--cpu`'s value (bench/cpu.ts), when given. */
  readonly cpu: string | undefined;
  /** The modules of `--strategy`, in the order given (own.ts imports them). */
  readonly strategies: readonly string[];
}

/**
 * The settings `args` (process.argv after the script) ask for; UsageError (bench/args.ts) for an
 * argument that is none of the five, or a value that is not one. A quick run, or another seed,
 * writes to the system's temporary directory unless `--out` says where: only a full run with the
 * default seed writes over the committed results by default.
 */
export function strategiesArgs(args: readonly string[]): StrategiesArgs {
  const values = readArgs(
    args,
    {
      quick: { type: 'boolean' },
      seed: { type: 'string' },
      out: { type: 'string' },
      cpu: { type: 'string' },
      strategy: { type: 'string', multiple: true },
    },
    USAGE,
  );
  const quick = values.quick === true;
  // Each API server's random source is seeded from seed · 1000 + its number, which must stay an
  // exact integer in a double (below 2^53) for the servers' streams to differ; a seed below 2^32
  // keeps it far inside that, and fits the 32-bit seeds the simulator reports.
  const seedText = values.seed;
  const seed = seedText === undefined ? DEFAULT_SEED : Number(seedText);
  if (!/^\d+$/.test(seedText ?? '0') || !(seed <= 0xffffffff))
    throw new UsageError(`--seed must be an integer in 0..4294967295, got ${seedText}`);
  const committed = !quick && seed === DEFAULT_SEED;
  const out =
    values.out ??
    (committed ? 'bench/results/strategies' : join(tmpdir(), 'ipallocator-bench', quick ? 'strategies' : `strategies-seed-${seed}`));
  const strategies = values.strategy ?? [];
  return { quick, seed, out, cpu: values.cpu, strategies };
}

const USAGE = '[--quick] [--seed <n>] [--out <prefix>] [--cpu fastest|<n>] [--strategy <module>]...';
