// The strategy simulator (bench/strategies/sim.ts): deterministic by seed, and its measures right
// on tiny workloads whose answers can be worked out by hand.
import { describe, expect, it } from 'vitest';
import { type Measures, simulate, type Workload } from '../bench/strategies/sim.ts';
import { STRATEGY_NAMES } from '../adapters/builtin-strategies.ts';
import { DEFAULT_SEED, strategiesArgs } from '../bench/strategies/args.ts';
import { workloads } from '../bench/strategies/workloads.ts';
import type { Results } from '../bench/strategies/report.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const churn: Workload = {
  name: 'churn',
  cidrs: ['10.0.0.0/24', '10.0.1.0/25'],
  policy: 'weighted',
  servers: 3,
  lag: { kind: 'lognormal', medianMs: 200, sigma: 1 },
  lifetime: { kind: 'pareto', meanMs: 60_000, alpha: 1.5 },
  ratePerS: 4,
  bursts: [{ size: 100, spreadMs: 2_000, everyMs: 200_000 }],
  staticShare: 0.05,
  creates: 3_000,
  warmupMs: 60_000,
};

/** The measures without the wall time (the only number that is not a function of the inputs). */
function result(m: Measures): Omit<Measures, 'wallMs'> {
  const { wallMs: _, ...rest } = m;
  return rest;
}

describe('the simulator', () => {
  it('gives the same measures for the same seed, and other measures for another seed', () => {
    const spec = { label: 'upstream', strategy: 'upstream' as const };
    const a = simulate(churn, spec, 7);
    const b = simulate(churn, spec, 7);
    const c = simulate(churn, spec, 8);
    expect(result(b)).toEqual(result(a));
    expect(result(c)).not.toEqual(result(a));
    expect(a.allocations).toBeGreaterThan(2000);
    expect(a.collisions).toBeGreaterThan(0); // 3 servers, 200 ms lag: some creates collide
  });

  for (const name of STRATEGY_NAMES) {
    it(`${name}: one API server with no informer lag never collides`, () => {
      const m = simulate({ ...churn, servers: 1, lag: { kind: 'fixed', ms: 0 } }, { label: name, strategy: name }, 3);
      expect(m.allocations).toBeGreaterThan(2000);
      expect(m.collisions).toBe(0);
      expect(m.roundTripsPerAllocation).toBe(1);
    });
  }

  it('lowest-free reuses at once: the reuse delay is the gap between the release and the next create', () => {
    const w: Workload = {
      name: 'reuse',
      cidrs: ['10.0.0.0/29'], // 6 addresses, no static band
      servers: 1,
      lag: { kind: 'fixed', ms: 0 },
      lifetime: { kind: 'fixed', ms: 0 },
      script: [
        { atMs: 0, server: 0, lifeMs: 10_000 }, // 10.0.0.1, released at 10 s
        { atMs: 1_000, server: 0, lifeMs: 100_000 }, // 10.0.0.2
        { atMs: 13_000, server: 0, lifeMs: 100_000 }, // 10.0.0.1 again: 3 s after its release
        { atMs: 14_000, server: 0, lifeMs: 100_000 }, // 10.0.0.3: never used before
      ],
    };
    const m = simulate(w, { label: 'lowest-free', strategy: 'lowest-free' }, 1);
    expect(m.allocations).toBe(4);
    expect(m.reuses).toBe(1);
    expect(m.reuseMedianS).toBe(3);
    expect([m.reuseUnder1s, m.reuseUnder10s, m.reuseUnder60s]).toEqual([0, 0.25, 0.25]);
    expect(m.reuseHistogram[5]).toBe(1); // the (3 s, 10 s] bucket
    // a 5 s cool-down keeps 10.0.0.1 out at 13 s (the lowest free is then 10.0.0.3): no reuse
    const cooled = simulate(w, { label: 'lowest-free + 5 s', strategy: 'lowest-free', coolDownMs: 5_000 }, 1);
    expect(cooled.reuses).toBe(0);
  });

  it('a server that has not heard of a create collides once and retries with the next choice', () => {
    const w: Workload = {
      name: 'collide',
      cidrs: ['10.0.0.0/29'],
      servers: 2,
      lag: { kind: 'fixed', ms: 1_000 },
      lifetime: { kind: 'fixed', ms: 0 },
      script: [
        { atMs: 0, server: 0, lifeMs: 60_000 }, // 10.0.0.1
        { atMs: 1, server: 1, lifeMs: 60_000 }, // server 1 has not heard: 10.0.0.1 fails, then 10.0.0.2
        { atMs: 2_000, server: 1, lifeMs: 60_000 }, // heard by now: 10.0.0.3 at once
      ],
    };
    const m = simulate(w, { label: 'lowest-free', strategy: 'lowest-free' }, 1);
    expect(m.allocations).toBe(3);
    expect(m.collisions).toBe(1);
    expect(m.collisionsPer1000).toBeCloseTo(1000 / 3, 9);
    expect(m.roundTripsPerAllocation).toBeCloseTo(4 / 3, 9);
    expect(m.maxAttempts).toBe(2);
  });

  it('counts static-band intrusion and the static requests it blocks', () => {
    // a /27: 30 addresses, static band the first 16 (10.0.0.1 … 10.0.0.16)
    const script = Array.from({ length: 15 }, (_, i) => ({ atMs: i, server: 0, lifeMs: 1e9 }));
    const w: Workload = {
      name: 'intrusion',
      cidrs: ['10.0.0.0/27'],
      servers: 1,
      lag: { kind: 'fixed', ms: 0 },
      lifetime: { kind: 'fixed', ms: 0 },
      script: [
        ...script, // 14 fill the dynamic band, the 15th takes 10.0.0.1 from the static band
        { atMs: 100, server: 0, lifeMs: 1e9, ip: '10.0.0.1' }, // refused: held by a dynamic allocation
        { atMs: 101, server: 0, lifeMs: 1e9, ip: '10.0.0.9' }, // free: granted
        { atMs: 102, server: 0, lifeMs: 1e9, ip: '10.0.0.9' }, // refused: held by the static one
      ],
    };
    const m = simulate(w, { label: 'lowest-free', strategy: 'lowest-free' }, 1);
    expect(m.allocations).toBe(15);
    expect(m.intrusionPer1000).toBeCloseTo(1000 / 15, 9);
    expect(m.staticCreates).toBe(3);
    expect(m.staticBlockedByDynamicPer1000).toBeCloseTo(1000 / 3, 9);
    expect(m.staticBlockedByStaticPer1000).toBeCloseTo(1000 / 3, 9);
    expect(m.peakFill).toBeCloseTo(16 / 30, 9);
  });

  it("spreads across ranges by the policy: 'ordered' fills the first range before the second", () => {
    const w: Workload = {
      name: 'ordered',
      cidrs: ['10.0.0.0/29', '10.0.1.0/29'], // 6 + 6 addresses
      policy: 'ordered',
      servers: 1,
      lag: { kind: 'fixed', ms: 0 },
      lifetime: { kind: 'fixed', ms: 0 },
      script: Array.from({ length: 8 }, (_, i) => ({ atMs: i, server: 0, lifeMs: 1e9 })),
    };
    const m = simulate(w, { label: 'upstream', strategy: 'upstream' }, 1);
    expect(m.rangeShare).toEqual([6 / 8, 2 / 8]);
    expect(m.full).toBe(0);
  });

  // Regression: the measures named their workload only ("load 0.9", "ServiceCIDRs weighted"), so a
  // script reading the results had to parse those names for the load and the policy.
  it('reports the load and the policy as values beside the workload name', () => {
    const spec = { label: 'upstream', strategy: 'upstream' as const };
    const small = { ...churn, creates: 300 };
    expect(simulate({ ...small, load: 0.9 }, spec, 1)).toMatchObject({ workload: 'churn', load: 0.9, policy: 'weighted' });
    // one range: no policy; no load given (a script): null
    expect(simulate({ ...small, cidrs: ['10.0.0.0/24'], load: 0.5 }, spec, 1)).toMatchObject({ load: 0.5, policy: null });
    expect(simulate({ ...small, policy: undefined }, spec, 1)).toMatchObject({ load: null, policy: 'upstream' });
  });
});

describe("bench:strategies's workloads", () => {
  for (const quick of [false, true]) {
    const w = workloads(quick);
    it(`${quick ? 'quick' : 'full'} run: each says its load as a number and its policy as a name`, () => {
      for (const s of w.sweep) expect(s.name).toBe(`load ${s.load}`);
      expect(w.sweep.length).toBe(quick ? 3 : 7);
      expect(w.burst.load).toBe(0.5);
      expect(w.serviceCIDRs.map((s) => [s.name, s.policy, s.load])).toEqual([
        ['ServiceCIDRs upstream', 'upstream', 0.8],
        ['ServiceCIDRs ordered', 'ordered', 0.8],
        ['ServiceCIDRs weighted', 'weighted', 0.8],
      ]);
      expect(w.ipv6.load! * 2 ** 64).toBe(20_000);
    });

    it(`${quick ? 'quick' : 'full'} run: the arrival rate offers the load named (arrivals × mean lifetime ÷ addresses)`, () => {
      // the rates the committed results were made with: one /22 (1,022), a /20 (4,094), /24 + /24 + /23 (1,018)
      for (const s of w.sweep) expect(s.ratePerS).toBe((s.load! * 1022) / 600);
      expect(w.burst.ratePerS).toBe((0.5 * 4094) / 3600);
      for (const s of w.serviceCIDRs) expect(s.ratePerS).toBe((0.8 * 1018) / 600);
      expect(w.ipv6.ratePerS).toBe(20_000 / 600);
    });
  }
});

describe('npm run bench:strategies: its flags', () => {
  // Regression: a seed past 2^52 made every API server share one random
  // stream (meaningless results), and a flag without its value ended in a stack trace.
  it.each([
    [['--seed', '1.5'], '--seed must be an integer in 0..4294967295, got 1.5'],
    [['--seed', '4503599627370496'], '--seed must be an integer in 0..4294967295, got 4503599627370496'],
    [['--seed'], '--seed needs a value'],
    // Regression: said in Node's parser's words, "Option '--out' argument is ambiguous", without its advice
    [['--out', '--quick'], '--out needs a value: it is followed by --quick (a value that starts with a dash is written --out=<value>)'],
  ])('%j: exit 2 and one line, before anything is simulated', async (flags, message) => {
    const { execFile } = await import('node:child_process');
    const root = new URL('..', import.meta.url);
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'bench/strategies/run.ts', ...flags], { cwd: root }, (err, _stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr });
      });
    });
    expect(result).toEqual({ code: 2, stderr: `bench:strategies: ${message}\n` });
  });

  // Regression: an argument it did not know was skipped, so a misspelt --quick, bench:quick's
  // --filter or --seed=7 started a full run with the default seed over the committed results.
  it.each([
    [['--quik'], "Unknown option '--quik'; it takes [--quick] [--seed <n>] [--out <prefix>] [--cpu fastest|<n>] [--strategy <module>]..."],
    [
      ['--quick', '--filter', 'random-free'],
      "Unknown option '--filter'; it takes [--quick] [--seed <n>] [--out <prefix>] [--cpu fastest|<n>] [--strategy <module>]...",
    ],
    [
      ['quick'],
      "Unexpected argument 'quick'. This command does not take positional arguments; it takes [--quick] [--seed <n>] [--out <prefix>] [--cpu fastest|<n>] [--strategy <module>]...",
    ],
    [['--seed', '--quick'], '--seed needs a value: it is followed by --quick (a value that starts with a dash is written --seed=<value>)'],
    [['--seed=1.5'], '--seed must be an integer in 0..4294967295, got 1.5'],
    [['--out='], '--out needs a value'],
  ])(
    '%j: exit 2 and one line, nothing written',
    async (flags, message) => {
      const { execFile } = await import('node:child_process');
      const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const root = new URL('..', import.meta.url);
      const dir = mkdtempSync(join(tmpdir(), 'strategies-args-'));
      try {
        const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const args = ['--import', 'tsx', 'bench/strategies/run.ts', '--out', join(dir, 's'), ...flags];
          execFile(process.execPath, args, { cwd: root, timeout: 60_000 }, (err, _stdout, stderr) => {
            resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr });
          });
        });
        expect(result).toEqual({ code: 2, stderr: `bench:strategies: ${message}\n` });
        expect(readdirSync(dir)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    70_000,
  );
});

describe('npm run bench:strategies: a --cpu it cannot use', () => {
  // Regression: bench/cpu.ts's refusal of the value ended in a stack trace.
  it('is exit 2 and one line naming the value, nothing written', async () => {
    const { execFile } = await import('node:child_process');
    const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
    const root = new URL('..', import.meta.url);
    const dir = mkdtempSync(join(tmpdir(), 'strategies-args-'));
    try {
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const args = ['--import', 'tsx', 'bench/strategies/run.ts', '--quick', '--out', join(dir, 's'), '--cpu', 'nonsense'];
        execFile(process.execPath, args, { cwd: root, timeout: 60_000 }, (err, _stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr });
        });
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^bench:strategies: --cpu nonsense: [^\n]*\n$/);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 70_000);
});

describe('npm run bench:strategies: where it writes', () => {
  // Only a full run with the committed seed replaces the committed results by default.
  it.each([
    [[], { quick: false, seed: DEFAULT_SEED, out: 'bench/results/strategies' }],
    [['--quick'], { quick: true, seed: DEFAULT_SEED, out: join(tmpdir(), 'ipallocator-bench', 'strategies') }],
    [['--seed', '7'], { quick: false, seed: 7, out: join(tmpdir(), 'ipallocator-bench', 'strategies-seed-7') }],
    [['--seed=7', '--quick'], { quick: true, seed: 7, out: join(tmpdir(), 'ipallocator-bench', 'strategies') }],
    [['--seed', String(DEFAULT_SEED), '--out=x/y'], { quick: false, seed: DEFAULT_SEED, out: 'x/y' }],
  ])('%j', (args, expected) => {
    expect(strategiesArgs(args)).toEqual({ cpu: undefined, strategies: [], ...expected });
  });

  it('takes --cpu as given, for bench/cpu.ts to check', () => {
    expect(strategiesArgs(['--cpu', 'fastest', '--quick']).cpu).toBe('fastest');
    expect(strategiesArgs(['--cpu=1']).cpu).toBe('1');
  });
});

describe('npm run bench:strategies --strategy <module>: strategies of your own', () => {
  /** A strategy module's text: `highest-free` (docs/strategies.md's example) under `name`, exported as `exportAs`. */
  const highestFree = (name: string, exportAs = 'highestFree'): string => `
import type { AllocationStrategy, Offset } from '../../adapters/index.ts';
export const ${exportAs}: AllocationStrategy = {
  name: '${name}',
  forRange(view) {
    const { index, rangeOffset, sizeLo } = view;
    const highest = (out: Offset, lo: number, hi: number): boolean => {
      if (hi < lo) return false;
      index.countFree(0, lo, 0, hi);
      if (index.resultLo === 0) return false;
      index.selectFree(0, index.resultLo - 1, 0, lo, 0, hi);
      out.hi = index.resultHi;
      out.lo = index.resultLo;
      return true;
    };
    return { choose: (out) => highest(out, rangeOffset, sizeLo - 1) || highest(out, 0, rangeOffset - 1) };
  },
};
`;

  /** Runs the bench in `dir` with `flags` (module paths relative to the checkout), writing to dir/s. */
  async function bench(dir: string, flags: string[]): Promise<{ code: number | null; stderr: string }> {
    const { execFile } = await import('node:child_process');
    const root = new URL('..', import.meta.url);
    return new Promise((resolve) => {
      const args = ['--import', 'tsx', 'bench/strategies/run.ts', '--out', join(dir, 's'), ...flags];
      execFile(process.execPath, args, { cwd: root, timeout: 170_000 }, (err, _stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr });
      });
    });
  }

  /** A directory under the checkout's test/ for modules and output, removed after `body`. */
  async function inScratch(body: (dir: string, rel: (f: string) => string) => Promise<void>): Promise<void> {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { fileURLToPath } = await import('node:url');
    const testDir = fileURLToPath(new URL('.', import.meta.url));
    const dir = mkdtempSync(join(testDir, '.own-strategy-'));
    try {
      await body(dir, (f) => join('test', dir.slice(testDir.length), f));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("runs a module's strategies beside the built-ins, in every workload and speed case, named by their name", async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    await inScratch(async (dir, rel) => {
      writeFileSync(join(dir, 'mine.ts'), highestFree('highest-free'));
      const { code, stderr } = await bench(dir, ['--quick', '--strategy', rel('mine.ts')]);
      expect(code, stderr).toBe(0);
      const r: Results = JSON.parse(readFileSync(join(dir, 's.json'), 'utf8'));
      expect(r.own).toEqual([{ name: 'highest-free', module: rel('mine.ts') }]);
      const mine = <T extends { strategy: string }>(rows: T[]): T[] => rows.filter((m) => m.strategy === 'highest-free');
      expect(mine(r.sweep).map((m) => m.load)).toEqual([0.5, 0.9, 0.99]);
      expect(mine(r.burst)).toHaveLength(1);
      expect(mine(r.serviceCIDRs).map((m) => m.policy)).toEqual(['upstream', 'ordered', 'weighted']);
      expect(mine(r.ipv6)).toHaveLength(1);
      expect(mine(r.speed)).toHaveLength(5);
      for (const m of mine(r.sweep)) expect(m).toMatchObject({ allocations: expect.any(Number), full: 0 });
      const page = readFileSync(join(dir, 's.md'), 'utf8');
      expect(page).toContain(`Strategies of your own (--strategy): highest-free (${rel('mine.ts')}).`);
      expect(page).toMatch(/\n\| highest-free \|[^\n]*(ns|µs) ±/);
      expect(readFileSync(join(dir, 's-collisions.svg'), 'utf8')).toContain('highest-free');
    });
  }, 180_000);

  it.each([
    [
      'a name of a built-in',
      { 'mine.ts': highestFree('upstream') },
      ['mine.ts'],
      "--strategy {mine.ts}: a strategy named 'upstream' is one of the run's own; give yours another name",
    ],
    [
      "a name of the run's cool-down lines",
      { 'mine.ts': highestFree('random-free + cool-down 60 s') },
      ['mine.ts'],
      "--strategy {mine.ts}: a strategy named 'random-free + cool-down 60 s' is one of the run's own; give yours another name",
    ],
    [
      "the name of another module's strategy",
      { 'a.ts': highestFree('highest-free'), 'b.ts': highestFree('highest-free', 'other') },
      ['a.ts', 'b.ts'],
      "--strategy {b.ts}: a strategy named 'highest-free' also comes from {a.ts}; give one another name",
    ],
    [
      'no strategy among its exports',
      { 'mine.mjs': 'export const answer = 42;\nexport function forRange() {}\n' },
      ['mine.mjs'],
      '--strategy {mine.mjs} exports no AllocationStrategy (an object with a name and a forRange(view) method; exports: answer, forRange)',
    ],
    [
      'a strategy a Range refuses',
      { 'mine.mjs': "export default { name: 'broken', forRange: () => ({}) };\n" },
      ['mine.mjs'],
      "--strategy {mine.mjs}: a Range on 10.96.0.0/24 refuses 'broken': ",
    ],
    ['no such module', {}, ['missing.ts'], '--strategy {missing.ts}: cannot import it: '],
  ])(
    '%s: exit 2 and one line, nothing simulated or written',
    async (_what, files, modules, message) => {
      const { readdirSync, writeFileSync } = await import('node:fs');
      await inScratch(async (dir, rel) => {
        for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
        const flags = ['--quick', ...modules.flatMap((m) => ['--strategy', rel(m)])];
        const { code, stderr } = await bench(dir, flags);
        expect(code).toBe(2);
        const expected = `bench:strategies: ${message.replace(/\{([^}]+)\}/g, (_, f: string) => rel(f))}`;
        expect(stderr.startsWith(expected), stderr).toBe(true);
        expect(stderr.split('\n')).toHaveLength(2); // one line
        expect(readdirSync(dir).filter((f) => f.startsWith('s'))).toEqual([]);
      });
    },
    70_000,
  );

  it('reads --strategy as a list, in the order given', () => {
    expect(strategiesArgs(['--strategy', 'a.ts', '--strategy=b.mjs']).strategies).toEqual(['a.ts', 'b.mjs']);
    expect(() => strategiesArgs(['--strategy='])).toThrow('--strategy needs a value');
    expect(() => strategiesArgs(['--strategy=a.ts', '--strategy='])).toThrow('--strategy needs a value');
  });
});
