// Result rows and what is made of them: the stdout table, bench/results/latest.{json,md}, and the
// evaluation of the issue's ratio targets.
import type { Conditions } from './conditions.ts';

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
}

export interface Results {
  conditions: Conditions;
  durationSeconds: number;
  /** Bytes per record of the MemoryStore the async implementations share (JS heap, after GC). */
  storeBytesPerRecord: number | null;
  rows: Row[];
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
  if (r.status !== 'ok') return { text: r.status === 'skipped' ? 'skipped' : r.status === 'not applicable' ? 'n/a' : r.status === 'error' ? 'error' : 'not avail.', ratio: '' };
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

/** The stdout table: one line per case, one column per implementation (median ±spread, ratio to reference). */
export function textTable(rows: Row[], impls: readonly string[]): string {
  const groups = grouped(rows, impls);
  const head = ['case', ...impls];
  const lines: string[][] = [head];
  for (const g of groups) {
    const ref = g.byImpl.get('reference');
    lines.push([g.key, ...impls.map((i) => {
      const c = cell(g.byImpl.get(i), ref);
      return c.ratio && i !== 'reference' ? `${c.text} ${c.ratio}` : c.text;
    })]);
  }
  const widths = head.map((_, j) => Math.max(...lines.map((l) => l[j].length)));
  const fmt = (l: string[]): string => l.map((s, j) => (j === 0 ? s.padEnd(widths[j]) : s.padStart(widths[j]))).join('  ');
  const sep = widths.map((w) => '─'.repeat(w)).join('  ');
  const boundary = rows.filter((r) => r.impl === 'boundary');
  const b = boundary.length
    ? '\n\nboundary (ns/op, median ±spread)\n' + boundary.map((r) => `  ${r.op.padEnd(32)} ${r.status === 'ok' ? `${fmtNs(r.nsPerOp)} ±${(r.spread ?? 0).toFixed(0)}%` : `${r.status}${r.note ? `: ${r.note}` : ''}`}${r.status === 'ok' && r.note ? `  (${r.note})` : ''}`).join('\n')
    : '';
  return [fmt(lines[0]), sep, ...lines.slice(1).map(fmt)].join('\n') + b;
}

// ---------------------------------------------------------------------------------------------
// Targets (ratios within the same run).

export interface TargetResult {
  target: string;
  measured: string;
  pass: boolean | null;
}

function find(rows: Row[], q: Partial<Row>): Row | undefined {
  return rows.find((r) => Object.entries(q).every(([k, v]) => (r as unknown as Record<string, unknown>)[k] === v));
}

function ratioTarget(rows: Row[], label: string, q: Partial<Row>, min: number, impl = 'allocator'): TargetResult {
  const ref = find(rows, { ...q, impl: 'reference' });
  const a = find(rows, { ...q, impl });
  const target = `${label}: ${impl} ≥ ${min.toLocaleString('en-US')}× faster than reference`;
  if (!ref || !a || ref.status !== 'ok' || a.status !== 'ok' || !ref.nsPerOp || !a.nsPerOp) {
    const why = [ref ? (ref.status === 'ok' ? '' : `reference ${ref.status}`) : 'reference not run', a ? (a.status === 'ok' ? '' : `${impl} ${a.status}`) : `${impl} not run`].filter(Boolean).join(', ');
    return { target, measured: `n/a (${why})`, pass: null };
  }
  const x = ref.nsPerOp / a.nsPerOp;
  // The store floor of the same case bounds what any allocator on this store can reach.
  const floor = impl === 'allocator' ? find(rows, { ...q, impl: 'store' }) : undefined;
  const bound = floor?.status === 'ok' && floor.nsPerOp ? `; store floor ${fmtNs(floor.nsPerOp)}: at most ${fmtRatio(ref.nsPerOp / floor.nsPerOp)} with a free index` : '';
  return { target, measured: `${fmtRatio(x)} (${fmtNs(ref.nsPerOp)} vs ${fmtNs(a.nsPerOp)}${bound})`, pass: x >= min };
}

export function evaluateTargets(rows: Row[]): TargetResult[] {
  const out: TargetResult[] = [];
  const nr = OPS.nextRelease;
  for (const prefix of ['/16', '/12']) {
    for (const [fill, kind, min] of [[0.5, 'uniform', 20], [0.5, 'organic', 20], [0.99, 'uniform', 300], [0.999, 'uniform', 1000], [0.999, 'organic', 1000]] as const) {
      out.push(ratioTarget(rows, `IPv4 ${prefix} ${nr} at ${fill * 100} % ${kind}`, { family: 'IPv4', prefix, op: nr, fill, fillKind: kind }, min));
    }
  }
  out.push(ratioTarget(rows, `IPv4 /12 full, "range is full"`, { family: 'IPv4', prefix: '/12', op: OPS.full }, 10_000));
  for (const [family, prefix, bop] of [['IPv4', '/16', 'parse+format IPv4'], ['IPv6', '/112', 'parse+format IPv6']] as const) {
    const r = find(rows, { impl: 'range', family, prefix, op: nr, fill: 0.5, fillKind: 'uniform' });
    const b = find(rows, { impl: 'boundary', op: bop });
    const target = `Range.allocateNext()+release() on ${family} ${prefix} at 50 % ≤ 2× a bare ${bop}`;
    if (!r || !b || r.status !== 'ok' || b.status !== 'ok' || !r.nsPerOp || !b.nsPerOp) {
      out.push({ target, measured: `n/a (${!r ? 'range not run' : r.status !== 'ok' ? `range ${r.status}` : `${bop} ${b?.status ?? 'not run'}`})`, pass: null });
    } else {
      const x = r.nsPerOp / b.nsPerOp;
      out.push({ target, measured: `${x.toFixed(2)}× (${fmtNs(r.nsPerOp)} vs ${fmtNs(b.nsPerOp)})`, pass: x <= 2 });
    }
  }
  out.push(ratioTarget(rows, `IPv6 /64 with 10^6 allocated, ${nr}`, { family: 'IPv6', prefix: '/64', op: nr, fillCount: 1_000_000 }, 5));
  for (const impl of ['allocator', 'core']) {
    const w = find(rows, { impl, family: 'IPv6', prefix: '/64', op: OPS.warm, fillCount: 1_000_000 });
    const target = `IPv6 /64 with 10^6 allocated: ${impl} index memory ≤ 32 B per allocated address`;
    if (!w || w.status !== 'ok' || w.wasmBytesPerAllocation === null || w.wasmBytesPerAllocation === undefined) {
      out.push({ target, measured: `n/a (${!w ? 'not run' : w.status !== 'ok' ? w.status : 'index bytes not measurable'})`, pass: null });
    } else {
      out.push({ target, measured: `${w.wasmBytesPerAllocation.toFixed(1)} B (WASM) + ${(w.jsBytesPerAllocation ?? 0).toFixed(1)} B (JS heap)`, pass: w.wasmBytesPerAllocation <= 32 });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Markdown.

export function markdown(res: Results, impls: readonly string[], svgName: string): string {
  const c = res.conditions;
  const L: string[] = [];
  L.push('# ipallocator benchmark results', '');
  L.push(`Mode **${c.mode}**, ${c.date}, ${c.runtime.name} ${c.runtime.version} (V8 ${c.runtime.v8}), ${c.cpu} × ${c.cores} cores, ${c.memoryGiB} GiB, ${c.os}.`);
  L.push(`Commit \`${c.git.commit.slice(0, 12)}\`${c.git.dirty ? ' (working tree had uncommitted changes)' : ''}; WASM core build: ${c.coreBuild}; forced GC for memory: ${c.gcExposed ? 'yes' : 'no (memory figures approximate)'}. Run took ${Math.round(res.durationSeconds)} s. Arguments: \`${c.args.join(' ') || '(none)'}\`. Load average at start: ${c.loadAverage.join(' / ')}${c.loadAverage[0] > c.cores ? ` — **the machine was busy (load > ${c.cores} cores): absolute numbers are inflated and noisy; ratios within the run are more robust**` : ''}.`, '');
  if (c.mode === 'smoke') L.push('**Smoke mode: minimal samples on cold code, to prove the suite runs. The numbers mean nothing.**', '');
  L.push('Cells: median ns per operation ± median absolute deviation, and how many times faster than `reference` in the same run. ' +
    'Fills are random distinct offsets from a fixed seed (uniform) or the layout repeated allocateNext produces (organic), loaded untimed; ' +
    'allocateNext+release keeps the fill constant. Warm start: ns per address to build the implementation over an existing store/index.', '');
  L.push(`![ns/op against fill](${svgName})`, '');

  L.push('## Targets', '', '| target | measured | result |', '|---|---|---|');
  for (const t of evaluateTargets(res.rows)) L.push(`| ${t.target} | ${t.measured} | ${t.pass === null ? 'not evaluated' : t.pass ? '**pass**' : '**FAIL**'} |`);
  L.push('');
  const floor = find(res.rows, { impl: 'boundary', op: 'MemoryStore create+delete (store floor)' });
  const floorSync = find(res.rows, { impl: 'boundary', op: 'MemoryStore createSync+deleteSync (store floor, sync)' });
  if (floor?.status === 'ok') {
    L.push(`Both async allocators pay the MemoryStore for every allocateNext+release and allocate+release: one create + delete costs ${fmtNs(floor.nsPerOp)} here ` +
      'through the promises (the reference\'s path)' +
      (floorSync?.status === 'ok' ? ` and ${fmtNs(floorSync.nsPerOp)} through createSync/deleteSync (the Allocator's path on a MemoryStore)` : '') +
      ' (boundary table; names already hashed). The `store` column measures the same floor in every allocateNext+release case: ' +
      'a fresh name for a free address of that fill, createSync + deleteSync on that case\'s store (its size), and the two awaits of the async API — ' +
      'everything an allocator on a MemoryStore must do except choosing the address. No allocator on this store can beat reference ÷ store, ' +
      'so the targets state that bound next to the measured ratio. `range` and `core` show the index without a store.', '');
  }

  L.push('## Results', '', `| case | ${impls.join(' | ')} |`, `|---|${impls.map(() => '---:').join('|')}|`);
  for (const g of grouped(res.rows, impls)) {
    const ref = g.byImpl.get('reference');
    L.push(`| ${g.key} | ${impls.map((i) => {
      const x = cell(g.byImpl.get(i), ref);
      return x.ratio && i !== 'reference' ? `${x.text} (${x.ratio})` : x.text;
    }).join(' | ')} |`);
  }
  L.push('');

  const mem = res.rows.filter((r) => r.op === OPS.warm && r.status === 'ok');
  if (mem.length) {
    L.push('## Memory per allocated address', '',
      `Measured around a warm start: JS heap + ArrayBuffers after forced GC, and WASM bytes owned by the new index (core heap accounting / FreeIndex.bytes()). ` +
      `The MemoryStore records the async allocators read from cost ${res.storeBytesPerRecord === null ? 'n/a' : `${Math.round(res.storeBytesPerRecord)} B`} each on top (the "API server" side, shared).`, '',
      '| range | loaded | impl | JS heap B/addr | WASM B/addr | total B/addr | note |', '|---|---:|---|---:|---:|---:|---|');
    const b = (x: number | null | undefined): string => (x === null || x === undefined ? '—' : x.toFixed(1));
    for (const r of mem) L.push(`| ${r.family} ${r.prefix} | ${r.fillCount?.toLocaleString('en-US')} | ${r.impl} | ${b(r.jsBytesPerAllocation)} | ${b(r.wasmBytesPerAllocation)} | ${b(r.bytesPerAllocation)} | ${r.note ?? ''} |`);
    L.push('');
  }

  const bnd = res.rows.filter((r) => r.impl === 'boundary');
  if (bnd.length) {
    L.push('## Boundary (JS ↔ WASM) and address text', '', '| operation | ns/op | ±rme | note |', '|---|---:|---:|---|');
    for (const r of bnd) L.push(`| ${r.op} | ${r.status === 'ok' ? r.nsPerOp!.toFixed(2) : r.status} | ${r.status === 'ok' ? `${r.rme!.toFixed(1)} %` : ''} | ${r.note ?? ''} |`);
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
