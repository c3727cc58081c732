// The results of `npm run bench:strategies` (bench/strategies/run.ts): their shape, as its JSON
// holds them, and the Markdown page written beside that JSON.
import { basename } from 'node:path';
import type { conditions } from '../conditions.ts';
import type { Measures } from './sim.ts';

/**
 * One speed case of one strategy: ns per Range.allocateNext + release with the fill held, or why the
 * case does not apply to the strategy (legacy-bitmap among random addresses on a /64).
 */
export type Speed = SpeedRowCase & (Timed | NotApplicable);

/** What a speed row says of its case. */
interface SpeedRowCase {
  strategy: string;
  range: string;
  /** The fill asked for: a share of the range (≤ 1), or a count of addresses (> 1). */
  fill: number;
  /** The addresses the range held while it was timed (or would have held). */
  held: number;
  /** The fill was made by the same strategy with the same seed, as a process restarted with a fixed seed would. */
  restart?: boolean;
}

interface Timed {
  /** The median of the samples (5 timings of the same number of operations each). */
  nsPerOp: number;
  /** The samples' median absolute deviation, in % of the median (bench/measure.ts's spread). */
  spread: number;
  notApplicable?: undefined;
}

interface NotApplicable {
  /** Why the strategy was not timed on this case. */
  notApplicable: string;
  nsPerOp?: undefined;
  spread?: undefined;
}

/** Whether a speed case's `fill` is a count of addresses (above 1) rather than a share of the range. */
export function fillIsCount(fill: number): boolean {
  return fill > 1;
}

/** A speed case as the report names it: `10.96.0.0/20 50.0 %`, `fd00:10:96::/64 50,000 held (seeded restart)`. */
export function speedCaseName(range: string, fill: number, restart: boolean): string {
  return `${range} ${fillIsCount(fill) ? `${fill.toLocaleString('en-US')} held` : pct(fill)}${restart ? ' (seeded restart)' : ''}`;
}

/** Everything a run measured: the JSON file as written. */
export interface Results {
  conditions: ReturnType<typeof conditions>;
  seed: number;
  /** Strategies of your own (--strategy): each one's name, and the module it came from as given. */
  own: { name: string; module: string }[];
  runTookS: number;
  eventsPerSecond: number;
  sweep: Measures[];
  burst: Measures[];
  serviceCIDRs: Measures[];
  ipv6: Measures[];
  speed: Speed[];
}

const pct = (v: number): string => `${(100 * v).toFixed(1)} %`;
const f2 = (v: number): string => v.toFixed(2);

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((h, i) => (i === 0 || h === 'strategy' ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

function qualityRows(ms: Measures[]): string[][] {
  return ms.map((m) => [
    m.workload,
    m.strategy,
    f2(m.meanFill),
    f2(m.collisionsPer1000),
    m.roundTripsPerAllocation.toFixed(4),
    String(m.maxAttempts),
    pct(m.reuseUnder1s),
    pct(m.reuseUnder10s),
    pct(m.reuseUnder60s),
    m.reuseMedianS === null ? '—' : `${m.reuseMedianS.toFixed(1)} s`,
    f2(m.intrusionPer1000),
    f2(m.staticBlockedByDynamicPer1000),
    String(m.full),
  ]);
}

const QUALITY_HEAD = [
  'workload',
  'strategy',
  'mean fill',
  'collisions / 1000',
  'round trips / alloc',
  'max attempts',
  'reuse < 1 s',
  'reuse < 10 s',
  'reuse < 60 s',
  'median reuse delay',
  'intrusion / 1000',
  'static blocked by dynamic / 1000',
  'full',
];

const SUPERSCRIPTS = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/** The footnote mark `n` (1 → ¹, 12 → ¹²). */
function mark(n: number): string {
  return [...String(n)].map((d) => SUPERSCRIPTS[Number(d)]).join('');
}

/**
 * The page written as `<out>.md`, `out` the run's path prefix: it shows the charts written beside
 * it, `<out>-{collisions,reuse,intrusion}.svg`, by their file names.
 */
export function markdown(r: Results, out: string): string {
  const chart = (kind: string): string => `${basename(out)}-${kind}.svg`;
  const c = r.conditions;
  const lines: string[] = [];
  lines.push('# Allocation strategies: quality under churn (simulated)');
  lines.push('');
  lines.push(
    `Seed ${r.seed}, ${c.mode} run, ${c.cpu} × ${c.cores}, ${c.runtime.name} ${c.runtime.version}, commit ${c.git.commit.slice(0, 12)}${c.git.dirty ? ' (dirty)' : ''}, load average ${c.loadAverage.join(' ')}, ${c.cpuPin}, ${c.date}. Run took ${r.runTookS.toFixed(0)} s; the simulator processed ${Math.round(r.eventsPerSecond).toLocaleString('en-US')} events per second.`,
  );
  lines.push('');
  if (r.own.length > 0) {
    lines.push(`Strategies of your own (--strategy): ${r.own.map((o) => `${o.name} (${o.module})`).join(', ')}.`);
    lines.push('');
  }
  lines.push(
    'Columns: _collisions_ = creates refused because the store already held the address (each one an extra round trip), per 1,000 successful dynamic allocations; _reuse < X_ = share of dynamic allocations whose address was released less than X before; _intrusion_ = dynamic allocations placed in the static band, per 1,000; _static blocked by dynamic_ = static requests refused because a dynamic allocation held the address, per 1,000 static requests; _full_ = dynamic creates refused with every range full. Measured after a warm-up (the store filling from empty).',
  );
  lines.push('');
  lines.push('## Load sweep (one /22, 3 API servers, lag median 100 ms)');
  lines.push('');
  lines.push(table(QUALITY_HEAD, qualityRows(r.sweep)));
  lines.push('');
  lines.push(`![collisions against load](${chart('collisions')}) ![reuse delay](${chart('reuse')}) ![intrusion](${chart('intrusion')})`);
  lines.push('');
  lines.push('## Deploy bursts (one /20, heavy-tailed lifetimes, 1,000 Services in 10 s every 2 h)');
  lines.push('');
  lines.push(table(QUALITY_HEAD, qualityRows(r.burst)));
  lines.push('');
  lines.push('## Several ServiceCIDRs (/24 + /24 + /23, load 0.8)');
  lines.push('');
  lines.push(
    table(
      [
        'policy',
        'strategy',
        'mean fill',
        'collisions / 1000',
        'share of allocations per range',
        'mean fill per range',
        'reuse < 60 s',
        'full',
      ],
      r.serviceCIDRs.map((m) => [
        m.policy ?? '—',
        m.strategy,
        f2(m.meanFill),
        f2(m.collisionsPer1000),
        m.rangeShare.map(pct).join(' / '),
        m.rangeMeanFill.map(f2).join(' / '),
        pct(m.reuseUnder60s),
        String(m.full),
      ]),
    ),
  );
  lines.push('');
  lines.push('## IPv6 /64 (20,000 live Services)');
  lines.push('');
  lines.push(table(QUALITY_HEAD, qualityRows(r.ipv6)));
  lines.push('');
  lines.push('## Speed: Range.allocateNext + release with the fill held (median of 5 ± their median absolute deviation, per operation)');
  lines.push('');
  const strategies = [...new Set(r.speed.map((s) => s.strategy))];
  const caseOf = (s: Speed): string => speedCaseName(s.range, s.fill, s.restart === true);
  const cases = [...new Set(r.speed.map(caseOf))];
  const notes: string[] = [];
  const cell = (s: Speed): string => {
    if (s.notApplicable !== undefined) {
      notes.push(`${mark(notes.length + 1)} ${s.strategy}, ${caseOf(s)}: ${s.notApplicable}.`);
      return `not applicable${mark(notes.length)}`;
    }
    return `${s.nsPerOp >= 1000 ? `${(s.nsPerOp / 1000).toFixed(2)} µs` : `${s.nsPerOp.toFixed(0)} ns`} ±${s.spread.toFixed(0)}%`;
  };
  lines.push(
    table(
      ['strategy', ...cases],
      strategies.map((st) => [st, ...r.speed.filter((s) => s.strategy === st).map(cell)]),
    ),
  );
  lines.push('');
  for (const note of notes) lines.push(note, '');
  return `${lines.join('\n')}\n`;
}
