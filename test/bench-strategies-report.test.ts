// The page `npm run bench:strategies` writes beside its JSON (bench/strategies/report.ts).
import { describe, expect, it } from 'vitest';
import { markdown, type Results } from '../bench/strategies/report.ts';
import { type SpeedGuard, speeds } from '../bench/strategies/speed.ts';
import type { AllocationStrategy } from '../adapters/strategy.ts';

/** A run that measured nothing: enough for the page's header and its links. */
const empty: Results = {
  conditions: {
    cpu: 'a CPU',
    cores: 2,
    memoryGiB: 1,
    os: 'an OS',
    runtime: { name: 'node', version: '20.0.0', v8: '11' },
    date: '2026-01-01T00:00:00.000Z',
    git: { commit: '0123456789abcdef', dirty: false },
    coreBuild: 'release',
    gcExposed: true,
    loadAverage: [0, 0, 0],
    mode: 'quick',
    args: [],
    cpuPin: 'not pinned',
    rounds: 1,
    roundGate: '',
  },
  seed: 7,
  own: [],
  runTookS: 1,
  eventsPerSecond: 1,
  sweep: [],
  burst: [],
  serviceCIDRs: [],
  ipv6: [],
  speed: [],
};

/** The image files a Markdown page links to. */
const images = (page: string): string[] => [...page.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]!);

describe('the strategies page', () => {
  // Regression: the page always linked strategies-*.svg, so a run with --out, --seed or --quick
  // linked charts it had not written (or another run's, left in the same directory).
  it.each([
    ['bench/results/strategies', 'strategies'],
    ['/tmp/ipallocator-bench/strategies-seed-7', 'strategies-seed-7'],
    ['out/s7', 's7'],
  ])('written as %s.md, links the charts written beside it', (prefix, base) => {
    expect(images(markdown(empty, prefix))).toEqual([`${base}-collisions.svg`, `${base}-reuse.svg`, `${base}-intrusion.svg`]);
  });
});

describe('the speed rows', () => {
  // Regression: a row said only `fill`, a share of the range on the /20 and a count of addresses on
  // the /64, and its median alone: a script reading the JSON could not tell a count from a share,
  // nor a steady median from a noisy one.
  it('say how many addresses were held and how far the samples spread', () => {
    const specs = [
      { label: 'upstream', strategy: 'upstream' as const },
      { label: 'random-free + cool-down 60 s', strategy: 'random-free' as const, coolDownMs: 60_000 },
    ];
    const rows = speeds(specs, 200, [
      ['10.96.0.0/24', 0.5, false, 1],
      ['fd00:10:96::/64', 300, false, 1],
      ['fd00:10:96::/64', 100, true, 1],
    ]);
    expect(rows.map(({ strategy, range, fill, held, restart }) => ({ strategy, range, fill, held, restart }))).toEqual([
      { strategy: 'upstream', range: '10.96.0.0/24', fill: 0.5, held: 127, restart: undefined },
      { strategy: 'random-free + cool-down 60 s', range: '10.96.0.0/24', fill: 0.5, held: 127, restart: undefined },
      { strategy: 'upstream', range: 'fd00:10:96::/64', fill: 300, held: 300, restart: undefined },
      { strategy: 'random-free + cool-down 60 s', range: 'fd00:10:96::/64', fill: 300, held: 300, restart: undefined },
      { strategy: 'upstream', range: 'fd00:10:96::/64', fill: 100, held: 100, restart: true },
      { strategy: 'random-free + cool-down 60 s', range: 'fd00:10:96::/64', fill: 100, held: 100, restart: true },
    ]);
    for (const row of rows) {
      expect(row.nsPerOp).toBeGreaterThan(0);
      expect(row.spread).toBeGreaterThanOrEqual(0);
      expect(row.spread).toBeLessThan(Number.POSITIVE_INFINITY);
    }
  });
});

describe("legacy-bitmap's speed on a /64", () => {
  // Regression: under "/64, 100,000 held" legacy-bitmap was timed on its window, the /64's first
  // 65,535 addresses, which held almost none of the 100,000 random addresses: an empty window
  // timed under a header that said it held 100,000.
  const legacy = { label: 'legacy-bitmap', strategy: 'legacy-bitmap' as const };
  const upstream = { label: 'upstream', strategy: 'upstream' as const };

  it('is not applicable with random addresses held, and says why', () => {
    const rows = speeds([upstream, legacy], 50, [['fd00:10:96::/64', 300, false, 1]]);
    expect(rows[0]).toMatchObject({ strategy: 'upstream', held: 300 });
    expect(rows[0]!.nsPerOp).toBeGreaterThan(0);
    expect(rows[1]).toEqual({
      strategy: 'legacy-bitmap',
      range: 'fd00:10:96::/64',
      fill: 300,
      held: 300,
      notApplicable: expect.stringContaining('65,535'),
    });
  });

  it('is timed when the held addresses are its own choices, inside its window', () => {
    const [row] = speeds([legacy], 50, [['fd00:10:96::/64', 100, true, 1]]);
    expect(row).toMatchObject({ strategy: 'legacy-bitmap', held: 100, restart: true });
    expect(row!.nsPerOp).toBeGreaterThan(0);
    expect(row!.notApplicable).toBeUndefined();
  });

  it('is a "not applicable" cell on the page, with the reason under the table', () => {
    const reason = 'its window is the first 65,535 addresses of the /64';
    const page = markdown(
      {
        ...empty,
        speed: [
          { strategy: 'upstream', range: 'fd00::/64', fill: 9, held: 9, nsPerOp: 300, spread: 2 },
          { strategy: 'legacy-bitmap', range: 'fd00::/64', fill: 9, held: 9, notApplicable: reason },
        ],
      },
      'out/s',
    );
    expect(page).toContain('| legacy-bitmap | not applicable¹ |');
    expect(page).toContain(`¹ legacy-bitmap, fd00::/64 9 held: ${reason}`);
  });
});

describe('the speed table', () => {
  // Regression: the page labelled a fill of 1 as `1 held` while the timing filled the whole range
  const row = (fill: number) => ({ strategy: 'upstream', range: '10.96.0.0/28', fill, held: 14, nsPerOp: 10, spread: 1 });
  it.each([
    [1, '10.96.0.0/28 100.0 %'],
    [0.5, '10.96.0.0/28 50.0 %'],
    [2, '10.96.0.0/28 2 held'],
  ])('a fill of %s is labelled as speed.ts timed it: %s', (fill, label) => {
    expect(markdown({ ...empty, speed: [row(fill)] }, 'out/s')).toContain(`| ${label} |`);
  });
});

describe('a strategy of your own in the speed cases', () => {
  // Regression: an ErrFull in a speed case, which the trial before the run allows, or any other
  // error there, escaped the run uncaught after every simulation had run.
  const v4only: AllocationStrategy = {
    name: 'v4only',
    forRange: (view) => ({
      choose(out) {
        if (view.sizeHi > 0) return false;
        if (!view.index.nextFree(0, view.rangeOffset, 0, view.rangeOffset, view.sizeHi, view.sizeLo - 1)) return false;
        out.hi = view.index.resultHi;
        out.lo = view.index.resultLo;
        return true;
      },
    }),
  };
  const throwing: AllocationStrategy = {
    name: 'throwing',
    forRange: () => ({
      choose() {
        throw new Error('no choice today');
      },
    }),
  };
  const upstream = { label: 'upstream', strategy: 'upstream' as const };

  it.each([
    ['random addresses held', false],
    ['its own choices held (a restart)', true],
  ])('answering ErrFull with %s is a row that says why, and the others are timed', (_, restart) => {
    const rows = speeds([{ label: 'v4only', strategy: v4only }, upstream], 20, [['fd00:10:96::/64', 50, restart, 1]]);
    expect(rows[0]).toMatchObject({ strategy: 'v4only', held: 50, notApplicable: expect.stringContaining('ErrFull') });
    expect(rows[1]).toMatchObject({ strategy: 'upstream', held: 50 });
    expect(rows[1]!.nsPerOp).toBeGreaterThan(0);
  });

  it('is timed where it answers', () => {
    const [row] = speeds([{ label: 'v4only', strategy: v4only }], 20, [['10.96.0.0/24', 0.5, false, 1]]);
    expect(row!.nsPerOp).toBeGreaterThan(0);
  });

  it('throwing anything else goes to the guard, with the case named as the page names it', () => {
    const seen: string[] = [];
    const guard: SpeedGuard = (spec, where, f) => {
      try {
        return f();
      } catch (e) {
        seen.push(`${spec.label} on ${where}: ${(e as Error).message}`);
        throw new Error('ended by the guard');
      }
    };
    expect(() => speeds([upstream, { label: 'throwing', strategy: throwing }], 20, [['10.96.0.0/24', 0.5, false, 1]], guard)).toThrow(
      'ended by the guard',
    );
    expect(seen).toEqual([`throwing on the speed case '10.96.0.0/24 50.0 %': no choice today`]);
  });
});
