// Result rows and what is made of them: the stdout table, bench/results/latest.{json,md}, and the
// evaluation of the project's ratio targets (bench/results/latest.targets.md: internal goals, kept
// out of latest.md, which ships with the package and presents the results alone).
import fs from 'node:fs';
import path from 'node:path';
import { REJECTION_FLOOR } from './boundary.ts';
import type { Conditions } from './conditions.ts';
import { GO_NOTE } from './go.ts';

export type Status = 'ok' | 'skipped' | 'not available' | 'not applicable' | 'error';

export interface Row {
  impl: string;
  family: 'IPv4' | 'IPv6' | '-';
  /** "/16", or "-" for boundary rows. */
  prefix: string;
  cidr: string;
  /** Fraction of the range allocated (0.99); null when the fill is a count (IPv6 /64). */
  fill: number | null;
  /** Addresses allocated when the case ran. */
  fillCount: number | null;
  fillKind: 'uniform' | 'organic' | 'none' | 'full' | '-';
  op: string;
  status: Status;
  /** Median ns per operation (per loaded address for warm start). */
  nsPerOp: number | null;
  /** Relative margin of error of the mean, %. */
  rme: number | null;
  /** Median absolute deviation / median, %. */
  spread: number | null;
  samples: number | null;
  opsPerSample?: number | null;
  /** Memory the implementation holds per allocated address (JS heap + WASM), warm-start rows. */
  bytesPerAllocation?: number | null;
  jsBytesPerAllocation?: number | null;
  wasmBytesPerAllocation?: number | null;
  note?: string;
  /** Rounds of this cell kept although the machine read slow around them after every retry (bench/steady.ts). */
  slowRounds?: number;
}

export interface Results {
  conditions: Conditions;
  durationSeconds: number;
  /** Bytes per record of the MemoryStore the async implementations read (JS heap, after GC). */
  storeBytesPerRecord: number | null;
  rows: Row[];
  /** The commit the `<impl>@<ref>` columns were built from (--baseline). */
  baseline?: { ref: string; commit: string };
}

export const OPS = {
  nextRelease: 'allocateNext+release',
  full: 'range is full',
  allocRelease: 'allocate+release',
  has: 'has',
  warm: 'warm start (per address)',
} as const;

export function fmtNs(ns: number | null | undefined): string {
  if (ns === null || ns === undefined || !Number.isFinite(ns)) return '—';
  if (ns < 10) return `${ns.toFixed(2)} ns`;
  if (ns < 1000) return `${ns.toFixed(ns < 100 ? 1 : 0)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

export function fmtRatio(x: number): string {
  if (!Number.isFinite(x)) return '—';
  if (x >= 100) return `${Math.round(x).toLocaleString('en-US')}×`;
  if (x >= 10) return `${x.toFixed(0)}×`;
  return `${x.toFixed(x >= 1 ? 1 : 2)}×`;
}

export function fillLabel(r: Pick<Row, 'fill' | 'fillCount' | 'fillKind'>): string {
  if (r.fillKind === 'full') return 'full';
  if (r.fill === null) {
    const c = r.fillCount ?? 0;
    const p = Math.log10(c);
    return c === 0 ? '0' : Number.isInteger(p) ? `10^${p}` : String(c);
  }
  const pct = `${+(r.fill * 100).toFixed(1)} %`;
  return r.fillKind === 'uniform' || r.fillKind === 'organic' ? `${pct} ${r.fillKind}` : pct;
}

export function caseKey(r: Row): string {
  if (r.impl === 'boundary') return `boundary · ${r.op}`;
  const fill = r.op === OPS.warm ? `${r.fillCount?.toLocaleString('en-US')} loaded` : fillLabel(r);
  return `${r.family} ${r.prefix} · ${r.op} · ${fill}`;
}

function cell(r: Row | undefined, ref: Row | undefined): { text: string; ratio: string } {
  if (!r) return { text: '', ratio: '' };
  if (r.status !== 'ok')
    return {
      text: r.status === 'skipped' ? 'skipped' : r.status === 'not applicable' ? 'n/a' : r.status === 'error' ? 'error' : 'not avail.',
      ratio: '',
    };
  const text = `${fmtNs(r.nsPerOp)} ±${(r.spread ?? 0).toFixed(0)}%`;
  const ratio = ref && ref.status === 'ok' && ref.nsPerOp && r.nsPerOp ? fmtRatio(ref.nsPerOp / r.nsPerOp) : '';
  return { text, ratio };
}

function grouped(rows: Row[], impls: readonly string[]): { key: string; byImpl: Map<string, Row> }[] {
  const out = new Map<string, Map<string, Row>>();
  for (const r of rows) {
    if (r.impl === 'boundary' || !impls.includes(r.impl)) continue;
    const k = caseKey(r);
    if (!out.has(k)) out.set(k, new Map());
    out.get(k)!.set(r.impl, r);
  }
  return [...out].map(([key, byImpl]) => ({ key, byImpl }));
}

/**
 * What the cells' "× faster" compares with: upstream's algorithm in Go when it ran in this run
 * (what the project exists to beat), else the TypeScript port of it (`reference`).
 */
export function ratioBase(rows: Row[]): 'go-seed' | 'reference' {
  return rows.some((r) => r.impl === 'go-seed' && r.status === 'ok') ? 'go-seed' : 'reference';
}

/** The stdout table: one line per case, one column per implementation (median ±spread, ratio to ratioBase). */
export function textTable(rows: Row[], impls: readonly string[]): string {
  const groups = grouped(rows, impls);
  const base = ratioBase(rows);
  const head = ['case', ...impls];
  const lines: string[][] = [head];
  for (const g of groups) {
    const ref = g.byImpl.get(base);
    lines.push([
      g.key,
      ...impls.map((i) => {
        const c = cell(g.byImpl.get(i), ref);
        return c.ratio && i !== base ? `${c.text} ${c.ratio}` : c.text;
      }),
    ]);
  }
  const widths = head.map((_, j) => Math.max(...lines.map((l) => l[j].length)));
  const fmt = (l: string[]): string => l.map((s, j) => (j === 0 ? s.padEnd(widths[j]) : s.padStart(widths[j]))).join('  ');
  const sep = widths.map((w) => '─'.repeat(w)).join('  ');
  const boundary = rows.filter((r) => r.impl === 'boundary');
  const b = boundary.length
    ? '\n\nboundary (ns/op, median ±spread)\n' +
      boundary
        .map(
          (r) =>
            `  ${r.op.padEnd(32)} ${r.status === 'ok' ? `${fmtNs(r.nsPerOp)} ±${(r.spread ?? 0).toFixed(0)}%` : `${r.status}${r.note ? `: ${r.note}` : ''}`}${r.status === 'ok' && r.note ? `  (${r.note})` : ''}`,
        )
        .join('\n')
    : '';
  return [`× = times faster than ${base} in the same case`, fmt(lines[0]), sep, ...lines.slice(1).map(fmt)].join('\n') + b;
}

/** The targets as stdout lines: evaluated ones first, then one line naming those whose cases did not run. */
export function targetLines(rows: Row[]): string[] {
  const all = evaluateTargets(rows);
  const lines = all.filter((t) => t.ran).map((t) => `  ${t.pass === null ? '·   ' : t.pass ? 'pass' : 'FAIL'}  ${t.target}: ${t.measured}`);
  const notRun = all.filter((t) => !t.ran);
  if (notRun.length) lines.push(`  ·     ${notRun.length} more not evaluated: their cases did not run (a --quick or --filter run)`);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Targets: what the allocation path and the /64 index must reach, each stated against another
// row of the same run (go-seed, the store floor, the parse floor, the previous commit) or, where
// the target is a cost, in ns or bytes. `pass: null` = not evaluated, with the reason.

export interface TargetResult {
  target: string;
  measured: string;
  pass: boolean | null;
  /** False when none of the target's cases ran (e.g. a --quick or --filter run): listed apart. */
  ran: boolean;
}

function find(rows: Row[], q: Partial<Row>): Row | undefined {
  return rows.find((r) => Object.entries(q).every(([k, v]) => (r as unknown as Record<string, unknown>)[k] === v));
}

const okNs = (r: Row | undefined): r is Row & { nsPerOp: number } => r !== undefined && r.status === 'ok' && !!r.nsPerOp;
const whyNot = (impl: string, r: Row | undefined): string => (!r ? `${impl} not run` : r.status === 'ok' ? '' : `${impl} ${r.status}`);

/** `impl` at least `min`× faster than `base` on the case `q`. */
function fasterThan(rows: Row[], label: string, q: Partial<Row>, impl: string, base: string, min: number): TargetResult {
  const b = find(rows, { ...q, impl: base });
  const a = find(rows, { ...q, impl });
  const target = `${label}: ${impl} ≥ ${min.toLocaleString('en-US')}× faster than ${base}`;
  if (!okNs(a) || !okNs(b))
    return { target, measured: `n/a (${[whyNot(base, b), whyNot(impl, a)].filter(Boolean).join(', ')})`, pass: null, ran: !!a || !!b };
  const x = b.nsPerOp / a.nsPerOp;
  return { target, measured: `${fmtRatio(x)} (${base} ${fmtNs(b.nsPerOp)}, ${impl} ${fmtNs(a.nsPerOp)})`, pass: x >= min, ran: true };
}

/** `impl` costs at most `maxNs` on the case `q` (a cost, not a ratio). */
function atMost(rows: Row[], label: string, q: Partial<Row>, maxNs: number): TargetResult {
  const a = find(rows, q);
  const target = `${label} ≤ ${fmtNs(maxNs)}`;
  if (!okNs(a)) return { target, measured: `n/a (${whyNot(String(q.impl), a)})`, pass: null, ran: !!a };
  return { target, measured: fmtNs(a.nsPerOp), pass: a.nsPerOp <= maxNs, ran: true };
}

/**
 * One target over many cases: `over(a, b)` must be false in every case where both rows ran.
 * Reports the worst case by `score` (higher = worse) and how many cases are over.
 */
type Timed = Row & { nsPerOp: number };
function everyCase(
  target: string,
  pairs: [Row, Row][],
  score: (a: Timed, b: Timed) => number,
  over: (a: Timed, b: Timed) => boolean,
  show: (x: number) => string,
): TargetResult {
  const measured = pairs
    .filter(([a, b]) => okNs(a) && okNs(b))
    .map(([a, b]) => ({ key: caseKey(a), x: score(a as Timed, b as Timed), over: over(a as Timed, b as Timed) }));
  if (measured.length === 0) return { target, measured: 'n/a (no case where both ran)', pass: null, ran: pairs.length > 0 };
  const worst = measured.reduce((w, m) => (m.x > w.x ? m : w));
  const n = measured.filter((m) => m.over).length;
  return { target, measured: `worst ${show(worst.x)} at ${worst.key}; ${n} of ${measured.length} cases over`, pass: n === 0, ran: true };
}

/** Rows of `impl` paired with the row of `other` for the same case. */
function paired(rows: Row[], impl: string, other: string, keep: (r: Row) => boolean = () => true): [Row, Row][] {
  const byKey = new Map(rows.filter((r) => r.impl === other).map((r) => [caseKey(r), r]));
  return rows
    .filter((r) => r.impl === impl && keep(r))
    .flatMap((r) => {
      const o = byKey.get(caseKey(r));
      return o ? [[r, o] as [Row, Row]] : [];
    });
}

/** "Slower beyond noise": more than 10 % or the two spreads together, whichever is larger. */
export function slowerBeyondNoise(cur: Row & { nsPerOp: number }, base: Row & { nsPerOp: number }): number {
  const noise = Math.max(0.1, ((cur.spread ?? 0) + (base.spread ?? 0)) / 100);
  return cur.nsPerOp / base.nsPerOp - 1 - noise;
}

export function evaluateTargets(rows: Row[]): TargetResult[] {
  const out: TargetResult[] = [];
  const nr = OPS.nextRelease;
  // The allocation path on MemoryStore against upstream's algorithm, IPv4.
  for (const prefix of ['/16', '/12']) {
    for (const [fill, kind, min] of [
      [0, 'none', 2],
      [0.5, 'uniform', 2],
      [0.5, 'organic', 2],
      [0.99, 'uniform', 20],
      [0.99, 'organic', 20],
      [0.999, 'uniform', 300],
      [0.999, 'organic', 300],
    ] as const) {
      const q = { family: 'IPv4', prefix, op: nr, fill, fillKind: kind } as const;
      out.push(
        fasterThan(rows, `IPv4 ${prefix} ${nr} at ${fillLabel({ fill, fillCount: null, fillKind: kind })}`, q, 'allocator', 'go-seed', min),
      );
    }
    out.push(
      fasterThan(rows, `IPv4 ${prefix} full, "range is full"`, { family: 'IPv4', prefix, op: OPS.full }, 'allocator', 'go-seed', 1000),
    );
  }
  out.push(
    everyCase(
      `allocator ${nr} ≤ 1.5× the store floor, every case`,
      paired(rows, 'allocator', 'store', (r) => r.op === nr),
      (a, b) => a.nsPerOp / b.nsPerOp,
      (a, b) => a.nsPerOp > 1.5 * b.nsPerOp,
      (x) => `${x.toFixed(2)}× the floor`,
    ),
  );
  const rejected = everyCase(
    'allocator "range is full" (rejected) ≤ 300 ns, every range',
    rows.filter((r) => r.impl === 'allocator' && r.op === OPS.full).map((r) => [r, r] as [Row, Row]),
    (a) => a.nsPerOp,
    (a) => a.nsPerOp > 300,
    fmtNs,
  );
  // The bound beside it, as the store floor is beside the allocation targets: no call answered
  // by a rejected promise can cost its caller less than awaiting one.
  const rejectionFloor = find(rows, { impl: 'boundary', op: REJECTION_FLOOR });
  if (rejected.pass !== null && okNs(rejectionFloor)) {
    rejected.measured += `; awaiting a rejected call costs ${fmtNs(rejectionFloor.nsPerOp)} by itself here (rejection floor)`;
  }
  out.push(rejected);
  out.push(
    everyCase(
      'range ≥ 5× faster than go-seed, every IPv4 case',
      paired(rows, 'range', 'go-seed', (r) => r.family === 'IPv4'),
      (a, b) => a.nsPerOp / b.nsPerOp,
      (a, b) => 5 * a.nsPerOp > b.nsPerOp,
      (x) => `${fmtRatio(1 / x)} faster`,
    ),
  );
  // IPv6 /64: the sparse index and IPv6 text.
  for (const [count, maxNs] of [
    [100_000, 80],
    [1_000_000, 100],
  ] as const) {
    out.push(
      atMost(
        rows,
        `core IPv6 /64 ${nr} at ${fillLabel({ fill: null, fillCount: count, fillKind: 'uniform' })}`,
        { impl: 'core', family: 'IPv6', prefix: '/64', op: nr, fillCount: count },
        maxNs,
      ),
    );
  }
  const w = find(rows, { impl: 'core', family: 'IPv6', prefix: '/64', op: OPS.warm, fillCount: 1_000_000 });
  const memTarget = 'core IPv6 /64 index memory at 10^6 ≤ 16 B per allocated address';
  if (w?.status !== 'ok' || w.wasmBytesPerAllocation === null || w.wasmBytesPerAllocation === undefined) {
    out.push({
      target: memTarget,
      measured: `n/a (${!w ? 'not run' : w.status !== 'ok' ? w.status : 'index bytes not measurable'})`,
      pass: null,
      ran: !!w,
    });
  } else {
    out.push({
      target: memTarget,
      measured: `${w.wasmBytesPerAllocation.toFixed(1)} B (WASM) + ${(w.jsBytesPerAllocation ?? 0).toFixed(1)} B (JS heap)`,
      pass: w.wasmBytesPerAllocation <= 16,
      ran: true,
    });
  }
  out.push(atMost(rows, 'parse+format IPv6', { impl: 'boundary', op: 'parse+format IPv6' }, 100));
  out.push(atMost(rows, 'parse+format IPv4', { impl: 'boundary', op: 'parse+format IPv4' }, 45));
  for (const count of [100_000, 1_000_000]) {
    for (const op of [nr, OPS.allocRelease, OPS.has]) {
      const q = { family: 'IPv6', prefix: '/64', op, fillCount: count } as const;
      const label = `IPv6 /64 ${op} at ${fillLabel({ fill: null, fillCount: count, fillKind: 'uniform' })}`;
      out.push(fasterThan(rows, label, q, 'range', 'go-seed', 5));
      out.push(fasterThan(rows, label, q, 'allocator', 'go-seed', 2));
    }
  }
  {
    const q = { family: 'IPv6', prefix: '/64', op: OPS.warm, fillCount: 1_000_000 } as const;
    const a = find(rows, { ...q, impl: 'allocator' });
    const p = find(rows, { ...q, impl: 'store' });
    const target = 'IPv6 /64 warm start at 10^6: allocator ≤ 2× the parse floor (store)';
    if (!okNs(a) || !okNs(p))
      out.push({
        target,
        measured: `n/a (${[whyNot('store', p), whyNot('allocator', a)].filter(Boolean).join(', ')})`,
        pass: null,
        ran: !!a || !!p,
      });
    else
      out.push({
        target,
        measured: `${(a.nsPerOp / p.nsPerOp).toFixed(2)}× (${fmtNs(a.nsPerOp)} vs ${fmtNs(p.nsPerOp)} per address)`,
        pass: a.nsPerOp <= 2 * p.nsPerOp,
        ran: true,
      });
  }
  {
    // a /64 holding 10^7 random addresses works (full mode only): the index without a store
    const q = { family: 'IPv6', prefix: '/64', fillCount: 10_000_000 } as const;
    const target = 'IPv6 /64 holding 10^7 random addresses works: range and core, time and memory per address';
    const cases = ['range', 'core'].flatMap((impl) =>
      [find(rows, { ...q, impl, op: nr }), find(rows, { ...q, impl, op: OPS.warm })].map((r) => ({ impl, r })),
    );
    const parts = ['range', 'core'].map((impl) => {
      const [n, w] = cases.filter((c) => c.impl === impl).map((c) => c.r);
      if (!okNs(n) || !okNs(w)) return `${impl}: ${[whyNot(`${nr}`, n), whyNot('warm start', w)].filter(Boolean).join(', ')}`;
      return `${impl} ${fmtNs(n.nsPerOp)} per ${nr}, warm start ${fmtNs(w.nsPerOp)} and ${(w.bytesPerAllocation ?? 0).toFixed(1)} B per address`;
    });
    const failed = cases.some((c) => c.r?.status === 'error');
    const allOk = cases.every((c) => okNs(c.r));
    out.push({ target, measured: parts.join('; '), pass: failed ? false : allOk ? true : null, ran: cases.some((c) => c.r) });
  }
  // No row slower than the previous implementation (--baseline), per baseline column.
  for (const col of [...new Set(rows.map((r) => r.impl).filter((i) => i.includes('@')))]) {
    const impl = col.slice(0, col.indexOf('@'));
    out.push(
      everyCase(
        `${impl}: no case slower than ${col} beyond noise (10 % or the two spreads)`,
        paired(rows, impl, col),
        (a, b) => a.nsPerOp / b.nsPerOp,
        (a, b) => slowerBeyondNoise(a, b) > 0,
        (x) => `${x.toFixed(2)}× ${col}`,
      ),
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Markdown.

export function markdown(res: Results, impls: readonly string[], svgName: string): string {
  const c = res.conditions;
  const L: string[] = [];
  L.push('# ipallocator benchmark results', '');
  L.push(
    `Mode **${c.mode}**, ${c.date}, ${c.runtime.name} ${c.runtime.version} (V8 ${c.runtime.v8}), ${c.cpu} × ${c.cores} cores, ${c.memoryGiB} GiB, ${c.os}.`,
  );
  L.push(
    `Commit \`${c.git.commit.slice(0, 12)}\`${c.git.dirty ? ' (working tree had uncommitted changes)' : ''}; WASM core build: ${c.coreBuild}; forced GC for memory: ${c.gcExposed ? 'yes' : 'no (memory figures approximate)'}. Run took ${Math.round(res.durationSeconds)} s. Arguments: \`${c.args.join(' ') || '(none)'}\`. Load average at start: ${c.loadAverage.join(' / ')}${c.loadAverage[0] > c.cores ? ` — **the machine was busy (load > ${c.cores} cores): absolute numbers are inflated and noisy; ratios within the run are more robust**` : ''}. CPU: ${c.cpuPin}.`,
    '',
  );
  if (c.mode === 'smoke') L.push('**Smoke mode: minimal samples on cold code, to prove the suite runs. The numbers mean nothing.**', '');
  const base = ratioBase(res.rows);
  L.push(
    `Cells: median ns per operation ± median absolute deviation, and how many times faster than \`${base}\` in the same run. ` +
      (c.rounds > 1
        ? `Each case is timed in ${c.rounds} rounds interleaved across the implementations (A B C, C B A, …); a cell is over all its rounds' samples. `
        : '') +
      (c.roundGate ? `Slow stretches: ${c.roundGate}. ` : '') +
      'Fills are random distinct offsets from a fixed seed (uniform) or the layout repeated allocateNext produces (organic), loaded untimed; ' +
      'allocateNext+release keeps the fill constant. Warm start: ns per address to build the implementation over an existing store/index.',
    '',
  );
  L.push(`![ns/op against fill](${svgName})`, '');

  if (res.rows.some((r) => r.impl.startsWith('go-'))) L.push(GO_NOTE, '');
  const baselines = [...new Set(res.rows.map((r) => r.impl).filter((i) => i.includes('@')))];
  if (baselines.length) {
    L.push(
      `${baselines.map((b) => `\`${b}\``).join(', ')}: the implementation at ${res.baseline ? `\`${res.baseline.ref}\` = \`${res.baseline.commit.slice(0, 12)}\`` : 'that git ref'} (\`--baseline\`), built in a temporary directory and run ` +
        'in this process on the same fills, beside the current one.',
      '',
    );
  }
  const floor = find(res.rows, { impl: 'boundary', op: 'MemoryStore create+delete (store floor)' });
  const floorSync = find(res.rows, { impl: 'boundary', op: 'MemoryStore createSync+deleteSync (store floor, sync)' });
  if (floor?.status === 'ok') {
    L.push(
      `Both async allocators pay the MemoryStore for every allocateNext+release and allocate+release: one create + delete costs ${fmtNs(floor.nsPerOp)} here ` +
        "through the promises (the reference's path)" +
        (floorSync?.status === 'ok'
          ? ` and ${fmtNs(floorSync.nsPerOp)} through createSync/deleteSync (the Allocator's path on a MemoryStore)`
          : '') +
        ' (boundary table; names already hashed). The `store` column measures the same floor in every allocateNext+release case: ' +
        "a fresh name for a free address of that fill, createSync + deleteSync on that case's store (its size), and the two awaits of the async API — " +
        'everything an allocator on a MemoryStore must do except choosing the address. No allocator on this store can beat reference ÷ store. ' +
        '`range` and `core` show the index without a store.',
      '',
    );
  }

  L.push('## Results', '', `| case | ${impls.join(' | ')} |`, `|---|${impls.map(() => '---:').join('|')}|`);
  for (const g of grouped(res.rows, impls)) {
    const ref = g.byImpl.get(base);
    L.push(
      `| ${g.key} | ${impls
        .map((i) => {
          const x = cell(g.byImpl.get(i), ref);
          return x.ratio && i !== base ? `${x.text} (${x.ratio})` : x.text;
        })
        .join(' | ')} |`,
    );
  }
  L.push('');

  const mem = res.rows.filter((r) => r.op === OPS.warm && r.status === 'ok');
  if (mem.length) {
    L.push(
      '## Memory per allocated address',
      '',
      `Measured around a warm start: JS heap + ArrayBuffers after forced GC, and WASM bytes owned by the new index (core heap accounting / FreeIndex.bytes()). ` +
        `The MemoryStore records the async allocators read from cost ${res.storeBytesPerRecord === null ? 'n/a' : `${Math.round(res.storeBytesPerRecord)} B`} each on top (the "API server" side).`,
      '',
      '| range | loaded | impl | JS heap B/addr | WASM B/addr | total B/addr | note |',
      '|---|---:|---|---:|---:|---:|---|',
    );
    const b = (x: number | null | undefined): string => (x === null || x === undefined ? '—' : x.toFixed(1));
    for (const r of mem)
      L.push(
        `| ${r.family} ${r.prefix} | ${r.fillCount?.toLocaleString('en-US')} | ${r.impl} | ${b(r.jsBytesPerAllocation)} | ${b(r.wasmBytesPerAllocation)} | ${b(r.bytesPerAllocation)} | ${r.note ?? ''} |`,
      );
    L.push('');
  }

  const bnd = res.rows.filter((r) => r.impl === 'boundary');
  if (bnd.length) {
    L.push('## Boundary (JS ↔ WASM) and address text', '', '| operation | ns/op | ±rme | note |', '|---|---:|---:|---|');
    for (const r of bnd)
      L.push(
        `| ${r.op} | ${r.status === 'ok' ? r.nsPerOp!.toFixed(2) : r.status} | ${r.status === 'ok' ? `${r.rme!.toFixed(1)} %` : ''} | ${r.note ?? ''} |`,
      );
    L.push('');
  }

  const notes = new Map<string, string[]>();
  for (const r of res.rows) {
    if (r.status === 'ok' || r.impl === 'boundary') continue;
    const why = `${r.status}: ${r.note ?? ''}`;
    if (!notes.has(why)) notes.set(why, []);
    notes.get(why)!.push(`${r.impl} @ ${caseKey(r)}`);
  }
  if (notes.size) {
    L.push('## Not measured', '');
    for (const [why, cases] of notes) {
      const shown = cases.slice(0, 8).join('; ');
      L.push(`- **${why}** — ${shown}${cases.length > 8 ? `; … (${cases.length} cases)` : ''}`);
    }
    L.push('');
  }
  return L.join('\n');
}

/**
 * The targets of a run as Markdown (bench/results/latest.targets.md): the project's own goals,
 * each with what the run measured. Kept apart from the results page, which ships with the package:
 * a user reads what was measured, not which internal goals a run missed.
 */
export function targetsMarkdown(res: Results, resultsName: string): string {
  const c = res.conditions;
  const L: string[] = [];
  L.push('# ipallocator benchmark targets', '');
  L.push(
    `The project's own goals, evaluated on the run of \`${resultsName}\`: mode **${c.mode}**, ${c.date}, commit \`${c.git.commit.slice(0, 12)}\`. ` +
      'Each is stated against another row of the same run (go-seed, the store floor, the parse floor, a --baseline column) or, where it is a cost, in ns or bytes. ' +
      'This page is for working on ipallocator; it is not in the npm package.',
    '',
  );
  L.push('| target | measured | result |', '|---|---|---|');
  const targets = evaluateTargets(res.rows);
  for (const t of targets.filter((x) => x.ran))
    L.push(`| ${t.target} | ${t.measured} | ${t.pass === null ? 'not evaluated' : t.pass ? '**pass**' : '**FAIL**'} |`);
  L.push('');
  const notRun = targets.filter((t) => !t.ran);
  if (notRun.length) L.push(`Not evaluated, their cases did not run in this mode: ${notRun.map((t) => t.target).join('; ')}.`, '');
  if (res.rows.some((r) => r.impl.includes('@')))
    L.push('`<impl>@<ref>` targets: "slower beyond noise" = more than 10 % or the two spreads together slower.', '');
  if (find(res.rows, { impl: 'boundary', op: 'MemoryStore create+delete (store floor)' })?.status === 'ok')
    L.push(
      'No allocator on a MemoryStore can beat reference ÷ store (the `store` column), so the targets state that bound next to the measured ratio.',
      '',
    );
  return L.join('\n');
}

/** Writes `<prefix>.md` (the results, shipped) and `<prefix>.targets.md` (the targets, not shipped). */
export function writeMarkdown(outPrefix: string, res: Results, impls: readonly string[], svgName: string): void {
  fs.writeFileSync(`${outPrefix}.md`, markdown(res, impls, svgName) + '\n');
  fs.writeFileSync(`${outPrefix}.targets.md`, targetsMarkdown(res, `${path.basename(outPrefix)}.md`) + '\n');
}
