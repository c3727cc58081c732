// Helpers of the benchmark harness: fills, the address text it loads stores with, statistics, how
// a case is sized, and the SVG writer. (No test asserts a timing.)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import process from 'node:process';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { organicOrder, uniformOrder, freeOffsets, randomU64Pairs } from '../bench/fills.ts';
import { RANGES, offsetText, rangeById } from '../bench/ranges.ts';
import {
  measureAsync,
  measureInRounds,
  median,
  sampleAsync,
  summarize,
  type Budget,
  type Clock,
  type Contender,
  type Samples,
  type Skipped,
} from '../bench/measure.ts';
import { chartSvg, esc } from '../bench/svg.ts';
import { IMPL_NAMES } from '../bench/impl.ts';
import { OPS, evaluateTargets, markdown, ratioBase, slowerBeyondNoise, targetsMarkdown, type Results, type Row } from '../bench/report.ts';
import { REJECTION_FLOOR } from '../bench/boundary.ts';
import { formatAddr } from '../adapters/address.ts';
import { BenchCpu, parseCpuList } from '../bench/cpu.ts';
import { readArgs, UsageError } from '../bench/args.ts';
import { MAX_RETRIES, type RoundGate, SteadyGate } from '../bench/steady.ts';

describe('fills', () => {
  it('uniform: distinct offsets inside the range, same seed same order', () => {
    const a = uniformOrder(1000, 999, 5);
    expect(new Set(a).size).toBe(999);
    expect(Math.max(...a)).toBeLessThan(1000);
    expect(uniformOrder(1000, 999, 5)).toEqual(a);
    expect(uniformOrder(1000, 999, 6)).not.toEqual(a);
  });

  it('organic: fills the dynamic band first, no duplicates, then the static band', () => {
    const o = organicOrder(254, 16, 254, 9);
    expect(new Set(o).size).toBe(254);
    for (let i = 0; i < 238; i++) expect(o[i]).toBeGreaterThanOrEqual(16);
    for (let i = 238; i < 254; i++) expect(o[i]).toBeLessThan(16);
    expect(() => organicOrder(14, 0, 15, 1)).toThrow(/full/);
  });

  it('free offsets are exactly the complement, u64 pairs stay below 2^64 − 1', () => {
    const order = uniformOrder(100, 60, 1);
    const free = freeOffsets(100, order, 60, 1000, 2);
    expect(free.length).toBe(40);
    const taken = new Set(order);
    for (const f of free) expect(taken.has(f)).toBe(false);
    const p = randomU64Pairs(1000, 3);
    for (let i = 0; i < p.length; i += 2) expect(p[i] === 0xffffffff && p[i + 1] >= 0xfffffffe).toBe(false);
  });

  it("a longer list of free addresses begins with the shorter one (the store floor's start with the queries')", () => {
    const order = uniformOrder(5000, 2500, 4);
    const long = freeOffsets(5000, order, 2500, 2000, 5);
    expect(long.length).toBe(2000);
    expect(new Set(long).size).toBe(2000);
    expect([...long.subarray(0, 100)]).toEqual([...freeOffsets(5000, order, 2500, 100, 5)]);
    expect([...randomU64Pairs(2000, 6).subarray(0, 200)]).toEqual([...randomU64Pairs(100, 6)]);
  });
});

describe('ranges', () => {
  it('sizes and offsets match upstream (hostsPerNetwork, calculateRangeOffset)', () => {
    expect(rangeById('v4/24').size).toBe(254);
    expect(rangeById('v4/12').size).toBe(1048574);
    expect(rangeById('v4/12').rangeOffset).toBe(256);
    expect(rangeById('v6/112').size).toBe(65535);
    const r64 = rangeById('v6/64');
    expect([r64.sizeHi, r64.sizeLo]).toEqual([0xffffffff, 0xffffffff]);
    expect(r64.fillable).toBe(false);
  });

  it('offset text is canonical (agrees with adapters/address.ts)', () => {
    expect(offsetText(rangeById('v4/12'), 0, 0)).toBe('10.96.0.1');
    expect(offsetText(rangeById('v6/112'), 0, 0xfffe)).toBe('2001:db8::ffff');
    expect(offsetText(rangeById('v6/64'), 0xffffffff, 0xfffffffe)).toBe('2001:db8::ffff:ffff:ffff:ffff');
    expect(offsetText(rangeById('v6/64'), 0x10000, 0xffffffff)).toBe('2001:db8::1:1:0:0');
    for (const r of RANGES) {
      for (const [hi, lo] of [
        [0, 0],
        [0, 0xffff],
        [r.sizeHi >>> 1, 12345],
      ]) {
        if (r.sizeHi === 0 && (hi !== 0 || lo >= r.size)) continue;
        const t = offsetText(r, hi, lo);
        const w = r.family === 'IPv4' ? [0, 0, 0, 0] : [0, 0, 0, 0];
        expect(t).toBe(formatAddr(r.family === 'IPv4' ? 4 : 6, parseWords(t, w)));
      }
    }
  });
});

function parseWords(t: string, w: number[]): number[] {
  if (!t.includes(':')) {
    const o = t.split('.').map(Number);
    w[3] = ((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]) >>> 0;
    return w;
  }
  const [h, tl] = t.split('::');
  const a = h ? h.split(':') : [];
  const b = tl !== undefined && tl !== '' ? tl.split(':') : [];
  const g = [...a, ...Array(8 - a.length - b.length).fill('0'), ...b].map((x) => parseInt(x, 16));
  for (let i = 0; i < 4; i++) w[i] = ((g[2 * i] << 16) | g[2 * i + 1]) >>> 0;
  return w;
}

describe('statistics', () => {
  it('median and spread', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    const m = summarize([10, 10, 10, 12, 8], 100);
    expect(m.nsPerOp).toBe(10);
    expect(m.spread).toBe(0);
    expect(m.samples).toBe(5);
    expect(m.rme).toBeGreaterThan(0);
  });
});

describe('sizing a case', () => {
  // A clock of the test's own: each stand-in operation advances it by a known cost, so the sizing
  // logic is checked without timing anything (a real clock made these flaky on a busy machine).
  let now = 0n;
  const clock: Clock = () => now;
  const spin = (ns: number): void => {
    now += BigInt(ns);
  };
  const budget: Budget = { budgetMs: 400, minSamples: 3, maxSamples: 4, sampleMs: 4, maxTime: 0, minTime: 0, warmMs: 5 };

  it('a case whose first call is slow only because it is cold is warmed up and sized for its warm cost', async () => {
    let calls = 0;
    const m = await measureAsync(
      async (n) => {
        for (let i = 0; i < n; i++) spin(calls++ === 0 ? 3_000_000 : 2_000); // 3 ms cold, then 2 µs
      },
      budget,
      clock,
    );
    if ('skipped' in m) throw new Error(m.skipped);
    // sized from the cold call, a 4 ms sample would hold 1 or 2 operations; from the warm cost, 2,000
    expect(m.opsPerSample).toBe(2000);
    expect(m.nsPerOp).toBe(2000);
  });

  it('a case slow on every call is timed without a warm-up', async () => {
    let calls = 0;
    const m = await measureAsync(
      async (n) => {
        for (let i = 0; i < n; i++, calls++) spin(1_500_000); // 1.5 ms, every time
      },
      budget,
      clock,
    );
    if ('skipped' in m) throw new Error(m.skipped);
    expect(m.opsPerSample).toBe(3);
    // two probing calls, then the samples only
    expect(calls).toBe(2 + m.samples * m.opsPerSample);
  });

  it('a case over its budget is skipped with the estimate', async () => {
    const m = await measureAsync(async (n) => spin(n * 500_000_000), budget, clock); // 0.5 s per operation
    expect(m).toEqual({ skipped: expect.stringMatching(/over budget.*500\.0 ms\/op × 3 samples > budget 400 ms/) });
  });
});

describe('a case timed in interleaved rounds', () => {
  const budget: Budget = { budgetMs: 400, minSamples: 5, maxSamples: 40, sampleMs: 4, maxTime: 0.8, minTime: 0, warmMs: 5 };
  // Stand-ins that record every call: who ran, in which round, on what share, and whether it could skip.
  const calls: { name: string; share: Budget; decides: boolean }[] = [];
  const fake = (name: string, answer: (call: number) => Samples | Skipped): Contender => {
    let call = 0;
    return {
      budget,
      async sample(share, decides) {
        calls.push({ name, share, decides });
        return answer(call++);
      },
    };
  };
  const samples = (...nsPerOp: number[]): Samples => ({ nsPerOp, opsPerSample: 100 });

  it('alternates the order A B C, C B A, … and summarises every round’s samples', async () => {
    calls.length = 0;
    const out = await measureInRounds(
      [
        fake('A', (c) => samples(10 + c, 10 + c)),
        fake('B', (c) => samples(20 * (c + 1))),
        fake('C', () => ({ nsPerOp: [5], opsPerSample: 300 })),
      ],
      4,
    );
    expect(calls.map((c) => c.name).join('')).toBe('ABCCBAABCCBA');
    // each round on a quarter of the case's budget; only the first may decide a skip
    expect(calls.every((c) => c.share.budgetMs === 100 && c.share.maxTime === 0.2 && c.share.minSamples === 2)).toBe(true);
    expect(calls.map((c) => c.decides)).toEqual([true, true, true, false, false, false, false, false, false, false, false, false]);
    expect(out[0]).toMatchObject({ samples: 8, nsPerOp: 11.5, opsPerSample: 100 });
    expect(out[1]).toMatchObject({ samples: 4, nsPerOp: 50 });
    expect(out[2]).toMatchObject({ samples: 4, nsPerOp: 5, opsPerSample: 300 });
  });

  it('runs an implementation skipped on its first round, or one that threw, no more; the others go on', async () => {
    calls.length = 0;
    const out = await measureInRounds(
      [
        fake('A', () => samples(1)),
        fake('B', () => ({ skipped: 'skipped (over budget): ~1.0 s/op × 2 samples > budget 100 ms' })),
        fake('C', (c) => {
          if (c === 1) throw new Error('C broke');
          return samples(3);
        }),
      ],
      3,
    );
    expect(calls.map((c) => c.name).join('')).toBe('ABCCAA');
    expect(out[0]).toMatchObject({ samples: 3, nsPerOp: 1 });
    expect(out[1]).toEqual({ skipped: 'skipped (over budget): ~1.0 s/op × 2 samples > budget 100 ms per round, 3 rounds' });
    expect(out[2]).toEqual({ error: new Error('C broke') });
  });

  it('a later round that probes over budget still takes its samples', async () => {
    let now = 0n;
    const clock: Clock = () => now;
    const slow = async (n: number): Promise<void> => {
      now += BigInt(n * 500_000_000); // 0.5 s per operation: over a 400 ms budget
    };
    const share: Budget = { ...budget, minSamples: 2, maxSamples: 2 };
    expect(await sampleAsync(slow, share, true, clock)).toHaveProperty('skipped');
    expect(await sampleAsync(slow, share, false, clock)).toEqual({ nsPerOp: [5e8, 5e8], opsPerSample: 1 });
  });

  // A gate whose "after" readings are scripted (true = usual; the last one repeats); it counts its waits.
  const gateOf = (after: boolean[]): RoundGate & { waited: number } => ({
    maxRetries: MAX_RETRIES,
    rounds: 0,
    retried: 0,
    kept: 0,
    waited: 0,
    async waitSteady() {
      this.waited++;
      return true;
    },
    steady: () => (after.length > 1 ? after.shift()! : after[0]!),
  });

  it('times a round again when the machine read slow around it, dropping its samples', async () => {
    calls.length = 0;
    const gate = gateOf([false, true]);
    const out = await measureInRounds([fake('A', (c) => samples(c === 0 ? 50 : 10))], 1, gate);
    expect(calls.map((c) => c.decides)).toEqual([true, true]); // the retry may still decide a skip
    expect(out[0]).toMatchObject({ samples: 1, nsPerOp: 10, slowRounds: 0 });
    expect([gate.waited, gate.rounds, gate.retried, gate.kept]).toEqual([2, 1, 1, 0]);
  });

  it('keeps a round that stays slow after every retry and counts it; a skip is not retried', async () => {
    calls.length = 0;
    const gate = gateOf([false]);
    const out = await measureInRounds([fake('A', (c) => samples(c + 1)), fake('B', () => ({ skipped: 'skipped (over budget)' }))], 2, gate);
    // A: each of its two rounds tried 1 + MAX_RETRIES times, the last try's samples kept
    expect(calls.filter((c) => c.name === 'A')).toHaveLength(2 * (1 + MAX_RETRIES));
    expect(calls.filter((c) => c.name === 'B')).toHaveLength(1);
    expect(out[0]).toMatchObject({ samples: 2, nsPerOp: (1 + MAX_RETRIES + 2 * (1 + MAX_RETRIES)) / 2, slowRounds: 2 });
    expect([gate.rounds, gate.retried, gate.kept]).toEqual([2, 2 * MAX_RETRIES, 2]);
  });

  describe('SteadyGate', () => {
    // calibration readings scripted (the last one repeats); waits recorded, not slept
    const scripted = (readings: number[], waitMs = 3000): { gate: SteadyGate; waits: number[] } => {
      const waits: number[] = [];
      const next = (): number => (readings.length > 1 ? readings.shift()! : readings[0]!);
      return { gate: new SteadyGate(next, async (ms) => void waits.push(ms), waitMs), waits };
    };
    const warm = Array.from({ length: 20 }, () => 100); // 5 to compile, 15 for the usual speed

    it('reads one slow moment followed by a usual reading as usual, two in a row as slow', () => {
      const { gate } = scripted([...warm, 250, 110, 250, 260]);
      expect(gate.steady()).toBe(true);
      expect(gate.steady()).toBe(false);
    });

    it('waits for a usual reading, and gives up after its time', async () => {
      const { gate, waits } = scripted([...warm, 200, 200, 200, 200, 100]);
      expect(await gate.waitSteady()).toBe(true);
      expect(waits).toEqual([50, 50]);
      const late = scripted([...warm, 500, 500, 400, 400, 100], 50);
      expect(await late.gate.waitSteady()).toBe(false);
      expect(late.waits).toEqual([50]);
    });

    it('waits out a slow stretch shorter than its time: the readings of the wait do not make it the usual speed', async () => {
      const stretch = Array.from({ length: 16 }, () => 300);
      const { gate, waits } = scripted([...warm, ...stretch, 100, 300, 300]);
      expect(await gate.waitSteady()).toBe(true);
      expect(waits).toHaveLength(8); // two slow readings a check: it waited until the stretch ended
      expect(gate.steady()).toBe(false); // 300 is still slow
    });

    it('takes a stretch that lasts as the usual speed after a few readings', () => {
      const { gate } = scripted([...warm, 300]);
      const answers = Array.from({ length: 8 }, () => gate.steady());
      expect(answers.slice(0, 2)).toEqual([false, false]);
      expect(answers.slice(-4)).toEqual([true, true, true, true]);
    });
  });
});

function row(p: Partial<Row>): Row {
  return {
    impl: 'reference',
    family: 'IPv4',
    prefix: '/16',
    cidr: '10.0.0.0/16',
    fill: 0.5,
    fillCount: 32767,
    fillKind: 'uniform',
    op: OPS.nextRelease,
    status: 'ok',
    nsPerOp: 1000,
    rme: 1,
    spread: 1,
    samples: 5,
    ...p,
  };
}

describe('choosing a CPU', () => {
  it('reads Linux CPU lists and rejects anything else', () => {
    expect(parseCpuList('0')).toEqual([0]);
    expect(parseCpuList('0,1')).toEqual([0, 1]);
    expect(parseCpuList('0-3,6,8-9\n')).toEqual([0, 1, 2, 3, 6, 8, 9]);
    for (const bad of ['', '0-', '3-1', 'a', '0,,1', '1.5']) expect(() => parseCpuList(bad), bad).toThrow(/not a CPU list/);
  });

  it('unpinned by default: the CPUs are probed and the affinity is as before', () => {
    const affinity = (): string | undefined => {
      try {
        return execFileSync('taskset', ['-p', '-c', String(process.pid)], { encoding: 'utf8' })
          .split(':')
          .pop()!
          .trim();
      } catch {
        return undefined; // no taskset here
      }
    };
    const before = affinity();
    const cpu = new BenchCpu(undefined);
    expect(cpu.cpu).toBeNull();
    expect(cpu.beforeCase()).toBeUndefined();
    expect(affinity()).toBe(before);
    if (before !== undefined && parseCpuList(before).length > 1) {
      expect(cpu.describe()).toMatch(/^not pinned; CPU speeds at the start \(time relative to the fastest: CPU \d+ \d\.\d\d, /);
    }
  });

  it('a CPU the process may not use is refused before anything is pinned', () => {
    // (a valid choice would pin this test process, so only the refusals are exercised here)
    for (const bad of ['999', '-1', 'first', '1.0', '']) {
      let made: BenchCpu | undefined;
      try {
        made = new BenchCpu(bad);
      } catch (e) {
        expect((e as Error).message).toMatch(
          /^--cpu .*: (expected "fastest" or one of the CPUs this process may use \(\d|pinning needs Linux)/,
        );
      }
      expect(made).toBeUndefined();
    }
  });

  const tasksetCpus = ((): number[] => {
    try {
      return parseCpuList(
        execFileSync('taskset', ['-p', '-c', String(process.pid)], { encoding: 'utf8' })
          .split(':')
          .pop()!,
      );
    } catch {
      return [];
    }
  })();
  // (vitest runs each test file in a process of its own: pinning this one is restored at the end)
  it.skipIf(tasksetCpus.length < 2)('pinned: the main thread on the chosen CPU, every other thread off it, new ones too', async () => {
    const masks = (): Map<string, string> => {
      const out = new Map<string, string>();
      for (const tid of fs.readdirSync('/proc/self/task')) {
        try {
          out.set(tid, /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync(`/proc/self/task/${tid}/status`, 'utf8'))![1]!);
        } catch {
          // the thread ended between the listing and the read
        }
      }
      return out;
    };
    const main = String(process.pid);
    const others = (cpu: number): string => tasksetCpus.filter((c) => c !== cpu).join(',');
    try {
      const last = tasksetCpus[tasksetCpus.length - 1]!;
      const pinned = new BenchCpu(String(last));
      expect(pinned.cpu).toBe(last);
      let m = masks();
      expect(m.get(main)).toBe(String(last));
      for (const [tid, mask] of m) if (tid !== main) expect(parseCpuList(mask).join(','), tid).toBe(others(last));
      // a thread started after the pin inherits it; the next case moves it off
      const late = new Worker('require("node:worker_threads").parentPort.once("message", () => process.exit(0))', { eval: true });
      await new Promise((resolve) => late.once('online', resolve));
      expect([...masks().values()].filter((mask) => mask === String(last)).length).toBeGreaterThan(1);
      pinned.beforeCase();
      m = masks();
      for (const [tid, mask] of m) if (tid !== main) expect(parseCpuList(mask).join(','), tid).toBe(others(last));
      late.postMessage('exit');
      expect(new BenchCpu('fastest').cpu).not.toBeNull();
    } finally {
      BenchCpu.active = undefined;
      execFileSync('taskset', ['-a', '-p', '-c', tasksetCpus.join(','), String(process.pid)]);
    }
    for (const mask of masks().values()) expect(parseCpuList(mask)).toEqual(tasksetCpus); // restored
  });

  it('pinning asked for where it is impossible is an error; unasked, the run goes on unpinned', () => {
    const missing = '/nonexistent/taskset';
    for (const choice of ['fastest', '0']) {
      expect(() => new BenchCpu(choice, missing)).toThrow(/^--cpu .*: pinning needs Linux with taskset \(util-linux\)/);
    }
    const unasked = new BenchCpu(undefined, missing);
    expect(unasked.cpu).toBeNull();
    expect(unasked.describe()).toMatch(/^not pinned \((taskset not available|\w+)\)$/);
  });
});

describe('report', () => {
  it('keeps the targets off the results page, which ships with the package: they have a page of their own', () => {
    const results = new URL('../bench/results/', import.meta.url);
    const res = JSON.parse(fs.readFileSync(new URL('latest.json', results), 'utf8')) as Results;
    const shown = IMPL_NAMES.filter((i) => res.rows.some((r) => r.impl === i));
    const page = markdown(res, shown, 'latest.svg');
    expect(page).toContain('## Results');
    expect(page).not.toMatch(/target|\*\*FAIL\*\*|\*\*pass\*\*/i);
    const targets = targetsMarkdown(res, 'latest.md');
    expect(targets).toContain('| target | measured | result |');
    expect(targets).toContain('**FAIL**');
    // the committed pages are what the writers make of the committed run (bench/render.ts)
    expect(fs.readFileSync(new URL('latest.md', results), 'utf8')).toBe(`${page}\n`);
    expect(fs.readFileSync(new URL('latest.targets.md', results), 'utf8')).toBe(`${targets}\n`);
  });

  it('evaluates ratio targets against go-seed within the run, and says why one is not evaluated', () => {
    const rows = [
      row({ impl: 'go-seed' }),
      row({ impl: 'allocator', nsPerOp: 400 }),
      row({ impl: 'go-seed', fill: 0.99, nsPerOp: 1e5 }),
      row({ impl: 'allocator', fill: 0.99, status: 'skipped', nsPerOp: null }),
    ];
    const t = evaluateTargets(rows);
    const at50 = t.find((x) => x.target.startsWith('IPv4 /16 allocateNext+release at 50 % uniform: allocator ≥ 2× faster than go-seed'))!;
    expect(at50.pass).toBe(true);
    expect(at50.measured).toBe('2.5× (go-seed 1.00 µs, allocator 400 ns)');
    const at99 = t.find((x) => x.target.startsWith('IPv4 /16 allocateNext+release at 99 % uniform'))!;
    expect(at99.pass).toBeNull();
    expect(at99.ran).toBe(true);
    expect(at99.measured).toContain('allocator skipped');
    const v6 = t.find((x) => x.target.startsWith('IPv6 /64 has at 10^6: range'))!;
    expect(v6.ran).toBe(false);
    // the ratio in the cells is against go-seed once it ran
    expect(ratioBase(rows)).toBe('go-seed');
    expect(ratioBase([row({})])).toBe('reference');
  });

  it('a target over every case reports the worst case and fails on any case over', () => {
    const rows = [
      row({ impl: 'allocator', nsPerOp: 140 }),
      row({ impl: 'store', nsPerOp: 100 }),
      row({ impl: 'allocator', fill: 0.99, nsPerOp: 180 }),
      row({ impl: 'store', fill: 0.99, nsPerOp: 100 }),
    ];
    const floor = evaluateTargets(rows).find((x) => x.target.startsWith('allocator allocateNext+release ≤ 1.5× the store floor'))!;
    expect(floor.pass).toBe(false);
    expect(floor.measured).toBe('worst 1.80× the floor at IPv4 /16 · allocateNext+release · 99 % uniform; 1 of 2 cases over');
  });

  it('states the rejection floor beside the "range is full" target once the boundary table measured it', () => {
    const full = { op: OPS.full, fill: 1, fillCount: 65534, fillKind: 'full' as const };
    const rows = [row({ ...full, impl: 'allocator', nsPerOp: 1100 }), row({ ...full, impl: 'allocator', prefix: '/24', nsPerOp: 900 })];
    const t = () => evaluateTargets(rows).find((x) => x.target.startsWith('allocator "range is full" (rejected)'))!;
    expect(t().pass).toBe(false);
    expect(t().measured).toBe('worst 1.10 µs at IPv4 /16 · range is full · full; 2 of 2 cases over');
    const floor = { impl: 'boundary', family: '-', prefix: '-', cidr: '-', fill: null, fillCount: null, fillKind: '-' } as const;
    rows.push(row({ ...floor, op: REJECTION_FLOOR, nsPerOp: 640 }));
    expect(t().pass).toBe(false);
    expect(t().measured).toBe(
      'worst 1.10 µs at IPv4 /16 · range is full · full; 2 of 2 cases over; awaiting a rejected call costs 640 ns by itself here (rejection floor)',
    );
  });

  it('states the /64 at 10^7 once range and core ran there, time and memory per address', () => {
    const at = { family: 'IPv6' as const, prefix: '/64', cidr: '2001:db8::/64', fill: null, fillCount: 1e7 };
    const rows = [
      row({ ...at, impl: 'range', nsPerOp: 300 }),
      row({ ...at, impl: 'range', op: OPS.warm, nsPerOp: 250, bytesPerAllocation: 14 }),
      row({ ...at, impl: 'core', nsPerOp: 90 }),
    ];
    const t = () => evaluateTargets(rows).find((x) => x.target.startsWith('IPv6 /64 holding 10^7 random addresses works'))!;
    expect(t().pass).toBeNull();
    expect(t().measured).toContain('core: warm start not run');
    rows.push(row({ ...at, impl: 'core', op: OPS.warm, nsPerOp: 100, bytesPerAllocation: 12.5 }));
    expect(t().pass).toBe(true);
    expect(t().measured).toBe(
      'range 300 ns per allocateNext+release, warm start 250 ns and 14.0 B per address; core 90.0 ns per allocateNext+release, warm start 100 ns and 12.5 B per address',
    );
  });

  it('compares a --baseline column case by case, beyond noise only', () => {
    const rows = [
      row({ impl: 'range', nsPerOp: 108, spread: 2 }),
      row({ impl: 'range@HEAD~1', nsPerOp: 100, spread: 2 }),
      row({ impl: 'range', fill: 0.99, nsPerOp: 130, spread: 1 }),
      row({ impl: 'range@HEAD~1', fill: 0.99, nsPerOp: 100, spread: 1 }),
    ];
    const t = evaluateTargets(rows).find((x) => x.target.startsWith('range: no case slower than range@HEAD~1'))!;
    expect(t.pass).toBe(false);
    expect(t.measured).toContain('1 of 2 cases over');
    expect(slowerBeyondNoise({ ...rows[0], nsPerOp: 108 }, { ...rows[1], nsPerOp: 100 })).toBeLessThan(0);
    expect(slowerBeyondNoise({ ...rows[2], nsPerOp: 130 }, { ...rows[3], nsPerOp: 100 })).toBeGreaterThan(0);
  });
});

describe('svg writer', () => {
  it('escapes text and writes well-formed SVG', () => {
    expect(esc(`a<b & "c"`)).toBe('a&lt;b &amp; &quot;c&quot;');
    const rows = [
      row({ fill: 0, fillKind: 'none', nsPerOp: 500 }),
      row({}),
      row({ fill: 0.99, nsPerOp: 1e5 }),
      row({ impl: 'allocator', fill: 0, fillKind: 'none', nsPerOp: 60 }),
      row({ impl: 'allocator', nsPerOp: 50 }),
      row({ impl: 'allocator', fill: 0.5, fillKind: 'organic', nsPerOp: 70 }),
      row({ impl: 'allocator', op: OPS.full, fill: 1, fillKind: 'full', nsPerOp: 30 }),
      row({ impl: 'core', family: 'IPv6', prefix: '/64', fill: null, fillCount: 1e6, nsPerOp: 20 }),
    ];
    const svg = chartSvg(rows, ['reference', 'allocator', 'core'], 'node <test> & co');
    expect(svg.startsWith('<?xml')).toBe(true);
    expect(svg).toContain('node &lt;test&gt; &amp; co');
    // every element opened is closed, in order
    const stack: string[] = [];
    for (const m of svg.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
      if (m[1]) expect(stack.pop()).toBe(m[2]);
      else if (!m[3]) stack.push(m[2]);
    }
    expect(stack).toEqual([]);
    expect(svg).not.toMatch(/NaN|undefined|Infinity/);
    expect(svg).toContain('<polyline');
  });
});

describe('npm run bench: its arguments', () => {
  // Regression: `--filter=` read as no filter started a full run over the committed results, and
  // `--out=` wrote its files as .json, .md and .svg in the working directory; bench:strategies
  // refused an empty value, npm run bench took it. Both read their arguments here.
  it.each([['--out='], ['--quick', '--filter='], ['--baseline=', '--smoke']])(
    '%j: an empty value is refused, as a missing one is',
    (...args) => {
      const options = {
        quick: { type: 'boolean' },
        smoke: { type: 'boolean' },
        out: { type: 'string' },
        filter: { type: 'string' },
        baseline: { type: 'string' },
      } as const;
      const name = args.find((a) => a.endsWith('='))!.slice(0, -1);
      let thrown: unknown;
      try {
        readArgs(args, options, '[usage]');
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(UsageError);
      expect((thrown as Error).message).toBe(`${name} needs a value`);
    },
  );
  // Regression: readArgs checked single values only, so an empty value of an option that may be
  // given several times (bench:strategies' --strategy) passed as '' among the others.
  it.each([
    [['--strategy='], '--strategy needs a value'],
    [['--strategy=a.ts', '--strategy='], '--strategy needs a value'],
    [['--strategy', '', '--strategy=b.ts'], '--strategy needs a value'],
    [['--strategy=a.ts', '--strategy'], '--strategy needs a value'],
    [['--strategy=a.ts', '--strategy', '--quick'], expect.stringMatching(/^--strategy needs a value: it is followed by --quick /)],
  ])('%j: an option given several times refuses an empty or missing value, as one given once does', (args, message) => {
    let thrown: unknown;
    try {
      readArgs(args, { quick: { type: 'boolean' }, strategy: { type: 'string', multiple: true } }, '[usage]');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toEqual(message);
  });
  it('an option given several times with values answers them all, in order', () => {
    const values = readArgs(['--strategy=a.ts', '--strategy', 'b.ts'], { strategy: { type: 'string', multiple: true } }, '[usage]');
    expect(values.strategy).toEqual(['a.ts', 'b.ts']);
  });
  // Regression: an argument it did not know was skipped, so a misspelt --quick started a full run
  // over the committed results (bench/results/latest.*); an invalid --filter ended in a stack trace.
  const usage = '[--quick | --smoke] [--filter <regex>] [--out <path-prefix>] [--cpu fastest|<n>] [--baseline <git-ref>]';
  it.each([
    [['--quik'], `Unknown option '--quik'; it takes ${usage}`],
    [['--quick', '--seed', '7'], `Unknown option '--seed'; it takes ${usage}`],
    [['quick'], `Unexpected argument 'quick'. This command does not take positional arguments; it takes ${usage}`],
    [['--smoke', '--out'], '--out needs a value'],
    [
      ['--smoke', '--filter', '-x'],
      '--filter needs a value: it is followed by -x (a value that starts with a dash is written --filter=<value>)',
    ],
    [['--quick', '--filter', '('], '--filter (: Invalid regular expression: /(/: Unterminated group'],
  ])(
    '%j: exit 2 and one line, before anything is measured',
    async (flags, message) => {
      const { execFile } = await import('node:child_process');
      const root = new URL('..', import.meta.url);
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...flags], { cwd: root, timeout: 60_000 }, (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
        });
      });
      expect(result).toEqual({ code: 2, stdout: '', stderr: `bench: ${message}\n` });
    },
    70_000,
  );
});

describe('both bench scripts: --help', () => {
  // Regression: --help and -h were refused as unknown options (exit 2), the usage only in the error.
  const bench = 'npm run bench -- [--quick | --smoke] [--filter <regex>] [--out <path-prefix>] [--cpu fastest|<n>] [--baseline <git-ref>]';
  const strategies = 'npm run bench:strategies -- [--quick] [--seed <n>] [--out <prefix>] [--cpu fastest|<n>] [--strategy <module>]...';
  it.each([
    ['bench/run.ts', ['--help'], bench],
    ['bench/run.ts', ['--quick', '-h', '--filter=('], bench],
    ['bench/strategies/run.ts', ['-h'], strategies],
    ['bench/strategies/run.ts', ['--seed=x', '--help'], strategies],
  ])(
    '%s %j: the usage on standard output, exit 0, nothing run, whatever else is given',
    async (script, flags, usage) => {
      const { execFile } = await import('node:child_process');
      const root = new URL('..', import.meta.url);
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', script, ...flags], { cwd: root, timeout: 60_000 }, (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
        });
      });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout.split('\n')[0]).toBe(`usage: ${usage}`);
    },
    70_000,
  );
});
