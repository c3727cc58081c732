// The page `npm run bench:strategies` writes beside its JSON (bench/strategies/report.ts).
import { describe, expect, it } from 'vitest';
import { markdown, type Results } from '../bench/strategies/report.ts';

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
