// The arguments of `npm run bench:strategies` (bench/strategies/run.ts), read before anything is
// simulated: a run takes a minute or more, and its default output is the committed results.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
}

/** A usage error: what run.ts prints, in one line, before it exits with status 2. */
export class UsageError extends Error {}

/**
 * The settings `args` (process.argv after the script) ask for; UsageError for an argument that is
 * none of the four, or a value that is not one. Each option is `--name value` or `--name=value`,
 * as `npm run bench` takes them. An unknown argument is refused rather than skipped: a misspelt
 * `--quick`, or `--filter` (bench:quick's), would otherwise start a full run over the committed
 * results. Only a full run with the default seed writes there by default; a quick run, or another
 * seed, writes to the system's temporary directory unless `--out` says where.
 */
export function strategiesArgs(args: readonly string[]): StrategiesArgs {
  let quick = false;
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--quick') {
      quick = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (!(VALUED as readonly string[]).includes(name)) {
      throw new UsageError(`unknown argument ${JSON.stringify(arg)}; it takes ${USAGE}`);
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
      i++;
    }
    if (value === '') throw new UsageError(`${name} needs a value`);
    values.set(name, value);
  }
  // Each API server's random source is seeded from seed · 1000 + its number, which must stay an
  // exact integer in a double (below 2^53) for the servers' streams to differ; a seed below 2^32
  // keeps it far inside that, and fits the 32-bit seeds the simulator reports.
  const seedText = values.get('--seed');
  const seed = seedText === undefined ? DEFAULT_SEED : Number(seedText);
  if (!/^\d+$/.test(seedText ?? '0') || !(seed <= 0xffffffff))
    throw new UsageError(`--seed must be an integer in 0..4294967295, got ${seedText}`);
  const committed = !quick && seed === DEFAULT_SEED;
  const out =
    values.get('--out') ??
    (committed ? 'bench/results/strategies' : join(tmpdir(), 'ipallocator-bench', quick ? 'strategies' : `strategies-seed-${seed}`));
  return { quick, seed, out, cpu: values.get('--cpu') };
}

/** The options that take a value. */
const VALUED = ['--seed', '--out', '--cpu'] as const;

const USAGE = '[--quick] [--seed <n>] [--out <prefix>] [--cpu fastest|<n>]';
